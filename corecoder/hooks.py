"""Shell hooks: the user's own commands around every tool call.

`hooks.json` in the config dir and in the project's `.corecoder/`:

    {"PreToolUse":  [{"matcher": "bash", "command": "./scripts/check-command.sh"}],
     "PostToolUse": [{"matcher": "*",    "command": "echo \"$(date) $(jq -r .tool_name)\" >> log"}]}

A matcher is a tool's exact name, or "*" or "" for every tool. The hook gets the
call as JSON on stdin (tool_name, tool_input, cwd; and tool_response after). A
pre-hook that exits with 2 vetoes the call, and its stderr is the reason the model
sees. A hook that fails otherwise, or runs past its timeout, is skipped with a
warning: a broken hook must not block the work. Post-hooks only observe.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from .calls import Gate
from .tools.base import Tool
from .workspace import Workspace

EVENTS = ("PreToolUse", "PostToolUse")
VETO = 2


class HookError(ValueError):
    """A hooks.json that cannot be read; the message names the file."""


def load_hooks(*paths: Path) -> dict[str, list[dict]]:
    """The hooks of every existing file, in order (the config dir's first, then the project's)."""
    hooks: dict[str, list[dict]] = {event: [] for event in EVENTS}
    for path in paths:
        if not path.is_file():
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, RecursionError) as e:  # (nested past Python's stack: the latter)
            raise HookError(f"{path}: not valid JSON ({e})") from None
        for event in EVENTS:
            for i, hook in enumerate(data.get(event, []) if isinstance(data, dict) else []):
                if not isinstance(hook, dict) or not isinstance(hook.get("command"), str):
                    raise HookError(f"{path}: {event}[{i}] needs a \"command\" string")
                matcher = hook.get("matcher") or "*"
                hooks[event].append({"matcher": matcher, "command": hook["command"]})
    return hooks


class Hooks(Gate):
    name = "hook"

    def __init__(self, hooks: dict[str, list[dict]], timeout: float = 10.0,
                 warn: Callable[[str], None] = print):
        self.hooks = hooks
        self.timeout = timeout
        self.warn = warn

    def count(self) -> int:
        return sum(len(v) for v in self.hooks.values())

    def before(self, tool: Tool, args: dict, workspace: Workspace) -> str | None:
        for hook in self._matching("PreToolUse", tool):
            vetoed = self._run(hook, {"tool_name": tool.name, "tool_input": args}, workspace)
            if vetoed is not None:
                return vetoed or f"a PreToolUse hook ({hook['command']}) vetoed it"
        return None

    def after(self, tool: Tool, args: dict, result: str, workspace: Workspace) -> None:
        for hook in self._matching("PostToolUse", tool):
            payload = {"tool_name": tool.name, "tool_input": args, "tool_response": result}
            self._run(hook, payload, workspace)

    def _matching(self, event: str, tool: Tool) -> list[dict]:
        return [h for h in self.hooks.get(event, []) if h["matcher"] in ("*", tool.name)]

    def _run(self, hook: dict, payload: dict, workspace: Workspace) -> str | None:
        """Run one hook. Returns its stderr if it vetoed (exit 2), else None."""
        tool_name = payload["tool_name"]
        payload = json.dumps({**payload, "cwd": str(workspace.cwd)})
        # Files, not pipes, for stdin and stderr: a hook that leaves a child behind holding a
        # pipe, or that never reads a large input, could otherwise block us past any timeout.
        # (What a hook writes need not be UTF-8: a byte that is not reads as �.)
        text = {"encoding": "utf-8", "errors": "replace"}
        with tempfile.TemporaryFile("w+", **text) as stdin, \
                tempfile.TemporaryFile("w+", **text) as stderr:
            stdin.write(payload)
            stdin.seek(0)
            try:  # its own process group, so a timeout kills whatever the hook started too
                env = {**os.environ, "CORECODER_TOOL": tool_name}
                proc = subprocess.Popen(["bash", "-c", hook["command"]], stdin=stdin, stderr=stderr,
                                        stdout=subprocess.DEVNULL, cwd=workspace.cwd, env=env,
                                        start_new_session=True)
            except OSError as e:
                self.warn(f"hook skipped: `{hook['command']}` could not start ({e})")
                return None
            try:
                code = proc.wait(timeout=self.timeout)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                self.warn(f"hook skipped: `{hook['command']}` ran past {self.timeout:g} s")
                return None
            stderr.seek(0)
            said = stderr.read().strip()
        if code == VETO:
            return said
        if code != 0:
            self.warn(f"hook `{hook['command']}` failed (exit {code}): {said[:200]}")
        return None
