"""`corecoder --acp`: the agent, headless, for an editor, over the Agent Client Protocol.

ACP (agentclientprotocol.com, protocol version 1) is JSON-RPC 2.0, one message a line, on the
agent's stdin and stdout: what Zed and JetBrains speak to their agents. Here the editor is one
more front end, like the REPL: a subscriber (the turn goes back as `session/update`
notifications: the answer and the reasoning as they stream, each tool call with its status and
result, the todo list as the plan) and an asker (a consent question is a
`session/request_permission` request). Nothing but protocol is written to stdout; what the
command would warn about goes to stderr.

    initialize          the protocol version and what this agent can do
    session/new         a session in the editor's folder, the editor's MCP servers attached
    session/load        a saved session, its history sent back as updates, resumed legal
    session/prompt      one turn; its answer is the stop reason (end_turn, cancelled, ...)
    session/cancel      a real interrupt: as Ctrl+C, so commands are killed, the history legal

A prompt that comes while a turn of its session runs is said to that turn (steering: it joins
at the next step boundary, see Agent.steer) and is answered when the turn ends.

Turns run in the main thread, one at a time, as in the REPL; a reader thread takes the lines
in. A cancel is a SIGINT to the main thread, so the one path the REPL's Ctrl+C takes (a model
call cut off, a command's process group killed, every call answered) is the path it takes.
The project's trust is as with `-p`: a cloned project's hooks and servers wait for
--trust-project.
"""

from __future__ import annotations

import io
import json
import os
import queue
import signal
import sys
import threading
from pathlib import Path

from ..events import Finished, ReasoningDelta, TextDelta, ToolCallFinished, ToolCallStarted
from ..mcp.config import ServerSpec
from ..messages import STATE_NOTE
from .app import FAILURES, STARTUP_ERRORS, App, start, unexpected
from .trace import to_stderr

PROTOCOL_VERSION = 1
KINDS = {"read_file": "read", "write_file": "edit", "edit_file": "edit", "glob": "search",
         "grep": "search", "bash": "execute", "agent": "think", "todo_write": "think"}
OPTIONS = [{"optionId": "once", "name": "Allow once", "kind": "allow_once"},
           {"optionId": "always", "name": "Always allow this tool here", "kind": "allow_always"},
           {"optionId": "deny", "name": "Reject", "kind": "reject_once"}]
PLAN_STATUS = {"pending": "pending", "in_progress": "in_progress", "done": "completed"}  # ACP's
# JSON-RPC's own error codes
PARSE_ERROR, INVALID_REQUEST, NO_METHOD, BAD_PARAMS, FAILED = -32700, -32600, -32601, -32602, -32603


class Peer:
    """The other end of the line: messages out (one JSON a line, whole, never interleaved), and
    the answers to our own requests matched to whoever is waiting for them."""

    def __init__(self, out=None):
        self.out = out or sys.stdout
        self.lock = threading.Lock()
        self.waiting: dict[int, list] = {}  # request id -> [done event, the answer]
        self.next_id = 0
        self.gone = False  # the client closed the line

    def send(self, message: dict) -> None:
        with self.lock:  # in ASCII: every control character, an escape's too, is escaped
            self.out.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
            self.out.flush()

    def notify(self, method: str, params: dict) -> None:
        self.send({"method": method, "params": params})

    def respond(self, id, result=None, error: tuple[int, str] | None = None) -> None:
        if error is None:
            self.send({"id": id, "result": result})
        else:
            self.send({"id": id, "error": {"code": error[0], "message": error[1]}})

    def request(self, method: str, params: dict) -> dict:
        """Ask the client and wait for its answer (a Ctrl+C, or a cancel, ends the wait; so does
        the client's going: then the turn stops, as if cancelled, since nobody is there)."""
        with self.lock:
            self.next_id += 1
            id, slot = self.next_id, [threading.Event(), None]
            self.waiting[id] = slot
            gone = self.gone
        if gone:
            raise KeyboardInterrupt
        self.send({"id": id, "method": method, "params": params})
        slot[0].wait()
        answer = slot[1]
        if answer is None:
            raise KeyboardInterrupt
        if "error" in answer:
            raise RuntimeError(f"the client answered {method} with an error: {answer['error']}")
        return answer.get("result") or {}

    def closed(self) -> None:
        """The client closed the line: nobody will answer what waits."""
        with self.lock:
            self.gone = True
            waiting, self.waiting = self.waiting, {}
        for slot in waiting.values():
            slot[0].set()

    def answered(self, message: dict) -> None:
        slot = self.waiting.pop(message.get("id"), None)
        if slot is not None:  # an answer nobody waits for (a turn cancelled meanwhile): dropped
            slot[1] = message
            slot[0].set()


