"""Checks for the exercises of chapter 2, the tools.

    ch02.tool          a tool of one's own, CountLines: a name, a description, a JSON Schema
                       and `run`, put to work in real agents
    ch02.unique_place  the one place where an edit's old text occurs, or a refusal that says
                       how many places there are and on which lines
    ch02.window        a window of a file's lines, numbered as read_file shows them, and the
                       line that says where it ends

All three are declared exercises (kit.py). Their references are the chapter's solutions, kept
here under the learner's names: the engine has no function with their contracts (`exact` of
tools/edit.py returns every place, and refuses nothing; `ReadFile.run` reads a file, says an
empty one is empty, and cuts long lines and long windows).

A refusal is part of the spec: where the reference raises ToolError, the answer must too, with
a message that tells the model what it needs (any message past the end of a window; for
several places, how many and the lines they start on, as numbers). `run` raises such a
ToolError again as a `Told`, so that the kit, which compares what was raised by its type,
tells a refusal that says too little (a bare `raise ToolError`, "more than once") from one
that says enough, whatever its words.

`ch02.tool` is a class at a seam (the harness of seams.py): `run` instantiates it once and plugs it
into a real Agent in each of one or two real temporary folders (files without a final newline,
CRLF, form feeds, bytes that are not UTF-8, directories, and names that are not there), whose
scripted models call count_lines in turn; between calls a file may grow by a line. What is compared
is what the model read of each call (`Answered`): the result of a call that ran, a refusal by kind,
and of a failure whether it was a ToolError, whether its message names the path, and whether it
says "directory" just when the path is one. The process's working directory is watched, and set
back (it is every agent's, and a notebook kernel's).
"""

from __future__ import annotations

import gc
import json
import os  # noqa: F401  (a mistake's code moves the process with os.chdir)
import re
from dataclasses import dataclass, field
from pathlib import Path

from corecoder.events import ToolCallFinished
from corecoder.tool import Tool, ToolError
from corecoder.tools.edit import exact, lines_of, whole_line_breaks
from corecoder.tools.read import split_lines

from ..kit import Exercise, Mistake
from ..seams import MOVED, Seam
from ..words import say


class Told(ToolError):
    """A ToolError whose message tells the model what it needs. Shown by the name the learner
    wrote, ToolError: the kit names what was raised by its class."""


Told.__name__ = Told.__qualname__ = "ToolError"


def refusing(enough):
    """An exercise's `run`: the answer called, and a ToolError it raises raised again as a
    `Told` when its message says enough (`enough(message, *args)`), else as it was."""

    def run(answer, *args):
        collecting = gc.isenabled()
        # The kit stops a loop that never ends with a timer's signal; raised inside a callback of
        # the garbage collector (hypothesis keeps one), it is ignored, and a loop that appends
        # (text.find(old, start) again and again) then fills the memory. No collection, no
        # callback: the answers here make no cycles to collect.
        gc.disable()
        try:
            return answer(*args)
        except ToolError as refusal:
            if enough(str(refusal), *args):
                raise Told(str(refusal)) from None
            raise
        finally:
            if collecting:
                gc.enable()

    return run


# --- ch02.tool ---------------------------------------------------------------------------

class CountLines(Tool):
    """The tool `count_lines`: its name, description and schema (a required string `path`, nothing
    else), and `run(self, ws, path)`, which answers "3 lines" (or a ToolError)."""

    name = "count_lines"
    description = "Count the lines of a text file, as an editor numbers them."
    parameters = {
        "type": "object",
        "properties": {"path": {"type": "string",
                                "description": "The file, relative to the working directory."}},
        "required": ["path"],
        "additionalProperties": False,
    }

    def run(self, ws, path):
        target = ws.resolve(path)  # the agent's working directory, not the process's
        if target.is_dir():
            raise ToolError(f"{ws.show(target)} is a directory; count_lines counts the lines of "
                            "one file")
        if not target.is_file():
            raise ToolError(f"no such file: {ws.show(target)}")
        n = len(split_lines(target.read_text(encoding="utf-8", errors="replace")))
        return "1 line" if n == 1 else f"{n} lines"


@dataclass(frozen=True)
class Answered:
    """What the model read of one call (or a note on the tool): equal to another when the model
    learns the same from it (`learns`), whatever the words."""

    shown: str = field(compare=False)
    learns: tuple

    def __repr__(self) -> str:
        return self.shown


UNTYPED = Answered("parameters without \"type\": \"object\": the OpenAI API refuses the request",
                   ("untyped",))
UNDESCRIBED = Answered("no description: the model is not told what the tool does",
                       ("undescribed",))
NOT_FOUND = re.compile(r"no such file|not found|not exist|missing|FileNotFound", re.I)


