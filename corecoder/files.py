"""Writing files so that a crash never leaves half of one; reading one that can't hang or flood us;
spotting binary files; saying what the system refused, and why, in words a model can act on."""

from __future__ import annotations

import contextlib
import errno
import glob
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from .text import shorten


def atomic_write(path: Path | str, data: bytes | str, *, shared: bool = False) -> str:
    """Write all of `data` to `path`, or nothing at all. Returns a note for the reader ("" when
    there is nothing to say).

    The bytes go to a temp file in the same directory, are flushed to disk, and
    only then renamed over the target: rename is atomic, so a reader (or a crash)
    sees the old file or the new one, never a mix. Parent dirs are created; a
    symlink stays a link and its target gets the new content. What protected the old
    file is kept: its mode and owner; a file its owner made read-only is refused.
    A new file is private (600: copies of files, records of consent) unless `shared`,
    for the user's own files: then it gets what the umask gives, as `touch` would.
    """
    path = Path(path)
    if path.is_symlink():  # os.replace would swap the link for a plain file: write where it points
        path = path.resolve()
    old = path.stat() if path.exists() else None
    if old is not None:
        refuse_to_replace(path, old)
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    # The name's head only: a 250-character name plus the random part would pass the limit.
    prefix = f".{path.name[:100]}."
    remove_stale(path.parent, prefix, ".tmp")  # what a killed write left
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=prefix, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if old is not None:
            os.chmod(tmp, old.st_mode & 0o7777)  # keep an executable script executable
            with contextlib.suppress(OSError):  # only root may give a file to someone else
                os.chown(tmp, old.st_uid, old.st_gid)
        elif shared:  # mkstemp made it private (600)
            os.chmod(tmp, 0o666 & ~UMASK)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    if old is not None and old.st_nlink > 1:
        return (f"(it had {old.st_nlink - 1} other hard link{'s' * (old.st_nlink > 2)}: they keep "
                "the old content; this name has the new)")
    return ""


def looks_binary(data: bytes) -> bool:
    """A NUL byte in the first 8 KiB: the same rule git uses."""
    return b"\0" in data[:8192]


# --- defences: new files as the umask gives them, the leftovers of a killed write, reads that
# refuse what is not a regular file or is too big


def _umask() -> int:
    mask = os.umask(0o022)  # the one way to read it is to set it, and set it back
    os.umask(mask)
    return mask


UMASK = _umask()  # read once, at import: setting it while other threads create files would race


def refuse_to_replace(path: Path, old: os.stat_result) -> None:
    """What a write must not replace. The messages say "it is ...", as read_regular's do."""
    if not stat.S_ISREG(old.st_mode):  # a FIFO, a device (/dev/null!): never a plain file instead
        raise NotARegularFile(f"it is {kind(old.st_mode)}, not a regular file")
    if not old.st_mode & stat.S_IWUSR:  # checked by hand: root's writes pass every permission
        raise PermissionError(f"it is read-only (mode {old.st_mode & 0o777:o}): make it writable "
                              "first if it is meant to change")


# No write or command of ours takes an hour: a temp file of ours untouched that long was left by a
# process that died with it open (kill -9, a power cut), and nobody else will remove it.
STALE_AFTER = 3600


def remove_stale(folder: Path, prefix: str, suffix: str = "", *, folders: bool = False) -> None:
    """Remove the regular files (or, with `folders`, the folders) in `folder` that tempfile
    named with `prefix` and `suffix` (mkstemp and TemporaryDirectory put 8 characters of
    [a-z0-9_] between them) and that nothing has touched for STALE_AFTER seconds. Best effort:
    what can't be removed (another user's) stays."""
    cutoff = time.time() - STALE_AFTER
    for left in Path(folder).glob(glob.escape(prefix) + "[a-z0-9_]" * 8 + glob.escape(suffix)):
        with contextlib.suppress(OSError):
            st = left.lstat()
            if st.st_mtime >= cutoff:
                continue
            if folders and stat.S_ISDIR(st.st_mode):
                shutil.rmtree(left)
            elif not folders and stat.S_ISREG(st.st_mode):
                left.unlink()


# The most a tool reads of one file: a log of gigabytes is grepped or read in pieces by bash.
MAX_READ_BYTES = 64 << 20
# The most a configuration file (hooks.json, mcp.json, .env) may hold: a config is a few lines, and
# one too large to show the user is never loaded.
CONFIG_LIMIT = 1 << 20


class NotARegularFile(OSError):
    """A FIFO, a device, a socket or a directory: reading it could wait forever or never end."""


class FileTooLarge(OSError):
    """A file with more bytes than the reader takes."""


