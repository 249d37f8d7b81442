"""Running the calls of one reply at the same time, safely.

The calls of a reply are not independent: they share the agent's working directory and
its files. So running them at once is safe only with three rules:
  - every call is admitted first, one at a time, so consent questions never interleave;
  - each call gets its own fork of the workspace: it starts in the directory the batch
    began in, whatever its siblings `cd` to. The forks are merged back in call order,
    also when Ctrl+C stops the batch: the last call that ended elsewhere decides where
    the agent is, as the last `cd` would in sequence;
  - writes and edits to the same file take that file's lock, so they serialize, while
    calls on different files still run side by side.
A model that needs one call to see another's effect (`cd` then `ls`) puts them in one
command, or in two replies.

An executor fills `results` (call id -> result text) as calls finish. The loop answers
any call left without a result, so on Ctrl+C an executor just stops.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections import defaultdict
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path

from .calls import Job, admit, perform
from .messages import ToolCall


class RunInParallel:
    """A bounded pool for the calls of one reply. One instance may serve a whole team,
    so that workers editing the same file share its lock."""

    def __init__(self, max_workers: int = 8):
        self.max_workers = max_workers
        self.locks: defaultdict[Path, threading.Lock] = defaultdict(threading.Lock)
        self.guard = threading.Lock()  # so two threads never make two locks for one file

    def __call__(self, calls: list[ToolCall], agent, results: dict[str, str]) -> None:
        jobs = [admit(agent, call) for call in calls]  # one at a time, before anything runs
        forks = [agent.workspace.fork() for _ in jobs]
        pool = ThreadPoolExecutor(min(self.max_workers, len(jobs)), thread_name_prefix="tool")
        futures: dict[Future, Job] = {}
        with ctrl_c_noted() as pressed:
            try:
                for job, fork in zip(jobs, forks, strict=True):  # refused: nothing to run, so
                    if job.refusal is not None:  # answered at once, in call order, without a thread
                        results[job.call.id] = perform(agent, job, fork)
                futures = {pool.submit(self.perform, agent, job, fork): job
                           for job, fork in zip(jobs, forks, strict=True) if job.refusal is None}
                for future in as_they_finish(futures, agent.workspace.cancelled, pressed):
                    results[futures[future].call.id] = future.result()
            except BaseException:
                for fork in forks:  # Ctrl+C: running calls stop (bash kills its process group)
                    fork.cancelled.set()
                for future, job in futures.items():  # and keep every result that did come in
                    if future.done() and not future.cancelled() and future.exception() is None:
                        results.setdefault(job.call.id, future.result())
                raise
            finally:
                # Don't wait for running calls: the loop answers them as interrupted; calls not
                # yet started never start. What the finished ones changed (a cd) is taken back,
                # in order.
                pool.shutdown(wait=False, cancel_futures=True)
                done = [f for f, job in zip(forks, jobs, strict=True) if job.call.id in results]
                agent.workspace.merge(done)

    def perform(self, agent, job: Job, workspace) -> str:
        path = job.args.get("path") if job.tool is not None and job.tool.mutating else None
        if not isinstance(path, str):
            return perform(agent, job, workspace)
        with self.guard:
            lock = self.locks[lock_key(workspace, path)]
        with lock:
            return perform(agent, job, workspace)


def as_they_finish(futures, *stops: threading.Event) -> Iterator[Future]:
    """Each future as it completes, waking often to look at `stops`: the Ctrl+C that
    `ctrl_c_noted` caught, or, for a sub-agent's batch off the main thread, the parent's
    `cancelled`. Any of them set raises KeyboardInterrupt here, between two waits, and after
    the last: a Ctrl+C pressed as the last one finished still stops the turn."""
    pending = set(futures)
    while True:
        if any(stop.is_set() for stop in stops):
            raise KeyboardInterrupt
        if not pending:
            return
        done, pending = wait(pending, timeout=0.1, return_when=FIRST_COMPLETED)
        yield from done


# Two details the rules need: a Ctrl+C that lands inside a lock, and two names for one file.


@contextlib.contextmanager
def ctrl_c_noted() -> Iterator[threading.Event]:
    """While the main thread starts and waits for threads, Ctrl+C only sets the event it yields;
    the code inside raises KeyboardInterrupt when it sees it. Raised at any moment instead, it
    can land inside a lock's own handling (a thread starting, a wait ending): the lock is then
    released twice ("RuntimeError: release unlocked lock"), and a stop becomes a crash. Off the
    main thread, or under a SIGINT handler other than Python's own, nothing changes."""
    pressed, previous = threading.Event(), signal.getsignal(signal.SIGINT)
    if (threading.current_thread() is not threading.main_thread()
            or previous is not signal.default_int_handler):
        yield pressed
        return
    signal.signal(signal.SIGINT, lambda *_: pressed.set())
    try:
        yield pressed
    finally:
        signal.signal(signal.SIGINT, previous)


def lock_key(workspace, path: str) -> Path:
    """The file a call will touch, links followed, so two names for one file share a lock. A
    path that can't be resolved (a link loop, a NUL byte) keys by its text: the tool reports
    the problem."""
    try:
        return workspace.resolve(path).resolve()
    except (OSError, RuntimeError, ValueError):
        return workspace.resolve(path)
