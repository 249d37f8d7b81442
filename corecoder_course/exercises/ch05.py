"""Checks for the exercises of chapter 5, parallel tool calls.

    ch05.merge     where the agent is after a batch whose calls each ran in a fork of the
                   workspace: where running them in sequence would leave it
    ch05.executor  an executor that admits every call first, in order, then runs the
                   read-only calls at the same time and the others one at a time, plugged
                   into a real Agent
    ch05.lock_key  the key of the lock a call on a path takes: one key per file, whatever name
                   the model gives it by

The expected answer is always the engine's own. For `ch05.merge`: real Workspaces in a
temporary folder with subfolders, a fork per call, each fork's cwd set, `Workspace.merge`,
on batches made by hand and on seeded random ones (the empty batch among them: on Ctrl+C only
the forks of the calls that finished are merged, maybe none). For `ch05.lock_key`: `lock_key`
of executor.py, on a temporary folder with files, a link to a file, a link to a folder, and two
workspaces (the folder, and a subfolder of it as after a `cd`), while the process's working
directory is elsewhere. (No link loop: `Path.resolve()` raises RuntimeError on one before
Python 3.13, where the engine keys such a path by its text.) Each answer is run on every case
first; a hint is about the first case it gets wrong, and names the mistake when a known one
gives every answer it gave.

`ch05.executor` runs the learner's executor inside a real `Agent` whose scripted model asks, in
one reply, for two calls of `meet`, a read-only tool that waits at a barrier (2 parties, 2 s)
for the other, and three calls of `append_line`, a mutating tool that appends a line to a file
and notes when two of its calls overlap (each takes WRITE_SECONDS); in a second reply, for one
more write and a call of a tool that does not exist (its job has no tool); then it answers. A
gate and the agent's events note, on one timeline, each question the gate is asked and each
call's start. The verdict reads, in this order: the run ended without an exception; every call
has a text result of its own; each call ran once, through `perform`; the two reads met; no two
writes overlapped; the lines are in call order; each result is its call's; and the gate was
asked in the executor's thread, in call order, every question before any call of the batch
ran. A right answer takes about half a second; one that runs the reads one after the other
waits out the barrier once (2 s).

What a hint shows is the same every run: memory addresses are scrubbed from it, and the
temporary folder (and, for `ch05.lock_key`, the process's working directory) shown by a name.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import tempfile
import threading
import time
from pathlib import Path

from corecoder.agent import Agent
from corecoder.calls import Gate
from corecoder.events import RoundStarted, ToolCallStarted
from corecoder.executor import lock_key
from corecoder.scripted import ScriptedLLM
from corecoder.tool import Tool, ToolError
from corecoder.workspace import Workspace

from ..checks import (
    EXPECTED,
    GOT,
    Hint,
    checker,
    error_of,
    hint,
    outcome,
    raised,
    returned,
    scrub,
    scrubbed,
    shown,
    then,
)
from ..words import say


def _same(a, b) -> bool:
    """`a == b`, and False if comparing them fails (an answer may return anything)."""
    try:
        return bool(a == b)
    except (Exception, KeyboardInterrupt, SystemExit):
        return False


def _known(mistakes: list, told: list[tuple[str, object]], inputs: list[tuple]) -> str | None:
    """The why of the first known mistake (a function and its why) that gives every answer the
    learner's code gave (where it raised, anything), or None."""
    for mistake, why in mistakes:
        if all(kind == "raised" or _same(mistake(*args), got)
               for (kind, got), args in zip(told, inputs, strict=True)):
            return why
    return None


# --- ch05.merge --------------------------------------------------------------------------

SUBFOLDERS = ("a", "b", "a/deep")
START = "."  # in a case, the fork of a call that ended where the batch began
SEEDS = range(1, 31)


def merge_cases() -> list[tuple[str, list[str]]]:
    """(what the case is, where each call ended, relative to start): the cases made by hand,
    then random ones."""
    random_cases = []
    for seed in SEEDS:
        rng = random.Random(seed)
        forks = [START if rng.random() < 0.45 else rng.choice(SUBFOLDERS)
                 for _ in range(rng.randint(0, 5))]
        random_cases.append((say(f"a random batch (seed {seed})", f"一批随机的调用（种子 {seed}）"),
                             forks))
    return [
        (say("two calls: the first did `cd a`, the second did not move (it ended where the "
             "batch began)",
             "两个调用：第一个执行了 `cd a`，第二个没有移动（它结束时还在这批调用开始的地方）"),
         ["a", START]),
        (say("two calls: the first did not move, the second did `cd a`",
             "两个调用：第一个没有移动，第二个执行了 `cd a`"),
         [START, "a"]),
        (say("three calls: `cd a`, `cd b`, then one that did not move",
             "三个调用：`cd a`、`cd b`，然后是一个没有移动的调用"),
         ["a", "b", START]),
        (say("two calls: `cd a`, then `cd a/deep`", "两个调用：`cd a`，然后是 `cd a/deep`"),
         ["a", "a/deep"]),
        (say("two calls: `cd b`, then `cd a && cd ..`, which came back to where it began",
             "两个调用：`cd b`，然后是 `cd a && cd ..`，它又回到了开始的地方"),
         ["b", START]),
        (say("one call, which did `cd a`", "一个调用，执行了 `cd a`"), ["a"]),
        (say("one call, which did not move", "一个调用，没有移动"), [START]),
        (say("three calls, none of which moved", "三个调用，都没有移动"), [START, START, START]),
        (say("four calls: `cd b`, `cd a`, then two that did not move",
             "四个调用：`cd b`、`cd a`，然后是两个没有移动的调用"),
         ["b", "a", START, START]),
        (say("an empty batch: Ctrl+C stopped it before any call finished, so no fork is merged",
             "空的一批：Ctrl+C 在任何调用结束之前就让它停下了，所以没有要合并的分叉"),
         []),
        *random_cases,
    ]


