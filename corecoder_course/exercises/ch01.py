"""Checks for the exercises of chapter 1, the loop.

    ch01.find_orphan      find the first tool result that no waiting call expects
    ch01.answer_pending   after an interrupt, answer every call still waiting
    ch01.run_call         run one call, telling bad arguments from failures
    ch01.stop_on_failure  an executor that stops a batch at its first failed call,
                          plugged into a real Agent

The first three feed small, hand-made cases to the learner's function and stop at the
first one it gets wrong, saying what went in, what was expected and what came back.
The last runs the learner's executor inside a real `Agent` on a scripted model, with a
gate: the scripted model checks every request as the API would, and the verdict reads
the history the run leaves (each call's result) and which calls started.
"""

from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path

from corecoder.agent import Agent
from corecoder.calls import Gate
from corecoder.events import ToolCallStarted
from corecoder.messages import (
    INTERRUPTED,
    IllegalHistory,
    ToolCall,
    assistant,
    check_history,
    tool_result,
    user,
)
from corecoder.scripted import ScriptedLLM
from corecoder.tool import Tool, ToolError
from corecoder.tools import Glob, ReadFile
from corecoder.workspace import Workspace

from ..checks import EXPECTED, GOT, Hint, attempt, case, checker, describe, expect, hint
from ..words import say


def _calls(*ids: str) -> dict:
    return assistant("", [ToolCall(i, "read_file", json.dumps({"path": f"{i}.py"})) for i in ids])


def _result(call_id: str, text: str = "ok") -> dict:
    return tool_result(call_id, text)


# --- ch01.find_orphan ------------------------------------------------------------------

def orphan_cases() -> list[tuple[str, list[dict], int | None]]:
    return [
        (say("a legal history: two calls, both answered, in order",
             "合法的历史：两个调用，都按顺序得到回应"),
         [user("fix it"), _calls("c1", "c2"), _result("c1"), _result("c2"), assistant("done")],
         None),
        (say("a legal history of two rounds", "两轮的合法历史"),
         [user("go"), _calls("c1"), _result("c1"), _calls("c2", "c3"), _result("c2"),
          _result("c3")], None),
        (say("an empty history", "空历史"), [], None),
        (say("a history cut at the front, so its first message is a tool result",
             "开头被截掉的历史：第一条消息就是工具结果"),
         [_result("c1"), _calls("c2"), _result("c2")], 0),
        (say("a call answered twice", "一个调用得到两次回应"),
         [user("go"), _calls("c1"), _result("c1"), _result("c1")], 3),
        (say("two orphans: the first one counts", "两个孤立的结果：算第一个"),
         [_result("c9"), user("go"), _calls("c1"), _result("c1"), _result("c1")], 0),
        (say("a result whose id no call has", "结果的 id 不属于任何调用"),
         [user("go"), _calls("c1"), _result("c9")], 2),
        (say("a result that arrives after the user spoke again", "用户又说了话之后才到的结果"),
         [user("go"), _calls("c1", "c2"), _result("c1"), user("stop"), _result("c2")], 4),
        (say("a result that arrives after an assistant message without calls",
             "一条不带调用的 assistant 消息之后才到的结果"),
         [user("go"), _calls("c1", "c2"), _result("c1"), assistant("hmm"), _result("c2")], 4),
        (say("two results in the wrong order "
             "(this rule cares that each answers a waiting call, not the order)",
             "两个结果顺序颠倒（这条规则只管每个结果是否回应一个等待中的调用，不管顺序）"),
         [user("go"), _calls("c1", "c2"), _result("c2"), _result("c1")], None),
    ]


@checker("ch01.find_orphan")
def check_find_orphan(find_orphan) -> None:
    why = say("a tool message must answer a call of the latest assistant message that is "
              "still waiting; a user or assistant message in between closes the window",
              "tool 消息必须回应最近一条 assistant 消息里仍在等待的调用；"
              "中间只要隔了一条 user 或 assistant 消息，窗口就关上了")
    for about, history, wanted in orphan_cases():
        given = case(about, history)
        got = attempt(find_orphan, copy.deepcopy(history), given=given)
        expect(got, wanted, given, why)


# --- ch01.answer_pending ---------------------------------------------------------------

