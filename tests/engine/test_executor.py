"""Parallel tool calls: at once where safe, and merged back in call order where it matters."""

import threading
import time

import pytest

from corecoder import Agent, Bash, ScriptedLLM, Tool, build_agent, check_history
from corecoder.calls import Gate
from corecoder.events import ToolCallFinished
from corecoder.executor import RunInParallel
from helpers import Boom, Echo, call, results


class Sleepy(Tool):
    """Sleeps, then says which thread it ran on and when it started."""

    name = "sleepy"
    parameters = {"type": "object", "properties": {"seconds": {"type": "number"}, "tag": {"type": "string"}},
                  "required": ["seconds", "tag"], "additionalProperties": False}

    def __init__(self):
        self.log = []

    def run(self, ws, seconds, tag):
        self.log.append(("start", tag))
        time.sleep(seconds)
        self.log.append(("end", tag))
        return tag


def test_three_commands_run_at_the_same_time(tmp_path):
    # Each command marks that it started, then waits (up to 30 s) until all three have: run one after
    # another, the first would wait alone and say so. An order forced by the commands, not a clock.
    everyone = "[ -e started0 ] && [ -e started1 ] && [ -e started2 ]"
    meet = f"for n in $(seq 300); do {everyone} && break; sleep 0.1; done; {everyone} && echo"
    turns = [{"tool_calls": [call("bash", command=f"touch started{i}; {meet} {i} || echo alone") for i in range(3)]},
             "done"]
    agent = build_agent(ScriptedLLM(turns), tmp_path)
    agent.chat("go")
    assert results(agent) == ["0", "1", "2"]


def test_results_come_back_in_call_order_whatever_order_they_finish_in(tmp_path):
    sleepy = Sleepy()
    turns = [{"tool_calls": [call("sleepy", seconds=0.3, tag="slow"), call("sleepy", seconds=0.0, tag="fast")]},
             "done"]
    agent = Agent(ScriptedLLM(turns), [sleepy], cwd=tmp_path, executor=RunInParallel())
    agent.chat("go")
    assert results(agent) == ["slow", "fast"]
    assert sleepy.log.index(("end", "fast")) < sleepy.log.index(("end", "slow"))


def test_every_gate_question_is_settled_before_any_call_runs(tmp_path):
    order = []

    class Ask(Gate):
        def before(self, tool, args, workspace):
            order.append(("ask", args["tag"]))
            return None

    sleepy = Sleepy()
    turns = [{"tool_calls": [call("sleepy", seconds=0.05, tag=t) for t in "abc"]}, "done"]
    agent = Agent(ScriptedLLM(turns), [sleepy], cwd=tmp_path, gates=[Ask()], executor=RunInParallel())
    agent.subscribe(lambda e: type(e).__name__ == "ToolCallStarted" and order.append(("run", "")))
    agent.chat("go")
    assert [kind for kind, _ in order] == ["ask", "ask", "ask", "run", "run", "run"]
    assert [tag for kind, tag in order if kind == "ask"] == ["a", "b", "c"]


def test_each_call_has_its_own_cwd_and_they_merge_back_in_call_order(tmp_path):
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
    turns = [{"tool_calls": [call("bash", command="cd one && sleep 0.2 && pwd"), call("bash", command="pwd"),
                             call("bash", command="cd two && pwd")]}, "done"]
    agent = build_agent(ScriptedLLM(turns), tmp_path)
    agent.chat("go")
    first, second, third = results(agent)
    assert first.endswith("/one") and second == str(tmp_path.resolve()) and third.endswith("/two")
    assert agent.workspace.cwd == (tmp_path / "two").resolve()  # as if run in sequence: the last cd wins


def test_writes_to_the_same_file_wait_for_each_other_and_other_files_do_not(tmp_path):
    inside, most = [0], [0]
    guard = threading.Lock()

    class SlowWrite(Tool):
        name = "slow_write"
        mutating = True
        parameters = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"],
                      "additionalProperties": False}

        def run(self, ws, path):
            with guard:
                inside[0] += 1
                most[0] = max(most[0], inside[0])
            time.sleep(0.1)
            with guard:
                inside[0] -= 1
            return path

    same = [call("slow_write", path="a.txt") for _ in range(3)]
    Agent(ScriptedLLM([{"tool_calls": same}, "done"]), [SlowWrite()], cwd=tmp_path, executor=RunInParallel()).chat("go")
    assert most[0] == 1
    other = [call("slow_write", path=f"{n}.txt") for n in "abc"]
    Agent(ScriptedLLM([{"tool_calls": other}, "done"]), [SlowWrite()], cwd=tmp_path,
          executor=RunInParallel()).chat("go")
    assert most[0] == 3


def test_one_calls_exception_never_loses_the_others_results(tmp_path):
    turns = [{"tool_calls": [call("echo", text="a"), call("boom", kind="value"), call("echo", text="c")]}, "ok"]
    agent = Agent(ScriptedLLM(turns), [Echo(), Boom()], cwd=tmp_path, executor=RunInParallel())
    agent.chat("go")
    assert results(agent) == ["a", "boom failed: ValueError: something broke", "c"]


