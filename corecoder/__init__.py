"""CoreCoder: a small, real coding agent, built to be read.

`from corecoder import Agent` works as usual, but each name is imported on first use
(PEP 562's module `__getattr__`), so `corecoder --version` loads almost nothing and
nothing here ever pulls in `openai`, `rich` or `prompt_toolkit` (ARCHITECTURE, principle 7).
The trick is worth its lines: importing the engine eagerly costs ~40 ms, against a cold
start of ~23 ms for `corecoder --version` (benchmarks/README.md).

Where each thing happens, by the chapter that builds it: the one map of the package.
benchmarks/lines.py reads each module's layer from it (the budgets and tests/test_layers.py
use those layers), and a test holds README.md's layout, in both languages, to it.

    layer    where             what happens there
    1        messages.py       messages, tool calls, check_history: the one rule of a legal history
    1        events.py         the typed events the agent emits: its one observation seam
    1        agent.py          the loop, its seams (small protocols), the prompt and the state
    1        __init__.py       this front door: every public name, imported on first use
    2        tool.py           what a tool is (a name, a schema, run) and the schema check
    2        calls.py          the one path every tool call takes: admit (gates), perform, bound
    2        workspace.py      where the tools act: the working directory, the project's root
    2        files.py          file IO that a hostile project cannot turn: atomic, bounded
    2        text.py           the one way an output is cut to size, and the marker that says so
    2        tools/            the built-in tools: read, write, edit, glob, grep, bash
    3        scripted.py       ScriptedLLM and FunctionLLM: models that run offline
    3        llm.py            the real client: one streamed call, retries, clear errors
    3        stream.py         a streamed reply put back together, in every provider's dialect
    4        context.py        what the model is sent each round: three-tier compaction
    4        tokens.py         token estimates, anchored on the provider's own count
    5        executor.py       the calls of one reply at once: admitted in order, merged in order
    6        subagents.py      the agent tool: sub-agents and bounded teams, built by their parent
    6        tools/todo.py     the todo list, told to the model as state
    7        hooks.py          the user's shell hooks: a gate around every call
    7        mcp/              the MCP client: other programs' tools, over stdio
    8        permissions.py    consent and plan mode: gates
    8        checkpoints.py    a copy before each change, and undo
    8        trust.py          a cloned project's hooks and servers wait for its owner's word
    8        instructions.py   the project's AGENTS.md or CLAUDE.md, read from the project only
    9        session.py        the session log: append-only, resumed as a legal history
    9        assemble.py       build_agent: the finished engine, assembled in one place
    cli      cli/              the command: settings, prices, -p and its printer, the REPL
    cli      __main__.py       python -m corecoder
    testing  testing/          shipped test infrastructure: the loopback server, the faults
    demo     demo/             the offline demo and its small buggy project

Beside it, in the same distribution: `corecoder_course`, what a chapter calls (check, show,
the widgets) and the checkers; it imports the engine, which never imports it. In the
repository only: `authoring/`, the tools that write the course (sync, execute, the student
edition, the coverage tables' reader).
"""

from __future__ import annotations

import importlib

# --- defences: the lazy front door (plumbing: no chapter teaches it) ---------------------------

__version__ = "0.1.0"

_HOMES = {  # public name -> the module that defines it
    "Agent": "agent", "build_agent": "assemble",
    "LLM": "llm",
    "ScriptedLLM": "scripted", "FunctionLLM": "scripted", "ScriptError": "scripted",
    "Reply": "messages", "ToolCall": "messages", "Usage": "messages", "check_history": "messages",
    "IllegalHistory": "messages", "ModelError": "messages", "ContextTooLong": "messages",
    "Workspace": "workspace",
    "Tool": "tool", "ToolError": "tool", "default_tools": "tools", "ReadFile": "tools",
    "WriteFile": "tools", "EditFile": "tools", "Glob": "tools", "Grep": "tools", "Bash": "tools",
    "TodoWrite": "tools.todo",
    "Config": "cli.config", "load_config": "cli.config",  # the command's settings, as upstream's
}

__all__ = ["__version__", *_HOMES]


def __getattr__(name: str):
    if name not in _HOMES:
        raise AttributeError(f"module 'corecoder' has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_HOMES[name]}", __name__), name)


def __dir__() -> list[str]:
    return sorted(__all__)
