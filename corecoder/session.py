"""Sessions: the conversation on disk, so that a crash or a closed terminal never costs it.

A session is an append-only JSONL file, `HOME/sessions/<id>.jsonl`, one record a line:

    {"type": "meta", "id": ..., "created": ..., "cwd": ..., "model": ..., "format": 1}   first
    {"type": "message", "message": {...}}          one per message added to the history
    {"type": "model", "model": ...}                the model was switched
    {"type": "history", "messages": [...]}         the history was rewritten (compaction)
    {"type": "todos", "todos": [...]}              the todo list changed
    {"type": "usage", "model": ..., "usage": {...}}   one model call's tokens (for /tokens)

A file whose meta line names a newer format than FORMAT is refused, in one line: what a newer
engine writes, this one may read wrong. A file with no format (written before formats) has the
same records as format 1, and is read as it is.

Replay starts from the last "history" record and applies the messages after it. Nothing
written is rewritten, so a crash can only cut the last line short: `load` drops it and
answers any tool call left waiting (an unanswered call gets a 400 from then on). The
recorder needs no change to the loop: it listens to the agent's events and, as each round
starts and as a run ends, writes whatever the history gained since; and a reply that asks for
tool calls is written before they run, so a crash in the middle of one leaves it answered.
"""

from __future__ import annotations

import bisect
import functools
import json
import os
import re
import secrets
import stat
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from .events import Finished, ReasoningDelta, RoundStarted, TextDelta, UsageReported, WorkerEvent
from .messages import CUT_SHORT, IllegalHistory, Reply, Usage, check_history, tool_result
from .tools.todo import MARKS

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None


ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
USAGE_FIELDS = ("prompt_tokens", "completion_tokens", "cached_tokens")
FORMAT = 1  # of the session file, in its meta line: a file of a newer format is not resumed


class SessionError(Exception):
    """A session id that is not allowed, a session that does not exist, or a damaged file."""


