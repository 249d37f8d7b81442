"""The loop: bounded, every call answered in order, and two kinds of failure told apart."""

import hashlib
import json
import re
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corecoder import Agent, ScriptedLLM, Tool, build_agent, check_history
from corecoder.calls import Gate, bound, run_in_order
from corecoder.events import (
    Finished,
    RoundStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    UsageReported,
)
from corecoder.testing import FaultyScriptedLLM
from corecoder.workspace import Workspace
from helpers import Boom, Echo, call, results


def make(turns, tools=None, tmp_path=None, **kw):
    echo = Echo()
    agent = Agent(ScriptedLLM(turns), tools=tools or [echo, Boom()], cwd=tmp_path, **kw)
    return agent, echo


def test_a_reply_without_tool_calls_is_the_answer(tmp_path):
    agent, _ = make(["Hello!"], tmp_path=tmp_path)
    assert agent.chat("hi") == "Hello!"
    assert [m["role"] for m in agent.messages] == ["user", "assistant"]


def test_the_model_is_sent_a_system_prompt_the_history_and_the_tool_schemas(tmp_path):
    agent, _ = make(["ok"], tmp_path=tmp_path)
    agent.chat("hi")
    request = agent.llm.requests[0]
    assert [m["role"] for m in request["messages"]] == ["system", "user"]
    assert str(tmp_path.resolve()) in request["messages"][0]["content"]
    assert request["tools"] == ["echo", "boom"]


def test_results_are_appended_in_call_order(tmp_path):
    agent, echo = make([{"tool_calls": [call("echo", text="a"), call("echo", text="b"), call("echo", text="c")]},
                        "done"], tmp_path=tmp_path)
    assert agent.chat("go") == "done"
    assert results(agent) == ["a", "b", "c"]
    assert [m["tool_call_id"] for m in agent.messages if m["role"] == "tool"] == ["call_1_1", "call_1_2",
                                                                                  "call_1_3"]
    check_history(agent.messages)


def test_the_round_cap_ends_the_run_with_a_clear_result(tmp_path):
    looping = [{"tool_calls": [call("echo", text="again")]}] * 3
    agent, _ = make(looping, tmp_path=tmp_path, max_rounds=3)
    finished = []
    agent.subscribe(lambda e: isinstance(e, Finished) and finished.append(e))
    answer = agent.chat("loop forever")
    assert "stopped after 3 rounds" in answer
    assert finished[0].reason == "max_rounds"
    check_history(agent.messages)


def test_bad_arguments_name_what_is_wrong_and_the_tool_does_not_run(tmp_path):
    agent, echo = make([{"tool_calls": [call("echo"), call("echo", text="x", colour="red"),
                                        call("echo", text=3)]}, "ok"], tmp_path=tmp_path)
    agent.chat("go")
    missing, unexpected, wrong_type = results(agent)
    assert missing.startswith("bad arguments for echo: missing required argument 'text'")
    assert "unexpected argument 'colour'" in unexpected
    assert "text should be string, got int" in wrong_type
    assert "Expected: echo(text: string, times?: integer)" in missing
    assert echo.ran == []


def test_malformed_json_arguments_are_reported_never_treated_as_empty(tmp_path):
    turns = [{"tool_calls": [{"name": "echo", "arguments": '{"text": "a",'}]}, "ok"]
    agent, echo = make(turns, tmp_path=tmp_path)
    agent.chat("go")
    [result] = results(agent)
    assert result.startswith("bad arguments for echo: the arguments are not valid JSON")
    assert '{"text": "a",' in result
    assert echo.ran == []


def test_arguments_that_are_not_an_object_are_bad_arguments(tmp_path):
    agent, _ = make([{"tool_calls": [{"name": "echo", "arguments": '["a"]'}]}, "ok"], tmp_path=tmp_path)
    agent.chat("go")
    assert "must be a JSON object, got list" in results(agent)[0]


def test_an_exception_in_a_tool_is_the_environments_failure(tmp_path):
    turns = [{"tool_calls": [call("boom", kind="value"), call("boom", kind="tool_error")]}, "ok"]
    agent, _ = make(turns, tmp_path=tmp_path)
    agent.chat("go")
    assert results(agent) == ["boom failed: ValueError: something broke", "boom failed: the disk said no"]


