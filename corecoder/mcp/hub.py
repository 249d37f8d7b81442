"""All the configured MCP servers, and the seam where their tools meet an agent.

The hub starts every server at once (a slow or broken one delays nobody and stops
nothing: its error is kept for /mcp), puts their tools in the agent's tool dict,
and keeps that dict current. A server may announce new tools at any moment, on
its reader thread; the dict is changed only at the start of a round, on the
agent's own thread, so a round never sees its tools change under it.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import NamedTuple

from ..events import RoundStarted
from .client import CALL_TIMEOUT, STARTUP_TIMEOUT, MCPClient, MCPError
from .config import ServerSpec, load_servers
from .tools import MAX_NAME, MCPTool


class ServerStatus(NamedTuple):
    name: str
    state: str  # stopped, starting, ready, error, dead, closed
    tools: int
    note: str  # the last error, else the last warning, else ""


class MCPHub:
    def __init__(self, servers: dict[str, ServerSpec], root: Path, *, startup_timeout: float = STARTUP_TIMEOUT,
                 call_timeout: float = CALL_TIMEOUT):
        self.root = Path(root)
        self.clients = {name: MCPClient(spec, self.root, startup_timeout=startup_timeout, call_timeout=call_timeout)
                        for name, spec in servers.items()}
        self.made: dict[str, dict[str, MCPTool]] = {name: {} for name in servers}  # server -> its tools by name
        self.agent = None

    @classmethod
    def from_config(cls, home: Path, project: Path, **timeouts) -> MCPHub:
        """The servers in CORECODER_HOME/mcp.json and PROJECT/.corecoder/mcp.json. Raises MCPConfigError."""
        return cls(load_servers(home, project), project, **timeouts)

    def start(self) -> MCPHub:
        """Start every server at once; one that fails keeps its error, the others go on."""
        _each(self._connect, list(self.clients))
        for name, client in self.clients.items():  # on this thread: it may change an attached agent's tools
            if client.state == "ready":
                self._make_tools(name)
        return self

    def _connect(self, name: str) -> bool:
        client = self.clients[name]
        try:
            client.start()
            return True
        except MCPError:
            return False  # the client's state and error say what happened; old tools stay, and say it when called
        except Exception as e:  # a bug must not stop the other servers' threads
            client.close()
            client.state, client.error = "error", f"{type(e).__name__}: {e}"
            return False

    def tools(self) -> list[MCPTool]:
        return [tool for made in self.made.values() for tool in made.values()]

    def attach(self, agent) -> None:
        """Give the agent these tools, and keep them current at the start of each of its rounds."""
        self.agent = agent
        agent.update_tools(add=self.tools())
        agent.subscribe(self._on_event)

    def _on_event(self, event) -> None:
        # A sub-agent's rounds arrive wrapped in WorkerEvent, from its own thread: not an instance here.
        if isinstance(event, RoundStarted):
            self.refresh()

    def refresh(self) -> None:
        """List again the tools of every server that said they changed."""
        for name, client in self.clients.items():
            if client.stale.is_set() and client.state in ("ready", "error"):
                try:
                    client.list_tools()
                except MCPError:
                    continue  # the old tools stay; their calls will say what is wrong
                self._make_tools(name)

    def reconnect(self, name: str) -> ServerStatus:
        """Stop one server, start it again, and give the agent its tools as they are now."""
        if name not in self.clients:
            raise KeyError(f"no MCP server named {name!r}; configured: {', '.join(self.clients) or 'none'}")
        if self._connect(name):
            self._make_tools(name)
        return next(row for row in self.status() if row.name == name)

    def status(self) -> list[ServerStatus]:
        """One row per server, for /mcp."""
        return [ServerStatus(name, c.state, len(self.made[name]), c.error or (c.warnings[-1] if c.warnings else ""))
                for name, c in self.clients.items()]

    def close(self) -> None:
        _each(lambda name: self.clients[name].close(), list(self.clients))

    def _make_tools(self, name: str) -> None:
        """Wrap the server's current tools, and swap them into the attached agent's dict."""
        client, made = self.clients[name], {}
        for info in client.tools:
            tool = MCPTool(client, info)
            n = 2
            while tool.name in made:  # two names that differ only past 64 characters, or in a sanitized one
                suffix = f"_{n}"
                tool.name, n = tool.name[: MAX_NAME - len(suffix)] + suffix, n + 1
            made[tool.name] = tool
        if self.agent is not None:
            self.agent.update_tools(add=made.values(), remove=self.made[name])
        self.made[name] = made


def _each(fn, names: list[str]) -> None:
    """fn(name) for every name at once: one slow server must not hold up the others."""
    threads = [threading.Thread(target=fn, args=(name,), name=f"mcp-{name}") for name in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
