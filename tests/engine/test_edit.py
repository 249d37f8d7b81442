"""edit_file: exact first, a narrow tolerant cascade only when one place matches, the file's bytes kept."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from corecoder.tool import ToolError, problems
from corecoder.tools.edit import EditFile
from corecoder.workspace import Workspace


def edit(tmp_path: Path, content: bytes, **args) -> tuple[str, bytes]:
    """Write `content` to f.txt, run edit_file on it, return (result, the file's bytes after)."""
    target = tmp_path / "f.txt"
    target.write_bytes(content)
    result = EditFile().run(Workspace(cwd=tmp_path), path="f.txt", **args)
    return result, target.read_bytes()


def refused(tmp_path: Path, content: bytes, **args) -> str:
    """Run an edit that must fail; check the file is byte-for-byte untouched; return the message."""
    target = tmp_path / "f.txt"
    target.write_bytes(content)
    with pytest.raises(ToolError) as caught:
        EditFile().run(Workspace(cwd=tmp_path), path="f.txt", **args)
    assert target.read_bytes() == content
    return str(caught.value)


# --- the tool's face -----------------------------------------------------------------------------


def test_the_schema_requires_path_old_and_new_and_rejects_unknown_arguments():
    tool = EditFile()
    assert tool.name == "edit_file" and tool.mutating is True
    assert problems(tool.parameters, {"path": "a", "old_string": "b"}) == [
        "missing required argument 'new_string'"
    ]
    extra = {"path": "a", "old_string": "b", "new_string": "c", "force": True}
    assert problems(tool.parameters, extra)[0].startswith("unexpected argument 'force'")
    assert problems(tool.parameters, {"path": "a", "old_string": "b", "new_string": "c", "replace_all": 1})


# --- exact matches ----------------------------------------------------------------------------------


def test_an_exact_unique_match_is_replaced_and_nothing_else_changes(tmp_path):
    result, after = edit(tmp_path, b"a = 1\nb = 2\nc = 3\n", old_string="b = 2", new_string="b = 20")
    assert after == b"a = 1\nb = 20\nc = 3\n"
    assert result.splitlines()[0] == "Edited f.txt: replaced 1 occurrence at line 2."


def test_the_result_is_a_unified_diff_naming_the_path_relative_to_the_workspace(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("def f():\n    return 1\n\n\nprint(f())\n")
    result = EditFile().run(
        Workspace(cwd=tmp_path), path="src/app.py", old_string="return 1", new_string="return 2"
    )
    assert result.splitlines()[1:] == [
        "--- a/src/app.py",
        "+++ b/src/app.py",
        "@@ -1,5 +1,5 @@",
        " def f():",
        "-    return 1",
        "+    return 2",
        " ",
        " ",
        " print(f())",
    ]


def test_text_that_occurs_twice_is_refused_with_the_count_and_the_lines(tmp_path):
    message = refused(tmp_path, b"x = 1\ny = 2\nx = 1\n", old_string="x = 1", new_string="x = 9")
    assert "occurs 2 times" in message and "lines 1, 3" in message
    assert "more surrounding lines" in message and "replace_all" in message


def test_overlapping_occurrences_count_as_ambiguous(tmp_path):
    message = refused(tmp_path, b"aaa\n", old_string="aa", new_string="b")
    assert "occurs 2 times" in message


def test_replace_all_replaces_every_occurrence_and_says_how_many(tmp_path):
    result, after = edit(
        tmp_path, b"x = 1\ny = 2\nx = 1\nx = 1\n", old_string="x = 1", new_string="x = 9", replace_all=True
    )
    assert after == b"x = 9\ny = 2\nx = 9\nx = 9\n"
    assert result.splitlines()[0] == "Edited f.txt: replaced 3 occurrences at lines 1, 3, 4."


def test_replace_all_with_a_single_occurrence_replaces_just_that_one(tmp_path):
    _, after = edit(tmp_path, b"x = 1\n", old_string="x = 1", new_string="x = 2", replace_all=True)
    assert after == b"x = 2\n"


# --- bounds: a big edit takes time in proportion to the file (issue #38, class 10) ----------------


def naive_lines_of(text: str, places) -> str:
    """lines_of as first written: each place's line counted from the top."""
    lines = list(dict.fromkeys(str(text.count("\n", 0, start) + 1) for start, _, _ in places))
    return ", ".join(lines[:10]) + (", ..." if len(lines) > 10 else "")


# --- pitfalls users of peer tools hit (anchors.md, "Search/replace edits") --------------------------


def test_tabs_in_the_file_are_kept_and_new_lines_get_the_files_tabs_when_the_model_shifts_indentation(
    tmp_path,
):
    content = b"class A:\n\tdef f(self):\n\t\treturn 1\n"
    # The model dropped one level of tabs when it copied the method out of the class.
    result, after = edit(
        tmp_path,
        content,
        old_string="def f(self):\n\treturn 1\n",
        new_string="def f(self):\n\treturn 2\n\ndef g(self):\n\tpass\n",
    )
    assert after == b"class A:\n\tdef f(self):\n\t\treturn 2\n\n\tdef g(self):\n\t\tpass\n"
    assert "shifting the indentation" in result


def test_an_exact_edit_of_a_tab_indented_file_keeps_every_tab(tmp_path):
    _, after = edit(tmp_path, b"if x:\n\tcall(a,\tb)\n", old_string="a,\tb", new_string="a,\tc")
    assert after == b"if x:\n\tcall(a,\tc)\n"


def test_a_crlf_file_edited_with_lf_text_keeps_its_crlf_endings(tmp_path):
    content = b"def f():\r\n    return 1\r\n\r\nf()\r\n"
    result, after = edit(
        tmp_path,
        content,
        old_string="def f():\n    return 1\n",
        new_string="def f():\n    x = 2\n    return x\n",
    )
    assert after == b"def f():\r\n    x = 2\r\n    return x\r\n\r\nf()\r\n"
    assert "line endings" in result


def test_a_match_that_would_cut_a_crlf_in_half_is_not_used(tmp_path):
    # "\nb" occurs inside "a\r\nb"; replacing it there would strand the "\r".
    _, after = edit(tmp_path, b"a\r\nb\r\n", old_string="\nb", new_string="\nc")
    assert after == b"a\r\nc\r\n"


def test_new_lines_inserted_into_a_crlf_file_get_crlf_even_on_an_exact_match(tmp_path):
    _, after = edit(tmp_path, b"a\r\nb\r\n", old_string="a", new_string="a\nand more")
    assert after == b"a\r\nand more\r\nb\r\n"


def test_line_number_prefixes_pasted_from_read_file_are_stripped_from_old_and_new(tmp_path):
    content = b"import os\n\ndef main():\n    print('hi')\n"
    old = "     3\tdef main():\n     4\t    print('hi')\n"
    new = "     3\tdef main():\n     4\t    print('hello')\n"
    result, after = edit(tmp_path, content, old_string=old, new_string=new)
    assert after == b"import os\n\ndef main():\n    print('hello')\n"
    assert "line numbers" in result


def test_a_file_whose_lines_really_start_with_numbers_and_tabs_is_matched_exactly(tmp_path):
    content = b"id\tname\n     1\tann\n     2\tbob\n"
    result, after = edit(tmp_path, content, old_string="     2\tbob", new_string="     2\tbo")
    assert after == b"id\tname\n     1\tann\n     2\tbo\n"
    assert "tolerant" not in result


@pytest.mark.parametrize("old", ["     1\tfoo\nbar", "     2\tfoo\n     1\tbar"])
def test_line_number_prefixes_are_stripped_only_when_every_line_has_one_and_they_count_up(tmp_path, old):
    assert "not found" in refused(tmp_path, b"foo\nbar\n", old_string=old, new_string="x")


def test_line_number_prefixes_on_old_only_leave_an_unnumbered_new_string_alone(tmp_path):
    content = b"a\nb\nc\n"
    _, after = edit(tmp_path, content, old_string="     2\tb\n", new_string="B1\nB2\n")
    assert after == b"a\nB1\nB2\nc\n"


def test_retyped_text_that_matches_nowhere_is_refused_with_the_closest_real_lines(tmp_path):
    content = b"import sys\n\ndef total(items):\n    return sum(i.price for i in items)\n\nprint(total([]))\n"
    message = refused(
        tmp_path,
        content,
        old_string="def totl(items):\n    return sum(i.prices for i in items)",
        new_string="def total(items):\n    return 0",
    )
    assert "not found in f.txt" in message
    assert "lines 3-4" in message
    assert "def total(items):\n    return sum(i.price for i in items)\n" in message


def test_text_resembling_nothing_in_the_file_says_so_instead_of_showing_a_random_block(tmp_path):
    message = refused(tmp_path, b"alpha\nbeta\n", old_string="zzzzqqqq", new_string="x")
    assert "Nothing in the file resembles it" in message


@pytest.mark.parametrize("old", ["", " ", "\n", "\t\n  \n", "\r\n"])
def test_an_empty_or_whitespace_only_old_string_is_refused_and_the_file_is_untouched(tmp_path, old):
    message = refused(tmp_path, b"a\n\n  b\n", old_string=old, new_string="X")
    assert "empty or only whitespace" in message


def test_pasted_line_numbers_with_nothing_after_them_do_not_count_as_a_search_string(tmp_path):
    message = refused(tmp_path, b"a\n\nb\n", old_string="     2\t\n", new_string="x\n")
    assert "not found" in message


def test_the_replacement_text_is_written_exactly_without_stripping_spaces_or_newlines(tmp_path):
    new = "\n\n   padded   \t\n\n"
    _, after = edit(tmp_path, b"start\nMARK\nend\n", old_string="MARK", new_string=new)
    assert after == b"start\n" + new.encode() + b"\nend\n"


def test_the_final_newline_survives_an_edit_of_the_last_line(tmp_path):
    _, after = edit(tmp_path, b"one\ntwo\n", old_string="two", new_string="three")
    assert after == b"one\nthree\n"


def test_a_file_without_a_final_newline_does_not_gain_one(tmp_path):
    _, after = edit(tmp_path, b"one\ntwo", old_string="two", new_string="three")
    assert after == b"one\nthree"
    # Nor via a tolerant step that matches whole lines.
    _, after = edit(tmp_path, b"one\n  two  ", old_string="    two", new_string="    three")
    assert after == b"one\n  three"


def test_a_tolerant_match_never_adds_the_final_newline_a_file_lacks(tmp_path):
    # old ends with a line break; the file's last line has none, so that line is not a match.
    message = refused(tmp_path, b"one  \ntwo", old_string="one\ntwo\n", new_string="one\nthree\n")
    assert "not found" in message


def test_a_file_with_mixed_line_endings_changes_only_where_it_was_edited(tmp_path):
    content = b"crlf 1\r\ncrlf 2\r\nlf 3\ncrlf 4\r\nlf 5\ncrlf 6\r\n"
    _, after = edit(tmp_path, content, old_string="lf 3\n", new_string="lf 3\nnew line\n")
    assert after == b"crlf 1\r\ncrlf 2\r\nlf 3\r\nnew line\r\ncrlf 4\r\nlf 5\ncrlf 6\r\n"
    # Every line outside the replaced text keeps its exact ending, including the LF ones.
    assert after.endswith(b"crlf 4\r\nlf 5\ncrlf 6\r\n") and after.startswith(b"crlf 1\r\ncrlf 2\r\n")


def test_a_utf8_bom_is_kept_and_is_not_part_of_the_text_that_is_matched(tmp_path):
    bom = b"\xef\xbb\xbf"
    _, after = edit(tmp_path, bom + b"first\nsecond\n", old_string="first\n", new_string="1st\n")
    assert after == bom + b"1st\nsecond\n"


def test_trailing_whitespace_the_model_dropped_still_finds_the_line(tmp_path):
    result, after = edit(
        tmp_path, b"x = 1   \ny = 2\t\nz = 3\n", old_string="x = 1\ny = 2\n", new_string="x = 1\n"
    )
    assert after == b"x = 1\nz = 3\n"
    assert "trailing whitespace" in result


def test_a_block_indented_less_than_in_the_file_is_reindented_line_by_line(tmp_path):
    content = b"class A:\n    def f(self):\n        if x:\n            return 1\n"
    old = "def f(self):\n    if x:\n        return 1\n"
    new = "def f(self):\n    if x:\n        return 2\n    return 0\n"
    _, after = edit(tmp_path, content, old_string=old, new_string=new)
    assert after == b"class A:\n    def f(self):\n        if x:\n            return 2\n        return 0\n"


def test_a_block_indented_more_than_in_the_file_is_shifted_back(tmp_path):
    content = b"if a:\n  b()\nc()\n"
    _, after = edit(
        tmp_path, content, old_string="    if a:\n      b()\n", new_string="    if a:\n      d()\n"
    )
    assert after == b"if a:\n  d()\nc()\n"


def test_new_lines_outdented_past_the_models_block_keep_their_relative_indentation(tmp_path):
    # The model is 4 spaces shallower than the file and adds a method at its own top level.
    content = b"class A:\n        def f(self):\n            pass\n"
    old = "    def f(self):\n        pass\n"
    new = "    def f(self):\n        pass\ndef g(self):\n    pass\n"
    _, after = edit(tmp_path, content, old_string=old, new_string=new)
    assert after == b"class A:\n        def f(self):\n            pass\n    def g(self):\n        pass\n"
    # And 2 spaces deeper than the file, with a line outdented below its block: it moves left by 2.
    _, after = edit(
        tmp_path,
        b"if a:\n  b()\nc()\n",
        old_string="    if a:\n      b()\n",
        new_string="    if a:\n      b()\n  d()\n",
    )
    assert after == b"if a:\n  b()\nd()\nc()\n"


# --- a tolerant step never guesses --------------------------------------------------------------------


def test_a_tolerant_match_in_two_places_is_refused_not_guessed(tmp_path):
    content = b"if a:\r\n    go()\r\nif b:\r\n    go()\r\n"
    message = refused(tmp_path, content, old_string="    go()\n", new_string="    stop()\n")
    assert "2 places" in message and "line endings" in message and "lines 2, 4" in message


def test_an_indentation_shift_matching_two_blocks_is_refused(tmp_path):
    content = b"def f():\n    x = 1\n    y = 2\ndef g():\n        x = 1\n        y = 2\n"
    message = refused(tmp_path, content, old_string="x = 1\ny = 2\n", new_string="x = 3\ny = 4\n")
    assert "2 places" in message and "indentation" in message


def test_replace_all_does_not_extend_to_tolerant_matches(tmp_path):
    content = b"go()  \nstay()\ngo()  \nstay()\n"
    message = refused(
        tmp_path, content, old_string="go()\nstay()", new_string="run()\nstay()", replace_all=True
    )
    assert "2 places" in message and "replace_all applies only to exact matches" in message


# --- refusals -------------------------------------------------------------------------------------------


def test_identical_old_and_new_strings_are_refused_as_a_no_op(tmp_path):
    assert "identical" in refused(tmp_path, b"a\n", old_string="a", new_string="a")


def test_an_edit_that_only_changes_line_endings_the_file_would_not_keep_is_a_no_op(tmp_path):
    message = refused(tmp_path, b"a\nb\n", old_string="a\nb", new_string="a\r\nb")
    assert "unchanged" in message


def test_a_missing_file_is_refused_with_a_pointer_to_write_file(tmp_path):
    with pytest.raises(ToolError, match="write_file"):
        EditFile().run(Workspace(cwd=tmp_path), path="nope.py", old_string="a", new_string="b")
    assert not (tmp_path / "nope.py").exists()


def test_a_binary_file_is_refused_and_left_untouched(tmp_path):
    message = refused(tmp_path, b"\x89PNG\r\n\x1a\n\x00\x00data", old_string="data", new_string="x")
    assert "binary" in message


def test_a_file_that_is_not_utf8_is_refused_rather_than_corrupted(tmp_path):
    message = refused(tmp_path, "café = 1\n".encode("latin-1"), old_string="= 1", new_string="= 2")
    assert "not UTF-8" in message and "0xe9" in message


# --- the round trip ----------------------------------------------------------------------------------


def occurrences(haystack: str, needle: str) -> int:
    """How many places `needle` starts at, overlaps included."""
    return sum(haystack.startswith(needle, i) for i in range(len(haystack)))


@st.composite
def edit_cases(draw):
    ending = draw(st.sampled_from(["\n", "\r\n"]))
    lines = draw(st.lists(st.text(alphabet="abcdefg \t(é)", max_size=10), min_size=1, max_size=8))
    text = ending.join(lines) + (ending if draw(st.booleans()) else "")
    assume(text)
    start = draw(st.integers(0, len(text) - 1))
    end = draw(st.integers(start + 1, len(text)))
    # Cut between characters, never through a CRLF pair (half a line break is not a line).
    assume(not (text[start] == "\n" and text[start - 1 : start] == "\r"))
    assume(not (text[end - 1] == "\r" and text[end : end + 1] == "\n"))
    # The model writes its replacement with LF line breaks, whatever the file uses.
    replacement = draw(st.text(alphabet="xyzab \t\n", min_size=1, max_size=12))
    return text, text[start:end], replacement, ending, draw(st.booleans())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(edit_cases())
def test_an_edit_and_its_reverse_restore_the_original_bytes(tmp_path_factory, case):
    text, original, replacement, ending, bom = case
    assume(original.strip() and replacement.strip())
    assume(occurrences(text, original) == 1)
    # What the file will hold: the replacement with the file's line breaks (if the file has any).
    written = replacement.replace("\n", ending) if "\n" in text else replacement
    after_first = text.replace(original, written, 1)
    assume(written != original and occurrences(after_first, written) == 1)

    tmp_path = tmp_path_factory.mktemp("roundtrip")
    content = (b"\xef\xbb\xbf" if bom else b"") + text.encode()
    _, middle = edit(tmp_path, content, old_string=original, new_string=replacement)
    assert middle == (b"\xef\xbb\xbf" if bom else b"") + after_first.encode()
    ws, tool = Workspace(cwd=tmp_path), EditFile()
    tool.run(ws, path="f.txt", old_string=replacement, new_string=original)
    assert (tmp_path / "f.txt").read_bytes() == content


def test_an_edit_through_a_symlink_changes_the_target_and_keeps_the_link(tmp_path):
    (tmp_path / "real.txt").write_text("alpha\nbeta\n")
    (tmp_path / "link.txt").symlink_to("real.txt")
    EditFile().run(Workspace(cwd=tmp_path), path="link.txt", old_string="beta", new_string="gamma")
    assert (tmp_path / "link.txt").is_symlink()
    assert (tmp_path / "real.txt").read_text() == "alpha\ngamma\n"


def test_a_directory_is_refused_with_a_hint(tmp_path):
    (tmp_path / "src").mkdir()
    with pytest.raises(ToolError, match="is a directory"):
        EditFile().run(Workspace(cwd=tmp_path), path="src", old_string="a", new_string="b")


def test_the_hint_counts_the_lines_of_old_string_that_run_past_the_end_of_the_file():
    from corecoder.tools.edit import no_match

    hint = no_match("x = 1\n", "x = 1\ny = 2\nz = 3\n", "a.py")
    assert "The closest text is line 1 (50% similar)" in hint  # not 100%: two lines match nothing
