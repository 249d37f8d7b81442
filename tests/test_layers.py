"""Dependencies point down: each module imports only what its chapter, or an earlier one, builds.

The layers are benchmarks/lines.py's map (the chapter that builds each module). A module may
import a module of its own layer or an earlier one, never a later one; the few uses of a
later chapter's piece are named below, each with its reason. The engine never imports the CLI,
the test infrastructure or the course; and the chapter-1 loop, all it imports included, holds
none of what later chapters add.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from benchmarks.lines import LAYERS, layer

PACKAGE = Path(__file__).resolve().parent.parent / "corecoder"
ORDER = [1, 2, 3, 4, 5, 6, 7, 8, 9, "cli", "demo", "testing"]  # each may import what is left of it

# (importer, imported): the uses of a later chapter's piece, each with its reason.
EARLIER_USES_LATER = {
    ("agent.py", "calls.py"): "a loop must run something: chapter 1 uses the call path chapter 2 builds",
    ("agent.py", "tool.py"): "the loop holds tools; chapter 2 builds what a tool is",
    ("agent.py", "workspace.py"): "the loop owns a workspace; chapter 2 builds what the tools act on",
    ("__init__.py", "*"): "the package's front door names every public piece (imported on first use)",
    ("cli/__init__.py", "demo/__init__.py"): "`corecoder --demo` runs the demo (imported only then)",
}


def module_of(name: str) -> str | None:
    """`corecoder.tools.bash` -> `tools/bash.py` (or `tools/__init__.py`); None outside the package."""
    parts = name.split(".")
    if parts[0] != "corecoder":
        return None
    path = "/".join(parts[1:])
    if (PACKAGE / f"{path}.py").is_file():
        return f"{path}.py"
    return f"{path}/__init__.py".lstrip("/")


def imports(module: str) -> set[str]:
    """Every corecoder module `module` imports, at the top or inside a function (lazily)."""
    package = ["corecoder", *module.split("/")[:-1]]
    found = set()
    for node in ast.walk(ast.parse((PACKAGE / module).read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            stem = ".".join([*base, *(node.module.split(".") if node.module else [])])
            names = [stem] + [f"{stem}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            target = module_of(name)
            if target and (PACKAGE / target).is_file() and target != module:
                found.add(target)
    return found | {init for target in found for init in packages_of(target) if init != module}


def packages_of(module: str) -> list[str]:
    """The package `__init__.py` files Python runs to import `module`: `tools/bash.py` runs
    `tools/__init__.py` first. (Not the top one: it imports each piece only on first use.)"""
    parts = module.split("/")[:-1]
    return [f"{'/'.join(parts[:i])}/__init__.py" for i in range(1, len(parts) + 1)]


MODULES = sorted(p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py")
                 if "__pycache__" not in p.parts and "project" not in p.parts)


def test_every_module_has_a_layer():
    for module in MODULES:
        layer(module)  # raises, naming the module, if the map lacks it
    folders = {m.rsplit("/", 1)[0] + "/" for m in MODULES if "/" in m}
    assert set(LAYERS) <= set(MODULES) | folders, "the map names a module or folder that is gone"


@pytest.mark.parametrize("module", MODULES)
def test_a_module_imports_nothing_of_a_later_layer(module):
    rank = ORDER.index(layer(module))
    later = {dep for dep in imports(module) if ORDER.index(layer(dep)) > rank
             and (module, dep) not in EARLIER_USES_LATER and (module, "*") not in EARLIER_USES_LATER}
    assert later == set(), f"corecoder/{module} (layer {layer(module)}) imports " + ", ".join(
        f"{dep} (layer {layer(dep)})" for dep in sorted(later))


def closure(module: str) -> set[str]:
    seen, todo = set(), [module]
    while todo:
        for dep in imports(todo.pop()) - seen:
            seen.add(dep)
            todo.append(dep)
    return seen


def test_the_chapter_one_loop_holds_nothing_a_later_chapter_adds():
    loaded = closure("agent.py")
    later = {"context.py", "tokens.py", "executor.py", "subagents.py", "instructions.py", "llm.py",
             "stream.py", "assemble.py", "hooks.py", "permissions.py", "session.py", "checkpoints.py"}
    assert loaded & later == set()
    assert all(layer(m) in (1, 2) for m in loaded), sorted(loaded)


def test_the_engine_imports_neither_the_cli_nor_the_test_infrastructure_nor_the_course():
    for module in MODULES:
        if layer(module) in range(1, 10):
            outside = {dep for dep in imports(module) if layer(dep) not in range(1, 10)}
            assert outside == set(), f"corecoder/{module} imports {sorted(outside)}"


@pytest.mark.parametrize("module", MODULES)
def test_nothing_in_the_package_imports_the_course_or_its_authoring_tools(module):
    """The course (corecoder_course) imports the engine; the engine, the command, the demo and
    the test infrastructure never import it, nor the repository's authoring tools."""
    names = set()
    for node in ast.walk(ast.parse((PACKAGE / module).read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module.split(".")[0])
    assert names & {"corecoder_course", "authoring"} == set(), f"corecoder/{module}"


@pytest.mark.parametrize("readme", ["README.md", "README.zh.md"])
def test_the_readmes_layout_is_the_packages_map(readme):
    """README's layout names every row of the map (corecoder/__init__.py's docstring) once, and
    at the layer the map gives it: a row of the README groups places of one layer."""
    text = (PACKAGE.parent / readme).read_text(encoding="utf-8")
    layout = text[text.index("\n## ", text.index("<!-- test-command -->")):]
    named: dict[str, str] = {}
    for row in layout.splitlines():
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        if not row.startswith("| `corecoder/") or len(cells) != 3:
            continue
        places = re.findall(r"`([^`]+)`", cells[0])
        for place in [places[0].removeprefix("corecoder/"), *places[1:]]:
            assert place not in named, f"{readme} names corecoder/{place} twice"
            named[place] = cells[1]
    assert set(named) == set(LAYERS), f"{readme}'s layout and the map differ"
    for place, said in named.items():
        chapter = LAYERS[place]
        assert (said == str(chapter)) if isinstance(chapter, int) else (not said.isdigit()), (
            f"{readme} puts corecoder/{place} in {said!r}; the map says {chapter}")
