"""Context: estimates by character class, and a compaction that waits for the high mark, cuts down to
the low mark in one go (trim, then summarize, then reset), and never breaks a history."""


import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from corecoder import Agent, FunctionLLM, ScriptedLLM, check_history
from corecoder.agent import STATE_NOTE, KeepEverything
from corecoder.context import SUMMARY_PROMPT, Compactor, turn_start
from corecoder.events import Compacted
from corecoder.messages import ToolCall, assistant, tool_result, user
from corecoder.testing import FaultyScriptedLLM
from corecoder.tokens import Estimate, history_tokens, text_tokens, window_for
from corecoder.tools.todo import TodoWrite
from helpers import Echo


def test_estimates_follow_the_kind_of_text():
    prose = "The agent reads the file, finds the bug and fixes it. " * 20
    code = "def f(x):\n    return {k: v[0] for k, v in x.items() if v}\n" * 20
    chinese = "智能体读取文件，找到错误并修复它。" * 20
    assert text_tokens(prose) == pytest.approx(len(prose) / 4, rel=0.1)
    assert len(code) / 4 < text_tokens(code) < len(code) / 2  # symbols pack fewer characters a token
    assert text_tokens(chinese) == len(chinese)  # about one token a character


def test_the_window_comes_from_the_model_name_or_a_default():
    assert window_for("gpt-4.1-mini") == 1_000_000
    assert window_for("deepseek-chat") == 128_000
    assert window_for("my-local-model") == 128_000


def test_a_usage_report_anchors_the_estimate_so_only_new_messages_are_estimated():
    history = [user("x" * 40_000), assistant("ok"), user("and now?")]
    estimate = Estimate()
    assert estimate.of(history, overhead=0) > 10_000
    estimate.anchor(history[:2], 1_234)  # the provider counted the first two messages (and the system prompt)
    assert estimate.of(history, overhead=0) == 1_234 + history_tokens(history[2:])


def test_a_trim_keeps_the_anchor_moved_by_what_it_cut_so_the_next_round_stays_cheap():
    history = [user("go"), *round_trip(1), *round_trip(2), *round_trip(3), *round_trip(4), *round_trip(5)]
    agent = agent_with(history, ScriptedLLM(["done"]), window=12_000, low=0.6, keep_recent=4)
    compactor = agent.context
    compactor.estimate.anchor(history, 9_700)  # the provider's count of the last request: past 80%
    before = [dict(m) for m in history]
    trimmed = compactor.prepare(history)
    assert [m["content"] for m in trimmed] != [m["content"] for m in before]  # a trim ran
    cut = history_tokens(before) - history_tokens(trimmed)
    assert compactor.estimate.count == len(history) and compactor.estimate.tokens == 9_700 - cut
    assert compactor.estimate.of(trimmed, overhead=0) == 9_700 - cut  # no new message: nothing estimated


def test_the_compactor_is_attached_once_and_then_given_the_history_alone():
    """It takes what it needs of the agent as the agent is made (its model, a view of its tools,
    emit) and listens to its usage then, once: not the whole agent every round."""
    seen = []
    compactor = Compactor(window=100_000)
    agent = Agent(ScriptedLLM([{"text": "one", "usage": {"prompt_tokens": 700}}, "two"]), [Echo()],
                  context=compactor)
    agent.subscribe(seen.append)
    agent.chat("hi")
    agent.chat("again")
    assert agent.subscribers.count(compactor.observe) == 1
    assert compactor.llm is agent.llm and compactor.tools() is agent.tools
    agent.update_tools(add=[TodoWrite()])  # a tool that comes later counts in the next request
    assert compactor.overhead() > 500 and "todo_write" in compactor.counted[0]
    assert compactor.estimate.tokens == 700  # anchored by the usage report, on the history sent
    compactor.emit(Compacted("trim", 2, 1))
    assert seen[-1] == Compacted("trim", 2, 1)  # its events are the agent's


def round_trip(n, output="x" * 5_000):
    """One round of history: a call to echo and its long result."""
    return [assistant("", [ToolCall(f"c{n}", "echo", '{"text": "a"}')]), tool_result(f"c{n}", output)]


