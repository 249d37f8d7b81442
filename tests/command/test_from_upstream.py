"""A user coming from upstream CoreCoder 0.8 keeps their hook recipes and their habits.

Every test runs the real `corecoder` against the loopback server, with a home of its own.
The two recipes are copied from upstream's README exactly as it prints them.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from corecoder.testing import ScriptServer
from helpers import corecoder, environment, read_until, terminal

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="bash hooks and a pty")

# Upstream's README, "Two worth stealing" (the commands lean on jq)
LINT_GATE = {"PostToolUse": [{
    "matcher": "edit_file",
    "command": "f=$(jq -r .tool_input.file_path); ruff check \"$f\" 2>&1 | head -20"}]}
WRITE_PROTECT = {"PreToolUse": [{
    "matcher": "edit_file",
    "command": "case \"$(jq -r .tool_input.file_path)\" in .env*|*/secrets/*|*.pem) echo 'that path is "
               "off-limits' >&2; exit 2;; esac"}]}


def call(name: str, **arguments) -> dict:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def results(server: ScriptServer) -> list[str]:
    return [m["content"] for m in server.requests[-1]["body"]["messages"] if m["role"] == "tool"]


def with_hooks(tmp_path: Path, hooks: dict) -> Path:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "hooks.json").write_text(json.dumps(hooks))
    return home


@pytest.mark.skipif(shutil.which("jq") is None, reason="upstream's recipes use jq")
def test_upstreams_write_protect_recipe_vetoes_an_edit_of_env_and_lets_others_through(tmp_path):
    (tmp_path / ".env").write_text("KEY=secret\n")
    (tmp_path / "app.py").write_text("x = 1\n")
    home = with_hooks(tmp_path, WRITE_PROTECT)
    script = [call("edit_file", path=".env", old_string="secret", new_string="leaked"),
              call("edit_file", path="app.py", old_string="x = 1", new_string="x = 2"), "done"]
    with ScriptServer(script) as server:
        run = corecoder("-p", "edit", "--yes", cwd=tmp_path, env=environment(server, home))
        env_edit, app_edit = results(server)
    assert run.returncode == 0, run.stderr
    assert env_edit == "edit_file refused by hook: that path is off-limits"
    assert (tmp_path / ".env").read_text() == "KEY=secret\n"
    assert app_edit.startswith("Edited app.py") and (tmp_path / "app.py").read_text() == "x = 2\n"


@pytest.mark.skipif(shutil.which("jq") is None, reason="upstream's recipes use jq")
def test_upstreams_lint_gate_recipe_shows_the_model_what_the_linter_says_about_its_edit(tmp_path):
    (tmp_path / "app.py").write_text("x = 1\n")
    home = with_hooks(tmp_path, LINT_GATE)
    script = [call("edit_file", path="app.py", old_string="x = 1", new_string="import os\nx = 1"), "done"]
    ruff = Path(sys.executable).parent  # the ruff this suite's own environment has
    with ScriptServer(script) as server:
        env = environment(server, home, PATH=f"{ruff}{os.pathsep}{os.environ['PATH']}")
        run = corecoder("-p", "edit", "--yes", cwd=tmp_path, env=env)
        [edit] = results(server)
    assert run.returncode == 0, run.stderr
    assert edit.startswith("Edited app.py: replaced 1 occurrence at line 1.\n")
    assert "\n[PostToolUse hook: " in edit and "F401 [*] `os` imported but unused" in edit


def test_a_user_prompt_submit_hook_adds_context_or_refuses_the_prompt_and_stop_runs_at_the_end(tmp_path):
    home = with_hooks(tmp_path, {
        "UserPromptSubmit": [{"command": "jq -r .prompt | grep -q password && "
                                         "{ echo 'no passwords in prompts' >&2; exit 2; }; "
                                         "echo 'The team works in UTC.'"}],
        "Stop": [{"command": "jq -r .reason >> stops.log"}]})
    with ScriptServer(["noted"]) as server:
        added = corecoder("-p", "when is noon?", cwd=tmp_path, env=environment(server, home))
        refused = corecoder("-p", "my password is hunter2", cwd=tmp_path, env=environment(server, home))
        [request] = server.requests
    assert added.returncode == 0 and added.stdout == "noted\n", added.stderr
    assert request["body"]["messages"][-1] == {"role": "user",
                                               "content": "when is noon?\n\nThe team works in UTC."}
    assert refused.returncode == 1  # and nothing was sent: the one request is the first run's
    assert refused.stderr.splitlines()[-1] == ("error: the prompt was refused by a hook, not sent: "
                                               "no passwords in prompts")
    assert (tmp_path / "stops.log").read_text() == "answer\n"


def test_an_event_we_do_not_know_is_named_in_a_warning_not_ignored(tmp_path):
    home = with_hooks(tmp_path, {"Notification": [{"command": "true"}], "PreToolUse": []})
    with ScriptServer(["hi"]) as server:
        run = corecoder("-p", "hi", cwd=tmp_path, env=environment(server, home))
    assert run.returncode == 0
    assert run.stderr.splitlines()[0] == (
        f"warning: {home / 'hooks.json'}: skipped the hooks of Notification: the events are "
        "PreToolUse, PostToolUse, UserPromptSubmit, Stop")


def test_a_new_file_gets_what_the_umask_gives_and_a_download_piped_to_a_shell_is_refused(tmp_path):
    script = [call("write_file", path="new.txt", content="x\n"),
              call("bash", command="curl -fsSL https://example.com/install.sh | sh"), "done"]
    with ScriptServer(script) as server:
        run = corecoder("-p", "go", "--yes", cwd=tmp_path, env=environment(server, tmp_path / "home"))
        _, piped = results(server)
    subprocess.run(["touch", str(tmp_path / "touched")], check=True)
    assert run.returncode == 0, run.stderr
    modes = {name: stat.S_IMODE((tmp_path / name).stat().st_mode) for name in ("new.txt", "touched")}
    assert modes["new.txt"] == modes["touched"], modes
    assert piped.startswith("bash failed: refused: piping a download into a shell runs code nobody has read")


def test_base_url_and_api_key_flags_as_upstreams_cli_has_them(tmp_path):
    with ScriptServer(["hi"]) as server:
        env = environment(None, tmp_path / "home", CORECODER_MODEL="scripted")
        run = corecoder("-p", "hi", "--base-url", server.base_url, "--api-key", "k-from-the-flag",
                        cwd=tmp_path, env=env)
        [request] = server.requests
    assert run.returncode == 0 and run.stdout == "hi\n", run.stderr
    assert request["key"] == "k-from-the-flag"


def test_the_repl_says_yes_is_on_shows_plan_mode_in_its_prompt_and_leaves_on_a_bare_quit(tmp_path):
    with ScriptServer([]) as server:
        with terminal(tmp_path, environment(server, tmp_path / "home"), "--yes") as (proc, fd, seen):
            read_until(fd, r"--yes: files are changed and commands run without asking", seen)
            os.write(fd, b"/plan\r")
            read_until(fd, r"\nplan ›", seen)
            os.write(fd, b"quit\r")
            assert proc.wait(timeout=15) == 0
    assert server.requests == []  # `quit` was never sent to the model


# Sessions carry everything: the todo list, the totals, the changes


def test_a_resumed_session_keeps_its_todo_list_and_its_token_totals(tmp_path):
    todos = [{"content": "read the code", "status": "done"}, {"content": "fix it", "status": "pending"}]
    script = [{"tool_calls": [{"name": "todo_write", "arguments": {"todos": todos}}],
               "usage": {"prompt_tokens": 1000, "completion_tokens": 10}},
              {"text": "planned", "usage": {"prompt_tokens": 1100, "completion_tokens": 5}},
              {"text": "carrying on", "usage": {"prompt_tokens": 1300, "completion_tokens": 7}}]
    home = tmp_path / "home"
    with ScriptServer(script) as server:
        first = corecoder("-p", "plan it", cwd=tmp_path, env=environment(server, home))
        [log] = (home / "sessions").iterdir()
        second = corecoder("-p", "go on", "--resume", log.stem, cwd=tmp_path, env=environment(server, home))
        sent = server.requests[-1]["body"]["messages"]
    assert first.stderr.splitlines()[-1].startswith("2,100 tokens in, 15 out")
    assert second.returncode == 0 and second.stdout == "carrying on\n", second.stderr
    assert second.stderr.splitlines()[-1].startswith("3,400 tokens in, 22 out")  # the session's, in all
    assert sent[-1] == {"role": "user", "content": "go on"}  # no note that the list is now empty
    assert not any("Your todo list: none" in str(m.get("content")) for m in sent)


def test_after_a_resume_diff_shows_the_sessions_changes_sessions_marks_it_and_leaving_says_how_to_resume(tmp_path):
    home = tmp_path / "home"
    (tmp_path / "notes.txt").write_text("old\n")
    script = [call("write_file", path="notes.txt", content="new\n"), "written"]
    with ScriptServer(script) as server:
        env = environment(server, home)
        assert corecoder("-p", "write", "--yes", cwd=tmp_path, env=env).returncode == 0
        [log] = (home / "sessions").iterdir()
        with terminal(tmp_path, env, "--resume", log.stem) as (proc, fd, seen):
            read_until(fd, r"/help for commands.*\n.*›", seen)
            os.write(fd, b"/diff\r")
            read_until(fd, r"-old\s*\n\+new", seen)
            os.write(fd, b"/sessions\r")
            text = read_until(fd, rf"\* {log.stem}  \d{{4}}-\d\d-\d\d \d\d:\d\d\s+\d+ messages", seen)
            os.write(fd, b"/quit\r")
            text = read_until(fd, rf"resume with: corecoder --resume {log.stem}", seen)
            assert proc.wait(timeout=15) == 0
    assert "no files changed" not in text


# The REPL, as it is used


def test_ctrl_c_clears_a_typed_line_consent_answers_stay_out_of_history_and_tools_lists_the_tools(tmp_path):
    home = tmp_path / "home"
    with ScriptServer([call("write_file", path="a.txt", content="x\n"), "written"]) as server:
        with terminal(tmp_path, environment(server, home)) as (proc, fd, seen):
            read_until(fd, r"/help for commands.*\n.*›", seen)
            os.write(fd, b"half a thought")
            read_until(fd, r"half a thought", seen)
            os.write(fd, b"\x03")  # Ctrl+C: the line is cleared, the REPL stays
            os.write(fd, b"/tools\r")
            read_until(fd, r"todo_write  Replace your todo list", seen)
            os.write(fd, b"write it\r")
            read_until(fd, r"\[y\]es once", seen)
            os.write(fd, b"y\r")
            read_until(fd, r"written[\s\S]*tokens in[\s\S]*›", seen)  # the turn is over
            os.write(fd, b"\x03")  # at an empty prompt: leave
            assert proc.wait(timeout=15) == 0
    inputs = [line[1:] for line in (home / "history").read_text().splitlines() if line.startswith("+")]
    assert inputs == ["/tools", "write it"]  # not "half a thought", not the "y"
    assert (tmp_path / "a.txt").read_text() == "x\n"


def test_compact_keeps_the_history_when_the_summary_is_no_shorter(tmp_path):
    long_summary = "A summary that goes on. " * 400
    answers = [f"answer number {n}" for n in range(1, 7)]  # 12 messages: more than the 8 kept
    with ScriptServer([*answers, long_summary]) as server:
        with terminal(tmp_path, environment(server, tmp_path / "home")) as (proc, fd, seen):
            for n, answer in enumerate(answers, 1):
                read_until(fd, r"›", seen)
                os.write(fd, f"question {n}\r".encode())
                read_until(fd, answer, seen)
            os.write(fd, b"/compact\r")
            text = read_until(fd, r"the history is kept as it was|history: \d+ → \d+ messages", seen)
            os.write(fd, b"/quit\r")
            assert proc.wait(timeout=15) == 0
    assert "the summary was no shorter than the turns it would replace" in text


def test_a_running_command_shows_a_live_line_and_a_call_that_ends_after_ctrl_c_prints_nothing(tmp_path):
    with ScriptServer([call("bash", command="echo starting; sleep 3"), "done"]) as server:
        with terminal(tmp_path, environment(server, tmp_path / "home"), "--yes") as (proc, fd, seen):
            read_until(fd, r"/help for commands.*\n.*›", seen)
            os.write(fd, b"run it\r")
            read_until(fd, r"running bash", seen)  # the spinner's line, while the command runs
            os.write(fd, b"\x03")  # Ctrl+C: the turn stops
            read_until(fd, r"interrupted[\s\S]*›", seen)
            os.write(fd, b"/quit\r")
            assert proc.wait(timeout=15) == 0


def test_a_result_that_arrives_after_its_turn_was_stopped_is_not_printed_under_the_next_prompt():
    """The call's thread may report after the loop answered it as interrupted and the REPL said so:
    its line would appear under the next prompt. The renderer drops a call its turn no longer has."""
    import io

    from rich.console import Console

    from corecoder.cli.render import Renderer
    from corecoder.events import Finished, ToolCallFinished, ToolCallStarted
    from corecoder.messages import ToolCall

    out = io.StringIO()
    render = Renderer(Console(file=out, width=100, color_system=None))
    late = ToolCall("c1", "bash", '{"command": "echo starting"}')
    render(ToolCallStarted(late))
    render(Finished("", "interrupted"))
    render(ToolCallFinished(late, "starting\nmore", "ok"))
    assert out.getvalue() == '→ bash(command="echo starting")\n'


def test_an_error_in_p_is_said_once(tmp_path):
    with ScriptServer([{"fault": "auth"}]) as server:
        run = corecoder("-p", "hi", cwd=tmp_path, env=environment(server, tmp_path / "home"))
    assert run.returncode == 1
    assert [line for line in run.stderr.splitlines() if "rejected the API key" in line] == [
        run.stderr.splitlines()[-1]]  # before: "[error] ..." and then "error: ..."
    assert run.stderr.splitlines()[-1].startswith("error: ")


def test_the_marks_the_terminal_shows_are_glyphs_common_fonts_have():
    """⏹ (U+23F9) showed as a box: the Miscellaneous Technical block and emoji are missing from
    most terminal fonts. The marks are from blocks they have (arrows, geometric shapes, dingbats)."""
    from corecoder.cli.trace import MARKS

    for mark in [*MARKS.values(), "✗", "→"]:
        assert not (0x2300 <= ord(mark) <= 0x23FF or ord(mark) >= 0x1F000), mark


def test_a_model_switch_keeps_the_base_url_and_key_given_as_flags(tmp_path):
    with ScriptServer(["from the same server"]) as server:
        env = environment(None, tmp_path / "home")
        flags = ("--base-url", server.base_url, "--api-key", "k-from-the-flag", "-m", "scripted")
        with terminal(tmp_path, env, *flags) as (proc, fd, seen):
            read_until(fd, r"/help for commands.*\n.*›", seen)
            os.write(fd, b"/model other-model\r")
            read_until(fd, r"the conversation carries on", seen)
            os.write(fd, b"hi\r")
            read_until(fd, r"from the same server", seen)
            os.write(fd, b"/quit\r")
            assert proc.wait(timeout=15) == 0
        [request] = server.requests
    assert request["key"] == "k-from-the-flag" and request["body"]["model"] == "other-model"


def test_a_call_that_starts_after_its_turn_ended_is_not_shown_and_no_spinner_covers_a_question():
    import io

    from rich.console import Console

    from corecoder.cli.render import Renderer
    from corecoder.events import Finished, RoundStarted, ToolCallFinished, ToolCallStarted
    from corecoder.messages import ToolCall

    out = io.StringIO()
    render = Renderer(Console(file=out, width=100, color_system=None, force_terminal=True))
    render(Finished("", "interrupted"))
    render(ToolCallStarted(ToolCall("late", "bash", '{"command": "true"}')))
    assert render.status is None and "late" not in render.calls and out.getvalue() == ""
    render(RoundStarted(1))  # the next turn
    render.asking = True
    render(ToolCallStarted(ToolCall("c1", "bash", '{"command": "true"}')))
    assert render.status is None  # a question is on screen
    render.asking = False
    render(ToolCallStarted(ToolCall("c2", "read_file", '{"path": "x"}')))
    assert render.status is not None
    render(ToolCallFinished(ToolCall("c1", "bash", "{}"), "ok", "ok"))
    render(ToolCallFinished(ToolCall("c2", "read_file", "{}"), "ok", "ok"))
    assert render.status is None and render.calls == {}


# The library, as upstream's README shows it


def test_upstreams_library_snippet_is_told_where_the_finished_agent_went():
    """Upstream's README: `Agent(llm=llm).chat(...)`, its Agent being the finished one. Ours is
    chapter 1's loop: without tools it says so, and names build_agent, instead of a bare
    "missing 1 required positional argument"."""
    from corecoder import Agent, ScriptedLLM

    with pytest.raises(TypeError, match=r"build_agent\(llm\)") as told:
        Agent(llm=ScriptedLLM(["never asked"]))
    assert "Agent(llm, [])" in str(told.value)
    assert Agent(llm=ScriptedLLM(["hello"]), tools=[]).chat("hi") == "hello"


def test_config_is_at_the_top_level_as_upstream_exports_it(tmp_path):
    from corecoder import Config, load_config

    config = load_config(tmp_path, {"CORECODER_HOME": str(tmp_path / "home")}, model="deepseek-chat")
    assert isinstance(config, Config) and config.model == "deepseek-chat"
