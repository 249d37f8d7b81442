"""Checks for the exercises of chapter 7, hooks and MCP.

    ch07.gate      a gate of your own, `ProtectPaths(root, globs)`: no file tool touches a
                   protected file, by whatever name the model gives it, plugged into a real Agent
    ch07.hook      `no_force_push()`, a PreToolUse hook, run as a program by the engine's own
                   hook runner
    ch07.classify  what a line from an MCP server's stdout is, told by its shape
    ch07.server    `word_server()`, an MCP server of the standard library's, started, listed and
                   called by the engine's own client

All four are declared exercises (kit.py). `ch07.classify`'s reference is the engine's own
`classify` (mcp/client.py), on lines drawn from everything a server may print: messages of every
shape (a method or none, an id of every JSON type or none, "jsonrpc" right, wrong or missing),
JSON that is not an object, and lines that are not JSON at all (a banner, a log line, a message
cut short, nothing). The other references are the chapter's.

`ch07.gate`: each input is a run, a real Agent in a project folder (notes.md, .env, src/.env,
secrets/key.txt, src/app.py, docs/.envrc, docs/api/deep.md, a link to .env), its built-in tools,
the answer as its one gate, and a scripted model whose reply asks for a batch of calls: reads,
writes and edits by every name a model gives a file (./, a detour through src/.., the link, the
absolute path, a path outside the project, in a folder beside it whose name starts with the
project's), glob and grep with or without a path, and bash, after a `cd src` in one run of three.
The batch runs in parallel in one run of two (chapter 5's executor: every call admitted first),
one call at a time otherwise. The gate is handed the project's root through a link, as a home
on macOS is one. The protected globs are drawn from `.env`, `secrets/*`, `*.pem`, `docs/*`. What
is compared is each call's fate (let through, refused by which gate, a gate that failed before
or after it) and the files the run changed, never the words of a refusal: those are the
answer's own.

`ch07.hook`: the answer is written out as a program and run by `Hooks` on one call: bash commands
that join one to three simple commands (pushes forced and not, in every spelling; decoys that
mention a push; other commands), an open quote, calls of other tools. Compared: vetoed or not,
with a reason of its own or the engine's stand-in, skipped with a warning.

`ch07.server`: the answer is written out as a program, started by the engine's `MCPClient`
asking for each protocol version it knows (the first request's id 0), then asked to count the
words of texts empty, of spaces, tabs and newlines, punctuation, Chinese, then a tool and a
method it does not have. Compared: how it started, its tools and the arguments they name, each
count as the model reads it (and whether the content is text parts of strings), what the unknown
tool and method got, and what the client warned of once the server's output was all read. A
stub is told as one, without running it, for each of the two programs.
"""

from __future__ import annotations

import fnmatch
import itertools
import shlex
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from corecoder.calls import Gate
from corecoder.events import ToolCallFinished
from corecoder.executor import RunInParallel
from corecoder.hooks import Hooks
from corecoder.mcp.client import KNOWN_VERSIONS, PROTOCOL_VERSION, MCPClient, MCPError, classify
from corecoder.mcp.config import ServerSpec
from corecoder.mcp.tools import render
from corecoder.tools import default_tools
from corecoder.workspace import Workspace

from ..guests import as_program
from ..kit import Exercise, Mistake
from ..seams import Seam, fate
from ..words import say

# --- ch07.classify ------------------------------------------------------------------------

_NOISE = ["notes server 1.0 ready", "", "debug: starting", "[1, 2]", '"2.0"', "42", "null",
          '{"jsonrpc": "2.0", "id": 1, "result": {', "Content-Length: 52", "{}", "true",
          '{"jsonrpc": "2.0", "id": 1}garbage']
_ABSENT = object()


def _line_inputs():
    from hypothesis import strategies as st

    value = st.sampled_from([_ABSENT, 0, 1, 7, -3, "1", "a", "", True, False, None, 1.0, 2.5,
                             [1], {"n": 1}])
    message = st.fixed_dictionaries({
        "jsonrpc": st.sampled_from([_ABSENT, "2.0", "1.0", 2.0, None]),
        "id": value,
        "method": st.sampled_from([_ABSENT, "ping", "notifications/tools/list_changed",
                                   "roots/list", "", 3]),
        "result": st.sampled_from([_ABSENT, {}, {"content": []}, None]),
        "error": st.sampled_from([_ABSENT, {"code": -32601, "message": "no"}]),
        "params": st.sampled_from([_ABSENT, {}, {"progress": 1}]),
    }).map(lambda parts: {k: v for k, v in parts.items() if v is not _ABSENT})
    import json

    line = st.one_of(message.map(json.dumps), st.sampled_from(_NOISE),
                     st.text("{}[]\":, 2.0jsonrpcid", max_size=12))
    return st.tuples(line)


_ID_LINE = ('    if isinstance(message.get("id"), (int, str)) and not isinstance(message["id"], '
            'bool):')
CLASSIFY_EXAMPLES = [(line,) for line in (
    '{"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}',
    '{"jsonrpc": "2.0", "id": 1, "method": "ping"}',
    '{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}',
    '{"jsonrpc": "2.0", "id": true, "result": {}}', '{"jsonrpc": "2.0", "id": null, "error": {}}',
    '{"id": 1, "result": {}}', "notes server 1.0 ready", "[1, 2]", "")]

