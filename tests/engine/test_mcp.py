"""The MCP client: a real server written with the official SDK, a misbehaving one, and the agent.

Every server process a test starts is ended by the time the test is over; the
`spawned` fixture checks it.
"""

import json
import os
import queue
import re
import shutil
import sys
import threading
import time
from pathlib import Path

import pytest

from corecoder import Agent, ScriptedLLM, check_history
from corecoder.mcp import MCPConfigError, MCPHub, MCPTool, ServerSpec, load_servers, render, tool_name
from corecoder.mcp import client as client_module
from corecoder.tool import ToolError
from corecoder.workspace import Workspace

SERVERS = Path(__file__).parents[1] / "mcp_servers"


@pytest.fixture
def hubs(spawned, tmp_path):
    """Make hubs over bad_server.py, each with its own flags; all are closed after the test."""
    made = []

    def make(*flags, root=tmp_path, extra=None, **timeouts):
        servers = {"bad": ServerSpec("bad", sys.executable, [str(SERVERS / "bad_server.py"), *flags]), **(extra or {})}
        hub = MCPHub(servers, root, **timeouts)
        made.append(hub)
        return hub.start()

    yield make
    for hub in made:
        hub.close()


def tools_of(hub) -> dict[str, MCPTool]:
    return {t.name: t for t in hub.tools()}


def run(hub, name, **args):
    return tools_of(hub)[name].run(Workspace(hub.root), **args)


# -- a real server, written with the official SDK --------------------------------

@pytest.fixture(scope="module")
def real(tmp_path_factory):
    spec = ServerSpec("real", sys.executable, [str(SERVERS / "real_server.py")])
    hub = MCPHub({"real": spec}, tmp_path_factory.mktemp("project")).start()
    process = hub.clients["real"].process
    yield hub
    hub.close()
    assert process.poll() is not None


def test_real_server_shakes_hands_and_lists_every_page(real):
    client = real.clients["real"]
    assert (client.state, client.error) == ("ready", "")
    assert client.protocol_version == "2025-11-25"
    tools = tools_of(real)  # served two a page: four tools means nextCursor was followed
    assert list(tools) == ["mcp__real__add", "mcp__real__divide", "mcp__real__stats", "mcp__real__pixel"]
    add = tools["mcp__real__add"]
    assert add.description == "Add two integers." and add.mutating
    assert add.parameters["required"] == ["a", "b"] and add.parameters["properties"]["a"]["type"] == "integer"
    assert add.schema()["function"]["name"] == "mcp__real__add"


def test_real_server_calls_and_their_results_as_text(real):
    assert run(real, "mcp__real__add", a=2, b=3) == "5"
    assert json.loads(run(real, "mcp__real__stats", numbers=[1, 2, 6])) == {"count": 3, "mean": 3.0}
    assert run(real, "mcp__real__pixel") == "[image: image/png]"


def test_real_server_error_result_is_a_tool_error(real):
    with pytest.raises(ToolError, match="division by zero"):
        run(real, "mcp__real__divide", a=1, b=0)
    assert real.clients["real"].state == "ready"  # a tool's error is not the server's


def test_real_server_through_the_agent(real, tmp_path):
    llm = ScriptedLLM([{"tool_calls": [{"name": "mcp__real__divide", "arguments": {"a": 1, "b": 0}},
                                       {"name": "mcp__real__add", "arguments": {"a": 1, "b": 1}}]}, "done"])
    agent = Agent(llm, tools=[], cwd=tmp_path)
    real.attach(agent)
    assert agent.chat("compute") == "done"
    results = [m["content"] for m in agent.messages if m["role"] == "tool"]
    assert results[0].startswith("mcp__real__divide failed: ") and "division by zero" in results[0]
    assert results[1] == "2"


# -- results, names and configuration, without a process ---------------------------

