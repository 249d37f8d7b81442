"""The chapters keep the course's promises (COURSE.md): notebook code is package code, one code in two
languages, exercises whose checks can fail, and a student edition that runs.

nbval itself (pyproject's addopts) runs every chapter and compares each stored output; these tests cover
what it cannot see.
"""

import ast
import contextlib
import copy
import inspect
import io
import re
import textwrap
from pathlib import Path

import pytest

import corecoder.messages
from corecoder.course.authoring.__main__ import main
from corecoder.course.authoring.execute import run_notebook, tidy
from corecoder.course.authoring.notebook import chapters, headings, is_check, is_exercise, read, tags, twin
from corecoder.course.authoring.student import strip_solutions
from corecoder.course.authoring.sync import export_source
from corecoder.course.checks import verdict
from corecoder.messages import INTERRUPTED

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
ENGLISH = chapters(NOTEBOOKS)
BOTH = [p for e in ENGLISH for p in (e, twin(e))]
CJK = re.compile(r"[\u4e00-\u9fff]")


def test_the_first_chapters_are_there_in_both_languages():
    assert [p.name for p in ENGLISH][:2] == ["00-tour.ipynb", "01-loop.ipynb"]
    assert all(p.exists() for p in BOTH)


# --- notebook code is package code ------------------------------------------------------


def package_definition(module: str, cls: str | None, name: str) -> ast.AST | None:
    body = ast.parse((ROOT / module).read_text(encoding="utf-8")).body
    if cls:
        body = next(n.body for n in body if isinstance(n, ast.ClassDef) and n.name == cls)
    for node in body:
        if getattr(node, "name", None) == name:
            return node
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == [name]:
            return node
    return None


def normalized(node: ast.AST) -> str:
    """ast.dump, with docstrings cleaned as `inspect.cleandoc` does: a method's docstring loses its
    indentation when the method becomes a top-level function in a cell, and Python < 3.13 keeps it."""
    node = copy.deepcopy(node)
    for n in ast.walk(node):
        body = getattr(n, "body", None)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and body \
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            body[0].value.value = inspect.cleandoc(body[0].value.value)
    return ast.dump(node)


def defined(node: ast.AST) -> str | None:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    return None


def export_definitions():
    """(notebook, cell index, module, class, name, node) for every definition in an export cell."""
    for path in BOTH:
        for i, cell in enumerate(read(path).cells):
            target = export_source(cell)
            if target:
                for node in ast.parse(cell.source).body:
                    if defined(node):
                        yield path.name, i, *target, defined(node), node


EXPORTS = list(export_definitions())


def test_chapter_one_exports_the_loop_and_the_legality_check():
    names = {(module, cls, name) for nb, _, module, cls, name, _ in EXPORTS if nb == "01-loop.ipynb"}
    assert {("corecoder/messages.py", None, "check_history"), ("corecoder/agent.py", "Agent", "run"),
            ("corecoder/agent.py", "Agent", "answer"), ("corecoder/messages.py", None, "tool_result")} <= names


@pytest.mark.parametrize("notebook, cell, module, cls, name, node", EXPORTS,
                         ids=[f"{e[0]}:{e[1]}:{e[3] + '.' if e[3] else ''}{e[4]}" for e in EXPORTS])
def test_every_exported_definition_is_identical_to_the_package(notebook, cell, module, cls, name, node):
    shipped = package_definition(module, cls, name)
    assert shipped is not None, f"{notebook} cell {cell} defines {name}, which {module} does not"
    assert normalized(node) == normalized(shipped), (
        f"{notebook} cell {cell}: {name} differs from {module}; run: python -m corecoder.course sync")


