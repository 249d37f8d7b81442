"""Files too big to read at once (issue #34, class 1): a log of 100 MB is read in windows, and a
minified line of 100 MB is cut, each in a few MB of memory whatever the file's size; a tool that
must hold a whole file (edit_file) refuses one that big by saying what to use instead. The window
itself, streamed, is the window read whole: tests/engine/test_read_write.py generates the files
that show it."""

from __future__ import annotations

import tracemalloc

import pytest

from corecoder.tool import ToolError
from corecoder.tools.read import ReadFile
from corecoder.workspace import Workspace

pytestmark = pytest.mark.row("huge")


def read(tmp_path, path, **args) -> str:
    return ReadFile().run(Workspace(cwd=tmp_path), path=path, **args)


def test_a_100_mb_log_is_read_in_windows_in_bounded_memory(tmp_path):
    line = b"2026-12-06 12:00:00 INFO request 1234567890 served in 12 ms\n"
    with open(tmp_path / "app.log", "wb") as f:
        for _ in range(100):
            f.write(line * (1_000_000 // len(line)))
    size, lines = (tmp_path / "app.log").stat().st_size, 100 * (1_000_000 // len(line))
    tracemalloc.start()
    try:
        first = read(tmp_path, "app.log", limit=2)
        last = read(tmp_path, "app.log", offset=lines)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert first.split("\n") == [f"     1\t{line.decode().strip()}", f"     2\t{line.decode().strip()}",
                                 f"(lines 1-2 of a file of {size:,} bytes, too big to count its "
                                 "lines; use offset=3 to read on)"]
    assert last == f"{lines:>6}\t{line.decode().strip()}\n(end of file, {lines:,} lines)".replace(
        f"{lines:,} lines", f"{lines} lines")
    assert peak < 8 << 20  # a window and a megabyte piece, not 100 MB


def test_one_line_of_100_mb_is_cut_in_bounded_memory(tmp_path):
    with open(tmp_path / "min.js", "wb") as f:
        for _ in range(100):
            f.write(b"y" * 1_000_000)
    tracemalloc.start()
    try:
        out = read(tmp_path, "min.js")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # as shorten cuts it: room for the marker of 100,000,000, which then counts one digit less
    assert out == "     1\t" + "y" * 1964 + "[... 99,998,036 characters cut ...]\n(end of file, 1 line)"
    assert peak < 8 << 20


def test_edit_file_refuses_a_file_too_big_for_it_and_says_what_to_use_instead(tmp_path):
    from corecoder.files import MAX_READ_BYTES
    from corecoder.tools.edit import EditFile

    with open(tmp_path / "app.log", "wb") as f:  # sparse: it takes no room on the disk
        f.truncate(MAX_READ_BYTES + 1)
    with pytest.raises(ToolError) as refused:
        EditFile().run(Workspace(cwd=tmp_path), "app.log", "line", "row")
    assert "bash (sed -i" in str(refused.value) and "offset, limit" in str(refused.value)


def test_a_full_window_never_reads_the_line_after_it(tmp_path, monkeypatch):
    """One byte says whether the file goes on: a next line of 100 MB is not read to say so."""
    from corecoder.tools import read as read_module

    with open(tmp_path / "dump.txt", "wb") as f:
        f.write(b"first\n")
        for _ in range(100):
            f.write(b"y" * 1_000_000)
    opened = []

    class Counted:  # the file read_file opens, with the bytes read from it counted
        def __init__(self, f):
            self.f, self.bytes = f, 0
            opened.append(self)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

        def read(self, size=-1):
            data = self.f.read(size)
            self.bytes += len(data)
            return data

        def readline(self, size=-1):
            data = self.f.readline(size)
            self.bytes += len(data)
            return data

        def seek(self, *args):
            return self.f.seek(*args)

    real = read_module.open_regular
    monkeypatch.setattr(read_module, "open_regular", lambda path: Counted(real(path)))
    assert read(tmp_path, "dump.txt", limit=1) == (
        "     1\tfirst\n(lines 1-1 of a file of 100,000,006 bytes, too big to count its lines; "
        "use offset=2 to read on)")
    assert opened[0].bytes < 10_000  # the binary check's 8 KiB, the first line, one byte
