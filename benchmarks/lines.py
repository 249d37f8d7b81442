"""Net lines of the engine, per module and per chapter: the ruler the budgets are held to.

    python -m benchmarks.lines            the table for the working tree
    python -m benchmarks.lines --at REV   the same for a commit (its corecoder/, as git has it)

A line counts if it carries a token other than a comment, a newline or indentation;
lines of module, class and function docstrings do not count (the ruler is the course's,
corecoder/course/authoring/ruler.py: each chapter's export budget is measured with it too).
Explanation is free: a budget measured this way never rewards deleting a comment or a
docstring to make room.

Each module belongs to a layer: a chapter of the engine (1 to 8, the chapter that
builds it: ARCHITECTURE.md's map), or a part that is not the engine (the CLI and what
only it reads, the shipped test infrastructure, the course, the demo). In the heavy
modules the idea comes first and its defences follow a marked line (DEFENCES); the
lines after that mark count as the hardening layer, apart from the chapter's idea.
tests/test_budgets.py holds each chapter, the hardening layer and the totals to a budget,
and tests/test_layers.py holds the imports to this map (dependencies point down).
"""

from __future__ import annotations

import argparse
import io
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from corecoder.course.authoring.ruler import net_lines

ROOT = Path(__file__).resolve().parent.parent
DEFENCES = re.compile(r"^\s*# --- defences\b")  # the marked line: what follows defends the idea above it

# Every module of corecoder/, relative to it, and its layer.
LAYERS = {
    "__init__.py": 1, "messages.py": 1, "events.py": 1, "agent.py": 1,
    "calls.py": 2, "workspace.py": 2, "files.py": 2, "text.py": 2, "tools/__init__.py": 2, "tools/base.py": 2,
    "tools/read.py": 2, "tools/write.py": 2, "tools/edit.py": 2, "tools/search.py": 2, "tools/bash.py": 2,
    "scripted.py": 3, "llm.py": 3, "stream.py": 3,
    "context.py": 4, "tokens.py": 4,
    "executor.py": 5,
    "subagents.py": 6, "tools/todo.py": 6,
    "hooks.py": 7, "mcp/__init__.py": 7, "mcp/client.py": 7, "mcp/config.py": 7,
    "mcp/hub.py": 7, "mcp/tools.py": 7,
    "permissions.py": 8, "session.py": 8, "checkpoints.py": 8, "instructions.py": 8, "trust.py": 8, "assemble.py": 8,
    # Not the engine: the command and what only it uses (settings, prices, its views) ...
    "cli.py": "cli", "__main__.py": "cli", "app.py": "cli", "repl.py": "cli", "render.py": "cli",
    "config.py": "cli", "pricing.py": "cli", "trace.py": "cli",
}
FOLDERS = {"testing/": "testing", "course/": "course", "demo/": "demo"}  # ... and what ships beside it
# Modules of the old shape (measured with --at 8553b6a for the before/after table), by their old role.
BEFORE = {"prompt.py": 2, "tools/agent.py": 6, "tools/todo.py": 2, "scripted.py": 1, "serve.py": "cli",
          "gates.py": 7, "course/__main__.py": "course"}
ENGINE = range(1, 9)


def layer(module: str, old: bool = False) -> int | str:
    """The layer of a module (its path relative to corecoder/)."""
    if old and module in BEFORE:
        return BEFORE[module]
    for folder, name in FOLDERS.items():
        if module.startswith(folder):
            return name
    if module not in LAYERS:
        raise KeyError(f"corecoder/{module} is in no layer: add it to benchmarks/lines.py LAYERS")
    return LAYERS[module]


def measure_module(source: str) -> dict:
    """Net lines of the idea and of the defences after the marked line, and lines over 100 columns."""
    lines = source.splitlines()
    mark = next((i + 1 for i, line in enumerate(lines) if DEFENCES.match(line)), len(lines) + 1)
    net = net_lines(source)
    return {"idea": sum(n < mark for n in net), "defences": sum(n > mark for n in net),
            "physical": len(lines), "over_100": sum(len(line) > 100 for line in lines)}


def measure(package: Path, old: bool = False) -> dict[str, dict]:
    """Every module of `package` (a corecoder/ folder), with its layer."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        module = path.relative_to(package).as_posix()
        if "__pycache__" not in module and not module.startswith("demo/project/"):
            found[module] = {"layer": layer(module, old), **measure_module(path.read_text(encoding="utf-8"))}
    return found


def totals(modules: dict[str, dict]) -> dict[str, int]:
    """Net lines per chapter (its ideas), of the hardening layer (the defences of chapters 1-6,
    and of 7-8), the sums the budgets name, and the parts that are not the engine."""
    out = {f"chapter {n}": 0 for n in ENGINE}
    out |= {"hardening of chapters 1-6": 0, "hardening of chapters 7-8": 0}
    outside: dict[str, int] = {}
    for m in modules.values():
        if m["layer"] in ENGINE:
            out[f"chapter {m['layer']}"] += m["idea"]
            out[f"hardening of chapters {'1-6' if m['layer'] <= 6 else '7-8'}"] += m["defences"]
        else:
            outside[m["layer"]] = outside.get(m["layer"], 0) + m["idea"] + m["defences"]
    out["chapters 1-6"] = sum(out[f"chapter {n}"] for n in range(1, 7)) + out["hardening of chapters 1-6"]
    out["engine"] = (out["chapters 1-6"] + out["chapter 7"] + out["chapter 8"]
                     + out["hardening of chapters 7-8"])
    return out | outside


def at_revision(rev: str) -> dict[str, dict]:
    """The modules of corecoder/ as commit `rev` has them, measured with the old shape's layers."""
    archive = subprocess.run(["git", "archive", rev, "corecoder"], cwd=ROOT, capture_output=True, check=True)
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
            tar.extractall(tmp, filter="data")
        return measure(Path(tmp, "corecoder"), old=True)


def table(modules: dict[str, dict]) -> str:
    rows = ["| module | layer | net | of it, defences | physical | over 100 columns |", "|---|---|---:|---:|---:|---:|"]
    rows += [f"| {name} | {m['layer']} | {m['idea'] + m['defences']} | {m['defences'] or ''} | {m['physical']} | "
             f"{m['over_100'] or ''} |" for name, m in modules.items()]
    rows += ["", "| layer | net lines |", "|---|---:|"]
    rows += [f"| {key} | {value:,} |" for key, value in totals(modules).items()]
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.lines", description=__doc__.splitlines()[0])
    parser.add_argument("--at", metavar="REV", help="measure corecoder/ as this commit has it")
    args = parser.parse_args(argv)
    print(table(at_revision(args.at) if args.at else measure(ROOT / "corecoder")))


if __name__ == "__main__":
    sys.exit(main())
