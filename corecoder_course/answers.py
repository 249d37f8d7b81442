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

import builtins
import importlib.util
import inspect
import os
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
            elif getattr(value, "__module__", home) != home:  # the engine's, the library's
                real = getattr(value, "__name__", name)
                imports.add(f"from {value.__module__} import {real}"
                            + (f" as {name}" if real != name else ""))
            elif callable(value) and (helper := _source(value)):  # a helper of the learner's
                helpers[name] = helper
                todo.append(value)
            elif isinstance(value, (bool, int, float, str, tuple)):  # a constant of theirs
                helpers[name] = f"{name} = {value!r}"
    parts = ["\n".join(sorted(imports))] if imports else []
    return "\n\n\n".join([*parts, *helpers.values(), source]) + "\n"


def keep(name: str, answer) -> Path | None:
    """Keep a passing answer under its exercise's id; None when it has no source to keep."""
    text = module_of(answer)
    if text is None:
        return None
    target = folder() / f"{name}.py"
    target.parent.mkdir(parents=True, exist_ok=True)
    header = f"# {name}: the answer that passed its check, kept by corecoder_course.answers\n"
    fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{name}.", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as out:  # whole, or not at all
        out.write(header + f"ANSWER = {answer.__name__!r}\n\n" + text)
    os.replace(temp, target)
    return target


def mine(name: str):
    """The answer kept for exercise `name`, loaded anew from its module."""
    path = folder() / f"{name}.py"
    if not path.is_file():
        raise LookupError(f"no answer kept for {name}: run its check once it passes "
                          f"(answers are kept in {folder()})")
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


def _source(fn) -> str | None:
    try:
        return textwrap.dedent(inspect.getsource(fn)).strip()
    except (OSError, TypeError):  # typed at a prompt, or built in
        return None
