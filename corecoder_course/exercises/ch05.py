"""Checks for the exercises of chapter 5, parallel tool calls.

    ch05.merge     where the agent is after a batch whose calls each ran in a fork of the
                   workspace: where running them in sequence would leave it
    ch05.executor  an executor that admits every call first, in order, then runs the
                   read-only calls at the same time and the others one at a time, plugged
                   into a real Agent
    ch05.lock_key  the key of the lock a call on a path takes: one key per file, whatever name
                   the model gives it by

All three are declared exercises (kit.py); each reference is the notebook's solution.

`ch05.merge` draws a start and the forks of a batch of every shape: none (Ctrl+C before any
call finished), all still at start, one moved, several moved to different places or to the
same one, one moved and back (a fork that came back is at start again: a workspace's cwd is
resolved), a `cd ..` above start, a folder with a Chinese name, start at the root.

`ch05.lock_key` is run in real folders, made anew for every input in a temporary one, P, the
process's working directory while the answer runs: W in it, with files (Chinese and Russian
names among them), links to a file, to a link, to a file not yet written, by an absolute
target, and to folders. The path is drawn from the ways a model names a file: ./, .., links on
the way, a trailing slash, an absolute path, a file not written yet; the workspace's cwd is W or
a folder in it. (No link loop: `Path.resolve()` raises RuntimeError on one before Python 3.13.)
The reference is the notebook's one line, not `lock_key`, whose contract is wider (`~`, and the
text of a path it cannot resolve). A key is shown with the folders' names (W/a.txt), the same
every run; an answer that moves the process's working directory or the workspace is stopped
with `Moved`.

`ch05.executor` plugs the executor into a real `Agent` (the harness of seams.py) whose scripted
model asks, one reply a round, for a batch of calls of every kind: reads (`look`, read-only, which
waits until every other read of its round is running too), writes (`append`, mutating, which
appends its tag to a log), calls that fail, a call of a tool that does not exist, one with bad
arguments, and a Ctrl+C pressed inside a write. The chapter's rule is checked as it is stated: the
outcome (each call's result, the log, how the run ended) must equal that of the same calls run in
order, `run_in_order`, in another agent; and how the calls ran is watched: the reads met, no two
writes ran at once, every call admitted first (the gate asked in the executor's thread, once each,
in call order, before any call ran there), each run once through `perform`. An overlap is forced,
never timed: a read waits (4 s at most) for the others, unless it runs in the executor's own thread
with no other read running (then none can come); the first write off the executor's thread waits
(3 s at most) for another write to start; a run waits at most once for each, so a right answer
waits for nothing but a pool of one writer, and a wrong one at most 7 s (waiting, which the
kit's limit on computing does not count: a loaded machine gets room, not a wrong verdict). After
a Ctrl+C only what is sure is compared: the results of the calls that are not reads of its round,
the calls before it, and the log written before it. What a run shows is an `Outcome`: what
differs from the sequence and what went wrong in how the calls ran, none for a right answer.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from corecoder.calls import Gate, admit, perform, run_in_order
from corecoder.events import ToolCallStarted
from corecoder.tool import Tool, ToolError
from corecoder.workspace import Workspace

from ..checks import scrub, then
from ..kit import Exercise, Mistake
from ..seams import Seam
from ..words import say

# --- ch05.merge --------------------------------------------------------------------------


def merge(start, forks):
    """Where the agent is after a batch that began in `start` and whose calls ended in `forks`."""
    where = start
    for cwd in forks:
        if cwd != start:
            where = cwd
    return where


STARTS = (Path("/home/ada/calc"), Path("/home/ada/项目"), Path("/"))


def _merge_inputs():
    from hypothesis import strategies as st

    def forks(start: Path):
        places = [start, start / "src", start / "tests", start / "src" / "deep", start / "文档",
                  start.parent, Path("/tmp")]
        return st.tuples(st.just(start), st.lists(st.sampled_from(places), max_size=6))

    return st.sampled_from(STARTS).flatmap(forks)


def _merge_call(args: tuple[Path, list[Path]]) -> str:
    start, forks = args

    def place(cwd) -> str:
        if cwd == start:
            return "start"
        if cwd == start.parent:
            return "start.parent"
        with contextlib.suppress(ValueError):
            return f'start / "{cwd.relative_to(start).as_posix()}"'
        return f"Path({str(cwd)!r})"

    return f"start = Path({str(start)!r})\nmerge(start, [{', '.join(map(place, forks))}])"


def _merge_examples() -> list[tuple[Path, list[Path]]]:
    """The chapter's batch (`cd sub && pwd`, then `pwd`), then today's hand-made ones: the
    other order, two moves, a move deeper, a move and back, none moved, the empty batch."""
    s = STARTS[0]
    a, b = s / "a", s / "b"
    return [(s, forks) for forks in ([s / "sub", s], [s, a], [a, b, s], [a, a / "deep"], [b, s],
                                     [a], [s], [s, s, s], [b, a, s, s], [])]


MERGE = Exercise(
    "ch05.merge", merge, _merge_inputs, _merge_call, examples=_merge_examples(), max_examples=100,
    domain=("batches of up to six forks: none moved, some moved (deeper, up, elsewhere), "
            "some back at start", "最多六个分叉组成的一批：有的没动过，有的移动过（往深处、往上、"
            "去别处），有的又回到了 start"),
    rule=("go through the forks in call order, as the calls would have run in sequence: a fork "
          "that ended somewhere other than start moved the agent there; one at start did not "
          "move (or came back), and changes nothing; when no fork moved, or there is none, the "
          "agent is still at start",
          "按调用顺序逐个看这些分叉，就像这些调用依次运行那样：结束在 start 以外某处的分叉，"
          "把智能体带到了那里；还在 start 的分叉没有移动（或者又回来了），什么也不改变；"
          "没有一个分叉移动过，或者根本没有分叉，智能体就还在 start"),
    shape=("where = start; for each fork in order: if it is not start, where = that fork; "
           "return where",
           "where = start；按顺序看每个分叉：它不是 start，就 where = 这个分叉；最后 return where"),
    mistakes=[
        Mistake("return where", "return forks[-1] if forks else start", (
            "the last fork is not always where the agent is: a call that did not `cd` ended "
            "where the batch began, start, and changes nothing. Taking forks[-1], or comparing "
            "each fork with the one before it, lets such a call undo an earlier call's `cd` (in "
            "sequence, `cd a` then `pwd` leaves the agent in a). Every fork began at start: "
            "compare each one with start, and keep the last that differs",
            "最后一个分叉不一定就是智能体所在的地方：没有执行 `cd` 的调用，结束时还在这批调用"
            "开始的地方 start，它什么也不改变。取 forks[-1]，或者拿每个分叉和它前一个分叉比，"
            "都会让这样的调用抵消前面某个调用的 `cd`（依次运行时，先 `cd a` 再 `pwd`，智能体"
            "留在 a）。每个分叉都是从 start 开始的：拿每个分叉和 start 比，留下最后一个不同的")),
        Mistake("return where", "return forks[-1]", (
            "the last fork is not where the agent is: a call that did not `cd` ended at start "
            "and changes nothing, so keep the last fork that differs from start. And an empty "
            "batch (Ctrl+C before any call finished) has no last fork: the agent is still at "
            "start",
            "最后一个分叉并不是智能体所在的地方：没有执行 `cd` 的调用结束时还在 start，"
            "什么也不改变，所以要留下最后一个和 start 不同的分叉。而空的一批（Ctrl+C 在任何"
            "调用结束之前就让它停下了）根本没有最后一个分叉：智能体还在 start")),
        Mistake("where = cwd", "return cwd", (
            "the first fork that moved does not have the last word: in sequence, a later `cd` "
            "moves the agent again. Go through every fork, and keep the last one that ended "
            "somewhere other than start",
            "第一个移动过的分叉说了不算：依次运行时，后面的 `cd` 会再次移动智能体。"
            "要看完所有分叉，留下最后一个结束在 start 以外某处的分叉")),
        Mistake("return where", "return start", (
            "a fork that moved takes the agent with it: in sequence, the agent stays where a "
            "`cd` took it, for the calls after it and the next round. Keep the last fork that "
            "ended somewhere other than start; only when none moved is the answer start",
            "移动过的分叉会把智能体一起带走：依次运行时，`cd` 把智能体带到哪里，它就留在哪里，"
            "后面的调用和下一轮都在那里。留下最后一个结束在 start 以外某处的分叉；"
            "只有没有一个分叉移动过时，答案才是 start")),
        Mistake("where = start", "where = forks[0]", (
            "an empty batch merges no fork: RunInParallel merges only the forks of the calls "
            "that finished, and when Ctrl+C stops a batch before any did, there are none. The "
            "agent is then where it was, start: begin from start, not from forks[0]",
            "空的一批没有要合并的分叉：RunInParallel 只合并已经结束的调用的分叉，Ctrl+C 在任何"
            "调用结束之前就让这批停下时，一个分叉也没有。这时智能体还在原来的地方，也就是 "
            "start：要从 start 开始，而不是从 forks[0] 开始")),
    ],
)


# --- ch05.executor -----------------------------------------------------------------------


def reads_parallel_writes_in_order(calls, agent, results):
    """Read-only calls at once, the others one at a time; every result into `results`."""
    jobs = [admit(agent, call) for call in calls]
    reads = [job for job in jobs if job.tool is not None and not job.tool.mutating]
    with ThreadPoolExecutor(max_workers=8) as pool:
        running = {job.call.id: pool.submit(perform, agent, job, agent.workspace) for job in reads}
        for job in jobs:
            if job.call.id not in running:
                results[job.call.id] = perform(agent, job, agent.workspace)
        for call_id, future in running.items():
            results[call_id] = future.result()


MEET_SECONDS = 10.0  # how long the reads of a round wait for each other (a run waits once)
OVERLAP_SECONDS = 3.0  # how long a write off the executor's thread waits for another to start
# each kind of call a round may hold: its tool and arguments besides its tag (r1, w2, x3)
KINDS = {"read": ("look", {}), "read fails": ("look", {"fail": True}), "write": ("append", {}),
         "write fails": ("append", {"fail": True}), "Ctrl+C": ("append", {"ctrl_c": True}),
         "no such tool": ("lookup", {}), "bad arguments": ("append", None)}
READS, WRITES = ("read", "read fails"), ("write", "write fails", "Ctrl+C")  # those that run


class _Watch(Gate):
    """One run of a script of rounds (a tuple of kinds each): the model's replies, and what
    the tools, the agent's events and, as a consent gate that asks nobody, admission note of
    it, from any thread."""

    name = "consent"

    def __init__(self, rounds: tuple[tuple[str, ...], ...], watched: bool = True):
        self.watched, self.thread, self.lock = watched, threading.get_ident(), threading.Lock()
        self.script, self.where = [], {}  # the replies; a tag's (round, call id, kind)
        for b, kinds in enumerate(rounds):
            calls = []
            for j, kind in enumerate(kinds):
                name, more = KINDS[kind]
                tag = f"{dict(look='r', append='w').get(name, 'x')}{len(self.where) + 1}"
                self.where[tag] = (b, f"call_{b + 1}_{j + 1}", kind)
                calls.append({"id": f"call_{b + 1}_{j + 1}", "name": name,
                              "arguments": {"text": tag} if more is None else {"tag": tag, **more}})
            self.script.append({"tool_calls": calls})
        self.count = {ks: Counter(b for b, _, k in self.where.values() if k in ks)
                      for ks in (READS, WRITES)}
        self.arrived, self.present = defaultdict(set), defaultdict(set)  # reads of a round
        # set once every read of its round started; made here, not on first use: two threads that
        # both found it missing would each make one, and a read could wait on the one lost
        self.everyone = {b: threading.Event() for b in range(len(rounds))}
        self.broken: set[int] = set()  # the rounds whose reads gave up waiting for each other
        self.events: list[tuple[str, str, bool]] = []  # ("ask" or "run", call id, on our thread)
        self.apart, self.log, self.writing, self.overlapped = [], [], 0, False
        self.waited = {"read": False, "write": False}  # a run waits at most once for each
        self.another = threading.Event()  # a write started while another was running

    def __call__(self, event) -> None:  # the agent's events: a call starts running
        if isinstance(event, ToolCallStarted):
            self.note("run", event.call.id)

    def before(self, tool, args, workspace) -> None:  # a consent question
        self.note("ask", self.where[args["tag"]][1])

    def note(self, what: str, call_id: str) -> None:
        with self.lock:
            self.events.append((what, call_id, threading.get_ident() == self.thread))

    @contextlib.contextmanager
    def running(self, tag: str, mutating: bool):
        """A call runs. A read waits until every read of its round has started; one that runs
        in the executor's own thread, with no other read running, waits for none: no read can
        start before it ends. A write notes whether another runs at once, and the first write
        off the executor's thread waits for another to start, so that an overlap always shows."""
        b, call_id, _ = self.where[tag]
        inline = threading.get_ident() == self.thread
        with self.lock:
            alone = not self.present[b]
            self.arrived[b] |= set() if mutating else {tag}
            self.present[b] |= set() if mutating else {tag}
            if len(self.arrived[b]) >= self.count[READS][b] and b not in self.broken:
                self.everyone[b].set()
            self.overlapped |= mutating and self.writing > 0
            self.writing += mutating
            if self.overlapped:
                self.another.set()
            wait = (self.watched and mutating and not self.waited["write"]
                    and self.count[WRITES][b] > 1 and not inline)
            self.waited["write"] |= wait
        try:
            if wait:
                self.another.wait(OVERLAP_SECONDS)
            elif self.watched and not mutating and not self.everyone[b].is_set() and (
                    self.waited["read"] or inline and alone
                    or not self.everyone[b].wait(MEET_SECONDS)):
                with self.lock:  # given up: the reads of this round that come later are apart
                    self.waited["read"] = True
                    if not self.everyone[b].is_set():
                        self.broken.add(b)
                        self.apart.append(call_id)
            yield
        finally:
            with self.lock:
                self.writing -= mutating
                self.present[b].discard(tag)


