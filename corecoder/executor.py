"""How a batch of tool calls is run. Chapter 2: one after another, in call order.

An executor fills `results` (call id -> result text) as calls finish. The loop
answers any call left without a result as interrupted, so an executor never has
to clean up after an interrupt: it just stops.
"""

from __future__ import annotations

from .calls import CallRunner
from .messages import ToolCall


def run_in_order(calls: list[ToolCall], runner: CallRunner, results: dict[str, str]) -> None:
    for call in calls:
        results[call.id] = runner.perform(runner.admit(call), runner.workspace)
