"""Project instructions: what a project tells any agent that works in it.

An AGENTS.md (or, failing that, a CLAUDE.md) in each folder from the git root down
to the cwd is added to the system prompt, outermost first, so a subfolder's notes
refine the project's. Read once, when the agent is assembled (build_agent), so the
system prompt stays the same all session and a provider can cache it: an edit takes
effect in the next session. Capped, so a huge file cannot crowd out the conversation.

Only the project's own files count. A link is skipped wherever it points: outside the project
(`AGENTS.md -> /proc/self/environ` would put the agent's environment, API key included, in
every prompt) or inside it (`-> .git/config` holds a token in the remote's URL, `-> .env` the
key the README told the user to put there). So is a file with a second name (a hard link can be
the same secret), and anything but a regular file (a FIFO would wait forever). The prompt says
which were skipped, and why.
"""

from __future__ import annotations

from pathlib import Path

from .files import read_regular
from .text import shorten
from .workspace import git_root

NAMES = ("AGENTS.md", "CLAUDE.md")  # the first one found in a folder wins
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
    parts, room = [], limit
    for path in instruction_files(cwd):
        if room <= 0:
            break
        shown = path.relative_to(root)
        try:  # 4 bytes a character at the most: never more than the room left
            data = _own_file(path, 4 * room)
        except OSError as e:
            parts.append(f"({shown} was not read: {e.strerror or e})")
            continue
        text = data.decode("utf-8", errors="replace").strip()
        text = shorten(text, room, tail=0, note=f"instructions are limited to {limit:,} characters")
        parts.append(f"From {shown}:\n{text}")
        room -= len(text)
    return "\n\n".join(parts)


def _own_file(path: Path, limit: int) -> bytes:
    if path.is_symlink():
        raise OSError("it is a link, and instructions are read only from the project's own files")
    if path.lstat().st_nlink > 1:
        raise OSError("it has another name (a hard link), which could be a file of secrets")
    return read_regular(path, limit, head=True)