class Step(Tool):
    """look (read-only) or append (mutating: appends its tag to the log), watched."""

    parameters = {"type": "object", "properties": {
        "tag": {"type": "string"}, "fail": {"type": "boolean"}, "ctrl_c": {"type": "boolean"}},
        "required": ["tag"], "additionalProperties": False}

    def __init__(self, watch: _Watch, name: str, mutating: bool):
        self.watch, self.name, self.mutating, self.description = watch, name, mutating, name

    def run(self, ws, tag: str, fail: bool = False, ctrl_c: bool = False) -> str:
        with self.watch.running(tag, self.mutating):
            if ctrl_c:
                raise KeyboardInterrupt  # the user pressed Ctrl+C while this call ran
            if fail:
                raise ToolError(f"{tag} went wrong")
            if self.mutating:
                self.watch.log.append(tag)
        return f"{self.name} {tag} done"


def _play(executor, rounds: tuple, watched: bool = True) -> tuple[dict, str, _Watch]:
    """The script run by a real Agent with `executor`: each call's result, how it ended."""
    watch = _Watch(rounds, watched)
    with Seam(ends=(KeyboardInterrupt,)) as seam:  # the tools touch no file: no folder
        agent = seam.agent([*watch.script, "Done."], [Step(watch, "look", False),
                                                     Step(watch, "append", True)],
                           cwd=tempfile.gettempdir(), executor=executor, gates=[watch])
        agent.subscribe(watch)
        agent.chat("Look, and write.")
    return {m["tool_call_id"]: m["content"] for m in agent.messages if m["role"] == "tool"}, \
        type(seam.error).__name__ if seam.error else "answered", watch