CLASSIFY = Exercise(
    "ch07.classify", classify, _line_inputs, lambda args: f"classify({args[0]!r})",
    examples=CLASSIFY_EXAMPLES,
    domain=("every line a server may print: messages with a method or none, an id of every JSON "
            "type or none, \"jsonrpc\" right, wrong or missing; JSON that is not an object; "
            "lines that are not JSON at all",
            "服务器可能打印的每一种行：带或不带 method 的消息，各种 JSON 类型的 id 或者没有 id，"
            "\"jsonrpc\" 对的、错的或者没有；不是对象的 JSON；根本不是 JSON 的行"),
    rule=("return (kind, message): (\"noise\", None) for a line that is not a JSON object whose "
          "\"jsonrpc\" is \"2.0\"; else \"request\" (a method and an id), \"notification\" (a "
          "method, no id), \"answer\" (no method, an id that is a number or a string: true and "
          "false are not numbers, 1.0 is not ours), or \"neither\", with the parsed message",
          "返回 (kind, message)：如果这一行不是一个 \"jsonrpc\" 为 \"2.0\" 的 JSON 对象，返回 "
          "(\"noise\", None)；否则是 \"request\"（有 method 也有 id）、\"notification\"（有 "
          "method，没有 id）、\"answer\"（没有 method，id 是整数或字符串：true 和 false 不算"
          "数字，1.0 也不是我们发出的 id），或者 \"neither\"，连同解析出来的消息"),
    shape=("parse (a ValueError: noise); not a dict, or jsonrpc not \"2.0\": noise; \"method\" in "
           "it: request if \"id\" in it else notification; an int (not a bool) or str id: "
           "answer; else neither",
           "先解析（ValueError 就是 noise）；不是 dict，或者 jsonrpc 不是 \"2.0\"：noise；里面有 "
           "\"method\"：有 \"id\" 就是 request，否则是 notification；id 是 int（不是 bool）或 "
           "str：answer；其余是 neither"),
    mistakes=[
        Mistake('    if "method" in message:',
                '    if "method" in message and "id" not in message:', (
            "a server's own request may carry the id of a call we wait on: it has a method, an "
            "answer has none. Tell them apart by the method first, never by the id alone",
            "服务器自己发来的请求，id 可能正好和我们在等的某个调用一样：请求有 method，回答没有。"
            "先看有没有 method，不能只凭 id 判断")),
        Mistake('        return ("request" if "id" in message else "notification"), message',
                '        return "notification", message', (
                    "a method with an id is a request: the server waits for our answer (ping, "
                    "roots/list), and one left unanswered hangs it",
                    "带 id 的 method 是一个请求：服务器在等我们的回答（ping、roots/list），不回答，"
                    "它就卡住了")),
        Mistake(_ID_LINE,
                '    if isinstance(message.get("id"), (int, str)):', (
                    "JSON's true is Python's True, and True == 1: {\"id\": true} would take the "
                    "answer meant for our request 1. A bool is not an id",
                    "JSON 的 true 就是 Python 的 True，而 True == 1：{\"id\": true} 会抢走本该给"
                    "请求 1 的回答。bool 不是 id")),
        Mistake(_ID_LINE,
                '    if "id" in message:', (
                    "an id we sent is a number or a string: null (a server's error about a line "
                    "it could not read), 1.0, a list are no answer to anything of ours",
                    "我们发出的 id 是整数或字符串：null（服务器报告它读不懂某一行时用的）、1.0、"
                    "列表，都不是对我们任何请求的回答")),
        Mistake('    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":',
                '    if not isinstance(message, dict):', (
                    "only a JSON-RPC 2.0 message is one: an object without \"jsonrpc\": \"2.0\" "
                    "is a server's noise on stdout, skipped like a banner",
                    "只有 JSON-RPC 2.0 消息才算消息：没有 \"jsonrpc\": \"2.0\" 的对象，是服务器"
                    "在 stdout 上的噪声，和横幅一样跳过")),
    ],
)


# --- ch07.gate ------------------------------------------------------------------------------

class ProtectPaths(Gate):
    """Refuse a call whose `path` names a protected file, by whatever name: the path resolved
    (`..` and links followed) from the working directory, then matched, relative to the
    project's root, against each glob."""

    name = "protect"

    def __init__(self, root, globs):
        self.root, self.globs = Path(root).resolve(), list(globs)

    def before(self, tool, args, workspace):
        path = args.get("path")
        if not isinstance(path, str):
            return None  # bash, a search of the whole folder: no path to judge
        target = Path(workspace.cwd, path).resolve()
        if not target.is_relative_to(self.root):
            return None  # outside the project: chapter 8's guard has its say there
        relative = target.relative_to(self.root).as_posix()
        for glob in self.globs:
            if fnmatch.fnmatchcase(relative, glob):
                return f"{path} is protected ({glob})"
        return None


PROJECT = {"notes.md": "# notes\n", ".env": "KEY=secret\n", "secrets/key.txt": "k\n",
           "src/app.py": "print('app')\n", "src/.env": "DEBUG=1\n", "docs/.envrc": "use nix\n",
           "docs/guide.md": "hi\n", "docs/api/deep.md": "deep\n", "ca.pem": "cert\n"}
GLOBS = [".env", "secrets/*", "*.pem", "docs/*"]
# A path as the model names it; "<root>" is the project, "<beside>" a folder next to it
NAMES = ["notes.md", ".env", "./.env", "src/../.env", "env.link", "<root>/.env", "secrets/key.txt",
         "secrets/../secrets/key.txt", "docs/.envrc", "docs/guide.md", "ca.pem", "src/app.py",
         "<beside>/x.txt", ".env.example", "new.pem", "src/.env", "docs/api/deep.md"]


