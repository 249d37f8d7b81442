"""Exercise checks: `check("ch01.find_orphan", find_orphan)` runs offline tests on a
learner's answer.

A checker is a function registered under a name. It calls the learner's code
through `attempt` and compares with `expect`; either raises `Hint` with a message
that says what went in, what was expected and what came back. `check` turns that
into one printed verdict: never a traceback wall, whatever the learner's code does.

Checkers live in `corecoder/course/exercises/chNN.py` and are loaded on first use,
so `check("ch01.x", ...)` needs nothing imported beforehand.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

CHECKERS: dict[str, Callable] = {}

NOT_IMPLEMENTED = ("not implemented yet: replace `raise NotImplementedError` with your code, "
                   "then run both cells again")


class Hint(Exception):
    """A failed check, worded for the learner."""


def checker(name: str) -> Callable:
    """Register the decorated function as the checker for exercise `name`."""

    def register(fn: Callable) -> Callable:
        CHECKERS[name] = fn
        return fn

    return register


def attempt(fn: Callable, *args, given: str):
    """Call the learner's `fn`; if it raises, explain which input made it raise."""
    try:
        return fn(*args)
    except NotImplementedError:
        raise  # the student stub: `check` says so in one line
    except Exception as e:
        raise Hint(f"{given}\nyour code raised {type(e).__name__}: {e}") from None


def expect(got, wanted, given: str, why: str = "") -> None:
    """Fail with a hint unless `got == wanted`."""
    if got != wanted:
        hint = f"\nhint: {why}" if why else ""
        raise Hint(f"{given}\nexpected: {wanted!r}\ngot:      {got!r}{hint}")


def describe(messages: list[dict]) -> str:
    """A history as a few short lines, for a hint."""
    if not messages:
        return "  (an empty history)"
    lines = []
    for i, m in enumerate(messages):
        text = f" {m['content']!r}" if m.get("content") else ""
        calls = " → " + ", ".join(f"{c['id']} {c['function']['name']}"
                                  for c in m.get("tool_calls", []))
        if m["role"] == "tool":
            lines.append(f"  {i}: tool (answers {m['tool_call_id']}){text}")
        else:
            lines.append(f"  {i}: {m['role']}{text}{calls if m.get('tool_calls') else ''}")
    return "\n".join(lines)


def _find(name: str) -> Callable | None:
    if name not in CHECKERS and "." in name:
        chapter = name.split(".", 1)[0]
        try:
            importlib.import_module(f"{__package__}.exercises.{chapter}")
        except ModuleNotFoundError:
            return None
    return CHECKERS.get(name)


def verdict(name: str, answer) -> tuple[bool, str]:
    """Run exercise `name`'s checks on `answer`: whether it passed, and what to tell the learner."""
    run = _find(name)
    if run is None:
        return False, f"✗ there is no exercise called {name!r}"
    try:
        run(answer)
    except NotImplementedError:
        return False, f"✗ {name}: {NOT_IMPLEMENTED}"
    except Hint as hint:
        return False, f"✗ {name}: not yet.\n" + _indent(str(hint))
    except Exception as e:
        # the checker met something it did not foresee: still one line, not a wall
        return False, f"✗ {name}: the check could not finish ({type(e).__name__}: {e})"
    return True, f"✓ {name} passed"


def check(name: str, answer) -> None:
    """Run exercise `name`'s checks on `answer` and print ✓ or a hint. (It returns nothing, so a
    notebook shows the verdict alone; `verdict` gives the same answer to code.)"""
    print(verdict(name, answer)[1])


def _indent(text: str) -> str:
    return "\n".join("  " + line if line else "" for line in text.splitlines())
