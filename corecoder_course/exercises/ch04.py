"""Checks for the exercises of chapter 4, the context.

    ch04.safe_cut  the latest index at or before a given one where a turn begins, so that the
                   history kept from there orphans no tool result
    ch04.estimate  a text's tokens estimated by the kind of its characters, within 15 % of
                   the engine's count
    ch04.policy    a context policy, KeepLastTurns(n), that keeps the last n turns, plugged
                   into a real Agent

`ch04.safe_cut` is a declared exercise (kit.py): its reference is `turn_start` of context.py,
its inputs every legal history (inputs.py: parallel batches, state notes of every kind, two in
a row now and then, one first now and then, a user's message that begins with "[" as a note
does) at every index and past either end, and its known mistakes are one line of `turn_start`
written wrong. A cut no mistake explains is judged by what it does to the history: outside
0..len, after the index, an orphan `check_history` finds, a state note, or an earlier turn.

The estimate's expected answer is the engine's own: `text_tokens` of tokens.py, on a small
corpus of six kinds of text (Japanese mostly in kana, and Korean, among them).

`ch04.policy` runs the learner's class as the context policy of a real `Agent`: five chats of
two rounds each (the model reads files in parallel, sometimes writes its todo list or moves to
another folder, so state notes come in, then answers), for n = 2, 1 and 3. Its model, a
FunctionLLM, checks every request as the API does (a 400 becomes a hint showing the history the
policy left), and every call of `prepare` is judged as it returns: a list, the list given left
unchanged, no longer than it, the latest user message in it, exactly min(n, turns) user turns
kept (the engine's cut), and the list itself when there is nothing to cut (told last: a lesser
fault than the others). Then one call more, as the agent makes it when the provider says a
request is too long (overflow=True): the policy must take the argument, and return the list
itself (nothing to cut) or a tail of it, messages[k:] from where a turn begins, that keeps the
latest user message (a copy, or any other new list, the agent would send again as a cut).

What a hint shows is the same every run: memory addresses and the temporary folder (shown as
".") are scrubbed from it (`checks.scrub`).
"""

from __future__ import annotations

import copy
import dis
import json
import re
import tempfile
from pathlib import Path

from corecoder.agent import Agent
from corecoder.context import turn_start
from corecoder.messages import (
    STATE_NOTE,
    IllegalHistory,
    ToolCall,
    assistant,
    check_history,
    is_state_note,
    tool_result,
    user,
)
from corecoder.scripted import FunctionLLM
from corecoder.tokens import text_tokens
from corecoder.tool import Tool, ToolError
from corecoder.tools import ReadFile
from corecoder.tools.todo import TodoWrite
from corecoder.workspace import Workspace

from ..checks import (
    EXPECTED,
    GOT,
    Hint,
    a_class,
    case,
    checker,
    describe,
    error_of,
    hint,
    outcome,
    raised,
    returned,
    scrubbed,
    shown,
    then,
)
from ..kit import Exercise, Mistake
from ..words import say


def _described(messages, around: int | None = None) -> str:
    """A list the answer made or changed, as `describe` shows a history, or by its repr when
    it is no history `describe` can read."""
    try:
        return describe(messages, around)
    except (Exception, KeyboardInterrupt, SystemExit):
        return f"  {shown(messages)}"


# --- ch04.safe_cut -----------------------------------------------------------------------

SUMMARY = user("[summary]")  # what a compaction puts before the history it keeps


def _note(todo: str) -> dict:
    """A state note after the todo list changed, as Agent.tell_state writes it."""
    return user(f"{STATE_NOTE}\n\nYour todo list:\n{todo}")


def _calls(*ids: str) -> list[dict]:
    """An assistant message that calls read_file once per id, then each call's result."""
    calls = [ToolCall(i, "read_file", json.dumps({"path": f"{i}.py"})) for i in ids]
    return [assistant("", calls), *(tool_result(i, f"print({i!r})") for i in ids)]


def _cut_examples() -> list[tuple[list[dict], int]]:
    """The chapter's own history (a batch of three, answered, then the user again), and two
    with state notes: every index of each, and one past either end."""
    shown = [user("Read three parts."), *_calls("p1", "p2", "p3"), assistant("Done."),
             user("And now?")]
    notes = [user("Fix it."), *_calls("c1", "c2"), _note("[>] fix mean"),
             user(f"{STATE_NOTE}\n\nWorking directory: /home/ada/calc/src"), assistant("Fixing."),
             user("[CI] test_calc.py failed again"), *_calls("c3"), assistant("Fixed.")]
    after_user = [user("Go on."), _note("[>] fix mean"), *_calls("c1"), assistant("Done.")]
    return [(h, i) for h in (shown, notes, after_user) for i in range(-1, len(h) + 2)]


def _cut_inputs():
    from hypothesis import strategies as st

    from ..inputs import legal_histories

    return legal_histories().flatmap(
        lambda h: st.tuples(st.just(h), st.integers(-3, len(h) + 3)))


def _cut_call(args: tuple[list[dict], int]) -> str:
    history, index = args
    clamped = max(0, min(index, len(history)))
    return f"{case(say('the history', '历史'), history, clamped)}\nsafe_cut(messages, {index})"


