"""Checks for the exercises of chapter 2, the tools.

    ch02.tool          a tool of one's own, CountLines: a name, a description, a JSON Schema
                       and `run`, graded through a real Agent
    ch02.unique_place  the one place where an edit's old text occurs, or a refusal that says
                       how many places there are and on which lines
    ch02.window        a window of a file's lines, numbered as read_file shows them, and the
                       line that says where it ends

`ch02.tool` builds a real `Agent` around the learner's tool in a temporary folder and has a
scripted model call it: with good arguments, with bad ones, on a directory, on a file that
is not there. The verdict reads how the engine answered each call (the status of its
`ToolCallFinished` event, the result in the history): the schema decides what is the model's
mistake, `run` what the file says. For the two failures it also calls `run` directly, to see
what was raised (a ToolError, or an exception that escaped), whatever its message says. Then
one instance of the tool serves two agents in two folders, as a tool does in the engine. The
process's working directory is set back after the check, and a tool that moved it fails (it
is every agent's, and a notebook's kernel's). The other two feed small, hand-made cases to the
learner's function and compare with the engine's own code (`exact` of tools/edit.py,
`ReadFile.run` of tools/read.py), so the checker and the engine cannot disagree.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path

from corecoder.agent import Agent
from corecoder.events import ToolCallFinished
from corecoder.messages import check_history
from corecoder.scripted import ScriptedLLM
from corecoder.tool import Tool, ToolError
from corecoder.tools.edit import exact, lines_of
from corecoder.tools.read import ReadFile
from corecoder.workspace import Workspace

from ..checks import EXPECTED, GOT, Hint, a_class, attempt, checker, expect, hint, outcome
from ..words import say


def _raised(e: BaseException) -> str:
    return say("your code raised", "你的代码抛出了") + f" {type(e).__name__}: {e}"


def _returned(value) -> str:
    return say("your code returned", "你的代码返回了") + f" {value!r:.300}"


# --- ch02.tool ---------------------------------------------------------------------------

FOLDER = {"a.py": "import sys\n\nprint(sys.argv)\n",
          "b.txt": "first\nsecond",  # no final newline: its last line still counts
          "empty.txt": "",
          "one.txt": "hello\n",
          "form.txt": "page one\fstill page one\n",  # 1 line: a form feed ends no line
          "src/app.py": "print('app')\n"}  # so src is a directory


def _folder() -> str:
    return say("a folder holding a.py (3 lines), b.txt (2 lines, the second without a final "
               "newline), empty.txt (an empty file), one.txt (1 line), form.txt (1 line with a "
               "form feed, \\f, inside it) and a directory src",
               "一个文件夹，里面有 a.py（3 行）、b.txt（2 行，第二行末尾没有换行符）、"
               "empty.txt（空文件）、one.txt（1 行）、form.txt（1 行，行中有一个换页符 \\f）"
               "和一个目录 src")


def _shown(args: dict) -> str:
    return f"count_lines({json.dumps(args, ensure_ascii=False)})"


# (the arguments the model sends, the status the call must end with, the exact result if ok)
TOOL_CASES = [
    ({"path": "a.py"}, "ok", "3 lines"),
    ({"path": "b.txt"}, "ok", "2 lines"),
    ({"path": "empty.txt"}, "ok", "0 lines"),
    ({"path": "one.txt"}, "ok", "1 line"),
    ({"path": "form.txt"}, "ok", "1 line"),
    ({"path": 3}, "bad_arguments", None),
    ({}, "bad_arguments", None),
    ({"path": "a.py", "verbose": True}, "bad_arguments", None),
    ({"path": "src"}, "failed", None),
    ({"path": "missing.py"}, "failed", None),
]

COUNT = re.compile(r"(\d+) lines?")  # fullmatch: "3 lines\n" is no count
NOT_FOUND = re.compile(r"no such file|not found|not exist|missing|FileNotFound", re.I)


def _wanted(status: str, result: str | None) -> str:
    if status == "ok":
        return f"ok: {result!r}"
    if status == "bad_arguments":
        return "bad_arguments: " + say(
            "'bad arguments for count_lines: ...' (the engine answers it; the tool never runs)",
            "'bad arguments for count_lines: ...'（由引擎回应，工具根本不运行）")
    return "failed: " + say("'count_lines failed: <the message of the ToolError you raise>'",
                            "'count_lines failed: <你抛出的 ToolError 的消息>'")


def _schema_says() -> str:
    return say("the schema is what lets the engine tell the model's mistake from a failure: "
               "a call that does not fit it is answered \"bad arguments for count_lines\" "
               "and never reaches run; a call that does reaches run, and whatever run raises "
               "is told as a failure of the tool. ",
               "JSON Schema 让引擎能把模型写错的参数和工具执行失败区分开："
               "不符合 JSON Schema 的调用，引擎直接回应 \"bad arguments for count_lines\"，"
               "根本到不了 run；符合的调用才会到 run，而 run 抛出的任何异常都算工具的失败。")


def _bad_arguments_hint(args: dict, got: str) -> str:
    if got == "ok":
        passed = say("This call reached run and was answered as if it were fine. ",
                     "这个调用进了 run，引擎把它当成没问题的调用，照常回应了。")
    else:
        passed = say("This call reached run, and the model was told the tool failed, as if "
                     "the file were at fault. ",
                     "这个调用到了 run，模型得知的是工具失败了，好像问题出在文件上。")
    if args == {}:
        fix = say("Say \"type\": \"object\" and \"required\": [\"path\"]: a call without path "
                  "is then answered \"missing required argument 'path'\"",
                  "写上 \"type\": \"object\" 和 \"required\": [\"path\"]：这样缺了 path 的调用"
                  "会得到 \"missing required argument 'path'\"")
    elif "verbose" in args:
        fix = say("Say \"additionalProperties\": false: an argument the tool does not take is "
                  "then answered \"unexpected argument 'verbose'\", instead of reaching run "
                  "(a TypeError) or being silently ignored",
                  "写上 \"additionalProperties\": false：这样工具不接受的参数会得到 "
                  "\"unexpected argument 'verbose'\"，而不是传到 run 里（引发 TypeError），"
                  "或者被悄悄忽略")
    else:
        fix = say("Give path \"type\": \"string\" in \"properties\": a number is then answered "
                  "\"path should be string\"",
                  "在 \"properties\" 里给 path 写上 \"type\": \"string\"：这样传数字会得到 "
                  "\"path should be string\"")
    return _schema_says() + passed + fix


def _count_hint(path: str, wanted: str, got_status: str, got: str) -> str:
    if got_status == "bad_arguments":
        return say("the schema refused a call that is fine: it takes one argument, path, "
                   "a string",
                   "JSON Schema 拒绝了一个没问题的调用：这个工具接受一个参数 path，类型是字符串")
    if got_status != "ok" and NOT_FOUND.search(got):
        return say("these arguments are fine and the file is there, in the agent's workspace "
                   "(ws.cwd), not in the folder the process runs in: open ws.resolve(path)",
                   "这些参数没问题，文件也确实存在，只不过在智能体的工作区里（ws.cwd），"
                   "而不在进程运行的文件夹里：打开 ws.resolve(path)")
    if got_status != "ok":
        return say(f"these arguments are fine and {path} is there: run should count its lines "
                   "and return the count, not fail (the result says why it did)",
                   f"这些参数没问题，{path} 也在：run 应该数出它的行数并返回，而不是失败"
                   "（结果里说了失败的原因）")
    if got.strip().isdigit():
        return say("run returned a bare number, and the engine made it the text "
                   f"{got!r} (str(...)): the model reads a result as text, so return "
                   f"{wanted!r}",
                   f"run 返回的是一个数，引擎把它变成了文本 {got!r}（str(...)）："
                   f"模型把结果当文本读，所以要返回 {wanted!r}")
    if got != got.strip():
        return say(f"return the count alone, exactly {wanted!r}: no line break or space before "
                   "or after it (the engine sends the result as it is)",
                   f"只返回行数本身，也就是 {wanted!r}：前后都不要有换行符或空格"
                   "（引擎把结果原样发给模型）")
    counted = COUNT.fullmatch(got)
    n = int(COUNT.fullmatch(wanted)[1])
    if counted and int(counted[1]) == n:
        return say("one line is \"1 line\", any other number \"N lines\"",
                   "一行写 \"1 line\"，其他行数写 \"N lines\"")
    if path == "form.txt":
        return say("a form feed (\\f) ends no line: editors, grep and tracebacks number lines by "
                   "\\n alone. str.splitlines also splits on \\f (and \\v, \\x1c-\\x1e, \\x85, "
                   "\\u2028, \\u2029); split_lines(text) of tools/read.py splits on \\n only",
                   "换页符（\\f）不会结束一行：编辑器、grep 和 traceback 都只按 \\n 给行编号。"
                   "str.splitlines 遇到 \\f 也会断行（还有 \\v、\\x1c-\\x1e、\\x85、\\u2028、"
                   "\\u2029）；tools/read.py 的 split_lines(text) 只按 \\n 断行")
    if path == "b.txt":
        return say("a last line without a final newline is still a line, as editors number "
                   "them (split_lines(text) of tools/read.py counts it): text.count(\"\\n\") "
                   "misses it",
                   "最后一行末尾没有换行符也还是一行，编辑器就是这样编号的"
                   "（tools/read.py 的 split_lines(text) 会算上它）：text.count(\"\\n\") 会漏掉它")
    if path == "empty.txt":
        return say("an empty file has no lines: split_lines(\"\") is []",
                   "空文件没有行：split_lines(\"\") 是 []")
    return say(f"return exactly {wanted!r}: count the lines as editors number them, with "
               "split_lines(text) of tools/read.py",
               f"原样返回 {wanted!r}：像编辑器那样数行，用 tools/read.py 的 split_lines(text)")


def _failed_hint(path: str, why: str) -> str:
    """What to fix for a call on src or missing.py, by `why`: "returned" (no failure),
    "escaped" (not a ToolError), "empty", "not_directory", "a_directory" or "unnamed"."""
    what = say("src is a directory" if path == "src" else "missing.py does not exist",
               "src 是一个目录" if path == "src" else "missing.py 不存在")
    example = ("\"src is a directory; count_lines counts the lines of one file\""
               if path == "src" else "\"no such file: missing.py\"")
    if why == "returned":
        return say(f"{what}: that is not a count, it is a failure the model must hear of. Raise "
                   f"ToolError with a message it can act on ({example})",
                   f"{what}：这不是一个行数，而是模型必须知道的失败。抛出 ToolError，"
                   f"写一条模型能照着做的消息（{example}）")
    if why == "escaped":
        return say(f"{what}, and the model is told so by an exception that escaped run, which "
                   "reads like a bug in the tool. Check for it and raise ToolError with a message "
                   f"the model can act on ({example}): the engine sends it as it is",
                   f"{what}，而模型得知这一点，靠的是 run 没有处理、直接抛出来的异常，"
                   "看上去像工具的 bug。"
                   f"先检查这种情况，再抛出 ToolError，写一条模型能照着做的消息（{example}）："
                   "引擎会把它原样发给模型")
    if why == "empty":
        return say(f"{what}, and your ToolError says nothing: give it a message the model can "
                   f"act on ({example})",
                   f"{what}，可你的 ToolError 什么也没说：给它一条模型能照着做的消息"
                   f"（{example}）")
    if why == "not_directory":
        return say("src is there, and it is a directory: say so (\"directory\"). A model told "
                   "it is missing goes looking for something that is already there; told it is "
                   f"a directory, it picks a file inside ({example})",
                   "src 是存在的，只不过是一个目录：要在消息里说明这一点（\"directory\"）。"
                   "模型如果得知它不存在，就会去找一个本来就在的东西；得知它是目录，"
                   f"才会在里面挑一个文件（{example}）")
    if why == "a_directory":
        return say(f"{what}, and your message says it is a directory: tell the two apart, since "
                   "a path that is not a file may be a directory (is_dir()) or not be there at "
                   f"all (exists()) ({example})",
                   f"{what}，可你的消息说它是一个目录：要把两种情况分开，不是文件的路径，"
                   f"可能是目录（is_dir()），也可能根本不存在（exists()）（{example}）")
    return say(f"{what}, and your message does not name it: say which path failed ({path}), "
               "so the model knows which of its calls to fix, even after several at once "
               f"({example})",
               f"{what}，可你的消息里没有提到它：说出是哪个路径出了问题（{path}），"
               f"这样即使模型一次发了好几个调用，也知道该改哪一个（{example}）")


def _run_directly(tool: Tool, folder: Path, args: dict) -> tuple[str, object]:
    """("returned", value) or ("raised", the exception) of `run` called as the engine calls it:
    what was raised decides whether it was a ToolError, not how its message reads."""
    try:
        return "returned", tool.run(Workspace(folder), **args)
    except (Exception, KeyboardInterrupt, SystemExit) as e:  # whatever it raised, a verdict
        return "raised", e


def _agent(tool: Tool, folder: Path, script: list) -> tuple[Agent, dict[str, str]]:
    agent = Agent(ScriptedLLM(script), [tool], cwd=folder)
    statuses: dict[str, str] = {}

    def note(event) -> None:
        if isinstance(event, ToolCallFinished):
            statuses[event.call.id] = event.status

    agent.subscribe(note)
    return agent, statuses


def _answers(agent: Agent, statuses: dict[str, str]) -> list[tuple[str, str]]:
    """Each call's (status, result), in call order."""
    check_history(agent.messages)  # the loop keeps it legal whatever the tool did
    folder = str(agent.workspace.cwd)  # a temporary folder: shown as ".", the same every run
    results = {m["tool_call_id"]: m["content"].replace(folder, ".")
               for m in agent.messages if m["role"] == "tool"}
    ids = [c["id"] for m in agent.messages for c in m.get("tool_calls", [])]
    return [(statuses.get(i, "?"), results.get(i, "")) for i in ids]


