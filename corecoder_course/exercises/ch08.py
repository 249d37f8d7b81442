"""Checks for the exercises of chapter 8, guarding the user's machine.

    ch08.gate_order    `gate_order(plan, hooks, consent, checkpoints)`: the engine's own gates,
                       in the order a call meets them, plugged into a real Agent
    ch08.fingerprint   `fingerprint(files, notes)`: what a user trusted of a project, as one
                       string; any change to what would run must change it
    ch08.instructions  `instruction_files(cwd)`: the project's AGENTS.md (else CLAUDE.md) of each
                       folder from the git root down to the cwd

All three are declared exercises (kit.py). `ch08.instructions`' reference is the engine's own
(instructions.py); the other two are the chapter's, and the suite proves `fingerprint` computes
what trust.py's `ProjectConfig.fingerprint` does and `gate_order` what `build_agent` does.

`ch08.gate_order`: each input is a run, a real Agent in a project folder (notes.md), its
built-in tools, and the gates the answer orders, each the engine's own or None (not in use):
plan mode on or off, a real PreToolUse hook (a program) that vetoes one tool or every one,
consent with `--yes` or a scripted user answering once, always or no in turn, checkpoints in a
config folder of its own. The model asks for writes, edits, reads and commands, one a round;
between turns the user may type /plan, which turns the same plan mode on or off (the REPL's
/plan does: a plan mode that is off is still in use).
What is compared: what the user was asked, each call's fate (let through, refused by which
gate, a gate that failed), the checkpoints taken, the files changed, and what `/undo` says,
again and again, until nothing is left to undo.

`ch08.fingerprint`: each input is a pair, the project's configuration when the user trusted
it and after a change: the same files read again in another order, a byte changed, a file
renamed, added (empty too) or removed, a file whose bytes spell the start of the next file in
every way an encoding may, a note (what its .env would change) added, changed or dropped, a
note's text moved into a file. Compared: whether the user is asked again, and that the
fingerprint is a string (it is kept in a JSON file). The hex digits are the answer's own.

`ch08.instructions`: each input is a folder tree: the cwd zero to three levels below the top,
a .git (a folder, or a worktree's file) at one of those levels or none, AGENTS.md and
CLAUDE.md here and there as files, links, links that lead nowhere, one above the repository,
and the cwd given through a link sometimes (a home on macOS is one). Compared: the files
returned (a list of Paths; else what came instead, or what was raised), in order, each shown
from the top of the tree.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

from corecoder.checkpoints import Checkpoints
from corecoder.events import ToolCallFinished
from corecoder.hooks import Hooks
from corecoder.instructions import instruction_files
from corecoder.permissions import Consent, PlanMode
from corecoder.tools import default_tools

from ..checks import raised
from ..kit import Exercise, Mistake
from ..seams import Seam, fate
from ..words import say

# --- ch08.gate_order --------------------------------------------------------------------------


def gate_order(plan, hooks, consent, checkpoints):
    """The gates a call meets, in the order they are asked; a gate not in use is None."""
    order = [plan, hooks, consent, checkpoints]
    return [gate for gate in order if gate is not None]


CALLS = {"write notes.md": ("write_file", {"path": "notes.md", "content": "rewritten\n"}),
         "write new.md": ("write_file", {"path": "new.md", "content": "new\n"}),
         "edit notes.md": ("edit_file", {"path": "notes.md", "old_string": "notes",
                                         "new_string": "NOTES"}),
         "read notes.md": ("read_file", {"path": "notes.md"}),
         "bash echo": ("bash", {"command": "echo hi"})}
ANSWERS = ("once", "always", "deny")
ANSWERS_ZH = {"once": "“这一次”", "always": "“一直允许”", "deny": "“不行”"}


@dataclass(frozen=True)
class Guarded:
    """One run: the gates in use (plan: None, or plan mode off or on; hook: None, or the tool
    its hook vetoes, "*" every one; consent: None, "yes" for --yes, or the user's answers in
    turn; checkpoints: in use or not), and the model's calls, one a round ("/plan": the turn
    ends, and the user turns plan mode)."""

    plan: bool | None
    hook: str | None
    consent: tuple[str, ...] | str | None
    checkpoints: bool
    calls: tuple[str, ...]

    def __repr__(self) -> str:
        gates = [say(f"plan mode {'on' if self.plan else 'off'}",
                     f"计划模式{'开' if self.plan else '关'}") if self.plan is not None else "",
                 say(f"a hook that vetoes {self.hook}", f"一个否决 {self.hook} 的钩子")
                 if self.hook else "",
                 "consent --yes" if self.consent == "yes" else
                 say(f"consent, the user answering {', '.join(self.consent)}",
                     "授权确认，用户依次回答" + "、".join(map(ANSWERS_ZH.get, self.consent)))
                 if self.consent else "",
                 say("checkpoints", "检查点") if self.checkpoints else ""]
        gates = ", ".join(g for g in gates if g) or say("none", "无")
        typed = say("(the turn ends, the user types /plan)", "（这一轮结束，用户输入 /plan）")
        calls = ", ".join(typed if c == "/plan" else c for c in self.calls
                          if c != "/plan" or self.plan is not None)
        return say(f"gates in use: {gates}; the model asks for: {calls}",
                   f"用到的关卡：{gates}；模型依次请求：{calls}")


def _guarded_inputs():
    from hypothesis import strategies as st

    consent = st.one_of(st.none(), st.just("yes"),
                        st.lists(st.sampled_from(ANSWERS), min_size=1, max_size=3).map(tuple))
    return st.tuples(st.builds(
        Guarded, st.sampled_from([None, False, True, True]),
        st.sampled_from([None, "write_file", "edit_file", "*"]), consent, st.booleans(),
        st.lists(st.sampled_from([*CALLS, "/plan"]), min_size=1, max_size=4).map(tuple)))


@dataclass(frozen=True)
class Guard:
    """What came of a run: what the user was asked, each call's fate, the checkpoints taken,
    the files changed, and what each /undo said."""

    asked: tuple[str, ...]
    fates: tuple[str, ...]
    taken: int | None  # None: no checkpoints gate
    changed: tuple[str, ...]
    undone: tuple[str, ...]
    ended: str = ""


def _gates(run: Guarded, home: Path, root: Path, asked: list) -> dict:
    """The engine's own gates for `run`, by the name the answer gets them under (None: unused)."""
    answers = itertools.cycle(run.consent if isinstance(run.consent, tuple) else ["deny"])

    def ask(tool, args):
        asked.append(f"{tool.name}({args.get('path') or args.get('command')})")
        return next(answers)

    veto = shlex.join(["sh", "-c", "echo \"the project's policy forbids $CORECODER_TOOL\" >&2; "
                                   "exit 2"])
    hooks = {"PreToolUse": [{"matcher": run.hook, "command": veto}]}
    return {"plan": None if run.plan is None else PlanMode(on=run.plan),
            "hooks": Hooks(hooks, warn=asked.append) if run.hook else None,
            "consent": Consent(ask, allow_all=True) if run.consent == "yes" else
            Consent(ask) if run.consent else None,
            "checkpoints": Checkpoints(home, root) if run.checkpoints else None}


