"""The `corecoder` command: -p end to end over the real client, the REPL and its commands, a real terminal.

Everything is offline: the model is a script, served over loopback HTTP by ScriptServer
(so the real openai client, streaming and retries included, is exercised) or handed
to the agent directly as a ScriptedLLM where only the REPL's own behaviour is tested.
"""

import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console

from corecoder import FunctionLLM, ScriptedLLM, check_history
from corecoder.agent import KeepEverything
from corecoder.cli.app import assemble, run_once
from corecoder.cli.config import load_config
from corecoder.cli.render import Renderer
from corecoder.cli.repl import HELP, Repl, prompt_session
from corecoder.cli.trace import Printer
from corecoder.demo import SCRIPT, copy_project
from corecoder.events import ReasoningDelta, Retrying, TextDelta
from corecoder.messages import INTERRUPTED, ModelError
from corecoder.permissions import Consent
from corecoder.session import SessionLog
from corecoder.testing import ScriptServer
from corecoder.tools import ReadFile, WriteFile
from corecoder.workspace import Workspace
from helpers import Boom, Echo, corecoder, ended, environment, read_until, terminal

ANSWER = SCRIPT[-1]
BUGGY = "    return sum(values) / (len(values) - 1)"






def told(server: ScriptServer) -> list[str]:
    """Every tool result the model was sent, over all requests."""
    return [m["content"] for r in server.requests if r["body"] for m in r["body"]["messages"] if m["role"] == "tool"]


# -p: one task, unattended, against the real client over HTTP


def test_p_runs_the_demo_task_end_to_end(tmp_path):
    project = copy_project(tmp_path)
    with ScriptServer(SCRIPT) as server:
        run = corecoder("-p", "fix the failing test", "--yes", cwd=project, env=environment(server, tmp_path))
    assert run.returncode == 0, run.stderr
    assert run.stdout == ANSWER + "\n"  # the answer alone: `corecoder -p ... > answer.txt` works
    assert BUGGY not in (project / "stats.py").read_text()
    assert "3 of 3 tests passed" in run.stderr  # progress went to stderr
    assert run.stderr.count("→ ") == 5
    assert "tokens in" in run.stderr  # the ledger's summary: a script plays the model, for nothing
    assert run.stderr.splitlines()[-1].endswith(" · no cost: a script plays the model")
    assert "Traceback" not in run.stderr


def with_faults(script: list) -> list:
    """A fault before every real turn: mostly 429s with Retry-After 0, one 500 and one dropped stream."""
    faults = [{"fault": "rate_limit", "retry_after": 0}] * len(script)
    faults[1] = {"fault": "server_error"}
    last = script[-1]
    faults[-1] = {"fault": "drop", **({"text": last} if isinstance(last, str) else last)}
    return [turn for pair in zip(faults, script, strict=True) for turn in pair]


def test_p_survives_a_fault_before_every_round(tmp_path):
    project = copy_project(tmp_path)
    with ScriptServer(with_faults(SCRIPT)) as server:
        run = corecoder("-p", "fix the failing test", "--yes", cwd=project, env=environment(server, tmp_path))
    assert run.returncode == 0, run.stderr
    assert run.stdout == ANSWER + "\n"
    assert BUGGY not in (project / "stats.py").read_text()
    assert len(server.requests) == 2 * len(SCRIPT)
    assert run.stderr.count("retrying in") == len(SCRIPT)
    assert "retrying in 0.0 s (429" in run.stderr
    # The answer's first half streamed before the drop; after the retry only the rest is shown.
    assert run.stderr.count("Fixed: `mean`") == 1 and run.stderr.count("now pass.") == 1


def test_p_without_yes_refuses_the_tools_that_change_things(tmp_path):
    project = copy_project(tmp_path)
    with ScriptServer(SCRIPT) as server:
        run = corecoder("-p", "fix the failing test", cwd=project, env=environment(server, tmp_path))
    assert run.returncode == 0, run.stderr
    assert BUGGY in (project / "stats.py").read_text()  # unchanged
    results = told(server)
    assert "edit_file refused by consent: edit_file changes files or runs commands, and there is nobody" \
        in " ".join(results)
    assert any(r.startswith("bash refused by consent") for r in results)
    assert any("def mean" in r for r in results)  # reading and searching still work


def test_with_nobody_to_ask_consent_refuses_only_mutating_tools(tmp_path):
    gate = Consent(None)
    assert gate.name == "consent"
    assert gate.before(ReadFile(), {"path": "x"}, Workspace(tmp_path)) is None
    refusal = gate.before(WriteFile(), {"path": "x", "content": ""}, Workspace(tmp_path))
    assert "nobody to allow it" in refusal and "without --yes" in refusal


def test_a_missing_key_is_one_clear_line_not_a_traceback(tmp_path):
    run = corecoder("-p", "hi", cwd=tmp_path, env=environment(None, tmp_path))
    assert run.returncode == 1
    assert "OPENAI_API_KEY" in run.stderr and "--demo" in run.stderr
    assert "Traceback" not in run.stderr
    assert run.stdout == ""


def test_a_model_error_exits_1_with_its_message(tmp_path):
    with ScriptServer([{"fault": "auth"}]) as server:
        run = corecoder("-p", "hi", cwd=tmp_path, env=environment(server, tmp_path))
    assert run.returncode == 1
    assert "rejected the API key (401)" in run.stderr
    assert "Traceback" not in run.stderr
    assert run.stdout == ""