def _chat(agent: Agent, given: str) -> None:
    try:
        agent.chat("How long are these files?")
    except (Exception, KeyboardInterrupt, SystemExit) as e:
        why = say("whatever goes wrong in a tool, raise an exception (ToolError for what the "
                  "model can fix): the engine turns it into a result. KeyboardInterrupt and "
                  "SystemExit are not errors but stop the whole agent",
                  "工具里出了什么问题，都抛出异常（模型能改正的，抛 ToolError）："
                  "引擎会把它变成一个结果。KeyboardInterrupt 和 SystemExit 不是错误，"
                  "它们会让整个智能体停下")
        ended = say("the run ended with ", "运行以异常结束：")
        raise Hint(f"{given}\n{ended}{type(e).__name__}: {e}" + hint(why)) from None


def _ask(tool: Tool, folder: Path, calls: list[dict], given: str) -> list[tuple[str, str]]:
    """Each call a reply of the scripted model, then an answer, through a real Agent."""
    script = [{"tool_calls": [{"name": "count_lines", "arguments": args}]} for args in calls]
    agent, statuses = _agent(tool, folder, [*script, "Done."])
    _chat(agent, given)
    return _answers(agent, statuses)


def _write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        Path(folder, name).parent.mkdir(parents=True, exist_ok=True)
        Path(folder, name).write_bytes(text.encode("utf-8"))