def _engine_merge(start: Path, forks: list[Path]) -> Path:
    """Where the engine leaves the agent: a fork of a real Workspace per call, each moved to
    where its call ended, merged back."""
    workspace = Workspace(start)
    moved = []
    for cwd in forks:
        fork = workspace.fork()
        fork.cwd = cwd
        moved.append(fork)
    workspace.merge(moved)
    return workspace.cwd


def _place(path, start: Path) -> str:
    """A directory as a hint shows it: `start`, or `start / "a"`."""
    if isinstance(path, Path):
        if path == start:
            return "start"
        with contextlib.suppress(ValueError):
            return f'start / "{path.relative_to(start).as_posix()}"'
    return shown(path)


def _merge_rule() -> str:
    return say("go through the forks in call order, as the calls would have run in sequence: a "
               "fork that ended somewhere other than start moved the agent there; one at start "
               "did not move (or came back), and changes nothing; when no fork moved, or there "
               "is none, the agent is still at start",
               "按调用顺序逐个看这些分叉，就像这些调用依次运行那样：结束在 start 以外某处的分叉，"
               "把智能体带到了那里；还在 start 的分叉没有移动（或者又回来了），什么也不改变；"
               "没有一个分叉移动过，或者根本没有分叉，智能体就还在 start")


def _merge_mistakes(start: Path) -> list:
    return [
        (lambda forks: forks[-1] if forks else start,
         say("the last fork is not always where the agent is: a call that did not `cd` ended "
             "where the batch began, start, and changes nothing. Taking forks[-1], or comparing "
             "each fork with the one before it, lets such a call undo an earlier call's `cd` (in "
             "sequence, `cd a` then `pwd` leaves the agent in a). Every fork began at start: "
             "compare each one with start, and keep the last that differs",
             "最后一个分叉不一定就是智能体所在的地方：没有执行 `cd` 的调用，结束时还在这批调用"
             "开始的地方 start，它什么也不改变。取 forks[-1]，或者拿每个分叉和它前一个分叉比，"
             "都会让这样的调用撤销前面某个调用的 `cd`（依次运行时，先 `cd a` 再 `pwd`，智能体"
             "留在 a）。每个分叉都是从 start 开始的：拿每个分叉和 start 比，留下最后一个不同的")),
        (lambda forks: next((cwd for cwd in forks if cwd != start), start),
         say("the first fork that moved does not have the last word: in sequence, a later `cd` "
             "moves the agent again. Go through every fork, and keep the last one that ended "
             "somewhere other than start",
             "第一个移动过的分叉说了不算：依次运行时，后面的 `cd` 会再次移动智能体。"
             "要看完所有分叉，留下最后一个结束在 start 以外某处的分叉")),
        (lambda forks: start,
         say("a fork that moved takes the agent with it: in sequence, the agent stays where a "
             "`cd` took it, for the calls after it and the next round. Keep the last fork that "
             "ended somewhere other than start; only when none moved is the answer start",
             "移动过的分叉会把智能体一起带走：依次运行时，`cd` 把智能体带到哪里，它就留在哪里，"
             "后面的调用和下一轮都在那里。留下最后一个结束在 start 以外某处的分叉；"
             "只有没有一个分叉移动过时，答案才是 start")),
    ]


@contextlib.contextmanager
def _scratch(shown: str, *others: tuple[Path, str]):
    """A fresh folder (resolved) for one check, and how its hints show places: every Hint raised
    inside is scrubbed, the folder shown as `shown` and each other place as its name."""
    with tempfile.TemporaryDirectory(prefix="corecoder-ch05-", ignore_cleanup_errors=True) as tmp:
        folder = Path(tmp).resolve()
        places = {folder: shown, **dict(others)}
        with scrubbed(places):
            yield folder, places


@checker("ch05.merge")
def check_merge(merge) -> None:
    with _scratch("start") as (start, places):
        _merge_check(merge, start, places)


def _merge_check(merge, start: Path, places: dict[Path, str]) -> None:
    for name in SUBFOLDERS:
        (start / name).mkdir(parents=True, exist_ok=True)
    cases = [(about, [start if n == START else start / n for n in names])
             for about, names in merge_cases()]
    told, given_lists = [], []
    for _, forks in cases:  # every case first: a known mistake is told by all its answers
        passed = list(forks)
        told.append(outcome(merge, start, passed))
        given_lists.append(passed)
    for (about, forks), (kind, got), passed in zip(cases, told, given_lists, strict=True):
        wanted = _engine_merge(start, forks)
        shown_forks = "[" + ", ".join(_place(cwd, start) for cwd in forks) + "]"
        expected = (f"{about}{say(':', '：')}\nmerge(start, {shown_forks})\n"
                    f"{EXPECTED}{_place(wanted, start)}\n")
        if kind == "raised":
            why = _merge_rule()
            if not forks:
                why = say("an empty batch merges no fork: RunInParallel merges only the forks of "
                          "the calls that finished, and when Ctrl+C stops a batch before any "
                          "did, there are none. The agent is then where it was, start",
                          "空的一批没有要合并的分叉：RunInParallel 只合并已经结束的调用的分叉，"
                          "Ctrl+C 在任何调用结束之前就让这批停下时，一个分叉也没有。"
                          "这时智能体还在原来的地方，也就是 start")
            raise Hint(f"{expected}{GOT}{raised(got, places)}" + hint(why))
        if not _same(passed, forks):
            why = say("merge only reads the forks: it must leave the list it is given as it is "
                      "(no pop, reverse, sort, ...)",
                      "merge 只读这些分叉：传进来的列表要保持原样（不要 pop、reverse、sort 之类）")
            after = say("after merge, the list given holds: ", "merge 之后，传进来的列表变成了：")
            held = ("[" + ", ".join(_place(cwd, start) for cwd in passed) + "]"
                    if isinstance(passed, list) else shown(passed))
            raise Hint(f"{expected}{GOT}{_place(got, start)}\n{after}{held}" + hint(why))
        if not isinstance(got, Path):
            if _same(got, str(wanted)):
                why = say("return the directory as a Path, as the forks are: it becomes the "
                          "workspace's cwd, a Path, not its text",
                          "要把目录作为 Path 返回，和传进来的分叉一样：它会成为工作区的 cwd，"
                          "是一个 Path，而不是它的文本")
            else:
                why = _merge_rule()
            raise Hint(f"{expected}{GOT}{returned(got, places)}" + hint(why))
        if not _same(got, wanted):
            why = _known(_merge_mistakes(start), told, [(f,) for _, f in cases]) or _merge_rule()
            raise Hint(f"{expected}{GOT}{_place(got, start)}" + hint(why))


