"""The course kit (corecoder_course/kit.py): a declared exercise is judged by one routine.

For every declared exercise: the engine's own definition passes, the learner's stub is told it
is not implemented yet, every listed mistake fails with its own reason in both languages, the
verdicts are the same on every run and under every hash seed, and authoring/MUTANTS.md is the
current score of the checker against mechanical mutants of the reference, at the target. Then
the ladder itself, on a small exercise declared here: what raised, what changed its input, what
returned another type, what loops forever, what keeps state between calls, and the tiers.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading

import pytest
from hypothesis import strategies as st

from authoring.mutants import SOURCES, TABLE, TARGET, declared, score, sources, table
from corecoder_course.checks import CHECKERS, verdict
from corecoder_course.kit import Exercise, Mistake

EXERCISES = declared()
CHAPTERS = sorted({e.name.split(".")[0] for e in EXERCISES})


def test_chapters_declare_exercises():
    assert "ch04.safe_cut" in {e.name for e in EXERCISES}


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.name)
def test_a_stub_is_told_it_is_not_implemented(exercise):
    def stub(*args):
        raise NotImplementedError

    passed, told = verdict(exercise.name, stub)
    assert not passed and "not implemented yet" in told


# One chapter's verdicts in one language: the reference, then each listed mistake, or the other way
# round. Printed as JSON: {exercise: [[passed, told, shown], ...]} in the order of the reference and
# its mistakes, `shown` the input the verdict shows, as exercise.call writes it in English.
VERDICTS = textwrap.dedent("""
    import json, sys
    from authoring.mutants import declared
    from corecoder_course.checks import verdict
    from corecoder_course.words import speaking

    chapter, language, order = sys.argv[1:]
    found = {}
    for exercise in declared():
        if exercise.name.startswith(chapter + "."):
            shown, call = [], exercise.call

            def logged(args, call=call, shown=shown):
                with speaking("en"):
                    shown.append(call(args))
                return call(args)

            exercise.call = logged
            answers = [exercise.reference, *(wrong for wrong, _ in exercise.wrong())]
            judged, each = [None] * len(answers), range(len(answers))
            for k in each if order == "forward" else reversed(each):
                shown.clear()
                with speaking(language):
                    judged[k] = [*verdict(exercise.name, answers[k]), shown[-1] if shown else None]
            found[exercise.name] = judged
    print(json.dumps(found))
""")


def verdicts(chapter: str, seed: str, language: str, order: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", VERDICTS, chapter, language, order],
                            stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONHASHSEED": seed})


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_reference_passes_every_listed_mistake_fails_with_its_reason_and_every_verdict_is_the_same(chapter):
    # In both languages, and on every run and under every hash seed. Two processes side by side:
    # one judges every answer in English, the reference first; the other, under another hash
    # seed, in Chinese, the last mistake first. Each verdict must name the same mistake's reason
    # in its language and show the same input: one hash seed against another (what hangs on the
    # order of a set shows), and what the checker keeps from the answers judged before against
    # what it keeps from others (the reference's results, remembered by input, come from other
    # inputs). More runs or seeds find nothing these do not, and each one judges every listed
    # mistake again: most of a verdict's time is the search for the smallest failing input.
    runs = [verdicts(chapter, "0", "en", "forward"), verdicts(chapter, "1", "zh", "backward")]
    printed = [run.communicate()[0] for run in runs]
    assert [run.returncode for run in runs] == [0, 0]
    english, chinese = map(json.loads, printed)
    assert sorted(english) == sorted(chinese) == [e.name for e in EXERCISES
                                                  if e.name.startswith(chapter + ".")]
    for name in english:
        assert [(p, shown) for p, _, shown in english[name]] == \
               [(p, shown) for p, _, shown in chinese[name]]
        assert english[name][0][:2] == [True, f"✓ {name} passed"]
        assert chinese[name][0][:2] == [True, f"✓ {name} 通过"]
        judged = zip(english[name][1:], chinese[name][1:], strict=True)
        for (en, zh), (_, mistake) in zip(judged, CHECKERS[name].wrong(), strict=True):
            assert " ".join(en[2].split()) in " ".join(en[1].split())  # the input shown, logged
            for (passed, told, _), why in zip((en, zh), mistake.why, strict=True):
                assert not passed and "Traceback" not in told
                assert " ".join(why.split()) in " ".join(told.split()), told


def _part(text: str, name: str) -> tuple[str, str]:
    """An exercise's row of a mutation table, and its section of equivalents and survivors."""
    row = next((line for line in text.splitlines() if line.startswith(f"| {name} |")), "")
    heading = f"\n## {name}\n"
    return row, text.partition(heading)[2].partition("\n## ")[0] if heading in text else ""


def recorded() -> str:
    """The hash of the sources the table was worked out from ("" if it has none)."""
    found = SOURCES.search(TABLE.read_text(encoding="utf-8"))
    return found[1] if found else ""


