"""A learner's own engine, kept as they go: every answer that passes its check is kept by its
exercise's id, as a small module of its own, so that a later chapter (and chapter 10, which
assembles an agent from them) can take it up in another notebook, another kernel, another day.

    keep("ch04.safe_cut", safe_cut)     `check` does this when an answer passes
    mine("ch04.safe_cut")               the kept answer, loaded again (or LookupError)

A kept answer is its source, with an import for each name it takes from the engine or the
standard library (`is_state_note`, `json`, ...) and the source of the helpers it calls that the
learner wrote beside it. It lands in `notebooks/.work/answers/<id>.py` (the chapters' scratch
space, which git ignores), or in the folder CORECODER_COURSE_ANSWERS names.
"""

from __future__ import annotations

import ast
import builtins
import importlib.util
import inspect
import linecache
import os
import re
import sys
import tempfile
import textwrap
import types
from pathlib import Path

from .kit import namespace_of
from .scratch import scratch


def folder() -> Path:
    """Where answers are kept: CORECODER_COURSE_ANSWERS, else notebooks/.work/answers (from the
    repository's root or from notebooks/, where a chapter's kernel starts)."""
    if os.environ.get("CORECODER_COURSE_ANSWERS"):
        return Path(os.environ["CORECODER_COURSE_ANSWERS"])
    return scratch() / "answers"


def module_of(answer) -> str | None:
    """The answer as a module's text: imports, the helpers and constants of the learner's it
    uses (and theirs, in turn), then itself; None for what has no source to keep (a lambda
    typed at a prompt, a built-in)."""
    source = _source(answer)
    if source is None:
        return None
    seen = namespace_of(answer)
    home = seen.get("__name__")  # the learner's own module: a notebook's is __main__
    if home == "corecoder" or str(home).startswith("corecoder."):
        home = None  # the engine's own definition (chapter 10's a_learner): what it uses is the
        # engine's too, imported, so that a class it raises is the one the engine catches
    imports, helpers, done, todo = set(), {}, {answer.__name__}, [answer]
    while todo:
        for name in sorted(_names(todo.pop()) - done):
            done.add(name)
            value = seen.get(name)
            if value is None or hasattr(builtins, name):
                continue
            if isinstance(value, types.ModuleType):
                alias = f" as {name}" if name != value.__name__ else ""
                imports.add(f"import {value.__name__}{alias}")
            elif _importable(value, home):  # the engine's, the library's
                real = value.__name__
                imports.add(f"from {value.__module__} import {real}"
                            + (f" as {name}" if real != name else ""))
            elif callable(value) and (helper := _source(value)):  # a helper of the learner's
                helpers[name] = helper
                todo.append(value)
            elif isinstance(value, re.Pattern):  # ID = re.compile(...): its pattern, compiled
                imports.add("import re")
                helpers[name] = f"{name} = re.compile({value.pattern!r}, {int(value.flags)})"
            elif isinstance(value, (bool, int, float, str, tuple)):  # a constant of theirs
                helpers[name] = f"{name} = {value!r}"
    parts = ["\n".join(sorted(imports))] if imports else []
    return "\n\n\n".join([*parts, *helpers.values(), source]) + "\n"


def keep(name: str, answer, where: Path | str | None = None) -> Path | None:
    """Keep a passing answer under its exercise's id (in `where`, else `folder()`); None when it
    has no source to keep, or when it is the chapter's folded solution, run as it stands (Run
    All runs it): that is not the learner's answer, and must not stand in for it later."""
    text = module_of(answer)
    if text is None or "### BEGIN SOLUTION" in text:
        return None
    target = (Path(where) if where is not None else folder()) / f"{name}.py"
    target.parent.mkdir(parents=True, exist_ok=True)
    header = f"# {name}: the answer that passed its check, kept by corecoder_course.answers\n"
    fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{name}.", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as out:  # whole, or not at all
        out.write(header + f"ANSWER = {answer.__name__!r}\n\n" + text)
    os.replace(temp, target)
    return target


def mine(name: str, where: Path | str | None = None):
    """The answer kept for exercise `name` (in `where`, else `folder()`), loaded anew from its
    module."""
    where = Path(where) if where is not None else folder()
    path = where / f"{name}.py"
    if not path.is_file():
        raise LookupError(f"no answer kept for {name}: run its check once it passes "
                          f"(answers are kept in {where})")
    spec = importlib.util.spec_from_file_location(f"kept_{name.replace('.', '_')}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, module.ANSWER)


def _names(answer) -> set[str]:
    """The global names an answer's code uses (a class: its methods' too)."""
    codes = [answer.__code__] if hasattr(answer, "__code__") else [
        f.__code__ for f in vars(answer).values() if hasattr(f, "__code__")]
    names, stack = set(), list(codes)
    while stack:
        code = stack.pop()
        names |= set(code.co_names)
        stack += [c for c in code.co_consts if isinstance(c, types.CodeType)]
    if isinstance(answer, type):
        names |= {base.__name__ for base in answer.__bases__ if base is not object}
    return names


def _importable(value, home: str | None) -> bool:
    """Whether `value` is a definition another module holds under its own name (a function, a
    class), to import from there; not an object made of one of its types (a compiled pattern)."""
    module = sys.modules.get(getattr(value, "__module__", None) or "")
    name = getattr(value, "__name__", None)
    return (module is not None and module.__name__ != home and isinstance(name, str)
            and getattr(module, name, None) is value)


def _source(fn) -> str | None:
    try:
        return textwrap.dedent(inspect.getsource(fn)).strip()
    except (OSError, TypeError):  # typed at a prompt, built in; or a class of a notebook cell
        return _cell_class(fn) if isinstance(fn, type) else None


def _cell_class(cls: type) -> str | None:
    """The source of a class written in a notebook cell. inspect looks for the file of its
    module, and a notebook's (__main__) has none; but its methods know the cell they come from
    (IPython keeps each cell's text in linecache under the name their code carries)."""
    for method in vars(cls).values():
        code = getattr(getattr(method, "__func__", method), "__code__", None)
        if code is None:
            continue
        lines = linecache.getlines(code.co_filename)
        try:
            tree = ast.parse("".join(lines))
        except SyntaxError:
            return None
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name == cls.__name__ and (
                    node.lineno <= code.co_firstlineno <= node.end_lineno):
                start = min([d.lineno for d in node.decorator_list] + [node.lineno])
                return textwrap.dedent("".join(lines[start - 1:node.end_lineno])).strip()
    return None
