"""Strange files, patterns, providers and servers, through the command: each gets one clear line, and nothing hangs.

A hang fails here by the command's own timeout (60 s in helpers.corecoder), never by CI's.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
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


def test_ctrl_c_during_a_long_search_ends_the_command_at_once(tmp_path):
    """Matching lets go of the interpreter's lock, so the signal is seen mid-search: 300 files that
    each take a tenth of a second to match would hold the command for half a minute."""
    import signal

    for n in range(300):
        (tmp_path / f"f{n}.txt").write_text("a" * 25 + "!\n")  # (a|aa)+$ backtracks on it
    script = [call("grep", pattern="(a|aa)+$"), "done"]
    with ScriptServer(script) as server:
        env = environment(server, tmp_path / "home")
        proc = subprocess.Popen([sys.executable, "-m", "corecoder", "-p", "hi"], cwd=tmp_path, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        seen = ""
        while "→ grep(" not in seen:  # the call has started (the trace says so as it does)
            seen += proc.stderr.readline() or pytest.fail(f"ended before the search: {seen}")
        time.sleep(1)  # well into it
        assert proc.poll() is None
        os.kill(proc.pid, signal.SIGINT)
        stopped = time.monotonic()
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and time.monotonic() - stopped < 10, seen + err
    assert "[interrupted: the user stopped this call before it finished]" in err


# Streams are bounded: an idle one fails, an endless one is given up, each within its setting


@pytest.mark.cases(3)
def test_a_silent_stream_is_retried_and_an_endless_one_given_up_within_their_limits(tmp_path):
    # Each part tests one limit and gives the other room: a loaded machine (a slow process start,
    # a starved server thread, a retry's jittered wait) must not trip the limit not under test.
    stall = {"CORECODER_IDLE_TIMEOUT": "0.5", "CORECODER_REPLY_TIMEOUT": "60"}
    with ScriptServer([{"fault": "stall"}, "answered after the stall"]) as server:
        run = corecoder("-p", "hi", cwd=tmp_path, env=environment(server, tmp_path, **stall))
    assert run.returncode == 0 and run.stdout == "answered after the stall\n"
    assert "retrying in" in run.stderr
    started = time.monotonic()
    endless = {"CORECODER_IDLE_TIMEOUT": "10", "CORECODER_REPLY_TIMEOUT": "3"}
    with ScriptServer([{"fault": "endless"}]) as server:
        run = corecoder("-p", "hi", cwd=tmp_path, env=environment(server, tmp_path, **endless))
    assert run.returncode == 1 and time.monotonic() - started < 20
    assert run.stderr.splitlines()[-1] == (
        "error: the reply went on for more than 3 s without finishing, so it was given up (the "
        "limit is CORECODER_REPLY_TIMEOUT)")
    with ScriptServer([{"fault": "stall"}] * 4) as server:
        run = corecoder("-p", "hi", cwd=tmp_path,
                        env=environment(server, tmp_path, CORECODER_IDLE_TIMEOUT="0.3"))
    assert run.returncode == 1 and run.stderr.splitlines()[-1].endswith(
        "after 4 attempts: it sent nothing for 0.3 s (the limit is CORECODER_IDLE_TIMEOUT)")


# Reassembly is linear: the fragments of a call are joined once, not once for each (see benchmarks)


def test_a_megabyte_of_arguments_in_7_character_fragments_is_joined_once(monkeypatch):
    """Reassembly is linear: a fragment is compared with what came before only when it is as long
    as all of it (the one way it can repeat a complete first chunk), so 1 MB in 7-character
    fragments joins the pieces once, at the end, not once per fragment."""
    from corecoder import stream
    from corecoder.messages import ToolCall

    joins = []
    text = stream._Partial.text
    monkeypatch.setattr(stream._Partial, "text", lambda self: joins.append(1) or text(self))
    arguments = json.dumps({"path": "big.txt", "content": "x" * 1_000_000})
    fragments = [(0, "c1", "write_file", "")] + [(0, None, None, arguments[k:k + 7])
                                                 for k in range(0, len(arguments), 7)]
    calls = stream.ToolCallAssembler()
    for index, id, name, piece in fragments:
        calls.add(index, id, name, piece)
    assert calls.result() == [ToolCall("c1", "write_file", arguments)]
    assert len(joins) <= 2


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
    # the home lies outside the tree searched: its session log holds grep's call, needle and all,
    # before the call runs
    deep = project = tmp_path / "project"
    project.mkdir()
    for _ in range(1200):  # one folder at a time: os.makedirs itself recurses
        deep = deep / "d"
        deep.mkdir()
    (deep / "deep.txt").write_text("needle\n")
    stars = "/".join(["**"] * 40) + "/deep.txt"
    script = [call("glob", pattern=stars), call("grep", pattern="needle"), "done"]
    try:
        with ScriptServer(script) as server:
            run = corecoder("-p", "hi", cwd=project, env=environment(server, tmp_path / "home"))
    finally:  # bottom up: pytest's own clean-up of old runs recurses, and would fail on it
        (deep / "deep.txt").unlink()
        while deep != project:
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
    manager giving its base URL. `requests` counts what it was sent."""

    def __init__(self, content_type: str, body: bytes, status: int = 200):
        self.requests = 0
        nonsense = self
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                nonsense.requests += 1
                self.send_response(status)
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
    from helpers import read_until, terminal

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


