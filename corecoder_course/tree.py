"""The delegation tree: who asked whom for what, parent → workers → their calls.

`Delegation()` is a subscriber: `agent.subscribe(tree)` on the parent sees its own calls and,
through `WorkerEvent`, every call of every worker, from whichever thread ran it. Workers finish
in any order, so each one's lines are kept apart (buffered per worker, never interleaved) and
shown in input order: the order of the `tasks` the parent's `agent` call named, not the order
they finished in. What a worker's model said stays in its report; the tree shows what it did.

`delegation_tree(tree)` shows it. In JupyterLab it is a widget: the parent's calls, and a
fold per worker that opens on its calls. Its plain-text twin is the same tree, indented.
"""

from __future__ import annotations

import html
import json
import threading

from corecoder.events import Finished, ToolCallFinished, WorkerEvent

from .viewer import display_twin
from .words import language, say, speaking


class Delegation:
    """The parent's calls and, for each worker it started, that worker's calls and its end."""

    def __init__(self):
        self.calls: list[tuple[object, str]] = []  # (the parent's ToolCall, its status)
        self.workers: dict[str, list[str]] = {}  # a worker's name -> its calls, as they came
        self.ended: dict[str, str] = {}  # a worker's name -> how its chat ended ("answer" ...)
        self.lock = threading.Lock()  # workers report from their own threads

    def __call__(self, event) -> None:
        with self.lock:
            if isinstance(event, WorkerEvent):
                inner, lines = event.event, self.workers.setdefault(event.worker, [])
                if isinstance(inner, ToolCallFinished):
                    lines.append(f"{_called(inner.call)}: {inner.status}")
                elif isinstance(inner, Finished):
                    self.ended[event.worker] = inner.reason
            elif isinstance(event, ToolCallFinished):
                self.calls.append((event.call, event.status))


def _names(arguments: str) -> list[str]:
    """The workers an `agent` call starts, in input order: its team's names, or "worker"."""
    try:
        args = json.loads(arguments or "{}")
        return [t["name"] for t in args["tasks"]] if "tasks" in args else ["worker"]
    except (ValueError, KeyError, TypeError):  # a call the tool will refuse: it starts nobody
        return []


def _started(call) -> list[str]:
    """The workers a call of the parent's started, in input order: none but for `agent`."""
    return _names(call.arguments) if call.name == "agent" else []


def _called(call) -> str:
    """A call as one short line: its tool and its first argument's value (of a team: how many
    workers)."""
    n = len(_started(call))
    if n > 1:
        return say(f"agent, a team of {n}", f"agent，{n} 个 worker 的团队")
    try:
        args = json.loads(call.arguments or "{}")
    except ValueError:
        args = {}
    first = next(iter(args.values()), "") if isinstance(args, dict) else ""
    shown = first if isinstance(first, str) else json.dumps(first, ensure_ascii=False)
    shown = " ".join(shown.split())
    return f"{call.name} {shown[:40] + ('…' if len(shown) > 40 else '')}".rstrip()


def _lines(tree: Delegation, name: str) -> list[str]:
    """A worker's calls, then how it ended, in the language of the cell that shows them."""
    reason = tree.ended.get(name)
    end = [say(f"finished ({reason})", f"结束（{reason}）")] if reason else []
    return tree.workers.get(name, []) + end


def text(tree: Delegation) -> str:
    """The text twin: the parent, its calls, and under each `agent` call its workers in input
    order, each with its calls."""
    lines = [say("parent", "父智能体")]
    for k, (call, status) in enumerate(tree.calls):
        last, workers = k == len(tree.calls) - 1, _started(call)
        lines.append(f"{'└─' if last else '├─'} {_called(call)}: {status}")
        pad = "   " if last else "│  "
        for j, name in enumerate(workers):
            end = j == len(workers) - 1
            lines.append(f"{pad}{'└─' if end else '├─'} {name}")
            inner, under = _lines(tree, name), pad + ("   " if end else "│  ")
            for i, line in enumerate(inner):
                lines.append(f"{under}{'└─' if i == len(inner) - 1 else '├─'} {line}")
    return "\n".join(lines) if tree.calls else say("no calls yet", "还没有调用")


def tree_widget(tree: Delegation):
    """The widget: the parent's calls, and a fold per worker that opens on its calls."""
    import ipywidgets as w  # only here: the rest of the course helpers work without it

    with speaking(language()):
        parts = []
        for call, status in tree.calls:
            workers = _started(call)
            parts.append(w.HTML(f"<b>{html.escape(_called(call))}</b>: {html.escape(status)}"))
            if workers:
                folds = w.Accordion(children=[w.HTML("<br>".join(
                    html.escape(line) for line in _lines(tree, name)) or "—")
                    for name in workers])
                for k, name in enumerate(workers):
                    calls = len(tree.workers.get(name, []))
                    folds.set_title(k, say(f"{name} · {calls} calls", f"{name} · {calls} 个调用"))
                parts.append(folds)
        return w.VBox([w.HTML(f"<b>{say('parent', '父智能体')}</b>"), *parts])


def delegation_tree(tree: Delegation) -> None:
    """Show the tree with its text twin (under Jupyter with ipywidgets), or print the twin."""
    display_twin(lambda: tree_widget(tree), text(tree))
