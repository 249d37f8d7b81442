"""The context gauge: a policy around a Compactor that records each round, and its text twin."""

import re

from corecoder import Agent, FunctionLLM, check_history
from corecoder.context import SUMMARY_PROMPT, Compactor
from corecoder.messages import ToolCall, assistant, tool_result, user
from corecoder.testing import FaultyScriptedLLM
from corecoder_course import Gauge
from corecoder_course.gauge import row, table
from corecoder_course.words import speaking
from helpers import Echo


def echoes(times=5):
    """A model that writes summaries when asked; otherwise echoes a long text `times` times, then answers
    (counted by its own calls: compaction takes the earlier echoes out of the history)."""
    asked = []

    def model(messages, tools):
        if messages[0]["content"] == SUMMARY_PROMPT:
            return "Goal: echo five times."
        asked.append(1)
        return "done" if len(asked) > times else {"tool_calls": [{"name": "echo", "arguments": {"text": "x" * 3_000}}]}
    return FunctionLLM(model)


def test_the_gauge_records_a_round_per_prepare_with_the_tiers_it_ran_and_what_was_sent():
    gauge = Gauge(Compactor(window=3_000, keep_recent=2))
    agent = Agent(echoes(), [Echo()], context=gauge)
    assert agent.chat("echo") == "done"
    assert [r.number for r in gauge.rounds] == [1, 2, 3, 4, 5, 6]
    tiers = [[e.tier for e in r.events] for r in gauge.rounds]
    assert tiers[0] == [] and any(tiers)  # the first round had nothing to compact, later ones did
    for r in gauge.rounds:
        check_history(r.sent)
    assert gauge.rounds[-1].sent[0]["content"].startswith("[Summary")


def test_the_text_twin_has_a_row_per_round_with_a_bar_the_share_and_what_was_done():
    gauge = Gauge(Compactor(window=3_000, keep_recent=2))
    Agent(echoes(), [Echo()], context=gauge).chat("echo")
    lines = table(gauge).splitlines()
    assert lines[0] == "window 3,000 tokens; compacted at 80%, down to 40%"
    assert len(lines) == 1 + len(gauge.rounds)
    assert re.fullmatch(r"r01 [█░]{10} +\d+%", lines[1])
    done = [line for line in lines if "→" in line]
    assert done and all(re.search(r"→ (trim|summarize|reset|drop) \([\d,]+ → [\d,]+\)", line) for line in done)
    with speaking("zh"):
        assert table(gauge).startswith("窗口 3,000 个 token")


def test_a_round_the_provider_found_too_long_says_so_in_its_row():
    history = [user("go"), assistant("", [ToolCall("c1", "echo", '{"text": "a"}')]), tool_result("c1", "y" * 3_000),
               assistant("", [ToolCall("c2", "echo", '{"text": "a"}')]), tool_result("c2", "y" * 3_000)]
    gauge = Gauge(Compactor(window=100_000, keep_recent=2))
    agent = Agent(FaultyScriptedLLM([{"fault": "context_length"}, "the summary", "done"]), [Echo()], context=gauge)
    agent.messages = history
    assert agent.run() == "done"
    [r] = gauge.rounds
    assert r.overflow and "the provider said too long: trim (" in row(r)


def test_compact_by_hand_goes_through_the_gauge_to_its_compactor():
    gauge = Gauge(Compactor(window=100_000, keep_recent=2))
    agent = Agent(echoes(), [Echo()], context=gauge)
    agent.messages = [user("go"), assistant("one"), user("again"), assistant("two")]
    agent.messages, event = gauge.compact(agent.messages)
    assert event.tier == "summarize" and len(agent.messages) == 3
    assert gauge.rounds == []  # a /compact between rounds is no round
