"""Checks for the exercises of chapter 1, the loop.

    ch01.find_orphan      find the first tool result that no waiting call expects
    ch01.answer_pending   after an interrupt, answer every call still waiting
    ch01.run_call         run one call, telling bad arguments from failures
    ch01.stop_on_failure  an executor that stops a batch at its first failed call,
                          plugged into a real Agent

All four are declared exercises (kit.py): the reference is the notebook's solution, written
here under the learner's name, and the inputs are drawn from the whole domain the chapter
promises. `find_orphan` gets every legal history and the same broken by hand: a result
inserted anywhere (for a call made, or for none), one answered twice or moved out of its
window, a message lost, the front cut away. `answer_pending` gets every legal history cut at
any point, and histories that end in the middle of a batch whose ids sort neither in call
order nor against it. `run_call` gets every JSON edge (empty, whitespace, not an object,
falsy, nested, malformed, non-ASCII) on tools that check a schema, one that checks none, and
tools that raise; what is seen is the result and how many times the tool ran. The last runs
the learner's executor inside a real `Agent` on a scripted model, with a gate, on batches of
calls that succeed, fail, are refused by the gate, have bad arguments or name an unknown
tool: what is seen is each call's result, round by round, and which calls started.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass

from corecoder.calls import Gate, admit, perform, signature
from corecoder.events import ToolCallStarted
from corecoder.messages import INTERRUPTED, STATE_NOTE, ToolCall, assistant, tool_result, user
from corecoder.scripted import parse_turn
from corecoder.tool import Tool, ToolError, problems
from corecoder.tools import Glob, ReadFile
from corecoder.workspace import Workspace

from ..checks import case
from ..kit import Exercise, Mistake
from ..seams import Seam
from ..words import say


def _calls(*ids: str) -> dict:
    return assistant("", [ToolCall(i, "read_file", json.dumps({"path": f"{i}.py"})) for i in ids])


def _result(call_id: str, text: str = "ok") -> dict:
    return tool_result(call_id, text)


def _shows(name: str):
    """How a hint shows a call on a history: the history, one message a line, then the call."""
    return lambda args: f"{case(say('the history', '历史'), args[0])}\n{name}(messages)"


# --- ch01.find_orphan ------------------------------------------------------------------

def find_orphan(messages):
    """The index of the first tool message that answers no waiting call, or None."""
    waiting = []
    for i, message in enumerate(messages):
        if message["role"] == "tool":
            if message["tool_call_id"] not in waiting:
                return i
            waiting.remove(message["tool_call_id"])
        else:
            waiting = [call["id"] for call in message.get("tool_calls", [])]
    return None


def _orphan_inputs():
    from hypothesis import strategies as st

    from ..inputs import legal_histories, outputs

    @st.composite
    def broken(draw) -> tuple[list[dict]]:
        """A legal history, then up to three edits by hand: what an orphan comes from."""
        messages = draw(legal_histories())
        for _ in range(draw(st.integers(0, 3))):
            where = draw(st.integers(0, len(messages)))
            results = [m for m in messages if m["role"] == "tool"]
            edit = draw(st.sampled_from(["result", "again", "lost", "front"]))
            if edit == "result":  # anywhere: for a call made (answered or not), or for none
                ids = [c["id"] for m in messages for c in m.get("tool_calls", [])]
                messages.insert(where, tool_result(draw(st.sampled_from([*ids, "c9", ""])),
                                                   draw(outputs)))
            elif edit == "again" and results:  # answered twice, or moved out of its window
                moved = draw(st.sampled_from(results))
                if draw(st.booleans()):
                    messages.remove(moved)
                messages.insert(min(where, len(messages)), moved)
            elif edit == "lost" and messages:  # its calls' results are orphans now
                del messages[min(where, len(messages) - 1)]
            elif edit == "front":  # a history cut carelessly at the front
                messages = messages[where:]
        return (messages,)

    return broken()


ORPHAN_RULE = ("a tool message must answer a call of the latest assistant message that is still "
               "waiting; a user or assistant message in between closes the window",
               "tool 消息必须回应最近一条 assistant 消息里仍在等待的调用；"
               "中间只要隔了一条 user 或 assistant 消息，窗口就关上了")


def _orphans(messages: list[dict]) -> list[int]:
    """Every orphan's index: the first, then the first of what is left once it is taken out."""
    found, left = [], list(enumerate(messages))
    while (k := find_orphan([m for _, m in left])) is not None:
        found.append(left.pop(k)[0])
    return found