class Outcome(tuple):
    """What a run showed that a right one does not, each as (what, in words): told against the
    same calls run in order, and by how the calls ran. A right run shows nothing."""

    def __repr__(self) -> str:
        return "; ".join(words for _, words in self) or say(
            "as in sequence; the reads met; one write at a time; every call admitted first, in "
            "call order, then run once",
            "和依次运行的结果一样；只读调用同时运行；写操作逐个运行；每个调用都先按调用顺序准入，"
            "再运行一次")


def _executor_run(executor, rounds: tuple) -> Outcome:
    """The rounds run with `executor`, beside the same calls run in order."""
    here, ended, watch = _play(executor, rounds)
    in_order, ended_in_order, sequence = _play(run_in_order, rounds, watched=False)
    stop = next(((b, i) for b, i, k in watch.where.values() if k == "Ctrl+C"), None)
    ids = [i for _, i, _ in watch.where.values()]
    # after a Ctrl+C, the reads of its round (finished or not) and the calls after it (run or
    # not) are left out, and the log is compared up to the stop
    unsure = {i for b, i, k in watch.where.values() if stop and b == stop[0] and k in READS}
    after = set(ids[ids.index(stop[1]) + 1:] if stop else ())
    facts = [("unanswered" if str(here.get(i)).startswith("[not run") else "result", say(
        f"{i}: {in_order.get(i)!r} in sequence, {here.get(i)!r} here",
        f"{i}：依次运行时是 {in_order.get(i)!r}，这里是 {here.get(i)!r}"))
        for i in dict.fromkeys([*in_order, *here])
        if i not in unsure and in_order.get(i) != here.get(i)]
    log = watch.log[:len(sequence.log)] if stop else watch.log
    facts += [("log", say(f"the log: {sequence.log} in sequence, {watch.log} here",
                          f"日志：依次运行时是 {sequence.log}，这里是 {watch.log}"))] * (
        log != sequence.log and not watch.overlapped)  # overlapping writes: in any order
    how = {"answered": say("the model's answer", "模型的回答")}
    facts += [(f"ended {ended}", say(
        f"in sequence the run ends with {how.get(ended_in_order, ended_in_order)}, here with "
        f"{how.get(ended, ended)}", f"依次运行时，运行以 {how.get(ended_in_order, ended_in_order)}"
        f" 结束，这里以 {how.get(ended, ended)} 结束"))] * (ended != ended_in_order)
    facts += [("apart", say(f"{', '.join(i for i in ids if i in watch.apart)} (reads) ran without "
                            "meeting the others", f"{'、'.join(i for i in ids if i in watch.apart)}"
                            "（只读）没有和其他只读调用同时运行"))] * bool(watch.apart)
    facts += [("overlap", say("two writes ran at once", "两个写操作同时运行了"))] * watch.overlapped
    facts += [(what, say(*ADMISSION[what])) for what in _admission(watch)]
    runs = Counter(i for what, i, _ in watch.events if what == "run")
    return Outcome(facts + [("runs", say(f"{i} ran {runs[i]} times through perform",
                                         f"{i} 经过 perform 运行了 {runs[i]} 次"))
                            for i in ids if runs[i] != 1 and i not in unsure | after])


