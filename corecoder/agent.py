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

from collections.abc import Callable
from pathlib import Path

from .calls import INTERRUPTED, CallRunner, Gate
from .context import KeepEverything
from .events import Finished, RoundStarted, ToolCallFinished, UsageReported
from .executor import run_in_order
from .messages import ToolCall, system, tool_result, user
from .prompt import BASE_PROMPT, system_prompt
from .tools import default_tools
from .tools.base import Tool
from .workspace import Workspace


class Agent:
    def __init__(self, llm, tools: list[Tool] | None = None, *, cwd: str | Path | None = None,
                 instructions: str = BASE_PROMPT, max_rounds: int = 50, context=None,
                 executor: Callable = run_in_order, gates: list[Gate] | None = None):
        self.llm = llm
        self.tools = {t.name: t for t in (default_tools() if tools is None else tools)}
        self.workspace = Workspace(cwd or Path.cwd())
        self.instructions = instructions
        self.max_rounds = max_rounds
        self.context = context or KeepEverything()
        self.executor = executor
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
                request = [system(system_prompt(self.instructions, self.workspace)), *self.messages]
                reply = self.llm.chat(request, [t.schema() for t in self.tools.values()], self.emit)
                if reply.usage:
                    self.emit(UsageReported(reply.usage, self.llm.model))
                self.messages.append(reply.message())
                if not reply.tool_calls:
                    self.emit(Finished(reply.text, "answer"))
                    return reply.text
                self.answer(reply.tool_calls)
        except KeyboardInterrupt:
            self.emit(Finished("", "interrupted"))
            raise
        text = f"[stopped after {self.max_rounds} rounds without a final answer; say 'continue' to go on]"
        self.emit(Finished(text, "max_rounds"))
        return text

    def answer(self, calls: list[ToolCall]) -> None:
        """Run the calls; whatever happens, each one gets exactly one result, in order."""
        results: dict[str, str] = {}
        try:
            self.executor(calls, self.runner, results)
        finally:
            for call in calls:
                if call.id not in results:
                    results[call.id] = INTERRUPTED
                    self.emit(ToolCallFinished(call, INTERRUPTED, "interrupted"))
                self.messages.append(tool_result(call.id, results[call.id]))
