"""Checks for the exercises of chapter 3, the real model.

    ch03.assemble     put a streamed reply's tool calls back together from their deltas,
                      whatever the provider's dialect
    ch03.retry_delay  how long to wait before the next attempt after a failed one, or None
                      to give up
    ch03.cost         the USD cost of one call, from its usage and the model's price

Each feeds cases to the learner's function and stops at the first one it gets wrong, saying
what went in, what was expected and what came back. The expected answer is always the
engine's own: `ToolCallAssembler` of stream.py fed the same deltas (made by
`tool_call_deltas` of testing/serve.py, in every dialect of its QUIRKS, and by hand),
`LLM.retry_delay` of llm.py given an error shaped like the API's and a fixed random draw,
`cost_of` of pricing.py. So the checker and the engine cannot disagree.

`ch03.assemble` then plugs the learner's function into a real `Agent`: a model (a
FunctionLLM, which checks every request as the API does) whose tool calls are streamed in each
dialect and put back together by it, beside the same script played by ScriptedLLM, through the
real read_file. The two histories must be equal: the chapter's own claim, one script, two models.
"""

from __future__ import annotations

import copy
import json
import numbers
import random
import tempfile
from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace

from corecoder.agent import Agent
from corecoder.cli.pricing import Price, cost_of
from corecoder.llm import LLM
from corecoder.messages import Reply, ToolCall, Usage
from corecoder.scripted import FunctionLLM, ScriptedLLM, parse_turn
from corecoder.stream import ToolCallAssembler
from corecoder.testing.serve import QUIRKS, tool_call_deltas
from corecoder.tools import ReadFile

from ..checks import EXPECTED, GOT, Hint, checker, describe, hint, outcome, returned, shown
from ..words import language, say


def _raised(e: BaseException) -> str:
    try:
        message = str(e)
    except (Exception, KeyboardInterrupt, SystemExit):
        message = ""
    return say("your code raised", "你的代码抛出了") + f" {type(e).__name__}: {message:.300}"


