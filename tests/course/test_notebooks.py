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
import json
import linecache
import re
import textwrap
import zlib
from pathlib import Path

import pytest

import corecoder.messages
from authoring.__main__ import main
from authoring.execute import run_notebook
from authoring.notebook import (
    chapters,
    headings,
    in_chinese,
    is_check,
    is_exercise,
    is_language,
    is_solution,
    read,
    speaks,
    tags,
    twin,
)
from authoring.student import stub
from authoring.sync import export_source, is_skeleton
from corecoder.messages import INTERRUPTED
from corecoder_course.checks import verdict
from corecoder_course.kit import unshrunk

ROOT = Path(__file__).resolve().parents[2]
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
    if is_skeleton(node):  # a class without its methods: its decorators, bases, docstring and fields
        shipped = copy.deepcopy(shipped)
        shipped.body = [n for n in shipped.body if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    assert normalized(node) == normalized(shipped), (
        f"{notebook} cell {cell}: {name} differs from {module}; run: python -m authoring sync")


def test_a_class_built_method_by_method_has_its_skeleton_and_each_method_exported_once_in_the_course():
    # tests/course/test_coverage.py holds each class to the chapters' tables (a method may come in a later chapter);
    # here: within the notebooks written so far, no method is exported twice, and each built class has its skeleton
    english = [e for e in EXPORTS if not e[0].endswith(".zh.ipynb")]
    methods = [(module, cls, name) for _, _, module, cls, name, _ in english if cls]
    assert methods and len(methods) == len(set(methods)), "a method is exported once in the whole course"
    skeletons = {(module, name) for _, _, module, cls, name, node in english if not cls and is_skeleton(node)}
    assert {(module, cls) for module, cls, _ in methods} <= skeletons, "a class built in cells has its skeleton"


def test_the_class_reads_in_the_package_in_the_order_the_chapter_builds_it():
    # Agent's docstring says so: a reader of corecoder/agent.py meets the methods as chapter 1 wrote them
    built = [name for notebook, _, module, cls, name, _ in EXPORTS if notebook == "01-loop.ipynb" and cls == "Agent"]
    body = next(n.body for n in ast.parse((ROOT / "corecoder/agent.py").read_text()).body
                if isinstance(n, ast.ClassDef) and n.name == "Agent")
    assert built == [n.name for n in body if isinstance(n, ast.FunctionDef)]


def test_sketches_are_tagged_and_never_exported():
    for path in BOTH:
        for cell in read(path).cells:
            assert not {"export", "sketch"} <= set(tags(cell)), path.name


def course(capsys, *args) -> tuple[int, str]:
    """Run `python -m authoring ARGS` in this process (nbformat is slow to import: ~1 s)."""
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_sync_check_finds_nothing_to_do(capsys):
    assert course(capsys, "sync", "--check") == (0, "")


# --- one code, two languages ------------------------------------------------------------


@pytest.mark.parametrize("english", ENGLISH, ids=lambda p: p.stem)
def test_the_chinese_twin_has_the_same_code_and_outputs_but_for_the_language_cell_and_what_the_helpers_say(english):
    # The mechanism: one code cell, tagged `language`, imports the helpers from corecoder_course.zh instead
    # of corecoder_course; every other code cell is byte-identical. Outputs are identical too, except in the
    # cells that call a helper that speaks (a verdict, the step-through twin): there they are in Chinese.
    en, zh = read(english), read(twin(english))
    assert [(c.cell_type, c.id) for c in en.cells] == [(c.cell_type, c.id) for c in zh.cells]
    language = [c for c in en.cells if is_language(c)]
    assert len(language) == 1 and language[0] is next(c for c in en.cells if c.cell_type == "code")
    for a, b in zip(en.cells, zh.cells, strict=True):
        if a.cell_type != "code":
            continue
        assert b.source == (in_chinese(a.source) if is_language(a) else a.source), f"cell {a.id}"
        assert (a.execution_count, a.metadata) == (b.execution_count, b.metadata), f"cell {a.id}"
        if speaks(a):
            shown = "".join(o.get("text", "") + o.get("data", {}).get("text/plain", "") for o in b.outputs)
            assert CJK.search(shown), f"cell {a.id}: the Chinese notebook's helpers speak Chinese"
        else:
            assert a.outputs == b.outputs, f"cell {a.id}"


@pytest.mark.parametrize("path", BOTH, ids=lambda p: p.name)
def test_each_chapter_draws_its_diagram_in_markdown_as_an_svg_in_its_language(path):
    # markdown, not a code cell's output: GitHub shows no SVG that a code cell prints
    import base64
    import xml.etree.ElementTree as ET

    cells = [c for c in read(path).cells if c.cell_type == "markdown" and "diagram" in tags(c)]
    assert len(cells) == 1, "a chapter has its diagram"
    m = re.fullmatch(r"!\[([^\]]+)\]\(data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)\)", cells[0].source)
    assert m, "one image whose source is the SVG itself: nothing beside the notebook, no network"
    svg = ET.fromstring(base64.b64decode(m[2]))
    labels = " ".join(t.text or "" for t in svg.iter("{http://www.w3.org/2000/svg}text"))
    assert labels.strip() and bool(CJK.search(labels)) == path.name.endswith(".zh.ipynb")
    assert bool(CJK.search(m[1])) == path.name.endswith(".zh.ipynb"), "its description, in the same language"


@pytest.mark.parametrize("path", BOTH, ids=lambda p: p.name)
def test_the_course_helpers_are_imported_in_the_language_cell_only(path):
    for cell in read(path).cells:
        if cell.cell_type == "code" and not is_language(cell):
            assert not re.search(r"^\s*from corecoder\.course(\.zh)? import", cell.source, re.M), cell.id


@pytest.mark.parametrize("path", BOTH, ids=lambda p: p.name)
def test_no_stretch_of_code_cells_prints_nothing(path):
    # the export-then-check rhythm: a definition is followed by a cell that exercises it
    silent = 0
    for cell in read(path).cells:
        if cell.cell_type == "code":
            silent = 0 if cell.outputs else silent + 1
            assert silent <= 2, f"{path.name}: cell {cell.id} is the third code cell in a row that prints nothing"


def test_chapter_one_runs_on_chapter_one_pieces_only():
    """No code of chapter 1 uses a later chapter's piece (a message may name one: the error for
    `Agent(llm=llm)` says where the finished agent is)."""
    later = {"build_agent", "Compactor", "RunInParallel", "AgentTool", "workers", "project_instructions", "LLM"}
    for path in (NOTEBOOKS / "01-loop.ipynb", NOTEBOOKS / "01-loop.zh.ipynb"):
        for cell in read(path).cells:
            if cell.cell_type == "code":
                used = {getattr(node, "id", None) or getattr(node, "attr", None) or getattr(node, "name", None)
                        for node in ast.walk(ast.parse(cell.source))
                        if isinstance(node, (ast.Name, ast.Attribute, ast.alias))}
                assert used & later == set(), f"{path.name} cell {cell.id}: {sorted(used & later)}"


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


def test_sync_check_lists_a_difference_exits_1_and_changes_nothing(tmp_path, capsys):
    import shutil

    for path in BOTH:
        (tmp_path / path.name).write_bytes(path.read_bytes())
    shutil.copytree(NOTEBOOKS / "coverage", tmp_path / "coverage")  # (and no essays beside the folder)
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
    """(notebook, exercise name, function name, solution cell source, learner's cell source) for every exercise:
    the learner's cell, then its check, then the solution folded away."""
    for path in ENGLISH:
        cells = [c for c in read(path).cells if c.cell_type == "code"]
        for i, cell in enumerate(cells):
            if is_exercise(cell):
                check_cell, solution = cells[i + 1], cells[i + 2]
                assert is_check(check_cell), f"{path.name}: the cell after exercise {cell.id} must check it"
                assert is_solution(solution), f"{path.name}: exercise {cell.id}'s solution follows its check"
                call = next(n for n in ast.walk(ast.parse(check_cell.source)) if isinstance(n, ast.Call))
                yield path.name, call.args[0].value, call.args[1].id, solution.source, cell.source


EXERCISES = list(exercises())


def answer(source: str, name: str):
    """The function (or class) an exercise cell defines (a solution's closing check left out). The cell may use
    what the chapter defined before it: the message constructors (export cells, identical to corecoder.messages),
    INTERRUPTED, and the call path (admit, perform: chapter 1 imports them before its last exercise); in chapter
    2, the tools' pieces (Tool, ToolError, split_lines, whole_line_breaks, lines_of), Workspace and Path; in
    chapter 3, ToolCall and Usage (corecoder.messages), Price (corecoder.cli.pricing), json, and _is_json (an export
    cell of corecoder/stream.py); in chapter 5, ThreadPoolExecutor (the export cell of corecoder/executor.py
    imports it); in chapter 6, Agent, Cancellable and WORKER_ROUNDS (the export cells of corecoder/subagents.py);
    in chapter 8, git_root (the export cell of corecoder/workspace.py)."""
    from concurrent.futures import ThreadPoolExecutor

    from corecoder.agent import Agent
    from corecoder.calls import admit, perform
    from corecoder.cli.pricing import Price
    from corecoder.messages import ToolCall, Usage
    from corecoder.stream import _is_json
    from corecoder.subagents import WORKER_ROUNDS, Cancellable
    from corecoder.tool import Tool, ToolError, problems
    from corecoder.tools.edit import lines_of, whole_line_breaks
    from corecoder.tools.read import split_lines
    from corecoder.workspace import Workspace, git_root

    namespace = {**vars(corecoder.messages), "INTERRUPTED": INTERRUPTED, "admit": admit, "perform": perform,
                 "json": json, "problems": problems, "check": lambda *args: None,
                 "Tool": Tool, "ToolError": ToolError, "split_lines": split_lines,
                 "whole_line_breaks": whole_line_breaks, "lines_of": lines_of, "Workspace": Workspace, "Path": Path,
                 "ToolCall": ToolCall, "Usage": Usage, "Price": Price, "_is_json": _is_json,
                 "ThreadPoolExecutor": ThreadPoolExecutor, "Agent": Agent, "Cancellable": Cancellable,
                 "WORKER_ROUNDS": WORKER_ROUNDS, "git_root": git_root}
    source = textwrap.dedent(source)
    where = f"<a cell defining {name}, {zlib.crc32(source.encode()):08x}>"  # our own notebook's
    linecache.cache[where] = (len(source), None, source.splitlines(True), where)  # as IPython keeps
    exec(compile(source, where, "exec"), namespace)  # a cell: a hook or a server is written out
    return namespace[name]


def run_check(name, fn) -> tuple[bool, str]:
    """Whether `fn` passes, and what `check` would print."""
    passed, told = verdict(name, fn)
    return passed, told + "\n"


# The waiting ids kept in a set: its order is the hash order, which PYTHONHASHSEED changes.
WRONG_BY_SET = """
from corecoder.messages import INTERRUPTED
from corecoder.messages import tool_result

def answer_pending(messages):  # waiting ids in a set: the results come in hash order, not call order
    answered, i = set(), len(messages)
    while i > 0 and messages[i - 1]["role"] == "tool":
        i -= 1
        answered.add(messages[i]["tool_call_id"])
    if i == 0 or messages[i - 1]["role"] != "assistant":
        return list(messages)
    waiting = {c["id"] for c in messages[i - 1].get("tool_calls", [])} - answered
    return messages + [tool_result(c, INTERRUPTED) for c in waiting]
"""

# Plausible wrong answers, one list per exercise: each must fail its check.
WRONG = {
    "ch00.script": ["""
def tests_script():  # "11 of 3 tests passed" holds the summary line as a substring, not as what it says
    return [{"tool_calls": [{"name": "bash", "arguments": {"command": "python3 test_stats.py"}}]},
            "I ran the tests: 11 of 3 tests passed."]
""", """
def tests_script():  # echo again, with the test file's name in the command to look like a test run
    return [{"tool_calls": [{"name": "bash", "arguments": {"command": "echo 1 of 3 tests passed test_stats.py"}}]},
            "1 of 3 tests passed."]
""", """
def tests_script():  # a denial in Chinese
    return [{"tool_calls": [{"name": "bash", "arguments": {"command": "python3 test_stats.py"}}]},
            "测试并没有显示 1 of 3 tests passed。"]
""", """
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
""", """
def tests_script():  # games the summary line: bash prints it, the tests never run
    return [{"tool_calls": [{"name": "bash", "arguments": {"command": "echo '1 of 3 tests passed'"}}]},
            "The tests say: 1 of 3 tests passed."]
""", """
def tests_script():  # quotes the summary line, but to deny it
    return [{"tool_calls": [{"name": "bash", "arguments": {"command": "python3 test_stats.py"}}]},
            "It is not true that 1 of 3 tests passed."]
"""],
    "ch00.count_calls": ["""
def count_tool_calls(messages):  # counts only the calls that worked
    names = {c["id"]: c["function"]["name"] for m in messages for c in m.get("tool_calls", [])}
    counts = {}
    for m in messages:
        if m["role"] == "tool" and not m["content"].startswith(("unknown tool", "bad arguments")):
            counts[names[m["tool_call_id"]]] = counts.get(names[m["tool_call_id"]], 0) + 1
    return counts
"""],
    "ch01.find_orphan": ["""
def find_orphan(messages):  # forgets to return at the first orphan: it returns the last one
    waiting, orphan = [], None
    for i, m in enumerate(messages):
        if m["role"] == "tool":
            if m["tool_call_id"] in waiting:
                waiting.remove(m["tool_call_id"])
            else:
                orphan = i
        else:
            waiting = [c["id"] for c in m.get("tool_calls", [])]
    return orphan
""", """
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

def answer_pending(messages):  # the first assistant message with calls, not the last
    answered = {m["tool_call_id"] for m in messages if m["role"] == "tool"}
    calls = next((m["tool_calls"] for m in messages if m.get("tool_calls")), [])
    if messages and messages[-1]["role"] == "assistant" and not messages[-1].get("tool_calls"):
        return list(messages)
    return messages + [tool_result(c["id"], INTERRUPTED) for c in calls if c["id"] not in answered]
""", WRONG_BY_SET, """
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
    "ch01.stop_on_failure": ["""
def stop_on_failure(calls, agent, results):  # runs every call, then drops the results after the failure
    for call in calls:
        job = admit(agent, call)
        results[call.id] = (job, perform(agent, job, agent.workspace))
    failed = False
    for call in calls:
        job, result = results.pop(call.id)
        if not failed:
            results[call.id] = result
        failed = failed or bool(job.refusal) or result.startswith(f"{call.name} failed:")
""", """
def stop_on_failure(calls, agent, results):  # stores the admitted job, not its result
    for call in calls:
        results[call.id] = admit(agent, call)
""", """
def stop_on_failure(calls, agent, results):  # returns the results instead of filling them: all interrupted
    return {call.id: perform(agent, admit(agent, call), agent.workspace) for call in calls}
""", """
def stop_on_failure(calls, agent, results):  # raises to stop: the user's turn ends with an exception
    for call in calls:
        results[call.id] = perform(agent, admit(agent, call), agent.workspace)
        if results[call.id].startswith(f"{call.name} failed:"):
            raise RuntimeError("a call failed")
""", """
def stop_on_failure(calls, agent, results):  # "failed" anywhere: a file that says "failed" stops the batch
    for call in calls:
        results[call.id] = perform(agent, admit(agent, call), agent.workspace)
        if "failed" in results[call.id]:
            return
""", """
def stop_on_failure(calls, agent, results):  # stops before the failing call runs: the model never learns why
    for call in calls:
        job = admit(agent, call)
        if job.refusal or not agent.workspace.resolve(job.args.get("path", ".")).exists():
            return
        results[call.id] = perform(agent, job, agent.workspace)
""", """
stopped = []

def stop_on_failure(calls, agent, results):  # remembers a failure across batches: the next round stops too
    for call in calls:
        if stopped:
            return
        job = admit(agent, call)
        results[call.id] = perform(agent, job, agent.workspace)
        if job.refusal or results[call.id].startswith(f"{call.name} failed:"):
            stopped.append(call.id)
"""],
    "ch02.tool": ["""
class CountLines(Tool):  # a schema without "type" or "required": {} reaches run, fails with a TypeError
    name = "count_lines"
    description = "Count the lines of a text file."
    parameters = {"properties": {"path": {"type": "string"}}}

    def run(self, ws, path):
        target = ws.resolve(path)
        if target.is_dir():
            raise ToolError(f"{path} is a directory; count_lines counts the lines of one file")
        if not target.is_file():
            raise ToolError(f"no such file: {path}")
        n = len(split_lines(target.read_text(encoding="utf-8")))
        return "1 line" if n == 1 else f"{n} lines"
""", """
class CountLines(Tool):  # counts newlines: misses a last line that has none
    name = "count_lines"
    description = "Count the lines of a text file."
    parameters = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"],
                  "additionalProperties": False}

    def run(self, ws, path):
        target = ws.resolve(path)
        if target.is_dir():
            raise ToolError(f"{path} is a directory; count_lines counts the lines of one file")
        if not target.is_file():
            raise ToolError(f"no such file: {path}")
        n = target.read_text(encoding="utf-8").count("\\n")
        return "1 line" if n == 1 else f"{n} lines"
""", """
class CountLines(Tool):  # opens the path relative to the process's folder, not the agent's workspace
    name = "count_lines"
    description = "Count the lines of a text file."
    parameters = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"],
                  "additionalProperties": False}

    def run(self, ws, path):
        if Path(path).is_dir():
            raise ToolError(f"{path} is a directory; count_lines counts the lines of one file")
        if not Path(path).is_file():
            raise ToolError(f"no such file: {path}")
        with open(path, encoding="utf-8") as f:
            n = len(split_lines(f.read()))
        return "1 line" if n == 1 else f"{n} lines"
""", """
class CountLines(Tool):  # caches each path's count in self: another workspace gets the first one's answer
    name = "count_lines"
    description = "Count the lines of a text file."
    parameters = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"],
                  "additionalProperties": False}

    def __init__(self):
        self.counts = {}

    def run(self, ws, path):
        if path not in self.counts:
            target = ws.resolve(path)
            if target.is_dir():
                raise ToolError(f"{path} is a directory; count_lines counts the lines of one file")
            if not target.is_file():
                raise ToolError(f"no such file: {path}")
            self.counts[path] = len(split_lines(target.read_text(encoding="utf-8")))
        n = self.counts[path]
        return "1 line" if n == 1 else f"{n} lines"
""", """
class CountLines(Tool):  # keeps the first workspace it is given: a second agent's calls read the first's folder
    name = "count_lines"
    description = "Count the lines of a text file."
    parameters = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"],
                  "additionalProperties": False}
    ws = None

    def run(self, ws, path):
        self.ws = self.ws or ws
        target = self.ws.resolve(path)
        if target.is_dir():
            raise ToolError(f"{path} is a directory; count_lines counts the lines of one file")
        if not target.is_file():
            raise ToolError(f"no such file: {path}")
        n = len(split_lines(target.read_text(encoding="utf-8")))
        return "1 line" if n == 1 else f"{n} lines"
""", """
class CountLines(Tool):  # lets IsADirectoryError escape: the model is told of a bug, not of a directory
    name = "count_lines"
    description = "Count the lines of a text file."
    parameters = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"],
                  "additionalProperties": False}

    def run(self, ws, path):
        target = ws.resolve(path)
        if not target.exists():
            raise ToolError(f"no such file: {path}")
        n = len(split_lines(target.read_text(encoding="utf-8")))
        return "1 line" if n == 1 else f"{n} lines"
""", """
class CountLines(Tool):  # lets FileNotFoundError escape for a missing file
    name = "count_lines"
    description = "Count the lines of a text file."
    parameters = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"],
                  "additionalProperties": False}

    def run(self, ws, path):
        target = ws.resolve(path)
        if target.is_dir():
            raise ToolError(f"{path} is a directory; count_lines counts the lines of one file")
        n = len(split_lines(target.read_text(encoding="utf-8")))
        return "1 line" if n == 1 else f"{n} lines"
""", """
class CountLines(Tool):  # a missing file is "0 lines": the model never learns it is not there
    name = "count_lines"
    description = "Count the lines of a text file."
    parameters = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"],
                  "additionalProperties": False}

    def run(self, ws, path):
        target = ws.resolve(path)
        if target.is_dir():
            raise ToolError(f"{path} is a directory; count_lines counts the lines of one file")
        if not target.is_file():
            return "0 lines"
        n = len(split_lines(target.read_text(encoding="utf-8")))
        return "1 line" if n == 1 else f"{n} lines"
""", """
class CountLines(Tool):  # returns an int: the engine makes it the text "3", which says nothing of lines
    name = "count_lines"
    description = "Count the lines of a text file."
    parameters = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"],
                  "additionalProperties": False}

    def run(self, ws, path):
        target = ws.resolve(path)
        if target.is_dir():
            raise ToolError(f"{path} is a directory; count_lines counts the lines of one file")
        if not target.is_file():
            raise ToolError(f"no such file: {path}")
        return len(split_lines(target.read_text(encoding="utf-8")))
""", """
class CountLines(Tool):  # says "1 lines" for one line
    name = "count_lines"
    description = "Count the lines of a text file."
    parameters = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"],
                  "additionalProperties": False}

    def run(self, ws, path):
        target = ws.resolve(path)
        if target.is_dir():
            raise ToolError(f"{path} is a directory; count_lines counts the lines of one file")
        if not target.is_file():
            raise ToolError(f"no such file: {path}")
        return f"{len(split_lines(target.read_text(encoding='utf-8')))} lines"
""", """
class CountLines(Tool):  # no "additionalProperties": false: an extra argument reaches run, a TypeError
    name = "count_lines"
    description = "Count the lines of a text file."
    parameters = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}

    def run(self, ws, path):
        target = ws.resolve(path)
        if target.is_dir():
            raise ToolError(f"{path} is a directory; count_lines counts the lines of one file")
        if not target.is_file():
            raise ToolError(f"no such file: {path}")
        n = len(split_lines(target.read_text(encoding="utf-8")))
        return "1 line" if n == 1 else f"{n} lines"
""", """
class CountLines(Tool):  # no "additionalProperties": false, and run takes **options: an extra argument is ignored
    name = "count_lines"
    description = "Count the lines of a text file."
    parameters = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}

    def run(self, ws, path, **options):
        target = ws.resolve(path)
        if target.is_dir():
            raise ToolError(f"{path} is a directory; count_lines counts the lines of one file")
        if not target.is_file():
            raise ToolError(f"no such file: {path}")
        n = len(split_lines(target.read_text(encoding="utf-8")))
        return "1 line" if n == 1 else f"{n} lines"
""", """
class CountLines(Tool):  # no name: it keeps the base class's "", and the model's calls find no tool
    description = "Count the lines of a text file."
    parameters = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"],
                  "additionalProperties": False}

    def run(self, ws, path):
        target = ws.resolve(path)
        if target.is_dir():
            raise ToolError(f"{path} is a directory; count_lines counts the lines of one file")
        if not target.is_file():
            raise ToolError(f"no such file: {path}")
        n = len(split_lines(target.read_text(encoding="utf-8")))
        return "1 line" if n == 1 else f"{n} lines"
""", """
class CountLines(Tool):  # a misspelled name: the model calls count_lines, which is not there
    name = "count_line"
    description = "Count the lines of a text file."
    parameters = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"],
                  "additionalProperties": False}

    def run(self, ws, path):
        target = ws.resolve(path)
        if target.is_dir():
            raise ToolError(f"{path} is a directory; count_lines counts the lines of one file")
        if not target.is_file():
            raise ToolError(f"no such file: {path}")
        n = len(split_lines(target.read_text(encoding="utf-8")))
        return "1 line" if n == 1 else f"{n} lines"
""", """
import os

class CountLines(Tool):  # os.chdir(ws.cwd) to open relative paths: moves the whole process, a notebook's kernel too
    name = "count_lines"
    description = "Count the lines of a text file."
    parameters = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"],
                  "additionalProperties": False}

    def run(self, ws, path):
        os.chdir(ws.cwd)
        if os.path.isdir(path):
            raise ToolError(f"{path} is a directory; count_lines counts the lines of one file")
        if not os.path.isfile(path):
            raise ToolError(f"no such file: {path}")
        with open(path, encoding="utf-8") as f:
            n = len(split_lines(f.read()))
        return "1 line" if n == 1 else f"{n} lines"
""", """
class CountLines(Tool):  # no top-level "type": "object": the engine copes, but the OpenAI API refuses the schema
    name = "count_lines"
    description = "Count the lines of a text file."
    parameters = {"properties": {"path": {"type": "string"}}, "required": ["path"], "additionalProperties": False}

    def run(self, ws, path):
        target = ws.resolve(path)
        if target.is_dir():
            raise ToolError(f"{path} is a directory; count_lines counts the lines of one file")
        if not target.is_file():
            raise ToolError(f"no such file: {path}")
        n = len(split_lines(target.read_text(encoding="utf-8")))
        return "1 line" if n == 1 else f"{n} lines"
