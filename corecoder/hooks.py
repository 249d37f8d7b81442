"""Shell hooks: the user's own commands around every tool call, and around each prompt.

`hooks.json` in the config dir and in the project's `.corecoder/`:

    {"PreToolUse":  [{"matcher": "bash", "command": "./scripts/check-command.sh"}],
     "PostToolUse": [{"matcher": "*",    "command": "echo \"$(date) $(jq -r .tool_name)\" >> log"}]}

A matcher is a tool's exact name, or "*" or "" for every tool. The hook gets the
call as JSON on stdin (tool_name, tool_input, cwd; and tool_response after). A
pre-hook that exits with 2 vetoes the call, and its stderr is the reason the model
sees. What a post-hook prints is added to the result (a linter's complaints about
the file just edited, say); it cannot undo the call. A hook that fails otherwise, or
runs past its timeout, is skipped with a warning: a broken hook must not block the work.

Two more events, as Claude Code has them: `UserPromptSubmit` gets {"prompt": ...}
before the prompt is sent (exit 2 refuses it, with stderr as the reason; what it
prints is added to the prompt), and `Stop` gets {"reason": ...} when a turn ends.
Their matchers are ignored. Any other event name is skipped with a warning.

Hooks written for upstream CoreCoder and for Claude Code read `tool_input.file_path`;
our file tools call it `path`, so the input a hook gets carries both.
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
from .events import Finished
from .files import CONFIG_LIMIT, read_regular
from .text import shorten
from .tool import Tool
from .workspace import Workspace

EVENTS = ("PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop")
VETO = 2
FILE_TOOLS = ("read_file", "write_file", "edit_file")  # whose `path` is a file_path elsewhere


class HookError(ValueError):
    """A hooks.json that cannot be read; the message names the file."""


class PromptRefused(Exception):
    """A UserPromptSubmit hook refused the prompt; the message is its reason."""


def load_hooks(*paths: Path, warn: Callable[[str], None] = print) -> dict[str, list[dict]]:
    """The hooks of every existing file, in order (the config dir's first, then the project's)."""
    hooks: dict[str, list[dict]] = {event: [] for event in EVENTS}
    for path in paths:
        if not path.is_file():
            continue
        try:  # never more than the trust question could show (trust.py)
            data = json.loads(read_regular(path, CONFIG_LIMIT).decode("utf-8"))
        except (ValueError, RecursionError) as e:  # (nested past Python's stack: the latter)
            raise HookError(f"{path}: not valid JSON ({e})") from None
        except OSError as e:
            raise HookError(f"{path}: cannot read it: {e.strerror or e}") from None
        unknown = sorted(set(data) - set(EVENTS)) if isinstance(data, dict) else []
        if unknown:
            warn(f"{path}: skipped the hooks of {', '.join(map(str, unknown))}: the events "
                 f"are {', '.join(EVENTS)}")
        for event in EVENTS:
            for i, hook in enumerate(data.get(event, []) if isinstance(data, dict) else []):
                if not isinstance(hook, dict) or not isinstance(hook.get("command"), str):
                    raise HookError(f"{path}: {event}[{i}] needs a \"command\" string")
                matcher = hook.get("matcher") or "*"
                hooks[event].append({"matcher": matcher, "command": hook["command"]})
    return hooks


def tool_input(tool: Tool, args: dict) -> dict:
    """The arguments as a hook sees them: with `file_path` too, for a hook written for upstream
    CoreCoder or Claude Code, whose file tools name it so."""
    if tool.name in FILE_TOOLS and "path" in args:
        return {"file_path": args["path"], **args}
    return args


class Hooks(Gate):
    name = "hook"

    def __init__(self, hooks: dict[str, list[dict]], timeout: float = 10.0,
                 warn: Callable[[str], None] = print):
        self.hooks = hooks
        self.timeout = timeout
        self.warn = warn

    def before(self, tool: Tool, args: dict, workspace: Workspace) -> str | None:
        for hook in self._matching("PreToolUse", tool):
            payload = {"tool_name": tool.name, "tool_input": tool_input(tool, args)}
            vetoed, _ = self._run(hook, payload, workspace.cwd)
            if vetoed is not None:
                return vetoed or f"a PreToolUse hook ({hook['command']}) vetoed it"
        return None

    def after(self, tool: Tool, args: dict, result: str, workspace: Workspace) -> str | None:
        printed = []
        for hook in self._matching("PostToolUse", tool):
            payload = {"tool_name": tool.name, "tool_input": tool_input(tool, args),
                       "tool_response": result}
            vetoed, out = self._run(hook, payload, workspace.cwd)
            printed += [text for text in (out, vetoed) if text]  # exit 2: its stderr, too
        return "\n".join(f"[PostToolUse hook: {text}]" for text in printed) or None

    def _matching(self, event: str, tool: Tool) -> list[dict]:
        return [h for h in self.hooks.get(event, []) if h["matcher"] in ("*", tool.name)]

    def _run(self, hook: dict, payload: dict, cwd: Path) -> tuple[str | None, str]:
        """Run one hook: (its stderr if it vetoed with exit 2, else None; what it printed)."""
        tool_name = payload.get("tool_name", "")
        payload = json.dumps({**payload, "cwd": str(cwd)})
        # Files, not pipes: a hook that leaves a child behind holding a pipe, or that never
        # reads a large input, could otherwise block us past any timeout. (What a hook writes
        # need not be UTF-8: a byte that is not reads as �.)
        text = {"encoding": "utf-8", "errors": "replace"}
        with tempfile.TemporaryFile("w+", **text) as stdin, \
                tempfile.TemporaryFile("w+", **text) as stdout, \
                tempfile.TemporaryFile("w+", **text) as stderr:
            stdin.write(payload)
            stdin.seek(0)
            try:  # its own process group, so a timeout kills whatever the hook started too
                env = {**os.environ, "CORECODER_TOOL": tool_name}
                proc = subprocess.Popen(["bash", "-c", hook["command"]], stdin=stdin, stderr=stderr,
                                        stdout=stdout, cwd=cwd, env=env, start_new_session=True)
            except OSError as e:
                self.warn(f"hook skipped: `{hook['command']}` could not start ({e})")
                return None, ""
            try:
                code = proc.wait(timeout=self.timeout)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                self.warn(f"hook skipped: `{hook['command']}` ran past {self.timeout:g} s")
                return None, ""
            stdout.seek(0)
            stderr.seek(0)
            # at most READ_LIMIT characters each (a hook may `cat` a log of gigabytes)
            out, said = (shorten(f.read(READ_LIMIT).strip(), PRINTED_LIMIT)
                         for f in (stdout, stderr))
        if code == VETO:
            return said, out
        if code != 0:
            self.warn(f"hook `{hook['command']}` failed (exit {code}): {said[:200]}")
            return None, ""
        return None, out

    # --- defences: what the command asks of them, and the habits of hooks written for upstream
    # CoreCoder and Claude Code (UserPromptSubmit, Stop) ------------------------------------

    def count(self) -> int:
        return sum(len(v) for v in self.hooks.values())

    def prompt(self, prompt: str, cwd: Path) -> str:
        """UserPromptSubmit: the prompt with what the hooks printed added, or PromptRefused."""
        for hook in self.hooks.get("UserPromptSubmit", []):
            payload = {"hook_event_name": "UserPromptSubmit", "prompt": prompt}
            vetoed, out = self._run(hook, payload, cwd)
            if vetoed is not None:
                raise PromptRefused(f"the prompt was refused by a hook, not sent: "
                                    f"{vetoed or hook['command']}")
            prompt += f"\n\n{out}" if out else ""
        return prompt

    def ended(self, event, cwd: Path) -> None:
        """Stop: a turn of the agent it subscribes to has ended (answered, or not)."""
        if isinstance(event, Finished):
            for hook in self.hooks.get("Stop", []):
                self._run(hook, {"hook_event_name": "Stop", "reason": event.reason}, cwd)


PRINTED_LIMIT = 20_000  # characters of what a hook prints that the model gets: head and tail
READ_LIMIT = 1 << 20  # characters of it read at all
