"""The interactive loop: read a line, run a turn or a /command, show it, repeat.

Everything the REPL touches comes in through its constructor (the agent, the
ledger, a rich Console, anything with `.prompt()`, the config), so a test drives
it with a list of lines and a Console writing to a string. Slash commands are
handled here and never reach the model, an unknown one included: a typo such as
`/rest` should not cost a model call or end up in the history.

Ctrl+C during a turn stops the turn (the agent answers any cut-off tool call, so
the history stays legal) and comes back to the prompt; at the prompt, Ctrl+C or
Ctrl+D leaves.
"""

from __future__ import annotations

import _thread
import contextlib
import difflib
import json
import os
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from .. import __version__
from ..checkpoints import snapshot
from ..files import looks_binary
from ..text import marker, shorten
from ..workspace import project_root
from .app import FAILURES, connect, unexpected
from .pricing import SCRIPTED
from .render import Renderer
from .trace import printable, to_stderr

HELP = (
    ("/help", "list these commands"),
    ("/model [NAME]",
     "show the model, or switch to NAME (provider/model); the conversation carries on"),
    ("/tokens", "tokens and cost so far, and how long the history is"),
    ("/context", "how full the context window is, and the project instructions in use"),
    ("/compact [FOCUS]", "shrink the history, keeping what FOCUS names"),
    ("/plan", "plan mode on or off: read-only until you approve (type approve) the agent's plan"),
    ("/undo", "put back the last file the agent wrote or edited"),
    ("/diff", "the files the agent changed in this session"),
    ("/save", "write the session to disk now (it is saved as you go, too)"),
    ("/sessions", "the saved sessions; resume one with `corecoder --resume ID`"),
    ("/session", "this session: its id, its file and size, when it started"),
    ("/providers", "the provider presets, their endpoints, and which have a key set"),
    ("/mcp [reconnect NAME]", "the MCP servers and their state; restart one"),
    ("/tools", "the tools the model is offered, MCP tools included"),
    ("/verbosity [quiet|brief|full]", "how much of each tool's result is shown (brief: a line)"),
    ("/reset", "start over: clear the history and the todo list"),
    ("/quit, /exit", "leave (so do quit, exit, and Ctrl+D or Ctrl+C at an empty prompt)"),
)
# in the config dir; hooks.json and mcp.json also in .corecoder/
FILES = ("hooks.json", "mcp.json", "pricing.json")
PROMPT = "› "
PLAN_PROMPT = "plan › "  # plan mode is on: nothing will be changed
DIFF_LINES = 40  # of each file in /diff
KEYS = "Enter sends · Alt+Enter adds a line · Ctrl+C stops a turn or clears the line"


