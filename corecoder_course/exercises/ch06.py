"""Checks for the exercises of chapter 6, planning and delegation.

    ch06.todos     the todo list's rules: each item's content stripped, an empty one refused,
                   at most one item in progress, a new list
    ch06.team      run a team: every task's report in input order, at most `at_once` at a
                   time, a failure only its own report
    ch06.reviewer  a `spawn` for read-only reviewers, plugged into a real Agent's `agent` tool

All three are declared exercises (kit.py). `ch06.todos`'s reference is the engine's own
`check_todos` (tools/todo.py), on every list the tool's schema admits: 0 to 6 items, contents
with spaces around them, only spaces, newlines, tabs, other scripts, every status, two or three
in progress.

`ch06.team`'s reference is the chapter's `run_team`. Its input is a team: unique task texts, which
of them fail (and with which error), and `at_once`. The learner's answer is run with a `work`
that counts how many tasks run at once, exactly (a lock, no clock), and forces the order they
finish in, the whole of it: the first wave (the first `at_once` tasks) backwards, so the first
task finishes last, then the others in input order (and their futures complete in it, the first
only once the answer reads them, however late). Each task waits for the one before it in that
order, which a pool of `at_once` has always started already, and the first task, the last of its
wave to finish, waits for the first task after the wave to start (a pool's freed worker takes it
at once: an answer that runs the tasks wave by wave does not). A run waits a second at most in
all, so an answer that runs the tasks one at a time waits in vain once, and is told so. One example
also proves the bound: the first wave's last task waits (half a second, in vain for a right
answer) for the task after the wave to start, which only a pool of more than `at_once` starts.
What a run shows is a `Ran`: the reports, the most that ran at once, the tasks that waited in
vain. Every part of it is the same on every run.

`ch06.reviewer` plugs the learner's `spawn` into a real parent `Agent` (the harness of seams.py)
whose tools are the built-in ones and the todo list, and the `agent` tool built on that spawn; the
parent has a gate of its own, which refuses any call that names the user's secret, and the run's
working directory is an empty folder, so a worker that ignores the folder it is handed finds
nothing there. The parent's model asks for a team of one to three reviewers; each reviewer's model
(routed by its task, never a shared script: the workers run in threads) tries, round by round,
the calls its input names: reads, searches, the secret, a write, an edit, a command, a todo list,
a sub-agent of its own, and in one example the parent's Ctrl+C, as a team sees it (its
workspace's `cancelled` set while a reviewer works). What is compared is what each reviewer's
model saw, whatever events the spawn forwards: the tools it was offered, the first line of each
result it was sent, how often it was asked again after the stop; then the reports as the parent
read them, the files left changed, and how the run ended.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor, as_completed, wait
from contextlib import contextmanager
from dataclasses import dataclass, field
from traceback import walk_stack
from unittest.mock import patch

from corecoder.agent import Agent
from corecoder.calls import Gate
from corecoder.subagents import WORKER_ROUNDS, AgentTool, Cancellable
from corecoder.tool import ToolError
from corecoder.tools import default_tools
from corecoder.tools.todo import MARKS, TodoWrite, check_todos

from ..kit import Exercise, Mistake
from ..seams import Seam
from ..words import say

# --- ch06.todos ---------------------------------------------------------------------------

_CONTENTS = ["read the tests", "  fix mean  ", "", "   ", "\t", "run\nthe tests", "修好 mean",
             "写测试 ", "проверить", " x", "[x] done"]


def _todo_inputs():
    from hypothesis import strategies as st

    item = st.fixed_dictionaries({"content": st.one_of(st.sampled_from(_CONTENTS),
                                                       st.text(" ab\t\n中", max_size=6)),
                                  "status": st.sampled_from(list(MARKS))})
    return st.tuples(st.lists(item, max_size=6))


TODO_EXAMPLES = [([{"content": c, "status": s} for c, s in items],) for items in (
    [("read the tests", "done"), ("fix mean", "in_progress"), ("run the tests", "pending")],
    [(" fix mean ", "in_progress")], [("a", "in_progress"), ("b", "in_progress")],
    [("a", "pending"), ("  ", "pending")], [])]

@dataclass(frozen=True)
class Kept:
    """What came of a list handed to the answer: the list it returned, or the words of the
    ToolError it raised (any words: the model reads them, the check does not compare them), and
    whether what it returned is the caller's own list, or holds the caller's own items."""

    items: object = None
    refused: bool = False
    words: str = field(default="", compare=False)
    own: bool = False


def _kept(answer, todos: list[dict]) -> Kept:
    try:
        kept = answer(todos)
    except ToolError as e:
        return Kept(refused=True, words=str(e))
    own = kept is todos or isinstance(kept, list) and any(k is t for k in kept for t in todos)
    return Kept(kept, own=own)


def _shown_kept(kept: Kept) -> str:
    if kept.refused:
        return say("raises ToolError", "抛出 ToolError") + (f": {kept.words}" if kept.words else "")
    own = say(" (the caller's own list, or its dicts)", "（是调用方自己的列表或字典）")
    return f"{kept.items!r}" + (own if kept.own else "")


def _todos_diagnose(args, got: Kept, wanted: Kept) -> str | None:
    # the one thing told here; the rule, or a listed mistake, says the rest
    if got.own and got.items == wanted.items:
        return say("return a new list of new dicts: the caller's list, and each dict in it, are "
                   "the model's own arguments, which stay in the history as it sent them",
                   "要返回由新字典组成的新列表：调用方的列表和其中每个字典，都是模型自己发来的参数，"
                   "要按原样留在历史里")


TODOS = Exercise(
    "ch06.todos", check_todos, _todo_inputs, lambda args: f"check_todos({args[0]!r})",
    run=_kept, show=_shown_kept, diagnose=_todos_diagnose, examples=TODO_EXAMPLES,
    domain=("every list the tool's schema admits: up to six items, contents with spaces around "
            "them or only spaces, newlines, other scripts, every status",
            "工具的 JSON Schema 接受的所有列表：最多六项，内容两头带空格、只有空格、带换行、"
            "各种文字，每一种状态"),
    rule=("return a new list of {\"content\", \"status\"} items, each content stripped; raise "
          "ToolError (the model reads its words) if a content is empty once stripped, or if more "
          "than one item is in_progress. Leave the caller's list as it was",
          "返回一个新列表，每项是 {\"content\", \"status\"}，content 去掉两头的空白；如果某项"
          "去掉空白后是空的，或者不止一项是 in_progress，就抛出 ToolError（模型会读它的说明）。"
          "调用方的列表保持原样"),
    shape=("cleaned = [{content: stripped, status} for each item]; for each cleaned item: an "
           "empty content raises; count the in_progress ones, more than one raises; return cleaned",
           "cleaned = [每项的 {content: 去掉空白, status}]；逐项检查，content 为空就抛出；数一数 "
           "in_progress 的项，多于一项就抛出；返回 cleaned"),
    mistakes=[
        Mistake("if len(busy) > 1:", "if len(busy) > 2:", (
            "two items in progress is already one too many: the list says what the model is "
            "doing now, and it does one thing at a time. Refuse more than one",
            "两项 in_progress 就已经多了一项：这个列表说的是模型此刻在做什么，而它一次只做一件"
            "事。多于一项就拒绝")),
        Mistake('{"content": item["content"].strip(), "status": item["status"]}',
                '{"content": item["content"], "status": item["status"]}', (
                    "strip each content of all the whitespace around it (str.strip(): spaces, "
                    "tabs, newlines): \"  fix mean  \" is kept as \"fix mean\", and one of only "
                    "whitespace is empty, so it is refused",
                    "每项的 content 都要去掉两头所有的空白（str.strip()：空格、制表符、换行）："
                    "\"  fix mean  \" 保存为 \"fix mean\"，只有空白的内容其实是空的，要拒绝")),
        Mistake('if not item["content"]:', 'if not todos[i]["content"]:', (
            "test the content once stripped: one of only spaces or a tab says no step at all, and "
            "the model must be told",
            "要检查去掉空白之后的 content：只有空格或制表符的内容什么步骤也没说，得告诉模型")),
        Mistake('if item["status"] == "in_progress"]', 'if item["status"] != "pending"]', (
            "only in_progress counts: any number of items may be done, and a list of finished "
            "steps is a good list",
            "只数 in_progress：done 的项要多少有多少，一串做完的步骤正是好列表")),
    ],
)


# --- ch06.team ----------------------------------------------------------------------------

def run_team(tasks, work, at_once):
    """Each task's report, in input order; at most `at_once` at a time; a failure is its
    report."""
    def report(task):
        try:
            return work(task)
        except Exception as e:
            return f"[failed: {type(e).__name__}: {e}]"

    with ThreadPoolExecutor(max_workers=at_once) as pool:
        futures = [pool.submit(report, task) for task in tasks]
        return [future.result() for future in futures]


@dataclass(frozen=True)
class Team:
    """A team to run: the tasks (unique), the errors some of them raise, `at_once`."""

    tasks: tuple[str, ...]
    # (task, the error its work raises, its words: they name the task, see _futures_in_order)
    errors: tuple[tuple[str, type, str], ...]
    at_once: int
    # the bound, proven: the first wave waits (PROBE s at most) for the task after it to start,
    # which a pool of at_once never starts until one of them has finished
    probe: bool = False

    def __repr__(self) -> str:
        fails = "".join(f"; {t!r} raises {k.__name__}({words!r})" for t, k, words in self.errors)
        return f"tasks={list(self.tasks)}, at_once={self.at_once}{fails}"  # the probe: the check's


@dataclass(frozen=True)
class Ran:
    """What came of a team's run: the reports, the most tasks that ran at once, the tasks
    that waited in vain for their neighbour to finish (it never ran beside them)."""

    reports: object
    most: int
    alone: tuple[str, ...] = ()
    shuffled: bool = False  # the right reports, in another order than the tasks'
    over: bool = False  # more than at_once ran at once (told by the probe's run)


WAIT = 1.0  # seconds a run may wait in all for a neighbour that never comes
PROBE = 0.5  # seconds the probe's first wave waits for a task past it (a right answer: in vain)
IN_ORDER = 5.0  # seconds a future waits for the one before it: never, unless the answer drops it


class _Work:
    """The `work` a team runs: it counts the tasks inside it at once, and forces the order they
    finish in (the docstring of this module says how)."""

    def __init__(self, team: Team):
        # the thread that runs the answer, and so reads the futures (_futures_in_order)
        self.team, self.lock, self.reader = team, threading.Lock(), threading.get_ident()
        self.running = self.most = 0
        # each task's events: its work started, its work done, its future completed
        self.started, self.done, self.completed = ({t: threading.Event() for t in team.tasks}
                                                   for _ in range(3))
        self.deadline, self.alone = time.monotonic() + WAIT, []
        tasks, self.wave = team.tasks, team.tasks[:team.at_once]
        order = [*reversed(self.wave), *tasks[team.at_once:]]
        self.after = dict(zip(order[1:], order, strict=False))  # a task -> the one it waits for
        self.head = order[0] if order else None  # it waits until the whole first wave is in
        beyond = tasks[team.at_once] if len(tasks) > team.at_once else None
        # the probe's task (see PROBE); and the one the first task, the last of its wave to
        # finish, waits to see start: a worker freed takes the next task at once, not when the
        # whole wave is done
        self.past, self.next_wave = team.probe and beyond, team.at_once > 1 and beyond

    def _wait(self, task: str, event: threading.Event) -> None:
        if not event.wait(max(0.0, self.deadline - time.monotonic())):
            self.alone.append(task)

    def __call__(self, task: str) -> str:
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
        self.started[task].set()
        try:
            if task == self.head:
                for other in self.wave:  # all at_once inside at once: a right pool's most
                    self._wait(task, self.started[other])
                if self.past:  # the probe: a pool of at_once cannot start it now (in vain)
                    self.started[self.past].wait(PROBE)
            elif task in self.after:
                self._wait(task, self.done[self.after[task]])
            if task == self.wave[0] and self.next_wave:
                self._wait(task, self.started[self.next_wave])
            for failing, kind, words in self.team.errors:
                if failing == task:
                    raise kind(words)
            return f"report on {task}"
        finally:
            with self.lock:
                self.running -= 1
            self.done[task].set()

    def report(self, task: str) -> str:
        """What a right answer reports for `task`."""
        kind, words = next(((k, w) for t, k, w in self.team.errors if t == task), (None, ""))
        return f"report on {task}" if kind is None else f"[failed: {kind.__name__}: {kind(words)}]"

    def task_of(self, value) -> str | None:
        """The task a future's value (a report, or the error work raised) is of, if any."""
        text = value if isinstance(value, str) else str(value)
        return next((t for t in self.team.tasks if text == f"report on {t}" or f"({t})" in text),
                    None) if isinstance(value, (str, BaseException)) else None


