"""The examples run as shipped, offline, and do what examples/README.md says."""

import shutil
import subprocess
import sys
from pathlib import Path

from helpers import corecoder, environment

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run(name: str) -> str:
    done = subprocess.run([sys.executable, str(EXAMPLES / name)], capture_output=True, text=True,
                          timeout=120, check=True)
    assert "Traceback" not in done.stderr
    return done.stdout


def test_plan_mode_refuses_until_approved_and_the_hook_vetoes_rm():
    said = run("plan_and_hooks.py")
    assert "write_file refused by plan mode" in said
    assert "bash refused by hook: this project keeps its files: move them to attic/ instead" in said
    assert said.rstrip().endswith("todo.txt: done; old.log kept in attic/: True")


def test_the_team_works_two_at_once_then_reviews_and_prints_the_same_every_time():
    said = run("team.py")
    assert said == run("team.py")
    assert "[implementer] edit_file" in said and "[researcher] read_file" in said
    assert "Reviewed: mean([2, 4]) printed 3.0." in said  # what the reviewer's command printed


def test_the_mcp_starter_works_as_copied_into_a_project(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".corecoder").mkdir()
    for name in ("notes_server.py", "mcp.json", "try.json"):
        shutil.copy(EXAMPLES / "mcp" / name, tmp_path / ".corecoder" / name)
    done = corecoder("-m", "mock/.corecoder/try.json", "-p", "keep a note", "--yes", "--trust-project",
                     cwd=tmp_path, env=environment(None, tmp_path / "home"))
    assert done.returncode == 0, done.stderr
    assert "✓ kept: try the MCP starter" in done.stderr and "✓ - try the MCP starter" in done.stderr
    assert (tmp_path / "notes.json").read_text() == '["try the MCP starter"]'
