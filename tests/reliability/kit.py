"""What the reliability trials share: the table's rows, a tree's fingerprint, and the demo task
driven through the real client against the loopback server."""

from __future__ import annotations

import copy
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from corecoder import LLM, build_agent
from corecoder.demo import SCRIPT, TASK, copy_project
from corecoder.testing import ScriptServer

# The rows of RESULTS.md, in order: the marker name a test carries -> (category, what was tried).
ROWS = {
    "faults": ("Provider faults at every round",
               "429 with Retry-After, 500, 529, a stream dropped midway, an error event inside the stream; "
               "streamed and non-streamed; before each round of the demo task"),
    "dialects": ("Streaming dialects at every round",
                 "every tool-call streaming quirk, on the demo task and on a variant with two calls a round"),
    "reasoning": ("Reasoning fields at every round",
                  "reasoning_content, reasoning, `<think>` tags: shown to the user, kept out of the history"),
    "bad_round": ("Malformed arguments at every round",
                  "truncated JSON, a JSON array, a wrong type, in place of each round's call"),
    "corpus": ("Malformed tool calls",
               "per tool: each required argument missing, each argument of each wrong type, extra arguments, "
               "empty strings, 1 MB arguments, symlinks (to files, to dirs, dangling, loops), directories for "
               "files and files for directories, binary and non-UTF-8 files, missing paths, invalid JSON, "
               "non-object JSON, unknown tool names"),
    "crash": ("kill -9 during a write",
              "a child writing large files through write_file and edit_file, killed at random moments"),
    "mcp": ("MCP servers that misbehave, through the agent",
            "stderr flood, banner on stdout, crash mid-call, hang; alone, combined, and beside a built-in call"),
    "sessions": ("Session ids and the sessions dir",
                 "fuzzed ids (tests/test_session.py, imported), fuzzed sessions-dir entries: links out, "
                 "dangling links, directories, odd names"),
    "hostile": ("A hostile repository, through the command",
                "its hooks and MCP servers before trust (with -p, --trust-project, the REPL's question, "
                "a changed file), a .env that redirects the endpoint or moves the config dir, AGENTS.md "
                "linked to /proc/self/environ or a FIFO, an MCP server reading the environment, escape "
                "sequences in files and answers, the guard's variants of rm and force push, SIGTERM, "
                "SIGHUP and a double Ctrl+C while a command runs"),
    "inputs": ("Strange files, patterns and providers, through the command",
               "read, edit, write and grep of a FIFO, /dev/zero and a link to it; a pattern that "
               "backtracks on a line, Ctrl+C during a long search; a stream that stalls or never "
               "ends; config files nested "
               "100,000 deep or priced NaN; a file name that is not UTF-8; arguments nested 10,000 "
               "deep; a tree 1,200 deep; writes over read-only and hard-linked files; a provider "
               "sending a chunk that is not JSON, a web page, no choices, usage in strings, a "
               "context overflow in Anthropic's and Gemini's words, a reply cut at its output "
               "limit; one session resumed in two terminals, a session edited by hand; a hook "
               "vetoing in 5 MB or in Latin-1; a command redirecting its own output; MCP servers "
               "with a malformed schema, a 300 MB line, one name for two; an edit matching "
               "nothing in a million lines or for 400 retyped ones; 1 MB of arguments in "
               "7-character fragments; temp files a kill -9 left, beside look-alike files of the "
               "user's own"),
    "links": ("Links a cloned project holds",
              "its .corecoder, its outputs folder or the file an output will be kept under, each a link "
              "to a folder of the user's full of look-alike names; pruning beside the user's own "
              "files named as outputs are"),
    "instructions": ("Secrets through the project's instructions",
                     "AGENTS.md and CLAUDE.md as relative, absolute and chained links or hard links to "
                     ".git/config, .env and plain notes, in the root and in subfolders"),
    "dotenv": ("A project's .env and the user's endpoint and key",
               "every mix of endpoint and key variables in the project's .env and in the user's "
               "environment, trusted or not; a sparse 1 GB .env; through the command with -p and "
               "--trust-project"),
    "trust": ("Trust given to exactly what was shown",
              "hooks.json and mcp.json padded past the limit, an MCP server's env, the .env's "
              "routes in the fingerprint, the command started in the home folder"),
    "consent": ("What the user approves",
                "arguments past a line's width, on many lines, with escape sequences; Ctrl+C at a "
                "worker's question while its siblings wait to ask theirs"),
    "escapes": ("Escape sequences on every path to the terminal",
                "generated strings of ESC, CSI, OSC, BEL, backspace and carriage returns in a hook's "
                "stderr and command, an unknown hooks.json event, an MCP server's name and command, "
                "the .env's model name, through -p with --trust-project"),
    "guard": ("The guard's categories, as people spell them",
              "generated spellings of each category: prefixes (sudo, env, command, nohup), quoting, "
              "home spellings, separators, up to two wrappers (bash -c, sh -c, $(...), backticks, "
              "eval, subshells, if), git's own options, device names; and look-alikes that must run"),
    "undo": ("Undo and the user's own work",
             "generated interleavings of the agent's writes, edits and creates with the user's edits, "
             "deletes and re-creates; a project re-created at the same path; a folder or the file "
             "swapped for a link out; a cd into another project"),
    "turns": ("Every turn saved",
              "a Ctrl+C at each of the 34 system calls of a first save, before and after each; a turn "
              "whose last write a Ctrl+C skipped; the summary request of a 40 MB resumed session"),
    "bounds": ("Bounds where the last round missed them",
               "100,000 parallel calls checked, run, saved and resumed; 200,000 messages resumed; a "
               "session damaged midway; braces past the bound; glob past entries it cannot stat or "
               "list; grep stopped inside a file and by a real Ctrl+C; replace_all 300,000 times in "
               "6.5 MB; a 2 MB write_file in a 32k window; a reply kept alive or trickled"),
}


