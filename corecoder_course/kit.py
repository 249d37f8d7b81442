"""The course kit: an exercise is declared, and one routine judges every answer the same way.

An `Exercise` names what the learner writes and the engine's own definition of it, the
`reference`; the inputs, as a hypothesis strategy drawn from the whole domain the chapter's
prose promises (not the few examples it shows); the rule in the chapter's words, and the
shape of the code; the known `Mistake`s, each one line of the reference written wrong and
why that is wrong. `judge` runs the answer beside the reference on generated inputs (a fixed
seed per exercise: the same verdict every run), then on the examples, and on the first input
where they differ it says why, climbing one ladder:

    raised            the answer raised where the reference returns
    changed its input the arguments it was handed were changed under the caller
    wrong type        a value of another type than the reference's (an int, not '3')
    a known mistake   the answer returned what a listed mistake returns: that mistake's why
    the rule          anything else: the rule, and on a second failure the shape of the code

The input a hint shows is the smallest hypothesis could find that still fails (it shrinks
what it generated), so a learner reads a short history, not the hundredth random one. The
probes then call the answer twice on the same input (a second call that differs keeps state
it should not). A mistake is code, so the suite proves each one fails with its own hint,
and mutates the reference mechanically to measure what the inputs can tell apart
(authoring/mutants.py).
"""

from __future__ import annotations

import copy
import inspect
import linecache
import numbers
import pickle
import signal
import sys
import textwrap
import threading
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from decimal import Decimal

from .checks import (
    CHECKERS,
    EXPECTED,
    GOT,
    Hint,
    error_of,
    hint,
    needs,
    outcome,
    raised,
    returned,
    shown,
)
from .words import language, say


@dataclass(frozen=True)
class Mistake:
    """A wrong answer a learner writes: the reference with `line` (text found once in its
    source) written as `wrong` ("" drops it), and `why` ((English, Chinese)) it is wrong."""

    line: str
    wrong: str
    why: tuple[str, str]

    def apply(self, reference: Callable) -> Callable:
        """The reference, written with this mistake: a function of the same name."""
        return rewritten(reference, self.line, self.wrong)


@dataclass
class Exercise:
    """What a checker needs to know of one exercise; `judge` does the rest."""

    name: str  # the id a notebook checks: "ch04.safe_cut"
    reference: Callable  # what a right answer does: the engine's own, or the chapter's solution
    inputs: Callable  # () -> a hypothesis strategy of argument tuples (hypothesis loads on use)
    call: Callable[[tuple], str]  # an input, as the hint shows the call: "safe_cut([...], 3)"
    rule: tuple[str, str]  # what a right answer does, in the chapter's words (en, zh)
    shape: tuple[str, str] = ("", "")  # the shape of the code: told on a second failure
    domain: tuple[str, str] = ("its inputs", "它的输入")  # what `inputs` draws from, in words
    examples: Sequence[tuple] = ()  # the chapter's own inputs: judged after the generated ones,
    # and the fingerprint that tells two mistakes apart
    mistakes: Sequence[Mistake] = ()
    diagnose: Callable | None = None  # (args, got, wanted) -> why, or None: a domain's own
    same: Callable = lambda got, wanted, args: got == wanted  # noqa: E731  (a right value)
    # how an answer is put to work on an input: called (a function), or plugged into a real
    # agent and watched (a class at a seam: run(cls, *args) returns what was seen; seams.py)
    run: Callable = lambda answer, *args: answer(*args)  # noqa: E731
    # how a hint shows what the answer and the reference came to (None: "your code returned"
    # and the value's type and repr; a seam says what was seen in its own words)
    show: Callable | None = None
    max_examples: int = 200
    # whether a failing input is shrunk to the smallest that still fails: not where each failing
    # try costs a wait (ch06.team: a task waits a second for a sibling that never runs)
    shrink: bool = True
    equivalent: Mapping[str, str] = field(default_factory=dict)  # mutants that are no mistake
    # what the reference and each listed mistake did on an input (_remembered): the
    # checker's own, never the learner's
    outcomes: dict = field(default_factory=dict, repr=False, compare=False)
    tiered = True  # `check` passes the try's number: the shape is told from the second on

    def __post_init__(self):
        CHECKERS[self.name] = self

    def __call__(self, answer, tries: int = 1) -> None:
        """The checker `check` runs (`tries`: this is the learner's n-th try in this kernel)."""
        judge(self, answer, tries)

    def wrong(self) -> list[tuple[Callable, Mistake]]:
        """Each mistake, written (compiled once)."""
        if not hasattr(self, "_written"):
            self._written = [(m.apply(self.reference), m) for m in self.mistakes]
        return self._written