def test_ctrl_c_during_a_tool_call_exits_130(tmp_path):
    # A minute's sleep, interrupted once it has started: waited out, it would take 60 s; cut short, well
    # under 30 s even on a loaded machine, which may take seconds to start the process.
    script = [{"tool_calls": [{"name": "bash", "arguments": {"command": "sleep 60"}}]}, "never reached"]
    with ScriptServer(script) as server:
        proc = subprocess.Popen([sys.executable, "-m", "corecoder", "-p", "wait", "--yes"], cwd=tmp_path,
                                env=environment(server, tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        started = time.monotonic()
        seen = ""
        while "→ bash" not in seen:  # the call has started: interrupt it
            line = proc.stderr.readline()
            assert line, seen
            seen += line
        proc.send_signal(signal.SIGINT)
        out, err = ended(proc, timeout=50)
    assert proc.returncode == 130, seen + err
    assert time.monotonic() - started < 30  # the sleep was cut short, not waited out
    assert "interrupted" in err and "Traceback" not in err
    assert out == ""


def test_v_prints_the_version_and_r_resumes_as_upstreams_command_does(tmp_path):
    from corecoder import __version__

    assert corecoder("-v", cwd=tmp_path, env=environment(None, tmp_path)).stdout == f"corecoder {__version__}\n"
    with ScriptServer(["first answer", "second answer"]) as server:
        env = environment(server, tmp_path / "home")
        assert corecoder("-p", "hi", cwd=tmp_path, env=env).returncode == 0
        [saved] = (tmp_path / "home" / "sessions").glob("*.jsonl")
        again = corecoder("-p", "and again?", "-r", saved.stem, cwd=tmp_path, env=env)
        second = server.requests[-1]["body"]["messages"]
    assert again.returncode == 0 and again.stdout.strip() == "second answer"
    assert [m["content"] for m in second if m["role"] == "user"][-2:] == ["hi", "and again?"]


def test_max_tokens_and_temperature_are_sent_only_when_set_and_dropped_when_refused(tmp_path):
    """As flags or settings; a provider that refuses temperature (a reasoning model) is asked again
    without it, and max_tokens becomes max_completion_tokens where only that is known."""
    with ScriptServer(["plain", "set"], reject=("temperature", "max_tokens")) as server:
        env = environment(server, tmp_path / "home")
        assert corecoder("-p", "hi", cwd=tmp_path, env=env).returncode == 0
        flags = corecoder("-p", "hi", "--max-tokens", "500", "--temperature", "0.2", cwd=tmp_path,
                          env=env)
        bodies = [r["body"] for r in server.requests]
    assert flags.returncode == 0 and flags.stdout.strip() == "set", flags.stderr
    assert not {"max_tokens", "temperature", "max_completion_tokens"} & set(bodies[0])
    sent = [{k: body[k] for k in ("max_tokens", "max_completion_tokens", "temperature") if k in body}
            for body in bodies[1:]]
    assert sent == [{"max_tokens": 500, "temperature": 0.2},  # refused: max_tokens
                    {"max_completion_tokens": 500, "temperature": 0.2},  # refused: temperature
                    {"max_completion_tokens": 500}]  # answered


@pytest.mark.parametrize("flag, value, told", [
    ("--temperature", "3", "must be a temperature from 0 to 2, got '3'"),
    ("--max-tokens", "lots", "must be a positive number of tokens, got 'lots'"),
    ("--base-url", "localhost:11434/v1", "must be an http:// or https:// address, such as "
                                         "http://localhost:11434/v1, got 'localhost:11434/v1'")])
def test_a_bad_flag_is_one_line_that_names_the_flag_the_user_typed(tmp_path, flag, value, told):
    good = {"CORECODER_TEMPERATURE": "0.5", "CORECODER_MAX_TOKENS": "100",
            "CORECODER_BASE_URL": "http://localhost:11434/v1"}  # the flag wins over each
    env = environment(None, tmp_path / "home", OPENAI_API_KEY="x", **good)
    run = corecoder("-p", "hi", flag, value, cwd=tmp_path, env=env)
    assert (run.returncode, run.stdout, run.stderr) == (1, "", f"corecoder: {flag} {told}\n")


def test_a_bad_setting_is_named_as_the_variable_it_came_from(tmp_path):
    env = environment(None, tmp_path / "home", OPENAI_API_KEY="x", CORECODER_TEMPERATURE="3")
    run = corecoder("-p", "hi", cwd=tmp_path, env=env)
    assert run.stderr == "corecoder: CORECODER_TEMPERATURE must be a temperature from 0 to 2, " \
                         "got '3'\n"


def test_compact_at_moves_where_compaction_starts_and_context_says_where(repl, tmp_path):
    shell, out = repl(ScriptedLLM(["hello there"]), "/context",
                      env={"OPENAI_API_KEY": "x", "HOME": str(tmp_path), "CORECODER_COMPACT_AT": "0.6"})
    shell.run()
    assert (shell.agent.context.high, shell.agent.context.low) == (0.6, 0.3)
    assert "compaction: at 60% of the window" in out.getvalue() and "down to 30%" in out.getvalue()


def test_help_does_not_import_the_heavy_libraries():
    run = subprocess.run([sys.executable, "-X", "importtime", "-m", "corecoder", "--help"], capture_output=True,
                         text=True, check=True)
    assert "--prompt" in run.stdout and "--yes" in run.stdout and "--model" in run.stdout
    imported = {line.split("|")[-1].strip() for line in run.stderr.splitlines()}
    assert not imported & {"openai", "rich", "prompt_toolkit"}


def test_stopping_at_max_rounds_exits_1_with_the_stop_message(capsys, tmp_path):
    config = load_config(tmp_path, {"OPENAI_API_KEY": "x", "HOME": str(tmp_path)})
    app = assemble(config, ScriptedLLM([{"tool_calls": [{"name": "echo", "arguments": {"text": "x"}}]}]), tmp_path,
                   SessionLog(config.home), tools=[Echo()])
    app.agent.max_rounds = 1
    assert run_once(app, "go") == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert "stopped after 1 rounds" in err


def test_progress_shows_retries_and_marks_reasoning_once():
    out = io.StringIO()
    progress = Printer(out)
    for event in (Retrying(1, 1.234, "429 slow down"), ReasoningDelta("Let me "), ReasoningDelta("think."),
                  TextDelta("Done.")):
        progress(event)
    assert out.getvalue() == "retrying in 1.2 s (429 slow down)\n(thinking) Let me think.\nDone."


# The REPL, driven with queued lines and a Console writing to a string


class Lines:
    """A stand-in for PromptSession: hands out queued lines, then Ctrl+D."""

    def __init__(self, *lines):
        self.lines = list(lines)

    def prompt(self, *args, **kwargs) -> str:
        if not self.lines:
            raise EOFError
        line = self.lines.pop(0)
        if isinstance(line, BaseException):
            raise line
        return line


@pytest.fixture
def repl(tmp_path):
    """Makes a Repl over `llm` that will read `lines`, and the string its Console writes to."""
    def make(llm, *lines, tools=None, env=None, cwd=None, **kwargs) -> tuple[Repl, io.StringIO]:
        cwd = cwd or tmp_path  # outside the repository: no .env of ours is picked up
        config = load_config(cwd, env or {"OPENAI_API_KEY": "x", "HOME": str(tmp_path)}, model=llm.model)
        app = assemble(config, llm, cwd, SessionLog(config.home), tools=tools, yes=True)
        out = io.StringIO()
        console = Console(file=out, width=100, color_system=None)
        return Repl(app, console, Lines(*lines), env=env or {}, cwd=cwd, **kwargs), out

    return make


def test_a_turn_shows_the_answer_the_tool_calls_and_the_usage(repl):
    llm = ScriptedLLM([{"text": "Looking.", "tool_calls": [{"name": "echo", "arguments": {"text": "hey"}}],
                        "usage": {"prompt_tokens": 1000, "completion_tokens": 10}},
                       {"text": "It says **hey**.", "usage": {"prompt_tokens": 1200, "completion_tokens": 5}}],
                      model="gpt-4o-mini")
    shell, out = repl(llm, "say hey", tools=[Echo()])
    assert shell.run() == 0  # the queued lines ran out: Ctrl+D
    text = out.getvalue()
    assert text.index("Looking.") < text.index('→ echo(text="hey")') < text.index("✓ hey") < text.index("It says")
    assert "It says hey." in text  # rendered as markdown, not raw asterisks
    assert "2,200 tokens in, 15 out · $0.0003" in text
    assert "corecoder" in text and "openai/gpt-4o-mini" in text and "/help" in text  # the banner


def test_the_scripted_model_is_shown_as_a_script_and_never_priced(repl):
    """However a price table names real models, the scripted one is said to be a script, at no
    cost, and never asked to be priced."""
    llm = ScriptedLLM([{"text": "Done.", "usage": {"prompt_tokens": 1000, "completion_tokens": 2}}])
    shell, out = repl(llm, "go", "/tokens")
    shell.run()
    text = out.getvalue()
    assert "openai/scripted (a script plays the model)" in text.splitlines()[0]  # the banner
    assert text.count("1,000 tokens in, 2 out · no cost: a script plays the model") == 2
    assert "$" not in text and "pricing.json" not in text


def test_an_answer_ends_its_line_on_a_console_that_is_no_terminal(repl):
    # rich ends a live display's last frame with a line break only in a terminal: a console
    # writing to a file or a notebook got the cost summary glued onto the answer's last line
    llm = ScriptedLLM([{"text": "Done.", "usage": {"prompt_tokens": 10, "completion_tokens": 2}}],
                      model="gpt-4o-mini")
    shell, out = repl(llm, "go")
    shell.run()
    lines = [line.rstrip() for line in out.getvalue().splitlines()]
    assert "Done." in lines and any(line.startswith("10 tokens in, 2 out") for line in lines)


REFUSAL = ("bash changes files or runs commands, and there is nobody to allow it (running with -p "
           "and without --yes). Do what you can with the read-only tools.")


@pytest.mark.parametrize("shown_by", ["Printer", "Renderer"])
def test_a_refusal_is_shown_whole_and_a_long_failure_keeps_its_end(shown_by):
    """What the user needs of a refused call is often its end (run it with --yes): a refusal is
    shown whole up to three lines of the screen, and a longer failure is cut in the middle. An
    ordinary result stays one line, its head."""
    from corecoder.events import ToolCallFinished, ToolCallStarted
    from corecoder.messages import ToolCall

    out = io.StringIO()
    show = Printer(out) if shown_by == "Printer" else Renderer(
        Console(file=out, width=400, color_system=None))
    failure = "pytest failed: " + "x" * 1_000 + " (the log is in .corecoder/outputs/1.txt)"
    for n, (status, result) in enumerate([("refused", f"bash refused by consent: {REFUSAL}"),
                                          ("failed", failure), ("ok", "y" * 400)]):
        call = ToolCall(f"call_{n}", "bash", "{}")
        show(ToolCallStarted(call))
        show(ToolCallFinished(call, result, status))
    text = out.getvalue()
    assert f"bash refused by consent: {REFUSAL}" in text
    failed = next(line for line in text.splitlines() if "pytest failed" in line)
    assert failed.rstrip().endswith("(the log is in .corecoder/outputs/1.txt)")
    assert "characters cut" in failed and len(failed.strip()) <= 310
    ok = next(line for line in text.splitlines() if "yyy" in line)
    assert len(ok.strip()) <= 110 and ok.rstrip().endswith("characters cut ...]")


def test_help_lists_every_command(repl):
    shell, out = repl(ScriptedLLM([]), "/help")
    shell.run()
    for usage, _ in HELP:
        assert usage in out.getvalue()
    documented = {word.strip("/,") for usage, _ in HELP for word in usage.split() if word.startswith("/")}
    assert set(shell.commands) == documented == {"help", "model", "tokens", "context", "compact", "plan", "undo",
                                                 "diff", "save", "sessions", "session", "providers", "mcp",
                                                 "tools", "verbosity", "reset", "quit", "exit"}
    for name in ("hooks.json", "mcp.json", "pricing.json", "AGENTS.md"):
        assert name in out.getvalue()


def test_an_unknown_command_never_reaches_the_model(repl):
    llm = ScriptedLLM([])
    shell, out = repl(llm, "/frobnicate now")
    shell.run()
    assert llm.requests == [] and shell.agent.messages == []
    assert "unknown command /frobnicate" in out.getvalue() and "/help" in out.getvalue()


@pytest.mark.parametrize("word", ["/quit", "/exit", "/QUIT"])
def test_quit_leaves_without_reading_further(word, repl):
    session = Lines(word, "never read")
    shell, _ = repl(ScriptedLLM([]))
    shell.session = session
    assert shell.run() == 0
    assert session.lines == ["never read"]


def test_ctrl_c_at_the_prompt_leaves(repl):
    shell, _ = repl(ScriptedLLM([]), KeyboardInterrupt(), "never read")
    assert shell.run() == 0
    assert shell.session.lines == ["never read"]


def test_tokens_and_reset(repl):
    shell, out = repl(ScriptedLLM(["one", "two"]), "hi", "/tokens", "/reset", "again", "/tokens")
    shell.agent.workspace.todos = [{"content": "x", "status": "pending"}]
    shell.run()
    text = out.getvalue()
    assert "2 messages in the history" in text and "history and todo list cleared" in text
    assert shell.agent.messages[0]["content"] == "again"  # the reset dropped the first exchange
    assert len(shell.agent.messages) == 2 and shell.agent.workspace.todos == []


def test_after_a_reset_the_system_prompt_tells_the_state_anew_and_old_token_counts_are_forgotten(
        repl, tmp_path):
    (tmp_path / "sub").mkdir()
    def cd(where):
        return {"tool_calls": [{"name": "bash", "arguments": {"command": f"cd {where}"}}]}

    turns = [cd("sub"), {"text": "one", "usage": {"prompt_tokens": 120_000, "completion_tokens": 5}},
             cd(".."), cd("."), "two"]
    shell, out = repl(ScriptedLLM(turns), "hi", "/reset", "again")
    shell.run()  # the provider counted 120,000 tokens for 4 messages: over every tier of 128k
    requests = shell.agent.llm.requests
    [prompt, again] = requests[2]["messages"]
    assert f"Working directory: {(tmp_path / 'sub').resolve()}" in prompt["content"]
    assert again["content"] == "again"  # and no note: the new system prompt told the state
    assert len(requests) == 5  # 6 messages, but no summary call: that count was not of these
    assert f"Working directory: {tmp_path.resolve()}" in requests[-1]["messages"][4]["content"]


def test_compact_says_so_when_the_policy_keeps_everything(repl):
    shell, out = repl(ScriptedLLM([]), "/compact")
    shell.agent.context = KeepEverything()
    shell.run()
    assert "KeepEverything) keeps the whole history" in out.getvalue()


def test_compact_hands_the_focus_to_a_policy_that_can(repl):
    class Halves:
        def attach(self, agent):
            pass

        def prepare(self, messages, overflow=False):
            return messages

        def compact(self, messages, focus):
            self.focus = focus
            return messages[-2:], None

    shell, out = repl(ScriptedLLM(["one", "two"]), "a", "b", "/compact the parser")
    shell.agent.context = Halves()
    shell.run()
    assert shell.agent.context.focus == "the parser"
    assert "history: 4 → 2 messages" in out.getvalue()


def test_ctrl_c_during_a_turn_keeps_the_history_legal_and_the_repl_going(repl):
    llm = ScriptedLLM([{"tool_calls": [{"name": "echo", "arguments": {"text": "a"}},
                                       {"name": "boom", "arguments": {"kind": "interrupt"}},
                                       {"name": "echo", "arguments": {"text": "c"}}]},
                       "Still here."])
    shell, out = repl(llm, "go", "are you there?", tools=[Echo(), Boom()])
    shell.run()
    check_history(shell.agent.messages)
    assert "interrupted" in out.getvalue() and "Still here." in out.getvalue()
    assert len(llm.requests) == 2  # the second line was a new turn on the repaired history


def test_a_model_error_is_shown_and_the_repl_carries_on(repl):
    def fails_once(messages, tools):
        if len(messages) == 2:  # system + the first user message
            raise ModelError("gave up on the server after 4 attempts")
        return "Back again."

    shell, out = repl(FunctionLLM(fails_once), "hi", "hi again")
    shell.run()
    assert "error: gave up on the server after 4 attempts" in out.getvalue()
    assert "Back again." in out.getvalue()


def test_a_bug_in_a_turn_is_one_line_and_the_repl_keeps_the_conversation(repl):
    def breaks_once(messages, tools):
        if len(messages) == 2:
            raise RuntimeError("a bug in a plug-in")
        return "Back again."

    shell, out = repl(FunctionLLM(breaks_once), "hi", "hi again")
    shell.run()
    assert ("error: unexpected RuntimeError: a bug in a plug-in (a bug in corecoder: please report "
            "it; the session is saved)") in " ".join(out.getvalue().split())  # as one line, unwrapped
    assert "Back again." in out.getvalue() and "Traceback" not in out.getvalue()
    check_history(shell.agent.messages)


def test_model_shows_and_switches_the_model_keeping_the_conversation(tmp_path, repl):
    script = ["First answer.", "Second answer."]
    with ScriptServer(script, model="scripted") as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "x", "CORECODER_HOME": str(tmp_path)}
        first = load_config(tmp_path, env, model="gpt-4o-mini")
        from corecoder.cli.app import connect

        shell, out = repl(connect(first), "hi", "/model", "/model gpt-4o", "and now?", env=env, cwd=tmp_path)
        shell.run()
    text = out.getvalue()
    assert f"model: openai/gpt-4o-mini at {server.base_url}" in text
    assert "model: openai/gpt-4o (the conversation carries on)" in text
    assert [r["body"]["model"] for r in server.requests] == ["gpt-4o-mini", "gpt-4o"]
    assert [m["content"] for m in server.requests[1]["body"]["messages"][1:]] == ["hi", "First answer.", "and now?"]
    assert shell.ledger.calls == 2 and shell.ledger.cost is not None  # each call at its own model's price


def test_a_model_switch_that_cannot_work_keeps_the_current_model(tmp_path, repl):
    llm = ScriptedLLM([])
    shell, out = repl(llm, "/model deepseek/deepseek-chat", env={"HOME": str(tmp_path)}, cwd=tmp_path)
    shell.run()
    assert "still openai/scripted: no API key for deepseek/deepseek-chat: set DEEPSEEK_API_KEY" in out.getvalue()
    assert shell.agent.llm is llm and shell.config.label == "openai/scripted"


def test_switching_to_a_provider_without_reasoning_in_history_drops_it(tmp_path, repl):
    shell, _ = repl(ScriptedLLM([]), env={"OPENAI_API_KEY": "x"}, cwd=tmp_path, connect=lambda config: ScriptedLLM([]))
    shell.agent.messages = [{"role": "user", "content": "hi"},
                            {"role": "assistant", "content": "", "reasoning_content": "hmm"}]
    shell.model("gpt-4o")
    assert "reasoning_content" not in shell.agent.messages[1]


# Rendering


def stream_markdown(console: Console) -> None:
    render = Renderer(console, refresh_per_second=50)
    render(ReasoningDelta("Thinking"))
    for piece in ("# Title\n\n", "Some ", "*text*", " here."):
        render(TextDelta(piece))
        time.sleep(0.03)  # long enough for the live display to redraw in between
    render.close()
    render.close()  # closing twice is harmless


def test_streamed_markdown_is_redrawn_live_in_a_terminal():
    out = io.StringIO()
    stream_markdown(Console(file=out, width=80, force_terminal=True, color_system=None))
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue())
    assert "Thinking" in text and "Title" in text and "Some text here." in text
    assert "# Title" not in text and "*text*" not in text  # rendered, not raw


