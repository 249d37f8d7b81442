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
import tempfile
from pathlib import Path

from corecoder.agent import Agent
from corecoder.assemble import build_agent
from corecoder.demo import SCRIPT, TASK, copy_project
from corecoder.messages import IllegalHistory, ToolCall, assistant, check_history, tool_result, user
from corecoder.scripted import ScriptedLLM, ScriptError, parse_turn

from ..checks import Hint, attempt, case, checker, hint
from ..kit import Exercise, Mistake
from ..words import say

# --- ch00.script -----------------------------------------------------------------------

SUMMARY = re.compile(r"\b\d+ of \d+ tests passed\b")
NEGATION = re.compile(r"\b(not|no|never|isn't|aren't|didn't|doesn't|don't)\b|n't\b|[不没未非]",
                      re.I)
# a summary is stated in a clause of its own
CLAUSE_END = re.compile(r"[.!?;:,。！？；：，]\s*|\n+")
GAMING = re.compile(r"\b(echo|printf|cat)\b")  # prints a summary line without running the tests


def turns_hint() -> str:
    return say("a turn is a string (the final answer) or a dict with \"text\" and/or "
               "\"tool_calls\", each call {\"name\": ..., \"arguments\": {...}}",
               "一个脚本回合要么是字符串（最终回答），要么是带 \"text\" 和/或 \"tool_calls\" "
               "的字典，每个调用写成 {\"name\": ..., \"arguments\": {...}}")


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


def _what_ran(calls: list[tuple[dict, str]]) -> str:
    if not calls:
        return say("your script asked for no tool call at all", "你的脚本一个工具调用也没有请求")
    lines = [say("the calls your script asked for, and the first line of what each returned:",
                 "你的脚本请求的调用，以及每个调用返回内容的第一行：")]
    for call, result in calls:
        first = result.strip().splitlines()[0] if result.strip() else say("(nothing)", "（空）")
        lines.append(f"  {_shown_call(call)}  →  {first[:160]}")
    return "\n".join(lines)


def _run(turns: list) -> tuple[Agent, str]:
    """Run the turns as the tour runs SCRIPT: the demo project in a temporary folder, the
    real tools."""
    try:
        llm = ScriptedLLM(copy.deepcopy(turns))
    except Exception as e:
        not_a_script = say("this is not a script a ScriptedLLM can play:",
                           "这不是 ScriptedLLM 能播放的脚本：")
        raise Hint(f"{not_a_script} {e}" + hint(turns_hint())) from None
    with tempfile.TemporaryDirectory(prefix="corecoder-ch00-") as tmp:
        project = copy_project(Path(tmp))
        agent = build_agent(llm, project)
        try:
            answer = agent.chat(TASK)
        except Exception as e:
            ran = _what_ran(_calls_made(agent.messages))
            if isinstance(e, ScriptError) and llm.position >= len(llm.turns):
                n = len(llm.turns)
                told = say(f"the script ran out: after its {n} turn{'s' if n > 1 else ''} the "
                           "agent asked the model again, to read the last tool results",
                           f"脚本用完了：播完 {n} 个回合之后，智能体又去问模型，"
                           "让它读最后的工具结果")
                told += f"\n{ran}" + hint(say(
                    "a turn with tool calls is never the last one; end the script with a string, "
                    "the final answer",
                    "带工具调用的回合永远不会是最后一个；脚本要以一个字符串（最终回答）结尾"))
            else:
                stopped = say("the run stopped with", "运行停在了")
                told = f"{stopped} {type(e).__name__}: {e}\n{ran}"
            raise Hint(told.replace(str(project), "<project>")) from None
        text = json.dumps(agent.messages, ensure_ascii=False)
        if str(project) in text:  # keep hints free of the temporary path
            agent.messages = json.loads(text.replace(str(project), "<project>"))
    return agent, answer


