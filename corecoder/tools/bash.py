"""bash: run a shell command, bounded in time and in memory, and remember where it `cd`s.

The command runs as `bash -c COMMAND` in the workspace's cwd, with stdin closed (a
prompt fails at once instead of waiting for input no one will type) and in a process
group of its own, so a timeout can kill everything it started, `sleep 100 &` included.
Both pipes are read as output arrives, so a timeout keeps what was printed before it.
Each stream keeps its first and last MiB; `yes` for a minute costs 2 MiB, not gigabytes.

Where `cd` leads. Each call is a fresh shell, so `cd` must be carried over by hand.
Parsing the command for `cd DIR` is guesswork (quotes, `$VAR`, `if ...; then cd x`,
`pushd`, functions). Instead bash is asked: before the command runs, bash sources a
tiny startup file (named by BASH_ENV) that sets an EXIT trap writing `pwd` to a temp
file. Only the top-level shell runs that trap (subshells, `$(...)`, pipes and nested
`bash -c` do not), so a `cd` counts exactly when it moved the shell that ran the
command. The command text is passed to bash untouched: its output, exit code and even
its syntax-error messages ("line 1: ...") are what the user would see, and `cd x && exit
3` is tracked too. Nothing is tracked when the call times out, or when the command
replaces the EXIT trap with one of its own or `exec`s another program.

The blocklist below is a guard against slips (one typo from `rm -rf ./build` to
`rm -rf / build`), NOT a sandbox: `eval`, variables, scripts or a little creativity
get past it. Real isolation needs a container or a VM.
"""

from __future__ import annotations

import os
import selectors
import shlex
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import regex

from ..files import remove_stale
from ..text import marker
from ..tool import Tool, ToolError
from ..workspace import Workspace

DEFAULT_TIMEOUT = 120
MAX_TIMEOUT = 600
SCRATCH = "corecoder-bash-"  # the prefix of each call's temp folder
# Of each stream, the head and the tail kept: the agent bounds what the model is shown,
# this bounds what is held in memory (`yes` for a minute costs 2 MiB, not gigabytes).
KEEP_BYTES = 1 << 20
# After the shell exits, a background job (`server &`) may hold the pipes open forever:
# read on this long for output already on its way, then stop.
AFTER_EXIT_SECONDS = 0.2