@dataclass(frozen=True)
class Batch:
    """One run: the globs the gate protects, the calls of the model's one batch (tool, path),
    whether they run in parallel, and whether a `cd src` came first."""

    globs: tuple[str, ...]
    calls: tuple[tuple[str, str | None], ...]
    parallel: bool
    in_src: bool

    def sent(self, path: str | None) -> str | None:
        """The path as the model sends it: after `cd src`, a path of the project's from there."""
        return "../" + path if self.in_src and path and not path.startswith("<") else path

    def shown(self) -> list[str]:
        return [f"{tool}({self.sent(path) or ''})" for tool, path in self.calls]

    def __repr__(self) -> str:
        how = say("in parallel", "并行") if self.parallel else say("one at a time", "逐个")
        cd = say("after `cd src`, ", "先 `cd src`，然后 ") if self.in_src else ""
        return f"{cd}{how}: {', '.join(self.shown())}"


def _gate_inputs():
    from hypothesis import strategies as st

    call = st.one_of(
        st.tuples(st.sampled_from(["read_file", "write_file", "edit_file"]),
                  st.sampled_from(NAMES)),
        st.tuples(st.sampled_from(["glob", "grep"]), st.sampled_from([None, "secrets", "docs"])),
        st.tuples(st.just("bash"), st.just(None)))
    batch = st.builds(Batch, st.lists(st.sampled_from(GLOBS), min_size=1, max_size=3, unique=True)
                      .map(tuple), st.lists(call, min_size=1, max_size=4).map(tuple),
                      st.booleans(), st.booleans())
    return st.tuples(batch)


def _arguments(tool: str, path: str | None, root: Path, beside: Path) -> dict:
    if path is not None:
        path = path.replace("<root>", str(root)).replace("<beside>", str(beside))
    if tool == "read_file":
        return {"path": path}
    if tool == "write_file":
        return {"path": path, "content": "changed\n"}
    if tool == "edit_file":
        return {"path": path, "old_string": "e", "new_string": "E", "replace_all": True}
    if tool in ("glob", "grep"):
        return {"pattern": "*" if tool == "glob" else "e", **({"path": path} if path else {})}
    return {"command": "ls"}


@dataclass(frozen=True)
class Fates:
    """What came of a run: each call's fate (ok, or the status it ended with, and whether the
    gate refused it or failed), and the files it changed."""

    fates: tuple[str, ...]
    changed: tuple[str, ...]
    ended: str = ""


def _gated(answer, batch: Batch) -> Fates:
    with Seam(PROJECT, {}) as seam:
        # beside the project, a folder whose name starts with the project's: outside it still
        root, beside = seam.roots[0], seam.roots[0].with_name(seam.roots[0].name + "-beside")
        beside.mkdir()
        (root / "env.link").symlink_to(".env")
        # the root handed to the gate is a link to the project (a home on macOS is one): a
        # gate that does not resolve it sees no path inside it
        (seam.roots[1] / "project").symlink_to(root)
        before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
        gate = answer(seam.roots[1] / "project", list(batch.globs))
        calls = [{"name": tool, "arguments": _arguments(tool, batch.sent(path), root, beside)}
                 for tool, path in batch.calls]
        cd = [{"tool_calls": [{"name": "bash", "arguments": {"command": "cd src"}}]}]
        script = cd * batch.in_src + ([{"tool_calls": calls}] if batch.parallel
                                      else [{"tool_calls": [c]} for c in calls])
        seams = {"executor": RunInParallel()} if batch.parallel else {}
        agent = seam.agent([*script, "done"], default_tools(), cwd=root, gates=[gate], **seams)
        agent.chat("go")
        ended = {e.call.id: fate(e.result) for e in seam.events
                 if isinstance(e, ToolCallFinished)}
        asked = [c["id"] for m in agent.messages if m["role"] == "assistant"
                 for c in m.get("tool_calls") or []]
        changed = sorted(p.relative_to(root).as_posix() for p in root.rglob("*")
                         if p.is_file() and not p.is_symlink() and before.get(p) != p.read_bytes())
        changed += sorted(f"<beside>/{p.name}" for p in beside.iterdir())
        shown = ["bash(cd src)"] * batch.in_src + batch.shown()
        fates = [f"{call}: {ended.get(i, '?')}" for call, i in zip(shown, asked, strict=False)]
        return Fates(tuple(fates), tuple(changed),
                     "; ".join(seam.notes()))


def _shown_fates(fates: Fates) -> str:
    calls = "; ".join(fates.fates)
    changed = ", ".join(fates.changed) or say("none", "没有")
    return (say(f"{calls}; files changed: {changed}", f"{calls}；改动的文件：{changed}")
            + (f"; {fates.ended}" if fates.ended else ""))


def _gate_call(args) -> str:
    return (f"ProtectPaths(<the project>, {list(args[0].globs)}) "
            + say("as the only gate of a real Agent in the project, ",
                  "作为项目里一个真实 Agent 唯一的关卡，") + repr(args[0]))



GATE_EXAMPLES = [(Batch(globs, calls, parallel, in_src),) for globs, calls, parallel, in_src in (
    ((".env",), (("read_file", ".env"), ("write_file", "notes.md"), ("bash", None)), False, False),
    ((".env", "secrets/*"), (("write_file", "src/../.env"), ("edit_file", "env.link"),
                             ("read_file", "secrets/key.txt"), ("glob", "secrets")), True, False),
    ((".env", "docs/*"), (("read_file", "<root>/.env"), ("edit_file", "docs/.envrc"),
                          ("write_file", ".env.example")), False, True),
    (("*.pem",), (("write_file", "new.pem"), ("write_file", "<beside>/x.txt"),
                  ("grep", None)), True, True),
    ((".env", "docs/*"), (("read_file", "src/.env"), ("edit_file", "docs/api/deep.md")), False,
     False))]

