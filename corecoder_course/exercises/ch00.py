"""Checks for the exercises of chapter 0, the tour.

    ch00.script       script a model that runs the demo's tests with bash and reports their
                      summary line
    ch00.count_calls  count the tool calls in a history, per tool

`ch00.script` runs the learner's script for real, as the tour does: a fresh copy of the
demo project in a temporary folder, a real `Agent` with the default tools, and a
`ScriptedLLM` that replays the learner's turns. `ch00.count_calls` feeds small,
histories of every shape the loop leaves (kit.py) to the learner's function beside the
chapter's own solution, and its known mistakes are one line of that solution written wrong.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass

from corecoder.assemble import build_agent
from corecoder.demo import PROJECT, SCRIPT, TASK
from corecoder.messages import ToolCall, assistant, tool_result, user
from corecoder.scripted import ScriptedLLM, ScriptError, parse_turn

from ..checks import case
from ..kit import Exercise, Mistake
from ..seams import Seam
from ..words import say

# --- ch00.script -----------------------------------------------------------------------

def tests_script():
    """A script for ScriptedLLM: run the demo project's tests with bash, then answer with
    their summary line."""
    return [
        {"text": "Let me run the tests.",
         "tool_calls": [{"name": "bash", "arguments": {"command": "python3 test_stats.py"}}]},
        "I ran the tests: 1 of 3 tests passed.",
    ]


SUMMARY = re.compile(r"\b\d+ of \d+ tests passed\b")
NEGATION = re.compile(r"\b(not|no|never|isn't|aren't|didn't|doesn't|don't)\b|n't\b|[不没未非]",
                      re.I)
# a summary is stated in a clause of its own
CLAUSE_END = re.compile(r"[.!?;:,。！？；：，]\s*|\n+")
GAMING = re.compile(r"\b(echo|printf|cat)\b")  # prints a summary line without running the tests
PROJECT_FILES = {p.relative_to(PROJECT).as_posix(): p.read_bytes()  # the demo, as copy_project
                 for p in sorted(PROJECT.rglob("*"))                # copies it
                 if p.is_file() and "__pycache__" not in p.parts}


@dataclass(frozen=True)
class Played:
    """What came of a script played for the tour's task. `verdict` names what went right or
    wrong, as a mistake is matched: ("ok",), ("not a list",), ("not a script",), ("ran out",),
    ("stopped",), ("no tests", what each call came to), ("answer", "denied" | "other" |
    "silent"); then the calls as a hint shows them, the final answer, the summary line the
    tests printed last, and the problem in words."""

    verdict: tuple
    calls: tuple[str, ...] = ()
    answer: str = ""
    summary: str = ""
    problem: str = ""


def _played(make_script) -> Played:
    """Run the learner's script as the tour runs SCRIPT: the demo project in a temporary folder
    (shown as "."), the real tools, a model that checks every request as the API does."""
    turns = make_script()
    if not isinstance(turns, list) or not turns:
        return Played(("not a list",), problem=f"{type(turns).__name__}: {turns!r:.200}")
    try:
        llm = ScriptedLLM(copy.deepcopy(turns))
    except Exception as e:
        return Played(("not a script",), problem=str(e))
    answer = ""
    with Seam(PROJECT_FILES) as seam:
        agent = build_agent(llm, seam.roots[0])
        answer = agent.chat(TASK)
    made = _calls_made(agent.messages)
    calls = tuple(seam.said(f"{_shown_call(c)}  →  {_telling_line(r)}") for c, r in made)
    if seam.error is not None:
        ran_out = isinstance(seam.error, ScriptError) and llm.position >= len(llm.turns)
        return Played(("ran out",) if ran_out else ("stopped",), calls,
                      problem=seam.said(f"{type(seam.error).__name__}: {seam.error}"))
    runs = [r for c, r in made if _ran_the_tests(c, r)]
    if not runs:
        return Played(("no tests", tuple(_came_to(c, r) for c, r in made)), calls, answer)
    summary = SUMMARY.findall(runs[-1])[-1]
    said_it = re.compile(rf"(?<!\d){re.escape(summary)}")  # "1 of 3 ...", not "11 of 3 ..."
    clauses = [s for s in CLAUSE_END.split(answer) if said_it.search(s)]
    if any(not NEGATION.search(s) for s in clauses):
        return Played(("ok",))
    said = "denied" if clauses else "other" if SUMMARY.search(answer) else "silent"
    return Played(("answer", said), calls, answer, summary)


def _ran_the_tests(call: dict, result: str) -> bool:
    return (call["function"]["name"] == "bash" and bool(SUMMARY.search(result))
            and "test_stats" in _command(call) and not GAMING.search(_command(call)))


def _came_to(call: dict, result: str) -> tuple[str, str]:
    """A call that did not run the tests, as a mistake is matched: its tool and what it came
    to."""
    kind = next((k for k in ("unknown tool", "bad arguments") if result.startswith(k)), "ran")
    if kind == "ran" and GAMING.search(_command(call)) and SUMMARY.search(result):
        kind = "printed"  # a summary line, with no test run
    return call["function"]["name"], kind


def _telling_line(result: str) -> str:
    """The line of a result a hint shows: the tests' summary where it has one, else the first."""
    lines = result.strip().splitlines()
    told = next((line for line in reversed(lines) if SUMMARY.search(line)),
                lines[0] if lines else say("(nothing)", "（空）"))
    return told[:160]


