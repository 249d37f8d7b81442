"""Keep the notebooks honest: export cells equal the package, Chinese code equals English.

    python -m authoring sync            rewrite what differs
    python -m authoring sync --check    change nothing; list differences, exit 1 if any

1. Export cells. A cell tagged `export` names its source in its first line:

       # corecoder/messages.py                 its defs and classes are the module's
       # corecoder/agent.py: class Agent       its defs are methods of Agent

   Each top-level def, class or constant (`NAME = ...`) in the cell is replaced by
   the package's one of the same name; everything else in the cell (imports,
   `Agent.run = run`) stays. A class written without its methods is the class's
   skeleton (decorators, bases, docstring, fields): the methods come in cells of
   their own, `# corecoder/agent.py: class Agent`, perhaps in a later chapter.

2. Exercises. Each learner's cell (tagged `exercise`) is made from the solution cell
   that follows its check (student.py, `stub`).

3. Chinese twins. `NN-slug.zh.ipynb` gets every code cell of `NN-slug.ipynb`: the same
   source (the `language` cell imports the Chinese helpers instead), and the same
   outputs, except in the cells that call a helper that speaks (a verdict, the
   step-through twin): those keep what the Chinese run printed (execute.py runs both).
   Its own markdown cells stay, matched to the English ones by cell id. An English
   markdown cell with no Chinese match is copied in English and reported, so a missing
   translation is visible rather than silently skipped.

4. Translations that went stale. Each Chinese markdown cell records a hash of the
   English text it was translated from (`translated_from` in its metadata), and so does
   each section of a Chinese essay (a comment under its heading). A record that no
   longer matches the English is reported; `python -m authoring translated FILE`
   records the English as it is now, once the translation has caught up.
"""

from __future__ import annotations

import ast
import copy
import re
import textwrap
from pathlib import Path

from corecoder_course import diagrams

from . import ROOT, coverage
from .essays import record_translation, sections, sync_essays
from .notebook import (
    GENERATED,
    NOTEBOOKS,
    chapters,
    digest,
    in_chinese,
    is_exercise,
    is_language,
    is_solution,
    read,
    render,
    speaks,
    tags,
    twin,
)
from .ruler import definition_name, span
from .student import stub

HEADER = re.compile(r"^#\s*(corecoder/[\w/]+\.py)(?::\s*class\s+(\w+))?\s*$")


class SyncError(Exception):
    """A notebook that cannot be synced as written (a bad header, a name the package lacks)."""


def export_source(cell) -> tuple[str, str | None] | None:
    """(module path, class name or None) for an export cell; None for any other cell."""
    if cell.cell_type != "code" or "export" not in tags(cell):
        return None
    first = cell.source.split("\n", 1)[0]
    m = HEADER.match(first)
    if not m:
        raise SyncError(f"an export cell must start with '# corecoder/<module>.py' "
                        f"(or '# corecoder/<module>.py: class <Name>'), not {first!r}")
    return m.group(1), m.group(2)


METHODS = (ast.FunctionDef, ast.AsyncFunctionDef)


def is_skeleton(node) -> bool:
    """A class written without methods: its skeleton, whose methods are exported apart."""
    return isinstance(node, ast.ClassDef) and not any(isinstance(n, METHODS) for n in node.body)


def skeleton(node: ast.ClassDef, lines: list[str]) -> str | None:
    """The class as its skeleton: its header and every statement of its body but the methods
    (None for a class that has nothing but methods: its skeleton would have no body)."""
    start, _ = span(node)
    kept = lines[start - 1:span(node.body[0])[0] - 1]  # the header, up to the first member
    body = [statement for statement in node.body if not isinstance(statement, METHODS)]
    if not body:
        return None
    for statement in body:
        first, last = span(statement)
        kept += lines[first - 1:last]
    return textwrap.dedent("\n".join(kept))


def package_definitions(path: str, cls: str | None = None, root: Path = ROOT,
                        skeletons: bool = False) -> dict[str, str]:
    """name -> source of each top-level definition of a module (or each method of `cls`),
    dedented; with `skeletons`, each class as its skeleton."""
    text = (root / path).read_text(encoding="utf-8")
    body = ast.parse(text).body
    if cls:
        found = [n for n in body if isinstance(n, ast.ClassDef) and n.name == cls]
        if not found:
            raise SyncError(f"{path} has no class {cls}")
        body = found[0].body
    lines = text.splitlines()
    out = {}
    for node in body:
        if name := definition_name(node):
            start, end = span(node)
            out[name] = textwrap.dedent("\n".join(lines[start - 1:end]))
            if skeletons and isinstance(node, ast.ClassDef) and (bare := skeleton(node, lines)):
                out[name] = bare
    return out


