"""glob and grep: what they find, in what order, what they skip, and where they stop."""

from __future__ import annotations

import os
import re
import time

import pytest

from corecoder.tool import ToolError
from corecoder.tools import search
from corecoder.tools.search import (
    MAX_GLOB_RESULTS,
    MAX_GREP_FILES,
    MAX_GREP_LINE_CHARS,
    MAX_GREP_MATCHES,
    SKIP_DIRS,
    Glob,
    Grep,
    expand_braces,
)
from corecoder.workspace import Workspace


def make(root, files: dict[str, str | bytes]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)


def age(root, *rels: str) -> None:
    """Give the files strictly decreasing mtimes: the first named is the newest."""
    for i, rel in enumerate(rels):
        os.utime(root / rel, (1_000_000 - i * 100, 1_000_000 - i * 100))


def glob(tmp_path, pattern, **args) -> list[str]:
    return Glob().run(Workspace(cwd=tmp_path), pattern=pattern, **args).split("\n")


def grep(tmp_path, pattern, **args) -> list[str]:
    return Grep().run(Workspace(cwd=tmp_path), pattern=pattern, **args).split("\n")


# --- glob ------------------------------------------------------------------------------------


def test_a_star_pattern_matches_one_directory_and_a_double_star_any_depth(tmp_path):
    make(tmp_path, {"a.py": "", "src/b.py": "", "src/deep/c.py": "", "src/d.txt": ""})
    age(tmp_path, "a.py", "src/b.py", "src/deep/c.py")
    assert glob(tmp_path, "*.py") == ["a.py"]
    assert glob(tmp_path, "**/*.py") == ["a.py", "src/b.py", "src/deep/c.py"]
    assert glob(tmp_path, "src/**/*.py") == ["src/b.py", "src/deep/c.py"]


def test_star_question_mark_and_brackets_never_cross_a_slash(tmp_path):
    make(tmp_path, {"ab.py": "", "a/b.py": "", "x1.txt": "", "x2.txt": "", "x/1.txt": ""})
    assert glob(tmp_path, "a*.py") == ["ab.py"]
    assert glob(tmp_path, "a?b.py") == ["no files match 'a?b.py' in ."]
    assert sorted(glob(tmp_path, "x[12].txt")) == ["x1.txt", "x2.txt"]


def test_a_trailing_double_star_lists_every_file_below(tmp_path):
    make(tmp_path, {"src/a.py": "", "src/x/b.md": "", "other.py": ""})
    assert sorted(glob(tmp_path, "src/**")) == ["src/a.py", "src/x/b.md"]


def test_glob_results_are_newest_first(tmp_path):
    make(tmp_path, {"old.py": "", "new.py": "", "mid.py": ""})
    age(tmp_path, "new.py", "mid.py", "old.py")
    assert glob(tmp_path, "*.py") == ["new.py", "mid.py", "old.py"]
    age(tmp_path, "old.py", "new.py", "mid.py")
    assert glob(tmp_path, "*.py") == ["old.py", "new.py", "mid.py"]


def test_files_with_the_same_mtime_come_in_name_order(tmp_path):
    make(tmp_path, {n: "" for n in ("c.py", "a.py", "b/z.py", "b.py")})
    for rel in ("c.py", "a.py", "b/z.py", "b.py"):
        os.utime(tmp_path / rel, (5_000, 5_000))
    assert glob(tmp_path, "**/*.py") == ["a.py", "b.py", "b/z.py", "c.py"]


def test_glob_lists_files_only_never_directories(tmp_path):
    make(tmp_path, {"pkg.py/inner.txt": "", "mod.py": ""})
    assert glob(tmp_path, "*.py") == ["mod.py"]


def test_glob_results_are_relative_to_the_working_directory_even_with_a_path(tmp_path):
    make(tmp_path, {"src/app/a.py": ""})
    assert glob(tmp_path, "*.py", path="src/app") == ["src/app/a.py"]
    make(tmp_path, {"top.py": ""})
    assert glob(tmp_path / "src", "../*.py") == ["../top.py"]


