"""A starter MCP server, the standard library's only: it keeps notes in notes.json, in the folder
the agent runs in. Copy this file and mcp.json into your project's .corecoder/ folder (or your
own $CORECODER_HOME), and corecoder offers its tools as mcp__notes__add_note and
mcp__notes__list_notes. Over stdio: one JSON-RPC message a line in, one a line out.
"""
import json
import sys
from pathlib import Path

NOTES = Path("notes.json")
TOOLS = [
    {"name": "add_note", "description": "Keep a note.",
     "inputSchema": {"type": "object", "required": ["text"],
                     "properties": {"text": {"type": "string"}}}},
    {"name": "list_notes", "description": "Every note kept, oldest first.",
     "inputSchema": {"type": "object", "properties": {}}},
]


def notes() -> list[str]:
    return json.loads(NOTES.read_text(encoding="utf-8")) if NOTES.exists() else []


def call(name: str, args: dict) -> str:
    if name == "add_note":
        NOTES.write_text(json.dumps([*notes(), args["text"]]), encoding="utf-8")
        return f"kept: {args['text']}"
    if name == "list_notes":
        return "\n".join(f"- {note}" for note in notes()) or "no notes yet"
    raise ValueError(f"no tool named {name}")


def answer(request: dict) -> dict:
    method, params = request["method"], request.get("params") or {}
    if method == "initialize":
        return {"result": {"protocolVersion": params.get("protocolVersion", "2025-06-18"),
                           "serverInfo": {"name": "notes", "version": "1.0"},
                           "capabilities": {"tools": {}}}}
    if method == "tools/list":
        return {"result": {"tools": TOOLS}}
    if method == "tools/call":
        try:
            text = call(params["name"], params.get("arguments") or {})
            return {"result": {"content": [{"type": "text", "text": text}]}}
        except Exception as e:  # the model reads the error as the call's result
            return {"result": {"content": [{"type": "text", "text": str(e)}], "isError": True}}
    return {"error": {"code": -32601, "message": f"no method {method}"}}


for line in sys.stdin:
    request = json.loads(line)
    if "id" in request:  # a notification needs no answer
        print(json.dumps({"jsonrpc": "2.0", "id": request["id"], **answer(request)}), flush=True)
