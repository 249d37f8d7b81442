"""A plain-text view of an agent's events: the demo's output and the notebooks' text twin.

It is just a subscriber. It writes the model's text as it streams, one line per
tool call, and a short preview of each result.
"""

from __future__ import annotations

import json
import sys
from typing import TextIO

from ..events import (
    Compacted,
    Finished,
    ReasoningDelta,
    Retrying,
    RoundStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    WorkerEvent,
)
from ..text import marker, shorten

MARKS = {"ok": "✓", "interrupted": "■"}  # glyphs the common terminal fonts have
# Characters a terminal obeys instead of showing: ESC starts sequences that set the window
# title, write the clipboard (OSC 52) or clear the screen; a carriage return overwrites the
# line. A file, a tool's output or a model's text may hold them: each is shown as a symbol
# (ESC as ␛), a carriage return is dropped. Newline and tab stay.
CONTROLS = {**{c: chr(0x2400 + c) for c in range(32) if c not in (9, 10, 13)}, 13: None,
            0x7F: "␡", **{c: "�" for c in range(0x80, 0xA0)}}


def printable(text: str) -> str:
    """`text`, safe to write to a terminal (see CONTROLS); the history keeps it as it was."""
    return text.translate(CONTROLS)


def to_stderr(text: str) -> None:
    """How the command writes a line outside its console and its Printer (a warning, an error
    at start-up, the trust question), so nothing it prints reaches the terminal raw: a hook's
    stderr, an MCP server's message, a project's .env value or file name may hold anything."""
    print(printable(text), file=sys.stderr, flush=True)


# What the user reads of a result: one line of an ordinary one, three of a refusal or a failure,
# whose end is often what to do about it ("(running with -p and without --yes)")
WIDTH, SETBACK_WIDTH = 100, 300


def cut(line: str, width: int, keep_end: bool = False) -> str:
    """`line`, at most `width` characters: its head, and the one marker if it was longer; with
    `keep_end`, its head and its end around the marker."""
    return shorten(line, width, tail=1 / 2 if keep_end else 0)


def call_line(name: str, arguments: str, width: int = 100) -> str:
    """`read_file(path="stats.py")`: a call as one short line."""
    try:
        args = json.loads(arguments or "{}")
        shown = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items())
    except (json.JSONDecodeError, AttributeError):
        shown = arguments
    return cut(f"{name}({shown})", width)


def preview(text: str, lines: int = 6, setback: bool = False) -> str:
    """A result's first `lines` lines, each cut to one line of the screen (a `setback`'s, a
    refused or failed call's, to three, and cut in the middle: its end says what to do)."""
    rows = text.splitlines() or [""]
    width = SETBACK_WIDTH if setback else WIDTH
    shown = [cut(r, width, keep_end=setback) for r in rows[:lines]]
    if len(rows) > lines:
        shown.append(marker(len(rows) - lines, "lines"))
    return "\n".join(shown)


class Printer:
    """Prints events as they come. `out` defaults to stdout at print time."""

    def __init__(self, out: TextIO | None = None, result_lines: int = 6):
        self.out = out
        self.result_lines = result_lines
        self.mid_line = False  # inside streamed text that has not ended with a newline
        self.thinking = False  # inside a stretch of streamed reasoning

    def __call__(self, event) -> None:
        if isinstance(event, ReasoningDelta):
            self._stream(event.text if self.thinking else f"(thinking) {event.text}")
            self.thinking = True
            return
        if self.thinking:
            self.line("")  # what follows reasoning starts on a line of its own
            self.thinking = False
        if isinstance(event, TextDelta):
            self._stream(event.text)
        elif isinstance(event, Retrying):
            self.line(f"retrying in {event.delay:.1f} s ({event.reason})")
        elif isinstance(event, Compacted):
            self.line(f"[context compacted ({event.tier}): ~{event.tokens_before:,} → "
                      f"~{event.tokens_after:,} tokens]")
        elif isinstance(event, WorkerEvent) and isinstance(event.event, ToolCallStarted):
            self.line(f"  [{event.worker}] → "
                      f"{call_line(event.event.call.name, event.event.call.arguments)}")
        elif isinstance(event, RoundStarted):
            self.line(f"── round {event.round}")
        elif isinstance(event, ToolCallStarted):
            self.line(f"→ {call_line(event.call.name, event.call.arguments)}")
        elif isinstance(event, ToolCallFinished):
            mark = MARKS.get(event.status, "✗")
            body = preview(event.result, self.result_lines,
                           setback=event.status not in MARKS).replace("\n", "\n    ")
            self.line(f"  {mark} {body}")
        elif isinstance(event, Finished) and event.reason == "max_rounds":
            self.line(f"[{event.reason}] {event.text}".rstrip())
        # an error or an interrupt ends chat() with an exception: its caller says what happened,
        # once (the command's last line is "error: ..."), so it is not said here as well
        elif isinstance(event, Finished) and self.mid_line:
            self.line("")

    def _stream(self, text: str) -> None:
        self._write(text)
        self.mid_line = not text.endswith("\n")

    def line(self, text: str) -> None:
        """Write `text` on a line of its own (an empty text just ends streamed text)."""
        if self.mid_line:
            self._write("\n")
            self.mid_line = False
        if text:
            self._write(text + "\n")

    def _write(self, text: str) -> None:
        out = self.out or sys.stdout
        out.write(printable(text))
        out.flush()
