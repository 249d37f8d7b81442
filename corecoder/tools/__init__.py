"""The built-in tools that touch files and processes (chapter 2). `default_tools()` makes a
fresh set for each agent; the todo list (tools/todo.py) is chapter 6's, with the sub-agents."""

from __future__ import annotations

from ..tool import Tool, ToolError
from .bash import Bash
from .edit import EditFile
from .read import ReadFile
from .search import Glob, Grep
from .write import WriteFile

__all__ = ["Bash", "EditFile", "Glob", "Grep", "ReadFile", "Tool", "ToolError", "WriteFile",
           "default_tools"]


def default_tools() -> list[Tool]:
    return [ReadFile(), WriteFile(), EditFile(), Glob(), Grep(), Bash()]
