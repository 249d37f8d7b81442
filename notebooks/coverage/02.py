"""Chapter 02 · Tools: what it teaches of the engine. What a tool is and the schema check that
guards it, the one path every call takes (admit, perform, bound), and the built-in tools that
read, write, edit, search and run. authoring/coverage.py says how a table is
read."""

budget = 390  # net lines its export cells may hold

export = {
    "tool.py": "ToolError Tool _TYPES _is problems _object_problems",
    "calls.py": (
        "OUTPUT_LIMIT OUTPUTS KEEP_OUTPUTS Gate Job admit perform stopped Executor run_in_order "
        "parse_arguments signature bound _error"),
    "text.py": "marker shorten",
    "files.py": "atomic_write looks_binary",
    "tools/read.py": (
        "DEFAULT_LIMIT MAX_LINE_CHARS MAX_OUTPUT_CHARS ReadFile ReadFile.run split_lines"),
    "tools/edit.py": "EditFile EditFile.run exact tolerant TOLERANT ignoring_line_endings",
    "tools/bash.py": "blocked_reason",
    "tools/__init__.py": "default_tools",
}
show = {
    "workspace.py": "Workspace",
    "tools/read.py": "read_bytes",
    "tools/write.py": "WriteFile",
    "tools/edit.py": "whole_line_breaks line_matches without_line_numbers",
    "tools/search.py": "walk_files Glob Grep",
    "tools/bash.py": "startup_script Bash",
}
skip = [
    {"why": ("what keeps a write safe beyond the temp file and the rename (modes, owners, a FIFO "
             "or a read-only file refused, leftovers of a killed write): atomic_write's docstring "
             "says it, and the module's page shows it"),
     "files.py": "_umask UMASK refuse_to_replace STALE_AFTER remove_stale"},
    {"why": ("reading without hanging on a FIFO or flooding on a huge file: a defence the "
             "experiments of section 6 run through read_bytes, not an idea of its own"),
     "files.py": ("MAX_READ_BYTES CONFIG_LIMIT NotARegularFile FileTooLarge read_regular "
                  "open_regular kind")},
    {"why": ("a path the system refused, in words (which path, and why): perform and the tools "
             "say it through in_words, whose docstring is the idea; section 5 names it"),
     "files.py": "NAME_MAX in_words absent dangling"},
    {"why": ("a file past MAX_READ_BYTES read line by line, never whole: section 6 names "
             "streamed beside run, and its docstring says the rest"),
     "tools/read.py": "streamed HEAD_BYTES PIECE_BYTES skip_lines line_heads cut"},
    {"why": ("text no request can carry (a file name that is not UTF-8): perform calls it, and its "
             "docstring is the whole idea"),
     "text.py": "valid_text _escaped"},
    {"why": ("where a kept output may go and what may be pruned: never through a link the project "
             "holds, only files the engine wrote; keep_output's docstring says it, and chapter 8 "
             "shows why a cloned project is not to be trusted"),
     "calls.py": "keep_output _hashed"},
    {"why": "counting in words (`1 line`, `3 lines`): nothing to teach",
     "tools/read.py": "count", "tools/write.py": "count_lines"},
    {"why": ("the rest of the edit cascade: each step is run by the experiments and the edit "
             "explorer of section 8, and named in its verdict; the module's page shows them"),
     "tools/edit.py": (
         "BOM MORE_CONTEXT Place apply lines_of MAX_DIFF_LINES diff read_text "
         "ignoring_trailing_whitespace "
         "shifted_indentation line_spans line_texts split_lines common_indent dedent reindent "
         "LINE_NUMBER HINT_LINES no_match likeness")},
    {"why": ("glob's and grep's caps, sorting and pattern handling: section 9 runs each cap and "
             "the backtracking timeout and prints what they say, after the tools' code"),
     "tools/search.py": (
         "SKIP_DIRS MAX_GLOB_RESULTS MAX_GREP_FILES MAX_GREP_MATCHES MAX_GREP_SECONDS "
         "MAX_GREP_LINE_CHARS MAX_MATCH_SECONDS path_matches _past_stars BRACES MAX_BRACE_PATTERNS "
         "expand_braces included around compile_pattern must_stop seen is_regular passed_over "
         "_is_dir search_root modified")},
    {"why": ("bash's own plumbing (its limits, the guard's parser and categories): section 10 "
             "runs the cd tracking, the timeout, the bound and the blocklist; chapter 5 builds the "
             "process handling (execute, pump, kill_group)"),
     "tools/bash.py": (
         "DEFAULT_TIMEOUT MAX_TIMEOUT SCRATCH KEEP_BYTES AFTER_EXIT_SECONDS HeadAndTail _GROUP "
         "_TOKEN _SUBSTITUTION _QUOTED _ESCAPED_IN_DOUBLE_QUOTES _HOME _HEREDOC _PREFIXES _SHELL "
         "_INTERPRETER _ROOT_OR_HOME _DISK _MAIN Command Parsed parsed simple_commands "
         "is_download plain program_words short_option wipes writes_a_disk runs_a_download "
         "force_pushes_main _STOPS _RM_ROOT _FORCE_MAIN BLOCKED_COMMANDS GUARD_SECONDS")},
    {"why": ("the commands that only read (ls, grep, git log...), which chapter 8's consent lets "
             "run without a question: a table of programs and the options that would make them "
             "write, and a repository's config that would make git run a program"),
     "tools/bash.py": (
         "READERS GIT_READERS GIT_WRITES GIT_RUNS SHELL_SYNTAX reads_only _is_option "
         "git_config_runs")},
]
