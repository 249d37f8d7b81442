"""Undo never destroys the user's work: it puts back only what still holds exactly what the agent
left, in the project the change was made in, never through a link (issue #38, class 8).
The rest of undo's promises are in tests/engine/test_checkpoints.py, whose helpers these use."""

from __future__ import annotations

import shlex
import shutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from corecoder.checkpoints import Checkpoints
from corecoder.workspace import Workspace
from helpers import call
from test_checkpoints import FILES, PROJECTS, STEP, TOOLS, by_the_agent, contents, contents_of, run

pytestmark = pytest.mark.row("undo")


def test_a_file_the_user_deleted_after_the_agent_wrote_it_stays_deleted(tmp_path, project):
    script = project / "tools" / "run.sh"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\necho one\n")
    checkpoints, _ = run(tmp_path / "home", project, [
        {"tool_calls": [call("write_file", path="tools/run.sh", content="#!/bin/sh\necho two\n")]}])
    script.unlink()
    script.parent.rmdir()
    assert checkpoints.undo() == "tools/run.sh was deleted since the agent's edit (write_file); kept as it is"
    assert not script.parent.exists()
    assert checkpoints.undo() == "nothing to undo in this project"


@settings(max_examples=30, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(STEP, max_size=8), start=st.lists(st.booleans(), min_size=3, max_size=3))
def test_undo_restores_a_file_only_while_it_holds_exactly_what_the_agent_left(tmp_path, steps, start):
    root = tmp_path / f"p{next(PROJECTS)}"
    (root / ".git").mkdir(parents=True)
    (root / "sub").mkdir()
    for name, present in zip(FILES, start, strict=True):
        if present:
            (root / name).write_text("start\n")
    checkpoints, workspace = Checkpoints(tmp_path / "home", root), Workspace(root)
    changes = []  # each agent call: its file, as it was before, as the call left it
    for action, name, text in steps:
        before = contents(root)[name]
        if action == "agent_write":
            by_the_agent(checkpoints, workspace, "write_file", path=name, content=text)
        elif action == "agent_edit":  # the whole text as old_string: fails on an empty or missing file
            old = before.decode() if before else "missing"
            by_the_agent(checkpoints, workspace, "edit_file", path=name, old_string=old, new_string=text)
        elif action == "user_write":
            (root / name).write_text(text)
        else:
            (root / name).unlink(missing_ok=True)
        if action.startswith("agent"):
            changes.append((name, before, contents(root)[name]))
    expected = contents(root)
    while True:
        said = checkpoints.undo()
        while changes and expected[changes[-1][0]] == changes[-1][1]:
            changes.pop()  # already as it was before that call: passed over
        if not changes:
            assert said == "nothing to undo in this project"
            break
        name, before, left = changes.pop()
        if expected[name] == left:
            expected[name] = before
            assert said.startswith(("restored", "deleted")) and name in said, said
        else:  # the user's bytes since the agent's call: kept, and named
            assert said.startswith(f"{name} ") and "since the agent's edit" in said and "kept as it is" in said
        assert contents(root) == expected, said


def test_a_file_the_agent_created_and_the_user_filled_is_kept(tmp_path, project):
    checkpoints, _ = run(tmp_path / "home", project, [
        {"tool_calls": [call("write_file", path="notes.md", content="")]},
        {"tool_calls": [call("edit_file", path="src/app.py", old_string="one", new_string="two")]}])
    (project / "notes.md").write_text("the user's notes\n")
    (project / "src" / "app.py").write_text("print('mine')\n")
    assert checkpoints.undo() == "src/app.py changed since the agent's edit (edit_file); kept as it is (1 more to undo)"
    assert checkpoints.undo() == "notes.md changed since the agent's edit (write_file); kept as it is"
    assert (project / "notes.md").read_text() == "the user's notes\n"
    assert (project / "src" / "app.py").read_text() == "print('mine')\n"


def test_a_call_that_never_finished_is_not_undone_since_what_it_left_is_unknown(tmp_path, project):
    checkpoints = Checkpoints(tmp_path / "home", project)
    checkpoints.before(TOOLS["write_file"], {"path": "src/app.py", "content": "x"}, Workspace(project))
    (project / "src" / "app.py").write_text("x")  # the write, then Ctrl+C or a crash: no `after`
    assert checkpoints.undo() == "src/app.py changed since the agent's edit (write_file); kept as it is"
    assert (project / "src" / "app.py").read_text() == "x"


