"""Checkpoints: a copy before every write or edit, /undo that survives a restart, never across projects."""

import base64
import itertools
import json
import random
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import strategies as st

from corecoder import Agent, ScriptedLLM
from corecoder.calls import Gate
from corecoder.checkpoints import Checkpoints, project_key, project_root
from corecoder.cli.repl import changed_files
from corecoder.tool import ToolError
from corecoder.tools import default_tools
from corecoder.workspace import Workspace
from helpers import call, run_and_kill

ROOT = Path(__file__).resolve().parents[2]
TOOLS = {t.name: t for t in default_tools()}


def run(home, root, turns, gates=None):
    checkpoints = Checkpoints(home, root)
    agent = Agent(ScriptedLLM([*turns, "done"]), default_tools(), cwd=root, gates=[*(gates or []), checkpoints])
    agent.chat("go")
    return checkpoints, agent


def stored(checkpoints) -> list[dict]:
    """The checkpoints on disk, oldest first."""
    return [json.loads(p.read_text()) for p in sorted(checkpoints.dir.glob("*.json"))]


def test_a_copy_is_taken_before_each_write_or_edit_and_no_call_is_refused(tmp_path, project):
    checkpoints = Checkpoints(tmp_path / "home", project)
    ws = Workspace(project)
    assert checkpoints.before(TOOLS["edit_file"], {"path": "src/app.py"}, ws) is None
    assert checkpoints.before(TOOLS["write_file"], {"path": "new.txt"}, ws) is None
    assert checkpoints.before(TOOLS["read_file"], {"path": "src/app.py"}, ws) is None  # read-only: no copy
    assert checkpoints.before(TOOLS["bash"], {"command": "rm -rf src"}, ws) is None  # no path: no copy
    assert checkpoints.before(TOOLS["write_file"], {"path": "bad\x00name"}, ws) is None  # never raises
    assert "bad" in checkpoints.error
    records = stored(checkpoints)
    assert [p.name for p in sorted(checkpoints.dir.glob("*.json"))] == ["00000001.json", "00000002.json"]
    assert {r["root"] for r in records} == {str(project.resolve())}
    assert [r["tool"] for r in records] == ["edit_file", "write_file"]
    assert base64.b64decode(records[0]["content"]) == b"print('one')\n"
    assert records[0]["mode"] == (project / "src" / "app.py").stat().st_mode & 0o7777
    assert (records[1]["existed"], records[1]["content"]) == (False, None)


def test_undo_restores_an_edit_then_deletes_a_created_file_and_leaves_the_dirs_it_made(tmp_path, project):
    checkpoints, _ = run(tmp_path / "home", project, [
        {"tool_calls": [call("edit_file", path="src/app.py", old_string="one", new_string="two")]},
        {"tool_calls": [call("write_file", path="docs/deep/notes.md", content="hi")]},
        {"tool_calls": [call("write_file", path="src/extra.py", content="x = 1\n")]}])
    assert (project / "docs" / "deep" / "notes.md").exists()
    assert checkpoints.undo() == "deleted src/extra.py (write_file had created it) (2 more to undo)"
    assert (project / "src").is_dir()
    assert checkpoints.undo() == "deleted docs/deep/notes.md (write_file had created it) (1 more to undo)"
    assert (project / "docs" / "deep").is_dir()  # the folders the write made stay (said in the README)
    assert checkpoints.undo() == "restored src/app.py as it was before edit_file"
    assert (project / "src" / "app.py").read_text() == "print('one')\n"
    assert checkpoints.undo() == "nothing to undo in this project"
    assert stored(checkpoints) == []


def test_a_mode_change_alone_is_undone_too(tmp_path, project):
    checkpoints = Checkpoints(tmp_path / "home", project)
    target = project / "src" / "app.py"
    target.chmod(0o640)
    name = checkpoints.save(target, "chmod")
    target.chmod(0o700)
    checkpoints.note_left(name)
    assert checkpoints.undo() == "restored src/app.py as it was before chmod"
    assert target.stat().st_mode & 0o7777 == 0o640


