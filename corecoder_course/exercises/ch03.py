"""Checks for the exercises of chapter 3, the real model.

    ch03.assemble     put a streamed reply's tool calls back together from their deltas,
                      whatever the provider's dialect
    ch03.retry_delay  how long to wait before the next attempt after a failed one, or None
                      to give up
    ch03.cost         the USD cost of one call, from its usage and the model's price, or None

All three are declared exercises (kit.py). No engine function has their contracts: the engine
reassembles with a class fed one delta at a time (`ToolCallAssembler`), `LLM.retry_delay` reads
an error and draws its own jitter, `cost_of` takes no unknown price. So each reference is the
notebook's solution, which computes what the engine computes; its known mistakes are one line of
it written wrong.

`ch03.assemble` draws streams in every dialect of QUIRKS, from servers that send no ids (or empty
ones), and with the chunks of parallel calls interleaved. Arguments are JSON objects, flat or
nested, minified or not, with text in any script (escaped, "\\u4e2d", or not), cut anywhere: inside
a key, a string, an escape; now and then at a fixed width, so that a run of one character comes in
equal slices. Once the answer is right on them, it is plugged into a real `Agent` (the harness of
seams.py), whose model streams its tool calls in each dialect and puts them back together with it,
beside the same script played by ScriptedLLM: the two histories must be equal (the chapter's
claim).

`ch03.retry_delay` draws every status from 400 to 599 and some outside, attempts from 1 to past
max_attempts (given or not), a Retry-After of none, 0, a fraction, past the cap or infinite, and
any draw in [0, 1]. `ch03.cost` draws token counts from 0 to a trillion, cached ones more than
the prompt's, and prices unknown (None), zero, with a cache rate of None or 0.0.
"""

from __future__ import annotations

import json
import math
import numbers
from decimal import Decimal
from pathlib import Path

from corecoder.cli.pricing import Price
from corecoder.messages import Reply, ToolCall, Usage
from corecoder.scripted import parse_turn
from corecoder.stream import _is_json
from corecoder.testing.serve import QUIRKS, tool_call_deltas
from corecoder.tools import ReadFile

from ..checks import EXPECTED, GOT, Hint, describe, hint, raised, shown, then
from ..kit import Exercise, Mistake
from ..seams import Seam
from ..words import say


class Amount:
    """What retry_delay or cost returned, as their checks compare it: a real number read as a
    float (an int, a Decimal or a Fraction is as right as a float), None, or anything else as it
    came. One type for all of them, so that None is a value and not a type: an answer that gives
    up where it should wait (None for a number) is told its known mistake, not "return a number"
    (the kit's step for a wrong type). Numbers are equal to a billionth: the same sum added in
    another order differs in its last digits."""

    def __init__(self, value):
        self.value = value
        if isinstance(value, (numbers.Real, Decimal)) and not isinstance(value, bool):
            try:
                self.value = float(value)
            except (Exception, KeyboardInterrupt, SystemExit):  # an int past a float's range
                pass

    def __eq__(self, other) -> bool:
        if not isinstance(other, Amount):
            return NotImplemented
        a, b = self.value, other.value
        if type(a) is float and type(b) is float:
            return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12) or (a != a and b != b)
        return type(a) is type(b) and a == b

    __hash__ = None

    def __repr__(self) -> str:
        if self.value is None or type(self.value) is float:
            return repr(self.value)
        return f"{type(self.value).__name__} {shown(self.value)}"


def _amount(answer, *args) -> Amount:
    """How retry_delay and cost are put to work: called, and what they return read as an Amount."""
    return Amount(answer(*args))


def _rounded(got: Amount, wanted: Amount, where: str) -> str | None:
    """'Don't round', if `got` is `wanted` rounded to 1 to 9 decimal places (`where`: where a
    number is rounded, f"{...}")."""
    if type(got.value) is not float or type(wanted.value) is not float or not got.value:
        return None
    for places in range(1, 10):
        near = Amount(round(wanted.value, places))
        if near != wanted and got == near:
            return say(f"don't round: {got.value!r} is {wanted.value!r} rounded to {places} "
                       f"decimal places. Return it as computed; round only where it is shown to "
                       f"a person ({where})",
                       f"不要舍入：{got.value!r} 是把 {wanted.value!r} 保留 {places} 位小数后的"
                       f"结果。按算出来的值返回；只在显示给人看的地方才舍入（{where}）")
    return None


# --- ch03.assemble -----------------------------------------------------------------------

def assemble(deltas):
    """The tool calls of one streamed reply, put back together from its deltas, in order."""
    calls, by_id, by_index = [], {}, {}
    for delta in deltas:
        index, id, function = delta.get("index"), delta.get("id"), delta.get("function") or {}
        if id and id in by_id:
            call = by_id[id]
        elif not id and index is not None and index in by_index:
            call = by_index[index]
        elif not id and calls and not (function.get("name") and index is not None):
            call = calls[-1]  # a stray or null index continues the latest call
        else:
            call = {"id": id, "name": "", "arguments": ""}
            calls.append(call)
            if id:
                by_id[id] = call
            if index is not None:
                by_index[index] = call  # the latest call of an index takes its id-less fragments
        call["name"] = call["name"] or function.get("name") or ""
        piece = function.get("arguments") or ""
        if piece and piece == call["arguments"]:
            try:
                json.loads(piece)
                continue  # a first chunk sent twice: its complete arguments, kept once
            except ValueError:
                pass
        call["arguments"] += piece
    return [ToolCall(c["id"] or f"call_{n}", c["name"], c["arguments"])
            for n, c in enumerate(calls, 1)]


