"""The offline demo: the real loop and real tools fix a small bug, driven by a script.

`corecoder --demo` copies `project/` into a temp dir and runs the finished agent
(build_agent) on it with a ScriptedLLM. Only the model is scripted; every read, search,
edit and test run really happens, so the final test run passes only if the edit worked.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from ..assemble import build_agent
from ..cli.trace import Printer
from ..scripted import ScriptedLLM

PROJECT = Path(__file__).parent / "project"
TASK = "The tests in test_stats.py fail. Find the bug and fix it."

SCRIPT = [
    {"text": "Let me run the tests to see what fails.",
     "tool_calls": [{"name": "bash", "arguments": {"command": "python3 test_stats.py"}}]},
    {"text": "`mean` gives the wrong answer. Where is it defined?",
     "tool_calls": [{"name": "grep", "arguments": {"pattern": "def mean", "include": "*.py"}}]},
    {"tool_calls": [{"name": "read_file", "arguments": {"path": "stats.py"}}]},
    {"text": "It divides by `len(values) - 1`; the mean divides by the count itself.",
     "tool_calls": [{"name": "edit_file", "arguments": {
         "path": "stats.py",
         "old_string": "    return sum(values) / (len(values) - 1)",
         "new_string": "    return sum(values) / len(values)"}}]},
    {"tool_calls": [{"name": "bash", "arguments": {"command": "python3 test_stats.py"}}]},
    "Fixed: `mean` in stats.py divided by `len(values) - 1` instead of `len(values)`. "
    "All tests in test_stats.py now pass.",
]


def copy_project(into: Path) -> Path:
    target = Path(into) / "demo-project"
    shutil.copytree(PROJECT, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def run_demo(out=None) -> str:
    with tempfile.TemporaryDirectory(prefix="corecoder-demo-") as tmp:
        project = copy_project(Path(tmp))
        agent = build_agent(ScriptedLLM(SCRIPT), project)
        printer = agent.subscribe(Printer(out, result_lines=12))
        printer.line(f"task: {TASK}")
        return agent.chat(TASK)
