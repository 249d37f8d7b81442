"""An MCP server's tools, as tools the agent can call like its own.

`mcp__SERVER__TOOL` keeps two servers' `search` apart and tells the user where a
call goes. The model sees the server's description and input schema unchanged; the
result comes back as text, because that is all a tool message holds.
"""

from __future__ import annotations

import json
import re

from ..tool import Tool, ToolError
from ..workspace import Workspace
from .client import MCPClient, MCPError

MAX_NAME = 64  # what the OpenAI API allows for a function name


def tool_name(server: str, tool: str) -> str:
    """`mcp__SERVER__TOOL`, with anything outside [A-Za-z0-9_-] made `_`, cut to 64 characters."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", f"mcp__{server}__{tool}")[:MAX_NAME]


class MCPTool(Tool):
    mutating = True  # we can't know what a server's tool changes, so consent asks

    def __init__(self, client: MCPClient, info: dict):
        self.client = client
        self.remote = info["name"]  # the server's own name for it, used in tools/call
        self.name = tool_name(client.name, self.remote)
        self.description = info.get("description") or info.get("title") or \
            f"{self.remote} (MCP server {client.name})"
        schema = info.get("inputSchema")
        self.parameters = schema if isinstance(schema, dict) and schema else {"type": "object"}

    def run(self, ws: Workspace, **args) -> str:
        try:
            result = self.client.call_tool(self.remote, args, cancelled=ws.cancelled)
        except MCPError as e:
            raise ToolError(f"MCP server {self.client.name} could not run {self.remote}: "
                            f"{e}") from None
        text = render(result)
        if result.get("isError"):
            raise ToolError(text or f"{self.remote} reported an error without a message")
        return text


def render(result: dict) -> str:
    """A tools/call result as text: text as it is; anything else as a mark of what it was
    (`[image: image/png]`, `[resource: file:///a.txt]`), with a resource's own text after it."""
    parts, texts = [], 0
    for item in result.get("content") or []:
        item = item if isinstance(item, dict) else {}
        resource = item.get("resource") if isinstance(item.get("resource"), dict) else {}
        if item.get("type") == "text":
            parts.append(str(item.get("text", "")))
            texts += 1
            continue
        what = item.get("mimeType") or resource.get("uri") or item.get("uri")
        parts.append(f"[{item.get('type')}: {what}]" if what else f"[{item.get('type')} content]")
        if isinstance(resource.get("text"), str):
            parts.append(resource["text"])
            texts += 1
    structured = result.get("structuredContent")
    if structured is not None and not texts:  # servers should mirror it in text; some don't
        parts.append(json.dumps(structured, ensure_ascii=False, indent=2))
    return "\n".join(parts)