def test_an_unknown_tool_gets_the_list_of_available_tools(tmp_path):
    agent, _ = make([{"tool_calls": [call("delete_everything")]}, "ok"], tmp_path=tmp_path)
    agent.chat("go")
    assert results(agent) == ["unknown tool 'delete_everything'. Available tools: boom, echo"]


def test_an_interrupt_during_a_model_call_leaves_a_legal_history(tmp_path):
    class Interrupting(ScriptedLLM):
        interrupted = False

        def chat(self, messages, tools=None, emit=None):
            if len(self.requests) == 1 and not self.interrupted:
                self.interrupted = True
                raise KeyboardInterrupt  # the user pressed Ctrl+C while the model was thinking
            return super().chat(messages, tools, emit)

    agent = Agent(Interrupting([{"tool_calls": [call("echo", text="a")]}, "after"]), tools=[Echo()],
                  cwd=tmp_path)
    with pytest.raises(KeyboardInterrupt):
        agent.chat("go")
    check_history(agent.messages)
    assert agent.messages[-1]["role"] == "tool"
    assert agent.chat("go on") == "after"


def test_an_interrupt_during_a_tool_answers_every_pending_call_and_is_reraised(tmp_path):
    turns = [{"tool_calls": [call("echo", text="a"), call("boom", kind="interrupt"), call("echo", text="c")]},
             "resumed"]
    agent, echo = make(turns, tmp_path=tmp_path, executor=run_in_order)  # executor.py tests the parallel one
    events = []
    agent.subscribe(events.append)
    with pytest.raises(KeyboardInterrupt):
        agent.chat("go")
    check_history(agent.messages)
    assert results(agent)[0] == "a"
    assert all(r.startswith("[interrupted") for r in results(agent)[1:])
    assert echo.ran == ["a"]
    assert [e.status for e in events if isinstance(e, ToolCallFinished)] == ["ok", "interrupted", "interrupted"]
    assert events[-1] == Finished("", "interrupted")
    assert agent.chat("continue") == "resumed"


def test_a_gate_can_refuse_a_call_and_the_model_is_told_which_gate_and_why(tmp_path):
    class NoEcho(Gate):
        name = "test gate"

        def before(self, tool, args, workspace):
            return "echo is switched off" if tool.name == "echo" else None

    agent, echo = make([{"tool_calls": [call("echo", text="a")]}, "ok"], tmp_path=tmp_path, gates=[NoEcho()])
    agent.chat("go")
    assert results(agent) == ["echo refused by test gate: echo is switched off"]
    assert echo.ran == []


def test_a_gate_observes_every_finished_call(tmp_path):
    seen = []

    class Watch(Gate):
        def after(self, tool, args, result, workspace):
            seen.append((tool.name, args, result))

    agent, _ = make([{"tool_calls": [call("echo", text="a", times=2)]}, "ok"], tmp_path=tmp_path, gates=[Watch()])
    agent.chat("go")
    assert seen == [("echo", {"text": "a", "times": 2}, "aa")]


def test_a_failing_after_gate_is_noted_after_a_long_result_without_cutting_its_marker(tmp_path):
    class Audit(Gate):
        name = "audit"

        def after(self, tool, args, result, workspace):
            raise RuntimeError("the log server is down")

    agent, _ = make([{"tool_calls": [call("echo", text="0123456789", times=5_000)]}, "ok"], tmp_path=tmp_path,
                    gates=[Audit()])
    agent.chat("go")
    [result] = results(agent)
    saved = re.search(r"the full output is in (\S+) \.\.\.\]", result)[1]
    assert (tmp_path / saved).read_text() == "0123456789" * 5_000
    assert result.endswith("\n[after the call, audit failed: RuntimeError: the log server is down]")


def test_subscribers_see_the_run_as_typed_events(tmp_path):
    turns = [{"text": "Looking.", "tool_calls": [call("echo", text="a")],
              "usage": {"prompt_tokens": 10, "completion_tokens": 2}}, "Done."]
    agent, _ = make(turns, tmp_path=tmp_path)
    events = []
    agent.subscribe(events.append)
    agent.chat("go")
    kinds = [type(e).__name__ for e in events]
    assert kinds == ["RoundStarted", "TextDelta", "UsageReported", "ToolCallStarted", "ToolCallFinished",
                     "RoundStarted", "TextDelta", "Finished"]
    assert events[0] == RoundStarted(1)
    assert events[1] == TextDelta("Looking.")
    assert isinstance(events[2], UsageReported) and events[2].usage.prompt_tokens == 10
    assert isinstance(events[3], ToolCallStarted) and events[3].call.name == "echo"
    assert events[4].result == "a" and events[4].status == "ok"
    assert events[-1] == Finished("Done.", "answer")


