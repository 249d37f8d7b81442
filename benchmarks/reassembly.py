"""A megabyte of tool-call arguments streamed in 7-character fragments, put back together.

A model writing one large file sends its content as the arguments of one call, a few characters
a chunk. Three figures:

- the assembler alone (corecoder.stream.ToolCallAssembler, fed the fragments one by one as the
  client reads them), 1 MB, and the same for 100 KB in the same run: a ratio of about 10 says the
  time grows with the size (before #16 it re-joined the pieces on every fragment, so the ratio
  was about 100: 400 KB took 7 s, 1 MB did not finish in 15 s);
- that time against the least any reassembly must do, in the same run: append each fragment to a
  list and join it once;
- the whole path for 100 KB: the loopback server streams the call, the real openai client reads
  it. The client builds an object for every chunk, so this figure is the client's, not ours.
"""

from __future__ import annotations

import json
import time

from corecoder.llm import LLM
from corecoder.stream import ToolCallAssembler
from corecoder.testing import ScriptServer, serve

FRAGMENT = 7  # characters a fragment: the loopback server's own size, and some providers'


def arguments(size: int) -> str:
    return json.dumps({"path": "big.txt", "content": "x" * size})


def assembled(text: str) -> float:
    """Seconds to put `text` back together from its fragments."""
    pieces = [text[k:k + FRAGMENT] for k in range(0, len(text), FRAGMENT)]
    start = time.perf_counter()
    calls = ToolCallAssembler()
    calls.add(0, "c1", "write_file", "")
    for piece in pieces:
        calls.add(0, None, None, piece)
    [call] = calls.result()
    seconds = time.perf_counter() - start
    assert call.arguments == text
    return seconds


def joined(text: str) -> float:
    """Seconds for the least any reassembly does: keep each fragment, join them once."""
    pieces = [text[k:k + FRAGMENT] for k in range(0, len(text), FRAGMENT)]
    start = time.perf_counter()
    kept = []
    for piece in pieces:
        kept.append(piece)
    whole = "".join(kept)
    seconds = time.perf_counter() - start
    assert whole == text
    return seconds


def through_the_client(size: int) -> float:
    """Seconds for one streamed reply carrying the call, from request to assembled call."""
    text = arguments(size)
    assert serve.FRAGMENT == FRAGMENT
    with ScriptServer([{"tool_calls": [{"name": "write_file", "arguments": text}]}]) as server:
        llm = LLM("scripted", base_url=server.base_url, api_key="x")
        start = time.perf_counter()
        reply = llm.chat([{"role": "user", "content": "write it"}])
        seconds = time.perf_counter() - start
    assert reply.tool_calls[0].arguments == text
    return seconds


def measure(size: int = 1_000_000, small: int = 100_000, repeats: int = 3) -> dict:
    """The best of `repeats` for each figure (the least disturbed by other work on the machine)."""
    big, little = arguments(size), arguments(small)
    alone = min(assembled(big) for _ in range(repeats))
    alone_small = min(assembled(little) for _ in range(repeats))
    baseline = min(joined(big) for _ in range(repeats))
    client = through_the_client(small)
    return {"bytes": len(big), "fragments": -(-len(big) // FRAGMENT), "seconds": alone,
            "seconds_small": alone_small, "growth_10x": alone / alone_small,
            "baseline_seconds": baseline, "ratio_to_baseline": alone / baseline,
            "client_seconds_small": client,
            "client_us_per_fragment": client / -(-len(little) // FRAGMENT) * 1e6}
