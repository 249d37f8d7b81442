"""Bugs of the engine's old shape, each written before its fix (issue: reshape the engine)."""

import json
import re
import threading
import warnings

import pytest

from corecoder import Agent, ScriptedLLM, build_agent, check_history
from corecoder.calls import Gate
from corecoder.events import ToolCallFinished
from corecoder.executor import RunInParallel
from corecoder.tools import Bash
from corecoder.tools.todo import TodoWrite
from helpers import Boom, Echo


def call(name, **arguments):
    return {"name": name, "arguments": arguments}


def results(agent):
    return [m["content"] for m in agent.messages if m["role"] == "tool"]


def test_a_cd_that_finished_before_ctrl_c_in_a_parallel_batch_moves_the_agent(tmp_path):
    (tmp_path / "sub").mkdir()
    bash_done = threading.Event()

    class Interrupt(Echo):
        name = "interrupt"

        def run(self, ws, text, times=1):
            assert bash_done.wait(10)
            raise KeyboardInterrupt

    turns = [{"tool_calls": [call("bash", command="cd sub && pwd"), call("interrupt", text="x")]}]
    agent = Agent(ScriptedLLM(turns), [Bash(), Interrupt()], cwd=tmp_path, executor=RunInParallel())
    agent.subscribe(lambda e: isinstance(e, ToolCallFinished) and e.call.name == "bash" and bash_done.set())
    with pytest.raises(KeyboardInterrupt):
        agent.chat("go")
    assert results(agent)[0].endswith("/sub")
    assert agent.workspace.cwd == (tmp_path / "sub").resolve()


def test_tools_gates_and_workspace_reassigned_on_the_agent_take_effect(tmp_path):
    class No(Gate):
        name = "no"

        def before(self, tool, args, workspace):
            return "not today"

    agent = Agent(ScriptedLLM([{"tool_calls": [call("echo", text="a")]}, "ok"]), [Boom()], cwd=tmp_path)
    agent.tools = {"echo": Echo()}
    agent.gates = [No()]
    agent.chat("go")
    assert results(agent) == ["echo refused by no: not today"]


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
    with pytest.raises(RuntimeError):
        agent.chat("go")
    check_history(agent.messages)
    assert results(agent) == ["[not run: the turn stopped: RuntimeError: executor bug]"]


def test_an_agents_md_at_the_root_of_the_clone_does_not_reach_a_chapters_workdir(tmp_path, monkeypatch):
    clone = tmp_path / "clone"
    (clone / ".git").mkdir(parents=True)
    (clone / "CLAUDE.md").write_text("Always answer in French.\n")
    (clone / "notebooks").mkdir()
    monkeypatch.chdir(clone / "notebooks")
    from corecoder.course import workdir
    from corecoder.demo import copy_project

    project = copy_project(workdir("00-tour"))
    agent = build_agent(ScriptedLLM(["ok"]), project)
    agent.chat("hi")
    assert "French" not in json.dumps(agent.llm.requests[0]["messages"])


def test_a_clipped_output_is_kept_inside_the_project_shown_relative_and_cleaned_up(tmp_path):
    texts = [f"output {n}: " + "x" * 30_000 for n in range(30)]
    agent = Agent(ScriptedLLM([{"tool_calls": [call("echo", text=t)]} for t in texts] + ["ok"]), [Echo()],
                  cwd=tmp_path)
    agent.chat("go")
    last = results(agent)[-1]
    assert len(last) <= 20_000 and "/tmp" not in last and str(tmp_path) not in last
    where = re.search(r"the full output is in (\S+) \.\.\.\]", last)[1]
    assert where.startswith(".corecoder/outputs/") and (tmp_path / where).read_text() == texts[-1]
    assert len(list((tmp_path / ".corecoder" / "outputs").glob("*.txt"))) == 20, "the oldest are removed"


def test_each_request_extends_the_previous_one_byte_for_byte(tmp_path):
    (tmp_path / "sub").mkdir()
    todo = [{"content": "look", "status": "in_progress"}]
    turns = [{"tool_calls": [call("todo_write", todos=todo)]}, {"tool_calls": [call("bash", command="cd sub")]},
             {"tool_calls": [call("bash", command="pwd")]}, "done"]
    agent = Agent(ScriptedLLM(turns), [Bash(), TodoWrite()], cwd=tmp_path)
    agent.chat("go")
    sent = [json.dumps(r["messages"]) for r in agent.llm.requests]
    for before, after in zip(sent, sent[1:], strict=False):
        assert after.startswith(before[:-1]), "a request repeats the previous one and adds to its end"
    last = agent.llm.requests[-1]["messages"]
    assert "[>] look" in json.dumps(last) and str((tmp_path / "sub").resolve()) in json.dumps(last)