def cell_definitions(code: str) -> list[ast.AST]:
    return [n for n in ast.parse(code).body if definition_name(n)]


def regenerate(code: str, definitions: dict[str, str], where: str,
               skeletons: dict[str, str] | None = None) -> str:
    """`code` with each top-level definition replaced by the package's one of the same name
    (a class's skeleton by its skeleton)."""
    lines = code.split("\n")
    for node in reversed(cell_definitions(code)):  # bottom up, so earlier line numbers stay valid
        name = definition_name(node)
        if name not in definitions:
            raise SyncError(f"{where}: defines {name}, which the package does not have there")
        start, end = span(node)
        shipped = (skeletons or {}).get(name) if is_skeleton(node) else None
        if is_skeleton(node) and shipped is None:
            raise SyncError(f"{where}: class {name} has nothing but methods, so it has no "
                            "skeleton to export: give it a docstring")
        lines[start - 1:end] = (shipped or definitions[name]).split("\n")
    return "\n".join(lines)


def sync_exports(nb, name: str, root: Path = ROOT) -> list[str]:
    """Rewrite the export cells of `nb` in place; return a line per changed cell."""
    changes = []
    for i, cell in enumerate(nb.cells):
        target = export_source(cell)
        if target is None:
            continue
        path, cls = target
        where = f"{name} cell {i} ({path}{f': class {cls}' if cls else ''})"
        new = regenerate(cell.source, package_definitions(path, cls, root), where,
                         package_definitions(path, cls, root, skeletons=True))
        if new != cell.source:
            before = {definition_name(n): ast.dump(n) for n in cell_definitions(cell.source)}
            changed = [definition_name(n) for n in cell_definitions(new)
                       if before.get(definition_name(n)) != ast.dump(n)]
            changes.append(f"{where}: differs from the package: "
                           f"{', '.join(changed) or 'layout only'}")
            cell.source = new
    return changes


def sync_exercises(nb, name: str) -> list[str]:
    """Make each learner's cell from its solution cell, in place; a line per changed cell."""
    changes, learner = [], None
    for i, cell in enumerate(nb.cells):
        if is_exercise(cell):
            if learner is not None:
                raise SyncError(f"{name} cell {learner[0]}: an exercise cell with no solution "
                                "cell after its check")
            learner = (i, cell)
        elif is_solution(cell):
            if learner is None:
                raise SyncError(f"{name} cell {i}: a solution cell with no exercise cell before it")
            at, exercise = learner
            if exercise.source != (made := stub(cell.source)):
                changes.append(f"{name} cell {at}: the exercise differs from its solution's stub")
                exercise.source = made
            learner = None
    if learner is not None:
        raise SyncError(f"{name} cell {learner[0]}: an exercise cell with no solution cell after "
                        "its check")
    return changes


def sync_twin(english, chinese, name: str) -> tuple[object, list[str]]:
    """The Chinese notebook with the English code cells; and what changed or is missing."""
    theirs = {c.get("id"): c for c in chinese.cells if c.cell_type != "code"}
    spoken = {c.get("id"): c for c in chinese.cells if c.cell_type == "code"}
    result = copy.deepcopy(chinese)
    result.cells, notes = [], []
    for i, cell in enumerate(english.cells):
        where = f"{name}: markdown cell {i} (id {cell.get('id')})"
        if cell.cell_type == "code":
            twin_cell = copy.deepcopy(cell)
            if is_language(cell):
                twin_cell.source = in_chinese(cell.source)
                if twin_cell.source == cell.source:
                    raise SyncError(f"{name}: the language cell must import the helpers with "
                                    "`from corecoder_course import ...`")
            ours = spoken.get(cell.get("id"))
            if speaks(cell) and ours is not None and ours.source == twin_cell.source:
                twin_cell.outputs = copy.deepcopy(ours.outputs)  # what the Chinese run printed
            result.cells.append(twin_cell)
        elif cell.get("id") in theirs:
            translated = theirs.pop(cell.get("id"))
            result.cells.append(translated)
            if translated.source == cell.source and cell.source.strip():
                notes.append(f"{where} is still in English")
            elif set(GENERATED) & set(tags(cell)):
                # generated in both languages (the coverage table, diagrams.py): what to generate
                # is the English cell's to say
                for key in ("tags", "diagram"):
                    if key in cell.metadata:
                        translated.metadata[key] = copy.deepcopy(cell.metadata[key])
            elif "translated_from" not in translated.metadata:
                notes.append(f"{where}: no record of the English it was translated from")
            elif translated.metadata["translated_from"] != digest(cell.source):
                notes.append(f"{where}: the English has changed since it was translated")
        else:
            result.cells.append(copy.deepcopy(cell))
            notes.append(f"{name}: markdown cell {i} (id {cell.get('id')}) has no translation; "
                         "copied in English")
    notes += [f"{name}: markdown cell id {k} matches no English cell; dropped" for k in theirs]
    if chinese.cells != result.cells:  # sources, outputs, execution counts, tags: everything
        notes.append(f"{name}: differs from the English notebook "
                     "(code cells, or the order of cells)")
    return result, notes