def _number(value) -> float | None:
    """The learner's value as a plain float, or None if it is no number (a bool is none). An
    int, a float or a Decimal is read without calling the value's own methods (a subclass
    cannot run code here); another real number (a Fraction, say) by float(), and whatever that
    raises makes it no number."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, int):
        try:
            return int.__float__(value)
        except OverflowError:
            return float("inf") if value > 0 else float("-inf")
    try:
        if isinstance(value, Decimal):
            return Decimal.__float__(value)  # (a signalling NaN raises: no number)
        if isinstance(value, numbers.Real):
            return float.__float__(float(value))
    except (Exception, KeyboardInterrupt, SystemExit):
        return None
    return None


def _close(a: float | None, b: float | None, tolerance: float) -> bool:
    return a is not None and b is not None and abs(a - b) <= tolerance


def _same(got: float, again: tuple[str, object]) -> bool:
    """Whether a second call (`outcome`'s answer) returned the number `got` again."""
    kind, value = again
    number = _number(value) if kind == "returned" else None
    return number is not None and (number == got or number != number and got != got)


def _rounded(got: float | None, wanted: float, tolerance: float) -> int | None:
    """The decimal places (1 to 9) to which `got` is `wanted` rounded, or None if it is not: a
    0 is no rounding told (it is what many other mistakes give)."""
    if not got:
        return None
    for places in range(1, 10):
        near = round(wanted, places)
        if not _close(near, wanted, tolerance) and _close(got, near, tolerance):
            return places
    return None


# --- ch03.assemble -----------------------------------------------------------------------

NAMES = ("read_file", "grep", "bash")
PATHS = ("a.py", "src/app.py", "tests/test_stats.py", "README.md")
PATTERNS = ("TODO", "def main", "température", "import (os|sys)")
COMMANDS = ("ls", "python3 -m pytest -q", "echo \"héllo, 世界\"", "git status --short")
SEEDS = (1, 2, 3, 4)  # a reply per seed, in every dialect: of 1, 2, 3 and 3 calls
SHOWN_DELTAS = 12  # the deltas a hint shows, at most


def _arguments(rng: random.Random, name: str) -> str:
    if rng.random() < 0.2:
        return "{}"  # a call with no arguments
    if name == "read_file":
        args = {"path": rng.choice(PATHS)}
        if rng.random() < 0.5:
            args["offset"] = rng.randint(1, 200)
    elif name == "grep":
        args = {"pattern": rng.choice(PATTERNS), "path": rng.choice(("src", "."))}
    else:
        args = {"command": rng.choice(COMMANDS)}
    return json.dumps(args, ensure_ascii=False)


def _reply(seed: int, calls: int) -> Reply:
    rng = random.Random(seed)
    ids = rng.sample(range(1000, 10000), calls)  # distinct: one id is one call
    tool_calls = []
    for n in ids:
        name = rng.choice(NAMES)
        tool_calls.append(ToolCall(f"call_{n:x}", name, _arguments(rng, name)))
    return Reply(tool_calls=tool_calls)


def _dialect(quirk: str) -> tuple[str, str]:
    """What a dialect of QUIRKS models, and what to do about it."""
    en, zh = {
        "standard": (
            ("OpenAI's dialect: a call's first chunk carries its index, id and name; the chunks "
             "after it carry slices of its arguments under the same index, with no id",
             "a chunk without an id belongs to the call its index names: join the slices of "
             "arguments in the order they come"),
            ("OpenAI 的方言：一个调用的第一个数据块带着它的 index、id 和 name；之后的数据块"
             "在同一个 index 下带着一段段参数，不带 id",
             "不带 id 的数据块属于它的 index 所指的那个调用：把一段段参数按到达的顺序接起来")),
        "repeat_first": (
            ("the first chunk of each call sent twice, as some providers do",
             "a chunk sent twice is still one chunk: its id is a call already seen, not a new "
             "one, and the name is set once, not added to"),
            ("每个调用的第一个数据块都发了两遍，有些服务商就是这样",
             "发了两遍的数据块仍然只算一个：它的 id 属于一个已经见过的调用，不是新调用；"
             "name 只设置一次，不往上累加")),
        "shared_index": (
            ("parallel calls all under index 0, as Ollama sends them",
             "an index can be shared, so it does not tell calls apart: a new id means a new "
             "call, even under an index already seen; a chunk without an id continues the "
             "latest call of its index"),
            ("并行工具调用全都在 index 0 下，Ollama 就是这样发的",
             "index 可能是共用的，靠它分不清调用：出现新的 id 就是一个新调用，即使它的 index "
             "已经见过；不带 id 的数据块接着它那个 index 下最近的调用")),
        "null_index": (
            ("\"index\": null on every chunk, as some gateways send it",
             "with no index, follow the ids: a new id starts a call, and a chunk with neither "
             "an id nor an index continues the latest call"),
            ("每个数据块的 \"index\" 都是 null，有些网关就是这样发的",
             "没有 index，就跟着 id 走：新的 id 开始一个调用；既没有 id 也没有 index 的数据块，"
             "接着最近的那个调用")),
        "stray_index": (
            ("after a call's first slice of arguments, the rest come under a stray index "
             "(99, 100, ...) with no id",
             "a chunk with no id, under an index never seen, continues the latest call: it "
             "does not start a new one (a new call comes with a new id, or with a name)"),
            ("一个调用的第一段参数之后，其余的都在一个陌生的 index（99、100……）下到达，"
             "也不带 id",
             "不带 id、index 又从没见过的数据块，接着最近的那个调用，而不是开始一个新调用"
             "（新调用会带着新的 id 或 name 到来）")),
        "whole": (
            ("each call whole, in one chunk: index, id, name and all its arguments at once",
             "a chunk may carry a whole call: its arguments are complete, take them as they "
             "are"),
            ("每个调用整个放在一个数据块里：index、id、name 和全部参数一起到",
             "一个数据块可能带着一个完整的调用：它的参数已经齐了，原样取用就好")),
        "id_every_chunk": (
            ("the id and the name repeated on every chunk of a call",
             "an id already seen continues its call: the name is set once, not added to, and "
             "the slices of arguments are joined"),
            ("一个调用的每个数据块都重复带着 id 和 name",
             "已经见过的 id 接着它的调用：name 只设置一次，不往上累加；各段参数接起来")),
    }[quirk]
    return say(en[0], zh[0]), say(en[1], zh[1])


def _rule() -> str:
    return say("The rule: an id decides which call a chunk belongs to; without an id, a known "
               "index does; without either, the latest call does, unless the chunk names a call "
               "under a new index: then it is a new call",
               "规则是：id 决定数据块属于哪个调用；没有 id，看已知的 index；两者都没有，"
               "就归最近的那个调用，除非这个数据块在一个新的 index 下带着 name：那它就是一个新调用")


def _then(first: str, second: str) -> str:
    """Two sentences of a hint, one after the other."""
    return first + say(". ", "。") + second


def _after(note: str, why: str) -> str:
    """A note on what the answer did, then what to do: in English, the second sentence starts
    with a capital."""
    if not note:
        return why
    return note + (why[:1].upper() + why[1:] if language() == "en" else why)


def _default_id() -> str:
    return say("a call that came without an id gets one: call_<n>, n its place in the list "
               "counted from 1, as ToolCallAssembler.result does (every call in the history "
               "needs an id, for its result to answer it)",
               "没带 id 的调用要补上一个：call_<n>，n 是它在列表里的位置，从 1 开始数，"
               "和 ToolCallAssembler.result 的做法一样（历史里每个调用都要有 id，"
               "它的结果才能回应它）")


def _delta(index, id=None, name=None, arguments="") -> dict:
    delta = {"index": index}
    if id is not None:
        delta |= {"id": id, "type": "function"}
    function = {"arguments": arguments}
    if name is not None:
        function["name"] = name
    return {**delta, "function": function}


def _by_hand() -> list[tuple[str, list[dict], str]]:
    """(what the case is, its deltas, what to do about it)"""
    shared = _dialect("shared_index")[1]
    null = _dialect("null_index")[1]
    interleaved = say("the chunks of parallel calls may interleave: a chunk without an id "
                      "belongs to the call its index names, not to the latest call",
                      "并行工具调用的数据块可能交错到达：不带 id 的数据块属于它的 index "
                      "所指的那个调用，而不是最近的那个调用")
    no_ids = say("with no ids at all, the index tells the calls apart: a chunk with a name "
                 "but no id, under an index not seen before, starts a new call, and the chunks "
                 "after it follow their index",
                 "完全没有 id 时，靠 index 区分调用：带 name 却不带 id、index 又是第一次出现的"
                 "数据块，开始一个新调用；之后的数据块跟着各自的 index 走")
    twice = [_delta(0, "call_a1", "read_file", '{"path": "a.py"}'),
             _delta(1, "call_b2", "grep", "{}")]
    return [
        (say("two parallel calls under one shared index 0, the second sent whole",
             "两个并行工具调用共用 index 0，第二个整个放在一个数据块里"),
         [_delta(0, "call_a1", "read_file"), _delta(0, arguments='{"path"'),
          _delta(0, arguments=': "src/app.py"}'),
          _delta(0, "call_b2", "grep", '{"pattern": "TODO", "path": "."}')],
         _then(shared, _rule())),
        (say("\"index\": null on every chunk of three calls",
             "三个调用的每个数据块的 \"index\" 都是 null"),
         [_delta(None, "call_a1", "bash"), _delta(None, arguments='{"comma'),
          _delta(None, arguments='nd": "ls"}'), _delta(None, "call_b2", "read_file"),
          _delta(None, arguments='{"path": "README.md"}'), _delta(None, "call_c3", "grep"),
          _delta(None, arguments='{"pattern": "def main"}')],
         _then(null, _rule())),
        (say("each call sent whole in one chunk, and that chunk sent twice",
             "每个调用整个放在一个数据块里，这个数据块又发了两遍"),
         [twice[0], copy.deepcopy(twice[0]), twice[1], copy.deepcopy(twice[1])],
         say("a chunk sent twice repeats the complete arguments: keep them once (a slice "
             "that equals everything the call has so far, and is complete JSON, is a repeat); "
             "the id and the name count once too",
             "发了两遍的数据块会把完整的参数再带一遍：只保留一份（一段参数如果和这个调用"
             "到目前为止的全部参数相同，而且是完整的 JSON，它就是重复的）；id 和 name 也只算一次")),
        (say("a call with no id on any chunk (some local servers send none)",
             "一个调用的所有数据块都不带 id（有些本地服务器根本不发 id）"),
         [_delta(0, name="bash"), _delta(0, arguments='{"comma'),
          _delta(0, arguments='nd": "pwd"}')],
         _default_id()),
        (say("two parallel calls whose chunks interleave: both first chunks, then slices of "
             "arguments for 0, 1, 0, 1, each with its index and no id",
             "两个并行工具调用的数据块交错到达：先是两个调用各自的第一个数据块，然后是 0、1、"
             "0、1 的参数片段，每段都带着 index，不带 id"),
         [_delta(0, "call_a1", "read_file"), _delta(1, "call_b2", "grep"),
          _delta(0, arguments='{"path": '), _delta(1, arguments='{"pattern": "TODO", '),
          _delta(0, arguments='"src/app.py"}'), _delta(1, arguments='"path": "."}')],
         _then(interleaved, _rule())),
        (say("two parallel calls with no id on any chunk, interleaved: the first chunk of "
             "each under index 0 and 1, then slices of arguments for 0, 1, 0, 1",
             "两个并行工具调用，所有数据块都不带 id，而且交错到达：各自的第一个数据块在 "
             "index 0 和 1 下，然后是 0、1、0、1 的参数片段"),
         [_delta(0, name="read_file"), _delta(1, name="grep"), _delta(0, arguments='{"path"'),
          _delta(1, arguments='{"pattern"'), _delta(0, arguments=': "a.py"}'),
          _delta(1, arguments=': "TODO"}')],
         _then(no_ids, _rule())),
        (say("a call whose arguments hold a run of one character, streamed in equal slices",
             "一个调用的参数里有一长串相同的字符，按同样长的片段发过来"),
         [_delta(0, "call_w1", "write_file"),
          _delta(0, arguments='{"path": "NOTES.md", "content": "'),
          *(_delta(0, arguments="=" * 7) for _ in range(4)), _delta(0, arguments='"}')],
         say("a slice of arguments may equal the slice before it (a run of \"=\" or of "
             "spaces, cut into equal chunks): keep every slice. Only a slice that equals "
             "everything the call has so far, and is complete JSON, is a repeat",
             "一段参数可能和前一段完全相同（一长串 \"=\" 或空格，被切成同样长的片段）："
             "每一段都要保留。只有和这个调用到目前为止的全部参数相同、而且是完整 JSON 的"
             "那一段，才是重复的")),
    ]


def assemble_cases() -> list[tuple[str, list[dict], str]]:
    """(what the case is, its deltas, what to do about it): every dialect of QUIRKS on replies
    of 1 to 3 calls, then the cases made by hand."""
    cases = []
    for quirk in QUIRKS:
        about, why = _dialect(quirk)
        for seed, n in zip(SEEDS, (1, 2, 3, 3), strict=True):
            reply = _reply(seed + 10 * QUIRKS.index(quirk), n)
            calls = say(f"{n} call" if n == 1 else f"{n} parallel calls",
                        f"{n} 个调用" if n == 1 else f"{n} 个并行工具调用")
            cases.append((say(f"a reply of {calls} in the {quirk!r} dialect ({about})",
                              f"一条含 {calls}的回复，按 {quirk!r} 方言发送（{about}）"),
                          tool_call_deltas(reply, quirk), _then(why, _rule())))
    return cases + _by_hand()


def _assembled(deltas: list[dict]) -> list[ToolCall]:
    """The engine's answer: a ToolCallAssembler fed each delta."""
    calls = ToolCallAssembler()
    for d in deltas:
        fn = d.get("function") or {}
        calls.add(d.get("index"), d.get("id"), fn.get("name"), fn.get("arguments"))
    return calls.result()


def _show_deltas(deltas: list[dict]) -> str:
    lines = []
    for d in deltas[:SHOWN_DELTAS]:
        fn = d.get("function") or {}
        parts = [f"index={d.get('index')}"]
        parts += [f"id={d['id']}"] if "id" in d else []
        parts += [f"name={fn['name']}"] if "name" in fn else []
        parts.append(f"args={fn.get('arguments', '')!r}")
        lines.append("  " + " ".join(parts))
    if len(deltas) > SHOWN_DELTAS:
        more = len(deltas) - SHOWN_DELTAS
        lines.append(say(f"  ... ({more} more deltas)", f"  ……（后面还有 {more} 个 delta）"))
    return "\n".join(lines)


class _Other:
    """A field of the learner's call that is not a string: equal to nothing, shown as it is."""

    def __init__(self, shown: str):
        self.shown = shown

    def __eq__(self, other) -> bool:
        return False

    __hash__ = None

    def __repr__(self) -> str:
        return self.shown


def _plain(value):
    if value is None:
        return None
    if isinstance(value, str):
        return str.__str__(value)  # a plain str: a subclass's own methods never run
    return _Other(f"{type(value).__name__} {shown(value)}")


def _calls_of(value) -> tuple[list[tuple] | None, str]:
    """The learner's calls as (id, name, arguments), or None and what is wrong with them."""
    wanted = say("return a list of ToolCall(id, name, arguments), one for each call, in order",
                 "返回一个 ToolCall(id, name, arguments) 的列表，每个调用一个，按顺序排")
    if not isinstance(value, (list, tuple)):
        return None, returned(value) + hint(wanted)
    try:
        items = list(value)
        calls = []
        for item in items:
            fields = [getattr(item, k, _Other("")) for k in ("id", "name", "arguments")]
            if any(isinstance(f, _Other) for f in fields):
                got = say(f"an item of your list is a {type(item).__name__}, not a ToolCall: ",
                          f"你的列表里有一项是 {type(item).__name__}，不是 ToolCall：")
                return None, got + shown(item) + hint(wanted)
            calls.append(tuple(_plain(f) for f in fields))
    except (Exception, KeyboardInterrupt, SystemExit) as e:  # a list whose items cannot be read
        return None, f"{_raised(e)}" + hint(wanted)
    return calls, ""


def _show_calls(calls: list[tuple]) -> str:
    if not calls:
        return "  []"
    return "\n".join(f"  ToolCall({i!r}, {n!r}, {a!r})" for i, n, a in calls)


def _assemble_hint(wanted: list[tuple], got: list[tuple], why: str) -> str:
    """What to fix: what the answer did wrong, when it shows, then what the case models."""
    if len(got) != len(wanted):
        made = say(f"{len(got)} call" if len(got) == 1 else f"{len(got)} calls",
                   f"{len(got)} 个调用")
        note = say(f"Your code put together {made}; the reply had {len(wanted)}. ",
                   f"你的代码拼出了 {made}；回复里有 {len(wanted)} 个。")
        return _after(note, why)
    if sorted(got, key=repr) == sorted(wanted, key=repr):
        note = say("Your code put together the right calls, in another order. ",
                   "你的代码拼出的调用都对，只是顺序不对。")
        return _after(note, say("return them in the order the calls first appeared (the order "
                                "of their first chunks)",
                                "按各个调用第一次出现的顺序返回（也就是它们第一个数据块到达的"
                                "顺序）"))
    for n, ((id, name, arguments), (got_id, got_name, got_arguments)) in enumerate(
            zip(wanted, got, strict=True), 1):
        if id == f"call_{n}" and not (isinstance(got_id, str) and got_id):
            return _default_id()
        if name and isinstance(got_name, str) and len(got_name) > len(name) \
                and got_name == name * (len(got_name) // len(name)):
            note = say("The name came on more than one chunk of a call, and your code added it "
                       "up: a name is never sliced, set it once. ",
                       "name 出现在一个调用的不止一个数据块里，你的代码把它们累加起来了："
                       "name 从来不分段发送，只设置一次就好。")
            return _after(note, why)
        if arguments and got_arguments == arguments * 2:
            note = say("The same arguments twice: a chunk that repeats them is a repeat, not "
                       "more arguments. ",
                       "同样的参数出现了两遍：再次带着整份参数的数据块是重发，不是新增的参数。")
            return _after(note, why)
    return why


@checker("ch03.assemble")
def check_assemble(assemble) -> None:
    for about, deltas, why in assemble_cases():
        given = f"{about}{say(':', '：')}\n{_show_deltas(deltas)}"
        wanted = [(c.id, c.name, c.arguments) for c in _assembled(deltas)]
        expected = f"{given}\n{EXPECTED.alone}\n{_show_calls(wanted)}\n"
        kind, value = outcome(assemble, copy.deepcopy(deltas))
        if kind == "raised":
            keys = say("Not every chunk carries every key (\"id\", \"name\", ...): read them "
                       "with .get(). ",
                       "并不是每个数据块都带着所有的键（\"id\"、\"name\" 等）：用 .get() 读取。"
                       ) if isinstance(value, KeyError) else ""
            raise Hint(f"{expected}{GOT}{_raised(value)}" + hint(_after(keys, why)))
        got, problem = _calls_of(value)
        if got is None:
            raise Hint(f"{expected}{GOT}{problem}")
        if got != wanted:
            raise Hint(f"{expected}{GOT.alone}\n{_show_calls(got)}"
                       + hint(_assemble_hint(wanted, got, why)))
    with tempfile.TemporaryDirectory(prefix="corecoder-ch03-") as folder:
        for name, text in AGENT_FILES.items():
            Path(folder, name).write_text(text, encoding="utf-8")
        for quirk in QUIRKS:
            _through_an_agent(assemble, quirk, Path(folder))


# Last, in a real Agent with the real read_file: the same script played by ScriptedLLM, and by a
# model whose tool calls are streamed in a dialect and come back through the learner's assemble.
# The oracle is the chapter's claim: the two histories are equal (and FunctionLLM checks every
# request the way the API does).
AGENT_FILES = {"calc.py": "def mean(values):\n    return sum(values) / (len(values) - 1)\n",
               "notes.md": "# Notes\n\nmean() is wrong\n"}
AGENT_SCRIPT = [
    {"text": "Let me read both.",
     "tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}},
                    {"name": "read_file", "arguments": {"path": "notes.md", "offset": 3}}]},
    "It divides by one too few.",
]


def _through_an_agent(assemble, quirk: str, folder: Path) -> None:
    replies = [parse_turn(turn, i) for i, turn in enumerate(AGENT_SCRIPT)]
    played: list[Reply] = []

    def model(messages, tools) -> Reply:
        reply = replies[len(played)]
        played.append(reply)
        if not reply.tool_calls:
            return reply
        calls = assemble(copy.deepcopy(tool_call_deltas(reply, quirk)))
        return Reply(reply.text, [ToolCall(c.id, c.name, c.arguments) for c in calls])

    fake = Agent(ScriptedLLM(AGENT_SCRIPT), [ReadFile()], cwd=folder)
    fake.chat("Why is mean wrong?")
    given = say(f"a real Agent whose model streams its tool calls in the {quirk} dialect and "
                "puts them back together with your assemble; the model asks for two reads, "
                "then answers",
                f"一个真实的 Agent，它的模型以 {quirk} 方言流式发送工具调用，再用你的 assemble "
                "拼装回来；模型先请求读两个文件，然后回答")
    mine = Agent(FunctionLLM(model), [ReadFile()], cwd=folder)
    try:
        mine.chat("Why is mean wrong?")
    except (Exception, KeyboardInterrupt, SystemExit) as e:
        raise Hint(f"{given}\n{_raised(e)}") from None
    if mine.messages != fake.messages:
        at = next((i for i, (a, b) in enumerate(zip(mine.messages, fake.messages, strict=False))
                   if a != b), min(len(mine.messages), len(fake.messages)))
        why = say("the same script, played by ScriptedLLM, gives the history above; yours must "
                  "be the same, call for call",
                  "同一份脚本由 ScriptedLLM 来演，得到的是上面那段历史；你的必须一模一样，"
                  "调用一个不差")
        raise Hint(f"{given}\n{EXPECTED.alone}\n{describe(fake.messages, at)}\n"
                   f"{GOT.alone}\n{describe(mine.messages, at)}" + hint(why))


# --- ch03.retry_delay --------------------------------------------------------------------

MAX_ATTEMPTS = 4
REASONS = {400: ("Bad Request", "错误请求"), 401: ("Unauthorized", "未授权"),
           403: ("Forbidden", "禁止访问"), 404: ("Not Found", "未找到"),
           408: ("Request Timeout", "请求超时"), 409: ("Conflict", "冲突"),
           422: ("Unprocessable Entity", "无法处理的实体"), 425: ("Too Early", "过早"),
           429: ("Too Many Requests", "请求过多"), 500: ("Internal Server Error", "服务器内部错误"),
           502: ("Bad Gateway", "网关错误"), 503: ("Service Unavailable", "服务不可用"),
           504: ("Gateway Timeout", "网关超时"), 529: ("Overloaded", "过载")}
STATUSES = tuple(REASONS)
WAITS = (None, 2.0, 120.0, 0.0)  # Retry-After: none, a short wait, one over the cap, none at all
# The draw of the cases that each tell one rule: at 0.25 the usual mistakes (no jitter, 0.5 + rand,
# 2 ** attempt, a rounded wait) all give different answers. At 0.5, 0.5 + rand is no jitter.
TOLD_DRAW = 0.25
DRAWS = (0.5, 0.0, 0.999)
TOLERANCE = 1e-9


class _Failed(Exception):
    """An API error as the engine meets one: a status, a response whose headers may hold
    Retry-After, and no body."""

    def __init__(self, status: int, retry_after: float | None):
        super().__init__(f"HTTP {status}")
        self.status_code = status
        headers = {} if retry_after is None else {"retry-after": str(retry_after)}
        self.response = SimpleNamespace(headers=headers)
        self.body = None


class _Draw:
    """A random source whose draw is fixed: the jitter the learner is given."""

    def __init__(self, value: float):
        self.value = value

    def random(self) -> float:
        return self.value


def _engine_delay(status: int, attempt: int, retry_after: float | None,
                  rand: float, limit: int = MAX_ATTEMPTS) -> float | None:
    llm = LLM("x", max_attempts=limit)
    llm.random = _Draw(rand)
    return llm.retry_delay(_Failed(status, retry_after), attempt)


# A client allowed more attempts (LLM(max_attempts=10)) reaches waits that only the cap bounds.
LONG = 10


def retry_cases() -> list[tuple[int, int, float | None, float, int]]:
    """(status, attempt, retry_after, rand, max_attempts): first a few that each tell one rule,
    then every combination, then a client allowed more attempts (the backoff's cap)."""
    draw = TOLD_DRAW
    told = [(status, 1, None, draw) for status in STATUSES]
    told += [(status, attempt, None, draw) for status in (503, 529) for attempt in (1, 2, 3, 4)]
    told += [(status, attempt, wait, draw) for wait in WAITS[1:] for status, attempt in
             ((429, 1), (503, 2))]
    told += [(429, 4, 2.0, draw), (400, 1, 2.0, draw)]
    every = [(status, attempt, wait, rand) for status in STATUSES for attempt in (1, 2, 3, 4)
             for wait in WAITS for rand in DRAWS]
    longer = [(status, attempt, None, TOLD_DRAW, LONG) for status in (503, 529)
              for attempt in range(1, LONG + 1)]
    return [(*case, MAX_ATTEMPTS) for case in told + every] + longer


def _reason(status: int) -> str:
    """The reason phrase of an HTTP status, in the language spoken."""
    return say(*REASONS[status])


def _worth_retrying(status: int) -> bool:
    return _engine_delay(status, 1, None, 0.5) is not None


def _gave_up_hint(status: int, attempt: int, limit: int = MAX_ATTEMPTS) -> str:
    """Why None was right."""
    if not _worth_retrying(status):
        if status in (401, 403):
            return say(f"a {status} is the provider refusing the key: asking again with the same "
                       "key changes nothing. Worth another try are 408, 409, 425, 429 and every "
                       "5xx",
                       f"{status} 表示服务商拒绝了这个 API 密钥："
                       "用同一个密钥再问一次，什么也不会变。"
                       "值得重试的是 408、409、425、429 和所有 5xx")
        if status == 404:
            return say("a 404 says the model or the address does not exist: it will not exist a "
                       "second later. Worth another try are 408, 409, 425, 429 and every 5xx",
                       "404 说明模型或地址不存在：过一秒它也不会出现。"
                       "值得重试的是 408、409、425、429 和所有 5xx")
        return say(f"a {status} is the request's own fault: the same request fails again. Worth "
                   "another try are 408, 409, 425, 429 and every 5xx",
                   f"{status} 是请求本身的错：同样的请求再发一次，还是失败。"
                   "值得重试的是 408、409、425、429 和所有 5xx")
    return say(f"attempt counts the attempt that just failed, from 1: with at most "
               f"{limit} attempts (max_attempts), the failure of attempt {attempt} is the last, "
               f"so give up (None) once attempt >= max_attempts, even when the provider named a "
               "wait",
               f"attempt 是刚失败的那次尝试的序号，从 1 开始数：最多尝试 {limit} 次"
               "（max_attempts），"
               f"第 {attempt} 次失败就是最后一次，所以 attempt >= max_attempts 时放弃"
               "（返回 None），即使服务商给出了等待时间")


def _retry_hint(status: int, attempt: int, retry_after: float | None, rand: float,
                wanted: float, got: float | None, limit: int = MAX_ATTEMPTS) -> str:
    """Why `wanted` seconds were right, pointing at the mistake `got` shows."""
    if got is None:
        if retry_after == 0:
            return say("Retry-After: 0 is a wait too, of 0 s: retry at once, return 0.0. None "
                       "would give up (`min(retry_after, 60.0) or None` takes 0.0 for no wait "
                       "named)",
                       "Retry-After: 0 也是一个等待时间，等 0 秒：马上重试，返回 0.0。"
                       "返回 None 就是放弃了（`min(retry_after, 60.0) or None` 会把 0.0 "
                       "当成没有给出等待时间）")
        if status >= 500:
            return say(f"a {status} is the server's trouble, not the request's: every 5xx may "
                       "work a moment later, so retry them all (status >= 500), not only some",
                       f"{status} 是服务器的问题，不是请求的问题：所有 5xx 过一会儿都可能恢复，"
                       "所以全部重试（status >= 500），而不是只重试其中几个")
        if status in (408, 409, 425, 429):
            return say(f"a {status} ({_reason(status)}) says \"not now\", not \"never\": 408, "
                       "409, 425 and 429 are worth another try",
                       f"{status}（{_reason(status)}）说的是“现在不行”，不是“永远不行”："
                       "408、409、425 和 429 都值得重试")
        return say(f"attempt {attempt} of at most {limit} (max_attempts) failed: tries are left, "
                   "give up only once attempt >= max_attempts",
                   f"最多 {limit} 次尝试（max_attempts），失败的是第 {attempt} 次：还有机会，"
                   "attempt >= max_attempts 时才放弃")
    jitter = 0.5 + rand / 2
    backoff = min(60.0, 2 ** (attempt - 1) * (4 if status == 529 else 1))
    if retry_after is not None:
        if retry_after > 60 and _close(got, retry_after, TOLERANCE):
            return say(f"the provider asked for {retry_after:g} s: wait at most 60 s, "
                       "min(retry_after, 60.0). A client silent for minutes looks hung, and a "
                       "header can be wrong",
                       f"服务商要求等 {retry_after:g} 秒：最多等 60 秒，即 min(retry_after, 60.0)。"
                       "客户端几分钟没有动静，看上去就像卡死了，何况响应头也可能写错")
        if retry_after == 0 and (_close(got, backoff * jitter, TOLERANCE)
                                 or _close(got, backoff, TOLERANCE)):
            return say("Retry-After: 0 is a wait the provider named, no wait at all: "
                       "`if retry_after:` takes 0 for none; test `retry_after is not None`",
                       "Retry-After: 0 也是服务商给出的等待时间，意思是不用等："
                       "`if retry_after:` 会把 0 当成没有；要判断 `retry_after is not None`")
        if _close(got, backoff * jitter, TOLERANCE) or _close(got, backoff, TOLERANCE):
            return say(f"the provider said how long to wait (Retry-After: {retry_after:g}): wait "
                       "that, at most 60 s, instead of your own backoff. It knows when its limit "
                       "resets; a guess either comes back too soon or waits for nothing",
                       f"服务商已经说了要等多久（Retry-After: {retry_after:g}）：就等这么久，"
                       "最多 60 秒，不用你自己的退避时间。它知道自己的限制什么时候重置；"
                       "自己猜，不是回来得太早，就是白等")
        if _close(got, min(retry_after, 60.0) * jitter, TOLERANCE):
            return say("no jitter on the provider's own wait: it named the moment, wait "
                       "min(retry_after, 60.0) as it is",
                       "服务商自己给出的等待时间不加随机抖动：时间点是它定的，"
                       "原样等 min(retry_after, 60.0)")
        return say("when the provider names a wait, wait min(retry_after, 60.0) seconds",
                   "服务商给出等待时间时，等 min(retry_after, 60.0) 秒")
    rule = say(" With no Retry-After the wait is min(60.0, 2 ** (attempt - 1) * (4 if status "
               "== 529 else 1)) seconds, times 0.5 + rand / 2",
               "没有 Retry-After 时，等待 min(60.0, 2 ** (attempt - 1) * (4 if status == 529 "
               "else 1)) 秒，再乘以 0.5 + rand / 2")
    uncapped = 2 ** (attempt - 1) * (4 if status == 529 else 1)
    places = _rounded(got, wanted, TOLERANCE)
    if places is not None:
        return say(f"don't round: {got!r} is {wanted!r} rounded to {places} decimal places. "
                   "Return the wait as computed; round only where it is shown to a person "
                   "(f\"{wait:.1f} s\").",
                   f"不要舍入：{got!r} 是把 {wanted!r} 保留 {places} 位小数后的结果。"
                   "按算出来的值返回；只在显示给人看的地方才舍入（f\"{wait:.1f} s\"）。"
                   ) + rule
    if uncapped > 60 and _close(got, uncapped * jitter, TOLERANCE):
        return say(f"{uncapped:g} s is too long: the backoff grows with each attempt, so cap it "
                   "at 60 s before the jitter, min(60.0, ...). A client silent for minutes looks "
                   "hung.",
                   f"{uncapped:g} 秒太长了：退避时间随尝试次数增长，"
                   "所以要在乘随机抖动之前把它封顶在 "
                   "60 秒，即 min(60.0, ...)。客户端几分钟没有动静，看上去就像卡死了。") + rule
    if jitter != 1 and _close(got, backoff, TOLERANCE):
        return say("no jitter: multiply the backoff by 0.5 + rand / 2, so that clients that "
                   "failed together do not all come back at the same moment and fail again.",
                   "你没有乘随机抖动：退避时间要乘以 0.5 + rand / 2，这样一起失败的客户端"
                   "不会在同一时刻一起回来，再一起失败。") + rule
    if rand and _close(got, backoff * (0.5 + rand), TOLERANCE):
        return say("the factor is 0.5 + rand / 2, between 0.5 and 1: the jitter only shortens "
                   "the backoff. 0.5 + rand reaches 1.5, waiting longer than the backoff.",
                   "系数是 0.5 + rand / 2，在 0.5 到 1 之间：随机抖动只会缩短退避时间。"
                   "0.5 + rand 最大到 1.5，会比退避时间等得更久。") + rule
    if _close(got, 2 * wanted, TOLERANCE):
        return say("the first retry waits 2 ** 0 = 1 s (times the jitter), the next 2 s, then "
                   "4 s: 2 ** (attempt - 1), not 2 ** attempt.",
                   "第一次重试等 2 ** 0 = 1 秒（再乘以随机抖动），下一次 2 秒，再下一次 4 秒："
                   "是 2 ** (attempt - 1)，不是 2 ** attempt。") + rule
    if status == 529 and _close(got, wanted / 4, TOLERANCE):
        return say("a 529 says the provider is overloaded: it needs longer to recover than one "
                   "that failed once, so wait 4 times longer (OVERLOADED_BACKOFF).",
                   "529 说明服务商过载了：它恢复起来比偶尔失败一次的服务商慢，"
                   "所以要等 4 倍的时间（OVERLOADED_BACKOFF）。") + rule
    if status != 529 and _close(got, 4 * wanted, TOLERANCE):
        return say(f"only a 529 (overloaded) gets the longer backoff, not a {status}.",
                   f"只有 529（过载）才用更长的退避时间，{status} 不用。") + rule
    return rule.lstrip()


@checker("ch03.retry_delay")
def check_retry_delay(retry_delay) -> None:
    for status, attempt, retry_after, rand, limit in retry_cases():
        wanted = _engine_delay(status, attempt, retry_after, rand, limit)
        asked = (say(f"the provider asked for {retry_after:g} s (Retry-After)",
                     f"服务商要求等 {retry_after:g} 秒（Retry-After）")
                 if retry_after is not None else
                 say("the provider named no wait", "服务商没有给出等待时间"))
        about = say(f"attempt {attempt} of at most {limit} failed with a {status} "
                    f"({_reason(status)}); {asked}; the random draw is {rand}",
                    f"最多 {limit} 次尝试，第 {attempt} 次失败了，状态码 {status}"
                    f"（{_reason(status)}）；{asked}；随机数是 {rand}")
        extra = () if limit == MAX_ATTEMPTS else (limit,)  # the default, or more attempts
        shown_limit = "" if limit == MAX_ATTEMPTS else f", max_attempts={limit}"
        given = (f"{about}{say(':', '：')}\n"
                 f"retry_delay({status}, {attempt}, {retry_after!r}, {rand!r}{shown_limit})")
        expected = f"{given}\n{EXPECTED}{wanted!r}\n"
        kind, value = outcome(retry_delay, status, attempt, retry_after, rand, *extra)
        if kind == "raised":
            why = (_gave_up_hint(status, attempt, limit) if wanted is None else
                   _retry_hint(status, attempt, retry_after, rand, wanted, None, limit))
            if extra and isinstance(value, TypeError):
                why = say("retry_delay takes a fifth argument, max_attempts (4 when it is not "
                          "given): def retry_delay(status, attempt, retry_after, rand, "
                          "max_attempts=4)",
                          "retry_delay 还有第五个参数 max_attempts（不传时为 4）："
                          "def retry_delay(status, attempt, retry_after, rand, max_attempts=4)")
            raise Hint(f"{expected}{GOT}{_raised(value)}" + hint(why))
        got = _number(value)
        if value is not None and got is None:
            why = say("return the seconds to wait as a number (a float), or None to give up",
                      "返回要等的秒数（一个数，比如 float），或者返回 None 表示放弃")
            raise Hint(f"{expected}{GOT}{type(value).__name__} {shown(value)}" + hint(why))
        if got is not None and not _same(got, outcome(retry_delay, status, attempt, retry_after,
                                                    rand, *extra)):
            why = say("use the rand you are given, not a draw of your own (random.random()): the "
                      "same inputs must give the same wait (a test could not check it otherwise)",
                      "用传进来的 rand，不要自己再抽随机数（random.random()）：同样的输入必须"
                      "得到同样的等待时间（否则测试就没法检查它）")
            raise Hint(f"{expected}{GOT}" + say(
                "a different answer when your code was called again with the same inputs",
                "用同样的输入再调用一次你的代码，得到的答案不一样") + hint(why))
        if wanted is None and got is not None:
            raise Hint(f"{expected}{GOT}{got!r}" + hint(_gave_up_hint(status, attempt, limit)))
        if wanted is not None and not _close(got, wanted, TOLERANCE):
            why = _retry_hint(status, attempt, retry_after, rand, wanted, got, limit)
            raise Hint(f"{expected}{GOT}{got!r}" + hint(why))


# --- ch03.cost ---------------------------------------------------------------------------

COST_TOLERANCE = 1e-12


def cost_cases() -> list[tuple[str, Usage, Price | None]]:
    """(what the case is, the call's usage, the model's price)"""
    return [
        (say("no cached tokens", "没有缓存命中的 token"),
         Usage(1200, 300, 0), Price(2.5, 10.0, 1.25)),
        (say("a prompt cache hit: most of the prompt cached, at a tenth of the input price",
             "提示词缓存命中：提示词的大部分都已缓存，价格是输入价的十分之一"),
         Usage(10_000, 500, 8_000), Price(3.0, 15.0, 0.3)),
        (say("a cache hit at a provider that gives no discount for it (cached_input None)",
             "缓存命中，但服务商对缓存不打折（cached_input 为 None）"),
         Usage(10_000, 500, 8_000), Price(0.5, 1.5, None)),
        (say("a server that counts more cached tokens than prompt tokens",
             "服务器报告的缓存 token 比提示词的 token 还多"),
         Usage(1_000, 200, 3_000), Price(2.0, 8.0, 0.5)),
        (say("a call that used no tokens", "一次没有用掉任何 token 的调用"),
         Usage(0, 0, 0), Price(2.5, 10.0, 1.25)),
        (say("a model whose price is unknown (a local model, say)",
             "一个价格未知的模型（比如本地模型）"),
         Usage(4_000, 800, 1_000), None),
        (say("the same usage at a cheap model's price", "同样的用量，按便宜模型的价格"),
         Usage(5_000, 1_000, 2_000), Price(0.15, 0.6, 0.075)),
        (say("the same usage at an expensive model's price", "同样的用量，按昂贵模型的价格"),
         Usage(5_000, 1_000, 2_000), Price(15.0, 75.0, 1.5)),
        (say("a provider whose prompt cache is free (cached_input 0.0)",
             "一家提示词缓存免费的服务商（cached_input 为 0.0）"),
         Usage(10_000, 500, 8_000), Price(1.0, 2.0, 0.0)),
        (say("an irregular usage, whose cost has many decimals",
             "一次用量不规整的调用，成本有很多位小数"),
         Usage(1_234, 567, 89), Price(1.25, 10.0, 0.125)),
    ]


def _cost_hint(usage: Usage, price: Price, got: float | None) -> str:
    """Why cost_of's answer was right, pointing at the mistake `got` shows."""
    if got is None:
        return say("the price is known: return what the call cost, in USD",
                   "价格是已知的：返回这次调用花了多少美元")
    wanted = cost_of(usage, price)
    cached = min(usage.cached_tokens, usage.prompt_tokens)
    rate = price.input if price.cached_input is None else price.cached_input
    fresh = usage.prompt_tokens - cached
    output = usage.completion_tokens * price.output
    places = _rounded(got, wanted, COST_TOLERANCE)
    if places is not None:
        return say(f"don't round: {got!r} is {wanted!r} rounded to {places} decimal places. "
                   "Round only where a cost is shown (f\"${cost:.4f}\"): a total of rounded "
                   "costs drifts away from the bill",
                   f"不要舍入：{got!r} 是把 {wanted!r} 保留 {places} 位小数后的结果。"
                   "只在显示成本的地方才舍入（f\"${cost:.4f}\"）：把舍入过的成本加起来，"
                   "总数会和账单越差越远")
    free = [] if price.cached_input != 0 else [
        ((fresh * price.input + cached * price.input + output) / 1_000_000,
         say("cached_input 0.0 is a price: the cache is free. `price.cached_input or "
             "price.input` takes 0.0 for None and charges the full input rate; test "
             "`price.cached_input is None`",
             "cached_input 为 0.0 也是一个价格：缓存免费。`price.cached_input or price.input` "
             "会把 0.0 当成 None，按完整的输入价计费；要判断 `price.cached_input is None`"))]
    none = [] if price.cached_input is not None else [
        ((fresh * price.input + output) / 1_000_000,
         say("cached_input None means the provider gives no discount for cached tokens: they "
             "cost the full input price, not nothing",
             "cached_input 为 None 表示服务商对缓存的 token 不打折：它们按完整的输入价计费，"
             "而不是免费"))]
    mistakes = [
        *free,
        (wanted * 1_000_000,
         say("prices are USD per million tokens: divide by 1,000,000",
             "价格的单位是每百万 token 多少美元：要除以 1,000,000")),
        ((usage.prompt_tokens * price.input + output) / 1_000_000,
         say("cached tokens cost the cached rate, price.cached_input (a prompt cache hit is "
             "billed at a fraction of the input price), not the input rate",
             "缓存命中的 token 按缓存价 price.cached_input 计费（提示词缓存命中的部分只按输入价"
             "的一小部分收费），不按输入价")),
        ((usage.prompt_tokens * price.input + cached * rate + output) / 1_000_000,
         say("cached tokens are part of prompt_tokens, not extra: charge prompt_tokens - cached "
             "at the input rate and the cached ones at the cached rate, each token once",
             "缓存命中的 token 包含在 prompt_tokens 里，不是额外的：prompt_tokens - cached "
             "按输入价，缓存的部分按缓存价，每个 token 只算一次")),
        *none,
        (((usage.prompt_tokens - usage.cached_tokens) * price.input
          + usage.cached_tokens * rate + output) / 1_000_000,
         say("a server's count can be off: clamp the cached tokens to the prompt's, "
             "min(cached_tokens, prompt_tokens), or the fresh tokens go negative",
             "服务器的计数可能不准：缓存的 token 不能超过提示词的 token，"
             "取 min(cached_tokens, prompt_tokens)，否则未缓存的 token 会变成负数")),
        ((max(0, usage.prompt_tokens - usage.cached_tokens) * price.input
          + usage.cached_tokens * rate + output) / 1_000_000,
         say("clamp the cached tokens, not only the fresh ones: a prompt cannot have more "
             "cached tokens than tokens, min(cached_tokens, prompt_tokens). With the fresh ones "
             f"held at 0 but every cached one charged, a prompt of {usage.prompt_tokens} tokens "
             f"is billed for {usage.cached_tokens}",
             "要限制的是缓存的 token，而不只是未缓存的：提示词里缓存的 token 不可能比它的"
             "全部 token 还多，取 min(cached_tokens, prompt_tokens)。只把未缓存的压到 0，"
             f"却把每个缓存的 token 都计费，{usage.prompt_tokens} 个 token 的提示词就按 "
             f"{usage.cached_tokens} 个收费了")),
    ]
    for value, why in mistakes:
        if not _close(value, wanted, COST_TOLERANCE) and _close(got, value, COST_TOLERANCE):
            return why
    return say("(fresh * input + cached * cached rate + completion_tokens * output) / 1,000,000, "
               "where cached = min(cached_tokens, prompt_tokens) and fresh = prompt_tokens - "
               "cached; the cached rate is cached_input, or input when it is None",
               "(fresh * input + cached * rate + completion_tokens * output) / 1,000,000，"
               "其中 rate 是缓存价：cached_input，为 None 时就是 input；"
               "cached = min(cached_tokens, prompt_tokens)，fresh = prompt_tokens - cached")


@checker("ch03.cost")
def check_cost(cost) -> None:
    for about, usage, price in cost_cases():
        wanted = None if price is None else cost_of(usage, price)
        given = f"{about}{say(':', '：')}\ncost({usage!r}, {price!r})"
        expected = f"{given}\n{EXPECTED}{wanted!r}\n"
        kind, value = outcome(cost, usage, price)
        unknown = say("the price is unknown, so the cost is unknown too: return None. A 0.0 "
                      "would say the call cost nothing, and a total would count it as known",
                      "价格未知，成本也就未知：返回 None。返回 0.0 等于说这次调用没花钱，"
                      "总数也会把它当成已知的成本加进去")
        if kind == "raised":
            why = unknown if price is None else _cost_hint(usage, price, None)
            raise Hint(f"{expected}{GOT}{_raised(value)}" + hint(why))
        got = _number(value)
        if value is not None and got is None:
            why = say("return the cost in USD as a number (a float), or None when the price "
                      "is unknown",
                      "返回以美元计的成本（一个数，比如 float），价格未知时返回 None")
            raise Hint(f"{expected}{GOT}{type(value).__name__} {shown(value)}" + hint(why))
        if wanted is None and got is not None:
            raise Hint(f"{expected}{GOT}{got!r}" + hint(unknown))
        if wanted is not None and not _close(got, wanted, COST_TOLERANCE):
            raise Hint(f"{expected}{GOT}{got!r}" + hint(_cost_hint(usage, price, got)))