""", """
class CountLines(Tool):  # "required": "path", a string: the engine requires 'p', 'a', 't' and 'h'
    name = "count_lines"
    description = "Count the lines of a text file."
    parameters = {"type": "object", "properties": {"path": {"type": "string"}}, "required": "path",
                  "additionalProperties": False}

    def run(self, ws, path):
        target = ws.resolve(path)
        if target.is_dir():
            raise ToolError(f"{path} is a directory; count_lines counts the lines of one file")
        if not target.is_file():
            raise ToolError(f"no such file: {path}")
        n = len(split_lines(target.read_text(encoding="utf-8")))
        return "1 line" if n == 1 else f"{n} lines"
""", """
class CountLines(Tool):  # no "required": a call without path reaches run, a TypeError
    name = "count_lines"
    description = "Count the lines of a text file."
    parameters = {"type": "object", "properties": {"path": {"type": "string"}}, "additionalProperties": False}

    def run(self, ws, path):
        target = ws.resolve(path)
        if target.is_dir():
            raise ToolError(f"{path} is a directory; count_lines counts the lines of one file")
        if not target.is_file():
            raise ToolError(f"no such file: {path}")
        n = len(split_lines(target.read_text(encoding="utf-8")))
        return "1 line" if n == 1 else f"{n} lines"
""", """
class CountLines(Tool):  # str.splitlines also splits on a form feed: a page break is counted as a line end
    name = "count_lines"
    description = "Count the lines of a text file."
    parameters = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"],
                  "additionalProperties": False}

    def run(self, ws, path):
        target = ws.resolve(path)
        if target.is_dir():
            raise ToolError(f"{path} is a directory; count_lines counts the lines of one file")
        if not target.is_file():
            raise ToolError(f"no such file: {path}")
        return f"{len(target.read_text(encoding='utf-8').splitlines())} lines".replace("1 lines", "1 line")
""", """
class CountLines(Tool):  # a directory is "no such file": the model goes looking for a file that is there
    name = "count_lines"
    description = "Count the lines of a text file."
    parameters = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"],
                  "additionalProperties": False}

    def run(self, ws, path):
        target = ws.resolve(path)
        if not target.is_file():
            raise ToolError(f"no such file: {path}")
        n = len(split_lines(target.read_text(encoding="utf-8")))
        return "1 line" if n == 1 else f"{n} lines"
""", """
class CountLines(Tool):  # anything not a file is "a directory": a missing file too
    name = "count_lines"
    description = "Count the lines of a text file."
    parameters = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"],
                  "additionalProperties": False}

    def run(self, ws, path):
        target = ws.resolve(path)
        if not target.is_file():
            raise ToolError(f"{path} is a directory; count_lines counts the lines of one file")
        n = len(split_lines(target.read_text(encoding="utf-8")))
        return "1 line" if n == 1 else f"{n} lines"
""", """
class CountLines(Tool):  # ToolError("error"): no path, no reason, nothing the model can act on
    name = "count_lines"
    description = "Count the lines of a text file."
    parameters = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"],
                  "additionalProperties": False}

    def run(self, ws, path):
        target = ws.resolve(path)
        if not target.is_file():
            raise ToolError("error")
        n = len(split_lines(target.read_text(encoding="utf-8")))
        return "1 line" if n == 1 else f"{n} lines"
""", """
class CountLines(Tool):  # "3 lines\\n": a line break after the count
    name = "count_lines"
    description = "Count the lines of a text file."
    parameters = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"],
                  "additionalProperties": False}

    def run(self, ws, path):
        target = ws.resolve(path)
        if target.is_dir():
            raise ToolError(f"{path} is a directory; count_lines counts the lines of one file")
        if not target.is_file():
            raise ToolError(f"no such file: {path}")
        n = len(split_lines(target.read_text(encoding="utf-8")))
        return "1 line\\n" if n == 1 else f"{n} lines\\n"
"""],
    "ch02.unique_place": ["""
import re

def find_place(text, old):  # str.count skips overlaps: it says "aa" occurs once in "aaa"
    n = text.count(old)
    if n == 0:
        raise ToolError("old_string was not found")
    if n > 1:
        lines = ", ".join(str(text.count("\\n", 0, m.start()) + 1) for m in re.finditer(re.escape(old), text))
        raise ToolError(f"old_string occurs {n} times (lines {lines})")
    start = text.find(old)
    return start, start + len(old)
""", """
def find_place(text, old):  # takes the first match: never notices a second one
    start = text.find(old)
    if start == -1:
        raise ToolError("old_string was not found")
    return start, start + len(old)
""", """
def find_place(text, old):  # searches on from the end of each match: misses overlapping ones
    places, start = [], text.find(old)
    while start != -1:
        places.append((start, start + len(old), ""))
        start = text.find(old, start + len(old))
    places = whole_line_breaks(text, places)
    if not places:
        raise ToolError("old_string was not found")
    if len(places) > 1:
        raise ToolError(f"old_string occurs {len(places)} times (lines {lines_of(text, places)})")
    return places[0][0], places[0][1]
""", """
def find_place(text, old):  # 0-based line numbers: the model looks for the place one line too high
    places, start = [], text.find(old)
    while start != -1:
        places.append((start, start + len(old), ""))
        start = text.find(old, start + 1)
    places = whole_line_breaks(text, places)
    if not places:
        raise ToolError("old_string was not found")
    if len(places) > 1:
        lines = ", ".join(str(text.count("\\n", 0, s)) for s, _, _ in places)
        raise ToolError(f"old_string occurs {len(places)} times (lines {lines})")
    return places[0][0], places[0][1]
""", """
def find_place(text, old):  # returns None instead of refusing: the caller takes it for a place
    places, start = [], text.find(old)
    while start != -1:
        places.append((start, start + len(old), ""))
        start = text.find(old, start + 1)
    places = whole_line_breaks(text, places)
    if len(places) != 1:
        return None
    return places[0][0], places[0][1]
""", """
def find_place(text, old):  # raises ValueError: the engine tells the model its tool has a bug
    places, start = [], text.find(old)
    while start != -1:
        places.append((start, start + len(old), ""))
        start = text.find(old, start + 1)
    places = whole_line_breaks(text, places)
    if not places:
        raise ValueError("old_string was not found")
    if len(places) > 1:
        raise ValueError(f"old_string occurs {len(places)} times (lines {lines_of(text, places)})")
    return places[0][0], places[0][1]
""", """
def find_place(text, old):  # ignores CRLF halves: a place that would leave a stray CR or LF counts
    places, start = [], text.find(old)
    while start != -1:
        places.append((start, start + len(old), ""))
        start = text.find(old, start + 1)
    if not places:
        raise ToolError("old_string was not found")
    if len(places) > 1:
        raise ToolError(f"old_string occurs {len(places)} times (lines {lines_of(text, places)})")
    return places[0][0], places[0][1]
""", """
def find_place(text, old):  # says "more than once" without how many times
    places, start = [], text.find(old)
    while start != -1:
        places.append((start, start + len(old), ""))
        start = text.find(old, start + 1)
    places = whole_line_breaks(text, places)
    if not places:
        raise ToolError("old_string was not found")
    if len(places) > 1:
        raise ToolError(f"old_string occurs more than once (lines {lines_of(text, places)})")
    return places[0][0], places[0][1]
""", """
def find_place(text, old):  # names the lines the places end on, not start on: wrong for an old of several lines
    places, start = [], text.find(old)
    while start != -1:
        places.append((start, start + len(old), ""))
        start = text.find(old, start + 1)
    places = whole_line_breaks(text, places)
    if not places:
        raise ToolError("old_string was not found")
    if len(places) > 1:
        lines = ", ".join(str(text.count("\\n", 0, end) + 1) for _, end, _ in places)
        raise ToolError(f"old_string occurs {len(places)} times (lines {lines})")
    return places[0][0], places[0][1]
""", """
def find_place(text, old):  # drops a place that starts inside a CRLF, not one that ends inside it
    places, start = [], text.find(old)
    while start != -1:
        if not (start > 0 and text[start - 1:start + 1] == "\\r\\n"):
            places.append((start, start + len(old), ""))
        start = text.find(old, start + 1)
    if not places:
        raise ToolError("old_string was not found")
    if len(places) > 1:
        raise ToolError(f"old_string occurs {len(places)} times (lines {lines_of(text, places)})")
    return places[0][0], places[0][1]
""", """
def find_place(text, old):  # a bare `raise ToolError` when old is not found: the model is told nothing
    places, start = [], text.find(old)
    while start != -1:
        places.append((start, start + len(old), ""))
        start = text.find(old, start + 1)
    places = whole_line_breaks(text, places)
    if not places:
        raise ToolError
    if len(places) > 1:
        raise ToolError(f"old_string occurs {len(places)} times (lines {lines_of(text, places)})")
    return places[0][0], places[0][1]
"""],
    "ch02.window": ["""
def window(lines, offset, limit):  # a 0-based offset: lines[offset] is the line after the one asked for
    if offset > len(lines):
        raise ToolError(f"offset {offset} is past the end: the file has {len(lines)} lines")
    shown = [f"{offset + i:>6}\\t{line}" for i, line in enumerate(lines[offset:offset + limit])]
    last = min(offset + limit - 1, len(lines))
    if last == len(lines):
        return "\\n".join([*shown, f"(end of file, {len(lines)} lines)"])
    return "\\n".join([*shown, f"(lines {offset}-{last} of {len(lines)}; use offset={last + 1} to read on)"])
""", """
def window(lines, offset, limit):  # "end of file" whenever the window shows anything
    if offset > len(lines):
        raise ToolError(f"offset {offset} is past the end: the file has {len(lines)} lines")
    last = min(offset + limit - 1, len(lines))
    shown = [f"{n:>6}\\t{lines[n - 1]}" for n in range(offset, last + 1)]
    if shown:
        size = "1 line" if len(lines) == 1 else f"{len(lines)} lines"
        return "\\n".join([*shown, f"(end of file, {size})"])
    return "\\n".join([*shown, f"(lines {offset}-{last} of {len(lines)}; use offset={last + 1} to read on)"])
""", """
def window(lines, offset, limit):  # off by one: "end of file" for a window that stops a line before the end
    if offset > len(lines):
        raise ToolError(f"offset {offset} is past the end: the file has {len(lines)} lines")
    last = min(offset + limit - 1, len(lines))
    shown = [f"{n:>6}\\t{lines[n - 1]}" for n in range(offset, last + 1)]
    if offset + limit >= len(lines):
        size = "1 line" if len(lines) == 1 else f"{len(lines)} lines"
        return "\\n".join([*shown, f"(end of file, {size})"])
    return "\\n".join([*shown, f"(lines {offset}-{last} of {len(lines)}; use offset={last + 1} to read on)"])
""", """
def window(lines, offset, limit):  # numbers every window from 1, whatever its offset
    if offset > len(lines):
        raise ToolError(f"offset {offset} is past the end: the file has {len(lines)} lines")
    last = min(offset + limit - 1, len(lines))
    shown = [f"{i:>6}\\t{line}" for i, line in enumerate(lines[offset - 1:last], 1)]
    if last == len(lines):
        size = "1 line" if len(lines) == 1 else f"{len(lines)} lines"
        return "\\n".join([*shown, f"(end of file, {size})"])
    return "\\n".join([*shown, f"(lines {offset}-{last} of {len(lines)}; use offset={last + 1} to read on)"])
""", """
def window(lines, offset, limit):  # no last line: the model cannot tell whether it has seen the whole file
    if offset > len(lines):
        raise ToolError(f"offset {offset} is past the end: the file has {len(lines)} lines")
    last = min(offset + limit - 1, len(lines))
    return "\\n".join(f"{n:>6}\\t{lines[n - 1]}" for n in range(offset, last + 1))
""", """
def window(lines, offset, limit):  # returns the list of lines, not one text
    if offset > len(lines):
        raise ToolError(f"offset {offset} is past the end: the file has {len(lines)} lines")
    last = min(offset + limit - 1, len(lines))
    shown = [f"{n:>6}\\t{lines[n - 1]}" for n in range(offset, last + 1)]
    if last == len(lines):
        size = "1 line" if len(lines) == 1 else f"{len(lines)} lines"
        return [*shown, f"(end of file, {size})"]
    return [*shown, f"(lines {offset}-{last} of {len(lines)}; use offset={last + 1} to read on)"]
""", """
def window(lines, offset, limit):  # says "1 lines" for a file of one line
    if offset > len(lines):
        raise ToolError(f"offset {offset} is past the end: the file has {len(lines)} lines")
    last = min(offset + limit - 1, len(lines))
    shown = [f"{n:>6}\\t{lines[n - 1]}" for n in range(offset, last + 1)]
    if last == len(lines):
        return "\\n".join([*shown, f"(end of file, {len(lines)} lines)"])
    return "\\n".join([*shown, f"(lines {offset}-{last} of {len(lines)}; use offset={last + 1} to read on)"])
""", """
def window(lines, offset, limit):  # no check for an offset past the end: an empty window "at the end of file"
    last = min(offset + limit - 1, len(lines))
    shown = [f"{n:>6}\\t{lines[n - 1]}" for n in range(offset, last + 1)]
    if last == len(lines):
        size = "1 line" if len(lines) == 1 else f"{len(lines)} lines"
        return "\\n".join([*shown, f"(end of file, {size})"])
    return "\\n".join([*shown, f"(lines {offset}-{last} of {len(lines)}; use offset={last + 1} to read on)"])
""", """
def window(lines, offset, limit):  # an offset past the end raises IndexError, not ToolError
    last = min(offset + limit - 1, len(lines))
    if offset > len(lines):
        raise IndexError(f"offset {offset} is past the end")
    shown = [f"{n:>6}\\t{lines[n - 1]}" for n in range(offset, last + 1)]
    if last == len(lines):
        size = "1 line" if len(lines) == 1 else f"{len(lines)} lines"
        return "\\n".join([*shown, f"(end of file, {size})"])
    return "\\n".join([*shown, f"(lines {offset}-{last} of {len(lines)}; use offset={last + 1} to read on)"])
""", """
def window(lines, offset, limit):  # a line break after the last line
    if offset > len(lines):
        raise ToolError(f"offset {offset} is past the end: the file has {len(lines)} lines")
    last = min(offset + limit - 1, len(lines))
    shown = [f"{n:>6}\\t{lines[n - 1]}" for n in range(offset, last + 1)]
    if last == len(lines):
        size = "1 line" if len(lines) == 1 else f"{len(lines)} lines"
        return "\\n".join([*shown, f"(end of file, {size})"]) + "\\n"
    return "\\n".join([*shown, f"(lines {offset}-{last} of {len(lines)}; use offset={last + 1} to read on)"]) + "\\n"
""", """
def window(lines, offset, limit):  # numbers 5 columns wide, not read_file's 6
    if offset > len(lines):
        raise ToolError(f"offset {offset} is past the end: the file has {len(lines)} lines")
    last = min(offset + limit - 1, len(lines))
    shown = [f"{n:>5}\\t{lines[n - 1]}" for n in range(offset, last + 1)]
    if last == len(lines):
        size = "1 line" if len(lines) == 1 else f"{len(lines)} lines"
        return "\\n".join([*shown, f"(end of file, {size})"])
    return "\\n".join([*shown, f"(lines {offset}-{last} of {len(lines)}; use offset={last + 1} to read on)"])
""", """
def window(lines, offset, limit):  # no min(..., len(lines)): a limit past the end raises IndexError
    if offset > len(lines):
        raise ToolError(f"offset {offset} is past the end: the file has {len(lines)} lines")
    last = offset + limit - 1
    shown = [f"{n:>6}\\t{lines[n - 1]}" for n in range(offset, last + 1)]
    if last == len(lines):
        size = "1 line" if len(lines) == 1 else f"{len(lines)} lines"
        return "\\n".join([*shown, f"(end of file, {size})"])
    return "\\n".join([*shown, f"(lines {offset}-{last} of {len(lines)}; use offset={last + 1} to read on)"])
""", """
def window(lines, offset, limit):  # "(end of file, N lines)" with N the lines shown, not the file's
    if offset > len(lines):
        raise ToolError(f"offset {offset} is past the end: the file has {len(lines)} lines")
    last = min(offset + limit - 1, len(lines))
    shown = [f"{n:>6}\\t{lines[n - 1]}" for n in range(offset, last + 1)]
    if last == len(lines):
        return "\\n".join([*shown, f"(end of file, {len(shown)} lines)"])
    return "\\n".join([*shown, f"(lines {offset}-{last} of {len(lines)}; use offset={last + 1} to read on)"])
""", """
def window(lines, offset, limit):  # a bare `raise ToolError` past the end: the model is not told the file's size
    if offset > len(lines):
        raise ToolError
    last = min(offset + limit - 1, len(lines))
    shown = [f"{n:>6}\\t{lines[n - 1]}" for n in range(offset, last + 1)]
    if last == len(lines):
        size = "1 line" if len(lines) == 1 else f"{len(lines)} lines"
        return "\\n".join([*shown, f"(end of file, {size})"])
    return "\\n".join([*shown, f"(lines {offset}-{last} of {len(lines)}; use offset={last + 1} to read on)"])
"""],
    "ch03.assemble": ["""
def assemble(deltas):  # keyed by index only: Ollama's parallel calls, all under index 0, become one
    calls = {}
    for d in deltas:
        fn = d["function"]
        call = calls.setdefault(d["index"], {"id": None, "name": "", "arguments": ""})
        call["id"] = call["id"] or d.get("id")
        call["name"] = call["name"] or fn.get("name") or ""
        if fn.get("arguments") != call["arguments"]:
            call["arguments"] += fn.get("arguments") or ""
    return [ToolCall(c["id"] or f"call_{n}", c["name"], c["arguments"]) for n, c in enumerate(calls.values(), 1)]
""", """
def assemble(deltas):  # keyed by id only: a fragment that carries no id raises KeyError
    calls = {}
    for d in deltas:
        fn = d["function"]
        call = calls.setdefault(d["id"], {"name": "", "arguments": ""})
        call["name"] = call["name"] or fn.get("name") or ""
        call["arguments"] += fn.get("arguments") or ""
    return [ToolCall(id, c["name"], c["arguments"]) for id, c in calls.items()]
""", """
def assemble(deltas):  # keyed by id only: the fragments that carry no id are dropped
    calls = {}
    for d in deltas:
        if d.get("id"):
            fn = d["function"]
            call = calls.setdefault(d["id"], {"name": "", "arguments": ""})
            call["name"] = call["name"] or fn.get("name") or ""
            call["arguments"] += fn.get("arguments") or ""
    return [ToolCall(id, c["name"], c["arguments"]) for id, c in calls.items()]
""", """
def assemble(deltas):  # name += ...: a first chunk sent twice, or a name on every chunk, doubles it
    calls, by_id, by_index = [], {}, {}
    for d in deltas:
        index, id, fn = d.get("index"), d.get("id"), d["function"]
        if id and id in by_id:
            call = by_id[id]
        elif not id and index is not None and index in by_index:
            call = by_index[index]
        elif not id and calls:
            call = calls[-1]
        else:
            call = {"id": id, "name": "", "arguments": ""}
            calls.append(call)
            if id:
                by_id[id] = call
            if index is not None:
                by_index[index] = call
        call["name"] += fn.get("name") or ""
        if not (fn.get("arguments") and fn["arguments"] == call["arguments"]):
            call["arguments"] += fn.get("arguments") or ""
    return [ToolCall(c["id"] or f"call_{n}", c["name"], c["arguments"]) for n, c in enumerate(calls, 1)]
""", """
def assemble(deltas):  # appends every chunk's arguments: a whole chunk sent twice doubles them
    calls, by_id, by_index = [], {}, {}
    for d in deltas:
        index, id, fn = d.get("index"), d.get("id"), d["function"]
        if id and id in by_id:
            call = by_id[id]
        elif not id and index is not None and index in by_index:
            call = by_index[index]
        elif not id and calls:
            call = calls[-1]
        else:
            call = {"id": id, "name": "", "arguments": ""}
            calls.append(call)
            if id:
                by_id[id] = call
            if index is not None:
                by_index[index] = call
        call["name"] = call["name"] or fn.get("name") or ""
        call["arguments"] += fn.get("arguments") or ""
    return [ToolCall(c["id"] or f"call_{n}", c["name"], c["arguments"]) for n, c in enumerate(calls, 1)]
""", """
def assemble(deltas):  # a fragment under an index never seen starts a new call instead of continuing the latest
    calls, by_id, by_index = [], {}, {}
    for d in deltas:
        index, id, fn = d.get("index"), d.get("id"), d["function"]
        if id and id in by_id:
            call = by_id[id]
        elif not id and index is not None and index in by_index:
            call = by_index[index]
        elif not id and index is None and calls:
            call = calls[-1]
        else:
            call = {"id": id, "name": "", "arguments": ""}
            calls.append(call)
            if id:
                by_id[id] = call
            if index is not None:
                by_index[index] = call
        call["name"] = call["name"] or fn.get("name") or ""
        if not (fn.get("arguments") and fn["arguments"] == call["arguments"]):
            call["arguments"] += fn.get("arguments") or ""
    return [ToolCall(c["id"] or f"call_{n}", c["name"], c["arguments"]) for n, c in enumerate(calls, 1)]
""", """
def assemble(deltas):  # no id made up for a call that came without one: ToolCall(None, ...)
    calls, by_id, by_index = [], {}, {}
    for d in deltas:
        index, id, fn = d.get("index"), d.get("id"), d["function"]
        if id and id in by_id:
            call = by_id[id]
        elif not id and index is not None and index in by_index:
            call = by_index[index]
        elif not id and calls:
            call = calls[-1]
        else:
            call = {"id": id, "name": "", "arguments": ""}
            calls.append(call)
            if id:
                by_id[id] = call
            if index is not None:
                by_index[index] = call
        call["name"] = call["name"] or fn.get("name") or ""
        if not (fn.get("arguments") and fn["arguments"] == call["arguments"]):
            call["arguments"] += fn.get("arguments") or ""
    return [ToolCall(c["id"], c["name"], c["arguments"]) for c in calls]
""", """
def assemble(deltas):  # an id-less call gets "": the history would refuse it
    calls, by_id, by_index = [], {}, {}
    for d in deltas:
        index, id, fn = d.get("index"), d.get("id"), d["function"]
        if id and id in by_id:
            call = by_id[id]
        elif not id and index is not None and index in by_index:
            call = by_index[index]
        elif not id and calls:
            call = calls[-1]
        else:
            call = {"id": id or "", "name": "", "arguments": ""}
            calls.append(call)
            if id:
                by_id[id] = call
            if index is not None:
                by_index[index] = call
        call["name"] = call["name"] or fn.get("name") or ""
        if not (fn.get("arguments") and fn["arguments"] == call["arguments"]):
            call["arguments"] += fn.get("arguments") or ""
    return [ToolCall(c["id"], c["name"], c["arguments"]) for c in calls]
""", """
def assemble(deltas):  # returns the calls as dicts, not ToolCall
    calls, by_id, by_index = [], {}, {}
    for d in deltas:
        index, id, fn = d.get("index"), d.get("id"), d["function"]
        if id and id in by_id:
            call = by_id[id]
        elif not id and index is not None and index in by_index:
            call = by_index[index]
        elif not id and calls:
            call = calls[-1]
        else:
            call = {"id": id, "name": "", "arguments": ""}
            calls.append(call)
            if id:
                by_id[id] = call
            if index is not None:
                by_index[index] = call
        call["name"] = call["name"] or fn.get("name") or ""
        if not (fn.get("arguments") and fn["arguments"] == call["arguments"]):
            call["arguments"] += fn.get("arguments") or ""
    return [{"id": c["id"] or f"call_{n}", **c} for n, c in enumerate(calls, 1)]
""", """
def assemble(deltas):  # never uses the index: a chunk without an id goes to the latest call, so interleaved calls mix
    calls, by_id = [], {}
    for d in deltas:
        id, fn = d.get("id"), d.get("function") or {}
        if id and id in by_id:
            call = by_id[id]
        elif not id and calls:
            call = calls[-1]
        else:
            call = {"id": id, "name": "", "arguments": ""}
            calls.append(call)
            if id:
                by_id[id] = call
        call["name"] = call["name"] or fn.get("name") or ""
        piece = fn.get("arguments") or ""
        if not (piece and piece == call["arguments"] and _is_json(piece)):
            call["arguments"] += piece
    return [ToolCall(c["id"] or f"call_{n}", c["name"], c["arguments"]) for n, c in enumerate(calls, 1)]
