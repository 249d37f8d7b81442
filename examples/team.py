"""A team of three, offline: a researcher, an implementer and a reviewer, each a sub-agent with a
fresh history. The first two work at the same time (one call of the `agent` tool with `tasks`),
the reviewer after them (a second call, with `task`); the parent sees only their reports.

    python examples/team.py

The model is a function of the conversation (a script would not do: the three workers ask it at
the same time, in any order), so each worker answers as its role says, and the run prints the
same every time. The workers share the parent's gates and tools (all but `agent`: no recursion)
and each works in a fork of the parent's working directory.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from corecoder import FunctionLLM, build_agent
from corecoder.events import ToolCallStarted, WorkerEvent
from corecoder.permissions import Consent

ROLES = {  # each worker's task, and the calls its model makes before it reports
    "researcher": ("Read stats.py and say what mean() gets wrong.",
                   [{"name": "read_file", "arguments": {"path": "stats.py"}}],
                   "mean() divides by len(values) - 1: it should divide by len(values)."),
    "implementer": ("In stats.py, make mean() divide by len(values).",
                    [{"name": "edit_file", "arguments": {"path": "stats.py",
                                                         "old_string": "len(values) - 1",
                                                         "new_string": "len(values)"}}],
                    "Fixed: mean() now divides by len(values)."),
    "reviewer": ("Check that stats.py's mean([2, 4]) is 3.",
                 [{"name": "bash", "arguments": {"command": "python3 -c 'import stats; "
                                                            "print(stats.mean([2, 4]))'"}}],
                 None),  # its report says what the command printed
}


def model(messages, tools):
    task = messages[1]["content"]  # a worker's history starts with its task
    role = next((name for name, (asked, _, _) in ROLES.items() if asked == task), None)
    if role is None:  # the parent: two workers at once, then the reviewer, then a summary
        handed = sum(1 for m in messages if m.get("tool_calls"))
        if handed == 0:
            together = [{"name": n, "task": ROLES[n][0]} for n in ("researcher", "implementer")]
            return {"tool_calls": [{"name": "agent", "arguments": {"tasks": together}}]}
        if handed == 1:
            return {"tool_calls": [{"name": "agent", "arguments": {"task": ROLES["reviewer"][0]}}]}
        return "The team fixed mean(): researched, fixed and reviewed."
    _, calls, report = ROLES[role]
    if messages[-1]["role"] == "user":
        return {"tool_calls": calls}
    return report or f"Reviewed: mean([2, 4]) printed {messages[-1]['content'].strip()}."


def main() -> None:
    project = Path(tempfile.mkdtemp(prefix="corecoder-example-"))
    (project / "stats.py").write_text("def mean(values):\n"
                                      "    return sum(values) / (len(values) - 1)\n")
    agent = build_agent(FunctionLLM(model), project, consent=Consent(allow_all=True))
    calls = []  # the workers' calls, as they start: from two threads at once, in any order
    agent.subscribe(lambda e: isinstance(e, WorkerEvent) and isinstance(e.event, ToolCallStarted)
                    and calls.append(f"  [{e.worker}] {e.event.call.name}"))
    answer = agent.chat("Fix mean() in stats.py: have it researched, fixed and reviewed.")
    print("the workers' calls:", *sorted(calls), sep="\n")
    for report in (m["content"] for m in agent.messages if m["role"] == "tool"):
        print("\nwhat the parent read:\n" + report)
    print("\n" + answer)


if __name__ == "__main__":
    main()
