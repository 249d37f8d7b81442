"""The gates around every call: plan mode, hooks, consent, in that order, alone and together."""

import json
import os
import subprocess
import time
from itertools import pairwise

import pytest

from corecoder import Agent, ScriptedLLM, build_agent, check_history, default_tools
from corecoder.calls import run_in_order
from corecoder.executor import RunInParallel
from corecoder.hooks import HookError, Hooks, load_hooks
from corecoder.instructions import git_status, project_instructions
from corecoder.permissions import Consent, PlanMode
from helpers import results


def write(path="out.txt", content="new"):
    return {"name": "write_file", "arguments": {"path": path, "content": content}}


def read(path="out.txt"):
    return {"name": "read_file", "arguments": {"path": path}}


def run(tmp_path, calls, gates, executor=None):
    agent = Agent(ScriptedLLM([{"tool_calls": calls}, "done"]), default_tools(), cwd=tmp_path, gates=gates,
                  executor=executor or RunInParallel())
    agent.chat("go")
    check_history(agent.messages)
    return results(agent)


def hooks(tmp_path, pre=(), post=()):
    path = tmp_path / "hooks.json"
    path.write_text(json.dumps({"PreToolUse": [{"matcher": m, "command": c} for m, c in pre],
                                "PostToolUse": [{"matcher": m, "command": c} for m, c in post]}))
    warnings = []
    return Hooks(load_hooks(path), timeout=1, warn=warnings.append), warnings


def test_plan_mode_refuses_changes_and_says_what_to_do_instead(tmp_path):
    (tmp_path / "out.txt").write_text("old")
    refused, read_back = run(tmp_path, [write(), read()], [PlanMode(on=True)])
    assert refused.startswith("write_file refused by plan mode: plan mode is on") and "numbered plan" in refused
    assert "old" in read_back and (tmp_path / "out.txt").read_text() == "old"


def test_plan_mode_outranks_yes(tmp_path):
    [refused] = run(tmp_path, [write()], [PlanMode(on=True), Consent(allow_all=True)])
    assert "refused by plan mode" in refused and not (tmp_path / "out.txt").exists()


def test_consent_asks_only_for_tools_that_change_things(tmp_path):
    asked = []
    run(tmp_path, [read("x"), write()], [Consent(lambda tool, args: asked.append(tool.name) or "once")])
    assert asked == ["write_file"] and (tmp_path / "out.txt").read_text() == "new"


def test_a_denial_reaches_the_model_as_a_tool_result(tmp_path):
    [denied] = run(tmp_path, [write()], [Consent(lambda tool, args: "deny")])
    assert denied.startswith("write_file refused by consent: the user said no")
    assert not (tmp_path / "out.txt").exists()


def test_always_is_remembered_per_project_across_sessions(tmp_path):
    home, asked = tmp_path / "home", []
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()

    def ask(tool, args):
        asked.append(tool.name)
        return "always"

    run(tmp_path / "a", [write("1"), write("2")], [Consent(ask, home=home)], executor=run_in_order)
    assert asked == ["write_file"]  # the second call was already allowed
    run(tmp_path / "a", [write("3")], [Consent(ask, home=home)])  # a new session, same project
    assert asked == ["write_file"]
    run(tmp_path / "b", [write("4")], [Consent(ask, home=home)])  # another project asks again
    assert asked == ["write_file", "write_file"]


def test_always_holds_for_the_session_when_the_config_dir_cannot_keep_it(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "permissions").write_text("a file where the folder should be")
    asked = []
    done = run(tmp_path, [write("1"), write("2")], [Consent(lambda t, a: asked.append(1) or "always", home=home)],
               executor=run_in_order)
    assert asked == [1] and all(r.startswith("created") for r in done)


def test_with_nobody_to_ask_changes_are_refused_not_waited_for(tmp_path):
    [refused] = run(tmp_path, [write()], [Consent(None)])
    assert "nobody to allow it" in refused and "-p and without --yes" in refused


def test_consent_questions_in_a_parallel_batch_come_one_at_a_time_before_anything_runs(tmp_path):
    log = []

    def ask(tool, args):
        log.append(("ask", args["path"], (tmp_path / args["path"]).exists()))
        return "once"

    run(tmp_path, [write("a"), write("b"), write("c")], [Consent(ask)])
    assert log == [("ask", "a", False), ("ask", "b", False), ("ask", "c", False)]  # nothing written yet