# --- ch05.executor -----------------------------------------------------------------------

MEET_SECONDS = 2  # how long a read waits at the barrier for the other
WRITE_SECONDS = 0.1  # how long each write takes: two at once would overlap, surely
LOG = "log.txt"


def _meet(call_id: str, who: str) -> dict:
    return {"id": call_id, "name": "meet", "arguments": {"who": who}}


def _append(call_id: str, line: str) -> dict:
    return {"id": call_id, "name": "append_line", "arguments": {"path": LOG, "line": line}}


# the model's two replies with calls: reads and writes mixed, then a write and a tool that
# does not exist (its job has no tool)
BATCHES = [
    [_meet("call_1", "r1"), _append("call_2", "w1"), _append("call_3", "w2"),
     _meet("call_4", "r2"), _append("call_5", "w3")],
    [_append("call_6", "w4"), {"id": "call_7", "name": "meat", "arguments": {"who": "r3"}}],
]
CALLS = [c for batch in BATCHES for c in batch]
NAMED = {c["arguments"].get("who") or c["arguments"]["line"]: c["id"] for c in CALLS}
LINES = [c["arguments"]["line"] for c in CALLS if c["name"] == "append_line"]


class Meet(Tool):
    """Read-only: waits at a barrier until the other call of the batch is there too."""

    name = "meet"
    description = "Wait for the other read of the batch."
    parameters = {"type": "object", "properties": {"who": {"type": "string"}},
                  "required": ["who"], "additionalProperties": False}

    def __init__(self):
        self.barrier = threading.Barrier(2, timeout=MEET_SECONDS)
        self.met: dict[str, bool] = {}  # who: whether it met the other

    def run(self, ws: Workspace, who: str) -> str:
        try:
            self.barrier.wait()
        except threading.BrokenBarrierError:
            self.met[who] = False
            raise ToolError(f"BrokenBarrierError: no other call of meet was running in the "
                            f"{MEET_SECONDS} s this one waited") from None
        self.met[who] = True
        return f"{who} met"


class AppendLine(Tool):
    """Mutating: appends a line to a file, slowly, and notes every call that starts while
    another is still running."""

    name = "append_line"
    description = "Append a line to a file."
    mutating = True
    parameters = {"type": "object",
                  "properties": {"path": {"type": "string"}, "line": {"type": "string"}},
                  "required": ["path", "line"], "additionalProperties": False}

    def __init__(self):
        self.guard = threading.Lock()
        self.running: list[str] = []
        self.overlaps: list[tuple[str, list[str]]] = []  # (line, the lines still being written)

    def run(self, ws: Workspace, path: str, line: str) -> str:
        with self.guard:
            if self.running:
                self.overlaps.append((line, list(self.running)))
            self.running.append(line)
        try:
            time.sleep(WRITE_SECONDS)
            with ws.resolve(path).open("a", encoding="utf-8") as f:
                f.write(line + "\n")
        finally:
            with self.guard:
                self.running.remove(line)
        return f"appended {line} to {path}"


class _Timeline:
    """What happened, in order, from any thread: ("round", n), ("ask", call id, whether on the
    executor's thread) from the gate, ("run", call id) from ToolCallStarted."""

    def __init__(self):
        self.lock = threading.Lock()
        self.events: list[tuple] = []
        self.thread = threading.get_ident()  # the agent's: the executor is called on it

    def note(self, *event) -> None:
        with self.lock:
            self.events.append(event)

    def __call__(self, event) -> None:
        if isinstance(event, RoundStarted):
            self.note("round", event.round)
        elif isinstance(event, ToolCallStarted):
            self.note("run", event.call.id)

    def of_round(self, n: int) -> list[tuple]:
        """The events of round n (from 1): from its start to the next round's."""
        rounds = [i for i, e in enumerate(self.events) if e[0] == "round"]
        if n > len(rounds):
            return []
        end = rounds[n] if n < len(rounds) else len(self.events)
        return self.events[rounds[n - 1] + 1:end]


class Asked(Gate):
    """A consent gate that asks nobody: it notes each question on the timeline."""

    name = "consent"

    def __init__(self, timeline: _Timeline):
        self.timeline = timeline

    def before(self, tool, args, workspace):
        call_id = NAMED.get(args.get("who") or args.get("line"), "?")
        self.timeline.note("ask", call_id, threading.get_ident() == self.timeline.thread)
        return None


