"""read_file: a text file shown with line numbers, one window at a time.

The numbers let the model point at lines ("see line 120") and page through a long
file with `offset`. The last line of every answer says where the window ends, so
the model always knows whether it has seen the whole file.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

from ..files import looks_binary, read_regular
from ..text import shorten
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
        raise ToolError(f"cannot read {shown}: {e.strerror or e}") from e
    if target.is_symlink():
        raise ToolError(f"{shown} is a symlink to {os.readlink(target)}, which does not exist")
    if not target.parent.is_dir():
        folder = ws.show(target.parent)
        raise ToolError(f"no such file: {shown} (the directory {folder} does not exist)")
    # A name that looks like a typo or a case slip away from the one asked for.
    by_lower = {name.lower(): name for name in sorted(os.listdir(target.parent))}
    close = difflib.get_close_matches(target.name.lower(), list(by_lower), n=3, cutoff=0.6)
    similar = ", ".join(ws.show(target.parent / by_lower[c]) for c in close)
    raise ToolError(f"no such file: {shown}" + (f". Similar names: {similar}" if close else ""))
