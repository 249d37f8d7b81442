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

import functools
import os
import selectors
import shlex
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

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

    def reads(self, args: dict, ws: Workspace) -> bool:
        return reads_only(args.get("command"), ws.cwd)  # `ls`, `git log`: only a read

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


# The guard reads the command as bash splits it, not as a string: the spellings a pattern misses
# (`git --no-pager push -f origin "main"`, `cd ~ && rm -rf .*`, `bash <(curl ...)`) are the same
# simple command once parsed. Still a guard against slips, not a sandbox: it follows no variable,
# function or script.
# A word is quoted parts, escapes and plain characters, and may hold commands: $(...), <(...),
# `...` (a group nests, quotes and all). Its commands are read too, as are `bash -c`'s and eval's.
_GROUP = r"""(?P<group>\((?:[^()'"\\]|\\.|'[^']*'|"(?:\\.|[^"\\])*"|(?&group))*\))"""
_TOKEN = regex.compile(  # a comment, the end of a simple command, or a word (with a redirection)
    r"#[^\n]*|(?P<end>&&|\|\||[;|()\n]|&(?!>)|\Z)|(?P<word>(?:[\d&]*[<>]+[|&]?\s*)?"
    rf"""(?:[$<>]{_GROUP}|"(?:\\.|[$<>](?&group)|[^"\\])*"?|'[^']*'?|`(?:\\.|[^`\\])*`?|\\."""
    r"""|[^\s;&|()<>`'"\\])+)""")
# The commands inside a word (what is in single quotes is text)
_SUBSTITUTION = regex.compile(rf"'[^']*'|[$<>]{_GROUP}|`(?P<ticks>(?:\\.|[^`\\])*)`")
# What a word's quotes and escapes stand for (unclosed quotes run to the end, as bash reads them)
_QUOTED = regex.compile(r"""'(?P<single>[^']*)'?|"(?P<double>(?:\\.|[^"\\])*)"?|\\(?P<one>.)""")
# Inside double quotes a backslash escapes only $ ` " and itself
_ESCAPED_IN_DOUBLE_QUOTES = regex.compile(r'\\([$`"\\])')
_HOME = regex.compile(r"^(?:\$HOME(?!\w)|\$\{HOME(?:[:?%#+-][^}]*)?\})")  # "${HOME:?}" too
_HEREDOC = regex.compile(r"(?<!<)<<-?\s*(['\"]?)(\w+)\1(.*\n)[\s\S]*?^\t*\2$", regex.MULTILINE)
# The words that may come before the program, each with its short options that take a value
_PREFIXES = {"sudo": "ugCDhprtU", "doas": "uC", "env": "uCS", "nice": "n", "timeout": "ks",
             "xargs": "aEIdLnPs", "exec": "a"} | dict.fromkeys(
    "command builtin nohup time stdbuf then do else elif if while until ! {".split(), "")
_SHELL = regex.compile(r"(?:ba|z|da|k|a|fi)?sh|su|source|\.|eval")
_INTERPRETER = regex.compile(r"(?:python|perl|ruby|node|php)[\d.]*")
_ROOT_OR_HOME = regex.compile(r"(?:/|~[\w-]*)[/.*?\[\]!]*")  # /, /*, //, ~, ~/.*, ~/.., ~/.[!.]*
_DISK = regex.compile(r"(?:of=|[\d&]*>>?\|?\s*)?"  # written by dd or by a redirection, or named
                      r"/dev/(?:[sv]d|hd|xvd|nvme|mmcblk|disk|md|dm-|mapper/)\S*")
_MAIN = {"main", "master", "HEAD", "@"}  # HEAD and @: the current branch, which is often main


class Command(NamedTuple):
    """One simple command as the guard reads it."""
    words: list[str]  # from the program's name on: unquoted, the home spelled ~, no `sudo -u x`
    cwd: str  # where the last `cd` before it went ("" if none did)
    fed: bool  # a download reaches it: `curl ... | sh`, `sh <(curl ...)`, `sh -c "$(curl ...)"`