KEYS = ("path", "pattern", "command", "content", "offset", "edits", "路径")


def _assemble_inputs():
    """Streams of 1 to 3 calls in a dialect of QUIRKS, from a server that sends no ids (or empty
    ones), or with the chunks of parallel calls interleaved. Every delta has an index (None in
    the null_index dialect) and a function, as the exercise promises; now and then a call's id
    comes alone before its name, and a function lacks its name or its arguments. Arguments are
    JSON objects (nested or flat, minified or not, escaped or not), cut short, or no JSON at all,
    cut anywhere or at a fixed width."""
    from hypothesis import strategies as st

    from ..inputs import texts

    values = st.recursive(st.none() | st.booleans() | st.integers(-9, 10**9) | texts,
                          lambda inner: st.lists(inner, max_size=3)
                          | st.dictionaries(st.sampled_from(KEYS), inner, max_size=3),
                          max_leaves=6)
    def dumped(value, ascii: bool, minified: bool) -> str:  # "\\u4e2d" where ascii
        return json.dumps(value, ensure_ascii=ascii, separators=(",", ":") if minified else None)

    objects = st.builds(dumped, st.dictionaries(st.sampled_from(KEYS), values, max_size=3),
                        st.booleans(), st.booleans())
    arguments = st.one_of(st.just(""), objects, texts,  # texts: arguments that are no JSON
                          objects.flatmap(lambda t: st.integers(0, len(t)).map(lambda k: t[:k])))

    @st.composite
    def streams(draw) -> tuple[list[dict]]:
        dialect = draw(st.sampled_from([*QUIRKS, "no_ids", "interleaved"]))
        named = dialect != "no_ids" and (dialect != "interleaved" or draw(st.booleans()))
        ids = draw(st.permutations(["call_a1", "call_b2", "toolu_01", "7", "call_1"]))
        per_call = []
        for i in range(draw(st.integers(1, 3))):
            text, width = draw(arguments), draw(st.integers(0, 9))  # width 0: cut anywhere
            cuts = (range(width, len(text), width) if width else
                    sorted(draw(st.sets(st.integers(1, max(1, len(text) - 1)), max_size=8))))
            edges = [0, *(c for c in cuts if c < len(text)), len(text)]
            where = {"index": {"shared_index": 0, "null_index": None}.get(dialect, i)}
            who = {"id": ids[i], "type": "function"} if named else draw(st.sampled_from(
                [{}, {"id": ""}]))
            # a first chunk sent twice carries no arguments, or all of them: complete JSON
            whole = dialect == "whole" or (dialect == "repeat_first" and _is_json(text)
                                           and draw(st.booleans()))
            function = {"name": draw(st.sampled_from(["read_file", "grep", "bash"])),
                        "arguments": text if whole else ""}
            if draw(st.integers(0, 5)) == 0:  # now and then a key left out
                del function[draw(st.sampled_from(sorted(function)))]
            chunks = ([where | who | {"function": {}}, where | {"function": function}]
                      if draw(st.integers(0, 4)) == 0 else [where | who | {"function": function}])
            chunks += json.loads(json.dumps(chunks)) if dialect == "repeat_first" else []
            for k, (a, b) in enumerate([] if whole else zip(edges, edges[1:], strict=False)):
                if dialect == "id_every_chunk":
                    chunks.append(where | who | {"function": function | {"arguments": text[a:b]}})
                else:  # no id: the index says which call (a stray one, after the first piece)
                    at = {"index": 99 + i} if dialect == "stray_index" and k else where
                    chunks.append(at | {"function": {"arguments": text[a:b]}})
            per_call.append(chunks)
        order = [i for i, chunks in enumerate(per_call) for _ in chunks]
        if dialect == "interleaved":
            order = draw(st.permutations(order))
        return ([per_call[i].pop(0) for i in order],)

    return streams()


def _assemble_examples() -> list[tuple[list[dict]]]:
    """The chapter's reply in every dialect, and sent whole twice; then, in every dialect, two
    calls of the old checker's: a run of "=" cut into equal slices (each kept), and arguments
    that are no JSON (a model wrote plain text) in two equal slices: no repeat (a repeat is
    complete JSON)."""
    shown = Reply("", [ToolCall("call_1", "read_file", '{"path": "calc.py"}'),
                       ToolCall("call_2", "grep", '{"pattern": "TODO", "include": "*.py"}')])
    equal = Reply("", [ToolCall("call_w1", "write_file",
                                '{"path": "NOTES.md", "content": "' + "=" * 28 + '"}'),
                       ToolCall("call_x1", "bash", "echo 1 " * 2)])
    twice = [delta for delta in tool_call_deltas(shown, "whole") for _ in range(2)]
    return [(tool_call_deltas(reply, quirk),) for reply in (shown, equal) for quirk in QUIRKS] \
        + [(twice,)]