def _ordered(answer, run: Guarded) -> Guard:
    with Seam({"notes.md": "notes\n"}, {}) as seam:
        root, home = seam.roots
        asked = []
        gates = _gates(run, home, root, asked)
        chosen = answer(gates["plan"], gates["hooks"], gates["consent"], gates["checkpoints"])
        script = [{"tool_calls": [{"name": CALLS[c][0], "arguments": CALLS[c][1]}]}
                  if c in CALLS else "done" for c in run.calls]  # "/plan": the turn ends
        agent = seam.agent([*script, "done"], default_tools(), cwd=root, gates=chosen)
        agent.chat("go")
        for _ in range(run.calls.count("/plan")):  # the same gate turned, as the REPL turns it
            if gates["plan"]:
                gates["plan"].on = not gates["plan"].on
            agent.chat("go on")
        fates = [f"{c}: {fate(e.result)}" for c, e in zip((c for c in run.calls if c in CALLS), (
            e for e in seam.events if isinstance(e, ToolCallFinished)), strict=False)]
        kept = gates["checkpoints"]
        taken = len(list((home / "checkpoints").rglob("0*.json"))) if kept else None
        changed = sorted(p.name for p in root.iterdir() if p.is_file()
                         and (p.name != "notes.md" or p.read_text() != "notes\n"))
        undone = []
        while kept and len(undone) < 6:
            undone.append(seam.said(kept.undo()))
            if undone[-1].startswith("nothing to undo"):
                break
        return Guard(tuple(asked), tuple(fates), taken, tuple(changed), tuple(undone))
    return Guard((), (), None, (), (), "; ".join(seam.notes()))  # the run ended early


