"""Chapter 04 · Context: what it teaches of the engine (a plan: the chapter is not
written yet). corecoder/course/authoring/coverage.py says how a table is read."""

budget = 300  # net lines its export cells may hold (the plan exports 144)

export = {
    "context.py": (
        "TRIMMED SUMMARY_PROMPT Compactor Compactor.__init__ Compactor.prepare "
        "Compactor.compact Compactor._trim Compactor._summarize "
        "Compactor._ask_for_summary Compactor._replace turn_start transcript"),
    "tokens.py": "CJK SYMBOL PER_MESSAGE text_tokens message_tokens history_tokens Estimate",
    "events.py": "Compacted",
}
show = {
    "context.py": "Compactor.overhead Compactor._listen Compactor._observe",
    "tokens.py": "DEFAULT_WINDOW WINDOWS tools_tokens window_for",
}