class SessionLog:
    """Records one agent's history into one session file: `SessionLog(home).attach(agent)`.

    To resume, `SessionLog(home, id, resume=True)`: `.meta["model"]` is the model it used, and
    `attach` hands the agent the repaired history. `model_of(agent)` names the model to log;
    pass one giving "provider/model", so that resuming picks the provider too.
    """

    def __init__(self, home: Path | str, session_id: str | None = None, *, resume: bool = False,
                 model_of: Callable | None = None, on_error: Callable[[str], None] | None = None):
        if session_id is None:
            session_id = new_id()
            while (Path(home, "sessions") / f"{session_id}.jsonl").exists():
                session_id = new_id()
        self.path = session_path(home, session_id)
        self.id = self.path.stem
        # a new session is written first under a name of its own (see `_write`)
        self.draft = self.path.with_name(f".{self.id}.{secrets.token_hex(4)}.tmp")
        if not resume and self.path.exists():
            raise SessionError(f"session {self.id!r} already exists; resume it, or pick another "
                               "name")
        self.model_of = model_of or (lambda agent: agent.llm.model)
        self.on_error = on_error or (lambda text: print(f"warning: {text}", file=sys.stderr))
        self.agent = None
        self.lock = threading.Lock()
        self.meta: dict | None = None  # set when resuming: `attach` then hands the history over
        # The message objects written so far, or None: write the whole history next time.
        # (A repaired history needs no rewrite: replaying the file repairs it the same way.)
        self.logged: list[dict] | None = []
        self.model: str | None = None  # the model last written; None before the meta line
        self.claimed: int | None = None  # an open file holding the lock: see `claim`
        self.restate = False
        self.todos: list[dict] = []  # the todo list last written
        self.usage: list[dict] = []  # usage records not written yet
        self.calling: dict | None = None  # a reply written before its calls ran: see `_run`
        self.said: dict[type, list[str]] = {TextDelta: [], ReasoningDelta: []}  # this round's
        if resume:
            self.claim()
            try:
                self.logged, self.meta = load(home, self.id)
            except BaseException:  # not resumed: the lock goes with the attempt
                self.close()
                raise
            self.model = self.meta.get("model") or ""
            self.todos = self.meta["todos"]
            damaged = self.meta.pop("damaged")
            for problem in damaged:
                self.on_error(f"session {self.id}: {problem}: skipped, the rest is resumed")
            if damaged:  # the next write states the whole history, so the file replays to it
                self.restate = True

    def close(self) -> None:
        """Let another process (or another SessionLog) resume this session."""
        if self.claimed is not None:
            os.close(self.claimed)  # the lock goes with it
            self.claimed = None

    def claim(self) -> None:
        """Hold the session file's lock while this process writes it: a second corecoder that
        resumes the same session is refused. (Two writers interleave their lines, and when their
        call ids collide no replay can make a legal history of them.) The lock is the system's
        (flock): it goes when the process does, however it ends."""
        if self.claimed is not None or fcntl is None:  # (Windows: no flock; not guarded there)
            return
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except FileNotFoundError:
            return  # `load` says it does not exist
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            self.claimed = fd
        except BaseException as e:  # held by another; or a Ctrl+C as it was taken: let go of it
            os.close(fd)
            if isinstance(e, BlockingIOError):
                raise SessionError(f"session {self.id!r} is open in another corecoder: go on "
                                   "there, or start a new session here") from None
            raise

    def attach(self, agent) -> SessionLog:
        self.agent = agent
        if self.meta is not None:
            agent.messages = list(self.logged)  # the same objects: what follows is an extension
            agent.workspace.todos = list(self.todos)
            if self.restate:
                self.logged = None
        agent.subscribe(self._observe)
        agent.executor = functools.partial(self._run, agent.executor)
        return self

    def _observe(self, event) -> None:
        usage = event
        while isinstance(usage, WorkerEvent):  # a sub-agent's calls are the session's cost too
            usage = usage.event
        if isinstance(usage, UsageReported):
            with self.lock:
                self.usage.append({"type": "usage", "model": usage.model,
                                   "usage": vars(usage.usage)})
        if isinstance(event, RoundStarted):  # what the model says this round, as it comes (`_run`)
            self.said = {TextDelta: [], ReasoningDelta: []}
        elif isinstance(event, (TextDelta, ReasoningDelta)):
            self.said[type(event)].append(event.text)
        if isinstance(event, (RoundStarted, Finished)):
            self.flush()

    def _run(self, executor, calls: list, agent, results: dict) -> None:
        """The agent's executor, run once the reply asking for `calls` is on disk. The loop adds
        a reply to the history only with its results (`Agent.answer`): written only then, a
        process killed while a tool ran would leave no trace of the call. Written first, a
        resume answers it as cut short, and the model is told. The reply is rebuilt as the loop
        will add it; should it differ after all, the next write restates the history.
        (Sub-agents run their calls with this executor too: theirs are not this session's.)"""
        if agent is self.agent:
            text, thought = ("".join(self.said[kind]) for kind in (TextDelta, ReasoningDelta))
            keep = getattr(agent.llm, "keep_reasoning", False)
            self.flush(calling=Reply(text, calls, thought, keep_reasoning=keep).message())
        executor(calls, agent, results)

    def flush(self, calling: dict | None = None) -> None:
        """Write what the history gained, if the session has said anything, and then `calling`,
        a reply whose calls are about to run. A failure is said (`on_error`), not raised: a full
        disk must not end the turn, and the next write tries again. The command calls it as it
        leaves too: a Ctrl+C can land while the event that writes a turn is being handed round,
        before it reaches this log."""
        try:
            self._sync(force=False, calling=calling)
        except OSError as e:
            self.on_error(f"session {self.id} was not saved: {e.strerror or e}")

    def save(self) -> Path:
        """Write what the history gained since the last write (`/save`); raises OSError."""
        self._sync(force=True)
        return self.path

    def _sync(self, force: bool, calling: dict | None = None) -> None:
        with self.lock:
            messages = list(self.agent.messages)  # a snapshot: the loop may append meanwhile
            model = self.model_of(self.agent)
            lines = []
            if self.model is None:
                if not messages and not force:
                    return  # no file for a session that never said anything
                created = datetime.now().astimezone().isoformat(timespec="seconds")
                lines.append({"type": "meta", "id": self.id, "created": created,
                              "cwd": str(self.agent.workspace.cwd), "model": model,
                              "format": FORMAT})
            elif model != self.model:
                lines.append({"type": "model", "model": model})
            old, early = self.logged, self.calling
            if old is not None and extends(old, messages) and (
                    early is None or messages[len(old):len(old) + 1] == [early]):
                new = messages[len(old) + (early is not None):]  # the early reply is down already
                lines += [{"type": "message", "message": m} for m in new]
            else:  # compaction (or anyone) replaced older messages, or the early reply differs:
                # appending can't express that
                lines.append({"type": "history", "messages": messages})
            if calling is not None:
                lines.append({"type": "message", "message": calling})
            todos = list(self.agent.workspace.todos)
            if todos != self.todos:
                lines.append({"type": "todos", "todos": todos})
            lines += self.usage
            try:
                if lines:
                    self._write(lines, new=self.model is None)
                self.model, self.logged, self.todos, self.usage = model, messages, todos, []
                self.calling = calling
            except BaseException:  # a full disk, a Ctrl+C at any point: the next write restates all
                self.logged = None  # (some lines may be down, some not)
                raise
            if self.model is not None:  # the draft is the session now: its other name can go
                self.draft.unlink(missing_ok=True)

    def _write(self, records: list[dict], new: bool) -> None:
        """Append `records`. A new session's first records go to its draft, which is then linked
        to the session's name: the link fails if the name is taken (two starts that picked one
        name never share a file), and a write that a Ctrl+C stopped after the link finds the
        draft is the session already (two names, one file), so it appends there."""
        # (the draft's random name is ours alone: a second name for it is the session's)
        draft = new and not (self.draft.exists() and self.draft.stat().st_nlink > 1)
        fd = _append_fd(self.draft if draft else self.path, draft)
        try:
            _cut_torn_tail(fd)
            for record in records:
                data = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
                while data:  # one write per line, normally; a short write is finished, not torn
                    data = data[os.write(fd, data):]
            os.fsync(fd)
        finally:
            os.close(fd)
        if draft:
            os.link(self.draft, self.path)  # FileExistsError: another start took the name
            _sync_dir(self.path.parent)  # so the new file's name survives a power cut too
        self.claim()