def _shown_guard(guard: Guard) -> str:
    if guard.ended:
        return guard.ended
    nobody, none = say("nobody", "没有问"), say("none", "没有")
    taken = "-" if guard.taken is None else str(guard.taken)
    parts = [say(f"asked: {', '.join(guard.asked) or nobody}",
                 f"问过用户：{', '.join(guard.asked) or nobody}"), *guard.fates,
             say(f"checkpoints taken: {taken}", f"检查点：{taken}"),
             say(f"files changed: {', '.join(guard.changed) or none}",
                 f"改动的文件：{', '.join(guard.changed) or none}")]
    if guard.undone:
        parts.append(say("/undo, until nothing is left: ", "一直 /undo 到没有可撤销的：")
                     + " | ".join(guard.undone))
    return say("; ", "；").join(parts)


def _order_call(args) -> str:
    return ("gate_order(plan, hooks, consent, checkpoints) "
            + say("as the gates of a real Agent; ", "作为一个真实 Agent 的关卡；") + repr(args[0]))


ORDER_EXAMPLES = [(Guarded(*run),) for run in (
    (None, None, ("deny",), True, ("write notes.md", "read notes.md")),
    (True, None, "yes", True, ("write notes.md", "read notes.md")),
    (True, None, ("once",), True, ("edit notes.md", "bash echo")),
    (False, "write_file", ("once",), True, ("write notes.md", "edit notes.md")),
    (True, "edit_file", ("always",), None, ("edit notes.md", "read notes.md")),
    (None, None, ("once", "deny"), True, ("write new.md", "write notes.md", "edit notes.md")),
    (False, None, None, True, ("write new.md", "edit notes.md")),
    (None, "*", None, None, ("read notes.md", "bash echo")),
    (False, None, ("once",), True, ("write new.md", "/plan", "edit notes.md")))]

GATE_ORDER = Exercise(
    "ch08.gate_order", gate_order, _guarded_inputs, _order_call, run=_ordered, show=_shown_guard,
    examples=ORDER_EXAMPLES, max_examples=40,
    domain=("runs of a real Agent with the engine's own gates, each in use or not: plan mode "
            "on or off, a hook that vetoes one tool or all, consent with --yes or a user who "
            "answers once, always or no, checkpoints; writes, edits, reads and commands",
            "一个真实 Agent 的运行，用的是引擎自己的关卡，每个都可能用或不用：计划模式开或关，"
            "一个否决某个工具或所有工具的钩子，带 --yes 的授权确认或一个回答 once、always、"
            "no 的用户，检查点；写、编辑、读和命令"),
    rule=("return the gates in use (leave out each None) in the order a call must meet them: "
          "nothing changes in plan mode, whoever would allow it; a project's hook vetoes before "
          "anyone is asked; the user is asked only about a call that may run; a checkpoint is "
          "taken only of a file a call is really going to change",
          "按一个调用必须经过它们的顺序，返回在用的关卡（去掉每个 None）：计划模式下什么都不能"
          "改，谁允许都不行；项目的钩子在问任何人之前就否决；只拿可能运行的调用去问用户；只为"
          "一个调用真要改的文件建检查点"),
    shape=("order = [plan, hooks, consent, checkpoints]; return [gate for gate in order if gate "
           "is not None]",
           "order = [plan, hooks, consent, checkpoints]；return [gate for gate in order if gate "
           "is not None]"),
    mistakes=[
        Mistake("    order = [plan, hooks, consent, checkpoints]",
                "    order = [plan, hooks, checkpoints, consent]", (
                    "a checkpoint was taken before the user was asked: a call the user refuses "
                    "leaves one behind, a step /undo must pass. Checkpoints come last, once "
                    "every other gate has let the call through",
                    "还没问用户就建了检查点：用户拒绝的调用也留下一个检查点，/undo 还得跳过它。"
                    "检查点放在最后，等其他关卡都放行了再建")),
        Mistake("    order = [plan, hooks, consent, checkpoints]",
                "    order = [plan, consent, hooks, checkpoints]", (
                    "the user was asked about a call the project's hook then vetoed: the user "
                    "said yes to nothing. The hook is the project's policy: it speaks first",
                    "用户被问到一个随后被项目钩子否决的调用：用户的同意落了空。钩子是项目的规矩，"
                    "它先说话")),
        Mistake("    order = [plan, hooks, consent, checkpoints]",
                "    order = [consent, plan, hooks, checkpoints]", (
                    "the user was asked first, about calls the gates after them refuse anyway: "
                    "plan mode (while it is on nothing changes, whoever would allow it) and the "
                    "project's hooks speak before the user; only checkpoints come after",
                    "先问了用户，问的却是后面的关卡反正会拒绝的调用：计划模式（它开着的时候什么都"
                    "不能改，谁允许都不行）和项目的钩子都要在用户之前说话；排在用户后面的只有检查点")),
        Mistake("    order = [plan, hooks, consent, checkpoints]",
                "    order = [hooks, plan, consent, checkpoints]", (
                    "in plan mode a hook answered first: the hook's program ran for a call "
                    "that could never run, and the model read the hook's reason, not that plan "
                    "mode is on (and that it should present a plan). Plan mode comes first",
                    "计划模式下钩子先回答了：钩子的程序为一个根本不可能运行的调用跑了一遍，"
                    "模型读到的是钩子的理由，而不是计划模式开着（以及它该先拿出计划）。计划模式"
                    "放在最前面")),
        Mistake("    return [gate for gate in order if gate is not None]",
                "    return order", (
                    "a gate not in use is None: leave it out, or the Agent is handed None as a "
                    "gate, which has no name and no before, and cannot even be built",
                    "不用的关卡是 None：要把它去掉，不然 Agent 拿到的关卡里有一个 None，它既没有 "
                    "name 也没有 before，Agent 连建都建不起来")),
        Mistake("    return [gate for gate in order if gate is not None]",
                "    return [gate for gate in order if gate is not None and "
                "getattr(gate, 'on', True)]",
                ("a plan mode that is off is still in use: /plan turns that same gate on between "
                 "turns, and an agent built without it refuses nothing. Leave out only None",
                 "关着的计划模式也在用：/plan 会在两轮之间把同一个关卡打开，没有它的 Agent 什么都"
                 "不会拒绝。只去掉 None")),
    ],
)


