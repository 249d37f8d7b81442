"""edit_file: replace one exact piece of a file, forgiving only slips that still point to one place.

Models retype what they read, and retyping drifts: CRLF comes back as LF, trailing spaces vanish,
a block is re-indented, read_file's line numbers get pasted in. Guessing is worse than failing, so an
exact, unique match comes first, then a short cascade of tolerant matchers, each accepted only when
it finds exactly one place. The file keeps its line endings, tabs, BOM and final newline.
"""

from __future__ import annotations

import difflib
import os
import re
from itertools import pairwise
from pathlib import Path

from ..files import atomic_write, looks_binary
from ..workspace import Workspace
from .base import Tool, ToolError

BOM = "\ufeff"
LINE_NUMBER = re.compile(r"^ *(\d+)\t", re.MULTILINE)  # read_file prints f"{n:>6}\t{line}"
MORE_CONTEXT = "Include more surrounding lines so old_string matches exactly one place"

Place = tuple[int, int, str]  # start, end, the text to put there


class EditFile(Tool):
    name = "edit_file"
    description = (
        "Replace text in a file. old_string must match exactly one place (copy it from read_file without "
        "the line numbers, with enough surrounding lines to be unique) unless replace_all is true. Slips "
        "(CRLF, trailing spaces, shifted indentation, pasted line numbers) are forgiven only if one place "
        "still matches. Returns a diff. To create or rewrite a whole file, use write_file."
    )
    parameters = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File to edit."},
            "old_string": {"type": "string", "description": "Exact text to replace (unique in the file)."},
            "new_string": {"type": "string", "description": "Text to put in its place."},
            "replace_all": {"type": "boolean", "description": "Replace every exact match. Default false."},
        },
        "required": ["path", "old_string", "new_string"],
        "additionalProperties": False,
    }
    mutating = True

    def run(self, ws: Workspace, **args) -> str:
        old, new = args["old_string"], args["new_string"]
        if not old.strip():
            # An empty pattern matches everywhere; peers that allowed it corrupted files.
            raise ToolError(
                "old_string is empty or only whitespace, so it cannot identify one place. Give the exact "
                "text to replace with a few surrounding lines. To create or overwrite a file, use write_file."
            )
        if old == new:
            raise ToolError("old_string and new_string are identical, so there is nothing to change.")
        path = ws.resolve(args["path"])
        shown = ws.show(path)
        text, has_bom = _read_text(path, shown)
        places, how = _locate(text, old, new, args.get("replace_all", False), shown)
        after = _apply(text, places)
        if after == text:
            raise ToolError(f"That edit would leave {shown} unchanged; nothing was written.")
        atomic_write(path, (BOM if has_bom else "") + after)
        count = "1 occurrence at line" if len(places) == 1 else f"{len(places)} occurrences at lines"
        summary = f"Edited {shown}: replaced {count} {_lines_of(text, places)}"
        summary += f" (tolerant match: {how})." if how else "."
        return summary + "\n" + _diff(text, after, shown)


def _read_text(path: Path, shown: str) -> tuple[str, bool]:
    """The file's text without its BOM, and whether it had one."""
    if not path.exists():
        raise ToolError(f"{shown} does not exist. To create a new file, use write_file.")
    if path.is_dir():
        raise ToolError(f"{shown} is a directory; edit_file edits one file (glob lists a directory).")
    data = path.read_bytes()
    if looks_binary(data):
        raise ToolError(f"{shown} looks like a binary file; edit_file only edits text files.")
    has_bom = data.startswith(BOM.encode())
    try:
        return data.decode("utf-8-sig"), has_bom  # utf-8-sig drops a leading BOM
    except UnicodeDecodeError as e:
        bad = f"byte {e.object[e.start]:#04x} at offset {e.start}"
        raise ToolError(f"{shown} is not UTF-8 ({bad}); edit_file leaves such files untouched.") from None


