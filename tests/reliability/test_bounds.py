"""Bounds where the last round missed them: work that grew as the square of its input (a reply of
100,000 calls, a resume, braces, replace_all's line numbers and diff), limits checked too
rarely (grep inside a file, a reply trickled or kept alive), a Ctrl+C that left a search
running, and a call's own arguments that no compaction could cut (issue #38, class 10)."""

from __future__ import annotations

import difflib
import errno
import itertools
import json
import os
import signal
import threading
import time
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from corecoder import LLM, Agent, FunctionLLM, ModelError, ScriptedLLM
from corecoder.context import SUMMARY_PROMPT
from corecoder.executor import RunInParallel
from corecoder.messages import IllegalHistory, ToolCall, assistant, check_history, tool_result, user
from corecoder.session import SessionLog, load
from corecoder.tokens import history_tokens
from corecoder.tool import ToolError
from corecoder.tools import edit as edit_module
from corecoder.tools import search
from corecoder.tools.edit import diff, line_spans, line_texts, lines_of
from corecoder.tools.search import MAX_BRACE_PATTERNS, Glob, Grep, expand_braces
from corecoder.workspace import Workspace
from helpers import Echo, call, results
from test_edit import edit, naive_lines_of
from test_llm import PACES, ask, pacing_server
from test_messages import calls
from test_search import expanded_in_full, failing_stat, glob, grep, skipped
from test_search import make as make_files
from test_session import HISTORY_TURN
from test_session import make as make_agent

pytestmark = pytest.mark.row("bounds")


def test_a_session_of_200_000_messages_resumes_in_seconds(tmp_path):
    """Replay adds each message record to the history in place: a new list per record was a
    resume quadratic in the session's length (200,000 messages: minutes)."""
    history = [m for n in range(100_000) for m in (user(f"q{n}"), assistant(f"a{n}"))]
    path = tmp_path / "sessions" / "long.jsonl"
    path.parent.mkdir()
    path.write_text("".join(json.dumps({"type": "message", "message": m}) + "\n" for m in history))
    started = time.monotonic()
    assert load(tmp_path, "long")[0] == history
    assert time.monotonic() - started < 60  # about 3 s


def test_a_long_session_damaged_midway_resumes_in_seconds_up_to_the_damage(tmp_path):
    """The longest legal run of turns is found by halving, not by trying every turn from the end:
    20,000 turns, two writers' ids colliding in the 10,001st, are a few checks of the history, not
    10,000 (that was five minutes)."""
    turns = [[user(f"q{n}"), assistant("", [ToolCall(f"c{n}", "echo", "{}")]), tool_result(f"c{n}", "1"),
              assistant("ok")] for n in range(20_000)]
    turns[10_000][1]["tool_calls"][0]["id"] = turns[10_000][2]["tool_call_id"] = "c0"  # the second writer's
    path = tmp_path / "sessions" / "long.jsonl"
    path.parent.mkdir()
    path.write_text("".join(json.dumps({"type": "message", "message": m}) + "\n" for t in turns for m in t))
    started = time.monotonic()
    messages, meta = load(tmp_path, "long")
    assert messages == [m for t in turns[:10_000] for m in t] and meta["damaged"] == [
        "its last 40000 messages cannot be made a legal history (message 40001 (assistant): duplicate tool "
        "call id 'c0')"]
    assert time.monotonic() - started < 30  # about 2 s


@settings(max_examples=200, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(HISTORY_TURN, min_size=1, max_size=12))
def test_the_legal_head_found_by_halving_is_the_one_trying_every_turn_finds(plan):
    """Whatever the damage and wherever it is: the same run of turns as the plain search from the end."""
    from corecoder.messages import IllegalHistory
    from corecoder.session import _legal_head

    messages = []
    for n, turn in enumerate(plan):
        messages.append(user(f"q{n}"))
        for k, step in enumerate(turn):
            call_id = "same" if step == "dup" else f"c{n}_{k}"
            if step != "orphan":
                messages.append(assistant("", [ToolCall(call_id, "echo", "{}")]))
            if step != "unanswered":
                messages.append(tool_result(call_id, "1"))
    expected = []
    for end in reversed([i for i, m in enumerate(messages) if m["role"] == "user" and i]):
        try:
            check_history(messages[:end])
        except IllegalHistory:
            continue
        expected = messages[:end]
        break
    assert _legal_head(messages) == expected


