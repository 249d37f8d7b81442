"""CoreCoder: a small, real coding agent, built to be read.

`from corecoder import Agent` works as usual, but each name is imported on first use
(PEP 562's module `__getattr__`), so `corecoder --version` loads almost nothing and
nothing here ever pulls in `openai`, `rich` or `prompt_toolkit` (ARCHITECTURE, principle 7).
The trick is worth its lines: importing the engine eagerly costs ~40 ms, against a cold
start of ~23 ms for `corecoder --version` (benchmarks/README.md).
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

_HOMES = {  # public name -> the module that defines it
    "Agent": "agent", "build_agent": "assemble",
    "LLM": "llm",
    "ScriptedLLM": "scripted", "FunctionLLM": "scripted", "ScriptError": "scripted",
    "Reply": "messages", "ToolCall": "messages", "Usage": "messages", "check_history": "messages",
    "IllegalHistory": "messages", "ModelError": "messages", "ContextTooLong": "messages",
    "Workspace": "workspace",
    "Tool": "tools", "ToolError": "tools", "default_tools": "tools", "ReadFile": "tools",
    "WriteFile": "tools", "EditFile": "tools", "Glob": "tools", "Grep": "tools", "Bash": "tools",
    "TodoWrite": "tools.todo",
}

__all__ = ["__version__", *_HOMES]


def __getattr__(name: str):
    if name not in _HOMES:
        raise AttributeError(f"module 'corecoder' has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_HOMES[name]}", __name__), name)


def __dir__() -> list[str]:
    return sorted(__all__)