def test_a_huge_result_is_clipped_to_head_and_tail_with_the_full_text_saved(tmp_path):
    agent, _ = make([{"tool_calls": [call("echo", text="0123456789", times=10_000)]}, "ok"], tmp_path=tmp_path)
    agent.chat("go")
    [result] = results(agent)
    assert len(result) < 21_000
    marker = result.split("[... ")[1].split(" ...]")[0]
    saved = marker.split("the full output is in ")[1]
    assert (tmp_path / saved).read_text(encoding="utf-8") == "0123456789" * 10_000


def test_a_huge_result_with_a_lone_surrogate_is_still_kept(tmp_path):
    text = json.loads('"' + "x" * 25_000 + '\\udc80"')  # what an MCP server's JSON may hold
    result = bound(text, Workspace(tmp_path))
    saved = result.split("the full output is in ")[1].split(" ...]")[0]
    assert (tmp_path / saved).read_text(encoding="utf-8") == "x" * 25_000 + "\ufffd"


def test_two_agents_share_nothing(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    todo = {"name": "todo_write", "arguments": {"todos": [{"content": "fix it", "status": "pending"}]}}
    first = build_agent(ScriptedLLM([{"tool_calls": [todo, call("bash", command="cd sub || mkdir sub && cd sub")]},
                                     "ok"]), tmp_path / "a")
    second = build_agent(ScriptedLLM(["ok"]), tmp_path / "b")
    first.chat("go")
    second.chat("go")
    assert first.workspace.cwd == (tmp_path / "a" / "sub").resolve()
    assert second.workspace.cwd == (tmp_path / "b").resolve()
    assert first.workspace.todos and not second.workspace.todos
    assert first.tools["bash"] is not second.tools["bash"]




def test_scripted_arguments_are_sent_as_the_json_text_the_model_would_send(tmp_path):
    agent, _ = make([{"tool_calls": [call("echo", text="é")]}, "ok"], tmp_path=tmp_path)
    agent.chat("go")
    sent = agent.messages[1]["tool_calls"][0]["function"]["arguments"]
    assert json.loads(sent) == {"text": "é"}


def test_repeated_or_missing_call_ids_from_a_provider_are_made_unique(tmp_path):
    turns = [{"tool_calls": [{"name": "echo", "arguments": {"text": "a"}, "id": "call_0"},
                             {"name": "echo", "arguments": {"text": "b"}, "id": "call_0"}]},
             {"tool_calls": [{"name": "echo", "arguments": {"text": "c"}, "id": "call_0"}]}, "done"]
    agent, _ = make(turns, tmp_path=tmp_path)
    assert agent.chat("go") == "done"  # the scripted model checks each request like the API would
    check_history(agent.messages)
    assert results(agent) == ["a", "b", "c"]


def test_a_second_interrupt_during_the_clean_up_still_leaves_a_legal_history(tmp_path):
    turns = [{"tool_calls": [call("boom", kind="interrupt"), call("echo", text="b")]}, "after"]
    agent, _ = make(turns, tmp_path=tmp_path, executor=run_in_order)

    def impatient(event):  # the user presses Ctrl+C again while pending calls are answered
        if isinstance(event, ToolCallFinished) and event.status == "interrupted":
            raise KeyboardInterrupt

    agent.subscribe(impatient)
    with pytest.raises(KeyboardInterrupt):
        agent.chat("go")
    check_history(agent.messages)
    assert len(results(agent)) == 2


def test_a_model_that_gives_up_ends_the_run_with_an_error_event(tmp_path):
    agent = Agent(FaultyScriptedLLM([{"fault": "auth"}]), [Echo()], cwd=tmp_path)
    finished = []
    agent.subscribe(lambda e: isinstance(e, Finished) and finished.append(e))
    with pytest.raises(Exception, match="API key"):
        agent.chat("go")
    assert finished[0].reason == "error"
    check_history(agent.messages)


def test_tools_gates_and_workspace_reassigned_on_the_agent_take_effect(tmp_path):
    class No(Gate):
        name = "no"

        def before(self, tool, args, workspace):
            return "not today"

    class Where(Tool):
        name = "where"

        def run(self, ws):
            return str(ws.cwd)

    turns = [{"tool_calls": [call("echo", text="a")]}, "ok", {"tool_calls": [call("where")]}, "ok"]
    agent = Agent(ScriptedLLM(turns), [Boom()], cwd=tmp_path)
    agent.tools = {"echo": Echo()}
    agent.gates = [No()]
    agent.chat("go")
    assert results(agent) == ["echo refused by no: not today"]
    (tmp_path / "other").mkdir()
    agent.tools, agent.gates, agent.workspace = {"where": Where()}, [], Workspace(tmp_path / "other")
    agent.chat("and now?")
    assert results(agent)[-1] == str((tmp_path / "other").resolve())


def test_a_gate_that_raises_becomes_the_calls_result_and_the_run_goes_on(tmp_path):
    class Buggy(Gate):
        name = "buggy"

        def before(self, tool, args, workspace):
            raise KeyError("oops")

    agent = Agent(ScriptedLLM([{"tool_calls": [call("echo", text="a")]}, "ok"]), [Echo()], cwd=tmp_path,
                  gates=[Buggy()])
    assert agent.chat("go") == "ok"
    assert results(agent) == ["echo refused: buggy failed: KeyError: 'oops'"]


def test_a_subscriber_that_raises_is_reported_once_and_the_run_goes_on(tmp_path):
    agent = Agent(ScriptedLLM([{"tool_calls": [call("echo", text="a")]}, "ok"]), [Echo()], cwd=tmp_path)
    agent.subscribe(lambda event: 1 / 0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert agent.chat("go") == "ok"
    assert len(caught) == 1 and "ZeroDivisionError" in str(caught[0].message)
    assert results(agent) == ["a"]


def test_a_call_left_unrun_by_a_bug_is_not_called_interrupted(tmp_path):
    def broken_executor(calls, agent, results):
        raise RuntimeError("executor bug")

    agent = Agent(ScriptedLLM([{"tool_calls": [call("echo", text="a")]}, "ok"]), [Echo()], cwd=tmp_path,
                  executor=broken_executor)
    finished = []
    agent.subscribe(lambda e: isinstance(e, ToolCallFinished) and finished.append(e.status))
    with pytest.raises(RuntimeError):
        agent.chat("go")
    check_history(agent.messages)
    assert results(agent) == ["[not run: the turn stopped: RuntimeError: executor bug]"]
    assert finished == ["not_run"]


def test_a_clipped_output_is_kept_inside_the_project_shown_relative_and_cleaned_up(tmp_path):
    texts = [f"output {n}: " + "x" * 30_000 for n in range(30)]
    agent = Agent(ScriptedLLM([{"tool_calls": [call("echo", text=t)]} for t in texts] + ["ok"]), [Echo()],
                  cwd=tmp_path)
    agent.chat("go")
    last = results(agent)[-1]
    assert len(last) <= 20_000 and "/tmp" not in last and str(tmp_path) not in last
    where = re.search(r"the full output is in (\S+) \.\.\.\]", last)[1]
    assert where.startswith(".corecoder/outputs/") and (tmp_path / where).read_text() == texts[-1]
    kept = {p.name for p in (tmp_path / ".corecoder" / "outputs").glob("*.txt")}
    newest = {hashlib.sha256(t.encode()).hexdigest()[:16] + ".txt" for t in texts[-20:]}
    assert kept == newest, "the oldest are removed"


# Steering: what the user says while a turn runs joins it at the next step boundary


class Says(Tool):
    """A tool whose run is where the user speaks: `agent.steer(text)` from inside the batch."""

    name, description = "says", "Runs; meanwhile the user may say something."
    parameters = {"type": "object", "properties": {"text": {"type": "string"}},
                  "additionalProperties": False}

    def __init__(self, agent_box: list):
        self.agent_box = agent_box

    def run(self, ws, text: str = "") -> str:
        if text:
            self.agent_box[0].steer(text)
        return "ran"


def steered_agent(plan: list, executor=None):
    """An agent whose model plays `plan`, one round a step: ("calls", n, said_during_call_i),
    ("answer", said_while_answering), each saying (calling steer) where the plan says."""
    from corecoder import FunctionLLM
    from corecoder.executor import RunInParallel

    box, rounds = [], iter(plan)

    def model(messages, tools):
        kind, *rest = next(rounds)
        if kind == "answer":
            if rest[0]:
                box[0].steer(rest[0])  # while the model answers
            return f"answer {len(messages)}"
        count, during = rest
        return {"tool_calls": [{"name": "says", "arguments": {"text": during if i == 0 else ""}}
                               for i in range(count)]}

    agent = Agent(FunctionLLM(model), [Says(box)], executor=executor or RunInParallel())
    box.append(agent)
    return agent


def test_what_the_user_says_during_a_batch_joins_after_every_result_of_it():
    agent = steered_agent([("calls", 3, "use python instead"), ("answer", None)])
    agent.chat("go")
    check_history(agent.messages)
    roles = [(m["role"], m.get("content")) for m in agent.messages]
    assert roles[1:6] == [("assistant", ""), ("tool", "ran"), ("tool", "ran"), ("tool", "ran"),
                          ("user", "use python instead")]
    second = agent.llm.requests[1]["messages"]
    assert second[-1] == {"role": "user", "content": "use python instead"}  # the model sees it


def test_what_the_user_says_while_the_model_answers_carries_the_turn_on():
    finished = []
    agent = steered_agent([("answer", "and add a test"), ("answer", None)])
    agent.subscribe(lambda e: isinstance(e, Finished) and finished.append(e.text))
    assert agent.chat("fix it") == "answer 4"
    assert [m["role"] for m in agent.messages] == ["user", "assistant", "user", "assistant"]
    assert agent.messages[2]["content"] == "and add a test"
    assert finished == ["answer 4"]  # one turn, one end


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(  # an answer the user speaks over goes on; the last one, over nothing
    st.tuples(st.just("calls"), st.integers(1, 3), st.sampled_from([None, "s"])),
    st.tuples(st.just("answer"), st.just("s"))), min_size=1, max_size=8),
    st.booleans())