def agent_with(history, llm, **compactor):
    agent = Agent(llm, [Echo()], context=Compactor(**compactor))
    agent.messages = history
    return agent


def summarizer(answer="Goal: fix the bug.\nFiles: stats.py"):
    """A model that writes summaries when asked, and answers 'done' otherwise."""
    return FunctionLLM(lambda messages, tools: answer if messages[0]["content"] == SUMMARY_PROMPT else "done")


def trimmed(messages):
    return [m["content"].startswith("x" * 400) and "characters cut; trimmed ...]" in m["content"]
            for m in messages if m["role"] == "tool"]


def test_below_the_high_mark_nothing_is_compacted_so_the_request_extends_the_one_before():
    history = [user("go"), *round_trip(1), *round_trip(2), *round_trip(3), *round_trip(4), *round_trip(5)]
    agent = agent_with(list(history), ScriptedLLM(["done"]), window=9_000)  # ~6,900 tokens: 77%
    events = []
    agent.subscribe(events.append)
    agent.run()
    assert agent.llm.requests[0]["messages"][1:] == history and not events_of(events, Compacted)


def test_past_the_high_mark_a_trim_cuts_the_oldest_outputs_first_and_stops_at_the_low_mark():
    """The start of the history stays as it was sent, up to the first output cut: a provider's
    cache serves it still. The latest turn is never trimmed."""
    history = [user("go"), *round_trip(1), *round_trip(2), *round_trip(3), *round_trip(4), *round_trip(5)]
    llm = ScriptedLLM(["done"])
    agent = agent_with(history, llm, window=8_000, low=0.55)  # ~6,900: past 80%; cut to 4,400
    events = []
    agent.subscribe(events.append)
    agent.run()
    sent = llm.requests[0]["messages"][1:]
    assert trimmed(sent) == [True, True, True, False, False]  # oldest first, until under 55%
    assert [e.tier for e in events_of(events, Compacted)] == ["trim"]
    assert events_of(events, Compacted)[0].tokens_after <= 4_400 < events_of(events, Compacted)[0].tokens_before
    assert len(llm.requests) == 1  # no model call
    check_history(sent)


def test_a_trim_never_cuts_the_latest_turn_even_to_reach_the_low_mark():
    history = [user("go"), *round_trip(1), *round_trip(2), *round_trip(3), *round_trip(4), *round_trip(5)]
    agent = agent_with(history, summarizer(), window=8_000, low=0.5, keep_recent=2)
    agent.run()
    sent = agent.llm.requests[-1]["messages"][1:]
    assert trimmed(sent)[-1] is False and sent[-1] == history[-1]


def events_of(events, kind):
    return [e for e in events if isinstance(e, kind)]


def test_tier_two_summarizes_older_turns_and_keeps_recent_ones_word_for_word():
    history = [user("fix the bug"), *[m for n in range(10) for m in round_trip(n, "y" * 1_600)]]
    llm = summarizer()
    agent = agent_with(history, llm, window=5_500, keep_recent=4)
    agent.run()
    summary_request, request = llm.requests
    assert summary_request["messages"][0]["content"] == SUMMARY_PROMPT
    assert "fix the bug" in summary_request["messages"][1]["content"]
    sent = request["messages"][1:]
    assert sent[0]["role"] == "user" and "Goal: fix the bug." in sent[0]["content"]
    assert sent[1:5] == history[-4:]
    check_history(sent)


def test_a_cut_never_separates_a_call_from_its_results():
    calls = [ToolCall(f"p{i}", "echo", '{"text": "a"}') for i in range(5)]
    history = [user("go"), assistant("", calls), *[tool_result(c.id, "z" * 3_000) for c in calls]]
    assert turn_start(history, 4) == 1  # a cut inside the batch moves back to where the batch begins
    agent = agent_with(history, summarizer(), window=3_000, keep_recent=3)
    agent.run()
    check_history(agent.llm.requests[-1]["messages"])