def _batches() -> str:
    """The calls the model asks for, as a hint shows them."""
    rounds = []
    for n, batch in enumerate(BATCHES, 1):
        calls = ", ".join(f"{c['id']} {c['name']}({json.dumps(c['arguments'])})" for c in batch)
        rounds.append(f"  {say(f'round {n}: ', f'第 {n} 轮：')}{calls}")
    about = say("an Agent that runs its calls with reads_parallel_writes_in_order. In round 1 "
                "the model asks, in one reply, for two calls of meet, a read-only tool that waits "
                f"(up to {MEET_SECONDS} s) for the other call of meet to be running too, and for "
                f"three calls of append_line, a mutating tool that appends a line to {LOG} (each "
                f"takes {WRITE_SECONDS} s); in round 2, for one more line and for meat, a tool "
                "that does not exist; then it answers:",
                "一个用 reads_parallel_writes_in_order 运行调用的 Agent。第 1 轮，模型在一条回复里"
                "请求两个 meet 调用和三个 append_line 调用：meet 是只读工具，它会等另一个 meet "
                f"调用也运行起来（最多等 {MEET_SECONDS} 秒）；append_line 是修改类工具，它往 "
                f"{LOG} 里追加一行（每次要 {WRITE_SECONDS} 秒）。第 2 轮，模型再请求追加一行，"
                "外加一个 meat 调用，这个工具并不存在。然后模型给出回答：")
    return about + "\n" + "\n".join(rounds)


def _executor_rule() -> str:
    return say("admit every call first, one at a time, in call order: jobs = [admit(agent, call) "
               "for call in calls]; then run the jobs whose tool is read-only (job.tool is not "
               "None and not job.tool.mutating) at the same time, in a pool, and the others one "
               "at a time, in call order; put each result, perform(agent, job, agent.workspace), "
               "in results[job.call.id], and return once every call has its result",
               "先按调用顺序逐个准入每个调用：jobs = [admit(agent, call) for call in calls]；"
               "然后把工具只读的 job（job.tool is not None and not job.tool.mutating）放进线程池"
               "同时运行，其余的按调用顺序逐个运行；每个结果 perform(agent, job, agent.workspace) "
               "都写进 results[job.call.id]，等每个调用都有了结果再返回")


def _answers(results: dict) -> str:
    """Each call's result, as a hint shows them."""
    lines = []
    for c in CALLS:
        text = results.get(c["id"])
        lines.append(f"  {c['id']} {c['name']}: "
                     + (shown(text) if isinstance(text, str) else f"{type(text).__name__} "
                        f"{shown(text)}"))
    return say("the results:", "结果：") + "\n" + "\n".join(lines)


def _wanted_result(c: dict) -> str:
    args = c["arguments"]
    if c["name"] == "meet":
        return f"{args['who']} met"
    if c["name"] == "append_line":
        return f"appended {args['line']} to {args['path']}"
    return f"unknown tool {c['name']!r}"  # how the engine's refusal begins


def _a_result(c: dict, text) -> bool:
    wanted = _wanted_result(c)
    return text == wanted or (c["name"] not in ("meet", "append_line")
                              and isinstance(text, str) and text.startswith(wanted))


@checker("ch05.executor")
def check_executor(reads_parallel_writes_in_order) -> None:
    with _scratch(".") as (folder, places):
        _executor_check(reads_parallel_writes_in_order, folder, places)


def _executor_check(executor, folder: Path, places: dict[Path, str]) -> None:
    timeline, meet, append = _Timeline(), Meet(), AppendLine()
    script = [{"tool_calls": batch} for batch in BATCHES] + ["Done."]
    agent = Agent(ScriptedLLM(script), [meet, append], cwd=folder, executor=executor,
                  gates=[Asked(timeline)])
    agent.subscribe(timeline)
    given = _batches()
    try:
        agent.chat("Meet, and write the lines.")
    except NotImplementedError:
        raise
    except (Exception, KeyboardInterrupt, SystemExit) as e:
        _judge_texts(_results(agent), given)  # a result no request can carry: the model's crash
        why = _executor_rule()
        if isinstance(e, AttributeError) and "NoneType" in str(e):
            why = say("call_7 asks for meat, a tool that does not exist: admit gives it a Job "
                      "whose tool is None and whose refusal is its whole result. Don't read "
                      "job.tool.mutating when job.tool is None: run such a job as the others, "
                      "one at a time (perform returns its refusal). ",
                      "call_7 请求的是 meat，一个不存在的工具：admit 给它的 Job 里 tool 是 None，"
                      "refusal 就是它的全部结果。job.tool 是 None 时不要去读 job.tool.mutating："
                      "像其余的 job 一样逐个运行它（perform 会返回它的拒绝理由）。")
            why = then(why, _executor_rule())
        elif isinstance(e, KeyboardInterrupt):
            why = say("KeyboardInterrupt is how Ctrl+C stops the user's turn: an executor never "
                      "raises it itself. ",
                      "KeyboardInterrupt 是 Ctrl+C 让用户这一轮停下的方式：执行器自己不该抛出它。")
            why = then(why, _executor_rule())
        ended = say("the run ended with ", "运行以异常结束：")
        raise Hint(f"{given}\n{ended}{error_of(e, places)}" + hint(why)) from None
    results = _results(agent)
    answers = _answers(results)
    about = f"{given}\n{answers}"
    _judge_results(results, timeline, about)
    _judge_runs(timeline, about)
    _judge_reads(meet, about)
    _judge_writes(append, folder, about)
    wrong = [c for c in CALLS if not _a_result(c, results.get(c["id"]))]
    if wrong:
        c = wrong[0]
        why = say(f"{c['id']} has a result that is not its own: put each call's result under "
                  "its own id, results[job.call.id] = the result of perform for that job",
                  f"{c['id']} 拿到的结果不是它自己的：每个调用的结果都要写在它自己的 id 下面，"
                  "results[job.call.id] = 对这个 job 调用 perform 的结果")
        wanted = say(f"{c['id']}'s result: ", f"{c['id']} 的结果：") + repr(_wanted_result(c)) \
            + ("" if c["name"] in ("meet", "append_line") else "…")
        raise Hint(f"{about}\n{EXPECTED}{wanted}" + hint(why))
    for n, batch in enumerate(BATCHES, 1):
        _judge_admission(timeline.of_round(n), batch, about)