def _a_tool(cls: type) -> bool:
    """A subclass of Tool: the package's, or the one a notebook defines (the chapter builds the
    base class in a cell, the same code as corecoder/tool.py)."""
    return issubclass(cls, Tool) or any(base.__name__ == "Tool" for base in cls.__mro__)


def _tool_class(CountLines) -> None:
    a_class(CountLines, 'check("ch02.tool", CountLines)')
    if not _a_tool(CountLines):
        raise Hint(say("CountLines must be a Tool: class CountLines(Tool). The base class "
                       "gives it schema(), which tells the model about it",
                       "CountLines 必须是一个 Tool：class CountLines(Tool)。基类提供 "
                       "schema()，模型就是从它得知这个工具的"))


def _make(CountLines) -> Tool:
    tool = attempt(CountLines, given="CountLines()")
    if not _a_tool(type(tool)):  # a __new__ that returns something else
        raise Hint("CountLines()\n" + say("expected a Tool, got", "期望一个 Tool，实际得到")
                   + f" {type(tool).__name__}")
    return tool


def _not_implemented(tool: Tool, folder: Path) -> None:
    """The stub's run raises NotImplementedError, which the engine would tell as a failure:
    ask run directly first, so that `check` says the exercise is not written yet."""
    try:
        tool.run(Workspace(folder), path="a.py")
    except NotImplementedError:
        raise
    except (Exception, KeyboardInterrupt, SystemExit):
        pass  # the run through the agent says what went wrong