def test_an_absolute_pattern_or_path_works(tmp_path):
    make(tmp_path, {"src/a.py": ""})
    assert glob(tmp_path, str(tmp_path / "src" / "*.py")) == ["src/a.py"]
    assert glob(tmp_path, "*.py", path=str(tmp_path / "src")) == ["src/a.py"]


def test_glob_understands_brace_alternatives(tmp_path):
    make(tmp_path, {"a.py": "", "b.js": "", "c.ts": ""})
    assert sorted(glob(tmp_path, "*.{py,js}")) == ["a.py", "b.js"]
    assert expand_braces("{src,lib}/*.{py,js}") == ["src/*.py", "src/*.js", "lib/*.py", "lib/*.js"]
    assert expand_braces("plain{x}.py") == ["plain{x}.py"]


def expanded_in_full(pattern: str) -> list[str]:
    """Brace expansion as first written: every group multiplied out, recursively."""
    group = re.search(r"\{([^{}]*,[^{}]*)\}", pattern)
    if not group:
        return [pattern]
    head, tail = pattern[: group.start()], pattern[group.end():]
    return [full for alt in group.group(1).split(",") for full in expanded_in_full(head + alt + tail)]


@pytest.mark.parametrize("skipped", sorted(SKIP_DIRS))
def test_glob_does_not_descend_into_dependency_and_cache_directories(tmp_path, skipped):
    make(tmp_path, {f"{skipped}/hidden.py": "", f"pkg/{skipped}/deep.py": "", "pkg/kept.py": ""})
    assert glob(tmp_path, "**/*.py") == ["pkg/kept.py"]


def test_a_skipped_directory_is_searched_when_named_as_path_or_pattern_prefix(tmp_path):
    make(tmp_path, {"node_modules/lib/index.js": "", "node_modules/lib/.git/x.js": ""})
    assert glob(tmp_path, "**/*.js", path="node_modules") == ["node_modules/lib/index.js"]
    assert glob(tmp_path, "node_modules/lib/*.js") == ["node_modules/lib/index.js"]


def test_glob_stops_at_its_cap_and_says_how_many_more_there_are(tmp_path):
    make(tmp_path, {f"f{i:03d}.txt": "" for i in range(MAX_GLOB_RESULTS + 37)})
    out = glob(tmp_path, "*.txt")
    assert len(out) == MAX_GLOB_RESULTS + 1
    assert out[-1] == "(37 more not shown; narrow the pattern or the path)"


def test_glob_at_exactly_its_cap_adds_no_more_line(tmp_path):
    make(tmp_path, {f"f{i:03d}.txt": "" for i in range(MAX_GLOB_RESULTS)})
    out = glob(tmp_path, "*.txt")
    assert len(out) == MAX_GLOB_RESULTS and all(line.endswith(".txt") for line in out)


def test_glob_says_so_when_nothing_matches(tmp_path):
    make(tmp_path, {"a.py": ""})
    assert glob(tmp_path, "*.rs") == ["no files match '*.rs' in ."]
    assert glob(tmp_path, "nothere/*.rs") == ["no files match 'nothere/*.rs' in ."]


def test_glob_lists_symlinked_files_but_does_not_follow_symlinked_directories(tmp_path):
    make(tmp_path, {"real/a.py": ""})
    (tmp_path / "alias.py").symlink_to(tmp_path / "real" / "a.py")
    (tmp_path / "real" / "loop").symlink_to(tmp_path)  # would recurse forever if followed
    (tmp_path / "broken.py").symlink_to(tmp_path / "gone.py")
    out = glob(tmp_path, "**/*.py")
    assert sorted(out[:-1]) == ["alias.py", "real/a.py"]
    assert out[-1] == skipped(1, "broken.py")  # said, not dropped unsaid


def test_glob_searches_inside_a_search_root_that_is_a_symlink(tmp_path):
    make(tmp_path, {"real/a.py": ""})
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert glob(tmp_path, "*.py", path="link") == ["link/a.py"]


def test_glob_refuses_a_missing_path_a_file_as_path_and_an_empty_pattern(tmp_path):
    make(tmp_path, {"a.py": ""})
    with pytest.raises(ToolError, match="^nope does not exist$"):
        glob(tmp_path, "*.py", path="nope")
    with pytest.raises(ToolError, match="a.py is a file"):
        glob(tmp_path, "*.py", path="a.py")
    with pytest.raises(ToolError, match="pattern is empty"):
        glob(tmp_path, "  ")


