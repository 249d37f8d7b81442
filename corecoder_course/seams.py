"""The harness for an answer at a seam: a class or a function the learner writes, plugged into a
real `corecoder.Agent` whose model is scripted, and the run watched.

The exercises that put an answer there (ch01.stop_on_failure, ch02.tool, ch03.assemble,
ch04.policy, ch05.executor) watch every run the same way, the answer's and the one it is compared
with (ch05.lock_key takes its folders and the working directory's watch too). A `Seam` is one
run, as a `with` block:

    with Seam({"calc.py": "..."}) as seam:          # a real temporary folder, holding calc.py
        policy = seam.spy(KeepLastTurns(2), "prepare", note)  # each call of prepare, noted
        agent = seam.agent(script, [ReadFile()], context=policy)
        agent.chat("Why does the test fail?")
    seam.calls, seam.events, seam.notes()           # what was seen

Its agents' models play a script (ScriptedLLM) or a function of the messages (FunctionLLM), and
both check every request as the API does (check_history): a history the API would refuse ends
the run. What ends the run early (an error, a Ctrl+C: the kinds `ends` names) is kept, not
raised, and told by `notes`. The process's working directory is set back as the block ends,
whatever the answer did (it is every agent's, and a notebook kernel's), and a move is noted. A
spied method's calls are noted as they end: what each was handed, whether it changed that, what
it returned or raised. What a hint shows of a run names each folder ".", the same every run.
"""

from __future__ import annotations

import copy
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from corecoder.agent import Agent
from corecoder.scripted import FunctionLLM, ScriptedLLM

from .checks import error_of, scrub
from .kit import _equal
from .words import say

MOVED = "os.getcwd() moved (the check set it back)"
ENDINGS = (Exception, KeyboardInterrupt, SystemExit)  # all that may end a run but a hang


@dataclass(frozen=True)
class Call:
    """One call of a spied method: what it was handed, a copy of its positional arguments made
    before (None where they cannot be copied: a Workspace holds a lock), whether it changed
    them, and what it returned or raised (`kind` "returned" or "raised", and `value`)."""

    given: tuple | None
    args: tuple
    kwargs: dict
    changed: bool
    kind: str
    value: object


class Seam:
    """One run at a seam: a real temporary folder for each mapping of names to text or bytes
    (`roots`), every event of the agents built here (`events`), every call of the methods
    spied on (`calls`), the error that ended the run early (`error`), and whether the process's
    working directory moved (`moved`)."""

    def __init__(self, *folders: Mapping[str, str | bytes], ends: tuple = ENDINGS):
        self.folders, self.ends = folders, ends
        self.events, self.calls, self.error, self.moved = [], [], None, False

    def __enter__(self) -> Seam:
        self._before = os.getcwd()
        # a folder only if one is asked for, one folder the temporary one itself: each mkdir
        # costs a little, and a checker makes hundreds of runs
        self._tmp = tempfile.mkdtemp(prefix="corecoder-") if self.folders else None
        many = len(self.folders) > 1
        self.roots = [Path(self._tmp, str(k) if many else "") for k in range(len(self.folders))]
        for root, files in zip(self.roots, self.folders, strict=True):
            root.mkdir(exist_ok=True)
            for name, data in files.items():
                (root / name).parent.mkdir(parents=True, exist_ok=True)
                (root / name).write_bytes(data if isinstance(data, bytes) else data.encode())
                os.utime(root / name, (0, 0))  # glob lists the newest first: a fixed order
        return self

    def __exit__(self, kind, error, trace) -> bool:
        try:
            self.moved = os.getcwd() != self._before
        except OSError:  # a working directory that was deleted
            self.moved = True
        os.chdir(self._before)  # before the folders go
        if self._tmp:
            shutil.rmtree(self._tmp, ignore_errors=True)
        if kind is None or issubclass(kind, NotImplementedError) or not issubclass(kind, self.ends):
            return False  # the stub's NotImplementedError goes on to `check`, a hang to the kit
        self.error = error
        return True

    def agent(self, model, tools: list, cwd: Path | None = None, **seams) -> Agent:
        """A real Agent in `cwd` (the first folder), its model playing `model`: a script (a list
        of turns) or a function of the messages; `seams`: its context, executor, gates."""
        llm = FunctionLLM(model) if callable(model) else ScriptedLLM(model)
        agent = Agent(llm, tools, cwd=cwd or self.roots[0], **seams)
        agent.subscribe(self.events.append)
        return agent

    def spy(self, answer, method: str, note: Callable | None = None):
        """`answer`, its `method` watched: each call noted in `calls` as it ends, as a Call or
        as what `note(call)` makes of it then (what a call returned may change later)."""
        real = getattr(answer, method)

        def watched(*args, **kwargs):
            given, kind, value = _copied(args), "raised", None
            try:
                value = real(*args, **kwargs)
                kind = "returned"
                return value
            except BaseException as e:  # noted, and raised on as it was
                value = e
                raise
            finally:
                changed = given is not None and not _equal(given, args)
                call = Call(given, args, kwargs, changed, kind, value)
                self.calls.append(note(call) if note else call)

        setattr(answer, method, watched)
        return answer

    def said(self, text: str) -> str:
        """`text` as a hint shows it: each folder named ".", the same every run."""
        return scrub(text, dict.fromkeys(self.roots, "."))

    def notes(self) -> list[str]:
        """What the run showed besides what was watched: the error that ended it early, if one
        did, and a move of the process's working directory."""
        places = dict.fromkeys(self.roots, ".")
        ended = [say("the run ended: ", "运行中途结束：") + error_of(self.error, places)
                 ] if self.error else []
        return ended + [MOVED] * self.moved


# the engine's gates, by the names a refusal gives them, as the Chinese chapters call them
GATES_ZH = {"plan mode": "计划模式", "hooks": "钩子", "consent": "授权确认",
            "checkpoints": "检查点"}


def fate(result: str) -> str:
    """A call's fate, from its result's first line: refused by which gate, or which gate
    failed, or how it ran (and a gate that failed after the call: a gate without `after`)."""
    first = result.split("\n")[0]
    if "\n[after the call, " in result:
        gate = result.split("\n[after the call, ", 1)[1].split(" failed: ")[0]
        return say(f"ran, then {gate} failed after it", f"运行了，之后 {gate} 出错")
    if " refused by " in first:
        gate = first.split(" refused by ", 1)[1].split(":")[0]
        return say(f"refused by {gate}", f"被{GATES_ZH.get(gate, f' {gate} ')}拒绝")
    if " refused: " in first and " failed: " in first:
        gate, error = first.split(" refused: ", 1)[1].split(" failed: ", 1)
        return say(f"{gate} failed: ", f"{gate} 出错：") + error[:40]
    return say("ran", "运行了")


def _copied(args: tuple) -> tuple | None:
    try:
        return copy.deepcopy(args)
    except Exception:  # a lock, an event: left uncompared
        return None