# --- ch08.fingerprint -------------------------------------------------------------------------

def fingerprint(files, notes):
    """What the user trusted, as one string: the project's configuration files (name -> bytes)
    and the notes (what its .env would change); any change to either changes it."""
    digest = hashlib.sha256()
    for name, data in [*sorted(files.items()), *((".", n.encode()) for n in notes)]:
        digest.update(f"{name}\0{len(data)}\0".encode() + data)
    return digest.hexdigest()


NAMES = ("hooks.json", "mcp.json")
ROUTES = ("the endpoint http://127.0.0.1:9/v1", "the API key ending in 'x123'")
# what may stand between two files when one's bytes spell the start of the next: an encoding
# that joins the files with it cannot tell one file from two. What may end one file's part,
# then what may head the next: its name, marked as an encoding may mark it, or with a length
JOINTS = [b"", b"\0\x01", *(end + head for end in (b"", b"\0", b"\n", b";") for head in (
    b"mcp.json", b"mcp.json\0", b"mcp.json\n", b"mcp.json:", b"mcp.json: ", b"mcp.json=",
    b"--- mcp.json\n", b"[mcp.json]\n", b"8mcp.json", b"mcp.json1", b"mcp.json\x001\x00"))]


@dataclass(frozen=True)
class Config:
    """A project's configuration as trust sees it: files (name, bytes) and notes."""

    files: tuple[tuple[str, bytes], ...]
    notes: tuple[str, ...]

    def __repr__(self) -> str:
        parts = [f"{n}: {d!r}" for n, d in self.files] + [
            say(f"note: {n}", f"说明：{n}") for n in self.notes]
        return "{" + ", ".join(parts) + "}"


@dataclass(frozen=True)
class Change:
    before: Config
    after: Config
    how: str  # in words, both languages: (en, zh)
    how_zh: str

    def __repr__(self) -> str:
        return say(f"trusted {self.before!r}; then {self.how}: {self.after!r}",
                   f"信任时 {self.before!r}；后来{self.how_zh}：{self.after!r}")


def _changes(files: dict, notes: tuple, draw) -> list[Change]:
    """Every change of one kind this configuration allows, drawn by `draw`."""
    before = Config(tuple(files.items()), notes)
    out = [Change(before, Config(tuple(reversed(files.items())), notes), "read again, in "
                  "another order", "换了个顺序再读一遍")]
    for name, data in files.items():
        if data:
            i = draw(len(data))
            flipped = data[:i] + bytes([data[i] ^ 1]) + data[i + 1:]
            out.append(Change(before, Config(tuple({**files, name: flipped}.items()), notes),
                              f"one byte of {name} changed", f"{name} 改了一个字节"))
        other = next(n for n in NAMES if n != name)
        if other not in files:
            out.append(Change(before, Config(((other, data),), notes), f"{name} renamed {other}",
                              f"{name} 改名为 {other}"))
        out.append(Change(before, Config(tuple((n, d) for n, d in files.items() if n != name),
                                         notes), f"{name} removed", f"删掉了 {name}"))
    for name in NAMES:
        if name not in files:
            out.append(Change(before, Config(tuple({**files, name: b""}.items()), notes),
                              f"an empty {name} added", f"加了一个空的 {name}"))
    if set(files) == set(NAMES):  # a file that spells the start of the next, then split there
        first, second = files["hooks.json"], files["mcp.json"]
        joint = JOINTS[draw(len(JOINTS))]
        merged = Config((("hooks.json", first + joint + second),), notes)
        out.append(Change(merged, before, "hooks.json split into two files", "hooks.json 拆成了"
                          "两个文件"))
        if first:  # a byte moved across the line between the two
            moved = (("hooks.json", first[:-1]), ("mcp.json", first[-1:] + second))
            out.append(Change(before, Config(moved, notes), "a byte moved into mcp.json",
                              "一个字节挪进了 mcp.json"))
    route = ROUTES[draw(len(ROUTES))]
    out.append(Change(before, Config(before.files, (*notes, route)), "its .env changed a route",
                      "它的 .env 改了一条路由"))
    if notes:
        out.append(Change(before, Config(before.files, notes[:-1]), "a note gone", "少了一条说明"))
        out.append(Change(before, Config(before.files, (notes[0] + "0", *notes[1:])),
                          "a note changed", "一条说明变了"))
        if "mcp.json" not in files:
            moved = (*before.files, ("mcp.json", notes[-1].encode()))
            out.append(Change(before, Config(moved, notes[:-1]), "a note's text moved into "
                              "mcp.json", "一条说明的文字挪进了 mcp.json"))
    return out


