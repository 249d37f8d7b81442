"""Run the chapters and store their outputs, the way nbval will check them.

    python -m authoring execute [NOTEBOOK ...]

Each chapter runs top to bottom in a fresh kernel of this Python, from `notebooks/`
(where JupyterLab and nbval start their kernels): the English one, then, once sync has
given it the new code, its Chinese twin, whose helpers print their own words. Then what
would change on every run, or mean nothing on a page, is left out of the stored file:
widget views (a kernel that has gone leaves only "model not found" behind; the widget's
text twin, its text/plain, stays), saved widget state, timings and the Python version;
and a stream printed in many pieces is stored as one, as JupyterLab shows it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from .notebook import read, write

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
LANGUAGE_INFO = {"name": "python", "pygments_lexer": "ipython3", "file_extension": ".py",
                 "mimetype": "text/x-python", "nbconvert_exporter": "python",
                 "codemirror_mode": {"name": "ipython", "version": 3}}


def this_python_kernel():
    """A kernel manager that starts this interpreter, whatever kernels Jupyter has registered."""
    from jupyter_client.kernelspec import KernelSpec, KernelSpecManager
    from jupyter_client.manager import KernelManager

    class HereOnly(KernelSpecManager):
        def get_kernel_spec(self, kernel_name):
            return KernelSpec(argv=[sys.executable, "-m", "ipykernel_launcher",
                                    "-f", "{connection_file}"],
                              display_name="Python 3 (ipykernel)", language="python")

    return KernelManager(kernel_name="python3", kernel_spec_manager=HereOnly())


def run_notebook(nb, cwd: Path, timeout: int = 120):
    """Execute `nb` in place in a fresh kernel started in `cwd`; an error in any cell raises.
    The kernel keeps answers in a folder of its own, empty (CORECODER_COURSE_ANSWERS): what a
    chapter shows of "your answers" (chapter 10) is then what a fresh clone shows, not what the
    author's own runs kept in notebooks/.work/answers."""
    import tempfile

    from nbclient import NotebookClient

    with tempfile.TemporaryDirectory(prefix="answers-") as answers:
        client = NotebookClient(nb, km=this_python_kernel(), timeout=timeout,
                                record_timing=False, resources={"metadata": {"path": str(cwd)}})
        client.execute(env={**os.environ, "CORECODER_COURSE_ANSWERS": answers})
    return nb


def tidy(nb):
    """Leave out of the stored notebook what differs from run to run or machine to machine."""
    nb.metadata.pop("widgets", None)
    nb.metadata["language_info"] = dict(LANGUAGE_INFO)
    nb.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python",
                                 "name": "python3"}
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        for output in cell.get("outputs", []):
            output.get("data", {}).pop(WIDGET_VIEW, None)
        if cell.cell_type == "code":
            cell.outputs = join_streams(cell.outputs)
    return nb


def join_streams(outputs: list) -> list:
    """Merge consecutive pieces of the same stream, as a notebook shows them (and nbval
    compares them)."""
    joined = []
    for output in outputs:
        last = joined[-1] if joined else None
        if output.output_type == "stream" and last is not None and last.output_type == "stream" \
                and last.name == output.name:
            last.text += output.text
        else:
            joined.append(output)
    return joined


def execute(path: Path, timeout: int = 120) -> None:
    """Run one notebook from its own folder and store its tidied outputs."""
    path = Path(path)
    write(tidy(run_notebook(read(path), path.resolve().parent, timeout)), path)
