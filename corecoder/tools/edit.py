"""edit_file: replace one exact piece of a file, forgiving only slips that still point to one place.

The idea: find `old_string` in the file, exactly, in exactly one place; put `new_string`
there; write the file atomically; show the diff. Text that occurs twice is refused with
the lines where it occurs, because guessing which one the model meant is worse than asking.

Models retype what they read, and retyping drifts: CRLF comes back as LF, trailing spaces
vanish, a block is re-indented, read_file's line numbers get pasted in. So when the exact
match finds nothing, a short cascade of tolerant matchers runs (below the marked line),
each accepted only when it finds exactly one place. The file keeps its line endings, tabs,
BOM and final newline.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Callable
from itertools import accumulate, pairwise
from pathlib import Path

from ..files import FileTooLarge, absent, atomic_write, in_words, looks_binary, read_regular
from ..tool import Tool, ToolError
from ..workspace import Workspace


class EditFile(Tool):
    name = "edit_file"
    description = (
        "Replace text in a file. old_string must match exactly one place (copy it from read_file "
        "without the line numbers, with enough surrounding lines to be unique) unless replace_all "
        "is true. Slips (CRLF, trailing spaces, shifted indentation, pasted line numbers) are "
        "forgiven only if one place still matches. Returns a diff. To create or rewrite a whole "
        "file, use write_file."
    )
    parameters = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File to edit."},
            "old_string": {"type": "string",
                           "description": "Exact text to replace (unique in the file)."},
            "new_string": {"type": "string", "description": "Text to put in its place."},
            "replace_all": {"type": "boolean",
                            "description": "Replace every exact match. Default false."},
        },
        "required": ["path", "old_string", "new_string"],
        "additionalProperties": False,
    }
    mutating = True

    def run(self, ws: Workspace, path: str, old_string: str, new_string: str,
            replace_all: bool = False) -> str:
        if not old_string.strip():  # it matches everywhere: peers that allowed it corrupted files
            raise ToolError("old_string is empty or only whitespace, so it cannot identify one "
                            "place. Give the exact text to replace with a few surrounding lines. "
                            "To create or overwrite a file, use write_file.")
        if old_string == new_string:
            raise ToolError("old_string and new_string are identical, so there is nothing to "
                            "change.")
        target = ws.resolve(path)
        shown = ws.show(target)
        text, bom = read_text(target, ws.show)
        places = exact(text, old_string, new_string)
        how = ""
        if len(places) > 1 and replace_all:
            places = exact(text, old_string, new_string, overlapping=False)  # as str.replace does
        elif len(places) > 1:
            raise ToolError(f"old_string occurs {len(places)} times in {shown} (lines "
                            f"{lines_of(text, places)}). {MORE_CONTEXT}, or set replace_all to "
                            "true to change all.")
        elif not places:
            places, how = tolerant(text, old_string, new_string, replace_all, shown)
        after = apply(text, places)
        if after == text:
            raise ToolError(f"That edit would leave {shown} unchanged; nothing was written.")
        try:
            note = atomic_write(target, bom + after)
        except OSError as e:  # read-only, say: nothing was written
            raise ToolError(f"cannot edit {shown}: {in_words(e, target, ws.show, 'write')}") from e
        count = f"{len(places)} occurrences at lines" if len(places) > 1 else "1 occurrence at line"
        summary = f"Edited {shown}: replaced {count} {lines_of(text, places)}"
        summary += f" (tolerant match: {how})." if how else "."
        summary += f" {note}" if note else ""
        return "\n".join([summary, *diff(text, after, shown)])


def exact(text: str, old: str, new: str, overlapping: bool = True) -> list[Place]:
    """Every place `old` occurs. Overlaps count ("aa" is in "aaa" twice): one place must be one."""
    places, start = [], text.find(old)
    while start != -1:
        places.append((start, start + len(old), new))
        start = text.find(old, start + (1 if overlapping else len(old)))
    return whole_line_breaks(text, places)


def tolerant(text: str, old: str, new: str, replace_all: bool,
             shown: str) -> tuple[list[Place], str]:
    """The one place a tolerant matcher finds, and what it forgave; ToolError if none finds one."""
    attempts = [("", old, new, TOLERANT)]
    unnumbered = without_line_numbers(old, new)
    if unnumbered:  # pasted from read_file: try the text itself, exactly and then tolerantly
        attempts.append(("removing read_file line numbers", *unnumbered, [("", exact), *TOLERANT]))
    for fix, old_try, new_try, steps in attempts:
        for step_name, step in steps:
            places = step(text, old_try, new_try)
            how = " and ".join(part for part in (fix, step_name) if part)
            if len(places) == 1:
                return places, how
            if places:  # a tolerant match must be unique: never guess between places
                only = " (replace_all applies only to exact matches)." if replace_all else "."
                raise ToolError(f"old_string matches no place exactly, and {len(places)} places in "
                                f"{shown} after {how} (lines {lines_of(text, places)}). "
                                f"{MORE_CONTEXT}{only}")
    raise ToolError(no_match(text, unnumbered[0] if unnumbered else old, shown))


def ignoring_line_endings(text: str, old: str, new: str) -> list[Place]:
    pattern = r"\r?\n".join(re.escape(part) for part in re.split(r"\r?\n", old))
    matches = re.finditer(f"(?=({pattern}))", text)  # a lookahead: overlapping places count too
    found = [(m.start(1), m.end(1), new) for m in matches]
    return whole_line_breaks(text, found)


def ignoring_trailing_whitespace(text: str, old: str, new: str) -> list[Place]:
    return [(start, end, new) for start, end, model, file in line_matches(text, old)
            if model == file]


def shifted_indentation(text: str, old: str, new: str) -> list[Place]:
    # Runs after the trailing-whitespace step found nothing, so every match here has a real shift.
    return [(start, end, reindent(new, model, file))
            for start, end, model, file in line_matches(text, old)]


TOLERANT = (  # (what was forgiven, how to find places), from the narrowest to the widest
    ("ignoring LF vs CRLF line endings", ignoring_line_endings),
    ("ignoring trailing whitespace", ignoring_trailing_whitespace),
    ("shifting the indentation to the file's", shifted_indentation),
)


# --- defences: what real files and retyped text need ------------------------------------------

BOM = "\ufeff"
MORE_CONTEXT = "Include more surrounding lines so old_string matches exactly one place"

Place = tuple[int, int, str]  # start, end, the text to put there


def apply(text: str, places: list[Place]) -> str:
    """`text` with each place replaced; line breaks in the new text take the file's main style."""
    crlf = text.count("\r\n")
    ending = None if "\n" not in text else "\r\n" if crlf > text.count("\n") - crlf else "\n"
    # each new text converted once, not once a place: replace_all may have 300,000 places
    styled = {new: new if ending is None else re.sub(r"\r?\n", ending, new) for *_, new in places}
    out, last = [], 0
    for start, end, new in places:
        out += [text[last:start], styled[new]]
        last = end
    return "".join(out) + text[last:]