def rewritten(fn: Callable, line: str, wrong: str) -> Callable:
    """`fn` with `line` of its source replaced by `wrong`, compiled beside it (in its module's
    globals, so it sees what the original sees)."""
    source = textwrap.dedent(inspect.getsource(fn))
    if source.count(line) != 1:
        raise ValueError(f"{line!r} is in {fn.__name__}'s source {source.count(line)} times")
    return defined(source.replace(line, wrong), fn, "written wrong")


def defined(source: str, fn: Callable, how: str) -> Callable:
    """`source`, a new writing of `fn`, compiled in `fn`'s module's globals, so it sees what the
    original sees; its text kept where `inspect` finds it (a hook a chapter writes out as a
    program of its own reads its source)."""
    where = f"<{fn.__name__}, {how} {zlib.crc32(source.encode()):08x}>"
    linecache.cache[where] = (len(source), None, source.splitlines(True), where)
    namespace = dict(namespace_of(fn))
    exec(compile(source, where, "exec"), namespace)
    return namespace[fn.__name__]


def namespace_of(answer) -> dict:
    """The namespace an answer's code reads its global names from (a class: its methods')."""
    if hasattr(answer, "__globals__"):
        return answer.__globals__
    method = next((f for f in vars(answer).values() if hasattr(f, "__globals__")), None)
    if method is not None:
        return method.__globals__
    module = sys.modules.get(getattr(answer, "__module__", ""))
    return vars(module) if module else {}


# what a class body of only a docstring and `...` defines (3.13 adds the last two)
_EMPTY_BODY = {"__module__", "__qualname__", "__doc__", "__firstlineno__",
                  "__static_attributes__"}


def judge(exercise: Exercise, answer, tries: int = 1) -> None:
    """Raise `Hint` at the first input where `answer` and the reference part ways. A class
    whose body is still the notebook's stub (a docstring and `...`) is not written yet."""
    if isinstance(answer, type) and not set(vars(answer)) - _EMPTY_BODY:
        raise NotImplementedError
    try:
        _judge(exercise, answer, tries)
    except _Hung as hung:
        raise Hint(exercise.call(hung.found) + _why(exercise, say(
            f"your code computed for {LIMIT:g} s on this input without returning: a loop that "
            "never ends? (each step must bring it closer to stopping)",
            f"在这个输入上，你的代码算了 {LIMIT:g} 秒还没有返回：是不是有一个永远不会结束的循环？"
            "（循环的每一步都要离结束更近一点）") if hung.computing else say(
            f"your code waited {PATIENCE:g} s on this input without returning: for something "
            "that never comes? (a lock, a future or a queue nothing will fill, input())",
            f"在这个输入上，你的代码等了 {PATIENCE:g} 秒还没有返回："
            "是不是在等一件永远不会发生的事？"
            "（一把锁、一个 future、一个没人会往里放东西的队列、input()）"), tries)) from None


def _judge(exercise: Exercise, answer, tries: int) -> None:
    """Generated inputs first, since a failing one is shrunk to the smallest that still fails
    (the clearest a hint can show), then the chapter's examples, then the probe."""
    try:
        _generated(exercise, lambda args: _compare(exercise, answer, args, tries, explain=False))
    except _Differs as differs:
        _compare(exercise, answer, differs.found, tries)  # the smallest input found, explained
        raise Hint(exercise.call(differs.found) + hint(say(  # it passed this time: it keeps state
            "this input failed, then passed when tried again: keep nothing between calls",
            "这个输入先是没通过，再试一次又通过了：两次调用之间不要留下任何状态"))) from None
    for args in exercise.examples:
        _compare(exercise, answer, args, tries)
    if exercise.examples:  # the probe: the same input twice, the same answer twice
        args = exercise.examples[-1]
        first = _run(exercise, answer, copy.deepcopy(args))
        again = _run(exercise, answer, copy.deepcopy(args))
        if first[0] == "returned" and not _equal(again, first):
            raise Hint(exercise.call(args) + f"\n{GOT}{shown(first[1])}, "
                       + say("then, called again on the same input, ", "再用同样的输入调用一次，")
                       + shown(again[1]) + hint(say(
                           "a second call must give the same answer: keep nothing between calls",
                           "第二次调用必须给出同样的结果：两次调用之间不要留下任何状态")))