""", """
def assemble(deltas):  # a chunk with an id or a name opens a call, any other goes to the latest: interleaved calls mix
    calls, by_id = [], {}
    for d in deltas:
        id, fn = d.get("id"), d.get("function") or {}
        if id and id in by_id:
            call = by_id[id]
        elif id or fn.get("name") or not calls:
            call = {"id": id, "name": "", "arguments": ""}
            calls.append(call)
            if id:
                by_id[id] = call
        else:
            call = calls[-1]
        call["name"] = call["name"] or fn.get("name") or ""
        piece = fn.get("arguments") or ""
        if not (piece and piece == call["arguments"] and _is_json(piece)):
            call["arguments"] += piece
    return [ToolCall(c["id"] or f"call_{n}", c["name"], c["arguments"]) for n, c in enumerate(calls, 1)]
""", """
def assemble(deltas):  # drops a slice equal to the slice before it: a run of "=" cut into equal chunks loses some
    calls, by_id, by_index = [], {}, {}
    for d in deltas:
        index, id, fn = d.get("index"), d.get("id"), d.get("function") or {}
        if id and id in by_id:
            call = by_id[id]
        elif not id and index is not None and index in by_index:
            call = by_index[index]
        elif not id and calls and not (fn.get("name") and index is not None):
            call = calls[-1]
        else:
            call = {"id": id, "name": "", "arguments": "", "last": None}
            calls.append(call)
            if id:
                by_id[id] = call
            if index is not None:
                by_index[index] = call
        call["name"] = call["name"] or fn.get("name") or ""
        piece = fn.get("arguments") or ""
        if piece and piece != call["last"]:
            call["arguments"] += piece
        call["last"] = piece or call["last"]
    return [ToolCall(c["id"] or f"call_{n}", c["name"], c["arguments"]) for n, c in enumerate(calls, 1)]
"""],
    "ch03.retry_delay": ["""
def retry_delay(status, attempt, retry_after, rand, max_attempts=4):  # its own draw, random.random(): untestable
    import random
    if attempt >= max_attempts or not (status in (408, 409, 425, 429) or status >= 500):
        return None
    if retry_after is not None:
        return min(retry_after, 60.0)
    return min(60.0, 2 ** (attempt - 1) * (4 if status == 529 else 1)) * (0.5 + random.random() / 2)
"""],
    "ch03.cost": ["""
def cost(usage, price):  # rounded to 6 places: a total of rounded costs drifts from the bill
    if price is None:
        return None
    cached = min(usage.cached_tokens, usage.prompt_tokens)
    rate = price.input if price.cached_input is None else price.cached_input
    return round(((usage.prompt_tokens - cached) * price.input + cached * rate
                  + usage.completion_tokens * price.output) / 1_000_000, 6)
""", """
def cost(usage, price):  # the fresh tokens held at 0, but every cached token charged, even past the prompt's
    if price is None:
        return None
    rate = price.input if price.cached_input is None else price.cached_input
    return (max(0, usage.prompt_tokens - usage.cached_tokens) * price.input + usage.cached_tokens * rate
            + usage.completion_tokens * price.output) / 1_000_000
"""],
    # ch04.safe_cut's mistakes are one-line changes of turn_start, declared beside its checker
    # (corecoder_course/exercises/ch04.py) and proven by tests/course/test_kit.py; what stays here is
    # what no one line of it makes: the right cut, with the caller's history changed under it
    "ch04.safe_cut": ["""
def safe_cut(messages, index):  # the right cut, then del messages[:index]: the caller's history is cut under it
    index = max(0, min(index, len(messages)))
    while 0 < index < len(messages) and (messages[index]["role"] == "tool" or is_state_note(messages[index])):
        index -= 1
    del messages[:index]
    return index
""", """
def safe_cut(messages, index):  # the right cut, then messages.clear(): the caller's history is gone
    index = max(0, min(index, len(messages)))
    while 0 < index < len(messages) and (messages[index]["role"] == "tool" or is_state_note(messages[index])):
        index -= 1
    messages.clear()
    return index
"""],
    "ch04.estimate": ["""
def estimate(text):  # a quarter of the characters: Chinese comes out about 4 times too low
    return len(text) // 4
""", """
def estimate(text):  # a quarter of the UTF-8 bytes: a Chinese character (3 bytes) counted as 3/4 of a token
    return len(text.encode()) // 4
""", """
def estimate(text):  # words times 1.3: Chinese has no spaces between words
    return len(text.split()) * 1.3
""", """
def estimate(text):  # a string, not a number
    return f"{len(text) / 4:.0f} tokens"
""", """
def estimate(text):  # the estimate computed, but never returned: None
    tokens = len(text) / 4
""", """
def estimate(text):  # only Han characters (U+4E00 to U+9FFF) as CJK: Japanese kana and Korean Hangul a quarter each
    import re
    cjk = len(re.findall(r"[\\u4e00-\\u9fff\\u3000-\\u303f\\uff00-\\uffef]", text))
    symbols = len(re.findall(r"[^\\w\\s\\u4e00-\\u9fff\\u3000-\\u303f\\uff00-\\uffef]", text))
    return cjk + symbols / 2 + (len(text) - cjk - symbols) / 4
""", """
def estimate(text):  # Han characters (U+4E00 to U+9FFF) one token each, everything else a quarter: kana and Hangul too
    han = sum(1 for ch in text if "\\u4e00" <= ch <= "\\u9fff")
    return han + (len(text) - han) / 4
""", """
def estimate(text):  # rougher: a CJK character one token, every other 1/3.5: a third too low on minified JSON
    import re
    cjk = len(re.findall(r"[\\u3000-\\u303f\\u3040-\\u30ff\\u3400-\\u9fff\\uac00-\\ud7af\\uff00-\\uffef]", text))
    return cjk + (len(text) - cjk) / 3.5
"""],
    "ch04.policy": ["""
class KeepLastTurns:  # the last n messages, not turns: a tool result without its call, and a 400
    def __init__(self, n):
        self.n = n

    def attach(self, agent):
        pass

    def prepare(self, messages, overflow=False):
        return messages if len(messages) <= self.n else messages[-self.n:]
""", """
class KeepLastTurns:  # cuts in place with del and returns nothing: the agent goes on with None
    def __init__(self, n):
        self.n = n

    def attach(self, agent):
        pass

    def prepare(self, messages, overflow=False):
        starts = [i for i, m in enumerate(messages) if m["role"] == "user" and not is_state_note(m)]
        if len(starts) > self.n:
            del messages[:starts[-self.n]]
""", """
class KeepLastTurns:  # a note of what would be dropped, appended, and nothing dropped: the history grows
    def __init__(self, n):
        self.n = n

    def attach(self, agent):
        pass

    def prepare(self, messages, overflow=False):
        starts = [i for i, m in enumerate(messages) if m["role"] == "user" and not is_state_note(m)]
        if len(starts) <= self.n:
            return messages
        return messages + [user(f"[{starts[-self.n]} earlier messages can be dropped]")]
""", """
class KeepLastTurns:  # a copy on overflow: the agent takes any new list for a cut, and sends the too-long request again
    def __init__(self, n):
        self.n = n

    def attach(self, agent):
        pass

    def prepare(self, messages, overflow=False):
        if overflow:
            return list(messages)
        starts = [i for i, m in enumerate(messages) if m["role"] == "user" and not is_state_note(m)]
        if len(starts) <= self.n:
            return messages
        return messages[starts[-self.n]:]
""", """
class KeepLastTurns:  # on overflow the user messages alone: no cut, the calls and answers between them taken out
    def __init__(self, n):
        self.n = n

    def attach(self, agent):
        pass

    def prepare(self, messages, overflow=False):
        if overflow:
            return [m for m in messages if m["role"] == "user"]
        starts = [i for i, m in enumerate(messages) if m["role"] == "user" and not is_state_note(m)]
        if len(starts) <= self.n:
            return messages
        return messages[starts[-self.n]:]
""", """
class KeepLastTurns:  # on overflow the latest user message and the last message: what lies between is taken out
    def __init__(self, n):
        self.n = n

    def attach(self, agent):
        pass

    def prepare(self, messages, overflow=False):
        starts = [i for i, m in enumerate(messages) if m["role"] == "user" and not is_state_note(m)]
        if overflow:
            return [messages[starts[-1]], messages[-1]]
        if len(starts) <= self.n:
            return messages
        return messages[starts[-self.n]:]
""", """
class KeepLastTurns:  # a state note told by "todo list": a note of the working directory counted as a user turn
    def __init__(self, n):
        self.n = n

    def attach(self, agent):
        pass

    def prepare(self, messages, overflow=False):
        starts = [i for i, m in enumerate(messages) if m["role"] == "user" and "todo list" not in m["content"]]
        if len(starts) <= self.n:
            return messages
        return messages[starts[-self.n]:]
""", """
class KeepLastTurns:  # overflow without a default: the agent calls prepare(messages) every round, a TypeError
    def __init__(self, n):
        self.n = n

    def attach(self, agent):
        pass

    def prepare(self, messages, overflow):
        starts = [i for i, m in enumerate(messages) if m["role"] == "user" and not is_state_note(m)]
        if len(starts) <= self.n:
            return messages
        return messages[starts[-self.n]:]
"""],
    "ch05.merge": ["""
def merge(start, forks):  # the right directory, as text: the workspace's cwd is a Path
    where = start
    for cwd in forks:
        if cwd != start:
            where = cwd
    return str(where)
""", """
def merge(start, forks):  # pops the forks it reads: the caller's list is emptied
    where = start
    while forks:
        cwd = forks.pop(0)
        if cwd != start:
            where = cwd
    return where
"""],
    "ch05.executor": ["""
def reads_parallel_writes_in_order(calls, agent, results):  # every call in one pool: the writes overlap
    from concurrent.futures import ThreadPoolExecutor
    jobs = [admit(agent, call) for call in calls]
    with ThreadPoolExecutor(max_workers=8) as pool:
        futures = {job.call.id: pool.submit(perform, agent, job, agent.workspace) for job in jobs}
        for call_id, future in futures.items():
            results[call_id] = future.result()
""", """
def reads_parallel_writes_in_order(calls, agent, results):  # every call in order: the reads never meet
    jobs = [admit(agent, call) for call in calls]
    for job in jobs:
        results[job.call.id] = perform(agent, job, agent.workspace)
""", """
def reads_parallel_writes_in_order(calls, agent, results):  # returns the results instead of filling them
    from concurrent.futures import ThreadPoolExecutor
    jobs = [admit(agent, call) for call in calls]
    reads = [job for job in jobs if job.tool is not None and not job.tool.mutating]
    out = {}
    with ThreadPoolExecutor(max_workers=8) as pool:
        running = {job.call.id: pool.submit(perform, agent, job, agent.workspace) for job in reads}
        for job in jobs:
            if job.call.id not in running:
                out[job.call.id] = perform(agent, job, agent.workspace)
        for call_id, future in running.items():
            out[call_id] = future.result()
    return [out[call.id] for call in calls]
""", """
def reads_parallel_writes_in_order(calls, agent, results):  # admits each call just before running it
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=8) as pool:
        running = {}
        for call in calls:
            job = admit(agent, call)
            if job.tool is not None and not job.tool.mutating:
                running[call.id] = pool.submit(perform, agent, job, agent.workspace)
            else:
                results[call.id] = perform(agent, job, agent.workspace)
        for call_id, future in running.items():
            results[call_id] = future.result()
""", """
def reads_parallel_writes_in_order(calls, agent, results):  # the writes in a pool of their own, 4 at once
    from concurrent.futures import ThreadPoolExecutor
    jobs = [admit(agent, call) for call in calls]
    reads = [job for job in jobs if job.tool is not None and not job.tool.mutating]
    writes = [job for job in jobs if job not in reads]
    with ThreadPoolExecutor(max_workers=8) as pool, ThreadPoolExecutor(max_workers=4) as writer:
        running = {job.call.id: pool.submit(perform, agent, job, agent.workspace) for job in reads}
        running |= {job.call.id: writer.submit(perform, agent, job, agent.workspace) for job in writes}
        for call_id, future in running.items():
            results[call_id] = future.result()
""", """
def reads_parallel_writes_in_order(calls, agent, results):  # job.tool.mutating of an unknown tool: AttributeError
    from concurrent.futures import ThreadPoolExecutor
    jobs = [admit(agent, call) for call in calls]
    reads = [job for job in jobs if not job.tool.mutating]
    with ThreadPoolExecutor(max_workers=8) as pool:
        running = {job.call.id: pool.submit(perform, agent, job, agent.workspace) for job in reads}
        for job in jobs:
            if job.call.id not in running:
                results[job.call.id] = perform(agent, job, agent.workspace)
        for call_id, future in running.items():
            results[call_id] = future.result()
""", """
def reads_parallel_writes_in_order(calls, agent, results):  # only neighbouring reads at once: call_1 waits alone
    from concurrent.futures import ThreadPoolExecutor
    jobs = [admit(agent, call) for call in calls]
    group = []
    with ThreadPoolExecutor(max_workers=8) as pool:
        for job in [*jobs, None]:
            if job is not None and job.tool is not None and not job.tool.mutating:
                group.append(job)
                continue
            futures = {j.call.id: pool.submit(perform, agent, j, agent.workspace) for j in group}
            for call_id, future in futures.items():
                results[call_id] = future.result()
            group = []
            if job is not None:
                results[job.call.id] = perform(agent, job, agent.workspace)
""", """
def reads_parallel_writes_in_order(calls, agent, results):  # the reads admitted first, then the writes
    from concurrent.futures import ThreadPoolExecutor
    def read_only(call):
        return agent.tools.get(call.name) is not None and not agent.tools[call.name].mutating
    jobs = [admit(agent, call) for call in calls if read_only(call)]
    jobs += [admit(agent, call) for call in calls if not read_only(call)]
    reads = [job for job in jobs if job.tool is not None and not job.tool.mutating]
    with ThreadPoolExecutor(max_workers=8) as pool:
        running = {job.call.id: pool.submit(perform, agent, job, agent.workspace) for job in reads}
        for job in jobs:
            if job.call.id not in running:
                results[job.call.id] = perform(agent, job, agent.workspace)
        for call_id, future in running.items():
            results[call_id] = future.result()
""", """
def reads_parallel_writes_in_order(calls, agent, results):  # stores the Futures, not their results
    from concurrent.futures import ThreadPoolExecutor
    jobs = [admit(agent, call) for call in calls]
    reads = [job for job in jobs if job.tool is not None and not job.tool.mutating]
    with ThreadPoolExecutor(max_workers=8) as pool:
        for job in reads:
            results[job.call.id] = pool.submit(perform, agent, job, agent.workspace)
        for job in jobs:
            if job.call.id not in results:
                results[job.call.id] = perform(agent, job, agent.workspace)
""", """
def reads_parallel_writes_in_order(calls, agent, results):  # the reads run twice: in the pool, then in the loop
    from concurrent.futures import ThreadPoolExecutor
    jobs = [admit(agent, call) for call in calls]
    reads = [job for job in jobs if job.tool is not None and not job.tool.mutating]
    with ThreadPoolExecutor(max_workers=8) as pool:
        running = {job.call.id: pool.submit(perform, agent, job, agent.workspace) for job in reads}
        for job in jobs:
            results[job.call.id] = perform(agent, job, agent.workspace)
        for call_id, future in running.items():
            results[call_id] = future.result()
""", """
def reads_parallel_writes_in_order(calls, agent, results):  # admitted in the pool: the gate asked from its threads
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=8) as pool:
        jobs = list(pool.map(lambda call: admit(agent, call), calls))
        reads = [job for job in jobs if job.tool is not None and not job.tool.mutating]
        running = {job.call.id: pool.submit(perform, agent, job, agent.workspace) for job in reads}
        for job in jobs:
            if job.call.id not in running:
                results[job.call.id] = perform(agent, job, agent.workspace)
        for call_id, future in running.items():
            results[call_id] = future.result()
"""],
    "ch05.lock_key": ["""
def file_key(workspace, path):  # the path's text: ./a.txt and a.txt get two locks for one file
    return str(path)
""", """
def file_key(workspace, path):  # os.path.normpath of the text: relative, and links not followed
    import os
    return os.path.normpath(path)
""", """
def file_key(workspace, path):  # the right file, as text: a key is a Path
    return str((workspace.cwd / path).resolve())
"""],
    "ch06.todos": ["""
def check_todos(todos):  # hands back the caller's own list when nothing needed stripping
    for i, t in enumerate(todos):
        if not t["content"].strip():
            raise ToolError(f"todos[{i}].content is empty")
    if sum(t["status"] == "in_progress" for t in todos) > 1:
        raise ToolError("more than one in_progress")
    if all(t["content"] == t["content"].strip() for t in todos):
        return todos
    return [{"content": t["content"].strip(), "status": t["status"]} for t in todos]
""", """
def check_todos(todos):  # a new list, but of the caller's own dicts where nothing needed stripping
    kept = []
    for i, t in enumerate(todos):
        if t["content"] != t["content"].strip():
            t = {"content": t["content"].strip(), "status": t["status"]}
        if not t["content"]:
            raise ToolError(f"todos[{i}].content is empty")
        kept.append(t)
    if sum(t["status"] == "in_progress" for t in kept) > 1:
        raise ToolError("more than one in_progress")
    return kept
""", """def check_todos(todos):  # strips each content in place and returns the caller's own list, changed
    for i, item in enumerate(todos):
        item["content"] = item["content"].strip()
        if not item["content"]:
            raise ToolError(f"todos[{i}].content is empty")
    if sum(item["status"] == "in_progress" for item in todos) > 1:
        raise ToolError("more than one item is in_progress")
    return todos
""", """
def check_todos(todos):  # rstrip only: the spaces before a content are kept
    kept = [{"content": t["content"].rstrip(), "status": t["status"]} for t in todos]
    for i, item in enumerate(kept):
        if not item["content"]:
            raise ToolError(f"todos[{i}].content is empty")
    if sum(item["status"] == "in_progress" for item in kept) > 1:
        raise ToolError("more than one item is in_progress")
    return kept
""", """
def check_todos(todos):  # strip(" "): a tab or a newline around a content is kept, and a tab alone passes
    kept = [{"content": t["content"].strip(" "), "status": t["status"]} for t in todos]
    for i, item in enumerate(kept):
        if not item["content"]:
            raise ToolError(f"todos[{i}].content is empty")
    if sum(item["status"] == "in_progress" for item in kept) > 1:
        raise ToolError("more than one item is in_progress")
    return kept
""", """
def check_todos(todos):  # counts the items not pending: two done steps are refused
    kept = [{"content": t["content"].strip(), "status": t["status"]} for t in todos]
    for i, item in enumerate(kept):
        if not item["content"]:
            raise ToolError(f"todos[{i}].content is empty")
    if sum(item["status"] != "pending" for item in kept) > 1:
        raise ToolError("more than one item is in_progress")
    return kept
""", """
def check_todos(todos):  # off by one: refuses a single item in progress
    kept = [{"content": t["content"].strip(), "status": t["status"]} for t in todos]
    for i, item in enumerate(kept):
        if not item["content"]:
            raise ToolError(f"todos[{i}].content is empty")
    if sum(item["status"] == "in_progress" for item in kept) >= 1:
        raise ToolError("an item is already in_progress")
    return kept
""", """
def check_todos(todos):  # drops the empty items instead of refusing them
    kept = [{"content": t["content"].strip(), "status": t["status"]} for t in todos if t["content"].strip()]
    if sum(item["status"] == "in_progress" for item in kept) > 1:
        raise ToolError("more than one item is in_progress")
    return kept
""", """
def check_todos(todos):  # ValueError, not ToolError: the tool's caller does not turn it into words for the model
    kept = [{"content": t["content"].strip(), "status": t["status"]} for t in todos]
    for i, item in enumerate(kept):
        if not item["content"]:
            raise ValueError(f"todos[{i}].content is empty")
    if sum(item["status"] == "in_progress" for item in kept) > 1:
        raise ValueError("more than one item is in_progress")
    return kept
""", """
def check_todos(todos):  # squeezes the spaces inside a content too: "run\\nthe tests" becomes "run the tests"
    kept = [{"content": " ".join(t["content"].split()), "status": t["status"]} for t in todos]
    for i, item in enumerate(kept):
        if not item["content"]:
            raise ToolError(f"todos[{i}].content is empty")
    if sum(item["status"] == "in_progress" for item in kept) > 1:
        raise ToolError("more than one item is in_progress")
    return kept
""", """
def check_todos(todos):  # a new list, but of the caller's own items, stripped in place
    kept = list(todos)
    for i, item in enumerate(kept):
        item["content"] = item["content"].strip()
        if not item["content"]:
            raise ToolError(f"todos[{i}].content is empty")
    if sum(item["status"] == "in_progress" for item in kept) > 1:
        raise ToolError("more than one item is in_progress")
    return kept
"""],
    "ch06.team": ["""
def run_team(tasks, work, at_once):  # wave by wave: a wave's fast workers wait for its slowest
    def report(task):
        try:
            return work(task)
        except Exception as e:
            return f"[failed: {type(e).__name__}: {e}]"

    reports = []
    with ThreadPoolExecutor(max_workers=at_once) as pool:
        for start in range(0, len(tasks), at_once):
            wave = [pool.submit(report, task) for task in tasks[start:start + at_once]]
            reports += [future.result() for future in wave]
    return reports
""", """def run_team(tasks, work, at_once):  # as_completed: the reports in the order they finish
    from concurrent.futures import as_completed

    def report(task):
        try:
            return work(task)
        except Exception as e:
            return f"[failed: {type(e).__name__}: {e}]"

    with ThreadPoolExecutor(max_workers=at_once) as pool:
        return [f.result() for f in as_completed([pool.submit(report, task) for task in tasks])]
""", """
def run_team(tasks, work, at_once):  # pool.map of work itself: the first failure raises, the other reports are lost
    with ThreadPoolExecutor(max_workers=at_once) as pool:
        return list(pool.map(work, tasks))
""", """
def run_team(tasks, work, at_once):  # a thread per task: at_once is ignored
    import threading
    reports = [None] * len(tasks)

    def run(i):
        try:
            reports[i] = work(tasks[i])
        except Exception as e:
            reports[i] = f"[failed: {type(e).__name__}: {e}]"

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(tasks))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return reports
""", """
def run_team(tasks, work, at_once):  # one task after the other: never a team
    reports = []
    for task in tasks:
        try:
            reports.append(work(task))
        except Exception as e:
            reports.append(f"[failed: {type(e).__name__}: {e}]")
    return reports
""", """
def run_team(tasks, work, at_once):  # catches only some errors: a KeyError ends the whole team
    def report(task):
        try:
            return work(task)
        except (RuntimeError, ValueError, OSError) as e:
            return f"[failed: {type(e).__name__}: {e}]"

    with ThreadPoolExecutor(max_workers=at_once) as pool:
        futures = [pool.submit(report, task) for task in tasks]
        return [future.result() for future in futures]
""", """
def run_team(tasks, work, at_once):  # the error's repr: "[failed: RuntimeError('disk full')]"
    def report(task):
        try:
            return work(task)
        except Exception as e:
            return f"[failed: {e!r}]"

    with ThreadPoolExecutor(max_workers=at_once) as pool:
        futures = [pool.submit(report, task) for task in tasks]
        return [future.result() for future in futures]
""", """
def run_team(tasks, work, at_once):  # each report waited for as soon as it is submitted: one at a time
    def report(task):
        try:
            return work(task)
        except Exception as e:
            return f"[failed: {type(e).__name__}: {e}]"

    with ThreadPoolExecutor(max_workers=at_once) as pool:
        return [pool.submit(report, task).result() for task in tasks]
""", """
def run_team(tasks, work, at_once):  # off by one: a pool of at_once + 1
    def report(task):
        try:
            return work(task)
        except Exception as e:
            return f"[failed: {type(e).__name__}: {e}]"

    with ThreadPoolExecutor(max_workers=at_once + 1) as pool:
        futures = [pool.submit(report, task) for task in tasks]
        return [future.result() for future in futures]
""", """
def run_team(tasks, work, at_once):  # a pool of min(at_once, len(tasks)): max_workers=0 for no task
    def report(task):
        try:
            return work(task)
        except Exception as e:
            return f"[failed: {type(e).__name__}: {e}]"

    with ThreadPoolExecutor(max_workers=min(at_once, len(tasks))) as pool:
        futures = [pool.submit(report, task) for task in tasks]
        return [future.result() for future in futures]
""", """
def run_team(tasks, work, at_once):  # the reports under their tasks, a dict: not a list in input order
    def report(task):
        try:
            return work(task)
        except Exception as e:
            return f"[failed: {type(e).__name__}: {e}]"

    with ThreadPoolExecutor(max_workers=at_once) as pool:
        futures = {task: pool.submit(report, task) for task in tasks}
        return {task: future.result() for task, future in futures.items()}
"""],
    "ch06.reviewer": ["""
