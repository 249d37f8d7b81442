"""What the course tools need to know about notebooks: where they are and what their cells are.

Chapters live in `notebooks/` as `NN-slug.ipynb` (English) and `NN-slug.zh.ipynb`
(Chinese). A cell's role is read from its content and tags:

    export      tag; the cell defines engine code, identical to the package (sync.py)
    sketch      tag; illustrative code that is not the shipped code, and says so
    language    tag; the one code cell that differs between the languages: it imports
                the course helpers, from `corecoder_course` or `corecoder_course.zh`
    exercise    tag; what the learner fills in: a function whose body raises
                NotImplementedError, the solution cell's code with the solution taken out
    solution    tag; folded away (one click shows it): the solution between
                `### BEGIN SOLUTION` and `### END SOLUTION`, then its check
    check       a code cell that calls `check(...)`
    whats-new   tag; a markdown cell generated from the chapter's coverage table
    diagram     tag; a markdown cell generated from the diagram its metadata names (diagrams.py)

Notebooks are read and written with nbformat, in its own layout, so a file written
here is byte-identical to the same notebook saved by JupyterLab.
"""

from __future__ import annotations

import ast
import hashlib
import re
from pathlib import Path

from corecoder_course.words import SPEAKING

from . import ROOT

NOTEBOOKS = ROOT / "notebooks"
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
GENERATED = ("whats-new", "diagram")  # markdown cells sync writes, in each language
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def chapters(folder: Path = NOTEBOOKS) -> list[Path]:
    """The English chapter notebooks, in chapter order."""
    return sorted(p for p in Path(folder).glob("[0-9][0-9]-*.ipynb")
                  if not p.name.endswith(".zh.ipynb"))


def twin(path: Path) -> Path:
    """The Chinese notebook of an English chapter: `01-loop.ipynb` -> `01-loop.zh.ipynb`."""
    return path.with_name(path.name.removesuffix(".ipynb") + ".zh.ipynb")


def read(path: Path):
    import nbformat

    return nbformat.read(str(path), as_version=4)


def render(nb) -> str:
    """The notebook as nbformat writes it to disk (and JupyterLab saves it)."""
    import nbformat

    text = nbformat.writes(nb)
    return text if text.endswith("\n") else text + "\n"


def write(nb, path: Path) -> None:
    Path(path).write_text(render(nb), encoding="utf-8")


def tags(cell) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def is_exercise(cell) -> bool:
    return cell.cell_type == "code" and "exercise" in tags(cell)


def is_solution(cell) -> bool:
    return cell.cell_type == "code" and "solution" in tags(cell)


def is_language(cell) -> bool:
    return cell.cell_type == "code" and "language" in tags(cell)


def in_chinese(source: str) -> str:
    """The language cell of the Chinese notebook, made from the English one."""
    return source.replace("from corecoder_course import", "from corecoder_course.zh import")


def speaks(cell) -> bool:
    """A code cell that calls a helper of SPEAKING: its output differs between the languages."""
    return cell.cell_type == "code" and bool(_called(cell.source) & set(SPEAKING))


def is_check(cell) -> bool:
    """A code cell that calls `check(...)`: its output is a verdict on the exercise above it."""
    return cell.cell_type == "code" and "check" in _called(cell.source)


def _called(source: str) -> set[str]:
    """The plain names a piece of code calls: `check(...)` gives "check"."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    return {n.func.id for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}


def digest(text: str) -> str:
    """What a translation records of its English source: a short hash of the text."""
    return hashlib.sha256(text.strip().encode("utf-8")).hexdigest()[:12]


def headings(nb) -> list[tuple[int, str]]:
    """(level, text) of every markdown heading, skipping fenced code blocks."""
    found = []
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        fenced = False
        for line in cell.source.splitlines():
            if line.lstrip().startswith(("```", "~~~")):
                fenced = not fenced
            elif not fenced and (m := HEADING.match(line)):
                found.append((len(m.group(1)), m.group(2)))
    return found
