"""A 500-round scripted session through the library: does the engine's cost per round stay flat?

Every round the model asks to read a 2 KB file; the window is small, so the history
is compacted again and again (trims, summaries). We time each round and subtract the
time spent inside the model call, leaving the engine's own overhead: preparing the
context, running the tool, keeping the history. If anything grew with the length of
the session (an estimate over the whole history, a list that is never cut), round 500
would cost more than round 10.

Run: python benchmarks/long_session.py [--rounds 500] [--window 16000]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from corecoder import Agent, FunctionLLM  # noqa: E402
from corecoder.context import SUMMARY_PROMPT, Compactor  # noqa: E402
from corecoder.events import Compacted, RoundStarted  # noqa: E402


class TimedModel(FunctionLLM):
    """A scripted model that records how long each of its calls took."""

    def __init__(self, rounds: int):
        super().__init__(self.reply)
        self.rounds, self.asked, self.model_seconds = rounds, 0, 0.0

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
        start = time.perf_counter()
        try:
            return super().chat(messages, tools, emit)
        finally:
            self.model_seconds += time.perf_counter() - start


def run(rounds: int, window: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "notes.txt").write_text("".join(f"line {i:04d} of the notes: " + "x" * 40 + "\n"
                                                  for i in range(32)))  # about 2 KB, 32 lines
        llm = TimedModel(rounds)
        agent = Agent(llm, cwd=tmp, context=Compactor(window=window), max_rounds=rounds + 5)
        marks, compactions = [], []
        agent.subscribe(lambda e: isinstance(e, RoundStarted) and marks.append((time.perf_counter(),
                                                                                 llm.model_seconds)))
        agent.subscribe(lambda e: isinstance(e, Compacted) and compactions.append(e.tier))
        started = time.perf_counter()
        agent.chat("Read notes.txt until you are told to stop.")
        total = time.perf_counter() - started
        sent = sum(len(json.dumps(r["messages"])) for r in llm.requests)
    overhead = [(t2 - t1) - (m2 - m1) for (t1, m1), (t2, m2) in zip(marks, marks[1:], strict=False)]

    def around(n: int) -> float:  # median engine time of the rounds near round n, in ms
        return statistics.median(overhead[max(0, n - 6): n + 5]) * 1000

    at = {n: around(n) for n in (10, 100, rounds)}
    return {"rounds": len(marks), "seconds": round(total, 2), "compactions": {t: compactions.count(t) for t in
                                                                               set(compactions)},
            "history_at_end": len(agent.messages), "characters_sent": sent,
            "overhead_ms": {n: round(v, 3) for n, v in at.items()}, "ratio_last_to_10": round(at[rounds] / at[10], 2)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=500)
    parser.add_argument("--window", type=int, default=16_000)
    args = parser.parse_args()
    result = run(args.rounds, args.window)
    for name, value in result.items():
        print(f"{name:18} {value}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