def _put_to_work(CountLines, folders: list[dict], steps: list[tuple]) -> list:
    """One instance of the answer serves an agent in each folder (a real temporary one): each
    step, a call its scripted model makes, or a line added to a file. What the model read of
    each call, after what is wrong with the tool itself; and a move of os.getcwd()."""
    with Seam(*folders, ends=()) as seam:
        tool = seam.spy(CountLines(), "run")
        parameters = tool.parameters if isinstance(tool.parameters, dict) else {}
        seen = [note for note, fine in ((UNTYPED, parameters.get("type") == "object"),
                                        (UNDESCRIBED, isinstance(tool.description, str)
                                         and tool.description.strip())) if not fine]
        agents = []
        for k, root in enumerate(seam.roots):  # its model: each of its calls, then an answer
            script = [turn for j, what in steps if j == k and isinstance(what, dict)
                      for turn in ({"tool_calls": [{"name": "count_lines", "arguments": what}]},
                                   "Done.")]
            agents.append(seam.agent(script, [tool], cwd=root))
        for k, what in steps:
            if isinstance(what, dict):
                agents[k].chat("How many lines?")
            else:
                with Path(seam.roots[k], what).open("ab") as f:
                    f.write(b"one more\n")
    raised = [call.value for call in seam.calls if call.kind == "raised"]  # in call order
    return seen + [_answered(event, raised, seam.said) for event in seam.events
                   if isinstance(event, ToolCallFinished)] + seam.notes()


def _answered(event: ToolCallFinished, raised: list[BaseException], said) -> Answered:
    """What the model learned of one call: the result of a call that ran, a refusal by kind,
    and of a failure whether it was a ToolError (what `raised` holds next), whether its message
    names the path, and whether it says "directory" just when the path is one."""
    result = said(event.result)  # a temporary folder, shown as "."
    shown = f"{event.status}: {result!r}"
    if event.status != "failed":
        return Answered(shown, (event.status, result if event.status == "ok" else ""))
    error = raised.pop(0)
    if not isinstance(error, ToolError):
        return Answered(shown, ("failed", "escaped", type(error).__name__))
    path = str(json.loads(event.call.arguments).get("path"))  # as named: a.py, src/app.py
    message = result.removeprefix("count_lines failed: ")
    rest = message.replace(path, "").lower()  # "missing.py" is no "missing"
    says_directory = bool(re.search("director|folder", rest)) and not NOT_FOUND.search(rest)
    return Answered(shown, ("failed", bool(message.strip()), path in message, says_directory))


def _tool_inputs():
    """One or two folders holding files of the same names (so that one agent's answer could be
    taken for another's): lines of any script, tabs, trailing spaces, a form feed, bytes that
    are not UTF-8, ended by LF or CRLF, with or without a final line break. Calls mostly on
    those files, or on a directory, a name that is not there, bad arguments; and now and then a
    file grows by a line between two calls. (No lone CR: the solution's read_text reads one as
    a line break, universal newlines, where read_file and a bytes-decoding answer do not; the
    chapter promises nothing of it.)"""
    from hypothesis import strategies as st

    line = st.sampled_from([b"x = 1", b"", b"\t", b"x  ", b"page\fone", b"\xff",
                            "中文".encode(), "Жё".encode(), "かな".encode()])
    text = st.tuples(st.lists(line, max_size=4), st.sampled_from([b"\n", b"\r\n"]),
                     st.booleans()).map(lambda t: t[1].join(t[0]) + (t[1] if t[2] else b""))
    names = st.lists(st.sampled_from(["a.py", "说明.md", "src/app.py", "src/util.py"]),
                     unique=True, max_size=3)

    def run(held: list[str]):
        folders = st.lists(st.fixed_dictionaries(dict.fromkeys(held, text)), min_size=1,
                           max_size=2)
        path = st.sampled_from(held) if held else st.nothing()
        path = st.one_of(path, path, st.sampled_from(["src", "missing.py"])).map(
            lambda p: {"path": p})
        odd = st.sampled_from([{}, {"path": 3}, {"path": "a.py", "verbose": True}])
        ask = st.tuples(st.integers(0, 1), st.one_of(path, path, path, odd)).map(lambda s: [s])
        grow = st.tuples(st.integers(0, 1), st.sampled_from(held) if held else st.nothing()).map(
            lambda s: [s, (s[0], {"path": s[1]})])  # and the same agent asks for it again
        steps = st.lists(st.one_of(ask, ask, grow), min_size=1, max_size=4)
        return st.tuples(folders, steps).map(lambda fs: (fs[0], [
            (k % len(fs[0]), what) for step in fs[1] for k, what in step]))

    return names.flatmap(run)


def _tool_call(args: tuple[list[dict], list[tuple]]) -> str:
    folders, steps = args

    def text(data: bytes) -> str:
        try:
            return repr(data.decode("utf-8"))
        except UnicodeDecodeError:
            return repr(data)

    lines = [say("one CountLines() serves an agent in each folder:",
                 "同一个 CountLines() 实例服务每个文件夹里的智能体：")]
    for k, files in enumerate(folders, 1):
        held = ", ".join(f"{name} {text(data)}" for name, data in files.items())
        lines.append(say(f"  folder {k}: ", f"  文件夹 {k}：") + (held or say("empty", "空的")))
    for k, what in steps:
        called = f"count_lines({json.dumps(what, ensure_ascii=False)})"
        lines.append(say(f"  agent {k + 1} calls {called}", f"  智能体 {k + 1} 调用 {called}")
                     if isinstance(what, dict) else
                     say(f"  a line is added to {what} in folder {k + 1}",
                         f"  文件夹 {k + 1} 里的 {what} 多了一行"))
    return "\n".join(lines)


