"""How one tool call is run. Every call, alone or in a batch, takes this one path.

    admit:   find the tool, parse the JSON arguments, check them against the schema,
             ask each gate (plan mode, hooks, consent arrive in later chapters)
    perform: run the tool, catch what it raises, bound its output, tell the gates

The split matters for parallel calls: every call is admitted one at a time (so two
consent questions never interleave), and only then do the admitted ones run.

Whatever goes wrong becomes a result string the model can act on, and the two
kinds of failure are told apart: "bad arguments for X" is the model's mistake (fix
the call), "X failed" is the environment's (the call was fine, the world said no).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field

from .events import ToolCallFinished, ToolCallStarted
from .messages import ToolCall
from .tools.base import Tool, ToolError, problems
from .workspace import Workspace

INTERRUPTED = "[interrupted: the user stopped this call before it finished]"


class Gate:
    """A check around every tool call. Subclasses override one or both methods."""

    name = "gate"

    def before(self, tool: Tool, args: dict, workspace: Workspace) -> str | None:
        """Return a reason to refuse the call, or None to let it through."""
        return None

    def after(self, tool: Tool, args: dict, result: str, workspace: Workspace) -> None:
        """Observe a finished call. Cannot change its result."""


@dataclass
class Job:
    """A call after admission: ready to run, or already answered (`verdict`)."""

    call: ToolCall
    tool: Tool | None = None
    args: dict = field(default_factory=dict)
    verdict: str | None = None
    status: str = "ok"


class CallRunner:
    def __init__(self, tools: dict[str, Tool], gates: list[Gate], workspace: Workspace,
                 emit: Callable, output_limit: int = 20_000):
        self.tools = tools
        self.gates = gates
        self.workspace = workspace
        self.emit = emit
        self.output_limit = output_limit

    def admit(self, call: ToolCall) -> Job:
        tool = self.tools.get(call.name)
        if tool is None:
            available = ", ".join(sorted(self.tools)) or "none"
            return Job(call, verdict=f"unknown tool {call.name[:100]!r}. Available tools: {available}",
                       status="unknown_tool")
        args, trouble = parse_arguments(call.arguments)
        if args is not None:
            trouble = "; ".join(problems(tool.parameters, args))
        if trouble:
            return Job(call, tool, verdict=f"bad arguments for {tool.name}: {trouble}. "
                       f"Expected: {signature(tool)}", status="bad_arguments")
        for gate in self.gates:
            reason = gate.before(tool, args, self.workspace)
            if reason:
                return Job(call, tool, args, f"{tool.name} refused by {gate.name}: {reason}", "refused")
        return Job(call, tool, args)

    def perform(self, job: Job, workspace: Workspace) -> str:
        self.emit(ToolCallStarted(job.call))
        if job.verdict is None:
            job.verdict, job.status = self._run(job, workspace)
        self.emit(ToolCallFinished(job.call, job.verdict, job.status))
        return job.verdict

    def _run(self, job: Job, workspace: Workspace) -> tuple[str, str]:
        try:
            result, status = job.tool.run(workspace, **job.args), "ok"
        except ToolError as e:
            result, status = f"{job.tool.name} failed: {e}", "failed"
        except Exception as e:  # a bug or a surprise in the tool: still just a result
            result, status = f"{job.tool.name} failed: {type(e).__name__}: {e}", "failed"
        result = clip(str(result), self.output_limit)
        for gate in self.gates:
            gate.after(job.tool, job.args, result, workspace)
        return result, status


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
        return None, f"the arguments are not valid JSON ({e.msg} at position {e.pos}): {text[:200]!r}"
    if not isinstance(args, dict):
        return None, f"the arguments must be a JSON object, got {type(args).__name__}"
    return args, ""


def signature(tool: Tool) -> str:
    """`edit_file(path: string, old_string: string, replace_all?: boolean)`."""
    props = tool.parameters.get("properties", {})
    required = set(tool.parameters.get("required", []))
    parts = [f"{k}{'' if k in required else '?'}: {v.get('type', 'any')}" for k, v in props.items()]
    return f"{tool.name}({', '.join(parts)})"


def clip(text: str, limit: int) -> str:
    """Keep the head and the tail of an over-long output; save the whole to a file.

    A huge output would be re-sent with every later request. The marker names
    the file, so the model can still read the middle if it needs it.
    """
    if len(text) <= limit:
        return text
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", prefix="corecoder-output-",
                                     suffix=".txt", delete=False) as f:
        f.write(text)
    head, tail = text[: limit * 2 // 3], text[-(limit // 3):]
    cut = len(text) - len(head) - len(tail)
    return f"{head}\n[... {cut:,} characters cut; the full output is in {f.name} ...]\n{tail}"
