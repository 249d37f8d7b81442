"""The call timeline: what the calls of a batch did, in the order it happened.

`Timeline()` is a subscriber: `agent.subscribe(timeline)` numbers every call's finish as the
agent emits it (from whichever thread ran the call), and `timeline.mark(call_id, text)` adds a
step of a tool's own (waiting, an event set). `timeline.finished(call_id)` is an event a tool can
wait on, set once that call's finish is on the timeline. Order, not time: a number says what
came before what. A page shows the same thing every run only where the order was forced (a
barrier, an event one call waits for); where nothing forced it, two runs may order two steps
differently, and the twin says so. (A call's start is not a step: nothing can force when a
thread starts.)

`call_timeline(timeline)` shows it. In JupyterLab it is a widget: a lane per call, a slider over
the steps. Its plain-text twin is the ordered list of steps.
"""

from __future__ import annotations

import html
import threading

from corecoder.events import ToolCallFinished

from .viewer import display_twin
from .words import language, say, speaking


class Timeline:
    """Every step of every call, numbered in the order it happened."""

    def __init__(self):
        self.steps: list[tuple[int, str, str]] = []  # (number, call id, what happened)
        self.calls: dict[str, str] = {}  # call id -> its tool's name, as they finished
        self.lock = threading.Lock()  # calls run on several threads
        self.ended: dict[str, threading.Event] = {}

    def __call__(self, event) -> None:
        if isinstance(event, ToolCallFinished):
            self.calls.setdefault(event.call.id, event.call.name)
            self.mark(event.call.id, f"finished: {event.status}")
            self.finished(event.call.id).set()

    def mark(self, call_id: str, text: str) -> None:
        with self.lock:
            self.steps.append((len(self.steps) + 1, call_id, text))

    def finished(self, call_id: str) -> threading.Event:
        """Set once the call's finish is on the timeline: what a call can wait for."""
        with self.lock:
            return self.ended.setdefault(call_id, threading.Event())


def table(timeline: Timeline) -> str:
    """The text twin: one line per step, and what the order means."""
    ids = max((len(c) for _, c, _ in timeline.steps), default=0)
    names = max((len(name) for name in timeline.calls.values()), default=0)
    lines = [f"{n:>3}  {call_id:<{ids}}  {timeline.calls.get(call_id, ''):<{names}}  {text}"
             for n, call_id, text in timeline.steps]
    note = say("(steps whose order nothing forced, no barrier and no event one call waits for, "
               "may come in another order on another run)",
               "（没有任何东西强制先后的步骤，比如没有屏障、也没有一个调用在等的事件，"
               "每次运行的顺序可能不同）")
    return "\n".join([*lines, note]) if lines else say("no calls yet", "还没有调用")


def _lanes_html(timeline: Timeline, upto: int) -> str:
    ids = list(dict.fromkeys(c for _, c, _ in timeline.steps))  # in the order they first appear
    head = "".join(f"<th><code>{html.escape(i)}</code> {html.escape(timeline.calls.get(i, ''))}"
                   "</th>" for i in ids)
    rows = []
    for n, call_id, text in timeline.steps:
        shown = n <= upto
        cells = "".join(f"<td style='background:{'#d9e8f5' if c == call_id and shown else ''}'>"
                        f"{html.escape(text) if c == call_id and shown else ''}</td>" for c in ids)
        weight = "bold" if n == upto else "normal"
        rows.append(f"<tr style='font-weight:{weight}'><td>{n}</td>{cells}</tr>")
    return (f"<table><tr><th>{say('step', '步骤')}</th>{head}</tr>{''.join(rows)}</table>")


def timeline_widget(timeline: Timeline):
    """The widget: a lane per call, and a slider that plays the steps in order."""
    import ipywidgets as w  # only here: the rest of the course helpers work without it

    spoken = language()
    slider = w.IntSlider(value=len(timeline.steps), min=0, max=max(len(timeline.steps), 1),
                         description=say("step", "步骤"))
    page = w.HTML()

    def turn(change=None):
        with speaking(spoken):  # a slide comes later, from outside the cell that built it
            page.value = _lanes_html(timeline, slider.value)

    slider.observe(turn, names="value")
    turn()
    return w.VBox([slider, page])


def call_timeline(timeline: Timeline) -> None:
    """Show the timeline with its text twin (under Jupyter with ipywidgets), or print the twin."""
    display_twin(lambda: timeline_widget(timeline), table(timeline))