def test_a_reply_of_100_000_parallel_calls_is_run_saved_and_resumed_in_seconds(tmp_path):
    """Every step that reads the history (the legality check of each request, the log, the replay
    and repair of a resume) is linear in it: 100,000 calls in one reply are a moment's work."""
    from corecoder import FunctionLLM

    def model(messages, tools):
        if messages[-1]["role"] == "user":
            return {"tool_calls": [{"name": "echo", "arguments": {"text": f"{n}"}} for n in range(100_000)]}
        return "done"

    started = time.monotonic()
    agent = Agent(FunctionLLM(model), tools=[Echo()], cwd=tmp_path)
    log = SessionLog(tmp_path).attach(agent)
    assert agent.chat("go") == "done" and len(agent.messages) == 100_003
    log.close()
    resumed = make_agent(tmp_path, [])
    SessionLog(tmp_path, log.id, resume=True).attach(resumed)
    assert resumed.messages == agent.messages and resumed.messages[-2]["content"] == "99999"
    assert time.monotonic() - started < 120  # about 10 s


def test_the_check_is_linear_so_100_000_parallel_calls_take_a_moment():
    """A reply may make 100,000 calls: the check keeps those waiting in a queue and never scans
    them for each result (100,000 x 100,000 steps: two and a half minutes a check, with every
    request and every resume checked). Its verdicts, and its words, are the same."""
    ids = [f"c{i}" for i in range(100_000)]
    head, answers = [user("go"), assistant("", calls(*ids))], [tool_result(i, "ok") for i in ids]
    started = time.monotonic()
    check_history([*head, *answers])
    swapped = [*head, *answers[:-2], answers[-1], answers[-2]]
    with pytest.raises(IllegalHistory, match=r"^message 100000 \(tool\): result for 'c99999' is out of "
                                             r"order; 'c99998' comes first$"):
        check_history(swapped)
    with pytest.raises(IllegalHistory, match=r"^message 100001 \(tool\): result for 'z' answers no "
                                             r"pending call \(waiting for 'c99999'\)$"):
        check_history([*head, *answers[:-1], tool_result("z", "ok")])
    assert time.monotonic() - started < 10  # about 0.5 s


def test_a_call_that_wrote_2_mb_is_cut_in_the_history_so_a_32k_window_goes_on(tmp_path):
    """The call's own arguments are history too: once answered, they are trimmed like a long output,
    to JSON that says so, and the call stays legal (its id and name, its result after it)."""
    from corecoder.messages import ContextTooLong
    from corecoder.tokens import tools_tokens

    content = "x = 1\n" * 350_000  # 2.1 MB

    def provider(messages, tools):  # a model with a 32k window: longer is refused, as the API does
        if history_tokens(messages) + tools_tokens(tools or []) > 32_000:
            raise ContextTooLong("the request is longer than the model's context window")
        if messages[0]["content"] == SUMMARY_PROMPT:
            return "Goal: write big.py."
        if messages[-1]["role"] == "user":
            return {"tool_calls": [{"name": "write_file", "arguments": {"path": "big.py", "content": content}}]}
        return "Written."

    from corecoder import build_agent
    agent = build_agent(FunctionLLM(provider), tmp_path, window=32_000, instructions=False)
    assert agent.chat("write big.py") == "Written."
    assert (tmp_path / "big.py").read_text() == content
    call = next(m for m in agent.messages if m.get("tool_calls"))["tool_calls"][0]
    assert call["function"]["name"] == "write_file" and len(call["function"]["arguments"]) < 2_000
    assert "characters cut; trimmed" in json.loads(call["function"]["arguments"])["trimmed"]
    check_history(agent.messages)