@contextmanager
def _futures_in_order(work: _Work) -> Iterator[None]:
    """While a team runs, a future that holds a task's report completes only after the future of
    the task before it in the forced order has (IN_ORDER seconds at most), and the first of them
    only once the answer reads (`_reading`). That `work` returns in that order is not enough: a
    future is completed by its thread a moment after, and under load those moments come in any
    order, so an answer that reads reports as their futures complete (as_completed) would read
    another order each run. And an answer that comes to read late finds them all complete:
    as_completed gives those in the order of a set, the right one now and then. (Future is
    patched for the run; an answer that uses no futures runs as it would.)"""
    real = {name: getattr(Future, name) for name in ("set_result", "set_exception")}

    def in_order(name):
        def complete(future, value):
            task = work.task_of(value)
            before = work.after.get(task)
            if before and work.done[before].is_set():  # its work is done: it completes soon
                work.completed[before].wait(IN_ORDER)
            waited = time.monotonic() + IN_ORDER  # the first of them: once the answer reads
            while task == work.head and not _reading(work.reader) and time.monotonic() < waited:
                time.sleep(0.001)
            real[name](future, value)
            if task:
                work.completed[task].set()
        return complete

    with patch.multiple(Future, **{name: in_order(name) for name in real}):
        yield


# The code an answer is in while it reads its futures, or waits for its pool to end
READING = {f.__code__ for f in (Future.result, Future.exception, as_completed, wait,
                                ThreadPoolExecutor.shutdown)}