class Parsed(NamedTuple):
    """A category judged on each simple command of the command. `search` has a compiled regex's
    signature, so that blocked_reason treats both alike; the parse keeps its own time limit."""
    judge: Callable[[Command], object]

    def search(self, command: str, timeout: float | None = None) -> bool:
        return any(map(self.judge, parsed(command, os.environ.get("HOME", "").rstrip("/"))))


@functools.lru_cache(maxsize=4)  # each category reads the same parse
def parsed(command: str, home: str) -> tuple[Command, ...]:
    return tuple(simple_commands(command, home, "", time.monotonic() + GUARD_SECONDS))


def simple_commands(text: str, home: str, cwd: str, deadline: float,
                    depth: int = 0) -> list[Command]:
    """The simple commands of `text` in order, with those inside its $(...), `...`, <(...),
    `bash -c '...'` and `eval '...'`. A command too long or too deep to read before `deadline`
    raises TimeoutError: refused, not let through."""
    def read(script: str) -> list[Command]:  # nested commands, from the cwd reached so far
        return simple_commands(script, home, cwd, deadline, depth + 1) if script else []

    found, words, downloading = [], [], False  # downloading: a download feeds this pipeline
    text = _HEREDOC.sub(r"\3", text.replace("\\\n", ""), timeout=GUARD_SECONDS)  # body is text
    for token in _TOKEN.finditer(text, timeout=GUARD_SECONDS):
        if token["word"] is not None:
            words.append(token["word"])
        if token["end"] is None:
            continue
        if depth > 20 or time.monotonic() > deadline:
            raise TimeoutError
        inner = [c for word in words for m in _SUBSTITUTION.finditer(word)
                 for c in read(m["group"] or m["ticks"] or "")]
        words, start = program_words([plain(word, home) for word in words]), len(found)
        name = words[0] if words else ""
        script = " ".join(words[1:]) if name == "eval" else next(  # bash -c 'script'
            (words[i + 1] for i in range(1, len(words) - 1) if short_option(words[i], "c")
             and _SHELL.fullmatch(name)), "")
        if words:
            found.append(Command(words, cwd, downloading or any(map(is_download, inner))))
        found += inner + read(script)
        if name in ("cd", "pushd"):
            cwd = words[-1] if len(words) > 1 else "~"
        downloading = token["end"] in "|()" and (  # `(curl ...) | sh` too
            downloading or any(map(is_download, found[start:])))
        words = []
    return found


def is_download(command: Command) -> bool:
    return command.words[0] in ("curl", "wget")


def plain(word: str, home: str) -> str:
    """The word as the program gets it: quotes removed, the home spelled `~`."""
    text = _HOME.sub("~", _QUOTED.sub(lambda m: m["single"] or m["one"] or (
        _ESCAPED_IN_DOUBLE_QUOTES.sub(r"\1", m["double"] or "")), word))
    return "~" + text[len(home):] if home and (text + "/").startswith(home + "/") else text


def program_words(words: list[str]) -> list[str]:
    """The words from the program on, its path cut to its name: `sudo -u root /bin/rm -rf x`,
    `env X=1 nohup rm -rf x` and `X=1 rm -rf x` are all `rm -rf x`."""
    i, takes_value = 0, ""
    while i < len(words):
        word = words[i].rsplit("/", 1)[-1] or words[i]
        if word in _PREFIXES:
            takes_value = _PREFIXES[word]
        elif words[i].startswith("-"):
            i += len(word) == 2 and word[1] in takes_value
        elif not ("=" in word or word[:1] in "0123456789&<>"):  # X=1, 2>/dev/null
            return [word, *words[i + 1:]]
        i += 1
    return []


def short_option(word: str, letter: str) -> bool:
    """`word` is one or more short options, `letter` among them: -f, -uf, -Rv."""
    return word[:1] == "-" and word[1:2] not in ("-", "") and letter in word


