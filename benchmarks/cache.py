"""Prompt caching: how much of each request a provider could serve from its cache, and what it costs.

OpenAI, DeepSeek, Kimi and Qwen bill the part of a request that repeats a recent request's
prefix (the tools, the system prompt, the history so far) at a fraction of the input price.
An agent that rewrites its system prompt when its state changes (a todo update, a `cd`)
re-bills the whole history as new input. This measures it on one scripted session, run by
each agent's own `-p` command against its own loopback server, the same script in each
agent's argument names:

    40 rounds: first the project's main file is read (16 KB, as an agent reads the code it
               is asked about); then a todo list written every 5th round, a `cd` every 7th,
               and in between what a session mostly does: a note read (1 KB) every third
               round, a grep or a short command otherwise

From the request bodies the server received, each request's prompt is the text a provider
puts in front of the model, in that order: the tool schemas, then the messages (as JSON).

    prefix reuse  over the requests after the first, the characters each shares, from its
                  start, with the request before it, as a share of all their characters
    ceiling       the most any agent could reuse: every request but the new messages of
                  its round (each round adds them at the end; no cache can serve those)
    kept          of the characters of each request, the share the next one starts with:
                  1 means nothing the model was sent is ever sent again as new input
    cost          input cost at 4 characters a token, cached input at 10% of the input
                  price, relative to an uncached session: each request's shared prefix
                  is its cached part, the first request all fresh (the replies' output
                  tokens are the same for both agents, and left out)

Part of `python -m benchmarks`; `measure(contender)` runs one agent.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path

from corecoder.testing import ScriptServer

from .scenario import Contender, environment

ROUNDS = 40
CACHED_PRICE = 0.1  # of the input price
TASK = "Work through the notes, keeping a todo list, and say when you are done."
ANSWER = "Done: every note read, the todo list kept."


def script(rounds: int = ROUNDS) -> list:
    """The session, in our tools' argument names: `rounds` model calls, the last one the answer."""
    turns = [{"text": "Let me read the main file first.",
              "tool_calls": [{"name": "read_file", "arguments": {"path": "main.py"}}]}]
    for n in range(2, rounds):
        if n % 5 == 0:
            done = n // 5
            todos = [{"content": f"read part {k}", "status": "done" if k <= done else
                      "in_progress" if k == done + 1 else "pending"} for k in range(1, rounds // 5 + 2)]
            call = {"name": "todo_write", "arguments": {"todos": todos}}
        elif n % 7 == 0:
            call = {"name": "bash", "arguments": {"command": "cd sub && pwd" if n % 14 else "cd .. && pwd"}}
        elif n % 3 == 0:
            call = {"name": "read_file", "arguments": {"path": f"notes-{n % 4}.txt"}}
        elif n % 3 == 1:
            call = {"name": "grep", "arguments": {"pattern": f"line {n % 20}:", "path": "."}}
        else:
            call = {"name": "bash", "arguments": {"command": "ls && wc -l notes-*.txt"}}
        turns.append({"text": f"Step {n}.", "tool_calls": [call]})
    return [*turns, ANSWER]


def project(folder: Path) -> Path:
    """A main file of 16 KB; four notes of about 1 KB each, in the project and its `sub` folder."""
    root = folder / "project"
    for where in (root, root / "sub"):
        where.mkdir(parents=True)
        for k in range(4):
            (where / f"notes-{k}.txt").write_text("".join(f"note {k}, line {i}: " + "x" * 40 + "\n"
                                                          for i in range(20)))
    (root / "main.py").write_text("".join(f"def step_{i}(data):\n    return [x * {i} for x in data]\n\n\n"
                                          for i in range(300)))
    return root


def prompts(requests: list[dict]) -> list[str]:
    """Each chat request's prompt as a provider lays it out: the tools, then the messages."""
    return [json.dumps(r["body"].get("tools") or []) + "".join(json.dumps(m) for m in r["body"]["messages"])
            for r in requests if r["path"].endswith("/chat/completions") and isinstance(r["body"], dict)]


def figures(sent: list[str]) -> dict:
    """Prefix reuse and relative cost of one session's prompts."""
    pairs = list(zip(sent, sent[1:], strict=False))
    cached = [0] + [len(os.path.commonprefix([before, after])) for before, after in pairs]
    reused, total = sum(cached), sum(len(p) for p in sent)
    later = sum(len(p) for p in sent[1:])
    ceiling = sum(min(len(before), len(after)) for before, after in pairs)
    cost = sum(len(p) - c + CACHED_PRICE * c for p, c in zip(sent, cached, strict=True))
    return {"requests": len(sent), "characters": total, "prefix_reuse": round(reused / later, 4),
            "ceiling": round(ceiling / later, 4), "kept": round(reused / sum(len(p) for p in sent[:-1]), 4),
            "cost_vs_uncached": round(cost / total, 4), "cost_tokens": round(cost / 4)}


def measure(contender: Contender) -> dict:
    """Run the session with one agent's `-p` command; its figures, or why it failed."""
    with tempfile.TemporaryDirectory(prefix="corecoder-bench-") as tmp, ScriptServer(contender.script) as server:
        root, home = project(Path(tmp)), Path(tmp) / "home"
        home.mkdir()
        run = subprocess.run([*contender.command, "-p", TASK, "--yes"], cwd=root, capture_output=True,
                             text=True, env=environment(server, home), timeout=300)
        requests = list(server.requests)
    if run.returncode != 0 or ANSWER not in run.stdout:
        return {"ok": False, "exit_code": run.returncode, "stderr_tail": run.stderr[-600:]}
    return {"ok": True, **figures(prompts(requests))}


def compare(ours: Contender, theirs: Contender | None) -> dict:
    result = {"rounds": ROUNDS, "ours": measure(ours)}
    if theirs is not None:
        result["upstream"] = measure(theirs)
        if result["ours"]["ok"] and result["upstream"]["ok"]:
            result["cost_ratio"] = round(result["ours"]["cost_tokens"] / result["upstream"]["cost_tokens"], 3)
    return result
