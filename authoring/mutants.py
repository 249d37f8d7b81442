"""How much each declared exercise can tell apart: its reference mutated mechanically, and each
mutant judged by the exercise's own checker.

A mutant is the reference with one small change a learner could make: a comparison turned
(`<` to `<=`, `==` to `!=`), an operator swapped, a constant off by one, `and` for `or`, a
`not` dropped, `min` for `max`, a condition negated, a statement dropped. The checker must
fail it (it is killed). One it passes survives: either its inputs cannot tell it from the
reference, and need a case more, or it is equivalent (it computes the same thing written
otherwise), which the exercise says, with the reason, in its `equivalent` mapping. The table
in MUTANTS.md is rewritten by `python -m authoring mutants`; a test holds it current, and
every exercise at 90% or more of its non-equivalent mutants killed.

Working the table out takes minutes, and it can only change when what it is worked out from
changes: the engine (references and seams run it), the course package (the checkers, the kit),
this file, the Python and Hypothesis that draw the inputs. The table records a hash of those
(`sources`); while the hash is the same the test takes the table as it stands, since the same
sources give the same verdicts on every run (tests/course/test_kit.py shows that too), and
when it differs the test works the table out again.
"""

from __future__ import annotations

import ast
import copy
import hashlib
import inspect
import re
import sys
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import hypothesis

from corecoder_course.checks import CHECKERS, verdict
from corecoder_course.kit import Exercise, defined, unshrunk

from . import ROOT

TABLE = ROOT / "authoring" / "MUTANTS.md"
TARGET = 0.9  # of the non-equivalent mutants, the share each exercise must kill

TURNED = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
          ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot,
          ast.IsNot: ast.Is}
SWAPPED = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult,
           ast.FloorDiv: ast.Div, ast.Mod: ast.FloorDiv}
NAMES = {"min": "max", "max": "min", "any": "all", "all": "any"}


def _points(tree: ast.AST) -> Iterator[tuple[ast.AST, str, Callable[[ast.AST], None]]]:
    """Every place one mutation can be made: (node, what, how to make it in a copy's node)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for k, op in enumerate(node.ops):
                if type(op) in TURNED:
                    yield node, "comparison", lambda n, k=k: n.ops.__setitem__(
                        k, TURNED[type(n.ops[k])]())
        elif isinstance(node, (ast.BinOp, ast.AugAssign)) and type(node.op) in SWAPPED:
            yield node, "operator", lambda n: setattr(n, "op", SWAPPED[type(n.op)]())
        elif isinstance(node, ast.BoolOp):
            yield node, "and/or", lambda n: setattr(
                n, "op", ast.Or() if isinstance(n.op, ast.And) else ast.And())
            for k in range(len(node.values)):  # one operand dropped
                if len(node.values) > 1:
                    yield node, "operand dropped", lambda n, k=k: n.values.pop(k)
        elif isinstance(node, ast.Constant) and type(node.value) is int:
            yield node, "constant + 1", lambda n: setattr(n, "value", n.value + 1)
            yield node, "constant - 1", lambda n: setattr(n, "value", n.value - 1)
        elif isinstance(node, ast.Constant) and type(node.value) is bool:
            yield node, "not the constant", lambda n: setattr(n, "value", not n.value)
        elif isinstance(node, ast.Name) and node.id in NAMES:
            yield node, "name", lambda n: setattr(n, "id", NAMES[n.id])
        if isinstance(node, (ast.If, ast.While, ast.IfExp)):
            yield node, "condition negated", lambda n: setattr(
                n, "test", ast.UnaryOp(ast.Not(), n.test))
        for field in ("body", "orelse"):
            body = getattr(node, field, None)
            if isinstance(body, list) and len(body) > 1 and isinstance(body[0], ast.stmt):
                for k, stmt in enumerate(body):
                    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)):
                        yield node, "statement dropped", lambda n, k=k, f=field: getattr(
                            n, f).__setitem__(k, ast.Pass())


@dataclass(frozen=True)
class Mutant:
    what: str  # the kind of change
    line: str  # the changed line, as "before → after": its name in the `equivalent` mapping
    source: str


def mutants(fn: Callable) -> list[Mutant]:
    """Every single-change mutant of `fn`'s source that still compiles."""
    source = textwrap.dedent(inspect.getsource(fn))
    tree = ast.parse(source)
    original = ast.unparse(tree).splitlines()
    found, seen = [], set()
    for k, (_, what, change) in enumerate(_points(tree)):
        copied = copy.deepcopy(tree)
        node = next(n for j, (n, _, _) in enumerate(_points(copied)) if j == k)
        change(node)
        text = ast.unparse(ast.fix_missing_locations(copied))
        if text in seen or text == ast.unparse(tree):
            continue
        seen.add(text)
        lines = text.splitlines()
        diff = next(((a, b) for a, b in zip(original, lines, strict=False) if a != b),
                    (original[-1], lines[-1]))
        found.append(Mutant(what, f"{diff[0].strip()} → {diff[1].strip()}", text))
    return found


