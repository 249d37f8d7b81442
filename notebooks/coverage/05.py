"""Chapter 05 · Parallel tool calls: what it teaches of the engine. The calls of one reply run at
once with an outcome equal to a run in sequence: admission first, a fork of the workspace per
call merged in call order, a lock per file, results in call order, and stopping that lands.
authoring/coverage.py says how a table is read."""

budget = 130  # net lines its export cells may hold

export = {
    "executor.py": "RunInParallel as_they_finish ctrl_c_noted lock_key",
    "tools/bash.py": "execute pump wait_for_exit kill_group",
}
show = {
    "workspace.py": "Workspace",  # exported whole in chapter 2: its fork and merge are read here
}
