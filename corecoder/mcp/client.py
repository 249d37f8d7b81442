"""One MCP server over stdio: its process, newline-delimited JSON-RPC 2.0, the handshake.

The idea is short. Start the program; send `initialize`, then `tools/list`; from then on
each tool call is a request, `tools/call`, written as one line of JSON to the server's
stdin, and its answer is the line on its stdout that carries the same id.

Three threads per server, each with one job:

    the caller   writes its request and waits on a queue of its own, within a deadline
    the reader   reads stdout: an answer goes to the caller waiting on its id; a notice
                 or a request from the server is handled on the spot; at the end of stdout
                 it tells every waiting caller how the server ended (its exit code, its last
                 words on stderr), the one account of a death, whoever noticed it first
    the drainer  keeps the last 200 lines of stderr, and keeps a chatty server alive: a
                 pipe holds ~64 KB, and a server whose stderr nobody reads blocks for good

Messages are told apart by shape, never by id alone: a server's own request may reuse the
id of a call we wait on, and it has a "method" where an answer has none.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import queue
import signal
import subprocess
import threading
import time
from collections import deque
from pathlib import Path

from .. import __version__
from .config import ServerSpec

PROTOCOL_VERSION = "2025-11-25"  # what we ask for; the server may answer with an older one
STARTUP_TIMEOUT = 15.0  # initialize plus every page of tools/list
CALL_TIMEOUT = 60.0


class MCPError(Exception):
    """A request that got no usable answer. The message is the reason, for the model or for /mcp."""


def classify(line: str) -> tuple[str, dict | None]:
    """What a line from a server's stdout is, and the message it holds. By shape, never by id
    alone: "request" (a method and an id: the server asks us), "notification" (a method and no
    id), "answer" (no method, and an id such as ours, an integer or a string), "neither" (JSON-RPC
    2.0, but none of these) or "noise" (not JSON-RPC at all: a banner, a log line, nothing)."""
    try:
        message = json.loads(line)
    except ValueError:
        return "noise", None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return "noise", None
    if "method" in message:
        return ("request" if "id" in message else "notification"), message
    # JSON's true is Python's 1: {"id": true} must not take the answer to our request 1
    if isinstance(message.get("id"), (int, str)) and not isinstance(message["id"], bool):
        return "answer", message
    return "neither", message


class MCPClient:
    """One MCP server, run as a child process and spoken to over stdio: newline-delimited
    JSON-RPC, requests matched to their answers by id."""

    def __init__(self, spec: ServerSpec, root: Path, *, startup_timeout: float = STARTUP_TIMEOUT,
                 call_timeout: float = CALL_TIMEOUT):
        self.spec = spec
        self.name = spec.name
        self.root = Path(root).resolve()
        self.startup_timeout = startup_timeout
        self.call_timeout = call_timeout
        # stopped, starting, ready, error (alive, but its last request failed), dead, closed
        self.state = "stopped"
        self.error = ""  # the last thing that went wrong, kept after a later success
        self.warnings: deque[str] = deque(maxlen=50)
        self.stderr: deque[str] = deque(maxlen=200)
        self.tools: list[dict] = []  # as the server describes them
        self.tools_changed = threading.Event()  # the server said so; the hub lists them anew
        self.protocol_version = ""
        self.process: subprocess.Popen | None = None
        self.lock = threading.Lock()  # guards process, state and pending across threads
        self.write_lock = threading.Lock()  # one message a line, never interleaved (held apart:
        # a write that blocks must not block the reader, nor the caller who gives up on it)
        self.pending: dict[int, queue.Queue] = {}  # request id -> the queue its caller waits on
        self.ids = itertools.count(1)

    def start(self) -> None:
        """Start the process, shake hands, list the tools. On failure: MCPError, and the state
        says why."""
        self.close()
        self.state, self.error, self.tools = "starting", "", []
        self.stderr.clear()
        self.warnings.clear()
        try:  # its own process group: closing it also ends what it started (npx, a shell)
            process = subprocess.Popen([self.spec.command, *self.spec.args], cwd=self.root,
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, env=server_environment(self.spec),
                                       start_new_session=True)
        except OSError as e:
            self.state = "error"
            self.error = f"cannot start {self.spec.command!r}: {e.strerror or e}"
            raise MCPError(self.error) from None
        with self.lock:
            self.process = process
        drainer = threading.Thread(target=self._drain, args=(process,), daemon=True)
        drainer.start()
        threading.Thread(target=self._read, args=(process, drainer), daemon=True).start()
        deadline = time.monotonic() + self.startup_timeout
        try:
            hello = self.request("initialize", {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {"roots": {"listChanged": False}},
                "clientInfo": {"name": "corecoder", "version": __version__}}, deadline=deadline)
            version = hello.get("protocolVersion")
            if version not in KNOWN_VERSIONS:
                raise MCPError(f"the server speaks protocol version {version!r}, which this client "
                               f"does not know (it knows {', '.join(KNOWN_VERSIONS)})")
            self.protocol_version = version
            self.notify("notifications/initialized")
            self.list_tools(deadline)
        except MCPError as e:
            # Dead, or alive but unusable (hung, or a protocol we don't speak): either way, stop it.
            state, error = ("dead", self.error) if self.state == "dead" else ("error", str(e))
            self.close()
            self.state, self.error = state, error
            raise MCPError(error) from None
        self.state = "ready"

    def list_tools(self, deadline: float | None = None) -> list[dict]:
        """Every tool, page by page, following nextCursor until there is none."""
        deadline = deadline or time.monotonic() + self.startup_timeout
        self.tools_changed.clear()  # before the first page: a change announced meanwhile is kept
        tools, cursor, seen = [], None, set()
        while True:
            page = self.request("tools/list", {"cursor": cursor} if cursor else None,
                                deadline=deadline)
            tools += [t for t in page.get("tools") or [] if isinstance(t, dict)
                      and isinstance(t.get("name"), str)]
            cursor = page.get("nextCursor")
            if not cursor:
                break
            if cursor in seen:  # a server that loops would keep us here forever
                raise MCPError(f"tools/list sent the cursor {cursor!r} twice")
            seen.add(cursor)
        self.tools = tools
        return tools

    def call_tool(self, name: str, arguments: dict,
                  cancelled: threading.Event | None = None) -> dict:
        return self.request("tools/call", {"name": name, "arguments": arguments},
                            cancelled=cancelled)

    def request(self, method: str, params: dict | None = None, *, deadline: float | None = None,
                cancelled: threading.Event | None = None) -> dict:
        """Send a request and wait for its answer: the result, or MCPError saying why there is
        none."""
        waiter: queue.Queue = queue.Queue(maxsize=1)
        with self.lock:
            process = self.process
            if process is None or self.state in ("dead", "closed"):
                raise MCPError(self._not_running())
            msg_id = next(self.ids)
            self.pending[msg_id] = waiter
        deadline = deadline or time.monotonic() + self.call_timeout
        allowed = deadline - time.monotonic()
        try:
            self._send(process, {"jsonrpc": "2.0", "id": msg_id, "method": method,
                                 **({} if params is None else {"params": params})}, deadline)
            answer = wait(waiter, deadline, cancelled)
        finally:
            with self.lock:
                self.pending.pop(msg_id, None)
        if answer is GONE:
            raise MCPError(f"during {method}, {self.error or 'the server was closed'}")
        if not isinstance(answer, dict):  # no answer in time, or the user interrupted
            reason = f"{method} was interrupted by the user" if answer is CANCELLED else \
                f"no answer to {method} within {allowed:.3g} s"
            self.notify("notifications/cancelled", {"requestId": msg_id, "reason": reason})
            self.state, self.error = "error", reason
            raise MCPError(reason)
        if "error" in answer:
            error = answer["error"]
            error = error if isinstance(error, dict) else {"message": str(error)}
            raise MCPError(f"{method} refused: {error.get('message')} "
                           f"(JSON-RPC error {error.get('code')})")
        if self.state == "error":
            self.state = "ready"  # it answers again; the error stays on record for /mcp
        return answer.get("result") if isinstance(answer.get("result"), dict) else {}

    def notify(self, method: str, params: dict | None = None) -> None:
        if (process := self.process) is not None:
            with contextlib.suppress(MCPError):  # no answer comes; a dead server shows at the next
                self._send(process, {"jsonrpc": "2.0", "method": method,
                                     **({} if params is None else {"params": params})})

    def close(self) -> None:
        """Close stdin (the polite way to stop a stdio server), then SIGTERM, then SIGKILL."""
        with self.lock:
            process, self.process = self.process, None
            pending, self.pending = self.pending, {}
            if process is not None:
                self.state = "closed"
        for waiter in pending.values():
            waiter.put(GONE)
        if process is None:
            return
        with contextlib.suppress(OSError, ValueError):
            process.stdin.close()
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                process.wait(timeout=GRACE)
                return
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(process.pid, sig)  # the whole group: npx & co leave no orphan
        process.wait()

    def _receive(self, process: subprocess.Popen, line: str) -> None:
        kind, message = classify(line)
        if kind == "noise":
            if line:
                self.warnings.append(f"skipped a line on stdout that is not JSON-RPC: "
                                     f"{line[:120]!r}")
        elif kind == "request":  # the server asks: ping and roots we answer
            method = message["method"]
            if method == "ping":
                reply = {"result": {}}
            elif method == "roots/list":
                reply = {"result": {"roots": [{"uri": self.root.as_uri(), "name": self.root.name}]}}
            else:
                reply = {"error": {"code": -32601, "message": f"method not found: {method}"}}
            with contextlib.suppress(MCPError):  # the end of stdout follows, and says what happened
                self._send(process, {"jsonrpc": "2.0", "id": message["id"], **reply})
        elif kind == "notification":
            if message["method"] == "notifications/tools/list_changed":
                self.tools_changed.set()
        elif kind == "answer":
            with self.lock:
                waiter = self.pending.pop(message["id"], None)
            if waiter is None:
                self.warnings.append(f"an answer to no pending request (id {message['id']!r}), "
                                     "probably too late")
            else:
                waiter.put(message)
        else:
            self.warnings.append(f"skipped a message that is neither request nor answer: "
                                 f"{line[:120]!r}")

    # --- defences: a server that crashes, hangs, chatters, asks back or stops reading ---------

    def _not_running(self) -> str:
        known = self.state in ("dead", "error") and self.error
        why = self.error if known else f"the server is {self.state}"
        return f"{why}; `/mcp reconnect {self.name}` starts it again"

    def _send(self, process: subprocess.Popen, message: dict,
              deadline: float | None = None) -> None:
        """Write one message within the deadline: a server that stops reading its input would
        otherwise block this write, and every later one behind it, for good."""
        data, failed = (json.dumps(message, ensure_ascii=False) + "\n").encode("utf-8"), []

        def write() -> None:
            try:
                with self.write_lock:
                    process.stdin.write(data)
                    process.stdin.flush()
            except (OSError, ValueError) as e:  # a broken pipe, or stdin already closed
                failed.append(e)

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        writer.join(max(0.0, (deadline or time.monotonic() + self.call_timeout) - time.monotonic()))
        if failed:  # its input is closed: if it died, how (its code, its last words on stderr)
            with contextlib.suppress(subprocess.TimeoutExpired):  # is the reader's to tell every
                process.wait(timeout=GRACE)  # waiting caller, the same whoever noticed first
        if writer.is_alive() or failed and process.poll() is None:  # alive, not reading: kill it
            why = type(failed[0]).__name__ if failed else "a write timed out"
            self._gone(process, f"the server stopped reading its input ({why})")
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            raise MCPError(self.error or "the server was closed") from None

    def _read(self, process: subprocess.Popen, drainer: threading.Thread) -> None:
        with process.stdout:
            for raw in lines(process.stdout):
                try:
                    self._receive(process, raw.decode("utf-8", "replace").strip())
                except Exception as e:  # noqa: BLE001 - one odd message must not end the reader
                    self.warnings.append(f"could not handle a message: {type(e).__name__}: {e}")
        try:
            code = process.wait(timeout=GRACE)
        except subprocess.TimeoutExpired:
            code = None
        drainer.join(timeout=GRACE)  # so its last words on stderr are in the message
        why = "the server closed its stdout"
        if code is not None:
            why = f"the server exited with code {code}"
        last = next((line for line in reversed(self.stderr) if line.strip()), "")
        self._gone(process, f"{why} (last on stderr: {last[:200]!r})" if last else why)

    def _drain(self, process: subprocess.Popen) -> None:
        with process.stderr:
            # At most 64 KB a read, so a line without an end never grows without bound.
            for raw in iter(lambda: process.stderr.readline(65536), b""):
                self.stderr.append(raw.decode("utf-8", "replace").rstrip()[:1000])

    def _gone(self, process: subprocess.Popen, reason: str) -> None:
        """The process died: every waiting caller learns why, at once, instead of timing out."""
        with self.lock:
            if process is not self.process or self.state == "dead":
                return  # closed on purpose, or already known
            self.state, self.error = "dead", reason
            pending, self.pending = self.pending, {}
        for waiter in pending.values():
            waiter.put(GONE)


def wait(waiter: queue.Queue, deadline: float, cancelled: threading.Event | None):
    """The answer, or None at the deadline, or CANCELLED once `cancelled` is set."""
    while (left := deadline - time.monotonic()) > 0:
        try:
            return waiter.get(timeout=min(left, 0.1) if cancelled is not None else left)
        except queue.Empty:
            if cancelled is not None and cancelled.is_set():
                return CANCELLED
    return None


# Below the mark too: the versions we accept, the grace a server gets to exit, the markers a
# waiting caller is handed, what a server inherits of our environment, and a line's bound.
KNOWN_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
GRACE = 1.0  # seconds a server gets to exit after its stdin closes, and again after SIGTERM
GONE = object()  # handed to waiting callers when the server dies or is closed
CANCELLED = object()  # what waiting returns once the user interrupts the call
# All a server inherits of our environment, as the official MCP SDK's stdio client does: enough
# to find programs, a home and a language, never the user's keys. More is named in "env".
INHERITED = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "LC_CTYPE",
             "TMPDIR", "TZ", "APPDATA", "LOCALAPPDATA", "PATHEXT", "SYSTEMDRIVE", "SYSTEMROOT",
             "TEMP", "USERNAME", "USERPROFILE")


def server_environment(spec: ServerSpec) -> dict[str, str]:
    # A value that starts with "()" is an exported bash function: code, not a setting.
    inherited = {name: os.environ[name] for name in INHERITED
                 if name in os.environ and not os.environ[name].startswith("()")}
    return {**inherited, **spec.env}


MAX_MESSAGE = 16 << 20  # bytes in one line of a server's stdout; a longer one is skipped


def lines(stream, limit: int = MAX_MESSAGE):
    """The stream's lines, each at most `limit` bytes: a line without end (a server printing
    hundreds of MB and no newline) is read past in pieces and stands as one line saying so,
    which the reader skips with a warning: memory stays bounded."""
    while raw := stream.readline(limit + 1):
        if len(raw) > limit and not raw.endswith(b"\n"):
            while (more := stream.readline(limit)) and not more.endswith(b"\n"):
                pass  # the rest of it, a piece at a time
            raw = f"[a line of more than {limit:,} bytes, not read]".encode()
        yield raw