def _shown_call(call: dict) -> str:
    """`bash(command="python3 test_stats.py")`, or the raw arguments if they are not a JSON
    object."""
    name, raw = call["function"]["name"], call["function"]["arguments"]
    try:
        args = json.loads(raw)
    except json.JSONDecodeError:
        args = None
    if not isinstance(args, dict):
        return f"{name}({raw})"
    return f"{name}(" + ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}"
                                  for k, v in args.items()) + ")"


def _calls_made(messages: list[dict]) -> list[tuple[dict, str]]:
    """Every tool call of the run with its result, in order."""
    results = {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}
    return [(call, results.get(call["id"], "")) for m in messages
            for call in m.get("tool_calls", [])]


def _command(call: dict) -> str:
    """The command a bash call asked for ("" if its arguments hold none)."""
    try:
        args = json.loads(call["function"]["arguments"] or "{}")
    except json.JSONDecodeError:
        return ""
    return str(args.get("command", "")) if isinstance(args, dict) else ""


def _shown_run(played: Played) -> str:
    """A run as a hint shows it: the calls and what each returned, then the final answer. The
    reference's run is told in words, not shown: it would be the answer."""
    if played.verdict == ("ok",):
        return say("a bash call that runs the tests, then a final answer that states the summary "
                   "line they printed",
                   "一个运行测试的 bash 调用，然后是一个最终回答，说出测试打印的那行汇总")
    if played.verdict[0] in ("not a list", "not a script"):
        return played.problem
    lines = [say("the calls your script asked for, and what each returned:",
                 "你的脚本请求的调用，以及每个调用返回的内容：")
             if played.calls else say("your script asked for no tool call at all",
                                      "你的脚本一个工具调用也没有请求")]
    lines += [f"  {call}" for call in played.calls]
    if played.verdict[0] == "stopped":
        lines.append(say("the run stopped with ", "运行停在了 ") + played.problem)
    elif played.verdict[0] != "ran out":
        lines.append(say("the final answer: ", "最终回答：") + f"{played.answer!r:.300}")
    return "\n".join(lines)


TURNS = ("A turn is a string (the final answer) or a dict with \"text\" and/or \"tool_calls\", "
         "each call {\"name\": ..., \"arguments\": {...}}",
         "一个脚本回合要么是字符串（最终回答），要么是带 \"text\" 和/或 \"tool_calls\" 的字典，"
         "每个调用写成 {\"name\": ..., \"arguments\": {...}}")