class Repl:
    def __init__(self, app, console, session, *, env: Mapping[str, str] | None = None,
                 cwd: Path | None = None, connect: Callable = connect, questions=None,
                 keys: int | None = None):
        self.app = app
        self.agent = app.agent
        self.ledger = app.ledger
        self.console = console
        self.session = session
        self.questions = questions or session  # consent answers: kept out of the input history
        self.env = os.environ if env is None else env  # where /model looks for keys and base URLs
        # where /model looks for .env: where we started
        self.cwd = Path.cwd() if cwd is None else cwd
        self.connect = connect
        self.renderer = self.agent.subscribe(Renderer(console))
        self.stopping = False  # Ctrl+C came at a question: no other question this turn
        self.keys = keys  # the terminal, read while a turn runs (steering.py); None: not read
        self.steering = None  # while a turn runs: what reads the keys typed meanwhile
        self.unsent = ""  # typed during the last turn, not said to it: the next prompt's text
        self.typed_during_turn: list[str] = []  # commands typed while it ran: run after it
        app.consent.ask = self.ask  # consent questions come to this terminal
        self.commands = {"help": self.help, "model": self.model, "tokens": self.tokens,
                         "compact": self.compact, "context": self.context, "plan": self.plan,
                         "undo": self.undo, "diff": self.diff, "save": self.save,
                         "sessions": self.sessions, "session": self.this_session,
                         "providers": self.providers, "mcp": self.mcp, "reset": self.reset,
                         "tools": self.tools, "verbosity": self.verbosity,
                         "quit": self.quit, "exit": self.quit}
        self.measured: tuple[int, tuple[int, int]] = (-1, (0, 1))  # history length -> size

    @property
    def config(self):
        return self.app.config

    def run(self) -> int:
        self.banner()
        while True:
            try:
                if self.typed_during_turn:  # a command typed while the last turn ran
                    line = self.typed_during_turn.pop(0)
                else:  # say it each time: the consent question changes it
                    line = self.session.prompt(PLAN_PROMPT if self.app.plan.on else PROMPT,
                                               bottom_toolbar=self.status_line,
                                               default=self.unsent)
                self.unsent = ""
            except (KeyboardInterrupt, EOFError):
                break
            if not self.handle(line):
                break
        if self.app.log.path.exists():  # it said something: say how to carry on with it
            self.say(f"resume with: corecoder --resume {self.app.log.id}", "dim")
        return 0

    def handle(self, line: str) -> bool:
        """Act on one line of input. False means: leave."""
        text = line.strip()
        if not text:
            return True
        if text.lower() in ("quit", "exit"):  # as upstream's REPL, and a shell, take them
            return False
        if text.startswith("/"):
            return self.command(text)
        if self.app.plan.on and text.lower() in ("approve", "approved", "go", "go ahead"):
            self.app.plan.on = False
            self.say("plan approved: plan mode is off", "green")
            text = "I approve the plan. Carry it out now."
        self.turn(self.app.ask, text)
        self.say(self.ledger.summary(), "dim")
        return True

    def turn(self, work: Callable, *args) -> None:
        """A turn, and what the user types while it runs said to it (steering.py)."""
        from .steering import Steering

        while True:
            with Steering(self.agent, self.renderer.typing, self.keys) as self.steering:
                stopped = self.attempt(work, *args)
                while self.agent.steering and not stopped:  # said as the answer came: answer it
                    stopped = self.attempt(self.agent.run)
            self.typed_during_turn += self.steering.commands  # the keys are no longer read
            if not self.agent.steering:
                break
            # said as the turn ended or was stopped: Enter was pressed, so it is sent, and the
            # conversation goes on with it (as a line typed at the prompt would)
            work, args = self.agent.run, ()
        self.unsent = self.steering.typed.strip()  # typed, not sent: under the next prompt
        self.steering, self.renderer.typed = None, ""

    def command(self, text: str) -> bool:
        name, arg = (text[1:].split(maxsplit=1) + ["", ""])[:2]
        method = self.commands.get(name.lower())
        if method is None:
            self.say(f"unknown command /{name} (not sent to the model); /help lists the commands",
                     "red")
            return True
        return method(arg.strip()) is not False

    def attempt(self, work: Callable, *args) -> bool:
        """Run something that talks to the model; a failure or Ctrl+C ends it, not the REPL.
        True if it was stopped (Ctrl+C) or failed."""
        outcome, self.stopping = None, False
        try:
            work(*args)
        except KeyboardInterrupt:
            outcome = ("interrupted", "yellow")
        except FAILURES as e:
            outcome = (f"error: {e}", "bold red")
        except Exception as e:  # a bug: say it in a line, and keep the conversation going
            outcome = (f"error: {unexpected(e)}", "bold red")
        finally:
            self.renderer.close()  # freeze a half-streamed answer before saying anything under it
        if outcome:
            self.say(*outcome)
        return outcome is not None

    def say(self, text: str, style: str = "") -> None:
        self.console.print(printable(text), style=style, markup=False, highlight=False)

    def banner(self) -> None:
        scripted = " (a script plays the model)" if self.config.model == SCRIPTED else ""
        self.say(f"corecoder {__version__} · {self.config.label}{scripted} · {self.cwd}", "bold")
        hooks, servers = self.app.hooks.count(), len(self.app.mcp.status()) if self.app.mcp else 0
        self.say(f"session {self.app.log.id} · {hooks} hook{'s' * (hooks != 1)} · "
                 f"{servers} MCP server{'s' * (servers != 1)}", "dim")
        if self.app.consent.allow_all:
            self.say("--yes: files are changed and commands run without asking", "bold yellow")
        self.say(f"/help for commands · {KEYS}", "dim")

    def ask(self, tool, args: dict) -> str:
        """Consent: may this call run? Once, always (for this tool, in this project), or no.

        The user approves what they see: every argument whole, wrapped by the terminal, never
        cut. Ctrl+C at the question stops the turn, a worker's question too (it is asked in the
        worker's thread, so the main thread is told as a real Ctrl+C would tell it), and no
        sibling's question comes after it: the next line typed is a prompt, not an answer."""
        if self.stopping:
            raise KeyboardInterrupt
        self.renderer.close()
        self.renderer.asking = True  # no spinner over the question (a sibling call may finish)
        try:
            self.say(f"allow {tool.name}?", "bold yellow")
            for name, value in args.items():
                shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
                self.say(f"  {name}: {shown}", "yellow")
            with self.steering.paused() if self.steering else contextlib.nullcontext():
                answer = (self.questions.prompt("  [y]es once · [a]lways for this tool · [n]o › ")
                          .strip().lower())
        except KeyboardInterrupt:
            self.stopping = True
            if threading.current_thread() is not threading.main_thread():
                _thread.interrupt_main()
            raise
        finally:
            self.renderer.asking = False
        return {"y": "once", "yes": "once", "a": "always", "always": "always"}.get(answer, "deny")

    # The commands. Each takes the text after its name; `quit` returns False.

    def help(self, arg: str = "") -> None:
        width = max(len(usage) for usage, _ in HELP)
        for usage, what in HELP:
            self.say(f"  {usage.ljust(width)}  {what}")
        self.say(KEYS, "dim")
        self.say(f"files: {', '.join(FILES)} in {self.config.home}; "
                 "hooks.json and mcp.json also in .corecoder/; "
                 "AGENTS.md (or CLAUDE.md) in the project", "dim")

    def model(self, name: str = "") -> None:
        from .config import ConfigError, load_config, require_key

        if not name:
            where = f" at {self.config.base_url}" if self.config.base_url else ""
            self.say(f"model: {self.config.label}{where}")
            return
        try:
            config = load_config(self.cwd, self.env, model=name,
                                 project_routes=self.app.trusted)
            require_key(config)
            llm = self.connect(config)  # each call is priced by the model that served it
        except ConfigError as e:
            self.say(f"still {self.config.label}: {e}", "red")
            return
        if not config.provider.reasoning_in_history:
            # Reasoning kept for DeepSeek/Kimi is a field other APIs may reject as unknown.
            for message in self.agent.messages:
                message.pop("reasoning_content", None)
        self.agent.llm = llm
        self.app.config = config
        self.app.log.save()  # so that a resume after /quit picks the new model
        self.say(f"model: {config.label} (the conversation carries on)")
        for note in config.notes:  # a project's .env that names the endpoint, say
            self.say(f"warning: {note}", "yellow")

    def tools(self, arg: str = "") -> None:
        for name, tool in sorted(self.agent.tools.items()):
            first = (tool.description.split(". ")[0] or "(no description)").rstrip(".")
            self.say(shorten(f"  {name}  {' '.join(first.split())}", 100, tail=0))

    def tokens(self, arg: str = "") -> None:
        self.say(self.ledger.summary())
        self.say(f"{len(self.agent.messages)} messages in the history", "dim")

    def compact(self, focus: str = "") -> None:
        compact = getattr(self.agent.context, "compact", None)
        if compact is None:
            policy = type(self.agent.context).__name__
            self.say(f"the context policy ({policy}) keeps the whole history; "
                     "there is nothing to compact", "dim")
            return
        before, done = list(self.agent.messages), []

        def compacted() -> None:  # the history is replaced once the policy has done it all
            self.agent.messages, what = compact(self.agent.messages, focus or None)
            done.append(what)

        self.attempt(compacted)
        if done == [None] and self.agent.messages == before:  # nothing older than kept
            self.say("nothing to compact yet: every message is among the latest turns, which a "
                     "summary keeps word for word", "dim")
            return
        after = self.agent.messages  # unchanged: a failure, Ctrl+C
        new, old = (len(json.dumps(m, ensure_ascii=False)) for m in (after, before))
        if after != before and new >= old:  # a summary no shorter than what it replaced
            self.agent.messages = before
            self.say("the summary was no shorter than the turns it would replace: the history "
                     "is kept as it was", "dim")
            return
        self.app.log.flush()  # the session file says so now: /sessions, a crash, a resume
        self.say(f"history: {len(before)} → {len(self.agent.messages)} messages", "dim")

    def context_size(self) -> tuple[int, int]:
        """What the next request would take of the window, in tokens, and the window."""
        from ..tokens import Estimate, tools_tokens, window_for

        window = getattr(self.agent.context, "window", None) or window_for(self.agent.llm.model)
        schemas = [t.schema() for t in self.agent.tools.values()]
        return Estimate().of(self.agent.request(), tools_tokens(schemas)), window

    def status_line(self) -> str:
        """The line under the prompt: the model, how full its context window is, the cost so
        far, and plan mode. (The calls running in a turn: its spinner names them.) Drawn at
        every key: the size is measured again only when the history has changed."""
        if self.measured[0] != len(self.agent.messages):
            self.measured = (len(self.agent.messages), self.context_size())
        used, window = self.measured[1]
        cost = self.ledger.cost
        return (f" {self.config.label} · context ~{used:,} of {window:,} ({used / window:.0%}) · "
                f"{'cost unknown' if cost is None else f'${cost:.4f}'} · "
                f"plan mode {'on' if self.app.plan.on else 'off'}")

    def verbosity(self, arg: str = "") -> None:
        from .render import VERBOSITY

        if arg:
            if arg not in VERBOSITY:
                self.say(f"/verbosity takes one of {', '.join(VERBOSITY)}", "red")
                return
            self.renderer.verbosity = arg
        self.say(f"verbosity: {self.renderer.verbosity} (of each result: quiet shows none "
                 "but a setback's line, brief its first line, full all of it)", "dim")

    def context(self, arg: str = "") -> None:
        from ..instructions import REPO_WIDE, instruction_files
        from ..workspace import project_root

        used, window = self.context_size()
        self.say(f"context: ~{used:,} of {window:,} tokens ({used / window:.0%}) · "
                 f"{len(self.agent.messages)} messages · {len(self.agent.tools)} tools")
        policy = self.agent.context
        if hasattr(policy, "high"):  # the Compactor: where it starts, and what it cuts down to
            self.say(f"compaction: at {policy.high:.0%} of the window "
                     f"(~{round(window * policy.high):,} tokens), down to {policy.low:.0%}; "
                     "CORECODER_COMPACT_AT moves where it starts", "dim")
        wide = project_root(self.cwd) / REPO_WIDE  # GitHub Copilot's, read first
        files = [*([wide] if wide.is_file() else []), *instruction_files(self.cwd)]  # at start
        self.say("project instructions: "
                 + (", ".join(str(f) for f in files) if files else "none (AGENTS.md)"),
                 "dim")

    def plan(self, arg: str = "") -> None:
        self.app.plan.on = not self.app.plan.on
        if self.app.plan.on:
            self.say("plan mode on: the agent may read and search but not change anything; "
                     "type approve (or /plan) when its plan suits you", "yellow")
        else:
            self.say("plan mode off", "green")

    def undo(self, arg: str = "") -> None:
        self.say(self.app.checkpoints.undo(self.agent.workspace.cwd))  # from where the agent is

    def diff(self, arg: str = "") -> None:
        changes = changed_files(self.app.checkpoints)
        if not changes:
            self.say("no files changed in this session", "dim")
        for change in changes:
            self.say(f"{change.status}: {change.path}", "bold")
            if change.diff:
                self.say(change.diff)

    def save(self, arg: str = "") -> None:
        try:
            self.say(f"saved to {self.app.log.save()}; "
                     f"resume with `corecoder --resume {self.app.log.id}`", "dim")
        except OSError as e:
            self.say(f"could not save: {e}", "red")

    def sessions(self, arg: str = "") -> None:
        from ..session import list_sessions

        here = project_root(self.cwd)
        # this project's first, newest first within each (a stable sort keeps list_sessions' order)
        rows = sorted(list_sessions(self.config.home),
                      key=lambda row: not (row.cwd and Path(row.cwd).is_relative_to(here)))
        if not rows:
            self.say("no saved sessions yet", "dim")
        for row in rows[:20]:
            mark = "*" if row.id == self.app.log.id else " "  # the one this REPL is writing
            used = datetime.fromtimestamp(row.modified).strftime("%Y-%m-%d %H:%M")
            self.say(f"{mark} {row.id}  {used}  {row.messages:>4} messages  "
                     f"{shorten(row.cwd or '?', 40, tail=1)}  {row.preview}")

    def this_session(self, arg: str = "") -> None:
        log = self.app.log
        try:
            log.save()  # so that the file is there to name, and its size is now's
            with open(log.path, "rb") as f:
                size, first = os.fstat(f.fileno()).st_size, json.loads(f.readline())
            started = first.get("created") or "when, its first line does not say"
        except (OSError, ValueError, AttributeError) as e:
            self.say(f"session {log.id}: {log.path} cannot be read ({e})", "red")
            return
        self.say(f"session {log.id}: {log.path} ({size:,} bytes), started {started}")
        self.say(f"resume it with: corecoder --resume {log.id}", "dim")

    def providers(self, arg: str = "") -> None:
        from .config import PROVIDERS

        for provider in PROVIDERS.values():
            keys = provider.key_env or ()
            held = [name for name in keys if self.env.get(name)]  # (os.environ by default)
            key = ("no key needed" if not provider.needs_key else
                   f"key: {held[0]}" if held else f"no key ({' or '.join(keys)})")
            elsewhere = {"mock": "a script file, offline", "openai": "api.openai.com",
                         "litellm": "LiteLLM's providers (an extra)"}
            where = provider.base_url or elsewhere[provider.name]
            key = "each provider's own key" if provider.name == "litellm" else key
            mark = "*" if provider.name == self.config.provider.name else " "
            if mark == "*" and self.config.base_url not in (None, provider.base_url):
                where = f"{self.config.base_url} (yours)"  # CORECODER_ or OPENAI_BASE_URL
            self.say(f"{mark} {provider.name:<11} {where:<58} {key}")

    def mcp(self, arg: str = "") -> None:
        hub = self.app.mcp
        if hub is None:
            self.say("no MCP servers: add them to mcp.json (see /help)", "dim")
            return
        words = arg.split()
        if words[:1] == ["reconnect"] and len(words) == 2:
            if words[1] not in {row.name for row in hub.status()}:
                self.say(f"no MCP server named {words[1]!r}", "red")
            else:
                self.attempt(hub.reconnect, words[1])
        elif words:
            self.say("usage: /mcp, or /mcp reconnect NAME", "red")
        for row in hub.status():
            self.say(f"  {row.name}: {row.state} · {row.tools} tools"
                     + (f" · {row.note}" if row.note else ""))

    def reset(self, arg: str = "") -> None:
        self.agent.messages = []
        self.agent.workspace.todos = []
        self.agent.first_state = None  # a fresh start: the next system prompt tells the state anew
        self.say("history and todo list cleared", "dim")

    def quit(self, arg: str = "") -> bool:
        return False


