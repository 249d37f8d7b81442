"""Chapter 07 · Hooks and MCP: what it teaches of the engine. The perimeter: gates of one's own,
the user's hooks (programs run around each call: exit 2 vetoes, stderr is the reason), and MCP
servers (processes spoken to in newline-delimited JSON-RPC, told apart by shape, whose tools
join the agent's under names of their own). A guest may refuse or add; none may break the loop.
authoring/coverage.py says how a table is read."""

budget = 289  # net lines its export cells may hold

export = {
    "hooks.py": (
        "EVENTS VETO FILE_TOOLS HookError load_hooks Hooks Hooks.__init__ Hooks.before "
        "Hooks.after Hooks._matching Hooks._run tool_input"),
    "mcp/client.py": (
        "PROTOCOL_VERSION STARTUP_TIMEOUT CALL_TIMEOUT MCPError classify MCPClient "
        "MCPClient.__init__ MCPClient.start MCPClient.list_tools MCPClient.call_tool "
        "MCPClient.request MCPClient._receive"),
    "mcp/tools.py": "MAX_NAME tool_name MCPTool render",
}
show = {
    "hooks.py": "PromptRefused Hooks.prompt",
    "mcp/client.py": (
        "server_environment MCPClient.notify MCPClient.close MCPClient._read MCPClient._drain"),
    "mcp/config.py": "MCPConfigError ServerSpec load_servers read_mcp_json _spec",
    "mcp/hub.py": "ServerStatus MCPHub at_once",
}
skip = [
    {"why": "the rest of what hooks.json may hold, as Claude Code has it (the turn's end, a count "
            "for /hooks) and the bounds on what a hook prints: the command's, not the loop's",
     "hooks.py": "Hooks.count Hooks.ended PRINTED_LIMIT READ_LIMIT"},
    {"why": "the client's defences, which the chapter's experiments run and name without reading "
            "them line by line: the versions it accepts, the grace a server gets to exit, the "
            "markers a waiting caller is handed, what a server inherits, a line's bound, a "
            "message written with a deadline, a death said once, a wait that hears Ctrl+C",
     "mcp/client.py": (
         "KNOWN_VERSIONS GRACE GONE CANCELLED INHERITED MAX_MESSAGE lines "
         "MCPClient._not_running MCPClient._send MCPClient._gone wait")},
]
