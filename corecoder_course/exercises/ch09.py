"""Checks for the exercises of chapter 9, sessions, settings and the command.

    ch09.session_path  `session_path(home, session_id)`: the file of a session a user named,
                       never a file outside HOME/sessions
    ch09.replay        `replay(lines)`: a session file's lines, as the legal history they make
    ch09.trace         `Trace(out)`: a subscriber that writes each finished call as a JSON line,
                       plugged into a real Agent whose workers write from their own threads

All three are declared exercises (kit.py). `ch09.session_path`'s reference is the engine's own
(session.py); `ch09.replay` is the chapter's, and the suite proves it makes what the engine's
`load` makes; `ch09.trace` is the chapter's subscriber.

`ch09.session_path`: each input is an id a user may type or paste (pieces of ids, dots and
slashes both ways, spaces and newlines around, a pasted ".jsonl", other scripts, 64 and 65
characters, not text at all), in a home reached through a link, whose sessions folder holds a
session, a link to it, a link that leads outside, one into a folder beside it whose name begins
with "sessions", and one into a folder inside it. Compared: the file returned, resolved and
shown from the home; or that the id was refused (a SessionError, whatever its words say; any
other error is raised as it was).

`ch09.replay`: each input is a session file's lines: the records the engine writes (meta,
message, model, history, todos, usage, and kinds a newer version may add), damaged as a disk,
a hand or a crash damages them: a torn last line, a line that is not JSON or not a record, a
record of the wrong shape or of no type, a line nested too deep to read; and, among the
chapter's examples, each damaged line between two messages, a history emptied (/reset) and
two writers whose call ids collided. The lines are the caller's own list, so a reader that
changes it is seen. Compared: the history returned.

`ch09.trace`: each input is a run: the agent's rounds of calls (read a file, read a missing
one, a tool that does not exist, a call a gate refuses) and now and then a team of workers,
each with rounds of its own. Workers run side by side, and the order their events reach the
subscriber is forced (the first worker's first call finishes only once the second has begun
its second round), so a round kept for everyone at once is caught every time. Beside it, another
Trace of the answer's, as another agent in the same process would hold, sees each worker begin
round 99 just after the answer has seen it begin its own, so rounds kept on the class (shared by
every Trace) are caught every time too. Compared: the lines written, as (worker, round, tool,
status); whether each was written whole, in one write; and whether each was written as its
call finished, in the thread that delivered its ToolCallFinished (not kept for later); and,
where nothing was written, whether it was printed instead. What cannot be told apart without
a race or a clock: whether a line written in one write was written under a lock.
"""

from __future__ import annotations

import contextlib
import io
import json
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path

from corecoder.events import RoundStarted, ToolCallFinished, WorkerEvent
from corecoder.executor import RunInParallel
from corecoder.session import SessionError, _message_ok, repair, session_path
from corecoder.subagents import AgentTool, workers
from corecoder.tools import ReadFile

from ..kit import PATIENCE, Exercise, Mistake
from ..seams import Seam
from ..words import say

# --- ch09.session_path ------------------------------------------------------------------------

# What an id is made of, as a user types or pastes it: the names in the home's sessions folder,
# a name that ends in letters of ".jsonl", the pieces of a way out, spaces, a newline and a NUL,
# letters no ASCII pattern allows
PIECES = ("kept", "inside", "away", "old", "deep", "fix-login", "x", "..", ".", "/", "\\", " ",
          "\n", "\t", "\0", ".jsonl", "é", "٣", "ｘ", "-", "_", "~", "etc", "%2e", "a" * 30)
NOT_TEXT = (7, None, b"kept", ("kept",))


def _id_inputs():
    from hypothesis import strategies as st

    pieced = st.lists(st.sampled_from(PIECES), max_size=5).map("".join)
    sized = st.sampled_from(["a" * 64, "a" * 65, " " + "a" * 64 + ".jsonl"])
    return st.tuples(st.one_of(pieced, pieced, sized, st.sampled_from(NOT_TEXT)))


