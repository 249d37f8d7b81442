"""All the configured MCP servers, and the seam where their tools meet an agent.

The hub starts every server at once (a slow or broken one delays nobody and stops
nothing: its error is kept for /mcp) and gives their tools to the agent. A server may
announce new tools at any moment; the hub lists them as the agent's next round starts,
on the loop's own thread, so a round never sees its tools change under it.

Two servers' names may be one once sanitized (`a.b` and `a_b`): the tool named first keeps
the name, the later one is offered under a name of its own, and the user is told.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path
from typing import NamedTuple

from ..events import RoundStarted
from .client import CALL_TIMEOUT, STARTUP_TIMEOUT, MCPClient, MCPError
from .config import ServerSpec
from .tools import MAX_NAME, MCPTool, tool_name


class ServerStatus(NamedTuple):
    name: str
    state: str  # stopped, starting, ready, error, dead, closed
    tools: int
    note: str  # the last error, else the last warning, else ""


class MCPHub:
    def __init__(self, servers: dict[str, ServerSpec], root: Path, *,
                 startup_timeout: float = STARTUP_TIMEOUT, call_timeout: float = CALL_TIMEOUT):
        self.root = Path(root)
        self.clients = {name: MCPClient(spec, self.root, startup_timeout=startup_timeout,
                                        call_timeout=call_timeout)
                        for name, spec in servers.items()}
        self.made: dict[str, dict[str, MCPTool]] = {name: {} for name in servers}  # by tool name
        self.agent = None

    def start(self) -> MCPHub:
        """Start every server at once; one that fails keeps its error, the others go on."""
        at_once(self._connect, list(self.clients))
        for name, client in self.clients.items():  # on this thread: it may change the agent's tools
            if client.state == "ready":
                self._make_tools(name)
        return self

    def tools(self) -> list[MCPTool]:
        return [tool for made in self.made.values() for tool in made.values()]

    def attach(self, agent) -> None:
        """Give the agent these tools; a reconnect, or a change a server announces, swaps in
        that server's tools as they are then."""
        self.agent = agent
        agent.update_tools(add=self.tools())
        agent.subscribe(self._take_changes)

    def renamed(self, server: str | None = None) -> list[str]:
        """A line for each tool offered under a name not its own (of one server, or of all):
        what the command says at start, and /mcp keeps."""
        return [f"MCP server {t.client.name}: its tool {t.remote!r} is offered as {t.name}, "
                f"since {tool_name(t.client.name, t.remote)} names another tool"
                for t in self.tools() if server in (None, t.client.name)
                and t.name != tool_name(t.client.name, t.remote)]

    def reconnect(self, name: str) -> ServerStatus:
        """Stop one server, start it again, and give the agent its tools as they are now."""
        if name not in self.clients:
            configured = ", ".join(self.clients) or "none"
            raise KeyError(f"no MCP server named {name!r}; configured: {configured}")
        if self._connect(name):
            self._make_tools(name)
        return next(row for row in self.status() if row.name == name)

    def status(self) -> list[ServerStatus]:
        """One row per server, for /mcp."""
        return [ServerStatus(name, c.state, len(self.made[name]),
                             c.error or (c.warnings[-1] if c.warnings else ""))
                for name, c in self.clients.items()]

    def close(self) -> None:
        at_once(lambda name: self.clients[name].close(), list(self.clients))  # side by side

    def _connect(self, name: str) -> bool:
        client = self.clients[name]
        try:
            client.start()
            return True
        except MCPError:
            return False  # the state and the error say why; old tools stay, and say it when called
        except Exception as e:  # a bug must not stop the other servers' threads
            client.close()
            client.state, client.error = "error", f"{type(e).__name__}: {e}"
            return False

    def _take_changes(self, event) -> None:
        """As a round starts, before its request is built: list anew the tools of each server
        that said they changed. A listing that fails leaves the old tools, and says why in /mcp."""
        if not isinstance(event, RoundStarted):
            return
        for name, client in self.clients.items():
            if client.state == "ready" and client.tools_changed.is_set():
                try:
                    client.list_tools()
                    self._make_tools(name)
                except Exception as e:  # an MCPError, or a bug: either way the round goes on
                    client.error = (f"its tools changed, but listing them failed ({e}); the agent "
                                    f"keeps the old ones: `/mcp reconnect {name}` lists them anew")

    def _make_tools(self, name: str) -> None:
        """Wrap the server's current tools, and swap them in for the ones the agent has."""
        client, made = self.clients[name], {}
        # another server's names too: `a.b` and `a_b` are one name once sanitized
        taken = {tool for other, tools in self.made.items() if other != name for tool in tools}
        for info in client.tools:
            tool = MCPTool(client, info)
            while tool.name in made or tool.name in taken:  # the same once sanitized or cut to 64
                # A name of its own, the same at every start; the name it tries is in the hash
                # too, so should even that one be taken, the next try differs.
                mark = hashlib.sha256(f"{name}\0{tool.remote}\0{tool.name}".encode()).hexdigest()
                tool.name = f"{tool.name[:MAX_NAME - 7]}_{mark[:6]}"
            made[tool.name] = tool
        if self.agent is not None:
            self.agent.update_tools(add=made.values(), remove=self.made[name])
        self.made[name] = made
        client.warnings.extend(n for n in self.renamed(name) if n not in client.warnings)


def at_once(fn, names: list[str]) -> None:
    """fn(name) for every name, each on a thread of its own: one slow server holds up no other."""
    threads = [threading.Thread(target=fn, args=(name,), name=f"mcp-{name}") for name in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
