"""Sub-agents and teams: fresh context, shared model and gates, reports in input order."""

import re
import threading
import time

import pytest

from corecoder import FunctionLLM, build_agent, check_history
from corecoder.calls import Gate
from corecoder.events import UsageReported, WorkerEvent
from corecoder.subagents import AT_ONCE, REPORT_LIMIT, WORKER_ROUNDS


def delegate(**arguments):
    return {"tool_calls": [{"name": "agent", "arguments": arguments}]}


class Model:
    """The parent delegates once and then answers; each worker acts on its task text."""

    def __init__(self, parent_turn, worker):
        self.parent_turn, self.worker = parent_turn, worker
        self.running, self.most = 0, 0
        self.lock = threading.Lock()

    def __call__(self, messages, tools):
        task = messages[1]["content"]
        if not task.startswith("task:"):  # the parent
            return self.parent_turn if len(messages) == 2 else "all reports read"
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
        try:
            return self.worker(task[5:], messages, tools)
        finally:
            with self.lock:
                self.running -= 1


def reports(agent):
    return agent.messages[2]["content"]


def test_one_sub_agent_works_in_a_fresh_history_and_reports_back(tmp_path):
    seen = []

    def worker(task, messages, tools):
        seen.append([m["role"] for m in messages])
        return f"report on {task}"

    llm = FunctionLLM(Model(delegate(task="task:the parser"), worker))
    agent = build_agent(llm, tmp_path)
    assert agent.chat("look around") == "all reports read"
    assert reports(agent) == "report on the parser"
    assert seen == [["system", "user"]]  # nothing of the parent's conversation


def test_a_team_reports_in_input_order_whatever_order_they_finish_in(tmp_path):
    def worker(task, messages, tools):
        time.sleep({"slow": 0.3, "fast": 0.0}[task])
        return f"{task} done"

    tasks = [{"name": "first", "task": "task:slow"}, {"name": "second", "task": "task:fast"}]
    agent = build_agent(FunctionLLM(Model(delegate(tasks=tasks), worker)), tmp_path)
    agent.chat("go")
    assert reports(agent) == "## first\nslow done\n\n## second\nfast done"


def test_at_most_four_workers_run_at_once(tmp_path):
    def worker(task, messages, tools):
        time.sleep(0.1)
        return "ok"

    model = Model(delegate(tasks=[{"name": f"w{i}", "task": "task:x"} for i in range(8)]), worker)
    build_agent(FunctionLLM(model), tmp_path).chat("go")
    assert model.most == AT_ONCE


def test_one_workers_failure_does_not_cancel_its_siblings(tmp_path):
    def worker(task, messages, tools):
        if task == "bad":
            raise RuntimeError("worker crashed")
        return "fine"

    tasks = [{"name": "a", "task": "task:bad"}, {"name": "b", "task": "task:good"}]
    agent = build_agent(FunctionLLM(Model(delegate(tasks=tasks), worker)), tmp_path)
    agent.chat("go")
    assert reports(agent) == "## a\n[a failed: RuntimeError: worker crashed]\n\n## b\nfine"


def test_workers_get_every_tool_but_agent_and_a_lower_round_cap(tmp_path):
    offered, rounds = [], []

    def worker(task, messages, tools):
        offered.append(sorted(t["function"]["name"] for t in tools))
        rounds.append(1)
        return {"tool_calls": [{"name": "glob", "arguments": {"pattern": "*"}}]}  # never finishes

    agent = build_agent(FunctionLLM(Model(delegate(task="task:loop"), worker)), tmp_path)
    agent.chat("go")
    assert "agent" not in offered[0] and "bash" in offered[0]
    assert len(rounds) == WORKER_ROUNDS
    assert f"stopped after {WORKER_ROUNDS} rounds" in reports(agent)


def test_the_parents_cwd_and_todos_are_unchanged_by_workers(tmp_path):
    (tmp_path / "sub").mkdir()

    def worker(task, messages, tools):
        if messages[-1]["role"] == "tool":
            return "moved"
        return {"tool_calls": [{"name": "bash", "arguments": {"command": "cd sub"}},
                               {"name": "todo_write", "arguments": {"todos": [{"content": "x", "status": "pending"}]}}]}

    agent = build_agent(FunctionLLM(Model(delegate(task="task:wander"), worker)), tmp_path)
    agent.chat("go")
    assert agent.workspace.cwd == tmp_path.resolve() and agent.workspace.todos == []


def test_workers_share_the_parents_gates_and_report_their_usage(tmp_path):
    class NoBash(Gate):
        name = "consent"

        def before(self, tool, args, workspace):
            return "no shell today" if tool.name == "bash" else None

    def worker(task, messages, tools):
        if messages[-1]["role"] == "tool":
            return {"text": messages[-1]["content"], "usage": {"prompt_tokens": 7, "completion_tokens": 1}}
        return {"tool_calls": [{"name": "bash", "arguments": {"command": "echo hi"}}]}

    agent = build_agent(FunctionLLM(Model(delegate(task="task:run"), worker)), tmp_path, hooks=NoBash())
    events = []
    agent.subscribe(events.append)
    agent.chat("go")
    assert reports(agent) == "bash refused by consent: no shell today"
    usage = [e for e in events if isinstance(e, WorkerEvent) and isinstance(e.event, UsageReported)]
    assert usage[0].worker == "worker" and usage[0].event.usage.prompt_tokens == 7