class Server:
    """The sessions this editor opened, and the one turn running."""

    def __init__(self, peer: Peer, *, yes: bool = False, trust: bool = False, settings=None,
                 model: str | None = None):
        self.peer = peer
        self.options = {"model": model, "yes": yes, "trust": trust, "settings": settings or {}}
        self.sessions: dict[str, App] = {}
        self.inbox: queue.Queue = queue.Queue()
        self.running: str | None = None  # the session whose turn runs now
        self.cancelled = False  # a cancel asked the running turn to stop
        self.steered: list = []  # ids of prompts said to the running turn: answered as it ends
        self.lock = threading.Lock()  # whether a turn still runs, and what is said to it

    def serve(self, lines) -> int:
        """Read `lines` (stdin) in a thread; run what they ask here, one at a time."""
        for sig in (signal.SIGTERM, signal.SIGHUP):  # the editor went: its commands go too
            signal.signal(sig, self.on_end)
        self.reader = threading.Thread(target=self.read, args=(lines,), daemon=True)
        self.reader.start()
        try:
            while True:
                try:
                    if (message := self.inbox.get()) is None:
                        return 0
                    self.handle(message)
                except KeyboardInterrupt:
                    if not self.cancelled:
                        return 130  # a Ctrl+C of the user's own: the agent ends, as a command does
                    self.cancelled = False  # a cancel that came as its turn ended: nothing to stop
        finally:
            for app in self.sessions.values():
                app.log.flush()
                app.stop()

    def read(self, lines) -> None:
        for line in lines:
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError as e:
                self.peer.respond(None, error=(PARSE_ERROR, f"not JSON: {e}"))
                continue
            if not isinstance(message, dict):
                self.peer.respond(None, error=(INVALID_REQUEST, "a message is a JSON object"))
            elif "method" not in message:
                self.peer.answered(message)  # the client's answer to one of our requests
            elif message["method"] == "session/cancel":  # a notification; sent as a request,
                self.cancel((message.get("params") or {}).get("sessionId"))
                if "id" in message:  # it is answered all the same
                    self.peer.respond(message["id"], None)
            elif not (message["method"] == "session/prompt" and self.steer(message)):
                self.inbox.put(message)
        self.peer.closed()
        self.inbox.put(None)  # the editor closed the line: end

    def handle(self, message: dict) -> None:
        id, method, params = message.get("id"), message.get("method"), message.get("params")
        handler = {"initialize": self.initialize, "session/new": self.new,
                   "session/load": self.load, "session/prompt": self.prompt,
                   "authenticate": lambda params: {}}.get(method)
        try:
            if not isinstance(method, str) or not isinstance(params or {}, dict):
                raise Invalid(INVALID_REQUEST, "a request has a method and its params object")
            if handler is None:
                raise Invalid(NO_METHOD, f"no method {method!r} in this agent")
            result = handler(params or {})
        except Invalid as e:
            error = (e.code, e.text)
        except STARTUP_ERRORS as e:
            error = (BAD_PARAMS, str(e))
        except FAILURES as e:
            error = (FAILED, str(e))
        except Exception as e:  # a bug: one line to the editor, never a traceback on stdout
            error = (FAILED, unexpected(e))
        else:
            error = None
        if id is not None:  # a notification gets no answer
            self.peer.respond(id, result if error is None else None, error)

    # --- the methods ------------------------------------------------------------------------

    def initialize(self, params: dict) -> dict:
        return {"protocolVersion": PROTOCOL_VERSION, "authMethods": [],
                "agentCapabilities": {"loadSession": True,
                                      "promptCapabilities": {"image": False, "audio": False,
                                                             "embeddedContext": True},
                                      "mcpCapabilities": {"http": False, "sse": False}}}

    def new(self, params: dict, resume: str | None = None) -> dict:
        cwd = Path(need(params, "cwd", str))
        if not cwd.is_absolute() or not cwd.is_dir():
            raise Invalid(BAD_PARAMS, f"cwd {cwd} is not an absolute path to a folder")
        servers = mcp_servers(params.get("mcpServers") or [])
        app = start(self.options["model"], yes=self.options["yes"], resume=resume,
                    trust=self.options["trust"], settings=self.options["settings"], cwd=cwd,
                    warn=lambda text: to_stderr(f"warning: {text}"), mcp=servers)
        app.consent.ask = lambda tool, args: self.permission(app, tool, args)
        app.agent.subscribe(lambda event: self.update(app, event))
        self.sessions[app.log.id] = app
        return {"sessionId": app.log.id}

    def load(self, params: dict) -> None:
        id = need(params, "sessionId", str)
        app = self.sessions.get(id) or self.sessions[self.new(params, resume=id)["sessionId"]]
        for update in history(app.agent.messages):
            self.peer.notify("session/update", {"sessionId": id, "update": update})
        return None

    def prompt(self, params: dict) -> dict:
        app = self.session(params)
        text = prompt_text(need(params, "prompt", list))
        if not text:
            raise Invalid(BAD_PARAMS, "the prompt has no text")
        endings: list[str] = []
        watch = app.agent.subscribe(lambda e: isinstance(e, Finished) and endings.append(e.reason))
        self.running, self.cancelled, reason = app.log.id, False, None
        try:
            try:
                app.ask(text)
                while not self.ended(app):  # a prompt came as the answer did: it goes on
                    app.agent.run()
            finally:
                self.running = None  # from here a cancel has nothing to stop
            reason = "max_turn_requests" if endings[-1:] == ["max_rounds"] else "end_turn"
        except KeyboardInterrupt:
            reason, self.cancelled = "cancelled", False  # (a Ctrl+C of the user's also ends here)
            app.agent.steering.clear()  # what was said to it was not done: its answer says so
        finally:
            app.agent.subscribers.remove(watch)
            app.log.flush()
            with self.lock:
                steered, self.steered = self.steered, []
            for id in steered:  # the prompts said to this turn end with it, or fail with it
                result, error = ({"stopReason": reason}, None) if reason else (None, (
                    FAILED, "the turn this prompt was said to failed: see that prompt's answer"))
                self.peer.respond(id, result, error)
        return {"stopReason": reason}

    def steer(self, message: dict) -> bool:
        """From the reader thread: a prompt for the session whose turn runs is said to that
        turn (Agent.steer), and answered when the turn ends. False: no turn of it runs."""
        params = message.get("params") or {}
        text = prompt_text(params.get("prompt") if isinstance(params.get("prompt"), list) else [])
        with self.lock:
            if not text or params.get("sessionId") != self.running:
                return False
            self.sessions[self.running].agent.steer(text)
            self.steered.append(message.get("id"))
        update = chunk("user_message_chunk", text)  # the editor sees it join the conversation
        self.peer.notify("session/update", {"sessionId": params["sessionId"], "update": update})
        return True

    def ended(self, app: App) -> bool:
        """Has the turn ended? Not while something said to it waits to join."""
        with self.lock:
            if app.agent.steering:
                return False
            self.running = None
            return True

    def cancel(self, id) -> None:
        """From the reader thread: stop the running turn of session `id`, as Ctrl+C would. The
        same SIGINT, to Python's own handler, so the same care: in a batch of calls it is only
        noted, and the batch stops between two waits (executor.ctrl_c_noted)."""
        with self.lock:  # not once the turn has ended (prompt, ended)
            if id is not None and id == self.running:
                self.cancelled = True
                signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

    def on_end(self, signum, frame) -> None:
        for app in list(self.sessions.values()):
            app.stop_commands()
        os._exit(128 + signum)

    # --- what the editor is told, and asked --------------------------------------------------

    def update(self, app: App, event) -> None:
        id = app.log.id
        for update in updates(event, app):
            self.peer.notify("session/update", {"sessionId": id, "update": update})

    def permission(self, app: App, tool, args: dict) -> str:
        call = {"toolCallId": f"ask-{tool.name}", "title": title(tool.name, args),
                "kind": KINDS.get(tool.name, "other"), "status": "pending", "rawInput": args}
        answer = self.peer.request("session/request_permission", {
            "sessionId": app.log.id, "toolCall": call, "options": OPTIONS})
        outcome = answer.get("outcome") or {}
        if outcome.get("outcome") == "cancelled":
            raise KeyboardInterrupt  # the editor cancelled the turn while it asked
        return outcome.get("optionId") if outcome.get("optionId") in ("once", "always") else "deny"

    def session(self, params: dict) -> App:
        id = need(params, "sessionId", str)
        if id not in self.sessions:
            raise Invalid(BAD_PARAMS, f"no session {id!r}: session/new or session/load it first")
        return self.sessions[id]