def load(home: Path | str, session_id: str) -> tuple[list[dict], dict]:
    """The session's history, repaired to be legal, and its meta (with the model last in use,
    and under "damaged" what could not be read, line by line: the rest is kept)."""
    path = session_path(home, session_id)
    damaged: list[str] = []
    messages, meta = _replay(_records(_read(path), damaged), path.stem, damaged)
    return repair(messages, damaged), {**meta, "damaged": damaged}


def _replay(records: list[tuple[int, dict]], name: str,
            damaged: list[str]) -> tuple[list[dict], dict]:
    meta = {"id": name, "created": None, "cwd": None, "model": None, "todos": [], "usage": []}
    messages: list[dict] = []
    for line, record in records:
        kind = record.get("type")
        if kind in ("meta", "model"):  # their text only: todos and usage have records of their own
            for key in ("id", "created", "cwd", "model") if kind == "meta" else ("model",):
                if isinstance(record.get(key), str):
                    meta[key] = record[key]
                elif record.get(key) is not None:  # as if absent: the command would start model 5
                    damaged.append(f"line {line} is a {kind} record whose {key} is not text")
        elif kind in ("message", "history"):
            batch = [record.get("message")] if kind == "message" else record.get("messages")
            if not (isinstance(batch, list) and all(_message_ok(m) for m in batch)):
                damaged.append(f"line {line} is a malformed {kind} record")
                continue
            # a message joins the end, a history replaces them all; in place, as a copy of the
            # whole list for each record would make replaying quadratic
            messages[len(messages) if kind == "message" else 0:] = batch
        elif kind == "todos":
            todos = record.get("todos")  # a status todo_write does not know could not be shown
            if not (isinstance(todos, list) and all(isinstance(t, dict) and all(isinstance(
                    t.get(k), str) for k in ("content", "status")) and t["status"] in MARKS
                    for t in todos)):
                damaged.append(f"line {line} is a malformed todos record")
                continue
            meta["todos"] = todos
        elif kind == "usage":
            counts = record.get("usage")
            try:
                usage = Usage(**{k: int(counts[k]) for k in USAGE_FIELDS if k in counts})
                meta["usage"].append((str(record["model"]), usage))
            except (KeyError, TypeError, ValueError, OverflowError):  # OverflowError: 1e999
                damaged.append(f"line {line} is a malformed usage record")
        # other types: written by a newer version; skipping them keeps old versions able to resume
    return messages, meta


@dataclass(frozen=True)
class SessionInfo:
    id: str
    modified: float  # seconds since the epoch
    messages: int
    preview: str  # the first thing the user asked, on one line
    cwd: str | None = None  # where it started