def _describe_tool(tool: Tool) -> None:
    given = "CountLines().schema()"
    schema = attempt(tool.schema, given=given)
    function = schema.get("function") if isinstance(schema, dict) else None
    name = function.get("name") if isinstance(function, dict) else None
    if name != "count_lines":
        why = say("the model calls a tool by the name it was told, and schema() tells it the "
                  "tool's `name`: set name = \"count_lines\"",
                  "模型按告诉它的名字调用工具，而 schema() 告诉它的就是工具的 `name`："
                  "写 name = \"count_lines\"")
        raise Hint(f"{given}[\"function\"][\"name\"]\n{EXPECTED}'count_lines'\n{GOT}{name!r}"
                   + hint(why))
    description = attempt(lambda: tool.description, given="CountLines().description")
    parameters = attempt(lambda: tool.parameters, given="CountLines().parameters")
    if not isinstance(description, str) or not description.strip():
        why = say("the model reads the description to know what the tool does and when to use "
                  "it: say it in a sentence or two",
                  "模型读 description 来了解工具做什么、什么时候用：用一两句话写清楚")
        raise Hint(f"CountLines().description\n{EXPECTED}"
                   + say("a sentence or two", "一两句话") + f"\n{GOT}{description!r:.300}"
                   + hint(why))
    properties = parameters.get("properties", {}) if isinstance(parameters, dict) else None
    if not isinstance(properties, dict) or not all(isinstance(p, dict)
                                                   for p in properties.values()):
        why = say("parameters is a JSON Schema, a dict, and so is each of its properties: "
                  "{\"type\": \"object\", \"properties\": {\"path\": {\"type\": \"string\"}}, "
                  "...}",
                  "parameters 是一个 JSON Schema，即一个字典，它的每个属性也各是一个 JSON Schema："
                  "{\"type\": \"object\", \"properties\": {\"path\": {\"type\": \"string\"}}, "
                  "...}")
        raise Hint(f"CountLines().parameters\n{EXPECTED}"
                   + say("a JSON Schema (a dict)", "一个 JSON Schema（字典）")
                   + f"\n{GOT}{parameters!r:.300}" + hint(why))
    if parameters.get("type") != "object":
        why = say("a tool's arguments come as one JSON object, and parameters must say so at its "
                  "top: \"type\": \"object\". The engine would cope without it, but the OpenAI "
                  "API refuses the whole request (\"schema must be a JSON Schema of "
                  "'type: \"object\"'\")",
                  "工具的参数总是一个 JSON 对象，parameters 的顶层必须写明这一点："
                  "\"type\": \"object\"。没有它，引擎也能应付，但 OpenAI API 会拒绝整个请求"
                  "（\"schema must be a JSON Schema of 'type: \"object\"'\"）")
        raise Hint(f"CountLines().parameters[\"type\"]\n{EXPECTED}'object'\n"
                   f"{GOT}{parameters.get('type')!r:.300}" + hint(why))
    required = parameters.get("required", [])
    if not isinstance(required, (list, tuple)) or not all(isinstance(r, str) for r in required):
        why = say("\"required\" is a list of the names of the arguments a call must give: "
                  "[\"path\"]. A string is read letter by letter: \"required\": \"path\" makes "
                  "the engine require 'p', 'a', 't' and 'h'",
                  "\"required\" 是一个列表，列出调用必须给出的参数名：[\"path\"]。"
                  "字符串会被拆成一个个字母：写成 \"required\": \"path\"，"
                  "引擎就会要求 'p'、'a'、't'、'h' 四个参数")
        raise Hint(f"CountLines().parameters[\"required\"]\n{EXPECTED}"
                   + say("a list of names: ['path']", "一个参数名的列表：['path']")
                   + f"\n{GOT}{required!r:.300}" + hint(why))


def _judge(args: dict, wanted: str, result: str | None, got: tuple[str, str], given: str,
           direct: Callable[[dict], tuple[str, object]]) -> None:
    """One call's answer against the case; `direct(args)` calls run itself (the failures)."""
    status, text = got
    path = args.get("path")
    shown = f"{given}\n{EXPECTED}{_wanted(wanted, result)}\n{GOT}{status}: {text!r:.300}"
    if wanted == "ok" and (status, text) != ("ok", result):
        raise Hint(shown + hint(_count_hint(path, result, status, text)))
    if wanted == "bad_arguments" and status != "bad_arguments":
        raise Hint(shown + hint(_bad_arguments_hint(args, status)))
    if wanted != "failed":
        return
    if status != "failed":
        raise Hint(shown + hint(_failed_hint(path, "returned")))
    kind, value = direct(args)
    if kind == "raised" and not isinstance(value, ToolError):
        raise Hint(shown + hint(_failed_hint(path, "escaped")))
    message = text.removeprefix("count_lines failed:").strip()  # its paths shown relative
    if not message:
        raise Hint(shown + hint(_failed_hint(path, "empty")))
    said = message.replace(path, "").lower()  # "missing.py" is no "missing"
    if path == "src" and not re.search("director|folder", said):
        raise Hint(shown + hint(_failed_hint(path, "not_directory")))
    if path != "src" and re.search("director|folder", said) and not NOT_FOUND.search(said):
        raise Hint(shown + hint(_failed_hint(path, "a_directory")))  # ENOENT says "directory"
    if path not in message:
        raise Hint(shown + hint(_failed_hint(path, "unnamed")))


def _cwd() -> str | None:
    try:
        return os.getcwd()
    except OSError:  # a working directory that was deleted
        return None


