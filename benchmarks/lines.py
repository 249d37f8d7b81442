"""Net lines of the engine, per module and per chapter: the ruler the budgets are held to.

    python -m benchmarks.lines            the table for the working tree
    python -m benchmarks.lines --at REV   the same for a commit (its corecoder/, as git has it)

A line counts if it carries a token other than a comment, a newline or indentation;
lines of module, class and function docstrings do not count (the ruler is the course's,
authoring/ruler.py: each chapter's export budget is measured with it too).
Explanation is free: a budget measured this way never rewards deleting a comment or a
docstring to make room.

Each module belongs to a layer: a chapter of the engine (1 to 9, the chapter that
builds it), or a part that is not the engine (the command and what only it reads, the
shipped test infrastructure, the course, the demo): the package's map, in
corecoder/__init__.py's docstring, says which. In the heavy
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

from authoring.ruler import net_lines, word_lines

ROOT = Path(__file__).resolve().parent.parent
DEFENCES = re.compile(r"^\s*# --- defences\b")  # the marked line: what follows defends the idea above it

# Every module of corecoder/, relative to it, and its layer, as the package's map has them (the
# table in corecoder/__init__.py's docstring): a row names a module or a folder ("tools/"), and a
# module takes the layer of its own row, else of the deepest folder it sits in.
MAP_ROW = re.compile(r"^    (\d+|cli|testing|demo) +(\S+) +(.+)$")


def read_map(doc: str) -> dict[str, int | str]:
    """`where` -> layer, from the map's rows (the layer is an int for a chapter of the engine)."""
    rows = (MAP_ROW.match(line) for line in doc.splitlines())
    return {m[2]: int(m[1]) if m[1].isdigit() else m[1] for m in rows if m}


LAYERS = read_map((ROOT / "corecoder" / "__init__.py").read_text(encoding="utf-8"))
# Modules of the old shape (measured with --at 8553b6a for the before/after table), by their old role.
BEFORE = {"prompt.py": 2, "tools/agent.py": 6, "tools/todo.py": 2, "scripted.py": 1, "serve.py": "cli",
          "gates.py": 7, "course/__main__.py": "course"}
ENGINE = range(1, 10)


def layer(module: str, old: bool = False) -> int | str:
    """The layer of a module (its path relative to corecoder/)."""
    if old and module in BEFORE:
        return BEFORE[module]
    if old and module.startswith("course/"):  # the course, inside corecoder/ until #26
        return "course"
    if module in LAYERS:
        return LAYERS[module]
    folders = [where for where in LAYERS if where.endswith("/") and module.startswith(where)]
    if not folders:
        raise KeyError(f"corecoder/{module} is in no layer: add it to the map in "
                       "corecoder/__init__.py's docstring")
    return LAYERS[max(folders, key=len)]


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
    and of 7-9), the sums the budgets name, and the parts that are not the engine."""
    out = {f"chapter {n}": 0 for n in ENGINE}
    out |= {"hardening of chapters 1-6": 0, "hardening of chapters 7-9": 0}
    outside: dict[str, int] = {}
    for m in modules.values():
        if m["layer"] in ENGINE:
            out[f"chapter {m['layer']}"] += m["idea"]
            out[f"hardening of chapters {'1-6' if m['layer'] <= 6 else '7-9'}"] += m["defences"]
        else:
            outside[m["layer"]] = outside.get(m["layer"], 0) + m["idea"] + m["defences"]
    out["chapters 1-6"] = sum(out[f"chapter {n}"] for n in range(1, 7)) + out["hardening of chapters 1-6"]
    out["engine"] = (out["chapters 1-6"] + sum(out[f"chapter {n}"] for n in range(7, 10))
                     + out["hardening of chapters 7-9"])
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


# The checkers' machinery every exercise shares: the kit that judges, the inputs it draws, the
# harness that watches an answer at a seam. Its lines are spread over all the exercises.
KIT = ("kit.py", "inputs.py", "seams.py")


def checkers(course: Path = ROOT / "corecoder_course") -> dict[str, dict]:
    """Net lines of each chapter's checkers (corecoder_course/exercises/chNN.py) and of the kit
    they share, each split into code and words (the hints, rules and mistakes' reasons in two
    languages: explanation, free as a docstring is; ruler.word_lines), with the chapter's
    number of exercises. "per exercise" spreads the kit's code over every exercise."""
    from authoring.mutants import declared
    from corecoder_course.checks import CHECKERS

    declared()  # every chapter's exercises registered
    rows = {}
    for path in sorted((course / "exercises").glob("ch*.py")):
        source = path.read_text(encoding="utf-8")
        net, words = len(net_lines(source)), len(word_lines(source))
        rows[path.stem] = {"exercises": sum(n.startswith(path.stem + ".") for n in CHECKERS),
                           "code": net - words, "words": words}
    kit = [(course / name).read_text(encoding="utf-8") for name in KIT]
    rows["kit"] = {"exercises": 0, "code": sum(len(net_lines(s) - word_lines(s)) for s in kit),
                   "words": sum(len(word_lines(s)) for s in kit)}
    exercises = sum(r["exercises"] for r in rows.values())
    code = sum(r["code"] for r in rows.values())
    rows["per exercise"] = {"exercises": exercises, "code": round(code / exercises),
                            "words": round(sum(r["words"] for r in rows.values()) / exercises)}
    return rows


def checker_table(rows: dict[str, dict]) -> str:
    lines = ["| checkers | exercises | code | words |", "|---|---:|---:|---:|"]
    return "\n".join(lines + [f"| {name} | {r['exercises'] or ''} | {r['code']:,} | {r['words']:,} |"
                              for name, r in rows.items()])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.lines", description=__doc__.splitlines()[0])
    parser.add_argument("--at", metavar="REV", help="measure corecoder/ as this commit has it")
    args = parser.parse_args(argv)
    if args.at:
        print(table(at_revision(args.at)))
        return
    print(table(measure(ROOT / "corecoder")))
    # beside the package: the course a learner imports, and the tools that write it
    for name in ("corecoder_course", "authoring"):
        files = sorted((ROOT / name).rglob("*.py"))
        print(f"| {name} | {sum(len(net_lines(f.read_text(encoding='utf-8'))) for f in files):,} |")
    print()
    print(checker_table(checkers()))

if __name__ == "__main__":
    sys.exit(main())