def wipes(command: Command) -> bool:
    """An argument is /, the home or all in them; a relative one is read from the last `cd`."""
    return any(_ROOT_OR_HOME.fullmatch(w if w[:1] in "/~" or not command.cwd else
                                       f"{command.cwd}/{w}") for w in command.words[1:])


def writes_a_disk(command: Command) -> bool:
    """`of=`, a redirection or a writing program's target is a disk (`cat /dev/sda` reads)."""
    program, *arguments = command.words
    targets = (arguments if program in ("tee", "shred", "fdisk", "sfdisk", "parted", "gdisk",
                                       "sgdisk", "blkdiscard", "mkswap")
               else arguments[-1:] if program in ("cp", "mv", "install", "ddrescue") else [])
    return any(_DISK.fullmatch(w) and (w[0] != "/" or w in targets) for w in arguments)


def runs_a_download(command: Command) -> bool:
    """A shell fed a download, or an interpreter whose program it is: `curl ... | python3`,
    `python3 <(curl ...)`; not `curl ... | python3 -m json.tool`."""
    program, *arguments = command.words
    script = next((a for a in arguments if a == "-" or not a.startswith("-")), "-")  # - is stdin
    return command.fed and (bool(_SHELL.fullmatch(program)) or bool(_INTERPRETER.fullmatch(
        program)) and (script == "-" or any(nested in script for nested in ("$(", "<(", "`"))))


def force_pushes_main(command: Command) -> bool:
    """`git [--no-pager -C dir] push` forced (-f, --force, -uf) to main, master, HEAD or to no
    branch named (the current one), or a `+main` refspec. --force-with-lease is allowed."""
    words, i = command.words, 1
    while i < len(words) and words[i].startswith("-"):  # git's own options
        i += 1 + (words[i] in ("-C", "-c", "--git-dir", "--work-tree", "--namespace"))
    force = any(w == "--force" or short_option(w, "f") for w in words[i + 1:])
    refspecs = [w for w in words[i + 1:] if not w.startswith("-")][1:]  # after the remote
    return words[0] == "git" and words[i:i + 1] == ["push"] and (force and not refspecs or any(
        (force or r.startswith("+")) and r.lstrip("+").rsplit(":", 1)[-1].removeprefix(
            "refs/heads/") in _MAIN for r in refspecs))


_STOPS = {"shutdown", "reboot", "halt", "poweroff"}
_RM_ROOT = "rm on / or the home directory deletes the whole system or all of the user's files"
_FORCE_MAIN = ("a force push to main/master (or to the current branch, which is often main) "
               "rewrites history others have pulled (--force-with-lease is allowed)")

# (how it is recognised, why it is refused). Each is something no coding task needs and one slip
# makes. A `Parsed` category judges each simple command; the fork bomb is a shape of the text.
BLOCKED_COMMANDS: tuple[tuple[regex.Pattern | Parsed, str], ...] = (
    (Parsed(lambda c: c.words[0] == "rm" and wipes(c)), _RM_ROOT),
    (Parsed(lambda c: c.words[0] in ("chmod", "chown", "chgrp") and wipes(c) and any(
        w == "--recursive" or short_option(w, "R") for w in c.words)),
     "a recursive chmod/chown of / or the home directory breaks the system or the user's files"),
    (Parsed(lambda c: c.words[0] == "find" and {"-delete", "rm"} & set(c.words) and wipes(c)),
     "find -delete from / or the home directory deletes files everywhere"),
    (Parsed(lambda c: c.words[0].split(".")[0] in ("mkfs", "mke2fs", "wipefs")),
     "mkfs/wipefs erase a filesystem"),
    (Parsed(writes_a_disk), "writing to a disk device overwrites the whole disk"),
    (regex.compile(r"(?<![\w:.])(?P<name>[\w:.]+)\s*\(\)\s*\{\s*(?P=name)\s*\|\s*(?P=name)\s*&"),
     "a fork bomb spawns processes until the machine stalls"),
    (Parsed(runs_a_download),
     "piping a download into a shell runs code nobody has read: download it, read it, then run it"),
    (Parsed(lambda c: c.words[0] in _STOPS or c.words[0] == "systemctl" and _STOPS & set(c.words)),
     "shutdown/reboot stops the machine everyone is working on"),
    (Parsed(lambda c: c.words[0] == "kill" and "-1" in c.words[2:]),
     "kill ... -1 signals every process the user owns, this agent included"),
    (Parsed(force_pushes_main), _FORCE_MAIN),
)