def _admission(watch: _Watch) -> list[str]:
    """What went wrong in admission, round by round: the gate asked about the calls that reach
    it (a known tool, good arguments) in the executor's thread, once each, in call order, and
    every question before any call of the round ran there (whether a call in a pool's thread
    started before the executor asked its next question is not forced, so it is not told)."""
    wrong = []
    for b in range(len(watch.script)):
        mine = {i: k in READS + WRITES for r, i, k in watch.where.values() if r == b}
        events = [e for e in watch.events if e[1] in mine]
        last = max((n for n, e in enumerate(events) if e[0] == "ask"), default=-1)
        wrong += ["thread"] * (not all(on for what, _, on in events if what == "ask"))
        wrong += ["order"] * ([i for what, i, _ in events if what == "ask"]
                              != [i for i, due in mine.items() if due])
        wrong += ["late"] * any(what == "run" and on for what, _, on in events[:last])
    return list(dict.fromkeys(wrong if "thread" not in wrong else ["thread"]))


ADMISSION = {  # what went wrong, as the outcome says it
    "thread": ("the gate was asked in another thread than the executor's: consent questions "
               "from two threads at once would interleave",
               "询问关卡的是执行器以外的线程：两个线程同时问授权确认，问题会交错在一起"),
    "order": ("the gate was not asked about each call once, in call order, as the user answers",
              "关卡不是按调用顺序、对每个调用各问一次（用户是按这个顺序回答的）"),
    "late": ("a call ran before the gate was asked about every call: a no to a later call would "
             "come after earlier calls had changed files",
             "关卡还没问完所有调用，就有调用运行了：对后面某个调用说“不”时，前面的调用可能已经"
             "改了文件"),
}


