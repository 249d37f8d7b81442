"""Chapter 09 · Sessions, settings and the command: what it teaches of the engine (a plan: the
chapter is not written yet). The session log and resume, settings, the composition root, and
the command around it: -p's printer and the REPL's renderer, two subscribers.
authoring/coverage.py says how a table is read."""

budget = 160  # net lines its export cells may hold

export = {
    "session.py": "session_path _records _replay repair load",
    "assemble.py": "build_agent",
    "cli/config.py": "parse_model load_config",
}
show = {
    "cli/app.py": (
        "FAILURES STARTUP_ERRORS App start project_routes trust_project assemble start_mcp connect "
        "unexpected count_usage run_once"),
    "cli/__init__.py": "main",
    "cli/config.py": (
        "ConfigError Provider PROVIDERS DEFAULT_MODEL ROUTES NO_KEY Config _LINE read_dotenv "
        "_value find_dotenv _get _api_key _on_this_machine _home _positive require_key"),
    "cli/render.py": "STYLES first_line Renderer",
    "cli/repl.py": (
        "HELP FILES PROMPT PLAN_PROMPT DIFF_LINES KEYS Repl Change changed_files "
        "short_diff ask_trust prompt_session run_repl"),
    "session.py": (
        "ID USAGE_FIELDS SessionError SessionLog SessionInfo list_sessions new_id "
        "_append_fd _read _legal_head extends _cut_torn_tail _sync_dir"),
}
skip = [
    {"why": "terminal plumbing: signals, hang-ups and the argument parser's wording",
     "cli/__init__.py": "parser LEAVE_SECONDS end_on_hangup leave"},
]