def test_a_class_built_method_by_method_has_every_method_of_the_package_class():
    built: dict[tuple, set] = {}
    for notebook, _, module, cls, name, _ in EXPORTS:
        if cls:
            built.setdefault((notebook, module, cls), set()).add(name)
    assert built, "chapter 1 builds Agent one method at a time"
    for (notebook, module, cls), names in built.items():
        body = next(n.body for n in ast.parse((ROOT / module).read_text()).body
                    if isinstance(n, ast.ClassDef) and n.name == cls)
        shipped = {n.name for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        assert names == shipped, f"{notebook}: {cls} lacks {sorted(shipped - names)}"


def test_sketches_are_tagged_and_never_exported():
    for path in BOTH:
        for cell in read(path).cells:
            assert not {"export", "sketch"} <= set(tags(cell)), path.name


def course(capsys, *args) -> tuple[int, str]:
    """Run `python -m corecoder.course ARGS` in this process (nbformat is slow to import: ~1 s)."""
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_sync_check_finds_nothing_to_do(capsys):
    assert course(capsys, "sync", "--check") == (0, "")


# --- one code, two languages ------------------------------------------------------------


@pytest.mark.parametrize("english", ENGLISH, ids=lambda p: p.stem)
def test_the_chinese_twin_has_byte_identical_code_cells_and_outputs(english):
    en, zh = read(english), read(twin(english))
    assert [(c.cell_type, c.id) for c in en.cells] == [(c.cell_type, c.id) for c in zh.cells]
    for a, b in zip(en.cells, zh.cells, strict=True):
        if a.cell_type == "code":
            assert (a.source, a.outputs, a.execution_count, a.metadata) == \
                   (b.source, b.outputs, b.execution_count, b.metadata), f"cell {a.id}"


@pytest.mark.parametrize("english", ENGLISH, ids=lambda p: p.stem)
def test_headings_correspond_one_to_one(english):
    en, zh = headings(read(english)), headings(read(twin(english)))
    assert [level for level, _ in en] == [level for level, _ in zh]
    assert len(en) >= 5


@pytest.mark.parametrize("english", ENGLISH, ids=lambda p: p.stem)
def test_every_chinese_markdown_cell_is_translated(english):
    for cell in read(twin(english)).cells:
        if cell.cell_type == "markdown":
            assert CJK.search(cell.source), f"cell {cell.id} has no Chinese: {cell.source[:80]!r}"


# --- committed as a learner will see them ---------------------------------------------------


@pytest.mark.parametrize("path", BOTH, ids=lambda p: p.name)
def test_notebooks_are_stored_executed_without_errors_or_machine_paths(path):
    nb = read(path)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code), "every code cell ran (nbval skips cells that did not)"
    assert [c.execution_count for c in code] == list(range(1, len(code) + 1)), "one run, top to bottom"
    text = path.read_text(encoding="utf-8")
    assert '"output_type": "error"' not in text
    assert str(ROOT) not in text and "/tmp/" not in text and "application/vnd.jupyter.widget-view" not in text


@pytest.mark.parametrize("english", ENGLISH, ids=lambda p: p.stem)
def test_a_chapter_run_from_the_repository_root_prints_the_same(english):
    # nbval runs each chapter from notebooks/, as JupyterLab does; a learner may run one from the root.
    stored = read(english)
    fresh = tidy(run_notebook(read(english), ROOT))
    for a, b in zip(stored.cells, fresh.cells, strict=True):
        if a.cell_type == "code":
            assert a.outputs == b.outputs, f"cell {a.id}"


def test_sync_check_lists_a_difference_exits_1_and_changes_nothing(tmp_path, capsys):
    for path in BOTH:
        (tmp_path / path.name).write_bytes(path.read_bytes())
    loop = tmp_path / "01-loop.ipynb"
    loop.write_text(loop.read_text(encoding="utf-8").replace("self.max_rounds + 1", "self.max_rounds + 2"),
                    encoding="utf-8")
    before = loop.read_bytes()
    code, out = course(capsys, "--folder", str(tmp_path), "sync", "--check")
    assert code == 1 and "01-loop.ipynb cell" in out and "class Agent): differs from the package: run" in out
    assert loop.read_bytes() == before
    assert course(capsys, "--folder", str(tmp_path), "sync")[0] == 0
    assert course(capsys, "--folder", str(tmp_path), "sync", "--check") == (0, "")
    assert loop.read_bytes() == (NOTEBOOKS / "01-loop.ipynb").read_bytes()


# --- exercises that check ---------------------------------------------------------------


