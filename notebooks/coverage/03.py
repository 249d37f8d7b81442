"""Chapter 03 · Talking to a real model: what it teaches of the engine (a plan: the chapter is not
written yet). corecoder/course/authoring/coverage.py says how a table is read."""

budget = 400  # net lines its export cells may hold (the plan exports 349)

export = {
    "scripted.py": (
        "SERVER_KEYS ScriptError parse_turn _parse_call _Recorder ScriptedLLM FunctionLLM"),
    "stream.py": "_Partial ToolCallAssembler _is_json",
    "llm.py": (
        "LLM LLM.__init__ LLM.chat LLM.once LLM.adapt LLM.retry_delay RETRY_STATUS "
        "transient retry_after usage_of"),
    "messages.py": "ModelError ContextTooLong",
    "events.py": (
        "RoundStarted ToolCallStarted ToolCallFinished UsageReported Finished TextDelta "
        "ReasoningDelta Retrying"),
    "pricing.py": "Price price_for cost_of Ledger",
}
show = {
    "llm.py": (
        "reasoning_of tokens IDLE_TIMEOUT REPLY_TIMEOUT LLM.client LLM.explain "
        "OVERLOADED_BACKOFF OUTPUT_LIMIT_REACHED CONTEXT_OVERFLOW StreamDropped "
        "ReplyTooSlow NotAReply Shown quota_exhausted QUOTA TRY_AGAIN overloaded status "
        "detail describe"),
    "messages.py": "CUT_SHORT",
    "pricing.py": "BUILT_IN _FIELDS load_prices read_prices _price _longest_prefix _word_char",
    "stream.py": "ThinkSplitter _partial_tag_length",
    "testing/faults.py": "error_body Fault FAULTS check_fault FaultyScriptedLLM",
    "testing/serve.py": (
        "QUIRKS REASONING_FIELDS FRAGMENT FINISH_REASONS HOLD_SECONDS ScriptServer "
        "_server_keys _Handler _invalid _rejection _usage _content completion _chunk_head "
        "stream_chunks _finish _words tool_call_deltas main"),
    "trace.py": "MARKS CONTROLS printable cut call_line preview Printer",
}