def _executor_diagnose(args: tuple, got: Outcome, wanted: Outcome) -> str | None:
    """What the mistakes and the rule do not say: a Ctrl+C, results not given."""
    if "ended answered" in dict(got):
        return say("a Ctrl+C pressed while a call runs (KeyboardInterrupt) must reach the agent, "
                   "which stops the turn and answers every call left: don't catch it",
                   "调用运行时按下的 Ctrl+C（KeyboardInterrupt）必须传到智能体那里，由它停下这次"
                   "对话、回应剩下的每个调用：不要捕获它")
    if "unanswered" in dict(got):
        return then(say("an executor fills the dict it is given, before it returns; what it "
                        "returns is ignored. ",
                        "执行器要在返回之前填好它拿到的那个字典；它的返回值会被忽略。"),
                    say(*EXECUTOR_RULE))
    return None


def _executor_call(args: tuple) -> str:
    rounds = "\n".join(f"  {say(f'round {n}: ', f'第 {n} 轮：')}" + ", ".join(
        f"{c['id']} {c['name']}({', '.join(f'{k}={v!r}' for k, v in c['arguments'].items())})"
        for c in turn["tool_calls"]) for n, turn in enumerate(_Watch(args[0], False).script, 1))
    return say(
        "an Agent runs its calls with your executor; its model asks, one reply a round, for\n"
        f"{rounds}\nthen answers. look is read-only: it waits (up to {MEET_SECONDS:g} s) until "
        "every other look of its round runs too; append is mutating: it appends its tag to a "
        "log; fail=True makes a call fail, ctrl_c=True is a Ctrl+C pressed while it runs; "
        "lookup is no tool at all. The same calls are run in order too, in another agent",
        f"一个 Agent 用你的执行器运行它的调用；它的模型每轮回复一次，请求这些调用：\n{rounds}\n"
        f"然后给出回答。look 是只读工具：它会等（最多 {MEET_SECONDS:g} 秒）同一轮里其他每个 "
        "look 也运行起来；append 是修改类工具：它把自己的 tag 追加到日志里；fail=True 让调用"
        "失败，ctrl_c=True 表示这个调用运行时按下了 Ctrl+C；并没有叫 lookup 的工具。同样这些调用"
        "还会在另一个智能体里依次运行一遍")


def _executor_inputs():
    from hypothesis import strategies as st

    # at most 5 reads a round: a bounded pool of 5 or more (ThreadPoolExecutor's own default
    # has at least 5 workers) runs them all at once
    kinds = st.lists(st.sampled_from(["read", "write", *(k for k in KINDS if k != "Ctrl+C")]),
                     min_size=1, max_size=7).filter(lambda ks: sum(k in READS for k in ks) <= 5)

    def stopped(rounds: list) -> st.SearchStrategy:  # now and then a Ctrl+C in a write
        last = rounds[-1]
        return st.sampled_from([None, *(j for j, k in enumerate(last) if k == "write")]).map(
            lambda stop: (tuple(map(tuple, rounds[:-1])) + (
                tuple("Ctrl+C" if j == stop else k for j, k in enumerate(last)),),))

    return st.lists(kinds, min_size=1, max_size=2).flatmap(stopped)