# Sessions survive hand edits: a last line without its newline is kept; a damaged one is skipped


@pytest.mark.cases(2)
def test_a_session_keeps_a_last_line_without_newline_and_resumes_past_a_damaged_one(tmp_path):
    with ScriptServer(["one", "two", "three"]) as server:
        env = environment(server, tmp_path / "home")
        assert corecoder("-p", "first", cwd=tmp_path, env=env).returncode == 0
        [log] = (tmp_path / "home" / "sessions").iterdir()
        log.write_bytes(log.read_bytes().removesuffix(b"\n"))  # as an editor may save it
        corecoder("-p", "second", "--resume", log.stem, cwd=tmp_path, env=env)
        sent_second = server.requests[-1]["body"]["messages"][1:]
        records = log.read_bytes().split(b"\n")
        records[1] = records[1][:20]  # the first prompt's record, cut short
        log.write_bytes(b"\n".join(records))
        third = corecoder("-p", "third", "--resume", log.stem, cwd=tmp_path, env=env)
        sent_third = server.requests[-1]["body"]["messages"][1:]
    assert sent_second == [{"role": "user", "content": "first"}, {"role": "assistant", "content": "one"},
                           {"role": "user", "content": "second"}]
    assert third.returncode == 0 and third.stdout == "three\n"
    assert third.stderr.splitlines()[0] == (f"warning: session {log.stem}: line 2 is not JSON: skipped, "
                                            "the rest is resumed")
    assert sent_third == sent_second[1:] + [{"role": "assistant", "content": "two"},
                                            {"role": "user", "content": "third"}]


# Errors say the true thing


OVERFLOWS = {  # a provider -> its words for a request too long for the window
    "Anthropic": "prompt is too long: 215000 tokens > 200000 maximum",
    "Gemini": "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
}


@pytest.mark.parametrize("provider", OVERFLOWS)
def test_a_context_overflow_in_another_providers_words_compacts_and_retries(tmp_path, provider):
    (tmp_path / "big.txt").write_text("x" * 30_000 + "\n")
    home = tmp_path / "home"
    script = [call("read_file", path="big.txt"), call("read_file", path="big.txt"), "read them"]
    with ScriptServer(script) as server:  # a history with something in it to compact
        assert corecoder("-p", "read", cwd=tmp_path, env=environment(server, home)).returncode == 0
    [log] = (home / "sessions").iterdir()
    body = json.dumps({"error": {"message": OVERFLOWS[provider], "type": "invalid_request_error"}})
    refusing = Nonsense("application/json", body.encode(), status=400)
    with refusing as url:
        env = environment(None, home, OPENAI_BASE_URL=url, OPENAI_API_KEY="x", CORECODER_MODEL="m")
        run = corecoder("-p", "and now?", "--resume", log.stem, cwd=tmp_path, env=env)
    assert run.returncode == 1 and "[context compacted (" in run.stderr and refusing.requests >= 2, run.stderr
    assert run.stderr.splitlines()[-1] == ("error: the request is longer than scripted's context window: "
                                           + OVERFLOWS[provider])