def _assemble_call(args: tuple[list[dict]]) -> str:
    """The deltas, a line each, with the keys each one has."""
    lines = []
    for delta in args[0]:
        function = delta.get("function") or {}
        keys = [f"{k}={delta[k]!r}" for k in ("index", "id") if k in delta]
        lines.append("  " + " ".join(keys + [f"{k}={function[k]!r}" for k in ("name", "arguments")
                                             if k in function]))
    return say("the deltas:", "这些 delta：") + "\n" + "\n".join(lines) + "\nassemble(deltas)"


ASSEMBLE_RULE = (
    "an id decides which call a chunk belongs to; without an id, a known index does; without "
    "either, the latest call does, unless the chunk names a call under a new index: then it is a "
    "new call. A first chunk sent twice with its complete arguments (JSON) is kept once, every "
    "other slice is kept, even one equal to the slice before it; a call that came without an id "
    "is call_<n>, n its place counted from 1",
    "id 决定数据块属于哪个调用；没有 id，看已知的 index；两者都没有，就归最近的那个调用，"
    "除非这个数据块在一个新的 index 下带着 name：那它就是一个新调用。带着完整参数（JSON）发了两遍"
    "的第一个数据块只算一个，其余每一段参数都要保留，即使它和前一段相同；没带 id 的调用叫 "
    "call_<n>，n 是它的位置，从 1 开始数")
ORDER = ("the right calls, in another order: return them in the order they first appeared (the "
         "order of their first chunks), the order their results must answer them in",
         "调用都对，只是顺序不对：按各个调用第一次出现的顺序返回（也就是它们第一个数据块到达的"
         "顺序），它们的结果也要按这个顺序回应")
DEFAULT_ID = ("a call that came without an id gets one: call_<n>, n its place in the list "
              "counted from 1 (every call in the history needs an id, for its result to answer it)",
              "没带 id 的调用要补上一个：call_<n>，n 是它在列表里的位置，从 1 开始数（历史里每个"
              "调用都要有 id，它的结果才能回应它）")


def _assemble_diagnose(args, got: list, wanted: list) -> str | None:
    """What no known mistake says: items that are no ToolCall, a wrong number of calls, the
    right calls in another order."""
    if any(type(call) is not ToolCall for call in got):
        return say("return a list of ToolCall(id, name, arguments), one for each call, in order",
                   "返回一个 ToolCall(id, name, arguments) 的列表，每个调用一个，按顺序排")
    if len(got) != len(wanted):
        return then(say(f"your code put together {len(got)} call{'s' * (len(got) != 1)}; the "
                        f"reply had {len(wanted)}. ",
                        f"你的代码拼出了 {len(got)} 个调用；回复里有 {len(wanted)} 个。"),
                    say(*ASSEMBLE_RULE))
    return say(*ORDER) if sorted(got, key=repr) == sorted(wanted, key=repr) else None


class _ThenInAnAgent(Exercise):
    """An exercise judged on its inputs, then, once right there, plugged into a real Agent in
    every dialect: what the chapter promises of assemble."""

    def __call__(self, answer, tries: int = 1) -> None:
        super().__call__(answer, tries)
        for quirk in QUIRKS:
            _through_an_agent(answer, quirk)


