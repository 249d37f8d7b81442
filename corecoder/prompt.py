"""The system prompt, rebuilt every round so it always shows the current state."""

from __future__ import annotations

from .instructions import project_instructions
from .tools.todo import render_todos
from .workspace import Workspace

BASE_PROMPT = """\
You are CoreCoder, a coding agent working in a project on the user's machine.
Use the tools to read, search, edit and run code. Read a file before you edit it.
Make the smallest change that does the job, then check it (run the tests if there are any).
For a task of several steps, keep a todo list with todo_write.
When you are done, answer briefly: what you changed and how you checked it."""


def system_prompt(base: str, workspace: Workspace) -> str:
    parts = [base, f"Working directory: {workspace.cwd}"]
    instructions = project_instructions(workspace.cwd)
    if instructions:
        parts.append(f"The project's instructions (follow them):\n\n{instructions}")
    todos = render_todos(workspace.todos)
    if todos:
        parts.append(f"Your todo list:\n{todos}")
    return "\n\n".join(parts)
