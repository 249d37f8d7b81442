"""Checkpoints: a copy of each file before the agent writes or edits it, so `/undo` can put it back.

A gate sees every call before it runs, so the copy is taken there and the loop needs no
change. Each copy is a JSON file under `HOME/checkpoints/<project key>/`, next to an index
that keeps their order; both are written atomically (temp file + rename), so a crash leaves
the old index or the new one and `/undo` works after a restart. The key is a hash of the
project's root (the git root of the cwd, else the cwd): an `/undo` in one project can
never reach into another's checkpoints, and a path outside the root is never restored.

Put this gate last in the chain: a call refused by an earlier gate then takes no copy.
"""

from __future__ import annotations

import base64
import difflib
import json
import secrets
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from .calls import Gate
from .files import atomic_write, looks_binary
from .workspace import project_key, project_root

try:
    import fcntl  # two corecoders in one project take turns at the index
except ImportError:  # Windows: one process at a time is all that is supported there
    fcntl = None

MAX_BYTES = 5_000_000  # a bigger file gets a checkpoint that says it was too large to keep
KEEP = 200  # checkpoints per project; the oldest go first
DIFF_LINES = 40  # per file in `changed_files`


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
    mode = st.st_mode & 0o7777
    if st.st_size > limit:
        return Snapshot(True, mode, None, st.st_size, st.st_mtime_ns)
    return Snapshot(True, mode, path.read_bytes(), st.st_size)


@dataclass(frozen=True)
class Change:
    path: str  # relative to the project root
    status: str  # created, deleted, modified
    diff: str = ""  # a short unified diff, or a note (binary, too large, mode)


class CheckpointError(Exception):
    """The checkpoint store is damaged. The message names the file."""