ASSEMBLE = _ThenInAnAgent(
    "ch03.assemble", assemble, _assemble_inputs, _assemble_call, examples=_assemble_examples(),
    rule=ASSEMBLE_RULE, diagnose=_assemble_diagnose,
    domain=("streams in every dialect, from servers that send no ids, and with parallel calls "
            "interleaved, their arguments cut anywhere",
            "各种方言的流（也有不发 id 的服务器发来的、并行工具调用交错到达的，"
            "参数在任意位置切开）"),
    shape=("calls, by_id, by_index = [], {}, {}; for each delta, its call: by its id, else by a "
           "known index, else the latest (unless it names a call under a new index), else a new "
           "one; set the name once; add the arguments unless they repeat the whole so far as "
           "complete JSON. Then ToolCall(id or f\"call_{n}\", name, arguments) for each, in order",
           "calls, by_id, by_index = [], {}, {}；每个 delta 先找它的调用：按 id 找，否则按已知的 "
           "index 找，否则归最近的那个（除非它在新的 index 下带着 name），再否则新建一个；name 只设"
           "一次；参数接上去，除非它和到目前为止的全部参数相同、而且是完整的 JSON。最后按顺序为每个"
           "调用返回 ToolCall(id or f\"call_{n}\", name, arguments)"),
    equivalent={
        "index, id, function = (delta.get('index'), delta.get('id'), delta.get('function') or "
        "{}) → index, id, function = (delta.get('index'), delta.get('id'), "
        "delta.get('function'))":
            "every delta has a function, as the exercise promises (a dict, {} at the least), so "
            "`or {}` never applies",
        "if id and id in by_id: → if id in by_id:":
            "by_id is filled only under `if id:`, so None and \"\" are never in it",
        "elif not id and index is not None and (index in by_index): → "
        "elif not id and index in by_index:":
            "by_index is filled only under `if index is not None:`, so None is never in it",
        "if piece and piece == call['arguments']: → if piece == call['arguments']:":
            "an empty piece is no JSON (json.loads('') raises), so it is appended: adding \"\" "
            "changes nothing",
    },
    mistakes=[
        Mistake('delta.get("id")', 'delta["id"]', (
            "not every chunk carries every key: after a call's first chunk, the others come "
            "without \"id\" and \"name\", and some dialects leave out more (\"index\", even "
            "\"function\"); read them with .get()",
            "并不是每个数据块都带着所有的键：一个调用的第一个数据块之后，其余的都不带 \"id\" 和 "
            "\"name\"，有些方言还会少更多的键（\"index\"，甚至 \"function\"）；用 .get() 读取")),
        Mistake('call["name"] = call["name"] or function.get("name") or ""',
                'call["name"] += function.get("name") or ""', (
                    "a name is never sliced: a call's name may come on more than one of its "
                    "chunks (a first chunk sent twice, or the id and the name on every chunk), "
                    "so set it once, do not add it up",
                    "name 从来不分段发送：一个调用的 name 可能出现在它的不止一个数据块里（第一个"
                    "数据块发了两遍，或者每个数据块都带着 id 和 name），所以只设置一次，不要累加")),
        Mistake("continue  # a first chunk", "pass  # a first chunk", (
            "a chunk sent twice repeats the complete arguments: keep them once (a slice that "
            "equals everything the call has so far, and is complete JSON, is a repeat)",
            "发了两遍的数据块会把完整的参数再带一遍：只保留一份（一段参数如果和这个调用到目前为止"
            "的全部参数相同，而且是完整的 JSON，它就是重复的）")),
        Mistake("elif not id and calls and not (function.get(\"name\") and index is not None):",
                "elif not id and index is None and calls:", (
                    "a chunk with no id, under an index never seen, continues the latest call: "
                    "it does not start a new one (a new call comes with a new id, or with a name)",
                    "不带 id、index 又从没见过的数据块，接着最近的那个调用，而不是开始一个新调用"
                    "（新调用会带着新的 id 或 name 到来）")),
        Mistake("elif not id and calls and not (function.get(\"name\") and index is not None):",
                "elif not id and calls:", (
                    "with no ids at all, the index tells the calls apart: a chunk with a name but "
                    "no id, under an index not seen before, starts a new call",
                    "完全没有 id 时，靠 index 区分调用：带 name 却不带 id、index 又是第一次出现"
                    "的数据块，开始一个新调用")),
        Mistake("elif not id and index is not None and index in by_index:", "elif False:", (
            "the chunks of parallel calls may interleave: a chunk without an id belongs to the "
            "call its index names, not to the latest call",
            "并行工具调用的数据块可能交错到达：不带 id 的数据块属于它的 index 所指的那个调用，"
            "而不是最近的那个调用")),
        Mistake('ToolCall(c["id"] or f"call_{n}",', 'ToolCall(c["id"],', DEFAULT_ID),
        Mistake('ToolCall(c["id"] or f"call_{n}",', 'ToolCall(c["id"] or "",', (
            "an empty id is no id: the API refuses a call whose id is \"\". "
            + DEFAULT_ID[0][:1].upper() + DEFAULT_ID[0][1:],
            "空字符串不算 id：API 不接受 id 为 \"\" 的调用。" + DEFAULT_ID[1])),
        Mistake('ToolCall(c["id"] or f"call_{n}", c["name"], c["arguments"])',
                '{"id": c["id"] or f"call_{n}", "name": c["name"], "arguments": c["arguments"]}', (
                    "return each call as a ToolCall(id, name, arguments), not a dict: the agent "
                    "reads call.id, call.name and call.arguments",
                    "每个调用都要返回成 ToolCall(id, name, arguments)，而不是字典：智能体读的是 "
                    "call.id、call.name 和 call.arguments")),
        Mistake("enumerate(calls, 1)]", "enumerate(calls, 1)][::-1]", ORDER),
    ],
)


# The chapter's claim, last, in a real Agent with the real read_file: the same script played by
# ScriptedLLM, and by a model (a FunctionLLM, which checks every request as the API does) whose
# tool calls are streamed in a dialect and put back together by the learner's assemble, give the
# same history.
AGENT_FILES = {"calc.py": "def mean(values):\n    return sum(values) / (len(values) - 1)\n",
               "notes.md": "# Notes\n\nmean() is wrong\n"}
AGENT_SCRIPT = [
    {"text": "Let me read both.",
     "tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}},
                    {"name": "read_file", "arguments": {"path": "notes.md", "offset": 3}}]},
    "It divides by one too few.",
]


