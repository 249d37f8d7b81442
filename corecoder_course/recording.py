"""A recording of an agent run, round by round, and its plain-text rendering.

`record(agent)` subscribes a `Recording` to the agent's events. For each round it
keeps what the model was sent (the history at the moment of the call), what it
replied (text and tool calls), and what each tool answered. It is only a
subscriber: the agent does not know it is being watched.

The text rendering is the viewer's twin: the widget (viewer.py) is for stepping
through in JupyterLab, this text is what nbval checks and the static site shows.
It prints the history once; each later round shows only what its request added, so
a long run reads in lines that grow with the run, not with its square.

The events of chapter 1 (a round, a model call, tool results, the end) give a round
its shape. Any other event is a note in its round, written by the one renderer
`RENDERERS` holds for its type: a retry (chapter 3), a compaction (chapter 4), a
worker's call (chapter 6). An event type is added by adding its renderer, to the
table or to one recording's copy of it (`recording.renderers[MyEvent] = ...`); the
recording itself is not edited.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field

from corecoder.cli.trace import MARKS, call_line, cut, preview
from corecoder.events import (
    Compacted,
    Finished,
    ReasoningDelta,
    Retrying,
    RoundStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    UsageReported,
    WorkerEvent,
)
from corecoder.messages import ToolCall, Usage

from .words import say

WIDTH = 100


def _retrying(event: Retrying) -> str:
    return say(f"the model call failed; trying again in {event.delay:.1f} s ({event.reason})",
               f"模型调用失败，{event.delay:.1f} 秒后重试（{event.reason}）")


def _compacted(event: Compacted) -> str:
    return say(f"the history was compacted ({event.tier}): "
               f"~{event.tokens_before:,} → ~{event.tokens_after:,} tokens",
               f"历史经过了压缩（{event.tier}）：约 {event.tokens_before:,} → "
               f"约 {event.tokens_after:,} 个 token")


def _worker(event: WorkerEvent) -> str | None:
    inner = event.event
    if isinstance(inner, ToolCallStarted):
        return f"[{event.worker}] → {call_line(inner.call.name, inner.call.arguments, WIDTH - 20)}"
    if isinstance(inner, Finished):
        return f"[{event.worker}] " + say(f"finished ({inner.reason})", f"结束（{inner.reason}）")
    return None  # a worker's text and usage reach the parent in its report


# The events that give a round its shape (chapter 1's loop) ...
SHAPE = (RoundStarted, ReasoningDelta, UsageReported, ToolCallStarted, ToolCallFinished, Finished)
# ... and a renderer for each other kind: the event's line in its round (or None for an event
# that adds nothing worth a line); an event whose renderer is None is not kept at all (a
# TextDelta: the text is in the reply, and a stream sends thousands).
RENDERERS: dict[type, Callable[[object], str | None] | None] = {
    TextDelta: None,
    Retrying: _retrying,
    Compacted: _compacted,
    WorkerEvent: _worker,
}


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
    # other events, each with whether it came before the reply: rendered when shown
    notes: list[tuple[bool, object]] = field(default_factory=list)

    def in_call_order(self) -> list[Answer]:
        """The answers in the order of the calls (calls run in parallel finish in any order)."""
        order = {c["id"]: i for i, c in enumerate((self.reply or {}).get("tool_calls") or [])}
        return sorted(self.answers, key=lambda a: order.get(a.call.id, len(order)))

    def answered(self) -> list[dict]:
        """The reply and its results as they join the history: the messages the next round's
        request adds to this one's."""
        results = [{"role": "tool", "tool_call_id": a.call.id, "content": a.result}
                   for a in self.in_call_order()]
        return ([self.reply] if self.reply else []) + results


class Recording:
    """Subscribe it to an agent; it fills `rounds` as the agent works."""

    def __init__(self, agent, renderers: dict[type, Callable] = RENDERERS):
        self.agent = agent
        self.rounds: list[Round] = []
        self.renderers = dict(renderers)  # this recording's own copy: add to it freely
        self._taken = False  # has this round's request been copied yet?

    def __call__(self, event) -> None:
        if type(event) in self.renderers:  # a note; shown by its renderer
            if isinstance(event, Compacted) and self.rounds:
                # The history was rewritten before the model call: what the round sent is taken
                # anew (a summary's own model call reported its usage before this).
                self.rounds[-1].sent, self.rounds[-1].reply, self._taken = [], None, False
            if self.rounds and self.renderers[type(event)] is not None:
                self.rounds[-1].notes.append((not self._taken, event))
        elif not isinstance(event, SHAPE):
            return  # an event this recording has no renderer for: left out
        elif isinstance(event, RoundStarted):
            self._close()
            self.rounds.append(Round(event.round))
            self._taken = False
        elif self.rounds:
            self._shape(self.rounds[-1], event)

    def _shape(self, now: Round, event) -> None:
        # The events of chapter 1's loop: what was sent, the reply, the results, the end.
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
        """Every round as plain text: a legend, the first round's history in full, then what
        each round's request added to the one before."""
        shown = [round_text(r, self.tool_count, result_lines, before, self.renderers)
                 for before, r in zip([None, *self.rounds], self.rounds, strict=False)]
        return "\n".join([legend(), *shown]) if shown else ""


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


