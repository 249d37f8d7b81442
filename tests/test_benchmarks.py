"""The benchmark runner works: every piece runs in a tiny mode and reports what it should. Structure only:
no figure here is compared with a speed (benchmarks/README.md holds the figures)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `benchmarks` is a folder of the repository, not part of the package
    sys.path.insert(0, str(ROOT))

from benchmarks import report, upstream  # noqa: E402
from benchmarks.scenario import SCRIPT  # noqa: E402


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("bench") / "results.json"
    run = subprocess.run([sys.executable, "-m", "benchmarks", "--rounds", "1", "--cold-runs", "1", "--no-warmup",
                          "--skip-upstream", "--skip-course", "--out", str(out)],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "| scenario (median) |" in run.stdout and "| target |" in run.stdout
    return json.loads(out.read_text(encoding="utf-8"))


def positive(*values) -> bool:
    return all(isinstance(v, (int, float)) and v > 0 for v in values)


def test_the_scenario_really_fixes_the_project_and_is_measured(results):
    ours = results["scenario"]["ours"]
    assert (ours["runs"], ours["failed"]) == (1, 0)
    run = ours["each"][0]
    assert run["ok"] and run["fixed"] and run["exit_code"] == 0
    assert run["requests"] == len(SCRIPT)
    assert positive(*ours["median"].values()) and set(ours["median"]) == {"seconds", "peak_rss_mib", "requests",
                                                                           "bytes_sent"}
    assert "upstream" not in results["scenario"] and results["scenario"]["ratio"] == {}


def test_cold_start_times_the_bare_interpreter_and_our_command(results):
    ms = results["cold_start"]["median_ms"]
    assert set(ms) == {"python -c pass", "ours --version", "ours --help"}
    assert positive(*ms.values())


def test_the_long_session_reports_overhead_at_each_mark(results):
    long = results["long_session"]
    assert long["rounds"] == 500 and set(long["overhead_ms"]) == {"10", "100", "500"}
    assert set(long["overhead_cpu_ms"]) == {"10", "100", "500"}
    assert positive(*long["overhead_ms"].values(), *long["overhead_cpu_ms"].values(), long["ratio_last_to_10"],
                    long["ratio_last_to_10_cpu"], long["characters_sent"])


def test_without_upstream_the_ratios_against_it_are_not_measured(results):
    met = {t["target"]: t["met"] for t in results["targets"]}
    assert len(met) == len(report.TARGETS)
    assert met["long session overhead, round 500 / round 10"] in (True, False)
    assert [name for name, value in met.items() if value is None] == [
        t[0] for t in report.TARGETS if t[1][0] in ("scenario", "cold_start") or t[1][-1] == "cost_ratio"]
    assert results["upstream"] == "skipped (--skip-upstream)" and results["course"] is None
    assert {"date", "machine", "settings"} <= set(results)


def test_the_cache_session_measures_our_requests_against_the_most_any_agent_could_reuse(results):
    ours = results["cache"]["ours"]
    assert ours["ok"] and ours["requests"] == results["cache"]["rounds"] == 40
    assert ours["prefix_reuse"] == ours["ceiling"] and ours["kept"] == 1.0  # every request extends the last
    assert 0 < ours["cost_vs_uncached"] < 1 and "upstream" not in results["cache"]
    assert ours["extends"] == 1.0 and ours["compactions"] == {}


def test_the_compacting_session_compacts_and_counts_what_each_compaction_cost_the_cache(results):
    """45 rounds of 3 KB reads in a 12,000-token window: ours compacts, and a summary asked for
    takes no turn of the script (the server answers it aside), so every round is played."""
    session = results["compacting"]
    ours = session["ours"]
    assert ours["ok"] and ours["requests"] == session["rounds"] == 45 and session["window"] == 12_000
    assert ours["summaries"] == ours["compactions"].get("summarize", 0) + ours["compactions"].get("reset", 0)
    assert ours["summaries"] >= 1 and 0 < ours["extends"] < 1 and ours["largest_vs_window"] <= 1
    assert 0 < ours["cost_vs_uncached"] < 1 and "upstream" not in session


def test_reassembly_is_timed_at_two_sizes_against_the_least_work_and_through_the_client(results):
    r = results["reassembly"]
    assert r["bytes"] == 1_000_034 and r["fragments"] == 142_862  # {"path": ..., "content": 1 MB}
    assert positive(r["seconds"], r["seconds_small"], r["baseline_seconds"], r["client_seconds_small"])
    assert r["growth_10x"] == r["seconds"] / r["seconds_small"]
    assert r["ratio_to_baseline"] == r["seconds"] / r["baseline_seconds"]
    assert "| reassembly (142,862 fragments of 7 characters) | time |" in report.render(results)


def test_the_upstream_script_does_the_same_work_in_its_own_argument_names():
    ours, theirs = SCRIPT, upstream.translate(SCRIPT)
    assert len(theirs) == len(ours) and theirs[-1] == ours[-1]
    calls = [(c["name"], list(c["arguments"])) for t in theirs if isinstance(t, dict) for c in t.get("tool_calls", [])]
    assert calls == [("bash", ["command"]), ("grep", ["pattern", "include"]), ("read_file", ["file_path"]),
                     ("edit_file", ["file_path", "old_string", "new_string"]), ("bash", ["command"])]
    assert "path" in ours[2]["tool_calls"][0]["arguments"]  # ours untouched


def test_the_readme_quotes_the_committed_results():
    """benchmarks/README.md's figures come from benchmarks/results.json: rerunning the runner
    without updating the README (or the other way round) fails here."""
    root = Path(__file__).resolve().parent.parent / "benchmarks"
    results = json.loads((root / "results.json").read_text(encoding="utf-8"))
    readme = (root / "README.md").read_text(encoding="utf-8")
    scenario, session = results["scenario"], results["long_session"]
    quoted = [f"{scenario['ours']['median']['bytes_sent']:,} B", f"{scenario['upstream']['median']['bytes_sent']:,} B",
              f"{sum(session['compactions'].values())} times ({session['compactions']['trim']} trims, "
              f"{session['compactions']['summarize']} summaries)", f"ends with {session['history_at_end']} messages",
              f"| round 500 | {session['overhead_ms']['500']:.3f} ms |"]
    assert [q for q in quoted if q not in readme] == []


def test_the_suite_table_sorts_each_test_into_its_family_and_rewrites_only_its_section(tmp_path):
    from benchmarks import suite

    report = tmp_path / "report.xml"
    report.write_text(
        '<testsuites><testsuite>'
        '<testcase classname="tests.course.test_site" name="test_pages" time="30"/>'
        '<testcase classname="notebooks.01-loop.ipynb" name="Cell 3" time="5"/>'
        '<testcase classname="tests.reliability.test_round_faults" name="test_a" time="10"/>'
        '<testcase classname="tests.command.test_cli" name="test_b" time="4"/>'
        '<testcase classname="tests.engine.test_loop" name="test_c" time="1"/>'
        '</testsuite></testsuites>', encoding="utf-8")
    text = suite.table(suite.cases(report), wall=20.4)
    assert "Wall time of the run: 20 s" in text
    assert "| browser: the site and JupyterLab | 1 | 30 | 60% |" in text
    assert "| notebooks under strict nbval | 1 | 5 | 10% |" in text
    assert "| reliability | 1 | 10 | 20% |" in text and "| the command | 1 | 4 | 8% |" in text
    assert "| engine | 1 | 1 | 2% |" in text and "| **all** | **5** | **50** | |" in text
    assert text.index("tests/course/test_site.py::test_pages") < text.index("tests/engine/test_loop.py::test_c")
    readme = tmp_path / "README.md"
    readme.write_text(f"before\n{suite.BEGIN}\nold\n{suite.END}\nafter\n", encoding="utf-8")
    suite.write(text, readme)
    assert readme.read_text(encoding="utf-8") == f"before\n{suite.BEGIN}\n{text}\n{suite.END}\nafter\n"


def test_the_suite_and_every_process_it_starts_keep_their_bytecode():
    # tests/conftest.py undoes a PYTHONDONTWRITEBYTECODE of the machine's: with it, each of the
    # run's interpreters compiled the engine, the course and the tests anew (17% of its time)
    assert "PYTHONDONTWRITEBYTECODE" not in os.environ and sys.dont_write_bytecode is False
    child = subprocess.run([sys.executable, "-c", "import sys; print(sys.dont_write_bytecode)"],
                           capture_output=True, text=True, check=True)
    assert child.stdout.strip() == "False"