def _results(agent: Agent) -> dict:
    """Each call's result in the history, by call id."""
    return {m["tool_call_id"]: m["content"] for m in agent.messages if m.get("role") == "tool"}


def _judge_texts(results: dict, about: str) -> None:
    """Every result in the history is text."""
    for c in CALLS:
        text = results.get(c["id"], "")  # not there: the run ended before its round
        if not isinstance(text, str):
            why = say(f"the result of {c['id']} is a {type(text).__name__}, not text: a result is "
                      "what the model reads, the text perform returns (a Future's .result(), not "
                      "the Future; not the Job admit made): results[job.call.id] = "
                      "perform(agent, job, agent.workspace)",
                      f"{c['id']} 的结果是 {type(text).__name__}，不是文本：结果是给模型读的，"
                      "是 perform 返回的文本（Future 要取 .result()，不是 Future 本身；也不是 "
                      "admit 做出的 Job）：results[job.call.id] = perform(agent, job, "
                      "agent.workspace)")
            raise Hint(about + hint(why))


def _judge_results(results: dict, timeline: _Timeline, about: str) -> None:
    """Every call has a text result, none of them the loop's."""
    _judge_texts(results, about)
    left = [c["id"] for c in CALLS if results[c["id"]].startswith(("[not run", "[interrupted"))]
    if not left:
        return
    ran = any(e[0] == "run" for e in timeline.events)
    if len(left) == len(CALLS) and ran:
        why = say("the calls ran, but no call has a result of its own: nothing reached `results`. "
                  "An executor fills the dict it is given, results[job.call.id] = ..., and the "
                  "loop answers every call left out of it; what the executor returns is ignored",
                  "调用都运行了，可没有一个调用有自己的结果：`results` 里什么也没有。执行器要填它"
                  "拿到的那个字典，results[job.call.id] = ...，没写进去的调用由循环来回应；"
                  "执行器的返回值会被忽略")
    elif len(left) == len(CALLS):
        why = say("no call ran, and none has a result: run each job, perform(agent, job, "
                  "agent.workspace), and put what it returns in results[job.call.id]",
                  "一个调用也没运行，也没有一个有结果：每个 job 都要运行，perform(agent, job, "
                  "agent.workspace)，再把它的返回值写进 results[job.call.id]")
    else:
        why = say(f"{', '.join(left)} came back without a result of its own (the loop answered "
                  "it): every call gets one, a refusal too; and the executor returns only once "
                  "every result is in (wait for each Future: future.result()). ",
                  f"{'、'.join(left)} 没有拿到自己的结果（是循环替它回应的）：每个调用都要有结果，"
                  "被拒的调用也一样；执行器要等所有结果都到齐了才返回（每个 Future 都要等："
                  "future.result()）。")
        why = then(why, _executor_rule())
    raise Hint(about + hint(why))


def _judge_runs(timeline: _Timeline, about: str) -> None:
    """Each call ran once, through perform (which tells the agent it started)."""
    runs = [e[1] for e in timeline.events if e[0] == "run"]
    for c in CALLS:
        count = runs.count(c["id"])
        if count == 1:
            continue
        if count == 0:
            why = say(f"{c['id']} has a result, but never ran through perform: run every job "
                      "with perform(agent, job, agent.workspace), which runs the tool, catches "
                      "what it raises, bounds its output and tells the gates and the agent's "
                      "subscribers",
                      f"{c['id']} 有结果，却从没经过 perform 运行：每个 job 都要用 perform(agent, "
                      "job, agent.workspace) 来运行，它会运行工具、接住工具抛出的异常、限制输出"
                      "的长度，并通知各个关卡和智能体的订阅者")
        else:
            why = say(f"{c['id']} ran {count} times: run each job once, either in the pool (a "
                      "read) or in order (the others), never both. A write that runs twice "
                      "writes twice",
                      f"{c['id']} 运行了 {count} 次：每个 job 只运行一次，"
                      "要么在线程池里（只读的），要么按顺序逐个运行（其余的），不能两样都做。"
                      "写操作运行两次，就会写两次")
        raise Hint(about + hint(why))


def _judge_reads(meet: Meet, about: str) -> None:
    if all(meet.met.get(who) for who in ("r1", "r2")):
        return
    why = say("the two calls of meet never ran at the same time: the second started only after "
              "the first had given up waiting. Run every read-only call of the batch at once, "
              "in a pool (pool.submit for each), not one after the other, and not only the "
              "reads that come next to each other: call_1 and call_4 have writes between them",
              "两个 meet 调用从来没有同时运行过：第一个等不下去放弃了，第二个才开始。要把这一批"
              "里所有只读的调用放进线程池同时运行（每个都 pool.submit），不要一个接一个地运行，"
              "也不要只把挨在一起的只读调用放在一起：call_1 和 call_4 之间隔着几个写操作")
    raise Hint(about + hint(why))


