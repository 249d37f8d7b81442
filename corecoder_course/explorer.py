"""The edit explorer: old_string and new_string tried on a sample file through the real edit_file.

`explore_edits(text, attempts)` runs each attempt on a fresh copy of `text` and tells what
happened: the step of the cascade that matched (the exact text, or what a tolerant step
forgave), the line it changed, whether the file's CRLF line endings survived, or why the
edit was refused. In JupyterLab it is a widget: pick an attempt or type your own, press
"edit", and see the verdict and the diff. Its plain-text twin, the one output a page without
a kernel shows (the site, nbval), is the table of the attempts and their verdicts.

The verdict is read from edit_file's own answer, the text the model would get.
"""

from __future__ import annotations

import html
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from corecoder.tool import ToolError
from corecoder.tools.edit import EditFile
from corecoder.workspace import Workspace

from .viewer import display_twin
from .words import columns, language, say, speaking

SAMPLE = "sample.py"


@dataclass
class Outcome:
    """What edit_file did with one attempt on a fresh copy of the sample."""

    answer: str  # edit_file's whole answer: its summary and diff, or why it refused
    matched: str = ""  # "the exact text" or the tolerant step; "" when refused
    line: str = ""  # where the change starts ("3"); "" when refused
    after: bytes | None = None  # the file's bytes after the edit; None when refused

    @property
    def refused(self) -> bool:
        return self.after is None


def attempt(text: str, old: str, new: str) -> Outcome:
    """Run edit_file once on a fresh copy of `text`, in a folder of its own."""
    with tempfile.TemporaryDirectory(prefix="corecoder-explorer-") as folder:
        path = Path(folder, SAMPLE)
        path.write_bytes(text.encode("utf-8"))
        try:
            answer = EditFile().run(Workspace(folder), SAMPLE, old, new)
        except ToolError as e:
            return Outcome(str(e))
        summary = answer.split("\n", 1)[0]
        tolerant = re.search(r"\(tolerant match: (.+)\)\.", summary)
        line = re.search(r" at lines? ([\d, ]+)", summary)
        return Outcome(answer, tolerant[1] if tolerant else say("the exact text", "原文精确匹配"),
                       line[1].strip() if line else "", path.read_bytes())


def crlf_kept(before: str, after: bytes | None) -> str:
    """Did every line break of a CRLF file stay CRLF?"""
    if after is None:
        return say("(unchanged)", "（未改动）")
    if "\r\n" not in before:
        return "-"
    return say("yes", "是") if after.count(b"\n") == after.count(b"\r\n") else say("no", "否")


def table(text: str, attempts: list[tuple[str, str, str]]) -> str:
    """The text twin: one row per attempt, each on a fresh copy of the sample."""
    heads = [say("attempt", "尝试"), say("matched by", "匹配方式"), say("line", "行"),
             say("CRLF kept", "CRLF 保留")]
    rows = []
    for label, old, new in attempts:
        got = attempt(text, old, new)
        matched = got.matched or say("refused: ", "拒绝：") + _reason(got.answer)
        rows.append([label, matched, got.line or "-", crlf_kept(text, got.after)])
    widths = [max(columns(row[i]) for row in [heads, *rows]) for i in range(len(heads))]
    lines = [say(f"edit_file on {SAMPLE} ({_endings(text)}), each attempt on a fresh copy:",
                 f"对 {SAMPLE}（{_endings(text)}）调用 edit_file，每次尝试都用一份新副本："), ""]
    lines += ["  ".join(_pad(cell, w) for cell, w in zip(row, widths, strict=True)).rstrip()
              for row in [heads, *rows]]
    return "\n".join(lines)


def _reason(text: str) -> str:
    """A refusal's first sentence, short enough for a table: `occurs 3 times (lines 2, 4, 5)`."""
    first = re.split(r"(?<=[.)])\s", text, maxsplit=1)[0].rstrip(".")
    return first.removeprefix("old_string ").replace(f" in {SAMPLE}", "")


def _endings(text: str) -> str:
    lines = text.count("\n")
    if "\r\n" in text:
        return say(f"{lines} lines, CRLF line endings", f"{lines} 行，CRLF 换行")
    return say(f"{lines} lines", f"{lines} 行")


def _pad(text: str, width: int) -> str:
    return text + " " * (width - columns(text))


def _visible(text: str) -> str:
    """The text as HTML, each CR shown as a grey `\\r`, so a CRLF file looks like one."""
    return html.escape(text).replace("\r", "<span style='color: #888'>\\r</span>")


def explorer(text: str, attempts: list[tuple[str, str, str]]):
    """The widget: an attempt to start from, old_string and new_string to edit, a button."""
    import ipywidgets as w  # only here: the rest of the course helpers work without it

    spoken = language()
    pick = w.Dropdown(options=[(label, i) for i, (label, _, _) in enumerate(attempts)],
                      description=say("attempt", "尝试"))
    old = w.Textarea(description="old_string", layout=w.Layout(width="95%", height="6em"))
    new = w.Textarea(description="new_string", layout=w.Layout(width="95%", height="6em"))
    run = w.Button(description=say("edit", "编辑"), button_style="primary")
    legend = say("a grey \\r is a CR", "灰色的 \\r 表示 CR")
    sample = w.HTML(f"<b>{SAMPLE}</b> ({legend})"
                    f"<pre>{_visible(text)}</pre>")
    verdict = w.HTML()

    def load(change=None):
        _, old.value, new.value = attempts[pick.value]
        edit()

    def edit(_=None):
        with speaking(spoken):  # a click comes later, from outside the cell that built it
            got = attempt(text, old.value, new.value)
            if got.refused:
                verdict.value = (f"<p><b>{say('refused', '拒绝')}</b></p>"
                                 f"<pre style='white-space: pre-wrap'>{_visible(got.answer)}</pre>")
                return
            verdict.value = (
                f"<p><b>{say('matched by', '匹配方式')}</b>: {html.escape(got.matched)} · "
                f"<b>{say('line', '行')}</b> {html.escape(got.line)} · "
                f"<b>{say('CRLF kept', 'CRLF 保留')}</b>: {crlf_kept(text, got.after)}</p>"
                f"<pre>{_visible(got.answer)}</pre>")

    pick.observe(load, names="value")
    run.on_click(edit)
    load()
    return w.VBox([sample, pick, old, new, run, verdict])


def explore_edits(text: str, attempts: list[tuple[str, str, str]]) -> None:
    """Show the explorer with its text twin (under Jupyter with ipywidgets), or print the twin.
    `attempts`: (label, old_string, new_string) for each scripted attempt."""
    display_twin(lambda: explorer(text, attempts), table(text, attempts))
