"""The suite's one helper kit. For tests of the loop: small tools, each doing one predictable
thing. For tests of the command: a clean environment, a run of `corecoder`, a terminal read until a
pattern shows. For the reliability trials: a tree's fingerprint, and the demo task driven through
the real client against the loopback server."""

import contextlib
import copy
import hashlib
import os
import re
import select
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from corecoder import LLM, build_agent
from corecoder.demo import SCRIPT, TASK, copy_project
from corecoder.testing import ScriptServer
from corecoder.tool import Tool, ToolError


class Echo(Tool):
    name = "echo"
    description = "Return the text."
    parameters = {"type": "object", "properties": {"text": {"type": "string"}, "times": {"type": "integer"}},
                  "required": ["text"], "additionalProperties": False}

    def __init__(self):
        self.ran = []

    def run(self, ws, text, times=1):
        self.ran.append(text)
        return text * times


class Boom(Tool):
    """Fails the way the environment fails: raises, or is interrupted by the user."""

    name = "boom"
    description = "Raise."
    parameters = {"type": "object", "properties": {"kind": {"type": "string"}}, "required": ["kind"],
                  "additionalProperties": False}

    def run(self, ws, kind):
        if kind == "interrupt":
            raise KeyboardInterrupt
        if kind == "tool_error":
            raise ToolError("the disk said no")
        raise ValueError("something broke")


def run_and_kill(script: str, args: list[str], delay: float) -> None:
    """Run `python -c script args...`, wait for it to print "go", let it work `delay` seconds,
    then kill -9 it: the crash tests' way of stopping a writer at a random moment."""
    import signal
    import subprocess
    import sys
    import time

    child = subprocess.Popen([sys.executable, "-c", script, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = child.stdout.readline()
    if line == b"go\n":
        time.sleep(delay)
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert line == b"go\n", child.stderr.read().decode()


def call(name, **arguments) -> dict:
    """A tool call as a script's turn lists it."""
    return {"name": name, "arguments": arguments}


def results(agent) -> list[str]:
    """The tool results in the agent's history, in order."""
    return [m["content"] for m in agent.messages if m["role"] == "tool"]


def environment(server: ScriptServer | None, home: Path, **extra) -> dict:
    """The machine's environment without any model settings, then ours: no real key can leak in.
    Nor a terminal size: parallel test workers set COLUMNS=80, which would outvote the size of a
    pseudo-terminal a test opens."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")
           and not k.startswith(("OPENAI_", "CORECODER_")) and not k.endswith("_API_KEY")}
    # a child that hangs can be asked where (SIGABRT: every thread's stack, on its stderr)
    env.update(CORECODER_HOME=str(home), PYTHONFAULTHANDLER="1", **extra)
    if server is not None:
        env.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="x", CORECODER_MODEL="scripted")
    return env


def ended(proc: subprocess.Popen, timeout: float) -> tuple[str, str]:
    """What the command printed once it ended, stdout and stderr; if it has not ended within
    `timeout`, a failure that shows where each of its threads stood (PYTHONFAULTHANDLER, set by
    `environment`), instead of a bare timeout."""
    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)
        _, err = proc.communicate(timeout=30)
        raise AssertionError(f"still running after {timeout} s; where its threads were:\n"
                             f"{err[-8000:]}") from None


def corecoder(*args, cwd: Path, env: dict, timeout: float = 60, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "corecoder", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout, **kwargs)


def read_until(fd: int, pattern: str, seen: bytearray, timeout: float = 15) -> str:
    """Read a terminal until `pattern` shows up in its text (escape codes removed). Where the
    program asks where the cursor is (a terminal(cpr=True)), the answer is: the top left."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\r", "", seen.decode(errors="replace"))
        if re.search(pattern, text):
            return text
        if select.select([fd], [], [], 0.1)[0]:
            try:
                piece = os.read(fd, 65536)
            except OSError:  # the other end closed
                break
            seen += piece
            for _ in range(piece.count(b"\x1b[6n")):
                os.write(fd, b"\x1b[1;1R")
    raise AssertionError(f"{pattern!r} never appeared in: {seen.decode(errors='replace')!r}")


@contextlib.contextmanager
def terminal(cwd: Path, env: dict, *args: str, cpr: bool = False):
    """`corecoder ARGS` in a pseudo-terminal of its own, as a shell starts it: (process, fd,
    output). `cpr`: prompt_toolkit asks where the cursor is, as in a real terminal (read_until
    answers), and so draws what needs the screen's height (the status line under the prompt)."""
    import fcntl
    import pty
    import struct
    import termios

    main, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))

    def own_terminal():
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    env = {**env, "TERM": "xterm-256color", **({} if cpr else {"PROMPT_TOOLKIT_NO_CPR": "1"})}
    proc = subprocess.Popen([sys.executable, "-m", "corecoder", *args], cwd=cwd, env=env, stdin=child,
                            stdout=child, stderr=child, preexec_fn=own_terminal)
    os.close(child)
    try:
        yield proc, main, bytearray()
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        os.close(main)


def fingerprint(root: Path) -> dict[str, str]:
    """Every entry under root, links not followed: a file's hash, a link's target, or "dir"."""
    seen = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder, name)
            rel = str(path.relative_to(root))
            if path.is_symlink():
                seen[rel] = "-> " + os.readlink(path)
            elif path.is_dir():
                seen[rel] = "dir"
            else:
                seen[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return seen


def without_ids(messages: list[dict]) -> list[dict]:
    """The history with each tool-call id replaced by its order of appearance: two runs whose
    scripts number their calls differently compare equal when they say the same things."""
    names: dict[str, str] = {}

    def alias(call_id: str) -> str:
        return names.setdefault(call_id, f"call#{len(names) + 1}")

    out = copy.deepcopy(messages)
    for message in out:
        for call in message.get("tool_calls") or []:
            call["id"] = alias(call["id"])
        if message["role"] == "tool":
            message["tool_call_id"] = alias(message["tool_call_id"])
    return out


# The demo task (corecoder/demo), and a variant whose every tool round also reads test_stats.py:
# two calls a round, so the dialects that number parallel calls oddly have something to get wrong.
PARTNER = {"name": "read_file", "arguments": {"path": "test_stats.py"}}
DEMO = [copy.deepcopy(t) for t in SCRIPT]
PAIRED = [{**t, "tool_calls": [*t["tool_calls"], PARTNER]} if isinstance(t, dict) else t for t in DEMO]
ROUNDS = len(DEMO)


def as_dict(turn) -> dict:
    return copy.deepcopy(turn) if isinstance(turn, dict) else {"text": turn}


@dataclass
class Run:
    answer: str
    messages: list[dict]
    stats: str  # stats.py after the run: the fix
    requests: list[dict]  # the bodies of every chat request the server received
    sleeps: list[float]
    events: list = field(default_factory=list)


def run_demo(turns: list, workdir: Path, *, stream: bool = True) -> Run:
    """The demo task, on a fresh copy of its project, through corecoder.LLM against a ScriptServer.
    Backoff sleeps are recorded, not slept."""
    project = copy_project(workdir)
    sleeps: list[float] = []
    with ScriptServer(turns) as server:
        llm = LLM("scripted", base_url=server.base_url, api_key="x", sleep=sleeps.append, seed=1, stream=stream)
        agent = build_agent(llm, project)
        events: list = []
        agent.subscribe(events.append)
        answer = agent.chat(TASK)
    bodies = [r["body"] for r in server.requests if r["path"].endswith("/chat/completions")]
    return Run(answer, agent.messages, (project / "stats.py").read_text(), bodies, sleeps, events)
