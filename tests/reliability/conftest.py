"""Keeps the table: every test here counts in one row of RESULTS.md (`@pytest.mark.row(name)`, names
in ROWS below), and a full run of this folder rewrites the table at the end.

A test counts as one case, unless it says otherwise: `@pytest.mark.cases(n)` for a test that runs n
trials (it may `record_property("passed", k)` before failing, so the table shows how many survived),
and a Hypothesis test counts its max_examples. The table holds counts only (no timings, dates or
paths), so a run that changes nothing leaves the file as it was. A partial run (-k, one file, -x,
Ctrl+C) writes nothing: its counts would not be the suite's.

Under parallel workers (pytest-xdist) each worker runs a share of the tests: a test's row and cases
travel with its reports (as user properties), and only the controller, which sees every report and
the list of every test collected, writes the table.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from corecoder.files import atomic_write

HERE = Path(__file__).parent

# The rows of RESULTS.md, in order: the marker name a test carries -> (category, what was tried).
ROWS = {
    "faults": ("Provider faults at every round",
               "429 with Retry-After, 500, 529, a stream dropped midway, an error event inside the stream; "
               "streamed and non-streamed; before each round of the demo task"),
    "dialects": ("Streaming dialects at every round",
                 "every tool-call streaming quirk, on the demo task and on a variant with two calls a round"),
    "reasoning": ("Reasoning fields at every round",
                  "reasoning_content, reasoning, `<think>` tags: shown to the user, kept out of the history"),
    "bad_round": ("Malformed arguments at every round",
                  "truncated JSON, a JSON array, a wrong type, in place of each round's call"),
    "corpus": ("Malformed tool calls",
               "per tool: each required argument missing, each argument of each wrong type, extra arguments, "
               "empty strings, 1 MB arguments, symlinks (to files, to dirs, dangling, loops), directories for "
               "files and files for directories, binary and non-UTF-8 files, missing paths, invalid JSON, "
               "non-object JSON, unknown tool names"),
    "crash": ("kill -9 during a write",
              "a child writing large files through write_file and edit_file, killed at random moments"),
    "mcp": ("MCP servers that misbehave, through the agent",
            "stderr flood, banner on stdout, crash mid-call, hang; alone, combined, and beside a built-in call"),
    "sessions": ("Session ids and the sessions dir",
                 "fuzzed ids (tests/engine/test_session.py, imported), fuzzed sessions-dir entries: links out, "
                 "dangling links, directories, odd names"),
    "hostile": ("A hostile repository, through the command",
                "its hooks and MCP servers before trust (with -p, --trust-project, the REPL's question, "
                "a changed file), a .env that redirects the endpoint or moves the config dir, AGENTS.md "
                "linked to /proc/self/environ or a FIFO, an MCP server reading the environment, escape "
                "sequences in files and answers, the guard's variants of rm and force push, SIGTERM, "
                "SIGHUP and a double Ctrl+C while a command runs"),
    "inputs": ("Strange files, patterns and providers, through the command",
               "read, edit, write and grep of a FIFO, /dev/zero and a link to it; a pattern that "
               "backtracks on a line, Ctrl+C during a long search; a stream that stalls or never "
               "ends; config files nested "
               "100,000 deep or priced NaN; a file name that is not UTF-8; arguments nested 10,000 "
               "deep; a tree 1,200 deep; writes over read-only and hard-linked files; a provider "
               "sending a chunk that is not JSON, a web page, no choices, usage in strings, a "
               "context overflow in Anthropic's and Gemini's words, a reply cut at its output "
               "limit; one session resumed in two terminals, a session edited by hand; a hook "
               "vetoing in 5 MB or in Latin-1; a command redirecting its own output; MCP servers "
               "with a malformed schema, a 300 MB line, one name for two; an edit matching "
               "nothing in a million lines or for 400 retyped ones; 1 MB of arguments in "
               "7-character fragments; temp files a kill -9 left, beside look-alike files of the "
               "user's own"),
    "links": ("Links a cloned project holds",
              "its .corecoder, its outputs folder or the file an output will be kept under, each a link "
              "to a folder of the user's full of look-alike names; pruning beside the user's own "
              "files named as outputs are"),
    "instructions": ("Secrets through the project's instructions",
                     "AGENTS.md and CLAUDE.md as relative, absolute and chained links or hard links to "
                     ".git/config, .env and plain notes, in the root and in subfolders"),
    "dotenv": ("A project's .env and the user's endpoint and key",
               "every mix of endpoint and key variables in the project's .env and in the user's "
               "environment, trusted or not; a sparse 1 GB .env; through the command with -p and "
               "--trust-project"),
    "trust": ("Trust given to exactly what was shown",
              "hooks.json and mcp.json padded past the limit, an MCP server's env, the .env's "
              "routes in the fingerprint, the command started in the home folder"),
    "consent": ("What the user approves",
                "arguments past a line's width, on many lines, with escape sequences; Ctrl+C at a "
                "worker's question while its siblings wait to ask theirs"),
    "escapes": ("Escape sequences on every path to the terminal",
                "generated strings of ESC, CSI, OSC, BEL, backspace and carriage returns in a hook's "
                "stderr and command, an unknown hooks.json event, an MCP server's name and command, "
                "the .env's model name, through -p with --trust-project"),
    "guard": ("The guard's categories, as people spell them",
              "generated spellings of each category: prefixes (sudo, env, command, nohup), quoting, "
              "home spellings, separators, up to two wrappers (bash -c, sh -c, $(...), backticks, "
              "eval, subshells, if), git's own options, device names; and look-alikes that must run"),
    "undo": ("Undo and the user's own work",
             "generated interleavings of the agent's writes, edits and creates with the user's edits, "
             "deletes and re-creates; a project re-created at the same path; a folder or the file "
             "swapped for a link out; a cd into another project"),
    "turns": ("Every turn saved",
              "a Ctrl+C at each of the 34 system calls of a first save, before and after each; a turn "
              "whose last write a Ctrl+C skipped; the summary request of a 40 MB resumed session"),
    "bounds": ("Bounds where the last round missed them",
               "100,000 parallel calls checked, run, saved and resumed; 200,000 messages resumed; a "
               "session damaged midway; braces past the bound; glob past entries it cannot stat or "
               "list; grep stopped inside a file and by a real Ctrl+C; replace_all 300,000 times in "
               "6.5 MB; a 2 MB write_file in a 32k window; a reply kept alive or trickled"),
    "huge": ("Files too big to read at once",
             "a log of 100 MB read at its first and last lines, a minified line of 100 MB, in "
             "bounded memory; a full window before a line of 100 MB; edit_file on a file past "
             "the limit"),
    "paths": ("Paths the system refuses, in words",
              "generated paths under a file, under a missing directory, through or under a "
              "symlink to nothing, with a name past 255 bytes, a FIFO, a device, each through "
              "read, write, edit, glob and grep; every errno the words cover, said with its path"),
}
RESULTS = HERE / "RESULTS.md"


class _Tally:
    def __init__(self):
        self.collected: list[str] = []  # the nodeids of this folder's tests, in collection order
        self.items: dict[str, tuple[str, int]] = {}  # nodeid -> (row, cases), as reports say
        self.names: dict[str, str] = {}  # nodeid -> its name relative to this folder
        self.outcome: dict[str, str] = {}  # nodeid -> passed, failed, skipped, xfailed
        self.passed: dict[str, int] = {}  # nodeid -> cases that survived, when the test said
        self.reason: dict[str, str] = {}  # nodeid -> why it is xfail
        self.partial = False


_tally = _Tally()
ROW, CASES = "reliability row", "reliability cases"  # the user properties a report carries


def pytest_configure(config):
    config.addinivalue_line("markers", "row(name): the row of tests/reliability/RESULTS.md this test counts in")
    config.addinivalue_line("markers", "cases(n): this test runs n trials (default 1)")


def _mine(item) -> bool:
    return HERE in item.path.parents


def _cases(item) -> int:
    marker = item.get_closest_marker("cases")
    if marker:
        return marker.args[0]
    settings = getattr(getattr(item, "obj", None), "_hypothesis_internal_use_settings", None)
    return settings.max_examples if settings is not None else 1


def _is_ours(nodeid: str) -> bool:
    return "tests/reliability/test_" in nodeid


def _the_whole_folder(nodeids: list[str]) -> bool:
    modules = {nodeid.split("::", 1)[0].rsplit("/", 1)[-1] for nodeid in nodeids}
    return modules == {p.name for p in HERE.glob("test_*.py")}


def pytest_deselected(items):
    if any(_mine(item) for item in items):
        _tally.partial = True


def pytest_collection_finish(session):
    mine = [item for item in session.items if _mine(item)]
    for item in mine:
        marker = item.get_closest_marker("row")
        if marker is None or marker.args[0] not in ROWS:
            raise pytest.UsageError(f"{item.nodeid}: a reliability test needs @pytest.mark.row(one of {list(ROWS)})")
        item.user_properties += [(ROW, marker.args[0]), (CASES, _cases(item))]
    _tally.collected = [item.nodeid for item in mine]
    _tally.partial |= not _the_whole_folder(_tally.collected)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node, ids):
    """The controller of parallel workers collects nothing itself: each worker tells it what it
    collected (all the same list), after any -k or -m; those options make the run partial."""
    options = node.config.option
    _tally.collected = [nodeid for nodeid in ids if _is_ours(nodeid)]
    _tally.partial |= bool(options.keyword or options.markexpr or options.deselect)
    _tally.partial |= not _the_whole_folder(_tally.collected)


def pytest_runtest_logreport(report):
    properties = dict(report.user_properties)
    if ROW not in properties:
        return
    _tally.items[report.nodeid] = (properties[ROW], properties[CASES])
    _tally.names[report.nodeid] = report.nodeid.split("reliability/", 1)[-1].split("@")[0]
    if "passed" in properties:
        _tally.passed[report.nodeid] = properties["passed"]
    if hasattr(report, "wasxfail"):
        _tally.outcome[report.nodeid] = "xfailed"
        _tally.reason[report.nodeid] = report.wasxfail.removeprefix("reason: ")
    elif report.failed:
        _tally.outcome[report.nodeid] = "failed"
    elif report.skipped:
        _tally.outcome[report.nodeid] = "skipped"
    elif report.when == "call":
        _tally.outcome.setdefault(report.nodeid, "passed")


def pytest_sessionfinish(session, exitstatus):
    if hasattr(session.config, "workerinput"):  # a worker: the controller writes the table
        return
    complete = _tally.collected and set(_tally.outcome) == set(_tally.collected)
    if _tally.partial or not complete or session.config.option.collectonly:
        return
    if exitstatus == pytest.ExitCode.INTERRUPTED or session.shouldstop:
        return
    _tally.items = {nodeid: _tally.items[nodeid] for nodeid in _tally.collected}  # collection order
    table = render(_tally)
    if not RESULTS.exists():
        RESULTS.write_text(table, encoding="utf-8")
    elif RESULTS.read_text(encoding="utf-8") != table:
        atomic_write(RESULTS, table)  # other runs may read it meanwhile: never half a file


def render(tally: _Tally) -> str:
    rows = {name: [0, 0, 0, 0] for name in ROWS}  # cases, passed, known bugs, failed
    for nodeid, (row, cases) in tally.items.items():
        outcome = tally.outcome[nodeid]
        passed = cases if outcome == "passed" else min(tally.passed.get(nodeid, 0), cases)
        counts = rows[row]
        counts[0] += cases
        counts[1] += passed
        counts[2] += cases if outcome == "xfailed" else 0
        counts[3] += cases - passed if outcome not in ("xfailed", "skipped") else 0
    lines = [
        "# Reliability: what was tried, and what survived",
        "",
        "Written by `tests/reliability/conftest.py` at the end of every full run of `tests/reliability/`",
        "(the whole suite included); do not edit it by hand. A case is one trial: one injected fault, one",
        "malformed call, one kill, one fuzzed example. A known bug is a case that fails today and is marked",
        "`xfail(strict=True)`: the day it passes, the suite fails until the mark is removed.",
        "",
        "| Category | What was tried | Cases | Passed | Known bugs | Failed |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    total = [0, 0, 0, 0]
    for name, (category, tried) in ROWS.items():
        counts = rows[name]
        if not counts[0]:
            continue
        lines.append(f"| {category} | {tried} | " + " | ".join(str(n) for n in counts) + " |")
        total = [a + b for a, b in zip(total, counts, strict=True)]
    lines.append("| **Total** | | " + " | ".join(f"**{n}**" for n in total) + " |")
    by_reason: dict[str, list[str]] = {}
    for nodeid in tally.items:
        if tally.outcome[nodeid] == "xfailed":
            by_reason.setdefault(tally.reason[nodeid], []).append(tally.names[nodeid])
    if by_reason:
        lines += ["", "## Known engine bugs", ""]
        for reason, names in by_reason.items():
            lines.append(f"- {reason}")
            lines += [f"  - `{name}`" for name in names]
    return "\n".join(lines) + "\n"
