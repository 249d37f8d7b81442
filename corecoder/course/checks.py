"""Exercise checks: `check("ch01.find_orphan", find_orphan)` runs offline tests on a learner's answer.

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

NOT_IMPLEMENTED = "not implemented yet: replace `raise NotImplementedError` with your code, then run both cells again"


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


def _find(name: str) -> Callable | None:
    if name not in CHECKERS and "." in name:
        chapter = name.split(".", 1)[0]
        try:
            importlib.import_module(f"{__package__}.exercises.{chapter}")
        except ModuleNotFoundError:
            return None
    return CHECKERS.get(name)


def check(name: str, answer) -> bool:
    """Run exercise `name`'s checks on `answer`; print ✓ or a hint; return whether it passed."""
    run = _find(name)
    if run is None:
        print(f"✗ there is no exercise called {name!r}")
        return False
    try:
        run(answer)
    except NotImplementedError:
        print(f"✗ {name}: {NOT_IMPLEMENTED}")
        return False
    except Hint as hint:
        print(f"✗ {name}: not yet.\n" + _indent(str(hint)))
        return False
    except Exception as e:  # the checker met something it did not foresee: still one line, not a wall
        print(f"✗ {name}: the check could not finish ({type(e).__name__}: {e})")
        return False
    print(f"✓ {name} passed")
    return True


def _indent(text: str) -> str:
    return "\n".join("  " + line if line else "" for line in text.splitlines())
