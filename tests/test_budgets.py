"""Net-line budgets: each chapter of the engine, the hardening layer and the totals are held to a limit.

Measured by benchmarks/lines.py: a line counts if it carries code; comments and docstrings are free, so
no budget ever rewards deleting an explanation to make room. In the heavy modules the lines after the
marked `# --- defences` line count as the hardening layer, apart from the chapter's idea. A budget may
go down as code is simplified, never up without a reason in the commit that raises it.

What a learner reads, the export cells, has budgets of its own (tests/course/test_coverage.py: chapters 1-6
at most 1,450 net lines, 7-9 at most 650); the totals here are the engine's ceilings, hardening
included.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.lines import ENGINE, checkers, measure, totals

ROOT = Path(__file__).resolve().parent.parent

# Each row is the measure at the commit that last moved it; why each one moved (every raise since the
# reshape, #27's move of the defences marks to where the coverage tables draw the line, and #38's ten
# classes of defence) is in benchmarks/README.md, beside the before/after table. "chapters 1-6" and
# "engine" are ceilings.
BUDGETS = {
    "chapter 1": 318, "chapter 2": 842, "chapter 3": 325, "chapter 4": 193, "chapter 5": 74,
    "chapter 6": 141, "chapter 7": 500, "chapter 8": 378, "chapter 9": 335,
    "hardening of chapters 1-6": 753, "hardening of chapters 7-9": 225,
    "chapters 1-6": 2_646, "engine": 4_084,
}
MEASURED = totals(measure(ROOT / "corecoder"))


@pytest.mark.parametrize("layer", BUDGETS)
def test_every_layer_stays_within_its_budget(layer):
    assert MEASURED[layer] <= BUDGETS[layer], (
        f"{layer}: {MEASURED[layer]:,} net lines, over its budget of {BUDGETS[layer]:,} (python -m benchmarks.lines)")


def test_the_budgets_name_every_chapter_and_add_up():
    assert {f"chapter {n}" for n in ENGINE} <= set(BUDGETS)
    assert MEASURED["engine"] == sum(MEASURED[f"chapter {n}"] for n in ENGINE) + MEASURED[
        "hardening of chapters 1-6"] + MEASURED["hardening of chapters 7-9"]
    assert MEASURED["chapters 1-6"] == sum(MEASURED[f"chapter {n}"] for n in range(1, 7)) + MEASURED[
        "hardening of chapters 1-6"]


def test_the_heavy_modules_put_their_defences_after_the_idea():
    modules = measure(ROOT / "corecoder")
    heavy = ["tools/edit.py", "tools/search.py", "tools/bash.py", "tools/read.py", "llm.py", "mcp/client.py",
             "session.py", "checkpoints.py", "files.py"]
    assert [m for m in heavy if not modules[m]["defences"]] == []
    assert all(modules[m]["idea"] > 0 for m in heavy)


def test_the_engine_is_written_at_100_columns_or_fewer():
    modules = measure(ROOT / "corecoder")
    assert {name: m["over_100"] for name, m in modules.items() if m["over_100"]} == {}


def test_the_ruler_counts_code_not_explanation():
    from benchmarks.lines import measure_module

    source = '"""A docstring\nof two lines."""\n\n# a comment\nx = 1  # and its comment\n\n\ndef f():\n' \
             '    """Its docstring."""\n    return x\n# --- defences\ny = 2\n'
    assert measure_module(source) == {"idea": 3, "defences": 1, "physical": 12, "over_100": 0}


# What one exercise's checker may cost in code, its share of the kit included (#26: ~195 before the
# kit, 117 with it). Words are free: hints, rules and each mistake's reason in two languages are
# explanation a learner reads, as a docstring is. Each chapter's own checkers are held to it too, so a
# new chapter cannot lean on the old ones' average.
CHECKER_CODE_PER_EXERCISE = 120


def test_a_checker_costs_at_most_its_budget_of_code_per_exercise():
    rows = checkers()
    assert rows["per exercise"]["code"] <= CHECKER_CODE_PER_EXERCISE, rows["per exercise"]
    over = {name: round(r["code"] / r["exercises"]) for name, r in rows.items()
            if r["exercises"] and name.startswith("ch") and r["code"] / r["exercises"] > CHECKER_CODE_PER_EXERCISE}
    assert over == {}, "net lines of code per exercise (python -m benchmarks.lines)"


def test_the_word_ruler_counts_only_lines_of_words():
    from authoring.ruler import word_lines

    source = 'RULE = ("a rule, "\n        "in words",\n        f"with {x!r}")\nsay(\n    "more words",\n)\n'
    assert word_lines(source) == {2, 3, 5}  # a name on the line makes it code, so does a lone ")"