def test_a_pre_hook_that_exits_2_vetoes_with_its_stderr_as_the_reason(tmp_path):
    gate, _ = hooks(tmp_path, pre=[("write_file", "echo 'no writes on Fridays' >&2; exit 2")])
    [vetoed] = run(tmp_path, [write()], [gate])
    assert vetoed == "write_file refused by hook: no writes on Fridays"
    assert not (tmp_path / "out.txt").exists()


def test_a_veto_in_bytes_that_are_not_utf8_still_vetoes_and_says_why(tmp_path):
    gate, _ = hooks(tmp_path, pre=[("*", r"printf 'caf\351 ferm\351' >&2; exit 2")])
    [vetoed] = run(tmp_path, [write()], [gate])
    assert vetoed == "write_file refused by hook: caf\ufffd ferm\ufffd"


def test_hooks_get_the_call_as_json_and_post_hooks_see_the_response(tmp_path):
    log = tmp_path / "log.jsonl"
    gate, _ = hooks(tmp_path, pre=[("*", f"(cat; echo) >> {log}")], post=[("read_file", f"(cat; echo) >> {log}")])
    (tmp_path / "out.txt").write_text("hello")
    run(tmp_path, [read()], [gate])
    pre, post = [json.loads(line) for line in log.read_text().splitlines()]
    # file_path as well as path: the name upstream CoreCoder's and Claude Code's hooks read
    assert pre["tool_name"] == "read_file" and pre["tool_input"] == {"file_path": "out.txt", "path": "out.txt"}
    assert "hello" in post["tool_response"] and post["cwd"] == str(tmp_path.resolve())


def test_a_matcher_names_one_tool_or_all(tmp_path):
    gate, _ = hooks(tmp_path, pre=[("bash", "exit 2")])
    [ran] = run(tmp_path, [write()], [gate])
    assert ran.startswith("created out.txt")


def test_a_failing_or_hanging_hook_is_skipped_with_a_warning(tmp_path):
    gate, warnings = hooks(tmp_path, pre=[("*", "exit 1"), ("*", "sleep 30")])
    started = time.monotonic()
    [ran] = run(tmp_path, [write()], [gate])
    assert ran.startswith("created out.txt") and time.monotonic() - started < 5
    assert "failed (exit 1)" in warnings[0] and "ran past 1 s" in warnings[1]


def test_a_broken_hooks_file_is_named(tmp_path):
    (tmp_path / "hooks.json").write_text("{nope")
    with pytest.raises(HookError, match="hooks.json: not valid JSON"):
        load_hooks(tmp_path / "hooks.json")


def test_hooks_veto_before_consent_is_asked(tmp_path):
    asked = []
    gate, _ = hooks(tmp_path, pre=[("*", "exit 2")])
    run(tmp_path, [write()], [PlanMode(), gate, Consent(lambda t, a: asked.append(1) or "once")])
    assert asked == []


def test_project_instructions_come_from_the_git_root_down_to_the_cwd(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "AGENTS.md").write_text("Use tabs.")
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "CLAUDE.md").write_text("Run make test.")
    (tmp_path / "pkg" / "sub" / "AGENTS.md").write_text("Sub rules.")
    (tmp_path / "pkg" / "sub" / "CLAUDE.md").write_text("ignored: AGENTS.md wins")
    text = project_instructions(tmp_path / "pkg" / "sub")
    assert text.index("Use tabs.") < text.index("Run make test.") < text.index("Sub rules.")
    assert "ignored" not in text and "From pkg/CLAUDE.md:" in text
    agent = build_agent(ScriptedLLM(["ok"]), tmp_path / "pkg" / "sub")
    agent.chat("hi")
    assert "Run make test." in agent.llm.requests[0]["messages"][0]["content"]


def test_project_instructions_are_capped(tmp_path):
    (tmp_path / "AGENTS.md").write_text("x" * 50_000)
    text = project_instructions(tmp_path, limit=1_000)
    assert len(text) < 1_200 and "limited to 1,000 characters" in text


