"""read_file and write_file: what the model sees, and what lands on disk."""

from __future__ import annotations

import os
import re
import stat

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corecoder import Agent, ScriptedLLM
from corecoder.tool import ToolError, problems
from corecoder.tools import read as read_module
from corecoder.tools.read import MAX_LINE_CHARS, MAX_OUTPUT_CHARS, ReadFile
from corecoder.tools.write import WriteFile
from corecoder.workspace import Workspace


def read(tmp_path, path, **args) -> str:
    return ReadFile().run(Workspace(cwd=tmp_path), path=path, **args)


def write(tmp_path, path, content) -> str:
    return WriteFile().run(Workspace(cwd=tmp_path), path=path, content=content)


def numbered(output: str) -> list[str]:
    """The file lines in a read, with the number prefix and the trailer taken off."""
    return [re.sub(r"^ *\d+\t", "", line, count=1) for line in output.split("\n")[:-1]]


# --- read_file: the format -------------------------------------------------------------------


def test_each_line_is_its_number_right_aligned_in_six_then_a_tab_then_the_text(tmp_path):
    (tmp_path / "a.py").write_text("import os\n\n    x = 1\n")
    assert read(tmp_path, "a.py") == "     1\timport os\n     2\t\n     3\t    x = 1\n(end of file, 3 lines)"


def test_stripping_the_number_prefix_gives_back_the_file_exactly(tmp_path):
    text = "def f():\n\treturn '1\t2'\n    \n# 42\tx\n"
    (tmp_path / "a.py").write_text(text)
    assert "\n".join(numbered(read(tmp_path, "a.py"))) + "\n" == text


def test_a_last_line_without_a_newline_is_still_a_line(tmp_path):
    (tmp_path / "a.txt").write_text("one\ntwo")
    assert read(tmp_path, "a.txt") == "     1\tone\n     2\ttwo\n(end of file, 2 lines)"


def test_a_file_holding_only_a_newline_has_one_empty_line(tmp_path):
    (tmp_path / "a.txt").write_text("\n")
    assert read(tmp_path, "a.txt") == "     1\t\n(end of file, 1 line)"


def test_crlf_endings_do_not_leave_carriage_returns_in_the_lines(tmp_path):
    (tmp_path / "a.txt").write_bytes(b"one\r\ntwo\r\n")
    out = read(tmp_path, "a.txt")
    assert "\r" not in out
    assert numbered(out) == ["one", "two"]


def test_form_feeds_and_unicode_separators_do_not_start_new_lines(tmp_path):
    # str.splitlines would split these and the numbers would disagree with grep and editors.
    (tmp_path / "a.py").write_text("a\x0cb\nc\u2028d\ne\n")
    out = read(tmp_path, "a.py")
    assert numbered(out) == ["a\x0cb", "c\u2028d", "e"]
    assert out.endswith("(end of file, 3 lines)")


def test_line_numbers_with_more_than_six_digits_stay_separated_by_a_tab(tmp_path):
    (tmp_path / "a.txt").write_text("x\n" * 1_000_001)
    assert read(tmp_path, "a.txt", offset=1_000_001).split("\n")[0] == "1000001\tx"


# --- read_file: windows ----------------------------------------------------------------------


def test_a_window_ends_with_the_offset_to_read_on_from(tmp_path):
    (tmp_path / "a.txt").write_text("".join(f"line {i}\n" for i in range(1, 432)))
    out = read(tmp_path, "a.txt", limit=120)
    assert out.split("\n")[0] == "     1\tline 1"
    assert out.split("\n")[-2] == "   120\tline 120"
    assert out.split("\n")[-1] == "(lines 1-120 of 431; use offset=121 to read on)"


def test_reading_on_from_the_offset_given_continues_without_gap_or_overlap(tmp_path):
    (tmp_path / "a.txt").write_text("".join(f"line {i}\n" for i in range(1, 432)))
    first = read(tmp_path, "a.txt", limit=120)
    offset = int(re.search(r"offset=(\d+)", first).group(1))
    second = read(tmp_path, "a.txt", offset=offset, limit=120)
    assert second.split("\n")[0] == "   121\tline 121"
    assert second.split("\n")[-1] == "(lines 121-240 of 431; use offset=241 to read on)"


