"""A corpus of malformed tool calls, each run through a real Agent in a fresh project.

The corpus is generated from the tools' own schemas (so a new tool or argument gets its cases
without anyone writing them): per tool, each required argument missing, each argument of each wrong
JSON type, extra arguments, invalid JSON text and JSON that is not an object; then the cases a schema
can't see: empty strings, 1 MB arguments, paths through symlinks (to files, to dirs, dangling, loops),
directories where files are expected and files where directories are, binary and non-UTF-8 files,
missing paths; and tool names that don't exist.

Every case, sent by a ScriptedLLM as the model's only call of its first turn, must get:

    a clear error: "bad arguments for TOOL: ...", "TOOL failed: ...", or "unknown tool ...";
    a result short enough to be re-sent every turn (at most the runner's output limit, plus its marker);
    no change to any file, directory or link in the project (hashed before and after);
    and then the next turn proceeds: the run ends with the model's answer, the history legal.

Empty strings and symlinks that make a *valid* call (`new_string: ""` deletes text, `content: ""`
empties a file, `include: ""` filters nothing, writing through a link writes its target) are not
malformed, so they are not in the corpus.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from corecoder import ScriptedLLM, build_agent, check_history
from corecoder.calls import OUTPUT_LIMIT
from corecoder.demo import PROJECT
from helpers import fingerprint

pytestmark = pytest.mark.row("corpus")

MB = 1 << 20

LIMIT_WITH_MARKER = OUTPUT_LIMIT + 200


def make_project(root: Path) -> Path:
    """The demo project, plus one of everything a path argument can meet."""
    root.mkdir()
    for name in ("stats.py", "test_stats.py"):
        (root / name).write_bytes((PROJECT / name).read_bytes())
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("VERSION = 1\n")
    (root / "blob.bin").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    (root / "latin1.txt").write_bytes("café crème\n".encode("latin-1"))
    (root / "link-to-file").symlink_to("stats.py")
    (root / "link-to-dir").symlink_to("pkg")
    (root / "dangling").symlink_to("nowhere.txt")
    (root / "loop-a").symlink_to("loop-b")
    (root / "loop-b").symlink_to("loop-a")
    return root


# What each tool is called with when nothing is wrong: every argument present, each acting on the
# project, so that a malformed variant that slipped through would show as a change.
VALID = {
    "read_file": {"path": "stats.py", "offset": 1, "limit": 10},
    "write_file": {"path": "stats.py", "content": "overwritten\n"},
    "edit_file": {"path": "stats.py", "old_string": "(len(values) - 1)", "new_string": "len(values)",
                  "replace_all": False},
    "glob": {"pattern": "*.py", "path": "."},
    "grep": {"pattern": "def mean", "path": ".", "include": "*.py"},
    "bash": {"command": "echo ran > ran.txt", "timeout": 5},
    "todo_write": {"todos": [{"content": "fix mean", "status": "in_progress"}]},
    "agent": {"tasks": [{"name": "scout", "task": "say hi"}]},
}
SAMPLES = {  # one value of each JSON type
    "string": "x", "integer": 7, "boolean": True, "null": None, "array": ["x"], "object": {"x": 1},
}


@dataclass(frozen=True)
class Case:
    tool: str
    arguments: str  # the raw JSON text the model sent
    what: str


def call(tool: str, args, what: str) -> Case:
    return Case(tool, args if isinstance(args, str) else json.dumps(args), what)


def schema_cases(tool: str, schema: dict, value, where: str = "") -> list[Case]:
    """Cases any schema implies, at every level of nesting: missing, mistyped, extra, out of range."""
    top = VALID[tool]
    cases = []

    def put(new) -> dict:  # `top` with the value at `where` replaced
        if not where:
            return new
        copy = node = json.loads(json.dumps(top))
        *parents, last = [int(key) if key.isdigit() else key for key in where.split(".")]
        for key in parents:
            node = node[key]
        node[last] = new
        return copy

    label = where or "arguments"
    kind = schema.get("type")
    if kind == "object":
        for name in schema.get("required", []):
            cases.append(call(tool, put({k: v for k, v in value.items() if k != name}), f"{label}: no {name}"))
        if schema.get("additionalProperties") is False:
            cases.append(call(tool, put({**value, "unexpected": 1}), f"{label}: an extra argument"))
        for name, sub in schema.get("properties", {}).items():
            if name not in value:
                continue
            path = f"{where}.{name}" if where else name
            for type_name, sample in SAMPLES.items():
                if type_name != sub.get("type"):
                    cases.append(call(tool, put({**value, name: sample}), f"{path} as {type_name}"))
            cases += schema_cases(tool, sub, value[name], path)
    elif kind == "array" and value:
        cases += schema_cases(tool, schema.get("items", {}), value[0], f"{where}.0")
        if "minItems" in schema:
            cases.append(call(tool, put([]), f"{label}: fewer than {schema['minItems']} items"))
        if "maxItems" in schema:
            cases.append(call(tool, put(value * (schema["maxItems"] + 1)), f"{label}: over {schema['maxItems']} items"))
    elif kind == "integer":
        cases.append(call(tool, put(1.5), f"{label} as a fraction"))
        cases.append(call(tool, put(str(value)), f"{label} as a numeric string"))
        if "minimum" in schema:
            cases.append(call(tool, put(schema["minimum"] - 1), f"{label} below its minimum"))
        if "maximum" in schema:
            cases.append(call(tool, put(schema["maximum"] + 1), f"{label} above its maximum"))
    if "enum" in schema:
        cases.append(call(tool, put("not-" + str(value)), f"{label} not one of {schema['enum']}"))
    return cases


def text_cases(tool: str) -> list[Case]:
    """Arguments that are not a JSON object at all, as models really send them."""
    valid = json.dumps(VALID[tool])
    return [
        call(tool, valid[:-1], "JSON cut short"),
        call(tool, valid.replace('"', "'"), "single quotes"),
        call(tool, valid + " and then some", "text after the JSON"),
        call(tool, valid + valid, "two objects back to back"),
        call(tool, "{" + valid[1:].replace('"', "", 2), "an unquoted key"),
        call(tool, "null", "null"),
        call(tool, "[]", "an empty array"),
        call(tool, json.dumps(list(VALID[tool].values())), "the values as an array"),
        call(tool, json.dumps(valid), "the object encoded twice, as a JSON string"),
        call(tool, "42", "a number"),
        call(tool, "true", "a boolean"),
        call(tool, valid[:-1] + ', "padding": "' + "x" * MB + '"', "1 MB of JSON cut short"),
        call(tool, {**VALID[tool], "padding": "x" * MB}, "1 MB in an extra argument"),
    ]


def path_cases() -> list[Case]:
    """Paths that lead nowhere a tool can use."""
    big, deep = "d" * MB, "d/" * 5_000
    cases = []
    for tool in ("read_file", "edit_file"):
        for path, what in (("pkg", "a directory"), ("link-to-dir", "a link to a directory"),
                           ("dangling", "a dangling link"), ("loop-a", "a symlink loop"),
                           ("nope.py", "a missing file"), ("pkg/nope/deeper.py", "a missing directory"),
                           ("stats.py/inner.py", "a file used as a directory"), ("blob.bin", "a binary file"),
                           ("", "an empty path"), (big, "a 1 MB path"), (deep, "5,000 levels deep"),
                           ("st\x00ats.py", "a NUL byte")):
            cases.append(call(tool, {**VALID[tool], "path": path}, f"path: {what}"))
    cases.append(call("edit_file", {**VALID["edit_file"], "path": "latin1.txt", "old_string": "caf",
                                    "new_string": "CAF"}, "path: a file that is not UTF-8"))
    for path, what in (("pkg", "a directory"), ("pkg/", "a path ending in /"), ("link-to-dir", "a link to a directory"),
                       ("loop-a", "a symlink loop"), ("stats.py/inner.py", "a file used as a directory"),
                       ("", "an empty path"), (big, "a 1 MB path"), ("st\x00ats.py", "a NUL byte")):
        cases.append(call("write_file", {**VALID["write_file"], "path": path}, f"path: {what}"))
    for tool in ("glob", "grep"):
        for path, what in (("dangling", "a dangling link"), ("loop-a", "a symlink loop"), ("nope", "a missing dir"),
                           (big, "a 1 MB path"), ("st\x00ats.py", "a NUL byte")):
            cases.append(call(tool, {**VALID[tool], "path": path}, f"path: {what}"))
    for path, what in (("stats.py", "a file"), ("link-to-file", "a link to a file")):
        cases.append(call("glob", {**VALID["glob"], "path": path}, f"path: {what} where a directory is expected"))
    return cases


def content_cases() -> list[Case]:
    """Arguments of the right type that still make no sense."""
    edit = VALID["edit_file"]
    return [
        call("read_file", {"path": "stats.py", "offset": 999}, "offset: past the end"),
        call("edit_file", {**edit, "old_string": ""}, "old_string: empty"),
        call("edit_file", {**edit, "old_string": " \n\t "}, "old_string: whitespace only"),
        call("edit_file", {**edit, "new_string": edit["old_string"]}, "old_string equal to new_string"),
        call("edit_file", {**edit, "old_string": "not in the file"}, "old_string: not in the file"),
        call("edit_file", {**edit, "old_string": "values"}, "old_string: in several places"),
        call("edit_file", {**edit, "path": "link-to-file", "old_string": "nowhere"},
             "old_string: not in the file a link points to"),
        call("edit_file", {**edit, "old_string": "y" * MB}, "old_string: 1 MB, not in the file"),
        call("edit_file", {**edit, "old_string": "\x00" * 3}, "old_string: NUL bytes"),
        call("glob", {**VALID["glob"], "pattern": ""}, "pattern: empty"),
        call("glob", {**VALID["glob"], "pattern": "z/" * (MB // 2) + "*.py"}, "pattern: 1 MB deep"),
        call("grep", {**VALID["grep"], "pattern": ""}, "pattern: empty"),
        call("grep", {**VALID["grep"], "pattern": "(unclosed"}, "pattern: invalid regex"),
        call("grep", {**VALID["grep"], "pattern": "[z-a]"}, "pattern: a reversed range"),
        call("grep", {**VALID["grep"], "pattern": "(" * MB}, "pattern: 1 MB invalid regex"),
        call("bash", {**VALID["bash"], "command": ""}, "command: empty"),
        call("bash", {**VALID["bash"], "command": "  \n "}, "command: whitespace only"),
        call("bash", {**VALID["bash"], "command": "echo ran > ran.txt #" + "x" * MB}, "command: 1 MB"),
        call("bash", {**VALID["bash"], "command": "rm -rf / "}, "command: on the blocklist"),
        call("todo_write", {"todos": [{"content": "", "status": "pending"}]}, "todos.0.content: empty"),
        call("todo_write", {"todos": [{"content": "a", "status": "in_progress"},
                                      {"content": "b", "status": "in_progress"}]}, "todos: two in progress"),
        call("agent", {}, "neither task nor tasks"),
        call("agent", {"task": "a", "tasks": [{"name": "b", "task": "c"}]}, "both task and tasks"),
        call("agent", {"tasks": [{"name": "same", "task": "a"}, {"name": "same", "task": "b"}]},
             "tasks: two workers with one name"),
        call("agent", {"task": ""}, "task: empty"),
        call("agent", {"tasks": [{"name": "scout", "task": "  "}]}, "tasks.0.task: blank"),
    ]


UNKNOWN_NAMES = ["", "Read", "read-file", "readFile", "READ_FILE", "read_file ", "functions.read_file", "mcp__nope__x",
                 "write", "bash; rm -rf /", "x" * MB]


def corpus() -> list[Case]:
    tools = {t.name: t for t in build_agent(ScriptedLLM([]), tempfile.gettempdir()).tools.values()}
    assert set(tools) == set(VALID), "a tool was added or removed: give it a VALID call here"
    cases = []
    for name, tool in tools.items():
        cases += schema_cases(name, tool.parameters, VALID[name])
        cases += text_cases(name)
    cases += path_cases() + content_cases()
    cases += [call(name, VALID["read_file"], f"unknown tool {name[:40]!r}") for name in UNKNOWN_NAMES]
    return cases


CORPUS = corpus()
IDS = [f"{c.tool[:30]}: {c.what}" for c in CORPUS]

# Cases that once failed because of an engine bug, reported by this suite and since fixed; a new one
# goes here with its reason and is marked xfail(strict=True) until the engine is mended.
KNOWN_BUGS: dict[str, str] = {}
HANGS = {"bash: command: 1 MB"}  # run in a child process with a deadline, so the hang can't freeze the suite


def run_case(case: Case, root: Path) -> str:
    """The case's result. (A 1 MB call overflows the context window, and the agent compacts: the script
    has a turn to spare for the summary it then asks for.)"""
    llm = ScriptedLLM([{"tool_calls": [{"name": case.tool, "arguments": case.arguments}]}, "understood", "understood"])
    agent = build_agent(llm, root)
    assert agent.chat("go") == "understood"
    check_history(agent.messages)
    [result] = [m["content"] for m in agent.messages if m["role"] == "tool"]
    return result


CHILD = """
import json, sys
from pathlib import Path
sys.path[:0] = json.loads(sys.argv[1])
from reliability.test_malformed_calls import Case, run_case
print(json.dumps(run_case(Case(**json.load(sys.stdin)), Path(sys.argv[2]))))
"""


def run_case_in_child(case: Case, root: Path, deadline: float = 3.0) -> str:
    here = Path(__file__).resolve()
    paths = json.dumps([str(here.parents[1]), str(here.parents[2])])  # tests/, then the repository
    try:
        done = subprocess.run([sys.executable, "-c", CHILD, paths, str(root)], capture_output=True, timeout=deadline,
                              input=json.dumps(case.__dict__).encode())
    except subprocess.TimeoutExpired:
        pytest.fail(f"no result within {deadline} s")
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    return json.loads(done.stdout)


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where clipped outputs are saved: not /tmp
    return make_project(tmp_path / "project")


@pytest.mark.cases(0)  # counts nothing: it checks the corpus itself
def test_the_corpus_has_at_least_200_distinct_cases():
    assert len(CORPUS) >= 200
    assert len(set(CORPUS)) == len(CORPUS) and len(set(IDS)) == len(IDS)
    assert set(KNOWN_BUGS) <= set(IDS) and HANGS <= set(IDS)


PARAMS = [pytest.param(case, id=name, marks=[pytest.mark.xfail(strict=True, reason=KNOWN_BUGS[name])]
                       if name in KNOWN_BUGS else []) for case, name in zip(CORPUS, IDS, strict=True)]


@pytest.mark.parametrize("case", PARAMS)
def test_a_malformed_call_gets_a_clear_error_and_changes_nothing(request, project, case):
    before = fingerprint(project)
    hangs = request.node.callspec.id in HANGS
    result = run_case_in_child(case, project) if hangs else run_case(case, project)
    assert result.startswith((f"bad arguments for {case.tool}: ", f"{case.tool} failed: ", "unknown tool ")), result
    assert len(result) <= LIMIT_WITH_MARKER
    assert fingerprint(project) == before