def _fingerprint_inputs():
    from hypothesis import strategies as st

    data = st.binary(max_size=6) | st.sampled_from([b"{}", b'{"PreToolUse": []}', b"\0", b"1"])
    files = st.dictionaries(st.sampled_from(NAMES), data, max_size=2)
    notes = st.lists(st.sampled_from(ROUTES), max_size=2, unique=True).map(tuple)

    @st.composite
    def change(draw):
        kinds = _changes(draw(files), draw(notes), lambda n: draw(st.integers(0, n - 1)))
        return (draw(st.sampled_from(kinds)),)
    return change()


def _compared(answer, change: Change) -> str:
    """What the user sees after the change: still trusted, or asked again."""
    def of(config: Config):
        return answer(dict(config.files), tuple(config.notes))
    kept = of(change.before)
    if not isinstance(kept, str):
        return say(f"a {type(kept).__name__}, not a str: it is kept in a JSON file",
                   f"{type(kept).__name__}，不是 str：它要存进一个 JSON 文件")
    # the next process salts hash() otherwise (PYTHONHASHSEED): this one, salted again
    with mock.patch("builtins.hash", lambda value, real=hash: real(("another process", value))):
        elsewhere = of(change.before)
    if elsewhere != kept:
        return say("another fingerprint in the next Python process: hash() is salted per process "
                   "(PYTHONHASHSEED), and the fingerprint is kept in a file for the next start",
                   "换一个 Python 进程，指纹就变了：hash() 每个进程的盐都不同（PYTHONHASHSEED），"
                   "而指纹要存进文件，留给下一次启动")
    return "asked again" if of(change.after) != kept else "still trusted"


def _shown_verdict(verdict: str) -> str:
    return {"asked again": say("the user is asked again", "再问一次用户"),
            "still trusted": say("still trusted: not asked again", "仍然信任：不再问")}.get(
                verdict, verdict)


def _fingerprint_call(args) -> str:
    return "fingerprint(...) " + repr(args[0])


HOW_ZH = {"a byte changed": "改了一个字节", "read in another order": "换了个顺序再读一遍",
          "renamed": "改了名", "a byte moved": "挪了一个字节", "split": "拆开了",
          "a line break added": "加了一个换行", "a route": "加了一条路由",
          "moved into a file": "挪进了文件", "an empty file": "加了一个空文件"}


def _example(before: dict, notes: tuple, after: dict, after_notes: tuple, how: str) -> tuple:
    return (Change(Config(tuple(before.items()), notes), Config(tuple(after.items()), after_notes),
                   how, HOW_ZH[how]),)


FINGERPRINT_EXAMPLES = [
    _example({"hooks.json": b"{}"}, (), {"hooks.json": b"{ }"}, (), "a byte changed"),
    _example({"hooks.json": b"a", "mcp.json": b"b"}, (), {"mcp.json": b"b", "hooks.json": b"a"},
             (), "read in another order"),
    _example({"hooks.json": b"x"}, (), {"mcp.json": b"x"}, (), "renamed"),
    _example({"hooks.json": b"ab", "mcp.json": b"c"}, (), {"hooks.json": b"a", "mcp.json": b"bc"},
             (), "a byte moved"),
    *(_example({"hooks.json": b"x" + joint + b"y"}, (), {"hooks.json": b"x", "mcp.json": b"y"},
               (), "split") for joint in JOINTS),
    _example({"hooks.json": b"mcp.json2ab"}, (), {"hooks.json": b"1", "mcp.json": b"ab"}, (),
             "split"),  # a length without a mark where it ends: the "1" of "11" read as a byte
    _example({"hooks.json": b"{}"}, (), {"hooks.json": b"{}\n"}, (), "a line break added"),
    _example({"hooks.json": b"{}"}, (), {"hooks.json": b"{}"}, (ROUTES[0],), "a route"),
    _example({}, (ROUTES[0],), {"mcp.json": ROUTES[0].encode()}, (), "moved into a file"),
    _example({}, (), {"hooks.json": b""}, (), "an empty file")]