def test_undo_works_after_a_restart(tmp_path, project):
    home = tmp_path / "home"
    run(home, project, [{"tool_calls": [call("edit_file", path="src/app.py", old_string="one", new_string="two")]}])
    assert "two" in (project / "src" / "app.py").read_text()
    fresh = Checkpoints(home, project / "src")  # a new process, started in a subdirectory of the same project
    assert fresh.dir == Checkpoints(home, project).dir
    assert fresh.undo() == "restored src/app.py as it was before edit_file"
    assert (project / "src" / "app.py").read_text() == "print('one')\n"


def test_an_edit_that_changed_nothing_is_skipped_by_undo(tmp_path, project):
    checkpoints, agent = run(tmp_path / "home", project, [
        {"tool_calls": [call("edit_file", path="src/app.py", old_string="one", new_string="two")]},
        {"tool_calls": [call("edit_file", path="src/app.py", old_string="missing", new_string="x")]}])
    assert "failed" in agent.messages[-2]["content"]
    assert len(stored(checkpoints)) == 2
    assert checkpoints.undo() == "restored src/app.py as it was before edit_file"  # the failed one is passed over
    assert checkpoints.undo() == "nothing to undo in this project"


def test_a_file_too_large_to_keep_is_recorded_and_undo_says_so(tmp_path, project):
    big = project / "big.bin"
    big.write_bytes(b"x" * 2_000)
    checkpoints = Checkpoints(tmp_path / "home", project, max_bytes=1_000)
    name = checkpoints.save(project / "src" / "app.py", "edit_file")
    (project / "src" / "app.py").write_text("changed\n")
    checkpoints.note_left(name)
    checkpoints.save(big, "write_file")
    big.write_bytes(b"y" * 3_000)
    record = stored(checkpoints)[1]
    assert (record["too_large"], record["content"], record["size"]) == (True, None, 2_000)
    assert checkpoints.undo() == ("cannot undo the change to big.bin: at 2,000 bytes it was too large to keep "
                                  "(1 more to undo)")
    assert big.read_bytes() == b"y" * 3_000
    assert checkpoints.undo() == "restored src/app.py as it was before edit_file"  # the next one still works
    assert changed_files(checkpoints)[0].diff == "too large to compare"


def test_two_projects_checkpoints_never_mix(tmp_path, project):
    home = tmp_path / "home"
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    (other / "app.py").write_text("other\n")
    run(home, project, [{"tool_calls": [call("write_file", path="src/app.py", content="A2\n")]}])
    mine = Checkpoints(home, other)
    assert mine.dir != Checkpoints(home, project).dir and project_key(project) != project_key(other)
    assert mine.undo() == "nothing to undo in this project"
    assert (project / "src" / "app.py").read_text() == "A2\n"
    # A write from this project to a file in another one is not this project's to undo.
    assert mine.save(project / "src" / "app.py", "write_file") is None
    assert mine.undo() == "nothing to undo in this project"


def test_a_checkpoint_that_names_another_root_is_refused(tmp_path, project):
    home = tmp_path / "home"
    checkpoints, _ = run(home, project, [{"tool_calls": [call("write_file", path="src/app.py", content="B\n")]}])
    [file] = checkpoints.dir.glob("*.json")
    data = json.loads(file.read_text())
    file.write_text(json.dumps({**data, "root": "/somewhere/else"}))
    assert checkpoints.undo().startswith("cannot undo: ") and "/somewhere/else" in checkpoints.undo()
    assert (project / "src" / "app.py").read_text() == "B\n"
    file.write_text(json.dumps({**data, "path": "/etc/hosts"}))
    assert checkpoints.undo() == f"did not touch /etc/hosts: it is outside this project ({project.resolve()})"


@pytest.mark.parametrize("damage", ["not json {", "[1, 2]", '{"tool": "write_file"}', "RECORD WITHOUT path"])
def test_a_damaged_checkpoint_is_reported_and_kept_and_nothing_is_touched(tmp_path, project, damage):
    home = tmp_path / "home"
    checkpoints, _ = run(home, project, [{"tool_calls": [call("write_file", path="src/app.py", content="B\n")]}])
    [file] = checkpoints.dir.glob("*.json")
    record = json.loads(file.read_text())
    record.pop("path")
    file.write_text(json.dumps(record) if damage == "RECORD WITHOUT path" else damage)
    said = checkpoints.undo()
    assert said.startswith(f"cannot undo: checkpoint {file} is damaged (") and file.exists()
    assert (project / "src" / "app.py").read_text() == "B\n"


