"""agent: hand work to sub-agents, one, or a small team working at the same time.

A sub-agent starts with a fresh history, so a broad search or a side task costs the
parent only the final report, not every file the worker read. Workers share the
parent's model connection, gates (consent, hooks) and cost accounting, but not its
history, todo list or cwd. They get every tool but this one: no recursion.

The tool itself doesn't know how to build an agent: it is handed `spawn`. `workers(parent)`
makes one that builds each worker from the parent as it is when the call runs. This
module imports the agent (chapter 1); the agent never imports this one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from .agent import Agent, KeepEverything
from .events import WorkerEvent
from .executor import as_they_finish, ctrl_c_noted
from .messages import Reply
from .text import shorten
from .tool import Tool, ToolError
from .workspace import Workspace

MAX_WORKERS = 8
AT_ONCE = 4
REPORT_LIMIT = 6_000  # characters of each report the parent sees
WORKER_ROUNDS = 20

# (name, task, workspace) -> the worker's report; workspace.cancelled set stops it
Spawn = Callable[[str, str, Workspace], str]


class AgentTool(Tool):
    name = "agent"
    description = (
        "Delegate to sub-agents with a fresh context; you get back only their reports. `task` "
        f"for one, or `tasks` (up to {MAX_WORKERS} of {{name, task}}, {AT_ONCE} at a time) for a "
        "team. Tasks must be self-contained: workers see nothing of this conversation. For broad "
        "searches or independent work."
    )
    parameters = {
        "type": "object",
        "properties": {
            "task": {"type": "string", "description": "The task for one sub-agent."},
            "tasks": {
                "type": "array", "minItems": 1, "maxItems": MAX_WORKERS,
                "items": {"type": "object", "required": ["name", "task"],
                          "properties": {"name": {"type": "string"}, "task": {"type": "string"}},
                          "additionalProperties": False},
            },
        },
        "additionalProperties": False,
    }
    mutating = True  # workers may write and run commands

    def __init__(self, spawn: Spawn):
        self.spawn = spawn

    def run(self, ws: Workspace, task: str | None = None,
            tasks: list[dict] | None = None) -> str:
        if (task is None) == (tasks is None):
            raise ToolError("give exactly one of `task` (one sub-agent) or `tasks` (a team)")
        if any(not t.strip() for t in ([task] if task is not None else [t["task"] for t in tasks])):
            raise ToolError("a task is empty: say what the worker should do, with everything it "
                            "needs to know")
        if task is not None:
            return self._report("worker", task, ws)
        names = [t["name"] for t in tasks]
        if len(set(names)) != len(names):
            raise ToolError(f"worker names must be unique, got {names}")
        reports = zip(names, self._team(tasks, ws), strict=True)
        return "\n\n".join(f"## {name}\n{report}" for name, report in reports)

    def _team(self, tasks: list[dict], ws: Workspace) -> list[str]:
        team = ws.fork()  # its own stop signal: stopping this team must not stop ws's later calls
        pool = ThreadPoolExecutor(min(AT_ONCE, len(tasks)), thread_name_prefix="worker")
        with ctrl_c_noted() as pressed:  # on the main thread (calls run in order): see executor.py
            try:
                futures = [pool.submit(self._report, t["name"], t["task"], team) for t in tasks]
                for _ in as_they_finish(futures, ws.cancelled, pressed):  # or the parent's stop
                    pass
                return [f.result() for f in futures]  # input order, whatever order they finish in
            except BaseException:
                team.cancelled.set()  # running workers stop at their next step
                raise
            finally:
                pool.shutdown(wait=False, cancel_futures=True)

    def _report(self, name: str, task: str, ws: Workspace) -> str:
        try:
            report = self.spawn(name, task, ws)
        except Exception as e:  # one worker's failure is its report; its siblings go on
            return f"[{name} failed: {type(e).__name__}: {e}]"
        return shorten(report, REPORT_LIMIT)


def workers(parent: Agent, context: Callable = KeepEverything) -> Spawn:
    """How `parent` makes a worker: its own history, todo list and cwd (a fork of the parent's);
    the parent's model, tools but this one, gates and executor, and a fresh `context()` policy.
    When the user interrupts the parent, `workspace.cancelled` is set and the worker stops too."""

    def spawn(name: str, task: str, workspace: Workspace) -> str:
        tools = [t for t in parent.tools.values() if t.name != AgentTool.name]  # no recursion
        sub = Agent(Cancellable(parent.llm, workspace.cancelled), tools, cwd=workspace.cwd,
                    prompt=parent.prompt, prompt_parts=parent.prompt_parts, context=context(),
                    max_rounds=WORKER_ROUNDS, executor=parent.executor, gates=parent.gates)
        sub.workspace.cancelled = workspace.cancelled  # its running commands are stopped with it
        sub.subscribe(lambda event: parent.emit(WorkerEvent(name, event)))
        return sub.chat(task)

    return spawn


class Cancellable:
    """The parent's model, for a worker that must stop when the parent is interrupted. Raising
    KeyboardInterrupt in the worker's thread unwinds its loop the way Ctrl+C unwinds the parent's:
    each call it was running is answered, and the worker's `chat` ends. The calls of a reply
    that arrives after the parent stopped never run (`calls.stopped`): not while the user is
    back at the prompt."""

    def __init__(self, llm, cancelled: threading.Event):
        self.llm, self.cancelled = llm, cancelled

    @property
    def model(self) -> str:
        return self.llm.model

    def chat(self, *args, **kwargs) -> Reply:
        if self.cancelled.is_set():
            raise KeyboardInterrupt
        return self.llm.chat(*args, **kwargs)
