"""A 500-round scripted session through the library: does the engine's cost per round stay flat?

Every round the model asks to read a 2 KB file; the window is small, so the history
is compacted again and again (trims, summaries). We time each round and subtract the
time spent inside the model call, leaving the engine's own overhead: preparing the
context, running the tool, keeping the history. If anything grew with the length of
the session (an estimate over the whole history, a list that is never cut), round 500
would cost more than round 10.

A round costs well under a millisecond, so the 11 rounds around a mark last a few ms, and one
burst of load elsewhere can shift their median. Hence the session runs `repeats` times and each
mark pools its rounds from every session; and besides wall time, the overhead is also measured
in CPU time of the process (time.process_time), which a busy machine barely moves.

Part of `python -m benchmarks`; run(rounds, window, repeats) returns the figures.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path

from corecoder import FunctionLLM, build_agent
from corecoder.context import SUMMARY_PROMPT
from corecoder.events import Compacted, RoundStarted

CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


class TimedModel(FunctionLLM):
    """A scripted model that records how long its calls took, in wall and in CPU time."""

    def __init__(self, rounds: int):
        super().__init__(self.reply)
        self.rounds, self.asked = rounds, 0
        self.inside = dict.fromkeys(CLOCKS, 0.0)

    def reply(self, messages, tools):
        if messages[0]["content"] == SUMMARY_PROMPT:
            return "Goal: read the notes again and again.\nFiles: notes.txt (read, unchanged)."
        self.asked += 1
        if self.asked >= self.rounds:
            return "done"
        return {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}],
                "usage": {"prompt_tokens": sum(len(str(m.get("content"))) for m in messages) // 4,
                          "completion_tokens": 12}}

    def chat(self, messages, tools=None, emit=None):
        start = {name: clock() for name, clock in CLOCKS.items()}
        try:
            return super().chat(messages, tools, emit)
        finally:
            for name, clock in CLOCKS.items():
                self.inside[name] += clock() - start[name]

    def mark(self) -> dict:
        """Each clock now, minus the time spent inside the model so far."""
        return {name: clock() - self.inside[name] for name, clock in CLOCKS.items()}


def session(rounds: int, window: int) -> dict:
    """One session: each round's engine overhead by clock, in seconds, and what the session did."""
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "notes.txt").write_text("".join(f"line {i:04d} of the notes: " + "x" * 40 + "\n"
                                                  for i in range(32)))  # about 2 KB, 32 lines
        llm = TimedModel(rounds)
        agent = build_agent(llm, tmp, window=window, max_rounds=rounds + 5)
        marks, compactions = [], []
        agent.subscribe(lambda e: isinstance(e, RoundStarted) and marks.append(llm.mark()))
        agent.subscribe(lambda e: isinstance(e, Compacted) and compactions.append(e.tier))
        started = time.perf_counter()
        agent.chat("Read notes.txt until you are told to stop.")
        total = time.perf_counter() - started
        sent = sum(len(json.dumps(r["messages"])) for r in llm.requests)
    overhead = {name: [b[name] - a[name] for a, b in zip(marks, marks[1:], strict=False)] for name in CLOCKS}
    return {"rounds": len(marks), "seconds": total, "overhead": overhead, "history_at_end": len(agent.messages),
            "characters_sent": sent, "compactions": {t: compactions.count(t) for t in sorted(set(compactions))}}


def around(sessions: list[dict], clock: str, n: int) -> float:
    """Median engine time, in ms, of the 11 rounds near round n, pooled over the sessions."""
    return statistics.median(x for s in sessions for x in s["overhead"][clock][max(0, n - 6): n + 5]) * 1000


def run(rounds: int = 500, window: int = 16_000, repeats: int = 3) -> dict:
    sessions = [session(rounds, window) for _ in range(repeats)]
    marks = (10, 100, rounds)
    at = {clock: {n: around(sessions, clock, n) for n in marks} for clock in CLOCKS}
    first = sessions[0]  # every session does the same work: the same rounds, compactions, characters
    return {"rounds": first["rounds"], "repeats": repeats, "seconds": round(statistics.median(
                s["seconds"] for s in sessions), 2), "compactions": first["compactions"],
            "history_at_end": first["history_at_end"], "characters_sent": first["characters_sent"],
            "overhead_ms": {n: round(v, 3) for n, v in at["wall"].items()},
            "ratio_last_to_10": round(at["wall"][rounds] / at["wall"][10], 2),
            "overhead_cpu_ms": {n: round(v, 3) for n, v in at["cpu"].items()},
            "ratio_last_to_10_cpu": round(at["cpu"][rounds] / at["cpu"][10], 2)}