def test_streamed_markdown_is_written_once_when_not_a_terminal():
    out = io.StringIO()
    stream_markdown(Console(file=out, width=80))
    assert out.getvalue().count("Some text here.") == 1
    assert out.getvalue().startswith("Thinking\n")


def test_retries_are_shown():
    out = io.StringIO()
    Renderer(Console(file=out, width=80))(Retrying(2, 0.5, "500 server error"))
    assert out.getvalue() == "retrying in 0.5 s (500 server error)\n"


# The real line editor, and a real terminal


def test_the_prompt_sends_on_enter_and_adds_a_line_on_alt_enter(tmp_path, repl):
    from prompt_toolkit.application import create_app_session
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    with create_pipe_input() as keys, create_app_session(input=keys, output=DummyOutput()):
        session = prompt_session(tmp_path / "home")
        keys.send_text("first line\x1b\rsecond line\r")
        assert session.prompt() == "first line\nsecond line"
        keys.send_text("hi\r/quit\r")
        shell, out = repl(ScriptedLLM(["Hello there."]))
        shell.session = session
        assert shell.run() == 0
    assert "Hello there." in out.getvalue()
    assert "second line" in (tmp_path / "home" / "history").read_text()




@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_the_repl_in_a_real_terminal(tmp_path):
    import fcntl
    import pty
    import struct
    import termios

    sleeper = {"tool_calls": [{"name": "bash", "arguments": {"command": "sleep 5"}}]}
    with ScriptServer(["Hello from **the server**.", sleeper, "Back."]) as server:
        main, child = pty.openpty()
        fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
        env = environment(server, tmp_path, TERM="xterm-256color", PROMPT_TOOLKIT_NO_CPR="1")
        def own_terminal():  # as a shell would: a session of its own, with the pty as its terminal, so ^C signals it
            os.setsid()
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        proc = subprocess.Popen([sys.executable, "-m", "corecoder"], cwd=tmp_path, env=env, stdin=child,
                                stdout=child, stderr=child, preexec_fn=own_terminal)
        os.close(child)
        seen = bytearray()
        try:
            read_until(main, r"/help for commands.*\n.*›", seen)
            os.write(main, b"hi\r")
            read_until(main, r"Hello from the server\.[\s\S]*tokens in", seen)
            os.write(main, b"take your time\r")
            read_until(main, r"allow bash\?\s+command: sleep 5[\s\S]*\[n\]o", seen)
            os.write(main, b"y\r")  # consent: yes, once
            read_until(main, r"→ bash", seen)
            os.write(main, b"\x03")  # Ctrl+C, as the terminal sends it: stops the turn, not the REPL
            read_until(main, r"interrupted", seen, timeout=4)
            os.write(main, b"still there?\r")
            read_until(main, r"Back\.", seen)
            os.write(main, b"/quit\r")
            assert proc.wait(timeout=10) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
            os.close(main)
    sent = [(m["role"], m["content"]) for m in server.requests[-1]["body"]["messages"][1:]]
    assert sent[0] == ("user", "hi") and sent[-1] == ("user", "still there?")
    # Ctrl+C can land while the command is being started, before it has a process group of its own:
    # then the shell itself dies of SIGINT and that is its result. Either way the call was stopped.
    assert ("tool", INTERRUPTED) in sent or ("tool", "[killed by signal SIGINT]") in sent


