"""Chapter 09 · Sessions, settings and the command: what it teaches of the engine. The session
log, written by a subscriber, and read back into a legal history; the id that never leads
outside; the settings; the composition root; the command around it, -p's printer and the
REPL's renderer, two subscribers.
authoring/coverage.py says how a table is read."""

budget = 165  # net lines its export cells may hold

export = {
    "session.py": "ID USAGE_FIELDS session_path _records _replay repair load",
    "assemble.py": "build_agent",
    "cli/config.py": "parse_model load_config",
}
show = {
    "session.py": (
        "SessionError SessionLog SessionInfo list_sessions new_id _message_ok _read _legal_head "
        "extends _cut_torn_tail _append_fd _sync_dir"),
    "cli/config.py": "Provider Config read_dotenv find_dotenv _api_key _positive require_key",
    "cli/app.py": "start assemble run_once",
    "cli/__init__.py": "main",
    "cli/render.py": "Renderer",
}
skip = [
    {"why": "the session file's format: a file a newer engine wrote is refused in one line (the "
            "record table in section 1 names it)",
     "session.py": "FORMAT _known_format"},
    {"why": ("`corecoder --acp`, the command for an editor (the Agent Client Protocol): one more "
             "front end, a subscriber that sends the events as session/update notifications and "
             "an asker that sends consent's questions as permission requests, over JSON-RPC"),
     "cli/acp.py": (
         "PROTOCOL_VERSION KINDS OPTIONS PLAN_STATUS plan "
         "Peer Server Invalid need prompt_text block_text mcp_servers title updates started chunk "
         "history run_acp")},
    {"why": ("steering in the terminal: while a turn runs, the keys are read one at a time; a "
             "line is said to the turn (Agent.steer, chapter 1), a command waits for its end, "
             "Esc Esc stops it as Ctrl+C does"),
     "cli/steering.py": "Steering"},
    {"why": "terminal plumbing: signals, hang-ups and the argument parser's wording",
     "cli/__init__.py": "parser LEAVE_SECONDS end_on_hangup leave"},
    {"why": "the settings' data: the presets (a cell prints them), the default model, the names "
            "of the settings that route the conversation, a local server's placeholder key, a "
            ".env line's pattern; and the error a wrong setting raises",
     "cli/config.py": "PROVIDERS BACKENDS DEFAULT_MODEL ROUTES NO_KEY _LINE ConfigError"},
    {"why": "small helpers of reading the settings: a value's quotes, the first variable that "
            "is set, the endpoint (refused when it is no http or https address), whether a URL "
            "is on this machine, the home's default, a number within bounds, the model's name "
            "as the backend (CORECODER_PROVIDER) has it",
     "cli/config.py": "_value _get _endpoint _is_address _on_this_machine _home _between "
                      "model_spec"},
    {"why": "the flags that stand for a setting, so that an error about a value the user gave "
            "as a flag names the flag",
     "cli/config.py": "FLAGS as_typed"},
    {"why": "what start() calls, each taught where its subject is (trust in chapter 8, MCP "
            "servers in chapter 7, the model client and cost in chapter 3), the record they "
            "fill, and the errors that end a task or a start in one line",
     "cli/app.py": (
         "FAILURES STARTUP_ERRORS App project_routes trust_project start_mcp connect unexpected "
         "count_usage play")},
    {"why": "the REPL's commands and terminal: each command a few lines over the app's pieces; "
            "the chapter drives the REPL with a script and shows its screen",
     "cli/repl.py": (
         "HELP FILES PROMPT PLAN_PROMPT DIFF_LINES KEYS Repl Change changed_files short_diff "
         "ask_trust prompt_session run_repl")},
    {"why": "how the renderer colours a result, cuts its first line, and how much of it "
            "/verbosity shows",
     "cli/render.py": "STYLES FULL_RESULT VERBOSITY first_line"},
]
