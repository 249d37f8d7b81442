"""Promises the project makes to its users, checked."""

import re
import subprocess
import sys
from pathlib import Path

import corecoder

ROOT = Path(__file__).resolve().parents[2]


def commands_before_first_section(readme: str) -> list[str]:
    head = readme.split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.*?)\n```", head, re.S)


def test_the_readme_starts_with_exactly_two_commands_in_both_languages():
    english = commands_before_first_section((ROOT / "README.md").read_text(encoding="utf-8"))
    chinese = commands_before_first_section((ROOT / "README.zh.md").read_text(encoding="utf-8"))
    assert len(english) == 2
    assert chinese == english


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "<!-- test-command -->\n```bash\n" + commands_before_first_section(readme)[1] in readme
    assert "<!-- test-command -->" in ci


def test_importing_corecoder_does_not_import_the_heavy_libraries():
    code = "import sys, corecoder; print(sorted({'openai', 'rich', 'prompt_toolkit'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_chapter_one_loop_loads_no_tool():
    """The loop knows what a tool is (corecoder/tool.py), not which tools there are: importing it
    loads none of the built-in tools, nor `regex`, which only grep and bash need."""
    code = ("import sys, corecoder.agent; print(sorted(m for m in sys.modules "
            "if m.startswith('corecoder.tools') or m == 'regex'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_version_is_printed_without_the_heavy_libraries():
    out = subprocess.run([sys.executable, "-X", "importtime", "-m", "corecoder", "--version"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"corecoder {corecoder.__version__}"
    imported = {line.split("|")[-1].strip() for line in out.stderr.splitlines()}
    assert not imported & {"openai", "rich", "prompt_toolkit"}
    # nor the engine: only the entry point itself, so the cold start stays near bare Python's
    assert {name for name in imported if name.startswith("corecoder")} <= {"corecoder", "corecoder.cli",
                                                                          "corecoder.__main__"}


def test_the_demo_fixes_the_bug_offline_with_the_real_tools():
    run = subprocess.run([sys.executable, "-m", "corecoder", "--demo"], capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stderr
    out = run.stdout
    assert "1 of 3 tests passed" in out  # the first run shows the bug
    assert out.count("→ ") == 5  # bash, grep, read_file, edit_file, bash
    assert "3 of 3 tests passed" in out  # the last run shows the fix really worked
    assert out.rstrip().endswith("All tests in test_stats.py now pass.")


def test_the_demo_leaves_the_shipped_project_untouched():
    source = (ROOT / "corecoder" / "demo" / "project" / "stats.py").read_text(encoding="utf-8")
    assert "(len(values) - 1)" in source


def test_the_readme_documents_every_command_and_file_in_both_languages():
    from corecoder.cli.repl import HELP

    commands = [word.strip(",") for usage, _ in HELP for word in usage.split() if word.startswith("/")]
    names = ["hooks.json", "mcp.json", "pricing.json", "AGENTS.md", "CLAUDE.md", "--resume", "--yes", "-p",
             "CORECODER_HOME", "CORECODER_MODEL", "OPENAI_BASE_URL", "CORECODER_STREAM", "CORECODER_CONTEXT_WINDOW"]
    for readme in ("README.md", "README.zh.md"):
        text = (ROOT / readme).read_text(encoding="utf-8")
        missing = [name for name in commands + names if name not in text]
        assert missing == [], readme


def test_the_pythons_ci_runs_are_the_ones_the_package_says_it_supports():
    """.ci/pythons runs the engine's and the command's tests on every Python but the default,
    which runs everything: together, the versions the classifiers name, this one among them."""
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")  # (tomllib: 3.11 and up)
    said = set(re.findall(r'"Programming Language :: Python :: (3\.\d+)"', pyproject))
    others = re.search(r"versions=\(([\d. ]+)\)", (ROOT / ".ci" / "pythons").read_text()).group(1)
    assert set(others.split()) < said and len(said - set(others.split())) == 1  # the default
    assert said == {"3.10", "3.11", "3.12", "3.13"}
    assert f"{sys.version_info.major}.{sys.version_info.minor}" in said
    assert 'requires-python = ">=3.10"' in pyproject
    assert ".ci/pythons" in (ROOT / ".ci" / "run").read_text()
