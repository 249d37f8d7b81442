"""Plan mode and a hook, offline: the agent investigates read-only, proposes a plan, the user
approves it, and a PreToolUse hook of the project's vetoes one command on the way.

    python examples/plan_and_hooks.py

A scripted model plays the agent's side (no key, no network); the gates are the engine's own:
`PlanMode` refuses every change while it is on, whoever would allow it; the hook (a small
Python program reading the call as JSON on stdin, as Claude Code's hooks do) refuses `rm` with
exit code 2 and says why on stderr. Upstream CoreCoder has the same demo
(examples/plan_hooks_demo.py); this one runs against this engine.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from corecoder import ScriptedLLM, build_agent
from corecoder.events import ToolCallFinished
from corecoder.hooks import Hooks, load_hooks
from corecoder.permissions import Consent, PlanMode

HOOK = """\
import json, sys
call = json.load(sys.stdin)
if call["tool_name"] == "bash" and call["tool_input"]["command"].lstrip().startswith("rm "):
    print("this project keeps its files: move them to attic/ instead", file=sys.stderr)
    sys.exit(2)
"""

def call(name: str, **arguments) -> dict:
    return {"name": name, "arguments": arguments}


SCRIPT = [  # the model's replies, in order
    {"text": "Let me look first.", "tool_calls": [call("read_file", path="todo.txt")]},
    {"text": "I'll write the plan into the file.",
     "tool_calls": [call("write_file", path="todo.txt", content="planned\n")]},
    "Plan:\n1. mark the todo as done\n2. remove the old log",
    {"tool_calls": [call("write_file", path="todo.txt", content="done\n")]},
    {"tool_calls": [call("bash", command="rm old.log")]},
    {"tool_calls": [call("bash", command="mkdir -p attic && mv old.log attic/")]},
    "Done: the todo is marked, and old.log is in attic/.",
]


def main() -> None:
    project = Path(tempfile.mkdtemp(prefix="corecoder-example-"))
    (project / "todo.txt").write_text("fix the parser\n")
    (project / "old.log").write_text("an old log\n")
    (project / "hook.py").write_text(HOOK)
    hooks_json = project / "hooks.json"
    hooks_json.write_text(json.dumps({"PreToolUse": [
        {"matcher": "bash", "command": f"{sys.executable} {project / 'hook.py'}"}]}))
    plan = PlanMode(on=True)
    agent = build_agent(ScriptedLLM(SCRIPT), project, plan=plan,
                        hooks=Hooks(load_hooks(hooks_json), warn=print),
                        consent=Consent(allow_all=True))  # as --yes: plan mode still wins
    agent.subscribe(lambda e: isinstance(e, ToolCallFinished) and print(
        f"  {e.call.name}: {e.result.splitlines()[0][:100]}"))
    print("plan mode on; the user asks:")
    print(agent.chat("Tidy the project: the todo is done, and the old log must go."))
    plan.on = False
    print("\nthe user approves; plan mode off:")
    print(agent.chat("I approve the plan. Carry it out now."))
    print(f"\ntodo.txt: {(project / 'todo.txt').read_text().strip()}; "
          f"old.log kept in attic/: {(project / 'attic' / 'old.log').exists()}")


if __name__ == "__main__":
    main()