RAN_OUT = ("a turn with tool calls is never the last one: after the calls the agent asks the model "
           "again, to read their results. End the script with a string, the final answer",
           "带工具调用的回合永远不会是最后一个：调用做完之后，智能体还要再问模型，让它读这些"
           "调用的结果。脚本要以一个字符串（最终回答）结尾")
BASH = ("Only a tool can run the tests, and bash is the one that runs commands: ask for bash "
        "with the command \"python3 test_stats.py\" (arguments {\"command\": ...})",
        "只有工具能运行测试，而运行命令的工具是 bash：请求 bash，命令写 "
        "\"python3 test_stats.py\"（参数 {\"command\": ...}）")
NEVER_READS = ("A scripted model never reads the tool results: its answer was written before the "
               "tests ran, so write what the tour showed they print",
               "脚本模型从来不读工具结果：它的回答在测试运行之前就写好了，所以要写导览里看到的"
               "测试输出")


def _script_diagnose(args: tuple, got: Played, wanted: Played) -> str:
    """Why a run went wrong where no listed mistake explains it, from what the run shows."""
    kind = got.verdict[0]
    if kind == "not a list":
        return say("tests_script() should return a list of turns. ",
                   "tests_script() 应该返回脚本回合的列表。") + say(*TURNS)
    if kind == "not a script":
        return say("this is not a script a ScriptedLLM can play. ",
                   "这不是 ScriptedLLM 能播放的脚本。") + say(*TURNS)
    if kind == "ran out":
        return say("the script ran out. ", "脚本用完了。") + say(*RAN_OUT)
    if kind == "no tests":
        return say("no bash call ran the tests in test_stats.py (nothing that ran them printed a "
                   "line like \"N of 3 tests passed\"). ",
                   "没有哪个 bash 调用运行了 test_stats.py 里的测试（没有运行测试的调用打印出 "
                   "\"N of 3 tests passed\" 这样的行）。") + say(*BASH)
    if kind == "answer":
        summary, said = got.summary, SUMMARY.search(got.answer)
        why = {"denied": say(f"your answer mentions {summary!r} but does not say it is so (a "
                             "sentence with a \"not\" in it). ",
                             f"你的回答提到了 {summary!r}，却没有说它成立（那句话里有否定词）。"),
               "other": say(f"your answer says {said and said[0]!r}, but the tests printed "
                            f"{summary!r}. ",
                            f"你的回答说 {said and said[0]!r}，可测试打印的是 {summary!r}。"),
               "silent": say(f"the tests printed {summary!r}, and your answer does not say so. ",
                             f"测试打印了 {summary!r}，你的回答却没有说。")}[got.verdict[1]]
        return why + say(*NEVER_READS)
    return None  # stopped: the run shows its error, the rule says the rest