def _reading(thread: int) -> bool:
    """Whether `thread` waits, inside a read of a future or the end of its pool: it has taken
    stock of which futures are complete (a thread that waits for a worker to start, inside
    submit, has not). It waits if it is in threading's own code: a condition's wait (an
    event, a future's result, as_completed, wait), or a thread's join. (Where a read takes
    stock, as_completed and wait, it holds every future's lock, and calls none of threading.)"""
    stack = [frame.f_code for frame, _ in walk_stack(sys._current_frames()[thread])]
    return stack[0].co_filename == threading.__file__ and not READING.isdisjoint(stack)


def _ran(answer, team: Team) -> Ran:
    """The answer's run of `team`. Where several tasks finish at once, which of their futures
    completes first is up to the threads: reports that are all there, in another order, are
    told as that, not as the order one run happened to give. And how far past at_once a pool
    goes is up to the threads too, so only the probe's run counts it."""
    work = _Work(team)
    with _futures_in_order(work):
        reports = answer(list(team.tasks), work, team.at_once)
    right = [work.report(task) for task in team.tasks]
    shuffled = (isinstance(reports, list) and reports != right
                and sorted(map(repr, reports)) == sorted(map(repr, right)))
    return Ran(right if shuffled else reports, min(work.most, team.at_once),
               tuple(sorted(set(work.alone))), shuffled, team.probe and work.most > team.at_once)


