"""read_file: a text file shown with line numbers, one window at a time.

The numbers let the model point at lines ("see line 120") and page through a long
file with `offset`. The last line of every answer says where the window ends, so
the model always knows whether it has seen the whole file.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

from ..files import looks_binary
from ..workspace import Workspace
from .base import Tool, ToolError

DEFAULT_LIMIT = 2000
MAX_LINE_CHARS = 2000
# Stop a window early rather than let the agent's output clip (~20,000 chars) cut
# its middle: a shorter window ends with an exact offset to read on from.
MAX_OUTPUT_CHARS = 18_000


class ReadFile(Tool):
    name = "read_file"
    description = (
        "Read a text file, shown as `<line number><tab><text>` (leave the numbers out when you edit). "
        f"Shows `limit` lines (default {DEFAULT_LIMIT}) from `offset` (1-based); the last line says where to "
        f"continue. Lines over {MAX_LINE_CHARS} characters are cut. Refuses binary files and directories."
    )
    parameters = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File to read, relative to the working directory."},
            "offset": {"type": "integer", "minimum": 1, "description": "First line to show (1-based)."},
            "limit": {"type": "integer", "minimum": 1, "description": "Most lines to show."},
        },
        "required": ["path"],
        "additionalProperties": False,
    }
    mutating = False

    def run(self, ws: Workspace, path: str, offset: int = 1, limit: int = DEFAULT_LIMIT) -> str:
        if offset < 1 or limit < 1:
            raise ToolError(f"offset and limit must be at least 1 (got offset={offset}, limit={limit})")
        target = ws.resolve(path)
        shown = ws.show(target)
        data = _read_bytes(ws, target)
        if looks_binary(data):
            raise ToolError(f"{shown} is a binary file ({len(data):,} bytes); read_file shows text only")
        # utf-8-sig drops a leading BOM, so it never shows up as a stray first character.
        lines = split_lines(data.decode("utf-8-sig", errors="replace"))
        if not lines:
            return f"{shown} is empty ({len(data):,} bytes)"
        if offset > len(lines):
            raise ToolError(f"offset {offset} is past the end: {shown} has {_lines(len(lines))}")
        return _window(lines, offset, limit)


def split_lines(text: str) -> list[str]:
    """Lines as editors number them: split on \\n only, a CRLF's \\r dropped.

    (str.splitlines would also split on form feeds and other rare separators,
    and the numbers would disagree with grep, editors and tracebacks.)
    """
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":  # the newline that ends the last line does not start another
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def cut_long_line(line: str, limit: int = MAX_LINE_CHARS) -> str:
    if len(line) <= limit:
        return line
    return f"{line[:limit]}... [line cut: {len(line):,} chars in all]"


def _read_bytes(ws: Workspace, target: Path) -> bytes:
    shown = ws.show(target)
    if target.is_dir():
        raise ToolError(f"{shown} is a directory; use glob (e.g. pattern='*' with path='{shown}') to list it")
    if not target.exists():
        raise ToolError(_missing_file_message(ws, target))
    try:
        return target.read_bytes()
    except OSError as e:
        raise ToolError(f"cannot read {shown}: {e.strerror or e}") from e


def _missing_file_message(ws: Workspace, target: Path) -> str:
    shown = ws.show(target)
    if target.is_symlink():
        return f"{shown} is a symlink to {os.readlink(target)}, which does not exist"
    if not target.parent.is_dir():
        return f"no such file: {shown} (the directory {ws.show(target.parent)} does not exist)"
    similar = _similar_names(target)
    if not similar:
        return f"no such file: {shown}"
    return f"no such file: {shown}. Similar names: {', '.join(ws.show(target.parent / n) for n in similar)}"


def _similar_names(target: Path) -> list[str]:
    """Names in the same directory that look like a typo or a case slip away."""
    by_lower = {name.lower(): name for name in sorted(os.listdir(target.parent))}
    close = difflib.get_close_matches(target.name.lower(), list(by_lower), n=3, cutoff=0.6)
    return [by_lower[c] for c in close]


def _window(lines: list[str], offset: int, limit: int) -> str:
    shown: list[str] = []
    size = 0
    for n in range(offset, min(offset + limit, len(lines) + 1)):
        numbered = f"{n:>6}\t{cut_long_line(lines[n - 1])}"
        if shown and size + len(numbered) > MAX_OUTPUT_CHARS:
            break
        shown.append(numbered)
        size += len(numbered) + 1
    last = offset + len(shown) - 1
    if last == len(lines):
        trailer = f"(end of file, {_lines(len(lines))})"
    else:
        trailer = f"(lines {offset}-{last} of {len(lines)}; use offset={last + 1} to read on)"
    return "\n".join(shown + [trailer])


def _lines(n: int) -> str:
    return f"{n} line" if n == 1 else f"{n} lines"
