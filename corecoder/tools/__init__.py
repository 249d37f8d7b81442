"""The built-in tools. `default_tools()` makes a fresh set for each agent."""

from __future__ import annotations

from .base import Tool, ToolError
from .bash import Bash
from .edit import EditFile
from .read import ReadFile
from .search import Glob, Grep
from .todo import TodoWrite
from .write import WriteFile

__all__ = ["Bash", "EditFile", "Glob", "Grep", "ReadFile", "Tool", "ToolError", "TodoWrite", "WriteFile",
           "default_tools"]


def default_tools() -> list[Tool]:
    return [ReadFile(), WriteFile(), EditFile(), Glob(), Grep(), Bash(), TodoWrite()]
