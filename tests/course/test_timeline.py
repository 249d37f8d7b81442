"""The call timeline: the steps of a batch's calls, numbered in the order they happened."""

import threading

from corecoder import Agent, ScriptedLLM, Tool
from corecoder.executor import RunInParallel
from corecoder_course import Timeline
from corecoder_course.timeline import table
from corecoder_course.words import speaking


class Ordered(Tool):
    """Read-only: the first call waits until the second call's finish is on the timeline."""

    name = "ordered"
    parameters = {"type": "object", "properties": {"tag": {"type": "string"}}, "required": ["tag"],
                  "additionalProperties": False}

    def __init__(self, timeline):
        self.timeline, self.waiting = timeline, threading.Event()

    def run(self, ws, tag):
        if tag == "first":
            self.timeline.mark("c1", "waits")
            self.waiting.set()
            assert self.timeline.finished("c2").wait(5)
            self.timeline.mark("c1", "wakes")
        else:
            assert self.waiting.wait(5)
            self.timeline.mark("c2", "runs")
        return tag


def run(timeline):
    calls = [{"id": "c1", "name": "ordered", "arguments": {"tag": "first"}},
             {"id": "c2", "name": "ordered", "arguments": {"tag": "second"}}]
    agent = Agent(ScriptedLLM([{"tool_calls": calls}, "done"]), [Ordered(timeline)], executor=RunInParallel())
    agent.subscribe(timeline)
    agent.chat("go")
    return agent


def test_forced_steps_and_finishes_are_numbered_in_the_order_they_happened():
    timeline = Timeline()
    agent = run(timeline)
    assert timeline.steps == [(1, "c1", "waits"), (2, "c2", "runs"), (3, "c2", "finished: ok"), (4, "c1", "wakes"),
                              (5, "c1", "finished: ok")]
    assert [m["content"] for m in agent.messages if m["role"] == "tool"] == ["first", "second"]  # call order


def test_the_twin_lists_the_steps_and_says_what_the_order_means_in_the_notebooks_language():
    timeline = Timeline()
    run(timeline)
    lines = table(timeline).splitlines()
    assert lines[0].split() == ["1", "c1", "ordered", "waits"] and len(lines) == 6
    assert "may come in another order on another run" in lines[-1]
    with speaking("zh"):
        assert "每次运行的顺序可能不同" in table(timeline)
    assert table(Timeline()) == "no calls yet"
