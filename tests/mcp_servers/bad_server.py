"""A deliberately misbehaving MCP server, stdlib only, for the client's tests.

Each flag switches on one way real servers go wrong:

    --banner          print a greeting on stdout before anything else (not JSON)
    --stderr-mb N     write N MB to stderr before answering each tools/call
    --version V       answer initialize with protocol version V (default: the client's own)
    --page N          serve tools/list N tools a page, linked by nextCursor
    --notify-early    send notifications/tools/list_changed before the initialize reply
    --ask             before answering a tools/call, send the client `ping`, `roots/list` and an
                      unknown request, each reusing the id of the call it is waiting on
    --hang-start      never answer initialize
    --environ         also serve the tool `environ`: the server's environment, as the npm
                      reference server's get-env tool answers
    --odd-schema      also serve the tool `odd`, whose input schema is malformed (an enum that is
                      a number); it answers with the arguments it got
    --flood-mb N      before answering each tools/call, write one line of N MB on stdout
    --list-once       answer tools/list the first time only: every later one is refused
    --notify-listing  send notifications/tools/list_changed before each tools/list answer

Tools: echo (text back), crash (the process dies mid-call), hang (never answered),
grow (adds the tool `extra` and sends notifications/tools/list_changed before its reply),
deaf (never answered, and the server stops reading its input for good).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

TOOLS = [
    {"name": "echo", "description": "Return the text.",
     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}},
    {"name": "crash", "description": "Die mid-call."},
    {"name": "hang", "description": "Never answer."},
    {"name": "grow", "description": "Add a tool."},
    {"name": "deaf", "description": "Stop reading input."},
]
ENVIRON = {"name": "environ", "description": "The server's environment.", "inputSchema": {"type": "object"}}
ODD = {"name": "odd", "description": "A malformed schema.",
       "inputSchema": {"type": "object", "properties": {"a": {"enum": 3}}}}
EXTRA = {"name": "extra", "description": "Appears after grow.", "inputSchema": {"type": "object"}}


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def receive() -> dict | None:
    line = sys.stdin.readline()
    return json.loads(line) if line else None


def ask_client(call_id) -> dict:
    """Send the client requests that reuse the pending call's id; collect its answers."""
    methods = ["ping", "roots/list", "sampling/createMessage"]
    for method in methods:
        # The same id as the client's own pending call: a client that matches replies
        # by id alone would take these requests for the answer to its call.
        send({"jsonrpc": "2.0", "id": call_id, "method": method})
    answers = {}
    while len(answers) < len(methods):
        message = receive()
        if message is None:
            sys.exit(0)
        answers[methods[len(answers)]] = message  # the client answers in order, one thread
    return answers


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--banner", action="store_true")
    parser.add_argument("--stderr-mb", type=float, default=0)
    parser.add_argument("--version")
    parser.add_argument("--page", type=int, default=0)
    parser.add_argument("--notify-early", action="store_true")
    parser.add_argument("--ask", action="store_true")
    parser.add_argument("--hang-start", action="store_true")
    parser.add_argument("--environ", action="store_true")
    parser.add_argument("--odd-schema", action="store_true")
    parser.add_argument("--flood-mb", type=int, default=0)
    parser.add_argument("--list-once", action="store_true")
    parser.add_argument("--notify-listing", action="store_true")
    opts = parser.parse_args()
    listed = False  # whether tools/list was answered once already
    tools = list(TOOLS) + ([ENVIRON] if opts.environ else []) + ([ODD] if opts.odd_schema else [])
    if opts.banner:
        print("bad server 0.1 starting up... (this line is not JSON)", flush=True)
        print("", flush=True)
    while (message := receive()) is not None:
        method, msg_id, params = message.get("method"), message.get("id"), message.get("params") or {}
        if method == "initialize":
            if opts.hang_start:
                continue
            if opts.notify_early:
                send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
            version = opts.version or params.get("protocolVersion")
            send({"jsonrpc": "2.0", "id": msg_id, "result": {
                "protocolVersion": version, "capabilities": {"tools": {"listChanged": True}},
                "serverInfo": {"name": "bad", "version": "0.1"}}})
        elif method == "tools/list" and opts.list_once and listed:
            send({"jsonrpc": "2.0", "id": msg_id,
                  "error": {"code": -32603, "message": "listing is broken"}})
        elif method == "tools/list":
            listed = True
            if opts.notify_listing:  # announced while the client lists: after it cleared its mark
                send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
            start = int(params.get("cursor") or 0)
            end = start + opts.page if opts.page else len(tools)
            result = {"tools": tools[start:end]}
            if end < len(tools):
                result["nextCursor"] = str(end)
            send({"jsonrpc": "2.0", "id": msg_id, "result": result})
        elif method == "tools/call":
            call(opts, tools, msg_id, params)
        elif msg_id is not None and method is not None:
            send({"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32601, "message": f"no method {method}"}})


def call(opts, tools: list, msg_id, params: dict) -> None:
    name, args = params.get("name"), params.get("arguments") or {}
    if opts.stderr_mb:
        # Blocks once the pipe's buffer (~64 KB) is full, unless the client drains stderr.
        chunk = "x" * 1023 + "\n"
        for _ in range(int(opts.stderr_mb * 1024)):
            sys.stderr.write(chunk)
        sys.stderr.flush()
    if opts.flood_mb:  # one line of N MB: a client that reads lines whole would hold all of it
        for _ in range(opts.flood_mb):
            sys.stdout.write("x" * (1 << 20))
        sys.stdout.write("\n")
    text = ""
    if opts.ask:
        text = json.dumps(ask_client(msg_id))
    if name == "echo":
        text = args.get("text", "") + text
    elif name == "crash":
        sys.stderr.write("fatal: crashing on purpose\n")
        sys.stderr.flush()
        os._exit(3)
    elif name == "hang":
        return
    elif name == "deaf":
        time.sleep(3600)  # alive, but reading nothing more: the client's writes fill the pipe and block
    elif name == "grow":
        if EXTRA not in tools:
            tools.append(EXTRA)
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        text = "grown"
    elif name == "extra":
        text = "extra ran"
    elif name == "odd":
        text = f"odd ran with {json.dumps(args)}"
    elif name == "environ":
        text = json.dumps(dict(os.environ))
    else:
        send({"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32602, "message": f"unknown tool {name}"}})
        return
    send({"jsonrpc": "2.0", "id": msg_id, "result": {"content": [{"type": "text", "text": text}]}})


if __name__ == "__main__":
    main()
