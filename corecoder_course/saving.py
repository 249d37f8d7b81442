"""What JupyterLab saves of a chapter: what the repository commits, so that opening one leaves
the work tree clean.

When a notebook's kernel starts, JupyterLab writes the kernel's Python version into the
notebook's metadata (`language_info.version`), and its autosave writes that to disk a minute or
two later. The chapters are committed without it, since it differs from one machine to the next:
left alone, opening a chapter changes a tracked file, and the learner's next `git pull` (the way
new chapters reach them) is refused. The README's command hands JupyterLab this hook:

    jupyter lab --ContentsManager.pre_save_hook=corecoder_course.saving.as_committed ...

It leaves everything the learner does (a cell run, an edit, an output) as they left it.
"""

from __future__ import annotations


def as_committed(model: dict, **kwargs) -> None:
    """Jupyter's pre-save hook: a notebook about to be saved loses what only says which machine
    ran it (the kernel's Python version)."""
    if model.get("type") == "notebook" and isinstance(model.get("content"), dict):
        model["content"].get("metadata", {}).get("language_info", {}).pop("version", None)
