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

import os
from collections.abc import Callable, Mapping
from pathlib import Path

from . import __version__
from .app import FAILURES, connect
from .render import Renderer

HELP = (
    ("/help", "list these commands"),
    ("/model [NAME]", "show the model, or switch to NAME (provider/model); the conversation carries on"),
    ("/tokens", "tokens and cost so far, and how long the history is"),
    ("/compact [FOCUS]", "shrink the history, keeping what FOCUS names"),
    ("/reset", "start over: clear the history and the todo list"),
    ("/quit, /exit", "leave (Ctrl+D at the prompt does too)"),
)
KEYS = "Enter sends · Alt+Enter (or Esc, Enter) adds a line · Ctrl+C stops a turn"


class Repl:
    def __init__(self, agent, ledger, console, session, config, *, env: Mapping[str, str] | None = None,
                 cwd: Path | None = None, connect: Callable = connect):
        self.agent = agent
        self.ledger = ledger
        self.console = console
        self.session = session
        self.config = config
        self.env = os.environ if env is None else env  # where /model looks for keys and base URLs
        self.cwd = Path.cwd() if cwd is None else cwd  # where /model looks for .env: where we started
        self.connect = connect
        self.renderer = agent.subscribe(Renderer(console))
        self.commands = {"help": self.help, "model": self.model, "tokens": self.tokens, "compact": self.compact,
                         "reset": self.reset, "quit": self.quit, "exit": self.quit}

    def run(self) -> int:
        self.banner()
        while True:
            try:
                line = self.session.prompt()
            except (KeyboardInterrupt, EOFError):
                return 0
            if not self.handle(line):
                return 0

    def handle(self, line: str) -> bool:
        """Act on one line of input. False means: leave."""
        text = line.strip()
        if not text:
            return True
        if text.startswith("/"):
            return self.command(text)
        self.attempt(self.agent.chat, text)
        self.say(self.ledger.summary(), "dim")
        return True

    def command(self, text: str) -> bool:
        name, arg = (text[1:].split(maxsplit=1) + ["", ""])[:2]
        method = self.commands.get(name.lower())
        if method is None:
            self.say(f"unknown command /{name} (not sent to the model); /help lists the commands", "red")
            return True
        return method(arg.strip()) is not False

    def attempt(self, work: Callable, *args) -> None:
        """Run something that talks to the model; a failure or Ctrl+C ends it, not the REPL."""
        outcome = None
        try:
            work(*args)
        except KeyboardInterrupt:
            outcome = ("interrupted", "yellow")
        except FAILURES as e:
            outcome = (f"error: {e}", "bold red")
        finally:
            self.renderer.close()  # freeze a half-streamed answer before saying anything under it
        if outcome:
            self.say(*outcome)

    def say(self, text: str, style: str = "") -> None:
        self.console.print(text, style=style, markup=False, highlight=False)

    def banner(self) -> None:
        self.say(f"corecoder {__version__} · {self.config.label} · {self.cwd}", "bold")
        self.say(f"/help for commands · {KEYS}", "dim")

    # The commands. Each takes the text after its name; `quit` returns False.

    def help(self, arg: str = "") -> None:
        width = max(len(usage) for usage, _ in HELP)
        for usage, what in HELP:
            self.say(f"  {usage.ljust(width)}  {what}")
        self.say(KEYS, "dim")

    def model(self, name: str = "") -> None:
        from .config import ConfigError, load_config, require_key

        if not name:
            where = f" at {self.config.base_url}" if self.config.base_url else ""
            self.say(f"model: {self.config.label}{where}")
            return
        try:
            config = load_config(self.cwd, self.env, model=name)
            require_key(config)
        except ConfigError as e:
            self.say(f"still {self.config.label}: {e}", "red")
            return
        if not config.provider.reasoning_in_history:
            # Reasoning kept for DeepSeek/Kimi is a field other APIs may reject as unknown.
            for message in self.agent.messages:
                message.pop("reasoning_content", None)
        self.agent.llm = self.connect(config)  # each call is priced by the model that served it
        self.config = config
        self.say(f"model: {config.label} (the conversation carries on)")

    def tokens(self, arg: str = "") -> None:
        self.say(self.ledger.summary())
        self.say(f"{len(self.agent.messages)} messages in the history", "dim")

    def compact(self, focus: str = "") -> None:
        compact = getattr(self.agent.context, "compact", None)
        if compact is None:
            policy = type(self.agent.context).__name__
            self.say(f"the context policy ({policy}) keeps the whole history; there is nothing to compact", "dim")
            return
        before = len(self.agent.messages)
        self.attempt(compact, self.agent, focus or None)
        self.say(f"history: {before} → {len(self.agent.messages)} messages", "dim")

    def reset(self, arg: str = "") -> None:
        self.agent.messages = []
        self.agent.workspace.todos = []
        self.say("history and todo list cleared", "dim")

    def quit(self, arg: str = "") -> bool:
        return False


def prompt_session(home: Path):
    """The line editor: history kept in `home`, Enter sends, Alt+Enter or Esc Enter adds a line."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import FileHistory
    from prompt_toolkit.key_binding import KeyBindings

    keys = KeyBindings()

    @keys.add("escape", "enter")  # terminals send Alt+Enter as Esc then Enter
    def _newline(event) -> None:
        event.current_buffer.insert_text("\n")

    home.mkdir(parents=True, exist_ok=True)
    return PromptSession("› ", history=FileHistory(str(home / "history")), key_bindings=keys,
                         prompt_continuation="  ")


def run_repl(agent, ledger, config) -> int:
    from rich.console import Console

    return Repl(agent, ledger, Console(), prompt_session(config.home), config).run()
