"""The gates a real session puts around every tool call, and their order.

    plan mode  -> pre-hooks -> consent -> checkpoint -> the tool -> post-hooks

Plan mode comes first: it outranks everything, `--yes` included. Hooks come before
consent, so a project's policy can veto a call before anyone is asked about it.
The checkpoint is taken last, only for a call that is really going to run.
(The chain itself, one code path for every call, is calls.py.)
"""

from __future__ import annotations

from .calls import Gate
from .tools.base import Tool
from .workspace import Workspace

PLAN_REFUSAL = ("plan mode is on: nothing may change yet. Investigate with read-only tools (read_file, glob, "
                "grep), then present a numbered plan and wait for the user to approve it")


class PlanMode(Gate):
    """While on, tools that change files or run commands are refused, whoever would allow them."""

    name = "plan mode"

    def __init__(self, on: bool = False):
        self.on = on

    def before(self, tool: Tool, args: dict, workspace: Workspace) -> str | None:
        return PLAN_REFUSAL if self.on and tool.mutating else None