def _reference_pending(messages: list[dict]) -> list[dict]:
    answered, i = set(), len(messages)
    while i > 0 and messages[i - 1]["role"] == "tool":
        i -= 1
        answered.add(messages[i]["tool_call_id"])
    if i == 0 or messages[i - 1]["role"] != "assistant":
        return list(messages)
    waiting = [c["id"] for c in messages[i - 1].get("tool_calls", []) if c["id"] not in answered]
    return [*messages, *(tool_result(call_id, INTERRUPTED) for call_id in waiting)]


# Twelve calls whose ids sort neither in call order nor against it, the first two answered:
# ten left waiting, so an answer that keeps them in a set (hash order), sorts them or reverses
# them fails whatever the hash seed (a set of ten in call order: about 1 seed in 3.6 million).
MANY = ["c7", "c3", "c11", "c1", "c9", "c12", "c2", "c10", "c5", "c8", "c4", "c6"]


def pending_cases() -> list[tuple[str, list[dict]]]:
    return [
        (say("three calls; the user interrupted after the first was answered",
             "三个调用；第一个得到回应后，用户中断了"),
         [user("go"), _calls("c1", "c2", "c3"), _result("c1")]),
        (say("two calls; the user interrupted before either was answered",
             "两个调用；都还没得到回应，用户就中断了"),
         [user("go"), _calls("c1", "c2")]),
        (say("twelve calls; the user interrupted after two were answered",
             "十二个调用；两个得到回应后，用户中断了"),
         [user("go"), _calls(*MANY), _result(MANY[0]), _result(MANY[1])]),
        (say("two rounds; the user interrupted the second after its first call was answered",
             "两轮；第二轮的第一个调用得到回应后，用户中断了"),
         [user("go"), _calls("c1"), _result("c1"), _calls("c2", "c3"), _result("c2")]),
        (say("nothing waiting: the last round ended with an answer",
             "没有等待的调用：上一轮以回答结束"),
         [user("go"), _calls("c1"), _result("c1"), assistant("done")]),
        (say("nothing waiting: every call was answered", "没有等待的调用：每个调用都得到了回应"),
         [user("go"), _calls("c1", "c2"), _result("c1"), _result("c2")]),
        (say("only the user has spoken", "只有用户说过话"), [user("go")]),
    ]


@checker("ch01.answer_pending")
def check_answer_pending(answer_pending) -> None:
    for about, history in pending_cases():
        given = case(about, history)
        kept = copy.deepcopy(history)
        got = attempt(answer_pending, kept, given=given)
        if kept != history:
            raise Hint(given + "\n" + say("your function changed the list it was given; "
                                          "return a new list instead",
                                          "你的函数改动了传进来的列表；应该返回一个新列表"))
        if not isinstance(got, list):
            raise Hint(f"{given}\n" + say("expected a list of messages, got", "期望一个消息列表，"
                                          "实际得到") + f" {type(got).__name__}: {got!r:.200}")
        wanted = _reference_pending(history)
        if got != wanted:
            why = say(f"each waiting call gets one result, {INTERRUPTED!r}, in call order "
                      "(the order of the assistant message's tool_calls)",
                      f"每个等待中的调用得到一个结果 {INTERRUPTED!r}，按调用的顺序排"
                      "（即 assistant 消息里 tool_calls 的顺序）")
            raise Hint(f"{given}\n{EXPECTED.alone}\n{describe(wanted)}\n"
                       f"{GOT.alone}\n{describe(got)}" + hint(why))
        try:
            check_history(got)
        except IllegalHistory as e:
            # cannot happen if got == wanted; kept as the point of the exercise
            raise Hint(f"{given}\n" + say("the result is not a legal history:",
                                          "结果不是合法的历史：") + f" {e}") from None


# --- ch01.run_call ---------------------------------------------------------------------

class Shout(Tool):
    name = "shout"
    description = "Repeat the text in capitals."
    parameters = {"type": "object", "additionalProperties": False, "required": ["text"],
                  "properties": {"text": {"type": "string"},
                                 "times": {"type": "integer", "minimum": 1}}}

    def __init__(self):
        self.ran = 0

    def run(self, ws, text, times=1):
        self.ran += 1
        return text.upper() * times


class Count(Tool):
    name = "count"
    description = "Add one."
    parameters = {"type": "object", "additionalProperties": False,
                  "properties": {"start": {"type": "integer"}}}

    def __init__(self):
        self.ran = 0

    def run(self, ws, start=0):
        self.ran += 1
        return str(start + 1)


class DiskFull(Shout):
    name = "save"

    def run(self, ws, text, times=1):
        raise ToolError("the disk is full")


