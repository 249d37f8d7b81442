"""Keep the essays honest: a link under each include, and translations that say what they are of.

1. Code on GitHub. An essay includes code by reference, a line of its own:

       <!-- include: corecoder/agent.py::Agent.run -->

   The site puts the code there. GitHub shows an HTML comment as nothing, so the line
   after each include is a link to the same lines of the real file, written here:

       [source: `corecoder/agent.py` · `Agent.run`](../corecoder/agent.py#L96-L121)

   Its line numbers follow the code; `sync --check` reports a link that went stale.

2. Stale translations. An essay's sections are the stretches between its headings, the
   same in both languages. Under each heading of a Chinese essay, a comment records a
   hash of the English section it was translated from:

       ## 循环
       <!-- translated from: 3f2a9c0e1b7d -->

   `sync --check` reports a section whose English has changed since;
   `python -m authoring translated essays/NN-slug.zh.md` records the English as it
   is now, once the translation has caught up.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from . import ROOT, ruler
from .notebook import digest

ESSAYS = ROOT / "essays"
INCLUDE = re.compile(r"^<!-- include: (?P<path>[\w./-]+)(?:::(?P<name>[\w.]+))? -->$")
SOURCE_LINK = re.compile(r"^\[(?:source: |源码：).*\]\(\.\./[^)\s]+\)$")
TRANSLATED = re.compile(r"^<!-- translated from: (?P<hash>[0-9a-f]{12}) -->$")
HEADING = re.compile(r"^#{1,6} ")
LABEL = {"en": "source: ", "zh": "源码："}


def english_essays(folder: Path = ESSAYS) -> list[Path]:
    return sorted(p for p in Path(folder).glob("[0-9][0-9]-*.md") if not p.name.endswith(".zh.md"))


def chinese(path: Path) -> Path:
    return path.with_name(path.name.removesuffix(".md") + ".zh.md")


def find_definition(tree: ast.Module, dotted: str) -> ast.AST:
    """The def or class `Name` at module level, or `Class.method` inside a class: exactly one,
    by AST, not by regex. The site's include step (docs/hooks/course_site.py) finds the code it
    shows with this same function, so the code and the link under it are of one definition."""
    scope, node = tree.body, None
    for part in dotted.split("."):
        found = [n for n in scope if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                    ast.ClassDef)) and n.name == part]
        if len(found) != 1:
            raise ValueError(f"{dotted}: {'no' if not found else 'more than one'} definition "
                             f"named {part!r}")
        node = found[0]
        scope = node.body
    return node


def span(root: Path, path: str, name: str | None) -> tuple[int, int]:
    """First and last line of what an include names: a definition (decorators included), or
    the whole file."""
    text = (root / path).read_text(encoding="utf-8")
    if not name:
        return 1, len(text.splitlines())
    return ruler.span(find_definition(ast.parse(text), name))


def source_link(m: re.Match, lang: str, root: Path) -> str:
    start, end = span(root, m["path"], m["name"])
    title = f"`{m['path']}`" + (f" · `{m['name']}`" if m["name"] else "")
    return f"[{LABEL[lang]}{title}](../{m['path']}#L{start}-L{end})"


def with_source_links(text: str, lang: str, root: Path = ROOT) -> str:
    """`text` with the line after each include the link to its source (added or brought up
    to date)."""
    lines, out, i = text.split("\n"), [], 0
    while i < len(lines):
        out.append(lines[i])
        m = INCLUDE.match(lines[i])
        if m:
            out.append(source_link(m, lang, root))
            if i + 1 < len(lines) and SOURCE_LINK.match(lines[i + 1]):
                i += 1  # the old link, replaced
        i += 1
    return "\n".join(out)


def sections(text: str) -> list[list[str]]:
    """The essay's lines, cut before each heading (outside fenced code)."""
    found, fenced = [[]], False
    for line in text.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        if not fenced and HEADING.match(line):
            found.append([])
        found[-1].append(line)
    return found


def digest_of(section: list[str]) -> str:
    """What a translation records of its English section: a hash of its prose and code,
    without what is generated (the source links)."""
    return digest("\n".join(line for line in section if not SOURCE_LINK.match(line)))


def stale(english: str, translation: str, name: str) -> list[str]:
    """A line per Chinese section whose record of its English source is missing or old."""
    en, zh = sections(english), sections(translation)
    if len(en) != len(zh):
        return [f"{name}: {len(zh) - 1} headings, the English has {len(en) - 1}"]
    notes = []
    for number, (theirs, ours) in enumerate(zip(en[1:], zh[1:], strict=True), 1):
        recorded = TRANSLATED.match(ours[1]) if len(ours) > 1 else None
        heading = ours[0].lstrip("# ")
        if recorded is None:
            notes.append(f"{name}: section {number} ({heading}): "
                         "no record of the English it was translated from")
        elif recorded["hash"] != digest_of(theirs):
            notes.append(f"{name}: section {number} ({heading}): "
                         "the English has changed since it was translated")
    return notes


def record_translation(english: str, translation: str) -> str:
    """The Chinese essay with each section's record set to its English section as it is now."""
    en, zh = sections(english), sections(translation)
    if len(en) != len(zh):
        raise ValueError(f"the translation has {len(zh) - 1} headings, the English {len(en) - 1}")
    out = zh[0]
    for theirs, ours in zip(en[1:], zh[1:], strict=True):
        body = ours[2:] if len(ours) > 1 and TRANSLATED.match(ours[1]) else ours[1:]
        out += [ours[0], f"<!-- translated from: {digest_of(theirs)} -->", *body]
    return "\n".join(out)


def sync_essays(folder: Path = ESSAYS, check: bool = False, root: Path = ROOT) -> list[str]:
    """Source links brought up to date (written unless `check`), and stale translations found."""
    found = []
    for english in english_essays(folder):
        translation = chinese(english)
        for path, lang in ((english, "en"), (translation, "zh")):
            if not path.exists():
                continue
            text = path.read_text(encoding="utf-8")
            linked = with_source_links(text, lang, root)
            if linked != text:
                found.append(f"{path.name}: a link to the source under an include is missing "
                             "or out of date")
                if not check:
                    path.write_text(linked, encoding="utf-8")
        if translation.exists():
            found += stale(english.read_text(encoding="utf-8"),
                           translation.read_text(encoding="utf-8"), translation.name)
    return found