def _killed(exercise: Exercise, mutant: Mutant) -> bool:
    """Whether the exercise's checker fails the mutant (one that loops forever is stopped by the
    kit's time limit, and failed, as a learner's would be)."""
    written = defined(mutant.source, exercise.reference, "a mutant")
    with unshrunk():  # killed or not is all a score asks: the smallest input would cost a third
        return not verdict(exercise.name, written)[0]


@dataclass
class Score:
    name: str
    killed: int
    equivalent: list[Mutant]
    survived: list[Mutant]

    @property
    def share(self) -> float:
        counted = self.killed + len(self.survived)
        return self.killed / counted if counted else 1.0


def score(exercise: Exercise) -> Score:
    killed, equivalent, survived = 0, [], []
    for mutant in mutants(exercise.reference):
        if _killed(exercise, mutant):
            killed += 1
        elif mutant.line in exercise.equivalent:
            equivalent.append(mutant)
        else:
            survived.append(mutant)
    return Score(exercise.name, killed, equivalent, survived)


def declared() -> list[Exercise]:
    """Every declared exercise, each chapter's checkers loaded."""
    import importlib
    import pkgutil

    import corecoder_course.exercises as chapters

    for module in pkgutil.iter_modules(chapters.__path__):
        importlib.import_module(f"{chapters.__name__}.{module.name}")
    return sorted((c for c in CHECKERS.values()
                   if isinstance(c, Exercise) and c.name.startswith("ch")),
                  key=lambda c: c.name)


def sources(root: Path = ROOT) -> str:
    """A hash of what a score is worked out from: every file of the engine and of the course
    package (not Python's caches), this file, and the versions of Python and Hypothesis."""
    digest = hashlib.sha256()
    for folder in ("corecoder", "corecoder_course"):
        for path in sorted((root / folder).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(path.relative_to(root).as_posix().encode() + b"\0")
                digest.update(path.read_bytes() + b"\0")
    digest.update(Path(__file__).read_bytes())
    digest.update(f"python {sys.version_info[:2]} hypothesis {hypothesis.__version__}".encode())
    return digest.hexdigest()[:16]


SOURCES = re.compile(r"^Sources: `([0-9a-f]+)`", re.MULTILINE)


def table(scores: list[Score], hashed: str = "") -> str:
    lines = ["# Mutation scores of the declared exercises", "",
             "Written by `python -m authoring mutants` (authoring/mutants.py says how); a test",
             "holds it current. Each reference is mutated one change at a time; the exercise's",
             "checker must fail every mutant that is not equivalent to it.", "",
             f"Sources: `{hashed}` (what the table was worked out from: while their hash is the",
             "same, the test takes the table as current without working it out again).", "",
             "| exercise | mutants | killed | equivalent | survived | score |",
             "|---|---:|---:|---:|---:|---:|"]
    for s in scores:
        total = s.killed + len(s.equivalent) + len(s.survived)
        # a scenario (a script, no code to mutate) is held by its listed mistakes alone
        share = f"{s.share:.0%}" if total else "none to mutate"
        lines.append(f"| {s.name} | {total} | {s.killed} | {len(s.equivalent)} | "
                     f"{len(s.survived)} | {share} |")
    for s in scores:
        exercise = CHECKERS[s.name]
        if s.equivalent or s.survived:
            lines += ["", f"## {s.name}", ""]
        for m in s.equivalent:
            lines.append(f"- equivalent: `{m.line}`: {exercise.equivalent[m.line]}")
        for m in s.survived:
            lines.append(f"- **survives**: `{m.line}` ({m.what})")
    return "\n".join(lines) + "\n"


def write(path: Path = TABLE) -> list[Score]:
    hashed = sources()  # before: a file changed while the scores are worked out is not taken
    scores = [score(exercise) for exercise in declared()]
    path.write_text(table(scores, hashed), encoding="utf-8")
    return scores