def list_sessions(home: Path | str) -> list[SessionInfo]:
    """Every session in HOME/sessions, newest first. A damaged one is listed, and says so."""
    folder = Path(home, "sessions")
    rows = []
    for entry in folder.glob("*.jsonl") if folder.is_dir() else []:
        try:
            path = session_path(home, entry.stem)
            modified = path.stat().st_mtime
        except (SessionError, OSError):
            continue  # a bad name, or a link leading out: never read
        try:
            damaged: list[str] = []  # listed anyway: resuming says what was skipped
            records = _records(_read(path), damaged)
            messages, meta = _replay(records, path.stem, damaged)
            count, cwd = len(messages), meta["cwd"]
            batches = (r.get("messages") if r.get("type") == "history" else [r.get("message")]
                       for _, r in records)
            first = next((m for batch in batches if isinstance(batch, list) for m in batch
                          if _message_ok(m) and m["role"] == "user"), {})
            preview = " ".join(first.get("content", "").split())
            if damaged:
                preview = f"[damaged: {', '.join(damaged)}] {preview}"
        except SessionError as e:
            count, preview, cwd = 0, f"[damaged: {e}]", None
        rows.append(SessionInfo(path.stem, modified, count, preview[:72], cwd))
    return sorted(rows, key=lambda row: (row.modified, row.id), reverse=True)


def new_id() -> str:
    """`20261130-185959-ab12`: sorts by time, and the random part keeps two starts apart."""
    return f"{datetime.now():%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"


def session_path(home: Path | str, session_id: str) -> Path:
    """The file for a user-given id, or SessionError. Nothing outside the sessions dir, ever.

    The id is checked, not cleaned up (beyond stray spaces and a pasted ".jsonl"): quietly
    turning "../x" into "x" would open a session the user did not name. The resolved path
    is checked too, so an entry that is a symlink to somewhere else is refused, not followed.
    """
    if not isinstance(session_id, str):
        raise SessionError(f"a session id must be text, got {type(session_id).__name__}")
    clean = session_id.strip().removesuffix(".jsonl")
    if not ID.fullmatch(clean):
        raise SessionError(f"bad session id {session_id[:80]!r}: use 1 to 64 letters, digits, "
                           "'-' or '_'")
    folder = Path(home, "sessions").resolve()
    path = (folder / f"{clean}.jsonl").resolve()
    if path.parent != folder:
        raise SessionError(f"session {clean!r} points outside {folder}; refusing to use it")
    return path


def _records(data: bytes, damaged: list[str]) -> list[tuple[int, dict]]:
    """The records with their line numbers. A broken last line is a crash mid-write: dropped.
    A broken line before it (a hand edit, a disk error) is skipped, and said in `damaged`."""
    lines = data.split(b"\n")
    last = max((i for i, line in enumerate(lines) if line.strip()), default=-1)
    records = []
    for i, line in enumerate(lines[: last + 1]):
        try:
            record = json.loads(line)
        except RecursionError:  # nested too deep for json; no line of ours is, so never a torn one
            damaged.append(f"line {i + 1} is nested too deep to read")
            continue
        except ValueError:
            if i != last and line.strip():
                damaged.append(f"line {i + 1} is not JSON")
            continue
        if not isinstance(record, dict):
            damaged.append(f"line {i + 1} is not a record")
            continue
        records.append((i + 1, record))
    return records


def repair(messages: list[dict], damaged: list[str] | None = None) -> list[dict]:
    """A legal history from one a crash may have cut short.

    Each assistant's calls get their results right after it, in call order: the one that
    was logged, or CUT_SHORT if the session ended first. A result that answers no call
    there is dropped. What still breaks the rule (a hand-edited file, two writers whose call
    ids collided) is an error; given `damaged`, the history is instead kept up to the last
    turn that is still legal, and what was left out is said there.
    """
    fixed: list[dict] = []
    for i, message in enumerate(messages):
        if message["role"] == "tool":
            continue  # placed with its call below, or an orphan
        fixed.append(message)
        calls = (message.get("tool_calls") or []) if message["role"] == "assistant" else []
        answers: dict = {}
        j = i + 1
        while calls and j < len(messages) and messages[j]["role"] == "tool":
            answers.setdefault(messages[j].get("tool_call_id"), messages[j])  # a second is dropped
            j += 1
        for call in calls:
            call_id = call.get("id") if isinstance(call, dict) else None
            fixed.append(answers.get(call_id) or tool_result(call_id, CUT_SHORT))
    try:
        check_history(fixed)
    except (IllegalHistory, AttributeError, TypeError) as e:  # malformed calls trip the check too
        kept = _legal_head(fixed) if damaged is not None else []
        if not kept:
            raise SessionError(f"the session cannot be repaired into a legal history: {e}") \
                from None
        damaged.append(f"its last {len(fixed) - len(kept)} messages cannot be made a legal "
                       f"history ({e})")
        return kept
    return fixed


# --- defences: a crash mid-line, a damaged file, an id that would lead outside ---------------


