"""What the model is sent each round, kept inside the model's context window.

A long session outgrows any window, and everything in the history is re-sent on
every round. Providers bill a request's repeated start (what the request before it
began with) at a fraction of the price, from a prompt cache; a rewrite of the history
is billed again at full price from its first change on. So compaction waits, and then
cuts a lot at once: before each round the context policy looks at the estimated size
(tokens.py) and, past the high mark (default 80 % of the window), compacts down to the
low mark (40 %), so that the rounds after it extend the new history unchanged until
the high mark comes again. Cheap before expensive, each tier only if the one before
did not reach the low mark:

    1. trim   long old tool outputs, and the long arguments of old calls (a whole file
              written), shrink to head and tail, in place, oldest first. No model call:
              cheap, and what goes is what matters least.
    2. summarize older turns become one structured summary written by the model (the
              agent's, or a cheaper one: `summarizer`); the recent turns that fit under
              the low mark stay word for word.
    3. reset  the same, when only the latest turn fits: the summary and that turn.

A cut never separates a tool call from its results: cuts fall only where a turn
begins, the latest turn is kept whole (unless it alone does not fit the window), and
the legality check runs after every tier.
If summarizing fails, the oldest turns are dropped with a note instead. Nothing of the
agent's state is lost: what a compaction takes out of the history (a note with the
todo list), the loop tells the model again before its next call (Agent.tell_state).
"""

from __future__ import annotations

import json

from .events import Compacted, Retrying, UsageReported
from .messages import check_history, is_state_note, system, user
from .text import marker, shorten
from .tokens import Estimate, history_tokens, text_tokens, tools_tokens, window_for

TRIMMED = 900  # characters an old long tool output keeps when trimmed: its head and its tail

SUMMARY_PROMPT = """\
You are compacting a coding agent's conversation so the work can go on in a smaller context.
Write a summary the agent can continue from, with these headings:
Goal: what the user asked for, in their words where it matters.
Decisions: what was decided or learned, and why.
Files: each file read, created or changed, and what changed.
Open todos: what is left to do.
Errors: errors seen and whether they were fixed.
Be specific (names, paths, commands); leave out chatter."""