@checker("ch02.tool")
def check_tool(CountLines) -> None:
    _tool_class(CountLines)
    with tempfile.TemporaryDirectory(prefix="corecoder-ch02-") as tmp:
        before = os.getcwd()
        try:
            _grade_tool(CountLines, Path(tmp))
        except Hint:
            if _cwd() == before:
                raise  # else a moved working directory is what to fix first
        finally:  # set back before the folder is deleted, whatever the tool did
            moved = _cwd() != before
            if moved:
                os.chdir(before)
        if moved:
            why = say("the tool changed the process's working directory (os.chdir), which every "
                      "agent in the process shares, and in a notebook the kernel's too; resolve "
                      "paths with ws.resolve(path) instead",
                      "这个工具改变了进程的工作目录（os.chdir），而进程里的所有智能体共用这个目录，"
                      "在笔记本里它也是内核的工作目录；改用 ws.resolve(path) 解析路径")
            raise Hint(f"{_about()}\n{EXPECTED}" + say("os.getcwd() unchanged", "os.getcwd() 不变")
                       + f"\n{GOT}" + say("os.getcwd() changed (the check set it back)",
                                          "os.getcwd() 变了（检查已经把它改了回来）") + hint(why))


def _about() -> str:
    return say(f"an Agent with the tools [CountLines()] in {_folder()}",
               f"一个带工具 [CountLines()] 的 Agent，工作区是{_folder()}")


def _grade_tool(CountLines, tmp: Path) -> None:
    one, two = tmp / "one", tmp / "two"
    _write(one, FOLDER)
    _write(two, {"a.py": "".join(f"print({n})\n" for n in range(5))})
    _not_implemented(_make(CountLines), one)
    tool = _make(CountLines)
    _describe_tool(tool)

    calls = [args for args, _, _ in TOOL_CASES]
    about, calling = _about(), say("the model calls", "模型调用")
    everything = f"{about}\n{calling} " + say(", ", "、").join(_shown(args) for args in calls)
    answers = _ask(tool, one, calls, everything)
    probe = _make(CountLines)  # a fresh instance for the direct calls

    def direct(args: dict) -> tuple[str, object]:
        return _run_directly(probe, one, args)

    for (args, wanted, result), got in zip(TOOL_CASES, answers, strict=True):
        _judge(args, wanted, result, got, f"{about}\n{calling} {_shown(args)}", direct)

    _two_workspaces(_make(CountLines), one, two)


def _two_workspaces(tool: Tool, one: Path, two: Path) -> None:
    """One instance serves two agents in two folders, as one tool instance does in the
    engine; then a file changes, and the first agent asks again."""
    script = [{"tool_calls": [{"name": "count_lines", "arguments": {"path": "a.py"}}]}, "Done."]
    first, first_statuses = _agent(tool, one, script * 2)
    second, second_statuses = _agent(tool, two, script)
    about = say("one instance of CountLines serves two agents: the first works in a folder "
                "whose a.py has 3 lines, the second in another folder whose a.py has 5 lines. "
                "Each asks for count_lines({\"path\": \"a.py\"})",
                "同一个 CountLines 实例服务两个智能体：第一个的工作区里 a.py 有 3 行，"
                "第二个在另一个文件夹里，那里的 a.py 有 5 行。两个都调用 "
                "count_lines({\"path\": \"a.py\"})")
    again = say("then a line is added to the first folder's a.py, and the first agent asks "
                "again", "然后第一个文件夹的 a.py 多了一行，第一个智能体再问一次")
    _chat(first, about)
    _chat(second, about)
    with Path(one, "a.py").open("a", encoding="utf-8") as f:
        f.write("print('one more')\n")
    _chat(first, f"{about}; {again}")
    (_, asked), (_, asked_again) = _answers(first, first_statuses)
    [(_, other)] = _answers(second, second_statuses)
    why = say("one tool instance serves every agent (the engine builds its tools once): keep "
              "nothing in self, no count, no path, no workspace, and find the file anew at each "
              "call through the ws that call is given, ws.resolve(path)",
              "一个工具实例服务所有智能体（引擎只创建一次工具）：self 里什么都不要存，不存行数、"
              "不存路径、不存工作区；每次调用都通过这次调用拿到的 ws 重新找文件，"
              "即 ws.resolve(path)")
    colon = say(":", "：")
    expect(asked, "3 lines", f"{about}\n{say('the first agent', '第一个智能体')}{colon}", why)
    expect(other, "5 lines", f"{about}\n{say('the second agent', '第二个智能体')}{colon}", why)
    expect(asked_again, "4 lines", f"{about}; {again}\n"
           f"{say('the first agent, asking again', '第一个智能体再问一次')}{colon}", why)


# --- ch02.unique_place -----------------------------------------------------------------------

PRICES = ("def total(items):\n"
          "    result = 0\n"
          "    for item in items:\n"
          "        result += item.price\n"
          "    return result\n"
          "\n"
          "def count(items):\n"
          "    result = 0\n"
          "    for item in items:\n"
          "        result += 1\n"
          "    return result\n")
SOURCE = "import os\nprint(os.name)\n"
BLOCKS = ("try:\n"
          "    run()\n"
          "except OSError:\n"
          "    pass\n"
          "try:\n"
          "    walk()\n"
          "except OSError:\n"
          "    pass\n")


