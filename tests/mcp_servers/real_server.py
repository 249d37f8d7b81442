"""A real MCP server, written with the official `mcp` SDK (a test dependency), over stdio.

Tools: `add` (text), `divide` (an error result on zero), `stats` (structured content),
`pixel` (an image). tools/list is served two tools a page, so the client must follow
nextCursor to see them all.
"""

from __future__ import annotations

from typing import TypedDict

from mcp.server.mcpserver import Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ListToolsResult

PAGE = 2


class Paged(MCPServer):
    # MCPServer lists every tool at once; the lowlevel handler it registers is the one
    # place to serve pages. The cursor is the index of the next page's first tool.
    async def _handle_list_tools(self, ctx, params) -> ListToolsResult:
        tools = await self.list_tools()
        start = int(params.cursor) if params is not None and params.cursor else 0
        end = start + PAGE
        return ListToolsResult(tools=tools[start:end], next_cursor=str(end) if end < len(tools) else None)


server = Paged("real", version="1.0.0")


class Stats(TypedDict):
    count: int
    mean: float


@server.tool(description="Add two integers.")
def add(a: int, b: int) -> str:
    return str(a + b)


@server.tool(description="Divide a by b.")
def divide(a: float, b: float) -> str:
    if b == 0:
        raise ToolError("division by zero")  # a deliberate error: its message reaches the client
    return str(a / b)


@server.tool(description="Count and mean of some numbers.", structured_output=True)
def stats(numbers: list[float]) -> Stats:
    return Stats(count=len(numbers), mean=sum(numbers) / len(numbers) if numbers else 0.0)


@server.tool(description="A one-pixel PNG.")
def pixel() -> Image:
    return Image(data=b"\x89PNG\r\n\x1a\n" + bytes(8), format="png")


if __name__ == "__main__":
    server.run("stdio")
