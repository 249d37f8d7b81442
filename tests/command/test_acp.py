"""`corecoder --acp`: the agent for an editor, over the Agent Client Protocol.

The first tests are an editor's: the official client library from npm
(@zed-industries/agent-client-protocol, installed in tests/command/acp by `npm ci`, offline
from then on) drives the command through a session against the loopback scripted model. The
others speak the protocol by hand, to send what no library would: bad input, unknown methods.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from corecoder.testing import ScriptServer
from helpers import environment

CLIENT = Path(__file__).parent / "acp"
AGENT = [sys.executable, "-m", "corecoder", "--acp"]
LIBRARY = CLIENT / "node_modules" / "@zed-industries" / "agent-client-protocol"


def editor(scenario: str, cwd: Path, env: dict, session: str = "") -> dict:
    """What the client library saw, driving a fresh `corecoder --acp` through `scenario`."""
    if shutil.which("node") is None or not LIBRARY.is_dir():
        if os.environ.get("CI"):
            pytest.fail("CI needs node and `npm ci` in tests/command/acp (.ci/run does it)")
        pytest.skip("needs node and `npm ci` in tests/command/acp")
    run = subprocess.run(["node", str(CLIENT / "client.mjs"), scenario, str(cwd), session, "--",
                          *AGENT], capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    seen = json.loads(run.stdout.strip().splitlines()[-1])
    assert "error" not in seen, (seen, run.stderr)
    return seen


WRITE = {"name": "bash", "arguments": {"command": "echo 'notes' > notes.md"}}
WAIT = {"name": "bash", "arguments": {"command": "sleep 60; echo too late > late.txt"}}
def todo(status: str) -> dict:
    return {"name": "todo_write", "arguments": {"todos": [
        {"content": "write  the notes", "status": status}, {"content": "check", "status": "pending"}]}}


TURNS = [{"tool_calls": [todo("in_progress"), WRITE]}, "Wrote notes.md.",  # one batch, at once
         {"tool_calls": [WAIT]},  # cancelled while it runs: the script's next turn is never asked
         {"tool_calls": [todo("done")]}, "Still here.", "Loaded, and here."]


def test_an_editor_runs_a_session_allows_a_write_and_cancels_a_command_then_loads_it(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    with ScriptServer(TURNS) as server:
        env = environment(server, tmp_path / "home")
        seen = editor("turns", work, env)
        assert seen["protocolVersion"] == 1 and seen["loadSession"] is True
        assert seen["stops"] == ["end_turn", "cancelled", "end_turn"]
        # the write was asked about, with the options the protocol names, and ran once allowed
        assert seen["permissions"][0]["title"] == "bash echo 'notes' > notes.md"
        assert seen["permissions"][0]["options"] == ["allow_once", "allow_always", "reject_once"]
        assert (work / "notes.md").read_text() == "notes\n"
        kinds = [(u["kind"], u.get("status")) for u in seen["updates"]]
        assert ("tool_call", "in_progress") in kinds and ("tool_call_update", "completed") in kinds
        # the todo list as the plan, each as that call wrote it, in the statuses ACP knows: the
        # library drops an update it finds invalid, so a wrong one would be missing here
        plans = [u["entries"] for u in seen["updates"] if u["kind"] == "plan"]
        assert plans == [[{"content": "write the notes", "priority": "medium", "status": status},
                          {"content": "check", "priority": "medium", "status": "pending"}]
                         for status in ("in_progress", "completed")]
        text = "".join(u.get("text", "") for u in seen["updates"] if u["kind"] == "agent_message_chunk")
        assert text == "Wrote notes.md.Still here."
        # the cancelled command was killed, and the model was told, in a legal history
        assert not (work / "late.txt").exists()
        third = server.requests[3]["body"]["messages"]  # the third prompt's first request
        assert [m["role"] for m in third[-3:]] == ["assistant", "tool", "user"]
        assert "interrupted" in third[-2]["content"]

        loaded = editor("load", work, env, seen["sessionId"])
    replayed = loaded["updates"][: loaded["replayed"]]
    said = [u.get("text") for u in replayed if u["kind"] in ("user_message_chunk", "agent_message_chunk")]
    assert said == ["write the notes", "Wrote notes.md.", "wait a while", "are you still there?",
                    "Still here."]
    assert loaded["stops"] == ["end_turn"]
    last = server.requests[-1]["body"]["messages"]
    assert [m["content"] for m in last if m["role"] == "user"][-1] == "one more thing"
    assert len([m for m in last if m["role"] == "tool"]) == 4  # every call answered, resumed


def by_hand(lines: list[str], env: dict, cwd: Path, ids: bool = False, flags=(),
            one_by_one: bool = False) -> list[dict]:
    """Send `lines` to a fresh agent and read every message it wrote, until it ends with its
    stdin. `ids`: the first line makes a session, whose id replaces {id} in the others.
    `one_by_one`: a line is sent once the one before it is answered; a prompt that comes while
    the one before it still runs is said to that turn instead (as the test of that shows)."""
    agent = subprocess.Popen([*AGENT, *flags], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env, cwd=cwd)
    answers = []
    try:
        for line in lines:
            if ids and answers:
                line = line.replace("{id}", answers[0]["result"]["sessionId"])
            agent.stdin.write(line + "\n")
            agent.stdin.flush()
            if one_by_one or (ids and not answers):  # its answer (after its updates) before the next
                id = json.loads(line)["id"]
                while not answers or answers[-1].get("id") != id or "method" in answers[-1]:
                    answers.append(json.loads(agent.stdout.readline()))
        out, err = agent.communicate(timeout=60)
    finally:
        if agent.poll() is None:  # a test that failed leaves no agent behind
            agent.kill()
            agent.wait()
    assert agent.returncode == 0 and "Traceback" not in err, err
    return answers + [json.loads(line) for line in out.splitlines()]  # nothing but protocol


def request(id, method, **params) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params})


def test_bad_input_gets_json_rpc_errors_and_the_agent_carries_on(tmp_path):
    with ScriptServer(["Hello."]) as server:
        answers = by_hand([
            "this is not json", "[1, 2]", request(1, "no/such/method"),
            request(2, "session/new", cwd="relative/path", mcpServers=[]),
            request(3, "session/new", cwd=str(tmp_path), mcpServers=[{"name": "x"}]),
            request(4, "session/prompt", sessionId="nobody", prompt=[]),
            request(5, "session/new", cwd=str(tmp_path), mcpServers=[]),
            request(6, "session/cancel", sessionId="nobody"),  # a notification, sent with an id
        ], environment(server, tmp_path / "home"), tmp_path)
    by_id = {a.get("id"): a for a in answers}
    errors = [(a.get("id"), a["error"]["code"]) for a in answers if "error" in a]
    assert errors == [(None, -32700), (None, -32600), (1, -32601), (2, -32602), (3, -32602),
                      (4, -32602)]
    assert "no session 'nobody'" in by_id[4]["error"]["message"]
    assert by_id[5]["result"]["sessionId"]  # and after all that, a session
    assert by_id[6] == {"jsonrpc": "2.0", "id": 6, "result": None}


def test_a_bad_flag_the_editor_started_the_agent_with_is_named_in_its_error(tmp_path):
    env = environment(None, tmp_path / "home", OPENAI_API_KEY="x", CORECODER_TEMPERATURE="0.5")
    [answer] = by_hand([request(1, "session/new", cwd=str(tmp_path), mcpServers=[])], env,
                       tmp_path, flags=["--temperature", "3"])
    assert answer["error"] == {"code": -32602,
                               "message": "--temperature must be a temperature from 0 to 2, got '3'"}


def test_a_failing_model_is_an_error_to_that_request_not_the_end_of_the_agent(tmp_path):
    with ScriptServer([{"fault": "auth"}, "Back."]) as server:
        answers = by_hand([
            request(1, "session/new", cwd=str(tmp_path), mcpServers=[]),
            request(2, "session/prompt", sessionId="{id}", prompt=[{"type": "text", "text": "hi"}]),
            request(3, "session/prompt", sessionId="{id}", prompt=[{"type": "text", "text": "again"}]),
        ], environment(server, tmp_path / "home"), tmp_path, ids=True, one_by_one=True)
    failed, again = [a for a in answers if "method" not in a][-2:]  # the answers, not updates
    assert failed["error"]["code"] == -32603
    assert "rejected the API key (401)" in failed["error"]["message"]
    assert again["result"] == {"stopReason": "end_turn"}


def test_the_editors_mcp_servers_are_attached_and_a_cloned_projects_hooks_wait_for_trust(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".corecoder").mkdir()
    marker = tmp_path.parent / "hook-ran"
    (tmp_path / ".corecoder" / "hooks.json").write_text(json.dumps(
        {"PreToolUse": [{"matcher": "*", "command": f"touch {marker}"}]}))
    server_script = Path(__file__).parents[1] / "mcp_servers" / "bad_server.py"
    editors = [{"name": "fake", "command": sys.executable, "args": [str(server_script)],
                "env": [{"name": "UNUSED", "value": "1"}]}]
    turns = [{"tool_calls": [{"name": "mcp__fake__echo", "arguments": {"text": "hi"}}]}, "done"]
    with ScriptServer(turns) as server:
        answers = by_hand([
            request(1, "session/new", cwd=str(tmp_path), mcpServers=editors),
            request(2, "session/prompt", sessionId="{id}",
                    prompt=[{"type": "text", "text": "use the tool"}]),
        ], environment(server, tmp_path / "home"), tmp_path, ids=True, flags=["--yes"])
    tools = [t["function"]["name"] for t in server.requests[0]["body"]["tools"]]
    assert "mcp__fake__echo" in tools
    [result] = [a["params"]["update"] for a in answers
                if a.get("method") == "session/update"
                and a["params"]["update"]["sessionUpdate"] == "tool_call_update"]
    assert result["status"] == "completed" and "hi" in result["content"][0]["content"]["text"]
    assert not marker.exists()  # the project's own hook: not trusted, not run


def test_an_editor_that_leaves_while_a_question_waits_ends_the_turn_and_the_agent(tmp_path):
    with ScriptServer([{"tool_calls": [WRITE]}, "never asked"]) as server:
        answers = by_hand([
            request(1, "session/new", cwd=str(tmp_path), mcpServers=[]),
            request(2, "session/prompt", sessionId="{id}", prompt=[{"type": "text", "text": "go"}]),
        ], environment(server, tmp_path / "home"), tmp_path, ids=True)
    # asked or not (the line may close before the question), nobody answers: the turn stops
    assert answers[-1] == {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "cancelled"}}
    assert answers[-2]["params"]["update"]["status"] == "failed"  # answered: interrupted
    assert not (tmp_path / "notes.md").exists() and len(server.requests) == 1


def test_an_editor_that_leaves_while_its_answer_is_awaited_ends_the_turn_and_the_agent(tmp_path):
    with ScriptServer([{"tool_calls": [WRITE]}, "never asked"]) as server:
        agent = subprocess.Popen(AGENT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                                 env=environment(server, tmp_path / "home"))
        agent.stdin.write(request(1, "session/new", cwd=str(tmp_path), mcpServers=[]) + "\n")
        agent.stdin.flush()
        id = json.loads(agent.stdout.readline())["result"]["sessionId"]
        agent.stdin.write(request(2, "session/prompt", sessionId=id,
                                  prompt=[{"type": "text", "text": "go"}]) + "\n")
        agent.stdin.flush()
        asked = json.loads(agent.stdout.readline())
        assert asked["method"] == "session/request_permission"  # and now the editor goes
        out, err = agent.communicate(timeout=60)
    assert agent.returncode == 0 and "Traceback" not in err, err
    assert json.loads(out.splitlines()[-1])["result"] == {"stopReason": "cancelled"}
    assert not (tmp_path / "notes.md").exists() and len(server.requests) == 1


@pytest.mark.parametrize("then", ["Noted: python.", {"fault": "auth"}])
def test_a_prompt_sent_while_a_turn_runs_is_said_to_it_and_answered_as_it_ends(tmp_path, then):
    waits = {"name": "bash", "arguments": {
        "command": "while [ ! -e go ]; do sleep 0.05; done; echo ran"}}
    with ScriptServer([{"tool_calls": [waits]}, then]) as server:
        agent = subprocess.Popen([*AGENT, "--yes"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                                 env=environment(server, tmp_path / "home"))

        def send(line: str) -> None:
            agent.stdin.write(line + "\n")
            agent.stdin.flush()

        def until(test) -> dict:
            while not test(message := json.loads(agent.stdout.readline())):
                pass
            return message

        send(request(1, "session/new", cwd=str(tmp_path), mcpServers=[]))
        id = until(lambda m: m.get("id") == 1)["result"]["sessionId"]
        send(request(2, "session/prompt", sessionId=id, prompt=[{"type": "text", "text": "go"}]))
        until(lambda m: m.get("method") == "session/update"
              and m["params"]["update"].get("status") == "in_progress")  # the command runs
        send(request(3, "session/prompt", sessionId=id,
                     prompt=[{"type": "text", "text": "use python instead"}]))
        said = until(lambda m: m.get("method") == "session/update")["params"]["update"]
        assert said == {"sessionUpdate": "user_message_chunk",
                        "content": {"type": "text", "text": "use python instead"}}
        (tmp_path / "go").touch()  # only now does the command end
        answers = [until(lambda m: m.get("id") in (2, 3)) for _ in range(2)]
        agent.stdin.close()
        assert agent.wait(timeout=30) == 0
    if isinstance(then, dict):  # the model failed: both prompts are told, neither waits
        assert sorted((a["id"], a["error"]["code"]) for a in answers) == [(2, -32603), (3, -32603)]
        return
    assert sorted((a["id"], a["result"]["stopReason"]) for a in answers) == [
        (2, "end_turn"), (3, "end_turn")]
    second = server.requests[1]["body"]["messages"]
    assert [m["role"] for m in second[-3:]] == ["assistant", "tool", "user"]
    assert second[-1]["content"] == "use python instead" and len(server.requests) == 2


def test_a_ctrl_c_of_the_users_own_ends_the_agent_as_it_would_a_command(tmp_path):
    import signal

    agent = subprocess.Popen(AGENT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                             env=environment(None, tmp_path / "home", OPENAI_API_KEY="x"))
    agent.stdin.write(request(1, "initialize", protocolVersion=1) + "\n")
    agent.stdin.flush()
    assert json.loads(agent.stdout.readline())["result"]["protocolVersion"] == 1  # it is serving
    agent.send_signal(signal.SIGINT)
    out, err = agent.communicate(timeout=30)
    assert agent.returncode == 130 and out == "" and "Traceback" not in err
