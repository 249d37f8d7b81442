"""Fixtures shared by the whole suite: a home of its own, a check on the processes it starts, and a real
browser; and which tests must share a worker when the suite runs on parallel workers."""

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def ctrl_c_is_pythons_own():
    """Every test starts with Python's own SIGINT handler, in this process and so in the
    commands it starts (a SIGINT ignored here is ignored in every child too, and a child's Ctrl+C
    does nothing). On full runs it was found ignored after the first test of a module, so set by
    some fixture's teardown between modules (not yet traced): six Ctrl+C tests then failed or
    hung, depending on which worker ran what. Put back before each test, they no longer depend
    on their neighbours."""
    if (threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        signal.signal(signal.SIGINT, signal.default_int_handler)
    yield

# The answers a learner keeps (corecoder_course/answers.py) go to a folder of the run's own, empty
# at the start: no test keeps one in notebooks/.work/answers, and a chapter that shows "your
# answers" (chapter 10) shows, under nbval, what a fresh clone shows. Set here, at import, so that
# every kernel nbval starts inherits it, as authoring/execute.py's kernels do. (Unless one is set
# already: chapter 10 runs these tests against the answers of the folder it names.)
os.environ.setdefault("CORECODER_COURSE_ANSWERS", tempfile.mkdtemp(prefix="corecoder-answers-"))

# Python keeps what it compiles in __pycache__ (gitignored) unless told not to, and some machines
# tell it not to: PYTHONDONTWRITEBYTECODE=1 is common in container images, the ones this suite's
# figures were measured on among them. A run starts about 3,000 interpreters (kernels, the
# command, the kit's judges, the exercises' hooks and servers) and four workers that rewrite the
# asserts of every test module; told so, each compiled the engine, the course and the tests anew:
# 17% of the run's processor time (1,238 s against 1,022 s, measured on one commit). Undone here,
# at import, before the workers start, so that they and every process they start inherit it; a
# run then behaves as on a machine that never set it, as a new user's clone most often runs.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

# Which tests must run in the same worker when the suite runs on parallel workers (pytest-xdist):
# every run of a chapter (nbval in each language) writes the same
# scratch folder, notebooks/.work/<chapter>; the student edition is built once for its tests; and
# these modules do once, in a module fixture, the work of all their tests (build the site, start
# JupyterLab, run the benchmarks, run every trial of the round faults side by side): on four
# workers, four times.
CHAPTER = re.compile(r"notebooks/(\d\d-[\w-]+?)(?:\.zh)?\.ipynb::")
DONE_ONCE = ("test_site.py", "test_jupyterlab.py", "test_benchmarks.py", "test_round_faults.py")


def shared_by(nodeid: str) -> str:
    """The unit a test is scheduled in: its chapter, its module, or the test alone."""
    chapter = CHAPTER.search(nodeid)
    if chapter:
        return "chapter " + chapter[1]
    if "student_edition" in nodeid:
        return "the student edition"
    module = nodeid.split("::", 1)[0]
    return module if module.endswith(DONE_ONCE) else nodeid


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """Tests one by one to whichever worker is free, but a unit of `shared_by` to one worker, in
    order. (By the test's id, which the controller has, not by a mark: the controller collects
    nothing itself.)"""
    from xdist.scheduler import LoadScopeScheduling

    class Shared(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return shared_by(nodeid)

    return Shared(config, log)


def pytest_collection_modifyitems(items):
    """nbval starts a notebook's kernel in the notebook's folder, as JupyterLab does; it starts an
    English chapter's at the repository root instead, where a learner may run one too. The Chinese
    twin has the same code (tests/course/test_notebooks.py), so the two runs nbval makes of a
    chapter prove it prints the same from either place, and no third run is needed. (Without
    nbval's plugin, as in the runs chapter 10 makes of the package's tests, there is no notebook:
    nbval is not imported, which costs a second.)"""
    nbval = sys.modules.get("nbval.plugin")
    if nbval is None:
        return
    for notebook in {item.parent for item in items if isinstance(item.parent, nbval.IPyNbFile)}:
        if not notebook.path.name.endswith(".zh.ipynb"):
            notebook.setup = started_at_the_root(notebook.setup)


def started_at_the_root(setup):
    import nbval.plugin

    def run():
        kernel, started = nbval.plugin.RunningKernel, []

        def at_the_root(name, cwd, **options):
            started.append(cwd)
            return kernel(name, cwd=str(ROOT), **options)

        nbval.plugin.RunningKernel = at_the_root
        try:
            setup()
        finally:
            nbval.plugin.RunningKernel = kernel
        assert started, "nbval no longer starts its kernel with RunningKernel(name, cwd=...): see tests/conftest.py"

    return run


def listing(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file under `folder`: its size and modification time, by relative path."""
    if not folder.is_dir():
        return {}
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in folder.rglob("*") if p.is_file()}


@pytest.fixture(scope="session", autouse=True)
def a_home_of_its_own(tmp_path_factory):
    """No test writes into the real home: sessions, trust, permissions and input history would
    pile up in the user's ~/.corecoder. HOME points at a temp dir for the whole run (the code
    under test and every process it starts find ~/.corecoder there), and when the run ends the
    real ~/.corecoder must be exactly as it was."""
    real = Path(os.path.expanduser("~")) / ".corecoder"
    before = listing(real)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(tmp_path_factory.mktemp("home")))
        yield
    assert listing(real) == before, f"a test wrote into {real}"


@pytest.fixture
def spawned(monkeypatch):
    """Every process started while the test runs; at the end, each must have exited."""
    started = []

    class Recorded(subprocess.Popen):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            started.append(self)

    monkeypatch.setattr(subprocess, "Popen", Recorded)
    yield started
    assert all(p.poll() is not None for p in started), "a process outlived its test"


@pytest.fixture(scope="session")
def browser():
    """Headless Chromium, one for the whole run (tests/browser.py); skipped only outside CI without it."""
    from browser import Browser

    exe = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("CI must run the browser test, and chromium is not installed (.ci/run installs it)")
        pytest.skip("chromium is not installed (apt-get install chromium fonts-noto-cjk); CI runs this test")
    fonts = subprocess.run(["fc-list", ":lang=zh", "family"], capture_output=True, text=True).stdout
    assert fonts.strip(), "no Chinese font: Chinese pages would render as boxes (apt-get install fonts-noto-cjk)"
    chromium = Browser(exe)
    yield chromium
    chromium.close()


@pytest.fixture
def project(tmp_path):
    """A git project with one file: where tests/engine/test_checkpoints.py and the undo trials work."""
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("print('one')\n")
    return root