# Issue #5 through the command: consent, plan mode, undo, sessions, hooks, MCP


def write_call(path="notes.txt", content="new"):
    return {"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": content}}]}


def strict_repl(repl, llm, *lines, **kwargs):
    """A REPL whose consent asks (the fixture's default is --yes)."""
    shell, out = repl(llm, *lines, **kwargs)
    shell.app.consent.allow_all = False
    return shell, out


@pytest.mark.parametrize("answer, written", [("y", True), ("a", True), ("n", False), ("", False)])
def test_consent_is_asked_in_the_terminal(repl, tmp_path, answer, written):
    shell, out = strict_repl(repl, ScriptedLLM([write_call(), "ok"]), "write it", answer)
    shell.run()
    assert "allow write_file?\n  path: notes.txt\n  content: new\n" in out.getvalue()
    assert (tmp_path / "notes.txt").exists() == written
    if not written:
        assert "refused by consent: the user said no" in shell.agent.messages[2]["content"]


def test_always_is_not_asked_again(repl, tmp_path):
    llm = ScriptedLLM([write_call("a"), "ok", write_call("b"), "ok"])
    shell, out = strict_repl(repl, llm, "one", "a", "two")
    shell.run()
    assert out.getvalue().count("allow write_file") == 1 and (tmp_path / "b").exists()