# --- grep ------------------------------------------------------------------------------------


def test_grep_prints_path_line_number_and_line_in_sorted_walk_order(tmp_path):
    make(tmp_path, {"b.py": "x = 1\ndef go():\n", "a.py": "def f():\n  pass\ndef g():\n",
                    "sub/c.py": "def h():\n"})
    assert grep(tmp_path, r"^def \w+") == ["a.py:1: def f():", "a.py:3: def g():", "b.py:2: def go():",
                                           "sub/c.py:1: def h():"]


def test_grep_order_does_not_depend_on_mtimes_or_creation_order(tmp_path):
    make(tmp_path, {"z/m.txt": "hit\n", "a/m.txt": "hit\n", "m.txt": "hit\n"})
    first = grep(tmp_path, "hit")
    age(tmp_path, "z/m.txt", "a/m.txt", "m.txt")
    assert grep(tmp_path, "hit") == first == ["m.txt:1: hit", "a/m.txt:1: hit", "z/m.txt:1: hit"]


def test_an_invalid_regex_is_refused_quoting_the_re_message(tmp_path):
    with pytest.raises(ToolError) as bad:
        grep(tmp_path, "foo(")
    assert "invalid regular expression 'foo('" in str(bad.value)
    assert str(bad.value) == "invalid regular expression 'foo(': missing ) at position 4"


def test_an_empty_pattern_is_refused(tmp_path):
    with pytest.raises(ToolError, match="pattern is empty"):
        grep(tmp_path, "")


def test_grep_searches_one_file_when_path_is_a_file(tmp_path):
    make(tmp_path, {"a.py": "hit\n", "b.py": "hit\n"})
    assert grep(tmp_path, "hit", path="b.py") == ["b.py:1: hit"]
    assert grep(tmp_path, "hit", path="b.py", include="*.js") == ["b.py:1: hit"]


def test_grep_shows_paths_relative_to_the_working_directory_when_given_a_subdirectory(tmp_path):
    make(tmp_path, {"src/pkg/a.py": "hit\n", "other.py": "hit\n"})
    assert grep(tmp_path, "hit", path="src") == ["src/pkg/a.py:1: hit"]


def test_grep_refuses_a_path_that_does_not_exist(tmp_path):
    with pytest.raises(ToolError, match="^lib does not exist$"):
        grep(tmp_path, "x", path="lib")


def test_include_filters_by_file_name_with_globs_and_braces(tmp_path):
    make(tmp_path, {"a.py": "hit\n", "b.js": "hit\n", "c.txt": "hit\n", "d/e.py": "hit\n"})
    assert grep(tmp_path, "hit", include="*.py") == ["a.py:1: hit", "d/e.py:1: hit"]
    assert grep(tmp_path, "hit", include="*.{py,js}") == ["a.py:1: hit", "b.js:1: hit", "d/e.py:1: hit"]


def test_an_include_with_a_slash_is_matched_against_the_path(tmp_path):
    make(tmp_path, {"a.py": "hit\n", "d/e.py": "hit\n", "d/f.txt": "hit\n"})
    assert grep(tmp_path, "hit", include="**/*.py") == ["a.py:1: hit", "d/e.py:1: hit"]
    assert grep(tmp_path, "hit", include="d/*") == ["d/e.py:1: hit", "d/f.txt:1: hit"]


@pytest.mark.parametrize("skipped", sorted(SKIP_DIRS))
def test_grep_does_not_descend_into_dependency_and_cache_directories(tmp_path, skipped):
    make(tmp_path, {f"{skipped}/x.py": "hit\n", f"src/{skipped}/y.py": "hit\n", "src/z.py": "hit\n"})
    assert grep(tmp_path, "hit") == ["src/z.py:1: hit"]


def test_grep_searches_a_skipped_directory_named_as_its_path(tmp_path):
    make(tmp_path, {"node_modules/lib/index.js": "hit\n", "node_modules/lib/node_modules/x.js": "hit\n"})
    assert grep(tmp_path, "hit", path="node_modules") == ["node_modules/lib/index.js:1: hit"]


