"""The course's authoring tools: what keeps the notebooks honest, run by whoever writes them.

    notebook.py   where the chapters are, and what their cells are (export, sketch, exercise, check)
    sync.py       export cells regenerated from the package; the Chinese notebooks' code from
                  the English
    execute.py    run the chapters in fresh kernels and store their outputs
    student.py    the student edition: every solution taken out
    __main__.py   the command: python -m corecoder.course [student | sync | execute]

A learner never needs these: what a chapter calls is the package above (corecoder.course).
"""