def read_only_workers(parent):  # the parent's model as it is: a worker runs on after the parent stops
    def spawn(name, task, workspace):
        tools = [t for t in parent.tools.values() if not t.mutating]
        worker = Agent(parent.llm, tools, cwd=workspace.cwd, max_rounds=WORKER_ROUNDS, gates=parent.gates)
        return worker.chat(task)
    return spawn
""", """
def read_only_workers(parent):  # no cwd: the worker reads wherever the process happens to be
    def spawn(name, task, workspace):
        tools = [t for t in parent.tools.values() if not t.mutating]
        worker = Agent(Cancellable(parent.llm, workspace.cancelled), tools, max_rounds=WORKER_ROUNDS,
                       gates=parent.gates)
        return worker.chat(task)
    return spawn
""", """
def read_only_workers(parent):  # no gates: the worker reads what the user's gate refuses
    def spawn(name, task, workspace):
        tools = [t for t in parent.tools.values() if not t.mutating]
        worker = Agent(Cancellable(parent.llm, workspace.cancelled), tools, cwd=workspace.cwd,
                       max_rounds=WORKER_ROUNDS)
        return worker.chat(task)
    return spawn
""", """from corecoder.agent import Agent
from corecoder.subagents import WORKER_ROUNDS, Cancellable

def read_only_workers(parent):  # drops write_file and edit_file by name: bash and agent are left in
    def spawn(name, task, workspace):
        tools = [t for t in parent.tools.values() if t.name not in ("write_file", "edit_file")]
        worker = Agent(Cancellable(parent.llm, workspace.cancelled), tools, cwd=workspace.cwd,
                       max_rounds=WORKER_ROUNDS, gates=parent.gates)
        return worker.chat(task)

    return spawn
""", """
from corecoder.agent import Agent
from corecoder.subagents import WORKER_ROUNDS, Cancellable

def read_only_workers(parent):  # drops write_file, edit_file and bash by name: agent is left in
    def spawn(name, task, workspace):
        tools = [t for t in parent.tools.values() if t.name not in ("write_file", "edit_file", "bash")]
        worker = Agent(Cancellable(parent.llm, workspace.cancelled), tools, cwd=workspace.cwd,
                       max_rounds=WORKER_ROUNDS, gates=parent.gates)
        return worker.chat(task)

    return spawn
""", """
from corecoder.agent import Agent
from corecoder.subagents import WORKER_ROUNDS, Cancellable

def read_only_workers(parent):  # every tool of the parent's: a reviewer may write, run and delegate
    def spawn(name, task, workspace):
        worker = Agent(Cancellable(parent.llm, workspace.cancelled), list(parent.tools.values()),
                       cwd=workspace.cwd, max_rounds=WORKER_ROUNDS, gates=parent.gates)
        return worker.chat(task)

    return spawn
""", """
from corecoder.agent import Agent
from corecoder.subagents import WORKER_ROUNDS, Cancellable

def read_only_workers(parent):  # the engine's workers: every tool but agent
    def spawn(name, task, workspace):
        tools = [t for t in parent.tools.values() if t.name != "agent"]
        worker = Agent(Cancellable(parent.llm, workspace.cancelled), tools, cwd=workspace.cwd,
                       max_rounds=WORKER_ROUNDS, gates=parent.gates)
        return worker.chat(task)

    return spawn
""", """
from corecoder.agent import Agent
from corecoder.subagents import WORKER_ROUNDS, Cancellable

def read_only_workers(parent):  # an allow-list of read_file, grep and glob: todo_write, which only reads, is missing
    def spawn(name, task, workspace):
        tools = [t for t in parent.tools.values() if t.name in ("read_file", "grep", "glob")]
        worker = Agent(Cancellable(parent.llm, workspace.cancelled), tools, cwd=workspace.cwd,
                       max_rounds=WORKER_ROUNDS, gates=parent.gates)
        return worker.chat(task)

    return spawn
""", """
from corecoder.agent import Agent
from corecoder.subagents import WORKER_ROUNDS, Cancellable

def read_only_workers(parent):  # hands the worker its name, not its task
    def spawn(name, task, workspace):
        tools = [t for t in parent.tools.values() if not t.mutating]
        worker = Agent(Cancellable(parent.llm, workspace.cancelled), tools, cwd=workspace.cwd,
                       max_rounds=WORKER_ROUNDS, gates=parent.gates)
        return worker.chat(name)

    return spawn
""", """
from corecoder.agent import Agent
from corecoder.subagents import WORKER_ROUNDS, Cancellable

def read_only_workers(parent):  # one worker for the whole team: the reviewers share a history
    tools = [t for t in parent.tools.values() if not t.mutating]
    worker = Agent(Cancellable(parent.llm, parent.workspace.cancelled), tools, cwd=parent.workspace.cwd,
                   max_rounds=WORKER_ROUNDS, gates=parent.gates)

    def spawn(name, task, workspace):
        return worker.chat(task)

    return spawn
""", """
from corecoder.agent import Agent
from corecoder.subagents import WORKER_ROUNDS, Cancellable
from corecoder.tools import default_tools

def read_only_workers(parent):  # fresh built-in tools, not the parent's: its todo list is missing
    def spawn(name, task, workspace):
        tools = [t for t in default_tools() if not t.mutating]
        worker = Agent(Cancellable(parent.llm, workspace.cancelled), tools, cwd=workspace.cwd,
                       max_rounds=WORKER_ROUNDS, gates=parent.gates)
        return worker.chat(task)

    return spawn
""", """
from corecoder.agent import Agent
from corecoder.subagents import WORKER_ROUNDS, Cancellable

def read_only_workers(parent):  # returns the worker, never runs it
    def spawn(name, task, workspace):
        tools = [t for t in parent.tools.values() if not t.mutating]
        return Agent(Cancellable(parent.llm, workspace.cancelled), tools, cwd=workspace.cwd,
                     max_rounds=WORKER_ROUNDS, gates=parent.gates)

    return spawn
"""],
    "ch07.gate": ["""
import fnmatch
from pathlib import Path

from corecoder.calls import Gate

class ProtectPaths(Gate):  # resolves the path from the process's directory, not the workspace's
    name = "protect"

    def __init__(self, root, globs):
        self.root, self.globs = Path(root).resolve(), list(globs)

    def before(self, tool, args, workspace):
        path = args.get("path")
        if not isinstance(path, str):
            return None
        target = Path(path).resolve()
        if not target.is_relative_to(self.root):
            return None
        relative = target.relative_to(self.root).as_posix()
        for glob in self.globs:
            if fnmatch.fnmatchcase(relative, glob):
                return f"{path} is protected ({glob})"
        return None
""", """
import fnmatch
from pathlib import Path

from corecoder.calls import Gate

class ProtectPaths(Gate):  # os.path.normpath: the .. folded away, the link to .env not followed
    name = "protect"

    def __init__(self, root, globs):
        self.root, self.globs = Path(root).resolve(), list(globs)

    def before(self, tool, args, workspace):
        import os
        path = args.get("path")
        if not isinstance(path, str):
            return None
        target = Path(os.path.normpath(os.path.join(workspace.cwd, path)))
        if not target.is_relative_to(self.root):
            return None
        relative = target.relative_to(self.root).as_posix()
        for glob in self.globs:
            if fnmatch.fnmatchcase(relative, glob):
                return f"{path} is protected ({glob})"
        return None
""", """
import fnmatch
from pathlib import Path

from corecoder.calls import Gate

class ProtectPaths(Gate):  # relative_to without asking first: a path outside the project makes the gate fail
    name = "protect"

    def __init__(self, root, globs):
        self.root, self.globs = Path(root).resolve(), list(globs)

    def before(self, tool, args, workspace):
        path = args.get("path")
        if not isinstance(path, str):
            return None
        relative = Path(workspace.cwd, path).resolve().relative_to(self.root).as_posix()
        for glob in self.globs:
            if fnmatch.fnmatchcase(relative, glob):
                return f"{path} is protected ({glob})"
        return None
""", """
import fnmatch
from pathlib import Path

from corecoder.calls import Gate

class ProtectPaths(Gate):  # returns None in the loop's else: only the first glob is ever tried
    name = "protect"

    def __init__(self, root, globs):
        self.root, self.globs = Path(root).resolve(), list(globs)

    def before(self, tool, args, workspace):
        path = args.get("path")
        if not isinstance(path, str):
            return None
        target = Path(workspace.cwd, path).resolve()
        if not target.is_relative_to(self.root):
            return None
        relative = target.relative_to(self.root).as_posix()
        for glob in self.globs:
            if fnmatch.fnmatchcase(relative, glob):
                return f"{path} is protected ({glob})"
            else:
                return None
""", """
import fnmatch
from pathlib import Path

from corecoder.calls import Gate

class ProtectPaths(Gate):  # resolve(strict=True): a file not written yet makes the gate fail
    name = "protect"

    def __init__(self, root, globs):
        self.root, self.globs = Path(root).resolve(), list(globs)

    def before(self, tool, args, workspace):
        path = args.get("path")
        if not isinstance(path, str):
            return None
        target = Path(workspace.cwd, path).resolve(strict=True)
        if not target.is_relative_to(self.root):
            return None
        relative = target.relative_to(self.root).as_posix()
        for glob in self.globs:
            if fnmatch.fnmatchcase(relative, glob):
                return f"{path} is protected ({glob})"
        return None
""", """
import fnmatch
from pathlib import Path

from corecoder.calls import Gate

class ProtectPaths(Gate):  # guards writing only: a read of .env goes through
    name = "protect"

    def __init__(self, root, globs):
        self.root, self.globs = Path(root).resolve(), list(globs)

    def before(self, tool, args, workspace):
        path = args.get("path")
        if not tool.mutating or not isinstance(path, str):
            return None
        target = Path(workspace.cwd, path).resolve()
        if not target.is_relative_to(self.root):
            return None
        relative = target.relative_to(self.root).as_posix()
        for glob in self.globs:
            if fnmatch.fnmatchcase(relative, glob):
                return f"{path} is protected ({glob})"
        return None
""", """
import fnmatch
from pathlib import Path

from corecoder.calls import Gate

class ProtectPaths(Gate):  # matches the absolute path: "*.pem" still works, ".env" and "secrets/*" never do
    name = "protect"

    def __init__(self, root, globs):
        self.root, self.globs = Path(root).resolve(), list(globs)

    def before(self, tool, args, workspace):
        path = args.get("path")
        if not isinstance(path, str):
            return None
        target = Path(workspace.cwd, path).resolve()
        if not target.is_relative_to(self.root):
            return None
        for glob in self.globs:
            if fnmatch.fnmatchcase(str(target), glob):
                return f"{path} is protected ({glob})"
        return None
"""],
    "ch07.hook": ["""
def no_force_push():  # a regex over the whole command: the push quoted in a commit message is vetoed
    import json
    import re
    import sys

    call = json.load(sys.stdin)
    if call["tool_name"] != "bash":
        return
    if re.search(r"\\bgit\\s+push\\b[^;&|\\n]*\\s(--force\\b(?!-)|-[a-z]*f|\\+)", call["tool_input"]["command"]):
        print("no force push; use --force-with-lease", file=sys.stderr)
        sys.exit(2)
""", """
def no_force_push():  # shlex.split, no punctuation_chars: "ls;git push -f" is one word "ls;git"
    import json
    import shlex
    import sys

    call = json.load(sys.stdin)
    if call["tool_name"] != "bash":
        return
    try:
        words = shlex.split(call["tool_input"]["command"].replace("\\n", " ; "))
    except ValueError:
        print("cannot split this command", file=sys.stderr)
        sys.exit(2)
    command = []
    for word in [*words, ";"]:
        if word not in ("&&", "||", ";", "|", "&"):
            command.append(word)
            continue
        if command[:2] == ["git", "push"] and any(
                w == "--force" or w.startswith("+") or w[:1] == "-" and w[1:2] != "-" and "f" in w
                for w in command[2:]):
            print("no force push; use --force-with-lease", file=sys.stderr)
            sys.exit(2)
        command = []
""", """
def no_force_push():  # sys.exit("reason"): Python prints it to stderr, but exits 1, not 2
    import json
    import shlex
    import sys

    call = json.load(sys.stdin)
    if call["tool_name"] != "bash":
        return
    lexer = shlex.shlex(call["tool_input"]["command"].replace("\\n", ";"), posix=True, punctuation_chars=True)
    try:
        words = list(lexer)
    except ValueError:
        sys.exit("cannot split this command")
    command = []
    for word in [*words, ";"]:
        if word not in ("&&", "||", ";", "|", "&", "(", ")"):
            command.append(word)
            continue
        if command[:2] == ["git", "push"] and any(
                w == "--force" or w.startswith("+") or w[:1] == "-" and w[1:2] != "-" and "f" in w
                for w in command[2:]):
            sys.exit("no force push; use --force-with-lease")
        command = []
""", """
def no_force_push():  # an open quote let through: what cannot be split is taken as harmless
    import json
    import shlex
    import sys

    call = json.load(sys.stdin)
    if call["tool_name"] != "bash":
        return
    lexer = shlex.shlex(call["tool_input"]["command"].replace("\\n", ";"), posix=True, punctuation_chars=True)
    try:
        words = list(lexer)
    except ValueError:
        return
    command = []
    for word in [*words, ";"]:
        if word not in ("&&", "||", ";", "|", "&", "(", ")"):
            command.append(word)
            continue
        if command[:2] == ["git", "push"] and any(
                w == "--force" or w.startswith("+") or w[:1] == "-" and w[1:2] != "-" and "f" in w
                for w in command[2:]):
            print("no force push; use --force-with-lease", file=sys.stderr)
            sys.exit(2)
        command = []
""", """
def no_force_push():  # command[0] and command[1] read without asking: a one-word command like ls raises
    import json
    import shlex
    import sys

    call = json.load(sys.stdin)
    if call["tool_name"] != "bash":
        return
    lexer = shlex.shlex(call["tool_input"]["command"].replace("\\n", ";"), posix=True, punctuation_chars=True)
    try:
        words = list(lexer)
    except ValueError:
        print("cannot split this command", file=sys.stderr)
        sys.exit(2)
    command = []
    for word in [*words, ";"]:
        if word not in ("&&", "||", ";", "|", "&", "(", ")"):
            command.append(word)
            continue
        if command[0] == "git" and command[1] == "push" and any(
                w == "--force" or w.startswith("+") or w[:1] == "-" and w[1:2] != "-" and "f" in w
                for w in command[2:]):
            print("no force push; use --force-with-lease", file=sys.stderr)
            sys.exit(2)
        command = []
""", """
def no_force_push():  # posix=False: the quotes stay on the words, and '+main' does not start with +
    import json
    import shlex
    import sys

    call = json.load(sys.stdin)
    if call["tool_name"] != "bash":
        return
    lexer = shlex.shlex(call["tool_input"]["command"].replace("\\n", ";"), posix=False, punctuation_chars=True)
    try:
        words = list(lexer)
    except ValueError:
        print("cannot split this command", file=sys.stderr)
        sys.exit(2)
    command = []
    for word in [*words, ";"]:
        if word not in ("&&", "||", ";", "|", "&", "(", ")"):
            command.append(word)
            continue
        if command[:2] == ["git", "push"] and any(
                w == "--force" or w.startswith("+") or w[:1] == "-" and w[1:2] != "-" and "f" in w
                for w in command[2:]):
            print("no force push; use --force-with-lease", file=sys.stderr)
            sys.exit(2)
        command = []
""", """
def no_force_push():  # every --force... but --force-with-lease: --force-if-includes alone is vetoed
    import json
    import shlex
    import sys

    call = json.load(sys.stdin)
    if call["tool_name"] != "bash":
        return
    lexer = shlex.shlex(call["tool_input"]["command"].replace("\\n", ";"), posix=True, punctuation_chars=True)
    try:
        words = list(lexer)
    except ValueError:
        print("cannot split this command", file=sys.stderr)
        sys.exit(2)
    command = []
    for word in [*words, ";"]:
        if word not in ("&&", "||", ";", "|", "&", "(", ")"):
            command.append(word)
            continue
        if command[:2] == ["git", "push"] and any(
                w.startswith("--force") and w != "--force-with-lease" or w.startswith("+")
                or w[:1] == "-" and w[1:2] != "-" and "f" in w for w in command[2:]):
            print("no force push; use --force-with-lease", file=sys.stderr)
            sys.exit(2)
        command = []
"""],
    "ch07.classify": ["""
def classify(line):  # no try: a banner or a line cut short raises instead of being noise
    import json
    message = json.loads(line)
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return "noise", None
    if "method" in message:
        return ("request" if "id" in message else "notification"), message
    if isinstance(message.get("id"), (int, str)) and not isinstance(message["id"], bool):
        return "answer", message
    return "neither", message
""", """
def classify(line):  # the id judged by its truth: id 0 and id "" are no answer
    import json
    try:
        message = json.loads(line)
    except ValueError:
        return "noise", None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return "noise", None
    if "method" in message:
        return ("request" if "id" in message else "notification"), message
    if message.get("id") and not isinstance(message["id"], bool):
        return "answer", message
    return "neither", message
""", """
def classify(line):  # an id may be any number: 1.0 and 2.5 are taken as answers
    import json
    try:
        message = json.loads(line)
    except ValueError:
        return "noise", None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return "noise", None
    if "method" in message:
        return ("request" if "id" in message else "notification"), message
    if isinstance(message.get("id"), (int, float, str)) and not isinstance(message["id"], bool):
        return "answer", message
    return "neither", message
""", """
def classify(line):  # a request needs an id that is not null: {"method": ..., "id": null} is called a notification
    import json
    try:
        message = json.loads(line)
    except ValueError:
        return "noise", None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return "noise", None
    if "method" in message:
        return ("request" if message.get("id") is not None else "notification"), message
    if isinstance(message.get("id"), (int, str)) and not isinstance(message["id"], bool):
        return "answer", message
    return "neither", message
""", """
def classify(line):  # an answer told by its result or error, not by its id
    import json
    try:
        message = json.loads(line)
    except ValueError:
        return "noise", None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return "noise", None
    if "method" in message:
        return ("request" if "id" in message else "notification"), message
    if "result" in message or "error" in message:
        return "answer", message
    return "neither", message
""", """
def classify(line):  # the method judged by its truth: "method": "" is taken for none
    import json
    try:
        message = json.loads(line)
    except ValueError:
        return "noise", None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return "noise", None
    if message.get("method"):
        return ("request" if "id" in message else "notification"), message
    if isinstance(message.get("id"), (int, str)) and not isinstance(message["id"], bool):
        return "answer", message
    return "neither", message
""", """
def classify(line):  # "jsonrpc" compared loosely: 2.0 the number passes as "2.0"
    import json
    try:
        message = json.loads(line)
    except ValueError:
        return "noise", None
    if not isinstance(message, dict) or str(message.get("jsonrpc")) != "2.0":
        return "noise", None
    if "method" in message:
        return ("request" if "id" in message else "notification"), message
    if isinstance(message.get("id"), (int, str)) and not isinstance(message["id"], bool):
        return "answer", message
    return "neither", message
"""],
    "ch07.server": ["""