def test_glob_and_grep_skip_the_same_directories(tmp_path):
    make(tmp_path, {f"{d}/f.py": "hit\n" for d in SKIP_DIRS} | {"keep/f.py": "hit\n", "dist2/f.py": "hit\n"})
    assert sorted(glob(tmp_path, "**/*.py")) == ["dist2/f.py", "keep/f.py"]
    assert grep(tmp_path, "hit") == ["dist2/f.py:1: hit", "keep/f.py:1: hit"]


def test_grep_skips_binary_files_and_counts_them_when_nothing_matches(tmp_path):
    make(tmp_path, {"img.png": b"\x89PNG\x00hit\x00", "a.txt": "hit\n"})
    assert grep(tmp_path, "hit") == ["a.txt:1: hit"]
    assert grep(tmp_path, "hit", include="*.png") == [
        "no matches for 'hit' in . (files searched: 1, binary files skipped: 1)"]


def test_grep_searches_files_that_are_not_valid_utf8(tmp_path):
    make(tmp_path, {"latin1.txt": "café hit\nnaïve\n".encode("latin-1")})
    assert grep(tmp_path, "hit") == ["latin1.txt:1: caf\ufffd hit"]


def test_grep_line_numbers_agree_with_read_file_on_crlf_bom_and_form_feeds(tmp_path):
    make(tmp_path, {"w.txt": b"\xef\xbb\xbffirst\r\nsec\x0cond\r\nend hit\r\n"})
    assert grep(tmp_path, "hit$") == ["w.txt:3: end hit"]
    assert grep(tmp_path, "^first") == ["w.txt:1: first"]


def test_grep_says_so_when_nothing_matches(tmp_path):
    make(tmp_path, {"a.py": "x\n", "b.py": "y\n"})
    assert grep(tmp_path, "zzz") == ["no matches for 'zzz' in . (files searched: 2)"]


def test_grep_stops_at_its_match_cap_and_says_why(tmp_path):
    make(tmp_path, {"a.txt": "hit\n" * (MAX_GREP_MATCHES + 1), "b.txt": "hit\n"})
    out = grep(tmp_path, "hit")
    assert len(out) == MAX_GREP_MATCHES + 1
    assert out[MAX_GREP_MATCHES - 1] == f"a.txt:{MAX_GREP_MATCHES}: hit"
    assert out[-1] == f"(stopped at {MAX_GREP_MATCHES} matches; narrow the pattern, path or include)"


def test_grep_with_exactly_the_capped_number_of_matches_does_not_claim_more(tmp_path):
    make(tmp_path, {"a.txt": "hit\n" * MAX_GREP_MATCHES, "b.txt": "miss\n"})
    out = grep(tmp_path, "hit")
    assert len(out) == MAX_GREP_MATCHES and not any("stopped" in line for line in out)


def test_grep_scans_at_most_5000_files_and_says_so_in_its_description():
    assert MAX_GREP_FILES == 5000 and "at most 5000 files" in Grep.description


def test_grep_stops_after_its_file_cap_and_says_why(tmp_path, monkeypatch):
    monkeypatch.setattr(search, "MAX_GREP_FILES", 30)  # the shipped 5,000 files would make a slow test
    make(tmp_path, {f"d/f{i:02d}.txt": "x\n" for i in range(30)})
    make(tmp_path, {"z/last.txt": "hit\n"})  # the walk reaches z/ after d/
    assert grep(tmp_path, "hit") == [
        "no matches for 'hit' in . before it stopped (files searched: 30)",
        "(stopped after 30 files; narrow the path or include to search the rest)",
    ]
    assert grep(tmp_path, "hit", include="last.*") == ["z/last.txt:1: hit"]


def test_grep_over_exactly_the_capped_number_of_files_does_not_claim_more(tmp_path, monkeypatch):
    monkeypatch.setattr(search, "MAX_GREP_FILES", 30)
    make(tmp_path, {f"d/f{i:02d}.txt": "x\n" for i in range(29)} | {"z/last.txt": "hit\n"})
    assert grep(tmp_path, "hit") == ["z/last.txt:1: hit"]


