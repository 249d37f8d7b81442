"""The finished engine, assembled in one place.

`Agent` (chapter 1) runs with chapter 1's pieces: the whole history sent, calls run one
after another, the tools it is given. `build_agent` puts in the pieces of later chapters,
each through a seam the loop already had:

    tools         the built-in tools (chapter 2), the todo list and the sub-agent tool (chapter 6)
    context       three-tier compaction, sized to the model's window (chapter 4)
    executor      the calls of a reply run at the same time (chapter 5)
    prompt parts  the project's instructions, AGENTS.md or CLAUDE.md (chapter 8), and the
                  git status at the start, if asked (the command asks)
    gates         plan mode, hooks, consent, checkpoints: the ones given, in this order; then
                  the instructions of a folder below, told when a call first touches it

The CLI, the demo, the tour and the tests that want the real thing all build it here,
so there is one answer to "what is the finished agent made of".
"""

from __future__ import annotations

from pathlib import Path

from .agent import Agent
from .calls import Gate
from .context import Compactor
from .executor import RunInParallel
from .instructions import Nested, git_status, project_instructions
from .subagents import AgentTool, workers
from .tool import Tool
from .tools import default_tools
from .tools.todo import TodoWrite


def build_agent(llm, cwd: str | Path | None = None, *, tools: list[Tool] | None = None,
                window: int | None = None, plan: Gate | None = None, hooks: Gate | None = None,
                consent: Gate | None = None, checkpoints: Gate | None = None,
                instructions: bool = True, git: bool = False, max_rounds: int = 50,
                compact_at: float | None = None) -> Agent:
    """The finished agent for a project: `tools` (default: the built-in ones and the todo
    list) and the sub-agent tool. `window`: the model's context window in tokens (None: known
    from the model's name). `instructions`: read the project's AGENTS.md or CLAUDE.md, once, now
    (and a subfolder's when a call first touches it). `git`: tell the git status at the start.
    `compact_at`: the share of the window where compaction starts (None: the Compactor's 80%);
    it cuts down to 40%, or to half the mark if that is lower."""
    cwd = Path(cwd or Path.cwd()).resolve()
    # The gates' order is the order of authority:
    #   plan mode first: while it is on nothing changes, whoever would allow it (--yes included);
    #   hooks before consent: a project's policy vetoes a call before anyone is asked about it;
    #   checkpoints after them: a copy is taken only of a file a call is really going to change;
    #   a subfolder's instructions last: told only after the calls that really ran.
    nested = Nested(cwd) if instructions else None
    gates = [gate for gate in (plan, hooks, consent, checkpoints, nested) if gate is not None]
    text = project_instructions(cwd) if instructions else ""
    status = git_status(cwd) if git else ""
    parts = [f"The project's instructions (follow them):\n\n{text}"] if text else []
    parts += [f"The git status at the start (it does not update):\n{status}"] if status else []
    tools = [*default_tools(), TodoWrite()] if tools is None else tools
    marks = {} if compact_at is None else {"high": compact_at, "low": min(0.4, compact_at / 2)}
    agent = Agent(llm, tools, cwd=cwd, prompt_parts=parts, max_rounds=max_rounds,
                  context=Compactor(window, **marks), executor=RunInParallel(), gates=gates)
    agent.update_tools(add=[AgentTool(workers(agent, context=lambda: Compactor(window, **marks)))])
    return agent
