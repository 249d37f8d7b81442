"""How one tool call is run. Every call, alone or in a batch, takes this one path, top to bottom:

    admit    find the tool, parse the JSON arguments, check them against the schema,
             ask each gate (plan mode, hooks, consent arrive in later chapters)
    perform  run the tool, catch what it raises, bound its output, tell the gates

The split matters for parallel calls (chapter 5): every call is admitted one at a time
(so two consent questions never interleave), and only then do the admitted ones run.

Whatever goes wrong becomes a result string the model can act on, and the two
kinds of failure are told apart: "bad arguments for X" is the model's mistake (fix
the call), "X failed" is the environment's (the call was fine, the world said no).
A gate that raises is a bug in the gate, not a reason to end the turn: it refuses the call.

Both steps read the agent's tools, gates and workspace when the call is made, and keep
none of them, so a tool added or a gate replaced takes effect at the next call.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from .events import ToolCallFinished, ToolCallStarted
from .files import atomic_write, in_words
from .messages import ToolCall
from .text import shorten, valid_text
from .tool import Tool, ToolError, problems
from .workspace import Workspace, project_root

OUTPUT_LIMIT = 20_000  # characters of a result the model is sent; the rest is kept in a file
OUTPUTS = Path(".corecoder", "outputs")  # where, in the project; the newest KEEP_OUTPUTS stay
KEEP_OUTPUTS = 20


@runtime_checkable
class Gate(Protocol):
    """A check around every tool call: plan mode, consent, the user's hooks, checkpoints. A gate
    may subclass this one and override one method or both (the other does nothing)."""

    name: str = "gate"

    def before(self, tool: Tool, args: dict, workspace: Workspace) -> str | None:
        """Return a reason to refuse the call, or None to let it through."""
        return None

    def after(self, tool: Tool, args: dict, result: str, workspace: Workspace) -> str | None:
        """Observe a finished call. May return a note to add to its result (a linter's verdict
        on the file just written, say); cannot undo the call."""


@dataclass
class Job:
    """A call after admission: its tool and arguments, or the result it gets without running."""

    call: ToolCall
    tool: Tool | None = None
    args: dict = field(default_factory=dict)
    refusal: str | None = None  # an unknown tool, bad arguments, a gate's no: the whole result
    status: str = "ok"  # or unknown_tool, bad_arguments, refused (events.ToolCallFinished)


def admit(agent, call: ToolCall) -> Job:
    stopped(agent.workspace)
    tool = agent.tools.get(call.name)
    if tool is None:
        available = ", ".join(sorted(agent.tools)) or "none"
        return Job(call, refusal=f"unknown tool {call.name[:100]!r}. Available tools: {available}",
                   status="unknown_tool")
    args, trouble = parse_arguments(call.arguments)
    if args is not None:
        try:
            trouble = "; ".join(problems(tool.parameters, args))
        except Exception:  # a schema the check cannot read (an MCP server's): the tool decides
            trouble = ""
    if trouble:
        return Job(call, tool, refusal=f"bad arguments for {tool.name}: {trouble}. "
                   f"Expected: {signature(tool)}", status="bad_arguments")
    for gate in agent.gates:
        try:
            reason = gate.before(tool, args, agent.workspace)
        except Exception as e:  # a broken gate refuses, it does not end the turn
            return Job(call, tool, args, f"{tool.name} refused: {gate.name} failed: {_error(e)}",
                       "refused")
        if reason:
            return Job(call, tool, args, f"{tool.name} refused by {gate.name}: {reason}", "refused")
    return Job(call, tool, args)


def perform(agent, job: Job, workspace: Workspace) -> str:
    """Run an admitted call in `workspace` (the agent's, or a fork of it) and return its result."""
    stopped(workspace)
    agent.emit(ToolCallStarted(job.call))
    result, status = job.refusal, job.status
    if result is None:
        try:
            result = bound(str(job.tool.run(workspace, **job.args)), workspace)
        except ToolError as e:
            result, status = f"{job.tool.name} failed: {e}", "failed"
        except OSError as e:  # a path the system refused: which one, and why, in words
            result, status = f"{job.tool.name} failed: {in_words(e, show=workspace.show)}", "failed"
        except Exception as e:  # a bug or a surprise in the tool: still just a result
            result, status = f"{job.tool.name} failed: {_error(e)}", "failed"
    # bounded (a refusal or failure quoting a huge argument, say), and never a text that no
    # request could carry (a file name that is not UTF-8)
    result = valid_text(shorten(result, OUTPUT_LIMIT))
    if job.refusal is None:
        for gate in agent.gates:
            try:
                note = gate.after(job.tool, job.args, result, workspace)
            except Exception as e:  # the call has run: keep its result, and say what failed
                note = shorten(f"[after the call, {gate.name} failed: {_error(e)}]", 500)
            if note:
                result += "\n" + valid_text(shorten(str(note), OUTPUT_LIMIT))
    stopped(workspace)  # the loop has answered it as interrupted: say nothing more of it
    agent.emit(ToolCallFinished(job.call, result, status))
    return result


def stopped(workspace: Workspace) -> None:
    """Ctrl+C lands in the main thread; calls running in other threads (a parallel batch, a
    sub-agent's) learn of it from `workspace.cancelled`. A call the user stopped neither
    starts, nor asks a consent question, nor reports a result after the loop answered it."""
    if workspace.cancelled.is_set():
        raise KeyboardInterrupt


@runtime_checkable
class Executor(Protocol):
    """How the calls of one reply are run (chapter 5 runs them at once). It fills `results` (call
    id -> result text) as calls finish, and may stop early: the loop answers any call left out."""

    def __call__(self, calls: list[ToolCall], agent, results: dict[str, str]) -> None: ...


def run_in_order(calls: list[ToolCall], agent, results: dict[str, str]) -> None:
    """The simplest executor, and the loop's default: each call admitted, then run, in turn.
    (An executor fills `results` as calls finish; the loop answers any call left out.)"""
    for call in calls:
        results[call.id] = perform(agent, admit(agent, call), agent.workspace)


def parse_arguments(text: str) -> tuple[dict | None, str]:
    """The call's JSON arguments as a dict, or None and what is wrong with them.

    Empty text means no arguments (some providers send "" for a call without any).
    Malformed JSON is reported, never quietly turned into {}: a tool run with
    arguments the model did not mean is worse than no run at all.
    """
    if not text or not text.strip():
        return {}, ""
    try:
        args = json.loads(text)
    except json.JSONDecodeError as e:
        where = f"{e.msg} at position {e.pos}"
        return None, f"the arguments are not valid JSON ({where}): {text[:200]!r}"
    except RecursionError:
        return None, "the arguments nest too deeply to read: send a flatter JSON object"
    if not isinstance(args, dict):
        return None, f"the arguments must be a JSON object, got {type(args).__name__}"
    return args, ""


def signature(tool: Tool) -> str:
    """`edit_file(path: string, old_string: string, replace_all?: boolean)`."""
    props = tool.parameters.get("properties", {})
    required = set(tool.parameters.get("required", []))
    parts = [f"{k}{'' if k in required else '?'}: {v.get('type', 'any')}" for k, v in props.items()]
    return f"{tool.name}({', '.join(parts)})"


def bound(text: str, workspace: Workspace, limit: int = OUTPUT_LIMIT) -> str:
    """An over-long output as its head and tail; the whole of it kept in the project.

    A huge output would be re-sent with every later request. The marker names the file
    relative to the call's working directory, so the model can read the middle with
    read_file if it needs it, and a notebook shows the same text on every machine. (After
    a later `cd` the path is still relative to where the call ran, which the model was
    told.) Only the newest few files are kept.
    """
    if len(text) <= limit:
        return text
    try:
        path = keep_output(project_root(workspace.cwd), text)
    except OSError as e:  # a read-only project: the model still gets the head and the tail
        return shorten(text, limit, note=f"the full output could not be kept: {e.strerror or e}")
    where = os.path.relpath(path, workspace.cwd)
    return shorten(text, limit, note=f"the full output is in {where}")


def _error(e: Exception) -> str:
    return f"{type(e).__name__}: {e}"


# --- defences: a project whose .corecoder is a link, files in it the engine did not write


def keep_output(root: Path, text: str) -> Path:
    """Keep `text` in `root`'s outputs folder, named by its hash (same text, same file), and
    prune the oldest past KEEP_OUTPUTS.

    The folder belongs to the project, and a cloned project decides what is in it: a
    `.corecoder` or `outputs` that is a link to a folder of the user's would have a read-only
    grep write there and prune the user's files. So nothing is written through a link, and a
    file is pruned only if it is a regular file whose content still hashes to its name:
    something this function wrote."""
    folder = root
    for part in OUTPUTS.parts:
        folder = folder / part
        if folder.is_symlink() or folder.exists() and not folder.is_dir():
            raise OSError(f"{OUTPUTS} is not a plain folder of the project (a link?), so nothing "
                          "is written there")
    data = valid_text(text).encode("utf-8")
    path = folder / f"{_hashed(data)}.txt"
    if not folder.is_dir():
        atomic_write(folder / ".gitignore", "# kept for the model: never committed\n*\n")
    if path.is_symlink():  # planted by the project under a name it could predict: left alone
        raise OSError(f"{path.name} in {OUTPUTS} is a link, so it is not written through")
    atomic_write(path, data)
    with contextlib.suppress(OSError):  # a file another call removed first is gone either way
        kept = sorted(folder.glob("*.txt"), key=lambda p: (p.lstat().st_mtime_ns, p.name))
        for old in kept[:-KEEP_OUTPUTS]:
            if old.is_file() and not old.is_symlink() and _hashed(old.read_bytes()) == old.stem:
                old.unlink()
    return path


def _hashed(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]