def place_cases() -> list[tuple[str, str, str, str]]:
    """(what the case is, text, old, why: the hint if the answer gets it wrong)"""
    crlf = say("a place that starts or ends between the \\r and the \\n of a CRLF is no place: "
               "an edit there would leave a stray CR or LF. whole_line_breaks(text, places) "
               "drops such places",
               "在 CRLF 的 \\r 和 \\n 之间开始或结束的位置无效：在那里编辑会留下一个落单的 "
               "CR 或 LF。whole_line_breaks(text, places) 会去掉这样的位置")
    many = say("one place must be one: when old occurs more than once, refuse, and say how "
               "many times and on which lines (1-based), so the model can add context",
               "位置必须唯一：old 出现不止一次时就拒绝，并说出出现了几次、在哪几行（从 1 开始数），"
               "模型才能补上周围的代码")
    span = say("return (start, end) such that text[start:end] == old",
               "返回 (start, end)，使 text[start:end] == old")
    return [
        (say("old occurs once", "old 只出现一次"), PRICES, "result += item.price", span),
        (say("old occurs on two lines", "old 出现在两行里"), PRICES, "for item in items:", many),
        (say("old occurs on four lines", "old 出现在四行里"), PRICES, "    result", many),
        (say("old spans two lines and occurs twice", "old 跨两行，出现了两次"), BLOCKS,
         "except OSError:\n    pass", many),
        (say("overlapping occurrences count: \"aa\" is in \"aaa\" twice",
             "重叠的匹配也算：\"aa\" 在 \"aaa\" 里出现两次"), "aaa", "aa",
         say("overlapping occurrences count: \"aa\" is in \"aaa\" at 0 and at 1. str.count and "
             "str.replace skip overlaps; search again from one past each start",
             "重叠的匹配也算：\"aa\" 在 \"aaa\" 的 0 和 1 处都出现了。str.count 和 str.replace "
             "不算重叠的；每找到一处，从它的起点加一的地方接着找")),
        (say("old occurs nowhere", "old 根本没有出现"), PRICES, "result -= 1",
         say("no place is no place to edit: raise ToolError saying so",
             "没有位置就没法编辑：抛出 ToolError 说明这一点")),
        (say("a CRLF text: old matches only from the middle of a CRLF",
             "一个 CRLF 文本：old 只能从一个 CRLF 的中间开始匹配"), "a\r\nb\r\n", "\nb", crlf),
        (say("a text with mixed line breaks: one of old's two matches cuts a CRLF",
             "一个换行符混用的文本：old 的两处匹配中，有一处切开了 CRLF"), "x\r\ny\nx\ny", "\ny",
         crlf),
        (say("a CRLF text: old's only match ends between the \\r and the \\n",
             "一个 CRLF 文本：old 唯一的一处匹配在 \\r 和 \\n 之间结束"), "x\r\ny\n", "x\r", crlf),
        (say("old is the very start of the text", "old 正好是文本的开头"), SOURCE, "import os",
         span),
        (say("old is the very end of the text", "old 正好是文本的结尾"), SOURCE, "os.name)\n",
         span),
    ]


def _a_place(value) -> bool:
    return isinstance(value, (tuple, list)) and len(value) == 2 \
        and all(isinstance(i, int) for i in value)


def _number(n: int, message: str) -> bool:
    return re.search(rf"(?<!\d){n}(?!\d)", message) is not None


def _refuse(text: str, old: str, places, given: str, kind: str, value, why: str) -> None:
    """The answer must raise ToolError; for several places, naming how many and the lines."""
    if len(places) > 1:
        lines = lines_of(text, places)
        wanted = say(f"ToolError naming how many places ({len(places)}) and the lines they "
                     f"start on ({lines})",
                     f"ToolError，说出有几处（{len(places)}）以及各处起始的行（{lines}）")
    elif old in text:
        wanted = say("ToolError (old occurs only where it would cut a CRLF: no place)",
                     "ToolError（old 只出现在会切开 CRLF 的地方：没有位置）")
    else:
        wanted = say("ToolError (old occurs nowhere)", "ToolError（old 根本没有出现）")
    if kind == "returned" and not _a_place(value):
        why = say("refuse by raising ToolError, not by returning a value: the engine sends its "
                  "message to the model (\"edit_file failed: ...\"); a returned None or -1 would "
                  "be taken for a place",
                  "拒绝要抛出 ToolError，而不是返回一个值：引擎会把它的消息发给模型"
                  "（\"edit_file failed: ...\"）；返回的 None 或 -1 会被当成位置")
    if kind == "returned":
        raise Hint(f"{given}\n{EXPECTED}{wanted}\n{GOT}{_returned(value)}" + hint(why))
    if not isinstance(value, ToolError):
        why = say(f"raise ToolError, not {type(value).__name__}: the engine sends a ToolError's "
                  "message to the model as it is, while any other exception reads as a bug in "
                  f"the tool (\"edit_file failed: {type(value).__name__}: ...\")",
                  f"要抛出 ToolError，而不是 {type(value).__name__}：引擎把 ToolError 的消息原样"
                  "发给模型，别的异常看上去都像工具的 bug"
                  f"（\"edit_file failed: {type(value).__name__}: ...\"）")
        raise Hint(f"{given}\n{EXPECTED}{wanted}\n{GOT}{_raised(value)}" + hint(why))
    if not str(value).strip():
        why = say("say why there is no one place (\"old_string was not found\"): the engine sends "
                  "the message to the model, and an empty one leaves it guessing what to fix",
                  "说明为什么没有唯一的位置（\"old_string was not found\"）：引擎会把消息发给模型，"
                  "空消息只会让它去猜该改什么")
        raise Hint(f"{given}\n{EXPECTED}{wanted}\n{GOT}{_raised(value)}" + hint(why))
    if len(places) > 1:
        message = str(value)
        starts = dict.fromkeys(text.count("\n", 0, start) + 1 for start, _, _ in places)
        numbers = [len(places), *starts]
        ends = [text.count("\n", 0, end) + 1 for _, end, _ in places]  # the line of old's end
        lasts = [text.count("\n", 0, end - 1) + 1 for _, end, _ in places]  # or of its last char
        if not all(_number(n, message) for n in numbers) and any(
                set(found) != set(starts) and all(_number(n, message) for n in found)
                for found in (ends, lasts)):
            why = say(f"those are the lines the places end on: old spans several lines here, and "
                      f"the model looks for each place where it starts, lines {lines} "
                      "(lines_of(text, places) counts the line breaks before each start)",
                      "这些是各处结束的行：这里的 old 跨了好几行，而模型要按各处起始的行"
                      f"（{lines}）去找（lines_of(text, places) 数的是各处起点之前的换行符）")
            raise Hint(f"{given}\n{EXPECTED}{wanted}\n{GOT}{_raised(value)}" + hint(why))
        if not all(_number(n, message) for n in numbers):
            why = say(f"the model needs both to fix its call: the count as a number "
                      f"({len(places)}) and each line a place starts on, counted from 1 as "
                      f"read_file numbers them (lines_of(text, places) gives \"{lines}\")",
                      f"模型要改正调用，两样都需要：出现的次数，写成数字（{len(places)}），以及各处"
                      "起始的行号，像 read_file 那样从 1 开始数"
                      f"（lines_of(text, places) 给出 \"{lines}\"）")
            raise Hint(f"{given}\n{EXPECTED}{wanted}\n{GOT}{_raised(value)}" + hint(why))