@checker("ch00.script")
def check_script(make_script) -> None:
    given = say("your script, played by a ScriptedLLM in a fresh copy of the demo project, "
                "for the tour's task",
                "你的脚本，由 ScriptedLLM 在演示项目的一份新副本里播放，"
                "做导览的那个任务") + say(":", "：")
    called = f"{getattr(make_script, '__name__', 'your function')}()"
    turns = attempt(make_script, given=called)
    if not isinstance(turns, list) or not turns:
        raise Hint(f"{called} " + say("should return a list of turns, got",
                                      "应该返回脚本回合的列表，实际得到")
                   + f" {type(turns).__name__}: {turns!r:.200}" + hint(turns_hint()))
    agent, answer = _run(turns)
    calls = _calls_made(agent.messages)
    runs = [(call, result) for call, result in calls if call["function"]["name"] == "bash"
            and SUMMARY.search(result) and "test_stats" in _command(call)
            and not GAMING.search(_command(call))]
    if not runs:
        why = say("only a tool can run the tests, and bash is the one that runs commands: "
                  "ask for bash with the command \"python3 test_stats.py\" "
                  "(arguments {\"command\": ...})",
                  "只有工具能运行测试，而运行命令的工具是 bash：请求 bash，命令写 "
                  "\"python3 test_stats.py\"（参数 {\"command\": ...}）")
        raise Hint(f"{given}\n" + say("no bash call ran the tests in test_stats.py (nothing "
                                       "that ran them printed a line like \"N of 3 tests passed\")",
                                       "没有哪个 bash 调用运行了 test_stats.py 里的测试（没有运行"
                                       "测试的调用打印出 \"N of 3 tests passed\" 这样的行）")
                   + f"\n{_what_ran(calls)}" + hint(why))
    last = agent.messages[-1]
    if last["role"] != "assistant" or last.get("tool_calls"):
        no_answer = say("the run did not end with an answer:", "运行没有以回答结束：")
        raise Hint(f"{given}\n{no_answer} {answer!r:.200}" + hint(say(
            "end the script with a string, the final answer",
            "脚本要以一个字符串（最终回答）结尾")))
    summary = SUMMARY.findall(runs[-1][1])[-1]
    said_it = re.compile(rf"(?<!\d){re.escape(summary)}")  # "1 of 3 ...", not "11 of 3 ..."
    stated = [s for s in CLAUSE_END.split(answer) if said_it.search(s) and not NEGATION.search(s)]
    if not stated:
        said = SUMMARY.search(answer)
        if said and said[0] == summary and said_it.search(answer):
            why = say(f"your answer mentions {summary!r} but does not say it is so (a sentence "
                      "with a \"not\" in it). ",
                      f"你的回答提到了 {summary!r}，却没有说它成立（那句话里有否定词）。")
        elif said:
            why = say(f"your answer says {said[0]!r}, but the tests printed {summary!r}. ",
                      f"你的回答说 {said[0]!r}，可测试打印的是 {summary!r}。")
        else:
            why = say(f"the tests printed {summary!r}, and your answer does not say so. ",
                      f"测试打印了 {summary!r}，你的回答却没有说。")
        why += say("A scripted model never reads the tool results: its answer was written "
                   "before the tests ran, so write what the tour showed they print",
                   "脚本模型从来不读工具结果：它的回答在测试运行之前就写好了，"
                   "所以要写导览里看到的测试输出")
        raise Hint(f"{given}\n" + say("the final answer:", "最终回答：") + f" {answer!r:.300}"
                   + hint(why))
    try:
        check_history(agent.messages)
    except IllegalHistory as e:  # cannot happen with the real loop; kept as the point of the tour
        illegal = say("the history is not legal:", "历史不合法：")
        raise Hint(f"{given}\n{illegal} {e}") from None


def _command(call: dict) -> str:
    """The command a bash call asked for ("" if its arguments hold none)."""
    try:
        args = json.loads(call["function"]["arguments"] or "{}")
    except json.JSONDecodeError:
        return ""
    return str(args.get("command", "")) if isinstance(args, dict) else ""


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