@pytest.mark.parametrize("pace", PACES)
def test_a_reply_kept_alive_or_trickled_ends_at_the_reply_timeout(pace):
    """httpx's limit is per read, and every piece here comes well within it: SSE comments and empty
    lines that make no chunk, or a whole reply sent a byte at a time. The reply's own limit still
    ends it, with the usual words, and it is not tried again."""
    with pacing_server(pace) as url:
        sleeps = []
        llm = LLM("m", base_url=url, api_key="x", stream=pace != "trickled_body", reply_timeout=1,
                  idle_timeout=5, sleep=sleeps.append)
        assert llm.client  # made now: importing openai must not eat the second
        started = time.monotonic()
        with pytest.raises(ModelError, match=r"more than 1 s without finishing.*CORECODER_REPLY_TIMEOUT"):
            ask(llm)
        assert time.monotonic() - started < 10 and sleeps == []  # 1 s, on any machine under 10


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.text("ab{},/*", max_size=14))
def test_brace_expansion_within_the_bound_makes_the_full_expansion_in_order_each_once(pattern):
    full = list(dict.fromkeys(expanded_in_full(pattern)))
    assume(len(expanded_in_full(pattern)) <= MAX_BRACE_PATTERNS)
    assert expand_braces(pattern) == full


@pytest.mark.parametrize("groups", [7, 20, 1000])
def test_braces_that_multiply_past_the_bound_are_refused_at_once_saying_how_many(tmp_path, groups):
    # 2^20 patterns used to be made (and walked) one by one; 1000 groups were a RecursionError
    (tmp_path / "ab.py").write_text("")
    pattern = "{a,b}" * groups + ".py"
    started = time.monotonic()
    for run in (lambda: glob(tmp_path, pattern), lambda: grep(tmp_path, "x", include=pattern)):
        with pytest.raises(ToolError) as refused:
            run()
        assert f"make at least {min(2 ** groups, 10 ** 9):,} patterns" in str(refused.value)
        assert f"at most {MAX_BRACE_PATTERNS} are tried" in str(refused.value)
    assert time.monotonic() - started < 10


def test_braces_making_exactly_the_bound_are_taken_and_one_more_is_refused(tmp_path):
    (tmp_path / "f7.py").write_text("")
    exactly = "f{" + ",".join(map(str, range(MAX_BRACE_PATTERNS))) + "}.py"
    assert glob(tmp_path, exactly) == ["f7.py"]
    with pytest.raises(ToolError, match=f"make at least {MAX_BRACE_PATTERNS + 1} patterns"):
        glob(tmp_path, exactly.replace("{", "{x,"))


def test_glob_lists_the_rest_past_broken_links_link_loops_and_names_that_are_not_utf8(tmp_path):
    make_files(tmp_path, {"a.py": ""})
    (tmp_path / "gone.py").symlink_to("nowhere.py")
    (tmp_path / "loop.py").symlink_to("loop.py")
    odd = os.fsdecode(b"caf\xe9.py")  # Latin-1 bytes, as an old archive leaves them
    (tmp_path / odd).write_text("")
    out = glob(tmp_path, "*.py")
    assert sorted(out[:-1]) == sorted(["a.py", odd])
    assert out[-1] == skipped(2, "gone.py, ...")


@pytest.mark.parametrize("code", [errno.EACCES, errno.ENAMETOOLONG, errno.EIO],
                         ids=["no permission", "name too long", "input/output error"])
def test_glob_lists_the_rest_when_a_file_cannot_be_looked_at_and_says_how_many(
        tmp_path, monkeypatch, code):
    make_files(tmp_path, {"a.py": "", "sub/b.py": "", "sub/c.py": "", "sub/d.txt": ""})
    failing_stat(monkeypatch, "b.py", code)
    out = glob(tmp_path, "**/*.py")
    assert sorted(out[:-1]) == ["a.py", "sub/c.py"]
    assert out[-1] == skipped(1, "sub/b.py")
    assert glob(tmp_path, "**/*.txt") == ["sub/d.txt"]  # only names that match are looked at


def test_glob_lists_the_rest_when_a_literal_folder_of_the_pattern_cannot_be_looked_at(
        tmp_path, monkeypatch):
    make_files(tmp_path, {"public/a.py": "", "secret/b.py": ""})
    failing_stat(monkeypatch, "secret", errno.EACCES)
    assert glob(tmp_path, "{public,secret}/*.py") == ["public/a.py", skipped(1, "secret")]


def test_glob_lists_the_rest_when_a_folder_cannot_be_listed_and_says_so(tmp_path, monkeypatch):
    make_files(tmp_path, {"a.py": "", "locked/b.py": "", "open/c.py": ""})
    real = os.scandir

    def scandir(path):
        if os.path.basename(path) == "locked":
            raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    out = glob(tmp_path, "**/*.py")
    assert sorted(out[:-1]) == ["a.py", "open/c.py"]
    assert out[-1] == skipped(1, "locked")


