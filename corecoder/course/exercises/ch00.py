"""Checks for the exercises of chapter 0, the tour.

    ch00.script       script a model that runs the demo's tests with bash and reports their
                      summary line
    ch00.count_calls  count the tool calls in a history, per tool

`ch00.script` runs the learner's script for real, as the tour does: a fresh copy of the
demo project in a temporary folder, a real `Agent` with the default tools, and a
`ScriptedLLM` that replays the learner's turns. `ch00.count_calls` feeds small,
hand-made histories to the learner's function and stops at the first one it gets wrong.
"""

from __future__ import annotations

import copy
import json
import re
import tempfile
from pathlib import Path

from ...agent import Agent
from ...assemble import build_agent
from ...demo import SCRIPT, TASK, copy_project
from ...messages import IllegalHistory, ToolCall, assistant, check_history, tool_result, user
from ...scripted import ScriptedLLM, ScriptError, parse_turn
from ..checks import Hint, attempt, checker, describe, expect

# --- ch00.script -----------------------------------------------------------------------

SUMMARY = re.compile(r"\b\d+ of \d+ tests passed\b")
TURNS = ("a turn is a string (the final answer) or a dict with \"text\" and/or \"tool_calls\", "
         "each call {\"name\": ..., \"arguments\": {...}}")


def _shown_call(call: dict) -> str:
    """`bash(command="python3 test_stats.py")`, or the raw arguments if they are not a JSON
    object."""
    name, raw = call["function"]["name"], call["function"]["arguments"]
    try:
        args = json.loads(raw)
    except json.JSONDecodeError:
        args = None
    if not isinstance(args, dict):
        return f"{name}({raw})"
    return f"{name}(" + ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}"
                                  for k, v in args.items()) + ")"


def _calls_made(messages: list[dict]) -> list[tuple[dict, str]]:
    """Every tool call of the run with its result, in order."""
    results = {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}
    return [(call, results.get(call["id"], "")) for m in messages
            for call in m.get("tool_calls", [])]


def _what_ran(calls: list[tuple[dict, str]]) -> str:
    if not calls:
        return "your script asked for no tool call at all"
    lines = ["the calls your script asked for, and the first line of what each returned:"]
    for call, result in calls:
        first = result.strip().splitlines()[0] if result.strip() else "(nothing)"
        lines.append(f"  {_shown_call(call)}  →  {first[:160]}")
    return "\n".join(lines)


def _run(turns: list) -> tuple[Agent, str]:
    """Run the turns as the tour runs SCRIPT: the demo project in a temporary folder, the
    real tools."""
    try:
        llm = ScriptedLLM(copy.deepcopy(turns))
    except Exception as e:
        raise Hint(f"this is not a script a ScriptedLLM can play: {e}\nhint: {TURNS}") from None
    with tempfile.TemporaryDirectory(prefix="corecoder-ch00-") as tmp:
        project = copy_project(Path(tmp))
        agent = build_agent(llm, project)
        try:
            answer = agent.chat(TASK)
        except Exception as e:
            ran = _what_ran(_calls_made(agent.messages))
            if isinstance(e, ScriptError) and llm.position >= len(llm.turns):
                played = f"{len(llm.turns)} turn" + ("s" if len(llm.turns) > 1 else "")
                hint = (f"the script ran out: after its {played} the agent asked the model again, "
                        f"to read the last tool results\n{ran}\nhint: a turn with tool calls "
                        "is never the last one; end the script with a string, the final answer")
            else:
                hint = f"the run stopped with {type(e).__name__}: {e}\n{ran}"
            raise Hint(hint.replace(str(project), "<project>")) from None
        text = json.dumps(agent.messages, ensure_ascii=False)
        if str(project) in text:  # keep hints free of the temporary path
            agent.messages = json.loads(text.replace(str(project), "<project>"))
    return agent, answer