GATE = Exercise(
    "ch07.gate", ProtectPaths, _gate_inputs, _gate_call, run=_gated, show=_shown_fates,
    examples=GATE_EXAMPLES, max_examples=30,
    equivalent={"return None → pass": "a function that ends without return returns None"},
    domain=("runs of a real Agent, its built-in tools, your gate its only one: reads, writes and "
            "edits by every name of a file (./, src/.., a link, the absolute path, a path "
            "outside the project), glob and grep with and without a path, bash; one call at a "
            "time or a batch in parallel; before and after a `cd src`",
            "一个真实 Agent 的运行，内置工具，你的关卡是唯一的关卡：用一个文件的各种名字"
            "读、写、编辑（./、src/..、链接、绝对路径、项目外的路径），带或不带 path 的 glob 和 "
            "grep，bash；逐个调用或者一批并行；`cd src` 之前和之后"),
    rule=("a gate named \"protect\" (the model reads \"refused by protect\"): refuse (return "
          "a reason) a call whose \"path\" argument names a file of the project "
          "that a glob matches: the path taken from the working directory, .. and links "
          "resolved, then made relative to the project's root and matched with "
          "fnmatch.fnmatchcase. Let through a call with no path, or one outside the project",
          "一个名叫 \"protect\" 的关卡（模型读到的是 \"refused by protect\"）：如果一个调用的 "
          "\"path\" 参数指向项目里某个被 glob 匹配的文件，就拒绝它（返回理由）："
          "路径从工作目录算起，解析掉 .. 和链接，再换成相对项目根目录的路径，用 "
          "fnmatch.fnmatchcase 匹配。没有 path 的调用、项目外的路径，都放行"),
    shape=("path = args.get(\"path\"); not a str: None; target = Path(workspace.cwd, path)"
           ".resolve(); outside self.root: None; relative = target.relative_to(self.root)"
           ".as_posix(); the first glob that matches: return a reason naming it",
           "path = args.get(\"path\")；不是 str 就返回 None；target = Path(workspace.cwd, path)"
           ".resolve()；不在 self.root 里面就返回 None；relative = target.relative_to("
           "self.root).as_posix()；第一个匹配上的 glob：返回一个说出它的理由"),
    mistakes=[
        Mistake('        path = args.get("path")', '        path = args["path"]', (
            "bash, and a search of the whole folder, have no \"path\": a gate that raises "
            "refuses the call (the engine fails closed), so every bash call was refused. Use "
            "args.get(\"path\")",
            "bash，还有搜索整个目录的调用，都没有 \"path\"：关卡一抛异常，引擎就拒绝这个调用"
            "（出错时宁可不放行），所以每个 bash 调用都被拒了。用 args.get(\"path\")")),
        Mistake("        target = Path(workspace.cwd, path).resolve()",
                "        target = Path(workspace.cwd, path)", (
                    "src/../.env and a link to .env name .env too: resolve() the path (.. and "
                    "links) before matching, or the model walks around the glob",
                    "src/../.env 和指向 .env 的链接，说的也是 .env：匹配之前先 resolve()（解析 "
                    ".. 和链接），不然模型换个名字就绕过了 glob")),
        Mistake("        target = Path(workspace.cwd, path).resolve()",
                "        target = Path(self.root, path).resolve()", (
                    "a relative path is relative to the working directory, which `cd` moves: "
                    "after `cd src`, ../.env is the project's .env",
                    "相对路径是相对工作目录的，而 `cd` 会移动工作目录：`cd src` 之后，../.env "
                    "就是项目的 .env")),
        Mistake("            if fnmatch.fnmatchcase(relative, glob):",
                "            if glob in relative:", (
                    "a glob is a pattern, not a piece of text: \".env\" is in \"docs/.envrc\", "
                    "and \"secrets/*\" in no path at all. Match with fnmatch.fnmatchcase",
                    "glob 是模式，不是一段文字：\".env\" 包含在 \"docs/.envrc\" 里，而 "
                    "\"secrets/*\" 哪个路径里都找不到。用 fnmatch.fnmatchcase 匹配")),
        Mistake("            if fnmatch.fnmatchcase(relative, glob):",
                "            if fnmatch.fnmatchcase(target.name, glob):", (
                    "match the path from the project's root, not the file's name alone: "
                    "\"secrets/*\" protects secrets/key.txt, which is named key.txt",
                    "要用从项目根目录算起的路径去匹配，不能只看文件名：\"secrets/*\" 保护的是 "
                    "secrets/key.txt，它的文件名只是 key.txt")),
    ],
)


# --- ch07.hook ------------------------------------------------------------------------------

