"""The student edition: every chapter with its solutions taken out.

In an exercise cell, the code from `### BEGIN SOLUTION` to `### END SOLUTION` is
replaced by `raise NotImplementedError`, at the same indentation, so the cell still
runs and its check says "not implemented yet". The outputs of exercise and check
cells are cleared: a stored "✓ passed" would be a lie in the student's copy.

    python -m corecoder.course student OUT_DIR
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

from .notebook import BEGIN, END, NOTEBOOKS, chapters, is_check, is_exercise, read, twin, write

SOLUTION = re.compile(rf"^([ \t]*){re.escape(BEGIN)}.*?{re.escape(END)}[^\n]*$", re.M | re.S)


def strip_solutions(code: str) -> str:
    """`code` with each solution region replaced by `raise NotImplementedError`."""
    stripped = SOLUTION.sub(lambda m: f"{m.group(1)}raise NotImplementedError", code)
    if BEGIN in stripped or END in stripped:
        raise ValueError(f"unmatched {BEGIN!r} / {END!r} markers in:\n{code}")
    return stripped


def student_notebook(nb):
    """A copy of `nb` as the student edition."""
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        if is_exercise(cell):
            cell.source = strip_solutions(cell.source)
            cell.outputs, cell.execution_count = [], None
        elif is_check(cell):
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
