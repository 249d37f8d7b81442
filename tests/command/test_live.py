"""One real round trip, for a developer with a key: opt in with CORECODER_LIVE_KEY (and
CORECODER_LIVE_BASE_URL, CORECODER_LIVE_MODEL for a provider other than OpenAI's gpt-4o-mini).
Skipped otherwise, and so in CI: every other test runs offline against the loopback server.

    CORECODER_LIVE_KEY=sk-... pytest tests/command/test_live.py -p no:xdist

It costs a few cents at most: one task, a tool call and an answer."""

import os

import pytest

from helpers import corecoder, environment

KEY = os.environ.get("CORECODER_LIVE_KEY")


@pytest.mark.skipif(not KEY, reason="opt-in: set CORECODER_LIVE_KEY to make one real round trip")
def test_a_real_model_calls_a_tool_and_answers_through_the_command(tmp_path):
    live = {"OPENAI_API_KEY": KEY, "CORECODER_MODEL": os.environ.get("CORECODER_LIVE_MODEL", "gpt-4o-mini")}
    if os.environ.get("CORECODER_LIVE_BASE_URL"):
        live["OPENAI_BASE_URL"] = os.environ["CORECODER_LIVE_BASE_URL"]
    (tmp_path / "secret-word.txt").write_text("periwinkle\n")
    run = corecoder("-p", "Read the file secret-word.txt with your read_file tool, then answer with the "
                    "word it holds and nothing else.", cwd=tmp_path, env=environment(None, tmp_path / "home", **live),
                    timeout=180)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "read_file" in run.stderr  # the call, as -p shows it on stderr
    assert "periwinkle" in run.stdout.lower()