class Compactor:
    """The policy: late, all at once, cheap before expensive. One instance serves one agent:
    `attach` gives it, once, the agent's model (its window, and who writes the summaries), a view
    of its tools (their schemas ride on every request) and its `emit`; and it listens to the
    agent's usage reports."""

    def __init__(self, window: int | None = None, high: float = 0.8, low: float = 0.4,
                 keep_recent: int = 8, trim_over: int = 2_000, summarizer=None):
        self.window = window  # None: from the model's name (tokens.window_for)
        self.high, self.low = high, low  # of the window: compact past high, down to low
        self.keep_recent = keep_recent  # messages a summary keeps word for word, at most
        self.trim_over = trim_over  # a trim cuts old tool outputs longer than this many characters
        self.summarizer = summarizer  # a model for the summaries (a cheaper one); None: the agent's
        self.estimate = Estimate()
        self.counted: tuple[tuple, int] = ((), 0)  # the tools' names, and what they cost a request
        self.last: Compacted | None = None  # what the latest tier did, as its event said it
        self.sent: list[dict] = []  # the history as last prepared: what a usage report measures

    def attach(self, agent) -> None:
        self.llm, self.emit = agent.llm, agent.emit  # its model (the window, the summaries)
        self.tools = lambda: agent.tools  # the tools as they are then: MCP's come and go
        agent.subscribe(self.observe)

    def prepare(self, messages: list[dict], overflow: bool = False) -> list[dict]:
        """Called before every model call; `overflow` when the provider said it was too long
        (its count is above ours: then everything that can go, goes)."""
        window = self.window or window_for(self.llm.model)
        high, low = window * self.high, (0 if overflow else window * self.low)
        size = self.estimate.of(messages, self.overhead())
        if size >= high or overflow:
            messages = self._trim(messages, size, down_to=low)
            size = self.estimate.of(messages, self.overhead())
            if size > low:
                messages = self._summarize(messages, size, room=low)
                size = self.estimate.of(messages, self.overhead())
            if size >= window or overflow:  # the latest turn alone does not fit: trim it too
                messages = self._trim(messages, size, down_to=low, keep=0)
        self.sent = messages
        return messages

    def compact(self, messages: list[dict],
                focus: str | None = None) -> tuple[list[dict], Compacted | None]:
        """`/compact [focus]`: summarize now, whatever the size. The history after, and what was
        done (a summary, or a drop if summarizing failed), or None when nothing is older than
        the turns kept."""
        after = self._summarize(messages, self.estimate.of(messages, self.overhead()), focus=focus)
        self.sent = after
        return after, (self.last if after is not messages else None)

    def overhead(self) -> int:
        """What every request carries besides the history: the system prompt (about 500 tokens)
        and the tools' schemas, counted again only when the tools change (by name)."""
        tools = self.tools()
        if self.counted[0] != tuple(tools):
            self.counted = (tuple(tools), 500 + tools_tokens([t.schema() for t in tools.values()]))
        return self.counted[1]

    # tier 1

    def _trim(self, messages: list[dict], size: int, down_to: float,
              keep: int | None = None) -> list[dict]:
        """Old long outputs cut to head and tail, oldest first (the history before the first
        one cut is sent as it was), until the estimate is `down_to`; never the latest turn,
        unless `keep=0` (it alone does not fit the window)."""
        end = turn_start(messages, len(messages) - 1) if keep is None else len(messages) - keep
        trimmed, left = list(messages), size
        for i in range(end):
            if left <= down_to:
                break
            trimmed[i] = trim(messages[i], self.trim_over)
            if trimmed[i] is not messages[i]:
                left -= history_tokens([messages[i]]) - history_tokens([trimmed[i]])
        long = [i for i in range(end) if trimmed[i] is not messages[i]]
        if not long:
            return messages
        anchored = [i for i in long if i < self.estimate.count]  # the anchor holds, moved by a cut
        self.estimate.shift([trimmed[i] for i in anchored], [messages[i] for i in anchored])
        return self._replace("trim", trimmed, size, forget=False)

    # tiers 2 and 3

    def _summarize(self, messages: list[dict], size: int, room: float = float("inf"),
                   focus: str | None = None) -> list[dict]:
        """The turns before the last `keep_recent` messages, or before fewer if those do not
        fit in `room` with the overhead (down to the latest turn alone: a reset), summarized."""
        latest = turn_start(messages, len(messages) - 1)
        cut = turn_start(messages, len(messages) - self.keep_recent)
        while cut < latest and self.overhead() + history_tokens(messages[cut:]) > room:
            cut = next(i for i in range(cut + 1, latest + 1) if turn_start(messages, i) == i)
        if cut <= 0:
            return messages  # nothing older than what must be kept
        old, recent = messages[:cut], messages[cut:]
        try:
            note = ("[Summary of the earlier conversation, compacted to fit the context window]\n"
                    + self._ask_for_summary(old, focus))
            tier = "reset" if cut == latest else "summarize"
        except Exception as e:  # a failed summary must not cost the session: drop instead
            note = (f"[{len(old)} earlier messages were dropped to fit the context window; "
                    f"summarizing failed: {e}]")
            tier = "drop"
        return self._replace(tier, [user(note), *recent], size)

    def _ask_for_summary(self, old: list[dict], focus: str | None) -> str:
        llm = self.summarizer or self.llm
        # half the summarizer's window at most: the rest is for the prompt and the summary
        window = min(self.window or window_for(self.llm.model), window_for(llm.model))
        ask = transcript(old, room=window // 2)
        if focus:
            ask += f"\n\nKeep in particular everything about: {focus}"

        def show_retries(event) -> None:  # the summary is not the answer: show only its retries
            if isinstance(event, Retrying):
                self.emit(event)

        reply = llm.chat([system(SUMMARY_PROMPT), user(ask)], None, show_retries)
        if reply.usage:  # it costs money, at its model's price (the anchor goes with the summary)
            self.emit(UsageReported(reply.usage, llm.model))
        if not reply.text.strip():
            raise ValueError("the model returned an empty summary")
        return reply.text.strip()

    def _replace(self, tier: str, after: list[dict], size: int, forget: bool = True) -> list[dict]:
        check_history(after)  # after every tier: a bug in a cut fails here, not as a 400 later
        if forget:  # older messages are gone: the last usage report no longer applies
            self.estimate.forget()
        self.last = Compacted(tier, size, self.estimate.of(after, self.overhead()))
        self.emit(self.last)
        return after

    def observe(self, event) -> None:
        if isinstance(event, UsageReported):
            # the request it measures is the history as prepared, with what the loop added to
            # that same list before sending it (a note of its state); the reply joins it after
            self.estimate.anchor(self.sent, event.usage.prompt_tokens)


def turn_start(messages: list[dict], index: int) -> int:
    """The nearest index at or before `index` where a turn begins: not a tool result, and not
    a note of the agent's state (it belongs with the results it follows)."""
    index = max(0, min(index, len(messages)))
    while 0 < index < len(messages) and (messages[index]["role"] == "tool"
                                         or is_state_note(messages[index])):
        index -= 1
    return index


def trim(message: dict, over: int) -> dict:
    """The message, or a copy with its parts longer than `over` characters cut to head and tail:
    a tool's output; the arguments of a call it made (a whole file written), then still JSON,
    that says so. (The call keeps its id and name: its result still answers it.)"""
    if message["role"] == "tool" and len(message["content"]) > over:
        return {**message, "content": shorten(message["content"], TRIMMED, note="trimmed")}
    calls = message.get("tool_calls") or []
    if all(len(c["function"]["arguments"]) <= over for c in calls):
        return message
    return {**message, "tool_calls": [c if len(c["function"]["arguments"]) <= over else {
        **c, "function": {**c["function"], "arguments": json.dumps({"trimmed": shorten(
            c["function"]["arguments"], TRIMMED, note="trimmed")}, ensure_ascii=False)}}
        for c in calls]}


def transcript(messages: list[dict], each: int = 1_500, room: float = float("inf")) -> str:
    """The old messages as plain text for the summarizer, each one bounded, and all of them in
    `room` tokens: the first (the task, or the summary of all before it) and the newest that
    fit after it. A resumed session of 40 MB must not make a request of 30."""
    lines = []
    for m in messages:
        text = (m.get("content") or "")[:each]
        calls = ", ".join(f"{c['function']['name']}({c['function']['arguments'][:200]})"
                          for c in m.get("tool_calls") or [])
        lines.append(f"{m['role']}: {text}" + (f" [called {calls}]" if calls else ""))
    # from the newest back, as many as fit in the room the first one leaves
    room, start = room - sum(map(text_tokens, lines[:1])), len(lines)
    while start > 1 and (cost := text_tokens(lines[start - 1])) <= room:
        start, room = start - 1, room - cost
    left_out = [marker(start - 1, "messages", "too many to summarize at once")] * (start > 1)
    return "\n".join([*lines[:1], *left_out, *lines[start:]])