def _judge_writes(append: AppendLine, folder: Path, about: str) -> None:
    if append.overlaps:
        # the first two in call order of the writes that overlapped: the same whichever thread
        # happened to start first
        involved = {w for started, running in append.overlaps for w in (started, *running)}
        first, second = [NAMED[line] for line in LINES if line in involved][:2]
        why = say(f"{first} and {second} ran at the same time: the mutating calls "
                  "run one at a time, each after the one before has finished. Don't submit them "
                  "to a pool that runs several at once; run them in order, in the executor's "
                  "own thread (or in a pool of one worker)",
                  f"{first} 和 {second} 同时运行了：修改类调用要逐个运行，前一个结束了"
                  "下一个才开始。不要把它们交给能同时运行好几个的线程池；在执行器自己的线程里"
                  "按顺序运行它们（或者交给只有一个工作线程的线程池）")
        raise Hint(about + hint(why))
    try:
        written = (folder / LOG).read_text(encoding="utf-8").splitlines()
    except OSError:
        written = []
    if written != LINES:
        why = say("the mutating calls run in call order, as they would in sequence: a later "
                  "write to a file lands after an earlier one",
                  "修改类调用要按调用顺序运行，和依次运行时一样：对同一个文件，后面的写操作要落在"
                  "前面的写操作之后")
        lines = say(f"the lines of {LOG}: ", f"{LOG} 里的行：")
        raise Hint(f"{about}\n{EXPECTED}{lines}{LINES}\n{GOT}{lines}{written}" + hint(why))


def _judge_admission(events: list[tuple], batch: list[dict], about: str) -> None:
    """The gate was asked about the batch's calls (those that reach it: a known tool, good
    arguments) on the executor's thread, in call order, and every question before any run."""
    asks = [e for e in events if e[0] == "ask"]
    due = [c["id"] for c in batch if c["name"] in ("meet", "append_line")]
    if not all(on_thread for _, _, on_thread in asks):
        why = say("admit the calls in the executor's own thread, one at a time, not in the pool: "
                  "a consent question asks the user, and two asked from two threads at once "
                  "would interleave. ",
                  "要在执行器自己的线程里逐个准入调用，不要放进线程池：授权确认要问用户，"
                  "两个线程同时问，问题就会交错在一起。")
        why = then(why, _executor_rule())
        raise Hint(about + hint(why))
    asked = [call_id for _, call_id, _ in asks]
    if asked != due:
        got = say("the gate was asked about ", "关卡被问到的调用依次是 ") + (
            say(", ", "、").join(asked) or say("no call", "没有调用"))
        wanted = say("the gate asked about ", "关卡依次被问到 ") + say(", ", "、").join(due)
        if sorted(asked) == sorted(due):
            why = say("admit the calls in call order, reads and writes alike: the user answers "
                      "consent questions in the order the model asked for the calls",
                      "要按调用顺序准入，只读的和修改类的都一样：用户按模型请求调用的顺序"
                      "回答授权确认")
        elif len(asked) > len(set(asked)):
            why = say("each call is admitted once: admit(agent, call) asks every gate, so "
                      "admitting a call twice asks the user twice",
                      "每个调用只准入一次：admit(agent, call) 会问每一道关卡，"
                      "准入两次就会问用户两次")
        else:
            why = say("every call is admitted, with admit(agent, call): it finds the tool, "
                      "checks the arguments and asks each gate",
                      "每个调用都要经过准入，admit(agent, call)：它找到工具、检查参数、"
                      "询问每一道关卡")
        raise Hint(f"{about}\n{EXPECTED}{wanted}\n{GOT}{got}" + hint(why))
    # the last question, and the first call in call order that ran before it: the same whichever
    # thread happened to start first
    last_ask = max((i for i, e in enumerate(events) if e[0] == "ask"), default=-1)
    early = {e[1] for e in events[:last_ask] if e[0] == "run"}
    if early:
        ran, late = next(c["id"] for c in batch if c["id"] in early), events[last_ask][1]
        why = say(f"the gate was asked about {late} after {ran} had already run: admit every "
                  "call first, jobs = [admit(agent, call) for call in calls], and only then run "
                  "any. A consent question asked while calls run would interleave with their "
                  "output, and a no to a later call would come after earlier calls already "
                  "changed files",
                  f"{ran} 已经运行了，关卡才被问到 {late}：先准入所有调用，"
                  "jobs = [admit(agent, call) for call in calls]，然后才运行其中任何一个。"
                  "调用运行时问授权确认，问题会和它们的输出交错在一起；而对后面某个调用说“不”时，"
                  "前面的调用可能已经改了文件")
        raise Hint(about + hint(why))


# --- ch05.lock_key -----------------------------------------------------------------------

FILES = {"a.txt": "a\n", "b.txt": "b\n", "sub/c.txt": "c\n"}
LINKS = {"link.txt": "a.txt", "alias": "sub"}  # a link to a file, a link to a folder
SUB = "sub"  # the second workspace's cwd: the folder, after a `cd sub`


def key_cases(folder: Path) -> list[tuple[str, bool, str]]:
    """(what the case is, whether the workspace is the one in sub, the path the call gives)."""
    return [
        (say("a file in the workspace's cwd", "工作区 cwd 里的一个文件"), False, "a.txt"),
        (say("the same file, written ./a.txt", "同一个文件，写成 ./a.txt"), False, "./a.txt"),
        (say("the same file, through sub and back", "同一个文件，进 sub 再出来"), False,
         "sub/../a.txt"),
        (say("the same file, by its absolute path", "同一个文件，用它的绝对路径"), False,
         str(folder / "a.txt")),
        (say("link.txt, a link to a.txt: the same file", "link.txt，指向 a.txt 的链接：同一个文件"),
         False, "link.txt"),
        (say("another file: a key of its own", "另一个文件：要有它自己的键"), False, "b.txt"),
        (say("a file in a subfolder", "子文件夹里的一个文件"), False, "sub/c.txt"),
        (say("the same file, through alias, a link to the folder sub",
             "同一个文件，经过 alias，一个指向文件夹 sub 的链接"), False, "alias/c.txt"),
        (say("a file not written yet (write_file creates it)",
             "一个还没写出来的文件（write_file 会创建它）"), False, "new.txt"),
        (say("in a workspace whose cwd is W/sub (after a `cd sub`): the same file as sub/c.txt",
             "在 cwd 是 W/sub 的工作区里（执行了 `cd sub` 之后）：和 sub/c.txt 是同一个文件"),
         True, "c.txt"),
        (say("in that workspace: W/sub/a.txt, not written yet, another file than W/a.txt",
             "在这个工作区里：W/sub/a.txt，还没写出来，和 W/a.txt 不是同一个文件"),
         True, "a.txt"),
        (say("in that workspace: the link to a.txt, from above",
             "在这个工作区里：从上一层找到的那个指向 a.txt 的链接"), True, "../link.txt"),
    ]


