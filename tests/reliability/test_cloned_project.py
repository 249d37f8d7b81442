"""A cloned repository decides what is in its folder: nothing in it may make the engine write,
prune or read outside it, reroute the conversation, or hide what the user approves."""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from corecoder.calls import KEEP_OUTPUTS, bound
from corecoder.workspace import Workspace

SETTINGS = settings(max_examples=60, derandomize=True, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and not p.is_symlink()}


def hashed(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# --- 1. outputs are kept only in a real folder of the project, and only ours are pruned ---------

@SETTINGS
@given(link=st.sampled_from([".corecoder", "outputs", "file", None]),
       names=st.lists(st.one_of(st.text("0123456789abcdef", min_size=16, max_size=16),
                                st.sampled_from(["notes", "TODO", "a b"])), max_size=KEEP_OUTPUTS + 8,
                      unique=True),
       outputs=st.integers(1, 4))
@pytest.mark.row("links")
def test_a_long_output_never_writes_or_prunes_through_a_link_the_project_holds(
        tmp_path_factory, link, names, outputs):
    project, outside = tmp_path_factory.mktemp("project"), tmp_path_factory.mktemp("users")
    for name in names:  # the user's own files, some named as the engine names its outputs
        (outside / f"{name}.txt").write_text(f"the user's {name}")
    texts = [f"output {n} " + "x" * 30_000 for n in range(outputs)]
    if link == ".corecoder":
        (project / ".corecoder").symlink_to(outside)
    elif link == "outputs":
        (project / ".corecoder").mkdir()
        (project / ".corecoder" / "outputs").symlink_to(outside)
    elif link == "file":  # a link planted under the name the engine will give the first output
        (project / ".corecoder" / "outputs").mkdir(parents=True)
        (project / ".corecoder" / "outputs" / f"{hashed(texts[0])}.txt").symlink_to(
            outside / "target.txt")
    before = snapshot(outside)

    shown = [bound(text, Workspace(project)) for text in texts]

    assert snapshot(outside) == before, "nothing outside the project was written or removed"
    for text, result in zip(texts, shown, strict=True):
        assert len(result) <= 20_000
        if link in (".corecoder", "outputs") or link == "file" and text == texts[0]:
            assert "the full output could not be kept" in result and "link" in result
        else:
            kept = project / ".corecoder" / "outputs" / f"{hashed(text)}.txt"
            assert f"the full output is in {os.path.relpath(kept, project)}" in result
            assert not kept.is_symlink() and kept.read_text() == text


@pytest.mark.row("links")
def test_pruning_removes_only_files_whose_content_is_what_the_engine_wrote(tmp_path):
    folder = tmp_path / ".corecoder" / "outputs"
    folder.mkdir(parents=True)
    users = {f"{'0' * 15}{n}.txt": f"the user's notes {n}" for n in range(5)}  # look-alike names
    for name, text in users.items():
        (folder / name).write_text(text)
        os.utime(folder / name, ns=(0, 0))  # the oldest of all: first in line to be pruned
    texts = [f"output {n} " + "x" * 30_000 for n in range(KEEP_OUTPUTS + 3)]
    for text in texts:
        bound(text, Workspace(tmp_path))
    kept = {p.name: p.read_text() for p in folder.glob("*.txt")}
    assert {name: kept.get(name) for name in users} == users
    assert set(kept) - set(users) == {f"{hashed(t)}.txt" for t in texts[-KEEP_OUTPUTS:]}


# --- 2. project instructions carry no secrets into the prompt -----------------------------------

SECRETS = {".git/config": "url = https://user:ghp_TOKEN@github.com/x/y", ".env": "OPENAI_API_KEY=sk-KEY",
           "docs/notes.md": "harmless notes, still through a link"}


@SETTINGS
@given(name=st.sampled_from(["AGENTS.md", "CLAUDE.md"]), target=st.sampled_from(sorted(SECRETS)),
       how=st.sampled_from(["relative link", "absolute link", "link to a link", "hard link"]),
       where=st.sampled_from(["", "sub", "sub/deeper"]))
@pytest.mark.row("instructions")
def test_instructions_are_never_a_link_or_a_second_name_for_another_file(
        tmp_path_factory, name, target, how, where):
    from corecoder.instructions import project_instructions

    project = tmp_path_factory.mktemp("project")
    for path, text in SECRETS.items():
        (project / path).parent.mkdir(parents=True, exist_ok=True)
        (project / path).write_text(text)
    folder = project / where
    folder.mkdir(parents=True, exist_ok=True)
    if how == "relative link":
        (folder / name).symlink_to(os.path.relpath(project / target, folder))
    elif how == "absolute link":
        (folder / name).symlink_to(project / target)
    elif how == "link to a link":
        (project / "hop").symlink_to(project / target)
        (folder / name).symlink_to(project / "hop")
    else:
        os.link(project / target, folder / name)

    prompt = project_instructions(folder)

    assert not any(text in prompt for text in SECRETS.values())
    assert f"{Path(where, name).as_posix()} was not read: it " in prompt


# --- 3. a project's .env can't reroute the conversation or the key until trusted ----------------

KEYS = ["CORECODER_API_KEY", "OPENAI_API_KEY", "DEEPSEEK_API_KEY"]
ENDPOINTS = ["CORECODER_BASE_URL", "OPENAI_BASE_URL"]


@SETTINGS
@given(project=st.sets(st.sampled_from(KEYS + ENDPOINTS + ["CORECODER_MODEL"]), max_size=4),
       user=st.sets(st.sampled_from(KEYS + ENDPOINTS), max_size=3),
       model=st.sampled_from([None, "deepseek/deepseek-chat", "gpt-4o"]))
@pytest.mark.row("dotenv")
def test_the_projects_env_routes_only_when_trusted_and_never_with_the_users_key(
        tmp_path_factory, project, user, model):
    from corecoder.cli.config import ROUTES, load_config

    def value(name, whose):
        return {"KEY": f"{whose}-key", "URL": f"http://{whose}.test/v1"}.get(name[-3:], "scripted")

    repo = tmp_path_factory.mktemp("repo")
    (repo / ".git").mkdir()
    (repo / ".env").write_text("".join(f"{name}={value(name, 'theirs')}\n" for name in project))
    env = {"CORECODER_HOME": str(tmp_path_factory.mktemp("home")),
           **{name: value(name, "mine") for name in user}}
    trusted = load_config(repo, env, model=model)
    untrusted = load_config(repo, env, model=model, project_routes=False)
    (repo / ".env").write_text("".join(f"{name}=scripted\n" for name in project - ROUTES))
    assert untrusted == load_config(repo, env, model=model), "untrusted: as if it named no route"
    if trusted.base_url != untrusted.base_url:  # the project's endpoint: never the user's key
        assert trusted.api_key in ("theirs-key", "not-needed")
    elif untrusted.api_key == "mine-key":
        assert trusted.api_key == "mine-key", "a project's key never replaces the user's own"


@pytest.mark.row("dotenv")
def test_a_huge_env_file_is_one_clear_line_not_a_memory_error(tmp_path):
    from corecoder.cli.config import ConfigError, load_config

    (tmp_path / ".env").touch()
    os.truncate(tmp_path / ".env", 1 << 30)  # a gigabyte, sparse: nothing on the disk
    with pytest.raises(ConfigError) as raised:
        load_config(tmp_path, {"CORECODER_HOME": str(tmp_path / "home")})
    assert "\n" not in str(raised.value) and "more than 1,048,576 bytes" in str(raised.value)


# --- 4. trust is given to exactly what was shown -----------------------------------------------

@pytest.mark.row("trust")
def test_a_config_file_too_large_to_show_is_never_loaded_trusted_or_not(tmp_path):
    from corecoder.files import CONFIG_LIMIT
    from corecoder.hooks import HookError, load_hooks
    from corecoder.mcp.config import MCPConfigError, read_mcp_json

    padding = " " * CONFIG_LIMIT
    (tmp_path / "hooks.json").write_text('{"PreToolUse": [{"command": "sh evil"}]}' + padding)
    (tmp_path / "mcp.json").write_text('{"mcpServers": {"x": {"command": "sh"}}}' + padding)
    with pytest.raises(HookError, match="more than 1,048,576 bytes"):
        load_hooks(tmp_path / "hooks.json")
    with pytest.raises(MCPConfigError, match="more than 1,048,576 bytes"):
        read_mcp_json(tmp_path / "mcp.json")


@pytest.mark.row("trust")
def test_started_in_the_home_folder_the_users_own_hooks_run_once_a_call_without_a_question(tmp_path):
    from corecoder.testing import ScriptServer
    from helpers import corecoder, environment

    home = tmp_path / "user"  # $HOME, no git repository: the project is the home folder itself
    (home / ".corecoder").mkdir(parents=True)
    log = tmp_path / "hook.log"
    (home / ".corecoder" / "hooks.json").write_text(
        f'{{"PreToolUse": [{{"matcher": "*", "command": "echo ran >> {log}"}}]}}')
    (home / "notes.txt").write_text("mine\n")
    script = [{"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]}, "done"]
    with ScriptServer(script) as server:
        env = environment(server, home / ".corecoder", HOME=str(home))
        run = corecoder("-p", "read my notes", cwd=home, env=env)
    assert run.returncode == 0, run.stderr
    assert log.read_text() == "ran\n", "one call, one run of the user's hook"
    assert "not trusted" not in run.stderr


# --- 5. the user sees what they approve ---------------------------------------------------------

def a_repl(tmp_path, fn, *lines, questions=None):
    """A REPL over a FunctionLLM that asks before every change (no --yes)."""
    import io

    from rich.console import Console

    from corecoder import FunctionLLM
    from corecoder.cli.app import assemble
    from corecoder.cli.config import load_config
    from corecoder.cli.repl import Repl
    from corecoder.session import SessionLog
    from test_cli import Lines

    llm = FunctionLLM(fn, model="gpt-4o-mini")
    config = load_config(tmp_path, {"OPENAI_API_KEY": "x", "HOME": str(tmp_path)}, model=llm.model)
    app = assemble(config, llm, tmp_path, SessionLog(config.home))
    out = io.StringIO()
    shell = Repl(app, Console(file=out, width=60, color_system=None), Lines(*lines), env={},
                 cwd=tmp_path, questions=questions)
    return shell, llm, out


@pytest.mark.row("consent")
@SETTINGS
@given(command=st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1,
                       max_size=400).filter(lambda c: c.strip()))
def test_a_consent_question_shows_the_whole_command_wrapped_and_never_cut(tmp_path_factory, command):
    from corecoder.cli.trace import printable

    asked = []

    class Questions:
        def prompt(self, text):
            asked.append(text)
            return "n"

    def model(messages, tools):
        if messages[-1]["role"] == "user":
            return {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}
        return "ok"

    shell, _, out = a_repl(tmp_path_factory.mktemp("p"), model, "go", questions=Questions())
    shell.run()
    shown = out.getvalue()
    assert len(asked) == 1 and "\x1b" not in shown
    question = shown[shown.index("allow bash?"):]
    assert "".join(printable(command).split()) in "".join(question.split()), (
        "every character of it, on wrapped lines")


@pytest.mark.row("consent")
def test_ctrl_c_at_a_workers_question_stops_the_turn_and_the_next_line_is_a_prompt(tmp_path):
    from corecoder import check_history

    asked = []

    class Questions:  # the user allows the team, then presses Ctrl+C at a worker's question
        def prompt(self, text):
            asked.append(threading.current_thread() is threading.main_thread())
            if len(asked) == 1:
                return "y"
            raise KeyboardInterrupt

    release, released = threading.Event(), []

    def model(messages, tools):
        task = messages[1]["content"]
        if task == "task:read":  # a worker that asks nothing, still thinking when Ctrl+C comes
            released.append(release.wait(timeout=10))
            return "read it all"
        if task.startswith("task:"):  # a worker: it wants to write its file
            if messages[-1]["role"] == "tool":
                return "written"
            return {"tool_calls": [{"name": "write_file",
                                    "arguments": {"path": f"{task[5:]}.txt", "content": "x"}}]}
        if messages[-1] == {"role": "user", "content": "go"}:
            tasks = [{"name": n, "task": f"task:{n}"} for n in ("a", "b", "c", "read")]
            return {"tool_calls": [{"name": "agent", "arguments": {"tasks": tasks}}]}
        return "ok"

    shell, llm, out = a_repl(tmp_path, model, "go", "and now this", questions=Questions())
    shell.run()  # the turn ends at the Ctrl+C: it does not wait for the worker still thinking
    still_thinking = released == []
    release.set()
    assert still_thinking, "the turn did not wait for the worker that asked nothing"
    assert asked == [True, False], "the team's question, one worker's, and no sibling's after it"
    assert "interrupted" in out.getvalue()
    assert llm.requests[-1]["messages"][-1] == {"role": "user", "content": "and now this"}
    check_history(llm.requests[-1]["messages"])
    assert not any((tmp_path / f"{n}.txt").exists() for n in "abc")


# --- 6. nothing reaches the terminal raw ---------------------------------------------------------

HOSTILE = st.lists(st.sampled_from(["\x1b", "]52;c;", "[2J", "\x07", "\x9b", "\r", "\x08", "\x7f",
                                    "\x90", "a", " ", "é"]), min_size=1, max_size=12).map("".join)
RAW = set(map(chr, [*range(0, 9), *range(11, 32), 0x7F, *range(0x80, 0xA0)]))  # \t and \n stay


@pytest.mark.row("escapes")
@settings(SETTINGS, max_examples=4)
@given(hostile=HOSTILE)
def test_no_warning_or_error_carries_a_raw_control_character_to_the_terminal(
        tmp_path_factory, hostile):
    import json

    from corecoder.testing import ScriptServer
    from helpers import corecoder, environment

    repo, home = tmp_path_factory.mktemp("repo"), tmp_path_factory.mktemp("home")
    (repo / ".git").mkdir()
    (repo / ".corecoder").mkdir()
    (repo / "said.txt").write_text(hostile)
    hooks = {"PreToolUse": [{"command": "cat said.txt >&2; exit 1"}, {"command": hostile}],
             hostile: []}
    (repo / ".corecoder" / "hooks.json").write_text(json.dumps(hooks))
    servers = {"mcpServers": {f"s{hostile}": {"command": f"/nonexistent/{hostile}"}}}
    (repo / ".corecoder" / "mcp.json").write_text(json.dumps(servers))
    script = [{"tool_calls": [{"name": "read_file", "arguments": {"path": "said.txt"}}]}, hostile]
    with ScriptServer(script) as server:
        env = environment(server, home)
        (repo / ".env").write_text(f"CORECODER_MODEL={json.dumps(hostile)}\n")
        run = corecoder("-p", "go", "--trust-project", cwd=repo, env=env)
    # (the answer on stdout, to a pipe, stays as it was: tests/command/test_cli.py holds that)
    assert not RAW & set(run.stderr), [c for c in run.stderr if c in RAW]
    assert "hook `cat said.txt >&2; exit 1` failed (exit 1)" in run.stderr


@pytest.mark.row("escapes")
def test_every_print_of_the_command_goes_through_printable():
    """The one choke point, held in the source: a `print`, `.print` or `.write` in corecoder/cli
    prints nothing, or what `printable` made of it (the answer to a pipe excepted, on purpose),
    or a JSON line in ASCII (ACP's), where every control character is escaped."""
    import ast

    unchecked = []
    for path in sorted((Path(__file__).parents[2] / "corecoder" / "cli").glob("*.py")):
        source = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source)):
            if not (isinstance(node, ast.Call) and node.args) or not (
                    getattr(node.func, "id", None) == "print"
                    or getattr(node.func, "attr", None) in ("print", "write")):
                continue
            shown = ast.get_source_segment(source, node.args[0])
            if "printable(" not in shown and not (shown.startswith("json.dumps(")
                                                   and "ensure_ascii" not in shown):
                unchecked.append(f"{path.name}:{node.lineno}")
    assert unchecked == []