def _tool_examples() -> list[tuple[list[dict], list[tuple]]]:
    """The chapter's cases: one file each (and one in CRLF, one in Latin-1), the bad arguments,
    a directory, a missing file; then one instance serving two folders, and a file that
    grows."""
    short, five = b"import sys\n\nprint(sys.argv)\n", b"".join(b"print(%d)\n" % n for n in range(5))
    files = [{"a.py": short}, {"b.txt": b"first\nsecond"}, {"empty.txt": b""},
             {"one.txt": b"hello\n"}, {"form.txt": b"page one\fstill page one\n"},
             {"crlf.txt": b"one\r\ntwo\r\n"}, {"latin1.txt": "café\nthé".encode("latin-1")}]
    odd = [{"path": 3}, {}, {"path": "a.py", "verbose": True}]
    return [*(([f], [(0, {"path": next(iter(f))})]) for f in files),
            *(([files[0]], [(0, arguments)]) for arguments in odd),
            ([{"src/app.py": b"print('app')\n"}], [(0, {"path": "src"})]),
            ([files[0]], [(0, {"path": "missing.py"})]),
            ([{"a.py": short}, {"a.py": five}], [(0, {"path": "a.py"}), (1, {"path": "a.py"}),
                                                 (0, "a.py"), (0, {"path": "a.py"})])]


SCHEMA = ("the schema is what lets the engine tell the model's mistake from a failure: a call "
          "that does not fit it is answered \"bad arguments for count_lines\" and never reaches "
          "run. ",
          "JSON Schema 让引擎能把模型写错的参数和工具执行失败区分开：不符合 JSON Schema 的调用，"
          "引擎直接回应 \"bad arguments for count_lines\"，根本到不了 run。")
REQUIRED = (SCHEMA[0] + "Say \"required\": [\"path\"] (a list): a call without path is then "
            "answered \"missing required argument 'path'\"",
            SCHEMA[1] + "写上 \"required\": [\"path\"]（一个列表）：这样缺了 path 的调用，"
            "引擎会回应 \"missing required argument 'path'\"")
EXTRA = (SCHEMA[0] + "Say \"additionalProperties\": false: an argument the tool does not take is "
         "then answered \"unexpected argument 'verbose'\", instead of reaching run (a TypeError) "
         "or being silently ignored",
         SCHEMA[1] + "写上 \"additionalProperties\": false：这样带了工具不接受的参数，引擎会回应 "
         "\"unexpected argument 'verbose'\"，而不是传到 run 里（引发 TypeError），或者被悄悄忽略")
STRING = (SCHEMA[0] + "Give path \"type\": \"string\" in \"properties\": a number is then "
          "answered \"path should be string\"",
          SCHEMA[1] + "在 \"properties\" 里给 path 写上 \"type\": \"string\"：这样传数字时，"
          "引擎会回应 \"path should be string\"")
TELL = ("raise ToolError with a sentence the model can act on, naming the path, and telling a "
        "directory (\"src is a directory; count_lines counts the lines of one file\": it picks a "
        "file inside) from a file that is not there (\"no such file: missing.py\")",
        "抛出 ToolError，写一句模型看了就知道下一步怎么做的话，说出是哪个路径，并且把目录"
        "（\"src is a directory; count_lines counts the lines of one file\"：模型会在里面挑一个"
        "文件）和不存在的文件（\"no such file: missing.py\"）区分开")
MESSAGE = ("a directory or a missing file is a failure the model must hear of: " + TELL[0],
           "目录或不存在的文件，是模型必须知道的失败：" + TELL[1])
ESCAPED = ("an exception escaped run, and the model reads it as a bug in the tool. Check first "
           "for what can go wrong (target.is_dir(), target.is_file()), then " + TELL[0],
           "run 里漏出了一个异常，模型会把它当成工具的 bug。先检查可能出错的情况"
           "（target.is_dir()、target.is_file()），再" + TELL[1])
STATE = ("one tool instance serves every agent (the engine builds its tools once): keep nothing "
         "in self, no count, no path, no workspace, and find the file anew at each call through "
         "the ws that call is given, ws.resolve(path)",
         "一个工具实例服务所有智能体（引擎只创建一次工具）：self 里什么都不要存，不存行数、"
         "不存路径、不存工作区；每次调用都通过这次调用拿到的 ws 重新找文件，即 ws.resolve(path)")
CHDIR = ("the tool changed the process's working directory (os.chdir), which every agent in the "
         "process shares, and in a notebook the kernel's too; resolve paths with ws.resolve(path) "
         "instead",
         "这个工具改变了进程的工作目录（os.chdir），而进程里的所有智能体共用这个目录，"
         "在笔记本里它也是内核的工作目录；改用 ws.resolve(path) 解析路径")


def _tool_diagnose(args, got: list, wanted: list) -> str | None:
    """Why the calls came to something else, from the first call that did: what no mistake
    says alone (several mistakes at once, an exception that escaped run, a message)."""
    if MOVED in got and MOVED not in wanted:
        return say(*CHDIR)
    calls = [what for _, what in args[1] if isinstance(what, dict)]
    answers = [[a for a in seen if a not in (MOVED, UNTYPED, UNDESCRIBED)]
               for seen in (got, wanted)]
    for k, (arguments, mine, right) in enumerate(zip(calls, *answers, strict=False)):
        status, want = mine.learns[0], right.learns[0]
        if mine == right:
            continue
        earlier = [before for asked, before in zip(calls[:k], answers[1], strict=False)
                   if asked == arguments]
        if mine in earlier:  # what an earlier call of the same arguments came to
            return say(*STATE)
        if want == "bad_arguments":
            return say(*(REQUIRED if not arguments else STRING if "verbose" not in arguments
                         else EXTRA))
        if status == "failed" and mine.learns[1] == "escaped":
            return say(*ESCAPED)
        if want == "failed":
            return say(*MESSAGE)
        return None
    return None