SCRIPT_EXERCISE = Exercise(
    "ch00.script", tests_script, lambda: _just_once(), lambda args: say(
        "tests_script(), played by a ScriptedLLM in a fresh copy of the demo project, for the "
        "tour's task", "tests_script()，由 ScriptedLLM 在演示项目的一份新副本里播放，做导览的"
        "那个任务"),
    run=lambda answer: _played(answer), show=_shown_run, diagnose=_script_diagnose,
    same=lambda got, wanted, args: got.verdict == wanted.verdict, examples=[()],
    domain=("the demo project, played once", "演示项目，播放一次"),
    rule=("a script is a list of turns: one that asks for bash to run the tests, then a string, "
          "the final answer, that states the summary line they print",
          "脚本是一串回合：先有一个回合请求 bash 运行测试，然后是一个字符串，也就是最终回答，"
          "说出测试打印的那行汇总"),
    shape=("[{\"tool_calls\": [{\"name\": \"bash\", \"arguments\": {\"command\": ...}}]}, "
           "\"the final answer\"]",
           "[{\"tool_calls\": [{\"name\": \"bash\", \"arguments\": {\"command\": ...}}]}, "
           "\"最终回答\"]"),
    mistakes=[
        Mistake('"I ran the tests: 1 of 3 tests passed.",', "", RAN_OUT),
        Mistake("1 of 3 tests passed.", "3 of 3 tests passed.", (
            "the tests still fail: nothing fixed the bug, and the summary says so. "
            + NEVER_READS[0], "测试依然失败：没有谁修过这个 bug，汇总行也这么说。"
            + NEVER_READS[1])),
        Mistake('"I ran the tests: 1 of 3 tests passed."', '"It is not true that 1 of 3 tests '
                'passed."', (
                    "your answer quotes the summary line in a sentence that denies it: state it "
                    "as what the tests printed",
                    "你的回答引用了汇总行，可那句话是在否定它：要把它当作测试打印的结果说出来")),
        Mistake('{"command": "python3 test_stats.py"}', '{"cmd": "python3 test_stats.py"}', (
            "bash takes its command as the argument \"command\": the engine checks each call's "
            "arguments against the tool's schema, answers \"bad arguments\", and bash never runs",
            "bash 的命令参数叫 \"command\"：引擎会按工具的 JSON Schema 检查每个调用的参数，"
            "回应 \"bad arguments\"，bash 根本不会运行")),
        Mistake('[{"name": "bash", "arguments": {"command": "python3 test_stats.py"}}]',
                '[{"name": "read_file", "arguments": {"command": "python3 test_stats.py"}}]', (
                    "read_file reads a file, it runs nothing. " + BASH[0],
                    "read_file 只读文件，什么也不运行。" + BASH[1])),
        Mistake("python3 test_stats.py", "echo 1 of 3 tests passed", (
            "echo prints the summary line without running a single test: run the test file "
            "itself, python3 test_stats.py",
            "echo 只是把汇总行打印出来，一个测试也没跑：要运行测试文件本身，"
            "python3 test_stats.py")),
    ],
)


def _just_once():
    from hypothesis import strategies as st

    return st.just(())


# --- ch00.count_calls ------------------------------------------------------------------

def _turns_as_history(task: str, turns: list, results: list[str]) -> list[dict]:
    """A history as the loop builds it from scripted turns: each reply, then one result per call."""
    history, said = [user(task)], iter(results)
    for i, turn in enumerate(turns):
        reply = parse_turn(turn, i)
        history.append(reply.message())
        history += [tool_result(call.id, next(said)) for call in reply.tool_calls]
    return history


TOUR = _turns_as_history(TASK, SCRIPT, [  # the tool results, cut short
    "FAIL test_mean: ...\n1 of 3 tests passed\n[exit code 1]", "stats.py:4: def mean(values):",
    "     1\t\"\"\"Small statistics helpers.\"\"\" ...",
    "Edited stats.py: replaced 1 occurrence at line 6. ...",
    "3 of 3 tests passed"])
# what a model may ask for: the tools, a misspelt one, names in other scripts
NAMES = ("bash", "grep", "read_file", "edit_file", "read_fiel", "читать", "読む", "")
# what a call may have come to: it counts all the same
RESULTS = ("ok", "unknown tool 'read_fiel'. Available tools: ...",
           "bad arguments for read_file: the arguments are not valid JSON", "bash failed: boom")


def count_tool_calls(messages):
    """How many calls the model asked for, per tool name: {"bash": 2, "grep": 1, ...}."""
    counts = {}
    for message in messages:
        for call in message.get("tool_calls", []):
            name = call["function"]["name"]
            counts[name] = counts.get(name, 0) + 1
    return counts