class Bash(Tool):
    name = "bash"
    description = (
        "Run a bash command in the working directory; get stdout, stderr and the exit code. "
        "No stdin; `cd` carries over to later calls. Killed with all it started after `timeout` "
        f"s (default {DEFAULT_TIMEOUT}, at most {MAX_TIMEOUT}), keeping the output so far. "
        "Background jobs outlive the call: send their output to a file. Refuses commands that "
        "wipe the system (rm -rf /, mkfs...)."
    )
    parameters = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The bash command line (may span lines)."},
            "timeout": {"type": "integer", "minimum": 1, "maximum": MAX_TIMEOUT,
                        "default": DEFAULT_TIMEOUT},
        },
        "required": ["command"],
        "additionalProperties": False,
    }
    mutating = True

    def __init__(self) -> None:
        self.running: set[subprocess.Popen] = set()  # the shells of the calls running now
        # what a killed corecoder left: the scratch folders of its calls
        remove_stale(Path(tempfile.gettempdir()), SCRATCH, folders=True)

    def stop_all(self) -> None:
        """Kill every command still running, with all it started. For the moment the agent's
        process ends (a closed terminal, SIGTERM, a second Ctrl+C): a command runs in a process
        group of its own, which no signal to the agent reaches, so it would run on alone."""
        for proc in list(self.running):  # a copy: the calls' threads change the set
            kill_group(proc)

    def run(self, ws: Workspace, command: str, timeout: int = DEFAULT_TIMEOUT) -> str:
        if not command.strip():
            raise ToolError("command is empty")
        reason = blocked_reason(command)
        if reason:
            raise ToolError(f"refused: {reason}. If it is really meant, ask the user to run it "
                            "themselves.")
        gone = ws.cwd
        while not ws.cwd.is_dir():  # the cwd was deleted: stand in its nearest surviving parent
            ws.cwd = ws.cwd.parent
        note = f"[note: {gone} no longer exists; running in {ws.cwd}]\n" if ws.cwd != gone else ""
        with tempfile.TemporaryDirectory(prefix=SCRATCH) as scratch:
            where = Path(scratch) / "cwd"  # the EXIT trap writes the shell's last cwd here
            startup = Path(scratch) / "startup.sh"
            startup.write_text(startup_script(where, os.environ.get("BASH_ENV")))
            # A pager waiting for a keypress would hang the call until its timeout.
            env = {**os.environ, "PAGER": "cat", "GIT_PAGER": "cat", "TERM": "dumb",
                   "BASH_ENV": str(startup)}
            out, err, code, ending = execute(command, ws, env, timeout, self.running)
            if where.exists():  # not after a timeout, nor when the command replaced our trap
                moved = Path(os.fsdecode(where.read_bytes().removesuffix(b"\n")))
                if moved.is_absolute() and moved.is_dir():
                    ws.cwd = moved.resolve()
        out, err = out.rstrip("\n"), err.rstrip("\n")
        parts = ([out] if out else []) + ([f"[stderr]\n{err}"] if err else [])
        if ending in ("cancelled", "timeout"):
            why = ("interrupted by the user" if ending == "cancelled"
                   else f"timed out after {timeout} s")
            parts.append(f"[{why}: the command and everything it started were killed]")
        elif code < 0:
            parts.append(f"[killed by signal {signal.Signals(-code).name}]")
        elif code:
            parts.append(f"[exit code {code}]")
        if ending == "lingering":
            parts.append("[a background job still holds the output open; what it prints later "
                         "is not shown]")
        return note + ("\n".join(parts) or "(no output)")


def startup_script(cwd_file: Path, user_bash_env: str | None) -> str:
    """What bash sources before the command: record the final cwd on exit, then step aside."""
    record_cwd = f"builtin pwd > {shlex.quote(str(cwd_file))}"
    lines = [f"trap {shlex.quote(record_cwd)} EXIT"]
    if user_bash_env:  # e.g. Lmod sets one: keep honouring it, here and in nested shells
        quoted = shlex.quote(user_bash_env)
        lines += [f"export BASH_ENV={quoted}", f"[ -r {quoted} ] && . {quoted}"]
    else:
        lines.append("unset BASH_ENV")  # nested shells must not run our trap
    return "\n".join(lines) + "\n"


def execute(command: str, ws: Workspace, env: dict[str, str], timeout: int,
            running: set[subprocess.Popen]) -> tuple[str, str, int, str]:
    """Run it; return stdout, stderr, exit code and how it ended: "exited", "timeout",
    "cancelled" or "lingering". `ws.cancelled` is set when the user interrupts calls running
    in other threads. The shell is in `running` while it runs."""
    try:
        # A new session also has no controlling terminal, so git & co cannot prompt on /dev/tty.
        proc = subprocess.Popen(["bash", "-c", command], cwd=ws.cwd, env=env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)
    except FileNotFoundError as e:
        raise ToolError("bash is not installed on this machine") from e
    out, err = HeadAndTail(), HeadAndTail()
    running.add(proc)
    with proc, selectors.DefaultSelector() as pipes:
        pipes.register(proc.stdout, selectors.EVENT_READ, out)
        pipes.register(proc.stderr, selectors.EVENT_READ, err)
        try:
            deadline = time.monotonic() + timeout
            ending = pump(pipes, proc, deadline=deadline, cancelled=ws.cancelled)
            if ending == "exited":  # both pipes closed, but the shell may run on (`exec >log`)
                ending = wait_for_exit(proc, deadline, ws.cancelled)
            if ending in ("timeout", "cancelled"):
                kill_group(proc)
                pump(pipes, proc, deadline=time.monotonic() + AFTER_EXIT_SECONDS)  # in flight
        finally:
            if proc.poll() is None:  # Ctrl+C or a crash while reading: don't leave it running
                kill_group(proc)
            running.discard(proc)
        code = proc.wait()
    return out.text(), err.text(), code, ending


