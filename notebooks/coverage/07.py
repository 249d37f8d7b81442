"""Chapter 07 · Hooks and MCP: what it teaches of the engine (a plan: the chapter is not
written yet). authoring/coverage.py says how a table is read."""

budget = 290  # net lines its export cells may hold

export = {
    "hooks.py": (
        "EVENTS VETO FILE_TOOLS HookError load_hooks Hooks Hooks.__init__ Hooks.before "
        "Hooks.after Hooks._matching Hooks._run tool_input"),
    "mcp/client.py": (
        "PROTOCOL_VERSION MCPError classify MCPClient MCPClient.__init__ MCPClient.start "
        "MCPClient.list_tools MCPClient.call_tool MCPClient.request MCPClient._receive"),
    "mcp/tools.py": "tool_name MCPTool render",
}
show = {
    "hooks.py": "PromptRefused Hooks.count Hooks.prompt Hooks.ended PRINTED_LIMIT READ_LIMIT",
    "mcp/client.py": (
        "KNOWN_VERSIONS STARTUP_TIMEOUT CALL_TIMEOUT GRACE GONE CANCELLED INHERITED "
        "server_environment MAX_MESSAGE lines MCPClient.notify MCPClient.close "
        "MCPClient._not_running MCPClient._send MCPClient._read MCPClient._drain "
        "MCPClient._gone wait"),
    "mcp/config.py": "MCPConfigError ServerSpec load_servers read_mcp_json _spec",
    "mcp/hub.py": "ServerStatus MCPHub at_once",
    "mcp/tools.py": "MAX_NAME",
}
