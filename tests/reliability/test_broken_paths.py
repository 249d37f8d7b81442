"""Paths the system refuses, in words a model can act on (issue #34, class 2): every way a path
can be broken, through every tool that takes a path, gives one sentence that names the path
and the cause, never a traceback, an errno's number or its bare words ("File exists": which
file?).

The broken paths are generated: a file where a directory should be (one level up or several),
a directory that is missing, a symlink to nothing (as the file or as a directory on the way),
a name past the 255 bytes a file system takes, a FIFO, a device. What this machine cannot make
(no permission when the tests run as root, a full disk, a read-only file system) is checked on
the sentence itself, for every errno the words cover."""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from corecoder import Agent, ScriptedLLM
from corecoder.files import in_words
from corecoder.tools import default_tools
from helpers import call, results

pytestmark = pytest.mark.row("paths")

# An errno's own words, which name no path: none may be all a result says of its cause.
BARE = [os.strerror(code) for code in (errno.EEXIST, errno.ENOTDIR, errno.ENOENT, errno.EACCES,
                                        errno.ENAMETOOLONG, errno.EISDIR, errno.ELOOP)]
NAMES = st.text("abcdefghij_-.", min_size=1, max_size=8).filter(lambda n: n not in {".", ".."})


def broken(root: Path, kind: str, names: list[str]) -> tuple[str, str]:
    """Make a broken path of `kind` under `root`; (the path as the model gives it, the name the
    answer must say: the part that is wrong)."""
    first, rest = names[0], "/".join(names[1:]) or "x.txt"
    if kind == "under a file":
        (root / first).write_text("a file\n")
        return f"{first}/{rest}", first
    if kind == "missing directory":
        return f"{first}/{rest}", first
    if kind == "dangling link":
        (root / first).symlink_to(root / "nowhere")
        return first, first
    if kind == "under a dangling link":
        (root / first).symlink_to(root / "nowhere")
        return f"{first}/{rest}", first
    if kind == "name too long":  # in a directory that is there: the name is all that is wrong
        (root / first).mkdir()
        return f"{first}/{'n' * 300}", "300 bytes"
    if kind == "fifo":
        os.mkfifo(root / first)
        return first, first
    if kind == "device":
        (root / first).symlink_to("/dev/null")
        return first, first
    raise AssertionError(kind)


KINDS = ["under a file", "missing directory", "dangling link", "under a dangling link",
         "name too long", "fifo", "device"]


def calls_on(path: str) -> list[dict]:
    return [call("read_file", path=path), call("write_file", path=path, content="new\n"),
            call("edit_file", path=path, old_string="a", new_string="b"),
            call("glob", pattern="*", path=path), call("grep", pattern="a", path=path)]


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(kind=st.sampled_from(KINDS), names=st.lists(NAMES, min_size=1, max_size=4, unique=True))
def test_every_broken_path_through_every_tool_is_one_sentence_naming_it(tmp_path_factory, kind,
                                                                          names):
    root = tmp_path_factory.mktemp("project")
    path, culprit = broken(root, kind, names)
    agent = Agent(ScriptedLLM([{"tool_calls": calls_on(path)}, "done"]), default_tools(), cwd=root)
    agent.chat("go")
    assert any("failed:" in said for said in results(agent))  # read_file, at least, fails
    for said in results(agent):
        if "failed:" not in said:
            # what may work: a write that makes the missing directories, or goes through the
            # link; a glob or grep that finds nothing there; an edit then of what was written
            continue
        assert "\n" not in said and "Traceback" not in said, said
        assert not re.search(r"Errno|\[\d+\]|OSError", said), said
        assert not any(said.rstrip(".").endswith(bare) for bare in BARE), said
        assert culprit in said, (culprit, said)


# Each errno the words cover, as the system would raise it: for what this machine can't make.
COVERED = {errno.EACCES: "no permission to write", errno.EPERM: "no permission to write",
           errno.EISDIR: "is a directory", errno.ELOOP: "loop of links",
           errno.ENOSPC: "is full", errno.EROFS: "read-only file system",
           errno.EIO: "refused to write", errno.EBUSY: "refused to write"}


@pytest.mark.cases(len(COVERED))
@pytest.mark.parametrize("code", COVERED, ids=errno.errorcode.get)
def test_each_errno_is_said_with_the_path_and_what_it_means(code, tmp_path):
    error = OSError(code, os.strerror(code), str(tmp_path / "src" / "app.py"))
    said = in_words(error, show=lambda p: os.path.relpath(p, tmp_path), doing="write")
    assert COVERED[code] in said and "src/app.py" in said, said
    assert "Errno" not in said and "\n" not in said


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads and writes past any mode")
def test_no_permission_is_said_as_such_by_every_tool(tmp_path):
    (tmp_path / "shut").mkdir()
    (tmp_path / "shut" / "a.txt").write_text("a\n")
    (tmp_path / "shut").chmod(0)
    try:
        agent = Agent(ScriptedLLM([{"tool_calls": calls_on("shut/a.txt")}, "done"]),
                      default_tools(), cwd=tmp_path)
        agent.chat("go")
    finally:
        (tmp_path / "shut").chmod(0o755)
    for said in results(agent):
        assert "no permission" in said and "shut" in said, said
