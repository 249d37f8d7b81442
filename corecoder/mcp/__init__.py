"""The MCP client: other programs' tools, over stdio, as the agent's own (chapter 7).

    config.py   which servers: mcp.json in CORECODER_HOME and the project's .corecoder/
    client.py   one server: its process, JSON-RPC 2.0 line by line, the handshake
    tools.py    its tools as Tool objects named mcp__SERVER__TOOL; results as text
    hub.py      all servers, attached to an agent; /mcp status and reconnect

    hub = MCPHub(load_servers(config.home, project), project).start()
    hub.attach(agent)
    ...
    hub.close()

Standard library only: writing the client is the lesson. The official `mcp` package
is used by the tests alone, to be sure this client talks to real servers.
"""

from .client import MCPClient, MCPError
from .config import MCPConfigError, ServerSpec, load_servers
from .hub import MCPHub
from .tools import MCPTool, render, tool_name

__all__ = ["MCPClient", "MCPError", "MCPConfigError", "ServerSpec", "load_servers", "MCPHub",
           "MCPTool", "render", "tool_name"]
