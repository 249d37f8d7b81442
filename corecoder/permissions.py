"""Who may let a call run: plan mode, then consent. Both are gates that answer one question.

Plan mode: while it is on, tools that change files or run commands are refused, whoever
would allow them (--yes included), so the agent investigates and proposes a plan first.

Consent: calls that only read run at once (a reading tool, or a bash command that only
reads: `Tool.reads`); the others ask first. The
question is put through a callback, `ask(tool, args)`, which answers "once", "always" or
"deny": the REPL asks in the terminal, a notebook can answer with buttons, a test with a
lambda. With nobody to ask (`-p` without `--yes`), a mutating call is refused and the model
is told why. "always" is remembered per project, in the config dir, so it is never
committed by accident.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable
from pathlib import Path

from .calls import Gate
from .files import atomic_write
from .tool import Tool
from .workspace import Workspace, project_key

PLAN_REFUSAL = ("plan mode is on: nothing may change yet. Investigate with read-only tools "
                "(read_file, glob, grep), then present a numbered plan and wait for the user to "
                "approve it")


class PlanMode(Gate):
    """While on, tools that change files or run commands are refused, whoever would allow them."""

    name = "plan mode"

    def __init__(self, on: bool = False):
        self.on = on

    def before(self, tool: Tool, args: dict, workspace: Workspace) -> str | None:
        return PLAN_REFUSAL if self.on and tool.mutating else None


Ask = Callable[[Tool, dict], str]  # -> "once" | "always" | "deny"


class Consent(Gate):
    name = "consent"

    def __init__(self, ask: Ask | None = None, *, allow_all: bool = False,
                 home: Path | None = None):
        self.ask = ask
        self.allow_all = allow_all  # --yes
        self.home = home  # where "always" answers are kept; None: for this session only
        self.always: dict[str, set[str]] = {}  # project key -> tool names allowed for good
        self.asking = threading.Lock()

    def before(self, tool: Tool, args: dict, workspace: Workspace) -> str | None:
        if self.allow_all or tool.reads(args, workspace):  # --yes, or a call that only reads
            return None
        project = project_key(workspace.cwd)
        if tool.name in self._allowed(project):
            return None
        if self.ask is None:
            return (f"{tool.name} changes files or runs commands, and there is nobody to allow "
                    "it (running with -p and without --yes). Do what you can with the read-only "
                    "tools.")
        with self.asking:  # sub-agents of a team run at once: their questions must not interleave
            if tool.name in self._allowed(project):  # "always" may have come while this one waited
                return None
            answer = self.ask(tool, args)
        if answer == "always":
            self._remember(project, tool.name)
        elif answer != "once":
            return "the user said no. Ask them what to do instead, or try another way"
        return None

    def _allowed(self, project: str) -> set[str]:
        if project not in self.always:
            self.always[project] = set(self._load(project))
        return self.always[project]

    def _remember(self, project: str, name: str) -> None:
        self._allowed(project).add(name)
        if self.home is not None:
            allowed = {"always": sorted(self.always[project])}
            # a config dir that can't be written (its permissions folder is a file, say): the
            # answer still holds for this session, and the call the user allowed runs
            with contextlib.suppress(OSError):
                atomic_write(self._file(project), json.dumps(allowed, indent=1))

    def _load(self, project: str) -> list[str]:
        if self.home is None or not self._file(project).is_file():
            return []
        try:
            return list(json.loads(self._file(project).read_text(encoding="utf-8"))["always"])
        except (ValueError, KeyError, TypeError):
            return []  # a damaged file costs a question, not the session

    def _file(self, project: str) -> Path:
        return Path(self.home) / "permissions" / f"{project}.json"
