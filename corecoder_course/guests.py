"""The guests at the perimeter, for chapter 7: programs the agent runs but did not write.

    as_program(fn, folder)   a function of the notebook's, written out as a program of its own:
                             how a learner's hook or MCP server runs, in a process, as the real
                             ones do
    NOTES_SERVER             a small MCP server, the standard library's only (a learner has no
                             `mcp` package), with switches for the experiments: a banner on
                             stdout, a flood on stderr, a crash mid-call, a tool learned while
                             it runs
    Transcribed              an MCPClient that keeps every message that crossed the wire
    Chain                    each call's way through the gates: who said what, and how it ended
    wire_view(client, chain) the JSON-RPC lines beside each call's chain: a widget, and as text

Everything a hint or a cell prints is the same every run: ids are the client's own counter,
from 1, and the folders are the notebook's.
"""

from __future__ import annotations

import html
import inspect
import json
import sys
import textwrap
import threading
from pathlib import Path

from corecoder.calls import Gate
from corecoder.events import ToolCallFinished
from corecoder.mcp.client import MCPClient

from .viewer import display_twin
from .words import language, say, speaking


def as_program(fn, folder: Path, name: str | None = None) -> list[str]:
    """`fn`'s source written to `folder/<its name>.py`, to run as `fn()`; the command that runs
    it (this Python, so a learner's venv is the one it runs in). Its imports go inside it: the
    program has nothing else."""
    path = Path(folder) / f"{name or fn.__name__}.py"
    source = textwrap.dedent(inspect.getsource(fn))
    path.write_text(f"{source}\n\n{fn.__name__}()\n", encoding="utf-8")
    return [sys.executable, "-I", str(path)]


NOTES_SERVER = '''\
"""A small MCP server over stdio: one JSON-RPC message a line in, one a line out.
python notes_server.py [banner] [chatty] [learns]"""
import json
import sys

TOOLS = [
    {"name": "add", "description": "Add two numbers.",
     "inputSchema": {"type": "object", "required": ["a", "b"],
                     "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}},
    {"name": "shout", "description": "The text, in capitals.",
     "inputSchema": {"type": "object", "required": ["text"],
                     "properties": {"text": {"type": "string"}}}},
    {"name": "crash", "description": "Exit in the middle of the call (for the experiment).",
     "inputSchema": {"type": "object"}},
]
if "learns" in sys.argv:
    TOOLS.append({"name": "learn", "description": "Add the tool `double` to this server.",
                  "inputSchema": {"type": "object"}})


def send(message):
    print(json.dumps(message), flush=True)


def run(name, args):
    if name == "add":
        return str(args["a"] + args["b"])
    if name == "shout":
        return args["text"].upper()
    if name == "double":
        return str(2 * args["x"])
    if name == "learn":
        TOOLS.append({"name": "double", "description": "Twice a number.",
                      "inputSchema": {"type": "object", "required": ["x"],
                                      "properties": {"x": {"type": "number"}}}})
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        return "learned double"
    if name == "crash":
        sys.stderr.write("notes: giving up in the middle of a call\\n")
        sys.exit(3)
    raise ValueError(f"no tool named {name}")


for number, line in enumerate(sys.stdin):
    if number == 0 and "banner" in sys.argv:  # once the client speaks, so its place is sure
        print("notes server 1.0 ready")  # not JSON-RPC: a client must skip it
    request = json.loads(line)
    if "id" not in request:
        continue  # a notification: nothing to answer
    if "chatty" in sys.argv:
        sys.stderr.write("debug: " + "x" * 1000 + "\\n" * 100)  # 100 KB: more than a pipe holds
    method, params = request["method"], request.get("params") or {}
    if method == "initialize":
        result = {"protocolVersion": params["protocolVersion"], "serverInfo": {"name": "notes"},
                  "capabilities": {"tools": {"listChanged": True}}}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        try:
            text = run(params["name"], params.get("arguments") or {})
            result = {"content": [{"type": "text", "text": text}]}
        except Exception as e:
            result = {"content": [{"type": "text", "text": str(e)}], "isError": True}
    else:
        send({"jsonrpc": "2.0", "id": request["id"],
              "error": {"code": -32601, "message": f"no method {method}"}})
        continue
    send({"jsonrpc": "2.0", "id": request["id"], "result": result})
'''


