"""What the tools act on: where an agent stands and what it has promised to do.

Every agent owns one Workspace. Nothing here is module-level, so two agents built
in the same notebook never share a working directory or a todo list by accident.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Workspace:
    cwd: Path = field(default_factory=Path.cwd)
    todos: list[dict] = field(default_factory=list)

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
