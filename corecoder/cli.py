"""The `corecoder` command: a REPL, or one task with `-p`, against any OpenAI-compatible model.

    corecoder                      talk to the agent (corecoder/repl.py)
    corecoder -p "fix the tests"   run one task: progress on stderr, the answer alone on stdout
    corecoder --demo               the offline demo, no key needed

Only argparse loads at start (the rest is in app.py, imported when needed), so `--version`
and `--help` stay fast; openai, rich and prompt_toolkit are imported where they are first used.
"""

from __future__ import annotations

import argparse
import sys

from . import __version__


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="corecoder", description="A small, real coding agent.")
    p.add_argument("--version", action="version", version=f"corecoder {__version__}")
    p.add_argument("-p", "--prompt", help="run this one task and exit; the answer goes to stdout")
    p.add_argument("--yes", action="store_true",
                   help="allow tools that change files or run commands without asking "
                        "(plan mode still wins)")
    p.add_argument("--resume", metavar="ID",
                   help="carry on a saved session (see /sessions in the REPL)")
    p.add_argument("-m", "--model", help="provider/model (deepseek/deepseek-chat) or a model name; "
                   "default: CORECODER_MODEL, then .env, then gpt-4o-mini")
    p.add_argument("--demo", action="store_true",
                   help="fix a small buggy project offline with a scripted model "
                        "(no key, no network)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.demo:
        from .demo import run_demo

        run_demo()
        return 0
    from .app import STARTUP_ERRORS, run_once, start

    try:
        app = start(args.model, yes=args.yes, resume=args.resume)
    except STARTUP_ERRORS as e:
        print(f"corecoder: {e}", file=sys.stderr)
        return 1
    if args.prompt is not None:
        return run_once(app, args.prompt)
    from .repl import run_repl

    return run_repl(app)


if __name__ == "__main__":
    sys.exit(main())