EXECUTOR_RULE = (
    "admit every call first, one at a time, in call order, in the executor's own thread: jobs = "
    "[admit(agent, call) for call in calls]; only then run the jobs whose tool is read-only "
    "(job.tool is not None and not job.tool.mutating) at the same time, in a pool, and the "
    "others one at a time, in call order; put each result, perform(agent, job, "
    "agent.workspace), in results[job.call.id], and return once every call has its result",
    "先在执行器自己的线程里按调用顺序逐个准入每个调用：jobs = [admit(agent, call) for call in "
    "calls]；然后才把工具只读的 job（job.tool is not None and not job.tool.mutating）放进线程池"
    "同时运行，其余的按调用顺序逐个运行；每个结果 perform(agent, job, agent.workspace) "
    "都写进 results[job.call.id]，等每个调用都有了结果再返回")

EXECUTOR = Exercise(
    "ch05.executor", reads_parallel_writes_in_order, _executor_inputs, _executor_call,
    run=_executor_run, show=repr, max_examples=25, rule=EXECUTOR_RULE,
    diagnose=_executor_diagnose,
    domain=("one or two rounds of reads and writes mixed, calls that fail, unknown tools, bad "
            "arguments and a Ctrl+C", "一到两轮调用：只读和修改类混在一起，有失败的调用、不存在的"
            "工具、写错的参数，还有 Ctrl+C"),
    # the chapter's rounds (reads and writes mixed; a write, and a tool that does not exist),
    # a Ctrl+C in a write, and five reads with failing calls among them
    examples=[((("read", "write", "write", "read", "write"), ("write", "no such tool")),),
              ((("read", "write", "read fails", "Ctrl+C", "write", "bad arguments"),),),
              ((("read", "write fails", "read", "read", "write", "read", "read"),),)],
    shape=("jobs = [admit(...) for call in calls]; reads = [the jobs with a read-only tool]; "
           "with ThreadPoolExecutor() as pool: submit each read; perform each other job here, "
           "in order, into results; then results[call_id] = future.result() for each read",
           "jobs = [admit(...) for call in calls]；reads = [工具只读的 job]；"
           "with ThreadPoolExecutor() as pool：把每个只读 job 提交进去；其余的 job 在这里按顺序"
           " perform，写进 results；最后对每个只读 job，results[call_id] = future.result()"),
    equivalent={f"with ThreadPoolExecutor(max_workers=8) as pool: → with ThreadPoolExecutor("
                f"max_workers={n}) as pool:": f"a pool of {n} runs the at most 5 reads of a round "
                "at once, as one of 8 does (the check takes any pool that big: the default of "
                "ThreadPoolExecutor has 5 workers or more)" for n in (7, 9)},
    mistakes=[
        Mistake("reads = [job for job in jobs if job.tool is not None and not job.tool.mutating]",
                "reads = jobs", (
                    "the mutating calls run one at a time, each after the one before has "
                    "finished. Don't submit them to a pool that runs several at once; run them in "
                    "order, in the executor's own thread (or in a pool of one worker)",
                    "修改类调用要逐个运行，前一个结束了下一个才开始。不要把它们交给能同时运行"
                    "好几个的线程池；在执行器自己的线程里按顺序运行它们（或者交给只有一个工作"
                    "线程的线程池）")),
        Mistake("reads = [job for job in jobs if job.tool is not None and not job.tool.mutating]",
                "reads = []", (
                    "the reads never ran at the same time: each started only after the one "
                    "before had ended. Run every read-only call of the batch at once, "
                    "in a pool (pool.submit for each), not one after the other, and not only the "
                    "reads that come next to each other: writes may stand between them",
                    "只读调用从来没有同时运行过：前一个结束了，后一个才开始。要把这一批"
                    "里所有只读的调用放进线程池同时运行（每个都 pool.submit），不要一个接一个地"
                    "运行，也不要只让相邻的只读调用并行：它们之间可能隔着写操作")),
        Mistake("job.tool is not None and not job.tool.mutating", "not job.tool.mutating", (
            "a call of a tool that does not exist gets a Job whose tool is None and whose "
            "refusal is its whole result. Don't read job.tool.mutating when job.tool is None: "
            "run such a job as the others, one at a time (perform returns its refusal)",
            "请求一个不存在的工具时，admit 给它的 Job 里 tool 是 None，refusal 就是它的全部"
            "结果。job.tool 是 None 时不要去读 job.tool.mutating：像其余的 job 一样逐个运行它"
            "（perform 会返回它的拒绝理由）")),
        Mistake("results[call_id] = future.result()", "results[call_id] = future", (
            "a result is text, what the model reads: the text perform returns (a Future's "
            ".result(), not the Future; not the Job admit made)",
            "结果是文本，是给模型读的：是 perform 返回的文本（Future 要取 .result()，"
            "不是 Future 本身；也不是 admit 返回的 Job）")),
        Mistake("if job.call.id not in running:", "if True:", (
            "a read ran twice: run each job once, either in the pool (a read) or in order (the "
            "others), never both. A write that runs twice writes twice",
            "有只读调用运行了两次：每个 job 只运行一次，要么在线程池里（只读的），要么按顺序"
            "逐个运行（其余的），不能两样都做。写操作运行两次，就会写两次")),
    ],
)