def fingerprint(root: Path) -> dict[str, str]:
    """Every entry under root, links not followed: a file's hash, a link's target, or "dir"."""
    seen = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder, name)
            rel = str(path.relative_to(root))
            if path.is_symlink():
                seen[rel] = "-> " + os.readlink(path)
            elif path.is_dir():
                seen[rel] = "dir"
            else:
                seen[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return seen


def without_ids(messages: list[dict]) -> list[dict]:
    """The history with each tool-call id replaced by its order of appearance: two runs whose
    scripts number their calls differently compare equal when they say the same things."""
    names: dict[str, str] = {}

    def alias(call_id: str) -> str:
        return names.setdefault(call_id, f"call#{len(names) + 1}")

    out = copy.deepcopy(messages)
    for message in out:
        for call in message.get("tool_calls") or []:
            call["id"] = alias(call["id"])
        if message["role"] == "tool":
            message["tool_call_id"] = alias(message["tool_call_id"])
    return out


# The demo task (corecoder/demo), and a variant whose every tool round also reads test_stats.py:
# two calls a round, so the dialects that number parallel calls oddly have something to get wrong.
PARTNER = {"name": "read_file", "arguments": {"path": "test_stats.py"}}
DEMO = [copy.deepcopy(t) for t in SCRIPT]
PAIRED = [{**t, "tool_calls": [*t["tool_calls"], PARTNER]} if isinstance(t, dict) else t for t in DEMO]
ROUNDS = len(DEMO)


def as_dict(turn) -> dict:
    return copy.deepcopy(turn) if isinstance(turn, dict) else {"text": turn}


@dataclass
class Run:
    answer: str
    messages: list[dict]
    stats: str  # stats.py after the run: the fix
    requests: list[dict]  # the bodies of every chat request the server received
    sleeps: list[float]
    events: list = field(default_factory=list)


def run_demo(turns: list, workdir: Path, *, stream: bool = True) -> Run:
    """The demo task, on a fresh copy of its project, through corecoder.LLM against a ScriptServer.
    Backoff sleeps are recorded, not slept."""
    project = copy_project(workdir)
    sleeps: list[float] = []
    with ScriptServer(turns) as server:
        llm = LLM("scripted", base_url=server.base_url, api_key="x", sleep=sleeps.append, seed=1, stream=stream)
        agent = build_agent(llm, project)
        events: list = []
        agent.subscribe(events.append)
        answer = agent.chat(TASK)
    bodies = [r["body"] for r in server.requests if r["path"].endswith("/chat/completions")]
    return Run(answer, agent.messages, (project / "stats.py").read_text(), bodies, sleeps, events)