def test_the_last_window_says_end_of_file(tmp_path):
    (tmp_path / "a.txt").write_text("".join(f"line {i}\n" for i in range(1, 432)))
    out = read(tmp_path, "a.txt", offset=400)
    assert out.split("\n")[0] == "   400\tline 400"
    assert out.split("\n")[-1] == "(end of file, 431 lines)"


def test_the_default_limit_is_2000_lines(tmp_path):
    (tmp_path / "a.txt").write_text("x\n" * 2500)
    out = read(tmp_path, "a.txt")
    assert out.split("\n")[-1] == "(lines 1-2000 of 2500; use offset=2001 to read on)"
    assert len(out.split("\n")) == 2001


def test_an_offset_on_the_last_line_shows_that_line(tmp_path):
    (tmp_path / "a.txt").write_text("a\nb\nc\n")
    assert read(tmp_path, "a.txt", offset=3) == "     3\tc\n(end of file, 3 lines)"


def test_an_offset_past_the_end_is_refused_with_the_number_of_lines(tmp_path):
    (tmp_path / "a.txt").write_text("a\nb\nc\n")
    with pytest.raises(ToolError, match=r"offset 4 is past the end: a.txt has 3 lines"):
        read(tmp_path, "a.txt", offset=4)


@pytest.mark.parametrize("args", [{"offset": 0}, {"offset": -3}, {"limit": 0}])
def test_an_offset_or_limit_below_one_never_reaches_the_tool_the_schema_refuses_it(tmp_path, args):
    (tmp_path / "a.txt").write_text("a\n")
    agent = Agent(ScriptedLLM([{"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt", **args}}]},
                               "ok"]), [ReadFile()], cwd=tmp_path)
    agent.chat("go")
    assert agent.messages[2]["content"].startswith("bad arguments for read_file: ")
    assert "should be at least 1" in agent.messages[2]["content"]


def test_the_schema_rejects_an_offset_of_zero_and_unknown_arguments():
    schema = ReadFile().parameters
    assert problems(schema, {"path": "a", "offset": 0})
    assert problems(schema, {"path": "a", "lines": 5})
    assert problems(schema, {"offset": 2})
    assert not problems(schema, {"path": "a", "offset": 2, "limit": 10})


# --- read_file: long lines and long output ---------------------------------------------------


def test_a_huge_line_is_cut_with_a_marker_giving_its_length(tmp_path):
    (tmp_path / "min.js").write_text("a" * 50_000 + "\nshort\n")
    out = read(tmp_path, "min.js")
    first, second = out.split("\n")[:2]
    assert re.fullmatch(r" {5}1\ta+\[\.\.\. 48,031 characters cut \.\.\.\]", first)
    assert len(first) == len("     1\t") + MAX_LINE_CHARS
    assert second == "     2\tshort"
    assert out.endswith("(end of file, 2 lines)")


def test_a_line_of_exactly_the_limit_is_not_cut(tmp_path):
    (tmp_path / "a.txt").write_text("b" * MAX_LINE_CHARS + "\n")
    assert read(tmp_path, "a.txt") == "     1\t" + "b" * MAX_LINE_CHARS + "\n(end of file, 1 line)"


def test_many_long_lines_stop_the_window_early_with_an_exact_offset_to_read_on(tmp_path):
    lines = [f"{i:05d}" + "y" * 1000 for i in range(1, 101)]
    (tmp_path / "wide.txt").write_text("\n".join(lines) + "\n")
    out = read(tmp_path, "wide.txt")
    assert len(out) <= MAX_OUTPUT_CHARS + 100
    shown = numbered(out)
    assert shown == lines[: len(shown)] and 0 < len(shown) < 100
    assert out.split("\n")[-1] == f"(lines 1-{len(shown)} of 100; use offset={len(shown) + 1} to read on)"


