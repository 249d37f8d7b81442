"""Strange files and patterns, through the command: each gets one clear line, and nothing hangs.

A hang fails here by the command's own timeout (60 s in helpers.corecoder), never by CI's.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import time
from pathlib import Path

import pytest

from corecoder.testing import ScriptServer
from helpers import corecoder, environment

pytestmark = [pytest.mark.row("inputs"),
              pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and /dev/zero")]


def call(name: str, **arguments) -> dict:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def strange_project(tmp_path: Path) -> Path:
    """A project with a FIFO nobody writes to, a link to an endless device, and a normal file."""
    root = tmp_path / "project"
    root.mkdir()
    os.mkfifo(root / "pipe")
    (root / "zeros").symlink_to("/dev/zero")
    (root / "notes.txt").write_text("a line to find\n" + "a" * 60 + "!\n")
    return root


CALLS = {  # (the call, what its result must start with)
    "read a FIFO": (call("read_file", path="pipe"),
                    "read_file failed: cannot read pipe: it is a FIFO (a named pipe), not a regular file"),
    "read /dev/zero": (call("read_file", path="/dev/zero"),
                       "read_file failed: cannot read /dev/zero: it is a device, not a regular file"),
    "read a link to /dev/zero": (call("read_file", path="zeros"),
                                 "read_file failed: cannot read zeros: it is a device"),
    "edit a FIFO": (call("edit_file", path="pipe", old_string="a", new_string="b"),
                    "edit_file failed: cannot edit pipe: it is a FIFO"),
    "write over a FIFO": (call("write_file", path="pipe", content="x"),
                          "write_file failed: cannot write pipe: "),
    "grep a tree with both": (call("grep", pattern="line to find"),
                              "notes.txt:1: a line to find"),
    "grep a FIFO": (call("grep", pattern="x", path="pipe"),
                    "grep failed: pipe is a FIFO (a named pipe); grep searches files and folders"),
    "a pattern that backtracks": (call("grep", pattern="(a|aa)+$", path="notes.txt"),
                                  "no matches for '(a|aa)+$' in notes.txt before it stopped (files "
                                  "searched: 1)\n(stopped: the pattern took over 1 s on line 2 of "
                                  "notes.txt"),
}


@pytest.mark.cases(len(CALLS))
def test_fifos_devices_and_backtracking_patterns_get_one_line_each(tmp_path):
    root = strange_project(tmp_path)
    script = [turn for turn, _ in CALLS.values()] + ["done"]
    started = time.monotonic()
    with ScriptServer(script) as server:
        run = corecoder("-p", "try them all", "--yes", cwd=root, env=environment(server, tmp_path))
    assert run.returncode == 0 and run.stdout == "done\n", run.stderr
    assert time.monotonic() - started < 30
    results = [m["content"] for m in server.requests[-1]["body"]["messages"] if m["role"] == "tool"]
    for (name, (_, expected)), result in zip(CALLS.items(), results, strict=True):
        assert result.startswith(expected), (name, result)
        assert "\n" not in result or name.startswith(("grep", "a pattern")), (name, result)
    assert stat.S_ISFIFO((root / "pipe").stat().st_mode)  # still a FIFO: never replaced


# Streams are bounded: an idle one fails, an endless one is given up, each within its setting


@pytest.mark.cases(3)
def test_a_silent_stream_is_retried_and_an_endless_one_given_up_within_their_limits(tmp_path):
    limits = {"CORECODER_IDLE_TIMEOUT": "0.5", "CORECODER_REPLY_TIMEOUT": "3"}
    with ScriptServer([{"fault": "stall"}, "answered after the stall"]) as server:
        run = corecoder("-p", "hi", cwd=tmp_path, env=environment(server, tmp_path, **limits))
    assert run.returncode == 0 and run.stdout == "answered after the stall\n"
    assert "retrying in" in run.stderr
    started = time.monotonic()
    with ScriptServer([{"fault": "endless"}]) as server:
        run = corecoder("-p", "hi", cwd=tmp_path, env=environment(server, tmp_path, **limits))
    assert run.returncode == 1 and time.monotonic() - started < 20
    assert run.stderr.splitlines()[-1] == (
        "error: the reply went on for more than 3 s without finishing, so it was given up (the "
        "limit is CORECODER_REPLY_TIMEOUT)")
    with ScriptServer([{"fault": "stall"}] * 4) as server:
        run = corecoder("-p", "hi", cwd=tmp_path,
                        env=environment(server, tmp_path, CORECODER_IDLE_TIMEOUT="0.3"))
    assert run.returncode == 1 and run.stderr.splitlines()[-1].endswith(
        "after 4 attempts: it sent nothing for 0.3 s (the limit is CORECODER_IDLE_TIMEOUT)")


# No input ends a session with a traceback

DEEP = "[" * 100_000 + "]" * 100_000
BROKEN_CONFIG = {  # a file in the config dir -> the line that names it
    "hooks.json": (DEEP, "hooks.json: not valid JSON"),
    "mcp.json": (DEEP, "mcp.json: nested too deeply to read"),
    "pricing.json": ('{"scripted": {"input": NaN, "output": Infinity}}',
                     "price for 'scripted': 'input' must be a finite, non-negative number, got nan"),
}


@pytest.mark.parametrize("name", BROKEN_CONFIG)
def test_a_config_file_that_cannot_be_used_is_one_line_naming_it(tmp_path, name):
    text, said = BROKEN_CONFIG[name]
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / name).write_text(text)
    with ScriptServer(["done"]) as server:
        run = corecoder("-p", "hi", cwd=tmp_path, env=environment(server, tmp_path / "home"))
    assert run.returncode == 1 and "Traceback" not in run.stderr
    [line] = run.stderr.splitlines()
    assert line.startswith(f"corecoder: {tmp_path / 'home' / name}") and said in line


@pytest.mark.cases(2)
@pytest.mark.skipif(sys.platform == "darwin", reason="the filesystem refuses names that are not UTF-8")
def test_a_file_name_that_is_not_utf8_and_arguments_nested_10000_deep_leave_the_session_alive(tmp_path):
    (tmp_path / "caf\udce9.txt").write_bytes(b"x\n")  # the bytes caf\xe9.txt, as Python names them
    deep = '{"path": ' + "[" * 10_000 + "]" * 10_000 + "}"
    script = [call("glob", pattern="*"), {"tool_calls": [{"name": "read_file", "arguments": deep}]},
              "done"]
    with ScriptServer(script) as server:
        run = corecoder("-p", "hi", cwd=tmp_path, env=environment(server, tmp_path / "home"))
    assert run.returncode == 0 and run.stdout == "done\n", run.stderr
    results = [m["content"] for m in server.requests[-1]["body"]["messages"] if m["role"] == "tool"]
    assert results == ["caf\ufffd.txt", "bad arguments for read_file: the arguments nest too deeply to "
                       "read: send a flatter JSON object. Expected: read_file(path: string, "
                       "offset?: integer, limit?: integer)"]


@pytest.mark.cases(2)
def test_glob_and_grep_answer_on_a_tree_1200_deep_and_a_pattern_of_many_stars(tmp_path):
    deep = tmp_path
    for _ in range(1200):  # one folder at a time: os.makedirs itself recurses
        deep = deep / "d"
        deep.mkdir()
    (deep / "deep.txt").write_text("needle\n")
    stars = "/".join(["**"] * 40) + "/deep.txt"
    script = [call("glob", pattern=stars), call("grep", pattern="needle"), "done"]
    try:
        with ScriptServer(script) as server:
            run = corecoder("-p", "hi", cwd=tmp_path, env=environment(server, tmp_path / "home"))
    finally:  # bottom up: pytest's own clean-up of old runs recurses, and would fail on it
        (deep / "deep.txt").unlink()
        while deep != tmp_path:
            deep.rmdir()
            deep = deep.parent
    assert run.returncode == 0, run.stderr
    results = [m["content"] for m in server.requests[-1]["body"]["messages"] if m["role"] == "tool"]
    shown = "d/" * 1200 + "deep.txt"
    assert results == [shown, f"{shown}:1: needle"]


# Writes keep what protected the file


@pytest.mark.cases(3)
def test_a_write_refuses_a_read_only_file_says_what_becomes_of_hard_links_and_takes_a_long_name(tmp_path):
    (tmp_path / "frozen.txt").write_text("keep me\n")
    (tmp_path / "frozen.txt").chmod(0o444)
    (tmp_path / "shared.txt").write_text("old\n")
    os.link(tmp_path / "shared.txt", tmp_path / "other-name.txt")
    long_name = "n" * 250 + ".txt"
    script = [call("write_file", path="frozen.txt", content="gone\n"),
              call("write_file", path="shared.txt", content="new\n"),
              call("write_file", path=long_name, content="fits\n"), "done"]
    with ScriptServer(script) as server:
        run = corecoder("-p", "hi", "--yes", cwd=tmp_path, env=environment(server, tmp_path / "home"))
    assert run.returncode == 0, run.stderr
    results = [m["content"] for m in server.requests[-1]["body"]["messages"] if m["role"] == "tool"]
    assert results == [
        "write_file failed: cannot write frozen.txt: it is read-only (mode 444): make it writable first "
        "if it is meant to change",
        "overwrote shared.txt: 1 line (4 bytes) (it had 1 other hard link: they keep the old content; "
        "this name has the new)",
        f"created {long_name}: 1 line (5 bytes)"]
    assert (tmp_path / "frozen.txt").read_text() == "keep me\n"
    assert (tmp_path / "other-name.txt").read_text() == "old\n"


# A provider that answers nonsense: one line, or (for counts) a zero


class Nonsense:
    """A server answering every request with the same raw body, as no script can: a context
    manager giving its base URL."""

    def __init__(self, content_type: str, body: bytes):
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.send_response(200)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)

    def __enter__(self) -> str:
        import threading

        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def events(*chunks) -> bytes:
    head = {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "m"}
    return b"".join(b"data: " + (c if isinstance(c, bytes) else json.dumps({**head, **c}).encode())
                    + b"\n\n" for c in chunks)


ANSWER = {"choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}]}
NONSENSE = {  # name -> (content type, body, whether it streams, the last line on stderr)
    "a chunk that is not JSON": ("text/event-stream", events(b"{not json", ANSWER, b"[DONE]"), True,
                                 "JSONDecodeError: Expecting property name"),
    "a web page for a reply": ("text/html", b"<html>Please log in</html>", False,
                               "error: the server answered with something that is not a chat "
                               "completion: '<html>Please log in</html>'"),
    "no choices": ("text/event-stream", events({"choices": []}, b"[DONE]"), True,
                   "the stream ended before the reply was complete"),
    "usage in strings and below zero": (
        "text/event-stream", events(ANSWER, {"choices": [], "usage": {
            "prompt_tokens": "12", "completion_tokens": -3, "total_tokens": "x"}}, b"[DONE]"), True,
        "12 tokens in, 0 out"),
}


@pytest.mark.parametrize("name", NONSENSE)
def test_a_provider_answering_nonsense_gets_one_line(tmp_path, name):
    content_type, body, streams, said = NONSENSE[name]
    with Nonsense(content_type, body) as url:
        env = environment(None, tmp_path / "home", OPENAI_BASE_URL=url, OPENAI_API_KEY="x",
                          CORECODER_MODEL="m", **({} if streams else {"CORECODER_STREAM": "0"}))
        run = corecoder("-p", "hi", cwd=tmp_path, env=env)
    assert "Traceback" not in run.stderr and said in run.stderr.splitlines()[-1], run.stderr
    assert run.returncode == (0 if name.startswith("usage") else 1)


# Sessions survive two terminals


@pytest.mark.skipif(sys.platform == "win32", reason="a pseudo-terminal, and flock")
def test_a_session_open_in_one_terminal_is_refused_in_a_second(tmp_path):
    from helpers import read_until

    from .test_hostile_repository import terminal

    with ScriptServer(["first", "second"]) as server:
        env = environment(server, tmp_path / "home")
        run = corecoder("-p", "hi", cwd=tmp_path, env=env)
        [session] = [p.stem for p in (tmp_path / "home" / "sessions").iterdir()]
        with terminal(tmp_path, env, "--resume", session) as (proc, fd, seen):
            read_until(fd, r"/help for commands.*\n.*›", seen)
            second = corecoder("-p", "hi", "--resume", session, cwd=tmp_path, env=env)
            os.write(fd, b"/quit\r")
            assert proc.wait(timeout=15) == 0
        third = corecoder("-p", "and now?", "--resume", session, cwd=tmp_path, env=env)
    assert run.returncode == 0 and second.returncode == 1
    assert second.stderr == (f"corecoder: session {session!r} is open in another corecoder: go on "
                             "there, or start a new session here\n")
    assert third.returncode == 0 and third.stdout == "second\n"  # the first let go as it left
