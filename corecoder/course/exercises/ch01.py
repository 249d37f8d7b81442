"""Checks for the exercises of chapter 1, the loop.

    ch01.find_orphan     find the first tool result that no waiting call expects
    ch01.answer_pending  after an interrupt, answer every call still waiting
    ch01.run_call        run one call, telling bad arguments from failures

Each check feeds small, hand-made cases to the learner's function and stops at the
first one it gets wrong, saying what went in, what was expected and what came back.
"""

from __future__ import annotations

import copy
import json

from ...messages import (
    INTERRUPTED,
    IllegalHistory,
    ToolCall,
    assistant,
    check_history,
    tool_result,
    user,
)
from ...tools.base import Tool, ToolError
from ...workspace import Workspace
from ..checks import Hint, attempt, checker, describe, expect


def _calls(*ids: str) -> dict:
    return assistant("", [ToolCall(i, "read_file", json.dumps({"path": f"{i}.py"})) for i in ids])


def _result(call_id: str, text: str = "ok") -> dict:
    return tool_result(call_id, text)


# --- ch01.find_orphan ------------------------------------------------------------------

ORPHAN_CASES = [
    ("a legal history: two calls, both answered, in order",
     [user("fix it"), _calls("c1", "c2"), _result("c1"), _result("c2"), assistant("done")], None),
    ("a legal history of two rounds",
     [user("go"), _calls("c1"), _result("c1"), _calls("c2", "c3"), _result("c2"), _result("c3")],
     None),
    ("an empty history", [], None),
    ("a history cut at the front, so its first message is a tool result",
     [_result("c1"), _calls("c2"), _result("c2")], 0),
    ("a call answered twice", [user("go"), _calls("c1"), _result("c1"), _result("c1")], 3),
    ("a result whose id no call has", [user("go"), _calls("c1"), _result("c9")], 2),
    ("a result that arrives after the user spoke again",
     [user("go"), _calls("c1", "c2"), _result("c1"), user("stop"), _result("c2")], 4),
    ("two results in the wrong order "
     "(this rule cares that each answers a waiting call, not the order)",
     [user("go"), _calls("c1", "c2"), _result("c2"), _result("c1")], None),
]


@checker("ch01.find_orphan")
def check_find_orphan(find_orphan) -> None:
    for about, history, wanted in ORPHAN_CASES:
        given = f"{about}:\n{describe(history)}"
        got = attempt(find_orphan, copy.deepcopy(history), given=given)
        why = ("a tool message must answer a call of the latest assistant message that is "
               "still waiting; a user or assistant message in between closes the window")
        expect(got, wanted, given, why)


# --- ch01.answer_pending ---------------------------------------------------------------

def _reference_pending(messages: list[dict]) -> list[dict]:
    answered, i = set(), len(messages)
    while i > 0 and messages[i - 1]["role"] == "tool":
        i -= 1
        answered.add(messages[i]["tool_call_id"])
    if i == 0 or messages[i - 1]["role"] != "assistant":
        return list(messages)
    waiting = [c["id"] for c in messages[i - 1].get("tool_calls", []) if c["id"] not in answered]
    return [*messages, *(tool_result(call_id, INTERRUPTED) for call_id in waiting)]


PENDING_CASES = [
    ("three calls; the user interrupted after the first was answered",
     [user("go"), _calls("c1", "c2", "c3"), _result("c1")]),
    ("two calls; the user interrupted before either was answered",
     [user("go"), _calls("c1", "c2")]),
    ("nothing waiting: the last round ended with an answer",
     [user("go"), _calls("c1"), _result("c1"), assistant("done")]),
    ("nothing waiting: every call was answered",
     [user("go"), _calls("c1", "c2"), _result("c1"), _result("c2")]),
    ("only the user has spoken", [user("go")]),
]