def test_the_project_root_is_the_git_root_else_the_cwd(tmp_path, project):
    assert project_root(project / "src") == project.resolve()
    plain = tmp_path / "plain" / "dir"
    plain.mkdir(parents=True)
    assert project_root(plain) == plain.resolve()


def test_a_gate_that_refuses_first_means_no_copy(tmp_path, project):
    class No(Gate):
        name = "consent"

        def before(self, tool, args, workspace):
            return "the user said no"

    checkpoints, agent = run(tmp_path / "home", project,
                             [{"tool_calls": [call("write_file", path="src/app.py", content="no\n")]}], gates=[No()])
    assert "refused by consent" in agent.messages[-2]["content"]
    assert stored(checkpoints) == []


def test_parallel_writes_each_get_a_copy(tmp_path, project):
    checkpoints, _ = run(tmp_path / "home", project, [{"tool_calls": [
        call("write_file", path=f"f{n}.txt", content=str(n)) for n in range(6)]}])
    assert sorted(Path(r["path"]).name for r in stored(checkpoints)) == [f"f{n}.txt" for n in range(6)]
    for _ in range(6):
        assert checkpoints.undo().startswith("deleted f")
    assert not list(project.glob("f*.txt"))


def test_only_the_newest_checkpoints_are_kept(tmp_path, project):
    checkpoints = Checkpoints(tmp_path / "home", project, keep=3)
    target = project / "src" / "app.py"
    for n in range(5):
        name = checkpoints.save(target, "edit_file")
        target.write_text(f"v{n}\n")
        checkpoints.note_left(name)
    assert [p.name for p in sorted(checkpoints.dir.glob("*.json"))] == [
        "00000003.json", "00000004.json", "00000005.json"]  # the three newest
    assert "restored" in checkpoints.undo() and target.read_text() == "v3\n"


def test_changed_files_lists_what_this_session_changed_with_a_short_diff(tmp_path, project):
    (project / "gone.txt").write_text("bye\n")
    (project / "image.bin").write_bytes(b"\x00\x01")
    (project / "long.txt").write_text("".join(f"line {n}\n" for n in range(200)))
    (project / "by_hand.txt").write_text("a\n")
    Checkpoints(tmp_path / "home", project).save(project / "by_hand.txt", "edit_file")  # another session's
    (project / "by_hand.txt").write_text("b\n")
    checkpoints, _ = run(tmp_path / "home", project, [{"tool_calls": [
        call("edit_file", path="src/app.py", old_string="one", new_string="two"),
        call("write_file", path="new.txt", content="hello\n"),
        call("write_file", path="gone.txt", content="soon deleted\n"),
        call("write_file", path="image.bin", content="text now"),
        call("write_file", path="long.txt", content="".join(f"LINE {n}\n" for n in range(200))),
        call("write_file", path="same.txt", content="same\n")]},
        {"tool_calls": [call("write_file", path="same.txt", content="same\n")]}])
    (project / "gone.txt").unlink()
    (project / "same.txt").unlink()  # created, then removed again: no change to report
    changes = {c.path: c for c in changed_files(checkpoints)}
    assert set(changes) == {"src/app.py", "new.txt", "gone.txt", "image.bin", "long.txt"}
    assert changes["src/app.py"].status == "modified"
    assert changes["src/app.py"].diff.splitlines() == ["--- a/src/app.py", "+++ b/src/app.py", "@@ -1 +1 @@",
                                                       "-print('one')", "+print('two')"]
    assert (changes["new.txt"].status, changes["gone.txt"].status) == ("created", "deleted")
    assert changes["image.bin"].diff == "binary, 2 -> 8 bytes"
    assert changes["long.txt"].diff.splitlines()[-1].endswith("diff lines cut ...]")
    assert len(changes["long.txt"].diff.splitlines()) == 41


# --- undo never destroys the user's work (#38) ------------------------------------------------------------

