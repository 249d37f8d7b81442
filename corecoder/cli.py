"""The `corecoder` command.

Only argparse and our own modules load here at start, so `--version` and `--help`
stay fast; the model client is imported when a model is first called.
"""

from __future__ import annotations

import argparse
import sys

from . import __version__


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="corecoder", description="A small, real coding agent.")
    p.add_argument("--version", action="version", version=f"corecoder {__version__}")
    p.add_argument("--demo", action="store_true",
                   help="fix a small buggy project offline with a scripted model (no key, no network)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.demo:
        from .demo import run_demo

        run_demo()
        return 0
    parser().print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
