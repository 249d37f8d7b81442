"""The loopback server: the real openai client, streaming included, against a script, offline."""

import functools
import http.client
import json
import subprocess
import sys
from pathlib import Path

import openai
import pytest

from corecoder.messages import ToolCall, assistant, tool_result, user
from corecoder.scripted import ScriptError, parse_turn
from corecoder.testing import ScriptServer

HI = [user("hi")]


@functools.cache
def _shared() -> openai.OpenAI:
    return openai.OpenAI(base_url="http://127.0.0.1:9/v1", api_key="x", max_retries=0)


def client(server: ScriptServer) -> openai.OpenAI:
    """The real client, pointed at the server. Copies share one HTTP client: building one loads TLS certificates."""
    return _shared().with_options(base_url=server.base_url)


def raw(server: ScriptServer, body=None, method="POST", path="/v1/chat/completions"):
    """One request over http.client, to see exactly what went over the wire: (status, headers, bytes)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        conn.request(method, path, body=None if body is None else json.dumps(body))
        response = conn.getresponse()
        return response.status, response.headers, response.read()
    finally:
        conn.close()


def events(data: bytes, done: bool = True) -> list:
    """An SSE body as its parsed `data:` payloads, checking the framing on the way."""
    text = data.decode()
    assert text.endswith("data: [DONE]\n\n") == done
    payloads = [part.removeprefix("data: ") for part in text.split("\n\n")[:-1]]
    assert all(part.startswith("data: ") for part in text.split("\n\n")[:-1])
    return [json.loads(p) for p in payloads if p != "[DONE]"]


def deltas(chunks: list) -> list:
    return [chunk["choices"][0]["delta"] for chunk in chunks]


def stream(**body) -> dict:
    return {"model": "m", "messages": HI, "stream": True, **body}


def test_models_list_names_the_scripted_model():
    with ScriptServer([], model="tiny") as server:
        models = client(server).models.list()
        assert [(m.id, m.object, m.owned_by) for m in models.data] == [("tiny", "model", "corecoder")]
        assert server.requests == [{"method": "GET", "path": "/v1/models", "body": None, "stream": False, "bytes": 0,
                                    "key": "x"}]


def test_plain_text_comes_back_as_one_completion_with_estimated_usage():
    with ScriptServer(["Hello there, world."]) as server:
        reply = client(server).chat.completions.create(model="m", messages=HI)
        sent = server.requests[0]["body"]
    assert (reply.object, reply.model, reply.created) == ("chat.completion", "m", 0)
    assert (reply.choices[0].message.content, reply.choices[0].finish_reason) == ("Hello there, world.", "stop")
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (len(json.dumps(sent)) // 4, 19 // 4)
    assert reply.usage.total_tokens == reply.usage.prompt_tokens + reply.usage.completion_tokens


def test_streamed_text_comes_in_word_fragments_then_finish_then_done():
    with ScriptServer(["Hello there, world.", "Hello there, world."]) as server:
        status, headers, data = raw(server, stream())
        text = "".join(c.choices[0].delta.content or "" for c in client(server).chat.completions.create(
            model="m", messages=HI, stream=True))
    assert (status, headers["Content-Type"]) == (200, "text/event-stream")
    chunks = events(data)
    assert deltas(chunks) == [{"role": "assistant", "content": ""}, {"content": "Hello "}, {"content": "there, "},
                              {"content": "world."}, {}]
    assert [c["choices"][0]["finish_reason"] for c in chunks] == [None] * 4 + ["stop"]
    assert {(c["id"], c["object"], c["created"], c["model"]) for c in chunks} == {
        ("chatcmpl-scripted-1", "chat.completion.chunk", 0, "m")}
    assert text == "Hello there, world."


def test_usage_chunk_is_sent_only_when_asked_for():
    usage = {"prompt_tokens": 812, "completion_tokens": 40, "cached_tokens": 700}
    with ScriptServer([{"text": "ok", "usage": usage}] * 3) as server:
        plain = events(raw(server, stream())[2])
        asked = events(raw(server, stream(stream_options={"include_usage": True}))[2])
        last = list(client(server).chat.completions.create(
            model="m", messages=HI, stream=True, stream_options={"include_usage": True}))[-1]
    assert all(c["choices"] for c in plain) and all("usage" not in c for c in plain)
    assert asked[:-1] == [{**c, "id": "chatcmpl-scripted-2"} for c in plain]
    assert asked[-1]["choices"] == []
    assert asked[-1]["usage"] == {"prompt_tokens": 812, "completion_tokens": 40, "total_tokens": 852,
                                  "prompt_tokens_details": {"cached_tokens": 700}}
    assert (last.usage.total_tokens, last.usage.prompt_tokens_details.cached_tokens) == (852, 700)


PARALLEL = {"text": "Reading both.", "tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}},
                                                    {"name": "grep", "arguments": {"pattern": "def add"}}]}


def test_parallel_tool_calls_stream_as_argument_fragments_the_client_reassembles():
    with ScriptServer([PARALLEL]) as server:
        calls, finish = {}, None
        for chunk in client(server).chat.completions.create(model="m", messages=HI, stream=True):
            finish = chunk.choices[0].finish_reason or finish
            for d in chunk.choices[0].delta.tool_calls or []:
                call = calls.setdefault(d.index, {"id": d.id, "name": d.function.name, "arguments": [""]})
                call["arguments"].append(d.function.arguments)
    assert finish == "tool_calls"
    assert [(c["id"], c["name"], "".join(c["arguments"])) for c in calls.values()] == [
        ("call_1_1", "read_file", '{"path": "calc.py"}'), ("call_1_2", "grep", '{"pattern": "def add"}')]
    assert all(len(c["arguments"]) >= 4 for c in calls.values())  # several fragments each, not one blob


def test_tool_calls_without_text_have_null_content_when_not_streamed():
    turn = {"tool_calls": PARALLEL["tool_calls"]}
    with ScriptServer([turn]) as server:
        choice = client(server).chat.completions.create(model="m", messages=HI).choices[0]
    assert (choice.message.content, choice.finish_reason) == (None, "tool_calls")
    assert [(c.id, c.type, c.function.name, c.function.arguments) for c in choice.message.tool_calls] == [
        ("call_1_1", "function", "read_file", '{"path": "calc.py"}'),
        ("call_1_2", "function", "grep", '{"pattern": "def add"}')]


def head(index, id_, name):
    return {"index": index, "id": id_, "type": "function", "function": {"name": name, "arguments": ""}}


def frag(index, arguments):
    return {"index": index, "function": {"arguments": arguments}}


def full(index, id_, name, arguments):
    return {"index": index, "id": id_, "type": "function", "function": {"name": name, "arguments": arguments}}


TWO_CALLS = [{"id": "a", "name": "read", "arguments": {"p": 12}}, {"id": "b", "name": "grep", "arguments": {"q": 34}}]
QUIRK_SHAPES = {  # '{"p": 12}' is streamed 7 characters at a time: '{"p": 1' then '2}'
    "standard": [head(0, "a", "read"), frag(0, '{"p": 1'), frag(0, '2}'),
                 head(1, "b", "grep"), frag(1, '{"q": 3'), frag(1, '4}')],
    "repeat_first": [head(0, "a", "read"), head(0, "a", "read"), frag(0, '{"p": 1'), frag(0, '2}'),
                     head(1, "b", "grep"), head(1, "b", "grep"), frag(1, '{"q": 3'), frag(1, '4}')],
    "shared_index": [head(0, "a", "read"), frag(0, '{"p": 1'), frag(0, '2}'),
                     head(0, "b", "grep"), frag(0, '{"q": 3'), frag(0, '4}')],
    "null_index": [head(None, "a", "read"), frag(None, '{"p": 1'), frag(None, '2}'),
                   head(None, "b", "grep"), frag(None, '{"q": 3'), frag(None, '4}')],
    "stray_index": [head(0, "a", "read"), frag(0, '{"p": 1'), frag(99, '2}'),
                    head(1, "b", "grep"), frag(1, '{"q": 3'), frag(100, '4}')],
    "whole": [full(0, "a", "read", '{"p": 12}'), full(1, "b", "grep", '{"q": 34}')],
    "id_every_chunk": [head(0, "a", "read"), full(0, "a", "read", '{"p": 1'), full(0, "a", "read", '2}'),
                       head(1, "b", "grep"), full(1, "b", "grep", '{"q": 3'), full(1, "b", "grep", '4}')],
}


@pytest.mark.parametrize("quirk", QUIRK_SHAPES)
def test_each_quirk_streams_tool_call_deltas_in_its_own_shape(quirk):
    turn = {"tool_calls": TWO_CALLS, "quirk": quirk}
    with ScriptServer([turn, turn, turn]) as server:
        chunks = events(raw(server, stream())[2])
        received = list(client(server).chat.completions.create(model="m", messages=HI, stream=True))
        plain = client(server).chat.completions.create(model="m", messages=HI).choices[0].message
    calls = [d["tool_calls"] for d in deltas(chunks) if "tool_calls" in d]
    assert all(len(c) == 1 for c in calls)  # one tool-call delta per chunk
    assert [c[0] for c in calls] == QUIRK_SHAPES[quirk]
    assert len(received) == len(chunks)  # the real client takes every shape without complaint
    assert [c.function.arguments for c in plain.tool_calls] == ['{"p": 12}', '{"q": 34}']  # streaming only


def test_no_quirk_means_standard():
    with ScriptServer([{"tool_calls": TWO_CALLS}]) as server:
        chunks = events(raw(server, stream())[2])
    assert [d["tool_calls"][0] for d in deltas(chunks) if "tool_calls" in d] == QUIRK_SHAPES["standard"]


@pytest.mark.parametrize("field, streamed, message", [
    (None, [{"reasoning_content": "Look "}, {"reasoning_content": "first."}, {"content": "Done."}],
     {"content": "Done.", "reasoning_content": "Look first."}),
    ("reasoning", [{"reasoning": "Look "}, {"reasoning": "first."}, {"content": "Done."}],
     {"content": "Done.", "reasoning": "Look first."}),
    ("think_tags", [{"content": "<think>Look "}, {"content": "first.</think>Done."}],
     {"content": "<think>Look first.</think>Done."}),
])
def test_reasoning_goes_where_the_turn_says(field, streamed, message):
    turn = {"text": "Done.", "reasoning": "Look first."} | ({"reasoning_field": field} if field else {})
    with ScriptServer([turn, turn]) as server:
        chunks = events(raw(server, stream())[2])
        status, _, data = raw(server, {"model": "m", "messages": HI})
    assert deltas(chunks) == [{"role": "assistant", "content": ""}, *streamed, {}]
    assert json.loads(data)["choices"][0]["message"] == {"role": "assistant", **message}


FAULTS = [  # fault, status, error type, code, what the openai client raises
    ("rate_limit", 429, "rate_limit_error", "rate_limit_exceeded", openai.RateLimitError),
    ("server_error", 500, "server_error", None, openai.InternalServerError),
    ("overloaded", 529, "overloaded_error", None, openai.InternalServerError),
    ("context_length", 400, "invalid_request_error", "context_length_exceeded", openai.BadRequestError),
    ("auth", 401, "invalid_request_error", "invalid_api_key", openai.AuthenticationError),
    ("bad_request", 400, "invalid_request_error", None, openai.BadRequestError),
]


@pytest.mark.parametrize("fault, status, type_, code, raised", FAULTS)
def test_each_fault_answers_with_its_status_and_error_body_and_uses_up_its_turn(fault, status, type_, code, raised):
    with ScriptServer([{"fault": fault}, {"fault": fault}, "after"]) as server:
        got, headers, data = raw(server, {"model": "m", "messages": HI})
        with pytest.raises(raised) as e:
            client(server).chat.completions.create(model="m", messages=HI, stream=True)
        assert client(server).chat.completions.create(model="m", messages=HI).choices[0].message.content == "after"
    error = json.loads(data)["error"]
    assert (got, headers["Content-Type"], error["type"], error["code"]) == (status, "application/json", type_, code)
    assert set(error) == {"message", "type", "param", "code"} and error["message"]
    assert e.value.status_code == status
    assert ("Retry-After" in headers) == (fault == "rate_limit")


def test_fault_messages_read_like_the_real_ones():
    with ScriptServer([{"fault": "context_length"}, {"fault": "auth"}]) as server:
        context = json.loads(raw(server, {"model": "m", "messages": HI})[2])["error"]
        auth = json.loads(raw(server, {"model": "m", "messages": HI})[2])["error"]
    assert context["message"].startswith("This model's maximum context length is 8192 tokens. However, your "
                                         "messages resulted in 9000 tokens.")
    assert auth["message"] == "Incorrect API key provided"


def test_rate_limit_sends_retry_after_as_written():
    with ScriptServer([{"fault": "rate_limit", "retry_after": 1.5}, {"fault": "rate_limit"}]) as server:
        with pytest.raises(openai.RateLimitError) as e:
            client(server).chat.completions.create(model="m", messages=HI)
        default = raw(server, {"model": "m", "messages": HI})[1]
    assert e.value.response.headers["retry-after"] == "1.5"
    assert default["Retry-After"] == "0"


def test_a_dropped_stream_stops_halfway_without_done():
    turn = {"text": "one two three four five six", "fault": "drop"}
    with ScriptServer([turn, turn, "after"]) as server:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
        conn.request("POST", "/v1/chat/completions", body=json.dumps(stream()))
        response = conn.getresponse()
        with pytest.raises(http.client.IncompleteRead) as cut:
            response.read()
        conn.close()
        received = []
        with pytest.raises(openai.APIConnectionError):
            for chunk in client(server).chat.completions.create(model="m", messages=HI, stream=True):
                received.append(chunk.choices[0].delta.content)
        assert client(server).chat.completions.create(model="m", messages=HI).choices[0].message.content == "after"
    assert response.status == 200
    assert deltas(events(cut.value.partial, done=False)) == [  # 4 of the 8 chunks
        {"role": "assistant", "content": ""}, {"content": "one "}, {"content": "two "}, {"content": "three "}]
    assert received == ["", "one ", "two ", "three "]


def test_a_dropped_plain_request_gets_no_response_at_all():
    with ScriptServer([{"fault": "drop"}, {"fault": "drop"}, "after"]) as server:
        with pytest.raises(http.client.RemoteDisconnected):
            raw(server, {"model": "m", "messages": HI})
        with pytest.raises(openai.APIConnectionError):
            client(server).chat.completions.create(model="m", messages=HI)
        assert client(server).chat.completions.create(model="m", messages=HI).choices[0].message.content == "after"


REJECTIONS = [
    ("stream_options", {"include_usage": True}, "Unrecognized request argument supplied: stream_options", None, None),
    ("max_tokens", 100, "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
     "'max_completion_tokens' instead.", "max_tokens", "unsupported_parameter"),
    ("temperature", 0.2, "Unsupported value: 'temperature' does not support 0.2 with this model. Only the default "
     "(1) value is supported.", "temperature", "unsupported_value"),
]


@pytest.mark.parametrize("name, value, message, param, code", REJECTIONS)
def test_a_rejected_parameter_is_a_400_and_leaves_the_turn_for_the_retry(name, value, message, param, code):
    with ScriptServer(["first"], reject=(name,)) as server:
        llm = client(server)
        with pytest.raises(openai.BadRequestError) as e:
            llm.chat.completions.create(model="m", messages=HI, stream=True, **{name: value})
        assert e.value.body == {"message": message, "type": "invalid_request_error", "param": param, "code": code}
        assert llm.chat.completions.create(model="m", messages=HI).choices[0].message.content == "first"
        assert [name in r["body"] for r in server.requests] == [True, False]


def test_the_reported_value_is_the_one_sent():
    with ScriptServer(["first"], reject=("temperature",)) as server:
        with pytest.raises(openai.BadRequestError, match="does not support 0 with"):
            client(server).chat.completions.create(model="m", messages=HI, temperature=0)


def test_an_illegal_history_is_a_400_that_names_the_problem():
    legal = [user("a"), assistant("", [ToolCall("c1", "read", "{}")]), tool_result("c1", "ok")]
    with ScriptServer(["first"]) as server:
        with pytest.raises(openai.BadRequestError) as e:
            client(server).chat.completions.create(model="m", messages=[user("a"), tool_result("x", "1")])
        assert client(server).chat.completions.create(model="m", messages=legal).choices[0].message.content == "first"
    assert "orphan tool result" in e.value.body["message"]
    assert (e.value.body["type"], e.value.body["param"]) == ("invalid_request_error", "messages")


def test_running_out_of_script_is_a_400_so_the_client_fails_at_once():
    with ScriptServer(["only"]) as server:
        client(server).chat.completions.create(model="m", messages=HI)
        with pytest.raises(openai.BadRequestError) as e:
            client(server).chat.completions.create(model="m", messages=HI)
    assert e.value.body == {"message": "the script has 1 turns but request 2 was made",
                            "type": "invalid_request_error", "param": None, "code": "script_exhausted"}


def test_an_aside_answers_every_request_without_tools_and_takes_no_turn_of_the_script():
    """A compaction's summary comes when the context policy decides: the script keeps its order."""
    tools = [{"type": "function", "function": {"name": "echo", "parameters": {"type": "object"}}}]
    with ScriptServer(["first", "second"], aside="Goal: the summary.") as server:
        ask = functools.partial(client(server).chat.completions.create, model="m", messages=HI)
        said = [ask(tools=tools), ask(), ask(), ask(tools=tools)]
    assert [r.choices[0].message.content for r in said] == ["first", "Goal: the summary.",
                                                            "Goal: the summary.", "second"]