def _orphan_diagnose(args: tuple[list[dict]], got, wanted) -> str | None:
    """An answer that is no index, and an orphan that is not the first."""
    if got is not None and type(got) is not int:
        return say("return the index of the orphan, an int, or None",
                   "返回孤立消息的下标（int），或者 None")
    if got in _orphans(args[0]):
        return say(f"message {got} is an orphan too, but the first is message "
                   f"{wanted}: return as soon as you find one",
                   f"下标为 {got} 的消息也是孤立的，但第一条孤立的消息下标是 "
                   f"{wanted}：找到就立即返回")
    return None


FIND_ORPHAN = Exercise(
    "ch01.find_orphan", find_orphan, _orphan_inputs, _shows("find_orphan"),
    rule=ORPHAN_RULE,
    diagnose=_orphan_diagnose, max_examples=150,
    examples=[(h,) for h in (
        [user("fix it"), _calls("c1", "c2"), _result("c1"), _result("c2"), assistant("done")],
        [user("go"), _calls("c1"), _result("c1"), _calls("c2", "c3"), _result("c2"),
         _result("c3")],
        [],
        [_result("c1"), _calls("c2"), _result("c2")],  # cut at the front
        [user("go"), _calls("c1"), _result("c1"), _result("c1")],  # answered twice
        [_result("c9"), user("go"), _calls("c1"), _result("c1"), _result("c1")],  # two orphans
        [user("go"), _calls("c1"), _result("c9")],  # an id no call has
        [user("go"), _calls("c1", "c2"), _result("c1"), user("stop"), _result("c2")],
        [user("go"), _calls("c1", "c2"), _result("c1"), assistant("hmm"), _result("c2")],
        [user("go"), _calls("c1", "c2"), _result("c1"),  # a state note closes it too
         user(f"{STATE_NOTE}\n\nWorking directory: /home/ada/calc"), _result("c2")],
        [user("go"), _calls("c1", "c2"), _result("c2"), _result("c1")],  # order: not this rule's
    )],
    shape=("waiting = []; for each message (enumerate): a tool message whose tool_call_id is not "
           "in waiting is the orphan (return i), else take its id out of waiting; any other "
           "message starts waiting anew: the ids of its own calls (none: [])",
           "waiting = []；用 enumerate 逐条看消息：tool 消息的 tool_call_id 不在 waiting 里，"
           "它就是孤立的（return i），否则把这个 id 从 waiting 里去掉；其他消息都让 waiting "
           "重新开始：换成它自己那些调用的 id（没有调用就是 []）"),
    mistakes=[
        Mistake("waiting.remove(message[\"tool_call_id\"])", "", (
            "a call is answered once: take its id out of waiting when its result comes, so that "
            "a second result for the same call is an orphan",
            "一个调用只回应一次：它的结果一到，就把它的 id 从 waiting 里去掉，"
            "这样同一个调用的第二个结果就是孤立的")),
        Mistake("else:", "elif message[\"role\"] == \"user\" or message.get(\"tool_calls\"):", (
            "an assistant message without calls closes the window too (any message that is not "
            "a tool result does): waiting becomes its calls, none",
            "不带调用的 assistant 消息也会关上窗口（只要不是工具结果，任何消息都会）："
            "waiting 换成它的调用，也就是一个都没有")),
        Mistake("waiting = [call", "waiting += [call", (
            "the window holds the calls of the latest message only: any message that is not a "
            "tool result (the user's, a state note, the assistant's) replaces what was waiting "
            "with its own calls (=), it does not add to it (+=)",
            "窗口里只有最近一条消息的调用：任何不是工具结果的消息（用户的、状态通知、"
            "assistant 的）都要用它自己的调用替换掉原来在等待的调用（=），而不是加在后面（+=）")),
    ],
    equivalent={"return None → pass": "a function that ends without return returns None"},
)


# --- ch01.answer_pending ---------------------------------------------------------------

def answer_pending(messages):
    """The history, plus an INTERRUPTED result for each call still waiting, in call order."""
    answered, i = set(), len(messages)
    while i > 0 and messages[i - 1]["role"] == "tool":  # the results at the end of the history
        i -= 1
        answered.add(messages[i]["tool_call_id"])
    waiting = []
    if i > 0 and messages[i - 1]["role"] == "assistant":  # the message whose calls they answer
        calls = messages[i - 1].get("tool_calls", [])
        waiting = [call["id"] for call in calls if call["id"] not in answered]
    return messages + [tool_result(call_id, INTERRUPTED) for call_id in waiting]