ERRORS = [(RuntimeError, "the parser crashed"), (ValueError, "no such module"),
          (OSError, "disk full"), (KeyError, "lexer"), (TimeoutError, "took too long")]
TASKS = ["parser", "lexer", "tests", "docs", "CI", "解析器", "文档", "тесты", "x"]


def _team_inputs():
    from hypothesis import strategies as st

    @st.composite
    def team(draw) -> tuple[Team]:
        tasks = draw(st.lists(st.sampled_from(TASKS), unique=True, max_size=8))
        failing = [t for t in tasks if draw(st.integers(0, 3)) == 0]
        errors = tuple((t, kind, f"{words} ({t})") for t in failing
                       for kind, words in [draw(st.sampled_from(ERRORS))])
        return (Team(tuple(tasks), errors, draw(st.integers(1, 4))),)

    return team()


def _shown_ran(ran: Ran) -> str:
    told = [say("the right reports, in another order than the tasks'",
                "报告都对，但顺序和任务的不一样") if ran.shuffled
            else say(f"reports {ran.reports!r}", f"报告 {ran.reports!r}"),
            say("more than at_once at once", "同时运行的超过了 at_once 个") if ran.over
            else say(f"at most {ran.most} at once", f"同时最多 {ran.most} 个")]
    told += [say(f"{task!r} waited for another task, which never ran beside it",
                 f"{task!r} 在等另一个任务，可那个任务从没和它同时跑过") for task in ran.alone]
    return "; ".join(told)


def _team_diagnose(args: tuple[Team], got: Ran, wanted: Ran) -> str | None:
    (team,) = args
    if got.over:
        return say(f"more than {team.at_once} tasks ran at once, where at most {team.at_once} "
                   "may: a pool of at_once workers, not one per task",
                   f"同时跑的任务超过了 {team.at_once} 个，可最多只允许 {team.at_once} 个："
                   "线程池只开 at_once 个线程，而不是一个任务一个")
    if got.most < wanted.most:
        return say(f"at most {got.most} ran at once, where {wanted.most} could: submit every task "
                   "to a pool of at_once workers before waiting for any report",
                   f"同时最多只跑了 {got.most} 个，本可以跑 {wanted.most} 个：先把所有任务都交给 "
                   "at_once 个线程的线程池，再去等任何一份报告")
    if got.alone:
        return say("a worker sat idle while a task waited: submit every task to the pool before "
                   "you read any report, so that a worker that is done takes the next task at once",
                   "有任务在等，却有线程闲着：先把每个任务都交给线程池，再去读报告，这样一个线程"
                   "做完就能马上接下一个任务")
    if got.shuffled:
        return say("every report is there, in another order: the first task of the team finished "
                   "last. Return them in the order of the tasks, not the order they finished in",
                   "报告都在，但顺序不对：队里第一个任务最后才结束。要按任务的顺序返回报告，"
                   "而不是按结束的顺序")