def test_grep_cuts_long_lines(tmp_path):
    make(tmp_path, {"min.js": "hit" + "a" * 10_000 + "\n"})
    [line] = grep(tmp_path, "hit")
    assert line.startswith("min.js:1: hita")
    assert len(line) < MAX_GREP_LINE_CHARS + 100
    assert re.search(r"a\[\.\.\. 9,634 characters cut \.\.\.\]$", line)


def test_a_match_deep_inside_a_long_line_is_still_shown(tmp_path):
    make(tmp_path, {"min.js": "a" * 50_000 + "NEEDLE" + "b" * 50_000 + "\n"})
    [line] = grep(tmp_path, "NEEDLE")
    assert "NEEDLE" in line and len(line) < MAX_GREP_LINE_CHARS + 100
    assert re.fullmatch(r"min\.js:1: \[\.\.\. 49,900 characters cut \.\.\.\]a+NEEDLEb+"
                        r"\[\.\.\. 49,706 characters cut \.\.\.\]", line)


def test_grep_reads_symlinked_files_and_does_not_loop_on_symlinked_directories(tmp_path):
    make(tmp_path, {"real/a.txt": "hit\n"})
    (tmp_path / "alias.txt").symlink_to(tmp_path / "real" / "a.txt")
    (tmp_path / "real" / "loop").symlink_to(tmp_path)
    (tmp_path / "broken.txt").symlink_to(tmp_path / "gone.txt")
    assert grep(tmp_path, "hit") == ["alias.txt:1: hit", "real/a.txt:1: hit"]


def test_grep_searches_inside_a_search_root_that_is_a_symlink(tmp_path):
    make(tmp_path, {"real/a.txt": "hit\n"})
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert grep(tmp_path, "hit", path="link") == ["link/a.txt:1: hit"]


def test_search_tools_are_read_only():
    assert (Glob().name, Glob().mutating) == ("glob", False)
    assert (Grep().name, Grep().mutating) == ("grep", False)


@pytest.mark.parametrize("pattern", ["(a+)+$", r"(\w*)*x", r"(x+){2,}", "(a|a)*b"])
def test_the_classic_backtracking_shapes_answer_at_once(tmp_path, pattern):
    (tmp_path / "a.txt").write_text("a" * 40 + "!\n")
    started = time.monotonic()
    assert Grep().run(Workspace(cwd=tmp_path), pattern=pattern).startswith("no matches")
    assert time.monotonic() - started < 1


@pytest.mark.parametrize("pattern", ["(a|aa)+$", "(a|aa)+!x"])
def test_a_pattern_that_backtracks_on_a_line_stops_the_search_and_says_where(tmp_path, pattern):
    (tmp_path / "a.txt").write_text("match me\n" + "a" * 60 + "!\n" + "never reached\n")
    started = time.monotonic()
    found = Grep().run(Workspace(cwd=tmp_path), pattern=f"match|{pattern}|never")
    # the line's limit stopped it (the answer says so), long before the whole search's would: a
    # loaded machine stretches the second it takes, not into tens of them
    assert time.monotonic() - started < search.MAX_GREP_SECONDS / 2
    assert found == ("a.txt:1: match me\n(stopped: the pattern took over 1 s on line 2 of a.txt, "
                     "backtracking; write it so that each character can match in one way only)")


def test_grep_still_takes_ordinary_repeated_groups(tmp_path):
    (tmp_path / "a.txt").write_text("abab and a|b\n")
    assert "a.txt:1:" in Grep().run(Workspace(cwd=tmp_path), pattern="(ab)+ and (a|b)")


# --- bounds: what the search cannot look at, how long it takes, Ctrl+C (issue #38, class 10) -----


def skipped(count: int, names: str) -> str:
    """glob's last line when it passed over entries it could not look at."""
    return (f"(skipped {count} that could not be read: {names}; no permission, a broken link, "
            "or gone meanwhile)")


def failing_stat(monkeypatch, name: str, code: int) -> None:
    """os.stat fails with `code` for files called `name`, as it does for a file in a folder one
    may list but not enter; root may enter any folder, so the tests fake it."""
    real = os.stat

    def stat(path, *args, **kwargs):
        if os.path.basename(path) == name:
            raise OSError(code, os.strerror(code), os.fspath(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", stat)