# Whether a failing input is shrunk: for a learner it is, since the smallest input is the
# clearest hint; a search that only asks whether an answer fails can skip it (`unshrunk`).
_SHRINK: ContextVar[bool] = ContextVar("shrink a failing input", default=True)


@contextmanager
def unshrunk() -> Iterator[None]:
    """Within this block a failing input is not shrunk: each verdict passes or fails as it
    would, sooner, and a hint shows the first input found. For a search over many answers
    (the mutation score, authoring/mutants.py), never for a learner."""
    token = _SHRINK.set(False)
    try:
        yield
    finally:
        _SHRINK.reset(token)


def _generated(exercise: Exercise, test: Callable) -> None:
    """`test` on inputs drawn from the exercise's strategy, the same ones every run; the first
    failure is shrunk to the smallest input that still fails, then raised."""
    try:
        from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
    except ModuleNotFoundError as e:  # installed without the course's extras
        raise needs(e.name) from None

    run = settings(max_examples=exercise.max_examples, derandomize=False, database=None,
                   deadline=None, verbosity=Verbosity.quiet, report_multiple_bugs=False,
                   suppress_health_check=list(HealthCheck),
                   phases=(Phase.explicit, Phase.generate)
                   + ((Phase.shrink,) if _SHRINK.get() and exercise.shrink else ()))
    case = seed(zlib.crc32(exercise.name.encode()))(run(given(exercise.inputs())(test)))
    try:
        case()
    except _Differs:
        raise
    except Exception as error:  # a failure that did not repeat (state kept between calls)
        inner = next((e for e in getattr(error, "exceptions", ()) if isinstance(e, _Differs)),
                     None)
        if inner is None:
            raise
        raise inner from None


LIMIT = 2.0  # seconds of computing one call of the answer may take: the reference takes µs
# Seconds of waiting it may take: what the checker's own processes and threads take counts here,
# and a loaded machine stretches it (only waiting, so no answer that computes reaches this)
PATIENCE = 30.0


class _Hung(BaseException):
    """The answer ran past its limit: a BaseException, so that hypothesis stops at once
    (shrinking a loop that never ends would cost LIMIT a step) and the answer's `except
    Exception` lets it by. `computing`: it spent LIMIT seconds of the processor's time, rather
    than PATIENCE seconds of waiting."""

    def __init__(self, found: tuple, computing: bool):
        self.found, self.computing = found, computing


def _run(exercise: Exercise, answer, args: tuple) -> tuple[str, object]:
    """`outcome` of the answer put to work on `args`, stopped where a signal can stop it (the
    main thread, where a notebook runs its cells, on a system with timers) after LIMIT seconds
    of computing or PATIENCE seconds in all.

    Computing is this process's processor time, not the clock's: a machine busy with other
    work stretches the clock, not the work done, so the same answer gets the same verdict on
    a laptop and on a loaded test runner (a subprocess the checker starts counts for neither)."""
    main = threading.current_thread() is threading.main_thread()
    if not main or not hasattr(signal, "setitimer"):
        return outcome(exercise.run, answer, *args)

    armed = [True]

    def stop(signum, _):
        if armed[0]:
            raise _Hung(args, computing=signum == signal.SIGPROF)

    def unheard(unraisable):  # that stop, swallowed: not printed under the learner's cell
        if not isinstance(unraisable.exc_value, _Hung):
            hook(unraisable)

    before = {s: signal.signal(s, stop) for s in (signal.SIGPROF, signal.SIGALRM)}
    hook, sys.unraisablehook = sys.unraisablehook, unheard
    # again every 0.1 s after the first: a stop raised where Python swallows it (inside a
    # garbage collector's callback) must not let a loop that never ends run on
    signal.setitimer(signal.ITIMER_PROF, LIMIT, 0.1)
    signal.setitimer(signal.ITIMER_REAL, PATIENCE, 0.1)
    try:
        return outcome(exercise.run, answer, *args)
    finally:
        armed[0] = False
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
        for s, handler in before.items():
            signal.signal(s, handler)
        sys.unraisablehook = hook


