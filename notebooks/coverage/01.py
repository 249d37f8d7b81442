"""Chapter 01 · The loop: what it teaches of the engine. Messages and the one rule of a legal
history, the events the loop emits, and the loop itself, built one method at a time.
authoring/coverage.py says how a table is read."""

budget = 250  # net lines its export cells may hold

export = {
    "messages.py": (
        "system user tool_result ToolCall assistant IllegalHistory ROLES check_history "
        "_check_answer _call_ids Usage Reply STATE_NOTE is_state_note NAMELESS INTERRUPTED "
        "unique_ids"),
    "agent.py": (
        "BASE_PROMPT Model ContextPolicy Subscriber KeepEverything labelled paragraph Agent "
        "Agent.__init__ Agent.subscribe Agent.emit Agent.steer Agent.run Agent.ask Agent.request "
        "Agent.state Agent.tell_state Agent.chat "
        "Agent.answer Agent.update_tools"),
}
show = {"calls.py": "admit run_in_order", "events.py": "ToolCallFinished"}