def no_force_push():
    """A PreToolUse hook, run as a program: veto a bash command that force-pushes with git."""
    import json
    import shlex
    import sys

    call = json.load(sys.stdin)
    if call["tool_name"] != "bash":
        return  # exit 0: not ours to judge
    # one simple command a line, as bash runs them; && || ; | & ( ) split them too
    lexer = shlex.shlex(call["tool_input"]["command"].replace("\n", ";"), posix=True,
                        punctuation_chars=True)
    try:
        words = list(lexer)
    except ValueError:  # an open quote: what would run cannot be told, so it does not run
        print("cannot split this command (an open quote?); write it again", file=sys.stderr)
        sys.exit(2)
    command = []
    for word in [*words, ";"]:
        if word not in ("&&", "||", ";", "|", "&", "(", ")"):
            command.append(word)
            continue
        if command[:2] == ["git", "push"] and any(
                w == "--force" or w.startswith("+") or w[:1] == "-" and w[1:2] != "-" and "f" in w
                for w in command[2:]):
            print("a force push rewrites history others may have pulled; push without it, or "
                  "use --force-with-lease", file=sys.stderr)
            sys.exit(2)  # the veto: stderr is the reason the model reads
        command = []


_FIRST = ["ls", "echo hi", "cd src", "tail -f log", "git status", "git add -A",
          'git commit -m "git push --force"', "echo git push -f", "git pull --force",
          "git fetch -f", "rm -rf build"]
_PUSHES = ["git push", "git push origin main", "git push -f", "git push --force origin main",
           "git push origin +main", "git push -uf origin main", "git push --force-with-lease",
           "git  push   --force", "git push -u origin main", "git push --follow-tags",
           "git push --force-with-lease --force-if-includes", "git push -n -f", "git push -fu",
           "git push origin main:main", "git push --no-verify", "git push origin feature/fix",
           "git push -u origin fix"]
_SEPARATORS = ["; ", " && ", " || ", " | ", "\n", "&&", ";", " & "]
_OTHERS = [("read_file", {"path": ".env"}), ("write_file", {"path": "push.sh",
                                                            "content": "git push -f\n"}),
           ("grep", {"pattern": "git push --force"})]


def _hook_inputs():
    from hypothesis import strategies as st

    part = st.sampled_from(_FIRST + _PUSHES)
    command = st.one_of(
        part, st.builds(lambda a, s, b: a + s + b, part, st.sampled_from(_SEPARATORS), part),
        st.builds(lambda a, s, b, t, c: a + s + b + t + c, part, st.sampled_from(_SEPARATORS),
                  part, st.sampled_from(_SEPARATORS), part),
        st.sampled_from(['echo "open', "(git push -f)", "git push 'origin' '+main'",
                         "git push -f # shout"]))
    return st.one_of(command.map(lambda c: ("bash", {"command": c})), st.sampled_from(_OTHERS))


HOOK_EXAMPLES = [(tool, args) for tool, args in (
    ("bash", {"command": "git push --force origin main"}), ("bash", {"command": "git push"}),
    ("bash", {"command": "git add -A && git push -uf origin main"}),
    ("bash", {"command": "git push --force-with-lease"}),
    ("bash", {"command": 'git commit -m "git push --force"'}),
    ("bash", {"command": "git push origin main && tail -f log"}),
    ("bash", {"command": "echo hi\ngit push -f"}), ("bash", {"command": 'echo "open'}),
    ("bash", {"command": "git push -u origin feature"}),
    ("read_file", {"path": ".env"}))]


@dataclass(frozen=True)
class Judged:
    """What the engine made of the hook on one call: vetoed or not, with a reason of its own or
    the engine's stand-in (stderr was empty), and the warnings (a hook that failed: skipped)."""

    vetoed: bool
    reason: bool
    warned: tuple[str, ...]
    words: str = field(default="", compare=False)


def _unwritten(program) -> None:
    """Raise NotImplementedError for the notebook's stub, as a stub called in this process
    would: run as a program, it would only fail there, and be told as a wrong answer."""
    import ast
    import inspect
    import textwrap

    body = ast.parse(textwrap.dedent(inspect.getsource(program))).body[0].body
    body = [s for s in body[1:] if not isinstance(s, (ast.Import, ast.ImportFrom))] if body and \
        isinstance(body[0], ast.Expr) else body  # its docstring and its imports
    if len(body) == 1 and isinstance(body[0], ast.Raise) and "NotImplementedError" in ast.dump(
            body[0]):
        raise NotImplementedError


def _hooked(answer, tool: str, args: dict) -> Judged:
    _unwritten(answer)
    with Seam({}) as seam:
        command = shlex.join(as_program(answer, seam.roots[0], "hook"))
        warned = []
        hooks = Hooks({"PreToolUse": [{"matcher": "*", "command": command}]}, timeout=5,
                      warn=warned.append)
        said = hooks.before(next(t for t in default_tools() if t.name == tool), args,
                            Workspace(seam.roots[0]))
    stand_in = said is not None and said.startswith("a PreToolUse hook (")
    warned = tuple(w.replace(command, "<your hook>").split(":")[0] for w in warned)
    return Judged(said is not None, said is not None and not stand_in, warned, said or "")


def _shown_judged(judged: Judged) -> str:
    if judged.warned:
        return say("a warning, and the call goes on: ", "一条警告，调用照常进行：") + "; ".join(
            judged.warned)
    if not judged.vetoed:
        return say("let through (exit 0)", "放行（exit 0）")
    if not judged.reason:
        return say("vetoed, with no reason (stderr was empty)",
                   "否决了，但没有理由（stderr 是空的）")
    return say("vetoed: ", "否决：") + judged.words[:80]


def _hook_call(args) -> str:
    tool, arguments = args
    shown = ", ".join(f"{k}={v!r}" for k, v in arguments.items())
    return say(f"no_force_push(), a PreToolUse hook, on {tool}({shown})",
               f"no_force_push() 作为 PreToolUse 钩子，遇到 {tool}({shown})")