def _located(answer, session_id) -> str:
    """The file `answer` gives for `session_id`, resolved and shown from the home, in a home
    whose sessions folder holds kept.jsonl, inside.jsonl (a link to it), away.jsonl (a link to
    a file beside the folder), old.jsonl (a link into sessions-old, a folder beside it whose
    path begins with the sessions folder's) and deep.jsonl (a link into a folder inside it).
    The home is handed over as a link to it, as a home on another disk, or macOS's /var, is
    reached: only a resolved folder is the one a resolved file is in. A refusal (SessionError)
    is said as one, its words aside, so that refusals compare alike; what else it raised, it
    raises."""
    with Seam({"home/sessions/kept.jsonl": "{}\n", "home/outside.jsonl": "{}\n",
               "home/sessions-old/kept.jsonl": "{}\n", "home/sessions/archive/kept.jsonl": "{}\n"},
              ends=()) as seam:
        home = (seam.roots[0] / "home").resolve()
        (seam.roots[0] / "via").symlink_to(home)
        (home / "sessions" / "inside.jsonl").symlink_to("kept.jsonl")
        (home / "sessions" / "away.jsonl").symlink_to(home / "outside.jsonl")
        (home / "sessions" / "old.jsonl").symlink_to(home / "sessions-old" / "kept.jsonl")
        (home / "sessions" / "deep.jsonl").symlink_to(Path("archive", "kept.jsonl"))
        try:
            found = answer(seam.roots[0] / "via", session_id)
        except SessionError:
            return say("refused (SessionError)", "拒绝（SessionError）")
        if not isinstance(found, Path):
            kind = type(found).__name__
            return say(f"a {kind}, not a Path", f"{kind}，不是 Path")
        if found.is_symlink():  # the log opens the file without following a link: it would fail
            return say("a link, not the file it leads to: return the resolved path",
                       "一个链接，而不是它指向的文件：要返回 resolve 之后的路径")
        where = found.resolve()
        return where.relative_to(home).as_posix() if where.is_relative_to(home) else \
            say("a file outside the home: ", "配置目录之外的一个文件：") + where.name


