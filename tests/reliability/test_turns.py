"""Sessions keep every turn: a Ctrl+C at any step of a save, the first one included, never costs a
later turn; a summary request is bounded by the window however long the resumed session (issue
#38, class 9)."""

from __future__ import annotations

import re
import sys

import pytest

from corecoder import Agent, ScriptedLLM
from corecoder.context import Compactor, transcript, trim
from corecoder.events import Finished
from corecoder.messages import user
from corecoder.session import SessionLog, load
from corecoder.tokens import history_tokens
from helpers import Echo
from test_context import round_trip, summarizer
from test_session import first_turn, make

pytestmark = pytest.mark.row("turns")


@pytest.mark.skipif(sys.platform == "win32", reason="flock")
def test_a_ctrl_c_at_any_step_of_any_write_never_leaves_a_later_turn_unsaved(tmp_path, monkeypatch):
    """Every moment of the turn's writes, the new session's first one included, before and after
    each system call: the next turn is saved, whole, and the folder holds the session alone."""
    steps = first_turn(tmp_path / "count", monkeypatch)[3]
    assert steps > 20  # the first write and the ones after it, each of their steps
    for n in range(1, steps + 1):
        for after in (False, True):
            home = tmp_path / f"{n}-{after}"
            agent, log, warnings, _ = first_turn(home, monkeypatch, n, after)
            agent.chat("second")
            assert (warnings, load(home, log.id)[0]) == ([], agent.messages), (n, after)
            assert [p.name for p in (home / "sessions").iterdir()] == [f"{log.id}.jsonl"]
            log.close()


def test_a_turn_whose_last_write_a_ctrl_c_skipped_is_written_by_flush_as_the_command_leaves(tmp_path):
    """A Ctrl+C can land in another subscriber while the turn's end is handed round: the log never
    hears of it. The command flushes the log as it leaves."""
    agent = make(tmp_path, ["done"])
    agent.subscribe(lambda event: isinstance(event, Finished) and (_ for _ in ()).throw(KeyboardInterrupt))
    log = SessionLog(tmp_path).attach(agent)  # it hears each event after the one interrupted
    with pytest.raises(KeyboardInterrupt):
        agent.chat("go")
    assert load(tmp_path, log.id)[0] == agent.messages[:1]  # the answer is not on disk yet
    log.flush()
    assert load(tmp_path, log.id)[0] == agent.messages and agent.messages[-1]["content"] == "done"


def test_the_summary_request_of_a_40_mb_resumed_session_fits_the_window(tmp_path):
    """What the summarizer is sent is bounded by its window, however long the history: the task and
    the newest messages that fit, with a line saying how many were left out between."""
    from corecoder.session import SessionLog

    output = "def mean(values):\n    return sum(values) / len(values)  # the divisor\n" * 70
    history = [user("fix the mean in stats.py"),
               *[m for n in range(8_000) for m in round_trip(n, f"{n}: {output}")], user("go on")]
    agent = Agent(ScriptedLLM(["saved"]), [Echo()], cwd=tmp_path)
    agent.messages = history
    log = SessionLog(tmp_path).attach(agent)
    assert log.save().stat().st_size > 40_000_000
    log.close()
    llm = summarizer()
    resumed = Agent(llm, [Echo()], cwd=tmp_path, context=Compactor(window=32_000))
    SessionLog(tmp_path, log.id, resume=True).attach(resumed)
    assert resumed.run() == "done"
    summary_request, request = llm.requests
    assert history_tokens(summary_request["messages"]) <= 32_000 // 2 + 500  # the transcript, the prompt
    first, left_out, *newest = summary_request["messages"][1]["content"].split("\n", 2)
    assert first == "user: fix the mean in stats.py"
    assert re.fullmatch(r"\[\.\.\. [\d,]+ messages cut; too many to summarize at once \.\.\.\]", left_out)
    summarized = len(history) - len(request["messages"][2:])  # the system prompt, the summary, the rest
    newest_summarized = trim(history[summarized - 1], Compactor().trim_over)  # trimmed, then summarized
    assert newest[0].endswith(transcript([newest_summarized]))  # the newest, as ever
    assert history_tokens(request["messages"]) <= 32_000