# Twelve calls whose ids sort neither in call order nor against it, the first two answered:
# ten left waiting, so an answer that keeps them in a set (hash order), sorts them or reverses
# them fails whatever the hash seed (a set of ten in call order: about 1 seed in 3.6 million).
MANY = ["c7", "c3", "c11", "c1", "c9", "c12", "c2", "c10", "c5", "c8", "c4", "c6"]


def _pending_inputs():
    from hypothesis import strategies as st

    from ..inputs import legal_histories, outputs

    @st.composite
    def interrupted(draw) -> tuple[list[dict]]:
        """A legal history cut at any point, or followed by a batch cut after any of its
        results (ids in no sorted order)."""
        history = draw(legal_histories())
        if draw(st.booleans()):
            return (history[:draw(st.integers(0, len(history)))],)
        ids = draw(st.lists(st.sampled_from([*MANY, "toolu_01", "调用"]), min_size=1, max_size=6,
                            unique=True))
        calls = [ToolCall(i, "read_file", json.dumps({"path": f"{i}.py"})) for i in ids]
        batch = [assistant(draw(st.sampled_from(["", "Let me look."])), calls)]
        answered = ids[:draw(st.integers(0, len(ids)))]
        return (history + batch + [tool_result(i, draw(outputs)) for i in answered],)

    return interrupted()


class _History(list):
    """What answer_pending returned, as a hint shows it: `messages + [...]`, the messages added
    after the history it was given (all of it, when that history is not kept as it was), or
    the very list it was given (`alias`: never the same answer as a new list). A list all the
    same: a hint that says "return a list" means a plain one."""

    def __init__(self, value: list, given: list[dict], alias: bool):
        super().__init__(value)
        self.given, self.alias = given, alias

    def __eq__(self, other) -> bool:
        return list(self) == list(other) and self.alias == getattr(other, "alias", False)

    def __repr__(self) -> str:
        if self.alias:
            return say("messages itself, not a new list", "messages 本身，不是新列表")
        kept = self[:len(self.given)] == self.given
        added = ", ".join(map(_brief, self[len(self.given):] if kept else self))
        return f"messages + [{added}]" if kept else f"[{added}]"




def _brief(message) -> str:
    """A message as the code that makes it: tool_result('c2', INTERRUPTED)."""
    if not isinstance(message, dict):
        return repr(message)
    if message.get("role") == "tool":
        text = "INTERRUPTED" if message.get("content") == INTERRUPTED else \
            f"{message.get('content')!r:.30}"
        return f"tool_result({message.get('tool_call_id')!r}, {text})"
    calls = [c.get("id") for c in message.get("tool_calls") or []]
    return f"{message.get('role')}({message.get('content')!r:.30}" + (f", {calls})" if calls
                                                                        else ")")


def _pending_run(answer, messages: list[dict]):
    given = copy.deepcopy(messages)
    got = answer(messages)
    return _History(got, given, got is messages) if type(got) is list else got