CUT_RULE = ("a turn begins at any message that is neither a tool result nor a state note "
            "(is_state_note): from index, step back over tool results and state notes, and "
            "stop at 0",
            "回合从任何一条既不是工具结果、也不是状态通知（is_state_note）的消息开始："
            "从 index 往回退，跳过工具结果和状态通知，最多退到 0")


CLAMP_RULE = ("clamp index into 0..len(messages) first, max(0, min(index, len(messages))): "
              "len(messages) keeps nothing of the history, and orphans nothing; look at "
              "messages[index] only while 0 < index < len(messages)",
              "先把 index 限制在 0..len(messages) 之内：max(0, min(index, len(messages)))。"
              "len(messages) 表示历史一条也不留，也就不会留下孤立的工具结果；只在 "
              "0 < index < len(messages) 时才去看 messages[index]")


def _cut_diagnose(args: tuple[list[dict], int], got: int, wanted: int) -> str | None:
    """Why a cut that is no known mistake is wrong, from what it would do to the history."""
    history, index = args
    clamped = max(0, min(index, len(history)))
    if not 0 <= got <= len(history):
        return then(say(f"a cut is an index from 0 to len(messages), {len(history)} here, "
                        "both included. ",
                        f"切分点是 0 到 len(messages)（这里是 {len(history)}）之间的下标，"
                        "两端都包括。"), say(*CLAMP_RULE))
    if got > clamped:
        return say(f"a cut falls at or before index: {got} is after {clamped}, so it drops "
                   "messages the caller asked to keep. Step back, never forward",
                   f"切分点必须落在 index 或它之前：{got} 在 {clamped} 之后，"
                   "会丢掉调用方要求保留的消息。只能往回退，不能往前走")
    try:
        check_history([SUMMARY, *history[got:]])
    except IllegalHistory as e:
        says = say("check_history says of what is kept: ", "check_history 对保留下来的历史说：")
        return then(f"{says}{e}. ", say(*CUT_RULE))
    return None  # a legal cut, but not the latest turn start: the rule says which


SAFE_CUT = Exercise(
    "ch04.safe_cut", turn_start, _cut_inputs, _cut_call, examples=_cut_examples(),
    rule=CUT_RULE, diagnose=_cut_diagnose,
    domain=("every legal history, at every index and past either end",
            "所有合法的历史、每一个下标以及两端之外的下标"),
    shape=("index = max(0, min(index, len(messages))); then while 0 < index < len(messages) "
           "and messages[index] is a tool result or a state note: index -= 1",
           "index = max(0, min(index, len(messages)))；然后只要 0 < index < len(messages)，"
           "并且 messages[index] 是工具结果或状态通知，就 index -= 1"),
    mistakes=[
        Mistake("while 0 < index", "if 0 < index", (
            "one step back is not enough: a batch of parallel calls has one result per call, "
            "all in a row, and state notes may follow them. Step back over every one (while, "
            "not if), to the assistant message that made the calls",
            "只退一步不够：一批并行工具调用每个调用都有一个工具结果，一个挨着一个，后面还可能"
            "跟着状态通知。要把它们每一条都跳过（用 while，不是 if），一直退到发出这些调用的 "
            "assistant 消息")),
        Mistake('["role"] == "tool"', '["role"] not in ("user", "system")', (
            "a turn begins at an assistant message too, not only at the user's: any results "
            "after it answer its own calls, so keeping from there orphans nothing. Stop at the "
            "first message that is neither a tool result nor a state note",
            "回合不只从用户消息开始，也从 assistant 消息开始：它后面的工具结果回应的是它自己的"
            "调用，所以从这里保留不会留下孤立的工具结果。遇到第一条既不是工具结果也不是状态"
            "通知的消息就停下")),
        Mistake("or is_state_note(messages[index])", "or False", (
            "a state note (is_state_note) is a user message the agent wrote: it belongs with "
            "the message before it (the results of the calls that changed its state, or the "
            "user's message, after a compaction) and begins no turn. Step back over it as over "
            "a tool result",
            "状态通知（is_state_note）是智能体自己写的 user 消息：它和它前面那条消息属于同一个"
            "回合（改变了状态的那些调用的工具结果，或者压缩之后用户的那条消息），本身并不开始"
            "一个回合。像跳过工具结果一样跳过它")),
        Mistake("is_state_note(messages[index])",
                'str(messages[index]["content"]).startswith("[")', (
                    "a user's own message may begin with \"[\" too (a pasted log): tell a "
                    "state note by is_state_note, which looks for the whole STATE_NOTE, not by "
                    "its first character",
                    "用户自己的消息也可能以“[”开头（贴进来的日志）：要用 is_state_note 来认"
                    "状态通知，它看的是完整的 STATE_NOTE，而不是第一个字符")),
        Mistake("index -= 1", "index += 1", (
            "a cut falls at or before index: stepping forward drops messages the caller asked "
            "to keep. Step back, never forward",
            "切分点必须落在 index 或它之前：往前走会丢掉调用方要求保留的消息。只能往回退，"
            "不能往前走")),
        Mistake("index = max(0, min(index, len(messages)))",
                "index = max(0, min(index + len(messages) if index < 0 else index, "
                "len(messages)))", (
                    "here a negative index is not counted from the end, as it is in Python: "
                    "it is brought up to 0. Clamp" + CLAMP_RULE[0].removeprefix("clamp"),
                    "这里的负数下标不像 Python 里那样从末尾倒着数，而是被提到 0。"
                    + CLAMP_RULE[1])),
        Mistake("index = max(0, min(index, len(messages)))", "pass", CLAMP_RULE),
        Mistake("return index", "return 0", (
            "0 is always legal, but it keeps the whole history: the cut is the latest turn "
            "start at or before index, so that a compaction keeps no more than it must",
            "0 永远合法，但它把整段历史都留下了：切分点是不超过 index 的最近一个回合开始处，"
            "这样压缩时才不会多留不必要的消息")),
    ],
)


