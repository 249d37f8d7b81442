"""The upstream agent, `corecoder==0.8.0` from PyPI, in a venv of its own, and the demo's script in its dialect.

The venv lives in benchmarks/.upstream-venv (git-ignored) and is reused while it holds the right version.
It is built from the interpreter that runs the benchmarks, so both agents run on the same Python.

What 0.8.0 needs, read from its installed source (corecoder/cli.py, tools/*.py, config.py):
- one-shot mode is `-p PROMPT`, auto-approval `--yes`, `--version`/`-v` and `--help` as usual;
- it reads OPENAI_API_KEY (or CORECODER_API_KEY), OPENAI_BASE_URL, CORECODER_MODEL, and loads a `.env`
  walking up from the working directory to $HOME;
- read_file and edit_file take `file_path` where ours take `path`; bash takes `command`, grep takes
  `pattern`, `path`, `include`, as ours do; relative paths resolve against the process's working directory;
- it keeps undo checkpoints in ~/.corecoder/checkpoints.json, so every run gets a fresh $HOME;
- in -p mode it prints everything to stdout: the streamed text, a `> tool(args)` line per call, the answer.
"""

from __future__ import annotations

import copy
import subprocess
import sys
import venv
from pathlib import Path

VERSION = "0.8.0"
VENV = Path(__file__).resolve().parent / ".upstream-venv"
RENAMED = {"read_file": {"path": "file_path"}, "edit_file": {"path": "file_path"}, "write_file": {"path": "file_path"},
           "todo_write": {"todos": "tasks"}}


def translate(script: list) -> list:
    """Our script with each tool call's arguments renamed the way upstream's tools want them, order kept."""
    turns = copy.deepcopy(script)
    for turn in turns:
        for call in turn.get("tool_calls", []) if isinstance(turn, dict) else []:
            names = RENAMED.get(call["name"], {})
            call["arguments"] = {names.get(k, k): v for k, v in call["arguments"].items()}
    return turns


def executable(name: str = "corecoder", where: Path = VENV) -> Path:
    return where / "bin" / name


def installed_version(where: Path = VENV) -> str | None:
    python = executable("python", where)
    if not python.exists():
        return None
    code = "import importlib.metadata as m; print(m.version('corecoder'))"
    run = subprocess.run([str(python), "-c", code], capture_output=True, text=True)
    return run.stdout.strip() if run.returncode == 0 else None


def ensure(where: Path = VENV) -> tuple[Path | None, str]:
    """The upstream `corecoder` command, installing it first if needed; (None, why) if that fails."""
    if installed_version(where) == VERSION:
        return executable("corecoder", where), f"corecoder {VERSION} (cached venv)"
    try:
        venv.EnvBuilder(clear=True, with_pip=True).create(where)
        pip = [str(executable("python", where)), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        run = subprocess.run([*pip, f"corecoder=={VERSION}"], capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.SubprocessError) as e:
        return None, f"could not create the venv: {e}"
    if run.returncode != 0 or installed_version(where) != VERSION:
        lines = run.stderr.strip().splitlines() or ["no output"]
        return None, f"pip install corecoder=={VERSION} failed: {next((x for x in lines if 'ERROR' in x), lines[-1])}"
    return executable("corecoder", where), f"corecoder {VERSION} (installed now)"


if __name__ == "__main__":
    print(ensure()[1], file=sys.stderr)