class _Differs(Exception):
    """A generated input where the answer parts ways: explained once hypothesis has shrunk it."""

    def __init__(self, found: tuple):
        self.found = found


def _compare(exercise: Exercise, answer, args: tuple, tries: int, explain: bool = True) -> None:
    """Fail unless the answer does on `args` what the reference does: returns the same value,
    or raises the same kind of error (a reference that refuses an input is the spec too)."""
    wanted_kind, wanted = _remembered(exercise, exercise.reference, args, errors=True)
    handed = copy.deepcopy(args)
    kind, got = _run(exercise, answer, handed)
    what = raised(got) if kind == "raised" else (exercise.show or returned)(got)

    def fail(reason: Callable[[], str]):
        if not explain:  # a search step: cheap, and said once the input is the smallest
            raise _Differs(args)
        expected = (say("raises ", "抛出 ") + type(wanted).__name__ if wanted_kind == "raised"
                    else (exercise.show or shown)(wanted))
        given = f"{exercise.call(args)}\n{EXPECTED}{expected}\n{GOT}"
        raise Hint(given + what + _why(exercise, reason(), tries))

    mine = (kind, _error_key(got) if kind == "raised" else got)
    if kind == "raised" and wanted_kind == "returned":
        fail(lambda: _reason(exercise, answer, args, mine, wanted))
    if not _equal(handed, args):
        fail(lambda: say(
            "the answer changed the input it was handed (the caller's own list: del, pop, "
            "clear, sort...); work on it without changing it",
            "你的代码改动了传给它的输入（调用方自己的列表：del、pop、clear、sort 之类）；"
            "只读它，不要改它"))
    if wanted_kind == "raised":
        if not (kind == "raised" and isinstance(got, type(wanted))):
            fail(lambda: _reason(exercise, answer, args, mine, wanted))
        return
    if not _same_kind(got, wanted):
        fail(lambda: say(f"return a {_kind(wanted)}, as the engine's own does",
                         f"要返回 {_kind(wanted)}，和引擎自己的一样"))
    if not _alike(exercise, ("returned", wanted), mine, args):
        fail(lambda: _reason(exercise, answer, args, mine, wanted))


def _same_kind(got, wanted) -> bool:
    """Whether `got` is of the kind `wanted` is: any real number for a number (an int for a
    float, a float for an int: `same` judges how close), None or a value where either may be
    the answer (they differ as values), else the same type."""
    if wanted is None or got is None:
        return True
    if _number(wanted):
        return _number(got)
    return _builtin(got) is _builtin(wanted)


def _builtin(value) -> type:
    """The built-in type a value is one of: a subclass of list is a list (a seam's record of
    what it saw may be one, with its own way to compare and show)."""
    return next((t for t in type(value).__mro__ if t.__module__ == "builtins" and t is not object),
                type(value))  # a class of no built-in type (a Path) is its own kind


def _number(value) -> bool:
    return isinstance(value, (numbers.Real, Decimal)) and not isinstance(value, bool)


def _kind(value) -> str:
    return say("number", "数值") if _number(value) else _builtin(value).__name__


def _reason(exercise: Exercise, answer, args: tuple, mine: tuple, wanted) -> str:
    """Why the answer is wrong: a known mistake's why, the exercise's own diagnosis (of a value
    returned), the rule."""
    mistake = _known(exercise, answer, args, mine)
    if mistake is not None:
        return say(*mistake.why)
    kind, got = mine
    found = exercise.diagnose(args, got, wanted) if exercise.diagnose and kind == "returned" \
        else None
    return found or say(*exercise.rule)


def _why(exercise: Exercise, reason: str, tries: int) -> str:
    """The hint's last lines: the reason; from the second failure on, the code's shape too."""
    if tries < 2 or not exercise.shape[0]:
        return hint(reason)
    return hint(reason) + "\n" + say("the code's shape: ", "代码的样子：") + say(*exercise.shape)