SESSION_PATH = Exercise(
    "ch09.session_path", session_path, _id_inputs,
    lambda args: f"session_path(home, {args[0]!r})", run=_located, show=str, max_examples=150,
    examples=[("kept",), (" kept.jsonl\n",), ("../outside",), ("..\\..\\etc\\passwd",),
              ("/etc/passwd",), ("away",), ("inside",), ("old",), ("deep",), ("a" * 65,), ("",),
              ("x y",), ("kept\n.jsonl",), ("kept.jsonl.jsonl",), ("fix-login",), (7,)],
    domain=("ids as a user types or pastes them: names, dots and slashes both ways, spaces, "
            "newlines and NULs, a pasted .jsonl, other scripts, 64 and 65 characters, not text; "
            "in a home reached through a link, whose sessions folder has a link to a session, "
            "links into a folder inside it and into sessions-old beside it, and one that leads "
            "outside the home",
            "用户敲进来或者粘贴进来的各种 id：名字、两个方向的点和斜杠、空格、换行和 NUL、"
            "粘贴带进来的 .jsonl、其他文字系统的字母、64 和 65 个字符、根本不是文本；"
            "配置目录是经由一个链接到达的，它的 sessions 目录里有一个指向会话的链接，"
            "有指向 sessions 里面的子目录和旁边的 sessions-old 的链接，还有一个通往配置目录外面"
            "的链接"),
    rule=("take text only; strip stray spaces and a pasted \".jsonl\"; refuse (SessionError) an id "
          "that is not 1 to 64 of A-Z a-z 0-9 - _ (checked, not cleaned up); then resolve "
          "HOME/sessions/<id>.jsonl and refuse it unless its folder is still HOME/sessions; "
          "return that resolved path (the log opens it without following a link)",
          "只收文本；去掉两边多余的空白和粘贴带进来的 \".jsonl\"；id 不是 1 到 64 个 A-Z a-z 0-9 - "
          "_ "
          "就拒绝（SessionError），只检查、不清洗；然后 resolve HOME/sessions/<id>.jsonl，它所在的"
          "目录不再是 HOME/sessions 就拒绝；返回这个 resolve 之后的路径"
          "（会话日志打开它时不跟随链接）"),
    shape=("isinstance(session_id, str), else raise; clean = session_id.strip().removesuffix"
           "(\".jsonl\"); ID.fullmatch(clean), else raise; folder = Path(home, \"sessions\")"
           ".resolve(); path = (folder / f\"{clean}.jsonl\").resolve(); path.parent == folder, "
           "else raise; return path",
           "isinstance(session_id, str)，否则 raise；clean = session_id.strip().removesuffix"
           "(\".jsonl\")；ID.fullmatch(clean)，否则 raise；folder = Path(home, \"sessions\")"
           ".resolve()；path = (folder / f\"{clean}.jsonl\").resolve()；path.parent == folder，"
           "否则 raise；return path"),
    equivalent={  # the words of a refusal are not compared: only that it is a SessionError
        f"raise SessionError(f\"bad session id {{session_id[:80]!r}}: use 1 to 64 letters, "
        f"digits, '-' or '_'\") → raise SessionError(f\"bad session id {{session_id[:{n}]!r}}: "
        f"use 1 to 64 letters, digits, '-' or '_'\")": "how much of a refused id its message "
        "quotes: a refusal's words are not compared, only that it is one"
        for n in (79, 81)},
    mistakes=[
        Mistake("    clean = session_id.strip().removesuffix(\".jsonl\")",
                "    clean = session_id.strip().rstrip(\".jsonl\")", (
                    "rstrip() takes away characters, not an ending: \"fix-login\" loses its n "
                    "(every letter of \".jsonl\" at its end goes). Use removesuffix(\".jsonl\")",
                    "rstrip() 去掉的是字符，不是结尾：\"fix-login\" 丢了最后的 n（末尾凡是 "
                    "\".jsonl\" 里的字母都会被去掉）。要用 removesuffix(\".jsonl\")")),
        Mistake("    if not ID.fullmatch(clean):",
                "    if \"..\" in clean or clean.startswith(\"/\"):", (
                    "a blocklist of ways out misses the next one (a backslash, a folder inside "
                    "sessions, an empty id, a newline): allow what an id may be, refuse the rest",
                    "列出几种“出去的路”来拦，总会漏掉下一种（反斜杠、sessions 里的子目录、空 id、"
                    "换行）：规定 id 可以是什么，其余一律拒绝")),
        Mistake("    if not ID.fullmatch(clean):",
                "    if not re.fullmatch(r\"[\\w-]{1,64}\", clean):", (
                    "\\w (and str.isalnum) take the letters and digits of every script: \"é\", "
                    "\"٣\" and \"ｘ\" are not A-Z a-z 0-9. Allow those ASCII ones only: the ID "
                    "pattern given, or re.ASCII",
                    "\\w（还有 str.isalnum）认的是所有文字的字母和数字：\"é\"、\"٣\"、\"ｘ\" "
                    "都不是 A-Z a-z 0-9。只允许这些 ASCII 字符：用给出的 ID 模式，"
                    "或者加 re.ASCII")),
        Mistake("    if not ID.fullmatch(clean):", "    if not ID.match(clean):", (
            "match() checks how the id begins, not all of it: \"x y\" and \"x/../y\" begin well "
            "(and a \"$\" at the pattern's end still lets a last newline by). Use fullmatch()",
            "match() 只看 id 的开头，不看全部：\"x y\" 和 \"x/../y\" 开头都没问题（模式末尾加 "
            "\"$\" 也还会放过最后的一个换行）。要用 fullmatch()")),
        Mistake("    path = (folder / f\"{clean}.jsonl\").resolve()",
                "    path = folder / f\"{clean}.jsonl\"", (
                    "check the path once it is resolved: an entry of the sessions folder may be a "
                    "link that leads elsewhere, and its folder, unresolved, is still sessions",
                    "要检查 resolve 之后的路径：sessions 目录里的一项可能是指向别处的链接，不 "
                    "resolve 的话，它所在的目录看起来仍然是 sessions")),
        Mistake("    folder = Path(home, \"sessions\").resolve()",
                "    folder = Path(home, \"sessions\")", (
                    "resolve the sessions folder too: a home reached through a link (on another "
                    "disk, or macOS's /var) gives a resolved file whose folder is never the "
                    "unresolved one, and every id is refused",
                    "sessions 目录本身也要 resolve：home 经由链接到达时（在另一块盘上，或者 macOS "
                    "的 /var），resolve 之后的文件所在的目录永远不等于没 resolve 的那个目录，"
                    "每个 id 都会被拒绝")),
        Mistake("    if path.parent != folder:", "    if not str(path).startswith(str(folder)):", (
            "the resolved file's folder must be the sessions folder itself (path.parent == "
            "folder): a path that only begins with its text may be in sessions-old beside it, "
            "and a folder inside sessions is not sessions either",
            "resolve 之后文件所在的目录必须正是 sessions 目录本身（path.parent == folder）："
            "只是文本开头相同的路径可能在旁边的 sessions-old 里，sessions 里面的子目录也不是 "
            "sessions")),
        Mistake("    clean = session_id.strip().removesuffix(\".jsonl\")",
                "    clean = session_id", (
            "a pasted id comes with a space or a newline, and a file name with its .jsonl: "
            "strip those two things (and only those) before checking",
            "粘贴进来的 id 常带着空格或换行，文件名还带着 .jsonl："
            "检查之前把这两样去掉（只去这两样）")),
        Mistake("    if not isinstance(session_id, str):", "    if session_id is None:", (
            "an id that is not text (a number, bytes) must be refused as a SessionError, "
            "not crash on .strip()",
            "不是文本的 id（数字、bytes）要用 SessionError 拒绝，而不是在 .strip() 上崩掉")),
    ],
)


# --- ch09.replay ------------------------------------------------------------------------------

def well_formed(message) -> bool:
    """Would the chat API take this message? The engine's own test, given to the learner."""
    return _message_ok(message)


def replay(lines):
    """The history a session file's lines make: a message record joins the end, a history
    record replaces every message before it, any other record is not the history's; a line
    that cannot be read, or a record of the wrong shape, is skipped. Then made legal."""
    messages = []
    for line in lines:
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue  # torn by a crash, damaged, or nested too deep to read
        kind = record.get("type") if isinstance(record, dict) else None
        if kind == "message":
            batch, start = [record.get("message")], len(messages)
        elif kind == "history":
            batch, start = record.get("messages"), 0
        else:
            continue  # meta, model, todos, usage; or a kind a newer version writes
        if isinstance(batch, list) and all(well_formed(m) for m in batch):
            messages[start:] = batch
    return repair(messages, [])