def pump(pipes: selectors.BaseSelector, proc: subprocess.Popen, deadline: float,
         cancelled: threading.Event | None = None) -> str:
    """Read whatever arrives until both pipes close, the deadline passes, or the shell has
    exited but a background job it left holds the pipes open."""
    exited_at = None
    while pipes.get_map():
        now = time.monotonic()
        if now >= deadline:
            return "timeout"
        if cancelled is not None and cancelled.is_set():
            return "cancelled"
        if exited_at is None and proc.poll() is not None:
            exited_at = now
        if exited_at is not None and now - exited_at > AFTER_EXIT_SECONDS:
            return "lingering"
        for key, _ in pipes.select(timeout=min(deadline - now, 0.1)):
            chunk = os.read(key.fd, 65536)
            if chunk:
                key.data.add(chunk)
            else:
                pipes.unregister(key.fileobj)
    return "exited"


def wait_for_exit(proc: subprocess.Popen, deadline: float, cancelled: threading.Event) -> str:
    """The shell closed its output but still runs: wait for it as for any command."""
    while proc.poll() is None:
        if time.monotonic() >= deadline:
            return "timeout"
        if cancelled.is_set():
            return "cancelled"
        time.sleep(0.05)
    return "exited"


def kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the group id is the shell's pid (start_new_session)
    except ProcessLookupError:
        pass  # everyone in it has already gone


def blocked_reason(command: str) -> str | None:
    """Why `command` is refused, or None if no blocklist pattern matches it."""
    deadline = time.monotonic() + GUARD_SECONDS
    for pattern, reason in BLOCKED_COMMANDS:
        try:
            if pattern.search(command, timeout=max(0.01, deadline - time.monotonic())):
                return reason
        except TimeoutError:  # refused, not let through: the guard could not say it is safe
            return (f"the guard could not check this command within {GUARD_SECONDS:g} s (it is "
                    "very long and repetitive); split it into smaller commands")
    return None


# --- defences: a command that never ends, prints without end, or wipes the machine ------------


class HeadAndTail:
    """One stream's bytes: the first and the last KEEP_BYTES, and a count of the rest."""

    def __init__(self) -> None:
        self.head, self.tail, self.dropped = bytearray(), bytearray(), 0

    def add(self, chunk: bytes) -> None:
        room = KEEP_BYTES - len(self.head)
        self.head += chunk[:room]
        self.tail += chunk[room:]
        excess = len(self.tail) - KEEP_BYTES
        if excess > 0:
            del self.tail[:excess]  # cheap: CPython's bytearray drops a prefix without a copy
            self.dropped += excess

    def text(self) -> str:
        cut = f"\n{marker(self.dropped, 'bytes')}\n" if self.dropped else ""
        return self.head.decode("utf-8", "replace") + cut + self.tail.decode("utf-8", "replace")


_COMMAND_START = r"(?:^|[;&|(`{])\s*(?:sudo\s+)?"  # where a new command begins
# /, /*, /., //, /.., ~, ~/, ~/., ~/.*, $HOME/*, "$HOME"/*: quoted or not
_ROOT_OR_HOME = r"""["']?(?:/|~|\$HOME|\$\{HOME\})[/.*"']*(?=$|[\s;&|)])"""
_HERE = r"""["']?(?:\.|\*|\./\*?)/?["']?(?=$|[\s;&|)])"""  # ., *, ./, ./*
_RM = r"(?<![\w-])rm\s(?:[^;&|\n]*\s)?"
_DISK = r"/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk)"
_GIT_PUSH = r"(?<![\w-])git(?:\s+-[cC]\s+\S+)*\s+push"
# --force, -f, or -f among other short options (-uf), or a +refspec; not --force-with-lease
_FORCE = r"(?=[^;&|\n]*(?:\s(?:--force|-[a-zA-Z]*f[a-zA-Z]*)(?![\w-])|\s\+))"
_RM_ROOT = "rm on / or the home directory deletes the whole system or all of the user's files"
_FORCE_MAIN = ("a force push to main/master (or to the current branch, which is often main) "
               "rewrites history others have pulled (--force-with-lease is allowed)")