def _through_an_agent(assemble, quirk: str, folder: Path | None = None) -> None:
    """Both agents in `folder` (a fresh one holding AGENT_FILES, unless one is given)."""
    replies = [parse_turn(turn, i) for i, turn in enumerate(AGENT_SCRIPT)]

    def model(messages, tools) -> Reply:
        reply = replies.pop(0)
        calls = assemble(tool_call_deltas(reply, quirk)) if reply.tool_calls else []
        return Reply(reply.text, [ToolCall(c.id, c.name, c.arguments) for c in calls])

    with Seam(AGENT_FILES) as seam:
        fake, mine = (seam.agent(llm, [ReadFile()], cwd=folder) for llm in (AGENT_SCRIPT, model))
        fake.chat("Why is mean wrong?")
        mine.chat("Why is mean wrong?")
    given = say(f"a real Agent whose model streams its tool calls in the {quirk} dialect and "
                "puts them back together with your assemble; the model asks for two reads, "
                "then answers",
                f"一个真实的 Agent，它的模型以 {quirk} 方言流式发送工具调用，再用你的 assemble "
                "拼装回来；模型先请求读两个文件，然后回答")
    if seam.error:
        raise Hint(f"{given}\n{raised(seam.error)}")
    if mine.messages != fake.messages:
        why = say("the same script, played by ScriptedLLM, gives the history above; yours must "
                  "be the same, call for call",
                  "同一份脚本由 ScriptedLLM 来演，得到的是上面那段历史；你的必须一模一样，"
                  "调用一个不差")
        raise Hint(f"{given}\n{EXPECTED.alone}\n{describe(fake.messages)}\n"
                   f"{GOT.alone}\n{describe(mine.messages)}" + hint(why))


# --- ch03.retry_delay --------------------------------------------------------------------

def retry_delay(status, attempt, retry_after, rand, max_attempts=4):
    """Seconds to wait before the next attempt, or None to give up."""
    if attempt >= max_attempts or not (status in (408, 409, 425, 429) or status >= 500):
        return None
    if retry_after is not None:
        return min(retry_after, 60.0)
    backoff = min(60.0, 2.0 ** (attempt - 1) * (4 if status == 529 else 1))
    return backoff * (0.5 + rand / 2)  # jitter: clients that failed together spread out


def _retry_inputs():
    """Any status from 400 to 599, and some outside; max_attempts left at 4 or given from 1 to
    12, and an attempt from 1 to past it; a Retry-After of none, 0, a fraction, past the cap or
    infinite; any draw in [0, 1]. (No attempt 0: the engine counts attempts from 1.)"""
    from hypothesis import strategies as st

    statuses = st.integers(400, 599) | st.sampled_from([100, 200, 204, 304, 399, 600, 999])
    waits = st.none() | st.sampled_from([0.0, 0.5, 2.0, 60.0, 120.0, 86400.0, math.inf]) \
        | st.floats(0, 1e6)
    draws = st.sampled_from([0.0, 0.25, 0.5, 1.0]) | st.floats(0, 1)
    given = st.integers(1, 12).flatmap(  # max_attempts, and an attempt up to 3 past it
        lambda limit: st.tuples(st.integers(1, limit + 3), st.just(limit)))
    return (st.tuples(statuses, st.integers(1, 7), waits, draws)  # max_attempts left at 4
            | st.builds(lambda status, tried, wait, draw: (status, tried[0], wait, draw, tried[1]),
                        statuses, given, waits, draws))


def _retry_examples() -> list[tuple]:
    """The chapter's (a 429 that asks for 2 s), then cases that each tell one rule (at a draw of
    0.25 the usual mistakes all give different waits), every status from 400 to 599, and a client
    allowed 10 attempts, whose waits only the cap bounds."""
    told = [(status, attempt, None, 0.25) for status in (503, 529) for attempt in (1, 2, 3, 4)]
    told += [(status, attempt, wait, 0.25) for wait in (2.0, 120.0, 0.0)
             for status, attempt in ((429, 1), (503, 2))]
    told += [(429, 4, 2.0, 0.25), (400, 1, 2.0, 0.25), (503, 1, None, 0.5), (503, 1, None, 0.0)]
    every = [(status, 1, None, 0.25) for status in range(400, 600)]
    longer = [(status, attempt, None, 0.25, 10) for status in (503, 529)
              for attempt in range(1, 11)]
    return [(429, 1, 2.0, 0.5), *told, *every, *longer]


def _retry_diagnose(args: tuple, got: Amount, wanted: Amount) -> str | None:
    """What no known mistake says: no number, a rounded wait, a draw of the answer's own."""
    retry_after, rand = args[2:4]
    if got.value is not None and type(got.value) is not float:
        return say("return the seconds to wait as a number (a float), or None to give up",
                   "返回要等的秒数（一个数，比如 float），或者返回 None 表示放弃")
    rounded = _rounded(got, wanted, 'f"{wait:.1f} s"')
    if rounded or None in (got.value, wanted.value) or retry_after is not None:
        return rounded
    backoff = wanted.value / (0.5 + rand / 2)
    if backoff / 2 <= got.value <= backoff:
        return say("use the rand you are given, not a draw of your own (random.random()): the "
                   "same inputs must give the same wait (a test could not check it otherwise)",
                   "用传进来的 rand，不要自己再抽随机数（random.random()）：同样的输入必须得到"
                   "同样的等待时间（否则测试就没法检查它）")
    return None