# What damage a session file may hold: a disk error or a hand edit, anywhere; a crash, at the end
DAMAGED = ('{"type": "message", "message": {"role": "us', "not json", "[1, 2]", "7", '"message"',
           '{"type": "message", "message": ["user", "hi"]}',
           '{"type": "message", "message": {"role": "robot", "content": "hi"}}',
           '{"type": "message"}', '{"type": "history", "messages": {"role": "user"}}',
           '{"type": "history", "messages": [1]}', '{"type": "history", "messages": 7}',
           '{"type": "history", "messages": [{"role": "user", "content": "a"}, "b"]}',
           '{"type": "history"}', '{"type": "history", "messages": {}}',
           '{"type": "history", "messages": ""}', '{"type": "future", "what": 1}',
           '{"type": "message", "message": {"role": "assistant", "content": "", "tool_calls": 7}}',
           '{"type": "message", "message": {"role": "user", "content": {"text": "hi"}}}',
           '{"type": "model", "model": "local/qwen"}', '{"type": "todos", "todos": []}',
           '{"role": "user", "content": "hi"}',  # a message pasted in without its record
           '{"type": "meta", "id": "s", "model": "local/qwen"}',  # a file pasted onto another
           "<a line nested 100,000 deep>")
# a line too deep for json's recursion: handed to the answer whole, shown by its name
DEEP = {"<a line nested 100,000 deep>": '{"type": "message", "message": ' + "[" * 100_000}
NAMED = {line: name for name, line in DEEP.items()}


def _records_of(history: list[dict]) -> list[str]:
    return [json.dumps({"type": "message", "message": m}, ensure_ascii=False) for m in history]


def _file_inputs():
    from hypothesis import strategies as st

    from ..inputs import legal_histories

    @st.composite
    def file(draw):
        lines = [json.dumps({"type": "meta", "id": "s", "model": "local/qwen"})]
        lines += _records_of(draw(legal_histories(max_turns=3)))
        if draw(st.booleans()):  # compacted: a shorter history replaces it, and the talk goes on
            lines.append(json.dumps({"type": "history", "messages": draw(legal_histories(2))},
                                    ensure_ascii=False))
            lines += _records_of(draw(legal_histories(max_turns=2)))[:draw(st.integers(0, 6))]
        lines = lines[:draw(st.integers(1, len(lines)))]  # a crash: the rest never written
        for _ in range(draw(st.integers(0, 2))):  # damage in the middle
            lines.insert(draw(st.integers(1, len(lines))), draw(st.sampled_from(DAMAGED)))
        if draw(st.integers(0, 3)) == 0:  # torn: the last line cut where the crash came
            lines[-1] = lines[-1][:draw(st.integers(1, max(1, len(lines[-1]) - 1)))]
        return ([DEEP.get(line, line) for line in lines],)  # the caller's list: kept unchanged
    return file()


def _replay_diagnose(args, got, wanted) -> str | None:
    """A history holding a message that is in none of the lines it was handed (a result aside:
    repair makes some): one kept from an earlier call."""
    written = []
    for line in args[0]:
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(record, dict):
            batch = record.get("messages")
            written += [record.get("message"), *(batch if isinstance(batch, list) else [])]
    said = (m for m in got if not (isinstance(m, dict) and m.get("role") == "tool"))
    if isinstance(got, list) and any(m not in written for m in said):
        return say("your history holds a message that is in none of these lines: kept from an "
                   "earlier call (a list made once, a default argument)? Start each call afresh",
                   "你返回的历史里有一条消息不在这些行里：是上一次调用留下的吗（只建一次的列表、"
                   "默认参数）？每次调用都从头开始")
    return None


def _replay_call(args) -> str:
    return "replay([\n    " + ",\n    ".join(NAMED.get(line, repr(line)) for line in args[0]) \
        + "])"


def _lines(*records) -> tuple:
    return ([DEEP.get(r, r) if isinstance(r, str) else json.dumps(r) for r in records],)


CALL = {"role": "assistant", "content": "", "tool_calls": [
    {"id": "c1", "type": "function", "function": {"name": "read_file",
                                                  "arguments": '{"path": "a.py"}'}}]}