@dataclass(frozen=True)
class Change:
    path: str  # relative to the project root
    status: str  # created, deleted, modified
    diff: str = ""  # a short unified diff, or a note (binary, too large, mode)


def changed_files(checkpoints) -> list[Change]:
    """The files changed since the session's checkpoints first copied them, each with a short
    diff: what /diff shows."""
    changes = []
    for path, first in checkpoints.first.items():
        now = snapshot(path, checkpoints.max_bytes)
        if now == first:
            continue
        shown = str(path.relative_to(checkpoints.root))
        if not first.existed or not now.existed:
            changes.append(Change(shown, "created" if now.existed else "deleted"))
        else:
            changes.append(Change(shown, "modified", short_diff(shown, first, now)))
    return changes


def short_diff(shown: str, before, after) -> str:
    notes = [f"mode {before.mode:o} -> {after.mode:o}"] if before.mode != after.mode else []
    if before.too_large or after.too_large:
        return "; ".join([*notes, "too large to compare"])
    if looks_binary(before.data) or looks_binary(after.data):
        return "; ".join([*notes, f"binary, {before.size:,} -> {after.size:,} bytes"])
    old = before.data.decode("utf-8", "replace").splitlines(keepends=True)
    new = after.data.decode("utf-8", "replace").splitlines(keepends=True)
    diff = difflib.unified_diff(old, new, f"a/{shown}", f"b/{shown}")
    lines = [line.rstrip("\n") for line in diff]
    if len(lines) > DIFF_LINES:
        lines = [*lines[:DIFF_LINES], marker(len(lines) - DIFF_LINES, "diff lines")]
    return "\n".join([*notes, *lines])