def word_server():  # a line on stdout to say it is ready: the client reads it as a message
    import json
    import sys

    tool = {"name": "word_count", "description": "How many words a text has.",
            "inputSchema": {"type": "object", "required": ["text"],
                            "properties": {"text": {"type": "string"}}}}
    print("word server ready", flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        if "id" not in request:
            continue
        method, params = request["method"], request.get("params") or {}
        answer = {"jsonrpc": "2.0", "id": request["id"]}
        if method == "initialize":
            answer["result"] = {"protocolVersion": params["protocolVersion"],
                                "capabilities": {"tools": {}}, "serverInfo": {"name": "words"}}
        elif method == "tools/list":
            answer["result"] = {"tools": [tool]}
        elif method == "tools/call" and params["name"] == "word_count":
            words = len(params["arguments"]["text"].split())
            answer["result"] = {"content": [{"type": "text", "text": str(words)}]}
        else:
            answer["error"] = {"code": -32601, "message": f"no method {method}"}
        print(json.dumps(answer), flush=True)
""", """
def word_server():  # answers every message, notifications too: an error with id null the client cannot place
    import json
    import sys

    tool = {"name": "word_count", "description": "How many words a text has.",
            "inputSchema": {"type": "object", "required": ["text"],
                            "properties": {"text": {"type": "string"}}}}
    for line in sys.stdin:
        request = json.loads(line)
        method, params = request["method"], request.get("params") or {}
        answer = {"jsonrpc": "2.0", "id": request.get("id")}
        if method == "initialize":
            answer["result"] = {"protocolVersion": params["protocolVersion"],
                                "capabilities": {"tools": {}}, "serverInfo": {"name": "words"}}
        elif method == "tools/list":
            answer["result"] = {"tools": [tool]}
        elif method == "tools/call" and params["name"] == "word_count":
            words = len(params["arguments"]["text"].split())
            answer["result"] = {"content": [{"type": "text", "text": str(words)}]}
        else:
            answer["error"] = {"code": -32601, "message": f"no method {method}"}
        print(json.dumps(answer), flush=True)
""", """
def word_server():  # counts the words of any tool called: char_count gets a count, not an error
    import json
    import sys

    tool = {"name": "word_count", "description": "How many words a text has.",
            "inputSchema": {"type": "object", "required": ["text"],
                            "properties": {"text": {"type": "string"}}}}
    for line in sys.stdin:
        request = json.loads(line)
        if "id" not in request:
            continue
        method, params = request["method"], request.get("params") or {}
        answer = {"jsonrpc": "2.0", "id": request["id"]}
        if method == "initialize":
            answer["result"] = {"protocolVersion": params["protocolVersion"],
                                "capabilities": {"tools": {}}, "serverInfo": {"name": "words"}}
        elif method == "tools/list":
            answer["result"] = {"tools": [tool]}
        elif method == "tools/call":
            words = len(params["arguments"]["text"].split())
            answer["result"] = {"content": [{"type": "text", "text": str(words)}]}
        else:
            answer["error"] = {"code": -32601, "message": f"no method {method}"}
        print(json.dumps(answer), flush=True)
""", """
def word_server():  # split(" "): the empty text has one word, and a tab or a newline joins two
    import json
    import sys

    tool = {"name": "word_count", "description": "How many words a text has.",
            "inputSchema": {"type": "object", "required": ["text"],
                            "properties": {"text": {"type": "string"}}}}
    for line in sys.stdin:
        request = json.loads(line)
        if "id" not in request:
            continue
        method, params = request["method"], request.get("params") or {}
        answer = {"jsonrpc": "2.0", "id": request["id"]}
        if method == "initialize":
            answer["result"] = {"protocolVersion": params["protocolVersion"],
                                "capabilities": {"tools": {}}, "serverInfo": {"name": "words"}}
        elif method == "tools/list":
            answer["result"] = {"tools": [tool]}
        elif method == "tools/call" and params["name"] == "word_count":
            words = len(params["arguments"]["text"].split(" "))
            answer["result"] = {"content": [{"type": "text", "text": str(words)}]}
        else:
            answer["error"] = {"code": -32601, "message": f"no method {method}"}
        print(json.dumps(answer), flush=True)
""", """
def word_server():  # an unknown tool answered with a result that says isError, not with a JSON-RPC error
    import json
    import sys

    tool = {"name": "word_count", "description": "How many words a text has.",
            "inputSchema": {"type": "object", "required": ["text"],
                            "properties": {"text": {"type": "string"}}}}
    for line in sys.stdin:
        request = json.loads(line)
        if "id" not in request:
            continue
        method, params = request["method"], request.get("params") or {}
        answer = {"jsonrpc": "2.0", "id": request["id"]}
        if method == "initialize":
            answer["result"] = {"protocolVersion": params["protocolVersion"],
                                "capabilities": {"tools": {}}, "serverInfo": {"name": "words"}}
        elif method == "tools/list":
            answer["result"] = {"tools": [tool]}
        elif method == "tools/call":
            if params["name"] == "word_count":
                words = len(params["arguments"]["text"].split())
                answer["result"] = {"content": [{"type": "text", "text": str(words)}]}
            else:
                answer["result"] = {"content": [{"type": "text", "text": "no such tool"}], "isError": True}
        else:
            answer["error"] = {"code": -32601, "message": f"no method {method}"}
        print(json.dumps(answer), flush=True)
""", """
def word_server():  # reads the whole of stdin before answering: the client waits for an answer that never comes
    import json
    import sys

    tool = {"name": "word_count", "description": "How many words a text has.",
            "inputSchema": {"type": "object", "required": ["text"],
                            "properties": {"text": {"type": "string"}}}}
    for line in sys.stdin.read().splitlines():
        request = json.loads(line)
        if "id" not in request:
            continue
        method, params = request["method"], request.get("params") or {}
        answer = {"jsonrpc": "2.0", "id": request["id"]}
        if method == "initialize":
            answer["result"] = {"protocolVersion": params["protocolVersion"],
                                "capabilities": {"tools": {}}, "serverInfo": {"name": "words"}}
        elif method == "tools/list":
            answer["result"] = {"tools": [tool]}
        elif method == "tools/call" and params["name"] == "word_count":
            words = len(params["arguments"]["text"].split())
            answer["result"] = {"content": [{"type": "text", "text": str(words)}]}
        else:
            answer["error"] = {"code": -32601, "message": f"no method {method}"}
        print(json.dumps(answer), flush=True)
""", """
def word_server():  # the id sent back as a string: the client waits on 1, and "1" is another id
    import json
    import sys

    tool = {"name": "word_count", "description": "How many words a text has.",
            "inputSchema": {"type": "object", "required": ["text"],
                            "properties": {"text": {"type": "string"}}}}
    for line in sys.stdin:
        request = json.loads(line)
        if "id" not in request:
            continue
        method, params = request["method"], request.get("params") or {}
        answer = {"jsonrpc": "2.0", "id": str(request["id"])}
        if method == "initialize":
            answer["result"] = {"protocolVersion": params["protocolVersion"],
                                "capabilities": {"tools": {}}, "serverInfo": {"name": "words"}}
        elif method == "tools/list":
            answer["result"] = {"tools": [tool]}
        elif method == "tools/call" and params["name"] == "word_count":
            words = len(params["arguments"]["text"].split())
            answer["result"] = {"content": [{"type": "text", "text": str(words)}]}
        else:
            answer["error"] = {"code": -32601, "message": f"no method {method}"}
        print(json.dumps(answer), flush=True)
"""],
    "ch08.gate_order": ["""
def gate_order(plan, hooks, consent, checkpoints):  # every gate handed over, None included: the Agent meets a None
    return [plan, hooks, consent, checkpoints]
""", """
def gate_order(plan, hooks, consent, checkpoints):  # the copy first, "to be safe": a refused call leaves a checkpoint
    return [g for g in (checkpoints, plan, hooks, consent) if g is not None]
""", """
def gate_order(plan, hooks, consent, checkpoints):  # the user asked before the hook: they say yes to a call it vetoes
    return [g for g in (plan, consent, hooks, checkpoints) if g is not None]
""", """
def gate_order(plan, hooks, consent, checkpoints):  # the user first: asked, in plan mode, about a call refused
    return [g for g in (consent, plan, hooks, checkpoints) if g is not None]
""", """
def gate_order(plan, hooks, consent, checkpoints):  # the hook before plan mode: in plan mode it speaks first
    return [g for g in (hooks, plan, consent, checkpoints) if g is not None]
""", """
def gate_order(plan, hooks, consent, checkpoints):  # sorted by name, as if the order did not matter
    return sorted((g for g in (plan, hooks, consent, checkpoints) if g is not None), key=lambda g: g.name)
""", """
def gate_order(plan, hooks, consent, checkpoints):  # the copy before the user: a "no" leaves a checkpoint
    return [g for g in (plan, hooks, checkpoints, consent) if g is not None]
""", """
def gate_order(plan, hooks, consent, checkpoints):  # plan mode dropped while off: /plan turns on a gate the agent lacks
    gates = [plan] if plan is not None and plan.on else []
    return gates + [g for g in (hooks, consent, checkpoints) if g is not None]
"""],
    "ch08.fingerprint": ["""
def fingerprint(files, notes):  # the dict's repr keeps the order the files were read in: a reorder asks again
    import hashlib
    return hashlib.sha256((repr(files) + repr(notes)).encode()).hexdigest()
""", """
def fingerprint(files, notes):  # the bytes alone: a file renamed, or split in two, hashes the same
    import hashlib
    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(files[name])
    for note in notes:
        digest.update(note.encode())
    return digest.hexdigest()
""", """
def fingerprint(files, notes):  # "name:" before each file: a hooks.json holding "x" "mcp.json:" "y" reads as two files
    import hashlib
    digest = hashlib.sha256()
    for name, data in sorted(files.items()):
        digest.update(name.encode() + b":" + data)
    for note in notes:
        digest.update(b"note:" + note.encode())
    return digest.hexdigest()
""", """
def fingerprint(files, notes):  # a name line, then the content: a line break and a name in a file read as the next file
    import hashlib
    text = b"\\n".join(name.encode() + b"\\n" + data for name, data in sorted(files.items()))
    return hashlib.sha256(text + b"\\n" + "\\n".join(notes).encode()).hexdigest()
""", """
def fingerprint(files, notes):  # the length, but no mark where it ends: "11" + ... reads as "1", a byte "1", ...
    import hashlib
    digest = hashlib.sha256()
    for name, data in sorted(files.items()):
        digest.update(name.encode())
        digest.update(str(len(data)).encode())
        digest.update(data)
    for note in notes:
        digest.update(f"note{len(note)}{note}".encode())
    return digest.hexdigest()
""", """
def fingerprint(files, notes):  # decoded with errors="replace": two different bad bytes both read as U+FFFD
    import hashlib
    import json
    shown = {name: data.decode("utf-8", "replace") for name, data in files.items()}
    return hashlib.sha256(json.dumps([shown, list(notes)], sort_keys=True).encode()).hexdigest()
""", """
def fingerprint(files, notes):  # the digest's bytes, not a str: they cannot go in a JSON file
    import hashlib
    digest = hashlib.sha256()
    for name, data in [*sorted(files.items()), *((".", n.encode()) for n in notes)]:
        digest.update(f"{name}\\0{len(data)}\\0".encode() + data)
    return digest.digest()
""", """
def fingerprint(files, notes):  # the files only: a .env that sends the conversation elsewhere is not asked about
    import hashlib
    digest = hashlib.sha256()
    for name, data in sorted(files.items()):
        digest.update(f"{name}\\0{len(data)}\\0".encode() + data)
    return digest.hexdigest()
"""],
    "ch08.instructions": ["""
def instruction_files(cwd):  # exists() follows a link: one that leads nowhere is quietly left out
    from corecoder.workspace import git_root
    cwd = Path(cwd).resolve()
    root = git_root(cwd) or cwd
    folders = [cwd, *cwd.parents]
    folders = list(reversed(folders[: folders.index(root) + 1]))
    found = [next((d / n for n in ("AGENTS.md", "CLAUDE.md") if (d / n).exists()), None) for d in folders]
    return [f for f in found if f is not None]
""", """
def instruction_files(cwd):  # the cwd's file first: the project's notes last, refining the nearest
    from corecoder.workspace import git_root
    cwd = Path(cwd).resolve()
    root = git_root(cwd) or cwd
    folders = [cwd, *cwd.parents]
    folders = folders[: folders.index(root) + 1]
    found = [next((d / n for n in ("AGENTS.md", "CLAUDE.md") if (d / n).exists() or (d / n).is_symlink()), None)
             for d in folders]
    return [f for f in found if f is not None]
""", """
def instruction_files(cwd):  # outside a repository, every folder up to / is the project's
    from corecoder.workspace import git_root
    cwd = Path(cwd).resolve()
    root = git_root(cwd) or Path(cwd.anchor)
    folders = [cwd, *cwd.parents]
    folders = list(reversed(folders[: folders.index(root) + 1]))
    found = [next((d / n for n in ("AGENTS.md", "CLAUDE.md") if (d / n).exists() or (d / n).is_symlink()), None)
             for d in folders]
    return [f for f in found if f is not None]
""", """
def instruction_files(cwd):  # both names listed where both are there: CLAUDE.md counts only where AGENTS.md is not
    from corecoder.workspace import git_root
    cwd = Path(cwd).resolve()
    root = git_root(cwd) or cwd
    folders = [cwd, *cwd.parents]
    out = []
    for d in reversed(folders[: folders.index(root) + 1]):
        out += [d / n for n in ("AGENTS.md", "CLAUDE.md") if (d / n).exists() or (d / n).is_symlink()]
    return out
""", """
def instruction_files(cwd):  # .git looked for as a folder only: a worktree's .git is a file
    cwd = Path(cwd).resolve()
    root = next((d for d in (cwd, *cwd.parents) if (d / ".git").is_dir()), cwd)
    folders = [cwd, *cwd.parents]
    folders = list(reversed(folders[: folders.index(root) + 1]))
    found = [next((d / n for n in ("AGENTS.md", "CLAUDE.md") if (d / n).exists() or (d / n).is_symlink()), None)
             for d in folders]
    return [f for f in found if f is not None]
""", """
def instruction_files(cwd):  # a while loop that stops on reaching the root, before looking in it
    from corecoder.workspace import git_root
    here = Path(cwd).resolve()
    root = git_root(here) or here
    out = []
    while here != root:
        for name in ("AGENTS.md", "CLAUDE.md"):
            if (here / name).exists() or (here / name).is_symlink():
                out.insert(0, here / name)
                break
        here = here.parent
    return out
""", """
def instruction_files(cwd):  # cwd not resolved: reached through a link, it never meets its git root (ValueError)
    from corecoder.workspace import git_root
    cwd = Path(cwd)
    root = git_root(cwd) or cwd
    folders = [cwd, *cwd.parents]
    folders = list(reversed(folders[: folders.index(root) + 1]))
    found = [next((d / n for n in ("AGENTS.md", "CLAUDE.md") if (d / n).exists() or (d / n).is_symlink()), None)
             for d in folders]
    return [f for f in found if f is not None]
""", """
def instruction_files(cwd):  # strings from os.path, not paths: the next step calls path.relative_to and is_symlink
    import os
    from corecoder.workspace import git_root
    here = os.path.realpath(cwd)
    root = str(git_root(here) or here)
    folders = [here]
    while folders[-1] != root:
        folders.append(os.path.dirname(folders[-1]))
    found = [next((os.path.join(d, n) for n in ("AGENTS.md", "CLAUDE.md") if os.path.lexists(os.path.join(d, n))),
                  None) for d in reversed(folders)]
    return [f for f in found if f is not None]
"""],
    "ch09.session_path": ["""
import re
from pathlib import Path
from corecoder.session import SessionError

ID = re.compile(r"[A-Za-z0-9_-]{1,64}")

def session_path(home, session_id):  # the resolved path checked, the unresolved one returned: a link still
    if not isinstance(session_id, str):
        raise SessionError("a session id must be text")
    clean = session_id.strip().removesuffix(".jsonl")
    if not ID.fullmatch(clean):
        raise SessionError(f"bad session id {session_id!r}")
    folder = Path(home, "sessions").resolve()
    if (folder / f"{clean}.jsonl").resolve().parent != folder:
        raise SessionError(f"session {clean!r} points outside {folder}")
    return folder / f"{clean}.jsonl"
""", """
import re
from pathlib import Path
from corecoder.session import SessionError

ID = re.compile(r"[A-Za-z0-9_-]{1,64}")

def session_path(home, session_id):  # rstrip takes letters, not a suffix: "fix-login" becomes "fix-logi"
    if not isinstance(session_id, str):
        raise SessionError("a session id must be text")
    clean = session_id.strip().rstrip(".jsonl")
    if not ID.fullmatch(clean):
        raise SessionError(f"bad session id {session_id!r}")
    folder = Path(home, "sessions").resolve()
    path = (folder / f"{clean}.jsonl").resolve()
    if path.parent != folder:
        raise SessionError(f"session {clean!r} points outside {folder}")
    return path
""", """
from pathlib import Path
from corecoder.session import SessionError

def session_path(home, session_id):  # a blocklist of ways out: "..", "/" and "\\\\"; an empty id, a space, "é" get by
    if not isinstance(session_id, str):
        raise SessionError("a session id must be text")
    clean = session_id.strip().removesuffix(".jsonl")
    if ".." in clean or "/" in clean or "\\\\" in clean or len(clean) > 64:
        raise SessionError(f"bad session id {session_id!r}")
    folder = Path(home, "sessions").resolve()
    path = (folder / f"{clean}.jsonl").resolve()
    if path.parent != folder:
        raise SessionError(f"session {clean!r} points outside {folder}")
    return path
""", """
import os
import re
from pathlib import Path
from corecoder.session import SessionError

ID = re.compile(r"[A-Za-z0-9_-]{1,64}")

def session_path(home, session_id):  # os.path.normpath: ".." folded away, but a link is not followed
    if not isinstance(session_id, str):
        raise SessionError("a session id must be text")
    clean = session_id.strip().removesuffix(".jsonl")
    if not ID.fullmatch(clean):
        raise SessionError(f"bad session id {session_id!r}")
    folder = os.path.normpath(os.path.join(home, "sessions"))
    path = os.path.normpath(os.path.join(folder, clean + ".jsonl"))
    if os.path.dirname(path) != folder:
        raise SessionError(f"session {clean!r} points outside {folder}")
    return Path(path)
""", """
import re
from pathlib import Path
from corecoder.session import SessionError

def session_path(home, session_id):  # \\w in the pattern: it takes "é", "٣" and "ｘ" too
    if not isinstance(session_id, str):
        raise SessionError("a session id must be text")
    clean = session_id.strip().removesuffix(".jsonl")
    if not re.fullmatch(r"[\\w-]{1,64}", clean):
        raise SessionError(f"bad session id {session_id!r}")
    folder = Path(home, "sessions").resolve()
    path = (folder / f"{clean}.jsonl").resolve()
    if path.parent != folder:
        raise SessionError(f"session {clean!r} points outside {folder}")
    return path
""", """
import re
from pathlib import Path
from corecoder.session import SessionError

ID = re.compile(r"[A-Za-z0-9_-]{1,64}")

def session_path(home, session_id):  # strips dots, slashes and spaces off both ends: "../outside" becomes "outside"
    if not isinstance(session_id, str):
        raise SessionError("a session id must be text")
    clean = session_id.strip(" \\n\\t./\\\\").removesuffix(".jsonl").strip(" ./\\\\")
    if not ID.fullmatch(clean):
        raise SessionError(f"bad session id {session_id!r}")
    folder = Path(home, "sessions").resolve()
    path = (folder / f"{clean}.jsonl").resolve()
    if path.parent != folder:
        raise SessionError(f"session {clean!r} points outside {folder}")
    return path
""", """
from pathlib import Path
from corecoder.session import SessionError

def session_path(home, session_id):  # str.isalnum: "é" and "٣" are letters and digits to it
    if not isinstance(session_id, str):
        raise SessionError("a session id must be text")
    clean = session_id.strip().removesuffix(".jsonl")
    if not (1 <= len(clean) <= 64 and all(c.isalnum() or c in "-_" for c in clean)):
        raise SessionError(f"bad session id {session_id!r}")
    folder = Path(home, "sessions").resolve()
    path = (folder / f"{clean}.jsonl").resolve()
    if path.parent != folder:
        raise SessionError(f"session {clean!r} points outside {folder}")
    return path
""", """
import re
from pathlib import Path
from corecoder.session import SessionError

ID = re.compile(r"[A-Za-z0-9_-]{1,64}")

def session_path(home, session_id):  # only the folder resolved: the entry "away" is a link, and is followed outside
    if not isinstance(session_id, str):
        raise SessionError("a session id must be text")
    clean = session_id.strip().removesuffix(".jsonl")
    if not ID.fullmatch(clean):
        raise SessionError(f"bad session id {session_id!r}")
    folder = Path(home, "sessions").resolve()
    path = folder / f"{clean}.jsonl"
    if path.parent != folder:
        raise SessionError(f"session {clean!r} points outside {folder}")
    return path
""", """
import re
from pathlib import Path
from corecoder.session import SessionError

def session_path(home, session_id):  # re.match with "$": "$" also matches before a last newline, "kept\\n.jsonl" passes
    if not isinstance(session_id, str):
        raise SessionError("a session id must be text")
    clean = session_id.strip().removesuffix(".jsonl")
    if not re.match(r"^[A-Za-z0-9_-]{1,64}$", clean):
        raise SessionError(f"bad session id {session_id!r}")
    folder = Path(home, "sessions").resolve()
    path = (folder / f"{clean}.jsonl").resolve()
    if path.parent != folder:
        raise SessionError(f"session {clean!r} points outside {folder}")
    return path
""", """
import re
from pathlib import Path
from corecoder.session import SessionError

ID = re.compile(r"[A-Za-z0-9_-]{1,64}")

def session_path(home, session_id):  # a prefix of the text: HOME/sessions-old/x.jsonl starts with HOME/sessions
    if not isinstance(session_id, str):
        raise SessionError("a session id must be text")
    clean = session_id.strip().removesuffix(".jsonl")
    if not ID.fullmatch(clean):
        raise SessionError(f"bad session id {session_id!r}")
    folder = Path(home, "sessions").resolve()
    path = (folder / f"{clean}.jsonl").resolve()
    if not str(path).startswith(str(folder)):
        raise SessionError(f"session {clean!r} points outside {folder}")
    return path
""", """
import re
from pathlib import Path
from corecoder.session import SessionError

ID = re.compile(r"[A-Za-z0-9_-]{1,64}")

def session_path(home, session_id):  # the file resolved, not the folder: a home reached through a link refuses every id
    if not isinstance(session_id, str):
        raise SessionError("a session id must be text")
    clean = session_id.strip().removesuffix(".jsonl")
    if not ID.fullmatch(clean):
        raise SessionError(f"bad session id {session_id!r}")
    folder = Path(home, "sessions")
    path = (folder / f"{clean}.jsonl").resolve()
    if path.parent != folder:
        raise SessionError(f"session {clean!r} points outside {folder}")
    return path
""", """
import re
from pathlib import Path
from corecoder.session import SessionError

ID = re.compile(r"[A-Za-z0-9_-]{1,64}")

def session_path(home, session_id):  # is_relative_to: a link into a folder inside sessions is let through
    if not isinstance(session_id, str):
        raise SessionError("a session id must be text")
    clean = session_id.strip().removesuffix(".jsonl")
    if not ID.fullmatch(clean):
        raise SessionError(f"bad session id {session_id!r}")
    folder = Path(home, "sessions").resolve()
    path = (folder / f"{clean}.jsonl").resolve()
    if not path.is_relative_to(folder):
        raise SessionError(f"session {clean!r} points outside {folder}")
    return path
""", """
import re
from pathlib import Path
from corecoder.session import SessionError

ID = re.compile(r"[A-Za-z0-9_-]{1,64}")

def session_path(home, session_id):  # strips again after the .jsonl: "kept .jsonl" is taken as "kept"
    if not isinstance(session_id, str):
        raise SessionError("a session id must be text")
    clean = session_id.strip().removesuffix(".jsonl").strip()
    if not ID.fullmatch(clean):
        raise SessionError(f"bad session id {session_id!r}")
    folder = Path(home, "sessions").resolve()
    path = (folder / f"{clean}.jsonl").resolve()
    if path.parent != folder:
        raise SessionError(f"session {clean!r} points outside {folder}")
    return path
""", """
import re
from pathlib import Path
from corecoder.session import SessionError

ID = re.compile(r"[A-Za-z0-9_-]{1,64}")

def session_path(home, session_id):  # every ".jsonl" taken off, not one at the end: "kept.jsonl.jsonl" is taken
    if not isinstance(session_id, str):
        raise SessionError("a session id must be text")
    clean = session_id.strip().replace(".jsonl", "")
    if not ID.fullmatch(clean):
        raise SessionError(f"bad session id {session_id!r}")
    folder = Path(home, "sessions").resolve()
    path = (folder / f"{clean}.jsonl").resolve()
    if path.parent != folder:
        raise SessionError(f"session {clean!r} points outside {folder}")
    return path
""", """
import re
from pathlib import Path
from corecoder.session import SessionError

ID = re.compile(r"[A-Za-z0-9_-]{1,64}")

def session_path(home, session_id):  # str() of anything: the number 7 becomes the session "7"
    clean = str(session_id).strip().removesuffix(".jsonl")
    if not ID.fullmatch(clean):
        raise SessionError(f"bad session id {session_id!r}")
    folder = Path(home, "sessions").resolve()
    path = (folder / f"{clean}.jsonl").resolve()
    if path.parent != folder:
        raise SessionError(f"session {clean!r} points outside {folder}")
    return path
""", """
import re
from pathlib import Path
from corecoder.session import SessionError

ID = re.compile(r"[A-Za-z0-9_-]{1,64}")

def session_path(home, session_id):  # rstrip(".jsonl") strips letters, not a suffix: "fix-login" becomes "fix-logi"
    if not isinstance(session_id, str):
        raise SessionError("a session id must be text")
    clean = session_id.strip().rstrip(".jsonl")
    if not ID.fullmatch(clean):
        raise SessionError(f"bad session id {session_id!r}")
    folder = Path(home, "sessions").resolve()
    path = (folder / f"{clean}.jsonl").resolve()
    if path.parent != folder:
        raise SessionError(f"session {clean!r} points outside {folder}")
    return path
"""],
    "ch09.replay": ["""
import json
from corecoder.session import _message_ok, repair

def replay(lines):  # a TypeError caught instead of a list checked: "messages": {} passes all() and wipes the history
    messages = []
    for line in lines:
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if not isinstance(record, dict):
            continue
        if record.get("type") == "message" and _message_ok(record.get("message")):
            messages.append(record["message"])
        elif record.get("type") == "history":
            try:
                if all(_message_ok(m) for m in record.get("messages")):
                    messages = list(record.get("messages"))
            except TypeError:
                pass
    return repair(messages, [])
""", """
import json
from corecoder.session import _message_ok, repair

def replay(lines):  # only json's own error caught: a line nested too deep raises RecursionError and ends the resume
    messages = []
    for line in lines:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(record, dict):
            continue
        if record.get("type") == "message" and _message_ok(record.get("message")):
            messages.append(record["message"])
        elif record.get("type") == "history":
            batch = record.get("messages")
            if isinstance(batch, list) and all(_message_ok(m) for m in batch):
                messages = list(batch)
    return repair(messages, [])
""", """
import json
from corecoder.session import _message_ok, repair

def replay(lines):  # the whole loop in one try: the first line that cannot be read ends the reading
    messages = []
    try:
        for line in lines:
            record = json.loads(line)
            if not isinstance(record, dict):
                continue
            if record.get("type") == "message" and _message_ok(record.get("message")):
                messages.append(record["message"])
            elif record.get("type") == "history":
                batch = record.get("messages")
                if isinstance(batch, list) and all(_message_ok(m) for m in batch):
                    messages = list(batch)
    except (ValueError, RecursionError):
        pass
    return repair(messages, [])
""", """
import json
from corecoder.session import _message_ok, repair

def replay(lines):  # a history record's messages appended, as a message record's: the compacted ones are sent again
    messages = []
    for line in lines:
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if not isinstance(record, dict):
            continue
        batch = {"message": [record.get("message")], "history": record.get("messages")}.get(record.get("type"))
        if isinstance(batch, list) and all(_message_ok(m) for m in batch):
            messages.extend(batch)
    return repair(messages, [])
""", """
import json
from corecoder.session import repair

ROLES = {"system", "user", "assistant", "tool"}

def replay(lines):  # a message checked for its role only: content that is not text, calls that are 7 get through
    messages = []
    for line in lines:
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if not isinstance(record, dict):
            continue
        kind = record.get("type")
        batch = [record.get("message")] if kind == "message" else record.get("messages") if kind == "history" else None
        if isinstance(batch, list) and all(isinstance(m, dict) and m.get("role") in ROLES for m in batch):
            messages = messages + batch if kind == "message" else list(batch)
    return repair(messages, [])
""", """
import json
from corecoder.session import _message_ok, repair

def replay(lines):  # a damaged line throws the reader off: the line after it is skipped too
    messages, skip = [], False
    for line in lines:
        if skip:
            skip = False
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            skip = True
            continue
        if not isinstance(record, dict):
            continue
        kind = record.get("type")
        batch = [record.get("message")] if kind == "message" else record.get("messages") if kind == "history" else None
        if isinstance(batch, list) and all(_message_ok(m) for m in batch):
            messages[len(messages) if kind == "message" else 0:] = batch
    return repair(messages, [])
""", """
import json
from corecoder.session import _message_ok, repair

def replay(lines, messages=[]):  # a default list kept between calls: the second session replays onto the first
    for line in lines:
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if not isinstance(record, dict):
            continue
        kind = record.get("type")
        batch = [record.get("message")] if kind == "message" else record.get("messages") if kind == "history" else None
        if isinstance(batch, list) and all(_message_ok(m) for m in batch):
            messages[len(messages) if kind == "message" else 0:] = batch
    return repair(messages, [])
""", """
import json
from corecoder.session import _message_ok, repair

def replay(lines):  # the torn last line popped off the caller's list
    while lines and not lines[-1].rstrip().endswith("}"):
        lines.pop()
    messages = []
    for line in lines:
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if not isinstance(record, dict):
            continue
        kind = record.get("type")
        batch = [record.get("message")] if kind == "message" else record.get("messages") if kind == "history" else None
        if isinstance(batch, list) and all(_message_ok(m) for m in batch):
            messages[len(messages) if kind == "message" else 0:] = batch
    return repair(messages, [])
""", """
import json
from corecoder.session import _message_ok

def replay(lines):  # not repaired: a call the crash left unanswered gets a 400 on every request after
    messages = []
    for line in lines:
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if not isinstance(record, dict):
            continue
        kind = record.get("type")
        batch = [record.get("message")] if kind == "message" else record.get("messages") if kind == "history" else None
        if isinstance(batch, list) and all(_message_ok(m) for m in batch):
            messages[len(messages) if kind == "message" else 0:] = batch
    return messages
""", """
import json
from corecoder.session import _message_ok, repair

def replay(lines):  # repair(messages), no list: a history it cannot make legal raises, not cut back
    messages = []
    for line in lines:
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if not isinstance(record, dict):
            continue
        kind = record.get("type")
        batch = [record.get("message")] if kind == "message" else record.get("messages") if kind == "history" else None
        if isinstance(batch, list) and all(_message_ok(m) for m in batch):
            messages[len(messages) if kind == "message" else 0:] = batch
    return repair(messages)
""", """
import json
from corecoder.session import _message_ok, repair

def replay(lines):  # record["type"]: a record with no type (a bare message pasted in) raises KeyError
    messages = []
    for line in lines:
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if not isinstance(record, dict):
            continue
        kind = record["type"]
        batch = [record.get("message")] if kind == "message" else record.get("messages") if kind == "history" else None
        if isinstance(batch, list) and all(_message_ok(m) for m in batch):
            messages[len(messages) if kind == "message" else 0:] = batch
    return repair(messages, [])
""", """
import json
from corecoder.session import _message_ok, repair

def replay(lines):  # a damaged history record's good messages kept: a record of the wrong shape is skipped whole
    messages = []
    for line in lines:
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if not isinstance(record, dict):
            continue
        kind = record.get("type")
        if kind == "message" and _message_ok(record.get("message")):
            messages.append(record["message"])
        elif kind == "history" and isinstance(record.get("messages"), list):
            messages = [m for m in record["messages"] if _message_ok(m)]
    return repair(messages, [])
""", """
import json
from corecoder.session import _message_ok, repair

def replay(lines):  # starts from the last history record, whole or not: a damaged one wipes what came before
    records = []
    for line in lines:
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(record, dict):
            records.append(record)
    last = max((i for i, r in enumerate(records) if r.get("type") == "history"), default=None)
    messages = []
    if last is not None:
        batch = records[last].get("messages")
        if isinstance(batch, list) and all(_message_ok(m) for m in batch):
            messages = list(batch)
        records = records[last + 1:]
    for record in records:
        if record.get("type") == "message" and _message_ok(record.get("message")):
            messages.append(record["message"])
    return repair(messages, [])
""", """
import json
from corecoder.session import _message_ok, repair

def replay(lines):  # an empty history record is skipped: a history emptied by /reset keeps the old one
    messages = []
    for line in lines:
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if not isinstance(record, dict):
            continue
        kind = record.get("type")
        batch = [record.get("message")] if kind == "message" else record.get("messages") if kind == "history" else None
        if batch and isinstance(batch, list) and all(_message_ok(m) for m in batch):
            messages[len(messages) if kind == "message" else 0:] = batch
    return repair(messages, [])
""", """
import json
from corecoder.session import _message_ok, repair

def replay(lines):  # a meta record taken for a new session's start: the history read so far is dropped
    messages = []
    for line in lines:
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if not isinstance(record, dict):
            continue
        kind = record.get("type")
        if kind == "meta":
            messages = []
        batch = [record.get("message")] if kind == "message" else record.get("messages") if kind == "history" else None
        if isinstance(batch, list) and all(_message_ok(m) for m in batch):
            messages[len(messages) if kind == "message" else 0:] = batch
    return repair(messages, [])
""", """
import json
from corecoder.session import _message_ok, repair

def replay(lines):  # `or []` for the messages: a history record without its messages wipes the history
    messages = []
    for line in lines:
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if not isinstance(record, dict):
            continue
        kind = record.get("type")
        if kind == "message":
            if _message_ok(record.get("message")):
                messages.append(record["message"])
        elif kind == "history":
            batch = record.get("messages") or []
            if isinstance(batch, list) and all(_message_ok(m) for m in batch):
                messages = list(batch)
    return repair(messages, [])
""", """
import json
from corecoder.session import _message_ok, repair

def replay(lines):  # repaired after every record: a call is answered "cut short" before its real result is read
    messages = []
    for line in lines:
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if not isinstance(record, dict):
            continue
        kind = record.get("type")
        batch = [record.get("message")] if kind == "message" else record.get("messages") if kind == "history" else None
        if isinstance(batch, list) and all(_message_ok(m) for m in batch):
            messages = repair(messages[:len(messages) if kind == "message" else 0] + batch, [])
    return repair(messages, [])
"""],
    "ch09.trace": ["""
import json
import threading
from corecoder.events import RoundStarted, ToolCallFinished, WorkerEvent

class Trace:  # one round for everyone: a worker's call is written with the round another just began
    def __init__(self, out):
        self.out, self.round, self.lock = out, None, threading.Lock()

    def __call__(self, event):
        worker = event.worker if isinstance(event, WorkerEvent) else ""
        event = event.event if isinstance(event, WorkerEvent) else event
        if isinstance(event, RoundStarted):
            self.round = event.round
        elif isinstance(event, ToolCallFinished):
            line = json.dumps({"worker": worker, "round": self.round, "tool": event.call.name,
                               "status": event.status})
            with self.lock:
                self.out.write(line + "\\n")
""", """
import json
import threading
from corecoder.events import RoundStarted, ToolCallFinished, WorkerEvent

class Trace:  # the lock around the line, but its newline written after, outside: two writes a line
    def __init__(self, out):
        self.out, self.rounds, self.lock = out, {}, threading.Lock()

    def __call__(self, event):
        worker = event.worker if isinstance(event, WorkerEvent) else ""
        event = event.event if isinstance(event, WorkerEvent) else event
        if isinstance(event, RoundStarted):
            self.rounds[worker] = event.round
        elif isinstance(event, ToolCallFinished):
            with self.lock:
                self.out.write(json.dumps({"worker": worker, "round": self.rounds.get(worker),
                                           "tool": event.call.name, "status": event.status}))
            self.out.write("\\n")
""", """
import json
import threading
from corecoder.events import RoundStarted, ToolCallFinished, WorkerEvent

class Trace:  # json.dump straight into out, then the newline: json.dump writes a line in many pieces
    def __init__(self, out):
        self.out, self.rounds, self.lock = out, {}, threading.Lock()

    def __call__(self, event):
        worker = event.worker if isinstance(event, WorkerEvent) else ""
        event = event.event if isinstance(event, WorkerEvent) else event
        if isinstance(event, RoundStarted):
            self.rounds[worker] = event.round
        elif isinstance(event, ToolCallFinished):
            with self.lock:
                json.dump({"worker": worker, "round": self.rounds.get(worker), "tool": event.call.name,
                           "status": event.status}, self.out)
                self.out.write("\\n")
""", """
import json
import threading
from corecoder.events import RoundStarted, ToolCallStarted, WorkerEvent

class Trace:  # written as each call starts: it has no status yet, and a call that never ends is traced
    def __init__(self, out):
        self.out, self.rounds, self.lock = out, {}, threading.Lock()

    def __call__(self, event):
        worker = event.worker if isinstance(event, WorkerEvent) else ""
        event = event.event if isinstance(event, WorkerEvent) else event
        if isinstance(event, RoundStarted):
            self.rounds[worker] = event.round
        elif isinstance(event, ToolCallStarted):
            line = json.dumps({"worker": worker, "round": self.rounds.get(worker), "tool": event.call.name,
                               "status": "started"})
            with self.lock:
                self.out.write(line + "\\n")
""", """
import json
import threading
from corecoder.events import RoundStarted, ToolCallFinished, WorkerEvent

class Trace:  # the worker's name kept, but its rounds lost: RoundStarted is looked for before the unwrapping
    def __init__(self, out):
        self.out, self.round, self.lock = out, None, threading.Lock()

    def __call__(self, event):
        if isinstance(event, RoundStarted):
            self.round = event.round
        worker = event.worker if isinstance(event, WorkerEvent) else ""
        event = event.event if isinstance(event, WorkerEvent) else event
        if isinstance(event, ToolCallFinished):
            line = json.dumps({"worker": worker, "round": self.round, "tool": event.call.name,
                               "status": event.status})
            with self.lock:
                self.out.write(line + "\\n")
""", """
import json
import threading
from corecoder.events import RoundStarted, ToolCallFinished, WorkerEvent

class Trace:  # the rounds a class attribute: one dict shared by every Trace, so two agents' traces mix their rounds
    rounds = {}

    def __init__(self, out):
        self.out, self.lock = out, threading.Lock()

    def __call__(self, event):
        worker = event.worker if isinstance(event, WorkerEvent) else ""
        event = event.event if isinstance(event, WorkerEvent) else event
        if isinstance(event, RoundStarted):
            self.rounds[worker] = event.round
        elif isinstance(event, ToolCallFinished):
            line = json.dumps({"worker": worker, "round": self.rounds.get(worker), "tool": event.call.name,
                               "status": event.status})
            with self.lock:
                self.out.write(line + "\\n")
""", """
import json
import threading
from corecoder.events import Finished, RoundStarted, ToolCallFinished, WorkerEvent

class Trace:  # kept, then written sorted when the run finishes: nothing is traced while it runs, or if it crashes
    def __init__(self, out):
        self.out, self.rounds, self.lock, self.lines = out, {}, threading.Lock(), []

    def __call__(self, event):
        worker = event.worker if isinstance(event, WorkerEvent) else ""
        inner = event.event if isinstance(event, WorkerEvent) else event
        if isinstance(inner, RoundStarted):
            self.rounds[worker] = inner.round
        elif isinstance(inner, ToolCallFinished):
            with self.lock:
                self.lines.append(json.dumps({"worker": worker, "round": self.rounds.get(worker),
                                              "tool": inner.call.name, "status": inner.status}))
        elif isinstance(event, Finished):
            with self.lock:
                for line in sorted(self.lines):
                    self.out.write(line + "\\n")
                self.lines.clear()
""", """
import json
import threading
from corecoder.events import RoundStarted, ToolCallFinished, WorkerEvent

class Trace:  # printed, not written to out: the lines go to the screen, and the file the team reads stays empty
    def __init__(self, out):
        self.out, self.rounds, self.lock = out, {}, threading.Lock()

    def __call__(self, event):
        worker = event.worker if isinstance(event, WorkerEvent) else ""
        event = event.event if isinstance(event, WorkerEvent) else event
        if isinstance(event, RoundStarted):
            self.rounds[worker] = event.round
        elif isinstance(event, ToolCallFinished):
            with self.lock:
                print(json.dumps({"worker": worker, "round": self.rounds.get(worker), "tool": event.call.name,
                                  "status": event.status}))
""", """
import json
import threading
from corecoder.events import RoundStarted, ToolCallFinished, WorkerEvent

class Trace:  # counts each worker's RoundStarted itself: a second team's worker "a" goes on from the first's rounds
    def __init__(self, out):
        self.out, self.rounds, self.lock = out, {}, threading.Lock()

    def __call__(self, event):
        worker = event.worker if isinstance(event, WorkerEvent) else ""
        event = event.event if isinstance(event, WorkerEvent) else event
        if isinstance(event, RoundStarted):
            self.rounds[worker] = self.rounds.get(worker, 0) + 1
        elif isinstance(event, ToolCallFinished):
            line = json.dumps({"worker": worker, "round": self.rounds.get(worker), "tool": event.call.name,
                               "status": event.status})
            with self.lock:
                self.out.write(line + "\\n")
""", """
import json
import threading
from corecoder.events import RoundStarted, ToolCallFinished, WorkerEvent

class Trace:  # the round kept per thread (threading.local): a worker's calls run on other threads than its rounds
    def __init__(self, out):
        self.out, self.lock, self.local = out, threading.Lock(), threading.local()

    def __call__(self, event):
        worker = event.worker if isinstance(event, WorkerEvent) else ""
        event = event.event if isinstance(event, WorkerEvent) else event
        if isinstance(event, RoundStarted):
            self.local.round = event.round
        elif isinstance(event, ToolCallFinished):
            line = json.dumps({"worker": worker, "round": getattr(self.local, "round", None),
                               "tool": event.call.name, "status": event.status})
            with self.lock:
                self.out.write(line + "\\n")
""", """
import json
import threading
from corecoder.events import RoundStarted, ToolCallFinished, WorkerEvent

class Trace:  # "ok" or "error" from the result's text, not the call's status: a refusal reads as ok
    def __init__(self, out):
        self.out, self.rounds, self.lock = out, {}, threading.Lock()

    def __call__(self, event):
        worker = event.worker if isinstance(event, WorkerEvent) else ""
        event = event.event if isinstance(event, WorkerEvent) else event
        if isinstance(event, RoundStarted):
            self.rounds[worker] = event.round
        elif isinstance(event, ToolCallFinished):
            status = "error" if event.result.startswith("Error") else "ok"
            line = json.dumps({"worker": worker, "round": self.rounds.get(worker), "tool": event.call.name,
                               "status": status})
            with self.lock:
                self.out.write(line + "\\n")
"""],
    "ch10.fetch_url": ["""
import ipaddress
import urllib.error
import urllib.parse
import urllib.request
from corecoder.tool import Tool, ToolError

class FetchUrl(Tool):  # judges a host written as an address only: a name is never resolved (metadata.example passes)
    name = "fetch_url"
    description = "Fetch a web page (http or https) and return its text."
    parameters = {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"],
                  "additionalProperties": False}

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args):
            return None

    def __init__(self, allow=()):
        self.allow = [ipaddress.ip_network(a, strict=False) for a in allow]
        self.opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), self.NoRedirect)

    def check(self, url):
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https"):
            raise ToolError(f"only http and https: {url}")
        try:
            ip = ipaddress.ip_address(parts.hostname)
        except ValueError:
            return  # a name, not an address
        ip = getattr(ip, "ipv4_mapped", None) or ip
        if not ip.is_global and not any(ip in n for n in self.allow):
            raise ToolError(f"{ip} is a private address: refused")

    def run(self, ws, url):
        for _ in range(6):
            self.check(url)
            try:
                with self.opener.open(url, timeout=10) as response:
                    kind = response.headers.get_content_type()
                    if not kind.startswith(("text/", "application/json")):
                        raise ToolError(f"{kind} is not text")
                    body = response.read(18_001)
                    charset = response.headers.get_content_charset() or "utf-8"
            except urllib.error.HTTPError as e:
                if e.code in (301, 302, 303, 307, 308):
                    url = urllib.parse.urljoin(url, e.headers.get("Location", ""))
                    continue
                raise ToolError(f"HTTP {e.code}") from None
            except OSError as e:
                raise ToolError(f"failed: {getattr(e, 'reason', e)}") from None
            text = body[:18_000].decode(charset, errors="replace")
            return text + ("\\n[cut at 18,000 characters]" if len(body) > 18_000 else "")
        raise ToolError("too many redirects")
