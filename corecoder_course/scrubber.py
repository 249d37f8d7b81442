"""The stream scrubber: a stream's tool-call fragments, fed one at a time to the real assembler.

`scrub_stream(deltas)` takes the tool-call deltas of one streamed reply (as
corecoder.testing.serve.tool_call_deltas shapes them for a provider's dialect) and shows,
after each one, the calls that `ToolCallAssembler` has put together so far. In JupyterLab it
is a widget: a slider over the chunks. Its plain-text twin, the one output a page without a
kernel shows, is a table with one row per chunk: what it carried, and the calls so far.
"""

from __future__ import annotations

import html

from corecoder.stream import ToolCallAssembler

from .viewer import display_twin
from .words import columns, language, say, speaking


def fragment(delta: dict) -> str:
    """One delta in a line: `index=0 id=call_1 name=read_file args='{"pa'`."""
    function = delta.get("function") or {}
    parts = [f"index={delta.get('index')}"]
    parts += [f"id={delta['id']}"] if delta.get("id") else []
    parts += [f"name={function['name']}"] if function.get("name") else []
    parts.append(f"args={function.get('arguments', '')!r}")
    return " ".join(parts)


def assembled(deltas: list[dict]) -> list[str]:
    """The calls the assembler holds after `deltas`, each as `name(arguments so far)`."""
    calls = ToolCallAssembler()
    for delta in deltas:
        function = delta.get("function") or {}
        calls.add(delta.get("index"), delta.get("id"), function.get("name"),
                  function.get("arguments"))
    return [f"{call.name}({call.arguments})" for call in calls.result()]


def changed(deltas: list[dict], n: int) -> str:
    """The call chunk `n` went to, as it stands after it: `#2 grep({"patte)`, its text cut at
    the front to fit a row (the newest piece is at its end)."""
    before, after = assembled(deltas[: n - 1]), assembled(deltas[:n])
    i = next((i for i, call in enumerate(after) if i >= len(before) or call != before[i]),
             len(after) - 1)
    text = after[i] if len(after[i]) <= CALL_WIDTH else "…" + after[i][-(CALL_WIDTH - 1):]
    return f"#{i + 1} {text}"


CALL_WIDTH = 22  # characters of a call shown in a row of the twin, so that a row fits a page


def table(deltas: list[dict]) -> str:
    """The text twin: one row per chunk, what it carried and the call it went to, so far."""
    rows = [(str(n), fragment(d), changed(deltas, n)) for n, d in enumerate(deltas, 1)]
    width = max(len(r[1]) for r in rows) if rows else 0
    carries = say("what the chunk carries", "数据块携带的内容")
    lines = [f"  #  {carries}{' ' * max(1, width + 2 - columns(carries))}"
             + say("its call so far", "所归调用（目前）")]
    lines += [f"{n:>3}  {carried:<{width}}  {calls}" for n, carried, calls in rows]
    return "\n".join(lines)


def scrubber(deltas: list[dict]):
    """The widget: a slider over the chunks; the chunk, and the calls assembled so far."""
    import ipywidgets as w  # only here: the rest of the course helpers work without it

    spoken = language()
    slider = w.IntSlider(value=1, min=1, max=max(len(deltas), 1),
                         description=say("chunk", "数据块"))
    page = w.HTML()

    def turn(change=None):
        with speaking(spoken):  # a slide comes later, from outside the cell that built it
            n = slider.value
            calls = "".join(f"<li><code>{html.escape(c)}</code></li>"
                            for c in assembled(deltas[:n]))
            page.value = (f"<p><b>{say('chunk', '数据块')} {n}</b>{say(': ', '：')}"
                          f"<code>{html.escape(fragment(deltas[n - 1]))}</code></p>"
                          f"<p>{say('the calls so far:', '目前拼出的调用：')}</p><ul>{calls}</ul>"
                          if deltas else f"<p>{say('no chunks', '没有数据块')}</p>")

    slider.observe(turn, names="value")
    turn()
    return w.VBox([slider, page])


def scrub_stream(deltas: list[dict]) -> None:
    """Show the scrubber with its text twin (under Jupyter with ipywidgets), or print the twin."""
    display_twin(lambda: scrubber(deltas), table(deltas))
