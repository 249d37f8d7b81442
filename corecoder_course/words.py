"""The course helpers' words, in the language of the notebook that calls them.

A chapter comes in two notebooks, English and Chinese, whose code cells are the same
code. Only one cell differs: the one that imports the helpers, tagged `language`.

    from corecoder_course import check, record, show          # the English notebook
    from corecoder_course.zh import check, record, show       # the Chinese notebook

The helpers imported from `corecoder_course.zh` are the same functions, set to speak
Chinese: a verdict and its hints, the step-through viewer and its text twin. What the
engine and the model say stays as it is, since it is what the model sees.

The language is not a setting kept somewhere: a helper from `.zh` runs inside
`speaking("zh")`, and `say(en, zh)` picks the words of the language it runs in. Each
piece of helper text is written in both languages at the one place it is used.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

LANGUAGES = ("en", "zh")
# the helpers with words of their own: zh.py binds these
SPEAKING = ("check", "beside", "step_through", "explore_edits", "scrub_stream", "context_gauge",
            "call_timeline", "delegation_tree", "wire_view", "consent_buttons", "undo_stack",
            "session_log", "your_engine", "tour", "the_long_task", "your_tests", "lab")
_SPOKEN: ContextVar[str] = ContextVar("the course helpers' language", default="en")


def say(en: str, zh: str) -> str:
    """`en` or `zh`: the words of the language the helper speaking now speaks."""
    return zh if _SPOKEN.get() == "zh" else en


def language() -> str:
    """The language the helper speaking now speaks: "en" or "zh"."""
    return _SPOKEN.get()


@contextmanager
def speaking(lang: str) -> Iterator[None]:
    """Within this block, `say` speaks `lang`."""
    if lang not in LANGUAGES:
        raise ValueError(f"the course speaks {' and '.join(LANGUAGES)}, not {lang!r}")
    token = _SPOKEN.set(lang)
    try:
        yield
    finally:
        _SPOKEN.reset(token)


def in_language(fn: Callable, lang: str) -> Callable:
    """`fn`, speaking `lang` whenever it is called."""

    @functools.wraps(fn)
    def speaking_fn(*args, **kwargs):
        with speaking(lang):
            return fn(*args, **kwargs)

    return speaking_fn


def columns(text: str) -> int:
    """Columns a string takes in a monospaced font: a CJK character takes two (a text twin's
    table lines up in both languages)."""
    return sum(2 if "\u2e80" <= c <= "\u9fff" or "\uff00" <= c <= "\uffef" else 1 for c in text)