""", """
import ipaddress
import socket
import urllib.error
import urllib.parse
import urllib.request
from corecoder.tool import Tool, ToolError

class FetchUrl(Tool):  # refuses loopback and link-local only: 10/8, 192.168/16, fd00::/8 pass
    name = "fetch_url"
    description = "Fetch a web page (http or https) and return its text."
    parameters = {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"],
                  "additionalProperties": False}

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args):
            return None

    def __init__(self, allow=()):
        self.allow = [ipaddress.ip_network(a, strict=False) for a in allow]
        self.opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), self.NoRedirect)

    def check(self, url):
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https"):
            raise ToolError(f"only http and https: {url}")
        try:
            infos = socket.getaddrinfo(parts.hostname, None)
        except OSError as e:
            raise ToolError(f"cannot resolve {parts.hostname}: {e}") from None
        for info in infos:
            ip = ipaddress.ip_address(info[4][0])
            ip = getattr(ip, "ipv4_mapped", None) or ip
            if (ip.is_loopback or ip.is_link_local or ip.is_unspecified) and not any(ip in n for n in self.allow):
                raise ToolError(f"{parts.hostname} is {ip}: refused")

    def run(self, ws, url):
        for _ in range(6):
            self.check(url)
            try:
                with self.opener.open(url, timeout=10) as response:
                    kind = response.headers.get_content_type()
                    if not kind.startswith(("text/", "application/json")):
                        raise ToolError(f"{kind} is not text")
                    body = response.read(18_001)
                    charset = response.headers.get_content_charset() or "utf-8"
            except urllib.error.HTTPError as e:
                if e.code in (301, 302, 303, 307, 308):
                    url = urllib.parse.urljoin(url, e.headers.get("Location", ""))
                    continue
                raise ToolError(f"HTTP {e.code}") from None
            except OSError as e:
                raise ToolError(f"failed: {getattr(e, 'reason', e)}") from None
            text = body[:18_000].decode(charset, errors="replace")
            return text + ("\\n[cut at 18,000 characters]" if len(body) > 18_000 else "")
        raise ToolError("too many redirects")
""", """
import ipaddress
import socket
import urllib.parse
import urllib.request
from corecoder.tool import Tool, ToolError

class FetchUrl(Tool):  # a bare except turns everything into a ToolError: Ctrl+C too, so the user cannot stop a fetch
    name = "fetch_url"
    description = "Fetch a web page (http or https) and return its text."
    parameters = {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"],
                  "additionalProperties": False}

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args):
            return None

    def __init__(self, allow=()):
        self.allow = [ipaddress.ip_network(a, strict=False) for a in allow]
        self.opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), self.NoRedirect)

    def check(self, url):
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https"):
            raise ToolError(f"only http and https: {url}")
        try:
            infos = socket.getaddrinfo(parts.hostname, None)
        except OSError as e:
            raise ToolError(f"cannot resolve {parts.hostname}: {e}") from None
        for info in infos:
            ip = ipaddress.ip_address(info[4][0])
            ip = getattr(ip, "ipv4_mapped", None) or ip
            if not ip.is_global and not any(ip in n for n in self.allow):
                raise ToolError(f"{parts.hostname} is {ip}: refused")

    def run(self, ws, url):
        for _ in range(6):
            self.check(url)
            try:
                response = self.opener.open(url, timeout=10)
            except:
                import sys
                error = sys.exc_info()[1]
                code = getattr(error, "code", None)
                if code in (301, 302, 303, 307, 308):
                    url = urllib.parse.urljoin(url, error.headers.get("Location", ""))
                    continue
                raise ToolError(f"could not fetch {url}: {code or getattr(error, 'reason', error)}") from None
            with response:
                kind = response.headers.get_content_type()
                if not kind.startswith(("text/", "application/json")):
                    raise ToolError(f"{kind} is not text")
                body = response.read(18_001)
                charset = response.headers.get_content_charset() or "utf-8"
            text = body[:18_000].decode(charset, errors="replace")
            return text + ("\\n[cut at 18,000 characters]" if len(body) > 18_000 else "")
        raise ToolError("too many redirects")
""", """
import ipaddress
import socket
import urllib.error
import urllib.parse
import urllib.request
from corecoder.tool import Tool, ToolError

class FetchUrl(Tool):  # decodes every page as UTF-8, whatever charset it names: Latin-1 comes out garbled
    name = "fetch_url"
    description = "Fetch a web page (http or https) and return its text."
    parameters = {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"],
                  "additionalProperties": False}

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args):
            return None

    def __init__(self, allow=()):
        self.allow = [ipaddress.ip_network(a, strict=False) for a in allow]
        self.opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), self.NoRedirect)

    def check(self, url):
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https"):
            raise ToolError(f"only http and https: {url}")
        try:
            infos = socket.getaddrinfo(parts.hostname, None)
        except OSError as e:
            raise ToolError(f"cannot resolve {parts.hostname}: {e}") from None
        for info in infos:
            ip = ipaddress.ip_address(info[4][0])
            ip = getattr(ip, "ipv4_mapped", None) or ip
            if not ip.is_global and not any(ip in n for n in self.allow):
                raise ToolError(f"{parts.hostname} is {ip}: refused")

    def run(self, ws, url):
        for _ in range(6):
            self.check(url)
            try:
                with self.opener.open(url, timeout=10) as response:
                    kind = response.headers.get_content_type()
                    if not kind.startswith(("text/", "application/json")):
                        raise ToolError(f"{kind} is not text")
                    body = response.read(18_001)
            except urllib.error.HTTPError as e:
                if e.code in (301, 302, 303, 307, 308):
                    url = urllib.parse.urljoin(url, e.headers.get("Location", ""))
                    continue
                raise ToolError(f"HTTP {e.code}") from None
            except OSError as e:
                raise ToolError(f"failed: {getattr(e, 'reason', e)}") from None
            text = body[:18_000].decode("utf-8", errors="replace")
            return text + ("\\n[cut at 18,000 characters]" if len(body) > 18_000 else "")
        raise ToolError("too many redirects")
""", """
import ipaddress
import socket
import urllib.error
import urllib.parse
import urllib.request
from corecoder.tool import Tool, ToolError

class FetchUrl(Tool):  # no time limit: a server that never answers holds the agent for as long as it likes
    name = "fetch_url"
    description = "Fetch a web page (http or https) and return its text."
    parameters = {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"],
                  "additionalProperties": False}

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args):
            return None

    def __init__(self, allow=()):
        self.allow = [ipaddress.ip_network(a, strict=False) for a in allow]
        self.opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), self.NoRedirect)

    def check(self, url):
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https"):
            raise ToolError(f"only http and https: {url}")
        try:
            infos = socket.getaddrinfo(parts.hostname, None)
        except OSError as e:
            raise ToolError(f"cannot resolve {parts.hostname}: {e}") from None
        for info in infos:
            ip = ipaddress.ip_address(info[4][0])
            ip = getattr(ip, "ipv4_mapped", None) or ip
            if not ip.is_global and not any(ip in n for n in self.allow):
                raise ToolError(f"{parts.hostname} is {ip}: refused")

    def run(self, ws, url):
        for _ in range(6):
            self.check(url)
            try:
                with self.opener.open(url) as response:
                    kind = response.headers.get_content_type()
                    if not kind.startswith(("text/", "application/json")):
                        raise ToolError(f"{kind} is not text")
                    body = response.read(18_001)
                    charset = response.headers.get_content_charset() or "utf-8"
            except urllib.error.HTTPError as e:
                if e.code in (301, 302, 303, 307, 308):
                    url = urllib.parse.urljoin(url, e.headers.get("Location", ""))
                    continue
                raise ToolError(f"HTTP {e.code}") from None
            except OSError as e:
                raise ToolError(f"failed: {getattr(e, 'reason', e)}") from None
            text = body[:18_000].decode(charset, errors="replace")
            return text + ("\\n[cut at 18,000 characters]" if len(body) > 18_000 else "")
        raise ToolError("too many redirects")
""", """
import ipaddress
import socket
import urllib.error
import urllib.parse
import urllib.request
from corecoder.tool import Tool, ToolError

class FetchUrl(Tool):  # every HTTP error is "could not be fetched": a 404 reads like a 500
    name = "fetch_url"
    description = "Fetch a web page (http or https) and return its text."
    parameters = {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"],
                  "additionalProperties": False}

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args):
            return None

    def __init__(self, allow=()):
        self.allow = [ipaddress.ip_network(a, strict=False) for a in allow]
        self.opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), self.NoRedirect)

    def check(self, url):
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https"):
            raise ToolError(f"only http and https: {url}")
        try:
            infos = socket.getaddrinfo(parts.hostname, None)
        except OSError as e:
            raise ToolError(f"cannot resolve {parts.hostname}: {e}") from None
        for info in infos:
            ip = ipaddress.ip_address(info[4][0])
            ip = getattr(ip, "ipv4_mapped", None) or ip
            if not ip.is_global and not any(ip in n for n in self.allow):
                raise ToolError(f"{parts.hostname} is {ip}: refused")

    def run(self, ws, url):
        for _ in range(6):
            self.check(url)
            try:
                with self.opener.open(url, timeout=10) as response:
                    kind = response.headers.get_content_type()
                    if not kind.startswith(("text/", "application/json")):
                        raise ToolError(f"{kind} is not text")
                    body = response.read(18_001)
                    charset = response.headers.get_content_charset() or "utf-8"
            except urllib.error.HTTPError as e:
                if e.code in (301, 302, 303, 307, 308):
                    url = urllib.parse.urljoin(url, e.headers.get("Location", ""))
                    continue
                raise ToolError("the page could not be fetched") from None
            except OSError as e:
                raise ToolError(f"failed: {getattr(e, 'reason', e)}") from None
            text = body[:18_000].decode(charset, errors="replace")
            return text + ("\\n[cut at 18,000 characters]" if len(body) > 18_000 else "")
        raise ToolError("too many redirects")