def test_unknown_paths_and_unparsable_bodies_are_refused_without_using_a_turn():
    with ScriptServer(["first"]) as server:
        status, _, data = raw(server, {"model": "m", "messages": HI}, path="/v1/completions")
        assert (status, json.loads(data)["error"]["message"]) == (404, "Invalid URL (POST /v1/completions)")
        assert raw(server, method="GET", path="/v1/nothing")[0] == 404
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
        conn.request("POST", "/v1/chat/completions", body="{not json")
        assert conn.getresponse().status == 400
        conn.close()
        assert client(server).chat.completions.create(model="m", messages=HI).choices[0].message.content == "first"


def test_every_request_is_recorded():
    with ScriptServer(["one", "two"]) as server:
        llm = client(server)
        llm.models.list()
        llm.chat.completions.create(model="m", messages=HI)
        list(llm.chat.completions.create(model="m", messages=HI, stream=True))
        raw(server, {"model": "m", "messages": HI}, path="/v1/other")
        requests = server.requests
    assert [(r["method"], r["path"], r["stream"]) for r in requests] == [
        ("GET", "/v1/models", False), ("POST", "/v1/chat/completions", False),
        ("POST", "/v1/chat/completions", True), ("POST", "/v1/other", False)]
    assert requests[0]["body"] is None
    assert [r["body"]["messages"] for r in requests[1:]] == [HI] * 3
    assert requests[2]["body"]["stream"] is True


