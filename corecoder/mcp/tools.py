"""An MCP server's tools, as tools the agent can call like its own.

`mcp__SERVER__TOOL` keeps two servers' `search` apart and tells the user where a
call goes. The model sees the server's description and input schema unchanged; the
result comes back as text, because that is all a tool message holds.
"""

from __future__ import annotations

import json
import re

from ..tools.base import Tool, ToolError
from ..workspace import Workspace
from .client import MCPClient, MCPError

MAX_NAME = 64  # what the OpenAI API allows for a function name


def tool_name(server: str, tool: str) -> str:
    """`mcp__SERVER__TOOL`, with anything outside [A-Za-z0-9_-] made `_`, cut to 64 characters."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", f"mcp__{server}__{tool}")[:MAX_NAME]


class MCPTool(Tool):
    mutating = True  # we can't know what a server's tool changes, so consent asks

    def __init__(self, client: MCPClient, info: dict, name: str | None = None):
        self.client = client
        self.remote = info["name"]  # the server's own name for it, used in tools/call
        self.name = name or tool_name(client.name, self.remote)
        self.description = info.get("description") or info.get("title") or f"{self.remote} (MCP server {client.name})"
        schema = info.get("inputSchema")
        self.parameters = schema if isinstance(schema, dict) and schema else {"type": "object"}

    def run(self, ws: Workspace, **args) -> str:
        try:
            result = self.client.call_tool(self.remote, args, cancelled=ws.cancelled)
        except MCPError as e:
            raise ToolError(f"MCP server {self.client.name} could not run {self.remote}: {e}") from None
        text = render(result)
        if result.get("isError"):
            raise ToolError(text or f"{self.remote} reported an error without a message")
        return text


def render(result: dict) -> str:
    """A tools/call result as text: text as is, other content as a short mark of what it was."""
    parts, texts = [], 0
    for item in result.get("content") or []:
        kind = item.get("type") if isinstance(item, dict) else None
        if kind == "text":
            parts.append(str(item.get("text", "")))
            texts += 1
        elif kind in ("image", "audio"):
            parts.append(f"[{kind}: {item.get('mimeType', 'unknown type')}, {_size(item.get('data', ''))} bytes]")
        elif kind == "resource":
            resource = item.get("resource") or {}
            parts.append(f"[resource: {resource.get('uri', '?')}]")
            if isinstance(resource.get("text"), str):
                parts.append(resource["text"])
                texts += 1
        elif kind == "resource_link":
            parts.append(f"[resource: {item.get('uri', '?')}]")
        else:
            parts.append(f"[{kind} content]")
    structured = result.get("structuredContent")
    if structured is not None and not texts:  # servers should mirror it in text; some don't
        parts.append(json.dumps(structured, ensure_ascii=False, indent=2))
    return "\n".join(parts)


def _size(data: str) -> int:
    """How many bytes a base64 string decodes to, without decoding it."""
    data = data.strip() if isinstance(data, str) else ""
    return len(data) * 3 // 4 - data[-2:].count("=")