ANSWER_PENDING = Exercise(
    "ch01.answer_pending", answer_pending, _pending_inputs, _shows("answer_pending"),
    run=_pending_run, show=repr, max_examples=150,
    rule=("each call still waiting gets one result, tool_result(call_id, INTERRUPTED), in call "
          "order (the order of the assistant message's tool_calls). The calls still waiting are "
          "those of the assistant message just before the results at the end of the history "
          "that none of those results answers; if no assistant message is there, none is. "
          "Always a new list: a copy when nothing is waiting",
          "每个仍在等待的调用得到一个结果 tool_result(call_id, INTERRUPTED)，按调用的顺序排"
          "（即 assistant 消息里 tool_calls 的顺序）。仍在等待的调用，是历史末尾那些结果前面"
          "紧挨着的那条 assistant 消息里、还没有结果回应的调用；那里如果不是 assistant 消息，"
          "就没有等待的调用。总是返回一个新列表：没有等待的调用时，就是一份副本"),
    shape=("step back over the tool messages at the end, collecting the ids they answer; if the "
           "message before them is an assistant message, return messages + a tool_result(id, "
           "INTERRUPTED) for each of its calls not answered, in order; otherwise a copy",
           "从末尾往回跳过那些 tool 消息，记下它们回应的 id；如果它们前面那条是 assistant 消息，"
           "就返回 messages 加上它每个还没回应的调用的 tool_result(id, INTERRUPTED)，按顺序排；"
           "否则返回一份副本"),
    examples=[(h,) for h in (
        [user("go"), _calls("c1", "c2", "c3"), _result("c1")],
        [user("go"), _calls("c1", "c2")],
        [user("go"), _calls(*MANY), _result(MANY[0]), _result(MANY[1])],
        [user("go"), _calls("c1"), _result("c1"), _calls("c2", "c3"), _result("c2")],
        [user("go"), _calls("c1"), _result("c1"), assistant("done")],
        [user("go"), _calls("c1", "c2"), _result("c1"), _result("c2")],
        [user("go")],
        [],
    )],
    mistakes=[
        Mistake("while i > 0", "if i > 0", (
            "step back over every result at the end (while, not if): a batch of parallel calls "
            "may have had several answered before the interrupt",
            "要把末尾的结果一条条都跳过（用 while，不是 if）：一批并行调用在中断之前，"
            "可能已经有好几个得到了回应")),
        Mistake("waiting = [call[\"id\"] for call in calls if call[\"id\"] not in answered]",
                "waiting = sorted(call[\"id\"] for call in calls "
                "if call[\"id\"] not in answered)", (
                    "call order is the order of the assistant message's tool_calls, not the "
                    "ids' sorted order (\"c1\" < \"c10\" < \"c2\"): keep the calls as they come",
                    "调用的顺序是 assistant 消息里 tool_calls 的顺序，不是 id 排序后的顺序"
                    "（\"c1\" < \"c10\" < \"c2\"）：按调用原来的顺序来")),
        Mistake(" if call[\"id\"] not in answered]", "]", (
            "a call whose result is already in the history is answered: a second result for it "
            "would be an orphan. Only the calls no result answers are waiting",
            "结果已经在历史里的调用已经得到了回应：再给它一个结果，就成了孤立的工具结果。"
            "只有还没有结果回应的调用才在等待")),
    ],
    equivalent={  # the inputs are legal histories, cut: the two differ on no such history
        "while i > 0 and messages[i - 1]['role'] == 'tool': → "
        "while i > 1 and messages[i - 1]['role'] == 'tool':":
            "it differs only when messages[0] is a tool result, and a legal history never "
            "begins with one",
        "if i > 0 and messages[i - 1]['role'] == 'assistant': → if i > 0:":
            "a message before the results that is not the assistant's is the user's or a state "
            "note, which has no tool_calls: no call is waiting either way",
    },
)


# --- ch01.run_call ---------------------------------------------------------------------

def run_call(tool, arguments, workspace):
    """One call's result: the tool's output, 'bad arguments for ...', or '... failed: ...'."""
    try:
        args = json.loads(arguments) if arguments.strip() else {}  # "" means no arguments
    except json.JSONDecodeError as e:
        return f"bad arguments for {tool.name}: the arguments are not valid JSON ({e.msg})"
    if not isinstance(args, dict):
        return f"bad arguments for {tool.name}: the arguments must be a JSON object"
    trouble = problems(tool.parameters, args)
    if trouble:
        return f"bad arguments for {tool.name}: " + "; ".join(trouble)
    try:
        return tool.run(workspace, **args)
    except Exception as e:
        return f"{tool.name} failed: {e}"


def _tool(name: str, description: str, parameters: dict, act) -> type[Tool]:
    """A tool class whose instances count their runs (whether, and how often, an answer ran
    the tool is seen); `act` does the work, or is the exception it raises."""

    def run(self, ws, **args):
        self.ran += 1
        if isinstance(act, Exception):
            raise act
        return act(**args)

    return type(name, (Tool,), {"name": name, "description": description,
                                "parameters": parameters, "ran": 0, "run": run})


TEXT = {"type": "object", "additionalProperties": False, "required": ["text"],
        "properties": {"text": {"type": "string"}, "times": {"type": "integer", "minimum": 1}}}
START = {"type": "object", "additionalProperties": False,
         "properties": {"start": {"type": "integer"}}}