def test_a_long_report_is_cut_with_a_marker(tmp_path):
    agent = build_agent(FunctionLLM(Model(delegate(task="task:x"), lambda *a: "r" * (REPORT_LIMIT + 500))), tmp_path)
    agent.chat("go")
    report = reports(agent)
    assert len(report) <= REPORT_LIMIT and re.fullmatch(r"r+\[\.\.\. 530 characters cut \.\.\.\]r+", report)


@pytest.mark.parametrize("arguments, problem", [
    ({}, "exactly one of"), ({"task": "a", "tasks": [{"name": "n", "task": "t"}]}, "exactly one of"),
    ({"tasks": [{"name": "n", "task": "t"}, {"name": "n", "task": "u"}]}, "names must be unique"),
    ({"tasks": [{"name": f"w{i}", "task": "t"} for i in range(9)]}, "at most 8 items"),
])
def test_bad_team_requests_are_refused_clearly(tmp_path, arguments, problem):
    agent = build_agent(FunctionLLM(Model(delegate(**arguments), lambda *a: "never")), tmp_path)
    agent.chat("go")
    assert problem in reports(agent)
    check_history(agent.messages)


def test_ctrl_c_stops_the_workers_too(tmp_path, monkeypatch):
    import os
    import signal

    # no round limit ends a worker first: on a loaded machine one may run all of its rounds
    # before the other has run one, and the turn would end before the Ctrl+C
    monkeypatch.setattr("corecoder.subagents.WORKER_ROUNDS", 10_000)

    working = {"a": threading.Event(), "b": threading.Event()}  # by task, "task:" taken off

    def worker(task, messages, tools):  # each worker writes a file a round, forever
        n = sum(1 for m in messages if m["role"] == "tool")
        if n:  # a round of its own has run
            working[task].set()
        return {"tool_calls": [{"name": "bash", "arguments": {"command": f"sleep 0.2; touch {task}_{n}"}}]}

    def ctrl_c():  # the user presses Ctrl+C once both workers are at work: no clock decides
        assert all(event.wait(60) for event in working.values())
        os.kill(os.getpid(), signal.SIGINT)

    tasks = [{"name": "a", "task": "task:a"}, {"name": "b", "task": "task:b"}]
    agent = build_agent(FunctionLLM(Model(delegate(tasks=tasks), worker)), tmp_path)
    threading.Thread(target=ctrl_c, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        agent.chat("go")
    check_history(agent.messages)
    time.sleep(0.3)  # anything still running has had time to stop
    written = len(list(tmp_path.glob("?_*")))
    time.sleep(1.0)
    assert len(list(tmp_path.glob("?_*"))) == written  # nothing more after the interrupt


def test_a_reply_that_reaches_a_worker_after_ctrl_c_runs_none_of_its_calls(tmp_path):
    import os
    import signal

    asked, back, replied = threading.Event(), threading.Event(), threading.Event()

    def worker(task, messages, tools):  # the reply is on its way when the user presses Ctrl+C
        asked.set()
        assert back.wait(60)  # and arrives once the user is back at the prompt
        replied.set()
        return {"tool_calls": [{"name": "write_file", "arguments": {"path": "late.txt", "content": "x"}}]}

    def ctrl_c():
        assert asked.wait(60)
        os.kill(os.getpid(), signal.SIGINT)

    class Asked(Gate):  # a consent question, say: never asked while the user is at the prompt
        def __init__(self):
            self.asked = []

        def before(self, tool, args, workspace):
            self.asked.append(tool.name)

    agent = build_agent(FunctionLLM(Model(delegate(task="task:write"), worker)), tmp_path)
    agent.gates.append(gate := Asked())
    threading.Thread(target=ctrl_c, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        agent.chat("go")
    back.set()
    assert replied.wait(60)
    time.sleep(1.0)  # past the moment the reply arrived: had its call run, late.txt would be there
    assert not (tmp_path / "late.txt").exists() and gate.asked == ["agent"]


def test_stopping_a_team_does_not_stop_the_agents_later_calls(tmp_path):
    import _thread

    from corecoder import Agent, Bash
    from corecoder.subagents import AgentTool, workers

    then = {"tool_calls": [{"name": "bash", "arguments": {"command": "echo still working"}}]}
    parent = iter([delegate(tasks=[{"name": "a", "task": "stop"}]), then, "answered"])

    def model(messages, tools):
        if messages[1]["content"] != "stop":
            return next(parent)
        _thread.interrupt_main()  # the worker's model is asked: the user presses Ctrl+C meanwhile
        time.sleep(0.5)
        return "done"

    agent = Agent(FunctionLLM(model), [Bash()], cwd=tmp_path)  # the chapter-1 loop: calls run in order
    agent.update_tools(add=[AgentTool(workers(agent))])
    with pytest.raises(KeyboardInterrupt):
        agent.chat("go")
    assert not agent.workspace.cancelled.is_set()
    assert agent.chat("go on") == "answered"
    assert agent.messages[-2]["content"] == "still working"