RETRY_DELAY = Exercise(
    "ch03.retry_delay", retry_delay, _retry_inputs,
    lambda args: f"retry_delay({', '.join(map(repr, args))})", examples=_retry_examples(),
    run=_amount, show=repr, diagnose=_retry_diagnose,
    domain=("every status from 400 to 599 and some outside, attempts up to past max_attempts, "
            "any Retry-After and any draw",
            "每个状态码（400 到 599，以及范围外的一些）、直到超过 max_attempts 的尝试次数、"
            "任意 Retry-After 和任意随机数"),
    rule=("give up (None) once attempt reaches max_attempts, and for any status but 408, 409, "
          "425, 429 and 5xx. If the provider asked for retry_after seconds, wait that, at most "
          "60. Else wait 2 ** (attempt - 1) seconds (four times that for 529, \"overloaded\"), "
          "at most 60, times 0.5 + rand / 2",
          "attempt 达到 max_attempts 时放弃（返回 None），408、409、425、429 和 5xx 以外的状态码"
          "也放弃。服务商要求等 retry_after 秒，就等这么久，最多 60 秒。否则等 2 ** (attempt - 1) "
          "秒（529“过载”时是它的 4 倍），最多 60 秒，再乘以 0.5 + rand / 2"),
    shape=("three steps, in this order: give up (return None); the provider's own wait, "
           "min(retry_after, 60.0); the backoff, min(60.0, 2.0 ** (attempt - 1) * (4 if status "
           "== 529 else 1)), times the jitter",
           "按顺序三步：先看要不要放弃（返回 None）；再看服务商自己给的等待时间，"
           "min(retry_after, 60.0)；最后是退避时间 min(60.0, 2.0 ** (attempt - 1) * (4 if status "
           "== 529 else 1))，乘以随机抖动"),
    mistakes=[
        Mistake("(408, 409, 425, 429)", "(400, 408, 409, 425, 429)", (
            "a 400 is the request's own fault: the same request fails again. Worth another try "
            "are 408, 409, 425, 429 and every 5xx",
            "400 是请求本身的错：同样的请求再发一次，还是失败。值得重试的是 408、409、425、429 "
            "和所有 5xx")),
        Mistake("not (status in (408, 409, 425, 429) or status >= 500)",
                "status not in (408, 409, 425, 429, 500, 503)", (
                    "every 5xx is the server's trouble, not the request's: any of them may work a "
                    "moment later, so retry them all (status >= 500), not only some",
                    "所有 5xx 都是服务器的问题，不是请求的问题：过一会儿都可能恢复，所以全部重试"
                    "（status >= 500），而不是只重试其中几个")),
        Mistake("attempt >= max_attempts", "attempt > max_attempts", (
            "attempt counts the attempt that just failed, from 1: the failure of attempt "
            "max_attempts is the last, so give up (None) once attempt >= max_attempts, even when "
            "the provider named a wait",
            "attempt 是刚失败的那次尝试的序号，从 1 开始数：第 max_attempts 次失败就是最后一次，"
            "所以 attempt >= max_attempts 时放弃（返回 None），即使服务商给出了等待时间")),
        Mistake("if retry_after is not None:", "if False:", (
            "the provider said how long to wait (Retry-After): wait that, at most 60 s, instead "
            "of your own backoff. It knows when its limit resets; a guess either comes back too "
            "soon or waits for nothing",
            "服务商已经说了要等多久（Retry-After）：就等这么久，最多 60 秒，不用你自己的退避时间。"
            "它知道自己的限制什么时候重置；自己猜，不是回来得太早，就是白等")),
        Mistake("if retry_after is not None:", "if retry_after:", (
            "Retry-After: 0 is a wait the provider named, no wait at all: `if retry_after:` takes "
            "0 for none; test `retry_after is not None`",
            "Retry-After: 0 也是服务商给出的等待时间，意思是不用等：`if retry_after:` 会把 0 "
            "当成没有；要判断 `retry_after is not None`")),
        Mistake("return min(retry_after, 60.0)", "return retry_after", (
            "wait at most 60 s, min(retry_after, 60.0), whatever the provider asked for: a client "
            "silent for minutes looks hung, and a header can be wrong",
            "不管服务商要求等多久，最多等 60 秒，即 min(retry_after, 60.0)：客户端几分钟没有动静，"
            "看上去就像卡死了，何况响应头也可能写错")),
        Mistake("return min(retry_after, 60.0)", "return min(retry_after, 60.0) or None", (
            "Retry-After: 0 is a wait too, of 0 s: retry at once, return 0.0. None would give up "
            "(`min(retry_after, 60.0) or None` takes 0.0 for no wait named)",
            "Retry-After: 0 也是一个等待时间，等 0 秒：马上重试，返回 0.0。返回 None 就是放弃了"
            "（`min(retry_after, 60.0) or None` 会把 0.0 当成没有给出等待时间）")),
        Mistake("2.0 ** (attempt - 1)", "2.0 ** attempt", (
            "the first retry waits 2 ** 0 = 1 s (times the jitter), the next 2 s, then 4 s: "
            "2 ** (attempt - 1), not 2 ** attempt",
            "第一次重试等 2 ** 0 = 1 秒（再乘以随机抖动），下一次 2 秒，再下一次 4 秒：是 "
            "2 ** (attempt - 1)，不是 2 ** attempt")),
        Mistake(" * (4 if status == 529 else 1)", "", (
            "a 529 says the provider is overloaded: it needs longer to recover than one that "
            "failed once, so wait 4 times longer (OVERLOADED_BACKOFF)",
            "529 说明服务商过载了：它恢复起来比偶尔失败一次的服务商慢，所以要等 4 倍的时间"
            "（OVERLOADED_BACKOFF）")),
        Mistake("backoff = min(60.0, 2.0 ** (attempt - 1) * (4 if status == 529 else 1))",
                "backoff = 2.0 ** (attempt - 1) * (4 if status == 529 else 1)", (
                    "the backoff grows with each attempt, so cap it at 60 s before the jitter, "
                    "min(60.0, ...). A client silent for minutes looks hung",
                    "退避时间随尝试次数增长，所以要在乘随机抖动之前把它封顶在 60 秒，即 "
                    "min(60.0, ...)。客户端几分钟没有动静，看上去就像卡死了")),
        Mistake("return backoff * (0.5 + rand / 2)", "return backoff", (
            "no jitter: multiply the backoff by 0.5 + rand / 2, so that clients that failed "
            "together do not all come back at the same moment and fail again",
            "你没有乘随机抖动：退避时间要乘以 0.5 + rand / 2，这样一起失败的客户端不会在同一时刻"
            "一起回来，再一起失败")),
        Mistake("(0.5 + rand / 2)", "(0.5 + rand)", (
            "the factor is 0.5 + rand / 2, between 0.5 and 1: the jitter only shortens the "
            "backoff. 0.5 + rand reaches 1.5, waiting longer than the backoff",
            "系数是 0.5 + rand / 2，在 0.5 到 1 之间：随机抖动只会缩短退避时间。0.5 + rand "
            "最大到 1.5，会比退避时间等得更久")),
        Mistake("return backoff * (0.5 + rand / 2)", "return round(backoff * (0.5 + rand / 2), 2)",
                ("don't round the wait: return it as computed; round only where it is shown to "
                 "a person (f\"{wait:.1f} s\")",
                 "不要舍入等待时间：按算出来的值返回；只在显示给人看的地方才舍入"
                 "（f\"{wait:.1f} s\"）")),
    ],
)