HOOK = Exercise(
    "ch07.hook", no_force_push, _hook_inputs, _hook_call, run=_hooked, show=_shown_judged,
    examples=HOOK_EXAMPLES, max_examples=30,
    equivalent={
        "if command[:2] == ['git', 'push'] and any((w == '--force' or w.startswith('+') or "
        "(w[:1] == '-' and w[1:2] != '-' and ('f' in w)) for w in command[2:])): → "
        "if command[:2] == ['git', 'push'] and any((w == '--force' or w.startswith('+') or "
        "(w[:1] == '-' and w[1:2] != '-' and ('f' in w)) for w in command[1:])):":
            "the word it adds is push, which is no flag and no +ref"},
    domain=("calls of bash whose command joins one to three simple commands (pushes with and "
            "without force, in every spelling; decoys that mention a push; other commands) with "
            "; && || | & or a newline; a command with an open quote; calls of other tools",
            "bash 调用，命令里用 ; && || | & 或换行连起一到三个简单命令（各种写法的 push，带或"
            "不带 force；提到 push 的诱饵；别的命令）；带没闭合引号的命令；别的工具的调用"),
    rule=("exit 2 with a reason on stderr when a simple command of the bash command (the words "
          "between && || ; | & ( ) and newlines) starts with "
          "git push and forces: --force, a short flag holding f (-f, -uf), a +ref; "
          "--force-with-lease is allowed. Exit 2 too when the command cannot be split. Exit 0 "
          "otherwise, and for every other tool",
          "当 bash 命令里某个简单命令（&& || ; | & ( ) 和换行之间的那些词）以 git push "
          "开头并且带强制选项（--force、含 f 的短选项如 -f、"
          "-uf、+ref）时，exit 2，并在 stderr 写明理由；--force-with-lease 可以放行。命令拆不开"
          "时也 exit 2。其余情况，以及其他所有工具，exit 0"),
    shape=("read the call from stdin; not bash: return; split the command with shlex "
           "(posix=True, punctuation_chars=True, newlines as ;); for each simple "
           "command between separators: git push with a force word: print the reason to "
           "stderr and sys.exit(2)",
           "从 stdin 读出调用；不是 bash 就 return；用 shlex 拆开命令（posix=True、"
           "punctuation_chars=True，换行当作 ;）；分隔符之间的每个简单命令：是 git push 又带强制"
           "选项，就把理由打印到 stderr，然后 sys.exit(2)"),
    mistakes=[
        Mistake("            sys.exit(2)  # the veto: stderr is the reason the model reads",
                "            sys.exit(1)", (
                    "only exit 2 vetoes. Any other exit is a broken hook (sys.exit(1), or a crash: "
                    "an exception exits 1 too): the engine warns and lets the call run",
                    "只有 exit 2 才是否决。其他退出码都算钩子坏了（sys.exit(1)，或者崩溃："
                    "抛出异常也是退出码 1）：引擎给出警告，然后照常执行调用")),
        Mistake('                  "use --force-with-lease", file=sys.stderr)',
                '                  "use --force-with-lease")', (
                    "the reason goes to stderr: that is what the engine hands the model. What a "
                    "pre-hook prints on stdout is not read",
                    "理由要写到 stderr：引擎把它交给模型。PreToolUse 钩子打印到 stdout 的内容"
                    "没人读")),
        Mistake('    if call["tool_name"] != "bash":', '    if call["tool_name"] == "":', (
            "the hook runs for every tool (matcher \"*\"): a read_file has no command, so look "
            "at tool_name first and let anything but bash through",
            "这个钩子对每个工具都会运行（matcher 是 \"*\"）：read_file 没有 command，所以先看 "
            "tool_name，不是 bash 就放行")),
        Mistake('                w == "--force" or w.startswith("+") or w[:1] == "-" and w[1:2] '
                '!= "-" and "f" in w',
                '                w in ("--force", "-f")', (
                    "short flags combine (-uf is -u -f) and a +ref forces that one branch: "
                    "git push origin +main is a force push too",
                    "短选项可以合写（-uf 就是 -u -f），而 +ref 会强制推送那一个分支："
                    "git push origin +main 也是强制推送")),
        Mistake('                w == "--force" or w.startswith("+") or w[:1] == "-" and w[1:2] '
                '!= "-" and "f" in w',
                '                w.startswith("--force") or w.startswith("+") or w[:1] == "-" '
                'and w[1:2] != "-" and "f" in w', (
                    "--force-with-lease is the safe force: it refuses if the remote moved. "
                    "Compare whole words",
                    "--force-with-lease 是安全的强制推送：远端变了它就不推。要比较完整的词")),
        Mistake("        command = []\n", "        pass\n", (
            "start a new simple command after each separator: in git push origin main && "
            "tail -f log, the -f belongs to tail",
            "每个分隔符之后要重新开始一个简单命令：git push origin main && tail -f log 里，"
            "-f 是 tail 的")),
        Mistake('    lexer = shlex.shlex(call["tool_input"]["command"].replace("\\n", ";"), '
                'posix=True,',
                '    lexer = shlex.shlex(call["tool_input"]["command"], posix=True,', (
                    "a newline ends a command as ; does: echo hi, a newline, git push -f runs "
                    "the push",
                    "换行和 ; 一样会结束一个命令：echo hi、换行、git push -f，推送照样会执行")),
    ],
)


# --- ch07.server ----------------------------------------------------------------------------