def _locate(text: str, old: str, new: str, replace_all: bool, shown: str) -> tuple[list[Place], str]:
    """Where to edit, and which tolerant step found it ("" for an exact match)."""
    exact = _exact(text, old, new)
    if len(exact) == 1:
        return exact, ""
    if exact and replace_all:
        return _exact(text, old, new, overlapping=False), ""
    if exact:
        raise ToolError(
            f"old_string occurs {len(exact)} times in {shown} (lines {_lines_of(text, exact)}). "
            f"{MORE_CONTEXT}, or set replace_all to true to change all."
        )
    attempts = [("", old, new, TOLERANT)]
    unnumbered = _without_line_numbers(old, new)
    if unnumbered:
        attempts.append(("removing read_file line numbers", *unnumbered, (("", _exact), *TOLERANT)))
    for fix, old_try, new_try, steps in attempts:
        for step_name, step in steps:
            places = step(text, old_try, new_try)
            how = " and ".join(part for part in (fix, step_name) if part)
            if len(places) == 1:
                return places, how
            if places:  # a tolerant match must be unique: never guess between places
                raise ToolError(
                    f"old_string matches no place exactly, and {len(places)} places in {shown} after {how} "
                    f"(lines {_lines_of(text, places)}). {MORE_CONTEXT}"
                    + (" (replace_all applies only to exact matches)." if replace_all else ".")
                )
    raise ToolError(_no_match_message(text, unnumbered[0] if unnumbered else old, shown))


def _exact(text: str, old: str, new: str, overlapping: bool = True) -> list[Place]:
    # To find one place, overlaps count ("aa" is in "aaa" twice); replace_all skips them, like str.replace.
    places, start = [], text.find(old)
    while start != -1:
        places.append((start, start + len(old), new))
        start = text.find(old, start + (1 if overlapping else len(old)))
    return _whole_line_breaks(text, places)


def _whole_line_breaks(text: str, places: list[Place]) -> list[Place]:
    """Drop places that cut a CRLF in half: replacing there would leave a stray CR or LF."""

    def cuts(i: int) -> bool:
        return i > 0 and text[i - 1 : i + 1] == "\r\n"

    return [(start, end, new) for start, end, new in places if not cuts(start) and not cuts(end)]


def _ignoring_line_endings(text: str, old: str, new: str) -> list[Place]:
    pattern = r"\r?\n".join(re.escape(part) for part in re.split(r"\r?\n", old))
    found = [(m.start(1), m.end(1), new) for m in re.finditer(f"(?=({pattern}))", text)]  # overlaps too
    return _whole_line_breaks(text, found)


def _ignoring_trailing_whitespace(text: str, old: str, new: str) -> list[Place]:
    return [(start, end, new) for start, end, model, file in _line_matches(text, old) if model == file]


def _shifted_indentation(text: str, old: str, new: str) -> list[Place]:
    # Runs after the trailing-whitespace step found nothing, so every match here has a real shift.
    return [(start, end, _reindent(new, model, file)) for start, end, model, file in _line_matches(text, old)]


TOLERANT = (  # (what was forgiven, how to find places), from the narrowest to the widest
    ("ignoring LF vs CRLF line endings", _ignoring_line_endings),
    ("ignoring trailing whitespace", _ignoring_trailing_whitespace),
    ("shifting the indentation to the file's", _shifted_indentation),
)


def _line_spans(text: str) -> list[tuple[int, int, int]]:
    """For each line: where it starts, where its content ends, where its line break ends."""
    spans, start = [], 0
    while start < len(text):
        nl = text.find("\n", start)
        if nl == -1:
            spans.append((start, len(text), len(text)))
            break
        spans.append((start, nl - 1 if nl > start and text[nl - 1] == "\r" else nl, nl + 1))
        start = nl + 1
    return spans


def _line_texts(text: str) -> list[str]:
    return [text[start:end] for start, end, _ in _line_spans(text)]


def _split_lines(old: str) -> list[str]:
    """old's lines; a line break at the very end ends the last line rather than starting a new one."""
    return re.split(r"\r?\n", old.removesuffix("\n").removesuffix("\r") if old.endswith("\n") else old)


def _line_matches(text: str, old: str) -> list[tuple[int, int, str, str]]:  # start, end, both indents
    """Whole-line runs equal to old's lines but for trailing whitespace and a common indent."""
    wanted, ends_with_break = _split_lines(old), old.endswith("\n")
    model = _common_indent(wanted)
    wanted_dedented = _dedent(wanted, model)
    spans, found = _line_spans(text), []
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
        file = _common_indent(have)
        if wanted_dedented == _dedent(have, file):
            found.append((window[0][0], last_end if ends_with_break else last_content_end, model, file))
    return found


def _common_indent(lines: list[str]) -> str:
    indents = [line[: len(line) - len(line.lstrip())] for line in lines if line.strip()]
    return os.path.commonprefix(indents) if indents else ""


