"""Whatever the provider does at whichever round, the demo task ends the same way.

The demo task (corecoder/demo: run the tests, grep, read, edit, run the tests again, answer) is
driven through the real client, corecoder.LLM, against the loopback ScriptServer. At each round k,
one thing goes wrong (a fault), or the reply comes in another dialect (a streaming quirk, a reasoning
field), or the model's call is malformed. Every time:

    the run reaches the same final answer, and stats.py gets the same fix;
    the final history is the fault-free run's, modulo call ids: nothing lost, nothing twice;
    every request the server received has a legal history (check_history);
    a retried request re-sends exactly the conversation of the one that failed.

The trials are independent (each has its own server, client and project copy), so the `sweep`
fixture runs them side by side first; each test then checks its own.
"""

from __future__ import annotations

import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pytest

from corecoder import check_history
from corecoder.events import ReasoningDelta, Retrying
from corecoder.testing.serve import QUIRKS, REASONING_FIELDS
from helpers import DEMO, PAIRED, ROUNDS, as_dict, run_demo, without_ids

POSITIONS = range(1, ROUNDS + 1)
FAULTS = ("rate_limit", "server_error", "overloaded", "drop", "error_event")
BAD_KINDS = ("truncated JSON", "a JSON array", "a wrong type")
THOUGHT = "The divisor looks off by one; check it before touching anything."
FIXED = "    return sum(values) / len(values)\n"


@dataclass(frozen=True)
class Trial:
    turns: list
    stream: bool = True
    script: str = "demo"  # which fault-free run it is compared with: demo or paired
    k: int = 0  # the round that goes wrong
    fault: str = ""  # the fault injected, for the fault trials


def with_fault(k: int, fault: str) -> list:
    """The demo with a fault before round k. A broken stream carries round k's own reply, so half of
    it (text and call fragments) really arrives before the break."""
    turn = {**as_dict(DEMO[k - 1]), "fault": fault} if fault in ("drop", "error_event") else {"fault": fault}
    if fault == "rate_limit":
        turn["retry_after"] = 1
    return [*DEMO[: k - 1], turn, *DEMO[k - 1:]]


def with_turn(script: list, k: int, **keys) -> list:
    turns = list(script)
    turns[k - 1] = {**as_dict(turns[k - 1]), **keys}
    return turns


def malformed(k: int, kind: str) -> dict:
    """Round k's first call with its arguments broken one way (the final answer's round: a broken read)."""
    call = (as_dict(DEMO[k - 1]).get("tool_calls") or [{"name": "read_file", "arguments": {"path": "stats.py"}}])[0]
    name, arguments = call["name"], call["arguments"]
    first = next(iter(arguments))
    broken = {
        "truncated JSON": '{"' + first + '": ',
        "a JSON array": json.dumps(list(arguments.values())),
        "a wrong type": {**arguments, first: 42},
    }[kind]
    return {"tool_calls": [{"name": name, "arguments": broken}]}


def mode(stream: bool) -> str:
    return "streamed" if stream else "whole"


BASELINES = {f"fault-free {script} {mode(stream)}": Trial(turns, stream, script)
             for script, turns in (("demo", DEMO), ("paired", PAIRED)) for stream in (True, False)}
FAULT_TRIALS = {f"{fault}-{mode(stream)}-round{k}": Trial(with_fault(k, fault), stream, k=k, fault=fault)
                for stream in (True, False) for fault in FAULTS for k in POSITIONS
                if stream or fault != "error_event"}  # an error event exists only inside a stream
DIALECT_TRIALS = {f"{quirk}-{script}-round{k}": Trial(with_turn(turns, k, quirk=quirk), script=script, k=k)
                  for script, turns in (("demo", DEMO), ("paired", PAIRED)) for quirk in QUIRKS for k in POSITIONS}
REASONING_TRIALS = {f"{field}-round{k}": Trial(with_turn(DEMO, k, reasoning=THOUGHT, reasoning_field=field), k=k)
                    for field in REASONING_FIELDS for k in POSITIONS}
BAD_TRIALS = {f"{kind.replace(' ', '-')}-round{k}": Trial([*DEMO[: k - 1], malformed(k, kind), *DEMO[k - 1:]], k=k)
              for kind in BAD_KINDS for k in POSITIONS}
TRIALS = {**BASELINES, **FAULT_TRIALS, **DIALECT_TRIALS, **REASONING_TRIALS, **BAD_TRIALS}