def test_instructions_are_only_the_projects_own_regular_files(tmp_path):
    """A link (out of the project, to /proc/self/environ, say; or inside it, to .git/config or
    .env) and a FIFO are skipped, and the prompt says so."""
    outside, project = tmp_path / "outside", tmp_path / "project"
    outside.mkdir()
    (outside / "environ").write_text("OPENAI_API_KEY=sk-secret")
    for sub in ("a", "b"):
        (project / sub).mkdir(parents=True)
    (project / ".git").mkdir()
    (project / "AGENTS.md").symlink_to(outside / "environ")
    os.mkfifo(project / "a" / "AGENTS.md")
    (project / "b" / "notes.md").write_text("Linked notes.")
    (project / "b" / "CLAUDE.md").symlink_to(project / "b" / "notes.md")
    (project / "b" / "c").mkdir()
    (project / "b" / "c" / "AGENTS.md").symlink_to("AGENTS.md")  # a loop
    assert project_instructions(project / "b" / "c") == (
        "(AGENTS.md was not read: it is a link, and instructions are read only from the project's "
        "own files)\n\n"
        "(b/CLAUDE.md was not read: it is a link, and instructions are read only from the project's "
        "own files)\n\n"
        "(b/c/AGENTS.md was not read: it is a link, and instructions are read only from the "
        "project's own files)")
    started = time.monotonic()
    assert "a/AGENTS.md was not read: " in project_instructions(project / "a")
    assert "not a regular file" in project_instructions(project / "a")
    assert time.monotonic() - started < 5