def _known(exercise: Exercise, answer, args: tuple, mine: tuple) -> Mistake | None:
    """The listed mistake that does here what the answer did (returns the same value, raises
    the same kind of error); of several, the one that also agrees with the answer on most of
    the examples (its fingerprint)."""
    matching = [(wrong, m) for wrong, m in exercise.wrong()
                if _alike(exercise, _remembered(exercise, wrong, args), mine, args)]
    if len(matching) < 2:
        return matching[0][1] if matching else None
    theirs = [quietly(exercise, answer, example) for example in exercise.examples]
    agreed = [sum(_alike(exercise, _remembered(exercise, wrong, example), it, example)
                  for example, it in zip(exercise.examples, theirs, strict=True))
              for wrong, _ in matching]
    return matching[agreed.index(max(agreed))][1]


def _remembered(exercise: Exercise, fn, args: tuple, errors: bool = False) -> tuple[str, object]:
    """What the reference or a listed mistake does on `args`, worked out once a process and
    language: both are the checker's own and do the same every time, and one that runs a
    process (a server that never answers) may take seconds; every answer judged meets the same
    inputs. The function itself is the key (an id could be reused by a later mutant). An input
    that cannot be pickled is not remembered."""
    try:
        key = (fn, errors, language(), pickle.dumps(args))
    except Exception:
        return quietly(exercise, fn, args, errors)
    if key not in exercise.outcomes:
        exercise.outcomes[key] = quietly(exercise, fn, args, errors)
    return exercise.outcomes[key]


def _alike(exercise: Exercise, theirs: tuple, mine: tuple, args: tuple) -> bool:
    """Whether two outcomes are alike: the same kind of error raised, or values the exercise
    counts as the same (within its tolerance, where it has one)."""
    if theirs[0] != mine[0] or theirs[0] == "raised":
        return _equal(theirs, mine)
    try:
        return bool(exercise.same(mine[1], theirs[1], args))
    except Exception:  # a value the exercise cannot compare is no match
        return False


def quietly(exercise: Exercise, fn, args: tuple, errors: bool = False) -> tuple[str, object]:
    """What `fn` does when put to work on a copy of `args`: ("returned", a value) or ("raised",
    the error's type and words; with `errors`, the error itself)."""
    try:
        return "returned", exercise.run(fn, *copy.deepcopy(args))
    except (Exception, KeyboardInterrupt, SystemExit) as e:
        return "raised", e if errors else _error_key(e)


def _error_key(error: BaseException) -> tuple[type, str]:
    """An error as a mistake is matched on: its type and its words (addresses aside)."""
    return type(error), error_of(error)


def _equal(a, b) -> bool:
    try:
        return bool(a == b)
    except Exception:  # a value that cannot compare is not the same value
        return False


def beside(name: str, answer) -> None:
    """The reveal: the learner's answer run beside the reference (the engine's own, or the
    chapter's where the exercise's contract is not the engine's) on the same inputs, the
    chapter's examples and as many more drawn from the exercise's whole domain, and what came
    of it printed (the first input where they part ways, if any). Build it, then compare it with
    the real thing."""
    from .checks import _find

    exercise = _find(name)
    engines = getattr(exercise.reference, "__module__", "").startswith("corecoder.")
    theirs = (say("the engine's ", "引擎的 ") if engines else say("the chapter's ", "本章的 ")) \
        + getattr(exercise.reference, "__qualname__", "reference")
    yours = getattr(answer, "__name__", "yours")
    try:
        judge(exercise, answer)
    except NotImplementedError:
        print(say(f"your {yours} is not written yet: write it above, then run this cell again",
                  f"你的 {yours} 还没写：先在上面写好它，再运行这个单元格"))
        return
    except Hint as parted:
        print(say(f"your {yours} and {theirs} part ways here:",
                  f"你的 {yours} 和{theirs} 在这里结果不同："))
        print(textwrap.indent(str(parted), "  "))
        return
    print(say(f"your {yours} and {theirs} agree on every input: the chapter's examples, and "
              f"up to {exercise.max_examples} more drawn from {exercise.domain[0]}",
              f"你的 {yours} 和{theirs} 在所有输入上结果一致：本章的例子，以及至多 "
              f"{exercise.max_examples} 个随机抽取的输入：{exercise.domain[1]}"))
