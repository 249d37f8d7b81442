"""read_file: a text file shown with line numbers, one window at a time.

The numbers let the model point at lines ("see line 120") and page through a long
file with `offset`. The last line of every answer says where the window ends, so
the model always knows whether it has seen the whole file.
"""

from __future__ import annotations

import codecs
import difflib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from ..files import MAX_READ_BYTES, absent, in_words, looks_binary, open_regular, read_regular
from ..text import marker, shorten
from ..tool import Tool, ToolError
from ..workspace import Workspace

DEFAULT_LIMIT = 2000
MAX_LINE_CHARS = 2000
# Stop a window early rather than let the agent's bound on a result (calls.OUTPUT_LIMIT,
# 20,000) cut its middle: a shorter window ends with an exact offset to read on from.
MAX_OUTPUT_CHARS = 18_000


class ReadFile(Tool):
    name = "read_file"
    description = (
        "Read a text file, shown as `<line number><tab><text>` (leave the numbers out when you "
        f"edit). Shows `limit` lines (default {DEFAULT_LIMIT}) from `offset` (1-based); the last "
        f"line says where to continue. Lines over {MAX_LINE_CHARS} characters are cut. Refuses "
        "binary files and directories."
    )
    parameters = {
        "type": "object",
        "properties": {
            "path": {"type": "string",
                     "description": "File to read, relative to the working directory."},
            "offset": {"type": "integer", "minimum": 1,
                       "description": "First line to show (1-based)."},
            "limit": {"type": "integer", "minimum": 1, "description": "Most lines to show."},
        },
        "required": ["path"],
        "additionalProperties": False,
    }
    mutating = False

    def run(self, ws: Workspace, path: str, offset: int = 1, limit: int = DEFAULT_LIMIT) -> str:
        target = ws.resolve(path)
        shown = ws.show(target)
        if target.is_file() and target.stat().st_size > MAX_READ_BYTES:  # a log of gigabytes
            return streamed(target, shown, offset, limit)
        data = read_bytes(ws, target)
        if looks_binary(data):
            raise ToolError(f"{shown} is a binary file ({len(data):,} bytes); "
                            "read_file shows text only")
        # utf-8-sig drops a leading BOM, so it never shows up as a stray first character.
        lines = split_lines(data.decode("utf-8-sig", errors="replace"))
        if not lines:
            return f"{shown} is empty ({len(data):,} bytes)"
        if offset > len(lines):
            raise ToolError(f"offset {offset} is past the end: {shown} has {count(len(lines))}")
        window, size = [], 0
        for n in range(offset, min(offset + limit, len(lines) + 1)):
            numbered = f"{n:>6}\t{shorten(lines[n - 1], MAX_LINE_CHARS, tail=0)}"
            if window and size + len(numbered) > MAX_OUTPUT_CHARS:
                break
            window.append(numbered)
            size += len(numbered) + 1
        last = offset + len(window) - 1
        where = (f"(end of file, {count(len(lines))})" if last == len(lines)
                 else f"(lines {offset}-{last} of {len(lines)}; use offset={last + 1} to read on)")
        return "\n".join([*window, where])


def split_lines(text: str) -> list[str]:
    """Lines as editors number them: split on \\n only, a CRLF's \\r dropped.

    (str.splitlines would also split on form feeds and other rare separators,
    and the numbers would disagree with grep, editors and tracebacks.)
    """
    lines = text.split("\n")
    if lines[-1] == "":  # the newline that ends the last line does not start another
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


# --- defences: what is not there, or not a file ---------------------------------------------


def count(n: int) -> str:
    return f"{n} line" if n == 1 else f"{n} lines"


def read_bytes(ws: Workspace, target: Path) -> bytes:
    """The file's bytes, or a ToolError that helps: a directory, a broken link, a typo in a name."""
    shown = ws.show(target)
    if target.is_dir():
        raise ToolError(f"{shown} is a directory; use glob (e.g. pattern='*' with path='{shown}') "
                        "to list it")
    try:
        return read_regular(target)
    except FileNotFoundError:
        pass
    except OSError as e:
        raise ToolError(f"cannot read {shown}: {in_words(e, target, ws.show, 'read')}") from e
    if target.is_symlink():  # "... is a symlink to X, which does not exist"
        raise ToolError(absent(target, ws.show))
    if not target.parent.is_dir():  # "the directory lib does not exist", or a file in its way
        raise ToolError(f"no such file: {shown} ({absent(target, ws.show)})")
    # A name that looks like a typo or a case slip away from the one asked for.
    by_lower = {name.lower(): name for name in sorted(os.listdir(target.parent))}
    close = difflib.get_close_matches(target.name.lower(), list(by_lower), n=3, cutoff=0.6)
    similar = ", ".join(ws.show(target.parent / by_lower[c]) for c in close)
    raise ToolError(f"no such file: {shown}" + (f". Similar names: {similar}" if close else ""))