def test_in_every_interleaving_the_history_stays_legal_and_each_steer_joins_at_a_boundary(
        plan, parallel):
    """Wherever the user speaks (during the model's call, during any call of a batch run in
    order or at once), the history is legal at every request, each thing said joins once, in
    the order said, right after a whole batch of results or an answer, never inside a batch."""
    from corecoder.calls import run_in_order as in_order

    plan = [*plan, ("answer", None)]  # a last answer, said over nothing: the turn ends
    said = iter(f"steer {i}" for i in range(100))
    plan = [(k, *rest[:-1], next(said) if rest[-1] else None) for k, *rest in plan]
    agent = steered_agent(plan, executor=None if parallel else in_order)
    agent.max_rounds = len(plan) + 1
    agent.chat("go")
    for request in agent.llm.requests:
        check_history(request["messages"][1:])
    check_history(agent.messages)
    steers = [(i, m["content"]) for i, m in enumerate(agent.messages)
              if m["role"] == "user" and m["content"].startswith("steer")]
    expected = [x[-1] for x in plan if x[-1]]
    assert [text for _, text in steers] == expected
    for i, _ in steers:
        before = agent.messages[i - 1]
        assert before["role"] in ("tool", "assistant", "user")
        if before["role"] == "assistant":
            assert not before.get("tool_calls")  # after an answer, never after bare calls


def test_what_the_user_said_as_a_turn_was_stopped_joins_the_next_one(tmp_path):
    agent = steered_agent([("calls", 1, None)])

    def interrupt(calls, agent_, results):
        agent_.steer("typed just before Ctrl+C")
        raise KeyboardInterrupt

    agent.executor = interrupt
    with pytest.raises(KeyboardInterrupt):
        agent.chat("go")
    agent.llm.fn = lambda messages, tools: "back"
    assert agent.chat("next") == "back"
    check_history(agent.messages)
    assert [m["content"] for m in agent.messages if m["role"] == "user"] == [
        "go", "next", "typed just before Ctrl+C"]
