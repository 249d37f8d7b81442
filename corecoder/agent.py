"""The agent loop: ask the model, run the tools it asks for, repeat until it answers.

    for each round, up to max_rounds:
        the context policy decides what the model is sent        (chapter 4)
        the model replies with text, tool calls, or both
        no tool calls: that text is the answer
        otherwise every call is run and answered, in call order  (chapters 2, 5)

Everything else plugs into seams this file already has: the context policy, the
executor, the gates around each call, and subscribers to the events it emits.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from .calls import INTERRUPTED, CallRunner, Gate
from .context import Compactor
from .events import Finished, RoundStarted, ToolCallFinished, UsageReported, WorkerEvent
from .executor import RunInParallel
from .messages import ContextTooLong, Reply, system, tool_result, unique_ids, user
from .prompt import BASE_PROMPT, system_prompt
from .tools import default_tools
from .tools.agent import AgentTool
from .tools.base import Tool
from .workspace import Workspace

WORKER_ROUNDS = 20


class Agent:
    def __init__(self, llm, tools: list[Tool] | None = None, *, cwd: str | Path | None = None,
                 instructions: str = BASE_PROMPT, max_rounds: int = 50, context=None,
                 executor: Callable | None = None, gates: list[Gate] | None = None):
        self.llm = llm
        if tools is None:
            tools = [*default_tools(), AgentTool(self.worker)]
        self.tools = {t.name: t for t in tools}
        self.workspace = Workspace(cwd or Path.cwd())
        self.instructions = instructions
        self.max_rounds = max_rounds
        self.context = context or Compactor()  # chapter 4; KeepEverything() sends it all
        self.executor = executor or RunInParallel()  # chapter 5; run_in_order runs calls one by one
        self.gates = list(gates or [])
        self.messages: list[dict] = []
        self.subscribers: list[Callable] = []
        self.runner = CallRunner(self.tools, self.gates, self.workspace, self.emit)

    def subscribe(self, fn: Callable) -> Callable:
        self.subscribers.append(fn)
        return fn

    def emit(self, event) -> None:
        for fn in self.subscribers:
            fn(event)

    def chat(self, text: str) -> str:
        """Add a user message and run until the model answers."""
        self.messages.append(user(text))
        return self.run()

    def run(self) -> str:
        try:
            for n in range(1, self.max_rounds + 1):
                self.emit(RoundStarted(n))
                self.messages = self.context.prepare(self.messages, self)
                reply = self.ask()
                if reply.usage:
                    self.emit(UsageReported(reply.usage, self.llm.model))
                if not reply.tool_calls:
                    self.messages.append(reply.message())
                    self.emit(Finished(reply.text, "answer"))
                    return reply.text
                self.answer(reply)
        except KeyboardInterrupt:
            self.emit(Finished("", "interrupted"))
            raise
        except Exception as error:  # the model gave up (ModelError) or a bug: say so, then let it through
            self.emit(Finished(str(error), "error"))
            raise
        text = f"[stopped after {self.max_rounds} rounds without a final answer; say 'continue' to go on]"
        self.emit(Finished(text, "max_rounds"))
        return text

    def ask(self) -> Reply:
        """One model call. If the provider says it is too long, compact harder and try once more."""
        try:
            return self.llm.chat(self.request(), [t.schema() for t in self.tools.values()], self.emit)
        except ContextTooLong:
            before = self.messages
            self.messages = self.context.prepare(self.messages, self, overflow=True)
            if self.messages is before:
                raise  # nothing could be cut: trying again would fail the same way
            return self.llm.chat(self.request(), [t.schema() for t in self.tools.values()], self.emit)

    def request(self) -> list[dict]:
        """The system prompt, rebuilt each round (it shows the todo list), then the history."""
        return [system(system_prompt(self.instructions, self.workspace)), *self.messages]

    def answer(self, reply: Reply) -> None:
        """Run the calls; whatever happens, each one gets exactly one result, in order.

        The reply and its results join the history in one step, at the end: even a second
        Ctrl+C during the clean-up can't leave a call there without its answer.
        """
        calls = reply.tool_calls = unique_ids(reply.tool_calls, self.messages)
        results: dict[str, str] = {}
        try:
            self.executor(calls, self.runner, results)
        finally:
            self.messages += [reply.message(), *(tool_result(c.id, results.get(c.id, INTERRUPTED)) for c in calls)]
            for call in calls:
                if call.id not in results:
                    self.emit(ToolCallFinished(call, INTERRUPTED, "interrupted"))

    def worker(self, name: str, task: str, workspace: Workspace) -> str:
        """Run a sub-agent: its own history, todo list and cwd; this agent's model, gates, executor.
        When the user interrupts this agent, `workspace.cancelled` is set and the worker stops too."""
        tools = [t for t in self.tools.values() if t.name != "agent"]  # no recursion
        sub = Agent(_Cancellable(self.llm, workspace.cancelled), tools, cwd=workspace.cwd,
                    instructions=self.instructions, max_rounds=WORKER_ROUNDS, executor=self.executor, gates=self.gates)
        sub.workspace.cancelled = workspace.cancelled  # its running commands are stopped with it
        sub.subscribe(lambda event: self.emit(WorkerEvent(name, event)))
        return sub.chat(task)


class _Cancellable:
    """The parent's model, for a worker that must stop when the parent is interrupted."""

    def __init__(self, llm, cancelled: threading.Event):
        self.llm, self.cancelled = llm, cancelled

    @property
    def model(self) -> str:
        return self.llm.model

    def chat(self, *args, **kwargs) -> Reply:
        if self.cancelled.is_set():
            raise KeyboardInterrupt
        return self.llm.chat(*args, **kwargs)
