"""The course's maintenance commands.

    python -m authoring student OUT_DIR     write the student edition of every chapter
    python -m authoring sync [--check]      export cells from the package, Chinese code
                                                   from English, what's new from the coverage
                                                   tables, the essays' links to their source
    python -m authoring execute [NB ...]    sync, run the chapters in both languages, store
                                                   their outputs, sync again
    python -m authoring translated FILE     record that a Chinese notebook or essay has
                                                   caught up with its English
    python -m authoring mutants             mutate each declared exercise's reference and
                                                   rewrite authoring/MUTANTS.md: what its
                                                   checker kills
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .notebook import NOTEBOOKS, chapters, twin


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m authoring",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--folder", type=Path, default=NOTEBOOKS,
                        help="the chapters' folder (default: %(default)s)")
    commands = parser.add_subparsers(dest="command", required=True)
    student = commands.add_parser("student", help="write the student edition "
                                                  "(solutions taken out) into OUT_DIR")
    student.add_argument("out_dir", type=Path)
    sync = commands.add_parser("sync", help="regenerate export cells "
                                            "and the Chinese notebooks' code cells")
    sync.add_argument("--check", action="store_true",
                      help="change nothing; exit 1 listing any difference")
    execute = commands.add_parser("execute",
                                  help="run chapters and store their outputs (then sync)")
    execute.add_argument("paths", nargs="*", type=Path,
                         help="English notebooks (default: every chapter)")
    translated = commands.add_parser(
        "translated", help="record the English a Chinese notebook or essay was translated from")
    translated.add_argument("files", nargs="+", type=Path)
    commands.add_parser("mutants", help="score each declared exercise's checker on mutants of "
                                        "its reference (authoring/MUTANTS.md)")
    args = parser.parse_args(argv)
    if not chapters(args.folder):  # a check that found nothing to check must not pass
        print(f"error: no chapters (NN-slug.ipynb) in {args.folder}", file=sys.stderr)
        return 2

    if args.command == "student":
        from .student import write_student_edition

        for path in write_student_edition(args.out_dir, args.folder):
            print(path)
        return 0

    if args.command == "mutants":
        from .mutants import TARGET, write

        scores = write()
        for s in scores:
            print(f"{s.name}: {s.share:.0%} of {s.killed + len(s.survived)} killed, "
                  f"{len(s.equivalent)} equivalent")
        return 0 if all(s.share >= TARGET for s in scores) else 1

    from .coverage import CoverageError
    from .sync import SyncError, record_translations
    from .sync import sync as run_sync

    if args.command == "translated":
        for path in args.files:
            if not path.name.endswith((".zh.ipynb", ".zh.md")):
                print(f"error: {path} is not a Chinese notebook or essay", file=sys.stderr)
                return 2
            print(f"{path}: {record_translations(path)} parts recorded")
        return 0

    try:
        if args.command == "sync":
            found = run_sync(args.folder, check=args.check)
            for line in found:
                print(line)
            if args.check and found:
                print(f"{len(found)} difference(s); run: python -m authoring sync",
                      file=sys.stderr)
                return 1
            return 0
        from .execute import execute

        run_sync(args.folder)  # the export cells first, so the run uses the package's code
        english = args.paths or chapters(args.folder)
        if any(path.name.endswith(".zh.ipynb") for path in english):
            print("error: name the English chapters; their Chinese twins run with them",
                  file=sys.stderr)
            return 2
        for path in english:
            print(f"running {path.name}")
            execute(path)
        run_sync(args.folder)  # the Chinese notebooks get the English code ...
        for path in english:
            print(f"running {twin(path).name}")
            execute(twin(path))  # ... and print their own verdicts and twins
        for line in run_sync(args.folder):
            print(line)
        return 0
    except (SyncError, CoverageError, ValueError, SyntaxError) as e:  # the course as written
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
