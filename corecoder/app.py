"""Assembling the agent the `corecoder` command runs, and running one task with `-p`.

Kept apart from cli.py so that `corecoder --version` and `--help` import none of it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from .agent import Agent
from .calls import Gate
from .context import Compactor
from .events import Finished, UsageReported, WorkerEvent
from .messages import IllegalHistory, ModelError
from .scripted import ScriptError
from .trace import Printer

# What ends a task with a message instead of a traceback: the model gave up for good,
# a script ran out, or a history the API would reject. Anything else is a bug to see.
FAILURES = (ModelError, ScriptError, IllegalHistory)


def start(model: str | None, gates: list[Gate] = ()):
    """Config, agent and ledger for this directory and environment. Raises ConfigError."""
    from .config import load_config, require_key
    from .pricing import Ledger, load_prices

    config = load_config(Path.cwd(), os.environ, model=model)
    require_key(config)
    ledger = Ledger(load_prices(config.home))
    agent = Agent(connect(config), cwd=Path.cwd(), gates=list(gates),
                  context=Compactor(window=config.context_window))
    agent.subscribe(lambda event: count_usage(ledger, event))
    return config, agent, ledger


def connect(config):
    """The real client for a config: how the CLI starts, and how /model switches."""
    from .llm import LLM

    return LLM(config.model, base_url=config.base_url, api_key=config.api_key, stream=config.stream,
               keep_reasoning=config.provider.reasoning_in_history)


def count_usage(ledger, event) -> None:
    """Every model call's usage, the sub-agents' included, priced at its own model's rate."""
    while isinstance(event, WorkerEvent):
        event = event.event
    if isinstance(event, UsageReported):
        ledger.add(event.model, event.usage)


class NoMutations(Gate):
    """-p without --yes: nobody is there to ask, so tools that change things are refused.

    A stand-in for real consent (a later chapter): the model is told why, and can
    still read, search and answer.
    """

    name = "consent"

    def before(self, tool, args: dict, workspace) -> str | None:
        if tool.mutating:
            return f"mutating tools are off in -p mode without --yes; rerun with --yes to allow {tool.name}"
        return None


def run_once(agent: Agent, ledger, prompt: str) -> int:
    """One task, unattended. Exit status: 0 answered, 1 failed or gave up, 130 interrupted."""
    progress = agent.subscribe(Printer(sys.stderr))
    endings: list[str] = []
    agent.subscribe(lambda event: isinstance(event, Finished) and endings.append(event.reason))
    try:
        answer = agent.chat(prompt)
    except KeyboardInterrupt:
        progress.line("interrupted")
        return 130
    except FAILURES as e:
        progress.line(f"error: {e}")
        return 1
    progress.line(ledger.summary())
    if endings[-1:] != ["answer"]:
        return 1  # max rounds: the Printer has shown the stop message on stderr
    print(answer, flush=True)
    return 0
