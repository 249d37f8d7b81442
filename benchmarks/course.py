"""The course: how long every chapter takes to execute, in both languages, and the site to build.

The notebooks are copied into a temp folder and run there (their scratch space, `.work/`, lands
there too), in a fresh kernel each, with the same kernel and client as `python -m authoring
execute`; the committed notebooks are only read. The site is `mkdocs build --strict` into a temp dir.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def notebooks(root: Path = ROOT) -> list[Path]:
    """Every chapter in both languages, English then its Chinese twin, in chapter order."""
    from authoring.notebook import chapters, twin

    return [p for english in chapters(root / "notebooks") for p in (english, twin(english)) if p.exists()]


def execute_notebooks(root: Path = ROOT) -> dict:
    """Seconds to execute each notebook (a copy, in a temp folder); an error in a cell raises."""
    from authoring.execute import run_notebook
    from authoring.notebook import read

    each = {}
    with tempfile.TemporaryDirectory(prefix="bench-course-") as tmp:
        for path in notebooks(root):  # all of them first: chapter 4 reads its Chinese twin's text
            shutil.copy(path, tmp)
        for path in notebooks(root):
            copy = Path(tmp, path.name)
            started = time.perf_counter()
            run_notebook(read(copy), Path(tmp))
            each[path.name] = time.perf_counter() - started
    by_language = {"en": sum(s for n, s in each.items() if not n.endswith(".zh.ipynb")),
                   "zh": sum(s for n, s in each.items() if n.endswith(".zh.ipynb"))}
    return {"seconds": each, "by_language": by_language, "total": sum(each.values())}


def build_site(root: Path = ROOT) -> dict:
    """Seconds for `mkdocs build --strict` (both languages) into a temp dir."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    with tempfile.TemporaryDirectory(prefix="bench-site-") as tmp:
        started = time.perf_counter()
        command = [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(Path(tmp, "site"))]
        run = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=600)
        seconds = time.perf_counter() - started
    if run.returncode != 0:
        raise RuntimeError(f"mkdocs build --strict failed:\n{run.stderr[-2000:]}")
    return {"seconds": seconds}