def _key(value, places: dict[Path, str]) -> str:
    """A key as a hint shows it: Path('W/a.txt'), or the type and repr of what is no Path."""
    if isinstance(value, Path):
        return f"Path({scrub(str(value), places)!r})"
    if value is None:
        return "None"
    try:
        text = f"{scrub(repr(value), places):.300}"
    except (Exception, KeyboardInterrupt, SystemExit):  # a repr that fails
        text = f"<{type(value).__name__}>"
    return f"{type(value).__name__} {text}"


def _key_rule() -> str:
    return say("the key is the file itself: the path made absolute against the workspace's cwd "
               "(not the process's), with . and .. gone and links followed: "
               "(workspace.cwd / path).resolve()",
               "键就是文件本身：以工作区的 cwd（不是进程的）为基准把路径变成绝对路径，去掉 . 和 "
               "..，并且跟随链接：(workspace.cwd / path).resolve()")


def _key_mistakes() -> list:
    text = say("the path's text is no key: the model may name one file in many ways (a.txt, "
               "./a.txt, sub/../a.txt, its absolute path, a link to it), and each text would get "
               "a lock of its own, so two writes to one file would run at the same time; and the "
               "same text in two working directories (after a `cd`) names two files. ",
               "路径的文本当不了键：模型可以用很多种写法指同一个文件（a.txt、./a.txt、"
               "sub/../a.txt、它的绝对路径、指向它的链接），每种写法都会有自己的一把锁，"
               "于是对同一个文件的两次写入会同时运行；而同样的文本在两个工作目录里"
               "（执行了 `cd` 之后）指的是两个文件。")
    tidied = say("os.path.normpath tidies the text only (./a.txt and sub/../a.txt become a.txt): "
                 "the path stays relative, so the same text in two working directories gives two "
                 "files one key, and a link keeps a key of its own. ",
                 "os.path.normpath 只是整理文本（./a.txt 和 sub/../a.txt 都变成 a.txt）："
                 "路径还是相对的，所以同样的文本在两个工作目录里会让两个文件共用一个键，"
                 "链接也还是有它自己的键。")
    process = say("a relative path is relative to the workspace's cwd, which moves with the "
                  "agent's `cd`, not to the process's (Path.cwd(), where the notebook's kernel "
                  "runs): Path(path).resolve() and os.path.abspath(path) make it absolute "
                  "against the wrong folder. Start from workspace.cwd / path. ",
                  "相对路径是相对于工作区的 cwd 的，它随智能体的 `cd` 移动，而不是相对于进程的 "
                  "cwd（Path.cwd()，也就是笔记本内核运行的地方）：Path(path).resolve() 和 "
                  "os.path.abspath(path) 都是以错误的文件夹为基准变成绝对路径的。"
                  "要从 workspace.cwd / path 开始。")
    unresolved = say("workspace.cwd / path makes the path absolute but leaves it as written: "
                     "sub/../a.txt keeps its .., and a link keeps its own name, so one file gets "
                     "two keys. .resolve() removes the .. and follows links. ",
                     "workspace.cwd / path 把路径变成了绝对路径，却保留了原来的写法："
                     "sub/../a.txt 还带着 ..，链接也还是它自己的名字，于是一个文件有了两个键。"
                     ".resolve() 会去掉 ..，并且跟随链接。")
    links = say("os.path.abspath and os.path.normpath tidy the text (./, ..) but follow no link: "
                "link.txt and a.txt are one file, with two keys. .resolve() follows links. ",
                "os.path.abspath 和 os.path.normpath 会整理文本（./、..），却不跟随链接："
                "link.txt 和 a.txt 是同一个文件，却有两个键。.resolve() 会跟随链接。")
    rule = _key_rule()
    return [
        (lambda ws, p: p, then(text, rule)),
        (lambda ws, p: Path(p), then(text, rule)),
        (lambda ws, p: os.path.normpath(p), then(tidied, rule)),
        (lambda ws, p: Path(os.path.normpath(p)), then(tidied, rule)),
        (lambda ws, p: Path(p).resolve(), then(process, rule)),
        (lambda ws, p: Path(os.path.abspath(p)), then(process, rule)),
        (lambda ws, p: os.path.abspath(p), then(process, rule)),
        (lambda ws, p: ws.cwd / p, then(unresolved, rule)),
        (lambda ws, p: Path(os.path.abspath(ws.cwd / p)), then(links, rule)),
        (lambda ws, p: os.path.abspath(ws.cwd / p), then(links, rule)),
        (lambda ws, p: Path(os.path.normpath(ws.cwd / p)), then(links, rule)),
        (lambda ws, p: os.path.normpath(ws.cwd / p), then(links, rule)),
    ]