# Tools that check a schema, one that checks none (some MCP servers send none: only run_call's
# own test keeps a JSON list or null from it), and tools that raise: a ToolError, and bugs
# (a KeyError is still the tool's failure, not the model's bad arguments).
TOOLS = SHOUT, COUNT, ECHO, SAVE, LOOKUP = [
    _tool("shout", "Repeat the text in capitals.", TEXT,
          lambda text, times=1: text.upper() * times),
    _tool("count", "Add one.", START, lambda start=0: str(start + 1)),
    _tool("echo", "Say which arguments came.", {},
          lambda **args: json.dumps(args, ensure_ascii=False, sort_keys=True)),
    _tool("save", "Raise ToolError('磁盘已满: the disk is full').", TEXT,
          ToolError("磁盘已满: the disk is full")),
    _tool("lookup", "Raise KeyError('missing').", START, KeyError("missing"))]


class _Ran(str):
    """The text run_call returned, with how many times the tool ran (`runs`): the same result
    only if the tool ran as often. A str all the same: a result of another type is left as it
    is, and the kit says "return a str"."""

    runs = 0

    def __eq__(self, other) -> bool:
        return str(self) == str(other) and self.runs == getattr(other, "runs", None)

    def __repr__(self) -> str:
        return f"{str(self)!r}" + say(f" (the tool ran {self.runs} time{'s' * (self.runs != 1)})",
                                      f"（工具运行了 {self.runs} 次）")




def _run_call(answer, make: type[Tool], arguments: str):
    tool = make()
    result = answer(tool, arguments, Workspace())
    if isinstance(result, str):
        result = _Ran(result)
        result.runs = tool.ran
    return result


def _call_inputs():
    from hypothesis import strategies as st

    from ..inputs import texts

    # what json.dumps never writes: whitespace alone or around, NaN, a BOM, no JSON at all,
    # JavaScript's and Python's way, a trailing comma, two documents, a key twice, deep nesting
    edges = ["", " ", "\t\r\n", "\u3000", ' {"text": "hi"}\r\n', '\t{"start": 1}\n', "NaN",
             '{"start": NaN}', "\ufeff{}", "hi", "{text: hi}", "{'text': 'hi'}", '{"text": "hi",}',
             '{"text": "hi"} {}', '{"text": "a", "text": "b"}', '{"text": "straße", "times": 2}',
             '{"text": [[[[[[["deep"]]]]]]]}']
    values = st.recursive(st.none() | st.booleans() | st.integers(-2, 3) | texts |
                          st.floats(allow_nan=False, allow_infinity=False),
                          lambda inner: st.lists(inner, max_size=3) |
                          st.dictionaries(texts, inner, max_size=3), max_leaves=6)
    objects = st.dictionaries(st.sampled_from(["text", "times", "start", "extra", "路径"]),
                              values, max_size=3)
    written = st.builds(json.dumps, objects | values, ensure_ascii=st.booleans())
    arguments = st.one_of(st.sampled_from(edges), written, written.map(lambda s: s[:-1]))
    return st.tuples(st.sampled_from(TOOLS), arguments)


def _call_shown(args: tuple[type[Tool], str]) -> str:
    make, arguments = args
    return (say("the tool: ", "工具：") + f"{signature(make())}: {make.description}\n"
            f"run_call({make.name}, {arguments!r}, workspace)")


def _same_call(got: _Ran, wanted: _Ran, args: tuple) -> bool:
    """The same text, the tool run as often; but for text that is not JSON, or not an object,
    the chapter leaves the words after 'bad arguments for <tool>:' to the learner."""
    bad = f"bad arguments for {args[0].name}:"
    if wanted.startswith(f"{bad} the arguments "):
        return got.runs == 0 and got.startswith(bad)
    return got == wanted


CALL_SHAPE = ("try: args = json.loads(arguments) if arguments.strip() else {} / except "
              "json.JSONDecodeError; isinstance(args, dict); problems(tool.parameters, args); "
              "try: return tool.run(workspace, **args) / except Exception as e")