def read_regular(path: Path | str, limit: int = MAX_READ_BYTES, *, head: bool = False) -> bytes:
    """The bytes of the regular file at `path` (links followed); NotARegularFile for anything
    else, FileTooLarge past `limit` bytes (`head`: its first `limit` bytes instead). The
    messages say "it is ...", for the caller to name the file in its own words.

    Opened without blocking (a FIFO would wait for a writer that never comes), then checked on
    the open file itself, so a file swapped for a FIFO or a device in between is caught too."""
    with open_regular(path) as f:
        data = f.read(limit if head else limit + 1)
    if len(data) > limit:
        raise FileTooLarge(f"it has more than {limit:,} bytes, the most read at once")
    return data


def open_regular(path: Path | str) -> BinaryIO:
    """The regular file at `path`, open for reading in binary (read_regular says why this way);
    NotARegularFile for anything else."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    f = os.fdopen(fd, "rb")
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        f.close()
        raise NotARegularFile(f"it is {kind(mode)}, not a regular file")
    return f


def kind(mode: int) -> str:
    """What a file's mode says it is, in words: "a FIFO", "a device", "a directory"..."""
    kinds = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (a named pipe)"),
             (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket"))
    return next((name for test, name in kinds if test(mode)), "not a regular file")


# --- defences: what the system refused, in words. An errno's own text ("File exists", "Not a
# directory") names neither the path nor the way out; each sentence here names both.

# The most bytes one name in a path may have on the file systems we meet (ext4, APFS, NTFS)
NAME_MAX = 255


def in_words(e: OSError, path: Path | str | None = None, show: Callable = str,
             doing: str = "use") -> str:
    """What went wrong with `path` (by default the path the error names), said so that the
    model knows which path and what to do: "f is a file, not a directory, so f/child.txt can't
    be inside it", not "File exists". `show` writes a path as the model sees it; `doing` is what
    was refused ("read", "write to")."""
    where = path if path is not None else e.filename
    if where is None:
        return e.strerror or str(e) or type(e).__name__
    path = Path(os.fsdecode(where))
    shown = shorten(show(path), 200)
    code = e.errno
    if code in (errno.ENOENT, errno.ENOTDIR) or code == errno.EEXIST and not os.path.isdir(path):
        return absent(path, show)  # EEXIST: a file in the way of a directory a write makes
    if code == errno.ENAMETOOLONG:
        name = max(path.parts, key=lambda part: len(os.fsencode(part)))
        if len(os.fsencode(name)) > NAME_MAX:
            return (f"the name {shorten(name, 60)!r} is {len(os.fsencode(name)):,} bytes long, "
                    f"and a file system takes at most {NAME_MAX} a name: choose a shorter one")
        return f"the path {shown} is too long for the system: choose a shorter one"
    forbidden = f"no permission to {doing} {shown} (its mode, or its directory's, forbids it)"
    said = {
        errno.EACCES: forbidden,
        errno.EPERM: forbidden,
        errno.EISDIR: f"{shown} is a directory, not a file",
        errno.ELOOP: f"{shown} is a link in a loop of links: following it never reaches a file",
        errno.ENOSPC: f"the disk that holds {shown} is full",
        errno.EROFS: f"{shown} is on a read-only file system",
    }
    if code in said:
        return said[code]
    if code is None:  # ours: "it is a FIFO ...", "it has more than ... bytes"
        return str(e)
    return f"the system refused to {doing} {shown}: {e.strerror}"  # a rare errno, as it came


def absent(path: Path, show: Callable = str) -> str:
    """Why nothing is at `path`: the first of its directories, from the root down, that is a
    file, a symlink to nothing or missing; or else the name itself. (os.path's tests never
    raise: a name too long or no permission reads as "not there".)"""
    folder = next((f for f in reversed(path.parents) if not os.path.isdir(f)), None)
    if folder is None:  # every directory is there: the name is missing, or leads nowhere
        return dangling(path, show) or f"{show(path)} does not exist"
    inside = f"so {show(path)} can't be inside it"
    if dangling(folder, show):
        return f"{dangling(folder, show)}, {inside}"
    if os.path.lexists(folder):
        return f"{show(folder)} is a file, not a directory, {inside}"
    return f"the directory {show(folder)} does not exist"


def dangling(path: Path, show: Callable = str) -> str:
    """"P is a symlink to T, which does not exist", or "" when `path` is no link to nothing."""
    if os.path.islink(path) and not os.path.exists(path):
        return f"{show(path)} is a symlink to {os.readlink(path)}, which does not exist"
    return ""