SAID = {"type": "message", "message": {"role": "user", "content": "a"}}
ANSWERED = {"type": "message", "message": {"role": "assistant", "content": "ok"}}
RESULT = {"role": "tool", "tool_call_id": "c1", "content": "x = 1"}
REPLAY = Exercise(
    "ch09.replay", replay, _file_inputs, _replay_call, diagnose=_replay_diagnose,
    max_examples=150,
    examples=[_lines({"type": "meta"}, {"type": "message", "message": {"role": "user",
                                                                       "content": "hi"}}),
              _lines({"type": "message", "message": {"role": "user", "content": "fix it"}},
                     {"type": "message", "message": CALL}, '{"type": "mess'),
              _lines({"type": "message", "message": {"role": "user", "content": "a"}},
                     {"type": "history", "messages": [{"role": "user", "content": "b"}]},
                     {"type": "message", "message": {"role": "assistant", "content": "ok"}}),
              *(_lines(SAID, damaged, ANSWERED) for damaged in DAMAGED),  # each, in the middle
              # /reset: the history rewritten to nothing, and the talk goes on
              _lines(SAID, {"type": "history", "messages": []},
                     {"type": "message", "message": {"role": "user", "content": "b"}}),
              # two writers: the second's call has the id of the first's, and no repair makes
              # that legal: the history is kept up to its last legal turn
              _lines(*({"type": "message", "message": m} for m in (
                  SAID["message"], CALL, RESULT, {"role": "user", "content": "b"}, CALL,
                  RESULT))),
              _lines(SAID, "[1]", {"type": "message", "message": ["assistant", "ok"]})],
    domain=("session files: meta, message, model, history, todos and usage records, a "
            "compaction's history record, an emptied history, a crash that cut the file short or "
            "tore its last line, lines that are not JSON, not a record, of the wrong shape or of "
            "no type, or nested 100,000 deep, two writers whose call ids collided",
            "各种会话文件：meta、message、model、history、todos 和 usage 记录，压缩写下的 history "
            "记录，清空了的历史，崩溃让文件少了一截或者最后一行被撕断，不是 JSON 的行、不是记录的"
            "行、形状不对或者没有 type 的行、嵌套 10 万层的行，两个写入者的调用 id 撞在一起"),
    rule=("read each line as JSON; skip one that cannot be read (a torn one, one nested too deep: "
          "RecursionError) or that is not a record; a message record's message joins the end, a "
          "history record's messages replace all before them, each record only if every "
          "message in it is well_formed (else the whole record is skipped); other kinds are not "
          "the history's; then return repair(messages, [])",
          "每一行按 JSON 读；读不出来的（撕断的、嵌套太深的：RecursionError）或者不是记录的，跳过；"
          "message 记录的 message 接到末尾，history 记录的 messages 替换前面全部，前提是这条记录"
          "里每条消息都 well_formed（否则整条记录跳过）；别的种类不属于历史；最后 return "
          "repair(messages, [])"),
    shape=("for line: try json.loads, except (ValueError, RecursionError): continue; kind = "
           "record.get(\"type\") if a dict; message: messages[len(messages):] = [m]; history: "
           "messages[0:] = ms; only if isinstance(batch, list) and all(well_formed(m) ...)",
           "for line：try json.loads，except (ValueError, RecursionError): continue；是 dict 才取 "
           "kind = record.get(\"type\")；message：messages[len(messages):] = [m]；history："
           "messages[0:] = ms；前提是 isinstance(batch, list) 并且 all(well_formed(m) ...)"),
    mistakes=[
        Mistake("        except (ValueError, RecursionError):", "        except ValueError:", (
            "a line nested too deep raises RecursionError, not ValueError, and the whole "
            "session is lost to one line: skip it as any other line that cannot be read",
            "嵌套太深的行抛出的是 RecursionError，不是 ValueError，一行就让整个会话丢了：要像别的"
            "读不出来的行一样跳过它")),
        Mistake("            continue  # torn by a crash, damaged, or nested too deep to read",
                "            break", (
                    "a damaged line is skipped, not the end: what was written after it is the "
                    "session too",
                    "坏掉的行跳过就是，不是到此为止：它后面写下的也是会话的一部分")),
        Mistake("        kind = record.get(\"type\") if isinstance(record, dict) else None",
                "        kind = record.get(\"type\")", (
                    "a line may be JSON that is not a record (a list, a number): skip it too",
                    "一行可能是 JSON 却不是记录（一个列表、一个数）：它也要跳过")),
        Mistake("            batch, start = record.get(\"messages\"), 0",
                "            batch, start = record.get(\"messages\"), len(messages)", (
                    "a history record (written after a compaction) replaces every message "
                    "before it; appended, the old messages are sent again beside their summary",
                    "history 记录（压缩之后写的）替换它前面的所有消息；如果接在后面，旧消息会和它们"
                    "的摘要一起再发一遍")),
        Mistake("        if isinstance(batch, list) and all(well_formed(m) for m in batch):",
                "        if isinstance(batch, list):", (
                    "a record of the wrong shape (a message that is not an object with a known "
                    "role) is skipped whole: check each message with well_formed",
                    "形状不对的记录（消息不是带有已知 role 的对象）整条跳过：每条消息都要用 "
                    "well_formed 检查")),
        Mistake("        if isinstance(batch, list) and all(well_formed(m) for m in batch):",
                "        if batch and isinstance(batch, list) and all(well_formed(m) "
                "for m in batch):", (
                    "an empty history record is a history too (/reset writes one): it replaces "
                    "every message before it with none; all() of no messages is True",
                    "空的 history 记录也是一段历史（/reset 会写一条）：它把前面所有消息替换成空；"
                    "没有消息时 all() 是 True")),
        Mistake("    return repair(messages, [])", "    return messages", (
            "a crash may leave a call without its result, and the API refuses such a history "
            "(400) from then on: repair it, as chapter 1's rule says",
            "崩溃可能留下一个没有结果的调用，从那以后 API 都会拒绝这样的历史（400）：按第 1 "
            "章的规则"
            "用 repair 修好")),
        Mistake("    return repair(messages, [])", "    return repair(messages)", (
            "given no list, repair raises where no repair makes the history legal (two writers "
            "whose call ids collided); given [], it keeps the history up to its last legal "
            "turn: return repair(messages, [])",
            "不给列表时，repair 在怎么修都不合法的地方（两个写入者的调用 id 撞在一起）直接抛出"
            "异常；给它 [] 时，它保留到最后一个合法的轮次：return repair(messages, [])")),
    ],
)