# --- ch05.lock_key -----------------------------------------------------------------------


def file_key(workspace, path):
    """The file `path` names, as the key of its lock."""
    return (workspace.cwd / path).resolve()


FILES = ("a.txt", "b.txt", "sub/c.txt", "文档/笔记.md", "файл.txt")
# links: to a file, to a link, to a file not written yet, by an absolute target, to folders
LINKS = {"link.txt": "a.txt", "chain.txt": "link.txt", "dangling.txt": "new.txt",
         "abs.txt": "/b.txt", "alias": "sub", "链接": "文档"}
CWDS = ("", "sub", "文档", "alias")  # the workspace's cwd in W (alias: Workspace resolves it)
NAMES = ("a.txt", "b.txt", "c.txt", "new.txt", "link.txt", "chain.txt", "dangling.txt",
         "abs.txt", "笔记.md", "файл.txt", "sub", "文档")


class Moved(Exception):
    """The answer moved the process's working directory, or the workspace."""


def _in_folders(answer, cwd: str, path: str, absolute: bool):
    """The answer's key for `path`, in a workspace whose cwd is W/`cwd`, while the process
    works in P, the folder that holds W: made anew (a temporary folder), and shown with the
    folders' names."""
    with Seam({f"W/{name}": name for name in FILES}, ends=()) as seam:  # it sets os.getcwd() back
        process = seam.roots[0].resolve()
        folder = process / "W"
        for name, target in LINKS.items():
            with contextlib.suppress(OSError):  # no links here (Windows without the right)
                (folder / name).symlink_to(str(folder) + target if target[0] == "/" else target,
                                           target_is_directory=(folder / target).is_dir())
        places, workspace = {folder: "W", process: "P"}, Workspace(folder / cwd)
        before = workspace.cwd
        os.chdir(process)
        try:
            key = answer(workspace, f"{folder}/{path}" if absolute else path)
        except Exception as error:  # what it says of the folders, by their names
            error.args = tuple(scrub(a, places) if isinstance(a, str) else a for a in error.args)
            if isinstance(getattr(error, "filename", None), str):
                error.filename = scrub(error.filename, places)
            raise
        moved = os.getcwd()
        moves = [f"os.getcwd() == {moved!r}"] * (Path(moved) != process) + [
            f"workspace.cwd == {workspace.cwd!r}"] * (workspace.cwd != before)
        if moves:
            raise Moved(scrub(say("afterwards, ", "之后，") + ", ".join(moves), places))
        return type(key)(scrub(str(key), places)) if isinstance(key, (str, Path)) else key


def _key_inputs():
    from hypothesis import strategies as st

    @st.composite
    def inputs(draw):
        absolute = draw(st.integers(0, 4)) == 4  # now and then (shrunk: not)
        cwd = draw(st.sampled_from(CWDS))
        depth, parts = 0 if absolute else len(Path(cwd).parts), []
        for _ in range(draw(st.integers(0, 3))):  # folders on the way, . and .. among them
            part = draw(st.sampled_from((".", "..", "sub", "alias", "文档", "链接")))
            if part == ".." and depth == 0:  # never above W
                continue
            depth += -1 if part == ".." else part != "."
            parts.append(part)
        parts.append(draw(st.sampled_from(NAMES)))
        path = "/".join(parts) + draw(st.sampled_from(("", "", "/")))
        return cwd, ("./" if draw(st.booleans()) and not absolute else "") + path, absolute

    return inputs()


def _key_call(args: tuple[str, str, bool]) -> str:
    cwd, path, absolute = args
    given = f"str(W) + {'/' + path!r}" if absolute else repr(path)
    return say(
        "W, a temporary folder, holds a.txt, b.txt, sub/c.txt, 文档/笔记.md and файл.txt; links "
        "link.txt → a.txt, chain.txt → link.txt, dangling.txt → new.txt (not written yet), "
        "abs.txt → W/b.txt (an absolute target), alias → sub and 链接 → 文档. The process works "
        "in P, the folder that holds W",
        "W 是一个临时文件夹，里面有 a.txt、b.txt、sub/c.txt、文档/笔记.md 和 файл.txt；还有链接 "
        "link.txt → a.txt、chain.txt → link.txt、dangling.txt → new.txt（还没写出来）、"
        "abs.txt → W/b.txt（目标是绝对路径）、alias → sub 和 链接 → 文档。进程的工作目录是 W 所在的"
        "文件夹 P") + f"\nworkspace.cwd = W{'/' if cwd else ''}{cwd}\nfile_key(workspace, {given})"


KEY_RULE = ("the key is the file itself: the path made absolute against the workspace's cwd (not "
            "the process's), with . and .. gone and links followed: "
            "(workspace.cwd / path).resolve()",
            "键就是文件本身：以工作区的 cwd（不是进程的）为基准把路径变成绝对路径，去掉 . 和 ..，"
            "并且跟随链接：(workspace.cwd / path).resolve()")