def test_copilots_instructions_count_for_the_whole_repository_and_come_first(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github" / "copilot-instructions.md").write_text("Copilot's rules.")
    (tmp_path / "AGENTS.md").write_text("Use tabs.")
    (tmp_path / "pkg").mkdir()
    text = project_instructions(tmp_path / "pkg")
    assert text == "From .github/copilot-instructions.md:\nCopilot's rules.\n\nFrom AGENTS.md:\nUse tabs."
    (tmp_path / "AGENTS.md").unlink()  # alone, it is read all the same
    assert project_instructions(tmp_path) == "From .github/copilot-instructions.md:\nCopilot's rules."
    (tmp_path / "secret").write_text("OPENAI_API_KEY=sk-secret")
    (tmp_path / ".github" / "copilot-instructions.md").unlink()
    (tmp_path / ".github" / "copilot-instructions.md").symlink_to(tmp_path / "secret")
    assert "sk-secret" not in project_instructions(tmp_path)
    assert "it is a link" in project_instructions(tmp_path)


def nested_project(tmp_path):
    """A repository whose api/ and api/v2/ folders have notes of their own."""
    (tmp_path / ".git").mkdir(parents=True)
    (tmp_path / "AGENTS.md").write_text("Project rules.")
    (tmp_path / "api" / "v2").mkdir(parents=True)
    (tmp_path / "api" / "AGENTS.md").write_text("API rules.")
    (tmp_path / "api" / "v2" / "CLAUDE.md").write_text("V2 rules.")
    (tmp_path / "api" / "v2" / "routes.py").write_text("ROUTES = []\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("Docs.")
    return tmp_path


def test_a_subfolders_instructions_are_told_when_a_call_first_touches_it(tmp_path):
    project = nested_project(tmp_path)
    script = [{"tool_calls": [read("docs/index.md")]}, {"tool_calls": [read("api/v2/routes.py")]},
              {"tool_calls": [read("api/v2/routes.py"), read("api/AGENTS.md")]}, "done"]
    agent = build_agent(ScriptedLLM(script), project)
    agent.chat("go")
    check_history(agent.messages)
    docs, routes, again, notes = results(agent)
    system = agent.llm.requests[0]["messages"][0]["content"]
    assert "Project rules." in system and "API rules." not in system  # the start's own, at once
    assert docs.endswith("(end of file, 1 line)")  # docs/ has none: nothing is added
    assert routes.index("ROUTES") < routes.index("API rules.") < routes.index("V2 rules.")
    assert "[The instructions for api/ (follow them there). From api/AGENTS.md:" in routes
    assert "[The instructions for api/v2/ (follow them there). From api/v2/CLAUDE.md:" in routes
    assert "rules." not in again and "[The instructions" not in notes  # told once a session
    for before, after in pairwise(agent.llm.requests):  # the cache holds
        assert after["messages"][: len(before["messages"])] == before["messages"]


def test_a_cd_into_a_subfolder_touches_it_and_what_is_outside_the_project_never_counts(tmp_path):
    project = nested_project(tmp_path / "project")
    (tmp_path / "AGENTS.md").write_text("Above the repository.")
    script = [{"tool_calls": [{"name": "bash", "arguments": {"command": "cd api && ls"}}]},
              {"tool_calls": [read(str(tmp_path / "AGENTS.md"))]}, "done"]
    agent = build_agent(ScriptedLLM(script), project, consent=None)
    agent.chat("go")
    moved, outside = results(agent)
    assert "API rules." in moved and "V2 rules." not in moved
    assert outside.endswith("(end of file, 1 line)")  # read as asked; not taken for a rule


def test_a_batch_that_touches_one_folder_twice_at_once_tells_it_once(tmp_path):
    project = nested_project(tmp_path)
    calls = [read("api/v2/routes.py") for _ in range(6)]
    agent = build_agent(ScriptedLLM([{"tool_calls": calls}, "done"]), project)
    agent.chat("go")
    assert sum(text.count("V2 rules.") for text in results(agent)) == 1


def test_a_subfolders_linked_instructions_are_named_not_read(tmp_path):
    project = nested_project(tmp_path)
    (tmp_path / "secret").write_text("OPENAI_API_KEY=sk-secret")
    (project / "api" / "AGENTS.md").unlink()
    (project / "api" / "AGENTS.md").symlink_to(tmp_path / "secret")
    agent = build_agent(ScriptedLLM([{"tool_calls": [read("api/v2/routes.py")]}, "done"]), project)
    agent.chat("go")
    [routes] = results(agent)
    assert "sk-secret" not in routes and "(api/AGENTS.md was not read: it is a link" in routes
    assert build_agent(ScriptedLLM([]), project, instructions=False).gates == []


def test_a_path_no_folder_can_be_made_of_tells_nothing_and_breaks_nothing(tmp_path):
    project = nested_project(tmp_path)
    (project / "loop").symlink_to("loop")
    bad = ["x" * 5000, "api/\0", "loop/a.py", "api/v2/routes.py/child"]
    agent = build_agent(ScriptedLLM([{"tool_calls": [read(p) for p in bad]}, "done"]), project)
    agent.chat("go")
    assert not any("[after the call" in text for text in results(agent))


def git(cwd, *args):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd,
                   check=True, capture_output=True)


def test_the_git_status_at_the_start_is_told_as_a_snapshot_when_asked(tmp_path):
    git(tmp_path, "init", "-q", "-b", "work")
    (tmp_path / "a.py").write_text("A = 1\n")
    git(tmp_path, "add", "a.py")
    git(tmp_path, "commit", "-qm", "one")
    (tmp_path / "a.py").write_text("A = 2\n")
    (tmp_path / "new.py").write_text("")
    assert git_status(tmp_path) == "## work\n M a.py\n?? new.py"
    agent = build_agent(ScriptedLLM(["ok"]), tmp_path, git=True)
    agent.chat("hi")
    system = agent.llm.requests[0]["messages"][0]["content"]
    assert "The git status at the start (it does not update):\n## work\n M a.py" in system
    assert "## work" not in build_agent(ScriptedLLM([]), tmp_path).request()[0]["content"]
    for name in range(300):
        (tmp_path / f"file{name:03}.py").write_text("")
    assert len(git_status(tmp_path, limit=500)) == 500
    assert git_status(tmp_path / "..") == ""  # no repository: nothing to tell


def test_a_repository_whose_config_names_a_program_is_not_asked_its_status(tmp_path):
    """core.fsmonitor runs a program on every `git status`: a cloned project must not run its
    code by being opened."""
    git(tmp_path, "init", "-q")
    ran = tmp_path.parent / "ran"
    git(tmp_path, "config", "core.fsmonitor", f"touch {ran}; false")
    (tmp_path / "a.py").write_text("")
    assert git_status(tmp_path) == ""
    assert not ran.exists()


def test_a_hook_that_leaves_a_child_behind_does_not_hang_the_agent(tmp_path):
    gate, _ = hooks(tmp_path, pre=[("*", "(sleep 30 &) ; echo 'not now' >&2; exit 2")])
    started = time.monotonic()
    [vetoed] = run(tmp_path, [write()], [gate])
    assert vetoed == "write_file refused by hook: not now" and time.monotonic() - started < 5


def test_a_schema_the_check_cannot_read_lets_the_tool_decide(tmp_path):
    """An MCP server's schema may be malformed (an enum that is a number): the check gives up on
    it, and the call runs, rather than ending the turn."""
    from corecoder import Tool

    class Odd(Tool):
        name = "odd"
        parameters = {"type": "object", "properties": {"a": {"enum": 3}}}

        def run(self, ws, a):
            return f"ran with {a}"

    agent = Agent(ScriptedLLM([{"tool_calls": [{"name": "odd", "arguments": {"a": 1}}]}, "ok"]),
                  [Odd()], cwd=tmp_path)
    assert agent.chat("go") == "ok" and results(agent) == ["ran with 1"]


def test_a_schema_type_the_validator_does_not_know_lets_the_tool_decide(tmp_path):
    from corecoder import Tool

    class When(Tool):
        name = "when"
        parameters = {"type": "object", "properties": {"day": {"type": "date"}, "any": True}}

        def run(self, ws, day, any=None):
            return f"on {day}"

    agent = Agent(ScriptedLLM([{"tool_calls": [{"name": "when", "arguments": {"day": "monday", "any": 1}}]},
                               "ok"]), [When()], cwd=tmp_path)
    agent.chat("go")
    assert results(agent) == ["on monday"]


def test_consent_questions_from_workers_running_at_once_never_overlap(tmp_path):
    import threading

    from corecoder import FunctionLLM

    inside, overlapped = [0], []
    lock = threading.Lock()

    def ask(tool, args):
        with lock:
            inside[0] += 1
            overlapped.append(inside[0] > 1)
        time.sleep(0.1)
        with lock:
            inside[0] -= 1
        return "once"

    def model(messages, tools):
        task = messages[1]["content"]
        if task.startswith("write "):
            if messages[-1]["role"] == "tool":
                return "written"
            return {"tool_calls": [write(task[6:])]}
        if messages[-1]["role"] == "tool":
            return "done"
        return {"tool_calls": [{"name": "agent", "arguments": {"tasks": [
            {"name": n, "task": f"write {n}.txt"} for n in "abc"]}}]}

    build_agent(FunctionLLM(model), tmp_path, consent=Consent(ask)).chat("go")
    assert len(overlapped) == 4 and not any(overlapped)  # the agent call itself, then one per worker
    assert sorted(p.name for p in tmp_path.glob("*.txt")) == ["a.txt", "b.txt", "c.txt"]


# --- commands that only read run without a question ------------------------------------------------

def bash(command):
    return {"name": "bash", "arguments": {"command": command}}


def test_a_command_that_only_reads_runs_without_a_question_and_one_that_writes_asks(tmp_path):
    (tmp_path / "notes.txt").write_text("a note\n")
    asked = []
    listed, grepped, redirected, committed = run(
        tmp_path, [bash("ls"), bash("grep -n note notes.txt"), bash("cat notes.txt > copy.txt"),
                   bash("git log --oneline")],
        [Consent(lambda tool, args: asked.append(args["command"]) or "deny")])
    assert "notes.txt" in listed and "1:a note" in grepped
    assert asked == ["cat notes.txt > copy.txt"] and "the user said no" in redirected
    assert not (tmp_path / "copy.txt").exists()
    assert "refused" not in committed  # git log reads: no question (no repository here: git says so)


def test_with_nobody_to_ask_a_reading_command_still_runs(tmp_path):
    (tmp_path / "notes.txt").write_text("a note\n")
    listed, written = run(tmp_path, [bash("wc -l notes.txt"), bash("sort -o notes.txt notes.txt")],
                          [Consent(None)])
    assert listed.startswith("1 notes.txt")
    assert "there is nobody to allow it" in written


def test_git_reads_ask_first_in_a_repository_whose_config_names_a_program(tmp_path):
    """A repository's own .git/config can make `git status` run a program (core.fsmonitor, a
    filter, a pager...): in such a repository even a reading git command is asked about."""
    import subprocess

    from corecoder.tools.bash import reads_only

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert reads_only("git status", tmp_path) and reads_only("git log -3", tmp_path / "sub")
    with open(tmp_path / ".git" / "config", "a") as config:
        config.write("[core]\n\tfsmonitor = ./run-me.sh\n")
    assert not reads_only("git status", tmp_path) and reads_only("ls", tmp_path)
