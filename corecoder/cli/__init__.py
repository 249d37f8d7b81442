"""The `corecoder` command: a REPL, or one task with `-p`, against any OpenAI-compatible model.

    corecoder                      talk to the agent (corecoder/repl.py)
    corecoder -p "fix the tests"   run one task: progress on stderr, the answer alone on stdout
    corecoder --demo               the offline demo, no key needed

Only argparse loads at start (the rest is in app.py, imported when needed), so `--version`
and `--help` stay fast; openai, rich and prompt_toolkit are imported where they are first used.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading

from .. import __version__


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="corecoder", description="A small, real coding agent.")
    p.add_argument("-v", "--version", action="version", version=f"corecoder {__version__}")
    p.add_argument("-p", "--prompt", help="run this one task and exit; the answer goes to stdout")
    p.add_argument("--yes", action="store_true",
                   help="allow tools that change files or run commands without asking "
                        "(plan mode still wins)")
    p.add_argument("--trust-project", action="store_true",
                   help="run this project's own .corecoder/hooks.json and mcp.json without "
                        "asking (for -p; the REPL asks once and remembers)")
    p.add_argument("-r", "--resume", metavar="ID",
                   help="carry on a saved session (see /sessions in the REPL)")
    p.add_argument("-m", "--model", help="provider/model (deepseek/deepseek-chat) or a model name; "
                   "default: CORECODER_MODEL, then .env, then gpt-4o-mini")
    p.add_argument("--base-url", metavar="URL",
                   help="the OpenAI-compatible endpoint (as CORECODER_BASE_URL)")
    p.add_argument("--api-key", metavar="KEY",
                   help="the key for it (as CORECODER_API_KEY; the environment is safer: a flag "
                        "shows in the process list)")
    p.add_argument("--max-tokens", metavar="N",
                   help="the most tokens a reply may have (as CORECODER_MAX_TOKENS; default: the "
                        "provider's)")
    p.add_argument("--temperature", metavar="T",
                   help="sampling temperature, 0 to 2 (as CORECODER_TEMPERATURE; default: the "
                        "provider's)")
    p.add_argument("--acp", action="store_true",
                   help="serve an editor (Zed, JetBrains...) over the Agent Client Protocol on "
                        "stdin and stdout")
    p.add_argument("--demo", action="store_true",
                   help="fix a small buggy project offline with a scripted model "
                        "(no key, no network)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.demo:
        from ..demo import run_demo

        run_demo()
        return 0
    from .config import FLAGS

    # Each flag that stands for a setting, as that setting (--max-tokens, which argparse keeps as
    # args.max_tokens, is CORECODER_MAX_TOKENS); start() lets them win over the environment.
    given = {name: getattr(args, flag.removeprefix("--").replace("-", "_"))
             for name, flag in FLAGS.items()}
    settings = {name: value for name, value in given.items() if value}
    if args.acp:
        from .acp import run_acp

        return run_acp(model=args.model, yes=args.yes, trust=args.trust_project,
                       settings=settings)
    from .app import STARTUP_ERRORS, run_once, start
    from .trace import to_stderr

    ask = None
    if args.prompt is None:  # the REPL: there is someone to ask
        from .repl import ask_trust as ask
    try:
        app = start(args.model, yes=args.yes, resume=args.resume, trust=args.trust_project,
                    ask_trust=ask, settings=settings)
    except STARTUP_ERRORS as e:
        to_stderr(f"corecoder: {e}")
        return 1
    end_on_hangup(app)
    try:
        if args.prompt is not None:
            code = run_once(app, args.prompt)
        else:
            from .repl import run_repl

            code = run_repl(app)
    except KeyboardInterrupt:  # a second Ctrl+C, while the first one was being handled
        code = 130
    return leave(app, code)


# How long the threads of calls that were stopped get to finish before the process leaves
# without them (one may be waiting on the model, for minutes).
LEAVE_SECONDS = 2.0


def end_on_hangup(app) -> None:
    """A closed terminal (SIGHUP) or SIGTERM ends the command at once, as it should, but first
    kills every command the agent is running: each is in a process group of its own, which
    the signal does not reach. The session is on disk already: it is written as it goes."""

    def end(signum, _frame):
        app.stop_commands()
        os._exit(128 + signum)

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, end)


def leave(app, code: int) -> int:
    """The way out, however the run ended. A Ctrl+C from here to the process's end is ignored:
    landing in the clean-up it would leave commands running, and in Python's own shutdown it
    prints "Exception ignored in: <module 'threading'>". Every command and MCP server is
    stopped; a call's thread that is still busy after LEAVE_SECONDS does not hold the exit."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    app.log.flush()  # a turn whose last write a Ctrl+C cut short is written now, before leaving
    app.stop()
    busy = [t for t in threading.enumerate() if t is not threading.current_thread()
            and not t.daemon]
    for thread in busy:
        thread.join(timeout=LEAVE_SECONDS / len(busy))
    if any(thread.is_alive() for thread in busy):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


if __name__ == "__main__":
    sys.exit(main())