@checker("ch01.answer_pending")
def check_answer_pending(answer_pending) -> None:
    for about, history in PENDING_CASES:
        given = f"{about}:\n{describe(history)}"
        kept = copy.deepcopy(history)
        got = attempt(answer_pending, kept, given=given)
        if kept != history:
            raise Hint(f"{given}\nyour function changed the list it was given; "
                       "return a new list instead")
        if not isinstance(got, list):
            raise Hint(f"{given}\nexpected a list of messages, got {type(got).__name__}: "
                       f"{got!r:.200}")
        wanted = _reference_pending(history)
        if got != wanted:
            raise Hint(f"{given}\nexpected:\n{describe(wanted)}\ngot:\n{describe(got)}\n"
                       f"hint: each waiting call gets one result, {INTERRUPTED!r}, in call order")
        try:
            check_history(got)
        except IllegalHistory as e:
            # cannot happen if got == wanted; kept as the point of the exercise
            raise Hint(f"{given}\nthe result is not a legal history: {e}") from None


# --- ch01.run_call ---------------------------------------------------------------------

class Shout(Tool):
    name = "shout"
    description = "Repeat the text in capitals."
    parameters = {"type": "object", "additionalProperties": False, "required": ["text"],
                  "properties": {"text": {"type": "string"},
                                 "times": {"type": "integer", "minimum": 1}}}

    def __init__(self):
        self.ran = 0

    def run(self, ws, text, times=1):
        self.ran += 1
        return text.upper() * times


class Count(Tool):
    name = "count"
    description = "Add one."
    parameters = {"type": "object", "additionalProperties": False,
                  "properties": {"start": {"type": "integer"}}}

    def __init__(self):
        self.ran = 0

    def run(self, ws, start=0):
        self.ran += 1
        return str(start + 1)


class DiskFull(Shout):
    name = "save"

    def run(self, ws, text, times=1):
        raise ToolError("the disk is full")


class Buggy(Count):
    name = "buggy"

    def run(self, ws, start=0):
        raise ValueError("the tool has a bug")


# (tool, arguments, the result must start with, and must contain, did the tool run?)
CALL_CASES = [
    (Shout, '{"text": "hi"}', "HI", "", True),
    (Shout, '{"text": "hi", "times": 2}', "HIHI", "", True),
    (Shout, '{"text": ', "bad arguments for shout:", "", False),
    (Count, '{"start": ', "bad arguments for count:", "", False),
    (Shout, '["hi"]', "bad arguments for shout:", "", False),
    (Shout, "{}", "bad arguments for shout:", "missing required argument 'text'", False),
    (Shout, '{"text": 5}', "bad arguments for shout:", "text should be string", False),
    (Shout, '{"text": 5, "times": 0}', "bad arguments for shout:",
     "text should be string, got int 5; times", False),
    (DiskFull, '{"text": "hi"}', "save failed:", "the disk is full", None),
    (Buggy, "{}", "buggy failed:", "the tool has a bug", None),
]


def _why(starts: str) -> str:
    if starts.startswith("bad arguments"):
        return ("arguments that don't parse, aren't an object or don't fit the schema are the "
                "model's mistake: say so, list every problem (joined with '; ') and never run "
                "the tool; never treat bad JSON as {}")
    if "failed" in starts:
        return ("an exception from the tool, any exception, is the environment's failure: "
                "'<tool> failed: <message>'")
    return "valid arguments: run the tool and return exactly what it returned"


@checker("ch01.run_call")
def check_run_call(run_call) -> None:
    workspace = Workspace()
    for make, arguments, starts, contains, runs in CALL_CASES:
        tool = make()
        given = f"run_call({tool.name}, {arguments!r}, workspace)"
        got = attempt(run_call, tool, arguments, workspace, given=given)
        if not isinstance(got, str):
            raise Hint(f"{given}\nexpected a string (the tool result), got {type(got).__name__}: "
                       f"{got!r:.200}")
        exact = not contains and runs
        if (got != starts) if exact else not (got.startswith(starts) and contains in got):
            wanted = repr(starts) if exact else f"a string starting {starts!r}" + (
                f" and containing {contains!r}" if contains else "")
            raise Hint(f"{given}\nexpected: {wanted}\ngot:      {got!r:.300}\nhint: {_why(starts)}")
        if runs is not None and bool(tool.ran) != runs:
            raise Hint(f"{given}\nthe tool {'should' if runs else 'should not'} have run: "
                       + ("the arguments were fine" if runs
                          else "bad arguments never reach the tool"))
