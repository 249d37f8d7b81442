"""glob and grep: find files by name, and lines by content.

Both walk the tree the same way: sorted (so the same tree always gives the same
answer), not into symlinked directories (no loops), and not into the directories
in SKIP_DIRS, where a project keeps what it did not write (a search root that is
one of them is still searched). Both bound what they collect and say when they
stopped early and why, so the model never mistakes a cut list for the whole.

grep matches with the `regex` package, not `re`: the same syntax, and a timeout. Some
patterns ((a|aa)+$, (a+)+$) backtrack for minutes on a line that almost matches, holding the
GIL so that not even Ctrl+C is seen; no check of the pattern's text catches them all. A timeout
does: a line that takes longer than MAX_MATCH_SECONDS stops the search, and says so.
"""

from __future__ import annotations

import errno
import math
import os
import re
import stat
import threading
import time
from fnmatch import fnmatchcase
from pathlib import Path

import regex

from ..files import in_words, kind, looks_binary, read_regular
from ..text import marker, shorten
from ..tool import Tool, ToolError
from ..workspace import Workspace
from .read import split_lines

MAX_GLOB_RESULTS = 200
MAX_GREP_FILES = 5000
MAX_GREP_MATCHES = 200


def walk_files(root: Path, unreadable: set[Path] | None = None,
               cancelled: threading.Event | None = None):
    """Every file under `root`, in sorted order, skipping SKIP_DIRS below the root: a folder's
    files, then each of its folders in turn. With a stack, not recursion, so a tree 1,200 deep
    is walked like any other; a link to a folder is not followed (no loops). A folder it may not
    list goes into `unreadable`, if given; once `cancelled` is set (Ctrl+C, for a call running
    in a thread of its own), the walk stops."""
    folders = [Path(root)]
    while folders:
        if cancelled is not None and cancelled.is_set():
            raise KeyboardInterrupt
        folder = folders.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except OSError:  # unreadable, or gone since it was listed
            if unreadable is not None:
                unreadable.add(folder)
            continue
        dirs = []
        for entry in entries:
            if not _is_dir(entry):
                yield Path(folder, entry.name)
            elif entry.name not in SKIP_DIRS and not entry.is_symlink():
                dirs.append(Path(folder, entry.name))
        folders.extend(reversed(dirs))  # the first folder is walked next


class Glob(Tool):
    name = "glob"
    description = (
        "Find files by name: `*.py` (this folder), `**/*.py` (any depth), `src/**/test_*.{py,js}`. "
        f"Newest first, at most {MAX_GLOB_RESULTS}. Skips .git, node_modules, virtualenvs and "
        "build folders unless named in `path` or the pattern."
    )
    parameters = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Glob pattern, relative to `path`."},
            "path": {"type": "string",
                     "description": "Directory to search from (default: working dir)."},
        },
        "required": ["pattern"],
        "additionalProperties": False,
    }
    mutating = False

    def run(self, ws: Workspace, pattern: str, path: str | None = None) -> str:
        base = search_root(ws, path)
        if not base.is_dir():
            raise ToolError(f"{ws.show(base)} is a file; glob searches a directory "
                            "(read_file reads a file)")
        if not pattern.strip():
            raise ToolError("pattern is empty; try '**/*' for every file")
        found, unreadable = set(), set()
        for each in expand_braces(pattern):
            # Walk from the pattern's literal start (src/app in src/app/**/*.py): faster, and
            # it lets node_modules/x/*.js look inside a folder the walk would otherwise skip.
            parts = [p for p in each.split("/") if p not in ("", ".")]
            wild = [i for i, p in enumerate(parts[:-1]) if any(c in p for c in "*?[")]
            literal = wild[0] if wild else len(parts) - 1
            root = Path("/" if each.startswith("/") else base, *parts[:literal])
            if parts and seen(root, Path.is_dir, unreadable):
                # the name first: it costs no system call, and most files fail it
                found |= {f for f in walk_files(root, unreadable, ws.cancelled)
                          if path_matches(list(f.relative_to(root).parts), parts[literal:])
                          and seen(f, is_regular, unreadable)}
        found = sorted(found, key=lambda f: (-modified(f), str(f)))
        lines = [ws.show(f) for f in found[:MAX_GLOB_RESULTS]] or [
            f"no files match {pattern!r} in {ws.show(base)}"]
        if len(found) > MAX_GLOB_RESULTS:
            more = len(found) - MAX_GLOB_RESULTS
            lines.append(f"({more} more not shown; narrow the pattern or the path)")
        return "\n".join(lines + passed_over(unreadable, ws))