def test_an_interrupt_keeps_the_results_that_came_in_and_stops_running_commands(tmp_path):
    turns = [{"tool_calls": [call("echo", text="a"), call("bash", command="sleep 2; touch late"),
                             call("boom", kind="interrupt")]}, "after"]
    agent = Agent(ScriptedLLM(turns), [Echo(), Boom(), Bash()], cwd=tmp_path, executor=RunInParallel())
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        agent.chat("go")
    check_history(agent.messages)
    assert results(agent)[0] == "a" and results(agent)[2].startswith("[interrupted")
    time.sleep(2.5)  # past the moment the command would have touched the file, had it run on
    assert not (tmp_path / "late").exists()  # the bash call was told to stop and killed its process group
    assert time.monotonic() - started < 10  # the interrupt was not held up by the command
    assert agent.chat("go on") == "after"


def test_a_call_still_running_at_ctrl_c_is_reported_once_as_interrupted(tmp_path):
    turns = [{"tool_calls": [call("sleepy", seconds=0.5, tag="slow"), call("boom", kind="interrupt")]}]
    agent = Agent(ScriptedLLM(turns), [Sleepy(), Boom()], cwd=tmp_path, executor=RunInParallel())
    finished = []
    agent.subscribe(lambda e: finished.append((e.call.name, e.status)) if isinstance(e, ToolCallFinished) else None)
    with pytest.raises(KeyboardInterrupt):
        agent.chat("go")
    time.sleep(0.8)  # past the moment the slow call returned
    assert sorted(finished) == [("boom", "interrupted"), ("sleepy", "interrupted")]


def test_a_real_ctrl_c_during_a_batch_stops_the_turn_and_puts_pythons_handler_back(tmp_path):
    import os
    import signal

    started, quick_done = threading.Event(), threading.Event()

    class Held(Tool):  # runs until the user stops it (a minute at most)
        name, description, parameters = "held", "held", {"type": "object", "properties": {}}

        def run(self, ws):
            started.set()
            ws.cancelled.wait(60)
            return "held"

    turns = [{"tool_calls": [call("held"), call("sleepy", seconds=0.0, tag="quick")]}]
    agent = Agent(ScriptedLLM(turns), [Held(), Sleepy()], cwd=tmp_path, executor=RunInParallel())
    noted = []  # the SIGINT handler in place as each call finishes
    agent.subscribe(lambda e: isinstance(e, ToolCallFinished) and noted.append(signal.getsignal(signal.SIGINT)))
    agent.subscribe(lambda e: isinstance(e, ToolCallFinished) and e.call.name == "sleepy" and quick_done.set())

    def ctrl_c():  # once the held call runs and the quick one has finished: no clock decides
        assert started.wait(60) and quick_done.wait(60)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=ctrl_c, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        agent.chat("go")
    check_history(agent.messages)
    assert results(agent)[0].startswith("[interrupted") and results(agent)[1] == "quick"
    assert noted[0] is not signal.default_int_handler  # while the batch ran, Ctrl+C was only noted
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_single_call_takes_the_same_path(tmp_path):
    seen = []
    executor = RunInParallel()
    original = executor.perform
    executor.perform = lambda agent, job, ws: seen.append(job.call.name) or original(agent, job, ws)
    Agent(ScriptedLLM([{"tool_calls": [call("echo", text="a")]}, "ok"]), [Echo()], cwd=tmp_path,
          executor=executor).chat("go")
    assert seen == ["echo"]


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


def test_a_refused_call_is_answered_at_once_in_call_order_without_a_thread(tmp_path):
    # A call that will not run (an unknown tool, bad arguments, a gate's no) holds no place in the
    # pool: its answer is there, in call order, while an admitted call is still running
    release, seen = threading.Event(), []

    class Holds(Tool):
        name = "holds"
        parameters = {"type": "object", "properties": {}, "additionalProperties": False}

        def run(self, ws):
            seen.append(sorted(finished))  # what had been answered when this call started
            release.wait(30)
            return "held"

    class NoEcho(Gate):
        name = "no_echo"

        def before(self, tool, args, workspace):
            return "not echo" if tool.name == "echo" else None

    finished = []

    def note(event):
        if isinstance(event, ToolCallFinished):
            finished.append(event.call.name)
            release.set() if len(finished) == 3 else None

    turns = [{"tool_calls": [call("holds"), call("nope"), call("echo", text="x"), call("holds", extra=1)]},
             "done"]
    agent = Agent(ScriptedLLM(turns), [Holds(), Echo()], cwd=tmp_path, gates=[NoEcho()],
                  executor=RunInParallel())
    agent.subscribe(note)
    agent.chat("go")
    assert finished[:3] == ["nope", "echo", "holds"]  # the three refusals, in call order
    assert seen == [["echo", "holds", "nope"]]  # the one admitted call started after all of them
    first, unknown, refused, bad = results(agent)
    assert first == "held" and unknown.startswith("unknown tool 'nope'")
    assert refused.startswith("echo refused by no_echo") and bad.startswith("bad arguments for holds")