@checker("ch02.unique_place")
def check_unique_place(find_place) -> None:
    for about, text, old, why in place_cases():
        given = f"{about}{say(':', '：')}\nfind_place({text!r}, {old!r})"
        places = exact(text, old, "")
        kind, value = outcome(find_place, text, old)
        if len(places) != 1:
            _refuse(text, old, places, given, kind, value, why)
            continue
        start, end, _ = places[0]
        if kind == "raised":
            raise Hint(f"{given}\n{EXPECTED}{(start, end)!r}\n{GOT}{_raised(value)}" + hint(why))
        if not _a_place(value):
            why = say("return the place as a tuple of two ints, (start, end)",
                      "把位置作为两个整数的元组返回：(start, end)")
        expect(tuple(value) if _a_place(value) else value, (start, end), given, why)


# --- ch02.window -------------------------------------------------------------------------

STATS = ["def mean(xs):",
         "    return sum(xs) / len(xs)",
         "",
         "def median(xs):",
         "    xs = sorted(xs)",
         "    mid = len(xs) // 2",
         "    if len(xs) % 2:",
         "        return xs[mid]",
         "    return (xs[mid - 1] + xs[mid]) / 2",
         "",
         "def spread(xs):",
         "    return max(xs) - min(xs)"]
SHORT = ["import sys", "", "print(sys.argv)"]


def window_cases() -> list[tuple[str, list[str], int, int]]:
    return [
        (say("the whole file", "整个文件"), SHORT, 1, 2000),
        (say("the first window of a longer file", "一个较长文件的第一个窗口"), STATS, 1, 5),
        (say("a window in the middle", "中间的一个窗口"), STATS, 6, 4),
        (say("a window that stops one line before the end", "在文件结尾前一行停下的窗口"),
         STATS, 9, 3),
        (say("a window that ends exactly at the last line", "正好在最后一行结束的窗口"),
         STATS, 9, 4),
        (say("a limit larger than what is left", "limit 比剩下的行数还多"), STATS, 10, 50),
        (say("a file of one line", "只有一行的文件"), ["print('hi')"], 1, 10),
        (say("an offset past the end", "offset 超过了文件结尾"), SHORT, 9, 10),
        (say("an offset one past the last line", "offset 正好是最后一行的下一行"), SHORT, 4, 10),
    ]


def _read_file(folder: Path, lines: list[str], offset: int, limit: int) -> str | None:
    """What read_file shows of a file made of `lines` (None: it refuses)."""
    Path(folder, "f.txt").write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    try:
        return ReadFile().run(Workspace(folder), "f.txt", offset=offset, limit=limit)
    except ToolError:
        return None


def _block(text: str) -> str:
    return "\n".join(f"  {line!r}" for line in text.split("\n"))


def _numbered_alike(have: str, want: str) -> bool:
    """Whether `have` is read_file's numbered line `want` with its number written some other
    way: another width, another separator."""
    number, text = want.split("\t", 1)
    return re.fullmatch(rf" *{number.strip()}\W{{0,3}}?{re.escape(text)}", have, re.S) is not None