class Buggy(Count):
    name = "buggy"

    def run(self, ws, start=0):
        raise ValueError("the tool has a bug")


class Lookup(Count):
    """A tool whose bug is a KeyError: still the tool's failure, not the model's bad arguments."""

    name = "lookup"

    def run(self, ws, start=0):
        self.ran += 1
        return {}["missing"]


# (tool, arguments, the result must start with, and must contain, did the tool run?)
CALL_CASES = [
    (Shout, '{"text": "hi"}', "HI", "", True),
    (Shout, '{"text": "hi", "times": 2}', "HIHI", "", True),
    (Count, "", "1", "", True),  # no arguments at all: some providers send "" for {}
    (Count, "  ", "1", "", True),
    (Shout, '{"text": ', "bad arguments for shout:", "", False),
    (Count, '{"start": ', "bad arguments for count:", "", False),
    (Shout, '["hi"]', "bad arguments for shout:", "", False),
    (Count, "[]", "bad arguments for count:", "", False),  # JSON, but not an object: never {}
    (Count, "null", "bad arguments for count:", "", False),
    (Shout, "{}", "bad arguments for shout:", "missing required argument 'text'", False),
    (Shout, '{"text": 5}', "bad arguments for shout:", "text should be string", False),
    (Shout, '{"text": 5, "times": 0}', "bad arguments for shout:",
     "text should be string, got int 5; times", False),
    (DiskFull, '{"text": "hi"}', "save failed:", "the disk is full", None),
    (Buggy, "{}", "buggy failed:", "the tool has a bug", None),
    (Lookup, "{}", "lookup failed:", "missing", True),
]


def _why(starts: str, arguments: str) -> str:
    if not arguments.strip():
        return say("empty arguments are no arguments, {}: some providers send \"\" for a call "
                   "that has none, and the engine runs it (only text that is not JSON is bad)",
                   "空参数就是没有参数，即 {}：有些服务商给不带参数的调用发 \"\"，"
                   "引擎照常运行它（只有不是 JSON 的文本才算坏参数）")
    if starts.startswith("bad arguments"):
        return say("arguments that don't parse, aren't an object or don't fit the schema are the "
                   "model's mistake: say so, list every problem (joined with '; ') and never run "
                   "the tool; never treat bad JSON as {}",
                   "解析不了、不是对象、或者不符合 JSON Schema 的参数，是模型的错：如实说出来，"
                   "列出每个问题（用 '; ' 连接），工具一概不运行；坏 JSON 绝不当作 {}")
    if "failed" in starts:
        return say("an exception from the tool, any exception, is the environment's failure: "
                   "'<tool> failed: <message>'",
                   "工具抛出的异常，不管哪一种，都是环境的失败：'<tool> failed: <message>'")
    return say("valid arguments: run the tool and return exactly what it returned",
               "参数没问题：运行工具，原样返回它的返回值")


@checker("ch01.run_call")
def check_run_call(run_call) -> None:
    workspace = Workspace()
    for make, arguments, starts, contains, runs in CALL_CASES:
        tool = make()
        given = f"run_call({tool.name}, {arguments!r}, workspace)"
        got = attempt(run_call, tool, arguments, workspace, given=given)
        if not isinstance(got, str):
            raise Hint(f"{given}\n" + say("expected a string (the tool result), got",
                                          "期望一个字符串（工具结果），实际得到")
                       + f" {type(got).__name__}: {got!r:.200}")
        exact = not contains and runs
        if (got != starts) if exact else not (got.startswith(starts) and contains in got):
            wanted = repr(starts) if exact else (
                say(f"a string starting {starts!r}", f"以 {starts!r} 开头的字符串")
                + (say(f" and containing {contains!r}", f"，且包含 {contains!r}")
                   if contains else ""))
            raise Hint(f"{given}\n{EXPECTED}{wanted}\n{GOT}{got!r:.300}"
                       + hint(_why(starts, arguments)))
        if runs and tool.ran > 1:
            raise Hint(f"{given}\n" + say(f"the tool ran {tool.ran} times: run it once",
                                          f"工具运行了 {tool.ran} 次：只该运行一次"))
        if runs is not None and bool(tool.ran) != runs:
            raise Hint(f"{given}\n" + (
                say("the tool should have run: the arguments were fine",
                    "工具本该运行：参数没有问题") if runs else
                say("the tool should not have run: bad arguments never reach the tool",
                    "工具不该运行：坏参数永远到不了工具那里")))