RUN_CALL = Exercise(
    "ch01.run_call", run_call, _call_inputs, _call_shown, run=_run_call, same=_same_call, show=repr,
    rule=("empty arguments (\"\", or only spaces) are {}; text that is not JSON, or not a JSON "
          "object, is 'bad arguments for <tool>: ...', and so are arguments problems() finds "
          "wrong, each problem joined with '; ': the tool never runs on them. Otherwise return "
          "what tool.run(workspace, **args) returns, or, if it raises (any exception), "
          "'<tool> failed: <the error>'",
          "空参数（\"\"，或者只有空白）就是 {}；不是 JSON、或者不是 JSON 对象的文本，返回 "
          "'bad arguments for <tool>: ...'，problems() 查出问题的参数也一样，每个问题用 '; ' "
          "连接：这些情况下工具一概不运行。否则原样返回 tool.run(workspace, **args) 的结果；"
          "它如果抛出异常（不管哪一种），返回 '<tool> failed: <the error>'"),
    shape=(CALL_SHAPE, CALL_SHAPE.replace("; ", "；")),  # code only: the same in Chinese
    examples=[(SHOUT, '{"text": "hi"}'), (SHOUT, '{"text": "hi", "times": 2}'), (COUNT, ""),
              (COUNT, "  "), (SHOUT, '{"text": '), (COUNT, '{"start": '), (SHOUT, '["hi"]'),
              (COUNT, "[]"), (COUNT, "null"), (ECHO, "[]"), (ECHO, "{}"), (SHOUT, "{}"),
              (SHOUT, '{"text": 5}'), (SHOUT, '{"text": 5, "times": 0}'),
              (SAVE, '{"text": "hi"}'), (LOOKUP, "{}")],
    mistakes=[
        Mistake("json.loads(arguments) if arguments.strip() else {}",
                "json.loads(arguments.strip() or \"{}\") or {}", (
                    "only empty text is no arguments: JSON that parses to something falsy but "
                    "is no object ([], null, 0, false, \"\") is bad arguments, never {}",
                    "只有空文本才算没有参数：解析出来为假、但不是对象的 JSON（[]、null、0、false、"
                    "\"\"）是坏参数，绝不能当作 {}")),
        Mistake("json.loads(arguments) if arguments.strip() else {}", "json.loads(arguments)", (
            "empty arguments (\"\", or only spaces) are no arguments, {}: some providers send "
            "\"\" for a call that has none, and the engine's parse_arguments runs it",
            "空参数（\"\"，或者只有空白）就是没有参数，即 {}：有些服务商给不带参数的调用发 "
            "\"\"，引擎的 parse_arguments 照常运行它")),
        Mistake("    except Exception as e:", "    except (TypeError, KeyError) as e:\n"
                "        return f\"bad arguments for {tool.name}: {e}\"\n"
                "    except Exception as e:", (
                    "once the arguments passed the schema, anything the tool raises is its own "
                    "failure, a KeyError or a TypeError too: '<tool> failed: <the error>', not "
                    "bad arguments (the model would change a call that was right)",
                    "参数通过了 JSON Schema 检查之后，工具抛出的任何异常都是它自己的失败，"
                    "KeyError、TypeError 也一样：返回 '<tool> failed: <the error>'，不是坏参数"
                    "（否则模型会去改一个本来没错的调用）")),
        Mistake("        return tool.run(workspace, **args)",
                "        tool.run(workspace, **args)\n        return tool.run(workspace, **args)", (
                    "run the tool once, and return what that run returned: a second run may do "
                    "its work twice (write, delete, send)",
                    "工具只运行一次，返回这一次的结果：运行第二次，它的事可能就做了两遍"
                    "（写文件、删文件、发请求）")),
        Mistake("    if trouble:", "    if False:", (
            "arguments that break the tool's schema are bad arguments: list every problem "
            "problems(tool.parameters, args) finds, joined with '; ', and never run the tool",
            "不符合工具 JSON Schema 的参数是坏参数：列出 problems(tool.parameters, args) "
            "查出的每个问题，用 '; ' 连接，工具一概不运行")),
    ],
)


# --- ch01.stop_on_failure ----------------------------------------------------------------

def stop_on_failure(calls, agent, results):
    """Run the calls in order, like run_in_order; stop after the first refused or failed one."""
    for call in calls:
        job = admit(agent, call)
        results[call.id] = perform(agent, job, agent.workspace)
        if job.refusal or results[call.id].startswith(f"{call.name} failed:"):
            return


FILES = {"a.py": "print('a')\n", "b.py": "print('b')\n", "secret.txt": "hunter2\n",
         # files whose text looks like a failure: reading them worked
         "failed.txt": "read_file failed: no, this is the file's own text\n3 tests failed\n",
         "说明.md": "测试失败了：3 failed\n"}