def _window_hint(wanted: str, got: str, offset: int, limit: int, n: int) -> str:
    """What to fix, for a window that differs from read_file's; `n` is the file's length."""
    want, have = wanted.split("\n"), got.split("\n")
    if got.rstrip() == wanted:
        return say("no line break after the last line: join the lines with \"\\n\" "
                   "(\"\\n\".join(...)), so that the text ends with the line that says where "
                   "the window ends",
                   "最后一行后面不要有换行符：用 \"\\n\" 把各行连起来（\"\\n\".join(...)），"
                   "文本就以说明窗口停在哪里的那一行结尾")
    differ = next((i for i, (h, w) in enumerate(zip(have, want[:-1], strict=False)) if h != w),
                  None)
    if differ is not None and _numbered_alike(have[differ], want[differ]):
        return say("the right line, numbered another way: each line is f\"{n:>6}\\t{line}\", "
                   "as read_file shows it, its number right-aligned in 6 columns, then a tab",
                   "行是对的，只是行号的写法不对：每行写成 f\"{n:>6}\\t{line}\"，和 read_file "
                   "显示的一样，行号右对齐占 6 列，后面跟一个制表符")
    if have == want[:-1]:
        return say("end with a line that says where the window ends, so the model knows whether "
                   "it has seen the whole file",
                   "最后要有一行说明窗口停在哪里，模型才知道它是不是已经看完了整个文件")
    if have[:-1] == want[:-1]:
        if want[-1].startswith("(end of file"):
            said = re.fullmatch(r"\(end of file, (\d+) lines?\)", have[-1])
            if said and int(said[1]) == n:
                return say("one line is \"1 line\", any other number \"N lines\"",
                           "一行写 \"1 line\"，其他行数写 \"N lines\"")
            return say("the window reaches the file's last line: say \"(end of file, N lines)\", "
                       f"N the number of lines in the whole file, len(lines), here {n}, not how "
                       "many the window shows (\"1 line\" for a file of one line)",
                       "窗口到了文件的最后一行：写 \"(end of file, N lines)\"，"
                       f"N 是整个文件的行数 len(lines)，这里是 {n}，而不是窗口显示了几行"
                       "（文件只有一行时写 \"1 line\"）")
        return say("the window stops before the file's end: say which lines were shown and the "
                   "offset to read on from, the line after the last one shown: "
                   "\"(lines {offset}-{last} of {N}; use offset={last + 1} to read on)\"",
                   "窗口在文件结尾之前就停了：说出显示了哪几行，以及接着读的 offset，"
                   "即最后显示的那一行的下一行："
                   "\"(lines {offset}-{last} of {N}; use offset={last + 1} to read on)\"")
    return say(f"offset is 1-based: the window starts at line {offset}, which is "
               f"lines[{offset - 1}], shows at most limit lines, and numbers each with its own "
               "line number: f\"{n:>6}\\t{line}\"",
               f"offset 从 1 开始数：窗口从第 {offset} 行开始，也就是 lines[{offset - 1}]，"
               "最多显示 limit 行，每行标上它自己的行号：f\"{n:>6}\\t{line}\"")


@checker("ch02.window")
def check_window(window) -> None:
    with tempfile.TemporaryDirectory(prefix="corecoder-ch02-") as tmp:
        for about, lines, offset, limit in window_cases():
            given = f"{about}{say(':', '：')}\nwindow({lines!r}, {offset}, {limit})"
            wanted = _read_file(Path(tmp), lines, offset, limit)
            kind, value = outcome(window, list(lines), offset, limit)
            if wanted is None:
                _window_refusal(given, kind, value, len(lines))
                continue
            if kind == "raised" and offset + limit - 1 > len(lines):
                why = say("the window stops at the file's last line: limit may be more than what "
                          "is left, so show the lines from offset to "
                          "min(offset + limit - 1, len(lines))",
                          "窗口在文件的最后一行停下：limit 可以比剩下的行数多，所以显示从 offset "
                          "到 min(offset + limit - 1, len(lines)) 的行")
                raise Hint(f"{given}\n{EXPECTED.alone}\n{_block(wanted)}\n{GOT}{_raised(value)}"
                           + hint(why))
            if kind == "raised":
                why = say("only an offset past the end is refused: this window has lines to show",
                          "只有 offset 超过文件结尾时才拒绝：这个窗口有行可以显示")
                raise Hint(f"{given}\n{EXPECTED.alone}\n{_block(wanted)}\n{GOT}{_raised(value)}"
                           + hint(why))
            if not isinstance(value, str):
                why = say("return one string, the lines joined with \"\\n\": it is the text of a "
                          "tool result", "返回一个字符串，把各行用 \"\\n\" 连起来："
                          "它就是一个工具结果的文本")
                raise Hint(f"{given}\n{EXPECTED.alone}\n{_block(wanted)}\n{GOT}"
                           f"{type(value).__name__} {value!r:.300}" + hint(why))
            if value != wanted:
                raise Hint(f"{given}\n{EXPECTED.alone}\n{_block(wanted)}\n{GOT.alone}\n"
                           f"{_block(value)}"
                           + hint(_window_hint(wanted, value, offset, limit, len(lines))))


def _window_refusal(given: str, kind: str, value, n: int) -> None:
    wanted = say(f"ToolError (the file has {n} lines)", f"ToolError（文件只有 {n} 行）")
    if kind == "raised" and isinstance(value, ToolError) and str(value).strip():
        return  # whatever it says: the model is told
    if kind == "raised" and isinstance(value, ToolError):
        why = say(f"say why: the offset is past the end, and the file has {n} lines, so that the "
                  "model can ask for a window that is there (an empty message leaves it guessing)",
                  f"说明原因：offset 超过了文件结尾，文件只有 {n} 行。这样模型才能改为请求一个"
                  "存在的窗口（空消息只会让它去猜）")
        raise Hint(f"{given}\n{EXPECTED}{wanted}\n{GOT}{_raised(value)}" + hint(why))
    why = say("an offset past the end is the model's mistake to fix: raise ToolError saying how "
              "many lines the file has (any other exception reads as a bug in the tool, and an "
              "empty window says nothing)",
              "offset 超过文件结尾，是模型要改正的错误：抛出 ToolError，说明文件有多少行"
              "（别的异常看上去像工具的 bug，空窗口则什么也没说）")
    got = _raised(value) if kind == "raised" else _returned(value)
    raise Hint(f"{given}\n{EXPECTED}{wanted}\n{GOT}{got}" + hint(why))
