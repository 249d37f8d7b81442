"""The real openai client, against the loopback scripted server: streaming, dialects,
faults, retries, parameter adaptation and usage. Nothing leaves this machine."""

import contextlib
import http.server
import json
import threading

import pytest

from corecoder import LLM, ContextTooLong, ModelError, build_agent, check_history
from corecoder.events import ReasoningDelta, Retrying, TextDelta
from corecoder.llm import OUTPUT_LIMIT_REACHED
from corecoder.messages import user
from corecoder.testing import ScriptServer

GREP = {"name": "grep", "arguments": {"pattern": "def mean", "include": "*.py"}}
GLOB = {"name": "glob", "arguments": {"pattern": "**/*.md"}}
TOOLS = [{"type": "function", "function": {"name": "grep", "parameters": {"type": "object"}}}]


def client(server, **kw):
    sleeps = []
    llm = LLM("scripted", base_url=server.base_url, api_key="x", sleep=sleeps.append, seed=1, **kw)
    return llm, sleeps


def ask(llm, events=None):
    return llm.chat([user("go")], TOOLS, (events.append if events is not None else None))


def test_streamed_text_arrives_in_pieces_and_adds_up():
    with ScriptServer(["The mean divides by the count, not the count minus one."]) as server:
        llm, _ = client(server)
        events = []
        reply = ask(llm, events)
    pieces = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(pieces) > 1
    assert "".join(pieces) == reply.text == "The mean divides by the count, not the count minus one."
    assert server.requests[0]["body"]["stream_options"] == {"include_usage": True}


def test_usage_comes_from_the_final_chunk():
    with ScriptServer([{"text": "hi", "usage": {"prompt_tokens": 120, "completion_tokens": 7,
                                                "cached_tokens": 100}}]) as server:
        reply = ask(client(server)[0])
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens, reply.usage.cached_tokens) == (120, 7, 100)


@pytest.mark.parametrize("quirk", ["standard", "repeat_first", "shared_index", "null_index", "stray_index",
                                   "whole", "id_every_chunk"])
def test_parallel_tool_calls_are_reassembled_in_every_dialect(quirk):
    with ScriptServer([{"tool_calls": [GREP, GLOB], "quirk": quirk}]) as server:
        reply = ask(client(server)[0])
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [
        ("grep", '{"pattern": "def mean", "include": "*.py"}'), ("glob", '{"pattern": "**/*.md"}')]
    assert len({c.id for c in reply.tool_calls}) == 2


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning", "think_tags"])
def test_reasoning_is_shown_but_kept_out_of_the_history(field):
    with ScriptServer([{"reasoning": "Check the divisor.", "text": "Found it.", "reasoning_field": field}]) as server:
        events = []
        reply = ask(client(server)[0], events)
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == "Check the divisor."
    assert reply.text == "Found it."
    assert "reasoning_content" not in reply.message()


def test_providers_that_need_reasoning_back_on_tool_call_turns_get_it():
    with ScriptServer([{"reasoning": "Search first.", "tool_calls": [GREP]}]) as server:
        reply = ask(client(server, keep_reasoning=True)[0])
    assert reply.message()["reasoning_content"] == "Search first."


def test_malformed_arguments_reach_the_model_as_bad_arguments(tmp_path):
    turns = [{"tool_calls": [{"name": "grep", "arguments": '{"pattern": "x",'}]}, "ok"]
    with ScriptServer(turns) as server:
        agent = build_agent(client(server)[0], tmp_path)
        agent.chat("go")
    result = agent.messages[2]["content"]
    assert result.startswith("bad arguments for grep: the arguments are not valid JSON")


def test_a_non_streaming_provider_gives_the_same_reply():
    turns = [{"reasoning": "hmm", "text": "Looking.", "tool_calls": [GREP, GLOB], "reasoning_field": "think_tags"}]
    with ScriptServer(turns) as server:
        events = []
        reply = ask(client(server, stream=False)[0], events)
    assert "stream" not in server.requests[0]["body"] or server.requests[0]["body"]["stream"] is False
    assert (reply.text, reply.reasoning) == ("Looking.", "hmm")
    assert [c.name for c in reply.tool_calls] == ["grep", "glob"]
    assert reply.usage is not None


def test_a_429_is_retried_after_the_time_the_server_asks_for():
    with ScriptServer([{"fault": "rate_limit", "retry_after": 2}, "after the wait"]) as server:
        llm, sleeps = client(server)
        events = []
        assert ask(llm, events).text == "after the wait"
    assert sleeps == [2.0]
    retry = [e for e in events if isinstance(e, Retrying)]
    assert retry[0].attempt == 1 and retry[0].reason.startswith("429")


