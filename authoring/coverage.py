"""What each chapter teaches of the engine: its coverage table, and the budget it keeps.

Every definition of the engine (a module's functions, classes and constants; the
methods of a class that the course builds across cells or chapters) is in a chapter's
table in one of three ways:

    export   defined in an export cell of that chapter, identical to the package;
             a definition is exported once in the whole course
    show     shown with show() (it may be shown in several chapters)
    skip     not taught, with the reason why

`notebooks/coverage/NN.py` is chapter NN's table, written by hand. It is read, never
run: each name is assigned a literal (Python's syntax, so it may carry comments).

    budget = 300  # net lines its export cells may hold

    export = {
        "messages.py": "system user tool_result ToolCall",
        "agent.py": "KeepEverything Agent Agent.run Agent.answer",
    }
    show = {"calls.py": "admit"}
    skip = [
        {"why": "the lazy imports behind `import corecoder`: nothing the loop does",
         "__init__.py": "__getattr__ __dir__"},
    ]

Module paths are relative to `corecoder/`. `Agent` is a class taught whole, unless one
of its methods (`Agent.run`) has an entry of its own: then `Agent` is its skeleton (its
decorators, bases, docstring and fields) and each method needs an entry too, so a
class may be finished in a later chapter. tests/course/test_coverage.py holds the tables to the
package, to the notebooks and to the budgets, and sync.py writes each chapter's "what's
new" cell from its table.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from . import ROOT
from .ruler import definition_name, net_lines, span

COVERAGE = ROOT / "notebooks" / "coverage"
ENGINE = ROOT / "corecoder"
NOT_ENGINE = ("demo/project/",)  # the demo's sample project
WAYS = ("export", "show", "skip")


@dataclass(frozen=True)
class Definition:
    module: str  # relative to corecoder/
    name: str  # "check_history", "Agent", "Agent.run"
    lines: int  # net lines: of a split class, those of its skeleton
    tool: str = ""  # the tool's name, for a class that defines one


@dataclass
class Table:
    chapter: str  # "01"
    budget: int
    export: list[tuple[str, str]] = field(default_factory=list)  # (module, name)
    show: list[tuple[str, str]] = field(default_factory=list)
    skip: list[tuple[str, str, str]] = field(default_factory=list)  # (module, name, why)


class CoverageError(Exception):
    """A coverage table that cannot be read as written."""


def _names(value, where: str) -> list[str]:
    if not isinstance(value, str):
        raise CoverageError(f"{where}: expected the names as one string, got {value!r:.80}")
    return value.split()


def read_table(path: Path) -> Table:
    data = {}
    try:
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
                continue  # its docstring
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                    and isinstance(node.targets[0], ast.Name)):
                raise CoverageError(f"{path.name} line {node.lineno}: only `name = literal`")
            data[node.targets[0].id] = ast.literal_eval(node.value)
    except (SyntaxError, ValueError) as e:
        raise CoverageError(f"{path.name}: {e}") from None
    if not isinstance(data.get("budget"), int) or isinstance(data["budget"], bool):
        raise CoverageError(f"{path.name}: needs `budget = <net lines>`")
    table = Table(path.stem, data["budget"])
    for way in ("export", "show"):
        if not isinstance(data.get(way, {}), dict):
            raise CoverageError(f"{path.name}: {way} must be a dict of module to names")
        for module, names in data.get(way, {}).items():
            getattr(table, way).extend((module, n) for n in _names(names, f"{path.name} {way}"))
    for group in data.get("skip", []):
        if not isinstance(group, dict):
            raise CoverageError(f"{path.name}: each skip group must be a dict with a why")
        group = dict(group)
        why = group.pop("why", "")
        if not isinstance(why, str) or not why.strip():
            raise CoverageError(f"{path.name}: each skip group says why it is not taught")
        for module, names in group.items():
            table.skip += [(module, n, why) for n in _names(names, f"{path.name} skip")]
    unknown = set(data) - {"budget", *WAYS}
    if unknown:
        raise CoverageError(f"{path.name}: unknown keys {sorted(unknown)}")
    return table


def tables(folder: Path = COVERAGE) -> dict[str, Table]:
    """Every chapter's table, by chapter number ("00", "01", ...)."""
    return {t.chapter: t for t in map(read_table, sorted(Path(folder).glob("[0-9][0-9].py")))}


# --- the engine's definitions -------------------------------------------------------------

def _lines(node) -> set[int]:
    start, end = span(node)
    return set(range(start, end + 1))


def _tool_name(node: ast.ClassDef) -> str:
    """The `name` a Tool subclass gives the model ("read_file"); "" for any other class (a Gate
    has a name too, and is no tool)."""
    if not any(getattr(base, "id", getattr(base, "attr", "")) == "Tool" for base in node.bases):
        return ""
    for statement in node.body:
        if definition_name(statement) == "name" and isinstance(statement, ast.Assign) \
                and isinstance(statement.value, ast.Constant):
            return str(statement.value.value)
    return ""


