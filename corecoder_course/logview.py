"""A session file as a learner reads it: a table of its lines, one row a line.

`session_log(path)` shows each line of a session file (`HOME/sessions/<id>.jsonl`) as a row:
its number, the kind of record it is, the round it was written in (the model's replies so far),
and what it holds in a few words. A line the loader skips is a row too, and says why: torn by
a crash (the last line), not JSON, not a record, nested too deep to read. Under JupyterLab each
row is a button that opens that line whole, as JSON; the text twin is the same rows.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

from .viewer import display_twin
from .words import columns, language, say, speaking


def _holds(record: dict) -> str:
    """What a record holds, in a few words."""
    kind = record.get("type")
    if kind == "message" and isinstance(record.get("message"), dict):
        m = record["message"]
        calls = [c.get("function", {}).get("name", "?") for c in m.get("tool_calls") or []
                 if isinstance(c, dict)]
        text = " ".join(str(m.get("content") or "").split())
        said = f"{m.get('role')}: " + (text[:40] + "…" * (len(text) > 40) if text else "")
        return said + (say(" calls ", " 调用 ") + ", ".join(calls) if calls else "")
    if kind == "history" and isinstance(record.get("messages"), list):
        return say(f"{len(record['messages'])} messages, replacing all before",
                   f"{len(record['messages'])} 条消息，替换之前的全部")
    if kind in ("meta", "model"):
        return say("model ", "模型 ") + str(record.get("model"))
    if kind == "todos" and isinstance(record.get("todos"), list):
        return say(f"{len(record['todos'])} todos", f"{len(record['todos'])} 条待办")
    if kind == "usage" and isinstance(record.get("usage"), dict):
        return say("tokens ", "token ") + ", ".join(f"{k} {v}" for k, v in record["usage"].items())
    return say("(a shape the loader skips)", "（加载时会跳过的形状）")


def rows(path: Path | str) -> list[tuple[int, str, str, str, str]]:
    """Each line of the file: (number, kind, round, what it holds, the line itself)."""
    data = Path(path).read_bytes().decode("utf-8", "replace")
    lines = data.split("\n")
    last = max((i for i, line in enumerate(lines) if line.strip()), default=-1)
    found, replies = [], 0
    for i, line in enumerate(lines[: last + 1]):
        try:
            record = json.loads(line)
        except (ValueError, RecursionError) as e:
            why = (say("torn by a crash: dropped", "被崩溃撕断：丢掉") if i == last else
                   say("nested too deep: skipped", "嵌套太深：跳过") if isinstance(
                       e, RecursionError) else say("not JSON: skipped", "不是 JSON：跳过"))
            found.append((i + 1, say("damaged", "损坏"), "", why, line))
            continue
        if not isinstance(record, dict):
            found.append((i + 1, say("damaged", "损坏"), "", say("not a record: skipped",
                                                               "不是记录：跳过"), line))
            continue
        kind = str(record.get("type"))
        if kind == "history" and isinstance(record.get("messages"), list):
            replies = sum(isinstance(m, dict) and m.get("role") == "assistant"
                          for m in record["messages"])
        elif kind == "message" and isinstance(record.get("message"), dict):
            replies += record["message"].get("role") == "assistant"
        found.append((i + 1, kind, str(replies) if replies else "", _holds(record), line))
    return found


def log_text(path: Path | str) -> str:
    head = (say("line", "行"), say("kind", "类型"), say("round", "轮"), say("holds", "内容"))
    table = [head, *((str(n), kind, r, holds) for n, kind, r, holds, _ in rows(path))]
    widths = [max(columns(row[k]) for row in table) for k in range(3)]
    return "\n".join("  ".join([*(cell + " " * (w - columns(cell)) for cell, w in zip(
        row, widths, strict=False)), row[3]]).rstrip() for row in table)


def _opened(line: str) -> str:
    try:
        shown = json.dumps(json.loads(line), ensure_ascii=False, indent=2)
    except (ValueError, RecursionError):
        shown = line[:400] + "…" * (len(line) > 400)
    return "<pre>" + html.escape(shown) + "</pre>"


def log_widget(path: Path | str):
    """The rows as buttons; a press opens that line whole below."""
    import ipywidgets as w

    lang = language()
    with speaking(lang):
        found = rows(path)
        opened = w.HTML(say("<i>press a line to open it</i>", "<i>点一行，展开它</i>"))

    def press(line: str):
        def pressed(_button) -> None:
            opened.value = _opened(line)
        return pressed

    buttons = []
    for n, kind, r, holds, line in found:
        button = w.Button(description=f"{n:>3}  {kind:<8} {r:>3}  {holds}"[:90],
                          layout=w.Layout(width="auto"), tooltip=holds)
        button.style.font_family = "monospace"
        button.on_click(press(line))
        buttons.append(button)
    return w.VBox([*buttons, opened])


def session_log(path: Path | str) -> None:
    """Show the session file's lines as rows (under Jupyter with ipywidgets, each opens its
    line) and the text twin, or print the twin."""
    display_twin(lambda: log_widget(path), log_text(path))