def _both(note: tuple[str, str]) -> tuple[str, str]:
    """A note, then the rule, in both languages."""
    return note[0] + KEY_RULE[0][0].upper() + KEY_RULE[0][1:], note[1] + KEY_RULE[1]


LOCK_KEY = Exercise(
    "ch05.lock_key", file_key, _key_inputs, _key_call, run=_in_folders, rule=KEY_RULE,
    max_examples=50,
    domain=("paths with ./, .., links, trailing slashes, absolute or not, to files written or "
            "not, from W or a folder in it", "各种写法的路径（带 ./、..、链接、末尾斜杠，绝对"
            "或相对，指向已写出或还没写的文件，从 W 或它里面的文件夹出发）"),
    shape=("one expression: join the path to workspace.cwd, then resolve() it",
           "一个表达式：把路径接在 workspace.cwd 后面，再 resolve()"),
    # the chapter's names of one file, and today's cases: another file, folders, links, a file
    # not written yet, a workspace in a subfolder (after a `cd`)
    examples=[("", "a.txt", False), ("", "./a.txt", False), ("", "sub/../a.txt", False),
              ("", "a.txt", True), ("", "link.txt", False), ("", "b.txt", False),
              ("", "sub/c.txt", False), ("", "alias/c.txt", False), ("", "new.txt", False),
              ("sub", "c.txt", False), ("sub", "a.txt", False), ("sub", "../link.txt", False),
              ("", "chain.txt/", False), ("文档", "../链接/笔记.md", False)],
    mistakes=[
        Mistake("(workspace.cwd / path).resolve()", "Path(path)", _both((
            "the path's text is no key: the model may name one file in many ways (a.txt, "
            "./a.txt, sub/../a.txt, its absolute path, a link to it), and each text would get "
            "a lock of its own, so two writes to one file would run at the same time; and the "
            "same text in two working directories (after a `cd`) names two files. ",
            "路径的文本当不了键：模型可以用很多种写法指同一个文件（a.txt、./a.txt、"
            "sub/../a.txt、它的绝对路径、指向它的链接），每种写法都会有自己的一把锁，"
            "于是对同一个文件的两次写入会同时运行；而同样的文本在两个工作目录里"
            "（执行了 `cd` 之后）指的是两个文件。"))),
        Mistake("(workspace.cwd / path).resolve()", "Path(path).resolve()", _both((
            "a relative path is relative to the workspace's cwd, which moves with the agent's "
            "`cd`, not to the process's (Path.cwd(), where the notebook's kernel runs): "
            "Path(path).resolve() and os.path.abspath(path) make it absolute against the wrong "
            "folder. Start from workspace.cwd / path. ",
            "相对路径是相对于工作区的 cwd 的，它随智能体的 `cd` 移动，而不是相对于进程的 "
            "cwd（Path.cwd()，也就是笔记本内核运行的地方）：Path(path).resolve() 和 "
            "os.path.abspath(path) 都是以错误的文件夹为基准变成绝对路径的。"
            "要从 workspace.cwd / path 开始。"))),
        Mistake("(workspace.cwd / path).resolve()", "workspace.cwd / path", _both((
            "workspace.cwd / path makes the path absolute but leaves it as written: sub/../a.txt "
            "keeps its .., and a link keeps its own name, so one file gets two keys. .resolve() "
            "removes the .. and follows links. ",
            "workspace.cwd / path 把路径变成了绝对路径，却保留了原来的写法：sub/../a.txt 还带着 "
            "..，链接也还是它自己的名字，于是一个文件有了两个键。.resolve() 会去掉 ..，"
            "并且跟随链接。"))),
        Mistake("(workspace.cwd / path).resolve()", "Path(os.path.abspath(workspace.cwd / path))",
                _both(("os.path.abspath and os.path.normpath tidy the text (./, ..) but follow no "
                       "link: link.txt and a.txt are one file, with two keys. .resolve() follows "
                       "links. ",
                       "os.path.abspath 和 os.path.normpath 会整理文本（./、..），却不跟随链接："
                       "link.txt 和 a.txt 是同一个文件，却有两个键。.resolve() 会跟随链接。"))),
        Mistake("return (workspace.cwd / path).resolve()",
                "os.chdir(workspace.cwd); return Path(path).resolve()", (
                    "file_key must not change the process's working directory (os.chdir): it is "
                    "shared by every thread, so calls running at the same time would move each "
                    "other, and by every agent in the process. Join the path to workspace.cwd "
                    "instead: workspace.cwd / path",
                    "file_key 不能改变进程的工作目录（os.chdir）：所有线程共用这个目录，同时运行的"
                    "调用会把彼此挪走；进程里的每个智能体也都共用它。改成把路径接在 "
                    "workspace.cwd 后面：workspace.cwd / path")),
    ],
)