def test_tier_three_resets_to_the_summary_and_the_latest_turn_when_only_that_fits_under_the_low_mark():
    history = [user("go"), *[m for n in range(6) for m in round_trip(n, "w" * 1_500)], user("latest question")]
    agent = agent_with(history, summarizer(), window=2_000, keep_recent=8)
    events = []
    agent.subscribe(events.append)
    agent.run()
    sent = agent.llm.requests[-1]["messages"][1:]
    assert [m["role"] for m in sent] == ["user", "user"] and sent[1]["content"] == "latest question"
    assert "reset" in [e.tier for e in events if isinstance(e, Compacted)]


def test_when_summarizing_fails_the_oldest_turns_are_dropped_with_a_note():
    def flaky(messages, tools):
        if messages[0]["content"] == SUMMARY_PROMPT:
            raise RuntimeError("summary service down")
        return "done"

    history = [user("go"), *[m for n in range(10) for m in round_trip(n, "y" * 1_600)]]
    agent = agent_with(history, FunctionLLM(flaky), window=5_500, keep_recent=4)
    assert agent.run() == "done"
    note = agent.messages[0]["content"]
    assert "earlier messages were dropped" in note and "summary service down" in note
    check_history(agent.messages)


def test_compact_by_hand_passes_the_focus_to_the_summarizer():
    history = [user("go"), *round_trip(1, "short"), *round_trip(2, "short"), assistant("all good"),
               user("next"), assistant("ok")]
    llm = summarizer()
    agent = agent_with(history, llm, keep_recent=2)
    agent.messages, event = agent.context.compact(agent.messages, focus="the parser")
    assert "Keep in particular everything about: the parser" in llm.requests[0]["messages"][1]["content"]
    assert event.tier == "summarize" and len(agent.messages) == 3
    check_history(agent.messages)


def test_compact_by_hand_says_what_it_did_a_drop_when_the_summary_fails_or_none_when_nothing_is_old():
    def down(messages, tools):
        raise RuntimeError("summary service down")

    history = [user("go"), *round_trip(1, "short"), *round_trip(2, "short"), assistant("all good")]
    agent = agent_with(history, FunctionLLM(down), keep_recent=2)
    agent.messages, event = agent.context.compact(agent.messages)
    assert event.tier == "drop"
    agent.messages = [user("hi")]
    assert agent.context.compact(agent.messages) == ([user("hi")], None)


def test_a_context_overflow_from_the_provider_compacts_and_retries_once(tmp_path):
    def model(messages, tools):
        if messages[0]["content"] == SUMMARY_PROMPT:
            return "Goal: keep going."
        return "answered after compaction"

    llm = FunctionLLM(model)
    first = [True]
    original = llm.chat

    def chat(messages, tools=None, emit=None):
        if first[0] and messages[0]["content"] != SUMMARY_PROMPT:
            first[0] = False
            from corecoder import ContextTooLong

            raise ContextTooLong("too long")
        return original(messages, tools, emit)

    llm.chat = chat
    history = [user("go"), *[m for n in range(4) for m in round_trip(n, "short")], user("now?")]
    agent = agent_with(history, llm)
    assert agent.run() == "answered after compaction"
    assert "Goal: keep going." in agent.messages[0]["content"]


def test_a_policy_that_cannot_shrink_lets_the_overflow_error_through():
    agent = Agent(FaultyScriptedLLM([{"fault": "context_length"}]), [Echo()], context=KeepEverything())
    from corecoder import ContextTooLong

    with pytest.raises(ContextTooLong):
        agent.chat("go")


def test_an_overflow_right_after_a_cd_keeps_the_results_the_model_asked_for(tmp_path):
    from corecoder import Bash

    (tmp_path / "sub").mkdir()
    turns = [{"tool_calls": [{"name": "bash", "arguments": {"command": "cd sub && echo moved"}}]},
             {"fault": "context_length"}, "the summary", "done"]
    agent = Agent(FaultyScriptedLLM(turns), [Bash()], cwd=tmp_path, context=Compactor(100_000))
    assert agent.chat("the user's request") == "done"
    sent = [(m["role"], m["content"]) for m in agent.llm.requests[-1]["messages"][1:]]
    assert sent[0][1].endswith("the summary") and sent[1:3] == [("assistant", ""), ("tool", "moved")]
    assert sent[3][1].startswith(STATE_NOTE)  # the note stays with the results it follows