# --- ch04.estimate -----------------------------------------------------------------------

WITHIN = 0.15  # how far an estimate may be from the engine's count, as a fraction of it

# Fragments of each kind of text the chapter's prose promises, from which texts are made (a
# failing one shrinks to a few fragments): English, code, minified JSON, Chinese with its
# full-width punctuation, Japanese mostly in kana, Korean, Russian, whitespace, symbols, emoji.
FRAGMENTS = ("the agent sends ", "history again, ", "def f(x):\n    return x[0] ",
             '{"a":[1,{"b":null}],"c":"d"}', "上下文窗口，", "压缩之后。", "エージェントは",
             "ツールの結果", "에이전트는 ", "기록 전체를 ", "Агент отправляет ", "историю ",
             "\t\r\n", "  ", "!=(){}[];:", "😀")


def _estimate_inputs():
    from hypothesis import strategies as st

    part = st.tuples(st.sampled_from(FRAGMENTS), st.integers(1, 30))
    return st.lists(part, min_size=1, max_size=3).map(
        lambda parts: ("".join(text * n for text, n in parts),))


def _estimate_call(args: tuple[str]) -> str:
    (text,) = args
    return f"estimate({text!r:.120})" + (say("  (cut short)", "（后面省略）")
                                         if len(repr(text)) > 120 else "")


def _close(got, wanted: int, args) -> bool:
    """Within 15 % of the engine's count, and a token either way on a short text."""
    return abs(got - wanted) <= WITHIN * wanted + 1


ESTIMATE_RULE = (
    "the engine counts by the kind of character: a Chinese, Japanese or Korean character, its "
    "full-width punctuation too (tokens.CJK), is about one token; any other symbol, a bracket, a "
    "quote, an operator (tokens.SYMBOL), about half a token; the rest, letters, digits and "
    "spaces, about a quarter: cjk + symbols / 2 + rest / 4 (within 15 % of text_tokens passes)",
    "引擎按字符的种类来数：中文、日文、韩文字符，连同全角标点（tokens.CJK），大约一个 token；"
    "其他符号，比如括号、引号、运算符（tokens.SYMBOL），大约半个；其余的字母、数字和空格，大约"
    "四分之一个：cjk + symbols / 2 + rest / 4（和 text_tokens 相差 15% 以内算通过）")
WHOLE = "return round(cjk + symbols / 2 + (len(text) - cjk - symbols) / 4)"

ESTIMATE = Exercise(
    "ch04.estimate", text_tokens, _estimate_inputs, _estimate_call, rule=ESTIMATE_RULE,
    domain=("texts of every kind the chapter names", "本章提到的各类文本"),
    examples=[("",), *((text * 8,) for text in FRAGMENTS)], same=_close, max_examples=150,
    shape=("count the wide characters and the symbols, then cjk + symbols / 2 + "
           "(len(text) - cjk - symbols) / 4",
           "先数出宽字符和符号各有多少，再算 cjk + symbols / 2 + (len(text) - cjk - symbols) / 4"),
    mistakes=[
        Mistake(WHOLE, "return round(len(text) / 4)", (
            "a quarter of the characters, len(text) / 4, is about right for English prose "
            "only: a symbol (code, JSON) is about half a token, and a Chinese, Japanese or "
            "Korean character about one, four times that",
            "len(text) / 4，即字符数的四分之一，只对英文段落大致不错：一个符号（代码、JSON 里"
            "的）大约半个 token，一个中文、日文或韩文字符大约一个，是它的四倍")),
        Mistake(WHOLE, "return len(text)", (
            "a token for every character, len(text), is about right for Chinese, but English "
            "prose packs about four characters into a token",
            "每个字符算一个 token，即 len(text)，对中文大致不错，可英文段落大约四个字符才一个 "
            "token")),
        Mistake(WHOLE, "return round(len(text.encode()) / 4)", (
            "a quarter of the UTF-8 bytes, len(text.encode()) / 4, makes a Chinese character "
            "(three bytes) three quarters of a token: it is about one. Tokens follow "
            "characters, not bytes",
            "len(text.encode()) / 4，即 UTF-8 字节数的四分之一，把一个中文字符（三个字节）算成"
            "四分之三个 token，而它大约是一个。token 跟着字符走，不跟着字节走")),
        Mistake(WHOLE, "return round(len(text.split()) * 1.3)", (
            "words times 1.3 needs spaces between words: Chinese writes none, so a whole "
            "sentence counts as one word, and code is dense with symbols",
            "“单词数乘以 1.3”要靠单词之间的空格，可中文不用空格分词，整句话只算一个“单词”；"
            "代码里又满是符号")),
        Mistake("cjk = len(CJK.findall(text))", 'cjk = len(re.findall("[\u4e00-\u9fff]", text))', (
            "Japanese kana (U+3040 to U+30FF) and Korean Hangul (U+AC00 to U+D7AF) are about a "
            "token a character too, as Chinese characters are (U+4E00 to U+9FFF): count them as "
            "wide characters as well",
            "日文假名（U+3040 到 U+30FF）和韩文谚文（U+AC00 到 U+D7AF）也是大约一个字符一个 "
            "token，和汉字（U+4E00 到 U+9FFF）一样：也要把它们算作宽字符")),
        Mistake("symbols = len(SYMBOL.findall(text))", "symbols = 0", (
            "a symbol, a bracket, a quote, an operator, is about half a token, not a quarter as "
            "a letter is: code and JSON are dense with them",
            "符号（括号、引号、运算符）大约半个 token，不像字母那样只算四分之一个：代码和 JSON "
            "里满是符号")),
    ],
)


