"""Writing files so that a crash never leaves half of one, and spotting binary files."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write(path: Path | str, data: bytes | str) -> None:
    """Write all of `data` to `path`, or nothing at all.

    The bytes go to a temp file in the same directory, are flushed to disk, and
    only then renamed over the target: rename is atomic, so a reader (or a crash)
    sees the old file or the new one, never a mix. Parent dirs are created; a
    symlink stays a link and its target gets the new content.
    """
    path = Path(path)
    if path.is_symlink():  # os.replace would swap the link for a plain file: write where it points
        path = path.resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    mode = path.stat().st_mode & 0o7777 if path.exists() else None
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if mode is not None:
            os.chmod(tmp, mode)  # keep an executable script executable
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def looks_binary(data: bytes) -> bool:
    """A NUL byte in the first 8 KiB: the same rule git uses."""
    return b"\0" in data[:8192]
