"""The course's authoring tools: what keeps the notebooks honest, run by whoever writes them.

    notebook.py   where the chapters are, and what their cells are (export, sketch, exercise, check)
    sync.py       export cells regenerated from the package; the Chinese notebooks' code from
                  the English
    execute.py    run the chapters in fresh kernels and store their outputs
    student.py    the student edition: every solution taken out
    coverage.py   what each chapter teaches of the engine: its coverage table, and its budget
    essays.py     the essays' includes, their links to the source, their translations
    ruler.py      net lines: what a budget counts
    mutants.py    each declared exercise's checker scored on mutants of its reference (MUTANTS.md)
    __main__.py   the command, from the repository's root: python -m authoring [student | sync |
                  execute | translated | mutants]

They read the repository (notebooks/, essays/, the engine's source), so they live in it and not
in the wheel. A learner never needs them: what a chapter calls is the `corecoder_course` package.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # the repository: notebooks/, essays/, corecoder/