TEAM = Exercise(
    "ch06.team", run_team, _team_inputs, lambda args: f"run_team  {args[0]!r}",
    run=_ran, show=_shown_ran, diagnose=_team_diagnose, max_examples=60, shrink=False,
    examples=[(Team(("parser", "lexer", "tests"), (), 3),),
              (Team(("parser", "lexer", "tests"), (("lexer", RuntimeError, "crashed (lexer)"),),
                    2),),
              (Team(("parser", "lexer", "tests", "docs", "CI"), (), 2, probe=True),),
              (Team(("parser", "lexer", "tests", "docs", "CI"), (), 2),)],
    domain=("teams of up to eight tasks, some failing with various errors, one to four at a time",
            "最多八个任务的团队，其中有的以各种错误失败，每次同时跑一到四个"),
    rule=("run every task with work(task) in a pool of at_once threads, submitted all at once; "
          "return the reports in the order of the tasks; a task whose work raises gets the report "
          "f\"[failed: {type(e).__name__}: {e}]\" and its siblings go on",
          "在 at_once 个线程的线程池里，用 work(task) 运行每个任务，一次全部提交；按任务的顺序"
          "返回报告；work 抛出异常的任务，报告写成 f\"[failed: {type(e).__name__}: {e}]\"，"
          "其他任务照常进行"),
    shape=("def report(task): try work(task), except Exception as e: the failed report; then with "
           "ThreadPoolExecutor(max_workers=at_once) as pool: futures = [pool.submit(report, task) "
           "for task in tasks]; return [f.result() for f in futures]",
           "def report(task)：try work(task)，except Exception as e 时返回失败报告；然后 with "
           "ThreadPoolExecutor(max_workers=at_once) as pool：futures = [pool.submit(report, "
           "task) for task in tasks]；return [f.result() for f in futures]"),
    mistakes=[
        Mistake("return [future.result() for future in futures]",
                "return [future.result() for future in as_completed(futures)]", (
                    "as_completed gives the futures in the order they finish: the parent would "
                    "read the reports shuffled, and shuffled another way by another run. Read "
                    "them in the order they were submitted",
                    "as_completed 按结束的顺序给出 future：父智能体读到的报告顺序就乱了，换一种"
                    "结束顺序又是另一种乱法。要按提交的顺序读取")),
        Mistake("futures = [pool.submit(report, task) for task in tasks]",
                "return list(pool.map(work, tasks))", (
                    "pool.map raises the first error it meets and the other reports are lost: one "
                    "worker's failure must be only its own report. Catch it around each work(task)",
                    "pool.map 遇到第一个异常就抛出，其余的报告都丢了：一个 worker 失败，只应该"
                    "体现在它自己的报告里。要在每个 work(task) 外面捕获异常")),
        Mistake("ThreadPoolExecutor(max_workers=at_once)", "ThreadPoolExecutor()", (
            "a team runs at most at_once tasks at a time: the parent's model and machine are "
            "shared, so bound the pool with max_workers=at_once",
            "一个团队同时最多跑 at_once 个任务：模型和机器都是和父智能体共用的，所以要用 "
            "max_workers=at_once 限制线程池")),
        Mistake("ThreadPoolExecutor(max_workers=at_once)", "ThreadPoolExecutor(max_workers=1)", (
            "one at a time is no team: up to at_once tasks must run at the same time, so submit "
            "every task to a pool of at_once workers before you read any result",
            "一次只跑一个就不是团队了：最多 at_once 个任务要同时运行，所以要先把每个任务都交给 "
            "at_once 个线程的线程池，再去读任何一个结果")),
        Mistake("except Exception as e:", "except (RuntimeError, ValueError) as e:", (
            "any error of a worker is only its report: catch Exception, whatever its kind",
            "worker 的任何异常都只是它自己的报告：捕获 Exception，不管是哪一种")),
        Mistake('return f"[failed: {type(e).__name__}: {e}]"', 'return f"[failed: {e}]"', (
            "the report names the error's kind, then its words: "
            "f\"[failed: {type(e).__name__}: {e}]\" (a KeyError's words alone are just a name)",
            "报告先写异常的类型，再写它的说明：f\"[failed: {type(e).__name__}: {e}]\""
            "（KeyError 的说明只有一个名字）")),
    ],
)