def test_the_mutation_table_lists_the_declared_exercises_in_order():
    text = TABLE.read_text(encoding="utf-8")
    assert text.startswith(table([], recorded()))
    rows = [line.split(" | ")[0].removeprefix("| ") for line in text.splitlines()
            if line.startswith("| ch")]
    assert rows == [exercise.name for exercise in EXERCISES], "run: python -m authoring mutants"


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.name)
def test_the_mutation_table_is_current_and_every_exercise_meets_the_target(exercise):
    mine = _part(TABLE.read_text(encoding="utf-8"), exercise.name)
    if recorded() == sources():
        # worked out from these very files, by the same Python and Hypothesis: the same sources
        # give the same verdicts on every run (the test above), so the table stands as it is
        share = mine[0].split(" | ")[-1].removesuffix(" |")
        assert share == "none to mutate" or int(share.removesuffix("%")) >= TARGET * 100, mine
        return
    scored = score(exercise)  # one exercise a test, so that parallel workers share the work
    assert mine == _part(table([scored]), exercise.name), "run: python -m authoring mutants"
    assert scored.share >= TARGET, f"{scored.share:.0%} of the mutants killed"


def test_the_sources_hash_covers_every_file_of_the_engine_and_the_course_package(tmp_path):
    for folder in ("corecoder", "corecoder_course/exercises"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "a.py").write_text("x = 1\n")
    (tmp_path / "corecoder_course" / "data.json").write_text("{}")
    before = sources(tmp_path)
    (tmp_path / "corecoder" / "__pycache__").mkdir()
    (tmp_path / "corecoder" / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"\0")
    assert sources(tmp_path) == before  # Python's own caches are not sources
    for changed in ("corecoder/a.py", "corecoder_course/exercises/a.py", "corecoder_course/data.json"):
        kept = (tmp_path / changed).read_bytes()
        (tmp_path / changed).write_bytes(kept + b" ")
        assert sources(tmp_path) != before, changed
        (tmp_path / changed).write_bytes(kept)
    (tmp_path / "corecoder" / "b.py").write_text("")
    assert sources(tmp_path) != before  # a file added


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

    assert "computed for 0.2 s on this input without returning" in told(spins)


def test_waiting_is_not_computing_and_a_wait_for_nothing_is_told_as_one(monkeypatch):
    # The limit on computing counts the processor's time: a checker's subprocess, or a machine
    # busy with other work, stretches the clock but leaves the verdict alone
    monkeypatch.setattr("corecoder_course.kit.LIMIT", 0.2)
    monkeypatch.setattr("corecoder_course.kit.PATIENCE", 5.0)

    waited = []

    def slow(text):
        if not waited:  # once: longer than LIMIT, on the clock alone
            waited.append(threading.Event().wait(0.4))
        return last_word(text)

    assert verdict("test.last_word", slow) == (True, "✓ test.last_word passed")
    monkeypatch.setattr("corecoder_course.kit.PATIENCE", 0.2)

    def waits_forever(text):
        threading.Event().wait()
        return ""

    assert "waited 0.2 s on this input without returning: for something" in told(waits_forever)


def test_state_kept_between_calls_is_caught():
    seen = []

    def remembers(text):
        seen.append(text)
        return last_word(text) if len(seen) < 3 else "x"

    assert "x" in told(remembers)


def test_a_team_read_as_it_completes_is_shuffled_on_every_run_however_late_it_reads():
    # ch06.team forces the order a team's futures complete in. A reader that comes late, once
    # every task's work is done, would find them all complete, and as_completed gives those in
    # the order of a set: now and then the tasks' own. So the first future completes only once
    # the answer reads, and the verdict is the same however the threads were scheduled.
    from concurrent.futures import ThreadPoolExecutor, as_completed

    from corecoder_course.exercises.ch06 import Team, _ran

    def late_reader(tasks, work, at_once):
        returned, every_work_returned = [], threading.Event()

        def report(task):
            value = work(task)
            returned.append(task)
            if len(returned) == len(tasks):
                every_work_returned.set()
            return value

        with ThreadPoolExecutor(max_workers=at_once) as pool:
            futures = [pool.submit(report, task) for task in tasks]
            every_work_returned.wait()
            return [future.result() for future in as_completed(futures)]

    team = Team(("parser", "lexer", "tests", "docs"), (), 4)
    assert all(_ran(late_reader, team).shuffled for _ in range(30))


def test_the_reference_is_worked_out_once_an_input_whatever_the_answers_judged():
    # Every answer judged meets the same inputs: a reference that starts a process (chapter 7's
    # servers) must not start it again for each one, nor for each mutant of a mutation score.
    inputs = []

    def counted(xs):
        inputs.append(repr(xs))
        return sorted(xs)

    Exercise("test.sorted", counted, lambda: st.tuples(st.lists(st.integers(0, 3), max_size=4)),
             lambda args: f"sorted_copy({args[0]!r})", rule=("sorted", "排好序"),
             examples=[([2, 1],)])
    for answer in (sorted, lambda xs: sorted(xs, reverse=True), lambda xs: list(xs)):
        verdict("test.sorted", answer)
    assert inputs and len(inputs) == len(set(inputs))


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
