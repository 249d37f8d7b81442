"""How a batch of tool calls is run: in call order (chapter 2) or at the same time (chapter 5).

An executor fills `results` (call id -> result text) as calls finish. The loop
answers any call left without a result as interrupted, so an executor never has
to clean up after an interrupt: it just stops.

Running calls at once is safe only if they can't step on each other:
  - every call is admitted first, one at a time, so consent questions never interleave;
  - each call gets its own fork of the workspace (its own cwd); the forks are merged
    back in call order, so the outcome is what running them in sequence would give;
  - writes and edits to the same file take that file's lock, so they serialize, while
    calls on different files still run side by side.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path

from .calls import CallRunner, Job
from .messages import ToolCall


def as_they_finish(futures, cancelled: threading.Event | None = None) -> Iterator[Future]:
    """Each future as it completes, waking often: a thread blocked on a lock for good may never
    see Ctrl+C (the signal can land on another thread), so the main thread must not block long.
    A sub-agent's batch runs off the main thread: `cancelled` is how its parent's Ctrl+C reaches it."""
    pending = set(futures)
    while pending:
        if cancelled is not None and cancelled.is_set():
            raise KeyboardInterrupt
        done, pending = wait(pending, timeout=0.1, return_when=FIRST_COMPLETED)
        yield from done


def run_in_order(calls: list[ToolCall], runner: CallRunner, results: dict[str, str]) -> None:
    for call in calls:
        results[call.id] = runner.perform(runner.admit(call), runner.workspace)


class FileLocks:
    """One lock per file path, made on first use."""

    def __init__(self):
        self.guard = threading.Lock()
        self.locks: dict[Path, threading.Lock] = {}

    def __call__(self, path: Path) -> threading.Lock:
        with self.guard:
            return self.locks.setdefault(path, threading.Lock())


class RunInParallel:
    """A bounded pool for the calls of one reply. One instance may serve a whole team,
    so that workers editing the same file share its lock."""

    def __init__(self, max_workers: int = 8):
        self.max_workers = max_workers
        self.file_lock = FileLocks()

    def __call__(self, calls: list[ToolCall], runner: CallRunner, results: dict[str, str]) -> None:
        jobs = [runner.admit(call) for call in calls]  # one at a time, before anything runs
        forks = [runner.workspace.fork() for _ in jobs]
        pool = ThreadPoolExecutor(min(self.max_workers, len(jobs)), thread_name_prefix="tool")
        futures = {}
        try:
            futures = {pool.submit(self._perform, runner, job, fork): job
                       for job, fork in zip(jobs, forks, strict=True)}
            for future in as_they_finish(futures, runner.workspace.cancelled):
                results[futures[future].call.id] = future.result()
        except BaseException:
            for fork in forks:  # Ctrl+C: tell running calls to stop (bash kills its process group)
                fork.cancelled.set()
            for future, job in futures.items():  # and keep every result that did come in
                if future.done() and not future.cancelled() and future.exception() is None:
                    results.setdefault(job.call.id, future.result())
            raise
        finally:
            # Don't wait for running calls: their results are lost anyway (the loop answers
            # them as interrupted); calls not yet started never start.
            pool.shutdown(wait=False, cancel_futures=True)
        runner.workspace.merge(forks)

    def _perform(self, runner: CallRunner, job: Job, workspace) -> str:
        path = job.args.get("path") if job.tool is not None and job.tool.mutating else None
        if not isinstance(path, str):
            return runner.perform(job, workspace)
        with self.file_lock(lock_key(workspace, path)):
            return runner.perform(job, workspace)


def lock_key(workspace, path: str) -> Path:
    """The file a call will touch, links followed, so two names for one file share a lock. A path
    that can't be resolved (a link loop, a NUL byte) keys by its text: the tool reports the problem."""
    try:
        return workspace.resolve(path).resolve()
    except (OSError, RuntimeError, ValueError):
        return workspace.resolve(path)
