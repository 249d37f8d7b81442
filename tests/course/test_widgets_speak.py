"""Every widget speaks the language of the notebook that built it, and keeps speaking it.

A widget built in a Chinese notebook labels its controls in Chinese, and what it draws later,
when the learner moves its slider or presses its button from outside the cell that built it,
is Chinese too. This is the widget's own function, the same in JupyterLab: the browser tests
open every chapter's widget in English (and the tour's in both languages), and these prove the
Chinese of the others without a browser.
"""

from __future__ import annotations

from corecoder.events import Compacted
from corecoder.messages import assistant, user
from corecoder_course.explorer import explorer
from corecoder_course.gauge import Gauge, GaugeRound, gauge_widget
from corecoder_course.scrubber import scrubber
from corecoder_course.timeline import Timeline, timeline_widget
from corecoder_course.words import speaking


def words(widget) -> str:
    """Every label and every drawn text of a widget and its children."""
    found = []
    for part in [widget, *getattr(widget, "children", ())]:
        found += [str(getattr(part, name, "")) for name in ("description", "value")]
        found += [str(label) for label, _ in getattr(part, "options", ()) or ()]
    return "\n".join(found)


def test_the_edit_explorer_speaks_chinese_and_still_does_after_a_click():
    attempts = [("exact", "b = 2", "b = 3"), ("nowhere", "zzz", "y")]
    with speaking("zh"):
        box = explorer("a = 1\nb = 2\n", attempts)
    assert "尝试" in words(box) and "编辑" in words(box) and "匹配方式" in words(box)
    pick = box.children[1]
    pick.value = 1  # the learner picks the attempt that matches nothing, later
    assert "拒绝" in box.children[-1].value and "refused" not in box.children[-1].value


def test_the_stream_scrubber_speaks_chinese_and_still_does_after_a_slide():
    deltas = [{"index": 0, "id": "c1", "name": "read_file", "arguments": ""},
              {"index": 0, "arguments": '{"path": "a.py"}'}]
    with speaking("zh"):
        box = scrubber(deltas)
    slider, page = box.children
    assert slider.description == "数据块" and "数据块 1" in page.value
    slider.value = 2
    assert "数据块 2" in page.value and "目前拼出的调用" in page.value and "so far" not in page.value


def test_the_context_gauge_speaks_chinese_and_still_does_after_a_slide():
    gauge = Gauge(type("Fixed", (), {"high": 0.8, "low": 0.4})())
    for n in (1, 2):
        r = GaugeRound(n, 1_000 * n, 10_000)
        r.sent, r.events = [user("go"), assistant("ok")], [Compacted("trim", 1_000 * n, 500)]
        gauge.rounds.append(r)
    with speaking("zh"):
        box = gauge_widget(gauge)
    slider, page = box.children
    assert slider.description == "轮次" and "第 1 轮发送了" in page.value
    slider.value = 2
    assert "第 2 轮发送了" in page.value and "sent" not in page.value


def test_the_call_timeline_speaks_chinese_and_still_does_after_a_slide():
    timeline = Timeline()
    for call, text in [("c1", "starts"), ("c2", "starts"), ("c1", "finished: ok")]:
        timeline.mark(call, text)
    with speaking("zh"):
        box = timeline_widget(timeline)
    slider, page = box.children
    assert slider.description == "步骤" and "步骤" in page.value
    slider.value = 1
    assert "步骤" in page.value and "step" not in page.value


def test_the_delegation_tree_speaks_chinese_and_keeps_each_workers_calls_apart_in_input_order():
    from corecoder.events import Finished, ToolCallFinished, WorkerEvent
    from corecoder.messages import ToolCall
    from corecoder_course.tree import Delegation, text, tree_widget

    tree = Delegation()
    team = ToolCall("c1", "agent", '{"tasks": [{"name": "p1", "task": "a"}, {"name": "p2", "task": "b"}]}')
    for worker in ("p2", "p1"):  # p2 finishes first: the tree still shows p1 first
        tree(WorkerEvent(worker, ToolCallFinished(ToolCall("x", "read_file", '{"path": "a.py"}'), "ok", "ok")))
        tree(WorkerEvent(worker, Finished("done", "answer")))
    tree(ToolCallFinished(team, "## p1 ...", "ok"))
    with speaking("zh"):
        shown, box = text(tree), tree_widget(tree)
    assert shown.index("p1") < shown.index("p2") and "父智能体" in shown and "结束（answer）" in shown
    folds = box.children[-1]
    assert [folds.get_title(k) for k in range(2)] == ["p1 · 1 个调用", "p2 · 1 个调用"]
    assert "read_file a.py: ok" in folds.children[0].value and "finished" not in folds.children[0].value
