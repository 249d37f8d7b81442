"""The conversation as the chat API sees it, and the one rule that keeps it alive.

Messages are plain dicts in the OpenAI chat format, so what you print is exactly
what is sent. The rule: every tool call an assistant makes is answered by exactly
one tool message carrying its id, right after it, in call order; and no tool
message appears without such a call. Break it and every later request fails with
a 400 ("messages with role 'tool' must be a response to a preceding message with
'tool_calls'"), and the session is dead. `check_history` is the single definition
of that rule; everything that edits a history is tested against it.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field, replace


def system(text: str) -> dict:
    return {"role": "system", "content": text}


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def assistant(text: str = "", tool_calls: list[ToolCall] = ()) -> dict:
    message = {"role": "assistant", "content": text}
    if tool_calls:
        message["tool_calls"] = [call.as_dict() for call in tool_calls]
    return message


def tool_result(call_id: str, content: str) -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


@dataclass(frozen=True)
class ToolCall:
    """One function call the model asked for. `arguments` is the raw JSON text it
    sent: parsing it is the agent's job, so a malformed string can be reported."""

    id: str
    name: str
    arguments: str = "{}"

    def as_dict(self) -> dict:
        function = {"name": self.name, "arguments": self.arguments}
        return {"id": self.id, "type": "function", "function": function}


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0


@dataclass
class Reply:
    """What one model call returns, whichever model produced it."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    reasoning: str = ""  # shown to the user; kept in the history only where a provider requires it
    usage: Usage | None = None
    keep_reasoning: bool = False  # DeepSeek and Kimi want it back on tool-call turns

    def message(self) -> dict:
        message = assistant(self.text, self.tool_calls)
        if self.keep_reasoning and self.reasoning and self.tool_calls:
            message["reasoning_content"] = self.reasoning
        return message


class ModelError(RuntimeError):
    """A model call failed for good (after any retries). The message says what to do."""


class ContextTooLong(ModelError):
    """The provider says the request is longer than the model's context window."""


# Placeholders a history may hold, where something is missing:
NAMELESS = "no_name_given"  # the name of a call that came without a tool name
INTERRUPTED = "[interrupted: the user stopped this call before it finished]"  # a result, on Ctrl+C

# How a note of the agent's state begins (`Agent.tell_state`): a user message the user never wrote.
STATE_NOTE = "[a note from the agent, not the user: this part of its state has changed]"


def is_state_note(message: dict) -> bool:
    return message["role"] == "user" and str(message["content"]).startswith(STATE_NOTE)


def unique_ids(calls: list[ToolCall], history: list[dict]) -> list[ToolCall]:
    """The calls, with a fresh id for any that is missing or already used in the history, and
    a placeholder name for a call that came without one.

    Some providers send no id, or "call_0" on every turn; the history needs each id once. A
    call with no name would be refused by the API in every later request: the session would be
    dead.
    """
    used = {c["id"] for m in history for c in m.get("tool_calls") or []}
    fixed = []
    for call in calls:
        if not call.name:
            call = replace(call, name=NAMELESS)
        if not call.id or call.id in used:
            n = len(used)
            while f"call_{n}" in used:
                n += 1
            call = replace(call, id=f"call_{n}")
        used.add(call.id)
        fixed.append(call)
    return fixed


class IllegalHistory(ValueError):
    """A history the chat API would reject. The message names the first violation."""


ROLES = ("system", "user", "assistant", "tool")


def check_history(messages: list[dict]) -> None:
    """Raise IllegalHistory at the first message that breaks the pairing rule."""
    seen_ids: set[str] = set()
    # ids of the current assistant's calls not yet answered, in call order: a deque, so that
    # taking the first off is one step however many calls wait (a reply may make 100,000)
    waiting: deque[str] = deque()
    for i, message in enumerate(messages):
        role = message.get("role")
        where = f"message {i} ({role})"
        if role not in ROLES:
            raise IllegalHistory(f"{where}: unknown role; expected one of {', '.join(ROLES)}")
        if role == "tool":
            _check_answer(message, waiting, where)
            waiting.popleft()
            continue
        if waiting:
            raise IllegalHistory(f"{where}: tool call {waiting[0]!r} is unanswered; "
                                 "its result must come first")
        if role == "system" and i != 0:
            raise IllegalHistory(f"{where}: a system message may only come first")
        if role == "assistant":
            waiting = deque(_call_ids(message, seen_ids, where))
    if waiting:
        raise IllegalHistory(f"the history ends with tool call {waiting[0]!r} unanswered")


def _check_answer(message: dict, waiting: deque[str], where: str) -> None:
    call_id = message.get("tool_call_id")
    if not waiting:
        raise IllegalHistory(f"{where}: orphan tool result {call_id!r}: "
                             "no assistant tool call is waiting for it")
    if call_id != waiting[0] and call_id in waiting:  # searched only on the way to an error
        raise IllegalHistory(f"{where}: result for {call_id!r} is out of order; "
                             f"{waiting[0]!r} comes first")
    if call_id != waiting[0]:
        raise IllegalHistory(f"{where}: result for {call_id!r} answers no pending call "
                             f"(waiting for {waiting[0]!r})")


def _call_ids(message: dict, seen_ids: set[str], where: str) -> list[str]:
    ids = []
    for call in message.get("tool_calls") or []:
        call_id = call.get("id")
        if not call_id:
            raise IllegalHistory(f"{where}: a tool call has no id")
        if call_id in seen_ids:
            raise IllegalHistory(f"{where}: duplicate tool call id {call_id!r}")
        if not call.get("function", {}).get("name"):
            raise IllegalHistory(f"{where}: tool call {call_id!r} has no function name")
        seen_ids.add(call_id)
        ids.append(call_id)
    return ids


# --- defences: what a resumed session puts where a crash cut a call short (chapter 9)

CUT_SHORT = "[interrupted: the session ended before this call finished]"  # a result, after a crash
