"""Keeps the table: every test here counts in one row of RESULTS.md (`@pytest.mark.row(name)`, names
in kit.ROWS), and a full run of this folder rewrites the table at the end.

A test counts as one case, unless it says otherwise: `@pytest.mark.cases(n)` for a test that runs n
trials (it may `record_property("passed", k)` before failing, so the table shows how many survived),
and a Hypothesis test counts its max_examples. The table holds counts only (no timings, dates or
paths), so a run that changes nothing leaves the file as it was. A partial run (-k, one file, -x,
Ctrl+C) writes nothing: its counts would not be the suite's.

Under parallel workers (pytest-xdist) each worker runs a share of the tests: a test's row and cases
travel with its reports (as user properties), and only the controller, which sees every report and
the list of every test collected, writes the table.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from corecoder.files import atomic_write

from .kit import ROWS

HERE = Path(__file__).parent
RESULTS = HERE / "RESULTS.md"


class _Tally:
    def __init__(self):
        self.collected: list[str] = []  # the nodeids of this folder's tests, in collection order
        self.items: dict[str, tuple[str, int]] = {}  # nodeid -> (row, cases), as reports say
        self.names: dict[str, str] = {}  # nodeid -> its name relative to this folder
        self.outcome: dict[str, str] = {}  # nodeid -> passed, failed, skipped, xfailed
        self.passed: dict[str, int] = {}  # nodeid -> cases that survived, when the test said
        self.reason: dict[str, str] = {}  # nodeid -> why it is xfail
        self.partial = False


_tally = _Tally()
ROW, CASES = "reliability row", "reliability cases"  # the user properties a report carries


def pytest_configure(config):
    config.addinivalue_line("markers", "row(name): the row of tests/reliability/RESULTS.md this test counts in")
    config.addinivalue_line("markers", "cases(n): this test runs n trials (default 1)")


def _mine(item) -> bool:
    return HERE in item.path.parents


def _cases(item) -> int:
    marker = item.get_closest_marker("cases")
    if marker:
        return marker.args[0]
    settings = getattr(getattr(item, "obj", None), "_hypothesis_internal_use_settings", None)
    return settings.max_examples if settings is not None else 1


def _is_ours(nodeid: str) -> bool:
    return "tests/reliability/test_" in nodeid


def _the_whole_folder(nodeids: list[str]) -> bool:
    modules = {nodeid.split("::", 1)[0].rsplit("/", 1)[-1] for nodeid in nodeids}
    return modules == {p.name for p in HERE.glob("test_*.py")}


def pytest_deselected(items):
    if any(_mine(item) for item in items):
        _tally.partial = True


def pytest_collection_finish(session):
    mine = [item for item in session.items if _mine(item)]
    for item in mine:
        marker = item.get_closest_marker("row")
        if marker is None or marker.args[0] not in ROWS:
            raise pytest.UsageError(f"{item.nodeid}: a reliability test needs @pytest.mark.row(one of {list(ROWS)})")
        item.user_properties += [(ROW, marker.args[0]), (CASES, _cases(item))]
    _tally.collected = [item.nodeid for item in mine]
    _tally.partial |= not _the_whole_folder(_tally.collected)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node, ids):
    """The controller of parallel workers collects nothing itself: each worker tells it what it
    collected (all the same list), after any -k or -m; those options make the run partial."""
    options = node.config.option
    _tally.collected = [nodeid for nodeid in ids if _is_ours(nodeid)]
    _tally.partial |= bool(options.keyword or options.markexpr or options.deselect)
    _tally.partial |= not _the_whole_folder(_tally.collected)


def pytest_runtest_logreport(report):
    properties = dict(report.user_properties)
    if ROW not in properties:
        return
    _tally.items[report.nodeid] = (properties[ROW], properties[CASES])
    _tally.names[report.nodeid] = report.nodeid.split("reliability/", 1)[-1].split("@")[0]
    if "passed" in properties:
        _tally.passed[report.nodeid] = properties["passed"]
    if hasattr(report, "wasxfail"):
        _tally.outcome[report.nodeid] = "xfailed"
        _tally.reason[report.nodeid] = report.wasxfail.removeprefix("reason: ")
    elif report.failed:
        _tally.outcome[report.nodeid] = "failed"
    elif report.skipped:
        _tally.outcome[report.nodeid] = "skipped"
    elif report.when == "call":
        _tally.outcome.setdefault(report.nodeid, "passed")


def pytest_sessionfinish(session, exitstatus):
    if hasattr(session.config, "workerinput"):  # a worker: the controller writes the table
        return
    complete = _tally.collected and set(_tally.outcome) == set(_tally.collected)
    if _tally.partial or not complete or session.config.option.collectonly:
        return
    if exitstatus == pytest.ExitCode.INTERRUPTED or session.shouldstop:
        return
    _tally.items = {nodeid: _tally.items[nodeid] for nodeid in _tally.collected}  # collection order
    table = render(_tally)
    if not RESULTS.exists():
        RESULTS.write_text(table, encoding="utf-8")
    elif RESULTS.read_text(encoding="utf-8") != table:
        atomic_write(RESULTS, table)  # other runs may read it meanwhile: never half a file


def render(tally: _Tally) -> str:
    rows = {name: [0, 0, 0, 0] for name in ROWS}  # cases, passed, known bugs, failed
    for nodeid, (row, cases) in tally.items.items():
        outcome = tally.outcome[nodeid]
        passed = cases if outcome == "passed" else min(tally.passed.get(nodeid, 0), cases)
        counts = rows[row]
        counts[0] += cases
        counts[1] += passed
        counts[2] += cases if outcome == "xfailed" else 0
        counts[3] += cases - passed if outcome not in ("xfailed", "skipped") else 0
    lines = [
        "# Reliability: what was tried, and what survived",
        "",
        "Written by `tests/reliability/conftest.py` at the end of every full run of `tests/reliability/`",
        "(the whole suite included); do not edit it by hand. A case is one trial: one injected fault, one",
        "malformed call, one kill, one fuzzed example. A known bug is a case that fails today and is marked",
        "`xfail(strict=True)`: the day it passes, the suite fails until the mark is removed.",
        "",
        "| Category | What was tried | Cases | Passed | Known bugs | Failed |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    total = [0, 0, 0, 0]
    for name, (category, tried) in ROWS.items():
        counts = rows[name]
        if not counts[0]:
            continue
        lines.append(f"| {category} | {tried} | " + " | ".join(str(n) for n in counts) + " |")
        total = [a + b for a, b in zip(total, counts, strict=True)]
    lines.append("| **Total** | | " + " | ".join(f"**{n}**" for n in total) + " |")
    by_reason: dict[str, list[str]] = {}
    for nodeid in tally.items:
        if tally.outcome[nodeid] == "xfailed":
            by_reason.setdefault(tally.reason[nodeid], []).append(tally.names[nodeid])
    if by_reason:
        lines += ["", "## Known engine bugs", ""]
        for reason, names in by_reason.items():
            lines.append(f"- {reason}")
            lines += [f"  - `{name}`" for name in names]
    return "\n".join(lines) + "\n"