def sync_whats_new(nb, name: str, table, defs, lang: str) -> list[str]:
    """Write the chapter's "what's new" cell from its coverage table, in place."""
    cells = [c for c in nb.cells if c.cell_type == "markdown" and "whats-new" in tags(c)]
    if len(cells) != 1:
        return [f"{name}: needs one markdown cell tagged whats-new, has {len(cells)}"]
    new = coverage.whats_new(table, defs, lang)
    if cells[0].source == new:
        return []
    cells[0].source = new
    return [f"{name}: the what's-new cell differs from notebooks/coverage/{table.chapter}.py"]


def sync_diagrams(nb, name: str, lang: str) -> list[str]:
    """Draw each diagram cell anew from diagrams.py, in place, in the notebook's language."""
    changes = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown" and "diagram" in tags(cell):
            new = diagrams.markdown(cell.metadata.get("diagram", ""), lang)
            if cell.source != new:
                changes.append(f"{name} cell {i}: the diagram differs from diagrams.py")
                cell.source = new
    return changes


def sync(folder: Path = NOTEBOOKS, check: bool = False, root: Path = ROOT,
         essays: Path | None = None) -> list[str]:
    """Sync every chapter and the essays beside their folder (`essays/`); write the changes
    unless `check`. Returns the differences found."""
    essays = Path(folder).resolve().parent / "essays" if essays is None else essays
    found = []
    tables = coverage.tables(Path(folder) / "coverage")
    defs = coverage.definitions(coverage.split_classes(tables), root / "corecoder")
    for english_path in chapters(folder):
        english = read(english_path)
        before = render(english)
        found += sync_exports(english, english_path.name, root)
        found += sync_exercises(english, english_path.name)
        found += sync_diagrams(english, english_path.name, "en")
        table = tables.get(english_path.name[:2])
        if table is None:
            found.append(f"{english_path.name}: no coverage table "
                         f"(coverage/{english_path.name[:2]}.py)")
        else:
            found += sync_whats_new(english, english_path.name, table, defs, "en")
        chinese_path = twin(english_path)
        chinese = read(chinese_path) if chinese_path.exists() else copy.deepcopy(english)
        if not chinese_path.exists():
            found.append(f"{chinese_path.name}: missing; made from the English notebook")
        if table is not None:  # before the twin is compared with its English
            found += sync_whats_new(chinese, chinese_path.name, table, defs, "zh")
        found += sync_diagrams(chinese, chinese_path.name, "zh")
        chinese_after, notes = sync_twin(english, chinese, chinese_path.name)
        found += notes
        if check:
            continue
        if render(english) != before:
            english_path.write_text(render(english), encoding="utf-8")
        if not chinese_path.exists() or render(chinese_after) != render(read(chinese_path)):
            chinese_path.write_text(render(chinese_after), encoding="utf-8")
    return found + sync_essays(essays, check, root)


def record_translations(path: Path) -> int:
    """Record, in a Chinese notebook or essay, the English each part was translated from, as
    the English is now: once the translation has caught up. Returns how many parts."""
    path = Path(path)
    if path.suffix == ".md":
        english = path.with_name(path.name.removesuffix(".zh.md") + ".md")
        text = record_translation(english.read_text(encoding="utf-8"),
                                  path.read_text(encoding="utf-8"))
        path.write_text(text, encoding="utf-8")
        return len(sections(text)) - 1
    english = read(path.with_name(path.name.removesuffix(".zh.ipynb") + ".ipynb"))
    sources = {c.get("id"): c.source for c in english.cells if c.cell_type == "markdown"}
    nb, count = read(path), 0
    for cell in nb.cells:
        if cell.cell_type == "markdown" and cell.get("id") in sources:
            cell.metadata["translated_from"] = digest(sources[cell.get("id")])
            count += 1
    path.write_text(render(nb), encoding="utf-8")
    return count
