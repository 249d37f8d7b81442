"""Chapter 02 · Tools: what it teaches of the engine (a plan: the chapter is not
written yet). corecoder/course/authoring/coverage.py says how a table is read."""

budget = 400  # net lines its export cells may hold (the plan exports 378)

export = {
    "tools/base.py": "ToolError Tool _TYPES _is problems _object_problems",
    "calls.py": (
        "OUTPUT_LIMIT OUTPUTS KEEP_OUTPUTS Gate Job admit perform stopped run_in_order "
        "parse_arguments signature _error"),
    "workspace.py": "Workspace Workspace.__post_init__ Workspace.resolve Workspace.show",
    "text.py": "marker shorten",
    "files.py": "atomic_write looks_binary",
    "tools/read.py": "ReadFile ReadFile.run split_lines",
    "tools/edit.py": "EditFile EditFile.run exact tolerant TOLERANT ignoring_line_endings",
    "tools/bash.py": "blocked_reason",
    "tools/__init__.py": "default_tools",
}
show = {
    "calls.py": "bound",
    "files.py": (
        "_umask UMASK refuse_to_replace STALE_AFTER remove_stale MAX_READ_BYTES "
        "NotARegularFile FileTooLarge read_regular kind"),
    "text.py": "valid_text _escaped",
    "tools/bash.py": (
        "DEFAULT_TIMEOUT MAX_TIMEOUT SCRATCH KEEP_BYTES AFTER_EXIT_SECONDS Bash "
        "startup_script HeadAndTail _COMMAND_START _ROOT_OR_HOME _HERE _RM _DISK "
        "_GIT_PUSH _FORCE _RM_ROOT _FORCE_MAIN BLOCKED_COMMANDS GUARD_SECONDS"),
    "tools/edit.py": (
        "BOM MORE_CONTEXT Place apply lines_of read_text whole_line_breaks "
        "ignoring_trailing_whitespace shifted_indentation line_spans line_texts "
        "split_lines line_matches common_indent dedent reindent LINE_NUMBER "
        "without_line_numbers HINT_LINES no_match likeness"),
    "tools/read.py": "DEFAULT_LIMIT MAX_LINE_CHARS MAX_OUTPUT_CHARS count read_bytes",
    "tools/search.py": (
        "SKIP_DIRS MAX_GLOB_RESULTS MAX_GREP_FILES MAX_GREP_MATCHES MAX_GREP_SECONDS "
        "MAX_GREP_LINE_CHARS MAX_MATCH_SECONDS walk_files path_matches _past_stars "
        "expand_braces Glob Grep included around compile_pattern _is_dir search_root "
        "modified"),
    "tools/write.py": "WriteFile count_lines",
}
