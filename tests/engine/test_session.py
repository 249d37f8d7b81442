"""Sessions: an append-only log that survives a crash, resumes legally, and never leaves its folder."""

import hashlib
import json
import os
import random
import re
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from corecoder import Agent, FunctionLLM, ScriptedLLM, build_agent, check_history
from corecoder.context import Compactor
from corecoder.events import Finished
from corecoder.executor import RunInParallel
from corecoder.messages import INTERRUPTED, Reply, ToolCall, Usage, assistant, tool_result, user
from corecoder.session import CUT_SHORT, FORMAT, SessionError, SessionLog, list_sessions, load, repair, session_path
from corecoder.testing import ScriptServer
from corecoder.tool import Tool
from helpers import Boom, Echo, call, corecoder, environment, run_and_kill

ROOT = Path(__file__).resolve().parents[2]


def make(tmp_path, turns, model="scripted", **kw):
    return Agent(ScriptedLLM(turns, model=model), tools=[Echo()], cwd=tmp_path, **kw)


def records(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


# --- recording -------------------------------------------------------------------------------------------


def test_a_session_records_meta_then_each_message_as_it_joins_the_history(tmp_path):
    agent = make(tmp_path, [{"tool_calls": [call("echo", text="a"), call("echo", text="b")]}, "done"])
    log = SessionLog(tmp_path / "home").attach(agent)
    assert re.fullmatch(r"\d{8}-\d{6}-[0-9a-f]{4}", log.id)
    assert log.path == (tmp_path / "home" / "sessions" / f"{log.id}.jsonl").resolve()
    agent.chat("go")
    lines = records(log.path)
    assert lines[0] == {"type": "meta", "id": log.id, "created": lines[0]["created"],
                        "cwd": str(tmp_path.resolve()), "model": "scripted", "format": FORMAT}
    assert [r["type"] for r in lines[1:]] == ["message"] * 5
    assert [r["message"] for r in lines[1:]] == agent.messages
    messages, meta = load(tmp_path / "home", log.id)
    assert messages == agent.messages and meta["model"] == "scripted"


def test_each_round_is_on_disk_before_the_model_is_asked_again(tmp_path):
    seen = []
    agent = make(tmp_path, [{"tool_calls": [call("echo", text="a")]}, "done"])
    log = SessionLog(tmp_path).attach(agent)
    agent.subscribe(lambda event: seen.append(len(records(log.path)) if log.path.exists() else 0))
    agent.chat("go")
    assert seen[0] == 2  # RoundStarted(1): meta and the user's message are down already
    assert max(seen) == 5


def test_a_session_that_never_said_anything_leaves_no_file_unless_saved(tmp_path):
    agent = make(tmp_path, [])
    log = SessionLog(tmp_path).attach(agent)
    log._observe(Finished("", "answer"))
    assert not log.path.exists()
    assert log.save() == log.path
    assert records(log.path)[0]["type"] == "meta"
    assert load(tmp_path, log.id)[0] == []


def test_a_model_switch_is_logged_and_resume_restores_the_model_in_use(tmp_path):
    agent = make(tmp_path, ["one", "two"], model="first")
    log = SessionLog(tmp_path).attach(agent)
    agent.chat("a")
    agent.llm.model = "second"
    agent.chat("b")
    assert {"type": "model", "model": "second"} in records(log.path)
    assert load(tmp_path, log.id)[1]["model"] == "second"
    log.close()  # as the first process would by ending: one writer at a time
    resumed = SessionLog(tmp_path, log.id, resume=True)
    assert resumed.meta["model"] == "second"


def test_model_of_lets_the_cli_log_the_provider_too(tmp_path):
    agent = make(tmp_path, ["ok"], model="deepseek-chat")
    log = SessionLog(tmp_path, model_of=lambda a: f"deepseek/{a.llm.model}").attach(agent)
    agent.chat("hi")
    assert load(tmp_path, log.id)[1]["model"] == "deepseek/deepseek-chat"


def test_a_new_session_never_reuses_an_existing_file(tmp_path):
    agent = make(tmp_path, ["ok"])
    SessionLog(tmp_path, "mine").attach(agent).save()
    with pytest.raises(SessionError, match="already exists"):
        SessionLog(tmp_path, "mine")
    with pytest.raises(SessionError, match="no session 'nope'"):
        SessionLog(tmp_path, "nope", resume=True)


def test_a_failed_write_warns_without_ending_the_turn_and_the_next_write_restates_the_history(tmp_path, monkeypatch):
    warnings = []
    agent = make(tmp_path, [{"tool_calls": [call("echo", text="a")]}, "done", "again"])
    log = SessionLog(tmp_path, on_error=warnings.append).attach(agent)
    real_write, calls = os.write, []

    def flaky(fd, data):
        calls.append(fd)
        if len(calls) == 3:  # the third line: half of it goes down, then the disk is full
            real_write(fd, data[: len(data) // 2])
            raise OSError(28, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", flaky)
    assert agent.chat("go") == "done"
    assert warnings and "No space left" in warnings[0]
    agent.chat("more")
    assert load(tmp_path, log.id)[0] == agent.messages
    assert "history" in [r["type"] for r in records(log.path)]


# --- compaction and resume -------------------------------------------------------------------------------


def test_compaction_is_logged_as_a_history_record_and_replay_starts_from_it(tmp_path):
    agent = make(tmp_path, [{"tool_calls": [call("echo", text="x")]}, "first", "a summary", "second"],
                 context=Compactor(keep_recent=2))
    log = SessionLog(tmp_path).attach(agent)
    agent.chat("one")
    agent.messages, _ = agent.context.compact(agent.messages)  # /compact: a shorter list
    agent.chat("two")
    kinds = [r["type"] for r in records(log.path)]
    assert kinds.count("history") == 1 and kinds[-2:] == ["history", "message"]
    messages, _ = load(tmp_path, log.id)
    assert messages == agent.messages and messages[0]["content"].startswith("[Summary")
    assert list_sessions(tmp_path)[0].preview == "one"  # the preview is what the user first asked


def test_a_history_replaced_by_hand_is_also_caught(tmp_path):
    agent = make(tmp_path, ["a", "b"])
    log = SessionLog(tmp_path).attach(agent)
    agent.chat("one")
    agent.messages = [dict(m) for m in agent.messages]  # equal, but not the same objects: rewritten
    agent.chat("two")
    assert [r["type"] for r in records(log.path)][-2:] == ["history", "message"]
    assert load(tmp_path, log.id)[0] == agent.messages


def test_resume_hands_the_history_back_and_appends_to_the_same_file(tmp_path):
    first = make(tmp_path, [{"tool_calls": [call("echo", text="a")]}, "done"])
    log = SessionLog(tmp_path).attach(first)
    first.chat("go")
    second = make(tmp_path, ["welcome back"])
    log.close()
    again = SessionLog(tmp_path, log.id, resume=True).attach(second)
    assert second.messages == first.messages
    second.chat("still there?")
    assert again.path == log.path
    assert [r["type"] for r in records(log.path)].count("meta") == 1
    assert load(tmp_path, log.id)[0] == second.messages
    assert second.llm.requests[0]["messages"][1:-1] == first.messages  # the model sees the old turns


def test_resume_after_a_crash_answers_dangling_calls_and_drops_a_torn_line(tmp_path):
    home = tmp_path / "home"
    agent = make(tmp_path, [])
    log = SessionLog(home, "crash").attach(agent)
    agent.messages = [user("go"), assistant("", [ToolCall("c1", "echo", "{}"), ToolCall("c2", "echo", "{}")]),
                      tool_result("c1", "a")]
    log.save()
    with open(log.path, "ab") as f:
        f.write(b'{"type": "message", "message": {"role": "tool", "tool_call_id": "c2", "TORN')  # kill -9 here
    messages, _ = load(home, "crash")
    assert [m.get("content") for m in messages[2:]] == ["a", CUT_SHORT]
    check_history(messages)
    agent2 = make(tmp_path, ["recovered"])
    log.close()  # the crashed process's lock went with it
    SessionLog(home, "crash", resume=True).attach(agent2)
    assert agent2.chat("continue") == "recovered"
    raw = log.path.read_bytes()
    assert b"TORN" not in raw  # the torn tail was cut, not glued onto
    assert load(home, "crash")[0] == agent2.messages
    check_history(agent2.messages)


def test_a_damaged_line_in_the_middle_is_skipped_named_and_the_rest_kept(tmp_path):
    path = tmp_path / "sessions" / "bad.jsonl"
    path.parent.mkdir()
    path.write_text('{"type": "meta", "id": "bad"}\nnot json\n{"type": "message", "message": '
                    '{"role": "user", "content": "x"}}\n[1]\n')
    messages, meta = load(tmp_path, "bad")
    assert messages == [user("x")] and meta["damaged"] == ["line 2 is not JSON", "line 4 is not a record"]
    path.write_text('{"type": "meta"}\n{"type": "message", "message": {"role": "wizard"}}\n{"type": "meta"}\n')
    assert load(tmp_path, "bad") == ([], {"id": "bad", "created": None, "cwd": None, "model": None,
                                          "todos": [], "usage": [],
                                          "damaged": ["line 2 is a malformed message record"]})
    told = []
    SessionLog(tmp_path, "bad", resume=True, on_error=told.append)
    assert told == ["session bad: line 2 is a malformed message record: skipped, the rest is resumed"]
    path.write_text('{"type": "meta"}\n{"type": "from-the-future"}\n{"type": "message", "message": '
                    '{"role": "user", "content": "x"}}\n')
    assert load(tmp_path, "bad")[0] == [user("x")]  # unknown record types are skipped


def test_repair_puts_each_result_after_its_call_in_order_and_drops_orphans():
    calls = [ToolCall("a", "echo", "{}"), ToolCall("b", "echo", "{}"), ToolCall("c", "echo", "{}")]
    history = [tool_result("zz", "orphan at the start"), user("go"), assistant("", calls),
               tool_result("c", "C"), tool_result("x", "stray"), tool_result("a", "A"), tool_result("a", "again"),
               user("next"), tool_result("b", "too late")]
    fixed = repair(history)
    check_history(fixed)
    assert [(m["role"], m.get("content")) for m in fixed] == [
        ("user", "go"), ("assistant", ""), ("tool", "A"), ("tool", CUT_SHORT), ("tool", "C"), ("user", "next")]


def test_a_history_that_cannot_be_made_legal_is_a_clear_error():
    with pytest.raises(SessionError, match="duplicate tool call id"):
        repair([assistant("", [ToolCall("a", "echo")]), tool_result("a", "1"), assistant("", [ToolCall("a", "echo")])])


def test_two_writers_whose_call_ids_collided_resume_up_to_the_last_legal_turn(tmp_path):
    turn = [assistant("", [ToolCall("c1", "echo", "{}")]), tool_result("c1", "1"), assistant("ok")]
    history = [user("a"), *turn, user("b"), *turn]  # the second writer reused the id c1
    path = tmp_path / "sessions" / "both.jsonl"
    path.parent.mkdir()
    path.write_text("\n".join(json.dumps({"type": "message", "message": m}) for m in history) + "\n")
    messages, meta = load(tmp_path, "both")
    assert messages == history[:4]
    assert meta["damaged"] == ["its last 4 messages cannot be made a legal history (message 5 (assistant): "
                               "duplicate tool call id 'c1')"]
    agent = make(tmp_path, ["carried on"])
    SessionLog(tmp_path, "both", resume=True, on_error=lambda text: None).attach(agent)
    agent.chat("c")
    assert load(tmp_path, "both")[0] == agent.messages  # what came after the cut is kept too


# --- damaged records: skipped and said, never a traceback; the history handed back is legal --------------


def message(m):
    return {"type": "message", "message": m}


def session_file(home, *lines, meta=None):
    """A session file as a hand edit or a bad disk might leave it: its meta line, the user's question, then
    `lines` (records, or raw text)."""
    path = Path(home, "sessions", "odd.jsonl")
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [meta or {"type": "meta", "id": "odd", "model": "scripted"}, message(user("go")), *lines]
    path.write_text("\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines))
    return path


def resumed(home):
    """What each way in makes of the file "odd": `load`'s history is legal, /sessions lists it as damaged,
    and a resume carries on (the scripted model refuses any request the API would). Returns what load said."""
    messages, meta = load(home, "odd")
    check_history(messages)
    (row,) = [row for row in list_sessions(home) if row.id == "odd"]
    assert row.preview.startswith("[damaged: ")
    told = []
    agent = make(home, ["carried on"])
    log = SessionLog(home, "odd", resume=True, on_error=told.append).attach(agent)
    assert agent.chat("and now?") == "carried on"
    log.close()
    assert load(home, "odd")[0] == agent.messages
    assert told == [f"session odd: {problem}: skipped, the rest is resumed" for problem in meta["damaged"]]
    return messages, meta


CALL = {"id": "c1", "type": "function", "function": {"name": "echo", "arguments": "{}"}}
REFUSED_CALLS = {  # an assistant's tool_calls the chat API would refuse
    "a number": 5, "a string": "c1", "a dict": CALL, "a list of non-dicts": [1, "c1"], "an empty list": [],
    "an id that is a list": [{**CALL, "id": ["c1"]}], "an id that is a dict": [{**CALL, "id": {"id": "c1"}}],
    "an id that is a number": [{**CALL, "id": 1}], "no id": [{k: v for k, v in CALL.items() if k != "id"}],
    "an empty id": [{**CALL, "id": ""}], "a function that is text": [{**CALL, "function": "echo"}],
    "arguments that are an object": [{**CALL, "function": {"name": "echo", "arguments": {}}}],
    "another type": [{**CALL, "type": "tool"}],
}


@pytest.mark.parametrize("calls", REFUSED_CALLS.values(), ids=REFUSED_CALLS)
def test_an_assistant_message_whose_calls_the_api_would_refuse_is_skipped_and_said(tmp_path, calls):
    session_file(tmp_path, message({"role": "assistant", "content": "", "tool_calls": calls}),
                 message(tool_result("c1", "its result")), message(assistant("still here")))
    messages, meta = resumed(tmp_path)
    assert messages == [user("go"), assistant("still here")]  # its result, answering nothing now, went too
    assert meta["damaged"] == ["line 3 is a malformed message record"]


@pytest.mark.parametrize("call_id", [["c1"], {"id": "c1"}, 1, "", None], ids=["list", "dict", "number", "empty",
                                                                               "missing"])
def test_a_tool_result_whose_call_id_is_not_text_is_skipped_and_its_call_answered_as_cut_short(tmp_path,
                                                                                              call_id):
    result = {"role": "tool", "content": "its result", **({"tool_call_id": call_id} if call_id is not None else {})}
    session_file(tmp_path, message(assistant("", [ToolCall("c1", "echo", "{}")])), message(result))
    messages, meta = resumed(tmp_path)
    assert messages[2:] == [tool_result("c1", CUT_SHORT)]
    assert meta["damaged"] == ["line 4 is a malformed message record"]


REFUSED = {  # messages the chat API answers with a 400, in this request and every later one
    "content that is an object": {"role": "user", "content": {"text": "hi"}},
    "content that is a number": {"role": "user", "content": 42},
    "no content": {"role": "user"},
    "a field the API does not know": {"role": "user", "content": "hi", "mood": "curious"},
    "a field of another role": {"role": "assistant", "content": "hi", "tool_call_id": "c1"},
    "reasoning that is not text": {"role": "assistant", "content": "hi", "reasoning_content": ["think"]},
    "a role the API does not know": {"role": "wizard", "content": "hi"},
}


@pytest.mark.parametrize("refused", REFUSED.values(), ids=REFUSED)
def test_a_message_the_api_would_refuse_never_reaches_the_history(tmp_path, refused):
    session_file(tmp_path, message(refused), {"type": "history", "messages": [user("go"), refused]},
                 {"type": "history", "messages": 5}, message(assistant("still here")))
    messages, meta = resumed(tmp_path)
    assert messages == [user("go"), assistant("still here")]
    assert meta["damaged"] == ["line 3 is a malformed message record", "line 4 is a malformed history record",
                               "line 5 is a malformed history record"]


@pytest.mark.parametrize("model", [5, ["gpt-4o"], {"name": "gpt-4o"}], ids=["number", "list", "dict"])
def test_a_model_that_is_not_text_is_taken_as_absent_and_said(tmp_path, model):
    session_file(tmp_path, meta={"type": "meta", "id": "odd", "model": model})
    _, meta = resumed(tmp_path)
    assert meta["model"] is None and meta["damaged"] == ["line 1 is a meta record whose model is not text"]
    session_file(tmp_path, {"type": "model", "model": "second"}, {"type": "model", "model": model})
    _, meta = resumed(tmp_path)
    assert meta["model"] == "second"  # the one last named
    assert meta["damaged"] == ["line 4 is a model record whose model is not text"]


def test_a_meta_record_gives_its_text_fields_only_never_the_todos_or_the_token_counts(tmp_path):
    todos = [{"content": "ship it", "status": "pending"}]
    session_file(tmp_path, {"type": "todos", "todos": todos}, {"type": "usage", "model": "m", "usage": {}},
                 {"type": "meta", "todos": [], "usage": 7, "damaged": "no"},
                 meta={"type": "meta", "id": ["odd"], "created": 2026, "cwd": {"path": "/"}, "model": "m"})
    _, meta = resumed(tmp_path)
    assert meta == {"id": "odd", "created": None, "cwd": None, "model": "m", "todos": todos,
                    "usage": [("m", Usage())],
                    "damaged": [f"line 1 is a meta record whose {key} is not text" for key in ("id", "created", "cwd")]}


def test_the_command_resumes_a_session_whose_meta_fields_are_of_the_wrong_kind(tmp_path):
    session_file(tmp_path / "home", meta={"type": "meta", "id": "odd", "model": {"name": "gpt-4o"}, "cwd": 5,
                                          "todos": "all of them", "usage": 7})
    with ScriptServer(["carried on"]) as server:
        run = corecoder("-p", "and now?", "--resume", "odd", cwd=tmp_path, env=environment(server, tmp_path / "home"))
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
    assert "carried on" in run.stdout
    assert "line 1 is a meta record whose model is not text: skipped, the rest is resumed" in run.stderr
    assert server.requests[0]["body"]["model"] == "scripted"  # the model the environment names


def test_a_new_session_says_its_format_in_its_meta_line(tmp_path):
    agent = make(tmp_path, ["hi"])
    log = SessionLog(tmp_path).attach(agent)
    agent.chat("go")
    assert records(log.path)[0]["format"] == FORMAT == 1


@pytest.mark.parametrize("written", [FORMAT + 1, 99])
def test_a_session_of_a_newer_format_is_refused_in_one_line_and_listed_as_such(tmp_path, written):
    path = session_file(tmp_path / "home", message(assistant("from the future")),
                        meta={"type": "meta", "id": "odd", "model": "scripted", "format": written})
    before = path.read_bytes()
    with pytest.raises(SessionError, match=f"written by a newer corecoder \\(session format {written}; this one "
                                           f"reads up to {FORMAT}\\): upgrade corecoder to resume it"):
        SessionLog(tmp_path / "home", "odd", resume=True)
    (row,) = list_sessions(tmp_path / "home")
    assert "newer corecoder" in row.preview
    with ScriptServer(["never asked"]) as server:
        run = corecoder("-p", "and now?", "-r", "odd", cwd=tmp_path, env=environment(server, tmp_path / "home"))
    assert run.returncode == 1 and "Traceback" not in run.stderr and server.requests == []
    assert "newer corecoder" in run.stderr and path.read_bytes() == before  # nothing appended


@pytest.mark.parametrize("meta", [{"type": "meta", "id": "odd", "model": "scripted"},  # before formats
                                  {"type": "meta", "id": "odd", "model": "scripted", "format": 1},
                                  {"type": "meta", "id": "odd", "model": "scripted", "format": "2"},
                                  {"type": "meta", "id": "odd", "model": "scripted", "format": True}])
def test_a_session_of_this_format_or_older_or_a_format_that_is_not_a_number_resumes(tmp_path, meta):
    session_file(tmp_path, message(assistant("hello")), meta=meta)
    agent = make(tmp_path, ["carried on"])
    SessionLog(tmp_path, "odd", resume=True).attach(agent)
    assert agent.chat("and now?") == "carried on" and agent.messages[1] == assistant("hello")


DEEP = '{"type": "message", "message": ' + "[" * 100_000  # json.loads raises RecursionError, not ValueError


def test_a_line_nested_too_deep_to_read_is_skipped_and_said_even_as_the_last_line(tmp_path):
    session_file(tmp_path, DEEP, message(assistant("still here")))
    messages, meta = resumed(tmp_path)
    assert messages == [user("go"), assistant("still here")]
    assert meta["damaged"] == ["line 3 is nested too deep to read"]
    path = session_file(tmp_path, message(assistant("still here")), DEEP)  # last, and without its newline
    assert load(tmp_path, "odd")[1]["damaged"] == ["line 4 is nested too deep to read"]
    resumed(tmp_path)  # appending after it: no torn line of ours, so it is kept, and still said
    assert DEEP.encode() + b"\n" in path.read_bytes()


def test_token_counts_and_todos_of_the_wrong_kind_are_skipped_and_said(tmp_path):
    session_file(tmp_path, '{"type": "usage", "model": "m", "usage": {"prompt_tokens": 1e999}}',
                 {"type": "todos", "todos": [{"content": "x", "status": ["done"]}]})
    _, meta = resumed(tmp_path)
    assert (meta["usage"], meta["todos"]) == ([], [])
    assert meta["damaged"] == ["line 3 is a malformed usage record", "line 4 is a malformed todos record"]


# --- a reply's calls are on disk before they run -----------------------------------------------------------


class Peek(Tool):
    """Looks, while it runs, at what a resume would make of the session: as if the process died now."""

    name = "peek"
    description = "Look."
    parameters = {"type": "object", "properties": {}}

    def __init__(self, home):
        self.home, self.seen = home, []

    def run(self, ws):
        self.seen.append(load(self.home, "mine")[0])
        return "looked"


@pytest.mark.parametrize("executor", [None, RunInParallel()], ids=["in order", "at once"])
def test_a_reply_is_on_disk_before_its_calls_run_so_a_crash_mid_call_resumes_them_as_cut_short(tmp_path,
                                                                                             executor):
    peek = Peek(tmp_path)
    script = [{"text": "Let me look.", "tool_calls": [call("peek"), call("peek")]}, "done"]
    agent = Agent(ScriptedLLM(script), tools=[peek], cwd=tmp_path, executor=executor)
    log = SessionLog(tmp_path, "mine").attach(agent)
    agent.chat("go")
    reply = agent.messages[1]
    ids = [c["id"] for c in reply["tool_calls"]]
    assert peek.seen == [[user("go"), reply, *(tool_result(i, CUT_SHORT) for i in ids)]] * 2
    assert [r["type"] for r in records(log.path)] == ["meta"] + ["message"] * 5  # each message written once
    assert load(tmp_path, "mine")[0] == agent.messages


def test_a_call_the_user_interrupts_is_on_disk_once_with_its_interrupted_result(tmp_path):
    agent = Agent(ScriptedLLM([{"tool_calls": [call("boom", kind="interrupt")]}]), tools=[Boom()], cwd=tmp_path)
    log = SessionLog(tmp_path).attach(agent)
    with pytest.raises(KeyboardInterrupt):
        agent.chat("go")
    assert load(tmp_path, log.id)[0] == agent.messages and agent.messages[-1]["content"] == INTERRUPTED
    assert [r["type"] for r in records(log.path)] == ["meta"] + ["message"] * 3


def test_a_reply_that_keeps_its_reasoning_is_written_early_as_the_loop_adds_it(tmp_path):
    llm = ScriptedLLM([Reply("Let me look.", [ToolCall("c1", "echo", '{"text": "a"}')], "hmm", keep_reasoning=True),
                       "done"])
    llm.keep_reasoning = True  # as the client is for DeepSeek and Kimi
    agent = Agent(llm, tools=[Echo()], cwd=tmp_path)
    log = SessionLog(tmp_path).attach(agent)
    agent.chat("go")
    assert agent.messages[1]["reasoning_content"] == "hmm"
    assert [r["type"] for r in records(log.path)] == ["meta"] + ["message"] * 4
    assert load(tmp_path, log.id)[0] == agent.messages


class Unstreamed(ScriptedLLM):
    def chat(self, messages, tools=None, emit=None):
        return super().chat(messages, tools)  # shows nothing as it arrives: the early copy has no text


def test_a_reply_other_than_the_one_written_early_is_restated_never_doubled(tmp_path):
    agent = Agent(Unstreamed([{"text": "Let me look.", "tool_calls": [call("echo", text="a")]}, "done"]),
                  tools=[Echo()], cwd=tmp_path)
    log = SessionLog(tmp_path).attach(agent)
    agent.chat("go")
    assert [r["type"] for r in records(log.path)].count("history") == 1
    assert load(tmp_path, log.id)[0] == agent.messages


def test_a_sub_agents_calls_run_by_the_shared_executor_are_not_the_sessions(tmp_path):
    def model(messages, tools):
        if messages[1]["content"] == "task:look":  # the worker: one call, then its report
            return {"tool_calls": [call("read_file", path="secret-of-the-worker.md")]} if len(messages) == 2 \
                else "report"
        return {"tool_calls": [call("agent", task="task:look")]} if len(messages) == 2 else "done"

    agent = build_agent(FunctionLLM(model), tmp_path)
    log = SessionLog(tmp_path / "home").attach(agent)
    assert agent.chat("look around") == "done"
    assert "secret-of-the-worker" not in log.path.read_text()
    assert [r["type"] for r in records(log.path)] == ["meta"] + ["message"] * 4
    assert load(tmp_path / "home", log.id)[0] == agent.messages


def test_list_sessions_newest_first_with_count_and_preview(tmp_path):
    ids = []
    for n, text in enumerate(["first   task\nwith lines", "second"]):
        agent = make(tmp_path, ["ok"])
        log = SessionLog(tmp_path, f"s{n}").attach(agent)
        agent.chat(text)
        os.utime(log.path, (1000 + n, 1000 + n))
        ids.append(log.id)
    (tmp_path / "sessions" / "broken.jsonl").write_text('{"type": "meta"}\ngarbage\n{"type": "meta"}\n')
    os.utime(tmp_path / "sessions" / "broken.jsonl", (1, 1))
    rows = list_sessions(tmp_path)
    assert [r.id for r in rows] == ["s1", "s0", "broken"]
    assert (rows[1].messages, rows[1].preview) == (2, "first task with lines")
    assert rows[2].preview == "[damaged: line 2 is not JSON] "
    assert list_sessions(tmp_path / "nowhere") == []


# --- ids and paths ---------------------------------------------------------------------------------------

HOSTILE = ["../x", "../../etc/passwd", "/etc/passwd", "..%2f..%2fx", "..", ".", "", "   ", "a/b", "a\\b",
           "x\x00y", "x" * 65, "~", "$HOME", "ａｂｃ", "x.jsonl/../../y", "x\ny", "-" * 64 + "/", "a b"]


@pytest.mark.parametrize("bad", HOSTILE)
def test_a_bad_session_id_is_a_clear_error_and_touches_nothing(tmp_path, bad):
    before = sorted(tmp_path.rglob("*"))
    for attempt in (lambda: load(tmp_path, bad), lambda: SessionLog(tmp_path, bad),
                    lambda: SessionLog(tmp_path, bad, resume=True)):
        with pytest.raises(SessionError, match="bad session id"):
            attempt()
    assert sorted(tmp_path.rglob("*")) == before


def test_good_ids_are_accepted_as_given(tmp_path):
    assert session_path(tmp_path, "my_session-2").name == "my_session-2.jsonl"
    assert session_path(tmp_path, " x.jsonl ").name == "x.jsonl"  # a pasted file name or a stray space
    assert session_path(tmp_path, "x" * 64).name == "x" * 64 + ".jsonl"


def test_a_symlinked_entry_pointing_outside_is_refused_and_never_read(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.jsonl"
    secret.write_text('{"type": "meta"}\n{"type": "message", "message": {"role": "user", "content": "SECRET"}}\n')
    home = tmp_path / "home"
    (home / "sessions").mkdir(parents=True)
    (home / "sessions" / "evil.jsonl").symlink_to(secret)
    (home / "sessions" / "dangling.jsonl").symlink_to(outside / "new.jsonl")
    for name in ("evil", "dangling"):
        with pytest.raises(SessionError, match="outside"):
            load(home, name)
        with pytest.raises(SessionError, match="outside"):
            SessionLog(home, name, resume=True)
    assert "SECRET" not in str(list_sessions(home)) and list_sessions(home) == []
    assert not (outside / "new.jsonl").exists()


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A home whose sessions dir holds a link out, next to a folder that must stay untouched."""
    root = tmp_path_factory.mktemp("world")
    outside = root / "outside"
    outside.mkdir()
    (outside / "secret.jsonl").write_text('{"type": "meta"}\n')
    (root / "home" / "sessions").mkdir(parents=True)
    (root / "home" / "sessions" / "link.jsonl").symlink_to(outside / "secret.jsonl")
    (root / "home" / "sessions" / "up").symlink_to(outside)
    return root


def fingerprint(folder):
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir" for p in folder.rglob("*")}


class _Quiet:
    messages = [user("hi")]
    llm = type("M", (), {"model": "m"})()
    workspace = type("W", (), {"cwd": "/", "todos": []})()
    executor = None  # never run: the log wraps it, to write a reply before its calls run

    def subscribe(self, fn):
        return fn


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(st.sampled_from(HOSTILE + ["link", "up/secret", "up", "ok-id"]), st.text(max_size=80),
                 st.from_regex(r"[A-Za-z0-9_\-./%\\\x00~]{0,70}", fullmatch=True)))
def test_fuzzed_ids_never_reach_outside_the_sessions_dir(world, monkeypatch, session_id):
    home, outside = world / "home", world / "outside"
    folder = (home / "sessions").resolve()
    if session_id.startswith("/"):  # aim absolute paths at the sandbox, not at the real /
        session_id = f"{outside}{session_id}"
    before = fingerprint(outside)
    # Every open and mkdir is checked, and one outside the folder is refused as well as recorded:
    # should the code under test ever break, this test still writes nothing outside the sandbox.
    escapes = []

    def guard(real, allowed):
        def checked(path, *args, **kwargs):
            if not allowed(Path(os.fsdecode(path)).resolve()):
                escapes.append(path)
                raise PermissionError(f"test guard: {path}")
            return real(path, *args, **kwargs)
        return checked

    monkeypatch.setattr(os, "open", guard(os.open, lambda p: folder in (p, p.parent)))
    monkeypatch.setattr(os, "mkdir", guard(os.mkdir, lambda p: p == folder))
    for attempt in (lambda: load(home, session_id), lambda: SessionLog(home, session_id).attach(_Quiet()).save(),
                    lambda: SessionLog(home, session_id, resume=True).attach(_Quiet()).save()):
        try:
            attempt()
        except (SessionError, PermissionError):
            pass
    monkeypatch.undo()
    assert escapes == []
    assert fingerprint(outside) == before
    assert {p.parent.resolve() for p in world.rglob("*") if p.is_file() and not p.is_symlink()} <= {
        folder, outside.resolve()}


# --- kill -9 ---------------------------------------------------------------------------------------------

WRITER = textwrap.dedent("""
    import os, random, sys, time
    sys.path.insert(0, sys.argv[2])
    from corecoder import Agent, FunctionLLM
    from corecoder.executor import RunInParallel
    from corecoder.messages import user
    from corecoder.session import SessionLog
    from corecoder.tool import Tool

    stall = sys.argv[3:]  # "in order" or "at once": the first call says "go" and never ends, so the kill lands in it

    class Big(Tool):
        name = "big"
        parameters = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
        def run(self, ws, n):
            if stall:  # one write, one line: two calls at once never interleave "gogo\\n\\n"
                os.write(1, b"go\\n")
                time.sleep(60)
            return str(n) * random.randint(1, 300_000)  # long lines: a kill can land in the middle of one

    class Squash:  # every few rounds the history is replaced, as compaction does
        def attach(self, agent):
            pass

        def prepare(self, messages, overflow=False):
            if len(messages) > 12 and messages[-1]["role"] != "tool":
                return [user("[summary]"), *messages[-1:]]
            return messages

    def reply(messages, tools):
        n = len(messages)
        return {"tool_calls": [{"name": "big", "arguments": {"n": n}}, {"name": "big", "arguments": {"n": n + 1}}]}

    agent = Agent(FunctionLLM(reply), tools=[Big()], max_rounds=10**6, context=Squash(), cwd=sys.argv[1],
                  executor=RunInParallel() if stall == ["at once"] else None)
    log = SessionLog(sys.argv[1], "victim").attach(agent)
    started = list(stall)  # a stalling writer says "go" from its tool instead
    agent.subscribe(lambda e: log.path.exists() and not started and (started.append(1), print("go", flush=True)))
    while True:
        agent.chat("more")
""")


def test_kill_9_during_writes_never_leaves_a_session_that_will_not_load(tmp_path):
    rng = random.Random(5)
    homes = [tmp_path / f"trial{n}" for n in range(30)]
    for home in homes:
        home.mkdir()
    with ThreadPoolExecutor(10) as pool:
        list(pool.map(lambda h: run_and_kill(WRITER, [str(h), str(ROOT)], rng.uniform(0.05, 0.4)), homes))
    torn = 0
    for home in homes:
        data = (home / "sessions" / "victim.jsonl").read_bytes()
        torn += not data.endswith(b"\n")
        messages, meta = load(home, "victim")
        check_history(messages)
        assert meta["id"] == "victim" and messages
        agent = make(home, ["resumed"])
        SessionLog(home, "victim", resume=True).attach(agent)
        assert agent.chat("go on") == "resumed"
        assert load(home, "victim")[0] == agent.messages
    print(f"{torn} of {len(homes)} trials were killed mid-line")


@pytest.mark.parametrize("executor", ["in order", "at once"])
def test_kill_9_while_a_tool_runs_resumes_with_the_reply_and_its_calls_answered_as_cut_short(tmp_path, executor):
    """The loop adds a reply to the history with its results; the log writes it before its calls run."""
    run_and_kill(WRITER, [str(tmp_path), str(ROOT), executor], 0)
    messages, meta = load(tmp_path, "victim")
    check_history(messages)
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool"] and meta["damaged"] == []
    assert [c["function"]["name"] for c in messages[1]["tool_calls"]] == ["big", "big"]
    assert [m["content"] for m in messages[2:]] == [CUT_SHORT, CUT_SHORT]
    agent = make(tmp_path, ["It was cut off."])
    SessionLog(tmp_path, "victim", resume=True).attach(agent)
    agent.chat("what happened?")
    sent = agent.llm.requests[0]["messages"]
    assert [m["content"] for m in sent if m["role"] == "tool"] == [CUT_SHORT, CUT_SHORT]  # the model is told


@pytest.mark.skipif(sys.platform == "win32", reason="flock")
def test_a_second_writer_of_one_session_is_refused_until_the_first_lets_go(tmp_path):
    agent = make(tmp_path, ["one"])
    log = SessionLog(tmp_path).attach(agent)
    agent.chat("a")
    with pytest.raises(SessionError, match="is open in another corecoder: go on there, or start a new"):
        SessionLog(tmp_path, log.id, resume=True)
    log.close()
    assert SessionLog(tmp_path, log.id, resume=True).meta["id"] == log.id


def test_a_whole_last_record_without_its_newline_is_kept_not_cut(tmp_path):
    """A hand edit that drops the final newline leaves a complete record: the next write gives it
    its newline instead of cutting it off as a torn line."""
    agent = make(tmp_path, ["one", "two"])
    log = SessionLog(tmp_path).attach(agent)
    agent.chat("a")
    log.path.write_bytes(log.path.read_bytes().rstrip(b"\n"))
    agent.chat("b")
    assert load(tmp_path, log.id)[0] == agent.messages


def test_a_todo_list_with_a_status_todo_write_does_not_know_is_skipped_and_said(tmp_path):
    """It could not be shown: every round of the resumed session would fail on it."""
    path = tmp_path / "sessions" / "odd.jsonl"
    path.parent.mkdir()
    path.write_text('{"type": "meta", "id": "odd"}\n'
                    '{"type": "todos", "todos": [{"content": "x", "status": "someday"}]}\n')
    _, meta = load(tmp_path, "odd")
    assert meta["todos"] == [] and meta["damaged"] == ["line 2 is a malformed todos record"]


# --- a Ctrl+C at any moment of a write -------------------------------------------------------------------

SYSTEM_CALLS = ("open", "write", "fsync", "close", "link", "unlink", "ftruncate", "pread", "fstat", "stat",
                "mkdir")


class CtrlC:
    """The system calls a write makes, counted; the n-th raises KeyboardInterrupt, before it runs
    or (`after`) once it has: where a real Ctrl+C lands, between two steps of Python."""

    def __init__(self, monkeypatch, n=0, after=False):
        self.n, self.after, self.count, self.armed = n, after, 0, True
        import fcntl
        for module, name in [*((os, name) for name in SYSTEM_CALLS), (fcntl, "flock")]:
            monkeypatch.setattr(module, name, self.wrap(getattr(module, name)))

    def wrap(self, real):
        def step(*args, **kw):
            self.count += self.armed
            if self.armed and self.count == self.n and not self.after:
                raise KeyboardInterrupt
            result = real(*args, **kw)
            if self.armed and self.count == self.n:
                raise KeyboardInterrupt
            return result
        return step


def first_turn(home, monkeypatch, n=0, after=False):
    """A new session's first turn with a Ctrl+C at its n-th system call; then the Ctrl+C is over."""
    warnings = []
    agent = make(home, [{"tool_calls": [call("echo", text="a")]}, "one", "two"])
    log = SessionLog(home, on_error=warnings.append).attach(agent)
    with monkeypatch.context() as patch:
        ctrl_c = CtrlC(patch, n, after)
        try:
            agent.chat("first")
        except KeyboardInterrupt:
            pass
        ctrl_c.armed = False
    return agent, log, warnings, ctrl_c.count


HISTORY_TURN = st.lists(st.sampled_from(["answer", "call", "orphan", "unanswered", "dup"]), max_size=4)