def test_server_errors_are_retried_with_growing_jittered_backoff():
    with ScriptServer([{"fault": "server_error"}, {"fault": "server_error"}, "ok"]) as server:
        llm, sleeps = client(server)
        assert ask(llm).text == "ok"
    assert len(sleeps) == 2
    assert 0.5 <= sleeps[0] <= 1.0 and 1.0 <= sleeps[1] <= 2.0


def test_an_overloaded_provider_gets_four_times_the_wait_of_a_plain_server_error():
    waits = {}
    for fault in ("server_error", "overloaded"):
        with ScriptServer([{"fault": fault}, {"fault": fault}, "ok"]) as server:
            llm, sleeps = client(server)
            llm.random.seed(7)  # the same jitter for both
            assert ask(llm).text == "ok"
        waits[fault] = sleeps
    assert waits["overloaded"] == [4 * s for s in waits["server_error"]]


def test_try_again_in_its_message_is_waited_for_as_retry_after_would_be():
    with ScriptServer([{"fault": "try_again"}, "after the wait"]) as server:
        llm, sleeps = client(server)
        assert ask(llm).text == "after the wait"
    assert sleeps == [1.5]


def test_a_429_for_an_account_out_of_quota_is_not_retried_and_says_what_to_do():
    with ScriptServer([{"fault": "quota"}, "never reached"]) as server:
        llm, sleeps = client(server)
        with pytest.raises(ModelError) as raised:
            ask(llm)
    assert sleeps == [] and len(server.requests) == 1
    assert str(raised.value) == (
        f"{server.base_url} says the account's quota or credit is used up (429): You exceeded your "
        "current quota, please check your plan and billing details. Add credit or raise the limit "
        "with the provider; trying again will not help.")


def test_retries_are_bounded_and_the_error_says_what_happened():
    with ScriptServer([{"fault": "server_error"}] * 5) as server:
        llm, sleeps = client(server, max_attempts=3)
        with pytest.raises(ModelError, match="gave up .* after 3 attempts: 500"):
            ask(llm)
    assert len(sleeps) == 2 and len(server.requests) == 3


def test_a_stream_dropped_midway_is_retried_whole_without_showing_text_twice():
    long = "One two three four five six seven eight nine ten eleven twelve."
    with ScriptServer([{"fault": "drop", "text": long}, long]) as server:
        llm, _ = client(server)
        events = []
        reply = ask(llm, events)
    assert reply.text == long
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == long
    assert any(isinstance(e, Retrying) for e in events)


def test_a_provider_that_rejects_stream_options_is_asked_again_without_and_that_is_remembered():
    with ScriptServer(["first", "second"], reject=("stream_options",)) as server:
        llm, sleeps = client(server)
        assert ask(llm).text == "first"
        assert ask(llm).text == "second"
    assert [("stream_options" in r["body"]) for r in server.requests if r["path"].endswith("completions")] == [
        True, False, False]
    assert sleeps == []


def test_max_tokens_becomes_max_completion_tokens_when_the_provider_says_so():
    with ScriptServer(["ok"], reject=("max_tokens",)) as server:
        llm, _ = client(server, max_tokens=500)
        assert ask(llm).text == "ok"
    assert server.requests[-1]["body"]["max_completion_tokens"] == 500


def test_temperature_is_dropped_when_the_provider_refuses_it():
    with ScriptServer(["ok"], reject=("temperature",)) as server:
        llm, _ = client(server, temperature=0.2)
        assert ask(llm).text == "ok"
    assert "temperature" not in server.requests[-1]["body"]


def test_a_bad_key_is_not_retried_and_the_message_says_what_to_set():
    with ScriptServer([{"fault": "auth"}]) as server:
        llm, sleeps = client(server)
        with pytest.raises(ModelError, match="rejected the API key .*OPENAI_API_KEY"):
            ask(llm)
    assert sleeps == []


def test_a_context_overflow_is_its_own_error_so_the_agent_can_compact():
    with ScriptServer([{"fault": "context_length"}]) as server:
        with pytest.raises(ContextTooLong, match="context window"):
            ask(client(server)[0])


class Rejected(Exception):
    """A 400 as the openai client raises it: a status and the provider's error body."""

    status_code = 400

    def __init__(self, message):
        super().__init__(message)
        self.body = {"error": {"message": message}}


@pytest.mark.parametrize("words", [
    "This model's maximum context length is 8192 tokens.",  # OpenAI
    "prompt is too long: 215000 tokens > 200000 maximum",  # Anthropic's compatible endpoint
    "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",  # Gemini
])
def test_a_context_overflow_is_known_in_each_providers_words(words):
    llm = LLM("m", api_key="x")
    assert isinstance(llm.explain(Rejected(words), 1), ContextTooLong) and not llm.adapt(Rejected(words))