# --- ch03.cost ---------------------------------------------------------------------------

def cost(usage, price):
    """One call's cost in USD, or None when the price is unknown."""
    if price is None:
        return None
    cached = min(usage.cached_tokens, usage.prompt_tokens)
    cached_rate = price.input if price.cached_input is None else price.cached_input
    return ((usage.prompt_tokens - cached) * price.input + cached * cached_rate
            + usage.completion_tokens * price.output) / 1_000_000


def _cost_inputs():
    """Token counts from 0 to a trillion, each drawn apart (so cached ones often outnumber the
    prompt's); prices unknown, zero, or known, with a cache rate of None or a share of the input
    rate (0.0 among them)."""
    from hypothesis import strategies as st

    # what a failing input shrinks to comes first: round numbers a hint reads at a glance
    tokens = st.sampled_from([1000, 0, 1, 10**6, 10**9, 10**12]) | st.integers(0, 10**6)
    # USD per million tokens, to a thousandth, as price lists write them: 0 is a price too; the
    # cache rate is a share of the input rate, or None
    rates = st.sampled_from([2.5, 0.0, 0.075, 1.25, 15.0, 75.0]) \
        | st.integers(0, 100_000).map(lambda k: k / 1000)
    shares = st.none() | st.sampled_from([0.1, 0.0, 0.25, 0.5, 1.0])
    prices = st.none() | st.builds(lambda input, output, share: Price(
        input, output, None if share is None else input * share), rates, rates, shares)
    return st.tuples(st.builds(Usage, tokens, tokens, tokens), prices)


def _cost_examples() -> list[tuple[Usage, Price | None]]:
    """The chapter's ledger (a cache hit, a model without a cache price, a model with no price),
    then the old checker's cases: no tokens, more cached than prompt, a free cache, None for the
    cache rate, a cheap and a dear model, and a usage whose cost has many decimals."""
    return [(Usage(12_000, 800, 10_000), Price(2.5, 10.0, 1.25)),
            (Usage(3_000, 200), Price(0.15, 0.6)), (Usage(100, 10), None),
            (Usage(1200, 300, 0), Price(2.5, 10.0, 1.25)),
            (Usage(10_000, 500, 8_000), Price(3.0, 15.0, 0.3)),
            (Usage(10_000, 500, 8_000), Price(0.5, 1.5, None)),
            (Usage(1_000, 200, 3_000), Price(2.0, 8.0, 0.5)),
            (Usage(0, 0, 0), Price(2.5, 10.0, 1.25)),
            (Usage(5_000, 1_000, 2_000), Price(0.15, 0.6, 0.075)),
            (Usage(5_000, 1_000, 2_000), Price(15.0, 75.0, 1.5)),
            (Usage(10_000, 500, 8_000), Price(1.0, 2.0, 0.0)),
            (Usage(1_234, 567, 89), Price(1.25, 10.0, 0.125))]


