"""How long `corecoder --version` and `--help` take, against a bare `python -c pass`.

Run: python benchmarks/cold_start.py [--runs N]
Prints the median wall time of each command over N runs, and its ratio to the bare
interpreter measured in the same run, so the figure means the same on any machine.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time


def median_seconds(command: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    runs = parser.parse_args().runs
    entry = shutil.which("corecoder") or ""
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "python -m corecoder --version": [sys.executable, "-m", "corecoder", "--version"],
        "python -m corecoder --help": [sys.executable, "-m", "corecoder", "--help"],
    }
    if entry:
        commands["corecoder --version"] = [entry, "--version"]
    results = {name: median_seconds(cmd, runs) for name, cmd in commands.items()}
    base = results["python -c pass"]
    for name, seconds in results.items():
        print(f"{name:32} {seconds * 1000:7.1f} ms   {seconds / base:5.2f}x bare python")
    print(json.dumps({k: round(v * 1000, 1) for k, v in results.items()}))


if __name__ == "__main__":
    main()