def test_a_created_file_now_a_folder_is_kept_even_when_what_the_call_left_could_not_be_read(tmp_path, project):
    checkpoints = Checkpoints(tmp_path / "home", project)
    name = checkpoints.save(project / "made", "write_file")
    (project / "made").mkdir()  # no file to hash when the call ended: what it left is unknown
    checkpoints.note_left(name)
    assert checkpoints.undo() == "made changed since the agent's edit (write_file); kept as it is"
    assert (project / "made").is_dir()


# A plain folder removed and made again may get its inode back at once: there, only the content says.
@pytest.mark.parametrize("how, git", [("removed", True), ("moved away", True), ("moved away", False)])
def test_undo_touches_nothing_in_a_project_re_created_at_the_same_path(tmp_path, how, git):
    project = tmp_path / "project"
    (project / (".git" if git else "src")).mkdir(parents=True)
    checkpoints, _ = run(tmp_path / "home", project, [
        {"tool_calls": [call("write_file", path="src/app.py", content="agent\n")]},
        {"tool_calls": [call("write_file", path="new.txt", content="agent\n")]}])
    if how == "removed":
        shutil.rmtree(project)  # on many file systems the new folder then gets the same inode
    else:
        project.rename(tmp_path / "old")
    (project / "src").mkdir(parents=True)  # cloned again: the very bytes the agent left, a fresh .git
    (project / ".git").mkdir(exist_ok=not git)
    for name in ("src/app.py", "new.txt"):
        (project / name).write_text("agent\n")
    restarted = Checkpoints(tmp_path / "home", project)
    for undo, name in ((checkpoints.undo, "new.txt"), (restarted.undo, "src/app.py")):
        said = undo()
        assert said.startswith(f"did not touch {name}: the project at ") and "re-created" in said, said
    assert (project / "new.txt").read_text() == (project / "src" / "app.py").read_text() == "agent\n"


@pytest.mark.parametrize("swapped", ["deep", "deep/er", "deep/er/file.txt"])
def test_undo_never_writes_through_a_link_that_replaced_a_folder_or_the_file(tmp_path, project, swapped):
    (project / "deep" / "er").mkdir(parents=True)
    (project / "deep" / "er" / "file.txt").write_text("before\n")
    checkpoints, _ = run(tmp_path / "home", project, [
        {"tool_calls": [call("write_file", path="deep/er/file.txt", content="agent\n")]},
        {"tool_calls": [call("write_file", path="deep/er/made.txt", content="agent\n")]}])
    outside = tmp_path / "outside"
    (project / swapped).rename(outside)  # moved out of the project, a link left in its place
    (project / swapped).symlink_to(outside)
    untouched = contents_of(outside) if outside.is_dir() else outside.read_bytes()
    for name in ("made.txt", "file.txt"):
        said = checkpoints.undo()
        if swapped.endswith(name) or "file.txt" not in swapped:
            assert said.startswith(f"did not touch deep/er/{name}: {swapped} is now a link"), said
        else:  # the link is only the other file: this one is still the agent's, and still inside
            assert said.startswith("deleted deep/er/made.txt")
    assert (contents_of(outside) if outside.is_dir() else outside.read_bytes()) == untouched
    assert checkpoints.undo() == "nothing to undo in this project"


def test_after_a_cd_into_another_project_undo_reverts_nothing_in_the_first(tmp_path, project):
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    checkpoints, agent = run(tmp_path / "home", project, [
        {"tool_calls": [call("write_file", path="src/app.py", content="agent\n")]},
        {"tool_calls": [call("bash", command=f"cd {shlex.quote(str(other))}")]},
        {"tool_calls": [call("write_file", path="there.txt", content="agent\n")]}])
    assert agent.workspace.cwd == other.resolve()
    said = checkpoints.undo()
    assert said == (f"cannot undo from {other.resolve()}: the checkpoints are of {project.resolve()}, where this "
                    "session began; ask the agent to cd back there first")
    assert (project / "src" / "app.py").read_text() == (other / "there.txt").read_text() == "agent\n"
    assert checkpoints.undo(project / "src") == "restored src/app.py as it was before write_file"  # asked from it