class Grep(Tool):
    name = "grep"
    description = (
        "Search file contents with a Python regex. `path`: a file or folder (default: working "
        "dir); `include`: a file-name glob like `*.py`. Prints `path:line: text`, at most "
        f"{MAX_GREP_MATCHES} matches from at most {MAX_GREP_FILES} files. Skips binary files, "
        ".git, node_modules, virtualenvs and build folders."
    )
    parameters = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string",
                        "description": "Python regular expression (re module syntax)."},
            "path": {"type": "string",
                     "description": "File or directory to search (default: working dir)."},
            "include": {"type": "string",
                        "description": "Only files whose name matches this glob."},
        },
        "required": ["pattern"],
        "additionalProperties": False,
    }
    mutating = False

    def run(self, ws: Workspace, pattern: str, path: str | None = None,
            include: str | None = None) -> str:
        matcher = compile_pattern(pattern)
        root = search_root(ws, path)
        if not root.is_file() and not root.is_dir():
            raise ToolError(f"{ws.show(root)} is {kind(root.stat().st_mode)}; grep searches "
                            "files and folders")
        # A file named outright is searched whatever its name; in a folder, `include` picks.
        files = [root] if root.is_file() else (
            f for f in walk_files(root) if included(f.relative_to(root), include))
        matches: list[str] = []
        scanned = binary = skipped = 0
        stopped = ""
        deadline = time.monotonic() + MAX_GREP_SECONDS
        for file in files:
            if scanned == MAX_GREP_FILES:
                stopped = (f"stopped after {scanned} files; narrow the path or include to "
                           "search the rest")
                break
            if stopped := must_stop(deadline, ws, scanned):
                break
            scanned += 1
            try:  # a FIFO, a link to /dev/zero, a file of gigabytes: skipped, never waited on
                data = read_regular(file)
            except FileNotFoundError:  # a broken link, or gone since the walk
                continue
            except OSError:
                skipped += 1
                continue
            if looks_binary(data):
                binary += 1
                continue
            for number, line in enumerate(split_lines(data.decode("utf-8-sig", "replace")), 1):
                if stopped := must_stop(deadline, ws, scanned):  # one huge file stops too
                    break
                try:
                    # concurrent: the match lets go of the GIL, so Ctrl+C and the other calls
                    # go on meanwhile
                    found = matcher.search(line, timeout=MAX_MATCH_SECONDS, concurrent=True)
                except TimeoutError:
                    stopped = (f"stopped: the pattern took over {MAX_MATCH_SECONDS:g} s on line "
                               f"{number} of {ws.show(file)}, backtracking; write it so that each "
                               "character can match in one way only")
                    break
                if found:
                    if len(matches) == MAX_GREP_MATCHES:  # a match past the cap: now we know
                        stopped = (f"stopped at {len(matches)} matches; narrow the pattern, "
                                   "path or include")
                        break
                    matches.append(f"{ws.show(file)}:{number}: {around(line, found)}")
            if stopped:
                break
        if not matches:
            searched = f"files searched: {scanned}"
            searched += f", binary files skipped: {binary}" if binary else ""
            searched += (f", not regular or too large: {skipped} (bash's grep -n searches a "
                         "file of any size)") if skipped else ""
            so_far = " before it stopped" if stopped else ""
            matches = [f"no matches for {pattern!r} in {ws.show(root)}{so_far} ({searched})"]
        return "\n".join(matches + ([f"({stopped})"] if stopped else []))


# --- defences: what makes a search useless or endless ------------------------------------------

SKIP_DIRS = frozenset({
    ".git", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache", ".pytest_cache",
    "build", "dist",
})


MAX_GREP_SECONDS = 30

MAX_GREP_LINE_CHARS = 400

MAX_MATCH_SECONDS = 1.0  # on one line: a sane pattern takes microseconds


def path_matches(parts: list[str], pattern_parts: list[str]) -> bool:
    """Does a relative path (split on /) match a pattern (split on /)?

    Each pattern part matches one path part (`*`, `?`, `[ab]` never cross a /),
    except `**`, which matches any number of whole parts, none included. Read part by part,
    keeping every place in the pattern the path so far could have reached: the work is the
    path's length times the pattern's, however many `**` it has.
    """
    places = _past_stars({0}, pattern_parts)
    for part in parts:
        after = set()
        for i in places:
            if i == len(pattern_parts):
                continue  # the pattern is used up, the path is not
            if pattern_parts[i] == "**":
                after.add(i)  # it takes this part too, and may take more
            elif fnmatchcase(part, pattern_parts[i]):
                after.add(i + 1)
        places = _past_stars(after, pattern_parts)
    return len(pattern_parts) in places


def _past_stars(places: set[int], pattern_parts: list[str]) -> set[int]:
    """With each place at a `**`, the places after it too: `**` may match no part at all."""
    todo = list(places)
    while todo:
        i = todo.pop()
        if i < len(pattern_parts) and pattern_parts[i] == "**" and i + 1 not in places:
            places.add(i + 1)
            todo.append(i + 1)
    return places


BRACES = re.compile(r"\{([^{}]*,[^{}]*)\}")  # an innermost group with a comma: {py,js}

# Real patterns make a handful (`{src,tests}/**/*.{py,pyi}`: 4), and each one is a walk of
# the tree; twenty groups would make a million, and fill the memory before the first walk.
MAX_BRACE_PATTERNS = 100