def test_an_unreachable_server_fails_with_a_clear_error_after_retries():
    llm = LLM("m", base_url="http://127.0.0.1:9/v1", api_key="x", sleep=lambda s: None, max_attempts=2)
    with pytest.raises(ModelError, match="gave up on http://127.0.0.1:9/v1 after 2 attempts"):
        ask(llm)


def test_the_agent_runs_through_the_real_client_and_every_request_is_legal(tmp_path):
    (tmp_path / "stats.py").write_text("def mean(values):\n    return sum(values) / len(values)\n")
    turns = [{"fault": "rate_limit"}, {"tool_calls": [GREP], "quirk": "shared_index"},
             {"fault": "drop", "text": "Found it in stats.py, all fine."}, "Found it in stats.py, all fine."]
    with ScriptServer(turns) as server:
        agent = build_agent(client(server)[0], tmp_path)
        assert agent.chat("where is mean?") == "Found it in stats.py, all fine."
    assert agent.messages[2]["content"] == "stats.py:1: def mean(values):"
    for request in server.requests:
        check_history(request["body"]["messages"])


def test_an_error_sent_inside_the_stream_is_retried_and_then_explained():
    with ScriptServer([{"fault": "error_event", "text": "half of this and then"}, "recovered"]) as server:
        llm, sleeps = client(server)
        assert ask(llm).text == "recovered"
    assert len(sleeps) == 1
    with ScriptServer([{"fault": "error_event", "text": "a b c d"}] * 2) as server:
        with pytest.raises(ModelError, match="gave up .* after 2 attempts"):
            ask(client(server, max_attempts=2)[0])


def test_a_reply_cut_at_the_output_limit_says_so_to_the_user_and_the_model(tmp_path):
    """The arguments of the cut call are incomplete JSON: the model is told that, and why."""
    cut = {"text": "Writing it.", "finish_reason": "length",
           "tool_calls": [{"name": "write_file", "arguments": '{"path": "big.py", "content": "def f('}]}
    with ScriptServer([cut, "Done, in two steps."]) as server:
        agent = build_agent(client(server)[0], tmp_path)
        shown = []
        agent.subscribe(lambda e: isinstance(e, TextDelta) and shown.append(e.text))
        agent.chat("write big.py")
    assert agent.messages[1]["content"] == "Writing it." + OUTPUT_LIMIT_REACHED
    assert OUTPUT_LIMIT_REACHED in "".join(shown)
    assert agent.messages[2]["content"].startswith("bad arguments for write_file: the arguments are not valid JSON")
    assert not (tmp_path / "big.py").exists()


def test_geminis_per_minute_limit_in_quota_words_is_a_rate_retried_after_the_time_it_names():
    """Gemini words its per-minute limit as "You exceeded your current quota" and names a time:
    that is a rate, retried after it, not an account out of credit."""
    from corecoder.llm import quota_exhausted, retry_after, transient

    class Limited(Rejected):
        status_code = 429

    gemini = Limited("You exceeded your current quota, please check your plan and billing details. "
                     "Please retry in 7.5s.")
    assert not quota_exhausted(gemini) and transient(gemini) and retry_after(gemini) == 7.5
    spent = Limited("Your credit balance is too low to access the API.")
    assert quota_exhausted(spent) and not transient(spent)


# --- the reply's time limit holds however the server paces its bytes --------------------------------------

HELLO = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
         "choices": [{"index": 0, "delta": {"content": "Hel"}, "finish_reason": None}]}
WHOLE = {"id": "c", "object": "chat.completion", "created": 0, "model": "m",
         "choices": [{"index": 0, "message": {"role": "assistant", "content": "hello"}, "finish_reason": "stop"}]}
CHUNK, BODY = b"data: " + json.dumps(HELLO).encode() + b"\n\n", json.dumps(WHOLE).encode() + b" " * 10_000
PACES = {  # what the server sends, a piece every 20 ms: never the end of the reply
    "sse_comments": ("text/event-stream", [CHUNK, *[b": keep-alive\n\n"] * 10_000]),
    "empty_lines": ("text/event-stream", [CHUNK, *[b"\n"] * 10_000]),
    "trickled_body": ("application/json", [BODY[i:i + 1] for i in range(len(BODY))]),  # a byte at a time
}


@contextlib.contextmanager
def pacing_server(pace):
    """A server that keeps its reply alive and never finishes it, until the client hangs up."""
    kind, pieces = PACES[pace]
    hung_up = threading.Event()

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(200)
            self.send_header("Content-Type", kind)
            if pace == "trickled_body":
                self.send_header("Content-Length", str(len(BODY)))
            self.end_headers()
            try:
                for piece in pieces:
                    self.wfile.write(piece)
                    self.wfile.flush()
                    if hung_up.wait(0.02):
                        return
            except OSError:  # the client hung up: what the test waits for
                pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        hung_up.set()
        server.shutdown()
        server.server_close()