@pytest.mark.cases(2)
def test_a_reply_cut_at_the_output_limit_says_so_to_the_user_and_to_the_model(tmp_path):
    cut_call = {"tool_calls": [{"name": "write_file", "arguments": '{"path": "a.txt", "content": "ha'}],
                "finish_reason": "length"}
    with ScriptServer([{"text": "half a sent", "finish_reason": "length"}, cut_call, "ok"]) as server:
        env = environment(server, tmp_path / "home")
        text = corecoder("-p", "hi", cwd=tmp_path, env=env)
        tool = corecoder("-p", "write", "--yes", cwd=tmp_path, env=env)
    note = ("[the reply was cut here: the model reached its output limit; anything after this, a tool "
            "call's arguments included, is missing. Write less in one reply, a large file in several steps]")
    assert text.stdout == f"half a sent\n{note}\n"
    assistant, result = server.requests[-1]["body"]["messages"][-2:]
    assert assistant["content"] == "\n" + note and result["content"].startswith(
        "bad arguments for write_file: the arguments are not valid JSON")
    assert tool.returncode == 0 and not (tmp_path / "a.txt").exists()


def hook(home: Path, command: str) -> None:
    home.mkdir(exist_ok=True)
    (home / "hooks.json").write_text(json.dumps({"PreToolUse": [{"matcher": "*", "command": command}]}))


@pytest.mark.cases(3)
def test_a_veto_is_bounded_and_read_in_any_bytes_and_a_command_that_redirects_itself_runs_to_its_end(
        tmp_path):
    home = tmp_path / "home"
    hook(home, "head -c 5000000 /dev/zero | tr '\\0' v >&2; exit 2")  # 5 MB of reasons
    with ScriptServer([call("read_file", path="x"), "ok"]) as server:
        corecoder("-p", "hi", cwd=tmp_path, env=environment(server, home))
        [flood] = [m["content"] for m in server.requests[-1]["body"]["messages"] if m["role"] == "tool"]
    hook(home, "printf 'caf\\351 is closed' >&2; exit 2")  # the byte é has in Latin-1
    with ScriptServer([call("read_file", path="x"), "ok"]) as server:
        corecoder("-p", "hi", cwd=tmp_path, env=environment(server, home))
        [latin] = [m["content"] for m in server.requests[-1]["body"]["messages"] if m["role"] == "tool"]
    (home / "hooks.json").unlink()
    with ScriptServer([call("bash", command="exec >log 2>&1; sleep 1; echo done"), "ok"]) as server:
        corecoder("-p", "hi", "--yes", cwd=tmp_path, env=environment(server, home))
        [own] = [m["content"] for m in server.requests[-1]["body"]["messages"] if m["role"] == "tool"]
    assert flood.startswith("read_file refused by hook: vvvv") and len(flood) < 20_500
    assert "characters cut" in flood
    assert latin == "read_file refused by hook: caf\ufffd is closed"
    assert own == "(no output)" and (tmp_path / "log").read_text() == "done\n"


# MCP servers: a malformed schema, a line of hundreds of MB, two servers with one name


@pytest.mark.cases(3)
def test_mcp_servers_with_a_bad_schema_a_huge_line_and_clashing_names_cost_nothing(tmp_path):
    bad = str(Path(__file__).resolve().parents[1] / "mcp_servers" / "bad_server.py")
    home = tmp_path / "home"
    home.mkdir()
    (home / "mcp.json").write_text(json.dumps({"mcpServers": {  # b.d and b_d: one name, sanitized
        "b_d": {"command": sys.executable, "args": [bad, "--odd-schema", "--environ", "--flood-mb", "300"],
                "env": {"WHO": "the first"}},
        "b.d": {"command": sys.executable, "args": [bad, "--environ"], "env": {"WHO": "the second"}}}}))
    script = [call("mcp__b_d__odd", a=1), call("mcp__b_d__environ"), "done"]
    # The most memory the command used, measured by a parent of its own: a client that read the
    # 300 MB line whole would hold it twice over (bytes, then text).
    measured = ("import resource, subprocess, sys; code = subprocess.run(sys.argv[1:]).returncode; "
                "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); "
                "sys.exit(code)")
    with ScriptServer(script) as server:
        run = subprocess.run([sys.executable, "-c", measured, sys.executable, "-m", "corecoder", "-p", "hi",
                              "--yes"], cwd=tmp_path, env=environment(server, home), capture_output=True,
                             text=True, timeout=60)
        odd, environ = [m["content"] for m in server.requests[-1]["body"]["messages"] if m["role"] == "tool"]
    assert run.returncode == 0 and run.stdout == "done\n", run.stderr
    assert odd == 'odd ran with {"a": 1}' and json.loads(environ)["WHO"] == "the first"
    peak_kib = int(run.stderr.splitlines()[-1])
    assert peak_kib < 250 * 1024, f"{peak_kib // 1024} MB"