def _dedent(lines: list[str], indent: str) -> list[str]:
    return [line.rstrip()[len(indent) :] if line.strip() else "" for line in lines]


def _reindent(new: str, model: str, file: str) -> str:
    """Move each line of new by the shift that turns the model's indentation into the file's."""
    return "".join(_shift(line, model, file) for line in re.findall(r"[^\n]*\n|[^\n]+", new))


def _shift(line: str, model: str, file: str) -> str:
    if not line.strip():
        return line  # blank lines are written exactly as given
    if line.startswith(model):
        return file + line[len(model) :]
    if file.startswith(model):  # the file is deeper: add the extra
        return file[len(model) :] + line
    if model.startswith(file):  # the model was deeper: remove as much of the extra as the line has
        return line[len(os.path.commonprefix([line, model[len(file) :]])) :]
    return line


def _without_line_numbers(old: str, new: str) -> tuple[str, str] | None:
    """old and new with read_file's `{n:>6}<TAB>` prefixes removed, if every line of old has one."""
    numbers = [LINE_NUMBER.match(line) for line in old.split("\n") if line.removesuffix("\r")]
    if not all(numbers) or any(b <= a for a, b in pairwise(int(m.group(1)) for m in numbers if m)):
        return None  # pasted line numbers are on every line and only ever go up
    old, new = LINE_NUMBER.sub("", old), LINE_NUMBER.sub("", new)
    return (old, new) if old.strip() else None


def _apply(text: str, places: list[Place]) -> str:
    """text with each place replaced; line breaks in the new text take the file's dominant style."""
    crlf = text.count("\r\n")
    ending = None if "\n" not in text else "\r\n" if crlf > text.count("\n") - crlf else "\n"
    out, last = [], 0
    for start, end, new in places:
        out += [text[last:start], new if ending is None else re.sub(r"\r?\n", ending, new)]
        last = end
    return "".join(out) + text[last:]


def _lines_of(text: str, places: list[Place]) -> str:
    lines = list(dict.fromkeys(str(text.count("\n", 0, start) + 1) for start, _, _ in places))
    return ", ".join(lines[:10]) + (", ..." if len(lines) > 10 else "")


def _no_match_message(text: str, old: str, shown: str) -> str:
    lines = _line_texts(text)
    wanted = _split_lines(old)
    first, ratio = _closest_block(lines, wanted)
    head = f"old_string was not found in {shown}; nothing was changed."
    if ratio < 0.3:
        return head + " Nothing in the file resembles it: read the file to see its current content."
    block = lines[first : first + len(wanted)]  # no longer than the old_string the model just sent
    span = f"lines {first + 1}-{first + len(block)}" if len(block) > 1 else f"line {first + 1}"
    return (
        f"{head} The closest text is {span} ({ratio:.0%} similar):\n"
        + "\n".join(block)
        + "\nCopy the text exactly as it is in the file (without read_file's line numbers) and try again."
    )


def _closest_block(lines: list[str], wanted: list[str]) -> tuple[int, float]:
    """The start of the len(wanted)-line block most like `wanted`, and its difflib similarity."""
    # difflib on every block takes seconds on a big file: shared trigrams pick 5 blocks to rank.
    size, mine = len(wanted), [_trigrams(line) for line in wanted[:8]]  # where the block starts
    theirs = [_trigrams(line) for line in lines]
    starts = range(max(1, len(lines) - size + 1))
    score = [sum(map(lambda a, b: len(a & b) / len(a | b), mine, theirs[i : i + size])) for i in starts]
    candidates = sorted(starts, key=lambda i: -score[i])[:5]
    matcher = difflib.SequenceMatcher(None, "", "\n".join(wanted), autojunk=False)
    ranked = []
    for i in candidates:
        matcher.set_seq1("\n".join(lines[i : i + size]))
        ranked.append((matcher.ratio(), -i))  # the earliest block wins a tie
    ratio, minus_start = max(ranked)
    return -minus_start, ratio


def _trigrams(line: str) -> set[str]:
    line = line.strip()
    return {line[i : i + 3] for i in range(len(line) - 2)} or {line}


def _diff(before: str, after: str, shown: str) -> str:
    a, b = _line_texts(before), _line_texts(after)  # without line breaks: no \r noise for CRLF files
    return "\n".join(difflib.unified_diff(a, b, f"a/{shown}", f"b/{shown}", lineterm=""))
