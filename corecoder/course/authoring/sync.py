"""Keep the notebooks honest: export cells equal the package, Chinese code equals English.

    python -m corecoder.course sync            rewrite what differs
    python -m corecoder.course sync --check    change nothing; list differences, exit 1 if any

1. Export cells. A cell tagged `export` names its source in its first line:

       # corecoder/messages.py                 its defs and classes are the module's
       # corecoder/agent.py: class Agent       its defs are methods of Agent

   Each top-level def, class or constant (`NAME = ...`) in the cell is replaced by
   the package's one of the same name; everything else in the cell (imports,
   `Agent.run = run`) stays.

2. Chinese twins. `NN-slug.zh.ipynb` gets every code cell (source and outputs) of
   `NN-slug.ipynb`; its own markdown cells stay, matched to the English ones by cell
   id. An English markdown cell with no Chinese match is copied in English and
   reported, so a missing translation is visible rather than silently skipped.
"""

from __future__ import annotations

import ast
import copy
import re
import textwrap
from pathlib import Path

from ..source import PACKAGE_ROOT
from .notebook import NOTEBOOKS, chapters, read, render, tags, twin

HEADER = re.compile(r"^#\s*(corecoder/[\w/]+\.py)(?::\s*class\s+(\w+))?\s*$")
DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def definition_name(node) -> str | None:
    """The name a statement defines, if it is a def, a class or a plain `NAME = value`."""
    if isinstance(node, DEFINITIONS):
        return node.name
    if (isinstance(node, ast.Assign) and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)):
        return node.targets[0].id
    if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
            and node.value is not None):
        return node.target.id
    return None


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


def _span(node) -> tuple[int, int]:
    """First and last line of a definition, decorators included (1-based)."""
    start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
    return start, node.end_lineno


def package_definitions(path: str, cls: str | None = None,
                        root: Path = PACKAGE_ROOT) -> dict[str, str]:
    """name -> source of each top-level definition of a module (or each method of `cls`),
    dedented."""
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
            start, end = _span(node)
            out[name] = textwrap.dedent("\n".join(lines[start - 1:end]))
    return out


def cell_definitions(code: str) -> list[ast.AST]:
    return [n for n in ast.parse(code).body if definition_name(n)]


def regenerate(code: str, definitions: dict[str, str], where: str) -> str:
    """`code` with each top-level definition replaced by the package's one of the same name."""
    lines = code.split("\n")
    for node in reversed(cell_definitions(code)):  # bottom up, so earlier line numbers stay valid
        name = definition_name(node)
        if name not in definitions:
            raise SyncError(f"{where}: defines {name}, which the package does not have there")
        start, end = _span(node)
        lines[start - 1:end] = definitions[name].split("\n")
    return "\n".join(lines)


def sync_exports(nb, name: str, root: Path = PACKAGE_ROOT) -> list[str]:
    """Rewrite the export cells of `nb` in place; return a line per changed cell."""
    changes = []
    for i, cell in enumerate(nb.cells):
        target = export_source(cell)
        if target is None:
            continue
        path, cls = target
        where = f"{name} cell {i} ({path}{f': class {cls}' if cls else ''})"
        new = regenerate(cell.source, package_definitions(path, cls, root), where)
        if new != cell.source:
            before = {definition_name(n): ast.dump(n) for n in cell_definitions(cell.source)}
            changed = [definition_name(n) for n in cell_definitions(new)
                       if before.get(definition_name(n)) != ast.dump(n)]
            changes.append(f"{where}: differs from the package: "
                           f"{', '.join(changed) or 'layout only'}")
            cell.source = new
    return changes


def sync_twin(english, chinese, name: str) -> tuple[object, list[str]]:
    """The Chinese notebook with the English code cells; and what changed or is missing."""
    theirs = {c.get("id"): c for c in chinese.cells if c.cell_type != "code"}
    result = copy.deepcopy(chinese)
    result.cells, notes = [], []
    for i, cell in enumerate(english.cells):
        if cell.cell_type == "code":
            result.cells.append(copy.deepcopy(cell))
        elif cell.get("id") in theirs:
            translated = theirs.pop(cell.get("id"))
            result.cells.append(translated)
            if translated.source == cell.source and cell.source.strip():
                notes.append(f"{name}: markdown cell {i} (id {cell.get('id')}) is still in English")
        else:
            result.cells.append(copy.deepcopy(cell))
            notes.append(f"{name}: markdown cell {i} (id {cell.get('id')}) has no translation; "
                         "copied in English")
    notes += [f"{name}: markdown cell id {k} matches no English cell; dropped" for k in theirs]
    if chinese.cells != result.cells:  # sources, outputs, execution counts, tags: everything
        notes.append(f"{name}: differs from the English notebook "
                     "(code cells, or the order of cells)")
    return result, notes


def sync(folder: Path = NOTEBOOKS, check: bool = False, root: Path = PACKAGE_ROOT) -> list[str]:
    """Sync every chapter; write the changes unless `check`. Returns the differences found."""
    found = []
    for english_path in chapters(folder):
        english = read(english_path)
        before = render(english)
        found += sync_exports(english, english_path.name, root)
        chinese_path = twin(english_path)
        chinese = read(chinese_path) if chinese_path.exists() else copy.deepcopy(english)
        if not chinese_path.exists():
            found.append(f"{chinese_path.name}: missing; made from the English notebook")
        chinese_after, notes = sync_twin(english, chinese, chinese_path.name)
        found += notes
        if check:
            continue
        if render(english) != before:
            english_path.write_text(render(english), encoding="utf-8")
        if not chinese_path.exists() or render(chinese_after) != render(chinese):
            chinese_path.write_text(render(chinese_after), encoding="utf-8")
    return found