def legend() -> str:
    return say("(each round: what the model was sent, what it replied, what the tools answered; "
               "after the first, only the messages a request added to the one before)",
               "（每一轮：发给模型的内容、模型的回复、工具的回应；从第二轮起，"
               "只列出这次请求比上一次多出的消息）")


def added(before: Round | None, r: Round) -> list[dict] | None:
    """The messages `r`'s request added to `before`'s request, reply and results; None if it
    does not extend them (the history was rewritten: a compaction)."""
    if before is None:
        return None
    known = before.sent + before.answered()
    return r.sent[len(known):] if r.sent[:len(known)] == known else None


def sent_lines(r: Round, tool_count: int, before: Round | None) -> list[str]:
    """What the model was sent: all of it in the first round (or after a rewrite), else what
    this request added beyond the last round's reply and results."""
    n = len(r.sent)
    new = added(before, r)
    if new is None:
        head = say(f"sent: the system prompt, {tool_count} tool schemas and "
                   f"{n} message{'s' if n != 1 else ''}",
                   f"发送：系统提示词、{tool_count} 个工具的 JSON Schema 和 {n} 条消息")
        if before is not None:
            head += say(" (the history was rewritten)", "（历史经过了改写）")
        return [head] + [message_line(i, m) for i, m in enumerate(r.sent, 1)]
    results = len(before.answers)
    head = say(f"sent: the previous request, its reply and {results} result"
               f"{'s' if results != 1 else ''}",
               f"发送：上一次的请求，加上它的回复和 {results} 个结果")
    if new:
        head += say(f", and {len(new)} more", f"，再加 {len(new)} 条")
    head += say(f": {n} messages", f"，共 {n} 条消息")
    return [head] + [message_line(i, m) for i, m in enumerate(new, n - len(new) + 1)]


def notes(r: Round, renderers: dict[type, Callable] = RENDERERS) -> tuple[list[str], list[str]]:
    """The lines of a round's notes, each by its event's renderer: those that came before the
    reply (a compaction, a retry), and those that came while the tools ran (a worker's call)."""
    lines = [(early, (renderers.get(type(event)) or (lambda e: None))(event))
             for early, event in r.notes]
    return ([line for early, line in lines if line and early],
            [line for early, line in lines if line and not early])


def round_text(r: Round, tool_count: int, result_lines: int = 12, before: Round | None = None,
               renderers: dict[type, Callable] = RENDERERS) -> str:
    """One round: what the model was sent, what it replied, what the tools answered."""
    out = [f"── {say(f'round {r.number}', f'第 {r.number} 轮')} " + "─" * 40]
    out += sent_lines(r, tool_count, before)
    early, late = notes(r, renderers)
    out += [f"  {line}" for line in early]
    if r.reply is None:
        out.append(say("replied: nothing (the call did not return)",
                       "回复：无（这次调用没有返回）"))
    else:
        out.append(say("replied:", "回复："))
        if r.reasoning:
            out.append(_indented(f"({say('thinking', '思考')}) {r.reasoning}", "  "))
        if r.reply.get("content"):
            out.append(_indented(r.reply["content"], "  "))
        for call in r.reply.get("tool_calls") or []:
            fn = call["function"]
            out.append(f"  {say('asks for', '请求')} "
                       f"{call_line(fn['name'], fn['arguments'], WIDTH - 30)}   [{call['id']}]")
        if not r.reply.get("tool_calls"):
            out.append(say("  (no tool calls: this text is the answer)",
                           "  （没有工具调用：这段文字就是回答）"))
    if r.answers:
        out.append(say("tools answered:", "工具的回应："))
    for a in r.in_call_order():
        head = f"  {MARKS.get(a.status, '✗')} {a.call.id}  "
        out.append(head + _indented(preview(a.result, result_lines),
                                    " " * len(head))[len(head):])
    out += [f"  {line}" for line in late]
    if r.note:
        out.append(f"[{r.ended}] {r.note}")
    return "\n".join(out)


def _indented(text: str, pad: str) -> str:
    return "\n".join(pad + line for line in (text.splitlines() or [""]))
