"""Step through a recorded agent run: a widget in JupyterLab, and the same rounds as text.

`step_through(recording)` shows a slider with previous/next buttons over the rounds,
each round in full (every message the model was sent, its reply, each tool's
answer), and then prints the plain-text twin. The widget is a convenience: a static
page or a test never runs it, so everything essential is in the printed text too.
"""

from __future__ import annotations

import html
import json

from .recording import Recording, Round

WIDGET_LABEL = "[step-through viewer: {n} rounds; run this cell in JupyterLab to step through them]"


def round_html(r: Round, tool_count: int) -> str:
    """One round in full, as HTML for the widget."""
    parts = [f"<h4>Round {r.number}</h4>",
             f"<b>Sent</b>: the system prompt, {tool_count} tool schemas and {len(r.sent)} "
             f"message{'' if len(r.sent) == 1 else 's'}"]
    parts += [_message_html(i, m) for i, m in enumerate(r.sent, 1)]
    parts.append("<b>Replied</b>")
    parts.append(_message_html(None, r.reply) if r.reply
                 else "<p>nothing (the call did not return)</p>")
    if r.answers:
        parts.append("<b>Tools answered</b>")
    for a in r.in_call_order():
        parts.append(f"<div><code>{html.escape(a.call.id)}</code> ({html.escape(a.status)})"
                     f"<pre style='white-space: pre-wrap'>{html.escape(a.result)}</pre></div>")
    if r.note:
        parts.append(f"<p>[{html.escape(r.ended)}] {html.escape(r.note)}</p>")
    return "\n".join(parts)


def _message_html(index: int | None, m: dict) -> str:
    label = m.get("role", "?") if index is None else f"[{index}] {m.get('role', '?')}"
    if m.get("tool_call_id"):
        label += f" → {m['tool_call_id']}"
    body = str(m.get("content") or "")
    for call in m.get("tool_calls") or []:
        args = call["function"]["arguments"]
        try:
            args = json.dumps(json.loads(args), ensure_ascii=False, indent=1)
        except json.JSONDecodeError:
            pass  # malformed arguments are shown exactly as the model sent them
        body += f"\n{call['id']}: {call['function']['name']}({args})"
    return (f"<details><summary><code>{html.escape(label)}</code> "
            f"{html.escape(body.strip()[:80])}</summary>"
            f"<pre style='white-space: pre-wrap'>{html.escape(body.strip())}</pre></details>")


class _Shown:
    """The widget, with a short plain-text stand-in instead of the widget's long repr.

    The stand-in is what a notebook stores, what nbval compares and what a page
    without a kernel shows; the live view is the widget itself.
    """

    def __init__(self, widget, label: str):
        self.widget = widget
        self.label = label

    def _repr_mimebundle_(self, **kwargs):
        bundle = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/plain"] = self.label
        return bundle


def viewer(recording: Recording):
    """The widget: previous/next buttons and a slider over the rounds."""
    import ipywidgets as w  # only here: the rest of the course helpers work without it

    rounds, count = recording.rounds, recording.tool_count
    page = w.HTML()
    slider = w.IntSlider(value=1, min=1, max=max(len(rounds), 1), description="round",
                         continuous_update=True)
    back, forward = w.Button(description="◀ previous"), w.Button(description="next ▶")

    def turn(change=None):
        page.value = (round_html(rounds[slider.value - 1], count) if rounds
                      else "<p>no rounds recorded</p>")

    back.on_click(lambda _: setattr(slider, "value", max(slider.min, slider.value - 1)))
    forward.on_click(lambda _: setattr(slider, "value", min(slider.max, slider.value + 1)))
    slider.observe(turn, names="value")
    turn()
    return w.VBox([w.HBox([back, slider, forward]), page])


def step_through(recording: Recording, result_lines: int = 12) -> None:
    """Show the widget (when running under Jupyter with ipywidgets) and print the text twin."""
    try:
        from IPython import get_ipython
        from IPython.display import display

        if get_ipython() is not None:
            display(_Shown(viewer(recording), WIDGET_LABEL.format(n=len(recording.rounds))))
    except ImportError:
        pass  # no IPython or no ipywidgets: the text below is the whole view
    print(recording.text(result_lines))