# --- ch09.trace -------------------------------------------------------------------------------

class Trace:
    """A subscriber: each tool call that finished, as one JSON line written to `out`:
    {"worker": "" for the agent itself, else the worker's name; "round": the round that
    worker asked for it in; "tool": the tool's name; "status": how the call ended}."""

    def __init__(self, out):
        self.out = out
        self.rounds = {}  # worker -> the round it is in: workers run side by side
        self.lock = threading.Lock()  # workers call from their own threads

    def __call__(self, event):
        worker = event.worker if isinstance(event, WorkerEvent) else ""
        event = event.event if isinstance(event, WorkerEvent) else event
        counter = worker  # each worker counts its own rounds
        if isinstance(event, RoundStarted):
            self.rounds[counter] = event.round
        elif isinstance(event, ToolCallFinished):
            line = json.dumps({"worker": worker, "round": self.rounds.get(counter),
                               "tool": event.call.name, "status": event.status})
            with self.lock:
                self.out.write(line + "\n")


def _trace_diagnose(args, got, wanted) -> str | None:
    """Why, where the lines say it: a round another Trace saw (OTHER_ROUND): rounds kept on
    the class; a line not written as its call finished; lines printed, not written; a line
    written in pieces."""
    if f", {OTHER_ROUND}, " in got:
        return say(f"a line has round {OTHER_ROUND}, the round another Trace (another agent's, in "
                   "the same process) saw that worker begin: your rounds are shared by every "
                   "Trace. Keep them on the instance (self.rounds = {} in __init__), not on the "
                   "class",
                   f"有一行的轮次是 {OTHER_ROUND}，那是另一个 Trace（同一进程里另一个智能体的）"
                   "看到这个 worker 开始的轮次：你的轮次被所有 Trace 共用了。把它放在实例上"
                   "（在 __init__ 里 self.rounds = {}），不要放在类上")
    if got == say(*LATE):
        return say("write each call's line while its ToolCallFinished is handled: not before "
                   "(ToolCallStarted: no status yet), nor kept for later (a trace is read while "
                   "the agent runs, and what is kept is lost with a crash)",
                   "每个调用的那一行要在处理它的 ToolCallFinished 时写：不能更早（ToolCallStarted："
                   "还没有状态），也不能攒到以后（trace 是在智能体运行时被读的，攒着的东西一崩溃就"
                   "丢了）")
    if got == say(*PRINTED):
        return say("write each line to the out you were handed (self.out.write(...)): print() "
                   "goes to the screen, not to the team's file",
                   "每一行都要写进交给你的 out（self.out.write(...)）：print() 打印到屏幕上，"
                   "不会进团队的文件")
    if got.startswith(say("a line written in pieces", "一行分成几次写")):
        return say("make the whole line first, its newline included, then hand it to "
                   "self.out.write once: json.dump and print write a line in several pieces, and "
                   "another thread's can land between them",
                   "先把整行做好，连同换行符，再一次交给 self.out.write：json.dump 和 print 都会"
                   "把一行分几次写，别的线程的内容可能插到中间")
    return None


CALL_KINDS = {"read": ("read_file", {"path": "notes.md"}),
              "missing": ("read_file", {"path": "gone.md"}),
              "unknown": ("fly", {}),
              "refused": ("read_file", {"path": "secret.md"})}


@dataclass(frozen=True)
class Run:
    """The agent's rounds, each a batch of calls (a kind of CALL_KINDS, or a team: a tuple of
    each worker's rounds, each a batch of call kinds)."""

    rounds: tuple

    def __repr__(self) -> str:
        def batch(calls) -> str:
            return "[" + ", ".join(
                say("team ", "团队 ") + ", ".join(
                    f"{name}:{[list(r) for r in worker]}" for name, worker in zip(
                        "ab", call, strict=False)) if isinstance(call, tuple) else call
                for call in calls) + "]"
        return say("rounds: ", "各轮：") + " ".join(batch(r) for r in self.rounds)


