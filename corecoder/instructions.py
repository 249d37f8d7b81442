"""Project instructions: what a project tells any agent that works in it.

An AGENTS.md (or, failing that, a CLAUDE.md) in each folder from the git root down
to the cwd is added to the system prompt, outermost first, so a subfolder's notes
refine the project's; GitHub Copilot's `.github/copilot-instructions.md`, for the whole
repository, comes before them all. Read once, when the agent is assembled (build_agent), so the
system prompt stays the same all session and a provider can cache it: an edit takes
effect in the next session. Capped, so a huge file cannot crowd out the conversation.

A folder below the cwd may have notes of its own (`src/api/AGENTS.md`). They are told when a
tool first touches that folder, at the end of its result (`Nested`), so the request before
stays the prefix of the next. And the project's git status at the start (`git_status`) is told
with the instructions, as a snapshot that does not update.

Only the project's own files count. A link is skipped wherever it points: outside the project
(`AGENTS.md -> /proc/self/environ` would put the agent's environment, API key included, in
every prompt) or inside it (`-> .git/config` holds a token in the remote's URL, `-> .env` the
key the README told the user to put there). So is a file with a second name (a hard link can be
the same secret), and anything but a regular file (a FIFO would wait forever). The prompt says
which were skipped, and why.
"""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

from .calls import Gate
from .files import read_regular
from .text import shorten
from .tools.bash import git_config_runs
from .workspace import git_root

NAMES = ("AGENTS.md", "CLAUDE.md")  # the first one found in a folder wins
REPO_WIDE = Path(".github/copilot-instructions.md")  # GitHub Copilot's, at the git root
LIMIT = 16_000  # characters, all files together


def instruction_files(cwd: Path) -> list[Path]:
    cwd = Path(cwd).resolve()
    root = git_root(cwd) or cwd
    folders = [cwd, *cwd.parents]
    folders = list(reversed(folders[: folders.index(root) + 1]))  # root first, cwd last
    found = [next((d / n for n in NAMES if (d / n).exists() or (d / n).is_symlink()), None)
             for d in folders]
    return [f for f in found if f is not None]


def project_instructions(cwd: Path, limit: int = LIMIT) -> str:
    """The instruction files' text, each under its path in the project, within `limit`."""
    root = git_root(cwd) or Path(cwd).resolve()
    repo_wide = root / REPO_WIDE
    files = instruction_files(cwd)
    if repo_wide.exists() or repo_wide.is_symlink():
        files.insert(0, repo_wide)
    parts, room = [], limit
    for path in files:
        if room <= 0:
            break
        text = read_instructions(path, root, room, limit)
        parts.append(text)
        if text.startswith("From "):
            room -= len(text.split("\n", 1)[1])
    return "\n\n".join(parts)


def read_instructions(path: Path, root: Path, room: int, limit: int = LIMIT) -> str:
    """One instruction file under its path in the project, at most `room` characters of it; or
    why it was not read."""
    shown = path.relative_to(root)
    try:  # 4 bytes a character at the most: never more than the room left
        data = _own_file(path, 4 * room)
    except OSError as e:
        return f"({shown} was not read: {e.strerror or e})"
    text = data.decode("utf-8", errors="replace").strip()
    text = shorten(text, room, tail=0, note=f"instructions are limited to {limit:,} characters")
    return f"From {shown}:\n{text}"


def _own_file(path: Path, limit: int) -> bytes:
    if path.is_symlink():
        raise OSError("it is a link, and instructions are read only from the project's own files")
    if path.lstat().st_nlink > 1:
        raise OSError("it has another name (a hard link), which could be a file of secrets")
    return read_regular(path, limit, head=True)


class Nested(Gate):
    """The instructions of a folder below the start, told when a tool first touches it: a
    path the call named (read_file's file, grep's folder) or where `cd` took bash. Told at the
    end of the call's result, once a session, so nothing the model was sent before changes."""

    name = "nested instructions"

    def __init__(self, cwd: Path, limit: int = LIMIT // 4):
        cwd = Path(cwd).resolve()
        self.root = git_root(cwd) or cwd
        self.limit = limit  # each file's, since a session may touch many folders
        self.told = {cwd, *cwd.parents}  # the start's own are in the system prompt
        self.lock = threading.Lock()  # calls of one batch finish at the same time

    def after(self, tool, args: dict, result: str, workspace) -> str | None:
        path = args.get("path")
        touched = [workspace.cwd]
        if isinstance(path, str):
            try:  # a name too long, a NUL, a loop of links: the call said so; nothing to tell
                target = workspace.resolve(path).resolve()
                touched.append(target if target.is_dir() else target.parent)
            except (OSError, ValueError, RuntimeError):
                pass
        notes = [self._news(folder) for folder in touched]
        return "\n\n".join(n for n in notes if n) or None

    def _news(self, folder: Path) -> str:
        if not folder.is_relative_to(self.root):
            return ""
        inside = [folder, *folder.parents]
        with self.lock:
            new = [d for d in reversed(inside[: inside.index(self.root) + 1])
                   if d not in self.told]
            self.told.update(new)
        files = [next((d / n for n in NAMES if (d / n).exists() or (d / n).is_symlink()), None)
                 for d in new]
        return "\n\n".join(
            f"[The instructions for {f.parent.relative_to(self.root)}/ (follow them there). "
            + read_instructions(f, self.root, self.limit) + "]" for f in files if f is not None)


def git_status(cwd: Path, limit: int = 2_000) -> str:
    """The branch and the changed files as `git status --short --branch` prints them at the
    start, within `limit` characters; "" outside a repository or when git can't tell. Not run
    where the repository's own config names a program git may run (an fsmonitor, a filter):
    opening a cloned project must not run its code."""
    if git_root(cwd) is None or git_config_runs(Path(cwd).resolve()):
        return ""
    try:
        done = subprocess.run(["git", "--no-optional-locks", "status", "--short", "--branch"],
                              cwd=cwd, capture_output=True, timeout=5, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return ""
    text = done.stdout.decode("utf-8", errors="replace").strip()
    if done.returncode != 0 or not text:
        return ""
    return shorten(text, limit, tail=0, note="the rest: run git status")
