"""What an agent tells the world while it works.

The agent emits these typed events to its subscribers; it never prints. The CLI
renderer, the notebook viewer and the tests are all just subscribers, so what a
learner sees in a notebook is exactly what the CLI shows and what tests assert on.
"""

from __future__ import annotations

from dataclasses import dataclass

from .messages import ToolCall, Usage


@dataclass(frozen=True)
class RoundStarted:
    round: int


@dataclass(frozen=True)
class TextDelta:
    """A piece of the model's answer, as it arrives."""

    text: str


@dataclass(frozen=True)
class ReasoningDelta:
    """A piece of the model's visible reasoning; shown, never put in the history."""

    text: str


@dataclass(frozen=True)
class ToolCallStarted:
    call: ToolCall


@dataclass(frozen=True)
class ToolCallFinished:
    call: ToolCall
    result: str
    status: str  # ok, bad_arguments, unknown_tool, refused, failed, interrupted, not_run


@dataclass(frozen=True)
class UsageReported:
    usage: Usage
    model: str = ""  # each call is priced at the rate of the model that served it


@dataclass(frozen=True)
class Finished:
    text: str
    reason: str  # answer, max_rounds, interrupted, error


@dataclass(frozen=True)
class Retrying:
    """A model call failed in a way worth retrying; the next try starts after `delay` s."""

    attempt: int
    delay: float
    reason: str


@dataclass(frozen=True)
class Compacted:
    """The history was compacted: tier is trim, summarize, reset, or drop (summarizing failed)."""

    tier: str
    tokens_before: int
    tokens_after: int


@dataclass(frozen=True)
class WorkerEvent:
    """An event from a sub-agent, passed up to the parent's subscribers, tagged with its name."""

    worker: str
    event: object
