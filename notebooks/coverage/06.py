"""Chapter 06 · Planning and delegation: what it teaches of the engine. A plan the model keeps
(the todo list, its rules, a state note), and helpers with a window of their own: a sub-agent
built by the factory the tool is handed, teams bounded in size and in how many run at once,
reports in input order, Ctrl+C reaching the workers, their events reaching the parent.
authoring/coverage.py says how a table is read."""

budget = 140  # net lines its export cells may hold

export = {
    "subagents.py": (
        "MAX_WORKERS AT_ONCE REPORT_LIMIT WORKER_ROUNDS Spawn AgentTool workers "
        "Cancellable"),
    "tools/todo.py": "MARKS TodoWrite check_todos render_todos",
    "events.py": "WorkerEvent",
}
show = {}