def test_each_request_records_the_bytes_of_its_raw_body():
    body = json.dumps({"model": "m", "messages": [user("héllo ✓")]}, ensure_ascii=False).encode()
    with ScriptServer(["one"]) as server:
        for data, status in ((body, 200), (b"{not json", 400)):
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
            conn.request("POST", "/v1/chat/completions", body=data)
            assert conn.getresponse().status == status
            conn.close()
        raw(server, method="GET", path="/v1/models")
        requests = server.requests
    assert [r["bytes"] for r in requests] == [len(body), len(b"{not json"), 0]  # bytes, not characters
    assert len(body) > len(body.decode())


def test_a_script_file_is_read_like_scripted_llm_reads_it(tmp_path):
    (tmp_path / "dict.json").write_text(json.dumps({"model": "from-file", "turns": ["hello"]}))
    (tmp_path / "list.json").write_text(json.dumps(["hi"]))
    with ScriptServer(tmp_path / "dict.json") as server:
        assert client(server).models.list().data[0].id == "from-file"
        assert client(server).chat.completions.create(model="m", messages=HI).choices[0].message.content == "hello"
    with ScriptServer(str(tmp_path / "list.json")) as server:
        assert client(server).models.list().data[0].id == "scripted"


def test_script_mistakes_fail_when_the_server_is_built():
    for turn, problem in [({"fault": "timeout"}, "unknown fault 'timeout'"),
                          ({"quirk": "odd"}, "quirk 'odd' is not one of"),
                          ({"reasoning_field": "thoughts"}, "reasoning_field 'thoughts' is not one of"),
                          ({"faults": "drop"}, "unknown keys")]:
        with pytest.raises(ScriptError, match=problem):
            ScriptServer(["fine", turn])