GUARD_SECONDS = 2.0  # to read the command and judge it; a command that needs more is refused


# --- defences: the commands that only read, which consent lets run without a question -----------

# Each program that only reads, with the options that would make it write a file or run another
# program; a word that is one of them (or `--option=...`, or a cluster of short options holding
# the letter) makes the command ask. A program missing here asks, as any command did before.
READERS = {
    "ls": (), "cat": (), "head": (), "tail": (), "wc": (), "pwd": (), "echo": (), "stat": (),
    "du": (), "df": (), "diff": (), "which": (), "basename": (), "dirname": (), "realpath": (),
    "grep": (), "egrep": (), "fgrep": (), "file": ("-C",), "tree": ("-o",),
    "sort": ("-o", "--output", "--compress-program"), "rg": ("--pre",),
    "find": ("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf",
             "-fls"),
}
# git's reading subcommands, and the options that write a file or run a program of the config's
GIT_READERS = ("status", "diff", "log", "show", "blame")
GIT_WRITES = ("--output", "--ext-diff", "--textconv")
# what a repository's own .git/config can make even a reading git run: a program of its choosing
GIT_RUNS = regex.compile(r"(?i)fsmonitor|external|textconv|filter|pager|include|askpass|editor|"
                         r"sshcommand|hookspath|process")
SHELL_SYNTAX = set(";&|<>$`()\n\r")  # what chains, redirects or substitutes: then it asks


def reads_only(command: str, cwd: Path) -> bool:
    """True if `command` is one program that only reads, with no option that writes or runs
    another: `ls -la src`, `grep -rn TODO .`, `git log --oneline -5`. Anything the shell would
    chain, redirect or substitute is not: it asks, as does anything this cannot read."""
    if not isinstance(command, str) or SHELL_SYNTAX & set(command):
        return False
    try:
        words = shlex.split(command)
    except ValueError:  # an unclosed quote
        return False
    if not words:
        return False
    program, options = words[0], words[1:]
    if program == "git":
        if not options or options[0] not in GIT_READERS or git_config_runs(cwd):
            return False
        forbidden = GIT_WRITES
    elif program in READERS:
        forbidden = READERS[program]
    else:
        return False
    return not any(_is_option(word, option) for word in options for option in forbidden)


def _is_option(word: str, option: str) -> bool:
    """`word` gives `option`: itself; a long option with its value or cut short, as getopt and
    git take it (`--output=x`, `--outp x`); short options holding it (`-no x` for -o)."""
    if word == option:
        return True
    if option.startswith("--"):
        name = word.split("=", 1)[0]
        return len(name) > 2 and name.startswith("--") and option.startswith(name)
    single = len(option) == 2 and option[0] == "-"
    return single and word[:1] == "-" and word[1:2] != "-" and option[1] in word[1:]


def git_config_runs(cwd: Path) -> bool:
    """The repository's own config names something git may run (a filter, an fsmonitor, a
    pager...), or cannot be read: then even `git status` asks first."""
    for folder in (cwd, *cwd.parents):
        dot_git = folder / ".git"
        if dot_git.exists():
            try:
                config = (dot_git / "config").read_bytes()[:1_000_000].decode("utf-8", "replace")
            except OSError:
                return not dot_git.is_dir()  # a worktree's .git file: its config is elsewhere
            return bool(GIT_RUNS.search(config))
    return False