class Invalid(Exception):
    def __init__(self, code: int, text: str):
        super().__init__(text)
        self.code, self.text = code, text


def need(params: dict, name: str, kind: type):
    value = params.get(name)
    if not isinstance(value, kind):
        raise Invalid(BAD_PARAMS, f"{name} must be a {kind.__name__}")
    return value


def prompt_text(blocks: list) -> str:
    return "\n\n".join(block_text(block) for block in blocks if isinstance(block, dict)).strip()


def block_text(block: dict) -> str:
    """A prompt's content block as text: text itself; a file the editor attached, under its
    name; a link to one, as its URI (the agent can read it)."""
    if block.get("type") == "text":
        return str(block.get("text", ""))
    resource = block.get("resource") or {}
    if block.get("type") == "resource" and "text" in resource:
        return f"{resource.get('uri', 'an attached file')}:\n{resource['text']}"
    return str(block.get("uri") or resource.get("uri") or "")


def mcp_servers(entries: list) -> dict[str, ServerSpec]:
    """The editor's MCP servers (stdio ones: name, command, args, env as name/value pairs)."""
    servers = {}
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
            raise Invalid(BAD_PARAMS, "each of mcpServers needs a name and a command (stdio; "
                                      "this agent speaks no MCP over HTTP or SSE)")
        env = {pair["name"]: pair["value"] for pair in entry.get("env") or []
               if isinstance(pair, dict) and "name" in pair and "value" in pair}
        name = str(entry.get("name") or entry["command"])
        args = [str(arg) for arg in entry.get("args") or []]
        servers[name] = ServerSpec(name, entry["command"], args,
                                   {str(k): str(v) for k, v in env.items()})
    return servers