def test_glob_counts_a_file_removed_between_the_walk_and_the_look(tmp_path, monkeypatch):
    make_files(tmp_path, {"a.py": "", "b.py": ""})
    walk = search.walk_files

    def racing(root, *args):
        for file in walk(root, *args):
            if file.name == "b.py":
                file.unlink()  # another process removes it, just after the listing
            yield file

    monkeypatch.setattr(search, "walk_files", racing)
    assert glob(tmp_path, "*.py") == ["a.py", skipped(1, "b.py")]


@pytest.mark.skipif(os.geteuid() == 0, reason="root may list and enter a folder of any mode")
def test_glob_lists_the_rest_past_folders_it_may_not_list_or_enter(tmp_path):
    make_files(tmp_path, {"a.py": "", "closed/b.py": "", "listable/c.py": ""})
    (tmp_path / "closed").chmod(0)
    (tmp_path / "listable").chmod(0o444)  # its names can be read, its files not looked at
    try:
        out = glob(tmp_path, "**/*.py")
    finally:
        (tmp_path / "closed").chmod(0o755)
        (tmp_path / "listable").chmod(0o755)
    assert out == ["a.py", skipped(2, "closed, ...")]


def test_glob_stops_once_the_user_has_pressed_ctrl_c(tmp_path):
    make_files(tmp_path, {"a.py": ""})
    ws = Workspace(cwd=tmp_path)
    ws.cancelled.set()  # what the parallel executor does to a call's workspace on Ctrl+C
    with pytest.raises(KeyboardInterrupt):
        Glob().run(ws, pattern="**/*.py")


def test_grep_minds_its_time_limit_inside_a_file_too(tmp_path, monkeypatch):
    # The limit was looked at between files only: one file of millions of lines, or of lines that
    # each take almost the most a match may take, ran for as long as it took.
    (tmp_path / "big.txt").write_text("match\n" * 1000)
    ticks = itertools.count()  # a clock that moves a second each time it is read
    monkeypatch.setattr(search, "time", SimpleNamespace(monotonic=lambda: next(ticks)))
    out = grep(tmp_path, "match")
    assert out[-1] == f"(stopped after {search.MAX_GREP_SECONDS} s (1 files); narrow the path or include)"
    assert 0 < len(out) - 1 < 1000
    assert out[:-1] == [f"big.txt:{n}: match" for n in range(1, len(out))]


def test_a_ctrl_c_stops_a_grep_running_in_another_thread_and_no_thread_is_left(tmp_path, monkeypatch):
    # The executor runs each call in a thread and, on Ctrl+C, sets the call's ws.cancelled. Each
    # line here backtracks for about 10 ms: 10,000 of them would search for minutes.
    (tmp_path / "slow.txt").write_text(("a" * 20 + "!\n") * 10_000)
    ws, reading, outcome = Workspace(cwd=tmp_path), threading.Event(), []
    read = search.read_regular

    def read_and_tell(path, *args, **kwargs):
        data = read(path, *args, **kwargs)
        reading.set()
        return data

    def run():
        try:
            outcome.append(Grep().run(ws, pattern="(a|aa)+$"))
        except KeyboardInterrupt:
            outcome.append("interrupted")

    monkeypatch.setattr(search, "read_regular", read_and_tell)
    worker = threading.Thread(target=run, name="grep under test", daemon=True)
    worker.start()
    assert reading.wait(10)
    ws.cancelled.set()
    worker.join(timeout=10)
    assert "grep under test" not in [thread.name for thread in threading.enumerate()]
    assert outcome == ["interrupted"]


