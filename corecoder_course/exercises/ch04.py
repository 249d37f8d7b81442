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

`ch04.estimate`'s reference is the engine's `text_tokens` of tokens.py, within 15 % and a token
either way, on texts made of fragments of every kind the chapter names (English, code, minified
JSON, Chinese, Japanese mostly in kana, Korean, Russian, whitespace, symbols, emoji).

`ch04.policy` runs the learner's class as the context policy of a real `Agent` (`run`, on the
seam harness of seams.py): one to five chats, each a round of parallel reads (now and then a
todo list written, or a move to another folder, so state notes come in) then an answer, and one
call more as the agent makes it when the provider says a request is too long (overflow=True).
What it compares, beside the chapter's own KeepLastTurns, is what each call of `prepare` did
(the harness spies on it): the list itself, which tail of it, a copy, a list that is no tail, a
list changed in place, or how the run ended (the scripted model refuses a request the API would
refuse: a 400). On overflow any shorter tail from where a turn begins passes, as the agent takes
any such cut.

What a hint shows is the same every run: memory addresses and the temporary folder (shown as
".") are scrubbed from it.
"""

from __future__ import annotations

import json

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
from corecoder.tokens import text_tokens
from corecoder.tool import Tool
from corecoder.tools import ReadFile
from corecoder.tools.todo import TodoWrite
from corecoder.workspace import Workspace

from ..checks import case, describe, shown, then
from ..kit import Exercise, Mistake
from ..seams import Seam
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
FOLDER = "src"  # where the model may move; FILES are in it too, so every read works
ASKS = ("Why does the test fail?", "Is mean used anywhere else?", "Plan the fix.",
        "[CI] test_calc.py failed before the fix. Sum it up.", "修好它。")


class ChangeDir(Tool):
    """`cd`, as bash carries it over, without a shell: it moves the workspace's working
    directory, so the agent tells the model where it works now in a state note."""

    name = "change_dir"
    description = "Move to the folder `path`, relative to the working directory, as `cd` does."
    parameters = {"type": "object", "properties": {"path": {"type": "string"}},
                  "required": ["path"], "additionalProperties": False}

    def run(self, ws: Workspace, path: str) -> str:
        ws.cwd = (ws.cwd / path).resolve() if (ws.cwd / path).is_dir() else ws.cwd
        return f"now in {ws.show(ws.cwd)}"


class KeepLastTurns:
    """A context policy: keep the last `n` turns of the user, and what followed them."""

    def __init__(self, n):
        self.n = n

    def attach(self, agent):
        pass  # it needs nothing of the agent

    def prepare(self, messages, overflow=False):
        starts = [i for i, m in enumerate(messages)
                  if m["role"] == "user" and not is_state_note(m)]
        if len(starts) <= self.n:
            return messages
        return messages[starts[-self.n]:]


def _did(call) -> str | None:
    """What one call of prepare did, in words, as it returns (None if it raised: how the run
    ended says it): the list itself, a tail of it, or what else. On overflow any tail from a
    turn start that keeps the latest user message will do."""
    if call.kind == "raised":
        return None
    given, result, overflow = call.given[0], call.value, bool(call.args[1:] or call.kwargs)
    users = [i for i, m in enumerate(given) if m["role"] == "user" and not is_state_note(m)]
    head = (f"{len(given)} message{'s' * (len(given) != 1)}, {len(users)} user "
            f"turn{'s' * (len(users) != 1)}" + (", overflow" if overflow else ""))
    if call.changed:
        return f"{head}: changed the list it was given"
    if result is call.args[0]:
        return f"{head}: the list itself"
    if not isinstance(result, list):
        return f"{head}: {type(result).__name__}, not a list"
    k = len(given) - len(result)
    if not (0 <= k <= len(given) and result == given[k:]):
        return f"{head}: a list that is no tail of the one given ({shown(result)[:60]})"
    if overflow and 0 < k <= (users[-1] if users else 0) and turn_start(given, k) == k:
        return f"{head}: a shorter tail, from a turn start"
    return f"{head}: a copy of it" if k == 0 else f"{head}: messages[{k}:]"


def _chats(KeepLastTurns, n: int, chats: list[tuple]) -> list[str]:
    """The chats through a real Agent with KeepLastTurns(n) as its policy (the model reads files
    in parallel, now and then writes its todo list or moves to another folder, then answers),
    then one call as the agent makes it when the provider says a request is too long. What
    each call of prepare did, call by call, and how the run ended if it ended early (a request
    the API would refuse, an error)."""
    replies = []
    for _, reads, todo, move in chats:
        calls = [{"name": "read_file", "arguments": {"path": name}} for name in reads]
        calls += [{"name": "todo_write", "arguments": {"todos": [
            {"content": todo, "status": "in_progress"}]}}] if todo else []
        calls += [{"name": "change_dir", "arguments": {"path": FOLDER}}] if move else []
        replies += [{"tool_calls": calls}, "Done."] if calls else ["Done."]
    with Seam(FILES | {f"{FOLDER}/{name}": text for name, text in FILES.items()}) as seam:
        policy = seam.spy(KeepLastTurns(n), "prepare", _did)
        agent = seam.agent(replies, [ReadFile(), TodoWrite(), ChangeDir()], context=policy)
        for ask, *_ in chats:
            agent.chat(ask)
        agent.context.prepare(agent.messages, overflow=True)
    return [did for did in seam.calls if did] + seam.notes()


def _policy_inputs():
    from hypothesis import strategies as st

    chat = st.tuples(st.sampled_from(ASKS), st.lists(st.sampled_from(sorted(FILES)), max_size=3),
                     st.sampled_from([None, "Fix mean", "修好 mean"]), st.booleans())
    return st.tuples(st.integers(1, 3), st.lists(chat, min_size=1, max_size=5))


def _policy_call(args: tuple[int, list[tuple]]) -> str:
    n, chats = args
    said = "; ".join(f"{ask!r}: reads {len(reads)}" + (", todo" if todo else "")
                     + (", cd" if move else "") for ask, reads, todo, move in chats)
    chat = "chat" if len(chats) == 1 else "chats"
    return (say(f"KeepLastTurns({n}) as a real Agent's policy, through {len(chats)} {chat} "
                f"({said}), then prepare(messages, overflow=True); each call of prepare:",
                f"KeepLastTurns({n}) 作为一个真实 Agent 的策略，跑 {len(chats)} 次对话（{said}），"
                "最后调用 prepare(messages, overflow=True)；每次调用 prepare 的结果："))


def _policy_diagnose(args, got: list[str], wanted: list[str]) -> str | None:
    """The first call of prepare that did otherwise, named."""
    for k, (mine, theirs) in enumerate(zip(got, wanted, strict=False), 1):
        if mine != theirs:
            return then(say(f"at call {k} of prepare, the engine's policy: {theirs}; yours: "
                            f"{mine}. ",
                            f"第 {k} 次调用 prepare 时，引擎的策略：{theirs}；你的：{mine}。"),
                        say(*POLICY_RULE))
    return None


POLICY_RULE = (
    "keep the last n turns: the history from messages[starts[-n]] on, where starts are the "
    "indices of the user messages that are not state notes; with n or fewer of them there is "
    "nothing to cut: return the list you were given, itself. On overflow, the list itself or a "
    "shorter tail from where a turn begins",
    "保留最近 n 个回合：从 messages[starts[-n]] 开始的历史，其中 starts 是那些不是状态通知的 "
    "user 消息的下标；这样的消息不超过 n 条时，没有什么可截的：原样返回传进来的那个列表本身。"
    "overflow 时，返回列表本身，或者从某个回合开始处起的一段更短的结尾")
ONE_TURN = "return messages[starts[-self.n]:]"
ATTACH = "    def attach(self, agent):\n        pass  # it needs nothing of the agent\n"
POLICY = Exercise(
    "ch04.policy", KeepLastTurns, _policy_inputs, _policy_call, run=_chats, max_examples=25,
    examples=[(n, [(ASKS[0], ["calc.py", "test_calc.py"], "Fix mean", False),
                   (ASKS[1], ["notes.md"], None, True), (ASKS[2], [], None, False),
                   (ASKS[3], ["calc.py", "notes.md", "test_calc.py"], "Check", False),
                   (ASKS[4], ["calc.py"], None, False)]) for n in (2, 1, 3)],
    rule=POLICY_RULE, diagnose=_policy_diagnose,
    equivalent={"def prepare(self, messages, overflow=False): → def prepare(self, messages, "
                "overflow=True):": "KeepLastTurns cuts the same way with or without overflow, "
                "so the flag's default changes nothing it does"},
    domain=("every run of one to five chats, for n from 1 to 3",
            "一到五次对话的各种运行，n 从 1 到 3"),
    shape=("starts = [i for i, m in enumerate(messages) if m[\"role\"] == \"user\" and not "
           "is_state_note(m)]; the list itself when len(starts) <= n, else messages[starts[-n]:]",
           "starts = [i for i, m in enumerate(messages) if m[\"role\"] == \"user\" and not "
           "is_state_note(m)]；len(starts) <= n 时返回列表本身，否则返回 messages[starts[-n]:]"),
    mistakes=[
        Mistake(ATTACH, "", (
            "a context policy has two methods: attach(agent), which the agent calls once as it "
            "is made (KeepLastTurns needs nothing of the agent: its body is pass), and "
            "prepare(messages, overflow=False), before every round",
            "上下文策略有两个方法：attach(agent)，智能体创建时调用一次（KeepLastTurns 不需要"
            "智能体的任何东西，方法体写 pass 就行）；以及 prepare(messages, overflow=False)，"
            "每一轮之前调用")),
        Mistake(ONE_TURN, "return messages[-self.n:]", (
            "the last n messages are not the last n turns: they may begin with the results of a "
            "batch whose call was cut away, and the API refuses the request (400). Count the "
            "user messages (not the state notes), and cut where a turn begins",
            "最后 n 条消息不等于最近 n 个回合：它们可能以一批调用的工具结果开头，而发出这些调用"
            "的消息已经被截掉了，API 会拒绝请求（400）。要数 user 消息（不算状态通知），在回合"
            "开始的地方截")),
        Mistake(' and not is_state_note(m)', "", (
            "a state note is a user message the user never wrote (is_state_note): the agent "
            "tells its state with it, and it begins no turn. Count only the user messages that "
            "are not state notes",
            "状态通知是用户从来没写过的 user 消息（is_state_note）：智能体用它来告诉模型自己的"
            "状态，它并不开始一个回合。只数那些不是状态通知的 user 消息")),
        Mistake("not is_state_note(m)", 'not str(m["content"]).startswith("[")', (
            "a user message may begin with \"[\" and be the user's all the same (a pasted log): "
            "tell a state note by is_state_note, which looks for the whole STATE_NOTE, not by "
            "its first character",
            "user 消息也可能以“[”开头，却仍然是用户自己的（比如贴进来的日志）：要用 "
            "is_state_note 来认状态通知，它看的是完整的 STATE_NOTE，而不是第一个字符")),
        Mistake("starts[-self.n]:", "starts[-self.n + 1]:", (
            "one turn too few: the last n turns begin at starts[-n], one turn earlier than "
            "starts[-n + 1]",
            "少留了一个回合：最近 n 个回合从 starts[-n] 开始，比 starts[-n + 1] 早一个回合")),
        Mistake("starts[-self.n]:", "starts[-self.n - 1]:", (
            "one turn too many: the last n turns begin at starts[-n], and starts[-n - 1] is "
            "one turn earlier",
            "多留了一个回合：最近 n 个回合从 starts[-n] 开始，starts[-n - 1] 还要再早一个回合")),
        Mistake("            return messages\n", "            return list(messages)\n", (
            "with nothing to cut, return the list you were given, itself, not a copy: when the "
            "provider says a request is too long, Agent.ask takes any new list for a cut and "
            "sends the same request again; the list itself tells it nothing could be cut",
            "没有可截的时候，原样返回传进来的那个列表本身，而不是副本：服务商说请求太长时，"
            "Agent.ask 会把任何新列表都当成截过的结果，再把同样的请求发一遍；返回列表本身，"
            "它才知道什么也截不掉")),
        Mistake("def prepare(self, messages, overflow=False):", "def prepare(self, messages):", (
            "prepare is called as the agent calls it: prepare(messages) before every round, and "
            "prepare(messages, overflow=True) when the provider says a request is too long: "
            "def prepare(self, messages, overflow=False)",
            "prepare 是按智能体的方式调用的：每一轮之前调用 prepare(messages)，服务商说请求"
            "太长时调用 prepare(messages, overflow=True)：def prepare(self, messages, "
            "overflow=False)")),
        Mistake(ONE_TURN, "del messages[:starts[-self.n]]\n        return messages", (
            "return a new list, a slice, and leave the one given as it is: the agent tells a "
            "policy that cut something by the new list it returns",
            "应该返回一个新列表，也就是一个切片，传进来的列表保持原样：智能体靠返回的是不是"
            "一个新列表来判断策略有没有截掉东西")),
    ],
)
