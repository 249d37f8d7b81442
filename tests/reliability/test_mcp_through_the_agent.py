"""An MCP server that misbehaves costs the agent one clear error result, never the run.

tests/mcp_servers/bad_server.py, started with each way of misbehaving at start-up (a banner on
stdout, megabytes on stderr before every answer, both, neither) and called through a real Agent on
each of its bad tools (echo works, crash dies mid-call, hang never answers), each time beside a
built-in call in the same round. Then a second round calls the server again, and the model answers.
Every time:

    the run ends with the model's answer, within the call timeout plus a few seconds;
    the MCP call's result is what it did, or a clear error naming the server and what went wrong;
    the built-in call beside it is answered, in call order; the history is legal;
    the second round gets on: after a crash, an immediate error that says how to reconnect;
    no server process outlives the test.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from corecoder import ScriptedLLM, build_agent, check_history
from corecoder.mcp import MCPHub, ServerSpec

pytestmark = pytest.mark.row("mcp")

BAD_SERVER = Path(__file__).resolve().parents[1] / "mcp_servers" / "bad_server.py"
CALL_TIMEOUT = 0.5
STARTS = {"quiet": [], "banner": ["--banner"], "stderr-flood": ["--stderr-mb", "4"],
          "banner-and-flood": ["--banner", "--stderr-mb", "4"]}
READ = {"name": "read_file", "arguments": {"path": "notes.txt"}}


def expected_first(tool: str, result: str) -> None:
    """What the first call to the server must have answered."""
    if tool == "echo":
        assert result == "ping"
    elif tool == "crash":
        assert result.startswith("mcp__bad__crash failed: MCP server bad could not run crash: ")
        assert "exited with code 3" in result and "crashing on purpose" in result  # its last words on stderr
    else:
        assert result == (f"mcp__bad__hang failed: MCP server bad could not run hang: "
                          f"no answer to tools/call within {CALL_TIMEOUT:.3g} s")


@pytest.mark.parametrize("tool", ["echo", "crash", "hang"])
@pytest.mark.parametrize("start", STARTS)
def test_a_misbehaving_server_costs_one_clear_result_and_the_loop_goes_on(spawned, tmp_path, start, tool):
    (tmp_path / "notes.txt").write_text("still readable\n")
    arguments = {"text": "ping"} if tool == "echo" else {}
    llm = ScriptedLLM([
        {"tool_calls": [{"name": f"mcp__bad__{tool}", "arguments": arguments}, READ]},
        {"tool_calls": [{"name": "mcp__bad__echo", "arguments": {"text": "again"}}, READ]},
        "carried on",
    ])
    hub = MCPHub({"bad": ServerSpec("bad", sys.executable, [str(BAD_SERVER), *STARTS[start]])}, tmp_path,
                 startup_timeout=5, call_timeout=CALL_TIMEOUT).start()
    try:
        assert hub.status()[0].state == "ready"
        agent = build_agent(llm, tmp_path)
        hub.attach(agent)
        started = time.monotonic()
        assert agent.chat("use the server") == "carried on"
        assert time.monotonic() - started < CALL_TIMEOUT + 5
    finally:
        hub.close()
    check_history(agent.messages)
    first, read, second, read_again = [m["content"] for m in agent.messages if m["role"] == "tool"]
    expected_first(tool, first)
    assert read == read_again == "     1\tstill readable\n(end of file, 1 line)"
    if tool == "crash":  # known dead: an error at once, saying how to bring it back
        assert second.startswith("mcp__bad__echo failed: ") and "/mcp reconnect bad" in second
    else:
        assert second == "again"