class Transcribed(MCPClient):
    """An MCPClient that keeps what crossed the wire, in order: ("→", a message it sent) and
    ("←", a line it read). An answer is read before the caller it wakes sends anything more, so
    a run that makes one request at a time has one order."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.wire: list[tuple[str, str]] = []

    def _send(self, process, message: dict, deadline: float | None = None) -> None:
        self.wire.append(("→", json.dumps(message, ensure_ascii=False)))
        super()._send(process, message, deadline)

    def _receive(self, process, line: str) -> None:
        if line:
            self.wire.append(("←", line))
        super()._receive(process, line)


class Chain:
    """Each call's way through an agent's gates. `chain.gates(...)` wraps the gates the agent is
    built with, each noting its word on every call (let through, refused, or failed), and
    `agent.subscribe(chain)` adds how the call ended. A batch's calls are all admitted before
    any runs, so each word is kept by the call's tool and arguments until the call ends."""

    def __init__(self):
        self.words: dict[tuple[str, str], list[str]] = {}
        self.calls: list[tuple[str, list[str], str]] = []  # (the call, the gates' words, status)
        self.lock = threading.Lock()

    def gates(self, *gates: Gate) -> list[Gate]:
        return [_Noted(gate, self) for gate in gates]

    def note(self, tool: str, args: dict, word: str) -> None:
        with self.lock:
            self.words.setdefault((tool, _key(args)), []).append(word)

    def __call__(self, event) -> None:
        if isinstance(event, ToolCallFinished):
            try:
                args = json.loads(event.call.arguments or "{}")
            except ValueError:
                args = None
            with self.lock:
                words = self.words.pop((event.call.name, _key(args)), [])
                shown = f"{event.call.name}({_short(args)})"
                self.calls.append((shown, words, event.status))


class _Noted(Gate):
    """A gate, its word on each call noted in a Chain; what it says or raises passes on."""

    def __init__(self, gate: Gate, chain: Chain):
        self.gate, self.chain, self.name = gate, chain, gate.name

    def before(self, tool, args, workspace):
        try:
            reason = self.gate.before(tool, args, workspace)
        except Exception as e:
            self.chain.note(tool.name, args, f"{self.name}: {type(e).__name__}")
            raise
        self.chain.note(tool.name, args, f"{self.name}: " + ("no" if reason else "ok"))
        return reason

    def after(self, tool, args, result, workspace):
        return self.gate.after(tool, args, result, workspace)


def _key(args) -> str:
    return json.dumps(args, sort_keys=True, ensure_ascii=False)


def _short(args) -> str:
    if not isinstance(args, dict):
        return "?"
    first = next(iter(args.values()), "")
    text = first if isinstance(first, str) else json.dumps(first, ensure_ascii=False)
    text = " ".join(text.split())
    return text[:30] + ("…" if len(text) > 30 else "")


def wire_lines(client: Transcribed, width: int = 96) -> list[str]:
    """What crossed the wire, a line a message, cut to `width` characters."""
    return [f"{arrow} {line[:width - 3] + '…' if len(line) > width - 2 else line}"
            for arrow, line in client.wire]


def chain_lines(chain: Chain) -> list[str]:
    """Each call, the gates' words in the order they spoke, and how it ended."""
    return [f"{call}: {' → '.join(map(_word, words)) or say('no gate', '没有关卡')} ⇒ {status}"
            for call, words, status in chain.calls]


def _word(word: str) -> str:
    """A gate's word, noted as it spoke (in whatever thread), said in the cell's language."""
    return word.removesuffix(": no") + say(": no", ": 拒绝") if word.endswith(": no") else word


def text(client: Transcribed | None, chain: Chain | None) -> str:
    parts = []
    if client is not None:
        parts += [say("on the wire:", "线路上："), *(f"  {line}" for line in wire_lines(client))]
    if chain is not None:
        parts += [say("the calls, through the gates:", "每个调用经过的关卡："),
                  *(f"  {line}" for line in chain_lines(chain))]
    return "\n".join(parts)


def wire_widget(client: Transcribed | None, chain: Chain | None):
    """The widget: the JSON-RPC lines, each unfolding to the whole message, beside the calls."""
    import ipywidgets as w  # only here: the rest of the course helpers work without it

    with speaking(language()):
        left = []
        for arrow, line in (client.wire if client is not None else []):
            try:
                whole = json.dumps(json.loads(line), ensure_ascii=False, indent=1)
            except ValueError:
                whole = line
            left.append(f"<details><summary><code>{arrow} {html.escape(line[:70])}</code>"
                        f"</summary><pre>{html.escape(whole)}</pre></details>")
        rows = "".join(f"<tr><td><code>{html.escape(call)}</code></td>"
                       f"<td>{html.escape(' → '.join(map(_word, words)))}</td>"
                       f"<td>{html.escape(status)}</td>"
                       f"</tr>" for call, words, status in (chain.calls if chain else []))
        right = (f"<table><tr><th>{say('call', '调用')}</th><th>{say('gates', '关卡')}</th>"
                 f"<th>{say('ended', '结果')}</th></tr>{rows}</table>")
        return w.VBox([w.HBox([w.HTML(f"<b>{say('on the wire', '线路上')}</b>" + "".join(left)),
                               w.HTML(f"<b>{say('the calls', '调用')}</b>{right}")])])


def wire_view(client: Transcribed | None = None, chain: Chain | None = None) -> None:
    """Show what crossed the wire beside each call's chain (under Jupyter with ipywidgets), or
    print the text twin."""
    display_twin(lambda: wire_widget(client, chain), text(client, chain))