# --- ch04.policy -------------------------------------------------------------------------

FILES = {"calc.py": "def mean(values):\n    return sum(values) / (len(values) - 1)\n",
         "test_calc.py": "from calc import mean\n\nassert mean([1, 2, 3]) == 2\n",
         "notes.md": "# Notes\n\nmean() is used by report.py only.\n"}
FOLDER = "src"  # where the model moves in chat 2; FILES are in it too, so every read works
# (what the user asks, the files the model reads at once, the todo list it writes with them
# (or None), the folder it moves to after them (or None), its answer): each chat is two
# rounds, so five chats make ten. The last ask begins with "[": the user's all the same.
CHATS = [
    ("Why does the test fail?", ("calc.py", "test_calc.py"),
     [("Fix mean", "in_progress"), ("Check the notes", "pending")], None,
     "mean() divides by one too few."),
    ("Is mean used anywhere else? Look in src too.", ("calc.py", "notes.md", "test_calc.py"),
     None, FOLDER, "Only by report.py, the notes say."),
    ("Plan the fix.", ("calc.py", "notes.md"),
     [("Fix mean", "done"), ("Check the notes", "in_progress")], None,
     "Divide by len(values)."),
    ("Anything left?", ("notes.md", "test_calc.py", "calc.py"),
     [("Fix mean", "done"), ("Check the notes", "done")], None,
     "Nothing: both are done."),
    ("[CI] test_calc.py failed before the fix. Sum it up.", ("calc.py", "notes.md"), None, None,
     "mean() was off by one; the notes agree."),
]
TURNS = (2, 1, 3)  # 2 first: the mistakes of a turn too many or too few show apart


class ChangeDir(Tool):
    """`cd`, as bash carries it over, without a shell: it moves the workspace's working
    directory, so the agent tells the model where it works now in a state note."""

    name = "change_dir"
    description = "Move to the folder `path`, relative to the working directory, as `cd` does."
    parameters = {"type": "object", "properties": {"path": {"type": "string"}},
                  "required": ["path"], "additionalProperties": False}

    def run(self, ws: Workspace, path: str) -> str:
        target = ws.resolve(path).resolve()
        if not target.is_dir():
            raise ToolError(f"{path} is not a folder")
        ws.cwd = target
        return f"now in {path}"


def _script() -> list:
    turns = []
    for _, reads, todos, folder, answer in CHATS:
        calls = [{"name": "read_file", "arguments": {"path": path}} for path in reads]
        if todos:
            items = [{"content": content, "status": status} for content, status in todos]
            calls.append({"name": "todo_write", "arguments": {"todos": items}})
        if folder:
            calls.append({"name": "change_dir", "arguments": {"path": folder}})
        turns += [{"tool_calls": calls}, answer]
    return turns


def _starts(messages: list[dict], notes: bool = False) -> list[int]:
    """Where each user turn begins: a user message, not a state note (with `notes`, any)."""
    return [i for i, m in enumerate(messages)
            if m.get("role") == "user" and (notes or not is_state_note(m))]


def _messages(k: int) -> str:
    return f"{k} message" if k == 1 else f"{k} messages"


def _turns(k: int) -> str:
    return f"{k} user turn" if k == 1 else f"{k} user turns"


def _wanted(messages: list[dict], n: int) -> list[dict]:
    starts = _starts(messages)
    return messages if len(starts) <= n else messages[starts[-n]:]