@checker("ch05.lock_key")
def check_lock_key(file_key) -> None:
    here = os.getcwd()  # the process's: the learner's code must leave it where it is
    with _scratch("W", (Path(here), "P")) as (folder, places):
        try:
            _key_check(file_key, folder, here, places)
        finally:
            os.chdir(here)


def _key_check(file_key, folder: Path, here: str, places: dict[Path, str]) -> None:
    for name, text in FILES.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    linked = True
    for name, target in LINKS.items():
        try:
            (folder / name).symlink_to(target, target_is_directory=(folder / target).is_dir())
        except OSError:  # links that cannot be made here (Windows without the right): skipped
            linked = False
    spaces = {False: Workspace(folder), True: Workspace(folder / SUB)}
    cases = [(about, in_sub, path) for about, in_sub, path in key_cases(folder)
             if linked or not any(part in LINKS for part in Path(path).parts)]
    told = []
    for _, in_sub, path in cases:  # every case first: a known mistake is told by all its answers
        workspace = spaces[in_sub]
        before = workspace.cwd
        told.append(outcome(file_key, workspace, path))
        if (moved := os.getcwd()) != here:
            os.chdir(here)
            why = say("file_key must not change the process's working directory (os.chdir): it "
                      "is shared by every thread, so calls running at the same time would move "
                      "each other, and by every agent in the process. Join the path to "
                      "workspace.cwd instead: workspace.cwd / path",
                      "file_key 不能改变进程的工作目录（os.chdir）：它被所有线程共用，同时运行的"
                      "调用会互相挪动对方；进程里的每个智能体也都共用它。改成把路径接在 "
                      "workspace.cwd 后面：workspace.cwd / path")
            raise Hint(f"file_key(workspace, {path!r})\n" + say("afterwards, ", "之后，")
                       + f"os.getcwd() == {scrub(repr(moved), places)}" + hint(why))
        if workspace.cwd != before:
            workspace.cwd = before
            why = say("file_key only reads the workspace: a call's lock key must not move the "
                      "agent",
                      "file_key 只读工作区：求一个调用的锁的键，不能挪动智能体")
            raise Hint(f"file_key(workspace, {path!r})\n"
                       + say("afterwards, workspace.cwd is ", "之后，workspace.cwd 变成了 ")
                       + _key(workspace.cwd, places) + hint(why))
    if linked:
        folders = say("W is a temporary folder holding a.txt, b.txt, link.txt (a link to a.txt), "
                      "sub/c.txt and alias (a link to the folder sub); the process's working "
                      "directory, P, is another folder",
                      "W 是一个临时文件夹，里面有 a.txt、b.txt、link.txt（指向 a.txt 的链接）、"
                      "sub/c.txt 和 alias（指向文件夹 sub 的链接）；"
                      "进程的工作目录 P 是另一个文件夹")
    else:
        folders = say("W is a temporary folder holding a.txt, b.txt and sub/c.txt (links cannot "
                      "be made here); the process's working directory, P, is another folder",
                      "W 是一个临时文件夹，里面有 a.txt、b.txt 和 sub/c.txt（这里建不了链接）；"
                      "进程的工作目录 P 是另一个文件夹")
    inputs = [(spaces[in_sub], path) for _, in_sub, path in cases]
    wanted = [lock_key(ws, path) for ws, path in inputs]
    for i, ((about, in_sub, path), (kind, got)) in enumerate(zip(cases, told, strict=True)):
        cwd = "W/sub" if in_sub else "W"
        given = (f"{folders}{say('.', '。')}\n{about}{say(':', '：')}\n"
                 f"file_key(workspace, {scrub(repr(path), places)}), workspace.cwd = {cwd}")
        also = [(scrub(repr(p), places), "W/sub" if s else "W")
                for (_, s, p), w in zip(cases[:i], wanted[:i], strict=True) if w == wanted[i]]
        note = ""
        if also:
            other, where = also[0]
            note = say(f" (the key of {other} in {where} too)", f"（也是 {where} 里 {other} 的键）")
        expected = f"{given}\n{EXPECTED}{_key(wanted[i], places)}{note}\n"
        if kind == "raised":
            raise Hint(f"{expected}{GOT}{raised(got, places)}" + hint(_key_rule()))
        if _same(got, wanted[i]) and isinstance(got, Path):
            continue
        why = _known(_key_mistakes(), told, inputs)
        if why is None:
            why = _key_hint(got, wanted[i], places)
        raise Hint(f"{expected}{GOT}{_key(got, places)}" + hint(why))


def _key_hint(got, wanted: Path, places: dict[Path, str]) -> str:
    """Why `got` is no key, when no known mistake gives every answer the learner's code gave."""
    if _same(got, str(wanted)):
        return say("return the key as a Path, as lock_key does, not its text (str)",
                   "像 lock_key 那样把键作为 Path 返回，而不是它的文本（str）")
    if isinstance(got, Path) and not got.is_absolute():
        return then(say("a relative path is no key: relative to what? The same text in two "
                        "working directories names two files. ",
                        "相对路径当不了键：相对于哪里呢？同样的文本在两个工作目录里指的是两个文件。"),
                    _key_rule())
    cwd = Path(os.getcwd())
    if isinstance(got, Path) and (cwd == got or cwd in got.parents) \
            and not any(f in got.parents for f in places if places[f] == "W"):
        return then(say("this key is in the process's working directory, P: a relative path is "
                        "relative to the workspace's cwd, which moves with the agent's `cd`, "
                        "not to the process's. ",
                        "这个键在进程的工作目录 P 里：相对路径是相对于工作区的 cwd 的，它随智能体"
                        "的 `cd` 移动，而不是相对于进程的 cwd。"), _key_rule())
    return _key_rule()
