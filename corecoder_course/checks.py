"""Exercise checks: `check("ch01.find_orphan", find_orphan)` runs offline tests on a
learner's answer.

A checker is a function registered under a name. It calls the learner's code
through `attempt` and compares with `expect`; either raises `Hint` with a message
that says what went in, what was expected and what came back. `check` turns that
into one printed verdict: never a traceback wall, whatever the learner's code does.

Checkers live in `corecoder_course/exercises/chNN.py` and are loaded on first use,
so `check("ch01.x", ...)` needs nothing imported beforehand.
"""

from __future__ import annotations

import collections
import contextlib
import importlib
import json
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from .words import language, say

CHECKERS: dict[str, Callable] = {}
FAILED: collections.Counter[str] = collections.Counter()  # the learner's failed checks, by name


def not_implemented() -> str:
    return say("not implemented yet: replace `raise NotImplementedError` (or the `...` of a class) "
               "with your code, then run both cells again",
               "还没有实现：把 `raise NotImplementedError`（类里则是 `...`）换成你的代码，"
               "再运行这两个单元格")


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
    except (Exception, KeyboardInterrupt, SystemExit) as e:  # whatever it raised, a hint
        words = say("your code raised", "你的代码抛出了")
        raise Hint(f"{given}\n{words} {type(e).__name__}: {e}") from None


def outcome(fn: Callable, *args) -> tuple[str, object]:
    """Call the learner's `fn`: ("returned", its value) or ("raised", the exception), for a
    checker that judges what was raised too. The stub's NotImplementedError goes on to `check`,
    which says "not implemented yet"."""
    try:
        return "returned", fn(*args)
    except NotImplementedError:
        raise
    except (Exception, KeyboardInterrupt, SystemExit) as e:  # whatever it raised, a verdict
        return "raised", e


def expect(got, wanted, given: str, why: str = "") -> None:
    """Fail with a hint unless `got == wanted`."""
    if got != wanted:
        raise Hint(f"{given}\n{EXPECTED}{wanted!r}\n{GOT}{got!r}" + hint(why))


ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def shown(value) -> str:
    """`repr(value)`, cut short and without memory addresses (a verdict is the same every run);
    a value whose repr fails is shown by its type."""
    try:
        return ADDRESS.sub("", f"{value!r:.300}")
    except (Exception, KeyboardInterrupt, SystemExit):
        return f"<{type(value).__name__}>"


def scrub(text: str, places: Mapping[Path, str] | None = None) -> str:
    """What a hint shows, the same every run: without memory addresses, and each folder of
    `places` (`{tmp: "."}`: a temporary folder, whose name changes every run) shown by its name,
    as it is written, resolved, or escaped in a repr or in JSON (an answer may show a path any
    of these ways). The longest form goes first, so that a folder inside another is not cut in
    two. A folder that is a root ("/") is left as it is: its name would replace every slash."""
    text = ADDRESS.sub("", text)
    forms: dict[str, str] = {}
    for folder, name in (places or {}).items():
        for p in {str(folder), str(Path(folder).resolve())}:
            if Path(p) == Path(Path(p).anchor):
                continue
            for form in (p, repr(p)[1:-1], json.dumps(p)[1:-1]):
                forms[form] = name
    for form in sorted(forms, key=len, reverse=True):
        text = text.replace(form, forms[form])
    return text


@contextlib.contextmanager
def scrubbed(places: Mapping[Path, str] | None = None) -> Iterator[None]:
    """Every hint raised inside, scrubbed (`scrub`): a checker wraps a whole run in it, so that
    what the hint shows of the learner's own output (histories, values) is scrubbed too."""
    try:
        yield
    except Hint as h:
        raise Hint(scrub(str(h), places)) from None


def error_of(e: BaseException, places: Mapping[Path, str] | None = None) -> str:
    """An exception as `Name: message`, scrubbed (`scrub`), then cut short: a learner's
    exception may say anything, at any length, and a message that cannot be read (a `__str__`
    that raises) still leaves its name."""
    try:
        message = scrub(str(e), places)
    except (Exception, KeyboardInterrupt, SystemExit):
        message = ""
    return f"{type(e).__name__}: {message:.300}"


def raised(e: BaseException, places: Mapping[Path, str] | None = None) -> str:
    """What the answer raised, in words (`error_of`): the GOT of a hint, when an answer that
    should return raised instead."""
    return say("your code raised", "你的代码抛出了") + f" {error_of(e, places)}"


def returned(value, places: Mapping[Path, str] | None = None) -> str:
    """What the answer returned, its type, then its repr: a wrong type may look like the right
    value (`'3'` and `3`). Without `places` the repr is `shown`; with them it is scrubbed before
    it is cut short, since a path cut in two would not be found."""
    kind = "" if value is None else f"{type(value).__name__} "
    try:
        text = shown(value) if places is None else f"{scrub(repr(value), places):.300}"
    except (Exception, KeyboardInterrupt, SystemExit):  # a repr that fails
        text = f"<{type(value).__name__}>"
    return say("your code returned", "你的代码返回了") + f" {kind}{text}"


def then(note: str, rule: str) -> str:
    """A note on what the answer did, then the rule: one hint reads as one text. In English,
    after a note that ends a sentence, the rule's first sentence starts with a capital (after a
    colon, it does not); Chinese has no capitals."""
    if not note:
        return rule
    if language() == "en" and note.rstrip().endswith("."):
        return note + rule[:1].upper() + rule[1:]
    return note + rule