# Long files and long strings give an edit's hint at once


@pytest.mark.cases(2)
def test_an_edit_that_matches_nothing_answers_at_once_in_a_long_file_and_for_a_long_old_string(tmp_path):
    (tmp_path / "long.txt").write_text("".join(f"line {n} of a long file\n" for n in range(1_000_000)))
    (tmp_path / "short.txt").write_text("".join(f"a different lime {n} here\n" for n in range(400)))
    retyped = "".join(f"a different line {n} here\n" for n in range(400))  # every line one letter off
    script = [call("edit_file", path="long.txt", old_string="line 7 of a lung file", new_string="x"),
              call("edit_file", path="short.txt", old_string=retyped, new_string="x"), "done"]
    started = time.monotonic()  # before: 90 s for the first, over two minutes for the second
    with ScriptServer(script) as server:
        run = corecoder("-p", "hi", "--yes", cwd=tmp_path, env=environment(server, tmp_path / "home"))
    assert run.returncode == 0 and time.monotonic() - started < 30, run.stderr
    long, short = [m["content"] for m in server.requests[-1]["body"]["messages"] if m["role"] == "tool"]
    assert long == ("edit_file failed: old_string was not found in long.txt; nothing was changed. The file "
                    "has 1,000,000 lines, too many to look for the closest text: grep for one line of "
                    "old_string to see where it is, and read there.")
    assert short.startswith("edit_file failed: old_string was not found in short.txt; nothing was changed. "
                            "The closest text is lines 1-400 (96% similar):\na different lime 0 here\n")


# What a killed corecoder left behind, the next one removes


@pytest.mark.cases(3)
def test_temp_files_a_killed_corecoder_left_are_removed_by_the_next_and_fresh_ones_kept(tmp_path):
    temp, project = tmp_path / "tmp", tmp_path / "project"
    temp.mkdir()
    project.mkdir()
    (project / "notes.txt").write_text("old\n")
    # kill -9 leaves these (the random part of the names is 8 characters of [a-z0-9_])
    left = [temp / "corecoder-bash-k1ll3d_x", project / ".notes.txt.k1ll3d_x.tmp"]
    fresh = [temp / "corecoder-bash-running_", project / ".notes.txt.writing_.tmp"]  # in use elsewhere
    users = [project / ".notes.txt.my-backup.tmp", project / ".notes.txt.cache123.tmp"]  # not ours
    for folder in (left[0], fresh[0], users[1]):
        folder.mkdir()
        (folder / "startup.sh").write_text("")
    for file in (left[1], fresh[1], users[0]):
        file.write_text("half a vers")
    two_hours_ago = time.time() - 7200
    for path in left + users:
        os.utime(path, (two_hours_ago, two_hours_ago))
    script = [call("bash", command="true"), call("write_file", path="notes.txt", content="new\n"), "done"]
    with ScriptServer(script) as server:
        env = environment(server, tmp_path / "home", TMPDIR=str(temp))
        run = corecoder("-p", "hi", "--yes", cwd=project, env=env)
    assert run.returncode == 0, run.stderr
    assert [p.exists() for p in left + fresh + users] == [False, False, True, True, True, True]
    assert (project / "notes.txt").read_text() == "new\n" and sorted(temp.iterdir()) == [fresh[0]]