# --- ch01.stop_on_failure ----------------------------------------------------------------

FILES = {"a.py": "print('a')\n", "b.py": "print('b')\n", "secret.txt": "hunter2\n",
         # a file whose text looks like a failure: reading it worked
         "failed.txt": "read_file failed: no, this is the file's own text\n3 tests failed\n"}


class Secrets(Gate):
    """A gate that refuses to read a secret: a refusal that is neither bad arguments nor a
    missing tool."""

    name = "policy"

    def before(self, tool, args, workspace):
        return "secrets stay secret" if "secret" in str(args.get("path", "")) else None


def _read(path: str, name: str = "read_file") -> dict:
    return {"name": name, "arguments": {"path": path}}


def batch_cases() -> list[tuple[str, list[list[dict]], list[list[str]]]]:
    """(what the case is, the batches the model asks for, each call's status as it ends)"""
    return [
        (say("three reads, the second of a file that does not exist",
             "读三个文件，第二个不存在"),
         [[_read("a.py"), _read("missing.py"), _read("b.py")]],
         [["ok", "failed", "not_run"]]),
        (say("three reads that all work (one of a file whose text says \"read_file failed:\")",
             "读三个文件，都成功（其中一个文件的内容里有 \"read_file failed:\"）"),
         [[_read("failed.txt"), _read("a.py"), _read("b.py")]],
         [["ok", "ok", "ok"]]),
        (say("bad arguments first: the tool never runs, and that is a failed call too",
             "第一个调用参数就不对：工具根本没运行，这也算失败的调用"),
         [[{"name": "read_file", "arguments": {"path": 3}}, _read("a.py")]],
         [["bad_arguments", "not_run"]]),
        (say("a tool that does not exist first", "第一个调用的工具根本不存在"),
         [[_read("a.py", name="read_fiel"), _read("a.py")]],
         [["unknown_tool", "not_run"]]),
        (say("a gate refuses the first call (the agent has a gate that keeps secrets)",
             "关卡拒绝了第一个调用（这个智能体有一个守住机密的关卡）"),
         [[_read("secret.txt"), _read("a.py")]],
         [["refused", "not_run"]]),
        (say("two rounds: a failure in the first must not stop the second",
             "两轮：第一轮的失败不能让第二轮也停下"),
         [[_read("missing.py"), _read("a.py")], [_read("a.py"), _read("b.py")]],
         [["failed", "not_run"], ["ok", "ok"]]),
    ]


def _status(result, call: dict, given: str) -> str:
    if not isinstance(result, str):
        kind = type(result).__name__
        raise Hint(f"{given}\n" + say(
            f"the result of {call['name']} is a {kind}, not text: a result is what the model "
            "reads, results[call.id] = perform(...)",
            f"{call['name']} 的结果是 {kind}，不是文本：结果是给模型读的，"
            "应该写 results[call.id] = perform(...)"))
    kinds = [(INTERRUPTED, "interrupted"), ("[not run:", "not_run"),
             (f"bad arguments for {call['name']}", "bad_arguments"),
             ("unknown tool", "unknown_tool"), (f"{call['name']} refused", "refused"),
             (f"{call['name']} failed:", "failed")]
    return next((status for start, status in kinds if result.startswith(start)), "ok")


def _play(executor, batches: list[list[dict]], folder: Path) -> tuple[Agent, list[str]]:
    """The batches, each a reply of the scripted model, then a final answer, through a real
    Agent that runs the calls with `executor`; and the ids of the calls that started."""
    script = [{"tool_calls": batch} for batch in batches] + ["Done."]
    agent = Agent(ScriptedLLM(script), [ReadFile(), Glob()], cwd=folder, executor=executor,
                  gates=[Secrets()])
    started: list[str] = []
    agent.subscribe(lambda e: started.append(e.call.id) if isinstance(e, ToolCallStarted) else None)
    agent.chat("Read the files.")
    return agent, started


