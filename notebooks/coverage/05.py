"""Chapter 05 · Parallel tool calls: what it teaches of the engine (a plan: the chapter is not
written yet). corecoder/course/authoring/coverage.py says how a table is read."""

budget = 250  # net lines its export cells may hold (the plan exports 132)

export = {
    "executor.py": "RunInParallel as_they_finish ctrl_c_noted lock_key",
    "tools/bash.py": "execute pump wait_for_exit kill_group",
}
show = {}  # the Workspace, fork and merge with it, is exported whole in chapter 2
