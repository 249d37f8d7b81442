"""python -m benchmarks [--quick] [--skip-upstream] [--skip-course]: every figure, a table, results.json.

Progress goes to stderr; the tables (Markdown, ready for benchmarks/README.md) to stdout.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
from pathlib import Path

from . import cache, cold_start, course, long_session, reassembly, report, scenario, upstream

HERE = Path(__file__).resolve().parent


def options(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="2 scenario rounds and 6 cold-start rounds")
    p.add_argument("--rounds", type=int, help="scenario runs of each agent (default 5, --quick 2)")
    p.add_argument("--cold-runs", type=int, help="cold-start runs of each command (default 20, --quick 6)")
    p.add_argument("--skip-upstream", action="store_true", help="measure ours only")
    p.add_argument("--skip-course", action="store_true", help="do not execute the notebooks nor build the site")
    p.add_argument("--no-warmup", action="store_true", help="no discarded warm-up run before the scenario")
    p.add_argument("--out", type=Path, default=HERE / "results.json", help="where to write the JSON (%(default)s)")
    args = p.parse_args(argv)
    args.rounds = args.rounds or (2 if args.quick else 5)
    args.cold_runs = args.cold_runs or (6 if args.quick else 20)
    return args


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def machine() -> dict:
    return {"machine": platform.machine(), "cpus": os.cpu_count(), "python": platform.python_version(),
            "system": f"{platform.system()} {platform.release()}", "load_average": os.getloadavg()}


def find_upstream(skip: bool) -> tuple[scenario.Contender | None, str]:
    if skip:
        return None, "skipped (--skip-upstream)"
    say(f"upstream: making sure corecoder {upstream.VERSION} is installed in {upstream.VENV} ...")
    command, note = upstream.ensure()
    if command is None:
        return None, note
    return scenario.Contender("upstream", [str(command)], upstream.translate(scenario.SCRIPT)), note


def run_scenario(ours: scenario.Contender, theirs: scenario.Contender | None, args) -> dict:
    say(f"scenario: {args.rounds} round(s), alternating ...")
    compared = scenario.compare([ours] + ([theirs] if theirs else []), args.rounds, warmup=not args.no_warmup)
    theirs_summary = compared.get("upstream")
    return {**compared, "ratio": report.ratios(compared["ours"]["median"],
                                               theirs_summary["median"] if theirs_summary else None)}


def run_cold_start(ours: scenario.Contender, theirs: scenario.Contender | None, runs: int) -> dict:
    say(f"cold start: {runs} round(s) ...")
    c = cold_start.measure(ours.command, theirs.command if theirs else None, runs)
    ms = c["median_ms"]
    c["ratio"] = {f: ms[f"ours {f}"] / ms[f"upstream {f}"] for f in ("--version", "--help") if f"upstream {f}" in ms}
    return c


def run_course() -> dict:
    say("course: executing every notebook, then building the site ...")
    try:
        return {"notebooks": course.execute_notebooks(), "site": course.build_site()}
    except Exception as e:  # noqa: BLE001 - missing extras, a failing cell, a broken build: say so, keep the rest
        say(f"course: not measured: {type(e).__name__}: {e}")
        return {"error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"}


def main(argv: list[str] | None = None) -> dict:
    args = options(argv)
    results = {"date": datetime.date.today().isoformat(), "machine": machine(),
               "settings": {"rounds": args.rounds, "cold_runs": args.cold_runs, "warmup": not args.no_warmup}}
    ours = scenario.ours()
    theirs, results["upstream"] = find_upstream(args.skip_upstream)
    say(f"upstream: {results['upstream']}")
    results["scenario"] = run_scenario(ours, theirs, args)
    results["cold_start"] = run_cold_start(ours, theirs, args.cold_runs)
    say("long session: 500 rounds, 3 times ...")
    results["long_session"] = long_session.run(500, 16_000, repeats=3)
    for key, session in (("cache", cache.CACHE), ("compacting", cache.COMPACTING)):
        say(f"{session.name}: {session.rounds} rounds, each agent once ...")
        script = session.script()
        results[key] = cache.compare(scenario.Contender("ours", ours.command, script),
                                     theirs and scenario.Contender("upstream", theirs.command,
                                                                   upstream.translate(script)), session)
    say("reassembly: 1 MB of arguments in 7-character fragments ...")
    results["reassembly"] = reassembly.measure()
    results["course"] = None if args.skip_course else run_course()
    results["machine"]["load_average_after"] = os.getloadavg()
    results["targets"] = report.check_targets(results)
    args.out.write_text(json.dumps(results, indent=1, default=str) + "\n", encoding="utf-8")
    print(report.render(results))
    say(f"written: {args.out}")
    return results


if __name__ == "__main__":
    main()