def _run_inputs():
    from hypothesis import strategies as st

    kinds = st.sampled_from(list(CALL_KINDS))
    worker = st.lists(st.lists(kinds, min_size=1, max_size=2).map(tuple), max_size=3).map(tuple)
    team = st.lists(worker, min_size=1, max_size=2).map(tuple)
    # a batch holds at most one team: the order its workers finish in is forced (see _traced)
    batch = st.tuples(st.lists(kinds, max_size=2), st.lists(team, max_size=1)).map(
        lambda calls: tuple(calls[0] + calls[1])).filter(bool)
    return st.tuples(st.builds(Run, st.lists(batch, min_size=1, max_size=3).map(tuple)))


class Tape:
    """An `out` that keeps each write, and the thread that made it: a line must come in one
    write, or two threads' halves can interleave."""

    def __init__(self):
        self.writes, self.threads, self.lock = [], [], threading.Lock()

    def write(self, text):
        with self.lock:
            self.writes.append(text)
            self.threads.append(threading.get_ident())
        return len(text)

    def made_here(self) -> int:
        """How many writes the calling thread has made."""
        me = threading.get_ident()
        with self.lock:
            return self.threads.count(me)

    def flush(self):
        pass


class Refuse:
    """A gate that refuses to read secret.md."""

    name = "guard"

    def before(self, tool, args, ws):
        return "secret.md is private" if args.get("path") == "secret.md" else None


# The round another agent's Trace sees each worker begin (no run here has so many rounds)
OTHER_ROUND = 99
LATE = ("the line of a finished call was not written as its ToolCallFinished came",
        "有一个完成了的调用，它的那一行不是在它的 ToolCallFinished 到来时写的")
PRINTED = ("nothing written to out; printed to the screen instead",
           "out 里什么也没写；倒是往屏幕上打印了")


def _inner(event):
    return event.event if isinstance(event, WorkerEvent) else event


def _traced(answer, run: Run) -> str:
    """Run the agent with `answer(tape)` subscribed; the lines it wrote, as sorted tuples (the
    order workers finish in is theirs), or what went wrong. In a team of two, worker a's first
    call finishes only once b has begun its second round, and b's first calls run only once a
    has begun its first round. Another `answer(...)`, as another
    agent in the process would hold, sees each worker begin round OTHER_ROUND just after the
    answer saw it begin its own; and each ToolCallFinished must have its line written while
    the answer handles it (subscribers are called in turn, in the thread that emits)."""
    teams: list[tuple] = []
    begun: list[threading.Event] = []  # per team: b has begun its second round
    started: list[threading.Event] = []  # per team: a has begun its first

    def turn(rounds: tuple, done: int):
        if done == len(rounds):
            return "done"
        calls = []
        for call in rounds[done]:
            if isinstance(call, tuple):  # a team: each worker's task names its plan
                teams.append(call)
                begun.append(threading.Event())
                started.append(threading.Event())
                tasks = [{"name": name, "task": f"team {len(teams) - 1} {name}"}
                         for name, _ in zip("ab", call, strict=False)]
                calls.append({"name": "agent", "arguments": {"tasks": tasks}})
            else:
                name, args = CALL_KINDS[call]
                calls.append({"name": name, "arguments": args})
        return {"tool_calls": calls}

    def model(messages, tools):
        task = messages[1]["content"]  # the first user message: the agent's, or a worker's task
        done = sum(m["role"] == "assistant" for m in messages)
        if task == "go":
            return turn(run.rounds, done)
        _, t, name = task.split()
        team = teams[int(t)]
        rounds = team["ab".index(name)]
        if name == "a" and done == 0:
            started[int(t)].set()
            if rounds and len(team) > 1 and team[1]:
                begun[int(t)].wait(PATIENCE)  # b has a call in its first round: its second begins
        if name == "b" and done == 0 and rounds and team[0]:
            started[int(t)].wait(PATIENCE)  # so a's round 1 begins before b's round 2, however
            # late a's thread starts
        return turn(rounds, done)

    other = answer(Tape())
    late, before = [], threading.local()

    def ahead(event):  # subscribed before the answer: how many lines this thread has written
        if isinstance(_inner(event), ToolCallFinished):
            before.count = tape.made_here()

    def behind(event):  # after it: a finished call's line is written by now, in this thread
        if isinstance(_inner(event), ToolCallFinished) and tape.made_here() == before.count:
            late.append(_inner(event).call.name)

    def elsewhere(event):  # another agent's trace, whose workers of the same names are further on
        if isinstance(_inner(event), RoundStarted):
            moved = RoundStarted(OTHER_ROUND)
            other(WorkerEvent(event.worker, moved) if isinstance(event, WorkerEvent) else moved)

    def second_round(event):  # subscribed after the answer: it has seen b's round 2 by now
        if isinstance(event, WorkerEvent) and event.worker == "b" and \
                event.event == RoundStarted(2):
            for each in begun:  # the running team's; those before it are set already
                each.set()

    tape, printed = Tape(), io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(printed), \
            Seam({"notes.md": "notes\n", "secret.md": "x\n"}) as seam:
        warnings.simplefilter("ignore")  # a subscriber that fails is told below, not warned
        agent = seam.agent(model, [ReadFile()], executor=RunInParallel(), gates=[Refuse()])
        agent.update_tools(add=[AgentTool(workers(agent))])
        agent.subscribe(ahead)
        agent.subscribe(answer(tape))
        agent.subscribe(behind)
        agent.subscribe(elsewhere)
        agent.subscribe(second_round)
        agent.chat("go")
    if seam.error:
        return say("the run ended: ", "运行出错：") + str(seam.error)
    if agent.failed_subscribers:
        return say("your subscriber raised, and the agent went on without it",
                   "你的订阅者抛出了异常，智能体没有它也继续跑了")
    if not tape.writes and printed.getvalue():
        return say(*PRINTED)
    pieces = [w for w in tape.writes if not (w.endswith("\n") and w.count("\n") == 1)]
    if pieces:
        return say(f"a line written in pieces: {pieces[0]!r}", f"一行分成几次写：{pieces[0]!r}")
    if late and tape.writes:
        return say(*LATE)
    try:
        rows = [json.loads(w) for w in tape.writes]
        return repr(sorted((r["worker"], r["round"], r["tool"], r["status"]) for r in rows))
    except (ValueError, KeyError, TypeError) as e:
        return say(f"a line that is not the record asked for ({e})", f"有一行不是要求的记录（{e}）")