class Secrets(Gate):
    """A gate that refuses to read a secret: a refusal that is neither bad arguments nor a
    missing tool."""

    name = "policy"

    def before(self, tool, args, workspace):
        return "secrets stay secret" if "secret" in str(args.get("path", "")) else None


def _read(path, name: str = "read_file") -> dict:
    return {"name": name, "arguments": {"path": path}}


# What a generated batch is made of: calls that succeed, fail as they run, are refused by the
# gate, have bad arguments (malformed JSON is scripted as a string) or name no tool there is.
CALLS = [_read("a.py"), _read("b.py"), _read("failed.txt"), _read("说明.md"),
         {"name": "glob", "arguments": {"pattern": "*.py"}}, _read("missing.py"), _read("."),
         {"name": "glob", "arguments": {"pattern": "*", "path": "nowhere"}}, _read("secret.txt"),
         _read(3), {"name": "read_file", "arguments": '{"path": '},
         {"name": "glob", "arguments": {}}, _read("a.py", name="read_fiel"),
         {"name": "bash", "arguments": {"command": "ls"}}]


@dataclass(frozen=True)
class _Seen:
    """What a run of the agent showed: each call's result, round by round, and the ids of the
    calls that started. A hint shows each result by its status, as ToolCallFinished names it."""

    results: tuple[tuple[object, ...], ...]
    started: tuple[str, ...]

    def statuses(self) -> list[list[str]]:
        kinds = [(re.escape(INTERRUPTED), "interrupted"), (r"\[not run:", "not_run"),
                 ("unknown tool", "unknown_tool"), (r"bad arguments for \w+", "bad_arguments"),
                 (r"\w+ refused", "refused"), (r"\w+ failed:", "failed")]
        return [[next((status for start, status in kinds if re.match(start, result)), "ok")
                 if isinstance(result, str) else type(result).__name__ for result in batch]
                for batch in self.results]

    def __repr__(self) -> str:
        en, zh = ", ".join(self.started) or "none", "、".join(self.started) or "没有"
        return f"{self.statuses()}" + say(f" (started: {en})", f"（开始运行的调用：{zh}）")




def _play(executor, batches: list[list[dict]]) -> _Seen:
    """The batches, each a reply of the scripted model, then a final answer, through a real
    Agent (with the gate) that runs the calls with `executor`."""
    with Seam(FILES, ends=()) as seam:
        agent = seam.agent([{"tool_calls": batch} for batch in batches] + ["Done."],
                           [ReadFile(), Glob()], executor=executor, gates=[Secrets()])
        agent.chat("Read the files.")
    asked = [(i, len(m["tool_calls"])) for i, m in enumerate(agent.messages) if m.get("tool_calls")]
    return _Seen(tuple(tuple(m["content"] for m in agent.messages[i + 1:i + 1 + n])
                       for i, n in asked),
                 tuple(e.call.id for e in seam.events if isinstance(e, ToolCallStarted)))


def _batches_shown(args: tuple[list[list[dict]]]) -> str:
    """The calls of each round as the scripted model sends them: their ids, which a hint's
    "started" names, and their arguments as JSON text."""
    return say("an Agent that runs its calls with stop_on_failure; the model asks for:",
               "一个用 stop_on_failure 运行调用的 Agent；模型请求的是：") + "".join(
        f"\n  {say(f'round {n}: ', f'第 {n} 轮：')}" + ", ".join(
            f"{c.id} {c.name}({c.arguments})" for c in parse_turn({"tool_calls": batch},
                                                                   n - 1).tool_calls)
        for n, batch in enumerate(args[0], 1))


def _batch_inputs():
    from hypothesis import strategies as st

    batch = st.lists(st.sampled_from(CALLS), min_size=1, max_size=4)
    return st.lists(batch, min_size=1, max_size=3).map(lambda batches: (batches,))


