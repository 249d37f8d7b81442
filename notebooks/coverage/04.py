"""Chapter 04 · Context: what it teaches of the engine. Tokens estimated by the kind of character
and anchored on the provider's count; the context policy and its three tiers (trim, summarize,
reset), cuts only where a turn begins, the provider's "too long", /compact. corecoder_course/
authoring/coverage.py says how a table is read."""

budget = 185  # net lines its export cells may hold

export = {
    "context.py": (
        "TRIMMED SUMMARY_PROMPT Compactor Compactor.__init__ Compactor.attach Compactor.prepare "
        "Compactor.compact Compactor._trim Compactor._summarize "
        "Compactor._ask_for_summary Compactor._replace turn_start trim transcript"),
    "tokens.py": (
        "CJK SYMBOL PER_MESSAGE DEFAULT_WINDOW WINDOWS text_tokens message_tokens history_tokens "
        "tools_tokens window_for Estimate"),
    "events.py": "Compacted",
}
show = {
    "context.py": "Compactor.overhead Compactor.observe",
    "agent.py": "KeepEverything Agent.ask",
}