def ask_trust(commands: list[str]) -> bool:
    """Before the REPL starts: may the project's own configuration run? (see trust.py)"""
    to_stderr("This project has its own configuration. Trusting it runs these commands on this "
              "machine:")
    for line in commands:
        to_stderr(f"  {line}")
    try:
        answer = input("Trust this project? [y]es, and remember · [n]o, not this time › ")
    except (EOFError, KeyboardInterrupt):
        return False
    return answer.strip().lower() in ("y", "yes")


def prompt_session(home: Path):
    """The line editor: history kept in `home`, Enter sends, Alt+Enter or Esc Enter adds a line."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import FileHistory
    from prompt_toolkit.key_binding import KeyBindings

    keys = KeyBindings()

    @keys.add("escape", "enter")  # terminals send Alt+Enter as Esc then Enter
    def _newline(event) -> None:
        event.current_buffer.insert_text("\n")

    @keys.add("c-c")  # as in a shell: Ctrl+C clears what is typed; at an empty prompt, leave
    def _clear_or_leave(event) -> None:
        if event.current_buffer.text:
            event.current_buffer.reset()
        else:
            event.app.exit(exception=KeyboardInterrupt())

    home.mkdir(parents=True, exist_ok=True)
    return PromptSession(PROMPT, history=FileHistory(str(home / "history")), key_bindings=keys,
                         prompt_continuation="  ")


def run_repl(app) -> int:
    from rich.console import Console

    try:
        from prompt_toolkit import PromptSession

        questions = PromptSession()  # a history of its own, in memory: answers are not inputs
        keys = sys.stdin.fileno() if sys.stdin.isatty() else None  # read during turns too
        return Repl(app, Console(), prompt_session(app.config.home), questions=questions,
                    env=app.env, keys=keys).run()
    finally:
        app.stop()
