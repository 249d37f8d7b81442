"""The agent loop: ask the model, run the tools it asks for, repeat until it answers.

    for each round, up to max_rounds:
        the context policy decides what the model is sent        (chapter 4)
        the model replies with text, tool calls, or both
        no tool calls: that text is the answer
        otherwise every call is run and answered, in call order  (chapters 2, 5)

Everything else plugs into seams this file already has, each a small named protocol that
`isinstance` checks: the model (`Model`), the context policy (`ContextPolicy`), the executor
and the gates around each call (`Executor`, `Gate`: calls.py), and subscribers to the events
it emits (`Subscriber`); and the tools' parts of the prompt. The defaults are chapter 1's
own: the whole history is sent, and the calls of a reply run one after another. The
finished engine (compaction, parallel calls, sub-agents, the project's instructions) is
assembled from outside, by `build_agent` (assemble.py): this file imports none of it.
"""

from __future__ import annotations

import warnings
from collections import deque
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Protocol, runtime_checkable

from .calls import Executor, Gate, run_in_order
from .events import Finished, RoundStarted, ToolCallFinished, UsageReported
from .messages import (
    INTERRUPTED,
    STATE_NOTE,
    ContextTooLong,
    Reply,
    is_state_note,
    system,
    tool_result,
    unique_ids,
    user,
)
from .tool import Tool
from .workspace import Workspace

BASE_PROMPT = """\
You are CoreCoder, a coding agent working in a project on the user's machine.
Use the tools to read, search, edit and run code. Read a file before you edit it.
Make the smallest change that does the job, then check it (run the tests if there are any).
When you are done, answer briefly: what you changed and how you checked it."""

def labelled(state: str) -> dict[str, str]:
    """A state's paragraphs by label: "Working directory: /p" is {"Working directory": ...}."""
    return {part.split(":", 1)[0]: part for part in state.strip().split("\n\n") if part}


def paragraph(text: str) -> str:
    """`text` without its blank lines: one paragraph, so `labelled` keeps it whole."""
    return "\n".join(line for line in text.splitlines() if line.strip())


@runtime_checkable
class Model(Protocol):
    """What the loop asks for each reply: the scripted models (chapter 1), the real client
    (chapter 3), or a learner's own. `emit` is handed the reply's pieces as they arrive."""

    model: str

    def chat(self, messages: list[dict], tools: list[dict] | None, emit: Callable) -> Reply: ...


@runtime_checkable
class ContextPolicy(Protocol):
    """What the model is sent each round: the history, or less of it (chapter 4 compacts).
    `attach` is called once, as the agent is made: a policy takes from it what it needs (the
    compactor: the model, a view of the tools, a way to emit). `prepare` before every model
    call; `overflow` when the provider said the last request was too long. A policy returns
    the list it was given when it has nothing to cut."""

    def attach(self, agent) -> None: ...

    def prepare(self, messages: list[dict], overflow: bool = False) -> list[dict]: ...


@runtime_checkable
class Subscriber(Protocol):
    """Anything that takes the agent's events (events.py): the CLI's renderer, a notebook's
    recording, a test's list. One that raises is reported once, and the run goes on."""

    def __call__(self, event: object) -> None: ...


class KeepEverything:
    """The simplest context policy, and the loop's default: send the whole history.
    (Chapter 4 writes one that compacts it.)"""

    def attach(self, agent) -> None:
        pass  # it needs nothing of the agent

    def prepare(self, messages: list[dict], overflow: bool = False) -> list[dict]:
        return messages


