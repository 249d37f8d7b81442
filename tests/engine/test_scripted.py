"""Scripted models behave like the real client and fail loudly when misused."""

import json

import pytest

from corecoder import FunctionLLM, IllegalHistory, ScriptedLLM, ScriptError
from corecoder.events import ReasoningDelta, TextDelta
from corecoder.messages import ToolCall, assistant, tool_result, user
from corecoder.testing import FaultyScriptedLLM


def test_turns_replay_in_order_and_every_request_is_recorded():
    llm = ScriptedLLM(["one", {"text": "two", "reasoning": "hmm"}])
    assert llm.chat([user("a")]).text == "one"
    reply = llm.chat([user("a"), assistant("one"), user("b")], [{"function": {"name": "grep"}}])
    assert (reply.text, reply.reasoning) == ("two", "hmm")
    assert [len(r["messages"]) for r in llm.requests] == [1, 3]
    assert llm.requests[1]["tools"] == ["grep"]


def test_recorded_requests_are_copies_not_live_references():
    llm = ScriptedLLM(["one"])
    history = [user("a")]
    llm.chat(history)
    history[0]["content"] = "changed"
    assert llm.requests[0]["messages"][0]["content"] == "a"


def test_running_out_of_turns_names_the_call_and_the_last_message():
    llm = ScriptedLLM(["only"])
    llm.chat([user("a")])
    with pytest.raises(ScriptError, match=r"the script has 1 turns and all were used by call 2.*user: 'again'"):
        llm.chat([user("a"), assistant("only"), user("again")])


def test_an_illegal_history_is_rejected_like_the_api_would():
    llm = ScriptedLLM(["never"])
    with pytest.raises(IllegalHistory, match=r"\(400\).*orphan tool result"):
        llm.chat([user("a"), tool_result("x", "1")])
    with pytest.raises(IllegalHistory, match="unanswered"):
        llm.chat([user("a"), assistant("", [ToolCall("c", "grep")]), user("b")])


def test_tool_calls_get_stable_ids_and_raw_argument_text():
    llm = ScriptedLLM([{"tool_calls": [{"name": "grep", "arguments": {"pattern": "x"}},
                                       {"name": "grep", "arguments": "{broken", "id": "mine"}]}])
    first, second = llm.chat([user("a")]).tool_calls
    assert (first.id, first.arguments) == ("call_1_1", '{"pattern": "x"}')
    assert (second.id, second.arguments) == ("mine", "{broken")


def test_a_malformed_script_fails_when_it_is_loaded_not_mid_run():
    with pytest.raises(ScriptError, match="turn 2: unknown keys"):
        ScriptedLLM(["ok", {"txt": "typo"}])
    with pytest.raises(ScriptError, match="turn 1, call 1: a tool call needs a 'name'"):
        ScriptedLLM([{"tool_calls": [{"arguments": {}}]}])


def test_text_and_reasoning_reach_the_subscriber():
    events = []
    ScriptedLLM([{"text": "hi", "reasoning": "think"}]).chat([user("a")], emit=events.append)
    assert events == [ReasoningDelta("think"), TextDelta("hi")]


def test_a_script_loads_from_json(tmp_path):
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"model": "demo", "turns": ["hello", {"usage": {"prompt_tokens": 3}}]}))
    llm = ScriptedLLM.from_json(path)
    assert llm.model == "demo"
    assert llm.chat([user("a")]).text == "hello"
    assert llm.turns[1].usage.prompt_tokens == 3


def test_a_function_model_computes_each_reply_from_the_messages():
    llm = FunctionLLM(lambda messages, tools: f"you said {messages[-1]['content']}")
    assert llm.chat([user("ping")]).text == "you said ping"
    with pytest.raises(IllegalHistory):
        llm.chat([tool_result("x", "1")])


def test_passing_faults_are_skipped_as_a_retrying_client_would_and_reported():
    events = []
    llm = FaultyScriptedLLM([{"fault": "rate_limit"}, {"fault": "drop", "text": "par"}, "whole"])
    assert llm.chat([user("a")], emit=events.append).text == "whole"
    assert [type(e).__name__ for e in events] == ["Retrying", "Retrying", "TextDelta"]


def test_lasting_faults_raise_what_the_real_client_raises():
    from corecoder import ContextTooLong, ModelError

    with pytest.raises(ModelError, match="API key"):
        FaultyScriptedLLM([{"fault": "auth"}]).chat([user("a")])
    with pytest.raises(ContextTooLong):
        FaultyScriptedLLM([{"fault": "context_length"}]).chat([user("a")])
    with pytest.raises(ScriptError, match="unknown fault 'teapot'"):
        FaultyScriptedLLM([{"fault": "teapot"}])


def test_the_plain_scripted_model_refuses_a_fault_and_says_who_plays_it():
    with pytest.raises(ScriptError, match="turn 2 is a fault: corecoder.testing.FaultyScriptedLLM plays faults"):
        ScriptedLLM(["a", {"fault": "rate_limit"}])