def definitions(split: set[str] = frozenset(),
                root: Path = ENGINE) -> dict[tuple[str, str], Definition]:
    """(module, name) -> Definition for every definition of the engine. A class named in
    `split` ("agent.py::Agent") is its skeleton and its methods, each on its own."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        module = path.relative_to(root).as_posix()
        if module.startswith(NOT_ENGINE) or "__pycache__" in module:
            continue
        source = path.read_text(encoding="utf-8")
        counted = net_lines(source)
        for node in ast.parse(source).body:
            name = definition_name(node)
            if name is None:
                continue
            lines = _lines(node) & counted
            tool = _tool_name(node) if isinstance(node, ast.ClassDef) else ""
            if isinstance(node, ast.ClassDef) and f"{module}::{name}" in split:
                for method in node.body:
                    if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        own = _lines(method) & counted
                        found[module, f"{name}.{method.name}"] = Definition(
                            module, f"{name}.{method.name}", len(own))
                        lines -= own
            found[module, name] = Definition(module, name, len(lines), tool)
    return found


def split_classes(all_tables: dict[str, Table]) -> set[str]:
    """The classes some table names a method of: "agent.py::Agent"."""
    return {f"{module}::{name.split('.')[0]}" for t in all_tables.values()
            for module, name in [*t.export, *t.show, *((m, n) for m, n, _ in t.skip)]
            if "." in name}


def exported_lines(table: Table, defs: dict[tuple[str, str], Definition]) -> int:
    return sum(defs[entry].lines for entry in table.export if entry in defs)


# --- the "what's new" cell ----------------------------------------------------------------

WORDS = {
    "en": {"title": "**New in this chapter** (from its coverage table, `{path}`)",
           "file": "file", "exported": "exported: the package's own code", "lines": "net lines",
           "total": "{n} definitions, within a budget of {budget} net lines",
           "methods": "{n} methods",
           "skeleton": " (its skeleton)", "shown": "Shown, not exported: {names}.",
           "item": "`{name}` (`corecoder/{module}`)", "and": ", ",
           "tools": "New tools: {names}.", "none": "none",
           "nothing": "Nothing is exported here: the chapter runs the finished engine."},
    "zh": {"title": "**本章新内容**（由本章的覆盖表 `{path}` 生成）",
           "file": "文件", "exported": "导出：包里的原样代码", "lines": "净行数",
           "total": "{n} 个定义，预算 {budget} 行以内", "methods": "{n} 个方法",
           "skeleton": "（类的骨架）", "shown": "只展示、不导出：{names}。",
           "item": "`{name}`（`corecoder/{module}`）", "and": "、",
           "tools": "新工具：{names}。", "none": "无",
           "nothing": "本章不导出代码：它运行的是完整的引擎。"},
}


def whats_new(table: Table, defs: dict[tuple[str, str], Definition], lang: str) -> str:
    """The chapter's "what's new" cell, in `lang`: what it exports, file by file, with net
    lines; what it only shows; the tools it adds."""
    w = WORDS[lang]
    out = [w["title"].format(path=f"notebooks/coverage/{table.chapter}.py"), ""]
    by_module: dict[str, list[str]] = {}
    for module, name in table.export:
        by_module.setdefault(module, []).append(name)
    if by_module:
        out += [f"| {w['file']} | {w['exported']} | {w['lines']} |", "|---|---|---:|"]
        for module, names in by_module.items():
            methods = [n for n in names if "." in n]
            shown = [f"`{n}`" for n in names if "." not in n]
            if methods:
                owner = methods[0].split(".")[0]
                shown = [s + w["skeleton"] if s == f"`{owner}`" else s for s in shown]
                listed = w["and"].join(f"`{m.split('.', 1)[1]}`" for m in methods)
                many = len(methods) > 3  # a class built over many cells: how many, not which
                shown.append(f"`{owner}`: " + (w["methods"].format(n=len(methods)) if many
                                                else listed))
            lines = sum(defs[module, n].lines for n in names if (module, n) in defs)
            out.append(f"| `corecoder/{module}` | {w['and'].join(shown)} | {lines} |")
        total = w["total"].format(n=len(table.export), budget=table.budget)
        out.append(f"| | {total} | {exported_lines(table, defs)} |")
    else:
        out.append(w["nothing"])
    if table.show:
        items = [w["item"].format(name=name, module=module) for module, name in table.show]
        out += ["", w["shown"].format(names=w["and"].join(items))]
    # a tool exported, or shown whole (write_file: the chapter runs it, and reads its code)
    tools = [f"`{defs[e].tool}`" for e in [*table.export, *table.show]
             if e in defs and defs[e].tool]
    out += ["", w["tools"].format(names=w["and"].join(tools) or w["none"])]
    return "\n".join(out)