@checker("ch01.stop_on_failure")
def check_stop_on_failure(stop_on_failure) -> None:
    with tempfile.TemporaryDirectory(prefix="corecoder-ch01-") as tmp:
        for name, text in FILES.items():
            Path(tmp, name).write_text(text, encoding="utf-8")
        for about, batches, wanted in batch_cases():
            asks = say("an Agent that runs its calls with stop_on_failure; the model asks for",
                       "一个用 stop_on_failure 运行调用的 Agent；模型请求的是")
            rounds = [f"  {say(f'round {n}', f'第 {n} 轮')}: " + ", ".join(
                f"{c['name']}({json.dumps(c['arguments'], ensure_ascii=False)})" for c in batch)
                for n, batch in enumerate(batches, 1)]
            given = f"{asks} ({about}):\n" + "\n".join(rounds)
            try:
                agent, started = _play(stop_on_failure, batches, Path(tmp))
            except NotImplementedError:
                raise
            except (Exception, KeyboardInterrupt) as e:
                why = say("an executor stops by returning: the loop answers every call it left "
                          "out. Raising ends the user's turn instead (KeyboardInterrupt as if "
                          "they had pressed Ctrl+C)",
                          "执行器要停下，直接 return 就好：它没运行的调用由循环来回应。"
                          "抛出异常会让用户这一轮直接结束（KeyboardInterrupt 就像用户按了 Ctrl+C）")
                ended = say("the run ended with ", "运行以异常结束：")
                raise Hint(f"{given}\n{ended}{type(e).__name__}: {e}" + hint(why)) from None
            check_history(agent.messages)  # the loop keeps it legal whatever the executor did
            answered = [_results(agent, n) for n in range(len(batches))]
            got = [[_status(m["content"], call, given)
                    for call, m in zip(batch, answers, strict=True)]
                   for batch, answers in zip(batches, answered, strict=True)]
            if got != wanted:
                why = _stop_hint(got, wanted)
                raise Hint(f"{given}\n{EXPECTED}{wanted}\n{GOT}{got}" + hint(why))
            ran = [m["tool_call_id"] for answers, statuses in zip(answered, wanted, strict=True)
                   for m, status in zip(answers, statuses, strict=True) if status != "not_run"]
            if started != ran:
                why = say("a call after the failed one must not run at all (it could change a "
                          "file); only its result is left out. Run each call only once, in order",
                          "失败之后的调用根本不能运行（它可能会改文件），不只是不写结果。"
                          "每个调用按顺序只运行一次")
                raise Hint(f"{given}\n" + say("the calls that ran:", "运行过的调用：")
                           + f" {started}\n" + say("expected:", "期望：") + f" {ran}" + hint(why))


def _results(agent: Agent, n: int) -> list[dict]:
    """The tool messages that answer the calls of the model's n-th reply (0-based)."""
    replies = [i for i, m in enumerate(agent.messages) if m.get("tool_calls")]
    start = replies[n] + 1
    end = start + len(agent.messages[replies[n]]["tool_calls"])
    return agent.messages[start:end]


def _stop_hint(got: list[list[str]], wanted: list[list[str]]) -> str:
    if all(status == "not_run" for batch in got for status in batch):
        return say("no call has a result of its own: nothing reached `results`. An executor "
                   "fills the dict it is given, results[call.id] = ..., as each call finishes; "
                   "what it returns is ignored",
                   "没有一个调用有自己的结果：`results` 里什么也没有。"
                   "执行器要填它拿到的那个字典，每个调用跑完就写 results[call.id] = ...；"
                   "它的返回值会被忽略")
    pairs = [(g, w) for mine, theirs in zip(got, wanted, strict=True)
             for g, w in zip(mine, theirs, strict=True) if g != w]
    mine, theirs = pairs[0]  # the first call whose status is wrong
    if mine in ("not_run", "interrupted") and theirs == "ok":
        return say("a call that worked should not stop the batch, nor should a failure in an "
                   "earlier batch: stop only after a call of this batch that was refused (its "
                   "job.refusal is set) or failed (its result starts with '<tool> failed:')",
                   "成功的调用不该让这批停下，前一批的失败也不该：只在这一批里有调用被拒"
                   "（job.refusal 有值）或失败（结果以 '<tool> failed:' 开头）之后才停")
    if mine in ("not_run", "interrupted"):
        return say("run the failed call itself (its result tells the model why), then stop",
                   "失败的那个调用本身要运行（它的结果告诉模型原因），然后再停")
    return say("stop after the first call that was refused or failed: the calls after it are "
               "left out of `results`, and the loop answers each with \"[not run: the batch "
               "stopped before this call]\"",
               "第一个被拒或失败的调用之后就停：后面的调用不写进 `results`，"
               "由循环回应它们：\"[not run: the batch stopped before this call]\"")