FINGERPRINT = Exercise(
    "ch08.fingerprint", fingerprint, _fingerprint_inputs, _fingerprint_call, run=_compared,
    show=_shown_verdict, examples=FINGERPRINT_EXAMPLES, max_examples=150,
    domain=("a project's configuration when it was trusted and after a change: read again in "
            "another order, a byte changed or moved across files, a file renamed, added, "
            "removed or split where its bytes spell the next one's start, a note added, changed, "
            "dropped or moved into a file",
            "项目被信任时的配置，和改动之后的配置：换个顺序再读一遍，一个字节被改或者挪到另一个"
            "文件，一个文件改名、新增、删除，或者在它的字节恰好拼出下一个文件开头的地方被拆开，"
            "一条说明新增、改动、删掉或者挪进文件"),
    rule=("return a str that is the same whenever the files (by name) and the notes are the same, "
          "in whatever order the files were read, and differs after any change to a file's "
          "name or bytes, or to the notes: a file's end must never be mistaken for the next "
          "one's start",
          "返回一个 str：文件（按名字）和说明都一样时，不管文件按什么顺序读到，它都一样；文件的"
          "名字或字节、说明有任何改动，它就不一样：一个文件的结尾绝不能被当成下一个文件的开头"),
    shape=("digest = hashlib.sha256(); for each (name, data) of the files sorted by name, then "
           "(\".\", note.encode()) for each note: digest.update of the name, the length and the "
           "data, separated; return digest.hexdigest()",
           "digest = hashlib.sha256()；按名字排好序的每个 (name, data)，再加上每条说明的 "
           "(\".\", note.encode())：把名字、长度和数据分隔开喂给 digest.update；返回 "
           "digest.hexdigest()"),
    mistakes=[
        Mistake('        digest.update(f"{name}\\0{len(data)}\\0".encode() + data)',
                "        digest.update(data)", (
                    "hash the names too, and where each part ends: with the bytes alone, a file "
                    "renamed, or split in two, hashes the same, and the user is not asked about "
                    "what changed",
                    "名字也要算进去，还有每一段在哪里结束：只算字节的话，文件改了名或者拆成两个，"
                    "算出来都一样，用户就不会被问到这次改动")),
        Mistake('        digest.update(f"{name}\\0{len(data)}\\0".encode() + data)',
                '        digest.update(f"{name}\\0".encode() + data)', (
                    "a name and a separator do not say where a file ends: hooks.json holding "
                    "\"x\\0mcp.json\\0y\" reads as two files. Put each part's length before it",
                    "名字加分隔符说不清一个文件在哪里结束：内容是 \"x\\0mcp.json\\0y\" 的 "
                    "hooks.json 读起来就像两个文件。在每一段前面写上它的长度")),
        Mistake("    for name, data in [*sorted(files.items()), *((\".\", n.encode()) for n in "
                "notes)]:",
                "    for name, data in [*files.items(), *((\".\", n.encode()) for n in notes)]:", (
                    "the same files read in another order gave another fingerprint: sort them "
                    "by name, or a project the user trusted is asked about again for nothing",
                    "同样的文件换个顺序读，指纹就变了：按名字排序，不然用户已经信任的项目又会"
                    "被白白问一次")),
        Mistake("    for name, data in [*sorted(files.items()), *((\".\", n.encode()) for n in "
                "notes)]:",
                "    for name, data in sorted(files.items()):", (
                    "the notes are part of what was trusted: where the project's .env sends the "
                    "conversation. A .env that starts sending your prompts elsewhere must be "
                    "asked about again",
                    "说明也是被信任的内容：项目的 .env 把对话发到哪里。一个开始把你的提示词发到"
                    "别处的 .env，必须再问一次")),
        Mistake("    return digest.hexdigest()",
                "    return str(hash((tuple(sorted(files.items())), tuple(notes))))", (
                    "hash() is salted per process (PYTHONHASHSEED): the next start of the command "
                    "computes another fingerprint and asks again about a project the user "
                    "trusted. Use a digest that is the same everywhere (hashlib)",
                    "hash() 每个进程的盐都不同（PYTHONHASHSEED）：命令下次启动时算出另一个指纹，"
                    "用户已经信任的项目又会被问一次。要用在哪里算都一样的摘要（hashlib）")),
    ],
)