def lines_of(text: str, places: list[Place]) -> str:
    """The line numbers where the places start: `3, 9`. Counted from one place to the next, not
    from the top for each: 300,000 places in 6.5 MB would read a million million characters."""
    starts = sorted({start for start, _, _ in places})
    breaks = accumulate(text.count("\n", a, b) for a, b in pairwise([0, *starts]))
    line_at = {start: before + 1 for start, before in zip(starts, breaks, strict=True)}
    lines = list(dict.fromkeys(str(line_at[start]) for start, _, _ in places))
    return ", ".join(lines[:10]) + (", ..." if len(lines) > 10 else "")


# difflib compares the changed lines with one another: 1,000 take a fraction of a second, and
# 300,000 (replace_all on every other line of a big file) would take about a day.
MAX_DIFF_LINES = 2_000


def diff(text: str, after: str, shown: str) -> list[str]:
    """The edit as a unified diff, its lines without their breaks (no CR noise in CRLF files).
    The lines the same at both ends are set aside first, at the cost of reading them; what is
    left in the middle is compared only if it is small enough to compare in time."""
    a, b = line_texts(text), line_texts(after)
    head = len(os.path.commonprefix([a, b]))
    tail = len(os.path.commonprefix([a[head:][::-1], b[head:][::-1]]))
    changed = len(a) + len(b) - 2 * (head + tail)
    if changed > MAX_DIFF_LINES:
        return [f"(no diff: {changed:,} lines differ, from line {head + 1} to line "
                f"{len(a) - tail} of the old file, too many to compare; read_file shows them)"]
    return list(difflib.unified_diff(a, b, f"a/{shown}", f"b/{shown}", lineterm=""))