def title(name: str, args: dict) -> str:
    shown = args.get("command") or args.get("path") or args.get("pattern") or ""
    return f"{name} {shown if isinstance(shown, str) else ''}".strip()[:200]


def updates(event, app: App) -> list[dict]:
    """A session/update for an event of the agent's (a worker's are its own business)."""
    if isinstance(event, TextDelta):
        return [chunk("agent_message_chunk", event.text)]
    if isinstance(event, ReasoningDelta):
        return [chunk("agent_thought_chunk", event.text)]
    if isinstance(event, ToolCallStarted):
        return [started(event.call.as_dict(), "in_progress")]
    if isinstance(event, ToolCallFinished):
        done = [{"sessionUpdate": "tool_call_update", "toolCallId": event.call.id,
                 "status": "completed" if event.status == "ok" else "failed",
                 "content": [{"type": "content", "content": {"type": "text",
                                                             "text": event.result}}]}]
        if event.call.name == "todo_write" and event.status == "ok":
            done.append({"sessionUpdate": "plan", "entries": plan(event.call.arguments)})
        return done
    return []


def started(call: dict, status: str) -> dict:
    """A tool call as the editor shows it, from its wire form (the history's, or as_dict())."""
    function = call.get("function") or {}
    try:
        args = json.loads(function.get("arguments") or "{}")
    except ValueError:  # the model's malformed JSON: shown as it came
        args = {"arguments": function.get("arguments")}
    args = args if isinstance(args, dict) else {"arguments": args}
    name = str(function.get("name", ""))
    return {"sessionUpdate": "tool_call", "toolCallId": call.get("id"), "title": title(name, args),
            "kind": KINDS.get(name, "other"), "status": status, "rawInput": args}


def plan(arguments: str) -> list[dict]:
    """The todo list a todo_write call wrote, as ACP's plan entries. (From the call itself: in
    a parallel batch the workspace takes the new list only once the batch is over.)"""
    todos = json.loads(arguments)["todos"]  # it ran: its arguments were checked, JSON included
    return [{"content": " ".join(item["content"].split()), "priority": "medium",
             "status": PLAN_STATUS[item["status"]]} for item in todos]


def chunk(kind: str, text: str) -> dict:
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text}}


def history(messages: list[dict]) -> list[dict]:
    """A resumed session's history as the updates that would have shown it."""
    shown = []
    for m in messages:
        content = m.get("content") or ""
        if m["role"] == "user" and not content.startswith(STATE_NOTE):
            shown.append(chunk("user_message_chunk", content))
        elif m["role"] == "assistant":
            if content:
                shown.append(chunk("agent_message_chunk", content))
            shown += [started(call, "completed") for call in m.get("tool_calls") or []]
        elif m["role"] == "tool":
            shown.append({"sessionUpdate": "tool_call_update", "toolCallId": m.get("tool_call_id"),
                          "status": "completed", "content": [
                              {"type": "content", "content": {"type": "text", "text": content}}]})
    return shown


def run_acp(*, model=None, yes=False, trust=False, settings=None) -> int:
    """`corecoder --acp`: serve the editor on stdin and stdout until it closes the line."""
    out = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", write_through=True)
    lines = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
    sys.stdout = sys.stderr  # whatever prints by mistake must not break the protocol
    server = Server(Peer(out), model=model, yes=yes, trust=trust, settings=settings)
    code = server.serve(lines)
    if server.reader.is_alive():  # still reading stdin (a Ctrl+C ended it): Python 3.12 aborts
        sys.stderr.flush()  # its shutdown under a thread that holds stdin's lock, so leave now
        os._exit(code)  # (the sessions are flushed and their commands stopped: serve did it)
    return code