def test_the_todo_list_survives_compaction():
    history = [user("go"), *[m for n in range(10) for m in round_trip(n, "y" * 1_600)]]
    agent = agent_with(history, summarizer(), window=5_500, keep_recent=4)
    agent.update_tools(add=[TodoWrite()])
    agent.tell_state()  # the system prompt tells the list as it was: empty
    agent.workspace.todos = [{"content": "write the regression test", "status": "pending"}]
    agent.messages.append(user(f"{STATE_NOTE}\n{agent.state()}"))  # a note told the new one, long ago
    agent.messages = [*agent.messages[-1:], *agent.messages[:-1]]
    agent.run()
    [summary, answer] = agent.llm.requests[-2:]
    sent = answer["messages"]
    assert "write the regression test" not in sent[0]["content"]  # the system prompt stays as it was
    assert any(m["content"].startswith("[Summary") for m in sent)  # the old note was summarized away
    assert sent[-1]["content"].startswith(STATE_NOTE) and "write the regression test" in sent[-1]["content"]


HISTORY_PIECE = st.one_of(
    st.builds(lambda t: [user(t)], st.text("ab", max_size=3000)),
    st.builds(lambda n, size, interrupted: [
        assistant("", [ToolCall(f"id{n}_{i}", "echo", "{}") for i in range(size)]),
        *[tool_result(f"id{n}_{i}", "[interrupted]" if interrupted and i else "r" * 2500) for i in range(size)]],
        st.integers(0, 10**6), st.integers(1, 4), st.booleans()),
    st.builds(lambda t: [assistant(t)], st.text("cd", max_size=2000)),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pieces=st.lists(HISTORY_PIECE, min_size=1, max_size=25), window=st.integers(500, 20_000),
       keep=st.integers(1, 10), summary_fails=st.booleans())
def test_any_history_stays_legal_through_any_tier(pieces, window, keep, summary_fails):
    history, seen = [], set()
    for piece in pieces:
        ids = {c["id"] for m in piece for c in m.get("tool_calls", [])}
        if ids & seen:
            continue
        seen |= ids
        history += piece

    def model(messages, tools):
        if messages[0]["content"] == SUMMARY_PROMPT:
            if summary_fails:
                raise RuntimeError("no")
            return "Goal: g"
        return "done"

    check_history(history)
    agent = agent_with(history, FunctionLLM(model), window=window, keep_recent=keep)
    agent.run()  # the FunctionLLM checks every request it is handed, as the API would
    check_history(agent.messages)


def test_the_summary_is_not_shown_as_an_answer_and_its_cost_is_counted():
    from corecoder.events import TextDelta, UsageReported

    def model(messages, tools):
        if messages[0]["content"] == SUMMARY_PROMPT:
            return {"text": "SUMMARY-TEXT", "usage": {"prompt_tokens": 5_000, "completion_tokens": 50}}
        return "done"

    history = [user("go"), *[m for n in range(10) for m in round_trip(n, "y" * 1_600)]]
    agent = agent_with(history, FunctionLLM(model), window=5_500, keep_recent=4)
    events = []
    agent.subscribe(events.append)
    agent.run()
    assert "SUMMARY-TEXT" not in "".join(e.text for e in events if isinstance(e, TextDelta))
    assert [e.usage.prompt_tokens for e in events if isinstance(e, UsageReported)] == [5_000]


def test_a_summarizer_of_its_own_writes_the_summaries_and_its_usage_is_billed_to_its_model():
    from corecoder.events import UsageReported

    cheap = FunctionLLM(lambda messages, tools: {
        "text": "Goal: fix the bug.", "usage": {"prompt_tokens": 3_000, "completion_tokens": 40}},
        model="cheap-model")
    main = ScriptedLLM([{"text": "done", "usage": {"prompt_tokens": 900, "completion_tokens": 5}}])
    history = [user("go"), *[m for n in range(10) for m in round_trip(n, "y" * 1_600)]]
    agent = Agent(main, [Echo()], context=Compactor(window=5_500, keep_recent=4, summarizer=cheap))
    agent.messages = history
    events = []
    agent.subscribe(events.append)
    assert agent.run() == "done"
    assert len(cheap.requests) == 1 and cheap.requests[0]["messages"][0]["content"] == SUMMARY_PROMPT
    assert len(main.requests) == 1  # the agent's own model was asked only for the answer
    assert agent.messages[0]["content"].endswith("Goal: fix the bug.")
    billed = [(e.model, e.usage.prompt_tokens) for e in events if isinstance(e, UsageReported)]
    assert billed == [("cheap-model", 3_000), ("scripted", 900)]