# --- ch06.reviewer ------------------------------------------------------------------------

def read_only_workers(parent):
    """A spawn for the parent's `agent` tool whose workers may read and search, never change
    anything: the parent's tools that are not mutating."""
    def spawn(name, task, workspace):
        tools = [t for t in parent.tools.values() if not t.mutating]
        worker = Agent(Cancellable(parent.llm, workspace.cancelled), tools, cwd=workspace.cwd,
                       max_rounds=WORKER_ROUNDS, gates=parent.gates)
        return worker.chat(task)  # it runs no command, so there is none to stop on Ctrl+C

    return spawn


# What a reviewer's model may ask for, one call a round: each kind of tool, with arguments. The
# parent's gate refuses any call that names the secret; "stop" is the parent's Ctrl+C, as the team
# sees it (its workspace's `cancelled` set), while the reviewer reads.
ATTEMPTS = {
    "read": ("read_file", {"path": "calc.py"}),
    "grep": ("grep", {"pattern": "def "}),
    "glob": ("glob", {"pattern": "*.py"}),
    "secret": ("read_file", {"path": "secret.txt"}),
    "write": ("write_file", {"path": "review.md", "content": "LGTM\n"}),
    "edit": ("edit_file", {"path": "calc.py", "old_string": "a - b", "new_string": "a + b"}),
    "bash": ("bash", {"command": "touch ran.txt"}),
    "todo": ("todo_write", {"todos": [{"content": "read calc.py", "status": "in_progress"}]}),
    "agent": ("agent", {"task": "review: again"}),
    "stop": ("read_file", {"path": "calc.py"}),
}
CALC = {"calc.py": "def add(a, b):\n    return a - b\n", "secret.txt": "the user's key\n"}


class NoSecrets(Gate):
    """The parent's gate: the user's secret is not to be read, by the parent or by a worker."""

    name = "no_secrets"

    def before(self, tool, args, workspace) -> str | None:
        return "secret.txt is the user's" if "secret" in json.dumps(args) else None


@dataclass(frozen=True)
class Reviewer:
    """One reviewer's run, as its model saw it: the tools it was offered, the first line of each
    result it was sent, and how many times it asked its model after the parent stopped."""

    name: str
    offered: tuple[str, ...]
    results: tuple[str, ...]
    after_stop: int


@dataclass(frozen=True)
class Review:
    """The run of a team of reviewers, as the check compares it."""

    reviewers: tuple[Reviewer, ...]  # in input order
    reports: str  # the agent tool's result, as the parent read it
    changed: tuple[str, ...]  # the files the team left in the project, or changed
    ended: tuple[str, ...]  # how the run ended, if not with an answer


def _reviewed(answer, attempts: tuple[tuple[str, ...], ...]) -> Review:
    tasks = [f"review: part {k + 1}" for k in range(len(attempts))]
    seen: dict[str, list] = {task: [(), (), 0] for task in tasks}  # offered, results, after stop
    handed, lock = {}, threading.Lock()

    def model(messages, tools):
        task = messages[1]["content"]
        if task not in seen:  # the parent, or a worker handed something else than its task
            if any(m["role"] == "tool" for m in messages):
                return "the team has reported"
            return {"tool_calls": [{"name": "agent", "arguments": {
                "tasks": [{"name": f"r{k + 1}", "task": t} for k, t in enumerate(tasks)]}}]}
        mine, mark = attempts[tasks.index(task)], seen[task]
        with lock:
            mark[0] = mark[0] or tuple(sorted(t["function"]["name"] for t in tools))
            mark[1] = tuple(str(m["content"]).split("\n")[0][:70] for m in messages
                            if m["role"] == "tool")
            mark[2] += task in handed and handed[task].cancelled.is_set()
        step = sum(m["role"] == "assistant" for m in messages)
        if step >= len(mine):
            return f"{task}: reviewed"
        if mine[step] == "stop" and task in handed:
            handed[task].cancelled.set()  # what the parent's Ctrl+C does to its team
        name, arguments = ATTEMPTS[mine[step]]
        return {"tool_calls": [{"name": name, "arguments": arguments}]}

    with Seam(CALC, {}) as seam:
        before, root = os.getcwd(), seam.roots[0]
        os.chdir(seam.roots[1])  # an empty folder: where a worker without the right cwd would be
        parent = seam.agent(model, [*default_tools(), TodoWrite()], gates=[NoSecrets()])
        try:
            spawn = answer(parent)

            def watched(name, task, workspace):
                handed[task] = workspace
                return spawn(name, task, workspace)

            parent.update_tools(add=[AgentTool(watched)])
            parent.chat("Review calc.py with a team.")  # a Ctrl+C ends it: the Seam keeps it
        finally:
            os.chdir(before)
            left = {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8", errors="replace")
                    for p in root.rglob("*") if p.is_file()}
    changed = tuple(sorted(name for name, text in left.items() if CALC.get(name) != text))
    results = [m["content"] for m in parent.messages if m["role"] == "tool"]
    reviewers = tuple(Reviewer(f"r{k + 1}", *seen[task]) for k, task in enumerate(tasks))
    return Review(reviewers, seam.said(results[0]) if results else "", changed,
                  tuple(seam.notes()))