TOOL = Exercise(
    "ch02.tool", CountLines, _tool_inputs, _tool_call, examples=_tool_examples(),
    run=_put_to_work, show=lambda seen: "; ".join(map(str, seen)), diagnose=_tool_diagnose,
    max_examples=60,
    domain=("one or two folders of files (CRLF, form feeds, no final newline, bytes that are not "
            "UTF-8), and calls on files, directories, names that are not there, with bad "
            "arguments too",
            "一到两个文件夹的文件（CRLF、换页符、末尾没有换行符、不是 UTF-8 的字节），以及对文件、"
            "目录、不存在的名字的调用，也有参数不对的调用"),
    rule=("CountLines is a Tool named count_lines with a description and a schema that requires "
          "a string path and allows nothing else; its run(self, ws, path) opens ws.resolve(path) "
          "and answers \"3 lines\" (\"1 line\", \"0 lines\"), counting the lines as split_lines "
          "does, or raises ToolError naming the path for a directory or a missing file",
          "CountLines 是一个名为 count_lines 的 Tool，有 description，JSON Schema 要求一个字符串"
          "参数 path、不允许别的参数；它的 run(self, ws, path) 打开 ws.resolve(path)，回答 "
          "\"3 lines\"（\"1 line\"、\"0 lines\"），像 split_lines 那样数行；遇到目录或不存在的"
          "文件，就抛出 ToolError，说出是哪个路径"),
    shape=("name, description, parameters = {\"type\": \"object\", \"properties\": {\"path\": "
           "{\"type\": \"string\"}}, \"required\": [\"path\"], \"additionalProperties\": False}; "
           "run: target = ws.resolve(path); is_dir() or not is_file(): raise ToolError; else "
           "len(split_lines(text)), as \"N lines\"",
           "name、description、parameters = {\"type\": \"object\", \"properties\": {\"path\": "
           "{\"type\": \"string\"}}, \"required\": [\"path\"], \"additionalProperties\": False}；"
           "run：target = ws.resolve(path)；is_dir() 或者 not is_file()：raise ToolError；否则"
           "数 len(split_lines(text))，写成 \"N lines\""),
    mistakes=[
        Mistake('description = "Count the lines of a text file, as an editor numbers them."', "", (
            "the model reads the description to know what the tool does and when to use it: "
            "say it in a sentence or two",
            "模型读 description 来了解工具做什么、什么时候用：用一两句话写清楚")),
        Mistake('"required": ["path"],', "", REQUIRED),
        Mistake('"required": ["path"],', '"required": "path",', (
            "\"required\" is a list of the names of the arguments a call must give: [\"path\"]. "
            "A string is read letter by letter: \"required\": \"path\" makes the engine require "
            "'p', 'a', 't' and 'h'",
            "\"required\" 是一个列表，列出调用必须给出的参数名：[\"path\"]。字符串会被拆成一个个"
            "字母：写成 \"required\": \"path\"，引擎就会要求 'p'、'a'、't'、'h' 四个参数")),
        Mistake('"additionalProperties": False,', "", EXTRA),
        Mistake('"type": "object",', "", (
            "a tool's arguments come as one JSON object, and parameters must say so at its top: "
            "\"type\": \"object\". The engine would cope without it, but the OpenAI API refuses "
            "the whole request (\"schema must be a JSON Schema of 'type: \"object\"'\")",
            "工具的参数总是一个 JSON 对象，parameters 的顶层必须写明这一点：\"type\": \"object\"。"
            "没有它，引擎也能应付，但 OpenAI API 会拒绝整个请求"
            "（\"schema must be a JSON Schema of 'type: \"object\"'\"）")),
        Mistake('name = "count_lines"', 'name = "count_line"', (
            "the model calls a tool by the name it was told, and schema() tells it the tool's "
            "`name`: set name = \"count_lines\"",
            "模型按告诉它的名字调用工具，而 schema() 告诉它的就是工具的 `name`："
            "写 name = \"count_lines\"")),
        Mistake("target = ws.resolve(path)", "target = Path(path)", (
            "the file is in the agent's workspace (ws.cwd), not in the folder the process runs "
            "in: open ws.resolve(path)",
            "文件在智能体的工作区里（ws.cwd），而不在进程运行的文件夹里：打开 ws.resolve(path)")),
        Mistake("target = ws.resolve(path)", "os.chdir(ws.cwd); target = Path(path)", CHDIR),
        Mistake("target = ws.resolve(path)",
                'target = self.__dict__.setdefault("ws", ws).resolve(path)', STATE),
        Mistake("n = len(split_lines(target.read_text(encoding=\"utf-8\", errors=\"replace\")))",
                "n = self.__dict__.setdefault(path, len(split_lines(target.read_text("
                "encoding=\"utf-8\", errors=\"replace\"))))", STATE),
        Mistake("if target.is_dir():", "if False:", (
            "a directory is there: say so (\"directory\"). A model told it is missing goes "
            "looking for something that is already there; told it is a directory, it picks a "
            "file inside (\"src is a directory; count_lines counts the lines of one file\")",
            "目录是存在的：要在消息里说明它是目录（\"directory\"）。模型如果得知它不存在，就会去找"
            "一个本来就在的东西；得知它是目录，才会在里面挑一个文件"
            "（\"src is a directory; count_lines counts the lines of one file\"）")),
        Mistake("if target.is_dir():", "if not target.is_file():", (
            "a path that is not a file may be a directory (is_dir()) or not be there at all: tell "
            "the two apart (\"no such file: missing.py\")",
            "不是文件的路径，可能是目录（is_dir()），也可能根本不存在：要把两种情况分开"
            "（\"no such file: missing.py\"）")),
        Mistake("if not target.is_file():", "if False:", ESCAPED),
        Mistake('raise ToolError(f"no such file: {ws.show(target)}")', 'return "0 lines"', (
            "a file that is not there has no count: \"0 lines\" tells the model the file is "
            "empty. Raise ToolError (\"no such file: missing.py\")",
            "不存在的文件没有行数：\"0 lines\" 会让模型以为文件是空的。抛出 ToolError"
            "（\"no such file: missing.py\"）")),
        Mistake('raise ToolError(f"no such file: {ws.show(target)}")', 'raise ToolError("error")',
                MESSAGE),
        Mistake(", errors=\"replace\"", "", (
            "a file that is not all UTF-8 still has lines: decode it with errors=\"replace\", as "
            "read_file does, and count them",
            "不全是 UTF-8 的文件也有行：像 read_file 那样用 errors=\"replace\" 解码，再数行")),
        Mistake("n = len(split_lines(", "n = len(str.splitlines(", (
            "str.splitlines also ends a line at a form feed (\\f; and \\v, \\x1c-\\x1e, \\x85, "
            "\\u2028, \\u2029), where editors, grep and tracebacks do not: split_lines(text) of "
            "tools/read.py splits on \\n only",
            "str.splitlines 遇到换页符（\\f；还有 \\v、\\x1c-\\x1e、\\x85、\\u2028、\\u2029）也会"
            "断行，而编辑器、grep 和 traceback 都不会：tools/read.py 的 split_lines(text) 只按 "
            "\\n 断行")),
        Mistake("len(split_lines(target.read_text(encoding=\"utf-8\", errors=\"replace\")))",
                "target.read_text(encoding=\"utf-8\", errors=\"replace\").count(\"\\n\")", (
                    "a last line without a final newline is still a line, as editors number "
                    "them (split_lines(text) counts it): text.count(\"\\n\") misses it",
                    "最后一行末尾没有换行符也还是一行，编辑器就是这样编号的（split_lines(text) "
                    "会算上它）：text.count(\"\\n\") 会漏掉它")),
        Mistake('return "1 line" if n == 1 else f"{n} lines"', "return n", (
            "run returned a bare number, and the engine made it a text (str(...)) that says "
            "nothing of lines: the model reads a result as text, so return \"3 lines\"",
            "run 返回的是一个数，引擎把它变成了文本（str(...)），可这段文本没说是行数："
            "模型把结果当文本读，所以要返回 \"3 lines\"")),
        Mistake('return "1 line" if n == 1 else f"{n} lines"', 'return f"{n} lines"', (
            "one line is \"1 line\", any other number \"N lines\"",
            "一行写 \"1 line\"，其他行数写 \"N lines\"")),
        Mistake('return "1 line" if n == 1 else f"{n} lines"',
                'return ("1 line" if n == 1 else f"{n} lines") + "\\n"', (
                    "return the count alone, exactly \"3 lines\": no line break or space before "
                    "or after it (the engine sends the result as it is)",
                    "只返回行数本身，也就是 \"3 lines\"：前后都不要有换行符或空格"
                    "（引擎把结果原样发给模型）")),
    ],
)


