"""`show(obj)`: the real source of a package object, right in the notebook.

A chapter that talks about `Agent.run` shows the code that ships, read from the
installed package at the moment the cell runs, so the page can never drift from the
engine. The heading names the file relative to the package (`corecoder/agent.py`),
never a path on this machine, so the output is the same everywhere.
"""

from __future__ import annotations

import inspect
import textwrap
from pathlib import Path

import corecoder

# the folder that holds `corecoder/`
PACKAGE_ROOT = Path(corecoder.__file__).resolve().parent.parent


class Source:
    """A piece of source with a label. Jupyter shows the markdown; anything else, the text."""

    def __init__(self, path: str, name: str, code: str):
        self.path = path  # e.g. corecoder/messages.py
        self.name = name  # e.g. check_history, or "" for a whole module
        self.code = code

    @property
    def title(self) -> str:
        return f"{self.path} · {self.name}" if self.name else self.path

    def _repr_markdown_(self) -> str:
        # A fenced block: JupyterLab and the static site both highlight it, and the
        # stored output is plain text, the same on every machine and every version.
        fence = "````" if "```" in self.code else "```"
        return f"`{self.title}`\n\n{fence}python\n{self.code}\n{fence}\n"

    def __repr__(self) -> str:
        return f"# {self.title}\n{self.code}"


def source_of(obj) -> Source:
    """The source of a function, class, method or module of the `corecoder` package."""
    # bound and class methods -> the function; a property -> its getter
    target = inspect.unwrap(getattr(obj, "__func__", None) or getattr(obj, "fget", None) or obj)
    try:
        file = Path(inspect.getsourcefile(target)).resolve()
        code = inspect.getsource(target)
    except (TypeError, OSError):
        raise TypeError("show() needs a function, class, method or module with source; "
                        f"got {obj!r:.80}") from None
    try:
        path = file.relative_to(PACKAGE_ROOT / "corecoder").as_posix()
    except ValueError:
        raise TypeError(f"show() shows code of the corecoder package; {obj!r:.80} "
                        "comes from elsewhere") from None
    name = "" if inspect.ismodule(target) else target.__qualname__
    return Source(f"corecoder/{path}", name, textwrap.dedent(code).rstrip("\n"))


def show(obj) -> None:
    """Display the real source of `obj` (highlighted in Jupyter, plain text elsewhere)."""
    source = source_of(obj)
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:  # plain Python: no IPython installed
        print(repr(source))
        return
    if get_ipython() is None:  # IPython is installed, but this is not a notebook or IPython shell
        print(repr(source))
    else:
        display(source)
