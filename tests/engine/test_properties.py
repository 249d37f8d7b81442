"""Random runs: whatever the model asks for and wherever the user interrupts,
the history stays legal and no tool result is lost or duplicated."""

import json
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from corecoder import Agent, ScriptedLLM, check_history
from corecoder.calls import run_in_order
from corecoder.executor import RunInParallel
from helpers import Boom, Echo

GOOD = st.builds(lambda t, id: {"name": "echo", "arguments": {"text": t}, "id": id},
                 st.text("abc", min_size=1, max_size=3), st.sampled_from([None, None, "", "same", "call_1"]))
BAD_ARGS = st.sampled_from([
    {"name": "echo", "arguments": {}},
    {"name": "echo", "arguments": {"text": 1}},
    {"name": "echo", "arguments": "{not json"},
    {"name": "echo", "arguments": {"text": "a", "extra": True}},
    {"name": "nope", "arguments": {}},
])
FAILING = st.sampled_from([{"name": "boom", "arguments": {"kind": "value"}},
                           {"name": "boom", "arguments": {"kind": "tool_error"}}])
INTERRUPT = st.just({"name": "boom", "arguments": {"kind": "interrupt"}})
CALL = st.one_of(GOOD, GOOD, BAD_ARGS, FAILING, INTERRUPT)
TURN = st.one_of(st.just("answer"), st.builds(lambda calls: {"tool_calls": calls}, st.lists(CALL, min_size=1,
                                                                                        max_size=4)))


class InterruptingLLM(ScriptedLLM):
    """A scripted model that is interrupted by the user before some of its calls."""

    def __init__(self, turns, interrupt_at):
        super().__init__(turns)
        self.interrupt_at = set(interrupt_at)
        self.calls = 0

    def chat(self, messages, tools=None, emit=None):
        self.calls += 1
        if self.calls in self.interrupt_at:
            raise KeyboardInterrupt
        return super().chat(messages, tools, emit)


@pytest.mark.parametrize("executor", [run_in_order, RunInParallel()], ids=["in order", "in parallel"])
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(turns=st.lists(TURN, min_size=1, max_size=8), interrupt_at=st.sets(st.integers(1, 12), max_size=3))
def test_any_run_keeps_the_history_legal_and_loses_no_result(tmp_path, executor, turns, interrupt_at):
    echo = Echo()
    agent = Agent(InterruptingLLM(turns + ["final"] * 12, interrupt_at), tools=[echo, Boom()], cwd=tmp_path,
                  max_rounds=5, executor=executor)
    for _ in range(4):  # the user says "go on" after each interrupt
        try:
            agent.chat("go")
        except KeyboardInterrupt:
            pass
        check_history(agent.messages)

    calls = [c for m in agent.messages if m["role"] == "assistant" for c in m.get("tool_calls", [])]
    answers = {m["tool_call_id"]: m["content"] for m in agent.messages if m["role"] == "tool"}
    assert sorted(answers) == sorted(c["id"] for c in calls)  # every call answered exactly once
    completed = [(c["id"], text) for c, text in valid_echoes(calls) if not answers[c["id"]].startswith("[interr")]
    assert [answers[i] for i, _ in completed] == [text for _, text in completed]  # each kept its own output
    if executor is run_in_order:  # and nothing ran whose result was lost
        assert echo.ran == [text for _, text in completed]
    else:  # calls of a batch run at once: one may finish just as another is interrupted
        assert not Counter(text for _, text in completed) - Counter(echo.ran)  # each kept result really ran


def valid_echoes(calls):
    for c in calls:
        try:
            args = json.loads(c["function"]["arguments"])
        except json.JSONDecodeError:
            continue
        if c["function"]["name"] == "echo" and isinstance(args, dict) and set(args) == {"text"} \
                and isinstance(args["text"], str):
            yield c, args["text"]