# --- ch02.unique_place -----------------------------------------------------------------------

def find_place(text, old):
    """(start, end) of the one place `old` occurs in `text`; else a ToolError that says why."""
    places, start = [], text.find(old)
    while start != -1:
        places.append((start, start + len(old), ""))
        start = text.find(old, start + 1)  # + 1, not + len(old): overlaps count
    places = whole_line_breaks(text, places)  # a place inside a CRLF is no place
    if not places:
        raise ToolError("old_string was not found")
    if len(places) > 1:
        raise ToolError(f"old_string occurs {len(places)} times (lines {lines_of(text, places)})")
    return places[0][:2]


def _names_the_places(message: str, text: str, old: str) -> bool:
    """Whether a refusal tells the model what it needs: why, and for several places how many
    and the lines they start on (the first ten, as lines_of gives them), each as a number."""
    places = exact(text, old, "")
    named = [len(places), *re.findall(r"\d+", lines_of(text, places))] if len(places) > 1 else []
    return bool(message.strip()) and all(re.search(rf"(?<!\d){n}(?!\d)", message) for n in named)


def _placed(find_place, text: str, old: str):
    place = refusing(_names_the_places)(find_place, text, old)
    return tuple(place) if isinstance(place, list) else place  # [start, end] is a place too


def _place_inputs():
    """Texts made of few pieces, so that old recurs and overlaps: CRLF, a lone CR or LF, tabs,
    trailing spaces, empty lines and an empty text, other scripts; old mostly cut from the text
    itself (found once, several times, across or inside a CRLF), else made of the same pieces
    (found nowhere, or somewhere else)."""
    from hypothesis import strategies as st

    pieces = ["a", "b", "ab", " ", "\t", "\r\n", "\n", "\r", "中文", "Жё", "かな"]
    texts = st.lists(st.sampled_from(pieces), max_size=10).map("".join)

    def olds(text: str):  # mostly a piece of the text itself: found once, several times, in a CRLF
        cut = st.tuples(st.integers(0, len(text)), st.integers(1, 4)).map(
            lambda at: text[at[0]:sum(at)] or "a")
        return st.one_of(cut, cut, st.lists(st.sampled_from(pieces), min_size=1,
                                            max_size=3).map("".join))

    return texts.flatmap(lambda text: st.tuples(st.just(text), olds(text)))