@pytest.fixture(scope="module")
def sweep(request, tmp_path_factory):
    """Runs the baselines and every trial a collected test of this module asks for, four at a time;
    `sweep(name)` is that trial's Run (or raises what the run raised)."""
    params = [getattr(getattr(item, "callspec", None), "params", {}) for item in request.session.items
              if getattr(item, "module", None) is request.module]
    wanted = {*BASELINES, *(p["name"] for p in params if "name" in p)}
    # The task runs `python3 test_stats.py` through bash: let that be the interpreter running the tests
    # (hermetic, and a version manager's shim would cost ~0.1 s a call).
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])

        root = tmp_path_factory.mktemp("sweep")  # mktemp is not thread-safe: one folder, made here

        def attempt(numbered):
            n, name = numbered
            trial = TRIALS[name]
            try:
                return run_demo(trial.turns, root / str(n), stream=trial.stream)
            except Exception as e:  # the test that asked for it fails with it
                return e

        with ThreadPoolExecutor(4) as pool:
            runs = dict(zip(sorted(wanted), pool.map(attempt, enumerate(sorted(wanted))), strict=True))

    def get(name):
        if isinstance(runs[name], Exception):
            raise runs[name]
        return runs[name]

    return get


@pytest.fixture(scope="module")
def baseline(sweep):
    """(script, streamed) -> the fault-free run every trial is compared with; itself checked first."""
    runs = {}
    for name, trial in BASELINES.items():
        run = sweep(name)
        assert run.answer == DEMO[-1] and FIXED in run.stats and "3 of 3 tests passed" in str(run.messages)
        assert run.sleeps == [] and len(run.requests) == ROUNDS
        runs[trial.script, trial.stream] = run
    return runs


def assert_same_outcome(run, expected):
    assert run.answer == expected.answer
    assert run.stats == expected.stats
    assert without_ids(run.messages) == without_ids(expected.messages)
    for body in run.requests:
        check_history(body["messages"])


@pytest.mark.row("faults")
@pytest.mark.parametrize("name", FAULT_TRIALS)
def test_a_fault_before_any_round_is_retried_and_changes_nothing(sweep, baseline, name):
    trial, run = FAULT_TRIALS[name], sweep(name)
    assert_same_outcome(run, baseline["demo", trial.stream])
    assert len(run.sleeps) == 1 and [type(e) for e in run.events].count(Retrying) == 1  # one backoff, not slept
    if trial.fault == "rate_limit":
        assert run.sleeps == [1.0]  # what Retry-After asked for
    failed, retried = run.requests[trial.k - 1], run.requests[trial.k]
    assert failed["messages"] == retried["messages"]  # the same conversation, asked again


@pytest.mark.row("dialects")
@pytest.mark.parametrize("name", DIALECT_TRIALS)
def test_any_streaming_dialect_at_any_round_gives_the_same_calls(sweep, baseline, name):
    trial, run = DIALECT_TRIALS[name], sweep(name)
    assert_same_outcome(run, baseline[trial.script, True])
    assert run.sleeps == []


@pytest.mark.row("reasoning")
@pytest.mark.parametrize("name", REASONING_TRIALS)
def test_reasoning_at_any_round_is_shown_and_kept_out_of_the_history(sweep, baseline, name):
    run = sweep(name)
    assert_same_outcome(run, baseline["demo", True])
    assert "".join(e.text for e in run.events if isinstance(e, ReasoningDelta)) == THOUGHT
    assert THOUGHT not in str(run.messages)


@pytest.mark.row("bad_round")
@pytest.mark.parametrize("name", BAD_TRIALS)
def test_malformed_arguments_at_any_round_get_bad_arguments_and_the_next_turn_proceeds(sweep, baseline, name):
    trial, run = BAD_TRIALS[name], sweep(name)
    bad = trial.turns[trial.k - 1]["tool_calls"][0]
    at = 1 + 2 * (trial.k - 1)  # where round k's call lands: after the user's message, two messages a round
    call, result = run.messages[at], run.messages[at + 1]
    assert call["tool_calls"][0]["function"]["name"] == bad["name"]
    assert result["role"] == "tool" and result["content"].startswith(f"bad arguments for {bad['name']}: ")
    expected = baseline["demo", True]
    assert (run.answer, run.stats) == (expected.answer, expected.stats)
    assert without_ids(run.messages[:at] + run.messages[at + 2:]) == without_ids(expected.messages)  # the rest
    for body in run.requests:
        check_history(body["messages"])