def test_plan_mode_then_approve(repl, tmp_path):
    llm = ScriptedLLM([write_call(), "1. write notes.txt", write_call(), "done"])
    shell, out = repl(llm, "/plan", "add notes", "approve")
    shell.run()
    text = out.getvalue()
    assert "plan mode on" in text and "plan approved" in text
    first, second = [m["content"] for m in shell.agent.messages if m["role"] == "tool"]
    assert "refused by plan mode" in first and second.startswith("created notes.txt")
    assert shell.agent.messages[4]["content"] == "I approve the plan. Carry it out now."


def test_undo_and_diff(repl, tmp_path):
    (tmp_path / "notes.txt").write_text("old\n")
    shell, out = repl(ScriptedLLM([write_call(content="new\n"), "ok"]), "change it", "/diff", "/undo", "/undo")
    shell.run()
    text = out.getvalue()
    assert "-old" in text and "+new" in text
    assert (tmp_path / "notes.txt").read_text() == "old\n"
    assert "nothing to undo" in text.lower()


def test_save_sessions_and_context(repl, tmp_path):
    (tmp_path / "AGENTS.md").write_text("Always run the tests.")
    shell, out = repl(ScriptedLLM(["hello there"]), "hi", "/save", "/sessions", "/context", "/mcp")
    shell.run()
    text = out.getvalue()
    assert f"--resume {shell.app.log.id}" in text and shell.app.log.id in text.split("/sessions")[-1]
    assert "tokens (" in text and "AGENTS.md" in text
    assert "no MCP servers" in text


def test_a_session_resumes_with_its_history_and_model(tmp_path):
    project = copy_project(tmp_path)
    with ScriptServer(["Remembered: the answer is 42.", "You said 42."]) as server:
        env = environment(server, tmp_path)
        first = corecoder("-p", "remember 42", cwd=project, env=env)
        assert first.returncode == 0, first.stderr
        sessions = list((tmp_path / "sessions").glob("*.jsonl"))
        assert len(sessions) == 1
        second = corecoder("-p", "what did I say?", "--resume", sessions[0].stem, cwd=project,
                           env={**env, "CORECODER_MODEL": "openai/other-model"})
        assert second.returncode == 0, second.stderr
    last = server.requests[-1]["body"]
    assert last["model"] == "scripted"  # the session's model, not the environment's
    assert [m["content"] for m in last["messages"][1:]] == ["remember 42", "Remembered: the answer is 42.",
                                                            "what did I say?"]


@pytest.mark.parametrize("bad_id", ["../../etc/passwd", "/etc/passwd", "a/b"])
def test_a_bad_session_id_is_one_clear_line(tmp_path, bad_id):
    run = corecoder("-p", "hi", "--resume", bad_id, cwd=tmp_path, env=environment(None, tmp_path,
                                                                                   OPENAI_API_KEY="x"))
    assert run.returncode == 1 and "bad session id" in run.stderr and "Traceback" not in run.stderr


