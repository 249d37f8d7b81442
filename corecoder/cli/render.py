"""The REPL's view of an agent's events, drawn with rich: the terminal twin of trace.Printer.

It is just a subscriber, like the Printer. The model's answer streams in as
markdown, redrawn in place a few times a second; reasoning is dimmed; each tool
call is one line, its result one more; retries are yellow. A markdown block stays
"live" (redrawn) only while text is arriving: a tool call, the end of the turn or
an interrupt freezes it, so what scrolls away is plain, final output.

rich is imported when a Renderer is made, never when corecoder is imported.
"""

from __future__ import annotations

import threading

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
from .trace import MARKS, SETBACK_WIDTH, WIDTH, call_line, cut, printable

STYLES = {"ok": "green", "interrupted": "yellow"}  # anything else (a failure): red
FULL_RESULT = 4_000  # characters of a result shown at /verbosity full (head and end)
VERBOSITY = ("quiet", "brief", "full")  # a result: none of it (a setback: its line), one, all


def first_line(text: str, setback: bool = False) -> str:
    """The first non-blank line of a result, cut to one line of the screen (a `setback`'s, a
    refused or failed call's, to three, in the middle: its end says what to do), with a note of
    how many lines followed."""
    lines = [line for line in text.splitlines() if line.strip()] or [""]
    line = cut(lines[0], SETBACK_WIDTH if setback else WIDTH, keep_end=setback)
    return f"{line}  (+{len(lines) - 1} lines)" if len(lines) > 1 else line


class Renderer:
    def __init__(self, console, refresh_per_second: float = 4):
        self.console = console
        self.refresh_per_second = refresh_per_second
        self.text = ""  # the markdown streamed since the last freeze
        self.live = None  # a rich Live while answer text is streaming
        self.thinking = False  # inside streamed reasoning (printed as it comes, no newline yet)
        self.calls: dict[str, str] = {}  # the calls of this turn still running: id -> tool name
        self.status = None  # a rich Status (a spinner) naming them, in a terminal
        self.lock = threading.RLock()
        self.over = False  # the turn has ended (Ctrl+C): a call that starts late is not shown
        self.asking = False  # a consent question is on screen: no spinner over it
        self.verbosity = "brief"  # of a result: its first line; "full": all of it; "quiet": none
        self.typed = ""  # what the user is typing to the running turn (steering.py)

    def __call__(self, event) -> None:
        with self.lock:  # parallel calls report from their own threads
            self._show(event)

    def _show(self, event) -> None:
        if isinstance(event, TextDelta):
            self._answer(event.text)
        elif isinstance(event, ReasoningDelta):
            self._reason(event.text)
        elif isinstance(event, RoundStarted):
            self.over = False
        elif isinstance(event, ToolCallStarted):
            if self.over:
                return
            self.close()
            self.calls[event.call.id] = event.call.name
            self._print(f"→ {call_line(event.call.name, event.call.arguments)}", "cyan")
            self._running()
        elif isinstance(event, ToolCallFinished):
            if self.calls.pop(event.call.id, None) is None:
                return  # a call of a turn already over (stopped by Ctrl+C): it says nothing more
            self._stop_status()
            mark, style = MARKS.get(event.status, "✗"), STYLES.get(event.status, "red")
            if self.verbosity == "full":
                self._print(f"  {mark} {cut(event.result, FULL_RESULT, keep_end=True)}", style)
            elif self.verbosity == "brief" or event.status != "ok":  # a setback always shows
                self._print(f"  {mark} {first_line(event.result, event.status not in MARKS)}",
                            style)
            self._running()
        elif isinstance(event, Retrying):
            self.close()
            self._print(f"retrying in {event.delay:.1f} s ({event.reason})", "yellow")
        elif isinstance(event, Compacted):
            self.close()
            self._print(f"context compacted ({event.tier}): ~{event.tokens_before:,} → "
                        f"~{event.tokens_after:,} tokens", "dim")
        elif isinstance(event, WorkerEvent) and isinstance(event.event, ToolCallStarted):
            self.close()  # a sub-agent's steps: one dim line each, so a team's progress shows
            self._print(f"  [{event.worker}] → "
                        f"{call_line(event.event.call.name, event.event.call.arguments)}", "dim")
        elif isinstance(event, Finished):
            self.close()
            self.calls.clear()
            self.over = True
            if event.reason == "max_rounds":
                self._print(event.text, "yellow")

    def _answer(self, text: str) -> None:
        from rich.live import Live
        from rich.markdown import Markdown

        self._end_thinking()
        self.text += printable(text)
        if self.live is None:
            # Auto-refresh redraws from a thread at a steady rate, so a burst of tiny
            # deltas costs a few redraws, and a pause still shows the latest text.
            # A reply taller than the screen is cut while it streams; stop() prints it whole.
            self.live = Live(console=self.console, refresh_per_second=self.refresh_per_second)
            self.live.start()
        self.live.update(self._view(Markdown(self.text)), refresh=False)

    def _view(self, answer):
        """The streaming answer, and under it what the user is typing to the turn."""
        from rich.console import Group
        from rich.text import Text

        return Group(answer, Text(f"› {self.typed}", style="bold")) if self.typed else answer

    def typing(self, typed: str, sent: str) -> None:
        """What the user types while the turn runs: shown under the streaming answer or beside
        the spinner; a line sent (Enter) is said once, above: it joins the turn at its next step."""
        from rich.markdown import Markdown

        with self.lock:
            self.typed = typed
            if sent:
                when = "runs when the turn ends" if sent.startswith("/") else "said to the turn"
                self._print(f"› {sent}   ({when})", "bold")
            if self.live is not None:
                self.live.update(self._view(Markdown(self.text)), refresh=True)
            if self.status is not None:
                self.status.update(self._running_text())

    def _reason(self, text: str) -> None:
        self._freeze()
        # soft_wrap: pieces arrive mid-word; let the terminal wrap, not rich, or words break
        # at piece ends
        self.console.print(printable(text), style="dim italic", end="", soft_wrap=True,
                           markup=False, highlight=False)
        self.thinking = True

    def _print(self, text: str, style: str) -> None:
        self.console.print(printable(text), style=style, markup=False, highlight=False,
                           soft_wrap=True)

    def _freeze(self) -> None:
        """Stop redrawing the streamed answer: it is printed once more, in full, and left
        as it is."""
        if self.live is not None:
            self.live.stop()
            if not self.console.is_terminal:  # rich ends the last frame with a line break only
                self.console.line()  # in a terminal: elsewhere the next line would glue onto it
            self.live = None
        self.text = ""

    def _end_thinking(self) -> None:
        if self.thinking:
            self.console.print()
            self.thinking = False

    def _running(self) -> None:
        """A spinner naming the calls still running, so a long command does not look hung."""
        if self.calls and self.console.is_terminal and not self.asking:
            self.status = self.console.status(self._running_text(), spinner="dots")
            self.status.start()

    def _running_text(self) -> str:
        count = f"{len(self.calls)} calls: " if len(self.calls) > 1 else ""
        typed = f"   › {printable(self.typed)}" if self.typed else ""
        return f"running {count}{printable(', '.join(self.calls.values()))}{typed}"

    def _stop_status(self) -> None:
        if self.status is not None:
            self.status.stop()
            self.status = None

    def close(self) -> None:
        """End whatever is streaming. Safe to call at any time, twice, or after an interrupt."""
        with self.lock:
            self._stop_status()
            self._freeze()
            self._end_thinking()
