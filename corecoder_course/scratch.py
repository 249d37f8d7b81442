"""A fresh scratch folder for a chapter, at a fixed place: `notebooks/.work/<name>`.

A chapter that lets the agent edit files works on a copy in this folder, never on
the repository and never in a random temp dir: the path is the same on every run
(so outputs stay the same), it is found whether the kernel started in the
repository root or in `notebooks/`, and git ignores it.

The folder is a git repository of its own, so it is a project of its own: what the
agent looks for in a project (AGENTS.md or CLAUDE.md from the git root down, where
it keeps long outputs) stops here, and nothing of the clone around it (the user's
own CLAUDE.md, say) can reach a chapter's outputs.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path


def scratch() -> Path:
    """`notebooks/.work`, relative to where we run (the repository's root or `notebooks/`),
    made if it is missing, with the .gitignore that keeps git out of it."""
    here = Path.cwd()
    base = here / "notebooks" if (here / "notebooks").is_dir() else here
    work = base / ".work"
    work.mkdir(parents=True, exist_ok=True)
    ignore = work / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# scratch space of the notebooks: never committed\n*\n",
                          encoding="utf-8")
    return work


def workdir(name: str) -> Path:
    """An empty folder `notebooks/.work/<name>` (emptied if it exists), relative to where we run."""
    target = scratch() / name
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    try:
        subprocess.run(["git", "init", "--quiet", str(target)], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError):
        # no git: an empty .git is all the agent looks for
        (target / ".git").mkdir(exist_ok=True)
    return target