def test_hooks_load_from_the_project_and_a_broken_file_is_named(tmp_path):
    project = copy_project(tmp_path)
    (project / ".corecoder").mkdir()
    (project / ".corecoder" / "hooks.json").write_text(json.dumps(
        {"PreToolUse": [{"matcher": "edit_file", "command": "echo 'edits are frozen' >&2; exit 2"}]}))
    with ScriptServer(SCRIPT) as server:
        run = corecoder("-p", "fix it", "--yes", "--trust-project", cwd=project,
                        env=environment(server, tmp_path))
    assert run.returncode == 0 and BUGGY in (project / "stats.py").read_text()
    assert "edit_file refused by hook: edits are frozen" in told(server)
    (project / ".corecoder" / "hooks.json").write_text("{oops")
    run = corecoder("-p", "fix it", "--trust-project", cwd=project,
                    env=environment(None, tmp_path, OPENAI_API_KEY="x"))
    assert run.returncode == 1 and "hooks.json: not valid JSON" in run.stderr


def test_mcp_servers_from_mcp_json_become_tools(tmp_path):
    server_script = Path(__file__).parents[1] / "mcp_servers" / "bad_server.py"
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {"fake": {"command": sys.executable,
                                                                          "args": [str(server_script)]}}}))
    turns = [{"tool_calls": [{"name": "mcp__fake__echo", "arguments": {"text": "hi"}}]}, "done"]
    with ScriptServer(turns) as server:
        run = corecoder("-p", "use the tool", "--yes", cwd=tmp_path, env=environment(server, tmp_path))
    assert run.returncode == 0, run.stderr
    assert "mcp__fake__echo" in [t["function"]["name"] for t in server.requests[0]["body"]["tools"]]
    assert "hi" in told(server)[0]


def test_a_tool_renamed_because_another_servers_tool_had_its_name_is_said_at_start(tmp_path):
    script = str(Path(__file__).parents[1] / "mcp_servers" / "bad_server.py")
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {
        name: {"command": sys.executable, "args": [script]} for name in ("my_tools", "my.tools")}}))
    with ScriptServer(["done"]) as server:
        run = corecoder("-p", "hi", "--yes", cwd=tmp_path, env=environment(server, tmp_path))
    assert run.returncode == 0, run.stderr
    offered = [t["function"]["name"] for t in server.requests[0]["body"]["tools"]]
    [renamed] = [name for name in offered if name.startswith("mcp__my_tools__echo_")]
    assert "mcp__my_tools__echo" in offered
    assert (f"warning: MCP server my.tools: its tool 'echo' is offered as {renamed}, "
            "since mcp__my_tools__echo names another tool") in run.stderr


def test_mcp_status_and_reconnect_in_the_repl(repl, tmp_path):
    from corecoder.mcp import MCPHub, ServerSpec

    script = str(Path(__file__).parents[1] / "mcp_servers" / "bad_server.py")
    shell, out = repl(ScriptedLLM(["ok"]), "/mcp", "/mcp reconnect fake", "/mcp reconnect nobody")
    hub = MCPHub({"fake": ServerSpec("fake", sys.executable, [script])}, tmp_path).start()
    try:
        hub.attach(shell.agent)
        shell.app.mcp = hub
        shell.run()
    finally:
        hub.close()
    text = out.getvalue()
    assert text.count("fake: ready") >= 2 and "mcp__fake__echo" in shell.agent.tools
    assert "1 MCP server" in text  # the banner counts them
    assert "nobody" in text  # an unknown name is said, not a traceback


def test_project_hooks_apply_wherever_in_the_project_the_command_starts(tmp_path):
    project = copy_project(tmp_path)
    (project / ".git").mkdir()
    (project / "sub").mkdir()
    (project / ".corecoder").mkdir()
    (project / ".corecoder" / "hooks.json").write_text(json.dumps(
        {"PreToolUse": [{"matcher": "write_file", "command": "echo 'no new files' >&2; exit 2"}]}))
    turns = [{"tool_calls": [{"name": "write_file", "arguments": {"path": "new.txt", "content": "x"}}]}, "ok"]
    with ScriptServer(turns) as server:
        run = corecoder("-p", "write", "--yes", "--trust-project", cwd=project / "sub",
                        env=environment(server, tmp_path))
    assert run.returncode == 0 and not (project / "sub" / "new.txt").exists()
    assert told(server) == ["write_file refused by hook: no new files"]


def test_the_prompt_is_restated_after_a_consent_question(repl):
    asked = []

    class Recording(Lines):
        def prompt(self, *args, **kwargs):
            asked.append(args[0] if args else None)
            return super().prompt(*args, **kwargs)

    shell, _ = strict_repl(repl, ScriptedLLM([write_call(), "ok"]), "write it", "y", "/quit")
    shell.session = shell.questions = Recording(*shell.session.lines)  # one session for both
    shell.app.consent.ask = shell.ask
    shell.run()
    assert asked[0] == asked[2] == "› " and "[y]es once" in asked[1]  # prompt_toolkit keeps the last message


def test_a_model_switch_is_in_the_session_log_at_once(repl, tmp_path):
    from corecoder.session import load

    env = {"OPENAI_API_KEY": "x", "HOME": str(tmp_path), "CORECODER_HOME": str(tmp_path / "home")}
    shell, out = repl(ScriptedLLM(["hi"]), "hello", "/model openai/gpt-4.1", env=env)
    shell.run()
    _, meta = load(shell.app.config.home, shell.app.log.id)
    assert meta["model"] == "openai/gpt-4.1"


def test_compact_with_nothing_to_compact_does_not_claim_a_summary_was_made(repl):
    shell, out = repl(ScriptedLLM([]), "/compact")
    shell.run()
    assert "nothing to compact yet" in out.getvalue() and "no shorter" not in out.getvalue()


def test_a_compacted_history_is_in_the_session_file_at_once(repl):
    from corecoder.session import load

    llm = ScriptedLLM(["one", "two", "three", "The user said a, b and c."])
    shell, out = repl(llm, "a", "b", "c", "/compact")
    shell.agent.context.keep_recent = 2
    shell.run()  # the REPL is still open: a crash now must not resume the uncompacted history
    assert "history: 6 → 3 messages" in out.getvalue()
    messages, _ = load(shell.app.config.home, shell.app.log.id)
    assert messages == shell.agent.messages and "The user said a, b and c." in messages[0]["content"]


def test_compact_of_a_history_that_is_all_recent_turns_says_nothing_was_compacted(repl):
    shell, out = repl(ScriptedLLM(["one", "two"]), "a", "b", "/compact")
    shell.run()  # 4 messages: fewer than the 8 a summary keeps word for word, so no summary call
    assert "nothing to compact yet" in out.getvalue() and "history:" not in out.getvalue()
    assert len(shell.agent.messages) == 4