def test_a_window_always_shows_at_least_one_line_however_small_the_budget(tmp_path, monkeypatch):
    monkeypatch.setattr(read_module, "MAX_OUTPUT_CHARS", 10)
    (tmp_path / "a.txt").write_text(("z" * 100 + "\n") * 3)
    out = read(tmp_path, "a.txt", offset=2)
    assert out.split("\n")[0].startswith("     2\tzzz")
    assert out.split("\n")[-1] == "(lines 2-2 of 3; use offset=3 to read on)"


# --- read_file: a file past what is read at once ---------------------------------------------

# What each line of a file may be made of: CRLF and lone CRs, a BOM, bytes that are not UTF-8,
# characters of one to four bytes, and lines past MAX_LINE_CHARS of both kinds.
PIECES = [b"a", "\u00e9".encode(), "\u4e16".encode(), b"\r", b"\n", b"\r\n", b"\xef\xbb\xbf",
          b"\xff", b"\t", b"x" * 3000, "\U0001F600".encode() * 2100]


@settings(max_examples=150, deadline=None)
@given(data=st.lists(st.sampled_from(PIECES), max_size=30).map(b"".join),
       offset=st.integers(1, 40), limit=st.integers(1, 40))
def test_a_file_too_big_to_read_at_once_shows_the_same_window_streamed(tmp_path_factory, data,
                                                                       offset, limit):
    """Streamed, line by line, a file shows the lines, numbers, cuts and offset to read on that
    the file read whole shows; only its line count, which would mean reading it all, is left
    out for the size in bytes."""
    root = tmp_path_factory.mktemp("big")
    (root / "f.txt").write_bytes(data)

    def answer() -> str:
        try:
            return ReadFile().run(Workspace(cwd=root), "f.txt", offset, limit)
        except ToolError as e:
            return f"refused: {e}"

    whole = answer()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(read_module, "MAX_READ_BYTES", -1)
        streamed = answer()
    if whole.startswith("f.txt is empty"):
        return  # a file past what is read at once has a line at least
    assert streamed.split("\n")[:-1] == whole.split("\n")[:-1]
    more = re.search(r"use offset=(\d+)", whole)
    assert streamed.split("\n")[-1] == (
        f"(lines {offset}-{int(more[1]) - 1} of a file of {len(data):,} bytes, too big to count "
        f"its lines; use offset={more[1]} to read on)" if more else whole.split("\n")[-1])


def test_offsets_past_the_end_of_a_streamed_file_are_refused_with_its_line_count(tmp_path,
                                                                                  monkeypatch):
    monkeypatch.setattr(read_module, "MAX_READ_BYTES", -1)
    (tmp_path / "a.log").write_text("one\ntwo\nthree")  # a last line without a newline counts
    with pytest.raises(ToolError, match="offset 5 is past the end: a.log has 3 lines"):
        read(tmp_path, "a.log", offset=5)
    assert read(tmp_path, "a.log", offset=3) == "     3\tthree\n(end of file, 3 lines)"


# --- read_file: what is not plain UTF-8 text -------------------------------------------------