TRACE = Exercise(
    "ch09.trace", Trace, _run_inputs,
    lambda args: say(f"Trace(out) on {args[0]!r}", f"Trace(out)，输入：{args[0]!r}"), run=_traced,
    show=str, diagnose=_trace_diagnose, max_examples=40, shrink=False,
    examples=[(Run((("read", "missing"), ("unknown",))),),
              (Run((((((("read",), ("read",)), (("read",), ("read",))),),),)),),
              (Run(((((("read", "refused"),), (("missing",),)),), ("read",))),)],
    domain=("runs of one to three rounds of calls (a read, a file that is not there, a tool "
            "that does not exist, a call a gate refuses) and teams of one or two workers, each "
            "with rounds of its own, finishing in a forced order",
            "一到三轮调用（读文件、读不存在的文件、调用不存在的工具、被关卡拒绝的调用），有时还有一"
            "到两个 worker 的团队，各自有自己的轮次，完成的先后顺序是强制安排好的"),
    rule=("write one JSON line per ToolCallFinished, in one write: the worker (\"\" for the agent "
          "itself), the round that worker is in (the round of its last RoundStarted: a later team "
          "may use the same name, starting again at 1), the tool and the status",
          "每个 ToolCallFinished 写一行 JSON，一次写完"
          "：worker（智能体自己是 \"\"）、这个 worker 当前"
          "所在的轮次（它最近一个 RoundStarted 的 round"
          "：后面的团队可能用同一个名字，又从 1 开始）、"
          "工具名和状态"),
    shape=("worker = event.worker if isinstance(event, WorkerEvent) else \"\"; unwrap the event; "
           "on RoundStarted: self.rounds[worker] = event.round; on ToolCallFinished: one "
           "self.out.write(json.dumps({...}) + \"\\n\") under a lock",
           "worker = event.worker if isinstance(event, WorkerEvent) else \"\"；把事件拆出来；"
           "RoundStarted 时 self.rounds[worker] = event.round；ToolCallFinished 时在锁里调用一次 "
           "self.out.write(json.dumps({...}) + \"\\n\")"),
    mistakes=[
        Mistake("        counter = worker  # each worker counts its own rounds",
                "        counter = \"\"", (
                    "one round for everyone: workers run side by side, so a worker's call was "
                    "written with another's round. Keep a round per worker",
                    "所有人共用一个轮次：worker 是同时跑的，"
                    "一个 worker 的调用被记上了另一个的轮次。"
                    "每个 worker 各记各的轮次")),
        Mistake("        worker = event.worker if isinstance(event, WorkerEvent) else \"\"",
                "        worker = \"\"", (
                    "a worker's call was written as the agent's own: name the worker "
                    "(WorkerEvent.worker)",
                    "worker 的调用被记成了智能体自己的：要写上 worker "
                    "的名字（WorkerEvent.worker）")),
        Mistake("                self.out.write(line + \"\\n\")",
                "                self.out.write(line), self.out.write(\"\\n\")", (
                    "a line in two writes (print(line, file=out) is two as well: the line, then "
                    "its newline): between them another thread's line can land, and the file "
                    "holds two halves glued together. Write each whole line in one call",
                    "一行分两次写（print(line, file=out) 也是两次：先写这一行，再写换行符）：两次"
                    "之间别的线程的一行可能插进来，文件里就是两半粘在一起。每个整行一次写完")),
        Mistake("        elif isinstance(event, ToolCallFinished):",
                "        elif isinstance(event, WorkerEvent):", (
                    "a call is written once it finished (ToolCallFinished), whoever made it: "
                    "unwrap a worker's event first",
                    "调用完成时（ToolCallFinished）写一"
                    "行，不管是谁发起的：先把 worker 的事件拆出来")),
    ],
)
