"""Every definition of the engine is taught somewhere, once, within each chapter's budget.

Each chapter has a coverage table (notebooks/coverage/NN.py; authoring/coverage.py
says how one reads): what the chapter exports, what it shows, what is not taught and why. The tables of
chapters not written yet are the plan, held to the same rules; a written chapter's table is also held to
its notebook, both ways.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from authoring.coverage import (
    CoverageError,
    definitions,
    exported_lines,
    read_table,
    split_classes,
    tables,
)
from authoring.notebook import chapters, read
from authoring.ruler import definition_name
from authoring.sync import export_source

ROOT = Path(__file__).resolve().parents[2]
TABLES = tables(ROOT / "notebooks" / "coverage")
DEFINITIONS = definitions(split_classes(TABLES), ROOT / "corecoder")
WRITTEN = {p.name[:2]: p for p in chapters(ROOT / "notebooks")}


def entries(way: str) -> list[tuple[str, tuple[str, str]]]:
    """(chapter, (module, name)) for every entry of one way, over all the tables."""
    found = []
    for chapter, table in TABLES.items():
        rows = table.skip if way == "skip" else getattr(table, way)
        found += [(chapter, (row[0], row[1])) for row in rows]
    return found


def test_there_is_a_table_for_every_chapter_of_the_map():
    assert sorted(TABLES) == [f"{n:02d}" for n in range(11)]
    assert set(WRITTEN) <= set(TABLES)


def test_every_definition_of_the_engine_is_exported_shown_or_said_to_be_untaught():
    covered = {entry for way in ("export", "show", "skip") for _, entry in entries(way)}
    missing = sorted(f"{module}::{name}" for module, name in DEFINITIONS if (module, name) not in covered)
    assert missing == [], "add each to a chapter's table (notebooks/coverage/NN.py)"


def test_every_entry_names_a_definition_the_engine_has():
    unknown = sorted(f"{chapter}: {module}::{name}" for way in ("export", "show", "skip")
                     for chapter, (module, name) in entries(way) if (module, name) not in DEFINITIONS)
    assert unknown == []


def test_a_definition_is_exported_once_in_the_whole_course_and_never_also_skipped():
    exported = [entry for _, entry in entries("export")]
    assert sorted({e for e in exported if exported.count(e) > 1}) == []
    skipped = [entry for _, entry in entries("skip")]
    assert sorted(set(exported) & set(skipped)) == [] and len(skipped) == len(set(skipped))


@pytest.mark.parametrize("chapter", sorted(TABLES))
def test_a_chapter_exports_no_more_net_lines_than_its_budget(chapter):
    table = TABLES[chapter]
    assert exported_lines(table, DEFINITIONS) <= table.budget, (
        f"chapter {chapter} exports {exported_lines(table, DEFINITIONS)} net lines, over its budget of "
        f"{table.budget}: show() the rest")
    assert table.budget <= 400, "about 250 to 400 net lines a chapter: the rest is shown"


# What a learner reads, the promise "the core in an afternoon": the export cells of chapters 1-6,
# and the second sitting, chapters 7-9. The chapters' budgets add up to no more than these.
READ = {"chapters 1-6": (range(1, 7), 1_450), "chapters 7-9": (range(7, 10), 650)}


def test_the_benchmarks_readme_quotes_each_chapters_export_and_budget_as_the_tables_have_them():
    text = (ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (\d\d) [^|]*\| ([\d,]+) \| ([\d,]+) \|$", text, re.M)
    assert [row[0] for row in rows] == [f"{n:02d}" for n in range(1, 10)]
    for chapter, exported, budget in rows:
        table = TABLES[chapter]
        assert (int(exported.replace(",", "")), int(budget.replace(",", ""))) == (
            exported_lines(table, DEFINITIONS), table.budget), f"chapter {chapter}"


@pytest.mark.parametrize("part", READ)
def test_what_a_learner_reads_stays_within_the_afternoon(part):
    chapters, promise = READ[part]
    budgets = sum(TABLES[f"{n:02d}"].budget for n in chapters)
    exported = sum(exported_lines(TABLES[f"{n:02d}"], DEFINITIONS) for n in chapters)
    assert exported <= budgets <= promise, (
        f"{part}: {exported} net lines exported, budgets adding up to {budgets}, promised {promise}")


def exported_in(notebook: Path) -> set[tuple[str, str]]:
    """(module, name) for every definition in the notebook's export cells; a method as Class.method."""
    found = set()
    for cell in read(notebook).cells:
        target = export_source(cell)
        if target:
            module, cls = target
            for node in ast.parse(cell.source).body:
                if name := definition_name(node):
                    found.add((module.removeprefix("corecoder/"), f"{cls}.{name}" if cls else name))
    return found


def shown_in(notebook: Path) -> set[str]:
    """What the notebook's code cells pass to show(): `admit`, `Agent.run`."""
    found = set()
    for cell in read(notebook).cells:
        if cell.cell_type != "code":
            continue
        for node in ast.walk(ast.parse(cell.source)):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "show" and node.args:
                found.add(ast.unparse(node.args[0]))
    return found


@pytest.mark.parametrize("chapter", sorted(WRITTEN))
def test_a_written_chapter_exports_exactly_what_its_table_says(chapter):
    assert exported_in(WRITTEN[chapter]) == set(TABLES[chapter].export)


@pytest.mark.parametrize("chapter", sorted(WRITTEN))
def test_a_written_chapter_shows_exactly_what_its_table_says(chapter):
    assert shown_in(WRITTEN[chapter]) == {name for _, name in TABLES[chapter].show}