"""],
    "ch10.budget": ["""
from corecoder.messages import ModelError

class Budget:  # prices per thousand tokens, not per million: the first reply already costs a thousand times too much
    def __init__(self, llm, prices, cap):
        self.llm, self.prices, self.cap, self.spent = llm, prices, cap, 0.0

    @property
    def model(self):
        return self.llm.model

    def chat(self, messages, tools=None, emit=None):
        if self.spent >= self.cap:
            raise ModelError(f"budget of ${self.cap} reached")
        reply = self.llm.chat(messages, tools, emit)
        if reply.usage:
            price, usage = self.prices[self.llm.model], reply.usage
            cached = min(usage.cached_tokens, usage.prompt_tokens)
            rate = price.input if price.cached_input is None else price.cached_input
            self.spent += ((usage.prompt_tokens - cached) * price.input + cached * rate
                           + usage.completion_tokens * price.output) / 1_000
        return reply
""", """
from corecoder.cli.pricing import Ledger
from corecoder.messages import ModelError

class Budget:  # starts counting again once it has said no: the next turn goes on spending as if nothing had been spent
    def __init__(self, llm, prices, cap):
        self.llm, self.prices, self.cap = llm, prices, cap
        self.ledger = Ledger(prices)

    @property
    def model(self):
        return self.llm.model

    def chat(self, messages, tools=None, emit=None):
        if self.ledger.known_cost >= self.cap:
            self.ledger = Ledger(self.prices)  # a fresh start for the next task
            raise ModelError(f"the budget of ${self.cap} is spent")
        reply = self.llm.chat(messages, tools, emit)
        if reply.usage:
            self.ledger.add(self.llm.model, reply.usage)
        return reply
""", """
from corecoder.cli.pricing import Ledger
from corecoder.messages import ModelError

class Budget:  # no model attribute: the loop reports each reply's usage under llm.model, and fails there
    def __init__(self, llm, prices, cap):
        self.llm, self.cap = llm, cap
        self.ledger = Ledger(prices)

    def chat(self, messages, tools=None, emit=None):
        if self.ledger.known_cost >= self.cap:
            raise ModelError(f"the budget of ${self.cap} is spent")
        reply = self.llm.chat(messages, tools, emit)
        if reply.usage:
            self.ledger.add(self.llm.model, reply.usage)
        return reply
""", """
from corecoder.cli.pricing import cost_of
from corecoder.messages import ModelError

class Budget:  # what was spent kept in a list on the class: every Budget in the process adds to the same one
    spent = []

    def __init__(self, llm, prices, cap):
        self.llm, self.prices, self.cap = llm, prices, cap

    @property
    def model(self):
        return self.llm.model

    def chat(self, messages, tools=None, emit=None):
        if sum(self.spent) >= self.cap:
            raise ModelError(f"the budget of ${self.cap} is spent")
        reply = self.llm.chat(messages, tools, emit)
        if reply.usage:
            self.spent.append(cost_of(reply.usage, self.prices[self.llm.model]))
        return reply
""", """
from corecoder.cli.pricing import Ledger
from corecoder.messages import Reply

class Budget:  # answers "the budget is spent" in the model's place: the turn ends as if answered
    def __init__(self, llm, prices, cap):
        self.llm, self.cap = llm, cap
        self.ledger = Ledger(prices)

    @property
    def model(self):
        return self.llm.model

    def chat(self, messages, tools=None, emit=None):
        if self.ledger.known_cost >= self.cap:
            return Reply(f"I stopped: the budget of ${self.cap} is spent.")
        reply = self.llm.chat(messages, tools, emit)
        if reply.usage:
            self.ledger.add(self.llm.model, reply.usage)
        return reply
"""],
}


# Right answers written otherwise than the solution: each must pass (a checker too strict is a defect too).
RIGHT = {
    "ch02.tool": ["""
class CountLines(Tool):  # a message that starts with the OSError's name, **args, and "folder"
    name = "count_lines"
    description = "How many lines a file has."
    parameters = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"],
                  "additionalProperties": False}

    def run(self, ws, **args):
        target = ws.resolve(args["path"])
        if target.is_dir():
            raise ToolError(f"{args['path']} is a folder, not a file: give a file inside it")
        try:
            text = target.read_bytes().decode("utf-8", "replace")
        except OSError as e:
            raise ToolError(f"{type(e).__name__}: cannot read {args['path']}: {e.strerror}") from e
        n = len(split_lines(text))
        return f"{n} line" + ("" if n == 1 else "s")
"""],
    "ch02.unique_place": ["""
def find_place(text, old):  # a list, not a tuple, and its own wording
    places = whole_line_breaks(text, [(i, i + len(old), "") for i in range(len(text)) if text.startswith(old, i)])
    if not places:
        raise ToolError(f"{old!r} is not in the text")
    if len(places) > 1:
        raise ToolError(f"{len(places)} places match, on lines {lines_of(text, places)}: say more")
    return [places[0][0], places[0][1]]
"""],
    "ch02.window": ["""
def window(lines, offset, limit):  # built line by line, with its own message past the end
    if offset > len(lines):
        raise ToolError(f"there is no line {offset}")
    out, n = [], offset
    while n <= len(lines) and n < offset + limit:
        out.append(f"{n:>6}\\t{lines[n - 1]}")
        n += 1
    total = f"{len(lines)} line" + ("s" if len(lines) != 1 else "")
    out.append(f"(end of file, {total})" if n > len(lines)
               else f"(lines {offset}-{n - 1} of {len(lines)}; use offset={n} to read on)")
    return "\\n".join(out)
"""],
    "ch03.assemble": ["""
def assemble(deltas):  # each call a list [id, name, parts], found by a search; a repeat told by its JSON
    calls, latest_of_index = [], {}
    for d in deltas:
        fn = d.get("function") or {}
        id, index = d.get("id"), d.get("index")
        call = next((c for c in calls if id and c[0] == id), None)
        if call is None and not id:  # a name under a new index starts a call, else the latest goes on
            named_anew = fn.get("name") and index is not None
            call = latest_of_index.get(index, None if named_anew or not calls else calls[-1])
        if call is None:
            call = [id, None, []]
            calls.append(call)
            if index is not None:
                latest_of_index[index] = call
        call[1] = call[1] or fn.get("name")
        piece = fn.get("arguments") or ""
        if piece and piece == "".join(call[2]):
            try:
                json.loads(piece)
                continue
            except ValueError:
                pass
        if piece:
            call[2].append(piece)
    return [ToolCall(id or "call_%d" % (n + 1), name or "", "".join(parts))
            for n, (id, name, parts) in enumerate(calls)]
"""],
    "ch03.retry_delay": ["""
def retry_delay(status, attempt, retry_after, rand, max_attempts=4):  # the tests turned around, the backoff as a shift
    if attempt > max_attempts - 1 or status < 500 and status not in {408, 409, 425, 429}:
        return None
    if retry_after is not None:
        return 60.0 if retry_after > 60 else retry_after
    return min((1 << (attempt - 1)) * (4 if status == 529 else 1), 60) * (1 + rand) / 2
"""],
    "ch03.cost": ["""
def cost(usage, price):  # the full price, less the cached tokens' discount
    if price is None:
        return None
    cached = min(usage.cached_tokens, usage.prompt_tokens)
    discount = 0 if price.cached_input is None else price.input - price.cached_input
    full = usage.prompt_tokens * price.input + usage.completion_tokens * price.output
    return (full - cached * discount) / 1e6
""", """
def cost(usage, price):  # in Decimal, exact to the last digit
    from decimal import Decimal
    if price is None:
        return None
    cached = min(usage.cached_tokens, usage.prompt_tokens)
    rate = price.input if price.cached_input is None else price.cached_input
    total = ((usage.prompt_tokens - cached) * Decimal(str(price.input)) + cached * Decimal(str(rate))
             + usage.completion_tokens * Decimal(str(price.output)))
    return total / 1_000_000
"""],
    "ch04.safe_cut": ["""
def safe_cut(messages, index):  # the first turn start found walking back, by next() over a range
    index = min(max(index, 0), len(messages))
    if index == len(messages):
        return index
    def begins(i):
        return messages[i]["role"] != "tool" and not is_state_note(messages[i])
    return next((i for i in range(index, 0, -1) if begins(i)), 0)
"""],
    "ch04.estimate": ["""
def estimate(text):  # a character at a time, by its code point, and rounded up
    import math
    total = 0.0
    for ch in text:
        if any(lo <= ord(ch) <= hi for lo, hi in ((0x3000, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF),
                                                  (0xAC00, 0xD7AF), (0xF900, 0xFAFF), (0xFF00, 0xFFEF))):
            total += 1
        elif ch.isalnum() or ch.isspace() or ch == "_":
            total += 0.25
        else:
            total += 0.5
    return math.ceil(total)
"""],
    "ch04.policy": ["""
class KeepLastTurns:  # walks back from the end, counting the turns it passes
    def __init__(self, n):
        self.n = n

    def attach(self, agent):
        pass

    def prepare(self, messages, overflow=False):
        seen = 0
        for i in range(len(messages) - 1, -1, -1):
            if messages[i]["role"] == "user" and not is_state_note(messages[i]):
                seen += 1
                if seen == self.n:
                    return messages[i:] if i else messages
        return messages
"""],
    "ch05.merge": ["""
def merge(start, forks):  # walks back from the last fork to the first that moved
    for cwd in reversed(forks):
        if cwd != start:
            return cwd
    return start
"""],
    "ch05.executor": ["""
def reads_parallel_writes_in_order(calls, agent, results):  # a thread per read, joined; the writes in this thread
    import threading
    jobs = [admit(agent, call) for call in calls]
    threads = []
    for job in jobs:
        if job.tool is not None and not job.tool.mutating:
            def run(job=job):
                results[job.call.id] = perform(agent, job, agent.workspace)
            threads.append(threading.Thread(target=run))
            threads[-1].start()
    for job in jobs:
        if job.tool is None or job.tool.mutating:
            results[job.call.id] = perform(agent, job, agent.workspace)
    for thread in threads:
        thread.join()
""", """
def reads_parallel_writes_in_order(calls, agent, results):  # the writes in a one-worker pool: one at a time, in order
    from concurrent.futures import ThreadPoolExecutor
    jobs = [admit(agent, call) for call in calls]
    with ThreadPoolExecutor(max_workers=8) as reads, ThreadPoolExecutor(max_workers=1) as writes:
        futures = {job.call.id: (reads if job.tool is not None and not job.tool.mutating else writes)
                   .submit(perform, agent, job, agent.workspace) for job in jobs}
        for call_id, future in futures.items():
            results[call_id] = future.result()
"""],
    "ch05.lock_key": ["""
def file_key(workspace, path):  # the engine's way: workspace.resolve, then resolve()
    return workspace.resolve(path).resolve()
""", """
def file_key(workspace, path):  # os.path.realpath of the joined path, as a Path
    import os
    return Path(os.path.realpath(os.path.join(workspace.cwd, path)))
"""],
    "ch06.todos": ["""
def check_todos(todos):  # each item copied with its content replaced; in-progress items counted in the loop
    kept, busy = [], 0
    for i, item in enumerate(todos):
        content = item["content"].strip()
        if content == "":
            raise ToolError(f"item {i + 1} says nothing: give it a content")
        busy += item["status"] == "in_progress"
        kept.append({**item, "content": content})
    if busy >= 2:
        raise ToolError(f"{busy} items are in_progress; only one may be")
    return kept
""", """
def check_todos(todos):  # a deep copy of the caller's list, stripped in place; the busy ones found with filter
    import copy
    kept = copy.deepcopy(todos)
    for item in kept:
        item["content"] = item["content"].strip()
    empty = [i for i, item in enumerate(kept) if not item["content"]]
    if empty:
        raise ToolError(f"todos{empty} are empty")
    if len(list(filter(lambda item: item["status"] == "in_progress", kept))) > 1:
        raise ToolError("keep one item in_progress at most")
    return kept
"""],
    "ch06.team": ["""
def run_team(tasks, work, at_once):  # pool.map of a function that catches: map yields in input order
    def report(task):
        try:
            return work(task)
        except Exception as e:
            return "[failed: %s: %s]" % (type(e).__name__, e)

    with ThreadPoolExecutor(at_once) as pool:
        return list(pool.map(report, tasks))
""", """
def run_team(tasks, work, at_once):  # a thread per task, each started once a semaphore of at_once lets it in
    import threading
    slots, reports, threads = threading.Semaphore(at_once), [None] * len(tasks), []

    def run(i):
        try:
            reports[i] = work(tasks[i])
        except Exception as e:
            reports[i] = f"[failed: {type(e).__name__}: {e}]"
        finally:
            slots.release()

    for i in range(len(tasks)):
        slots.acquire()
        threads.append(threading.Thread(target=run, args=(i,)))
        threads[-1].start()
    for thread in threads:
        thread.join()
    return reports
""", """
def run_team(tasks, work, at_once):  # at_once threads that take the tasks from a queue, in order
    import queue
    import threading
    todo, reports = queue.Queue(), [None] * len(tasks)
    for i, task in enumerate(tasks):
        todo.put((i, task))

    def worker():
        while True:
            try:
                i, task = todo.get_nowait()
            except queue.Empty:
                return
            try:
                reports[i] = work(task)
            except Exception as e:
                reports[i] = f"[failed: {type(e).__name__}: {e}]"

    threads = [threading.Thread(target=worker) for _ in range(at_once)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return reports
"""],
    "ch06.reviewer": ["""
def read_only_workers(parent):  # the worker's events passed up to the parent, as workers() does
    from corecoder.events import WorkerEvent

    def spawn(name, task, workspace):
        tools = [t for t in parent.tools.values() if not t.mutating]
        worker = Agent(Cancellable(parent.llm, workspace.cancelled), tools, cwd=workspace.cwd,
                       max_rounds=WORKER_ROUNDS, gates=parent.gates)
        worker.subscribe(lambda event: parent.emit(WorkerEvent(name, event)))
        return worker.chat(task)
    return spawn
""", """from corecoder.agent import Agent
from corecoder.subagents import WORKER_ROUNDS, Cancellable

def read_only_workers(parent):  # as workers() builds one (prompt, executor, cancelled), with the read-only tools
    def spawn(name, task, workspace):
        readers = [tool for tool in parent.tools.values() if tool.mutating is False]
        sub = Agent(Cancellable(parent.llm, workspace.cancelled), readers, cwd=workspace.cwd,
                    prompt=parent.prompt, prompt_parts=parent.prompt_parts, max_rounds=WORKER_ROUNDS,
                    executor=parent.executor, gates=parent.gates)
        sub.workspace.cancelled = workspace.cancelled
        return sub.chat(task)

    return spawn
""", """
from corecoder.agent import Agent
from corecoder.subagents import WORKER_ROUNDS, Cancellable

def read_only_workers(parent):  # the tools found by filter(), keyword arguments in another order
    def spawn(name, task, workspace):
        model = Cancellable(llm=parent.llm, cancelled=workspace.cancelled)
        tools = list(filter(lambda tool: not tool.mutating, parent.tools.values()))
        return Agent(model, tools, gates=parent.gates, max_rounds=WORKER_ROUNDS, cwd=workspace.cwd).chat(task)

    return spawn
"""],
    "ch07.gate": ["""
import fnmatch
from pathlib import Path

from corecoder.calls import Gate

class ProtectPaths(Gate):  # os.path: realpath, commonpath, a PurePosixPath; the glob found with next()
    name = "protect"

    def __init__(self, root, globs):
        import os
        self.root, self.globs = os.path.realpath(root), tuple(globs)

    def before(self, tool, args, workspace):
        import os
        if type(args.get("path")) is not str:
            return None
        target = os.path.realpath(os.path.join(workspace.cwd, args["path"]))
        if os.path.commonpath([target, self.root]) != self.root:
            return None
        relative = os.path.relpath(target, self.root)
        hit = next((glob for glob in self.globs if fnmatch.fnmatchcase(relative, glob)), None)
        return None if hit is None else f"refusing {args['path']}: it matches {hit}"
""", """
import fnmatch
from pathlib import Path

from corecoder.calls import Gate

class ProtectPaths(Gate):  # workspace.resolve then resolve(); outside the project caught as relative_to's ValueError
    name = "protect"

    def __init__(self, root, globs):
        self.root = Path(root).resolve()
        self.globs = globs

    def before(self, tool, args, workspace):
        path = args.get("path")
        if path is None:
            return None
        try:
            relative = str(workspace.resolve(path).resolve().relative_to(self.root))
        except ValueError:
            return None
        matched = [glob for glob in self.globs if fnmatch.fnmatchcase(relative, glob)]
        if matched:
            return "protected by " + ", ".join(matched)
"""],
    "ch07.hook": ["""
def no_force_push():  # a line at a time, each split on its own; the reason written with sys.stderr.write
    import json
    import shlex
    import sys

    call = json.loads(sys.stdin.read())
    if call.get("tool_name") != "bash":
        sys.exit(0)
    for line in call["tool_input"]["command"].splitlines():
        try:
            words = list(shlex.shlex(line, posix=True, punctuation_chars=True))
        except ValueError:
            sys.stderr.write("an open quote: say the command again\\n")
            raise SystemExit(2)
        simple = []
        for word in words + ["&&"]:
            if word in {";", "&", "&&", "|", "||", "(", ")"}:
                flags = simple[2:] if simple[:2] == ["git", "push"] else []
                if "--force" in flags or any(f[0] == "+" or f[:1] == "-" and not f.startswith("--") and "f" in f
                                             for f in flags):
                    sys.stderr.write("force pushing rewrites shared history\\n")
                    raise SystemExit(2)
                simple = []
            else:
                simple.append(word)
""", """
def no_force_push():  # the separators found with itertools.groupby; the flags tested by a helper
    import itertools
    import json
    import shlex
    import sys

    def forces(word):
        if word == "--force" or word.startswith("+"):
            return True
        return word.startswith("-") and not word.startswith("--") and "f" in word

    call = json.load(sys.stdin)
    if call["tool_name"] == "bash":
        text = "; ".join(call["tool_input"]["command"].split("\\n"))
        try:
            words = list(shlex.shlex(text, posix=True, punctuation_chars=";&|()"))
        except ValueError:
            print("unbalanced quotes: cannot tell what would run", file=sys.stderr)
            sys.exit(2)
        separators = {";", "&", "&&", "|", "||", "(", ")"}
        for apart, group in itertools.groupby(words, key=lambda w: w in separators):
            simple = list(group)
            if not apart and simple[:2] == ["git", "push"] and any(map(forces, simple[2:])):
                print("git push with force is not allowed here; try --force-with-lease", file=sys.stderr)
                sys.exit(2)
"""],
    "ch07.classify": ["""
def classify(line):  # structural pattern matching; the id's type compared exactly (type(True) is bool)
    import json
    try:
        message = json.loads(line)
    except json.JSONDecodeError:
        return "noise", None
    match message:
        case {"jsonrpc": "2.0", "method": _, "id": _}:
            return "request", message
        case {"jsonrpc": "2.0", "method": _}:
            return "notification", message
        case {"jsonrpc": "2.0", "id": ident} if type(ident) in (int, str):
            return "answer", message
        case {"jsonrpc": "2.0"}:
            return "neither", message
    return "noise", None
""", """
def classify(line):  # a table of kinds, keyed by (has a method, has an id); the id judged apart
    import json
    try:
        message = json.loads(line)
    except ValueError:
        message = None
    if type(message) is not dict or message.get("jsonrpc") != "2.0":
        return "noise", None
    ident = message.get("id")
    ours = not isinstance(ident, bool) and isinstance(ident, (int, str))
    kind = {(True, True): "request", (True, False): "notification",
            (False, True): "answer" if ours else "neither", (False, False): "neither"}
    return kind["method" in message, "id" in message], message
"""],
    "ch07.server": ["""
def word_server():  # readline until EOF, a table of handlers, sys.stdout.write and flush, -32602 for an unknown tool
    import json
    import sys

    def initialize(params):
        return {"protocolVersion": params["protocolVersion"], "capabilities": {"tools": {}},
                "serverInfo": {"name": "words", "version": "1"}}

    def tools_list(params):
        return {"tools": [{"name": "word_count", "description": "Count the words of a text.",
                           "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}},
                                           "required": ["text"]}}]}

    def tools_call(params):
        if params.get("name") != "word_count":
            raise LookupError(f"unknown tool {params.get('name')}")
        return {"content": [{"type": "text", "text": f"{len(params['arguments']['text'].split())}"}]}

    handlers = {"initialize": initialize, "tools/list": tools_list, "tools/call": tools_call}
    while True:
        line = sys.stdin.readline()
        if not line:
            break
        message = json.loads(line)
        if "id" not in message:
            continue
        reply = {"jsonrpc": "2.0", "id": message["id"]}
        handler = handlers.get(message.get("method"))
        if handler is None:
            reply["error"] = {"code": -32601, "message": "method not found"}
        else:
            try:
                reply["result"] = handler(message.get("params") or {})
            except LookupError as e:
                reply["error"] = {"code": -32602, "message": str(e)}
        sys.stdout.write(json.dumps(reply) + "\\n")
        sys.stdout.flush()
""", """
def word_server():  # input() until EOFError, stdout line-buffered once, a debug line on stderr, match on the method
    import json
    import re
    import sys

    sys.stdout.reconfigure(line_buffering=True)
    print("words: up", file=sys.stderr)
    while True:
        try:
            message = json.loads(input())
        except EOFError:
            return
        if message.get("id") is None and "id" not in message:
            continue
        params = message.get("params") or {}
        match message["method"]:
            case "initialize":
                out = {"result": {"protocolVersion": params["protocolVersion"], "capabilities": {"tools": {}},
                                  "serverInfo": {"name": "words"}}}
            case "tools/list":
                out = {"result": {"tools": [{"name": "word_count", "inputSchema": {
                    "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}]}}
            case "tools/call" if params.get("name") == "word_count":
                count = len(re.findall(r"\\S+", params["arguments"]["text"]))
                out = {"result": {"content": [{"type": "text", "text": str(count)}]}}
            case other:
                out = {"error": {"code": -32601, "message": f"method not found: {other}"}}
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], **out}, ensure_ascii=False))
""", """
def word_server():  # bytes in and out: sys.stdin.buffer and sys.stdout.buffer, flushed by hand
    import json
    import sys

    schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    for raw in sys.stdin.buffer:
        request = json.loads(raw)
        if "id" not in request:
            continue
        method, params = request.get("method"), request.get("params") or {}
        if method == "initialize":
            body = {"result": {"protocolVersion": params["protocolVersion"], "capabilities": {"tools": {}},
                               "serverInfo": {"name": "word-server"}}}
        elif method == "tools/list":
            body = {"result": {"tools": [{"name": "word_count", "description": "Words in a text.",
                                          "inputSchema": schema}]}}
        elif method == "tools/call" and params.get("name") == "word_count":
            body = {"result": {"content": [{"type": "text",
                                            "text": str(len(params["arguments"]["text"].split()))}]}}
        else:
            body = {"error": {"code": -32601, "message": "Method not found"}}
        sys.stdout.buffer.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], **body}).encode() + b"\\n")
        sys.stdout.buffer.flush()
"""],
    "ch08.gate_order": ["""
def gate_order(plan, hooks, consent, checkpoints):  # filter with a lambda, returned as a tuple
    return tuple(filter(lambda gate: gate is not None, (plan, hooks, consent, checkpoints)))
""", """
def gate_order(plan, hooks, consent, checkpoints):  # appended one by one, each with its place's reason
    gates = []
    if plan is not None:  # nothing changes in plan mode, whoever would allow it
        gates.append(plan)
    if hooks is not None:  # the project's policy, before anyone is asked
        gates.append(hooks)
    if consent is not None:  # the user, about a call that may run
        gates.append(consent)
    if checkpoints is not None:  # a copy, of a file that is really going to change
        gates.append(checkpoints)
    return gates
""", """
def gate_order(plan, hooks, consent, checkpoints):  # a generator: the Agent makes its own list of the gates
    return (gate for gate in (plan, hooks, consent, checkpoints) if gate is not None)
"""],
    "ch08.fingerprint": ["""
def fingerprint(files, notes):  # json.dumps of each file's name, length and hex, sorted; blake2b
    import hashlib
    import json
    parts = [[name, len(data), data.hex()] for name, data in sorted(files.items())]
    return hashlib.blake2b(json.dumps([parts, list(notes)]).encode(), digest_size=20).hexdigest()
""", """
def fingerprint(files, notes):  # the repr of the sorted pairs and the notes: unambiguous, a str, no hash at all
    return repr((sorted(files.items()), tuple(notes)))