def read_text(path: Path, show: Callable) -> tuple[str, str]:
    """The file's text without its BOM, and the BOM ("" if none): a BOM is kept, never matched.
    `show` writes a path as the model sees it."""
    shown = show(path)
    if not path.parent.is_dir():  # a file, or nothing, where its directory should be
        raise ToolError(f"cannot edit {shown}: {absent(path, show)}")
    if not path.exists():
        raise ToolError(f"{shown} does not exist. To create a new file, use write_file.")
    if path.is_dir():
        raise ToolError(f"{shown} is a directory; edit_file edits one file (glob lists a "
                        "directory).")
    try:
        data = read_regular(path)
    except FileTooLarge as e:
        raise ToolError(f"cannot edit {shown}: {e}. edit_file holds the whole file: change this "
                        "one with bash (sed -i, or a short script); read_file shows it in "
                        "windows (offset, limit)") from e
    except OSError as e:
        raise ToolError(f"cannot edit {shown}: {in_words(e, path, show, 'read')}") from e
    if looks_binary(data):
        raise ToolError(f"{shown} looks like a binary file; edit_file only edits text files.")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ToolError(f"{shown} is not UTF-8 (byte {e.object[e.start]:#04x} at offset "
                        f"{e.start}); edit_file leaves such files untouched.") from None
    return (text[1:], BOM) if text.startswith(BOM) else (text, "")


def whole_line_breaks(text: str, places: list[Place]) -> list[Place]:
    """Drop places that cut a CRLF in half: replacing there would leave a stray CR or LF."""

    def cuts(i: int) -> bool:
        return i > 0 and text[i - 1 : i + 1] == "\r\n"

    return [(start, end, new) for start, end, new in places if not cuts(start) and not cuts(end)]


def line_spans(text: str) -> list[tuple[int, int, int]]:
    """For each line: where it starts, where its content ends, where its line break ends."""
    spans, start = [], 0
    for m in re.finditer(r"\r?\n", text):
        spans.append((start, m.start(), m.end()))
        start = m.end()
    return spans + ([(start, len(text), len(text))] if start < len(text) else [])


def line_texts(text: str) -> list[str]:
    """The lines of line_spans, without their breaks: split in one call, several times faster."""
    lines = re.split(r"\r?\n", text)
    return lines[:-1] if lines[-1] == "" else lines  # a last break ends a line, starts none


def split_lines(old: str) -> list[str]:
    """old's lines; a line break at the very end ends the last line, not starting a new one."""
    return re.split(r"\r?\n", re.sub(r"\r?\n\Z", "", old))


def line_matches(text: str, old: str) -> list[tuple[int, int, str, str]]:  # start, end, indents
    """Whole-line runs equal to old's lines but for trailing whitespace and a common indent."""
    wanted, ends_with_break = split_lines(old), old.endswith("\n")
    model = common_indent(wanted)
    wanted_dedented = dedent(wanted, model)
    spans, found = line_spans(text), []
    # A match keeps each line's stripped content, so comparing that first is a cheap filter.
    content = [text[start:end].strip() for start, end, _ in spans]
    wanted_content = [line.strip() for line in wanted]
    for i in range(len(spans) - len(wanted) + 1):
        if content[i] != wanted_content[0] or content[i : i + len(wanted)] != wanted_content:
            continue
        window = spans[i : i + len(wanted)]
        _, last_content_end, last_end = window[-1]
        if ends_with_break and last_end == last_content_end:
            continue  # old ends with a line break and this window's last line has none
        have = [text[start:end] for start, end, _ in window]
        file = common_indent(have)
        if wanted_dedented == dedent(have, file):
            end = last_end if ends_with_break else last_content_end
            found.append((window[0][0], end, model, file))
    return found