def test_a_mock_model_plays_a_script_file_offline_through_the_command(tmp_path):
    """`-m mock/PATH` needs no key and no server: the script file is the model. A file that is
    not a script is said in one line."""
    (tmp_path / "script.json").write_text(json.dumps(
        [{"tool_calls": [{"name": "write_file", "arguments": {"path": "hi.txt", "content": "hi\n"}}]},
         "I wrote hi.txt."]))
    env = environment(None, tmp_path / "home")
    run = corecoder("-m", "mock/script.json", "-p", "write hi.txt", "--yes", cwd=tmp_path, env=env)
    assert run.returncode == 0 and run.stdout.strip() == "I wrote hi.txt.", run.stderr
    assert (tmp_path / "hi.txt").read_text() == "hi\n"
    (tmp_path / "broken.json").write_text("{not json")
    for script in ("broken.json", "missing.json"):
        bad = corecoder("-m", f"mock/{script}", "-p", "hi", cwd=tmp_path, env=env)
        assert bad.returncode == 1 and "Traceback" not in bad.stderr
        assert f"mock/{script}: cannot play it as a script" in bad.stderr


def unwrapped(text: str) -> str:
    """The text without its whitespace: the console wraps a line longer than its 100 columns at a
    space, which it drops, or inside a word too long for a line (a path), so where a line breaks
    depends on how long the test's temporary path is."""
    return re.sub(r"\s", "", text)


def test_providers_lists_the_presets_with_their_keys_and_session_names_this_one(repl, tmp_path):
    env = {"OPENAI_API_KEY": "x", "HOME": str(tmp_path), "DEEPSEEK_API_KEY": "sk-d"}
    shell, out = repl(ScriptedLLM(["hello there"]), "hi", "/providers", "/session", env=env)
    shell.run()
    text = out.getvalue()
    assert re.search(r"deepseek +https://api\.deepseek\.com +key: DEEPSEEK_API_KEY", text)
    assert re.search(r"groq .* no key \(GROQ_API_KEY\)", text) and re.search(r"ollama .* no key needed", text)
    assert re.search(r"mock +a script file, offline", text)
    log = shell.app.log
    assert unwrapped(f"session {log.id}: {log.path} ({log.path.stat().st_size:,} bytes), started 20"
                     ) in unwrapped(text)
    assert f"resume it with: corecoder --resume {log.id}" in text
    assert re.search(r"\* openai +api\.openai\.com ", text)


def test_providers_shows_the_endpoint_the_session_talks_to_when_it_is_not_the_presets(repl, tmp_path):
    env = {"OPENAI_API_KEY": "x", "HOME": str(tmp_path), "OPENAI_BASE_URL": "http://box:9000/v1"}
    shell, out = repl(ScriptedLLM(["hello there"]), "/providers", env=env)
    shell.run()
    assert re.search(r"\* openai +http://box:9000/v1 \(yours\) +key: OPENAI_API_KEY", out.getvalue())


def test_model_switches_to_a_mock_script_and_a_bad_one_leaves_the_model_as_it_was(repl, tmp_path):
    script = tmp_path / "script.json"  # (a relative path is read from where the command runs)
    script.write_text('["from the script"]')
    shell, out = repl(ScriptedLLM(["hello there"]), "/model mock/nothing.json", f"/model mock/{script}", "hi")
    shell.run()
    text = unwrapped(out.getvalue())
    assert unwrapped("still openai/scripted: mock/nothing.json: cannot play it as a script") in text
    assert unwrapped(f"model: mock/{script} (the conversation carries on)") in text
    assert "fromthescript" in text


def test_a_cloned_projects_env_cannot_make_a_file_of_its_own_the_model_unless_trusted(tmp_path):
    """A mock model plays whatever its script says, tool calls included: a project's .env that
    names one is a route, used once the project is trusted, never before."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "evil.json").write_text(json.dumps(
        [{"tool_calls": [{"name": "bash", "arguments": {"command": "touch pwned"}}]}, "done"]))
    (tmp_path / ".env").write_text("CORECODER_MODEL=mock/evil.json\n")
    with ScriptServer(["the user's model answered"]) as server:
        env = environment(server, tmp_path / "home")
        del env["CORECODER_MODEL"]  # the user chose no model: the project's .env would
        untrusted = corecoder("-p", "hi", "--yes", cwd=tmp_path, env=env)
        assert untrusted.returncode == 0 and not (tmp_path / "pwned").exists()
        assert untrusted.stdout.strip() == "the user's model answered"
        trusted = corecoder("-p", "hi", "--yes", "--trust-project", cwd=tmp_path, env=env)
    assert trusted.returncode == 0 and (tmp_path / "pwned").exists()
    assert "this project's .env chooses the model mock/evil.json, a file of the project's" in trusted.stderr


def test_the_command_tells_the_git_status_at_the_start_and_a_subfolders_instructions_on_touch(
        tmp_path):
    project = tmp_path / "project"
    (project / "api").mkdir(parents=True)
    (project / "api" / "AGENTS.md").write_text("Every route needs a test.")
    (project / "api" / "routes.py").write_text("ROUTES = []\n")
    for args in (["init", "-q", "-b", "trunk"], ["add", "."],
                 ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one"]):
        subprocess.run(["git", *args], cwd=project, check=True, capture_output=True)
    (project / "api" / "routes.py").write_text("ROUTES = ['/']\n")
    turns = [{"tool_calls": [{"name": "read_file", "arguments": {"path": "api/routes.py"}}]}, "done"]
    with ScriptServer(turns) as server:
        run = corecoder("-p", "look", cwd=project, env=environment(server, tmp_path))
    assert run.returncode == 0, run.stderr
    system = server.requests[0]["body"]["messages"][0]["content"]
    assert "(it does not update):\n## trunk\n M api/routes.py" in system
    assert "Every route needs a test." not in system
    assert told(server)[0].endswith("From api/AGENTS.md:\nEvery route needs a test.]")


# LiteLLM: the backend for providers with no OpenAI-compatible endpoint (an extra)


@pytest.mark.parametrize("stream", ["1", "0"])
def test_litellm_runs_the_demo_task_through_the_command(tmp_path, stream):
    """LiteLLM's own `openai/` route to the loopback server: the same task, the same tools, the
    same answer, streamed or whole; the model is LiteLLM's name, and what reaches the server is
    LiteLLM's request (it takes the `openai/` off)."""
    project = copy_project(tmp_path)
    with ScriptServer(SCRIPT) as server:
        env = environment(server, tmp_path, CORECODER_PROVIDER="litellm",
                          CORECODER_STREAM=stream)
        run = corecoder("-p", "fix the failing test", "--yes", "-m", "openai/scripted",
                        cwd=project, env=env)
    assert run.returncode == 0, run.stderr
    assert run.stdout == ANSWER + "\n" and BUGGY not in (project / "stats.py").read_text()
    assert [r["body"]["model"] for r in server.requests] == ["scripted"] * len(SCRIPT)
    assert all(r["body"].get("stream", False) == (stream == "1") for r in server.requests)
    assert "Traceback" not in run.stderr and "LiteLLM" not in run.stdout


