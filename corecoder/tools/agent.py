"""agent: hand work to sub-agents, one, or a small team working at the same time.

A sub-agent starts with a fresh history, so a broad search or a side task costs the
parent only the final report, not every file the worker read. Workers share the
parent's model connection, gates (consent, hooks) and cost accounting, but not its
history, todo list or cwd. They get every tool but this one: no recursion.

This module doesn't know how to build an agent. It is handed `spawn` when the agent
is assembled (Agent.worker), so nothing under tools/ imports the agent.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from ..executor import as_they_finish
from ..workspace import Workspace
from .base import Tool, ToolError

MAX_WORKERS = 8
AT_ONCE = 4
REPORT_LIMIT = 6_000  # characters of each report the parent sees

Spawn = Callable[[str, str, Workspace], str]  # (name, task, workspace) -> report; workspace.cancelled stops it


class AgentTool(Tool):
    name = "agent"
    description = (
        "Delegate to sub-agents with a fresh context; you get back only their reports. `task` for one, "
        f"or `tasks` (up to {MAX_WORKERS} of {{name, task}}, {AT_ONCE} at a time) for a team. Tasks must be "
        "self-contained: workers see nothing of this conversation. For broad searches or independent work."
    )
    parameters = {
        "type": "object",
        "properties": {
            "task": {"type": "string", "description": "The task for one sub-agent."},
            "tasks": {
                "type": "array", "minItems": 1, "maxItems": MAX_WORKERS,
                "items": {"type": "object", "required": ["name", "task"], "additionalProperties": False,
                          "properties": {"name": {"type": "string"}, "task": {"type": "string"}}},
            },
        },
        "additionalProperties": False,
    }
    mutating = True  # workers may write and run commands

    def __init__(self, spawn: Spawn):
        self.spawn = spawn

    def run(self, ws: Workspace, task: str | None = None, tasks: list[dict] | None = None) -> str:
        if (task is None) == (tasks is None):
            raise ToolError("give exactly one of `task` (one sub-agent) or `tasks` (a team)")
        if any(not t.strip() for t in ([task] if task is not None else [t["task"] for t in tasks])):
            raise ToolError("a task is empty: say what the worker should do, with everything it needs to know")
        if task is not None:
            return self._report("worker", task, ws)
        names = [t["name"] for t in tasks]
        if len(set(names)) != len(names):
            raise ToolError(f"worker names must be unique, got {names}")
        return "\n\n".join(f"## {name}\n{report}" for name, report in zip(names, self._team(tasks, ws), strict=True))

    def _team(self, tasks: list[dict], ws: Workspace) -> list[str]:
        pool = ThreadPoolExecutor(min(AT_ONCE, len(tasks)), thread_name_prefix="worker")
        try:
            futures = [pool.submit(self._report, t["name"], t["task"], ws) for t in tasks]
            for _ in as_they_finish(futures, ws.cancelled):  # stops when the parent's batch is interrupted
                pass
            return [f.result() for f in futures]  # input order, whatever order they finish in
        except BaseException:
            ws.cancelled.set()  # running workers stop at their next step
            raise
        finally:
            pool.shutdown(wait=False, cancel_futures=True)

    def _report(self, name: str, task: str, ws: Workspace) -> str:
        try:
            report = self.spawn(name, task, ws)
        except Exception as e:  # one worker's failure is its report; its siblings go on
            return f"[{name} failed: {type(e).__name__}: {e}]"
        if len(report) > REPORT_LIMIT:
            report = report[:REPORT_LIMIT] + f"\n[... report cut: {len(report) - REPORT_LIMIT:,} more characters]"
        return report
