"""The scenario: `corecoder -p PROMPT --yes` fixes the demo's buggy project, measured as a whole process.

Each run gets a fresh copy of corecoder/demo/project, a fresh $HOME and CORECODER_HOME, and its own
ScriptServer on loopback playing the demo's script (read, grep, edit, run the test, answer), so the
model costs nothing and both agents do exactly the same work. Measured per run:

- wall time: from spawning the process to reaping it (the server is up before and stops after);
- peak RSS: `ru_maxrss` from os.wait4 on the process. Linux reports there the largest peak of the process
  and the descendants it waited for (bash, the test's python3): the agent's own process, in practice;
  not the sum over processes running at the same moment. A child's ru_maxrss also counts the memory
  of the process it was forked from, up to its exec: spawned from this runner, an agent would never
  read below the runner's own RSS. So a small launcher (LAUNCHER, `python -I -S`, ~10 MiB) spawns
  the agent, times it, reaps it and reports; that floor is far below either agent's peak;
- requests and bytes sent: from the server's records, the raw request bodies' sizes.

A run counts only if it exited 0, printed the final answer, and the project's test passes afterwards.
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from corecoder.demo import SCRIPT, TASK, copy_project
from corecoder.testing import ScriptServer

ANSWER = SCRIPT[-1]
TIMEOUT = 120  # seconds; a run that takes longer is killed and marked failed


@dataclass
class Contender:
    name: str
    command: list[str]  # the `corecoder` command, without arguments
    script: list  # the demo's script in the tool dialect of this agent


def environment(server: ScriptServer, home: Path) -> dict:
    """The machine's environment minus any model settings, then the server's: no real key can leak in."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "CORECODER_")) and not k.endswith("_API_KEY")}
    return {**env, "HOME": str(home), "CORECODER_HOME": str(home / ".corecoder"),
            "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "x", "CORECODER_MODEL": "scripted"}


LAUNCHER = """
import json, os, sys, time
report, command = sys.argv[1], sys.argv[2:]
started = time.perf_counter()
pid = os.posix_spawnp(command[0], command, os.environ)
_, status, usage = os.wait4(pid, 0)
seconds = time.perf_counter() - started
with open(report, "w") as f:
    json.dump({"exit_code": os.waitstatus_to_exitcode(status), "seconds": seconds, "maxrss_kib": usage.ru_maxrss}, f)
"""


def spawn_and_reap(command: list[str], cwd: Path, env: dict, out, err, report: Path) -> tuple[int, float, int]:
    """Run `command` to its end through LAUNCHER, which writes `report`: (exit code, wall seconds, ru_maxrss KiB)."""
    launcher = subprocess.Popen([sys.executable, "-I", "-S", "-c", LAUNCHER, str(report), *command], cwd=cwd,
                                env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True)
    try:
        launcher.wait(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(launcher.pid, signal.SIGKILL)  # the launcher and the agent: one process group
        launcher.wait()
        return -signal.SIGKILL, float(TIMEOUT), 0
    if not report.exists():  # the launcher itself failed (its traceback is in `err`): a failed run
        return launcher.returncode or 1, 0.0, 0
    measured = json.loads(report.read_text(encoding="utf-8"))
    return measured["exit_code"], measured["seconds"], measured["maxrss_kib"]


def project_fixed(project: Path) -> bool:
    run = subprocess.run([sys.executable, "test_stats.py"], cwd=project, capture_output=True, text=True, timeout=60)
    return run.returncode == 0 and "3 of 3 tests passed" in run.stdout


def run_once(contender: Contender, workdir: Path) -> dict:
    """One run of the scenario in `workdir` (fresh and empty)."""
    project, home = copy_project(workdir), workdir / "home"
    home.mkdir()
    out_path, err_path = workdir / "stdout.txt", workdir / "stderr.txt"
    with ScriptServer(contender.script) as server, open(out_path, "wb") as out, open(err_path, "wb") as err:
        code, seconds, rss_kib = spawn_and_reap([*contender.command, "-p", TASK, "--yes"], project,
                                                environment(server, home), out, err, workdir / "launcher.json")
        requests = list(server.requests)
    stdout = out_path.read_text(encoding="utf-8", errors="replace")
    fixed = project_fixed(project)
    ok = code == 0 and ANSWER in stdout and fixed
    return {"ok": ok, "exit_code": code, "fixed": fixed, "seconds": seconds, "peak_rss_mib": rss_kib / 1024,
            "requests": len(requests), "bytes_sent": sum(r["bytes"] for r in requests),
            **({} if ok else {"stderr_tail": err_path.read_text(encoding="utf-8", errors="replace")[-600:]})}


def run_in_temp(contender: Contender) -> dict:
    # One prefix for both: the paths the agents print and send (system prompt, tool results) are as long.
    with tempfile.TemporaryDirectory(prefix="corecoder-bench-") as tmp:
        return run_once(contender, Path(tmp))


def summarize(runs: list[dict]) -> dict:
    """Medians over the runs that succeeded; how many failed."""
    good = [r for r in runs if r["ok"]]
    keys = ("seconds", "peak_rss_mib", "requests", "bytes_sent")
    medians = {k: statistics.median(r[k] for r in good) for k in keys} if good else {}
    return {"runs": len(runs), "failed": len(runs) - len(good), "median": medians, "each": runs}


def compare(contenders: list[Contender], rounds: int, warmup: bool = True) -> dict:
    """Run each contender `rounds` times, alternating, the order swapped every round (A B, B A, ...).

    One discarded warm-up run each first, so that neither pays alone for a cold disk cache."""
    for contender in contenders if warmup else []:
        run_in_temp(contender)
    runs: dict[str, list[dict]] = {c.name: [] for c in contenders}
    for n in range(rounds):
        for contender in contenders if n % 2 == 0 else contenders[::-1]:
            runs[contender.name].append(run_in_temp(contender))
    return {name: summarize(each) for name, each in runs.items()}


def ours() -> Contender:
    """Our `corecoder` command: the entry point next to this interpreter, else `python -m corecoder`."""
    entry = Path(sys.executable).with_name("corecoder")
    return Contender("ours", [str(entry)] if entry.exists() else [sys.executable, "-m", "corecoder"], SCRIPT)