def test_render_each_kind_of_content():
    assert render({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}) == "a\nb"
    assert render({"content": [{"type": "image", "mimeType": "image/png", "data": "AAAA"},
                               {"type": "audio", "mimeType": "audio/wav", "data": "AAA="}]}) == \
        "[image: image/png]\n[audio: audio/wav]"
    assert render({"content": [{"type": "resource", "resource": {"uri": "file:///a.txt", "text": "hello"}},
                               {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AAAA"}},
                               {"type": "resource_link", "uri": "file:///c.md", "name": "c"}]}) == \
        "[resource: file:///a.txt]\nhello\n[resource: file:///b.bin]\n[resource_link: file:///c.md]"
    structured = {"content": [], "structuredContent": {"n": 1}}
    assert json.loads(render(structured)) == {"n": 1}  # no text: the structured content is the result
    assert render({**structured, "content": [{"type": "text", "text": "one"}]}) == "one"  # text mirrors it
    assert render({"content": [{"type": "hologram"}]}) == "[hologram content]"


def test_tool_names_are_sanitized_and_capped():
    assert tool_name("my server", "do.it/now") == "mcp__my_server__do_it_now"
    assert tool_name("files", "read-file") == "mcp__files__read-file"
    long = tool_name("s" * 40, "t" * 40)
    assert len(long) == 64 and long.startswith("mcp__" + "s" * 40 + "__t")


def test_config_project_overrides_home(tmp_path):
    home, project = tmp_path / "home", tmp_path / "project"
    (project / ".corecoder").mkdir(parents=True)
    home.mkdir()
    assert load_servers(home, project) == {}  # no files, no servers
    (home / "mcp.json").write_text(json.dumps({"mcpServers": {
        "files": {"command": "files-server"}, "web": {"command": "web", "args": ["--port", "0"]}}}))
    (project / ".corecoder" / "mcp.json").write_text(json.dumps({"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "files"], "env": {"ROOT": "."}}}}))
    servers = load_servers(home, project)
    assert servers["files"] == ServerSpec("files", "npx", ["-y", "files"], {"ROOT": "."})
    assert servers["web"] == ServerSpec("web", "web", ["--port", "0"])


@pytest.mark.parametrize("text, complaint", [
    ('{"mcpServers": {', "not valid JSON: .* line 1"),
    ('["a"]', "expected"),
    ('{"mcpServers": {"x": {"args": []}}}', "server 'x' needs \"command\""),
    ('{"mcpServers": {"x": {"url": "http://localhost:1"}}}', "only stdio servers"),
    ('{"mcpServers": {"x": {"command": "y", "args": "--flag"}}}', "list of strings"),
    ('{"mcpServers": {"x": {"command": "y", "env": {"N": 1}}}}', "string values"),
])
def test_a_malformed_mcp_json_is_a_clear_error_naming_the_file(tmp_path, text, complaint):
    (tmp_path / "mcp.json").write_text(text)
    with pytest.raises(MCPConfigError, match=complaint) as caught:
        load_servers(tmp_path, tmp_path / "project")
    assert isinstance(caught.value, ValueError) and str(tmp_path / "mcp.json") in str(caught.value)


# -- a server that misbehaves ------------------------------------------------------

def test_megabytes_on_stderr_never_block_the_server(hubs):
    hub = hubs("--stderr-mb", "8", call_timeout=60)
    started = time.monotonic()
    assert run(hub, "mcp__bad__echo", text="still here") == "still here"  # 8 MB: 128 times a pipe's buffer
    assert time.monotonic() - started < 30  # a blocked server would have waited out the minute
    stderr = hub.clients["bad"].stderr
    assert len(stderr) == 200 and stderr[-1] == "x" * 1000  # the last 200 lines, each cut to 1,000 characters


def test_a_banner_on_stdout_is_skipped_with_a_warning(hubs):
    hub = hubs("--banner")
    [row] = hub.status()
    assert (row.state, row.tools) == ("ready", 5)
    assert "not JSON-RPC" in row.note and "bad server 0.1" in row.note
    assert run(hub, "mcp__bad__echo", text="hi") == "hi"


def test_a_crash_mid_call_fails_that_call_and_the_next_until_reconnect(hubs, tmp_path):
    hub = hubs()
    agent = Agent(ScriptedLLM([]), tools=[], cwd=tmp_path)
    hub.attach(agent)
    with pytest.raises(ToolError, match=r"MCP server bad could not run crash: .*exited with code 3") as caught:
        run(hub, "mcp__bad__crash")
    assert "crashing on purpose" in str(caught.value)  # its last words on stderr
    assert hub.status()[0].state == "dead"
    started = time.monotonic()
    with pytest.raises(ToolError, match=r"exited with code 3.*/mcp reconnect bad"):
        run(hub, "mcp__bad__echo", text="anyone?")
    assert time.monotonic() - started < 10  # known dead: no waiting for the call's timeout (a minute)
    old = agent.tools["mcp__bad__echo"]
    row = hub.reconnect("bad")
    assert (row.state, row.tools) == ("ready", 5)
    assert agent.tools["mcp__bad__echo"] is not old  # the agent got the tools as they are now
    assert agent.tools["mcp__bad__echo"].run(Workspace(tmp_path), text="back") == "back"
    with pytest.raises(KeyError, match="no MCP server named 'nope'"):
        hub.reconnect("nope")


def test_a_call_made_before_the_reader_saw_the_server_die_hears_from_the_reader_how_it_ended(hubs):
    # One narrator of a death, the reader (the code, the last words on stderr), whoever notices it
    # first: here a call writes into the dead server's pipe while the reader is held back.
    hub = hubs()
    client = hub.clients["bad"]
    written, gone, send = threading.Event(), client._gone, client._send

    def held_reader(process, reason):
        assert written.wait(30), "the call never wrote"
        gone(process, reason)

    def call_writes(*args, **kwargs):
        try:
            send(*args, **kwargs)
        finally:
            written.set()

    client._gone, client._send = held_reader, call_writes
    client.process.kill()
    with pytest.raises(ToolError, match=r"during tools/call, the server exited with code -9"):
        run(hub, "mcp__bad__echo", text="anyone?")
    assert client.state == "dead"


def test_a_hung_call_times_out_and_the_server_goes_on(hubs):
    hub = hubs(call_timeout=2)  # room for a loaded machine: the echo after it must answer within it
    started = time.monotonic()
    with pytest.raises(ToolError, match=r"no answer to tools/call within 2 s"):
        run(hub, "mcp__bad__hang")
    assert time.monotonic() - started < 10
    assert hub.status()[0].state == "error"
    assert run(hub, "mcp__bad__echo", text="ok") == "ok"  # the late answer never comes; others do
    row = hub.status()[0]
    assert row.state == "ready" and "no answer" in row.note  # the error stays on record


def test_servers_that_fail_to_start_do_not_stop_the_others(hubs, tmp_path):
    hang = ServerSpec("hang", sys.executable, [str(SERVERS / "bad_server.py"), "--hang-start"])
    missing = ServerSpec("missing", str(tmp_path / "no-such-server"))
    dies = ServerSpec("dies", sys.executable, ["-c", "import sys; sys.stderr.write('no config\\n'); sys.exit(2)"])
    started = time.monotonic()
    # Room for a loaded machine: "bad" must answer within it, and "dies" be seen to die before it ends
    hub = hubs(extra={"hang": hang, "missing": missing, "dies": dies}, startup_timeout=10)
    assert time.monotonic() - started < 30  # each start bounded by its timeout
    rows = {row.name: row for row in hub.status()}
    assert (rows["bad"].state, rows["bad"].tools) == ("ready", 5)
    assert rows["hang"].state == "error" and "no answer to initialize" in rows["hang"].note
    assert rows["missing"].state == "error" and "cannot start" in rows["missing"].note
    assert rows["dies"].state == "dead" and "code 2" in rows["dies"].note and "no config" in rows["dies"].note
    assert hub.clients["hang"].process is None  # a hung server is not left running
    assert set(tools_of(hub)) == {"mcp__bad__echo", "mcp__bad__crash", "mcp__bad__hang", "mcp__bad__grow",
                                 "mcp__bad__deaf"}


def test_close_ends_a_server_that_ignores_eof_and_sigterm(hubs, monkeypatch):
    monkeypatch.setattr(client_module, "GRACE", 0.2)  # stdin closed, 0.2 s, SIGTERM, 0.2 s, SIGKILL
    code = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)"
    stubborn = ServerSpec("stubborn", sys.executable, ["-c", code])
    started = time.monotonic()
    hub = hubs(extra={"stubborn": stubborn}, startup_timeout=10)  # room for "bad" to start on a loaded machine
    assert time.monotonic() - started < 30
    assert hub.clients["stubborn"].state == "error"  # and `spawned` checks that it is gone


def test_requests_from_the_server_are_answered_and_the_reply_still_arrives(hubs, tmp_path):
    hub = hubs("--ask")  # ping, roots/list and an unknown request, each with the pending call's id
    text = run(hub, "mcp__bad__echo", text="hi")
    assert text.startswith("hi")
    answers = json.loads(text[2:])
    assert answers["ping"]["result"] == {}
    assert answers["roots/list"]["result"]["roots"] == [{"uri": tmp_path.resolve().as_uri(), "name": tmp_path.name}]
    assert answers["sampling/createMessage"]["error"]["code"] == -32601


def test_a_line_is_told_by_its_shape_and_an_id_of_true_answers_nothing():
    kinds = {'{"jsonrpc": "2.0", "id": 1, "result": {}}': "answer",
             '{"jsonrpc": "2.0", "id": "a", "error": {"code": 1, "message": "no"}}': "answer",
             '{"jsonrpc": "2.0", "id": 1, "method": "ping"}': "request",  # an id, yet the server asks
             '{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}': "notification",
             '{"jsonrpc": "2.0", "id": true, "result": {}}': "neither",  # true == 1 in Python
             '{"jsonrpc": "2.0", "id": null, "error": {}}': "neither",
             '{"jsonrpc": "2.0", "id": 1.0, "result": {}}': "neither",
             '{"id": 1, "result": {}}': "noise", '{"jsonrpc": "1.0", "id": 1}': "noise",
             "notes server 1.0 ready": "noise", "[1, 2]": "noise", '"2.0"': "noise", "": "noise"}
    assert {line: client_module.classify(line)[0] for line in kinds} == kinds
    client = client_module.MCPClient(ServerSpec("x", "true"), Path("."))
    waiter = client.pending[1] = queue.Queue()
    client._receive(None, '{"jsonrpc": "2.0", "id": true, "result": {"stolen": 1}}')
    assert client.pending == {1: waiter} and waiter.empty()
    assert list(client.warnings) == ['skipped a message that is neither request nor answer: '
                               '\'{"jsonrpc": "2.0", "id": true, "result": {"stolen": 1}}\'']


def test_an_older_known_protocol_version_is_accepted(hubs):
    hub = hubs("--version", "2024-11-05")
    assert hub.clients["bad"].protocol_version == "2024-11-05" and hub.status()[0].state == "ready"


def test_an_unknown_newer_protocol_version_is_refused_clearly(hubs):
    hub = hubs("--version", "2099-01-01")
    row = hub.status()[0]
    assert row.state == "error" and "'2099-01-01'" in row.note and "2025-11-25" in row.note
    assert hub.clients["bad"].process is None and hub.tools() == []


def test_tools_list_is_followed_page_by_page(hubs):
    hub = hubs("--page", "1")
    assert [t.remote for t in hub.tools()] == ["echo", "crash", "hang", "grow", "deaf"]
    assert tools_of(hub)["mcp__bad__crash"].parameters == {"type": "object"}  # no inputSchema given


def test_a_notification_before_the_initialize_reply_is_not_taken_for_it(hubs):
    hub = hubs("--notify-early")
    assert hub.status()[0].state == "ready" and len(hub.tools()) == 5


def test_a_tool_a_server_adds_mid_call_is_offered_at_the_next_round_by_the_same_process(
        hubs, tmp_path):
    hub = hubs()
    pid = hub.clients["bad"].process.pid
    llm = ScriptedLLM([{"tool_calls": [{"name": "mcp__bad__grow"}]},
                       {"tool_calls": [{"name": "mcp__bad__extra"}]}, "done"])
    agent = Agent(llm, tools=[], cwd=tmp_path)
    hub.attach(agent)
    assert agent.chat("grow, then use the new tool") == "done"
    check_history(agent.messages)
    # grow sends list_changed before its answer, and the reader handles lines in order: the mark
    # is set by the time the call returns, and the next round's request offers the new tool
    assert "mcp__bad__extra" not in llm.requests[0]["tools"]
    assert "mcp__bad__extra" in llm.requests[1]["tools"]
    assert [m["content"] for m in agent.messages if m["role"] == "tool"] == ["grown", "extra ran"]
    assert hub.clients["bad"].process.pid == pid  # listed anew, not restarted
    assert hub.status()[0] == ("bad", "ready", 6, "")


def test_a_failed_listing_of_changed_tools_keeps_the_old_ones_and_says_why(hubs, tmp_path):
    hub = hubs("--list-once")
    grow = {"name": "mcp__bad__grow"}
    echo = {"name": "mcp__bad__echo", "arguments": {"text": "still here"}}
    llm = ScriptedLLM([{"tool_calls": [grow]}, {"tool_calls": [echo]}, "done"])
    agent = Agent(llm, tools=[], cwd=tmp_path)
    hub.attach(agent)
    assert agent.chat("grow, then carry on") == "done"
    check_history(agent.messages)
    assert llm.requests[1]["tools"] == llm.requests[0]["tools"]  # the five it had
    assert [m["content"] for m in agent.messages if m["role"] == "tool"] == ["grown", "still here"]
    row = hub.status()[0]
    assert (row.state, row.tools) == ("ready", 5)
    assert row.note == ("its tools changed, but listing them failed (tools/list refused: listing "
                        "is broken (JSON-RPC error -32603)); the agent keeps the old ones: "
                        "`/mcp reconnect bad` lists them anew")


def test_a_change_announced_while_the_tools_are_listed_is_kept_for_the_next_round(hubs):
    hub = hubs("--notify-listing")  # the notice comes after the listing began, before its answer
    assert hub.clients["bad"].tools_changed.is_set()


# -- through the agent -------------------------------------------------------------

def test_mcp_calls_through_the_agent_and_a_dead_server_is_just_a_result(hubs, tmp_path):
    hub = hubs()
    llm = ScriptedLLM([
        {"tool_calls": [{"name": "mcp__bad__echo", "arguments": {"text": "hello"}},  # two at once
                        {"name": "mcp__bad__echo", "arguments": {"text": "world"}}]},
        {"tool_calls": [{"name": "mcp__bad__crash"}]},
        {"tool_calls": [{"name": "mcp__bad__echo", "arguments": {"text": "again"}}]},
        "the server is gone; carrying on",
    ])
    agent = Agent(llm, tools=[], cwd=tmp_path)
    hub.attach(agent)
    assert agent.chat("use the server") == "the server is gone; carrying on"
    check_history(agent.messages)
    results = [m["content"] for m in agent.messages if m["role"] == "tool"]
    assert results[:2] == ["hello", "world"]
    assert results[2].startswith("mcp__bad__crash failed: MCP server bad could not run crash: ")
    assert results[3].startswith("mcp__bad__echo failed: ") and "/mcp reconnect bad" in results[3]


# -- an npm server, when one is installed ------------------------------------------

def everything_server() -> str | None:
    """@modelcontextprotocol/server-everything, if installed: MCP_EVERYTHING names its executable.

    Installing it takes an npm install (seconds, and the network), too slow for every run:
        npm install --prefix ~/.cache/corecoder-npm @modelcontextprotocol/server-everything
        export MCP_EVERYTHING=~/.cache/corecoder-npm/node_modules/.bin/mcp-server-everything
    """
    path = os.environ.get("MCP_EVERYTHING") or shutil.which("mcp-server-everything")
    return path if path and shutil.which("node") else None


@pytest.mark.skipif(everything_server() is None, reason="server-everything is not installed (see everything_server)")
def test_the_npm_everything_server(spawned, tmp_path):
    hub = MCPHub({"ev": ServerSpec("ev", everything_server())}, tmp_path).start()
    try:
        assert hub.status()[0].state == "ready"
        assert run(hub, "mcp__ev__echo", message="hi") == "Echo: hi"
        assert "[image: image/png" in run(hub, "mcp__ev__get-tiny-image")
        assert tmp_path.resolve().as_uri() in run(hub, "mcp__ev__get-roots-list")  # it asked us: roots/list
        agent = Agent(ScriptedLLM(["ok"]), tools=[], cwd=tmp_path)
        hub.attach(agent)
        assert agent.chat("hi") == "ok"  # its list_changed after initialize: listed anew
        assert "mcp__ev__echo" in agent.tools
    finally:
        hub.close()


def test_a_server_that_stops_reading_its_input_fails_the_call_in_bounded_time(hubs):
    hub = hubs(call_timeout=2)
    with pytest.raises(ToolError):
        run(hub, "mcp__bad__deaf")  # no answer; from now on the server reads nothing
    started = time.monotonic()
    with pytest.raises(ToolError, match="stopped reading its input"):
        run(hub, "mcp__bad__echo", text="x" * 1_000_000)  # more than a pipe holds: the write would block
    assert time.monotonic() - started < 10
    assert hub.status()[0].state == "dead"


def test_a_tool_whose_name_another_servers_tool_has_once_sanitized_is_offered_under_its_own(hubs):
    """`b.d` and `b_d` are one name once sanitized: the first server keeps mcp__b_d__environ, the
    second's gets a name of its own, says so, and each call reaches its own server."""
    command = [str(SERVERS / "bad_server.py"), "--environ"]
    first = ServerSpec("b_d", sys.executable, command, {"WHO": "first"})
    twin = ServerSpec("b.d", sys.executable, command, {"WHO": "twin"})
    hub = hubs(extra={"b_d": first, "b.d": twin})
    environs = {tool.client.name: tool for tool in hub.tools() if tool.remote == "environ"}
    assert environs["b_d"].name == "mcp__b_d__environ"
    renamed = environs["b.d"].name
    assert re.fullmatch(r"mcp__b_d__environ_[0-9a-f]{6}", renamed)
    assert len(tools_of(hub)) == len(hub.tools()) == 17  # three servers' tools, each named apart
    assert json.loads(run(hub, "mcp__b_d__environ"))["WHO"] == "first"
    assert json.loads(run(hub, renamed))["WHO"] == "twin"
    said = (f"MCP server b.d: its tool 'environ' is offered as {renamed}, "
            "since mcp__b_d__environ names another tool")
    assert said in hub.renamed() and said in hub.clients["b.d"].warnings
    assert not any("offered as" in warning for warning in hub.clients["b_d"].warnings)


def test_tools_whose_names_are_one_once_cut_to_64_characters_each_get_a_name_of_their_own(hubs):
    # with mcp__ in front, more than 64 characters: all of a server's tools are one name once cut
    long = "a-server-whose-name-alone-takes-up-more-than-the-sixty-four-characters"
    extra = {name: ServerSpec(name, sys.executable, [str(SERVERS / "bad_server.py")])
             for name in (long, long + "2")}
    hub = hubs(extra=extra)
    names = [tool.name for tool in hub.tools()]
    assert len(set(names)) == len(names) == 15
    assert all(re.fullmatch(r"[A-Za-z0-9_-]{1,64}", name) for name in names)
    first = tools_of(hub)[tool_name(long, "echo")]
    assert (first.client.name, first.remote) == (long, "echo")  # the first of them keeps its name
    assert len(hub.renamed()) == 9  # the other four of its tools, and all five of the next server's


def test_a_line_without_end_on_a_servers_stdout_is_read_past_in_bounded_pieces():
    import io

    from corecoder.mcp.client import lines

    stream = io.BytesIO(b'{"a": 1}\n' + b"x" * 10_000 + b"\n" + b"y" * 25_000 + b'\n{"b": 2}\n')
    assert list(lines(stream, limit=4_096)) == [
        b'{"a": 1}\n', b"[a line of more than 4,096 bytes, not read]",
        b"[a line of more than 4,096 bytes, not read]", b'{"b": 2}\n']