PRICES = ("def total(items):\n    result = 0\n    for item in items:\n"
          "        result += item.price\n    return result\n\n"
          "def count(items):\n    result = 0\n    for item in items:\n"
          "        result += 1\n    return result\n")
BLOCKS = "try:\n    run()\nexcept OSError:\n    pass\ntry:\n    walk()\nexcept OSError:\n    pass\n"


def _not_a_place(args, got, wanted) -> str | None:
    """A value returned where the reference refuses, and no place: None, -1, a message."""
    if isinstance(wanted, ToolError) and not (
            isinstance(got, tuple) and len(got) == 2 and all(isinstance(i, int) for i in got)):
        return say("refuse by raising ToolError, not by returning a value: the engine sends its "
                   "message to the model (\"edit_file failed: ...\"); a returned None or -1 would "
                   "be taken for a place",
                   "拒绝要抛出 ToolError，而不是返回一个值：引擎会把它的消息发给模型"
                   "（\"edit_file failed: ...\"）；返回的 None 或 -1 会被当成位置")
    return None


MANY = ("one place must be one: when old occurs more than once, refuse with ToolError, saying how "
        "many times and the lines the places start on, counted from 1 as read_file numbers them "
        "(lines_of(text, places)), so the model can add context",
        "位置必须唯一：old 出现不止一次时，就抛出 ToolError 拒绝，说出出现了几次，以及各处起始的"
        "行号，像 read_file 那样从 1 开始数（lines_of(text, places)），模型才能在 old 里"
        "多带上几行上下文")
CRLF = ("a place that starts or ends between the \\r and the \\n of a CRLF is no place: an edit "
        "there would leave a stray CR or LF. whole_line_breaks(text, places) drops such places",
        "在 CRLF 的 \\r 和 \\n 之间开始或结束的位置无效：在那里编辑会留下一个落单的 CR 或 LF。"
        "whole_line_breaks(text, places) 会去掉这样的位置")

UNIQUE_PLACE = Exercise(
    "ch02.unique_place", find_place, _place_inputs,
    lambda args: f"find_place({args[0]!r}, {args[1]!r})", run=_placed, diagnose=_not_a_place,
    domain=("texts with CRLF, lone CRs, tabs, trailing spaces and other scripts, and pieces of "
            "them found once, several times, overlapping, or inside a CRLF",
            "含 CRLF、单独的 CR、制表符、行尾空格和各种文字的文本，以及其中出现一次、多次、"
            "重叠出现或落在 CRLF 中间的片段"),
    examples=[(PRICES, "result += item.price"), (PRICES, "for item in items:"),
              (PRICES, "    result"), (BLOCKS, "except OSError:\n    pass"), ("aaa", "aa"),
              (PRICES, "result -= 1"), ("a\r\nb\r\n", "\nb"), ("x\r\ny\nx\ny", "\ny"),
              ("x\r\ny\n", "x\r"), ("import os\nprint(os.name)\n", "import os"),
              ("import os\nprint(os.name)\n", "os.name)\n")],
    equivalent={"return places[0][:2] → return places[-1][:2]":
                "it is reached with exactly one place left, which is both the first and the last"},
    rule=("find every place old occurs, overlaps counted, and drop those that cut a CRLF "
          "(whole_line_breaks); return (start, end) of the only one, with text[start:end] == old, "
          "or raise ToolError: that old was not found, or how many places there are and the "
          "lines they start on (lines_of)",
          "找出 old 出现的每一处，重叠的也算，再去掉切开 CRLF 的位置（whole_line_breaks）；"
          "只有一处时返回它的 (start, end)，使 text[start:end] == old；否则抛出 ToolError："
          "说明没有找到 old，或者说出有几处、各处起始的行号（lines_of）"),
    shape=("places, start = [], text.find(old); while start != -1: append (start, start + "
           "len(old), \"\"), start = text.find(old, start + 1); then whole_line_breaks; then "
           "refuse none or several, or return places[0][:2]",
           "places, start = [], text.find(old)；while start != -1：追加 (start, start + "
           "len(old), \"\")，start = text.find(old, start + 1)；然后 whole_line_breaks；"
           "没有或有多处就拒绝，否则返回 places[0][:2]"),
    mistakes=[
        Mistake("start + 1)", "start + len(old))", (
            "overlapping occurrences count: \"aa\" is in \"aaa\" at 0 and at 1. str.count and "
            "str.replace skip overlaps; search again from one past each start",
            "重叠的匹配也算：\"aa\" 在 \"aaa\" 的 0 和 1 处都出现了。str.count 和 str.replace "
            "会跳过重叠的匹配；每找到一处，就从这一处起点的下一个字符接着找")),
        Mistake("if len(places) > 1:", "if False:", MANY),
        Mistake("occurs {len(places)} times", "occurs more than once", MANY),
        Mistake("lines_of(text, places)",
                "', '.join(str(text.count(chr(10), 0, s)) for s, _, _ in places)", (
                    "lines are counted from 1, as read_file numbers them: a 0-based number sends "
                    "the model one line too high (lines_of(text, places) counts them right)",
                    "行号从 1 开始数，和 read_file 的编号一样：从 0 开始数，模型会找到上面一行去"
                    "（lines_of(text, places) 数得对）")),
        Mistake("lines_of(text, places)", "lines_of(text, [(e, e, n) for _, e, n in places])", (
            "those are the lines the places end on: when old spans several lines, the model "
            "looks for each place where it starts (lines_of(text, places) counts the line "
            "breaks before each start)",
            "这些是各处结束的行：old 跨了好几行时，模型要按各处起始的行去找"
            "（lines_of(text, places) 数的是各处起点之前的换行符）")),
        Mistake("places = whole_line_breaks(text, places)", "", CRLF),
        Mistake("places = whole_line_breaks(text, places)",
                "places = [p for p in places if text[p[0] - 1:p[0] + 1] != '\\r\\n']", (
                    "a place that ends between the \\r and the \\n of a CRLF is no place either: "
                    "whole_line_breaks(text, places) drops the places that start or end there",
                    "在 CRLF 的 \\r 和 \\n 之间结束的位置也无效：whole_line_breaks(text, places) "
                    "会去掉在那里开始或结束的位置")),
        Mistake('raise ToolError("old_string was not found")', "raise ToolError", (
            "say why there is no one place (\"old_string was not found\"): the engine sends the "
            "message to the model, and an empty one leaves it guessing what to fix",
            "说明为什么没有唯一的位置（\"old_string was not found\"）：引擎会把消息发给模型，"
            "空消息只会让它去猜该改什么")),
        Mistake('ToolError("old_string was not found")\n    if len(places) > 1:\n'
                "        raise ToolError(",
                'ValueError("old_string was not found")\n    if len(places) > 1:\n'
                "        raise ValueError(", (
                    "raise ToolError, not ValueError: the engine sends a ToolError's message to "
                    "the model as it is, while any other exception reads as a bug in the tool "
                    "(\"edit_file failed: ValueError: ...\")",
                    "要抛出 ToolError，而不是 ValueError：引擎把 ToolError 的消息原样发给模型，"
                    "别的异常看上去都像工具的 bug（\"edit_file failed: ValueError: ...\"）")),
    ],
)