def expand_braces(pattern: str) -> list[str]:
    """`*.{py,js}` -> [`*.py`, `*.js`]; several groups multiply out, so the patterns are counted
    as they are made, and too many are refused before they are all made. With a stack, not
    recursion: a thousand groups are refused like twenty, not a RecursionError."""
    done, todo = [], [pattern]
    while todo:
        each = todo.pop()
        if group := BRACES.search(each):  # the first alternative comes out first, as written
            head, tail = each[: group.start()], each[group.end():]
            todo += [head + alt + tail for alt in reversed(group.group(1).split(","))]
        else:
            done.append(each)
        if len(done) + len(todo) > MAX_BRACE_PATTERNS:  # each left to do makes one at least
            many = math.prod(g.count(",") + 1 for g in BRACES.findall(pattern))  # exact if unnested
            many = max(MAX_BRACE_PATTERNS + 1, min(many, 10**9))
            raise ToolError(f"the braces in {shorten(pattern, 200)!r} make at least {many:,} "
                            f"patterns, and at most {MAX_BRACE_PATTERNS} are tried: use fewer "
                            "alternatives, or one wider pattern (`*.py`, not a name per file)")
    return list(dict.fromkeys(done))  # {a,a}: once


def included(relative: Path, include: str | None) -> bool:
    """Does a file pass grep's `include`? A bare pattern matches the name; one with a / (a common
    slip: `**/*.py`) the path."""
    return not include or any(path_matches(list(relative.parts), p.split("/")) if "/" in p
                              else fnmatchcase(relative.name, p) for p in expand_braces(include))


def around(line: str, found) -> str:
    """A long line cut to a window that still shows the match (think minified JS)."""
    if len(line) <= MAX_GREP_LINE_CHARS or found.end() <= MAX_GREP_LINE_CHARS:
        return shorten(line, MAX_GREP_LINE_CHARS, tail=0)
    start = max(0, found.start() - MAX_GREP_LINE_CHARS // 4)
    end = start + MAX_GREP_LINE_CHARS
    return f"{marker(start)}{line[start:end]}{marker(len(line) - end) if end < len(line) else ''}"


def compile_pattern(pattern: str) -> regex.Pattern:
    if not pattern:
        raise ToolError("pattern is empty")
    try:  # VERSION0: the syntax and meaning of Python's re
        return regex.compile(pattern, regex.VERSION0)
    except regex.error as e:
        raise ToolError(f"invalid regular expression {shorten(pattern, 200)!r}: {e}") from e
    except RecursionError:
        raise ToolError("the regular expression nests its groups too deeply to read") from None


def must_stop(deadline: float, ws: Workspace, scanned: int) -> str:
    """Why grep stops now, or "": asked before each file and each line, so neither a file of
    millions of lines nor lines that each take the most a match may take outlast the limit. A
    Ctrl+C reaches a call in another thread as `ws.cancelled`: it ends the call there, instead
    of leaving it searching behind the prompt."""
    if ws.cancelled.is_set():
        raise KeyboardInterrupt
    if time.monotonic() <= deadline:
        return ""
    return f"stopped after {MAX_GREP_SECONDS} s ({scanned} files); narrow the path or include"


def seen(path: Path, is_kind, unreadable: set[Path]) -> bool:
    """is_kind(path), or False for a path that cannot be looked at (no permission on its folder,
    a broken link, a link loop, gone since the walk, a name too long): it goes into
    `unreadable`, and the search goes on without it instead of failing whole."""
    try:
        return is_kind(path)
    except OSError as e:
        # a folder the pattern itself names (the walk's root) with a name too long: the call
        # is wrong, not the tree
        if e.errno == errno.ENAMETOOLONG and is_kind is Path.is_dir:
            raise ToolError(f"the pattern names a folder too long to look at: "
                            f"{shorten(str(path), 200)!r}") from None
        unreadable.add(path)
        return False


def is_regular(path: Path) -> bool:
    return stat.S_ISREG(path.stat().st_mode)  # Path.is_file: False for a broken link, not counted


def passed_over(unreadable: set[Path], ws: Workspace) -> list[str]:
    """The line that says what a search could not look at, if anything: a file missing from the
    list is then not taken for one that does not exist."""
    if not unreadable:
        return []
    more = ", ..." if len(unreadable) > 1 else ""
    first = shorten(ws.show(min(unreadable)), 200)
    return [f"(skipped {len(unreadable)} that could not be read: {first}{more}; "
            "no permission, a broken link, or gone meanwhile)"]


def _is_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir()  # a link to a folder counts as one, as os.walk counts it
    except OSError:
        return False


def search_root(ws: Workspace, path: str | None) -> Path:
    root = ws.resolve(path or ".")
    try:
        root.stat()
    except OSError as e:  # missing, under a file, a symlink to nothing, a name too long
        raise ToolError(in_words(e, root, ws.show, "search")) from None
    return root


def modified(file: Path) -> float:
    try:
        return file.stat().st_mtime
    except OSError:  # vanished between the walk and now
        return 0.0