def common_indent(lines: list[str]) -> str:
    indents = [line[: len(line) - len(line.lstrip())] for line in lines if line.strip()]
    return os.path.commonprefix(indents) if indents else ""


def dedent(lines: list[str], indent: str) -> list[str]:
    return [line.rstrip()[len(indent) :] if line.strip() else "" for line in lines]


def reindent(new: str, model: str, file: str) -> str:
    """Move each line of new by the shift that turns the model's indentation into the file's."""

    def shift(line: str) -> str:
        if not line.strip():
            return line  # blank lines are written exactly as given
        if line.startswith(model):
            return file + line[len(model) :]
        if file.startswith(model):  # the file is deeper: add the extra
            return file[len(model) :] + line
        if model.startswith(file):  # the model was deeper: remove what the line has of the extra
            return line[len(os.path.commonprefix([line, model[len(file) :]])) :]
        return line

    return "".join(shift(line) for line in re.findall(r"[^\n]*\n|[^\n]+", new))


LINE_NUMBER = re.compile(r"^ *(\d+)\t", re.MULTILINE)  # read_file prints f"{n:>6}\t{line}"


def without_line_numbers(old: str, new: str) -> tuple[str, str] | None:
    """old and new with read_file's `{n:>6}<TAB>` prefixes removed, if every line of old has one."""
    numbers = [LINE_NUMBER.match(line) for line in old.split("\n") if line.removesuffix("\r")]
    if not all(numbers) or any(b <= a for a, b in pairwise(int(m.group(1)) for m in numbers if m)):
        return None  # pasted line numbers are on every line and only ever go up
    old, new = LINE_NUMBER.sub("", old), LINE_NUMBER.sub("", new)
    return (old, new) if old.strip() else None


# Looking for old_string's first line compares it with every line of the file: about 70 us a line,
# so a file of a million lines would take over a minute.
HINT_LINES = 20_000


def no_match(text: str, old: str, shown: str) -> str:
    """Nothing matched: show the lines most like old (found by its first line), if any are."""
    head = f"old_string was not found in {shown}; nothing was changed."
    lines, wanted = line_texts(text), split_lines(old)
    if len(lines) > HINT_LINES:
        return head + (f" The file has {len(lines):,} lines, too many to look for the closest "
                       "text: grep for one line of old_string to see where it is, and read there.")
    first = next(i for i, line in enumerate(wanted) if line.strip())
    stripped = [line.strip() for line in lines]
    close = difflib.get_close_matches(wanted[first].strip(), stripped, n=1, cutoff=0.6)
    if not close:
        return head + " Nothing in the file resembles it: read the file to see its current content."
    start = max(0, stripped.index(close[0]) - first)
    block = lines[start : start + len(wanted)]  # no longer than the old_string the model just sent
    span = f"lines {start + 1}-{start + len(block)}" if len(block) > 1 else f"line {start + 1}"
    return (f"{head} The closest text is {span} ({likeness(block, wanted):.0%} similar):\n"
            + "\n".join(block) + "\nCopy the text exactly as it is in the file (without "
            "read_file's line numbers) and try again.")


def likeness(block: list[str], wanted: list[str]) -> float:
    """How alike two runs of lines are, 0 to 1, compared line against line: compared as two
    whole texts, character by character, 50 lines take a third of a second and 400 two minutes."""
    pairs = list(zip(block, wanted, strict=False))  # the file may end before old_string does
    matched = sum(difflib.SequenceMatcher(None, a, b).ratio() * (len(a) + len(b)) for a, b in pairs)
    # old_string's lines past the file's end match nothing, and count
    total = sum(len(a) + len(b) for a, b in pairs) + sum(map(len, wanted[len(block):]))
    return matched / total if total else 1.0
