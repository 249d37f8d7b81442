"""Exercises a learner does, and the student edition.

An exercise is three cells. The learner's cell (tagged `exercise`) holds the function
to write, its body `raise NotImplementedError`, so its check (the next cell) says
"not implemented yet" until the learner writes it. Then comes the solution (tagged
`solution`, folded away: one click shows it), which defines the same function and
checks it, between `### BEGIN SOLUTION` and `### END SOLUTION`:

    def find_orphan(messages):            # the solution cell
        \"\"\"...\"\"\"
        ### BEGIN SOLUTION
        ...
        ### END SOLUTION


    check("ch01.find_orphan", find_orphan)

The learner's cell is made from it (`stub`): the same code, its comments at the top and its
closing check left out, the solution replaced by `raise NotImplementedError` at the same
indentation. A solution that is a class's whole body (a tool to write: its name, schema and
`run`) becomes `...`, since a class body that raises could not even be defined; the class's
docstring says what to write, and the base class's methods raise NotImplementedError.
sync.py writes it, so the two cannot drift.

The student edition (`python -m authoring student OUT_DIR`) is every chapter
without its solution cells, and without stored verdicts: for a teacher who hands out
exercises without their answers.
"""

from __future__ import annotations

import ast
import copy
import re
from pathlib import Path

from .notebook import (
    BEGIN,
    END,
    NOTEBOOKS,
    chapters,
    is_check,
    is_exercise,
    is_solution,
    read,
    twin,
    write,
)

SOLUTION = re.compile(rf"^([ \t]*){re.escape(BEGIN)}.*?{re.escape(END)}[^\n]*$", re.M | re.S)


def strip_solutions(code: str) -> str:
    """`code` with each solution region replaced by `raise NotImplementedError` (by `...` in a
    class's body)."""

    def replace(m: re.Match) -> str:
        indent = m.group(1)
        above = [line for line in code[:m.start()].splitlines() if line.strip()]
        opener = next((line for line in reversed(above)
                       if len(line) - len(line.lstrip()) < len(indent)), "")
        in_class = opener.lstrip().startswith("class ")
        return f"{indent}{'...' if in_class else 'raise NotImplementedError'}"

    stripped = SOLUTION.sub(replace, code)
    if BEGIN in stripped or END in stripped:
        raise ValueError(f"unmatched {BEGIN!r} / {END!r} markers in:\n{code}")
    return stripped


def stub(solution: str) -> str:
    """The learner's cell that a solution cell implies: its code without the comments that open
    it and the `check(...)` that closes it, and with the solution taken out."""
    body = ast.parse(solution).body
    if body and isinstance(body[-1], ast.Expr) and isinstance(body[-1].value, ast.Call) \
            and getattr(body[-1].value.func, "id", None) == "check":
        solution = "\n".join(solution.splitlines()[:body[-1].lineno - 1])
    lines = solution.splitlines()
    while lines and (lines[0].startswith("#") and BEGIN not in lines[0] or not lines[0].strip()):
        lines.pop(0)
    while lines and (lines[-1].lstrip().startswith("#") and END not in lines[-1]
                     or not lines[-1].strip()):
        lines.pop()  # a comment left before the check went with it
    return strip_solutions("\n".join(lines) + "\n").rstrip("\n")


def student_notebook(nb):
    """A copy of `nb` as the student edition: no solution cells, no stored verdicts."""
    nb = copy.deepcopy(nb)
    nb.cells = [cell for cell in nb.cells if not is_solution(cell)]
    for cell in nb.cells:
        if is_check(cell) or is_exercise(cell):
            cell.outputs, cell.execution_count = [], None
    return nb


def write_student_edition(out_dir: Path, folder: Path = NOTEBOOKS) -> list[Path]:
    """Write the student edition of every chapter, both languages, into `out_dir`."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for english in chapters(folder):
        for path in (english, twin(english)):
            if path.exists():
                target = out_dir / path.name
                write(student_notebook(read(path)), target)
                written.append(target)
    return written
