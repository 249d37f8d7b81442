"""kill -9 while write_file or edit_file is writing: the file is always whole, the old version or the new.

A child process rewrites one large file through the real tool, version after version, and is
killed at a random moment; then the file must be exactly one version the child meant to write:
never empty, never cut short, never half of one and half of another. (Sessions and checkpoints have
their own kill tests, in tests/engine/test_session.py and tests/engine/test_checkpoints.py; this is the same
approach aimed at the two tools that write the user's files.)
"""

from __future__ import annotations

import random
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from helpers import run_and_kill

pytestmark = pytest.mark.row("crash")

ROOT = Path(__file__).resolve().parents[2]
TRIALS = 30
SIZE = 400_000  # bytes a version: big enough that the write takes a while, so kills land inside it

WRITER = textwrap.dedent("""
    import sys
    sys.path.insert(0, sys.argv[3])
    from pathlib import Path
    from corecoder.tools import EditFile, WriteFile
    from corecoder.workspace import Workspace

    tool, root, size = sys.argv[1], Path(sys.argv[2]), int(sys.argv[4])
    ws = Workspace(root)

    def version(n):  # a header that names the version, then a body only that version has
        return f"version {n}\\n" + chr(65 + n % 26) * size + "\\n"

    n = 0
    while True:
        if tool == "write_file":
            WriteFile().run(ws, path="data.txt", content=version(n + 1))
        else:  # replaces the whole text: the edit rewrites every byte of the file
            EditFile().run(ws, path="data.txt", old_string=version(n), new_string=version(n + 1))
        n += 1
        if n == 1:
            print("go", flush=True)
""")


def version(n: int) -> bytes:
    return f"version {n}\n".encode() + bytes([65 + n % 26]) * SIZE + b"\n"


def whole(data: bytes) -> bool:
    """Exactly one version the writer meant: the header's number decides what every other byte must be."""
    header = data.split(b"\n", 1)[0]
    return header.startswith(b"version ") and header[8:].isdigit() and data == version(int(header[8:]))


def kill_while_writing(tool: str, root: Path, delay: float) -> None:
    run_and_kill(WRITER, [tool, str(root), str(ROOT), str(SIZE)], delay)


@pytest.mark.cases(TRIALS)
@pytest.mark.parametrize("tool", ["write_file", "edit_file"])
def test_kill_9_mid_write_leaves_the_old_version_or_the_new_never_a_mix(tmp_path, record_property, tool):
    rng = random.Random(tool)
    roots = [tmp_path / f"trial{n}" for n in range(TRIALS)]
    for root in roots:
        root.mkdir()
        (root / "data.txt").write_bytes(version(0))
    with ThreadPoolExecutor(10) as pool:
        list(pool.map(lambda r: kill_while_writing(tool, r, rng.uniform(0.0, 0.3)), roots))
    survived = [whole((root / "data.txt").read_bytes()) for root in roots]
    record_property("passed", sum(survived))
    assert all(survived), f"{survived.count(False)} of {TRIALS} files were torn"
    # The kills really landed inside writes: a temp file that was never renamed is left behind.
    assert any(list(root.glob(".data.txt.*.tmp")) for root in roots), "no kill landed mid-write"
