"""Chapter 08 · Shipping it: what it teaches of the engine (a plan: the chapter is not
written yet). corecoder/course/authoring/coverage.py says how a table is read."""

budget = 400  # net lines its export cells may hold (the plan exports 338)

export = {
    "permissions.py": (
        "PLAN_REFUSAL PlanMode Ask Consent Consent.__init__ Consent.before "
        "Consent._allowed Consent._remember"),
    "checkpoints.py": (
        "Snapshot snapshot Checkpoints Checkpoints.__init__ Checkpoints.before "
        "Checkpoints.save Checkpoints.undo Checkpoints._restore"),
    "instructions.py": "NAMES LIMIT instruction_files project_instructions _inside",
    "workspace.py": "git_root project_root project_key",
    "session.py": "session_path _records _replay repair load",
    "assemble.py": "build_agent",
    "cli/config.py": "parse_model load_config",
}
show = {
    "cli/app.py": (
        "FAILURES STARTUP_ERRORS App start trust_project assemble start_mcp connect "
        "unexpected count_usage run_once"),
    "checkpoints.py": (
        "MAX_BYTES KEEP CheckpointError Checkpoints.resume Checkpoints._locked "
        "Checkpoints._kept"),
    "cli/__init__.py": "main",
    "cli/config.py": (
        "ConfigError Provider PROVIDERS DEFAULT_MODEL NO_KEY Config _LINE read_dotenv "
        "_value find_dotenv _get _api_key _on_this_machine _home _positive require_key"),
    "permissions.py": "Consent._load Consent._file",
    "cli/render.py": "STYLES first_line Renderer",
    "cli/repl.py": (
        "HELP FILES PROMPT PLAN_PROMPT DIFF_LINES KEYS Repl Change changed_files "
        "short_diff ask_trust prompt_session run_repl"),
    "session.py": (
        "ID USAGE_FIELDS SessionError SessionLog SessionInfo list_sessions new_id "
        "_append_fd _read _legal_head extends _cut_torn_tail _sync_dir"),
    "trust.py": (
        "FILES LIMIT ProjectConfig read_project_config is_trusted remember_trust "
        "untrusted_note _file _commands"),
}
skip = [
    {"why": "terminal plumbing: signals, hang-ups and the argument parser's wording",
     "cli/__init__.py": "parser LEAVE_SECONDS end_on_hangup leave",},
]