def _review_inputs():
    from hypothesis import strategies as st

    kinds = [k for k in ATTEMPTS if k != "stop"]  # a stop cuts siblings short at no fixed step
    return st.tuples(st.lists(st.lists(st.sampled_from(kinds), max_size=4).map(tuple),
                              min_size=1, max_size=3).map(tuple))


def _report_of(review: Review, name: str) -> str:
    """The first line of a reviewer's report, as the parent read it."""
    _, found, rest = review.reports.partition(f"## {name}\n")
    return rest.split("\n")[0] if found else ""


def _shown_review(review: Review) -> str:
    lines = [say("what the team did:", "这个团队做了什么：")]
    for r in review.reviewers:
        if not r.offered:
            never = say("never asked its model; its report: ", "从没问过模型；它的报告：")
            lines.append(f"  {r.name}: {never}{_report_of(review, r.name)}")
            continue
        lines.append(f"  {r.name}: " + say("offered ", "提供的工具：") + ", ".join(r.offered))
        lines += [f"    → {result}" for result in r.results]
        if r.after_stop:
            lines.append("    " + say(f"asked its model {r.after_stop} more time(s) after the "
                                      "parent stopped", f"父智能体停下之后，又问了模型 "
                                      f"{r.after_stop} 次"))
    if review.changed:
        lines.append(say("  files changed: ", "  被改动的文件：") + ", ".join(review.changed))
    lines += [f"  {note}" for note in review.ended]
    return "\n".join(lines)


def _review_call(args) -> str:
    tried = "; ".join(f"r{k + 1} " + say("tries ", "尝试 ") + (", ".join(a) or "-")
                      for k, a in enumerate(args[0]))
    return say(f"a parent delegates to a team of reviewers built by your spawn: {tried}",
               f"父智能体把任务交给你的 spawn 造出来的审查团队：{tried}")


def _review_diagnose(args, got: Review, wanted: Review) -> str | None:
    pairs = list(zip(got.reviewers, wanted.reviewers, strict=False))
    silent = [g.name for g, w in pairs if w.offered and not g.offered]
    if silent:
        return say(f"{silent[0]} never asked its model anything (its report: "
                   f"{_report_of(got, silent[0])}): spawn builds a worker for each task and "
                   "returns worker.chat(task)",
                   f"{silent[0]} 从没问过模型（它的报告：{_report_of(got, silent[0])}）："
                   "spawn 要为每个任务造一个 worker，并返回 worker.chat(task)")
    extra = {t for g, _ in pairs for t in g.offered} - {t for _, w in pairs for t in w.offered}
    if extra:
        return say(f"a reviewer was offered {', '.join(sorted(extra))}: a reviewer may read and "
                   "search, never change a file, run a command or start workers of its own. Keep "
                   "the parent's tools that are not mutating (Tool.mutating)",
                   f"审查者拿到了 {', '.join(sorted(extra))}：审查者可以读、可以搜索，"
                   "但不能改文件、不能运行命令，也不能再派自己的 worker。"
                   "只保留父智能体那些不是 mutating 的工具（Tool.mutating）")
    if any(g.offered != w.offered for g, w in pairs):
        return say("a reviewer was not offered every tool that only reads: keep each of the "
                   "parent's tools that is not mutating",
                   "有的只读工具没有提供给审查者：父智能体每一个不是 mutating 的工具都要保留")
    if any(g.after_stop > w.after_stop for g, w in pairs):
        return say("when the parent stops, its workers stop too: wrap the parent's model in "
                   "Cancellable(parent.llm, workspace.cancelled), so that the worker's next model "
                   "call raises KeyboardInterrupt once the team's workspace is cancelled",
                   "父智能体停下，它的 worker 也要停下：用 Cancellable(parent.llm, "
                   "workspace.cancelled) 包住父智能体的模型，这样团队的工作区一被取消，worker "
                   "下一次调用模型就会抛出 KeyboardInterrupt")
    told = [(g, w) for g, w in pairs if g.results != w.results]
    if any("refused by no_secrets" in " ".join(w.results) for _, w in told):
        return say("the parent's gates guard its workers too: the user said the secret is not to "
                   "be read, and a worker read it. Hand the worker gates=parent.gates",
                   "父智能体的 gates 也要管住它的 worker：用户说过 secret 不许读，可 worker 读了。"
                   "把 gates=parent.gates 交给 worker")
    if told:
        return say("a worker works where it is handed: Agent(..., cwd=workspace.cwd), the fork "
                   "of the parent's folder (the results its model was sent differ)",
                   "worker 要在交给它的地方干活：Agent(..., cwd=workspace.cwd)，也就是父智能体"
                   "目录的分叉（它的模型收到的结果不一样）")


