"""Assembling what the `corecoder` command runs, and running one task with `-p`.

`start` builds what a real session puts around the finished agent (assemble.build_agent):
the model client from the config, the gates (plan mode, hooks, consent, checkpoints),
compaction sized to the model, cost accounting, the session log, and the MCP servers.
Kept apart from cli.py so `--version` and `--help` import none of it.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from ..agent import Agent
from ..assemble import build_agent
from ..checkpoints import Checkpoints
from ..events import Finished, UsageReported, WorkerEvent
from ..hooks import HookError, Hooks, PromptRefused, load_hooks
from ..mcp import MCPConfigError
from ..messages import IllegalHistory, ModelError
from ..permissions import Consent, PlanMode
from ..scripted import ScriptError
from ..session import SessionError, SessionLog
from ..tools.bash import Bash
from ..trust import is_trusted, project_folder, read_project_config, remember_trust, untrusted_note
from ..workspace import project_root
from .config import NO_KEY, Config, ConfigError, as_typed, load_config, require_key
from .pricing import Ledger, load_prices
from .trace import Printer, printable, to_stderr

# What ends a task with a message: the model gave up for good, a script ran out, or a history
# the API would reject. Anything else is a bug: said in one line too (`unexpected`).
FAILURES = (ModelError, ScriptError, IllegalHistory, PromptRefused)
# What stops the command from starting, said in one line: a setting, a hooks or mcp.json
# file, a session id.
STARTUP_ERRORS = (ConfigError, HookError, SessionError, MCPConfigError)


@dataclass
class App:
    """One run of the command: the agent, and the pieces the REPL's commands reach for."""

    config: Config
    agent: Agent
    ledger: Ledger
    plan: PlanMode
    hooks: Hooks
    consent: Consent
    checkpoints: Checkpoints
    log: SessionLog
    mcp: object | None = None  # an MCPHub when mcp.json names servers
    env: dict | None = None  # the settings it started with (the environment, then the flags)
    trusted: bool = True  # the project's own configuration is used: its hooks, servers, routes

    def ask(self, prompt: str) -> str:
        """One turn: the prompt through the UserPromptSubmit hooks, then to the agent."""
        return self.agent.chat(self.hooks.prompt(prompt, self.agent.workspace.cwd))

    def stop_commands(self) -> None:
        """Kill every command still running, its sub-agents' too (they share the tools)."""
        for tool in list(self.agent.tools.values()):  # a copy: MCP may change them meanwhile
            if isinstance(tool, Bash):
                tool.stop_all()

    def stop(self) -> None:
        """End what this run started: the commands still running, and the MCP servers."""
        self.stop_commands()
        if self.mcp is not None:
            self.mcp.close()


def start(model: str | None = None, *, yes: bool = False, resume: str | None = None,
          trust: bool = False, ask_trust=None, warn=None, settings: dict | None = None,
          cwd: Path | None = None, mcp: dict | None = None) -> App:
    """Everything for this directory (`cwd`, by default the process's) and environment. Raises
    one of STARTUP_ERRORS. `trust`: use the project's own hooks, MCP servers and .env routes
    without asking (--trust-project); `ask_trust(commands) -> bool` asks the user, when there
    is a user to ask; `settings` (from flags) win over the environment's; `mcp`: servers the
    user's editor adds (ACP), by name."""
    cwd, warn = Path(cwd or Path.cwd()), warn or (lambda text: to_stderr(f"warning: {text}"))
    env = {**os.environ, **(settings or {})}
    try:
        config = load_config(cwd, env, model=model)
    except ConfigError as e:
        raise as_typed(e, settings or {}) from None
    log = SessionLog(config.home, resume, resume=resume is not None, on_error=warn)
    if resume and not model and log.meta.get("model"):  # carry on with the model the session used
        model = log.meta["model"]
        config = load_config(cwd, env, model=model)
    own = load_config(cwd, env, model=model, project_routes=False)  # the user's routes alone
    routes = project_routes(config, own)
    trusted = trust_project(config.home, project_root(cwd), trust, ask_trust, warn, routes)
    config = config if trusted else own
    for note in [*config.notes, *(f"this project's .env chooses {r}" for r in routes if trusted)]:
        warn(note)
    require_key(config)
    app = assemble(config, connect(config), cwd, log, yes=yes, warn=warn, trusted=trusted)
    app.mcp = start_mcp(config, cwd, app.agent, warn, trusted=trusted, extra=mcp)
    app.env, app.trusted = env, trusted  # so /model keeps --base-url, --api-key and the trust
    return app


def project_routes(config: Config, own: Config) -> tuple[str, ...]:
    """What the project's .env changes of where the conversation goes, in the user's words."""
    key = config.api_key or ""
    return tuple(route for route, changed in (
        (f"the endpoint {config.base_url} (your prompts and what the tools read go there)",
         config.base_url != own.base_url),
        (f"the API key ending in {key[-4:]!r}", config.api_key != own.api_key),
        (f"the model {config.label}, a file of the project's", config.provider.name == "mock"
         and config.label != own.label)) if changed)


def trust_project(home: Path, root: Path, trust: bool, ask, warn, routes=()) -> bool:
    """May the project's own configuration run, and its .env choose the `routes`? Asked once,
    remembered (see trust.py)."""
    project = read_project_config(root, home, routes)
    if project is None or trust or is_trusted(home, project):
        return True
    if ask is not None and ask(project.commands()):
        remember_trust(home, project)
        return True
    warn(untrusted_note(project))
    return False