def test_litellm_is_also_a_provider_prefix_and_its_errors_are_the_commands_own(tmp_path):
    with ScriptServer([{"fault": "auth"}]) as server:
        run = corecoder("-p", "hi", "-m", "litellm/openai/scripted", cwd=tmp_path,
                        env=environment(server, tmp_path))
    assert run.returncode == 1 and "rejected the API key (401)" in run.stderr
    assert "Traceback" not in run.stderr
    faults = [{"fault": "rate_limit", "retry_after": 0}, "after a wait"]
    with ScriptServer(faults) as server:
        run = corecoder("-p", "hi", "-m", "litellm/openai/scripted", cwd=tmp_path,
                        env=environment(server, tmp_path))
    assert run.returncode == 0 and run.stdout == "after a wait\n", run.stderr
    assert "429" in run.stderr and len(server.requests) == 2  # our retry; LiteLLM's are off


def test_an_unknown_backend_or_a_missing_extra_is_one_clear_line(tmp_path, monkeypatch):
    run = corecoder("-p", "hi", cwd=tmp_path, env=environment(None, tmp_path,
                                                               CORECODER_PROVIDER="bedrock"))
    assert run.returncode == 1 and "CORECODER_PROVIDER=bedrock: not a backend" in run.stderr
    import importlib.util

    from corecoder.cli.app import connect
    from corecoder.cli.config import ConfigError

    config = load_config(tmp_path, {"CORECODER_PROVIDER": "litellm", "HOME": str(tmp_path)},
                         model="anthropic/claude-sonnet-4-5")
    assert config.label == "litellm/anthropic/claude-sonnet-4-5"
    assert type(connect(config)).__name__ == "LiteLLM" and connect(config).api_key is None
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    with pytest.raises(ConfigError, match=r'pip install "corecoder-course\[litellm\]"'):
        connect(config)


def test_the_status_line_shows_model_context_cost_and_plan_mode_and_verbosity_sets_results(tmp_path):
    """Under the prompt, in a real terminal: the model, the context used of its window, the cost
    so far, plan mode; /verbosity full shows a result whole, quiet none (its call still shows)."""
    script = [{"tool_calls": [{"name": "bash", "arguments": {"command": "printf 'one\\ntwo\\n'"}}]},
              "done", {"tool_calls": [{"name": "bash", "arguments": {"command": "echo four"}}]},
              "done again"]
    with ScriptServer(script) as server:
        with terminal(tmp_path, environment(server, tmp_path / "home"), "--yes",
                      cpr=True) as (proc, fd, seen):
            status = r"openai/scripted · context ~[\d,]+ of 128,000 \(\d+%\) · \$0\.0000 · plan mode"
            read_until(fd, status + " off", seen)
            os.write(fd, b"/plan\r")
            read_until(fd, status + " on", seen)
            os.write(fd, b"/plan\r")
            read_until(fd, r"plan mode off\s", seen)
            os.write(fd, b"/verbosity full\r")
            read_until(fd, r"verbosity: full", seen)
            os.write(fd, b"go\r")
            full = read_until(fd, r"done\s", seen)
            os.write(fd, b"/verbosity quiet\r")
            read_until(fd, r"verbosity: quiet", seen)
            os.write(fd, b"again\r")
            quiet = read_until(fd, r"done again", seen)
            os.write(fd, b"/verbosity loud\r")
            read_until(fd, r"/verbosity takes one of quiet, brief, full", seen)
            os.write(fd, b"/quit\r")
            assert proc.wait(timeout=15) == 0
    assert re.search(r"✓ one\s+two", full)  # the whole result, not "one (+1 lines)"
    after = quiet[quiet.index("verbosity: quiet"):]
    assert 'bash(command="echo four")' in after and "✓ four" not in after


# Steering through the terminal: a line typed while a turn runs joins it at the next step


def waits_for(name: str) -> dict:
    """A bash call that runs until the test creates `name`: the order is the test's, not a clock's."""
    return {"tool_calls": [{"name": "bash", "arguments": {
        "command": f"while [ ! -e {name} ]; do sleep 0.05; done; echo ran"}}]}


def test_a_line_typed_while_a_command_runs_joins_the_turn_after_its_result(tmp_path):
    with ScriptServer([waits_for("go"), "Noted: python it is."]) as server:
        with terminal(tmp_path, environment(server, tmp_path / "home"), "--yes") as (proc, fd, seen):
            read_until(fd, r"/help for commands.*\n.*›", seen)
            os.write(fd, b"do the thing\r")
            read_until(fd, r"running bash", seen)
            os.write(fd, "use python instead, ☃\r".encode())
            read_until(fd, r"› use python instead, ☃ +\(said to the turn\)", seen)
            os.write(fd, b"/plan\r")  # a command: the REPL's, after the turn
            read_until(fd, r"› /plan +\(runs when the turn ends\)", seen)
            (tmp_path / "go").touch()  # now the command ends
            text = read_until(fd, r"Noted: python it is\.[\s\S]*plan mode on", seen)
            os.write(fd, b"/quit\r")
            assert proc.wait(timeout=15) == 0
    second = server.requests[1]["body"]["messages"]
    assert [m["role"] for m in second[-3:]] == ["assistant", "tool", "user"]
    assert second[-2]["content"].startswith("ran") and second[-1]["content"] == "use python instead, ☃"
    assert len(server.requests) == 2 and "/plan" not in json.dumps(second)
    assert text.count("tokens in") == 1  # one turn, steered: one summary


def test_esc_esc_stops_the_turn_as_ctrl_c_does_and_the_repl_goes_on(tmp_path):
    with ScriptServer([waits_for("never"), "Still here."]) as server:
        with terminal(tmp_path, environment(server, tmp_path / "home"), "--yes") as (proc, fd, seen):
            read_until(fd, r"/help for commands.*\n.*›", seen)
            os.write(fd, b"wait\r")
            read_until(fd, r"running bash", seen)
            os.write(fd, b"half a tho")  # typed, not sent: it waits under the next prompt
            os.write(fd, b"\x1b[D\x1b\x1b")  # an arrow key is ignored; Esc Esc stops the turn
            read_until(fd, r"interrupted[\s\S]*› half a tho", seen)
            os.write(fd, b"ught\r")
            read_until(fd, r"Still here\.", seen)
            os.write(fd, b"/quit\r")
            assert proc.wait(timeout=15) == 0
    last = server.requests[-1]["body"]["messages"]
    assert last[-1] == {"role": "user", "content": "half a thought"}
    check_history(last[1:])
    assert "interrupted" in [m for m in last if m["role"] == "tool"][0]["content"]