def _histories():
    """Histories as the loop leaves them: the user speaks, the model answers or asks for calls
    (1 to 4 at once, any name), each call gets its result, worked or failed (or the run was cut
    short after its last calls, which then have none)."""
    from hypothesis import strategies as st

    @st.composite
    def history(draw) -> list[dict]:
        messages, made = [], 0
        for _ in range(draw(st.integers(0, 5))):
            kind = draw(st.sampled_from(["user", "answer", "calls", "calls"]))
            if kind == "user":
                messages.append(user(draw(st.sampled_from(["Fix it.", "[CI] log", "修一下"]))))
            elif kind == "answer":
                messages.append(assistant(draw(st.sampled_from(["Done.", "", "好了"]))))
            else:
                names = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=4))
                calls = [ToolCall(f"c{made + k}", name, "{}") for k, name in enumerate(names)]
                made += len(calls)
                messages.append(assistant(draw(st.sampled_from(["", "Let me look."])), calls))
                messages += [tool_result(c.id, draw(st.sampled_from(RESULTS))) for c in calls]
        if draw(st.booleans()) and messages and messages[-1]["role"] == "tool":
            while messages[-1]["role"] == "tool":  # cut short while its last calls ran
                messages.pop()
        return messages

    return st.tuples(history())


def _count_call(args: tuple[list[dict]]) -> str:
    return f"{case(say('the history', '历史'), args[0])}\ncount_tool_calls(messages)"


EACH = "for message in messages:"
COUNT_CALLS = Exercise(
    "ch00.count_calls", count_tool_calls, _histories, _count_call,
    examples=[(TOUR,)],
    domain=("histories of every shape the loop leaves", "循环留下的各种形状的历史"),
    rule=("count every call of every assistant message (a round can ask for several calls), by "
          "the tool name the model asked for, whatever its result; list only the tools that were "
          "called. In a history, an assistant message that asks for tools has \"tool_calls\", a "
          "list of {\"id\": ..., \"type\": \"function\", \"function\": {\"name\": ..., "
          "\"arguments\": ...}}; other messages have none",
          "数每条 assistant 消息里的每个调用（一轮可以请求好几个调用），按模型请求的工具名计数，"
          "不管结果如何；只列出被调用过的工具。历史里，请求工具的 assistant 消息带有 "
          "\"tool_calls\"，它是一个列表，每项形如 {\"id\": ..., \"type\": \"function\", "
          "\"function\": {\"name\": ..., \"arguments\": ...}}；其他消息没有"),
    shape=("for each message, for each call in message.get(\"tool_calls\", []): "
           "counts[name] = counts.get(name, 0) + 1",
           "对每条消息里 message.get(\"tool_calls\", []) 中的每个调用："
           "counts[name] = counts.get(name, 0) + 1"),
    mistakes=[
        Mistake('message.get("tool_calls", [])', 'message.get("tool_calls", [])[:1]', (
            "a round can ask for several calls at once (parallel calls): count every one of "
            "them, not one a round",
            "一轮可以同时请求好几个调用（并行调用）：每一个都要数，而不是一轮只数一个")),
        Mistake('call["function"]["name"]', 'call["name"]', (
            "a call in the history is not laid out as in a script: its name is at "
            "call[\"function\"][\"name\"]",
            "历史里的调用和脚本里的写法不一样：它的名字在 call[\"function\"][\"name\"]")),
        Mistake(EACH, "for message in messages[:-1]:", (
            "a run cut short while its last calls ran ends with the assistant message that asked "
            "for them: the last message counts too",
            "运行在最后几个调用执行时被打断，历史就以请求它们的那条 assistant 消息结尾：最后一条"
            "消息也要数")),
        Mistake(EACH, EACH + '\n        if message["role"] == "assistant" and not '
                'message.get("tool_calls"):\n            break', (
                    "an answer ends a round, not the history: the user may speak again, and the "
                    "model call more tools after it",
                    "一个回答结束的是一轮，而不是整段历史：用户还可能再说话，模型之后还可能再调用"
                    "工具")),
        Mistake("counts.get(name, 0) + 1", "1", (
            "each call adds one to its tool's count: a tool called twice counts 2",
            "每个调用都给它的工具的计数加一：一个工具被调用两次，计数就是 2")),
    ],
)