def _empty(fn) -> bool:
    """Whether `fn` does nothing: a body of `...` (or `pass`, or a docstring alone)."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return False
    ops = [(i.opname, i.argval) for i in dis.get_instructions(code)
           if i.opname not in ("RESUME", "NOP")]
    return ops in ([("LOAD_CONST", None), ("RETURN_VALUE", None)], [("RETURN_CONST", None)])


def _last(n: int) -> str:
    """"the last turn", "the last 2 turns"."""
    return "the last turn" if n == 1 else f"the last {n} turns"


def _policy_rule(n: int) -> str:
    fewer = "one of them or none" if n == 1 else f"{n} or fewer of them"
    return say(f"keep {_last(n)}: the history from messages[starts[-{n}]] on, where starts are "
               "the indices of the user messages that are not state notes; with "
               f"{fewer} there is nothing to cut: return the list you were given",
               f"保留最近 {n} 个回合：从 messages[starts[-{n}]] 开始的历史，其中 starts 是那些"
               f"不是状态通知的 user 消息的下标；这样的消息不超过 {n} 条时，没有什么可截的："
               "原样返回传进来的列表")


def _policy_why(given: list[dict], result: list[dict], n: int) -> str:
    """What the answer did, when it shows (or nothing): the note before the rule."""
    starts, every = _starts(given), _starts(given, notes=True)
    if len(every) > n and every != starts and result == given[every[-n]:]:
        return say("a state note is a user message the user never wrote (is_state_note): the "
                   "agent tells its state with it, and it begins no turn. Count only the user "
                   "messages that are not state notes. ",
                   "状态通知是用户从来没写过的 user 消息（is_state_note）：智能体用它来告诉模型"
                   "自己的状态，它并不开始一个回合。只数那些不是状态通知的 user 消息。")
    plain = [i for i in every if not str(given[i].get("content")).startswith("[")]
    if plain != starts and result == (given if len(plain) <= n else given[plain[-n]:]):
        return say("a user message may begin with \"[\" and be the user's all the same (a pasted "
                   "log): tell a state note by is_state_note, which looks for the whole "
                   "STATE_NOTE, not by its first character. ",
                   "user 消息也可能以“[”开头，却仍然是用户自己的（比如贴进来的日志）：要用 "
                   "is_state_note 来认状态通知，它看的是完整的 STATE_NOTE，而不是第一个字符。")
    if len(starts) <= n:
        return ""  # nothing to cut: the rule says so
    kept = len(_starts(result))
    begin = "begins" if n == 1 else "begin"
    if kept == min(n, len(starts)) + 1:
        return say(f"one turn too many: {_last(n)} {begin} at starts[-{n}], and "
                   f"starts[-{n + 1}] is one turn earlier. ",
                   f"多留了一个回合：最近 {n} 个回合从 starts[-{n}] 开始，starts[-{n + 1}] "
                   "还要再早一个回合。")
    if kept == min(n, len(starts)) - 1:
        return say(f"one turn too few: {_last(n)} {begin} at starts[-{n}], one turn "
                   "earlier than your cut. ",
                   f"少留了一个回合：最近 {n} 个回合从 starts[-{n}] 开始，比你的切分点早一个回合。")
    return ""


def _signature() -> str:
    return say("prepare is called as the agent calls it: prepare(messages) before every "
               "round, and prepare(messages, overflow=True) when the provider says a "
               "request is too long. So it takes a second argument, overflow, False when it is "
               "not given: def prepare(self, messages, overflow=False)",
               "prepare 是按智能体的方式调用的：每一轮之前调用 prepare(messages)，"
               "服务商说请求太长时调用 prepare(messages, overflow=True)。所以它还有"
               "第二个参数 overflow，不传时为 False：def prepare(self, messages, "
               "overflow=False)")


def _no_attach() -> str:
    return say("a context policy has two methods: attach(agent), which the agent calls once as "
               "it is made (KeepLastTurns needs nothing of the agent: its body is pass), and "
               "prepare(messages, overflow=False), before every round",
               "上下文策略有两个方法：attach(agent)，智能体创建时调用一次（KeepLastTurns 不需要"
               "智能体的任何东西，方法体写 pass 就行）；以及 prepare(messages, overflow=False)，"
               "每一轮之前调用")


class _Watched:
    """The learner's policy as the context policy of an Agent: each call of `prepare` judged as
    it returns. A history the API would refuse goes on to the model, whose check says so."""

    def __init__(self, policy, n: int, folder: Path):
        self.policy, self.n = policy, n
        self.places = {folder: "."}  # the agent's temporary folder, as a hint shows it
        self.chat = 0  # which chat runs (1 to 5), and the rounds of it so far
        self.round = 0
        self.last: tuple[list[dict], list[dict]] | None = None  # what went in, what came back
        self.copied: Hint | None = None  # the first copy where the list itself was due
        self.overflow = False  # the last call: as the agent calls it when a request is too long

    def about(self, given: list[dict]) -> str:
        count = len(_starts(given))
        wanted = _wanted(given, self.n)
        around = len(given) - len(wanted) if wanted is not given else len(given) - 1
        if self.overflow:
            when = say(f"after the {len(CHATS)} chats, called as the agent calls it when the "
                       "provider says a request is too long, prepare(messages, overflow=True)",
                       f"{len(CHATS)} 次对话之后，像服务商说请求太长时智能体那样调用它："
                       "prepare(messages, overflow=True)")
        else:
            when = say(f"in round {self.round} of chat {self.chat} of {len(CHATS)} (in each chat "
                       "the model reads files in parallel, sometimes writes its todo list or "
                       "changes directory, then answers)",
                       f"在 {len(CHATS)} 次对话的第 {self.chat} 次、第 {self.round} 轮"
                       "（每次对话里，模型先并行读几个文件，有时还写一下待办列表或者换个目录，"
                       "然后回答）")
        return say(f"KeepLastTurns({self.n}) as the context policy of a real Agent, {when}; "
                   f"prepare was given {_messages(len(given))}, {_turns(count)}:",
                   f"KeepLastTurns({self.n}) 作为一个真实 Agent 的上下文策略，{when}；"
                   f"prepare 拿到的是 {len(given)} 条消息、{count} 个用户回合：") \
            + "\n" + describe(given, around)

    def attach(self, agent) -> None:
        attach = getattr(self.policy, "attach", None)
        if attach is None:
            raise Hint(f"KeepLastTurns({self.n})" + hint(_no_attach()))
        told, result = outcome(attach, agent)
        if told == "raised" and not isinstance(result, NotImplementedError):
            raise Hint(f"KeepLastTurns({self.n}).attach(agent)\n{raised(result, self.places)}"
                       + hint(_no_attach()))
        if told == "raised":
            raise result

    def prepare(self, messages, *args, **kwargs):
        self.round += 1
        given = copy.deepcopy(messages)
        told, result = outcome(lambda: self.policy.prepare(messages, *args, **kwargs))
        about = self.about(given)
        if told == "raised":
            why = _policy_rule(self.n)
            if isinstance(result, TypeError) and (self.overflow or "prepare()" in error_of(result)):
                why = _signature()  # no overflow=False, or no overflow at all
            raise Hint(f"{about}\n{raised(result, self.places)}" + hint(why))
        try:
            changed = messages != given
        except (Exception, KeyboardInterrupt, SystemExit):  # it holds what cannot compare
            changed = True
        if not isinstance(result, list):
            why = say("prepare returns the history to send, a list: the agent goes on with "
                      "agent.messages = policy.prepare(agent.messages). ",
                      "prepare 返回这一轮要发送的历史，一个列表：智能体接下来用的是 "
                      "agent.messages = policy.prepare(agent.messages)。")
            if changed:
                why += say("Your code changed the list in place (del, pop, ...) instead: return "
                           "a new list, a slice, and leave the one given as it is. ",
                           "你的代码却是在原地改动了这个列表（del、pop 之类）：应该返回一个新列表，"
                           "也就是一个切片，传进来的列表保持原样。")
            raise Hint(f"{about}\n{GOT}{returned(result, self.places)}"
                       + hint(then(why, _policy_rule(self.n))))
        if changed:
            why = say("your policy changed the list it was given (del, pop, remove, ...): return "
                      "a new list, a slice, and leave the one given as it is. The agent tells a "
                      "policy that cut something by the new list it returns: when the provider "
                      "says a request is too long, Agent.ask tries again only if "
                      "policy.prepare(...) is not the list it was given",
                      "你的策略改动了传进来的列表（del、pop、remove 之类）：应该返回一个新列表，"
                      "也就是一个切片，传进来的列表保持原样。智能体靠返回的是不是一个新列表来判断"
                      "策略有没有截掉东西：服务商说请求太长时，只有 policy.prepare(...) 返回的不是"
                      "传进去的那个列表，Agent.ask 才会再试一次")
            raise Hint(f"{about}\n" + say("after prepare, the list given holds:",
                                          "prepare 之后，传进来的列表变成了：")
                       + f"\n{_described(messages, 0)}" + hint(why))
        if not all(isinstance(m, dict) and "role" in m for m in result):
            why = say("the history is a list of messages, each a dict with a \"role\", as it was "
                      "given",
                      "历史是一个消息列表，每条消息都是带 \"role\" 的字典，和传进来时一样")
            raise Hint(f"{about}\n{GOT}{returned(result, self.places)}" + hint(why))
        self.last = (given, result)
        try:
            check_history(result)
        except IllegalHistory as e:
            if not self.overflow:
                return result  # the model's check refuses it, as the API would
            at = int(m[1]) if (m := re.search(r"message (\d+)", str(e))) else len(result) - 1
            why = say("every tool result must follow the call it answers, and every call needs "
                      "its results: keep whole turns. ",
                      "每个工具结果都必须跟在它所回应的调用后面，每个调用也都需要它的工具结果："
                      "要保留完整的回合。")
            raise Hint(f"{about}\n{GOT.alone}\n{_described(result, at)}\n"
                       + say("check_history says: ", "check_history 说：") + f"{e}"
                       + hint(then(why, _policy_rule(self.n)))) from None
        self.judge(given, result, about, itself=result is messages)
        return result

    def judge(self, given: list[dict], result: list[dict], about: str, itself: bool) -> None:
        """`given` is a copy of the list the policy was given; `itself`, whether it returned
        that list."""
        n, starts = self.n, _starts(given)
        wanted = _wanted(given, n)
        shown_wanted = f"{EXPECTED.alone}\n{describe(wanted, 0)}\n"
        if self.overflow:  # a policy may cut harder then: only what any cut must keep
            shown_wanted = ""
        if starts and given[starts[-1]] not in result:
            why = say("the latest user message (not a state note) is what the model is to answer "
                      "now: it must stay. ",
                      "最近一条（不是状态通知的）user 消息，是模型现在要回答的：它必须留下。")
            raise Hint(f"{about}\n{shown_wanted}{GOT.alone}\n{_described(result, 0)}"
                       + hint(then(why + _policy_why(given, result, n), _policy_rule(n))))
        if len(result) > len(given):
            why = say(f"your policy returned {len(result)} messages for {len(given)}: a policy "
                      "that keeps the last turns only cuts, it adds nothing (a note of what was "
                      "dropped would grow the history it is there to shrink). ",
                      f"传进来 {len(given)} 条消息，你的策略返回了 {len(result)} 条：只保留最近几个"
                      "回合的策略只会截掉消息，不会添加（记一条“删掉了什么”的说明，反而会让它本来"
                      "要缩短的历史变长）。")
            raise Hint(f"{about}\n{shown_wanted}{GOT.alone}\n"
                       f"{_described(result, len(result) - 1)}"
                       + hint(then(why, _policy_rule(n))))
        if self.overflow:
            self.judge_overflow(given, result, about, itself)
            return
        kept, due = len(_starts(result)), min(n, len(starts))
        if kept != due:
            why = say(f"{_turns(due)} must stay, and your policy kept {kept}: ",
                      f"应该留下 {due} 个用户回合，你的策略留下了 {kept} 个：")
            raise Hint(f"{about}\n{shown_wanted}{GOT.alone}\n{_described(result, 0)}"
                       + hint(then(why + _policy_why(given, result, n), _policy_rule(n))))
        if result != wanted:
            raise Hint(f"{about}\n{shown_wanted}{GOT.alone}\n{_described(result, 0)}"
                       + hint(then(_policy_why(given, result, n), _policy_rule(n))))
        if wanted is given and not itself and self.copied is None:
            why = say(f"with {_turns(len(starts))} and n = {n} there is nothing to cut: return "
                      "the list you were given, itself, not a copy. The agent tells a policy "
                      "that cut nothing by it: when the provider says a request is too long, "
                      "Agent.ask gives up at once if policy.prepare(...) is the list it was given "
                      "(asking again would fail the same way)",
                      f"有 {len(starts)} 个用户回合、n = {n}，没有什么可截的：原样返回传进来的那个"
                      "列表本身，而不是它的副本。智能体靠这一点判断策略什么也没截：服务商说请求"
                      "太长时，如果 policy.prepare(...) 返回的就是传进去的列表，Agent.ask 会立刻"
                      "放弃（再问一次也会同样失败）")
            returned = say("your policy returned a copy, an equal but new list",
                           "你的策略返回了一个副本：内容相同，但是一个新列表")
            self.copied = Hint(f"{about}\n{EXPECTED}"
                               + say("the list given, itself", "传进来的那个列表本身")
                               + f"\n{GOT}{returned}" + hint(why))

    def judge_overflow(self, given: list[dict], result: list[dict], about: str,
                       itself: bool) -> None:
        """On overflow the agent sends the request again if the list is a new one: the list
        itself (nothing to cut), or a strictly shorter tail, from where a turn begins, that
        keeps the latest user message."""
        if itself:
            return
        starts = _starts(given)
        end = starts[-1] if starts else len(given)
        if any(result == given[k:] for k in range(1, end + 1) if turn_start(given, k) == k):
            return
        due = say("the list given, itself (nothing to cut), or a tail of it, messages[k:] with "
                  "turn_start(messages, k) == k and 0 < k <= starts[-1]",
                  "传进来的那个列表本身（没有可截的），或者它的一段结尾：messages[k:]，其中 "
                  "turn_start(messages, k) == k，并且 0 < k <= starts[-1]")
        if result == given:
            why = say("on overflow, Agent.ask takes any new list for a cut and sends the request "
                      "again: a copy, with nothing cut, sends the same too-long request a second "
                      "time. Return the list you were given, itself, when there is nothing to cut "
                      "(the agent then gives up at once), or a shorter one: messages[k:], from "
                      "where a turn begins",
                      "overflow 时，Agent.ask 会把任何新列表都当成截过的结果，再发一次请求：一个"
                      "什么都没截的副本，只会把同样太长的请求再发一遍。没有可截的时候，原样返回传"
                      "进来的那个列表本身（智能体就会立刻放弃）；否则返回一个更短的列表：从某个"
                      "回合开始处起的 messages[k:]")
            returned = say("your policy returned a copy, an equal but new list",
                           "你的策略返回了一个副本：内容相同，但是一个新列表")
            raise Hint(f"{about}\n{EXPECTED}{due}\n{GOT}{returned}" + hint(why))
        why = say("on overflow a policy may cut more than its rule says, but it still only cuts "
                  "the history's beginning away: it keeps messages[k:], from a k where a turn "
                  "begins (turn_start(messages, k) == k) to the end, with k at or before the "
                  "latest user message. What your policy returned is no such tail of the list "
                  "given: it leaves out messages in between, or changes or reorders them",
                  "overflow 时，策略可以比它的规则截得更多，但仍然只能截掉历史的开头：它保留 "
                  "messages[k:]，从某个回合开始的位置 k（turn_start(messages, k) == k）一直到"
                  "末尾，而且 k 不能在最近一条 user 消息之后。你的策略返回的不是传进来的列表的"
                  "这样一段结尾：它漏掉了中间的消息，或者改动了消息、打乱了顺序")
        raise Hint(f"{about}\n{EXPECTED}{due}\n{GOT.alone}\n{_described(result, 0)}"
                   + hint(why))


def _refused(watched: _Watched, agent: Agent, refusal: IllegalHistory) -> Hint:
    """The model's 400, shown on the history the policy left (as the request sends it, after
    the system prompt), numbered as that history is."""
    sent = agent.messages
    try:
        check_history(sent)
        detail, at = str(refusal).split(": ", 1)[-1], len(sent) - 1
    except IllegalHistory as e:
        detail = str(e)
        at = int(m[1]) if (m := re.search(r"message (\d+)", detail)) else len(sent) - 1
    given = watched.last[0] if watched.last else sent
    n = watched.n
    if sent and sent[0]["role"] == "tool":
        why = say("the history your policy left begins with a tool result whose call was cut "
                  "away: the API refuses the request, and every one after it, since the history "
                  "stays. Cut only where a turn begins: count the user messages (not the state "
                  f"notes), not messages; messages[-{n}:] keeps the last "
                  f"{_messages(n) if n > 1 else 'message'}, which may be the results of one "
                  "batch. ",
                  "你的策略留下的历史以一个工具结果开头，而它的调用已经被截掉了：API 会拒绝这次"
                  "请求，而且历史还在，之后的每一次请求都会被拒绝。只在回合开始的地方截："
                  f"数 user 消息（不算状态通知），而不是数消息；messages[-{n}:] 留下的是最后 {n} "
                  "条消息，它们可能只是同一批调用的几个工具结果。")
    else:
        why = say("every tool result must follow the call it answers, and every call needs its "
                  "results: keep whole turns. ",
                  "每个工具结果都必须跟在它所回应的调用后面，每个调用也都需要它的工具结果："
                  "要保留完整的回合。")
    refused = say("the model's request was refused, as the API would refuse it (400): ",
                  "模型的请求被拒绝了，和 API 的做法一样（400）：")
    left = say("the history your policy left (the request sends it after the system prompt):",
               "你的策略留下的历史（请求里它跟在系统提示词后面）：")
    return Hint(f"{watched.about(given)}\n{refused}{detail}\n{left}\n{_described(sent, at)}"
                + hint(then(why, _policy_rule(n))))


def _through_an_agent(KeepLastTurns, n: int, folder: Path) -> Hint | None:
    """Five chats with a policy KeepLastTurns(n); a hint held to the end, or None."""
    told, policy = outcome(KeepLastTurns, n)
    if told == "raised":
        why = say("KeepLastTurns(n) takes the number of turns to keep: def __init__(self, n), "
                  "keeping it (self.n = n) for prepare",
                  "KeepLastTurns(n) 接收要保留的回合数：def __init__(self, n)，"
                  "把它存下来（self.n = n）留给 prepare 用")
        raise Hint(f"KeepLastTurns({n})\n{raised(policy, {folder: '.'})}" + hint(why))
    watched = _Watched(policy, n, folder)
    replies = _script()
    asked: list[int] = []

    def model(messages, tools):
        asked.append(1)
        return replies[len(asked) - 1]

    tools = [ReadFile(), TodoWrite(), ChangeDir()]
    try:
        agent = Agent(FunctionLLM(model), tools, cwd=folder, context=watched)
    except Hint:
        raise
    except NotImplementedError:
        raise
    for ask, *_ in CHATS:
        watched.chat, watched.round = watched.chat + 1, 0
        try:
            agent.chat(ask)
        except (NotImplementedError, Hint):
            raise
        except IllegalHistory as e:
            raise _refused(watched, agent, e) from None
        except (Exception, KeyboardInterrupt, SystemExit) as e:
            given = watched.last[0] if watched.last else agent.messages
            ended = say("the run ended with ", "运行以异常结束：")
            raise Hint(f"{watched.about(given)}\n{ended}{error_of(e, watched.places)}"
                       + hint(_policy_rule(n))) from None
    watched.overflow = True
    watched.prepare(agent.messages, overflow=True)
    return watched.copied


@checker("ch04.policy")
def check_policy(KeepLastTurns) -> None:
    a_class(KeepLastTurns, 'check("ch04.policy", KeepLastTurns)')
    prepare = getattr(KeepLastTurns, "prepare", None)
    if prepare is None or _empty(prepare):
        raise NotImplementedError  # the learner's class, its body (or its methods) still `...`
    with tempfile.TemporaryDirectory(prefix="corecoder-ch04-") as tmp, scrubbed({Path(tmp): "."}):
        for where in (Path(tmp), Path(tmp, FOLDER)):
            where.mkdir(exist_ok=True)
            for name, text in FILES.items():
                (where / name).write_text(text, encoding="utf-8")
        held = [_through_an_agent(KeepLastTurns, n, Path(tmp)) for n in TURNS]
        copied = next((h for h in held if h is not None), None)
        if copied is not None:
            raise copied  # a copy where the list itself was due: told once nothing worse shows
