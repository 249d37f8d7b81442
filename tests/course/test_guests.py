"""Chapter 7's guests: a function written out as a program, the notes server, the client that keeps
the wire's transcript, the chain of gates, and the view of both. What they show is the same every
run: a cell prints it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from corecoder import Agent, ScriptedLLM
from corecoder.calls import Gate
from corecoder.mcp import ServerSpec
from corecoder.mcp.client import MCPError
from corecoder.tools import default_tools
from corecoder_course import NOTES_SERVER, Chain, Transcribed, as_program
from corecoder_course.guests import chain_lines, text, wire_lines, wire_widget
from corecoder_course.words import speaking


def greet():
    import sys

    print("hello from", sys.argv[0].rsplit("/", 1)[-1])


def test_a_function_becomes_a_program_that_runs_alone(tmp_path):
    command = as_program(greet, tmp_path)
    assert command[1:] == ["-I", str(tmp_path / "greet.py")]
    ran = subprocess.run(command, capture_output=True, text=True, check=True)
    assert ran.stdout == "hello from greet.py\n"


@pytest.fixture
def notes(tmp_path):
    """A Transcribed client over the notes server, with the switches asked for; closed after."""
    made = []

    def start(*switches):
        (tmp_path / "notes_server.py").write_text(NOTES_SERVER, encoding="utf-8")
        spec = ServerSpec("notes", sys.executable, ["-I", str(tmp_path / "notes_server.py"), *switches])
        client = Transcribed(spec, tmp_path, startup_timeout=10.0, call_timeout=10.0)
        made.append(client)
        client.start()
        return client

    yield start
    for client in made:
        client.close()


def test_the_handshake_is_transcribed_in_order_and_the_banner_skipped(notes):
    client = notes("banner")
    assert client.call_tool("add", {"a": 2, "b": 3})["content"] == [{"type": "text", "text": "5"}]
    arrows = [arrow for arrow, _ in client.wire]
    assert arrows == ["→", "←", "←", "→", "→", "←", "→", "←"]  # the banner comes after the first request
    lines = wire_lines(client, width=60)
    assert lines[0].startswith('→ {"jsonrpc": "2.0", "id": 1, "method": "initialize"') and lines[0].endswith("…")
    assert lines[1] == "← notes server 1.0 ready" and '"method": "notifications/initialized"' in lines[3]
    assert list(client.warnings) == ["skipped a line on stdout that is not JSON-RPC: 'notes server 1.0 ready'"]


def test_a_crash_mid_call_is_a_clear_error_and_a_flood_on_stderr_blocks_nothing(notes):
    client = notes("chatty")  # 100 KB on stderr a request: more than a pipe holds
    assert client.call_tool("shout", {"text": "hi"})["content"][0]["text"] == "HI"
    with pytest.raises(MCPError, match=r"exited with code 3 \(last on stderr: 'notes: giving up"):
        client.call_tool("crash", {})


def test_a_tool_learned_while_running_is_announced(notes):
    client = notes("learns")
    assert "double" not in [t["name"] for t in client.tools]
    client.call_tool("learn", {})
    assert client.tools_changed.is_set()
    assert "double" in [t["name"] for t in client.list_tools()] and not client.tools_changed.is_set()


class No(Gate):
    name = "no_env"

    def before(self, tool, args, workspace):
        return ".env is private" if args.get("path") == ".env" else None


class Broken(Gate):
    name = "broken"

    def before(self, tool, args, workspace):
        args["path"].strip()  # bash has none: KeyError
        return None


def test_the_chain_says_each_gates_word_and_how_each_call_ended(tmp_path):
    (tmp_path / "notes.md").write_text("hi\n", encoding="utf-8")
    chain = Chain()
    calls = [{"name": "read_file", "arguments": {"path": ".env"}},
             {"name": "read_file", "arguments": {"path": "notes.md"}},
             {"name": "bash", "arguments": {"command": "ls"}}]
    agent = Agent(ScriptedLLM([{"tool_calls": calls}, "done"]), default_tools(), cwd=tmp_path,
                  gates=chain.gates(No(), Broken()))
    agent.subscribe(chain)
    agent.chat("go")
    assert chain_lines(chain) == ["read_file(.env): no_env: no ⇒ refused",
                                  "read_file(notes.md): no_env: ok → broken: ok ⇒ ok",
                                  "bash(ls): no_env: ok → broken: KeyError ⇒ refused"]
    with speaking("zh"):
        assert text(None, chain).startswith("每个调用经过的关卡：\n  read_file(.env): no_env: 拒绝 ⇒ refused")


def test_the_wire_view_speaks_chinese_and_unfolds_each_message(notes):
    client = notes()
    with speaking("zh"):
        box = wire_widget(client, Chain())
    left, right = (child.value for child in box.children[0].children)
    assert left.startswith("<b>线路上</b><details>") and "&quot;initialize&quot;" in left
    assert "<th>调用</th>" in right and "<th>结果</th>" in right
