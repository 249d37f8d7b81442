"""Which MCP servers to start: `mcp.json` in CORECODER_HOME and in the project's `.corecoder/`.

    {"mcpServers": {"files": {"command": "npx", "args": ["-y", "a-server"], "env": {"KEY": "..."}}}}

The project's file is read second, so its entry wins over the home entry of the
same name. A file that can't be used is an error that names it, never a traceback.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ..files import CONFIG_LIMIT, read_regular


class MCPConfigError(ValueError):
    """An mcp.json that can't be used. The message names the file and what is wrong."""


@dataclass(frozen=True)
class ServerSpec:
    name: str
    command: str
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)


def load_servers(home: Path, project: Path | None) -> dict[str, ServerSpec]:
    """Every configured server: the home file's, then the project's over them (None: the
    project is not trusted, see trust.py)."""
    servers: dict[str, ServerSpec] = {}
    paths = [Path(home) / "mcp.json", *([project / ".corecoder" / "mcp.json"] if project else [])]
    for path in paths:
        servers.update(read_mcp_json(path))
    return servers


def read_mcp_json(path: Path) -> dict[str, ServerSpec]:
    """One mcp.json; a missing file configures nothing."""
    try:
        text = read_regular(path, CONFIG_LIMIT).decode("utf-8-sig")  # what trust could show
    except (FileNotFoundError, NotADirectoryError):
        return {}
    except (OSError, UnicodeDecodeError) as e:
        raise MCPConfigError(f"{path}: cannot read it: {e}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        where = f"{e.msg} at line {e.lineno}, column {e.colno}"
        raise MCPConfigError(f"{path}: not valid JSON: {where}") from None
    except RecursionError:
        raise MCPConfigError(f"{path}: nested too deeply to read") from None
    servers = data.get("mcpServers", {}) if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        shape = '{"mcpServers": {name: {"command": ..., "args": [...]}}}'
        raise MCPConfigError(f"{path}: expected {shape}")
    return {name: _spec(path, name, entry) for name, entry in servers.items()}


def _spec(path: Path, name: str, entry) -> ServerSpec:
    where = f"{path}: server {name!r}"
    if not isinstance(entry, dict):
        raise MCPConfigError(f"{where} should be an object with a command, "
                             f"got {type(entry).__name__}")
    command, args, env = entry.get("command"), entry.get("args", []), entry.get("env", {})
    if not isinstance(command, str) or not command.strip():
        kind = entry.get("type") or ("http" if "url" in entry else "")
        hint = f" (a {kind} server? only stdio servers, started by a command, are supported)"
        hint = hint if kind else ""
        raise MCPConfigError(f'{where} needs "command": the program to start{hint}')
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise MCPConfigError(f'{where}: "args" should be a list of strings')
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise MCPConfigError(f'{where}: "env" should map names to string values')
    return ServerSpec(name, command, list(args), dict(env))