def exercises():
    """(notebook, exercise name, function name, solution cell source) for every exercise cell."""
    for path in ENGLISH:
        cells = read(path).cells
        for i, cell in enumerate(cells):
            if is_exercise(cell):
                following = next(c for c in cells[i + 1:] if c.cell_type == "code")
                assert is_check(following), f"{path.name}: the cell after exercise cell {i} must check it"
                call = next(n for n in ast.walk(ast.parse(following.source)) if isinstance(n, ast.Call))
                yield path.name, call.args[0].value, call.args[1].id, cell.source


EXERCISES = list(exercises())


def answer(source: str, name: str):
    """The function an exercise cell defines. The cell may use what the chapter defined before it: the
    message constructors (export cells, identical to corecoder.messages) and INTERRUPTED."""
    namespace = {**vars(corecoder.messages), "INTERRUPTED": INTERRUPTED}
    exec(textwrap.dedent(source), namespace)  # our own notebook's cell
    return namespace[name]


def run_check(name, fn) -> tuple[bool, str]:
    """Whether `fn` passes, and what `check` would print."""
    passed, told = verdict(name, fn)
    return passed, told + "\n"


# Plausible wrong answers, one list per exercise: each must fail its check.
WRONG = {
    "ch00.script": ["""
def tests_script():  # the answer rides on the tool-call turn: the script runs out before the model can answer
    return [{"text": "1 of 3 tests passed.",
             "tool_calls": [{"name": "bash", "arguments": {"command": "python3 test_stats.py"}}]}]
""", """
def tests_script():  # answers with the result it hopes for, not the one the tests print
    return [{"tool_calls": [{"name": "bash", "arguments": {"command": "python3 test_stats.py"}}]},
            "Done: 3 of 3 tests passed."]
""", """
def tests_script():  # reads the test file instead of running it
    return [{"tool_calls": [{"name": "read_file", "arguments": {"path": "test_stats.py"}}]},
            "1 of 3 tests passed."]
""", """
def tests_script():  # the wrong argument name: bash never runs
    return [{"tool_calls": [{"name": "bash", "arguments": {"cmd": "python3 test_stats.py"}}]},
            "1 of 3 tests passed."]
"""],
    "ch00.count_calls": ["""
def count_tool_calls(messages):  # one per round: misses parallel calls
    counts = {}
    for m in messages:
        if m.get("tool_calls"):
            name = m["tool_calls"][0]["function"]["name"]
            counts[name] = counts.get(name, 0) + 1
    return counts
""", """
def count_tool_calls(messages):  # the script's layout, not the history's: a call has no "name" of its own
    counts = {}
    for m in messages:
        for call in m.get("tool_calls", []):
            counts[call["name"]] = counts.get(call["name"], 0) + 1
    return counts
""", """
def count_tool_calls(messages):  # counts only the calls that worked
    names = {c["id"]: c["function"]["name"] for m in messages for c in m.get("tool_calls", [])}
    counts = {}
    for m in messages:
        if m["role"] == "tool" and not m["content"].startswith(("unknown tool", "bad arguments")):
            counts[names[m["tool_call_id"]]] = counts.get(names[m["tool_call_id"]], 0) + 1
    return counts
"""],
    "ch01.find_orphan": ["""
def find_orphan(messages):  # only looks at the message before: rejects the second of two parallel results
    for i, m in enumerate(messages):
        if m["role"] == "tool" and (i == 0 or not messages[i - 1].get("tool_calls")):
            return i
    return None
""", """
def find_orphan(messages):  # any call ever made counts: misses a call answered twice
    made = set()
    for i, m in enumerate(messages):
        made |= {c["id"] for c in m.get("tool_calls", [])}
        if m["role"] == "tool" and m["tool_call_id"] not in made:
            return i
    return None
"""],
    "ch01.answer_pending": ["""
from corecoder.messages import INTERRUPTED
from corecoder.messages import tool_result

def answer_pending(messages):  # answers every call of the last assistant message, answered or not
    last = [m for m in messages if m["role"] == "assistant"][-1:]
    calls = last[0].get("tool_calls", []) if last else []
    return messages + [tool_result(c["id"], INTERRUPTED) for c in calls]
""", """
from corecoder.messages import INTERRUPTED
from corecoder.messages import tool_result

def answer_pending(messages):  # right answer, but appended to the caller's list
    answered = {m["tool_call_id"] for m in messages if m["role"] == "tool"}
    last = [m for m in messages if m["role"] == "assistant"][-1:]
    for c in (last[0].get("tool_calls", []) if last else []):
        if c["id"] not in answered:
            messages.append(tool_result(c["id"], INTERRUPTED))
    return messages
"""],
    "ch01.run_call": ["""
import json

def run_call(tool, arguments, workspace):  # malformed JSON quietly becomes {}
    try:
        args = json.loads(arguments)
    except json.JSONDecodeError:
        args = {}
    try:
        return tool.run(workspace, **args)
    except Exception as e:
        return f"{tool.name} failed: {e}"
""", """
import json

def run_call(tool, arguments, workspace):  # every problem is a failure: no schema check
    try:
        return tool.run(workspace, **json.loads(arguments))
    except Exception as e:
        return f"{tool.name} failed: {e}"
"""],
}


