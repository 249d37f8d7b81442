"""Nothing is ever read or written outside the sessions dir, whatever the id and whatever is in the dir.

tests/engine/test_session.py already fuzzes the *ids* thoroughly (hostile strings, regex-made paths, a link
out planted in the dir, every open and mkdir guarded): it is imported here, so it counts in the table.
What it does not vary is the *dir*: here Hypothesis fills the sessions dir with entries of every kind
(files, directories, links to files, dirs and nothing outside, links that climb out with `..`, links
that stay inside, chains of links) under fuzzed names, then lists the sessions, loads each one by
every name it could be given, resumes and saves it, and starts new sessions under the same names.
Every os.open and mkdir is guarded: one that would reach outside is refused and recorded.
"""

from __future__ import annotations

import builtins
import hashlib
import os
import tempfile
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from corecoder import Agent, ScriptedLLM
from corecoder.messages import user
from corecoder.session import SessionError, SessionLog, list_sessions, load
from test_session import test_fuzzed_ids_never_reach_outside_the_sessions_dir, world  # noqa: F401

pytestmark = pytest.mark.row("sessions")

SECRET = '{"type": "meta"}\n{"type": "message", "message": {"role": "user", "content": "SECRET"}}\n'
KINDS = ["session file", "empty file", "not a session", "directory", "link to an outside file",
         "link to an outside dir", "dangling link out", "link up and out", "link to a session inside",
         "chain of links out", "absolute link inside"]
NAMES = st.one_of(st.from_regex(r"[A-Za-z0-9_-]{1,64}", fullmatch=True),
                  st.text(st.characters(blacklist_characters="/\x00", blacklist_categories=("Cs",)),
                          min_size=1, max_size=40))
ENTRIES = st.lists(st.tuples(NAMES, st.booleans(), st.sampled_from(KINDS)), max_size=6,
                   unique_by=lambda e: e[0] + ".jsonl" * e[1])


def fingerprint(folder: Path) -> dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
            for p in sorted(folder.rglob("*")) if not p.is_symlink()}


def plant(folder: Path, outside: Path, name: str, kind: str) -> None:
    entry = folder / name
    if kind == "session file":
        entry.write_text('{"type": "meta"}\n{"type": "message", "message": {"role": "user", "content": "in"}}\n')
    elif kind == "empty file":
        entry.write_bytes(b"")
    elif kind == "not a session":
        entry.write_bytes(b"\x00\xff garbage\n[1, 2]\n")
    elif kind == "directory":
        entry.mkdir()
    else:
        target = {
            "link to an outside file": outside / "secret.jsonl",
            "link to an outside dir": outside,
            "dangling link out": outside / "not-there.jsonl",
            "link up and out": Path("..", "..", outside.name, "secret.jsonl"),
            "link to a session inside": Path("inside.jsonl"),
            "chain of links out": Path("hop.jsonl"),
            "absolute link inside": folder / "inside.jsonl",
        }[kind]
        entry.symlink_to(target)


def refuse_builtin_open(escapes: list):
    """The sessions code reads and writes through os.open only: any other open is recorded and refused."""
    def refused(*args, **kwargs):
        escapes.append(args)
        raise PermissionError("test guard: open() bypasses the checked os.open")
    return refused


def guarded(allowed, escapes: list):
    """os.open and os.mkdir as they are, but refusing and recording any path outside `allowed`."""
    def guard(real):
        def checked(path, *args, **kwargs):
            if isinstance(path, int) or not allowed(Path(os.fsdecode(path)).resolve()):
                escapes.append(path)
                raise PermissionError(f"test guard: {path}")
            return real(path, *args, **kwargs)
        return checked
    return guard(os.open), guard(os.mkdir)


@settings(max_examples=120, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(ENTRIES)
def test_whatever_is_in_the_sessions_dir_nothing_outside_it_is_read_or_written(monkeypatch, entries):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp).resolve()
        home, outside = root / "home", root / "outside"
        folder = home / "sessions"
        folder.mkdir(parents=True)
        outside.mkdir()
        (outside / "secret.jsonl").write_text(SECRET)
        (folder / "inside.jsonl").write_text('{"type": "meta"}\n')
        (folder / "hop.jsonl").symlink_to(outside / "secret.jsonl")
        for name, suffix, kind in entries:
            try:
                plant(folder, outside, name + ".jsonl" * suffix, kind)
            except OSError:  # a name the filesystem refuses (too long in bytes, "." or ".."): not an entry
                continue
        before = fingerprint(outside)
        escapes: list = []
        safe_open, safe_mkdir = guarded(lambda p: folder in (p, p.parent), escapes)
        monkeypatch.setattr(os, "open", safe_open)
        monkeypatch.setattr(os, "mkdir", safe_mkdir)
        monkeypatch.setattr(builtins, "open", refuse_builtin_open(escapes))
        try:
            rows = list_sessions(home)
            names = {row.id for row in rows} | {n for n, _, _ in entries} | {n + ".jsonl" for n, _, _ in entries}
            for name in sorted(names):
                for attempt in (load, resume_and_save, new_and_save):
                    try:
                        attempt(home, name)
                    except (SessionError, PermissionError):
                        pass
        finally:
            monkeypatch.undo()
        assert escapes == []
        assert fingerprint(outside) == before
        assert "SECRET" not in str(rows)


def an_agent(home: Path) -> Agent:
    agent = Agent(ScriptedLLM([]), tools=[], cwd=home)
    agent.messages = [user("hi")]
    return agent


def resume_and_save(home: Path, name: str) -> None:
    SessionLog(home, name, resume=True).attach(an_agent(home)).save()


def new_and_save(home: Path, name: str) -> None:
    SessionLog(home, name).attach(an_agent(home)).save()


def test_a_fifo_in_the_sessions_dir_is_skipped_not_waited_on(tmp_path):
    folder = tmp_path / "sessions"
    folder.mkdir()
    os.mkfifo(folder / "pipe.jsonl")
    listed = []
    worker = threading.Thread(target=lambda: listed.append(list_sessions(tmp_path)), daemon=True)
    worker.start()
    worker.join(timeout=2)
    hung = worker.is_alive()
    if hung:  # let it go: a writer that opens and closes the pipe gives the blocked reader an end of file
        os.close(os.open(folder / "pipe.jsonl", os.O_WRONLY | os.O_NONBLOCK))
        worker.join()
    assert not hung, "list_sessions was still waiting on the FIFO after 2 s"
