"""todo_write: the agent's own plan, kept in the workspace and shown every round.

The model sends the whole list each time (no add/remove/update verbs to get
wrong), and the system prompt renders it every round, so the plan stays in view
however long the conversation grows. It changes no file, so it is not mutating:
plan mode may use it.
"""

from __future__ import annotations

from ..workspace import Workspace
from .base import Tool, ToolError

MARKS = {"pending": "[ ]", "in_progress": "[>]", "done": "[x]"}


class TodoWrite(Tool):
    name = "todo_write"
    description = (
        "Replace your todo list with `todos` (send the whole list every time). Use it for tasks of "
        "several steps: mark an item in_progress when you start it (at most one at a time) and done "
        "when it is finished. The list is shown to you every round."
    )
    parameters = {
        "type": "object",
        "properties": {
            "todos": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string", "description": "What to do, in a few words."},
                        "status": {"type": "string", "enum": list(MARKS)},
                    },
                    "required": ["content", "status"],
                    "additionalProperties": False,
                },
            },
        },
        "required": ["todos"],
        "additionalProperties": False,
    }
    mutating = False

    def run(self, ws: Workspace, todos: list[dict]) -> str:
        cleaned = [{"content": item["content"].strip(), "status": item["status"]} for item in todos]
        _check(cleaned)
        ws.todos = cleaned  # a new list: the caller's list and the old one stay untouched
        return render_todos(cleaned) or "todo list cleared"


def _check(todos: list[dict]) -> None:
    for i, item in enumerate(todos):
        if not item["content"]:
            raise ToolError(f"todos[{i}].content is empty; say what the step is")
        if item["status"] not in MARKS:
            raise ToolError(f"todos[{i}].status must be one of {', '.join(MARKS)}, got {item['status']!r}")
    busy = [i for i, item in enumerate(todos) if item["status"] == "in_progress"]
    if len(busy) > 1:
        where = ", ".join(f"todos[{i}]" for i in busy)
        raise ToolError(f"{len(busy)} items are in_progress ({where}); keep at most one in progress")


def render_todos(todos: list[dict]) -> str:
    """`[x] done`, `[>] in progress`, `[ ] pending`, one a line; "" for no list."""
    return "\n".join(f"{MARKS[item['status']]} {item['content']}" for item in todos)
