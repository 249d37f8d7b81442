"""Chapter 06 · Sub-agents and teams: what it teaches of the engine (a plan: the chapter is not
written yet). authoring/coverage.py says how a table is read."""

budget = 150  # net lines its export cells may hold (the plan exports 130)

export = {
    "subagents.py": (
        "MAX_WORKERS AT_ONCE REPORT_LIMIT WORKER_ROUNDS Spawn AgentTool workers "
        "Cancellable"),
    "tools/todo.py": "MARKS TodoWrite render_todos",
    "events.py": "WorkerEvent",
}
show = {}
