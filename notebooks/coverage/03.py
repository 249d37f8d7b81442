"""Chapter 03 · Talking to a real model: what it teaches of the engine. One chat() for every model:
the scripted ones, the events they stream, the reassembly of tool calls in every dialect, the real
client with its retries and adaptations, and cost. authoring/coverage.py says how
a table is read."""

budget = 355  # net lines its export cells may hold

export = {
    "scripted.py": (
        "SERVER_KEYS ScriptError parse_turn _parse_call _Recorder ScriptedLLM FunctionLLM"),
    "stream.py": "_Partial ToolCallAssembler _is_json",
    "llm.py": (
        "LLM LLM.__init__ LLM.chat LLM.once LLM.send LLM.adapt LLM.retry_delay RETRY_STATUS "
        "transient retry_after usage_of"),
    "messages.py": "ModelError ContextTooLong",
    "events.py": (
        "RoundStarted ToolCallStarted ToolCallFinished UsageReported Finished TextDelta "
        "ReasoningDelta Retrying"),
    "cli/pricing.py": "SCRIPTED Price price_for cost_of Ledger",
}
show = {
    "testing/serve.py": "stream_chunks tool_call_deltas",
    "stream.py": "ThinkSplitter",
    "llm.py": "LLM.client LLM.explain Shown",
    "cli/trace.py": "Printer",
    "testing/faults.py": "FaultyScriptedLLM",
}
skip = [
    {"why": ("the client's smaller defences, each named where it is used (a time limit, a reply "
             "that is not a completion, a quota that is spent, the provider's own words): the "
             "experiments of section 5 run them, and the module's page shows them"),
     "llm.py": (
         "reasoning_of tokens IDLE_TIMEOUT REPLY_TIMEOUT OVERLOADED_BACKOFF OUTPUT_LIMIT_REACHED "
         "CONTEXT_OVERFLOW StreamDropped ReplyTooSlow in_time by_deadline NotAReply "
         "quota_exhausted QUOTA "
         "TRY_AGAIN overloaded status detail describe"),
     "messages.py": "CUT_SHORT"},
    {"why": ("LiteLLM for a provider with no OpenAI-compatible endpoint, an extra: the same "
             "client with the request made by LiteLLM, whose replies and errors have the "
             "OpenAI client's shapes"),
     "llm.py": "LiteLLM"},
    {"why": ("reading a price table (the built-in one, the user's pricing.json laid over it): "
             "files and their errors, not an idea; price_for and the Ledger are the idea"),
     "cli/pricing.py": (
         "BUILT_IN _FIELDS load_prices read_prices _price _longest_prefix _word_char")},
    {"why": "ThinkSplitter's helper: the length of a tag cut at a chunk's end",
     "stream.py": "_partial_tag_length"},
    {"why": ("the fault vocabulary both players share: the chapter plays its faults through the "
             "server and FaultyScriptedLLM, and the module's docstring lists them"),
     "testing/faults.py": "error_body Fault FAULTS check_fault"},
    {"why": ("the loopback server's HTTP plumbing: the chapter runs it (raw chunks, every dialect, "
             "faults, a refused parameter) and shows how it streams; its page shows the rest"),
     "testing/serve.py": (
         "QUIRKS REASONING_FIELDS FRAGMENT FINISH_REASONS HOLD_SECONDS ScriptServer "
         "_server_keys _Handler _invalid _rejection _usage _content completion _chunk_head "
         "_finish _words main")},
    {"why": ("the printer's own helpers (controls made visible, a line cut, a call on one line, a "
             "result's preview): Printer is shown whole, and runs"),
     "cli/trace.py": "MARKS CONTROLS printable to_stderr cut call_line preview"},
]