def test_a_real_ctrl_c_during_a_parallel_grep_leaves_no_tool_thread_searching(tmp_path, monkeypatch):
    # The whole path: the executor notes the SIGINT, stops the turn and sets each call's
    # ws.cancelled; the grep, 10 ms a line for 10,000 lines, ends at its next line.
    (tmp_path / "slow.txt").write_text(("a" * 20 + "!\n") * 10_000)
    read = search.read_regular

    def read_then_press_ctrl_c(path, *args, **kwargs):
        data = read(path, *args, **kwargs)
        os.kill(os.getpid(), signal.SIGINT)
        return data

    monkeypatch.setattr(search, "read_regular", read_then_press_ctrl_c)
    turns = [{"tool_calls": [call("grep", pattern="(a|aa)+$")]}]
    agent = Agent(ScriptedLLM(turns), [Grep()], cwd=tmp_path, executor=RunInParallel())
    with pytest.raises(KeyboardInterrupt):
        agent.chat("find it")
    tool_threads = [t for t in threading.enumerate() if t.name.startswith("tool")]
    for thread in tool_threads:
        thread.join(timeout=10)
    assert [t.name for t in tool_threads if t.is_alive()] == []
    assert results(agent)[0].startswith("[interrupted")


def test_replace_all_of_a_word_300000_times_in_a_6_5_mb_file_finishes_in_seconds(tmp_path):
    # Each place's line was counted from the top of the file: 300,000 x 3 MB, about 17 minutes.
    # Counted from one place to the next it takes about 3 s here, the diff included.
    text = "    total = word + 1\n" * 300_000 + "x" * 200_000 + "\n"  # 6,500,001 bytes
    started = time.monotonic()
    result, after = edit(tmp_path, text.encode(), old_string="word", new_string="term",
                         replace_all=True)
    assert time.monotonic() - started < 30
    assert after == text.replace("word", "term").encode()
    assert result.splitlines()[0] == ("Edited f.txt: replaced 300000 occurrences at lines "
                                      "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, ....")


def test_replace_all_on_every_other_line_of_a_6_5_mb_file_finishes_in_seconds(tmp_path):
    # difflib compares changed lines with one another: kept lines between changed ones made the
    # diff of this edit take about a day (5,000 such pairs: 23 s; 300,000: 3,600 times as long).
    text = "".join(f"word\nkept {i:06d} line\n" for i in range(300_000))  # 6,600,000 bytes
    started = time.monotonic()
    result, after = edit(tmp_path, text.encode(), old_string="word", new_string="term",
                         replace_all=True)
    assert time.monotonic() - started < 30
    assert after == text.replace("word", "term").encode()
    assert result.splitlines() == [
        "Edited f.txt: replaced 300000 occurrences at lines 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, ....",
        "(no diff: 1,199,998 lines differ, from line 1 to line 599999 of the old file, too many to "
        "compare; read_file shows them)"]


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from(["a", "b", "c", ""]), max_size=12),
       st.lists(st.sampled_from(["a", "b", "c", ""]), max_size=12), st.booleans())
def test_the_diff_is_difflibs_unified_diff_while_the_changed_lines_are_few(old, new, crlf):
    ending = "\r\n" if crlf else "\n"
    text, after = (ending.join(lines) + ending if lines else "" for lines in (old, new))
    assert diff(text, after, "f.txt") == list(difflib.unified_diff(
        text.splitlines(), after.splitlines(), "a/f.txt", "b/f.txt", lineterm=""))


def test_a_diff_with_too_many_changed_lines_to_compare_says_where_they_are(monkeypatch):
    monkeypatch.setattr(edit_module, "MAX_DIFF_LINES", 4)
    text = "".join(f"{n}\n" for n in range(1, 11))
    after = text.replace("4\n", "four\n").replace("6\n", "six\n")  # 3 lines out, 3 in
    assert diff(text, after, "f.txt") == [
        "(no diff: 6 lines differ, from line 4 to line 6 of the old file, too many to compare; "
        "read_file shows them)"]
    monkeypatch.setattr(edit_module, "MAX_DIFF_LINES", 6)
    assert diff(text, after, "f.txt")[2] == "@@ -1,9 +1,9 @@"


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.text("ab\r\n", max_size=40), st.lists(st.integers(0, 45), max_size=15))
def test_lines_of_counts_from_place_to_place_as_the_top_down_count_does(text, starts):
    # in any order, repeated, past the end: the same numbers, in the order the places come
    places = [(start, start + 1, "x") for start in starts]
    assert lines_of(text, places) == naive_lines_of(text, places)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.text("a\r\n\x0c\u2028", max_size=30))
def test_line_texts_splits_where_line_spans_does(text):
    assert line_texts(text) == [text[start:end] for start, end, _ in line_spans(text)]