def test_parse_turn_tolerates_the_server_keys():
    turn = {"text": "x", "fault": "drop", "retry_after": 2, "quirk": "whole", "reasoning_field": "reasoning"}
    assert parse_turn(turn, 0).text == "x"


def test_a_text_turn_that_mentions_a_server_key_is_just_text():
    with ScriptServer(["no fault, no quirk"]) as server:
        reply = client(server).chat.completions.create(model="m", messages=HI)
    assert reply.choices[0].message.content == "no fault, no quirk"


def test_leaving_the_block_closes_the_socket():
    with ScriptServer([]) as server:
        pass
    with pytest.raises(ConnectionRefusedError):
        raw(server, method="GET", path="/v1/models")


def test_the_command_line_prints_the_url_and_serves_until_stopped(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"model": "cli-model", "turns": ["hi"]}))
    process = subprocess.Popen([sys.executable, "-m", "corecoder.testing.serve", str(script), "--port", "0"],
                               stdout=subprocess.PIPE, text=True, cwd=Path(__file__).parents[2])
    try:
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        host, port = url.removeprefix("http://").removesuffix("/v1").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=5)
        conn.request("GET", "/v1/models")
        assert json.loads(conn.getresponse().read())["data"][0]["id"] == "cli-model"
        conn.close()
    finally:
        process.terminate()
        process.wait(timeout=5)


def test_a_scripted_model_without_http_plays_the_same_script_faults_included():
    from corecoder import LLM
    from corecoder.testing import FAULTS, FaultyScriptedLLM

    passing = [{"fault": name} for name, fault in FAULTS.items() if fault.raises is None]
    with ScriptServer([*passing, "done"]) as server:
        llm = LLM("scripted", base_url=server.base_url, api_key="x", sleep=lambda s: None, max_attempts=9,
                  idle_timeout=0.5)  # a stall ends in half a second
        assert llm.chat([user("a")]).text == FaultyScriptedLLM([*passing, "done"]).chat([user("a")]).text == "done"
    for name, fault in FAULTS.items():
        if fault.raises is not None:
            with ScriptServer([{"fault": name}]) as server, pytest.raises(type(fault.raises())):
                LLM("scripted", base_url=server.base_url, api_key="x", reply_timeout=1).chat([user("a")])
            with pytest.raises(type(fault.raises())):
                FaultyScriptedLLM([{"fault": name}]).chat([user("a")])