# (pattern, why it is refused). Each is something no coding task needs and one slip makes.
# Matched with the `regex` package, under a time limit: on a very long, repetitive command (`rm `
# thirty thousand times) a pattern's work grows with the square of its length.
BLOCKED_COMMANDS: tuple[tuple[regex.Pattern, str], ...] = tuple(
    (regex.compile(pattern, regex.MULTILINE | regex.VERSION0), reason)
    for pattern, reason in (
        (rf"{_RM}{_ROOT_OR_HOME}", _RM_ROOT),
        # `cd ~ && rm -rf .`: the same, in two steps (up to the next cd)
        (rf"(?<![\w-])cd(?:\s+{_ROOT_OR_HOME})?\s*(?:&&|;|\n)"
         rf"(?:(?!(?<![\w-])cd\s)[\s\S])*?{_RM}{_HERE}", _RM_ROOT),
        (r"(?<![\w-])ch(?:mod|own|grp)(?=[^;&|\n]*\s(?:-\w*R|--recursive))"
         rf"\s(?:[^;&|\n]*\s)?{_ROOT_OR_HOME}",
         "a recursive chmod/chown of / or the home directory breaks the system or the user's "
         "files"),
        (rf"(?<![\w-])find\s+{_ROOT_OR_HOME}[^;&|\n]*\s-delete\b",
         "find -delete from / or the home directory deletes files everywhere"),
        (rf"{_COMMAND_START}(?:mkfs(?:\.\w+)?|wipefs)(?![\w.-])",
         "mkfs/wipefs erase a filesystem"),
        (rf"(?:\bof=|>\s*){_DISK}", "writing to a disk device overwrites the whole disk"),
        (r"(?<![\w:.])(?P<name>[\w:.]+)\s*\(\)\s*\{\s*(?P=name)\s*\|\s*(?P=name)\s*&",
         "a fork bomb spawns processes until the machine stalls"),
        (r"(?<![\w-])(?:curl|wget)\s[^;&\n]*(?<!\|)\|(?!\|)\s*"  # a pipe, not ||, into
         r"(?:sudo\s+)?(?:[\w/]*/)?(?:env\s+)?(?:ba|z|da|k)?sh(?![\w.-])",  # [/bin/][env ]sh
         "piping a download into a shell runs code nobody has read: download it, read it, then "
         "run it"),
        (rf"{_COMMAND_START}(?:systemctl\s+)?(?:shutdown|reboot|halt|poweroff)(?![\w.-])",
         "shutdown/reboot stops the machine everyone is working on"),
        (r"(?<![\w-])kill\s+(?:-\S+\s+)+-1(?=$|[\s;&|)])",
         "kill ... -1 signals every process the user owns, this agent included"),
        (rf"{_GIT_PUSH}\b{_FORCE}(?=[^;&|\n]*(?:[\s:+](?:main|master)|[\s+]HEAD)(?=$|[\s;&|]))",
         _FORCE_MAIN),
        # with no branch named, git pushes the current one
        (rf"{_GIT_PUSH}{_FORCE}(?:\s+-\S+)*(?:\s+[^\s;&|-]\S*(?:\s+-\S+)*)?\s*(?=$|[;&|)\n])",
         _FORCE_MAIN),
    )
)


GUARD_SECONDS = 2.0  # for all the patterns together; a command that needs more is refused