@checker("ch00.script")
def check_script(make_script) -> None:
    given = ("your script, played by a ScriptedLLM in a fresh copy of the demo project, "
             "for the tour's task")
    called = f"{getattr(make_script, '__name__', 'your function')}()"
    turns = attempt(make_script, given=called)
    if not isinstance(turns, list) or not turns:
        raise Hint(f"{called} should return a list of turns, got {type(turns).__name__}: "
                   f"{turns!r:.200}\nhint: {TURNS}")
    agent, answer = _run(turns)
    calls = _calls_made(agent.messages)
    runs = [(call, result) for call, result in calls
            if call["function"]["name"] == "bash" and SUMMARY.search(result)]
    if not runs:
        why = ("only a tool can run the tests, and bash is the one that runs commands: "
               "ask for bash with the command \"python3 test_stats.py\" "
               "(arguments {\"command\": ...})")
        raise Hint(f"{given}:\nno bash call ran the tests "
                   "(nothing printed a line like \"N of 3 tests passed\")\n"
                   f"{_what_ran(calls)}\nhint: {why}")
    last = agent.messages[-1]
    if last["role"] != "assistant" or last.get("tool_calls"):
        raise Hint(f"{given}:\nthe run did not end with an answer: {answer!r:.200}\n"
                   "hint: end the script with a string, the final answer")
    summary = SUMMARY.findall(runs[-1][1])[-1]
    if summary not in answer:
        said = SUMMARY.search(answer)
        why = (f"your answer says {said[0]!r}, but the tests printed {summary!r}. " if said else
               f"the tests printed {summary!r}, and your answer does not say so. ")
        raise Hint(f"{given}:\nthe final answer: {answer!r:.300}\nhint: {why}"
                   "A scripted model never reads the tool results: its answer was written "
                   "before the tests ran, so write what the tour showed they print")
    try:
        check_history(agent.messages)
    except IllegalHistory as e:  # cannot happen with the real loop; kept as the point of the tour
        raise Hint(f"{given}:\nthe history is not legal: {e}") from None


# --- ch00.count_calls ------------------------------------------------------------------

def _turns_as_history(task: str, turns: list, results: list[str]) -> list[dict]:
    """A history as the loop builds it from scripted turns: each reply, then one result per call."""
    history, said = [user(task)], iter(results)
    for i, turn in enumerate(turns):
        reply = parse_turn(turn, i)
        history.append(reply.message())
        history += [tool_result(call.id, next(said)) for call in reply.tool_calls]
    return history


def _call(call_id: str, name: str, **args) -> ToolCall:
    return ToolCall(call_id, name, json.dumps(args))


TOUR = _turns_as_history(TASK, SCRIPT, [  # the tool results, cut short
    "FAIL test_mean: ...\n1 of 3 tests passed\n[exit code 1]", "stats.py:4: def mean(values):",
    "     1\t\"\"\"Small statistics helpers.\"\"\" ...",
    "Edited stats.py: replaced 1 occurrence at line 6. ...",
    "3 of 3 tests passed"])

COUNT_CASES = [
    ("the tour's run: six rounds, one call in each of the first five", TOUR,
     {"bash": 2, "grep": 1, "read_file": 1, "edit_file": 1}),
    ("one round of three parallel calls, then one more call",
     [user("Why does test_mean fail?"),
      assistant("", [_call("c1", "read_file", path="stats.py"),
                     _call("c2", "read_file", path="test_stats.py"),
                     _call("c3", "grep", pattern="def mean")]),
      tool_result("c1", "def mean(values): ..."), tool_result("c2", "def test_mean(): ..."),
      tool_result("c3", "stats.py:4: def mean(values):"),
      assistant("Let me run them.", [_call("c4", "bash", command="python3 test_stats.py")]),
      tool_result("c4", "1 of 3 tests passed"), assistant("mean divides by the wrong number.")],
     {"read_file": 2, "grep": 1, "bash": 1}),
    ("a conversation with no tool call: the model answered straight away",
     [user("Say hello."), assistant("Hello!")], {}),
    ("an empty history", [], {}),
    ("calls that went wrong still count: the model asked for them",
     [user("Read it."),
      assistant("", [_call("c1", "read_fiel", path="greet.py"),
                     ToolCall("c2", "read_file", '{"path": ')]),
      tool_result("c1", "unknown tool 'read_fiel'. Available tools: ..."),
      tool_result("c2", "bad arguments for read_file: the arguments are not valid JSON"),
      assistant("Sorry.", [_call("c3", "read_file", path="greet.py")]),
      tool_result("c3", "def greet(name): ..."),
      user("Now run bash and grep."), assistant("I will not.")],
     {"read_fiel": 1, "read_file": 2}),
]

LAYOUT = ('in a history, an assistant message that asks for tools has "tool_calls", a list of '
          '{"id": ..., "type": "function", "function": {"name": ..., "arguments": ...}}; '
          "other messages have no \"tool_calls\" key")


@checker("ch00.count_calls")
def check_count_calls(count_tool_calls) -> None:
    for about, history, wanted in COUNT_CASES:
        given = f"{about}:\n{describe(history)}"
        kept = copy.deepcopy(history)
        try:
            got = attempt(count_tool_calls, kept, given=given)
        except Hint as hint:
            raise Hint(f"{hint}\nhint: {LAYOUT}") from None
        if kept != history:
            raise Hint(f"{given}\nyour function changed the history it was given; only read it")
        if not isinstance(got, dict):
            raise Hint(f"{given}\nexpected a dict of counts, got {type(got).__name__}: "
                       f"{got!r:.200}")
        why = ("count every call of every assistant message (a round can ask for several calls), "
               "by the tool name the model asked for, whatever its result; "
               "list only the tools that were called")
        expect(got, wanted, given, why)
