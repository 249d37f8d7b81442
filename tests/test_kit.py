"""The course kit (corecoder_course/kit.py): a declared exercise is judged by one routine.

For every declared exercise: the engine's own definition passes, the learner's stub is told it
is not implemented yet, every listed mistake fails with its own reason in both languages, the
verdicts are the same on every run and under every hash seed, and authoring/MUTANTS.md is the
current score of the checker against mechanical mutants of the reference, at the target. Then
the ladder itself, on a small exercise declared here: what raised, what changed its input, what
returned another type, what loops forever, what keeps state between calls, and the tiers.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
from hypothesis import strategies as st

from authoring.mutants import TABLE, TARGET, declared, score, table
from corecoder_course.checks import CHECKERS, verdict
from corecoder_course.kit import Exercise, Mistake
from corecoder_course.words import speaking

EXERCISES = declared()
MISTAKES = [(e.name, k) for e in EXERCISES for k in range(len(e.mistakes))]


def test_chapters_declare_exercises():
    assert "ch04.safe_cut" in {e.name for e in EXERCISES}


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.name)
def test_the_engines_own_definition_passes_and_a_stub_is_not_implemented(exercise):
    assert verdict(exercise.name, exercise.reference) == (True, f"✓ {exercise.name} passed")

    def stub(*args):
        raise NotImplementedError

    passed, told = verdict(exercise.name, stub)
    assert not passed and "not implemented yet" in told


@pytest.mark.parametrize("name, k", MISTAKES, ids=[f"{n}-{k}" for n, k in MISTAKES])
def test_every_listed_mistake_fails_with_its_own_reason_in_both_languages(name, k):
    exercise = CHECKERS[name]
    wrong, mistake = exercise.wrong()[k]
    for language, why in zip(("en", "zh"), mistake.why, strict=True):
        with speaking(language):
            passed, told = verdict(name, wrong)
        assert not passed and "Traceback" not in told
        assert " ".join(why.split()) in " ".join(told.split()), told


VERDICTS = textwrap.dedent("""
    from authoring.mutants import declared
    from corecoder_course.checks import verdict
    for exercise in declared():
        print(verdict(exercise.name, exercise.reference))
        for wrong, _ in exercise.wrong():
            print(*{verdict(exercise.name, wrong) for _ in range(2)})  # one verdict, twice
""")


def test_every_verdict_is_the_same_on_every_run_and_under_every_hash_seed():
    # A second run in the same process finds what a checker keeps between runs; other hash seeds
    # find what hangs on the order of a set. More runs of either find nothing a second does not,
    # and each one judges every listed mistake again: three seeds, two runs each.
    runs = [subprocess.Popen([sys.executable, "-c", VERDICTS], stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONHASHSEED": seed})
            for seed in ("0", "1", "2")]  # side by side
    printed = {run.communicate()[0] for run in runs}
    assert [run.returncode for run in runs] == [0, 0, 0] and len(printed) == 1
    verdicts = printed.pop().splitlines()
    assert len(verdicts) == len(EXERCISES) + len(MISTAKES)
    assert all(line.count("(False, ") == 1 for line in verdicts if "(True, " not in line)


def _part(text: str, name: str) -> tuple[str, str]:
    """An exercise's row of a mutation table, and its section of equivalents and survivors."""
    row = next((line for line in text.splitlines() if line.startswith(f"| {name} |")), "")
    heading = f"\n## {name}\n"
    return row, text.partition(heading)[2].partition("\n## ")[0] if heading in text else ""


def test_the_mutation_table_lists_the_declared_exercises_in_order():
    text = TABLE.read_text(encoding="utf-8")
    assert text.startswith(table([]))
    rows = [line.split(" | ")[0].removeprefix("| ") for line in text.splitlines()[7:] if line.startswith("| ")]
    assert rows == [exercise.name for exercise in EXERCISES], "run: python -m authoring mutants"


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.name)
def test_the_mutation_table_is_current_and_every_exercise_meets_the_target(exercise):
    scored = score(exercise)  # one exercise a test, so that parallel workers share the work
    mine = _part(TABLE.read_text(encoding="utf-8"), exercise.name)
    assert mine == _part(table([scored]), exercise.name), "run: python -m authoring mutants"
    assert scored.share >= TARGET, f"{scored.share:.0%} of the mutants killed"


# --- the ladder, on an exercise declared here -------------------------------------------

def last_word(text: str) -> str:
    """The last word of `text` ("" if it has none)."""
    words = text.split()
    return words[-1] if words else ""