def test_a_binary_file_is_refused_with_its_size(tmp_path):
    (tmp_path / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00" + bytes(range(256)) * 10)
    with pytest.raises(ToolError, match=r"logo.png is a binary file \(2,570 bytes\)"):
        read(tmp_path, "logo.png")


def test_bytes_that_are_not_utf8_become_replacement_characters_and_the_rest_reads(tmp_path):
    (tmp_path / "latin1.txt").write_bytes("café\nnaïve\n".encode("latin-1"))
    assert numbered(read(tmp_path, "latin1.txt")) == ["caf\ufffd", "na\ufffdve"]


def test_a_utf8_bom_is_not_shown_as_a_character(tmp_path):
    (tmp_path / "bom.txt").write_bytes(b"\xef\xbb\xbfhello\n")
    assert read(tmp_path, "bom.txt") == "     1\thello\n(end of file, 1 line)"


def test_an_empty_file_says_it_is_empty(tmp_path):
    (tmp_path / "empty.py").write_bytes(b"")
    assert read(tmp_path, "empty.py") == "empty.py is empty (0 bytes)"


def test_a_file_holding_only_a_bom_is_empty_too(tmp_path):
    (tmp_path / "bom.txt").write_bytes(b"\xef\xbb\xbf")
    assert read(tmp_path, "bom.txt") == "bom.txt is empty (3 bytes)"


# --- read_file: paths ------------------------------------------------------------------------


def test_a_directory_is_refused_with_a_pointer_to_glob(tmp_path):
    (tmp_path / "src").mkdir()
    with pytest.raises(ToolError, match=r"src is a directory; use glob"):
        read(tmp_path, "src")


def test_a_missing_file_suggests_similar_names_in_the_same_directory(tmp_path):
    (tmp_path / "src").mkdir()
    for name in ("main.py", "README.md", "setup.cfg"):
        (tmp_path / "src" / name).write_text("x\n")
    with pytest.raises(ToolError) as typo:
        read(tmp_path, "src/mian.py")
    assert str(typo.value) == "no such file: src/mian.py. Similar names: src/main.py"
    with pytest.raises(ToolError, match=r"Similar names: src/README.md$"):
        read(tmp_path, "src/readme.md")


def test_a_missing_file_with_nothing_similar_nearby_suggests_nothing(tmp_path):
    (tmp_path / "zzz.txt").write_text("x\n")
    with pytest.raises(ToolError) as missing:
        read(tmp_path, "main.py")
    assert str(missing.value) == "no such file: main.py"


def test_a_missing_directory_is_named(tmp_path):
    with pytest.raises(ToolError, match=r"no such file: lib/a.py \(the directory lib does not exist\)"):
        read(tmp_path, "lib/a.py")


def test_paths_are_relative_to_the_workspace_and_absolute_paths_work_too(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.txt").write_text("hi\n")
    assert read(tmp_path / "sub", "a.txt") == read(tmp_path, str(tmp_path / "sub" / "a.txt"))
    with pytest.raises(ToolError, match="no such file: nope.txt"):
        read(tmp_path / "sub", "nope.txt")


def test_a_file_is_read_through_a_symlinked_file_and_a_symlinked_directory(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "a.txt").write_text("through\n")
    (tmp_path / "link.txt").symlink_to(tmp_path / "real" / "a.txt")
    (tmp_path / "linkdir").symlink_to(tmp_path / "real")
    assert numbered(read(tmp_path, "link.txt")) == ["through"]
    assert numbered(read(tmp_path, "linkdir/a.txt")) == ["through"]


def test_a_broken_symlink_says_where_it_points(tmp_path):
    (tmp_path / "dangling").symlink_to(tmp_path / "gone.txt")
    with pytest.raises(ToolError, match=r"dangling is a symlink to .*gone.txt, which does not exist"):
        read(tmp_path, "dangling")


def test_a_symlink_to_a_directory_is_refused_like_a_directory(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "linkdir").symlink_to(tmp_path / "real")
    with pytest.raises(ToolError, match="is a directory"):
        read(tmp_path, "linkdir")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_file_is_an_error_the_model_can_read(tmp_path):
    (tmp_path / "secret.txt").write_text("x\n")
    (tmp_path / "secret.txt").chmod(0)
    with pytest.raises(ToolError, match="cannot read secret.txt"):
        read(tmp_path, "secret.txt")


# --- write_file ------------------------------------------------------------------------------


def test_write_creates_missing_parent_directories_and_says_what_it_wrote(tmp_path):
    result = write(tmp_path, "src/pkg/x.py", "a = 1\nb = 2\n")
    assert result == "created src/pkg/x.py: 2 lines (12 bytes)"
    assert (tmp_path / "src/pkg/x.py").read_bytes() == b"a = 1\nb = 2\n"


def test_write_says_overwrote_when_the_file_existed(tmp_path):
    (tmp_path / "x.py").write_text("old\n")
    assert write(tmp_path, "x.py", "new\n") == "overwrote x.py: 1 line (4 bytes)"
    assert (tmp_path / "x.py").read_text() == "new\n"


def test_write_keeps_the_content_byte_for_byte_crlf_and_missing_final_newline_included(tmp_path):
    write(tmp_path, "win.txt", "a\r\nb\r\nc")
    assert (tmp_path / "win.txt").read_bytes() == b"a\r\nb\r\nc"


def test_write_counts_lines_like_an_editor_and_bytes_as_utf8(tmp_path):
    assert write(tmp_path, "a.txt", "") == "created a.txt: 0 lines (0 bytes)"
    assert write(tmp_path, "b.txt", "no newline") == "created b.txt: 1 line (10 bytes)"
    assert write(tmp_path, "c.txt", "héllo 世界\n") == "created c.txt: 1 line (14 bytes)"


def test_writing_to_an_existing_directory_is_refused_and_changes_nothing(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "keep.py").write_text("x\n")
    with pytest.raises(ToolError, match="src is a directory"):
        write(tmp_path, "src", "oops")
    assert (tmp_path / "src").is_dir() and (tmp_path / "src" / "keep.py").read_text() == "x\n"


def test_a_path_ending_in_a_slash_is_taken_as_a_directory_and_refused(tmp_path):
    with pytest.raises(ToolError, match="is a directory"):
        write(tmp_path, "newdir/", "oops")
    assert not (tmp_path / "newdir").exists()


def test_writing_under_a_file_as_if_it_were_a_directory_is_a_clear_error(tmp_path):
    (tmp_path / "notes.txt").write_text("x\n")
    with pytest.raises(ToolError, match="cannot write notes.txt/a.txt"):
        write(tmp_path, "notes.txt/a.txt", "y")
    assert (tmp_path / "notes.txt").read_text() == "x\n"


def test_writing_through_a_symlink_changes_its_target_and_keeps_the_link(tmp_path):
    (tmp_path / "real.txt").write_text("old\n")
    (tmp_path / "link.txt").symlink_to(tmp_path / "real.txt")
    assert write(tmp_path, "link.txt", "new\n") == "overwrote link.txt: 1 line (4 bytes)"
    assert (tmp_path / "link.txt").is_symlink()
    assert (tmp_path / "real.txt").read_text() == "new\n"


def test_writing_through_a_symlinked_directory_lands_in_the_real_one(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "linkdir").symlink_to(tmp_path / "real")
    write(tmp_path, "linkdir/a.txt", "x\n")
    assert (tmp_path / "real" / "a.txt").read_text() == "x\n"


def test_write_keeps_an_executable_script_executable_and_leaves_no_temp_files(tmp_path):
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    write(tmp_path, "run.sh", "#!/bin/sh\necho hi\n")
    assert stat.S_IMODE(script.stat().st_mode) == 0o755
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.sh"]


def test_a_written_file_reads_back_line_for_line(tmp_path):
    text = "first\n\tindented\nlast"
    write(tmp_path, "a.txt", text)
    assert numbered(read(tmp_path, "a.txt")) == text.split("\n")


def test_write_is_mutating_and_read_is_not():
    assert WriteFile().mutating is True and WriteFile().name == "write_file"
    assert ReadFile().mutating is False and ReadFile().name == "read_file"
    assert not problems(WriteFile().parameters, {"path": "a", "content": ""})
    assert problems(WriteFile().parameters, {"path": "a"})


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="only root can give a file away")
def test_a_write_keeps_the_files_owner(tmp_path):
    target = tmp_path / "theirs.txt"
    target.write_text("old")
    os.chown(target, 1234, 5678)
    WriteFile().run(Workspace(cwd=tmp_path), path="theirs.txt", content="new")
    assert (target.stat().st_uid, target.stat().st_gid, target.read_text()) == (1234, 5678, "new")


def test_a_new_file_gets_the_permissions_the_umask_gives_as_touch_would(tmp_path):
    import subprocess

    from corecoder.files import UMASK

    subprocess.run(["touch", str(tmp_path / "touched")], check=True)
    WriteFile().run(Workspace(tmp_path), "written.txt", "x\n")
    touched, written = (stat.S_IMODE((tmp_path / n).stat().st_mode) for n in ("touched", "written.txt"))
    assert written == touched == 0o666 & ~UMASK