FILES = ["a.txt", "sub/b.txt", "c.txt"]
CONTENTS = ["one\n", "two\n", "three\n", ""]  # few, so the user's bytes often match the agent's
STEP = st.one_of(
    st.tuples(st.sampled_from(["agent_write", "agent_edit", "user_write"]), st.sampled_from(FILES),
              st.sampled_from(CONTENTS)),
    st.tuples(st.just("user_delete"), st.sampled_from(FILES), st.none()))
PROJECTS = itertools.count()


def by_the_agent(checkpoints, workspace, tool, **args):
    """One call as calls.perform runs it past this gate: before, the tool (which may fail), after."""
    assert checkpoints.before(TOOLS[tool], args, workspace) is None
    try:
        result = TOOLS[tool].run(workspace, **args)
    except ToolError as e:
        result = f"{tool} failed: {e}"
    checkpoints.after(TOOLS[tool], args, result, workspace)


def contents(root: Path) -> dict[str, bytes | None]:
    return {name: (root / name).read_bytes() if (root / name).exists() else None for name in FILES}


def contents_of(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


# --- kill -9 ---------------------------------------------------------------------------------------------

WRITER = textwrap.dedent("""
    import sys
    sys.path.insert(0, sys.argv[3])
    from pathlib import Path
    from corecoder.checkpoints import Checkpoints
    from corecoder.files import atomic_write

    root, home = Path(sys.argv[1]), Path(sys.argv[2])
    checkpoints = Checkpoints(home, root)
    target = root / "data.txt"
    n = 0
    while True:
        name = checkpoints.save(target, "write_file")
        atomic_write(target, chr(65 + n % 26) * (200_000 + n))  # each version: one letter, its own length
        checkpoints.note_left(name)
        if n == 0:
            print("go", flush=True)
        n += 1
""")


def whole(data: bytes) -> bool:
    """A version the writer wrote: one letter repeated, exactly as long as that version was."""
    return bool(data) and data == data[:1] * len(data) and (len(data) - 200_000) % 26 == data[0] - 65


def kill_during_writes(root, home, delay):
    run_and_kill(WRITER, [str(root), str(home), str(ROOT)], delay)


def test_kill_9_during_checkpoint_writes_leaves_every_file_whole(tmp_path):
    rng = random.Random(7)
    trials = []
    for n in range(30):
        root, home = tmp_path / f"p{n}", tmp_path / f"h{n}"
        (root / ".git").mkdir(parents=True)
        (root / "data.txt").write_text("original")
        trials.append((root, home, rng.uniform(0.02, 0.4)))
    with ThreadPoolExecutor(10) as pool:
        list(pool.map(lambda t: kill_during_writes(*t), trials))
    for n, (root, home, _) in enumerate(trials):
        checkpoints = Checkpoints(home, root)
        data = (root / "data.txt").read_bytes()
        assert data == b"original" or whole(data)
        entries = list(checkpoints.dir.glob("*.json"))
        for copy in entries:
            json.loads(copy.read_text())  # every checkpoint parses
        # Each can be undone; every few trials, all the way down to the original (undo is slow: fsyncs).
        # Killed between a write and the note of what it left, undo can't tell that version from the
        # user's: it keeps it, and then every older one, which it no longer holds.
        kept = False
        for _ in entries if n % 6 == 0 else entries[:5]:
            said = checkpoints.undo()
            kept = kept or said.startswith("data.txt changed since the agent's edit (write_file); kept as it is")
            assert "restored" in said or said == "nothing to undo in this project" or kept, said
            data = (root / "data.txt").read_bytes()
            assert data == b"original" or whole(data)
        if n % 6 == 0:
            assert ((root / "data.txt").read_bytes() == b"original") != kept


def test_a_checkpoint_copy_is_readable_by_its_owner_only(tmp_path):
    """It may hold a copy of .env: the copies are private (600) whatever the umask."""
    import stat

    from corecoder.checkpoints import Checkpoints

    (tmp_path / "project").mkdir()
    secret = tmp_path / "project" / ".env"
    secret.write_text("KEY=secret\n")
    checkpoints = Checkpoints(tmp_path / "home", tmp_path / "project")
    name = checkpoints.save(secret, "edit_file")
    assert stat.S_IMODE((checkpoints.dir / name).stat().st_mode) == 0o600