def _stop_diagnose(args, got: _Seen, wanted: _Seen) -> str | None:
    """What the rule does not say of a run: which part of it went wrong."""
    mine, theirs = (sum(seen.statuses(), []) for seen in (got, wanted))
    if any(not isinstance(result, str) for batch in got.results for result in batch):
        return say("a result is text the model reads: results[call.id] = perform(...)",
                   "结果是给模型读的文本：results[call.id] = perform(...)")
    if set(mine) == {"not_run"}:
        return say("no call has a result of its own: fill the dict you are given, results[call.id]"
                   " = perform(...), as each call finishes (what an executor returns is ignored), "
                   "and start each batch afresh (a failure before it must not stop it)",
                   "没有一个调用有自己的结果：每个调用跑完，就把结果写进拿到的那个字典，"
                   "results[call.id] = perform(...)（执行器的返回值会被忽略）；每一批都要重新开始"
                   "（之前的失败不能让它停下）")
    if got.results == wanted.results:
        return say("a call after the failed one must not run at all (it could change a file); "
                   "only its result is left out. Run each call only once, in order",
                   "失败之后的调用根本不能运行（它可能会改文件），不只是不写结果。"
                   "每个调用按顺序只运行一次")
    first = next((g, w) for g, w in zip(mine, theirs, strict=True) if g != w)
    if first[0] == "not_run" and first[1] != "ok":  # it stopped before the call that went wrong
        return say("run the failed call itself (its result tells the model why), then stop",
                   "失败的那个调用本身要运行（它的结果告诉模型原因），然后再停")
    return None


STOP = ("an executor stops by returning: the loop answers every call it left out. ",
        "执行器要停下，直接 return 就好：它没运行的调用由循环来回应。")
STOP_ON_FAILURE = Exercise(
    "ch01.stop_on_failure", stop_on_failure, _batch_inputs, _batches_shown, run=_play, show=repr,
    diagnose=_stop_diagnose, max_examples=60,
    rule=("run the calls in order, each admitted just before it runs, and stop (return) after "
          "the first that was refused at admission (its job.refusal is set) or failed as it ran "
          "(its result starts with '<tool name> failed:'): the loop answers the calls left out",
          "按顺序运行调用，每个调用在运行前一刻才准入；第一个在准入时被拒（job.refusal 有值）"
          "或运行时失败（结果以 '<tool name> failed:' 开头）的调用之后，就停下（return）："
          "没运行的调用由循环来回应"),
    shape=("for call in calls: job = admit(...); results[call.id] = perform(...); then return "
           "if job.refusal, or if that result starts with f\"{call.name} failed:\"",
           "for call in calls: job = admit(...)；results[call.id] = perform(...)；"
           "job.refusal 有值，或者这个结果以 f\"{call.name} failed:\" 开头，就 return"),
    examples=[([[_read("a.py"), _read("missing.py"), _read("b.py")]],),
              ([[_read("failed.txt"), _read("a.py"), _read("b.py")]],),
              ([[_read(3), _read("a.py")]],), ([[_read("secret.txt"), _read("a.py")]],),
              ([[_read("a.py", name="read_fiel"), _read("a.py")]],),
              ([[_read("missing.py"), _read("a.py")], [_read("a.py"), _read("b.py")]],)],
    mistakes=[
        Mistake("job.refusal or results[call.id].startswith(f\"{call.name} failed:\")",
                "results[call.id].startswith((f\"bad arguments for {call.name}\", "
                "f\"{call.name} failed:\"))", (
                    "a refusal is told by job.refusal, not by reading the text: an unknown tool "
                    "and a gate's no are refusals too, and their results say it otherwise",
                    "被拒要看 job.refusal，而不是去读结果的文字：工具不存在、关卡不放行也都是"
                    "被拒，它们的结果写法各不相同")),
        Mistake("results[call.id].startswith(f\"{call.name} failed:\")",
                "\"failed:\" in results[call.id]", (
                    "a failure's result starts with '<tool name> failed:'; a file whose own text "
                    "says \"failed:\" was read all right",
                    "失败的结果以 '<tool name> failed:' 开头；一个文件的内容里有 \"failed:\"，"
                    "读它照样是成功的")),
        Mistake("return", "continue", (
            "stop after the first call that was refused or failed: return, and the loop answers "
            "each call left out with \"[not run: the batch stopped before this call]\"",
            "第一个被拒或失败的调用之后就停：return，没运行的调用由循环来回应："
            "\"[not run: the batch stopped before this call]\"")),
        Mistake("return", "raise KeyboardInterrupt", (
            STOP[0] + "KeyboardInterrupt ends the user's turn, as if they had pressed Ctrl+C",
            STOP[1] + "KeyboardInterrupt 会让这次对话直接结束，就像用户按了 Ctrl+C")),
        Mistake("return", "raise RuntimeError(\"a call failed\")", (
            STOP[0] + "Raising ends the user's turn with an error",
            STOP[1] + "抛出异常会让这次对话以错误结束")),
    ],
)
