"""The test suite's time, by family: what each part of the suite costs, so that the next chapter's
cost is visible before it lands.

    python -m benchmarks.suite              run the README's pytest (no ruff) with a JUnit report,
                                            and rewrite the table in benchmarks/README.md
    python -m benchmarks.suite --from XML [--wall S]
                                            the same table from a report a run already wrote
                                            (and S, the wall time that run took, if measured)

A family is a kind of test, told by its folder: the browser tests (the site in Chromium, the
chapters in JupyterLab), the notebooks under strict nbval, the course's Python tests, the
reliability suite, the command's tests, the engine's unit tests and the meta tests at the top
(budgets, layers, benchmarks). A test's seconds are its own, summed over the workers that ran
them; the run's wall time, which is what a developer waits, comes on a line of its own. Both
are the machine's that ran them; the shares are what carries over to another.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "benchmarks" / "README.md"
BEGIN, END = "<!-- suite-time -->", "<!-- /suite-time -->"

# (family, how its test files are named), the first that matches wins
FAMILIES = [
    ("browser: the site and JupyterLab", r"tests/course/(test_site|test_jupyterlab)\.py"),
    ("notebooks under strict nbval", r"notebooks/.*\.ipynb"),
    ("course: checkers, wrong answers, sync, essays", r"tests/course/"),
    ("reliability", r"tests/reliability/"),
    ("the command", r"tests/command/"),
    ("engine", r"tests/engine/"),
    ("meta: budgets, layers, benchmarks", r"tests/"),
]


def family(test_file: str) -> str:
    return next(name for name, pattern in FAMILIES if re.match(pattern, test_file))


def cases(report: Path) -> list[tuple[str, str, float]]:
    """(file, test name, seconds) for every test case of a JUnit report."""
    found = []
    for case in ET.parse(report).iter("testcase"):
        classname = case.get("classname", "")
        # pytest writes "tests.engine.test_loop" (a module) or "notebooks.01-loop.ipynb" (nbval)
        if ".ipynb" in classname:
            file = classname.replace(".", "/", 1)
        else:
            file = classname.replace(".", "/") + ".py"
            while file.count("/") > 1 and not (ROOT / file).exists():  # a class inside the module
                file = file.rsplit("/", 1)[0] + ".py"
        found.append((file, case.get("name", ""), float(case.get("time", 0))))
    return found


def table(found: list[tuple[str, str, float]], wall: float | None = None) -> str:
    total = sum(t for *_, t in found) or 1.0
    by_family: dict[str, list[float]] = {}
    for file, _, seconds in found:
        by_family.setdefault(family(file), []).append(seconds)
    rows = ["| family | tests | seconds | share |", "|---|---:|---:|---:|"]
    for name, _ in FAMILIES:
        if name in by_family:
            times = by_family[name]
            rows.append(f"| {name} | {len(times):,} | {sum(times):,.0f} | {sum(times) / total:.0%} |")
    rows.append(f"| **all** | **{len(found):,}** | **{total:,.0f}** | |")
    if wall is not None:
        rows += ["", f"Wall time of the run: {wall:,.0f} s, the tests' seconds spread over its workers."]
    slowest = sorted(found, key=lambda row: -row[2])[:20]
    share = sum(t for *_, t in slowest) / total
    rows += ["", f"The slowest 20 tests ({share:.0%} of the time):", "",
             "| test | seconds |", "|---|---:|"]
    rows += [f"| `{file}::{name if len(name) <= 90 else name[:89] + '…'}` | {seconds:.1f} |"
             for file, name, seconds in slowest]
    return "\n".join(rows)


def write(text: str, readme: Path = README) -> None:
    old = readme.read_text(encoding="utf-8")
    if BEGIN not in old:
        raise SystemExit(f"{readme} has no {BEGIN} ... {END} section to rewrite")
    head, rest = old.split(BEGIN, 1)
    readme.write_text(f"{head}{BEGIN}\n{text}\n{END}{rest.split(END, 1)[1]}", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.suite", description=__doc__.splitlines()[0])
    parser.add_argument("--from", dest="report", type=Path, help="a JUnit XML report to read instead")
    parser.add_argument("--wall", type=float, help="the wall time of the run that wrote that report")
    args = parser.parse_args(argv)
    if args.report is None:
        with tempfile.TemporaryDirectory() as tmp:
            report = Path(tmp, "report.xml")
            started = time.monotonic()
            subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                            "-o", "junit_family=legacy",  # the reliability suite records properties
                            f"--junitxml={report}"], cwd=ROOT, check=False)
            text = table(cases(report), wall=time.monotonic() - started)
    else:
        text = table(cases(args.report), wall=args.wall)
    write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