def _message_ok(message) -> bool:
    """Would the chat API take `message` as the engine writes one? A role, text content and no
    field the API does not know (it refuses one: "Additional properties are not allowed"); a
    result names the call it answers; an assistant's calls, if it has any, are one or more,
    each an id, the type "function" and a function: a name and text arguments. A hand edit or
    a bad disk can put anything in a line, and what the API refuses fails every later request."""
    fields = {"system": set(), "user": set(), "tool": {"tool_call_id"},
              "assistant": {"tool_calls", "reasoning_content"}}
    role = message.get("role") if isinstance(message, dict) else None
    if (role not in fields or not set(message) <= {"role", "content", *fields[role]}
            or "content" not in message or (role == "tool" and not message.get("tool_call_id"))
            or not all(isinstance(v, str) for k, v in message.items() if k != "tool_calls")):
        return False
    calls = message.get("tool_calls", [])
    if "tool_calls" in message and not (isinstance(calls, list) and calls):
        return False  # an empty list is refused too
    for call in calls:
        function = call.get("function") if isinstance(call, dict) else None
        if not (isinstance(function, dict) and set(call) == {"id", "type", "function"}
                and call["type"] == "function" and set(function) == {"name", "arguments"}
                and all(isinstance(v, str) for v in (call["id"], *function.values()))
                and call["id"] and function["name"]):
            return False
    return True


def _append_fd(path: Path, draft: bool) -> int:
    # O_NOFOLLOW: a symlink planted after the check above is refused, not followed.
    # A draft starts over: what a stopped write left in it was never the session's.
    path.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | (os.O_TRUNC if draft else 0)
    return os.open(path, flags, 0o600)


def _read(path: Path) -> bytes:
    try:  # O_NONBLOCK: a FIFO planted in the sessions dir must not hang /sessions or --resume
        with os.fdopen(os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK), "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                raise SessionError(f"cannot read session {path.stem!r}: not a regular file")
            return _known_format(f.read(), path)
    except FileNotFoundError:
        raise SessionError(f"no session {path.stem!r} in {path.parent}; /sessions lists "
                           "them") from None
    except OSError as e:  # a directory, a link planted since the check, no permission
        raise SessionError(f"cannot read session {path.stem!r}: {e.strerror or e}") from None


def _known_format(data: bytes, path: Path) -> bytes:
    """The file's bytes, unless its meta line says a newer engine wrote it: this one might
    read it wrong, and a resume would append to it in an older format. (A first line that is
    not a record is the replay's to report, as damage.)"""
    try:
        first = json.loads(data.split(b"\n", 1)[0])
    except (ValueError, RecursionError):  # RecursionError: a line nested too deep
        return data
    written = first.get("format") if isinstance(first, dict) else None
    if type(written) is int and written > FORMAT:
        raise SessionError(f"session {path.stem!r} was written by a newer corecoder (session "
                           f"format {written}; this one reads up to {FORMAT}): upgrade "
                           "corecoder to resume it")
    return data


def _legal_head(messages: list[dict]) -> list[dict]:
    """The longest run of whole turns from the start that is a legal history ([] if none).
    Cut where a turn begins, a run leaves no call waiting; so once a run is illegal, every longer
    one is too, and a binary search finds the longest legal one in a few checks (trying each
    turn from the end, each of a long history, made a resume of a long session damaged midway
    take minutes)."""
    def illegal(end: int) -> bool:
        try:
            check_history(messages[:end])
        except (IllegalHistory, AttributeError, TypeError):
            return True
        return False

    ends = [i for i, m in enumerate(messages) if m["role"] == "user" and i]
    legal = bisect.bisect_left(ends, True, key=illegal)  # the turns that end a legal run
    return messages[: ends[legal - 1]] if legal else []


def extends(old: list[dict], new: list[dict]) -> bool:
    """Is `new` the list `old` with messages added at its end, the same objects, not copies?"""
    return len(old) <= len(new) and all(a is b for a, b in zip(old, new[: len(old)], strict=True))


def _cut_torn_tail(fd: int) -> None:
    """Drop a last line a crash cut short, so the next line does not glue onto it. A whole
    record that only lacks its newline (a hand edit leaves that) is kept: it gets one."""
    size = os.fstat(fd).st_size
    if size and os.pread(fd, 1, size - 1) != b"\n":
        data = os.pread(fd, size, 0)  # rare: a crash mid-line, a failed write, a hand edit
        start = data.rfind(b"\n") + 1
        try:
            whole = isinstance(json.loads(data[start:]), dict)
        except RecursionError:  # nested too deep: no line of ours, torn or not; kept, and said
            whole = True
        except ValueError:
            whole = False
        if whole:
            os.write(fd, b"\n")
        else:
            os.ftruncate(fd, start)


def _sync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