# --- ch08.instructions ------------------------------------------------------------------------

LEVELS = ("p", "p/a", "p/a/b", "p/a/b/c")  # the top of the tree, and three folders below it
KINDS = ("file", "link", "broken link")


@dataclass(frozen=True)
class Tree:
    """A folder tree: the cwd's level, the level that holds .git (None: no repository; and
    whether .git is a worktree's file), the instruction files (level, name, kind), one above
    the tree or not, and whether the cwd is given through a link."""

    cwd: int
    git: int | None
    worktree: bool
    files: tuple[tuple[int, str, str], ...]
    above: bool
    linked: bool

    def __repr__(self) -> str:
        git = (say(f".git in {LEVELS[self.git]}", f".git 在 {LEVELS[self.git]}")
               + say(" (a file)", "（一个文件）") * self.worktree
               if self.git is not None else say("no .git", "没有 .git"))
        files = [f"{LEVELS[level]}/{name} ({say(kind, _KIND_ZH[kind])})"
                 for level, name, kind in self.files] + ["AGENTS.md"] * self.above
        via = say(", given through a link", "，通过一个链接传入") if self.linked else ""
        return (f"cwd={LEVELS[self.cwd]}{via}; {git}; "
                + say("instruction files: ", "说明文件：") + (", ".join(files) or "-"))


_KIND_ZH = {"file": "文件", "link": "链接", "broken link": "断掉的链接"}


def _tree_inputs():
    from hypothesis import strategies as st

    @st.composite
    def tree(draw):
        cwd = draw(st.integers(0, 3))
        git = draw(st.one_of(st.none(), st.integers(0, cwd)))
        files = draw(st.lists(st.tuples(st.integers(0, 3), st.sampled_from(("AGENTS.md",
                                                                            "CLAUDE.md")),
                                        st.sampled_from(KINDS)),
                              max_size=5, unique_by=lambda f: f[:2]))
        return (Tree(cwd, git, draw(st.booleans()), tuple(files), draw(st.booleans()),
                     draw(st.booleans())),)
    return tree()


def _found(answer, tree: Tree) -> str:
    """The files `answer` returns for `tree`, shown from the top of the tree; or what it
    returned instead of a list of paths, or raised."""
    with Seam({}) as seam:
        base = seam.roots[0]
        for level in LEVELS:
            (base / level).mkdir(parents=True, exist_ok=True)
            (base / level / "notes.md").write_text("notes\n")
        if tree.git is not None:
            git = base / LEVELS[tree.git] / ".git"
            git.write_text("gitdir: elsewhere\n") if tree.worktree else git.mkdir()
        if tree.above:
            (base / "AGENTS.md").write_text("above the project\n")
        for level, name, kind in tree.files:
            path = base / LEVELS[level] / name
            if kind == "file":
                path.write_text(f"{name} of {LEVELS[level]}\n")
            else:
                path.symlink_to("notes.md" if kind == "link" else "gone.md")
        cwd = base / LEVELS[tree.cwd]
        if tree.linked:
            os.symlink(base, base.with_name(base.name + "-link"))
            cwd = base.with_name(base.name + "-link") / LEVELS[tree.cwd]
        try:
            found = answer(cwd)
        finally:
            if tree.linked:
                os.unlink(base.with_name(base.name + "-link"))
        odd = [type(p).__name__ for p in found if not isinstance(p, Path)] \
            if isinstance(found, list) else [type(found).__name__]
        if odd:
            return say(f"a {odd[0]}, not a list of paths (each a Path)",
                       f"一个 {odd[0]}，不是路径的 list（每个都是 Path）")
        shown = [_from(base.resolve(), p, seam) for p in found]
        return "[" + ", ".join(shown) + "]" if shown else say("no file", "没有文件")
    return raised(seam.error, {base: "."})  # the answer raised: its words, not a tmp folder


def _from(top: Path, path: Path, seam: Seam) -> str:
    """A path the answer returned, shown from the top of the tree (its folder resolved, not
    the file: a link is shown as the link)."""
    where = path.parent.resolve() / path.name if path.is_absolute() else path
    return where.relative_to(top).as_posix() if where.is_relative_to(top) else seam.said(str(path))


def _tree_call(args) -> str:
    return "instruction_files(cwd) " + repr(args[0])