# --- ch02.window -------------------------------------------------------------------------

def window(lines, offset, limit):
    """read_file's answer for `lines`: the numbered window from `offset`, then where it ends."""
    if offset > len(lines):
        raise ToolError(f"offset {offset} is past the end: the file ends at line {len(lines)}")
    last = min(offset + limit - 1, len(lines))
    shown = [f"{n:>6}\t{lines[n - 1]}" for n in range(offset, last + 1)]
    if last == len(lines):
        size = "1 line" if len(lines) == 1 else f"{len(lines)} lines"
        return "\n".join([*shown, f"(end of file, {size})"])
    more = f"(lines {offset}-{last} of {len(lines)}; use offset={last + 1} to read on)"
    return "\n".join([*shown, more])


def _window_inputs():
    """Lines as split_lines leaves them (no \\n; a lone CR, tabs, trailing spaces, empty lines,
    other scripts), none to a dozen; offsets and limits from 1 to past the end, and the default
    limit."""
    from hypothesis import strategies as st

    line = st.lists(st.sampled_from(["x = 1", " ", "\t", "\r", "#", "中文", "かな", "Жё"]),
                    max_size=3).map("".join)
    return st.lists(line, max_size=12).flatmap(lambda lines: st.tuples(
        st.just(lines), st.integers(1, len(lines) + 2),
        st.one_of(st.integers(1, len(lines) + 2), st.just(2000))))


STATS = ["def mean(xs):", "    return sum(xs) / len(xs)", "", "def median(xs):",
         "    xs = sorted(xs)", "    mid = len(xs) // 2", "    if len(xs) % 2:",
         "        return xs[mid]", "    return (xs[mid - 1] + xs[mid]) / 2", "",
         "def spread(xs):", "    return max(xs) - min(xs)"]
SHORT = ["import sys", "", "print(sys.argv)"]


def _window_diagnose(args, got: str, wanted: str) -> str | None:
    """A window right but for its last line: none, or a line break after it."""
    if not (isinstance(got, str) and isinstance(wanted, str)):
        return None
    if got.rstrip("\n") == wanted:
        return say("no line break after the last line: join the lines with \"\\n\" "
                   "(\"\\n\".join(...)), so that the text ends with the line that says where "
                   "the window ends",
                   "最后一行后面不要有换行符：用 \"\\n\" 把各行连起来（\"\\n\".join(...)），"
                   "文本就以说明窗口停在哪里的那一行结尾")
    if got == wanted.rpartition("\n")[0]:
        return say("end with a line that says where the window ends, so the model knows whether "
                   "it has seen the whole file",
                   "最后要有一行说明窗口停在哪里，模型才知道它是不是已经看完了整个文件")
    return None


NUMBERED = ("each line is f\"{n:>6}\\t{line}\", as read_file shows it: its own line number n "
            "(offset is 1-based: line n is lines[n - 1]), right-aligned in 6 columns, then a tab",
            "每行写成 f\"{n:>6}\\t{line}\"，和 read_file 显示的一样：它自己的行号 n"
            "（offset 从 1 开始数：第 n 行是 lines[n - 1]），右对齐占 6 列，后面跟一个制表符")