def assemble(config: Config, llm, cwd: Path, log: SessionLog, *, tools=None, yes: bool = False,
             warn=print, trusted: bool = True) -> App:
    """The finished agent (build_agent) with this session's gates, cost accounting and
    session log. `trusted`: the project's own hooks.json counts too."""
    plan = PlanMode()
    # the same wherever in the project the command starts
    project = project_folder(project_root(cwd), config.home)  # None: it is the config dir
    files = [config.home / "hooks.json", *([project / "hooks.json"] if trusted and project else [])]
    hooks = Hooks(load_hooks(*files, warn=warn), warn=warn)
    consent = Consent(None, allow_all=yes, home=config.home)
    checkpoints = Checkpoints(config.home, cwd, session=log.id)
    agent = build_agent(llm, cwd, tools=tools, window=config.context_window, plan=plan, hooks=hooks,
                        consent=consent, checkpoints=checkpoints, compact_at=config.compact_at,
                        git=True)
    ledger = Ledger(load_prices(config.home))
    if log.meta is not None:  # resumed: the totals and /diff go on from where the session was
        for model, usage in log.meta["usage"]:
            ledger.add(model, usage)
        checkpoints.resume()
    agent.subscribe(lambda event: count_usage(ledger, event))
    agent.subscribe(lambda event: hooks.ended(event, agent.workspace.cwd))  # the Stop hooks
    app = App(config, agent, ledger, plan, hooks, consent, checkpoints, log)
    # "provider/model", so resuming picks the provider too
    log.model_of = lambda _agent: app.config.label
    log.attach(agent)
    return app


def start_mcp(config: Config, cwd: Path, agent: Agent, warn, trusted: bool = True,
              extra: dict | None = None):
    """The MCP servers named in mcp.json (config dir, then the project's if it is trusted),
    and the `extra` ones an editor gives, their tools given to the agent."""
    from ..mcp import MCPHub, load_servers

    root = project_root(cwd)
    own = project_folder(root, config.home) is None  # started in the home folder: loaded already
    servers = {**load_servers(config.home, root if trusted and not own else None), **(extra or {})}
    if not servers:
        return None
    hub = MCPHub(servers, cwd).start()
    for row in hub.status():
        if row.state != "ready":
            warn(f"MCP server {row.name} is {row.state}: {row.note} "
                 f"(/mcp reconnect {row.name} to retry)")
    for note in hub.renamed():  # two servers' tools of one name once sanitized: both are offered
        warn(note)
    hub.attach(agent)
    return hub


def connect(config: Config):
    """The real client for a config: how the command starts, and how /model switches. (The
    mock provider's model is a script file, played offline: to try hooks, MCP or settings with
    no key.)"""
    from ..llm import LLM, LiteLLM

    if config.provider.name == "mock":
        return play(Path(config.model))
    if config.provider.name == "litellm":
        if importlib.util.find_spec("litellm") is None:  # a missing extra: one clear line
            raise ConfigError(f"{config.label} needs LiteLLM, which is an extra: "
                              'pip install "corecoder-course[litellm]"')

    limits = {name: getattr(config, name) for name in ("idle_timeout", "reply_timeout")
              if getattr(config, name) is not None}  # the client's defaults otherwise
    # sent only when set, and dropped (or renamed) for good if the provider refuses them
    options = {"max_tokens": config.max_tokens, "temperature": config.temperature}
    client = LiteLLM if config.provider.name == "litellm" else LLM
    key = None if config.api_key == NO_KEY and client is LiteLLM else config.api_key
    return client(config.model, base_url=config.base_url, api_key=key, stream=config.stream,
                  keep_reasoning=config.provider.reasoning_in_history, **limits, **options)


def play(script: Path):
    """`-m mock/PATH`: the script file at PATH (as `python -m corecoder.testing.serve` reads it: a
    JSON list of turns, or {"model", "turns"}) as the model. ConfigError if it cannot be played."""
    from ..scripted import ScriptedLLM, ScriptError

    try:
        return ScriptedLLM.from_json(script)
    except (OSError, ValueError, KeyError, TypeError, ScriptError) as e:
        raise ConfigError(f"mock/{script}: cannot play it as a script ({e}); give a JSON file "
                          'that lists the turns: ["hello", {"tool_calls": [...]}, ...]') from None


def unexpected(error: Exception) -> str:
    """A bug, in one line a user can report."""
    return (f"unexpected {type(error).__name__}: {error} (a bug in corecoder: please report it; "
            "the session is saved)")


def count_usage(ledger: Ledger, event) -> None:
    """Every model call's usage, the sub-agents' included, priced at its own model's rate."""
    while isinstance(event, WorkerEvent):
        event = event.event
    if isinstance(event, UsageReported):
        ledger.add(event.model, event.usage)


def run_once(app: App, prompt: str) -> int:
    """One task, unattended. Exit status: 0 answered, 1 failed or gave up, 130 interrupted."""
    agent = app.agent
    progress = agent.subscribe(Printer(sys.stderr))
    endings: list[str] = []
    agent.subscribe(lambda event: isinstance(event, Finished) and endings.append(event.reason))
    try:
        answer = app.ask(prompt)
    except KeyboardInterrupt:
        progress.line("interrupted")
        return 130
    except FAILURES as e:
        progress.line(f"error: {e}")
        return 1
    except Exception as e:  # a bug: one line, not a traceback; the session is on disk
        progress.line(f"error: {unexpected(e)}")
        return 1
    finally:
        app.stop()
    progress.line(app.ledger.summary())
    if endings[-1:] != ["answer"]:
        return 1  # max rounds: the Printer has shown the stop message on stderr
    print(printable(answer) if sys.stdout.isatty() else answer, flush=True)  # a pipe: as it is
    return 0