INSTRUCTIONS_EXAMPLES = [(Tree(*t),) for t in (
    (2, 0, False, ((0, "AGENTS.md", "file"), (1, "CLAUDE.md", "file"), (2, "AGENTS.md", "file")),
     True, False),
    (1, 0, False, ((0, "AGENTS.md", "file"), (0, "CLAUDE.md", "file"), (1, "CLAUDE.md",
                                                                        "file")), False, False),
    (2, None, False, ((1, "AGENTS.md", "file"), (2, "AGENTS.md", "file")), True, False),
    (3, 1, True, ((0, "AGENTS.md", "file"), (1, "AGENTS.md", "link"),
                  (3, "AGENTS.md", "broken link")), False, False),
    (2, 0, False, ((0, "AGENTS.md", "file"), (2, "CLAUDE.md", "file")), False, True),
    (0, 0, False, ((0, "CLAUDE.md", "broken link"), (0, "AGENTS.md", "file")), False, False))]

INSTRUCTIONS = Exercise(
    "ch08.instructions", instruction_files, _tree_inputs, _tree_call, run=_found,
    show=str, examples=INSTRUCTIONS_EXAMPLES, max_examples=80,
    domain=("folder trees: the cwd zero to three levels down, .git (a folder or a worktree's "
            "file) at one of them or none, AGENTS.md and CLAUDE.md as files, links and links "
            "that lead nowhere, one above the repository, the cwd given through a link",
            "各种目录树：cwd 在零到三层深处，.git（目录，或者 worktree 的文件）在其中某一层或者"
            "没有，AGENTS.md 和 CLAUDE.md 是文件、链接或者断掉的链接，仓库上面还有一个，cwd "
            "有时通过链接传入"),
    rule=("return, for each folder from the git root (the nearest folder at or above the cwd "
          "that holds .git; none: the cwd alone) down to the cwd, outermost first, the first of "
          "AGENTS.md, CLAUDE.md that is there: a link counts, even one that leads nowhere (the "
          "prompt says it skipped it); a folder with neither adds nothing",
          "从 git 根目录（cwd 本身或它上面最近的、含有 .git 的目录；没有的话就只有 cwd）往下到 "
          "cwd，由外到内，对每个目录返回 AGENTS.md、CLAUDE.md 中第一个存在的：链接也算，哪怕它"
          "指向不存在的地方（提示词会说跳过了它）；两个都没有的目录什么也不加"),
    shape=("cwd = Path(cwd).resolve(); root = git_root(cwd) or cwd; the folders from cwd up to "
           "root, reversed; in each, the first name for which exists() or is_symlink()",
           "cwd = Path(cwd).resolve()；root = git_root(cwd) or cwd；从 cwd 往上到 root 的目录，"
           "倒过来；在每个目录里，取第一个 exists() 或 is_symlink() 的名字"),
    mistakes=[
        Mistake("    found = [next((d / n for n in NAMES if (d / n).exists() or (d / n)"
                ".is_symlink()), None)",
                "    found = [next((d / n for n in NAMES if (d / n).exists()), None)", (
                    "a link that leads nowhere does not exist(), yet it is there: list it, so "
                    "the prompt can say it was skipped and why, instead of keeping quiet",
                    "指向不存在之处的链接，exists() 是 False，可它确实在那里：要列出来，这样提示词"
                    "才能说跳过了它、为什么跳过，而不是一声不吭")),
        Mistake("    folders = list(reversed(folders[: folders.index(root) + 1]))  # root first, "
                "cwd last",
                "    folders = folders[: folders.index(root) + 1]", (
                    "outermost first: the project's notes, then each subfolder's, which refine "
                    "them; the nearest folder has the last word",
                    "由外到内：先是项目的说明，再是每个子目录的，它们在前者的基础上细化；离 cwd "
                    "最近的目录说了算")),
        Mistake("    cwd = Path(cwd).resolve()", "    cwd = Path(cwd)", (
            "the cwd may come through a link (a home on macOS is one): resolve it first, or "
            "the files are named through the link, and a folder above it is not the one on disk",
            "cwd 可能是通过链接传进来的（macOS 上的家目录就是）：先 resolve，不然找到的文件都挂在"
            "链接底下，往上走的目录也不是磁盘上真正的那些")),
        Mistake("    root = git_root(cwd) or cwd", "    root = git_root(cwd) or Path(cwd.anchor)", (
            "outside a repository the project is the cwd alone: a folder above it is not the "
            "project's (an AGENTS.md in your home would be read wherever you start)",
            "不在仓库里时，项目就只是 cwd 本身：它上面的目录不属于这个项目（不然你家目录里的 "
            "AGENTS.md 在哪里启动都会被读进来）")),
    ],
)
