"""Trusting a project: its own hooks and MCP servers run only after the user has said so.

A project's `.corecoder/hooks.json` and `.corecoder/mcp.json` name commands for this machine
to run: a hook on every tool call (read-only ones included), an MCP server at launch. In a
repository just cloned they are its author's code, not the user's. So they wait: the REPL
shows what they would run and asks once; a yes is remembered per project, in the config dir
(never in the project, where a repository could plant it), together with a fingerprint of
the files, so a later change to them (a `git pull`) asks again. With nobody to ask (`-p`),
they stay off unless `--trust-project` trusts the project for that run. The user's own files
in CORECODER_HOME are the user's: they need no trust.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from dataclasses import dataclass
from pathlib import Path

from .files import atomic_write, read_regular
from .workspace import project_key

FILES = ("hooks.json", "mcp.json")  # in the project's .corecoder/
LIMIT = 1 << 20  # bytes of each file: a config is small; a huge one is not read whole


@dataclass(frozen=True)
class ProjectConfig:
    """The project's own configuration files, as they are now."""

    root: Path
    files: dict[str, bytes]  # name -> contents, of the FILES that are there

    @property
    def fingerprint(self) -> str:
        digest = hashlib.sha256()
        for name in sorted(self.files):
            digest.update(f"{name}\0{len(self.files[name])}\0".encode() + self.files[name])
        return digest.hexdigest()

    def commands(self) -> list[str]:
        """What would run, one line each, as the question shows it."""
        lines = []
        for name, data in self.files.items():
            try:
                found = _commands(name, json.loads(data))
            except (ValueError, RecursionError):  # not JSON, or nested past Python's stack
                found = []
            lines += found or [f".corecoder/{name} (no command found in it)"]
        return lines


def read_project_config(root: Path) -> ProjectConfig | None:
    """The configuration files of the project at `root`, or None when it has none."""
    files = {}
    for name in FILES:
        path = Path(root) / ".corecoder" / name
        if path.is_file():
            try:
                files[name] = read_regular(path, LIMIT)
            except OSError as e:  # too large, say: still there, and still to be trusted
                st = path.stat()
                files[name] = f"{e}; {st.st_size} bytes at {st.st_mtime_ns}".encode()
    return ProjectConfig(Path(root), files) if files else None


def is_trusted(home: Path, project: ProjectConfig) -> bool:
    """Has the user trusted this project's configuration, as it is now?"""
    try:
        kept = json.loads(_file(home, project).read_text(encoding="utf-8"))
        return kept["fingerprint"] == project.fingerprint
    except (OSError, ValueError, KeyError, TypeError):
        return False  # never asked, or a damaged file: that costs a question, no more


def remember_trust(home: Path, project: ProjectConfig) -> None:
    record = {"project": str(project.root), "fingerprint": project.fingerprint}
    atomic_write(_file(home, project), json.dumps(record, indent=1))


def untrusted_note(project: ProjectConfig) -> str:
    names = " and ".join(f".corecoder/{name}" for name in project.files)
    return (f"this project's {names} not loaded: they run commands, and the project is not "
            "trusted yet. To trust it, start `corecoder` here and answer yes, or pass "
            "--trust-project")


def _file(home: Path, project: ProjectConfig) -> Path:
    return Path(home) / "trust" / f"{project_key(project.root)}.json"


def _commands(name: str, data) -> list[str]:
    """The commands a hooks.json or an mcp.json names (the loaders check the rest)."""
    if not isinstance(data, dict):
        return []
    if name == "mcp.json":
        servers = data.get("mcpServers")
        lines = []
        for server, spec in servers.items() if isinstance(servers, dict) else ():
            if isinstance(spec, dict):
                args = spec.get("args") if isinstance(spec.get("args"), list) else []
                command = shlex.join(str(word) for word in [spec.get("command"), *args])
                lines.append(f"MCP server {server}: {command}")
        return lines
    return [f"hook {event} {hook.get('matcher') or '*'}: {hook.get('command')}"
            for event, hooks in data.items() if isinstance(hooks, list)
            for hook in hooks if isinstance(hook, dict)]