class Agent:
    """The loop, and what it runs with: a model, its tools, a workspace, the history of one
    conversation, and the seams later chapters plug into. Its methods read top to bottom in
    the order chapter 1 builds them."""

    def __init__(self, llm: Model, tools: Iterable[Tool] | None = None, *,
                 cwd: str | Path | None = None,
                 prompt: str = BASE_PROMPT, prompt_parts: Iterable[str] = (), max_rounds: int = 50,
                 context: ContextPolicy | None = None, executor: Executor | None = None,
                 gates: Iterable[Gate] = ()):
        if tools is None:  # upstream's `Agent(llm=llm)` was the finished agent: say where it is
            raise TypeError("Agent(llm, tools) runs the tools it is given (Agent(llm, []): none); "
                            "the finished agent, every built-in tool in, is build_agent(llm)")
        self.llm = llm
        self.tools = {t.name: t for t in tools}
        self.workspace = Workspace(cwd or Path.cwd())
        self.prompt = prompt  # what the agent is; the parts add to it (the project's instructions)
        self.prompt_parts = list(prompt_parts)
        self.max_rounds = max_rounds
        self.context = context or KeepEverything()
        self.executor = executor or run_in_order
        self.gates = list(gates)
        self.messages: list[dict] = []
        self.subscribers: list[Subscriber] = []
        self.failed_subscribers: list[Subscriber] = []  # each reported once
        self.first_state: str | None = None  # the state as the system prompt tells it
        self.steering: deque[str] = deque()  # what the user said while a turn ran (steer)
        self.context.attach(self)  # once: the policy takes what it needs, not the agent each round

    def subscribe(self, fn: Subscriber) -> Subscriber:
        self.subscribers.append(fn)
        return fn

    def emit(self, event) -> None:
        for fn in self.subscribers:
            try:
                fn(event)
            except Exception as error:  # a viewer's bug must not cost the user the work
                if fn not in self.failed_subscribers:
                    self.failed_subscribers.append(fn)
                    warnings.warn(f"the subscriber {fn!r} failed on {type(event).__name__}: "
                                  f"{type(error).__name__}: {error} (said once; the run goes on)",
                                  RuntimeWarning, stacklevel=2)

    def state(self) -> str:
        """What the model must always know of the agent's state, in paragraphs that each begin
        with their label: where it works, and what each tool keeps in the workspace (the todo
        tool: `Your todo list: ...`)."""
        kept = (tool.state(self.workspace) for tool in self.tools.values())
        parts = (f"Working directory: {self.workspace.cwd}", *kept)
        return "\n\n".join(paragraph(p) for p in parts if p.strip())

    def tell_state(self) -> None:
        """Make sure the model knows the state as it is now. The system prompt tells it once;
        after a change (a `cd`, a new todo list) a note at the end of the history tells what
        changed, so nothing the model was sent before is rewritten. What the model knows is
        read from the history itself, so it holds after a compaction, a resume or a reset."""
        if self.first_state is None:
            self.first_state = self.state()
        told = labelled(self.first_state)
        for m in self.messages:
            if is_state_note(m):
                told |= labelled(m["content"].removeprefix(STATE_NOTE))
        gone = {label: f"{label}: none" for label in told}  # a tool that now says nothing
        now = gone | labelled(self.state())
        news = [part for label, part in now.items() if told.get(label) != part]
        if news:
            self.messages.append(user("\n\n".join([STATE_NOTE, *news])))

    def steer(self, text: str) -> None:
        """Say `text` to the turn that is running (from another thread: the user typed while it
        ran). It joins the history at the next step boundary, once every call of the batch that
        runs now is answered; after an answer the model just gave, the turn goes on with it."""
        self.steering.append(text)  # a deque: one thread adds, the loop takes, without a lock

    def run(self) -> str:
        try:
            for n in range(1, self.max_rounds + 1):
                self.emit(RoundStarted(n))
                while self.steering:  # a step boundary: every call so far has its result
                    self.messages.append(user(self.steering.popleft()))
                self.messages = self.context.prepare(self.messages)
                self.tell_state()
                reply = self.ask()
                if reply.usage:
                    self.emit(UsageReported(reply.usage, self.llm.model))
                if not reply.tool_calls:
                    self.messages.append(reply.message())
                    if self.steering:  # the user spoke while the model answered: go on with it
                        continue
                    self.emit(Finished(reply.text, "answer"))
                    return reply.text
                self.answer(reply)
        except KeyboardInterrupt:
            self.emit(Finished("", "interrupted"))
            raise
        except Exception as error:  # the model gave up (ModelError) or a bug: say so, then re-raise
            self.emit(Finished(str(error), "error"))
            raise
        text = (f"[stopped after {self.max_rounds} rounds without a final answer; "
                "say 'continue' to go on]")
        self.emit(Finished(text, "max_rounds"))
        return text

    def ask(self) -> Reply:
        """One model call. If the provider says it is too long, compact harder and try once more."""
        schemas = [t.schema() for t in self.tools.values()]
        try:
            return self.llm.chat(self.request(), schemas, self.emit)
        except ContextTooLong:
            before = self.messages
            self.messages = self.context.prepare(self.messages, overflow=True)
            if self.messages is before:
                raise  # nothing could be cut: trying again would fail the same way
            self.tell_state()
            return self.llm.chat(self.request(), schemas, self.emit)

    def request(self) -> list[dict]:
        """The system prompt, then the history. The system prompt never changes in a session,
        so each request repeats the last one byte for byte and adds to its end: what a
        provider's prompt cache bills at a fraction of the price."""
        parts = [self.prompt, *self.prompt_parts, self.first_state or self.state()]
        return [system("\n\n".join(p for p in parts if p)), *self.messages]

    def chat(self, text: str) -> str:
        """Add a user message and run until the model answers."""
        self.messages.append(user(text))
        return self.run()

    def answer(self, reply: Reply) -> None:
        """Run the calls; whatever happens, each one gets exactly one result, in order.

        The reply and its results join the history in one step, at the end: even a second
        Ctrl+C during the clean-up can't leave a call there without its answer.
        """
        calls = reply.tool_calls = unique_ids(reply.tool_calls, self.messages)
        results: dict[str, str] = {}
        missing, status = INTERRUPTED, "interrupted"  # a call's result if it gets none: Ctrl+C ...
        try:
            self.executor(list(calls), self, results)  # a copy: its own to consume
            # ... or the executor chose to stop (it may: the loop answers what it left out) ...
            missing, status = "[not run: the batch stopped before this call]", "not_run"
        except Exception as error:  # ... or a bug stopped the batch: each says so
            missing = f"[not run: the turn stopped: {type(error).__name__}: {error}]"
            status = "not_run"
            raise
        finally:
            answers = [tool_result(c.id, results.get(c.id, missing)) for c in calls]
            self.messages += [reply.message(), *answers]
            for call in calls:
                if call.id not in results:
                    self.emit(ToolCallFinished(call, missing, status))

    def update_tools(self, add: Iterable[Tool] = (), remove: Iterable[str] = ()) -> None:
        """Take out the tools named in `remove`, then put in `add`: how tools come and go while
        the agent lives (the sub-agent tool at assembly, an MCP server's tools). The next call
        finds its tool anew, even within a round. A new dict, never a change in place: a thread
        reading the tools (a parallel call being admitted) never sees them half-changed."""
        gone = set(remove)
        kept = {name: tool for name, tool in self.tools.items() if name not in gone}
        self.tools = {**kept, **{tool.name: tool for tool in add}}
