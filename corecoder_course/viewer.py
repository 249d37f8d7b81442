"""Step through a recorded agent run: a widget in JupyterLab, and the same rounds as text.

`step_through(recording)` shows a slider with previous/next buttons over the rounds,
each round in full (every message the model was sent, its reply, each tool's
answer). The widget and its plain-text twin are one output: JupyterLab shows the
widget, and a page or a check that has no kernel (the static site, nbval, a
terminal) gets the text, so the twin is not printed a second time under the widget.
Everything essential is in the text, since a static page never runs the widget.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable

from .recording import RENDERERS, Recording, Round, notes
from .words import language, say, speaking


def round_html(r: Round, tool_count: int, renderers: dict = RENDERERS) -> str:
    """One round in full, as HTML for the widget; the notes of later chapters' events (a retry,
    a compaction, a worker's call) where they happened, each drawn by its renderer."""
    n = len(r.sent)
    parts = [f"<h4>{say(f'Round {r.number}', f'第 {r.number} 轮')}</h4>",
             say(f"<b>Sent</b>: the system prompt, {tool_count} tool schemas and {n} "
                 f"message{'' if n == 1 else 's'}",
                 f"<b>发送</b>：系统提示词、{tool_count} 个工具的 JSON Schema 和 {n} 条消息")]
    parts += [_message_html(i, m) for i, m in enumerate(r.sent, 1)]
    early, late = notes(r, renderers)
    parts += [f"<p><i>{html.escape(line)}</i></p>" for line in early]
    parts.append(f"<b>{say('Replied', '回复')}</b>")
    nothing = say("nothing (the call did not return)", "无（这次调用没有返回）")
    parts.append(_message_html(None, r.reply) if r.reply else f"<p>{nothing}</p>")
    if r.answers:
        parts.append(f"<b>{say('Tools answered', '工具的回应')}</b>")
    for a in r.in_call_order():
        parts.append(f"<div><code>{html.escape(a.call.id)}</code> ({html.escape(a.status)})"
                     f"<pre style='white-space: pre-wrap'>{html.escape(a.result)}</pre></div>")
    parts += [f"<p><i>{html.escape(line)}</i></p>" for line in late]
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


class Shown:
    """The widget with its text twin as its plain-text form: one output, two renderings.

    JupyterLab renders the widget; what has no widget manager (a stored notebook read by
    nbval, the static site, a console) renders the text.
    """

    def __init__(self, widget, text: str):
        self.widget = widget
        self.text = text

    def _repr_mimebundle_(self, **kwargs):
        bundle = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/plain"] = self.text
        return bundle


def viewer(recording: Recording):
    """The widget: previous/next buttons and a slider over the rounds."""
    import ipywidgets as w  # only here: the rest of the course helpers work without it

    rounds, count, spoken = recording.rounds, recording.tool_count, language()
    page = w.HTML()
    slider = w.IntSlider(value=1, min=1, max=max(len(rounds), 1), description=say("round", "轮"),
                         continuous_update=True)
    back = w.Button(description=say("◀ previous", "◀ 上一轮"))
    forward = w.Button(description=say("next ▶", "下一轮 ▶"))

    def turn(change=None):
        with speaking(spoken):  # a click comes later, from outside the cell that built it
            page.value = (round_html(rounds[slider.value - 1], count, recording.renderers) if rounds
                          else f"<p>{say('no rounds recorded', '没有记录到任何一轮')}</p>")

    back.on_click(lambda _: setattr(slider, "value", max(slider.min, slider.value - 1)))
    forward.on_click(lambda _: setattr(slider, "value", min(slider.max, slider.value + 1)))
    slider.observe(turn, names="value")
    turn()
    return w.VBox([w.HBox([back, slider, forward]), page])


def step_through(recording: Recording, result_lines: int = 12) -> None:
    """Show the widget with its text twin (under Jupyter with ipywidgets), or print the twin."""
    display_twin(lambda: viewer(recording), recording.text(result_lines))


def display_twin(widget: Callable, text: str) -> None:
    """Display `widget()` with `text` as its plain-text form under Jupyter, or print `text` where
    there is no notebook, or no IPython or ipywidgets to draw one."""
    try:
        from IPython import get_ipython
        from IPython.display import display

        if get_ipython() is not None:
            display(Shown(widget(), text))
            return
    except ImportError:
        pass  # no IPython or no ipywidgets: the text is the whole view
    print(text)
