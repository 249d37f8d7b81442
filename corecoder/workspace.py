"""What the tools act on: where an agent stands and what it has promised to do.

Every agent owns one Workspace. Nothing here is module-level, so two agents built
in the same notebook never share a working directory or a todo list by accident.
"""

from __future__ import annotations

import copy
import hashlib
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Workspace:
    cwd: Path = field(default_factory=Path.cwd)
    todos: list[dict] = field(default_factory=list)
    # Set when the user interrupts calls running in other threads; long tools check it.
    cancelled: threading.Event = field(default_factory=threading.Event, compare=False, repr=False)

    def __post_init__(self):
        self.cwd = Path(self.cwd).resolve()

    def resolve(self, path: str) -> Path:
        """A path the model gave, made absolute against this workspace's cwd."""
        return self.cwd / os.path.expanduser(path)

    def show(self, path: Path) -> str:
        """A path as the model should see it: relative to cwd when it is inside."""
        try:
            return str(Path(path).relative_to(self.cwd))
        except ValueError:
            return str(path)

    def fork(self) -> Workspace:
        """A copy for one of several calls running at once: its own cwd, the same todo list."""
        fork = copy.copy(self)  # not `replace`: its cwd is resolved already
        fork.cancelled = threading.Event()
        return fork

    def merge(self, forks: list[Workspace]) -> None:
        """Take back what the forks changed, in call order: the last fork that ended somewhere
        else takes the cwd (one that came back to where it began did not move), and the last
        that wrote a list the todos."""
        cwd, todos = self.cwd, self.todos
        for fork in forks:
            if fork.cwd != cwd:
                self.cwd = fork.cwd
            if fork.todos is not todos:  # todo_write puts in a new list, never changes one in place
                self.todos = fork.todos


def git_root(cwd: Path) -> Path | None:
    """The nearest folder at or above `cwd` that holds .git, or None outside a repository."""
    cwd = Path(cwd).resolve()
    return next((d for d in (cwd, *cwd.parents) if (d / ".git").exists()), None)


def project_root(cwd: Path) -> Path:
    """What "this project" means: the git root above `cwd`, else `cwd` itself."""
    return git_root(cwd) or Path(cwd).resolve()


def project_key(cwd: Path) -> str:
    """A short stable name for the project `cwd` is in, so that what is kept per project
    (undo checkpoints, "always allow" answers) never mixes two projects."""
    root = project_root(cwd)
    return f"{root.name[:40]}-{hashlib.sha256(str(root).encode()).hexdigest()[:12]}"
