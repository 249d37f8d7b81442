"""Trusting a project: its own hooks and MCP servers run only after the user has said so.

A project's `.corecoder/hooks.json` and `.corecoder/mcp.json` name commands for this machine
to run: a hook on every tool call (read-only ones included), an MCP server at launch. In a
repository just cloned they are its author's code, not the user's. So they wait: the REPL
shows what they would run and asks once; a yes is remembered per project, in the config dir
(never in the project, where a repository could plant it), together with a fingerprint of
the files, so a later change to them (a `git pull`) asks again. With nobody to ask (`-p`),
they stay off unless `--trust-project` trusts the project for that run. The user's own files
in CORECODER_HOME are the user's: they need no trust (and started in the home folder, the
project's `.corecoder` is that folder: it is still the user's, and loaded once).

Trust is given to exactly what was shown: the question lists every command the files name
(an MCP server's `env` included: `PYTHONPATH=.` makes a harmless command run the project's
code), and where the project's `.env` would send the conversation (`routes`, given by the
command, which reads the settings); the fingerprint is of that content, never of a size or a
time. A file too large to show is not loaded at all, trusted or not (the loaders refuse it).
"""

from __future__ import annotations

import hashlib
import json
import shlex
from dataclasses import dataclass
from pathlib import Path

from .files import CONFIG_LIMIT, atomic_write, read_regular
from .workspace import project_key

FILES = ("hooks.json", "mcp.json")  # in the project's .corecoder/


@dataclass(frozen=True)
class ProjectConfig:
    """The project's own configuration files, as they are now."""

    root: Path
    files: dict[str, bytes]  # name -> contents, of the FILES that are there and can be shown
    notes: tuple[str, ...] = ()  # the rest of what trust allows: routes, files that can't be read

    @property
    def fingerprint(self) -> str:
        digest = hashlib.sha256()
        for name, data in [*sorted(self.files.items()), *((".", n.encode()) for n in self.notes)]:
            digest.update(f"{name}\0{len(data)}\0".encode() + data)
        return digest.hexdigest()

    def commands(self) -> list[str]:
        """What would run, one line each, as the question shows it."""
        lines = list(self.notes)
        for name, data in self.files.items():
            try:
                found = _commands(name, json.loads(data))
            except (ValueError, RecursionError):  # not JSON, or nested past Python's stack
                found = []
            lines += found or [f".corecoder/{name} (no command found in it)"]
        return lines


def project_folder(root: Path, home: Path) -> Path | None:
    """The project's `.corecoder`, or None where it is the user's own config dir (CoreCoder
    started in the home folder, which is no git repository: the project is the home)."""
    folder = Path(root) / ".corecoder"
    return None if folder.resolve() == Path(home).resolve() else folder


def read_project_config(root: Path, home: Path, routes: tuple[str, ...] = ()
                        ) -> ProjectConfig | None:
    """What the project at `root` would run or change, or None when nothing. `routes`: what
    its `.env` would change of where the conversation goes (said in the user's words)."""
    files, notes, folder = {}, list(routes), project_folder(root, home)
    for name in FILES if folder else ():
        path = folder / name
        if path.is_file():
            try:
                files[name] = read_regular(path, CONFIG_LIMIT)
            except OSError as e:  # too large, say: shown, and never loaded
                notes.append(f".corecoder/{name} cannot be shown ({e.strerror or e}), so it "
                             "will not be loaded")
    return ProjectConfig(Path(root), files, tuple(notes)) if files or notes else None


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
    unused = [f".corecoder/{name}" for name in project.files] + list(project.notes)
    return (f"not loaded until you trust this project: {'; '.join(unused)}. To trust it, start "
            "`corecoder` here and answer yes, or pass --trust-project")


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
                env = spec.get("env") if isinstance(spec.get("env"), dict) else {}
                command = shlex.join(str(word) for word in [spec.get("command"), *args])
                settings = "".join(f"{k}={shlex.quote(str(v))} " for k, v in env.items())
                lines.append(f"MCP server {server}: {settings}{command}")
        return lines
    return [f"hook {event} {hook.get('matcher') or '*'}: {hook.get('command')}"
            for event, hooks in data.items() if isinstance(hooks, list)
            for hook in hooks if isinstance(hook, dict)]