# --- defences: a file too big to read at once


def streamed(target: Path, shown: str, offset: int, limit: int) -> str:
    """read_file's window of a file past the most that is read at once (MAX_READ_BYTES: a log,
    a dump), read line by line from the start: each line is kept only as far as it is shown,
    so memory holds one window, never the file. The lines after the window are not counted
    (that would read them all), so its last line gives the file's size and where to read on."""
    size, window, chars = target.stat().st_size, [], 0

    def read_on(at: int) -> str:  # the window, and where the file goes on
        return "\n".join([*window, f"(lines {offset}-{at - 1} of a file of {size:,} bytes, too "
                                   f"big to count its lines; use offset={at} to read on)"])

    with open_regular(target) as f:
        if looks_binary(f.read(8192)):
            raise ToolError(f"{shown} is a binary file ({size:,} bytes); read_file shows text only")
        f.seek(0)
        skipped = n = skip_lines(f, offset - 1)  # counted, not decoded: millions a second
        for n, (head, length) in enumerate(line_heads(f, bom=skipped == 0), skipped + 1):
            numbered = f"{n:>6}\t{cut(head, length)}"
            if window and chars + len(numbered) > MAX_OUTPUT_CHARS:
                return read_on(n)
            window.append(numbered)
            chars += len(numbered) + 1
            if len(window) == limit:  # a byte says whether the file goes on: the next line,
                if f.read(1):  # of gigabytes maybe, is not read
                    return read_on(n + 1)
                break
    if not window:
        raise ToolError(f"offset {offset} is past the end: {shown} has {count(n)}")
    return "\n".join([*window, f"(end of file, {count(n)})"])


HEAD_BYTES = 4 * MAX_LINE_CHARS  # enough for MAX_LINE_CHARS characters of any UTF-8
PIECE_BYTES = 1 << 20  # the rest of a longer line is counted a piece at a time


def skip_lines(f: BinaryIO, lines: int) -> int:
    """Move `f` past its next `lines` lines, a piece of at most PIECE_BYTES at a time; how many
    it moved past (fewer at the end, where a last line without a newline counts too)."""
    skipped, partial = 0, False
    while skipped < lines and (piece := f.readline(PIECE_BYTES)):
        partial = not piece.endswith(b"\n")  # a longer line goes on, or the last one ends
        skipped += not partial
    return skipped + (partial and skipped < lines)


def line_heads(f: BinaryIO, bom: bool = True) -> Iterator[tuple[str, int]]:
    """Each line of `f`, split as split_lines splits (on \\n only, a CRLF's \\r dropped; the
    first line's BOM dropped, as utf-8-sig drops it), as its first characters (all of them, or
    at least MAX_LINE_CHARS) and its length in characters: a line of gigabytes is counted in
    pieces, never held whole."""
    first = bom
    while raw := f.readline(HEAD_BYTES):
        decoder = codecs.getincrementaldecoder("utf-8-sig" if first else "utf-8")("replace")
        first, head = False, decoder.decode(raw)
        length, ending = len(head), raw[-2:]
        while not ending.endswith(b"\n") and (piece := f.readline(PIECE_BYTES)):
            length += len(decoder.decode(piece))
            ending = (ending + piece)[-2:]
        length += len(decoder.decode(b"", final=True))
        # what split_lines drops: the \n, and a \r before it (or ending the last line)
        newline = ending.endswith(b"\n")
        newline += (ending[:-1] if newline else ending).endswith(b"\r")
        yield head[: length - newline], length - newline  # a long line's head: all of it


def cut(head: str, length: int) -> str:
    """A line of `length` characters that begins with `head`, cut to MAX_LINE_CHARS as shorten
    cuts with no tail: the same text shorten(line, MAX_LINE_CHARS, tail=0) gives, without the
    whole line in memory."""
    if length <= MAX_LINE_CHARS:
        return head
    room = max(0, MAX_LINE_CHARS - len(marker(length)))
    return f"{head[:room]}{marker(length - room)}"
