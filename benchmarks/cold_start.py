"""How long `corecoder --version` and `--help` take, ours and upstream's, against a bare `python -c pass`.

Each command is the installed entry point, run to its end with output discarded; the commands take
turns within every round, so a burst of load elsewhere lands on all of them alike. The figure is the
median over the rounds, and its ratio to the bare interpreter measured in the same run, so it means
the same on any machine.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

BARE = "python -c pass"


def seconds(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def commands(ours: list[str], upstream: list[str] | None) -> dict[str, list[str]]:
    """What to time, by name: the bare interpreter, then each agent's --version and --help."""
    found = {BARE: [sys.executable, "-c", "pass"]}
    for who, entry in (("ours", ours), ("upstream", upstream)):
        for flag in ("--version", "--help") if entry else ():
            found[f"{who} {flag}"] = [*entry, flag]
    return found


def measure(ours: list[str], upstream: list[str] | None, runs: int) -> dict:
    """Median milliseconds of each command over `runs` rounds, and its ratio to the bare interpreter."""
    timed = commands(ours, upstream)
    for command in timed.values():  # once untimed: the .pyc files are written, the disk cache is warm
        seconds(command)
    times: dict[str, list[float]] = {name: [] for name in timed}
    for _ in range(runs):
        for name, command in timed.items():
            times[name].append(seconds(command))
    medians = {name: statistics.median(each) * 1000 for name, each in times.items()}
    return {"runs": runs, "median_ms": medians, "vs_bare": {n: ms / medians[BARE] for n, ms in medians.items()}}
