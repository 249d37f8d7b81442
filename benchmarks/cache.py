"""Prompt caching: how much of each request a provider could serve from its cache, and what it costs.

OpenAI, DeepSeek, Kimi and Qwen bill the part of a request that repeats a recent request's
prefix (the tools, the system prompt, the history so far) at a fraction of the input price.
An agent that rewrites its system prompt when its state changes (a todo update, a `cd`)
re-bills the whole history as new input. This measures it on one scripted session, run by
each agent's own `-p` command against its own loopback server, the same script in each
agent's argument names:

    the cache session, 40 rounds: first the project's main file is read (16 KB, as an agent
               reads the code it is asked about); then a todo list written every 5th round, a
               `cd` every 7th, and in between what a session mostly does: a note read (1 KB)
               every third round, a grep or a short command otherwise
    the compacting session, 45 rounds: each reads another file of about 3 KB, in a window of
               12,000 tokens (CORECODER_CONTEXT_WINDOW), so ours must compact (upstream's window
               is 128,000 tokens and it never does here); what a cache pays for a compaction

From the request bodies the server received, each request's prompt is the text a provider
puts in front of the model, in that order: the tool schemas, then the messages (as JSON). The
conversation is the requests with tools; a request without them is a compaction's summary,
billed whole (nothing before it starts the same way).

    prefix reuse  over the requests after the first, the characters each shares, from its
                  start, with the request before it, as a share of all their characters
    ceiling       the most any agent could reuse: every request but the new messages of
                  its round (each round adds them at the end; no cache can serve those)
    kept          of the characters of each request, the share the next one starts with:
                  1 means nothing the model was sent is ever sent again as new input
    extends       of the requests after the first, the share that start with the whole
                  request before them (what a compaction breaks)
    largest       the largest request, in tokens as tokens.py estimates them, against the window
    cost          input cost at 4 characters a token, cached input at 10% of the input
                  price, relative to an uncached session: each request's shared prefix
                  is its cached part, the first request all fresh (the replies' output
                  tokens are the same for both agents, and left out)

Part of `python -m benchmarks`; `compare(ours, upstream, session)` runs one session with each.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from corecoder.testing import ScriptServer
from corecoder.tokens import text_tokens

from .scenario import Contender, environment

CACHED_PRICE = 0.1  # of the input price
ANSWER = "Done: every file read, as asked."
SUMMARY = "Goal: read every part, one a round.\nFiles: the parts read so far, unchanged."  # any time


@dataclass(frozen=True)
class Session:
    name: str
    rounds: int
    task: str
    script: Callable[[], list]  # in our tools' argument names; upstream.translate renames them
    project: Callable[[Path], Path]  # makes the project in a folder, returns its root
    window: int | None = None  # tokens, for ours (CORECODER_CONTEXT_WINDOW); None: the model's


def cache_script(rounds: int = 40) -> list:
    """The cache session, in our tools' argument names: `rounds` model calls, the last one the answer."""
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


def cache_project(folder: Path) -> Path:
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


def compacting_script(rounds: int = 45) -> list:
    """The compacting session: each round reads the next file, the last one answers."""
    return [*({"text": f"Step {n}.", "tool_calls": [{"name": "read_file", "arguments": {
        "path": f"part-{n:02d}.txt"}}]} for n in range(1, rounds)), ANSWER]


def compacting_project(folder: Path, files: int = 44) -> Path:
    """`files` files of about 3 KB, each of 48 lines."""
    root = folder / "project"
    root.mkdir(parents=True)
    for n in range(1, files + 1):
        (root / f"part-{n:02d}.txt").write_text("".join(
            f"part {n:02d}, line {i:02d}: the notes of this part, " + "y" * 14 + "\n" for i in range(48)))
    return root


TASK = "Work through the notes, keeping a todo list, and say when you are done."
CACHE = Session("cache session", 40, TASK, cache_script, cache_project)
COMPACTING = Session("compacting session", 45, "Read every part, one a round, and say when you are done.",
                     compacting_script, compacting_project, window=12_000)


def prompts(requests: list[dict]) -> tuple[list[str], list[str]]:
    """Each chat request's prompt as a provider lays it out (the tools, then the messages): those
    of the conversation (with tools), and the summaries asked for (without)."""
    laid_out = [(bool(r["body"].get("tools")), json.dumps(r["body"].get("tools") or [])
                 + "".join(json.dumps(m) for m in r["body"]["messages"]))
                for r in requests if r["path"].endswith("/chat/completions") and isinstance(r["body"], dict)]
    return [p for tools, p in laid_out if tools], [p for tools, p in laid_out if not tools]


def figures(sent: list[str], summaries: list[str] = (), window: int | None = None) -> dict:
    """Prefix reuse and relative cost of one session's prompts; the summaries are billed whole."""
    pairs = list(zip(sent, sent[1:], strict=False))
    cached = [0] + [len(os.path.commonprefix([before, after])) for before, after in pairs]
    reused, total = sum(cached), sum(len(p) for p in sent) + sum(len(p) for p in summaries)
    later = sum(len(p) for p in sent[1:])
    ceiling = sum(min(len(before), len(after)) for before, after in pairs)
    cost = sum(len(p) - c + CACHED_PRICE * c for p, c in zip(sent, cached, strict=True))
    cost += sum(len(p) for p in summaries)
    largest = max(text_tokens(p) for p in sent)
    return {"requests": len(sent), "summaries": len(summaries), "characters": total,
            "prefix_reuse": round(reused / later, 4), "ceiling": round(ceiling / later, 4),
            "kept": round(reused / sum(len(p) for p in sent[:-1]), 4),
            "extends": round(sum(after.startswith(before) for before, after in pairs) / len(pairs), 4),
            "largest_tokens": largest, **({"largest_vs_window": round(largest / window, 4)} if window else {}),
            "cost_vs_uncached": round(cost / total, 4), "cost_tokens": round(cost / 4)}


COMPACTED = re.compile(r"\[context compacted \((\w+)\)")  # the line our -p prints for each compaction


def measure(contender: Contender, session: Session) -> dict:
    """Run the session with one agent's `-p` command; its figures, or why it failed."""
    server = ScriptServer(contender.script, aside=SUMMARY)  # a summary takes no turn of the script
    with tempfile.TemporaryDirectory(prefix="corecoder-bench-") as tmp, server:
        root, home = session.project(Path(tmp)), Path(tmp) / "home"
        home.mkdir()
        env = environment(server, home)
        if session.window:
            env["CORECODER_CONTEXT_WINDOW"] = str(session.window)
        run = subprocess.run([*contender.command, "-p", session.task, "--yes"], cwd=root, capture_output=True,
                             text=True, env=env, timeout=300)
        requests = list(server.requests)
    if run.returncode != 0 or ANSWER not in run.stdout:
        return {"ok": False, "exit_code": run.returncode, "stderr_tail": run.stderr[-600:]}
    tiers = Counter(COMPACTED.findall(run.stderr + run.stdout))
    return {"ok": True, **figures(*prompts(requests), window=session.window), "compactions": dict(tiers)}


def compare(ours: Contender, theirs: Contender | None, session: Session = CACHE) -> dict:
    """One session run by each agent: `ours` and `theirs` carry their script (session.script()
    in their argument names)."""
    result = {"session": session.name, "rounds": session.rounds, "window": session.window,
              "ours": measure(ours, session)}
    if theirs is not None:
        result["upstream"] = measure(theirs, session)
        if result["ours"]["ok"] and result["upstream"]["ok"]:
            result["cost_ratio"] = round(result["ours"]["cost_tokens"] / result["upstream"]["cost_tokens"], 3)
    return result