ENDS = ("the window reaches the file's last line when last == len(lines): only then say "
        "\"(end of file, N lines)\"; else \"(lines A-B of N; use offset=B+1 to read on)\"",
        "只有 last == len(lines)（即窗口到了文件的最后一行）时，才写 \"(end of file, N lines)\"；"
        "否则写 \"(lines A-B of N; use offset=B+1 to read on)\"")
PAST_END = ("an offset past the end is the model's mistake to fix: raise ToolError saying how many "
            "lines the file has (any other exception reads as a bug in the tool, and an empty "
            "window says nothing)",
            "offset 超过文件结尾，是模型要改正的错误：抛出 ToolError，说明文件有多少行"
            "（别的异常看上去像工具的 bug，空窗口则什么也没说）")

WINDOW = Exercise(
    "ch02.window", window, _window_inputs,
    lambda args: f"window({args[0]!r}, {args[1]}, {args[2]})",
    run=refusing(lambda message, *args: bool(message.strip())), diagnose=_window_diagnose,
    domain=("lists of up to a dozen lines (empty ones, tabs, a lone CR, other scripts), with "
            "offsets and limits from 1 to past the end",
            "最多 12 行的列表（空行、制表符、单独的 CR、各种文字），offset 和 limit 从 1 "
            "一直到超过结尾"),
    examples=[(SHORT, 1, 2000), (STATS, 1, 5), (STATS, 6, 4), (STATS, 9, 3), (STATS, 9, 4),
              (STATS, 10, 50), (["print('hi')"], 1, 10), (SHORT, 9, 10), (SHORT, 4, 10)],
    rule=("show up to limit lines from offset (1-based), each as f\"{n:>6}\\t{line}\", then one "
          "last line: \"(end of file, N lines)\" (\"1 line\") when the window reaches the last "
          "line, else \"(lines A-B of N; use offset=B+1 to read on)\", N the file's number of "
          "lines; an offset past the end raises ToolError saying so",
          "从 offset（从 1 开始数）起最多显示 limit 行，每行写成 f\"{n:>6}\\t{line}\"，最后再加"
          "一行：窗口到了最后一行时写 \"(end of file, N lines)\"（一行时写 \"1 line\"），否则写 "
          "\"(lines A-B of N; use offset=B+1 to read on)\"，N 是文件的总行数；offset 超过文件"
          "结尾时抛出 ToolError 说明"),
    shape=("if offset > len(lines): raise ToolError; last = min(offset + limit - 1, len(lines)); "
           "the lines offset..last numbered; then the end-of-file line if last == len(lines), "
           "else the read-on line; \"\\n\".join(...)",
           "if offset > len(lines)：raise ToolError；last = min(offset + limit - 1, len(lines))；"
           "给 offset 到 last 的各行标上行号；last == len(lines) 时加上文件结尾那一行，否则加上"
           "接着读的那一行；\"\\n\".join(...)"),
    mistakes=[
        Mistake('shown = [f"{n:>6}\\t{lines[n - 1]}" for n in range(offset, last + 1)]',
                'shown = [f"{n:>6}\\t{line}" for n, line in zip(range(offset, last + 1), '
                "lines[offset:])]", NUMBERED),
        Mistake('shown = [f"{n:>6}\\t{lines[n - 1]}" for n in range(offset, last + 1)]',
                'shown = [f"{i:>6}\\t{line}" for i, line in enumerate(lines[offset - 1:last], 1)]',
                NUMBERED),
        Mistake("{n:>6}", "{n:>5}", NUMBERED),
        Mistake("if last == len(lines):", "if shown:", ENDS),
        Mistake("if last == len(lines):", "if offset + limit >= len(lines):", ENDS),
        Mistake("use offset={last + 1}", "use offset={last}", (
            "read on from the line after the last one shown, last + 1: offset={last} shows "
            "the model that line again",
            "要从最后显示的那一行的下一行接着读，即 last + 1：offset={last} 会让模型把那一行再读"
            "一遍")),
        Mistake('size = "1 line" if len(lines) == 1 else f"{len(lines)} lines"',
                'size = f"{len(lines)} lines"', (
                    "one line is \"1 line\", any other number \"N lines\"",
                    "一行写 \"1 line\"，其他行数写 \"N lines\"")),
        Mistake('f"(end of file, {size})"', 'f"(end of file, {len(shown)} lines)"', (
            "N is the number of lines in the whole file, len(lines), not how many the window "
            "shows",
            "N 是整个文件的行数 len(lines)，而不是窗口显示了几行")),
        Mistake("last = min(offset + limit - 1, len(lines))", "last = offset + limit - 1", (
            "the window stops at the file's last line: limit may be more than what is left, so "
            "show the lines from offset to min(offset + limit - 1, len(lines))",
            "窗口在文件的最后一行停下：limit 可以比剩下的行数多，所以显示从 offset 到 "
            "min(offset + limit - 1, len(lines)) 的行")),
        Mistake("if offset > len(lines):", "if False:", PAST_END),
        Mistake("raise ToolError(f\"offset", "raise IndexError(f\"offset", PAST_END),
        Mistake('raise ToolError(f"offset {offset} is past the end: the file ends at line '
                '{len(lines)}")', "raise ToolError", (
                    "say why: the offset is past the end, and how many lines the file has, so "
                    "that the model can ask for a window that is there (an empty message leaves "
                    "it guessing)",
                    "说明原因：offset 超过了文件结尾，文件一共有多少行；这样模型才能改为请求一个"
                    "存在的窗口（空消息只会让它去猜）")),
    ],
)