LAST_WORD = Exercise(
    "test.last_word", last_word, lambda: st.tuples(st.text(" ab\t\n中")),
    lambda args: f"last_word({args[0]!r})",
    rule=("the last run of characters that are not whitespace", "最后一段不含空白的字符"),
    shape=("text.split()[-1], or '' when there is none", "text.split()[-1]，没有就返回 ''"),
    examples=[("a b",), ("",)],
    mistakes=[Mistake("return words[-1] if words else \"\"", "return words[0] if words else \"\"",
                      ("the last word, not the first", "是最后一个词，不是第一个"))],
)


def told(answer, tries: int = 1) -> str:
    passed, text = verdict("test.last_word", answer, tries)
    assert not passed
    return text


def test_an_answer_that_raises_is_shown_the_input_and_the_rule():
    text = told(lambda text: text.split()[-1])
    assert "last_word('')" in text and "IndexError" in text and "the last run of" in text


def test_a_known_mistake_is_named_by_its_reason():
    assert "the last word, not the first" in told(lambda text: (text.split() or [""])[0])


def test_a_wrong_type_is_told_before_the_value():
    assert "return a str" in told(lambda text: text.split()[-1:])


def test_generated_inputs_catch_what_the_examples_miss_and_show_the_smallest():
    text = told(lambda text: text.split(" ")[-1])  # right on both examples; tabs and newlines
    assert "last_word(" in text and ("\\t" in text or "\\n" in text), text


def test_an_answer_that_changes_its_input_is_told_so():
    exercise = Exercise("test.first", lambda xs: xs[0] if xs else None,
                        lambda: st.tuples(st.lists(st.integers())), lambda args: f"first({args})",
                        rule=("the first item", "第一项"), examples=[([1, 2],)])
    passed, text = verdict("test.first", lambda xs: xs.pop(0) if xs else None)
    assert not passed and "changed the input" in text and exercise.name in CHECKERS


def test_a_loop_that_never_ends_is_stopped(monkeypatch):
    monkeypatch.setattr("corecoder_course.kit.LIMIT", 0.2)

    def spins(text):
        while text:
            pass
        return ""

    assert "did not return within 0.2 s" in told(spins)


def test_state_kept_between_calls_is_caught():
    seen = []

    def remembers(text):
        seen.append(text)
        return last_word(text) if len(seen) < 3 else "x"

    assert "x" in told(remembers)


def test_the_shape_is_told_from_the_second_failure_on():
    first, second = told(lambda text: "", tries=1), told(lambda text: "", tries=2)
    assert "text.split()[-1]" not in first and "text.split()[-1]" in second


def test_a_chapter_that_cannot_load_says_what_it_needs(monkeypatch):
    def missing(name):
        raise ModuleNotFoundError("No module named 'hypothesis'", name="hypothesis")

    monkeypatch.setattr("importlib.import_module", missing)
    passed, text = verdict("ch42.anything", len)
    assert not passed and "'hypothesis'" in text and "corecoder-course[course]" in text


def test_a_reference_that_refuses_an_input_is_the_spec_too():
    def parse_port(text):
        port = int(text)
        if not 0 < port < 65536:
            raise ValueError(f"no port: {port}")
        return port

    Exercise("test.port", parse_port, lambda: st.tuples(st.integers(-5, 70_000).map(str)),
             lambda args: f"parse_port({args[0]!r})", rule=("1 to 65535", "1 到 65535"),
             examples=[("80",)])
    passed, text = verdict("test.port", int)  # never refuses
    assert not passed and "expected: raises ValueError" in text and "returned int" in text
    assert verdict("test.port", parse_port)[0]


# --- derive before the reveal ------------------------------------------------------------

def chapter_of(exercise: Exercise) -> list:
    """The cells of the exercise's chapter, in English."""
    from authoring.notebook import chapters, read

    return read(next(p for p in chapters() if p.name[:2] == exercise.name[2:4])).cells


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.name)
def test_an_exercise_that_derives_a_definition_comes_before_its_reveal_and_is_run_beside_it(
        exercise):
    """An exercise whose reference the chapter exports is written before the export cell that
    reveals it, and the cell after the reveal runs the learner's answer beside the engine's."""
    import ast

    from authoring.notebook import is_exercise, tags

    cells = chapter_of(exercise)
    reveals = [i for i, c in enumerate(cells) if "export" in tags(c) and any(
        isinstance(node, ast.FunctionDef) and node.name == exercise.reference.__name__
        for node in ast.parse(c.source).body)]
    if not reveals:
        return  # a reference the chapter never shows: nothing to derive before
    asked = next(i for i, c in enumerate(cells) if is_exercise(c)
                 and f'check("{exercise.name}"' in cells[i + 1].source)
    assert asked < reveals[0], f"{exercise.name} is asked after its reveal (cell {reveals[0]})"
    assert cells[reveals[0] + 1].source.startswith(f'beside("{exercise.name}"')
