"""Cutting text down to size: one shortener, one marker, for every output that could be too long.

A tool's output, an old result trimmed to save context, a sub-agent's report, a long line
of minified JavaScript, a line in the terminal: each may be too long for where it goes.
Each is cut the same way, and says so the same way, with the count of what was left out:

    the head of the text[... 12,345 characters cut ...]and its tail

so the model (or the user) always knows that it is not seeing everything, and how much
it is missing. A note may say where the whole text is: `[... 12,345 characters cut; the
full output is in .corecoder/outputs/3f2a.txt ...]`.
"""

from __future__ import annotations


def marker(count: int, unit: str = "characters", note: str = "") -> str:
    """`[... 1,234 characters cut ...]`, or `[... 1,234 characters cut; NOTE ...]`."""
    return f"[... {count:,} {unit} cut{'; ' + note if note else ''} ...]"


def shorten(text: str, limit: int, *, tail: float = 1 / 3, note: str = "") -> str:
    """`text` if it has at most `limit` characters; else its head and tail around a marker,
    `limit` characters in all. `tail` is the tail's share of what is kept (0: the head only)."""
    if len(text) <= limit:
        return text
    room = max(0, limit - len(marker(len(text), note=note)))  # a cut counts at most len(text)
    keep_tail = int(room * tail)
    head, end = text[: room - keep_tail], text[len(text) - keep_tail :] if keep_tail else ""
    return f"{head}{marker(len(text) - len(head) - len(end), note=note)}{end}"


# --- defences: a text no request can refuse


def valid_text(text: str) -> str:
    """`text` as UTF-8 can carry it. A file name or output that is not UTF-8 reaches Python as
    lone surrogates, which no request can encode: one in the history would fail every request
    after it. Each byte that was not UTF-8 becomes �."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape" if _escaped(text) else "surrogatepass") \
            .decode("utf-8", "replace")


def _escaped(text: str) -> bool:
    """Are its surrogates all of the kind that stand for undecodable bytes (U+DC80..U+DCFF)?"""
    return all("\udc80" <= c <= "\udcff" for c in text if "\ud800" <= c <= "\udfff")