def test_a_latest_turn_too_big_for_the_window_is_trimmed_so_the_session_goes_on():
    calls = [ToolCall(f"r{i}", "echo", '{"text": "a"}') for i in range(3)]
    history = [user("read them"), assistant("", calls), *[tool_result(c.id, "z" * 20_000) for c in calls]]
    agent = agent_with(history, summarizer(), window=6_000, keep_recent=8)
    assert agent.run() == "done"
    sent = agent.llm.requests[-1]["messages"]
    assert all(len(m["content"]) < 2_000 for m in sent if m["role"] == "tool")
    check_history(sent)


# --- what a cut can't leave too big: a long session's summary request, a call's own arguments -----------




def test_summarizing_keeps_fewer_recent_messages_when_they_do_not_fit_under_the_low_mark():
    history = [user("go"), *[m for n in range(8) for m in round_trip(n, "v" * 1_900)]]
    agent = agent_with(history, summarizer(), window=5_000, keep_recent=8)  # 8 would not fit in 2,000
    events = []
    agent.subscribe(events.append)
    agent.run()
    sent = agent.llm.requests[-1]["messages"][1:]
    assert [e.tier for e in events_of(events, Compacted)] == ["summarize"]
    assert 2 < len(sent) - 1 < 8 and sent[1:] == history[-(len(sent) - 1):]  # word for word
    assert events_of(events, Compacted)[0].tokens_after <= 2_000 + 50  # the low mark, and the summary


# --- a long session: what a provider's cache sees ------------------------------------------------------

ROUND = st.lists(st.integers(0, 7_000), min_size=1, max_size=3)  # the outputs of one round's calls


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chats=st.lists(st.lists(ROUND, min_size=1, max_size=12), min_size=1, max_size=5),
       window=st.integers(4_000, 30_000), marks=st.tuples(st.floats(0.5, 0.95), st.floats(0.1, 0.45)),
       keep=st.integers(1, 10))
def test_a_long_session_stays_legal_and_within_the_window_and_keeps_its_prefix_between_compactions(
        chats, window, marks, keep):
    """The user asks several times; each round's calls echo outputs of generated lengths (0 to
    7,000 characters). Every request is legal (the model checks it), the compactor's estimate of
    it is within the window, and a request made with no compaction before it starts with the
    whole request before it: the cache's prefix holds."""
    rounds = iter(())

    def model(messages, tools):
        lengths = next(rounds, None)
        if lengths is None:
            return "done"
        return {"tool_calls": [{"name": "echo", "arguments": {"text": "r", "times": n}} for n in lengths]}

    compactions, (high, low) = {}, marks
    summaries = FunctionLLM(lambda messages, tools: "Goal: echo.\nFiles: none.")
    compactor = Compactor(window=window, high=high, low=low, keep_recent=keep, summarizer=summaries)
    agent = Agent(FunctionLLM(model), [Echo()], context=compactor, max_rounds=20)
    agent.subscribe(lambda e: isinstance(e, Compacted) and compactions.update({len(agent.llm.requests): e}))
    for chat in chats:
        rounds = iter(chat)
        assert agent.chat("echo what you are given") == "done"
    requests = [r["messages"] for r in agent.llm.requests]
    for n, (before, now) in enumerate(zip(requests, requests[1:], strict=False), 1):
        if n not in compactions:
            assert now[: len(before)] == before, f"request {n} rewrote the one before with no compaction"
    for sent in requests:
        check_history(sent[1:])
        assert history_tokens(sent[1:]) + compactor.overhead() <= window
    for n, last in compactions.items():  # all at once: down to the low mark (and the summary on
        history = requests[n][1:]  # top of it), or down to the first message and the latest turn
        assert (last.tokens_after <= low * window + history_tokens(history[:1])
                or turn_start(history, len(history) - 1) <= 1)