def test_chapter_one_has_at_least_three_exercises_and_each_has_wrong_answers():
    names = [name for notebook, name, _, _ in EXERCISES if notebook == "01-loop.ipynb"]
    assert len(names) >= 3
    assert {name for _, name, _, _ in EXERCISES} == set(WRONG), "every exercise needs plausible wrong answers"


@pytest.mark.parametrize("english", ENGLISH, ids=lambda p: p.stem)
def test_every_chapter_has_exercises_named_after_it(english):
    names = [name for notebook, name, _, _ in EXERCISES if notebook == english.name]
    assert len(names) >= 2, f"{english.name}: each chapter ends with exercises (COURSE.md, rule 5)"
    assert all(name.startswith(f"ch{english.name[:2]}.") for name in names), names


@pytest.mark.parametrize("notebook, name, function, source", EXERCISES, ids=[e[1] for e in EXERCISES])
def test_the_solution_passes_and_the_student_stub_fails(notebook, name, function, source):
    passed, out = run_check(name, answer(source, function))
    assert passed and out == f"✓ {name} passed\n"
    passed, out = run_check(name, answer(strip_solutions(source), function))
    assert not passed and "not implemented yet" in out


@pytest.mark.parametrize("name, wrong", [(n, w) for n, ws in WRONG.items() for w in ws],
                         ids=[f"{n}-{i}" for n, ws in WRONG.items() for i in range(len(ws))])
def test_a_plausible_wrong_answer_fails_with_a_hint(name, wrong):
    function = re.search(r"^def (\w+)", wrong, re.M).group(1)
    passed, out = run_check(name, answer(wrong, function))
    assert not passed
    assert out.startswith(f"✗ {name}: not yet.\n") and "Traceback" not in out


# --- the student edition ----------------------------------------------------------------


@pytest.fixture(scope="module")
def student(tmp_path_factory):
    out = tmp_path_factory.mktemp("student")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(["student", str(out)]) == 0
    assert sorted(Path(line).name for line in printed.getvalue().splitlines()) == sorted(p.name for p in BOTH)
    return out


def test_the_student_edition_has_no_solutions_and_no_stored_verdicts(student):
    for path in student.glob("*.ipynb"):
        text = path.read_text(encoding="utf-8")
        assert "### BEGIN SOLUTION" not in text and "✓ ch" not in text
        nb = read(path)
        for cell in nb.cells:
            if cell.cell_type == "code" and (is_check(cell) or "raise NotImplementedError" in cell.source):
                assert cell.outputs == [] and cell.execution_count is None


def test_both_languages_of_the_student_edition_have_the_same_code(student):
    for english in ENGLISH:
        en, zh = read(student / english.name), read(student / twin(english).name)
        assert [c.source for c in en.cells if c.cell_type == "code"] == \
               [c.source for c in zh.cells if c.cell_type == "code"]


@pytest.mark.parametrize("english", ENGLISH, ids=lambda p: p.stem)
def test_the_student_edition_runs_top_to_bottom_and_its_checks_fail_cleanly(student, english):
    nb = run_notebook(read(student / english.name), student)  # an error in any cell raises here
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        assert not [o for o in cell.outputs if o.output_type == "error"]
        if is_check(cell):
            printed = "".join(o.get("text", "") for o in cell.outputs)
            assert "not implemented yet" in printed and "Traceback" not in printed