REVIEWER = Exercise(
    "ch06.reviewer", read_only_workers, _review_inputs, _review_call,
    run=_reviewed, show=_shown_review, diagnose=_review_diagnose, max_examples=40,
    examples=[((("read", "write"), ("grep", "bash", "agent")),),
              ((("edit", "todo", "glob", "secret"),),), ((("read", "stop", "read"),),),
              (((),),)],
    domain=("teams of one to three reviewers, each trying up to four calls of every kind, the "
            "secret the parent's gate guards among them, and a Ctrl+C of the parent's",
            "一到三个审查者组成的团队，每个审查者尝试最多四个各种各样的调用，其中有父智能体的 "
            "gate 守着的 secret，还有父智能体那边按下的 Ctrl+C"),
    rule=("spawn(name, task, workspace) builds a worker Agent with the parent's model (stopped "
          "with workspace.cancelled), only the parent's tools that are not mutating, the worker's "
          "own cwd, the parent's gates, and returns worker.chat(task)",
          "spawn(name, task, workspace) 造一个 worker Agent：用父智能体的模型（workspace.cancelled "
          "置位时停下），只给父智能体那些不是 mutating 的工具，用 worker 自己的 cwd 和父智能体的"
          " gates，然后返回 worker.chat(task)"),
    shape=("tools = [t for t in parent.tools.values() if not t.mutating]; worker = "
           "Agent(Cancellable(parent.llm, workspace.cancelled), tools, cwd=workspace.cwd, "
           "max_rounds=WORKER_ROUNDS, gates=parent.gates); return worker.chat(task)",
           "tools = [t for t in parent.tools.values() if not t.mutating]；worker = "
           "Agent(Cancellable(parent.llm, workspace.cancelled), tools, cwd=workspace.cwd, "
           "max_rounds=WORKER_ROUNDS, gates=parent.gates)；return worker.chat(task)"),
    mistakes=[
        Mistake("if not t.mutating]", 'if t.name != "agent"]', (
            "that is the engine's own worker, which may do anything but delegate: a reviewer "
            "changes nothing, so it gets only the tools that are not mutating",
            "这是引擎自己的 worker，除了再派 worker 什么都能做：审查者什么也不改，所以只给它"
            "不是 mutating 的工具")),
        Mistake("if not t.mutating]", 'if t.name not in ("write_file", "edit_file")]', (
            "bash changes files too (and runs anything), and agent would start workers of "
            "its own, with every tool: keep the tools that are not mutating, the flag the "
            "engine keeps for exactly this",
            "bash 也能改文件（还能运行任何命令），agent 则会再派出有全部工具的 worker："
            "只保留不是 mutating 的工具，引擎正是为此才记着这个标志")),
        Mistake("tools = [t for t in parent.tools.values() if not t.mutating]",
                "tools = list(parent.tools.values())", (
                    "with every tool of the parent, agent among them, a worker can write, run "
                    "commands and start workers of its own, without end: drop what is mutating",
                    "拿到父智能体的全部工具（包括 agent），worker 就能写文件、运行命令、再派"
                    "自己的 worker，没完没了：把 mutating 的工具去掉")),
        Mistake("return worker.chat(task)", "return worker.chat(name)", (
            "the worker sees nothing of the parent's conversation: its task is all it is told. "
            "Hand it the task, not its name",
            "worker 看不到父智能体的对话：它只知道自己的任务。要把任务交给它，而不是它的名字")),
    ],
)