class Checkpoints(Gate):
    name = "checkpoint"

    def __init__(self, home: Path | str, cwd: Path | str, max_bytes: int = MAX_BYTES, keep: int = KEEP):
        self.root = project_root(cwd)
        self.dir = Path(home) / "checkpoints" / project_key(self.root)
        self.max_bytes = max_bytes
        self.keep = keep
        self.first: dict[Path, Snapshot] = {}  # each file as this object first found it: for /diff
        self.error: str | None = None  # the last checkpoint that could not be taken, and why
        self.lock = threading.Lock()  # parallel calls and workers share this gate

    def before(self, tool, args: dict, workspace) -> str | None:
        path = args.get("path")
        if tool.mutating and isinstance(path, str):
            try:
                self.save(workspace.resolve(path).resolve(), tool.name)
            except Exception as e:  # a lost copy must not cost the user the edit, nor the loop its call
                self.error = f"no checkpoint for {path}: {e}"
        return None  # never refuses

    def save(self, path: Path, tool: str = "") -> str | None:
        """Keep a copy of `path` as it is now; its id, or None for a path outside the project."""
        path = Path(path)
        if not path.is_relative_to(self.root) or path.is_dir():
            return None
        snap = snapshot(path, self.max_bytes)
        record = {"path": str(path), "tool": tool, "time": datetime.now().astimezone().isoformat(timespec="seconds"),
                  "existed": snap.existed, "mode": snap.mode, "size": snap.size, "too_large": snap.too_large,
                  "content": base64.b64encode(snap.data).decode("ascii") if snap.data is not None else None,
                  "made_dirs_from": None if snap.existed else _first_missing(path)}
        with self._locked():
            index = self._index()
            checkpoint_id = f"{datetime.now():%Y%m%d-%H%M%S}-{secrets.token_hex(4)}"
            atomic_write(self.dir / f"{checkpoint_id}.json", json.dumps(record))  # the copy first, then the index
            index.append({"id": checkpoint_id, "path": str(path), "tool": tool})
            dropped, index = index[: -self.keep], index[-self.keep:]
            self._write_index(index)
            for old in dropped:
                (self.dir / f"{old['id']}.json").unlink(missing_ok=True)
            self.first.setdefault(path, snap)
        return checkpoint_id

    def undo(self) -> str:
        """Put back the file the latest checkpoint copied, drop that checkpoint, and say what was done.

        A checkpoint the file already matches (an edit that failed, a change already reverted
        by hand) is dropped on the way: undo goes on to the latest change still in effect.
        """
        with self._locked():
            try:
                index = self._index()
            except CheckpointError as e:
                return f"cannot undo: {e}"
            while index:
                entry = index[-1]
                try:
                    said = self._restore(entry)
                except (OSError, CheckpointError) as e:  # kept: once the cause is fixed, /undo can try again
                    return f"cannot undo the change to {self._show(Path(entry['path']))}: {e}"
                index.pop()
                self._write_index(index)  # the index first: a crash now leaves a stray file, not a dangling entry
                (self.dir / f"{entry['id']}.json").unlink(missing_ok=True)
                if said:
                    return said + (f" ({len(index)} more to undo)" if index else "")
        return "nothing to undo in this project"

    def _restore(self, entry: dict) -> str | None:
        path, shown = Path(entry["path"]), self._show(Path(entry["path"]))
        if not path.is_relative_to(self.root):
            return f"did not touch {path}: it is outside this project ({self.root})"
        try:
            record = json.loads((self.dir / f"{entry['id']}.json").read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None  # lost in a crash between the copy and the index: nothing to put back
        except ValueError as e:
            raise CheckpointError(f"checkpoint {entry['id']} in {self.dir} is damaged: {e}") from None
        now = snapshot(path, self.max_bytes)
        if not record["existed"]:
            if not now.existed:
                return None
            if path.is_dir():
                return f"cannot undo: {shown} was created by {entry['tool']} but is now a directory; left it"
            path.unlink()
            if record["made_dirs_from"]:
                _remove_empty_dirs(path.parent, Path(record["made_dirs_from"]), self.root)
            return f"deleted {shown} ({entry['tool']} had created it)"
        if record["too_large"]:
            return f"cannot undo the change to {shown}: at {record['size']:,} bytes it was too large to keep"
        data = base64.b64decode(record["content"])
        if now.data == data and now.mode == record["mode"]:
            return None
        atomic_write(path, data)  # recreates parent dirs deleted since
        path.chmod(record["mode"])
        how = "recreated" if not now.existed else "restored"
        return f"{how} {shown} as it was before {entry['tool']}"

    def changed_files(self) -> list[Change]:
        """The files changed since this object first copied them, each with a short diff."""
        changes = []
        for path, first in self.first.items():
            now = snapshot(path, self.max_bytes)
            if now == first:
                continue
            shown = self._show(path)
            if not first.existed or not now.existed:
                changes.append(Change(shown, "created" if now.existed else "deleted"))
            else:
                changes.append(Change(shown, "modified", _diff(shown, first, now)))
        return changes

    def _show(self, path: Path) -> str:
        return str(path.relative_to(self.root)) if path.is_relative_to(self.root) else str(path)

    @contextmanager
    def _locked(self):
        self.dir.mkdir(parents=True, exist_ok=True)
        with self.lock, open(self.dir / ".lock", "a") as handle:
            if fcntl:
                fcntl.flock(handle, fcntl.LOCK_EX)  # released when the file closes
            yield

    def _index(self) -> list[dict]:
        path = self.dir / "index.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        except ValueError as e:
            raise CheckpointError(f"{path} is damaged: {e}") from None
        if data.get("root") != str(self.root):  # a hash collision, or a copied folder: not ours to touch
            raise CheckpointError(f"{path} belongs to {data.get('root')}, not {self.root}")
        return data["checkpoints"]

    def _write_index(self, index: list[dict]) -> None:
        atomic_write(self.dir / "index.json", json.dumps({"root": str(self.root), "checkpoints": index}, indent=1))


def _first_missing(path: Path) -> str | None:
    """The highest directory above `path` that does not exist yet: writing the file will make it."""
    top = None
    for parent in path.parents:
        if parent.exists():
            break
        top = str(parent)
    return top


def _remove_empty_dirs(start: Path, top: Path, root: Path) -> None:
    """Remove the directories a created file needed, up to `top`, if nothing else is in them."""
    for folder in (start, *start.parents):
        if folder == root or not folder.is_relative_to(top) or any(folder.iterdir()):
            return
        folder.rmdir()


def _diff(shown: str, before: Snapshot, after: Snapshot) -> str:
    notes = [f"mode {before.mode:o} -> {after.mode:o}"] if before.mode != after.mode else []
    if before.too_large or after.too_large:
        return "; ".join([*notes, "too large to compare"])
    if looks_binary(before.data) or looks_binary(after.data):
        return "; ".join([*notes, f"binary, {before.size:,} -> {after.size:,} bytes"])
    old = before.data.decode("utf-8", "replace").splitlines(keepends=True)
    new = after.data.decode("utf-8", "replace").splitlines(keepends=True)
    lines = [line.rstrip("\n") for line in difflib.unified_diff(old, new, f"a/{shown}", f"b/{shown}")]
    if len(lines) > DIFF_LINES:
        lines = [*lines[:DIFF_LINES], f"... {len(lines) - DIFF_LINES} more diff lines"]
    return "\n".join([*notes, *lines])