""", """
def fingerprint(files, notes):  # a digest per part, the digests sorted, then a digest of them all
    import hashlib
    parts = [hashlib.sha256(b"file " + name.encode() + b"\\0" + data).hexdigest() for name, data in files.items()]
    parts += [hashlib.sha256(f"note {i} {note}".encode()).hexdigest() for i, note in enumerate(notes)]
    return hashlib.sha1(" ".join(sorted(parts)).encode()).hexdigest()
"""],
    "ch08.instructions": ["""
NAMES = ("AGENTS.md", "CLAUDE.md")


def instruction_files(cwd):  # a while loop up to the git root, then one down from it; os.path.lexists for a link
    import os
    here = Path(cwd).resolve()
    top = here
    while not (top / ".git").exists():
        if top.parent == top:
            top = here
            break
        top = top.parent
    found = []
    while True:
        name = next((n for n in NAMES if os.path.lexists(here / n)), None)
        if name:
            found.insert(0, here / name)
        if here == top:
            return found
        here = here.parent
""", """
NAMES = ("AGENTS.md", "CLAUDE.md")


def instruction_files(cwd):  # recursion: the folders above first, then this one's file (is_file or is_symlink)
    from corecoder.workspace import git_root
    here = Path(cwd).resolve()
    root = git_root(here) or here

    def down_to(folder):
        above = [] if folder == root else down_to(folder.parent)
        mine = [folder / n for n in NAMES if (folder / n).is_symlink() or (folder / n).is_file()]
        return above + mine[:1]
    return down_to(here)
"""],
    "ch09.session_path": ["""
import os
import string
from pathlib import Path
from corecoder.session import SessionError

ALLOWED = set(string.ascii_letters + string.digits + "-_")

def session_path(home, session_id):  # a set of allowed characters, os.path.realpath, and a Path made at the end
    if type(session_id) is not str:
        raise SessionError("not text")
    clean = session_id.strip()
    if clean.endswith(".jsonl"):
        clean = clean[: -len(".jsonl")]
    if not clean or len(clean) > 64 or not set(clean) <= ALLOWED:
        raise SessionError(f"bad session id {session_id[:80]!r}")
    folder = os.path.realpath(os.path.join(home, "sessions"))
    path = os.path.realpath(os.path.join(folder, clean + ".jsonl"))
    if os.path.dirname(path) != folder:
        raise SessionError("outside the sessions folder")
    return Path(path)
""", """
import re
from pathlib import Path
from corecoder.session import SessionError

def session_path(home, session_id):  # \\w with re.ASCII; the path resolved once, checked by its parts
    if not isinstance(session_id, str):
        raise SessionError("a session id must be text")
    clean = session_id.strip()
    clean = clean[:-6] if clean.endswith(".jsonl") else clean
    if re.fullmatch(r"[\\w-]{1,64}", clean, flags=re.ASCII) is None:
        raise SessionError("bad session id")
    folder = (Path(home) / "sessions").resolve()
    path = folder.joinpath(clean + ".jsonl").resolve()
    if path.parent.parts != folder.parts:
        raise SessionError("outside")
    return path
""", """
import re
from pathlib import Path
from corecoder.session import SessionError

def session_path(home, session_id):  # re.search with \\A...\\Z, the suffix sliced off, the folders compared by parts
    if not isinstance(session_id, str):
        raise SessionError("a session id must be text")
    clean = session_id.strip()
    clean = clean[:-6] if clean.endswith(".jsonl") else clean
    if not re.search(r"\\A[-_a-zA-Z0-9]{1,64}\\Z", clean):
        raise SessionError("bad session id")
    folder = Path(home, "sessions").resolve(strict=False)
    path = folder.joinpath(clean + ".jsonl").resolve()
    if path.parent.parts != folder.parts:
        raise SessionError("outside")
    return path
"""],
    "ch09.replay": ["""
import json
from corecoder.session import _message_ok, repair

def replay(lines):  # two passes: the records kept, then the last whole history record found and the messages after it
    records = []
    for line in lines:
        try:
            record = json.loads(line)
        except Exception:  # ValueError and RecursionError both
            continue
        if isinstance(record, dict) and record.get("type") in ("message", "history"):
            batch = [record.get("message")] if record["type"] == "message" else record.get("messages")
            if isinstance(batch, list) and all(_message_ok(m) for m in batch):
                records.append((record["type"], batch))
    start = max((i for i, (kind, _) in enumerate(records) if kind == "history"), default=-1)
    messages = []
    for _, batch in records[max(start, 0):]:
        messages += batch
    return repair(messages, [])
""", """
import json
from corecoder.session import _message_ok, repair

def replay(lines):  # a helper that reads a line or gives None, and match on the record's shape
    messages = []
    for record in map(read, lines):
        match record:
            case {"type": "message", "message": message} if _message_ok(message):
                messages.append(message)
            case {"type": "history", "messages": list(batch)} if all(map(_message_ok, batch)):
                messages = list(batch)
    return repair(messages, [])


def read(line):
    try:
        return json.loads(line)
    except (json.JSONDecodeError, RecursionError):
        return None
""", """
import json
from functools import reduce
from corecoder.session import _message_ok, repair

def replay(lines):  # a fold: each line a step from one history to the next, the input never touched
    return repair(reduce(step, lines, []), [])


def step(history, line):
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return history
    if not isinstance(record, dict):
        return history
    if record.get("type") == "message":
        return history + [record.get("message")] if _message_ok(record.get("message")) else history
    if record.get("type") == "history":
        batch = record.get("messages")
        return list(batch) if isinstance(batch, list) and all(_message_ok(m) for m in batch) else history
    return history
"""],
    "ch09.trace": ["""
import json
import threading
from collections import defaultdict
from corecoder.events import RoundStarted, ToolCallFinished, WorkerEvent

class Trace:  # match on the event, a recursive call for a worker's, a defaultdict of rounds, an RLock
    def __init__(self, out):
        self.out = out
        self.rounds = defaultdict(lambda: None)
        self.guard = threading.RLock()

    def __call__(self, event, worker=""):
        match event:
            case WorkerEvent(worker=name, event=inner):
                self(inner, name)
            case RoundStarted(round=n):
                with self.guard:
                    self.rounds[worker] = n
            case ToolCallFinished(call=call, status=status):
                record = {"worker": worker, "round": self.rounds[worker], "tool": call.name, "status": status}
                with self.guard:
                    self.out.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\\n")
""", """
import json
import threading
from corecoder.events import RoundStarted, ToolCallFinished, WorkerEvent

class Trace:  # every event handled under one lock; the line made with an f-string around json.dumps pieces
    def __init__(self, out):
        self._out = out
        self._lock = threading.Lock()
        self._round_of = {}

    def __call__(self, event):
        with self._lock:
            name = ""
            if type(event) is WorkerEvent:
                name, event = event.worker, event.event
            if type(event) is RoundStarted:
                self._round_of[name] = event.round
            if type(event) is ToolCallFinished:
                round_ = json.dumps(self._round_of.get(name))
                self._out.write(f'{{"worker": {json.dumps(name)}, "round": {round_}, '
                                f'"tool": {json.dumps(event.call.name)}, "status": {json.dumps(event.status)}}}\\n')
""", """
import json
import threading
from corecoder.events import RoundStarted, ToolCallFinished, WorkerEvent

class Trace:  # one small object per worker keeps its round; a Condition used as the lock
    class Worker:
        def __init__(self):
            self.round = None

    def __init__(self, out):
        self.out, self.workers, self.lock = out, {}, threading.Condition()

    def __call__(self, event):
        name = event.worker if isinstance(event, WorkerEvent) else ""
        inner = event.event if isinstance(event, WorkerEvent) else event
        with self.lock:
            me = self.workers.setdefault(name, self.Worker())
        if isinstance(inner, RoundStarted):
            me.round = inner.round
        elif isinstance(inner, ToolCallFinished):
            text = json.dumps(dict(worker=name, round=me.round, tool=inner.call.name, status=inner.status))
            with self.lock:
                self.out.write(text + "\\n")
"""],
    "ch10.fetch_url": ["""
import ipaddress
import socket
import urllib.error
import urllib.parse
import urllib.request
from corecoder.tool import Tool, ToolError

class FetchUrl(Tool):  # urllib follows redirects through a handler that checks each first; checks in a function
    name = "fetch_url"
    description = "Download a web page (http/https) and give back its text, up to 18000 characters."
    parameters = {"type": "object", "additionalProperties": False, "required": ["url"],
                  "properties": {"url": {"type": "string", "description": "absolute http(s) URL"}}}

    def __init__(self, allow=()):
        self.allow = tuple(ipaddress.ip_network(item, strict=False) for item in allow)

    def run(self, ws, url):
        reason = refused(url, self.allow)
        if reason:
            raise ToolError(reason)
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), CheckEachHop(self.allow))
        try:
            with opener.open(urllib.request.Request(url, headers={"User-Agent": "corecoder"}), timeout=15) as r:
                mime = r.headers.get_content_type()
                if not (mime.startswith("text/") or mime in ("application/json", "application/xml")):
                    raise ToolError(f"not a text page: its Content-Type is {mime}")
                raw = r.read(18_000 + 1)
                encoding = r.headers.get_content_charset("utf-8")
        except urllib.error.HTTPError as error:
            raise ToolError(f"HTTP error {error.code} ({error.reason}) for {url}") from error
        except urllib.error.URLError as error:
            raise ToolError(f"cannot reach {url}: {error.reason}") from error
        except TimeoutError:
            raise ToolError(f"{url} timed out after 15 s") from None
        text = raw[:18_000].decode(encoding, "replace")
        if len(raw) > 18_000:
            text = text + "\\n\\n[truncated: only the first 18000 characters are shown]"
        return text


def refused(url, allow):
    '''Why `url` may not be fetched, or None.'''
    parts = urllib.parse.urlparse(url)
    if parts.scheme.lower() not in {"http", "https"}:
        return f"{parts.scheme or 'no'} scheme: only http and https pages"
    try:
        infos = socket.getaddrinfo(parts.hostname, parts.port or 80, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError, TypeError) as e:
        return f"the host {parts.hostname!r} does not resolve ({e})"
    for family, _, _, _, sockaddr in infos:
        address = ipaddress.ip_address(sockaddr[0].split("%")[0])
        if address.version == 6 and address.ipv4_mapped:
            address = address.ipv4_mapped
        if any(address in network for network in allow):
            continue
        if not address.is_global:  # private, loopback, link-local, shared, reserved...
            return f"{parts.hostname} resolves to {address}, which is not a public address"
    return None

class CheckEachHop(urllib.request.HTTPRedirectHandler):
    max_redirections = 5  # urllib counts them for us

    def __init__(self, allow):
        self.allow = allow

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        reason = refused(newurl, self.allow)
        if reason:
            raise ToolError(f"redirected to {newurl}: {reason}")
        return super().redirect_request(req, fp, code, msg, headers, newurl)
""", """
import http.client
import ipaddress
from socket import SOCK_STREAM, getaddrinfo
from urllib.parse import urljoin, urlsplit
from corecoder.tool import Tool, ToolError

class FetchUrl(Tool):  # http.client, getaddrinfo imported by name; connects to the address it checked
    name = "fetch_url"
    description = "Fetch an http(s) page and return its text (18,000 characters at most)."
    parameters = {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"],
                  "additionalProperties": False}
    REDIRECTS = {301, 302, 303, 307, 308}

    def __init__(self, allow=()):
        self.allow = [ipaddress.ip_network(a, strict=False) for a in allow]

    def address(self, host, port):
        try:
            found = [info[4][0] for info in getaddrinfo(host, port, type=SOCK_STREAM)]
        except (OSError, UnicodeError) as e:
            raise ToolError(f"unknown host {host!r}: {e}") from None
        for text in found:
            ip = ipaddress.ip_address(text)
            plain = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped else ip
            if not plain.is_global and not any(plain in net for net in self.allow):
                raise ToolError(f"refused: {host} resolves to {plain}, a local or private address")
        return found[0]

    def run(self, ws, url):
        hops = 0
        while True:
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ToolError(f"cannot fetch {url!r}: only http:// and https:// URLs")
            https = parts.scheme == "https"
            port = parts.port or (443 if https else 80)
            ip = self.address(parts.hostname, port)
            kind = http.client.HTTPSConnection if https else http.client.HTTPConnection
            connection = kind(ip, port, timeout=10)
            try:
                connection.request("GET", (parts.path or "/") + (f"?{parts.query}" if parts.query else ""),
                                   headers={"Host": parts.netloc})
                response = connection.getresponse()
                if response.status in self.REDIRECTS:
                    hops += 1
                    if hops > 5:
                        raise ToolError("stopped after 5 redirects")
                    url = urljoin(url, response.getheader("Location", ""))
                    continue
                if response.status >= 400:
                    raise ToolError(f"{url} answered {response.status} {response.reason}")
                ctype = response.headers.get_content_type()
                if ctype.split("/")[0] != "text" and ctype not in ("application/json", "application/xml"):
                    raise ToolError(f"{url} is {ctype}, which is not text")
                data = response.read(18_001)
                charset = response.headers.get_content_charset() or "utf-8"
            except OSError as e:  # socket.timeout is one
                raise ToolError(f"could not fetch {url}: {e}") from None
            finally:
                connection.close()
            text = data[:18_000].decode(charset, "replace")
            return text if len(data) <= 18_000 else text + "\\n[the rest of the page was cut]"
""", """
import ipaddress
import socket
import urllib.error
import urllib.parse
import urllib.request
from corecoder.tool import Tool, ToolError

class FetchUrl(Tool):  # reads in chunks up to the limit, a helper per address, messages in its own words
    name = "fetch_url"
    description = "Get a web page's text over http or https (long pages are cut at 18,000 characters)."
    parameters = {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"],
                  "additionalProperties": False}
    mutating = False

    def __init__(self, allow=()):
        self.allowed = [ipaddress.ip_network(a, strict=False) for a in allow]

    def addresses(self, host):
        try:
            return {info[4][0] for info in socket.getaddrinfo(host, 443)}
        except (socket.gaierror, UnicodeError) as e:
            raise ToolError(f"DNS lookup of {host} failed: {e}") from None

    def ok(self, text):
        ip = ipaddress.ip_address(text)
        if getattr(ip, "ipv4_mapped", None):
            ip = ip.ipv4_mapped
        return ip.is_global or any(ip in net for net in self.allowed)

    def run(self, ws, url):
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), Nowhere())
        for hop in range(6):
            scheme = urllib.parse.urlsplit(url).scheme
            if scheme not in ("http", "https"):
                raise ToolError(f"{scheme}: is not http or https; refusing {url}")
            host = urllib.parse.urlsplit(url).hostname
            bad = sorted(a for a in self.addresses(host) if not self.ok(a))
            if bad:
                raise ToolError(f"{host} points to {', '.join(bad)} (this machine or a private network)")
            try:
                response = opener.open(url, timeout=8)
            except urllib.error.HTTPError as e:
                if 300 <= e.code < 400 and e.code not in (300, 304, 305, 306):
                    url = urllib.parse.urljoin(url, e.headers.get("Location") or url)
                    continue
                raise ToolError(f"status {e.code}: {e.reason}") from None
            except urllib.error.URLError as e:
                raise ToolError(f"{url}: {e.reason}") from None
            except socket.timeout:
                raise ToolError(f"{url}: timeout") from None
            with response:
                if response.headers.get_content_maintype() != "text" and \\
                        response.headers.get_content_type() not in ("application/json", "application/xml"):
                    raise ToolError(f"{url} is {response.headers.get_content_type()}, not a text page")
                chunks, size = [], 0
                while size <= 18_000:
                    try:
                        chunk = response.read(min(8192, 18_001 - size))
                    except socket.timeout:
                        raise ToolError(f"{url}: timeout while reading") from None
                    if not chunk:
                        break
                    chunks.append(chunk)
                    size += len(chunk)
                data = b"".join(chunks)
                text = data[:18_000].decode(response.headers.get_content_charset() or "utf-8", "replace")
            if len(data) > 18_000:
                text += "\\n(cut: the page is longer than 18,000 characters)"
            return text
        raise ToolError("too many redirects (more than 5)")


class Nowhere(urllib.request.HTTPRedirectHandler):
    def http_error_302(self, req, fp, code, msg, headers):
        return None  # urllib then raises HTTPError: the tool decides

    http_error_301 = http_error_303 = http_error_307 = http_error_308 = http_error_302
"""],
    "ch10.budget": ["""
import threading
from corecoder.cli.pricing import cost_of, price_for
from corecoder.messages import ModelError

class Budget:  # its own sum with cost_of and price_for, no Ledger; a lock; the model's name taken through __getattr__
    def __init__(self, llm, prices, cap):
        self._llm, self._prices, self._cap = llm, prices, cap
        self._spent = 0.0
        self._lock = threading.Lock()

    def __getattr__(self, name):
        return getattr(self._llm, name)  # model, and anything else the wrapped model has

    def chat(self, messages, tools=None, emit=None):
        with self._lock:
            if self._spent >= self._cap:
                raise ModelError(f"spending cap of {self._cap} USD reached: {self._spent} USD spent")
        reply = self._llm.chat(messages, tools, emit)
        price = price_for(self._llm.model, self._prices)
        if reply.usage is not None and price is not None:
            with self._lock:
                self._spent += cost_of(reply.usage, price)
        return reply
""", """
from corecoder.cli.pricing import Ledger
from corecoder.messages import ModelError

class Budget:  # the model's name copied once; a ModelError of its own; the test written as what is left
    def __init__(self, llm, prices, cap):
        self.llm = llm
        self.model = llm.model
        self.cap = cap
        self.ledger = Ledger(prices)

    def left(self):
        return self.cap - self.ledger.known_cost

    def chat(self, messages, tools, emit):
        if self.left() <= 0:
            raise BudgetReached(f"budget reached: {self.ledger.summary()} (cap ${self.cap:.2f})")
        reply = self.llm.chat(messages, tools, emit)
        if reply.usage is not None:
            self.ledger.add(self.model, reply.usage)
        return reply


class BudgetReached(ModelError):
    '''The run's cap is spent.'''
""", """
from decimal import Decimal
from corecoder.cli.pricing import cost_of
from corecoder.messages import ModelError

class Budget:  # counts in Decimal, forwards whatever chat is given, and says the cap in cents
    def __init__(self, llm, prices, cap):
        self.inner = llm
        self.price = prices.get(llm.model)
        self.cap = Decimal(str(cap))
        self.spent = Decimal(0)

    model = property(lambda self: self.inner.model)

    def chat(self, *args, **kwargs):
        if self.spent >= self.cap:
            raise ModelError(f"stopped: {self.spent * 100:.1f} cents spent, the cap is {self.cap * 100:.1f}")
        reply = self.inner.chat(*args, **kwargs)
        if reply.usage and self.price:
            self.spent += Decimal(str(cost_of(reply.usage, self.price)))
        return reply
"""],
}


@pytest.mark.parametrize("name, right", [(n, r) for n, rs in RIGHT.items() for r in rs],
                         ids=[f"{n}-{i}" for n, rs in RIGHT.items() for i in range(len(rs))])
def test_a_right_answer_written_otherwise_passes(name, right):
    function = re.search(r"^(?:def|class) (\w+)", right, re.M).group(1)
    passed, out = run_check(name, answer(right, function))
    assert passed, out


def test_chapter_one_has_four_exercises_and_each_has_wrong_answers():
    names = [e[1] for e in EXERCISES if e[0] == "01-loop.ipynb"]
    assert names == ["ch01.find_orphan", "ch01.answer_pending", "ch01.run_call", "ch01.stop_on_failure"]
    assert {e[1] for e in EXERCISES} == set(WRONG), "every exercise needs plausible wrong answers"


@pytest.mark.parametrize("english", ENGLISH, ids=lambda p: p.stem)
def test_every_chapter_has_exercises_named_after_it(english):
    names = [e[1] for e in EXERCISES if e[0] == english.name]
    assert len(names) >= 2, f"{english.name}: each chapter ends with exercises (COURSE.md, rule 5)"
    assert all(name.startswith(f"ch{english.name[:2]}.") for name in names), names


@pytest.mark.parametrize("notebook, name, function, source, learner", EXERCISES, ids=[e[1] for e in EXERCISES])
def test_the_solution_passes_and_the_learners_cell_fails_until_it_is_written(notebook, name, function, source,
                                                                          learner):
    passed, out = run_check(name, answer(source, function))
    assert passed and out == f"✓ {name} passed\n"
    # unsolved: `raise NotImplementedError`, or `...` for a class's whole body (a tool to write)
    assert learner == stub(source)
    assert "raise NotImplementedError" in learner or re.search(r"^\s+\.\.\.$", learner, re.M)
    passed, out = run_check(name, answer(learner, function))
    assert not passed and "not implemented yet" in out


@pytest.mark.parametrize("path", BOTH, ids=lambda p: p.name)
def test_the_notebook_a_learner_opens_has_each_exercise_unsolved_and_its_solution_folded_away(path):
    cells = [c for c in read(path).cells if c.cell_type == "code"]
    for i, cell in enumerate(cells):
        if is_exercise(cell):
            told = "".join(o.get("text", "") for o in cells[i + 1].outputs)
            assert "### BEGIN SOLUTION" not in cell.source
            assert "not implemented yet" in told or "还没有实现" in told, f"{cell.id}: {told!r}"
        if is_solution(cell):
            assert cell.metadata.get("jupyter", {}).get("source_hidden") is True, f"{cell.id}: folded away"
            assert "passed" in cell.outputs[0].text or "通过" in cell.outputs[0].text, cell.id


def test_a_set_ordered_answer_fails_whatever_the_hash_seed():
    # set order depends on PYTHONHASHSEED: the verdict must not (this answer passed 7 seeds in 20 once)
    program = textwrap.dedent(f"""
        from corecoder_course.checks import verdict
        from corecoder.messages import INTERRUPTED, tool_result
        exec({WRONG_BY_SET!r})
        print(verdict("ch01.answer_pending", answer_pending)[0])
    """)
    import os
    import subprocess
    import sys

    for seed in range(8):
        env = {**os.environ, "PYTHONHASHSEED": str(seed)}
        done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=env, check=True)
        assert done.stdout.strip() == "False", f"PYTHONHASHSEED={seed}"


@pytest.mark.parametrize("name, wrong", [(n, w) for n, ws in WRONG.items() for w in ws],
                         ids=[f"{n}-{i}" for n, ws in WRONG.items() for i in range(len(ws))])
def test_a_plausible_wrong_answer_fails_with_a_hint(name, wrong):
    function = re.search(r"^(?:def|class) (\w+)", wrong, re.M).group(1)  # the first at column 0
    with unshrunk():  # it fails or not as it would; the smallest input, which costs a third, is not asked
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
            if cell.cell_type == "code" and (is_check(cell) or is_exercise(cell)):
                assert cell.outputs == [] and cell.execution_count is None


def test_both_languages_of_the_student_edition_have_the_same_code(student):
    for english in ENGLISH:
        en, zh = read(student / english.name), read(student / twin(english).name)
        assert [in_chinese(c.source) if is_language(c) else c.source for c in en.cells if c.cell_type == "code"] \
            == [c.source for c in zh.cells if c.cell_type == "code"]


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


def test_the_reassembly_check_ends_inside_a_real_agent_whose_history_must_equal_the_scripted_ones(tmp_path):
    from corecoder.messages import ToolCall
    from corecoder_course.checks import Hint
    from corecoder_course.exercises import ch03

    def by_index_only(deltas):  # merges the parallel calls of a dialect that shares one index
        calls = {}
        for delta in deltas:
            call = calls.setdefault(delta.get("index"), [delta.get("id"), "", ""])
            call[1] = call[1] or delta["function"].get("name") or ""
            call[2] += delta["function"].get("arguments") or ""
        return [ToolCall(id or f"call_{n}", name, args) for n, (id, name, args) in enumerate(calls.values(), 1)]

    for name, text in ch03.AGENT_FILES.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    ch03._through_an_agent(by_index_only, "standard", tmp_path)  # one index per call: right there
    with pytest.raises(Hint, match="a real Agent whose model streams its tool calls in the shared_index dialect"):
        ch03._through_an_agent(by_index_only, "shared_index", tmp_path)


@pytest.mark.parametrize("path", BOTH, ids=lambda p: p.name)
def test_every_production_box_says_when_its_sources_were_checked(path):
    """A figure about another product goes stale (Claude Code's compaction threshold did): each
    chapter's box says the date its sources were checked, first thing after its heading."""
    boxes = [c.source for c in read(path).cells if c.cell_type == "markdown"
             and c.source.startswith(("### How production agents do it", "### 业界的编程智能体怎么做"))]
    assert len(boxes) == 1, f"{path.name}: one production box"
    first = boxes[0].split("\n\n")[1]
    assert re.fullmatch(r"Sources checked on \d{4}-\d\d-\d\d\.|以下来源核对于 \d{4}-\d\d-\d\d。", first)