def a_class(value, call: str) -> None:
    """Fail with a hint unless `value` is a class: the exercise `call`
    (`check("ch02.tool", CountLines)`) takes the class itself."""
    if not isinstance(value, type):
        got = type(value).__name__
        raise Hint(say(f"{call} takes the class itself, not an instance or a function: got {got}",
                       f"{call} 要的是类本身，不是实例，也不是函数：实际得到的是 {got}"))


def hint(why: str) -> str:
    """The last line of a failed check: what to think about (or nothing)."""
    return f"\n{say('hint: ', '提示：')}{why}" if why else ""


def case(about: str, history: list[dict], around: int | None = None) -> str:
    """What went in: a case's description, then its history."""
    return f"{about}{say(':', '：')}\n{describe(history, around)}"


class _Label:
    """A label of a hint, in the language spoken when it is printed: `f"{EXPECTED}{value}"`."""

    def __init__(self, en: str, zh: str):
        self.en, self.zh = en, zh

    def __format__(self, spec: str) -> str:
        return format(say(self.en, self.zh), spec)

    @property
    def alone(self) -> str:
        """The label on a line of its own, above what it labels."""
        return say(self.en, self.zh).rstrip()


EXPECTED, GOT = _Label("expected: ", "期望："), _Label("got:      ", "实际：")


CONTEXT = 3  # messages shown on each side of the one a hint is about


def describe(messages: list[dict], around: int | None = None) -> str:
    """A history as a few short lines, for a hint: all of it, or the messages within CONTEXT
    of the one at index `around` (a long history would bury the message that matters)."""
    if not messages:
        return say("  (an empty history)", "  （空历史）")
    first, last = 0, len(messages)
    if around is not None:
        first, last = max(0, around - CONTEXT), min(len(messages), around + CONTEXT + 1)
    lines = [say(f"  ... ({first} earlier message{'' if first == 1 else 's'})",
                 f"  ……（前面还有 {first} 条消息）")] \
        if first else []
    for i, m in enumerate(messages[first:last], first):
        text = f" {m['content']!r}" if m.get("content") else ""
        calls = " → " + ", ".join(f"{c['id']} {c['function']['name']}"
                                  for c in m.get("tool_calls", []))
        if m["role"] == "tool":
            answers = say(f"answers {m['tool_call_id']}", f"回应 {m['tool_call_id']}")
            lines.append(f"  {i}: tool ({answers}){text}")
        else:
            lines.append(f"  {i}: {m['role']}{text}{calls if m.get('tool_calls') else ''}")
    if last < len(messages):
        n = len(messages) - last
        lines.append(say(f"  ... ({n} later message{'' if n == 1 else 's'})",
                         f"  ……（后面还有 {n} 条消息）"))
    return "\n".join(lines)


def _find(name: str) -> Callable | None:
    """The checker of exercise `name`, its chapter's module loaded on first use. A chapter that
    fails to load says why (a package missing, most often), not that there is no exercise."""
    if name not in CHECKERS and "." in name:
        chapter = f"{__package__}.exercises.{name.split('.', 1)[0]}"
        try:
            importlib.import_module(chapter)
        except ModuleNotFoundError as e:
            if e.name != chapter:
                raise needs(e.name) from None
            return None
    return CHECKERS.get(name)


def needs(package: str | None) -> ImportError:
    """The error of a check that needs a package the learner's install lacks."""
    return ImportError(say(f"the checks need the package {package!r}: "
                           "pip install 'corecoder-course[course]'",
                           f"检查需要 {package!r} 这个包：pip install 'corecoder-course[course]'"))


def verdict(name: str, answer, tries: int = 1) -> tuple[bool, str]:
    """Run exercise `name`'s checks on `answer`: whether it passed, and what to tell the learner.
    `tries`: the how-manieth try of the learner's this is (a declared exercise tells the
    code's shape from the second on; kit.py)."""
    try:
        run = _find(name)
    except ImportError as e:
        return False, f"✗ {name}: {e}"
    if run is None:
        return False, say(f"✗ there is no exercise called {name!r}", f"✗ 没有名为 {name!r} 的练习")
    try:
        run(answer, tries) if getattr(run, "tiered", False) else run(answer)
    except NotImplementedError:
        return False, f"✗ {name}: {not_implemented()}"
    except Hint as failed:
        return False, f"✗ {name}: {say('not yet.', '还不对。')}\n" + _indent(str(failed))
    except ImportError as e:  # the learner's install lacks what the check needs: say which
        return False, f"✗ {name}: {e}"
    except Exception as e:
        # the checker met something it did not foresee: still one line, not a wall
        could_not = say("the check could not finish", "检查没能跑完")
        return False, f"✗ {name}: {could_not} ({type(e).__name__}: {e})"
    return True, f"✓ {name} {say('passed', '通过')}"


def check(name: str, answer) -> None:
    """Run exercise `name`'s checks on `answer` and print ✓ or a hint. (It returns nothing, so a
    notebook shows the verdict alone; `verdict` gives the same answer to code.)"""
    passed, told = verdict(name, answer, tries=FAILED[name] + 1)
    # the stub, as Run All meets it, is no try: the first wrong answer still gets the rule alone
    FAILED[name] += not passed and not told.endswith(not_implemented())
    if passed:
        _keep(name, answer)
    print(told)


def _keep(name: str, answer) -> None:
    """Keep a passing answer for later chapters (answers.py); a folder that cannot be written
    costs the learner nothing here: the check has passed all the same."""
    from .answers import keep

    try:
        keep(name, answer)
    except (OSError, ValueError, TypeError):
        pass


def _indent(text: str) -> str:
    return "\n".join("  " + line if line else "" for line in text.splitlines())