def word_server():
    """An MCP server over stdio, the standard library's only, with one tool: word_count."""
    import json
    import sys

    tool = {"name": "word_count", "description": "How many words a text has.",
            "inputSchema": {"type": "object", "required": ["text"],
                            "properties": {"text": {"type": "string"}}}}
    for line in sys.stdin:  # one message a line
        request = json.loads(line)
        if "id" not in request:
            continue  # a notification (notifications/initialized): no answer, ever
        method, params = request["method"], request.get("params") or {}
        answer = {"jsonrpc": "2.0", "id": request["id"]}
        if method == "initialize":  # speak the client's version: we know no other
            answer["result"] = {"protocolVersion": params["protocolVersion"],
                                "capabilities": {"tools": {}}, "serverInfo": {"name": "words"}}
        elif method == "tools/list":
            answer["result"] = {"tools": [tool]}
        elif method == "tools/call" and params["name"] == "word_count":
            words = len(params["arguments"]["text"].split())
            answer["result"] = {"content": [{"type": "text", "text": str(words)}]}
        else:
            answer["error"] = {"code": -32601, "message": f"no method {method}"}
        print(json.dumps(answer), flush=True)  # flushed: a pipe is not a terminal


_TEXTS = ["two words", "", "   ", "one", "tabs\tand\nnewlines  here", "数 一 数", "数一数",
          " padded  ", "a b c d e f g h", "don't stop", "e-mail me - now", "a,b ; c"]


def _server_inputs():
    from hypothesis import strategies as st

    return st.tuples(st.sampled_from(KNOWN_VERSIONS), st.lists(
        st.one_of(st.sampled_from(_TEXTS), st.text(" a\tb\n中", max_size=8)),
        min_size=1, max_size=3))


SERVER_EXAMPLES = [("2025-11-25", ["two words", "", "数 一 数"]), ("2024-11-05", ["one"]),
                   ("2025-06-18", ["don't stop", "e-mail me - now"])]


class _Asks(MCPClient):
    """The engine's client, asking for the protocol version the input names, and saying when
    it has read all the server wrote (so what it warned of is whole, the same every run)."""

    version = PROTOCOL_VERSION

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.read_all = threading.Event()

    def _send(self, process, message, deadline=None):
        if message.get("method") == "initialize":
            message = {**message, "params": {**message["params"], "protocolVersion": self.version}}
        super()._send(process, message, deadline)

    def _read(self, process, drainer):
        try:
            super()._read(process, drainer)
        finally:
            self.read_all.set()


def _served(answer, version: str, texts: list[str]) -> tuple[str, ...]:
    """What the engine's client made of the server: how it started, its tools, each count as
    the model reads it, and what an unknown method got. A line each."""
    _unwritten(answer)
    with Seam({}) as seam:
        command = as_program(answer, seam.roots[0], "server")
        client = _Asks(ServerSpec("words", command[0], command[1:]), seam.roots[0],
                       startup_timeout=3.0, call_timeout=1.0)
        client.version = version
        client.ids = itertools.count(0)  # the first request's id is 0: an id, though falsy
        seen = []
        try:
            client.start()
            seen.append(f"started, version {client.protocol_version}")
            seen.append("tools: " + ", ".join(f"{t['name']}({_arguments_of(t)})"
                                              for t in client.tools))
            for text in texts:
                try:
                    result = client.call_tool("word_count", {"text": text})
                    seen.append(f"word_count({text!r}) → {render(result)}{_not_text(result)}")
                except MCPError as e:
                    seen.append(f"word_count({text!r}) failed: {_kind(str(e))}")
            try:  # a tool it does not have
                client.call_tool("char_count", {"text": texts[0]})
                seen.append(say("char_count: a result (it has no such tool)",
                                "char_count：一个结果（它并没有这个工具）"))
            except MCPError as e:
                seen.append(f"char_count: {_kind(str(e))}")
            try:
                client.request("resources/list", deadline=time.monotonic() + 1.0)
                seen.append(say("resources/list: a result (it has none)",
                                "resources/list：一个结果（它并没有资源）"))
            except MCPError as e:
                seen.append(f"resources/list: {_kind(str(e))}")
        except MCPError as e:
            seen.append(say("did not start: ", "没能启动：") + _kind(str(e)))
        finally:
            client.close()
            client.read_all.wait(5.0)
        # an answer that came after its request was given up: when, is the machine's business
        seen += [say("warned: ", "警告：") + w.split(":")[0] for w in client.warnings
                 if not w.startswith("an answer to no pending request")]
        return tuple(seen)


def _arguments_of(tool: dict) -> str:
    """The arguments a tool's input schema names: what the model is told it may send."""
    schema = tool.get("inputSchema")
    properties = schema.get("properties") if isinstance(schema, dict) else None
    return ", ".join(sorted(properties)) if isinstance(properties, dict) else ""


def _not_text(result: dict) -> str:
    """What is wrong with a result's content, if a part is not text content holding a string
    (the client renders anything; the spec's text part is {"type": "text", "text": "..."})."""
    parts = result.get("content")
    if isinstance(parts, list) and all(isinstance(p, dict) and p.get("type") == "text"
                                       and isinstance(p.get("text"), str) for p in parts):
        return ""
    return say(" (not a list of text parts, each text a string)",
               "（不是由 text 部分组成的列表，或者 text 不是字符串）")


