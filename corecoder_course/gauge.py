"""The context gauge: how full the window was at each round, and what compaction did about it.

`Gauge(compactor)` is a context policy (the seam chapter 1 left, `prepare`) around a Compactor:
before each round it notes the history's size as the compactor estimates it, lets the compactor
prepare the history, and keeps what happened (its Compacted events) and what was sent. A policy
around a policy: the loop cannot tell it from the compactor.

`context_gauge(gauge)` shows it. In JupyterLab it is a widget: a bar per round with the two marks
(the high one, 80 % of the window by default, where compaction starts; the low one, 40 %, which it
cuts down to), and a slider to open one round's history as it was sent. Its plain-text twin has
one row per round:

    r07 ████████░░ 83% → trim (5,000 → 3,900), summarize (3,900 → 2,300)
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field

from corecoder.events import Compacted
from corecoder.tokens import message_tokens, window_for

from .viewer import display_twin
from .words import language, say, speaking

CELLS = 10  # the text twin's bar: one cell for every 10 % of the window


@dataclass
class GaugeRound:
    """One round as the gauge saw it: the size before, what was done, what was sent."""

    number: int
    size: int  # estimated tokens of the request, before the policy prepared it
    window: int
    events: list[Compacted] = field(default_factory=list)
    overflow: bool = False  # the provider said the request was too long, and it was cut again
    sent: list[dict] = field(default_factory=list)  # the history the round sent

    @property
    def share(self) -> float:
        return self.size / self.window


class Gauge:
    """A context policy that records each round of the Compactor it wraps."""

    def __init__(self, compactor):
        self.compactor = compactor
        self.rounds: list[GaugeRound] = []
        self.preparing = False  # a /compact between rounds is not a round's

    def attach(self, agent) -> None:
        self.compactor.attach(agent)
        agent.subscribe(self._observe)

    def prepare(self, messages: list[dict], overflow: bool = False) -> list[dict]:
        c = self.compactor
        window = c.window or window_for(c.llm.model)
        if overflow and self.rounds:  # the same round, asked again
            self.rounds[-1].overflow = True
        else:
            size = c.estimate.of(messages, c.overhead())
            self.rounds.append(GaugeRound(len(self.rounds) + 1, size, window))
        self.preparing = True
        try:
            prepared = c.prepare(messages, overflow)
        finally:
            self.preparing = False
        self.rounds[-1].sent = list(prepared)
        return prepared

    def compact(self, messages: list[dict],
                focus: str | None = None) -> tuple[list[dict], Compacted | None]:
        """`/compact [focus]` reaches the compactor through the gauge."""
        return self.compactor.compact(messages, focus)

    def _observe(self, event) -> None:
        if isinstance(event, Compacted) and self.preparing:
            self.rounds[-1].events.append(event)


def what_was_done(r: GaugeRound) -> str:
    """`→ summarize (3,100 → 900)`: each tier the round ran, with the tokens before and after."""
    done = ", ".join(f"{e.tier} ({e.tokens_before:,} → {e.tokens_after:,})" for e in r.events)
    if r.overflow:
        cut = done or say("nothing to cut", "无可裁剪")
        done = say("the provider said too long: ", "服务商说太长：") + cut
    return f" → {done}" if done else ""


def row(r: GaugeRound) -> str:
    filled = min(CELLS, round(r.share * CELLS))
    bar = "█" * filled + "░" * (CELLS - filled)
    return f"r{r.number:02d} {bar} {r.share:4.0%}{what_was_done(r)}"


def table(gauge: Gauge) -> str:
    """The text twin: a line on the marks, then one row per round."""
    if not gauge.rounds:
        return say("no rounds yet", "还没有轮次")
    window, c = gauge.rounds[0].window, gauge.compactor
    head = say(f"window {window:,} tokens; compacted at {c.high:.0%}, down to {c.low:.0%}",
               f"窗口 {window:,} 个 token；到 {c.high:.0%} 时压缩，降到 {c.low:.0%}")
    return "\n".join([head, *(row(r) for r in gauge.rounds)])


COLOURS = {"system": "#888", "user": "#2b7bb9", "assistant": "#3a9d5d", "tool": "#c77c1e"}


def _bar_html(r: GaugeRound, marks: tuple[float, float], chosen: bool) -> str:
    lines = "".join(f"<div style='position:absolute;left:{t * 100:.0f}%;top:0;bottom:0;"
                    f"border-left:2px dashed {colour}'></div>"
                    for t, colour in zip(marks, ("#c33", "#3a9d5d"), strict=True))
    fill = (f"<div style='width:{min(1.0, r.share) * 100:.1f}%;height:100%;"
            f"background:{'#2b7bb9' if chosen else '#9bbcd6'}'></div>")
    weight = "bold" if chosen else "normal"
    return (f"<div style='display:flex;align-items:center;gap:8px;font-weight:{weight}'>"
            f"<code>r{r.number:02d}</code><div style='position:relative;width:260px;height:14px;"
            f"background:#eee'>{fill}{lines}</div><span>{r.share:.0%}"
            f"{html.escape(what_was_done(r))}</span></div>")


def _sent_html(r: GaugeRound) -> str:
    rows = []
    for m in r.sent:
        text = str(m.get("content") or "") or ", ".join(
            c["function"]["name"] for c in m.get("tool_calls") or [])
        rows.append(f"<tr><td style='color:{COLOURS.get(m['role'], '#000')}'>{m['role']}</td>"
                    f"<td style='text-align:right'>{message_tokens(m):,}</td>"
                    f"<td><code>{html.escape(text[:70])}</code></td></tr>")
    head = say(f"round {r.number} sent {len(r.sent)} messages (and the system prompt):",
               f"第 {r.number} 轮发送了 {len(r.sent)} 条消息（另有系统提示词）：")
    return (f"<p>{head}</p><table><tr><th>{say('role', '角色')}</th><th>tokens</th>"
            f"<th>{say('begins', '开头')}</th></tr>{''.join(rows)}</table>")


def gauge_widget(gauge: Gauge):
    """The widget: every round's bar, and a slider that opens one round's history."""
    import ipywidgets as w  # only here: the rest of the course helpers work without it

    spoken, marks = language(), (gauge.compactor.high, gauge.compactor.low)
    slider = w.IntSlider(value=1, min=1, max=max(len(gauge.rounds), 1),
                         description=say("round", "轮次"))
    page = w.HTML()

    def turn(change=None):
        with speaking(spoken):  # a slide comes later, from outside the cell that built it
            if not gauge.rounds:
                page.value = f"<p>{say('no rounds yet', '还没有轮次')}</p>"
                return
            chosen = gauge.rounds[slider.value - 1]
            bars = "".join(_bar_html(r, marks, r is chosen) for r in gauge.rounds)
            page.value = f"<div>{bars}</div>{_sent_html(chosen)}"

    slider.observe(turn, names="value")
    turn()
    return w.VBox([slider, page])


def context_gauge(gauge: Gauge) -> None:
    """Show the gauge with its text twin (under Jupyter with ipywidgets), or print the twin."""
    display_twin(lambda: gauge_widget(gauge), table(gauge))