def _cost_diagnose(args: tuple, got: Amount, wanted: Amount) -> str | None:
    """What no known mistake says: no number, a rounded cost."""
    if got.value is not None and type(got.value) is not float:
        return say("return the cost in USD as a number (a float), or None when the price is "
                   "unknown",
                   "返回以美元计的成本（一个数，比如 float），价格未知时返回 None")
    return _rounded(got, wanted, 'f"${cost:.4f}"')


COST = Exercise(
    "ch03.cost", cost, _cost_inputs, lambda args: f"cost({args[0]!r}, {args[1]!r})",
    examples=_cost_examples(), run=_amount, show=repr, diagnose=_cost_diagnose,
    domain=("token counts from 0 to a trillion, and prices known, unknown or zero",
            "各种 token 数（0 到一万亿）和已知、未知或为零的价格"),
    rule=("None when the price is None; else (fresh * input + cached * cached rate + "
          "completion_tokens * output) / 1,000,000, where cached = min(cached_tokens, "
          "prompt_tokens) and fresh = prompt_tokens - cached; the cached rate is cached_input, or "
          "input when it is None",
          "价格为 None 时返回 None；否则是 (fresh * input + cached * rate + completion_tokens * "
          "output) / 1,000,000，其中 rate 是缓存价：cached_input，为 None 时就是 input；"
          "cached = min(cached_tokens, prompt_tokens)，fresh = prompt_tokens - cached"),
    shape=("if price is None: return None; then cached, clamped to the prompt's tokens; the "
           "cached rate; and one sum of tokens times their rate, divided by 1_000_000",
           "if price is None: return None；然后算 cached（不超过提示词的 token 数）和缓存价；"
           "最后是一个“token 数乘以各自价格”的和，除以 1_000_000"),
    mistakes=[
        Mistake("return None", "return 0.0", (
            "the price is unknown, so the cost is unknown too: return None. A 0.0 would say the "
            "call cost nothing, and a total would count it as known",
            "价格未知，成本也就未知：返回 None。返回 0.0 等于说这次调用没花钱，总数也会把它当成"
            "已知的成本加进去")),
        Mistake("cached = min(usage.cached_tokens, usage.prompt_tokens)",
                "cached = usage.cached_tokens", (
                    "a server's count can be off: clamp the cached tokens to the prompt's, "
                    "min(cached_tokens, prompt_tokens), or the fresh tokens go negative",
                    "服务器的计数可能不准：缓存的 token 不能超过提示词的 token，取 "
                    "min(cached_tokens, prompt_tokens)，否则未缓存的 token 会变成负数")),
        Mistake("price.input if price.cached_input is None else price.cached_input",
                "price.input", (
                    "cached tokens cost the cached rate, price.cached_input (a prompt cache hit is "
                    "billed at a fraction of the input price), not the input rate",
                    "缓存命中的 token 按缓存价 price.cached_input 计费（提示词缓存命中的部分只按"
                    "输入价的一小部分收费），不按输入价")),
        Mistake("price.input if price.cached_input is None else price.cached_input",
                "price.cached_input or 0", (
                    "cached_input None means the provider gives no discount for cached tokens: "
                    "they cost the full input price, not nothing",
                    "cached_input 为 None 表示服务商对缓存的 token 不打折：它们按完整的输入价计费，"
                    "而不是免费")),
        Mistake("price.input if price.cached_input is None else price.cached_input",
                "price.cached_input or price.input", (
                    "cached_input 0.0 is a price: the cache is free. `price.cached_input or "
                    "price.input` takes 0.0 for None and charges the full input rate; test "
                    "`price.cached_input is None`",
                    "cached_input 为 0.0 也是一个价格：缓存免费。`price.cached_input or "
                    "price.input` 会把 0.0 当成 None，按完整的输入价计费；要判断 "
                    "`price.cached_input is None`")),
        Mistake("(usage.prompt_tokens - cached) * price.input",
                "usage.prompt_tokens * price.input", (
                    "cached tokens are part of prompt_tokens, not extra: charge prompt_tokens - "
                    "cached at the input rate and the cached ones at the cached rate, each token "
                    "once",
                    "缓存命中的 token 包含在 prompt_tokens 里，不是额外的：prompt_tokens - cached "
                    "按输入价，缓存的部分按缓存价，每个 token 只算一次")),
        Mistake(" / 1_000_000", "", (
            "prices are USD per million tokens: divide by 1,000,000",
            "价格的单位是每百万 token 多少美元：要除以 1,000,000")),
    ],
)
