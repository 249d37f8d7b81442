"""todo_write: the agent's own plan, kept in the workspace and shown every round.

The model sends the whole list each time (no add/remove/update verbs to get
wrong). The list is part of the agent's state (`state`): the model is told it again
whenever it changes, and after a compaction, so the plan stays in view however long
the conversation grows. It changes no file, so it is not mutating: plan mode may use it.
(The status values are the schema's enum: `admit` has refused any other.)
"""

from __future__ import annotations

from ..tool import Tool, ToolError
from ..workspace import Workspace

MARKS = {"pending": "[ ]", "in_progress": "[>]", "done": "[x]"}


class TodoWrite(Tool):
    name = "todo_write"
    description = (
        "Replace your todo list with `todos` (send the whole list every time). Use it for tasks "
        "of several steps: mark an item in_progress when you start it (at most one at a time) "
        "and done when it is finished. The list is shown to you every round."
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
        ws.todos = check_todos(todos)
        return render_todos(ws.todos) or "todo list cleared"

    def state(self, ws: Workspace) -> str:
        return f"Your todo list:\n{render_todos(ws.todos)}" if ws.todos else "Your todo list: none"


def check_todos(todos: list[dict]) -> list[dict]:
    """The list as the tool keeps it: each item's content stripped, an empty one refused, at
    most one item in progress. A new list: the caller's, and the list kept before, stay as they
    were. (A status outside MARKS never gets here: the schema's enum refused it.)"""
    cleaned = [{"content": item["content"].strip(), "status": item["status"]} for item in todos]
    for i, item in enumerate(cleaned):
        if not item["content"]:
            raise ToolError(f"todos[{i}].content is empty; say what the step is")
    busy = [f"todos[{i}]" for i, item in enumerate(cleaned) if item["status"] == "in_progress"]
    if len(busy) > 1:
        raise ToolError(f"{len(busy)} items are in_progress ({', '.join(busy)}); keep one at most")
    return cleaned


def render_todos(todos: list[dict]) -> str:
    """`[x] done`, `[>] in progress`, `[ ] pending`, one a line; "" for no list."""
    # An item on one line, whatever the model sent: the agent's state is told in paragraphs.
    return "\n".join(f"{MARKS[i['status']]} {' '.join(i['content'].split())}" for i in todos)