def _kind(error: str) -> str:
    """An MCPError's kind, without what varies (times, process ids, the server's words)."""
    if "JSON-RPC error None" in error:  # a bare string, or an error without its code
        return say("an error answer without a code", "一个没有 code 的错误回答")
    if "JSON-RPC error" in error:  # any code: -32601 for a method, -32602 for a tool, or other
        return say("an error answer", "一个错误回答")
    if error.startswith("no answer to"):
        return error.split(" within ")[0]
    if "exited with code" in error or "closed its stdout" in error:
        return say("the server ended", "服务器退出了")
    if "protocol version" in error:
        return say("a protocol version it does not know", "一个它不认识的协议版本")
    return error.split(":")[0][:60]


def _server_call(args) -> str:
    version, texts = args
    return say(f"word_server() started by the engine's MCPClient (asking for {version}), "
               f"then word_count on {texts!r}, then a tool and a method it does not have",
               f"word_server() 由引擎的 MCPClient 启动（请求的版本是 {version}），然后对 "
               f"{texts!r} 调用 word_count，最后请求一个它没有的工具和一个它没有的方法")


SERVER = Exercise(
    "ch07.server", word_server, _server_inputs, _server_call, run=_served,
    show=lambda seen: "\n    " + "\n    ".join(seen), examples=SERVER_EXAMPLES, max_examples=12,
    shrink=False,  # a wrong server may cost a timeout a try: the inputs are small as drawn
    equivalent={"method, params = (request['method'], request.get('params') or {}) → "
                "method, params = (request['method'], request.get('params'))":
                    "params is read only for initialize and tools/call, and the client sends "
                    "params with both",
                **{"answer['error'] = {'code': -32601, 'message': f'no method {method}'} → "
                   f"answer['error'] = {{'code': {code}, 'message': f'no method {{method}}'}}":
                       "any error answers the request: the rule takes every code (-32602 is the "
                       "spec's for an unknown tool)" for code in (-32602, -32600)}},
    domain=("the engine's own client, asking for each protocol version it knows, then word "
            "counts of texts empty, of spaces, tabs and newlines, Chinese, then a method the "
            "server has none for",
            "引擎自己的客户端，请求它认识的每一个协议版本，然后统计各种文本的词数：空的、只有"
            "空格、带制表符和换行的、中文的，最后请求一个服务器没有的方法"),
    rule=("a line of JSON-RPC in, a line out, flushed: answer initialize with the client's "
          "protocolVersion, tools/list with the one tool, tools/call of word_count with "
          "len(text.split()) as text content; any other request, or a call of a tool it does "
          "not have, gets an error, {\"code\": ..., \"message\": ...} (-32601, method not "
          "found, will do); a notification (no id) gets no answer",
          "进来一行 JSON-RPC，出去一行，并且立刻 flush：initialize 用客户端的 protocolVersion "
          "回答，tools/list 回答那一个工具，tools/call 调 word_count 时用 text content 回答 "
          "len(text.split())；其他请求，以及调用它没有的工具，一律回答错误 {\"code\": ..., "
          "\"message\": ...}（-32601，method not found，就可以）；通知（没有 id）不回答"),
    shape=("for line in sys.stdin: parse; no id: continue; build the answer for the method "
           "(result or error); print(json.dumps(answer), flush=True)",
           "for line in sys.stdin：解析；没有 id 就 continue；按 method 组出回答（result 或 "
           "error）；print(json.dumps(answer), flush=True)"),
    mistakes=[
        Mistake("        print(json.dumps(answer), flush=True)  # flushed: a pipe is not a "
                "terminal",
                "        print(json.dumps(answer))", (
                    "no answer reached the client: answer each request as its line arrives (not "
                    "after reading all of stdin), with its own id, one line, flushed. On a pipe, "
                    "print keeps its output in a buffer until the buffer fills",
                    "客户端没收到回答：每个请求的那一行一到就回答（不要等读完整个 stdin），带上它"
                    "自己的 id，占一行，并且 flush。输出到管道时，print 会把内容留在缓冲区里，"
                    "直到缓冲区满为止")),
        Mistake('            answer["result"] = {"content": [{"type": "text", "text": '
                'str(words)}]}',
                '            answer["result"] = {"content": str(words)}', (
                    "content is a list of parts, each with a type: [{\"type\": \"text\", "
                    "\"text\": ...}]. A bare string is no part, and the model reads nothing",
                    "content 是一个列表，每一项都带 type：[{\"type\": \"text\", \"text\": ...}]。"
                    "裸字符串不是一项，模型什么也读不到")),
        Mistake("            continue  # a notification (notifications/initialized): no answer, "
                "ever",
                "            pass", (
                    "a notification has no id, and gets no answer: reading request[\"id\"] "
                    "for notifications/initialized ends the server before its first tool",
                    "通知没有 id，也不需要回答：处理 notifications/initialized 时去读 "
                    "request[\"id\"]，服务器在第一个工具之前就退出了")),
        Mistake('            answer["result"] = {"protocolVersion": params["protocolVersion"],',
                '            answer["result"] = {"protocolVersion": "2025-11-25",', (
                    "answer with the version the client asked for: a client that asked for an "
                    "older one may not speak this one",
                    "要用客户端请求的版本回答：请求旧版本的客户端，未必会说新版本")),
        Mistake('            answer["error"] = {"code": -32601, "message": f"no method {method}"}',
                '            continue', (
                    "every request gets an answer, an error if nothing else (-32601, method "
                    "not found): a request left unanswered keeps its caller waiting out its "
                    "timeout",
                    "每个请求都要有回答，哪怕只是一个错误（-32601，method not found）：没有回答的"
                    "请求，会让调用方一直等到超时")),
    ],
)
