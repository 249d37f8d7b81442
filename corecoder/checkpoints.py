"""Checkpoints: a copy of each file before the agent writes or edits it, so `/undo` can put it back.

A gate sees every call before it runs, so the copy is taken there and the loop needs no
change. Each copy is one JSON file under `HOME/checkpoints/<project key>/`, named by a
counter (`00000042.json`), so the newest is the last by name; written atomically (temp file
and rename), a crash leaves a copy whole or absent, and `/undo` works after a restart. The key
is a hash of the project's root (the git root of the cwd, else the cwd): an `/undo` in one
project never reaches into another's checkpoints, and a path outside the root is never
restored.

Put this gate last in the chain: a call refused by an earlier gate then takes no copy.

Undo must never cost the user their own work. So when the call has run, the gate's `after`
writes into its checkpoint what the call LEFT: a hash of the file's bytes ("" for no file).
`/undo` puts a file back only while it still holds exactly that; a file the user has edited,
filled, deleted or replaced since is kept as it is, and the answer names it. (Why `after`, and
not a guess at the next call: only then is the file surely the agent's and not yet the user's.
A call that never reached `after`, a crash or Ctrl+C, left what nobody knows: its file is kept.)
The defences below the marked line add the rest: a checkpoint names the project itself, not
only its path (one removed and cloned again at the same path is another), nothing is restored
through a link, and `/undo` asked from another project (the agent ran `cd` into one) touches
nothing.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import stat
import threading
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from .calls import Gate
from .files import atomic_write, read_regular
from .workspace import project_key, project_root

try:
    import fcntl  # two corecoders in one project take turns at the folder
except ImportError:  # Windows: one process at a time is all that is supported there
    fcntl = None

MAX_BYTES = 5_000_000  # a bigger file gets a checkpoint that says it was too large to keep
KEEP = 200  # checkpoints per project; the oldest go first


@dataclass(frozen=True)
class Snapshot:
    """A file as it was: its bytes, or that it did not exist, or that it was too big to copy."""

    existed: bool
    mode: int | None = None
    data: bytes | None = None  # None when it did not exist or was too large
    size: int = 0
    stamp: int = 0  # mtime, only for a file too large to copy: what tells two such snapshots apart

    @property
    def too_large(self) -> bool:
        return self.existed and self.data is None


def snapshot(path: Path, limit: int = MAX_BYTES) -> Snapshot:
    try:
        st = path.stat()
    except (FileNotFoundError, NotADirectoryError):
        return Snapshot(False)
    if st.st_size > limit or not stat.S_ISREG(st.st_mode):  # a FIFO would never be read to its end
        return Snapshot(True, st.st_mode & 0o7777, None, st.st_size, st.st_mtime_ns)
    try:
        return Snapshot(True, st.st_mode & 0o7777, read_regular(path, limit), st.st_size)
    except OSError:  # swapped or grown since the stat: not copied, like a file too large
        return Snapshot(True, st.st_mode & 0o7777, None, st.st_size, st.st_mtime_ns)


class CheckpointError(Exception):
    """The checkpoint store is damaged. The message names the file."""


class Checkpoints(Gate):
    name = "checkpoint"

    def __init__(self, home: Path | str, cwd: Path | str, max_bytes: int = MAX_BYTES,
                 keep: int = KEEP, session: str | None = None):
        self.root = project_root(cwd)
        self.session = session  # written in each copy, so a resumed session finds its own
        self.dir = Path(home) / "checkpoints" / project_key(self.root)
        self.max_bytes = max_bytes
        self.keep = keep
        self.first: dict[Path, Snapshot] = {}  # each file as this object first found it: for /diff
        self.error: str | None = None  # the last checkpoint that could not be taken, and why
        self.lock = threading.Lock()  # parallel calls and workers share this gate
        # a call's checkpoint until `after` notes what the call left, by the id of its arguments:
        # the arguments are kept with it, so no other dict can take that id meanwhile
        self.pending: dict[int, tuple[dict, str | None]] = {}
        self.workspace = None  # the first agent's that calls: where `/undo` is asked from

    def before(self, tool, args: dict, workspace) -> str | None:
        self.workspace = self.workspace or workspace
        path = args.get("path")
        if tool.mutating and isinstance(path, str):
            try:
                name = self.save(workspace.resolve(path).resolve(), tool.name)
                self.pending[id(args)] = (args, name)
            except Exception as e:  # a lost copy must cost the user neither the edit nor the call
                self.error = f"no checkpoint for {path}: {e}"
        return None  # never refuses

    def save(self, path: Path, tool: str = "") -> str | None:
        """Keep a copy of `path` as it is now; its name, or None for a path outside the project."""
        path = Path(path)
        if not path.is_relative_to(self.root) or path.is_dir():
            return None
        snap = snapshot(path, self.max_bytes)
        record = {"root": str(self.root), "session": self.session, "path": str(path), "tool": tool,
                  "existed": snap.existed, "mode": snap.mode, "size": snap.size,
                  "too_large": snap.too_large,
                  "content": None if snap.data is None else base64.b64encode(snap.data).decode()}
        with self._locked():
            record["project"] = self._identity(make=True)
            kept = self._kept()
            name = f"{int(kept[-1].stem) + 1 if kept else 1:08d}.json"
            atomic_write(self.dir / name, json.dumps(record))
            for old in kept[: max(0, len(kept) + 1 - self.keep)]:
                old.unlink(missing_ok=True)
            self.first.setdefault(path, snap)
        return name

    def resume(self) -> None:
        """The session is resumed: /diff goes on from each file as the session first found it,
        read from the copies it took (those the oldest-first pruning has not dropped)."""
        ours = (self.session, str(self.root))
        with self._locked():
            for file in self._kept():
                try:
                    record = json.loads(file.read_text(encoding="utf-8"))
                    if (record.get("session"), record.get("root")) != ours:
                        continue
                    data = record["content"] and base64.b64decode(record["content"])
                    snap = Snapshot(record["existed"], record["mode"], data, record["size"])
                except (OSError, ValueError, KeyError, TypeError):
                    continue  # a damaged copy: /undo says so when it reaches it
                self.first.setdefault(Path(record["path"]), snap)

    def undo(self, cwd: Path | str | None = None) -> str:
        """Put back the file the latest checkpoint copied, drop that checkpoint, and say what was
        done. A checkpoint the file already matches (an edit that failed, a change already
        reverted by hand) is dropped on the way: undo goes on to the latest change in effect.
        A file changed since the agent's call is kept, and that checkpoint dropped with a word.
        `cwd`: where the user asks from (by default, the cwd of the agent that first called)."""
        if away := self._away(cwd):
            return away
        with self._locked():
            kept = self._kept()
            while kept:
                latest = kept.pop()
                try:
                    said = self._restore(latest)
                except (OSError, CheckpointError) as e:  # kept: once fixed, /undo tries it again
                    return f"cannot undo: {e}"
                except (ValueError, KeyError, TypeError) as e:  # not JSON, or not a record of ours
                    return f"cannot undo: checkpoint {latest} is damaged ({type(e).__name__}: {e})"
                latest.unlink(missing_ok=True)
                if said:
                    return said + (f" ({len(kept)} more to undo)" if kept else "")
        return "nothing to undo in this project"

    def _restore(self, file: Path) -> str | None:
        """Put the file back as `file` recorded it; what was done, or None if nothing needed to."""
        record = json.loads(file.read_text(encoding="utf-8"))
        path = Path(record["path"])
        if record.get("root") != str(self.root):  # a hash collision, or a copied folder: not ours
            raise CheckpointError(f"{file} belongs to {record.get('root')}, not {self.root}")
        if not path.is_relative_to(self.root):
            return f"did not touch {path}: it is outside this project ({self.root})"
        shown = str(path.relative_to(self.root))
        if refused := self._refusal(record, path, shown):
            return refused
        if record["too_large"]:
            return (f"cannot undo the change to {shown}: at {record['size']:,} bytes it was too "
                    "large to keep")
        now = snapshot(path, self.max_bytes)
        data = None if record["content"] is None else base64.b64decode(record["content"])
        if (now.existed, now.data, now.mode) == (record["existed"], data, record["mode"]):
            return None  # already as it was before the call
        left = record.get("left")  # None: the call never finished (Ctrl+C, a crash), or is old
        if left is None or digest(now) != left:  # the user's work since: never ours to undo
            how = "changed" if now.existed else "was deleted"
            return f"{shown} {how} since the agent's edit ({record['tool']}); kept as it is"
        if not record["existed"]:
            path.unlink()
            return f"deleted {shown} ({record['tool']} had created it)"
        atomic_write(path, data)  # recreates parent dirs deleted since
        path.chmod(record["mode"])
        how = "restored" if now.existed else "recreated"
        return f"{how} {shown} as it was before {record['tool']}"

    # --- defences: what the call left, the project's own folder, links, a cd elsewhere; two
    # processes at once ---------------------------------------------------------------------

    def after(self, tool, args: dict, result: str, workspace) -> None:
        """The call has run: note in its checkpoint what it left of the file."""
        _, name = self.pending.pop(id(args), (None, None))
        if name:
            self.note_left(name)

    def note_left(self, name: str) -> None:
        """Write into checkpoint `name` what its file holds now: what the agent's call left. No
        note (a crash first, a failure here) makes /undo keep the file: it can't tell."""
        try:
            with self._locked():
                record = json.loads((self.dir / name).read_text(encoding="utf-8"))
                record["left"] = digest(snapshot(Path(record["path"]), self.max_bytes))
                atomic_write(self.dir / name, json.dumps(record))
        except (OSError, ValueError, TypeError) as e:  # pruned already, say: only undo is less
            self.error = f"cannot note what the call left in checkpoint {name}: {e}"

    def _identity(self, make: bool = False) -> str | list[int]:
        """Which project this is, not only where: a project removed and cloned again at the same
        path, or moved away and replaced, must not be taken for the one the agent changed.

        In a git repository, a random token kept in .git (made by the first checkpoint, under
        the lock): a clone never carries .git's own files, and git never shows them. Elsewhere,
        the folder's device and inode; weaker, since a folder removed and made again at once
        often gets its inode back, but then only a file still holding the agent's bytes can be
        undone."""
        mark = self.root / ".git" / "corecoder-undo-id"
        git = mark.parent  # a real folder, not a link to one elsewhere, nor a worktree's file
        if make and git.is_dir() and not git.is_symlink() and not os.path.lexists(mark):
            with suppress(OSError):  # a read-only .git: the inode must do
                atomic_write(mark, os.urandom(8).hex())
        with suppress(OSError, ValueError):  # none, or not a token we wrote: the inode must do
            return "token " + read_regular(mark, 100).decode("ascii")
        st = os.lstat(self.root)
        return [st.st_dev, st.st_ino]

    def _refusal(self, record: dict, path: Path, shown: str) -> str | None:
        """Why this checkpoint must not touch its file: the project's folder is not the one it
        was taken in, or a folder on the way (or the file) is now a link, which could lead out
        of the project. Checked with lstat just before acting: a swap racing the undo itself is
        beyond what a check made by path can see."""
        if record.get("project") != self._identity():
            return (f"did not touch {shown}: the project at {self.root} is not the folder this "
                    "checkpoint was taken in (it was re-created or replaced since)")
        links = [p for p in (path, *path.parents) if p.is_relative_to(self.root) and p.is_symlink()]
        if links:
            return (f"did not touch {shown}: {links[-1].relative_to(self.root)} is now a link, "
                    "and undo never writes through one")

    def _away(self, cwd: Path | str | None) -> str | None:
        """Why /undo must not act from `cwd`: the agent moved (a `cd`) into another project.
        These checkpoints are of this one: the user, looking at the other, would see nothing
        undone there and lose a change here."""
        here = project_root(cwd or (self.workspace.cwd if self.workspace else self.root))
        if here != self.root:
            return (f"cannot undo from {here}: the checkpoints are of {self.root}, where this "
                    "session began; ask the agent to cd back there first")

    @contextmanager
    def _locked(self):
        self.dir.mkdir(parents=True, exist_ok=True)
        with self.lock, open(self.dir / ".lock", "a") as handle:
            if fcntl:
                fcntl.flock(handle, fcntl.LOCK_EX)  # released when the file closes
            yield

    def _kept(self) -> list[Path]:
        """The checkpoints, oldest first (their names are a counter, so the order is by name)."""
        return sorted(p for p in self.dir.glob("*.json") if p.stem.isdigit())


def digest(snap: Snapshot) -> str | None:
    """What a snapshot holds, as a hash: "" for no file, None for one it could not copy (too
    large, or not a regular file): what can't be compared is never taken for the agent's."""
    if not snap.existed:
        return ""
    return None if snap.data is None else hashlib.sha256(snap.data).hexdigest()
