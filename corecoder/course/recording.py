"""A recording of an agent run, round by round, and its plain-text rendering.

`record(agent)` subscribes a `Recording` to the agent's events. For each round it
keeps what the model was sent (the history at the moment of the call), what it
replied (text and tool calls), and what each tool answered. It is only a
subscriber: the agent does not know it is being watched.

The text rendering is the viewer's twin: the widget (viewer.py) is for stepping
through in JupyterLab, this text is what nbval checks and the static site shows.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from ..events import (
    Finished,
    ReasoningDelta,
    RoundStarted,
    ToolCallFinished,
    ToolCallStarted,
    UsageReported,
)
from ..messages import ToolCall, Usage
from ..trace import MARKS, call_line, cut, preview

WIDTH = 100


@dataclass
class Answer:
    """What a tool returned for one call."""

    call: ToolCall
    result: str
    status: str  # ok, bad_arguments, unknown_tool, refused, failed, interrupted


@dataclass
class Round:
    number: int
    # the history; the system prompt and tool schemas go too
    sent: list[dict] = field(default_factory=list)
    reply: dict | None = None  # the assistant message; None if the call never returned
    reasoning: str = ""
    usage: Usage | None = None
    answers: list[Answer] = field(default_factory=list)
    ended: str = ""  # answer, max_rounds, interrupted or error, if the run ended in this round
    note: str = ""  # the loop's closing words when it stopped without an answer

    def in_call_order(self) -> list[Answer]:
        """The answers in the order of the calls (calls run in parallel finish in any order)."""
        order = {c["id"]: i for i, c in enumerate((self.reply or {}).get("tool_calls") or [])}
        return sorted(self.answers, key=lambda a: order.get(a.call.id, len(order)))


class Recording:
    """Subscribe it to an agent; it fills `rounds` as the agent works."""

    def __init__(self, agent):
        self.agent = agent
        self.rounds: list[Round] = []
        self._taken = False  # has this round's request been copied yet?

    def __call__(self, event) -> None:
        if isinstance(event, RoundStarted):
            self._close()
            self.rounds.append(Round(event.round))
            self._taken = False
            return
        if not self.rounds:
            return
        now = self.rounds[-1]
        if isinstance(event, ReasoningDelta):
            now.reasoning += event.text
        elif isinstance(event, (UsageReported, ToolCallStarted, ToolCallFinished, Finished)):
            self._take(now)
            if isinstance(event, UsageReported):
                now.usage = event.usage
            elif isinstance(event, ToolCallFinished):
                now.answers.append(Answer(event.call, event.result, event.status))
            elif isinstance(event, Finished):
                self._close()
                now.ended = event.reason
                now.note = "" if event.reason == "answer" else event.text

    def _take(self, now: Round) -> None:
        # The first event after the model call. The history is what the model was sent,
        # unless the reply has already joined it as the last message.
        if self._taken:
            return
        self._taken = True
        history = self.agent.messages
        if history and history[-1].get("role") == "assistant":
            now.sent, now.reply = copy.deepcopy(history[:-1]), copy.deepcopy(history[-1])
        else:
            now.sent = copy.deepcopy(history)

    def _close(self) -> None:
        # The round is over (a new one starts, or the run finished): by now the reply
        # follows what was sent, whenever the loop appended it.
        if not self.rounds or self.rounds[-1].reply is not None:
            return
        now, history = self.rounds[-1], self.agent.messages
        after = len(now.sent)
        if self._taken and len(history) > after and history[after].get("role") == "assistant":
            now.reply = copy.deepcopy(history[after])

    @property
    def tool_count(self) -> int:
        return len(self.agent.tools)

    def text(self, result_lines: int = 12) -> str:
        """Every round as plain text."""
        return "\n".join(round_text(r, self.tool_count, result_lines) for r in self.rounds)


def record(agent) -> Recording:
    """Start recording `agent`'s rounds; returns the Recording."""
    recording = Recording(agent)
    agent.subscribe(recording)
    return recording


def message_line(index: int, message: dict) -> str:
    """One message of a history as one line: `[2] assistant  Let me look. → read_file(...)`."""
    role = message.get("role", "?")
    body = " ".join(str(message.get("content") or "").split())  # on one line: whitespace as spaces
    if role == "tool":
        body = f"{message.get('tool_call_id')}: {body}"
    calls = message.get("tool_calls") or []
    if calls:
        asked = ", ".join(c["function"]["name"] for c in calls)
        body = f"{cut(body, 70)} → {asked}" if body else f"→ {asked}"
    return cut(f"  {f'[{index}]':>4} {role:<10} {body}", WIDTH)


def outline(messages: list[dict], start: int = 0) -> str:
    """A history as one line per message, numbered from `start` (as `check_history` counts)."""
    return "\n".join(message_line(i, m) for i, m in enumerate(messages, start))


def round_text(r: Round, tool_count: int, result_lines: int = 12) -> str:
    """One round: what the model was sent, what it replied, what the tools answered."""
    n = len(r.sent)
    out = [f"── round {r.number} " + "─" * 40,
           f"sent: the system prompt, {tool_count} tool schemas and "
           f"{n} message{'s' if n != 1 else ''}"]
    out += [message_line(i, m) for i, m in enumerate(r.sent, 1)]
    if r.reply is None:
        out.append("replied: nothing (the call did not return)")
    else:
        out.append("replied:")
        if r.reasoning:
            out.append(_indented(f"(thinking) {r.reasoning}", "  "))
        if r.reply.get("content"):
            out.append(_indented(r.reply["content"], "  "))
        for call in r.reply.get("tool_calls") or []:
            fn = call["function"]
            out.append(f"  asks for {call_line(fn['name'], fn['arguments'], WIDTH - 30)}   "
                       f"[{call['id']}]")
        if not r.reply.get("tool_calls"):
            out.append("  (no tool calls: this text is the answer)")
    if r.answers:
        out.append("tools answered:")
    for a in r.in_call_order():
        head = f"  {MARKS.get(a.status, '✗')} {a.call.id}  "
        out.append(head + _indented(preview(a.result, result_lines, WIDTH),
                                    " " * len(head))[len(head):])
    if r.note:
        out.append(f"[{r.ended}] {r.note}")
    return "\n".join(out)


def _indented(text: str, pad: str) -> str:
    return "\n".join(pad + line for line in (text.splitlines() or [""]))
