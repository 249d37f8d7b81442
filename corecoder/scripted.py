"""Models that answer from a script: how the course, the tests and the demo run offline.

A script is plain data: a list of turns, one per model call. A turn is either a
string (the final answer) or a dict:

    {"text": "Let me look.",                      # optional
     "reasoning": "The bug is probably in...",    # optional, shown but never stored
     "tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}],
     "usage": {"prompt_tokens": 812, "completion_tokens": 40}}

`arguments` may also be a raw string, to script malformed JSON. Call ids default
to "call_<turn>_<n>". The same script can be served over HTTP by the loopback server
(corecoder.testing), which also reads a few keys of its own: how to stream the turn
("quirk", "reasoning_field") and faults ("fault": rate limits, dropped streams...),
which corecoder.testing.FaultyScriptedLLM plays too. ScriptedLLM plays replies only.

ScriptedLLM and FunctionLLM have the same `chat` method as the real client
(corecoder.llm), check every history they are handed the way the API would, and
record every request so tests can assert on what the model was sent.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path

from .events import ReasoningDelta, TextDelta
from .messages import IllegalHistory, Reply, ToolCall, Usage, check_history

# for corecoder.testing; "finish_reason": "length" plays a reply cut at the output limit
SERVER_KEYS = ("fault", "retry_after", "quirk", "reasoning_field", "finish_reason")


class ScriptError(RuntimeError):
    """The script itself is wrong or has run out: a bug in a test or a notebook."""


def parse_turn(turn, index: int) -> Reply:
    """One scripted turn as the Reply a real model call would have produced."""
    if isinstance(turn, Reply):
        return turn
    if isinstance(turn, str):
        return Reply(text=turn)
    if not isinstance(turn, dict):
        raise ScriptError(f"turn {index + 1}: expected a string or a dict, "
                          f"got {type(turn).__name__}")
    unknown = set(turn) - {"text", "reasoning", "tool_calls", "usage", *SERVER_KEYS}
    if unknown:
        raise ScriptError(f"turn {index + 1}: unknown keys {sorted(unknown)}")
    calls = [_parse_call(c, index, j) for j, c in enumerate(turn.get("tool_calls") or [])]
    try:
        usage = Usage(**turn["usage"]) if turn.get("usage") else None
    except TypeError as e:
        raise ScriptError(f"turn {index + 1}: bad usage {turn['usage']}: {e}") from None
    return Reply(turn.get("text") or "", calls, turn.get("reasoning") or "", usage)


def _parse_call(call: dict, index: int, j: int) -> ToolCall:
    if "name" not in call:
        raise ScriptError(f"turn {index + 1}, call {j + 1}: a tool call needs a 'name'")
    arguments = call.get("arguments", {})
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return ToolCall(call.get("id") or f"call_{index + 1}_{j + 1}", call["name"], arguments)


class _Recorder:
    """What both scripted models share: check the history, record it, stream the reply."""

    model = "scripted"

    def __init__(self):
        self.requests: list[dict] = []

    def _receive(self, messages: list[dict], tools: list[dict] | None) -> None:
        try:
            check_history(messages)
        except IllegalHistory as e:
            raise IllegalHistory(f"the API would reject this request (400): {e}") from None
        names = [t["function"]["name"] for t in tools or []]
        self.requests.append({"messages": copy.deepcopy(messages), "tools": names})

    @staticmethod
    def _stream(reply: Reply, emit: Callable | None) -> Reply:
        if emit and reply.reasoning:
            emit(ReasoningDelta(reply.reasoning))
        if emit and reply.text:
            emit(TextDelta(reply.text))
        return reply


class ScriptedLLM(_Recorder):
    """Replays a fixed list of turns, one per call, and fails loudly when they run out."""

    def __init__(self, turns: list, model: str = "scripted"):
        super().__init__()
        self.model = model
        for i, turn in enumerate(turns):
            if isinstance(turn, dict) and turn.get("fault"):
                raise ScriptError(f"turn {i + 1} is a fault: corecoder.testing.FaultyScriptedLLM "
                                  "plays faults")
        self.turns = [parse_turn(t, i) for i, t in enumerate(turns)]
        self.position = 0  # the next turn to play

    @classmethod
    def from_json(cls, path: str | Path) -> ScriptedLLM:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        script = data if isinstance(data, dict) else {"turns": data}  # or a bare list of turns
        return cls(script["turns"], model=script.get("model", "scripted"))

    def chat(self, messages: list[dict], tools: list[dict] | None = None,
             emit: Callable | None = None) -> Reply:
        self._receive(messages, tools)
        if self.position >= len(self.turns):
            last = messages[-1] if messages else {}
            raise ScriptError(
                f"the script has {len(self.turns)} turns and all were used by call "
                f"{len(self.requests)}; the last message was {last.get('role')}: "
                f"{str(last.get('content'))[:200]!r}"
            )
        self.position += 1
        return self._stream(self.turns[self.position - 1], emit)


class FunctionLLM(_Recorder):
    """Computes each reply from the messages: `fn(messages, tools) -> turn`."""

    def __init__(self, fn: Callable, model: str = "function"):
        super().__init__()
        self.fn = fn
        self.model = model

    def chat(self, messages: list[dict], tools: list[dict] | None = None,
             emit: Callable | None = None) -> Reply:
        self._receive(messages, tools)
        turn = self.fn(copy.deepcopy(messages), tools or [])
        return self._stream(parse_turn(turn, len(self.requests) - 1), emit)