def test_a_class_split_across_cells_has_its_skeleton_and_every_method_exported():
    # Agent is built one method at a time in chapter 1: each method has an entry, and the class's own
    # entry is its skeleton (the docstring), identity-checked like the methods (tests/course/test_notebooks.py)
    methods = {n for (m, n) in DEFINITIONS if m == "agent.py" and n.startswith("Agent.")}
    assert len(methods) == 12 and ("agent.py", "Agent") in DEFINITIONS
    assert {("agent.py", n) for n in methods | {"Agent"}} <= set(TABLES["01"].export)
    assert DEFINITIONS["agent.py", "Agent"].lines == 1  # the class line: a docstring is free


def test_every_class_split_across_cells_has_a_skeleton_with_a_body():
    # a class whose methods come apart is exported first as its skeleton: decorators, bases, docstring,
    # fields; a class of nothing but methods would have an empty one (give it a docstring)
    from authoring.sync import skeleton

    for entry in sorted(split_classes(TABLES)):
        module, name = entry.split("::")
        source = (ROOT / "corecoder" / module).read_text(encoding="utf-8")
        node = next(n for n in ast.parse(source).body if isinstance(n, ast.ClassDef) and n.name == name)
        shown = skeleton(node, source.splitlines())
        assert shown is not None, f"{entry}: nothing but methods; give the class a docstring"
        ast.parse(shown)  # valid Python on its own


@pytest.mark.parametrize("chapter", sorted(WRITTEN))
def test_a_skeleton_in_a_chapter_is_of_a_class_whose_methods_the_tables_export_apart(chapter):
    # a class written without its methods while its table lists it whole would teach the methods nowhere
    from authoring.sync import is_skeleton

    split = split_classes(TABLES)
    for cell in read(WRITTEN[chapter]).cells:
        if target := export_source(cell):
            module = target[0].removeprefix("corecoder/")
            shipped = {n.name: n for n in ast.parse((ROOT / target[0]).read_text(encoding="utf-8")).body
                       if isinstance(n, ast.ClassDef)}
            for node in ast.parse(cell.source).body:
                if is_skeleton(node) and not is_skeleton(shipped[node.name]):  # the methods are elsewhere
                    assert f"{module}::{node.name}" in split, node.name


def test_a_table_that_cannot_be_read_says_why(tmp_path):
    cases = {"budget = 'lots'\n": "needs `budget", "budget = 10\nimport os\n": "only `name = literal`",
             "budget = 10\nskip = [{'agent.py': 'x'}]\n": "says why", "budget = 10\nextra = {}\n": "unknown keys",
             "budget = 10\nexport = {'agent.py': ['run']}\n": "the names as one string",
             "budget = 10\nexport = []\n": "a dict", "budget = 10\nskip = ['x']\n": "a dict",
             "budget = True\n": "needs `budget"}
    for n, (text, says) in enumerate(cases.items()):
        path = tmp_path / f"{n:02d}.py"
        path.write_text(text)
        with pytest.raises(CoverageError, match=says):
            read_table(path)


# --- the files draw the same line as the tables ---------------------------------------------------

MARK = "# --- defences"


def used_at_import(node) -> set[str]:
    """The names a top-level statement uses the moment Python runs it: a function's defaults and
    decorators (not its body, which runs later); a class's bases, decorators and body, each of
    its methods taken as a function; any other statement whole."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        parts = [*node.args.defaults, *node.args.kw_defaults, *node.decorator_list]
    elif isinstance(node, ast.ClassDef):
        return {name for part in [*node.bases, *node.decorator_list] for name in used_at_import(part)
                } | {name for statement in node.body for name in used_at_import(statement)}
    else:
        parts = [node]
    return {sub.id for part in parts if part for sub in ast.walk(part) if isinstance(sub, ast.Name)}


def placed(module: str) -> tuple[dict[str, int], int | None, set[str]]:
    """Where each definition of an engine module starts (methods as `Class.method`), the line of
    its defences mark (None: it has none), and the names that what stands above the mark needs
    the moment it is defined (a class body's constants, a default argument): those must come
    first, whatever the tables say, or the module would not import."""
    source = (ROOT / "corecoder" / module).read_text(encoding="utf-8")
    mark = next((n for n, line in enumerate(source.splitlines(), 1)
                 if line.strip().startswith(MARK)), None)
    starts, needed = {}, set()
    for node in ast.parse(source).body:
        name = definition_name(node)
        if name is None:
            continue
        starts[name] = node.lineno
        methods = [m for m in getattr(node, "body", []) if isinstance(m, ast.FunctionDef)]
        starts |= {f"{name}.{m.name}": m.lineno for m in methods}
        if mark is None or node.lineno < mark:
            needed |= used_at_import(node)
    return starts, mark, needed


def engine_modules() -> list[str]:
    from benchmarks.lines import ENGINE, layer
    return sorted({module for module, _ in DEFINITIONS if layer(module) in ENGINE})


@pytest.mark.parametrize("module", engine_modules())
def test_the_defences_mark_draws_the_line_the_tables_draw(module):
    """What a chapter exports sits above its module's `# --- defences` mark, what the course
    skips sits below it: so "the afternoon" is the same subset in the notebooks and in the
    files, and the budget's hardening rows measure the lines no chapter teaches."""
    starts, mark, needed = placed(module)
    below = {name for name, line in starts.items() if mark is not None and line > mark}
    exported = {name for _, (m, name) in entries("export") if m == module}
    skipped = {name for _, (m, name) in entries("skip") if m == module}
    assert sorted(exported & below) == [], f"corecoder/{module}: exported, yet below the mark"
    above = skipped - below - needed - {"__all__"}  # a package's public names: not code
    assert sorted(above) == [], f"corecoder/{module}: skipped, yet above the mark (or no mark)"
