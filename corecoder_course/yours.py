"""Your engine: the agent assembled from the answers you kept (chapter 10).

Every answer that passed its check was kept by its exercise's id (answers.py). Many of them are
pieces of the engine: the engine's own function re-derived (`turn_start`, `check_todos`, ...),
or an object for one of its seams (a tool, a context policy, an executor, a subscriber). This
module puts each kept piece where the shipped one was, and the shipped one back where no answer
was kept, and says which is which:

    with your_engine() as engine:        the kept answers, in place (until the block ends)
        print(engine)                    which pieces are yours, which are shipped
        agent = engine.agent(llm, cwd)   build_agent's agent, your seam pieces fitted
    tour(your_engine())                  the tour's task on both engines: where they first differ
    the_long_task(your_engine())         the lab's long task on both: where what they sent the
                                         model first differs, and which of your pieces it called
    your_tests(your_engine())            the package's own tests of each of your pieces

A piece that re-derives an engine function stands in for it wherever the engine holds it: every
module of the package that has the shipped object under that name gets yours, for as long as the
block lasts, so the engine never learns whose function it calls. The package's tests run the same
way, in a process of their own: this module is their pytest plugin (`-p corecoder_course.yours`),
and it puts your pieces in before any test module is imported.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import importlib
import importlib.util
import os
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .words import columns, language, say, speaking


@dataclass(frozen=True)
class Piece:
    """An exercise whose answer stands in for a definition of the engine.

    `shipped` names it ("corecoder.context:turn_start"; a method: "corecoder.llm:LLM.retry_delay");
    `adapt` turns the answer into what the engine calls there, where the exercise asked for the
    same idea in a simpler shape (None: the answer as it is); `tests`, the package's tests of it
    (pytest arguments, from the repository's root)."""

    exercise: str
    shipped: str
    tests: tuple[str, ...]
    adapt: Callable | None = None


@dataclass(frozen=True)
class Seam:
    """An exercise whose answer is an object for one of the agent's seams: `fit(agent, answer)`
    puts it in an agent that build_agent has made. `used`: where the answer is a class, the
    method the agent calls on its instance each time it uses it ("": the answer is called)."""

    exercise: str
    where: tuple[str, str]  # (en, zh)
    fit: Callable
    used: str = ""


def _rounded(estimate):  # ch04.estimate may be a float; the engine counts whole tokens
    return lambda text: round(estimate(text))


def _retry_delay(answer):
    """ch03.retry_delay answers from a status, a Retry-After and a random draw; the client's
    method gets the error itself, and draws only where the engine's draws (a seeded client
    then jitters the same)."""
    from corecoder import llm

    def retry_delay(self, error, attempt):
        if not llm.transient(error):  # no status (a dropped connection) or a spent quota
            return None
        code = 529 if llm.overloaded(error) else (llm.status(error) or 503)
        waited = llm.retry_after(error)
        rand = self.random.random() if waited is None and attempt < self.max_attempts else 0.0
        return answer(code, attempt, waited, rand, self.max_attempts)
    return retry_delay


def _replay(answer):
    """ch09.replay reads a file's lines; `load` takes a home and an id, and says what it
    skipped in the meta, which the engine's own reading still gives."""
    from corecoder import session

    shipped = session.load

    def load(home, session_id):
        _, meta = shipped(home, session_id)
        text = session._read(session.session_path(home, session_id)).decode("utf-8", "replace")
        return answer(text.split("\n")), meta
    return load


def _fingerprint(answer):
    return property(lambda config: answer(config.files, config.notes))


def _lock_key(answer):
    def lock_key(workspace, path):
        try:
            return answer(workspace, path)
        except (OSError, RuntimeError, ValueError):  # a path that can't be resolved: its text
            return workspace.resolve(path)
    return lock_key


PIECES = [
    Piece("ch03.cost", "corecoder.cli.pricing:cost_of", ("tests/command/test_pricing.py",)),
    Piece("ch03.retry_delay", "corecoder.llm:LLM.retry_delay", ("tests/engine/test_llm.py",),
          _retry_delay),
    Piece("ch04.estimate", "corecoder.tokens:text_tokens", ("tests/engine/test_context.py",),
          _rounded),
    Piece("ch04.safe_cut", "corecoder.context:turn_start", ("tests/engine/test_context.py",)),
    Piece("ch05.lock_key", "corecoder.executor:lock_key", ("tests/engine/test_executor.py",),
          _lock_key),
    Piece("ch06.todos", "corecoder.tools.todo:check_todos", ("tests/engine/test_todo.py",)),
    Piece("ch07.classify", "corecoder.mcp.client:classify",
          ("tests/engine/test_mcp.py", "-k", "classif or line")),
    Piece("ch08.fingerprint", "corecoder.trust:ProjectConfig.fingerprint",
          ("tests/engine/test_trust.py",), _fingerprint),
    Piece("ch08.instructions", "corecoder.instructions:instruction_files",
          ("tests/engine/test_gates.py", "-k", "instruction")),
    Piece("ch09.session_path", "corecoder.session:session_path",
          ("tests/engine/test_session.py",)),
    Piece("ch09.replay", "corecoder.session:load", ("tests/engine/test_session.py",), _replay),
]

def _add_tool(agent, tool_class) -> None:
    agent.update_tools(add=[tool_class()])


def _keep_last_turns(agent, policy_class) -> None:
    agent.context = policy_class(4)
    agent.context.attach(agent)


def _executor(agent, executor) -> None:
    agent.executor = executor


SEAMS = [
    Seam("ch02.tool", ("a tool of the agent's", "智能体的一个工具"), _add_tool, "run"),
    Seam("ch04.policy", ("the context policy, the last 4 turns", "上下文策略，最近 4 个回合"),
         _keep_last_turns, "prepare"),
    Seam("ch05.executor", ("the executor", "执行器"), _executor),
]


@dataclass
class Engine:
    """The kept answers, by exercise id, and what became of the others: not kept yet, or kept
    but not loadable (the reason). Entering it puts the pieces in; leaving takes them out."""

    folder: Path  # where the answers were kept
    answers: dict[str, object]
    missing: dict[str, str]  # exercise id -> why the shipped piece stands instead
    spoken: str = "en"  # the language it says which is which in: the one it was made in
    stack: contextlib.ExitStack = field(default_factory=contextlib.ExitStack, repr=False)

    def __enter__(self) -> Engine:
        for piece in PIECES:
            if piece.exercise in self.answers:
                answer = self.answers[piece.exercise]
                self.stack.enter_context(_standing_in(piece.shipped, piece.adapt(answer)
                                                      if piece.adapt else answer))
        return self

    def __exit__(self, *exc) -> None:
        self.stack.close()

    def agent(self, llm, cwd, **kwargs):
        """build_agent's agent, with your seam pieces fitted (the rest are in place already)."""
        from corecoder import build_agent

        agent = build_agent(llm, cwd, **kwargs)
        for seam in SEAMS:
            if seam.exercise in self.answers:
                seam.fit(agent, self.answers[seam.exercise])
        return agent

    def __str__(self) -> str:
        with speaking(self.spoken):
            return self._table()

    def _table(self) -> str:
        rows = [(p.exercise, p.shipped.replace(":", ".")) for p in PIECES] + [
            (s.exercise, say(*s.where)) for s in SEAMS]
        lines = []
        for exercise, where in rows:
            whose = say("yours  ", "你的   ") if exercise in self.answers else say(
                "shipped", "自带的 ")
            why = "" if exercise in self.answers else f"  ({self.missing[exercise]})"
            lines.append(f"{whose}  {exercise:<18} {where}{why}")
        return "\n".join(lines)


def your_engine(folder: str | Path | None = None) -> Engine:
    """The engine of your kept answers (from `folder`, else where answers are kept)."""
    from . import answers

    folder = Path(folder) if folder is not None else answers.folder()
    found, missing = {}, {}
    for exercise in [p.exercise for p in PIECES] + [s.exercise for s in SEAMS]:
        try:
            found[exercise] = answers.mine(exercise, folder)
        except LookupError:
            missing[exercise] = say("not kept yet", "还没保存")
        except Exception as e:  # a kept module that no longer loads: said, not raised
            missing[exercise] = say(f"kept, but it does not load: {type(e).__name__}: {e}",
                                    f"保存了，但加载不了：{type(e).__name__}: {e}")
    return Engine(folder, found, missing, language())


def a_learner(folder: str | Path, exercises: list[str]) -> Path:
    """`folder`, holding the answers of a learner who wrote `exercises` as the chapters' own
    solutions do (the course's references), kept as a passing check keeps them."""
    import pkgutil

    from . import exercises as chapters
    from .answers import keep
    from .kit import CHECKERS

    for module in pkgutil.iter_modules(chapters.__path__):
        importlib.import_module(f"{chapters.__name__}.{module.name}")
    for exercise in exercises:
        keep(exercise, CHECKERS[exercise].reference, folder)
    return Path(folder)


def first_difference(mine: list[dict], theirs: list[dict]) -> int | None:
    """The index of the first message where two histories differ (None: the same)."""
    for i, (a, b) in enumerate(zip(mine, theirs, strict=False)):
        if a != b:
            return i
    return None if len(mine) == len(theirs) else min(len(mine), len(theirs))


def tour(engine: Engine, into: Path) -> str:
    """The tour's task (chapter 0) run by the shipped engine and by yours, each in a copy of its
    project under `into`; what your run came to, and where the two histories first differ."""
    from corecoder import ScriptedLLM, build_agent
    from corecoder.demo import SCRIPT, TASK, copy_project

    histories = []
    for name, build in (("shipped", build_agent), ("yours", None)):
        project = copy_project(Path(into) / name)
        with contextlib.ExitStack() as stack:
            if build is None:
                stack.enter_context(engine)
                build = engine.agent
            agent = build(ScriptedLLM(copy.deepcopy(SCRIPT)), project)
            agent.chat(TASK)
        histories.append([_shown(m, project) for m in agent.messages])
    at = first_difference(histories[1], histories[0])
    if at is None:
        return say(f"the same history, message for message ({len(histories[0])} messages)",
                   f"历史完全相同，逐条一致（共 {len(histories[0])} 条消息）")
    return say(f"the histories part at message {at}:", f"两份历史从第 {at} 条消息开始不同：") + (
        _parted(histories[0], histories[1], at))


def the_long_task(engine: Engine) -> str:
    """The ablation lab's task (lab.py: twenty rounds over the real client, a 429 to retry, a
    window to outgrow, reads in parallel, two edits, a Ctrl+C, a command to refuse) run by the
    shipped engine and by yours: both rows of figures; where what the two sent the model first
    differs (or, if they sent the same, their histories); and which of your pieces it called."""
    from .lab import FINISHED, Mechanism, lab_table, run_task

    shipped = run_task(FINISHED)
    called: set[str] = set()  # the exercises whose answer your run called
    used = {seam.exercise: seam.used for seam in SEAMS}
    noting = Engine(engine.folder, {exercise: _noting(exercise, answer, called, used.get(exercise))
                                    for exercise, answer in engine.answers.items()},
                    engine.missing, engine.spoken)
    try:
        with noting:
            mine = run_task(Mechanism("your engine", "你的引擎", None, "your_engine()"), shipped,
                            build=noting.agent)
    except Exception as e:  # raised before the task began (building the agent): said, not raised
        return say(f"your engine could not start the task: {type(e).__name__}: {e}",
                   f"你的引擎没能开始这个任务：{type(e).__name__}: {e}")
    table = lab_table([shipped, mine]).split("\n\n")[1]  # the figures, not the legend
    return "\n\n".join([table, _compared(shipped, mine), _exercised(list(engine.answers), called)])


def _noting(exercise: str, answer, called: set[str], used: str | None = None):
    """`answer`, adding `exercise` to `called` whenever the engine calls it; for a class at a
    seam (a tool, a policy), whenever the agent calls its `used` method (run, prepare)."""
    if used:  # a subclass, so that the seam makes and uses it as it would the answer
        method = getattr(answer, used, None)
        if not isinstance(answer, type) or method is None:
            return answer  # not a class with that method: as it is, for the seam to say so
        return type(answer.__name__, (answer,), {used: _noting(exercise, method, called)})

    @functools.wraps(answer)
    def noted(*args, **kwargs):
        called.add(exercise)
        return answer(*args, **kwargs)
    return noted


def _compared(shipped, mine) -> str:
    """Where your run first parts from the shipped one (two lab Rows) in what reached the model,
    the body of each request the provider received; if it sent the same, in its history."""
    theirs, sent = list(shipped.requests), list(mine.requests)
    at = first_difference(sent, theirs)
    if at is not None and at < min(len(sent), len(theirs)):  # a request both made, not alike
        return _request_parted(theirs[at], sent[at], at)
    if at is None:
        said = say(f"the same requests, one for one ({len(sent)} requests)",
                   f"发给模型的请求完全相同，逐个一致（共 {len(sent)} 个）")
    else:  # the same as far as both went; then one engine stopped asking
        said = say(f"the same first {at} requests; then the shipped engine made {len(theirs)} in "
                   f"all, yours {len(sent)}",
                   f"前 {at} 个请求相同；之后自带的引擎一共发了 {len(theirs)} 个，你的发了 "
                   f"{len(sent)} 个")
    history, before = list(mine.history), list(shipped.history)
    part = first_difference(history, before)
    if part is None:
        return said + say(f", and the same history, message for message ({len(before)} messages)",
                          f"；历史也完全相同，逐条一致（共 {len(before)} 条消息）")
    return said + say(f", but the histories part at message {part}:",
                      f"；但两份历史从第 {part} 条消息开始不同：") + _parted(before, history, part)


def _request_parted(theirs: dict, sent: dict, at: int) -> str:
    """Request `at` of each run, at its first message that differs, or else beside its messages
    (the tools' schemas, the model's name)."""
    where = say(f"what your engine sent the model parts from the shipped engine's at request "
                f"{at + 1}", f"你的引擎发给模型的内容，从第 {at + 1} 个请求起和自带的引擎不同")
    part = first_difference(sent["messages"], theirs["messages"])
    if part is not None:
        return where + say(f", message {part}:", f"，在它的第 {part} 条消息：") + _parted(
            theirs["messages"], sent["messages"], part)
    rest = [{key: value for key, value in body.items() if key != "messages"}
            for body in (theirs, sent)]
    return where + say(", beside its messages (the tools' schemas, the model):",
                       "，在消息之外（工具的 schema、模型名）：") + _parted(rest[:1], rest[1:], 0)


def _exercised(kept: list[str], called: set[str]) -> str:
    """Which of your pieces (`kept`, exercise ids) the run called, and which it never did: the
    same figures vouch only for the ones it called."""
    if not kept:
        return say("no piece of yours is kept: both runs were the shipped engine",
                   "你还没有保存组件：两次运行的都是自带的引擎")
    mine = [exercise for exercise in kept if exercise in called]
    never = [exercise for exercise in kept if exercise not in called]
    lines = [say(f"your pieces it called: {', '.join(mine) or 'none'} ({len(mine)} of "
                 f"{len(kept)} kept)",
                 f"它调用了你的组件：{'、'.join(mine) or '一个也没有'}（保存的 {len(kept)} 个里的 "
                 f"{len(mine)} 个）")]
    if never:
        lines.append(say(f"not exercised: it never called them, so no result here vouches for "
                         f"them: {', '.join(never)}",
                         f"没有检验到：它从没调用它们，这里的结果证明不了它们是对的："
                         f"{'、'.join(never)}"))
    return "\n".join(lines)


def _shown(message: dict, project: Path) -> dict:
    """A message as compared: the project's folder (one per run) named alike."""
    return _replace(message, str(project), "<project>")


def _replace(value, old: str, new: str):
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, dict):
        return {k: _replace(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace(v, old, new) for v in value]
    return value


def _parted(shipped: list[dict], mine: list[dict], at: int) -> str:
    """Message `at` of each history, around the first character where the two differ."""
    texts = [repr(history[at]) if at < len(history) else say(
        "(nothing: the history ended)", "（没有：历史到此为止）") for history in (shipped, mine)]
    first = next((i for i, (a, b) in enumerate(zip(*texts, strict=False)) if a != b),
                 min(map(len, texts)))
    start = max(0, first - 60)
    shown = [("..." if start else "") + text[start:start + 150] + ("..." if len(text) > start + 150
                                                                   else "") for text in texts]
    labels = [say("shipped:", "自带的："), say("yours:", "你的：")]
    width = max(map(columns, labels)) + 1  # the two values start in the same column
    return "".join(f"\n  {label}{' ' * (width - columns(label))}{text}"
                   for label, text in zip(labels, shown, strict=True))


# A line of pytest's short summary (-rf): FAILED, the test's node id (its file, "::", its name, and
# in brackets its parameters' id, which may hold spaces, "::" or " - "), then " - " and the first
# words of what failed, or nothing where the line had no room for them.
FAILED = re.compile(r"^FAILED (\S+?)::([^\[\s]*(?:\[.*?\])?)(?= - |$)", re.M)


def your_tests(engine: Engine, root: Path | None = None) -> str:
    """The package's own tests of each of your pieces, in a process of their own with your
    pieces in place (this module as its pytest plugin): what passed and what failed. A piece at
    a seam has no package test of its own: its exercise's check is what tests it."""
    root = Path(root or Path(__file__).resolve().parent.parent)
    pieces = [p for p in PIECES if p.exercise in engine.answers]
    seams = [s.exercise for s in SEAMS if s.exercise in engine.answers]
    if not pieces and not seams:
        return say("no piece of yours yet: nothing to test", "还没有你的组件：没有要测的")
    untested = [f"{exercise:<18} " + say(
        f"no package test of its own: check(\"{exercise}\", ...), its exercise's check, is what "
        "tests it", f"包里没有它自己的测试：检验它的是这道练习的 check(\"{exercise}\", ...)")
        for exercise in seams]
    if not pieces:
        return "\n".join(untested)
    if importlib.util.find_spec("pytest") is None:
        return "\n".join([say(
            "the package's tests need pytest: pip install pytest (the course's extras have it: "
            "pip install -e \".[course]\")", "包的测试要用 pytest：pip install pytest（课程的 "
            "extras 里有它：pip install -e \".[course]\"）"), *untested])
    if not (root / "tests").is_dir():
        return "\n".join([say(
            "the package's tests are in its repository (tests/), not in an installed package: "
            "clone it to run them", "包的测试在它的仓库里（tests/），安装好的包里没有：克隆仓库"
            "才能运行"), *untested])
    lines = []
    for piece in pieces:
        env = {**os.environ, "CORECODER_COURSE_YOURS": piece.exercise,
               "CORECODER_COURSE_ANSWERS": str(engine.folder)}
        # -rf: a line for each failed test; no colours inside those lines. The suite's own options
        # aside, and two plugins these files do without: nbval (no notebook here), whose import
        # alone costs two seconds a run, and Hypothesis's, which imports all of Hypothesis as the
        # run ends, a second more (a file with a Hypothesis test imports it all the same)
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-rf", "--color=no", "-p", "no:cacheprovider",
             "-p", "no:nbval", "-p", "no:hypothesispytest", "-p", "corecoder_course.yours",
             "-o", "addopts=", *piece.tests], cwd=root, env=env, capture_output=True, text=True)
        failed = [f"{Path(file).name}::{test}" for file, test in FAILED.findall(done.stdout)]
        if done.returncode == 0:
            verdict = say("pass", "通过")
        elif failed:
            verdict = say(f"{len(failed)} failed: ", f"{len(failed)} 个没通过：") + ", ".join(
                failed[:3]) + ("..." if len(failed) > 3 else "")
        else:  # the run itself ended: what it said last
            said = (done.stderr.strip() or done.stdout.strip() or "?").splitlines()[-1]
            verdict = say(f"could not run: {said}", f"没能运行：{said}")
        lines.append(f"{piece.exercise:<18} {verdict}")
    return "\n".join(lines + untested)


# --- the machinery: standing in for the shipped definition --------------------------------------


@contextlib.contextmanager
def _standing_in(shipped: str, mine):
    """`mine` wherever the package holds the shipped object `shipped` names: the attribute of
    its class, or every module of the package that has it under that name (`from .context
    import turn_start` made a second name for it), until the block ends."""
    module_name, _, qualname = shipped.partition(":")
    owner = importlib.import_module(module_name)
    *path, name = qualname.split(".")
    for part in path:
        owner = getattr(owner, part)
    original = vars(owner)[name] if path else getattr(owner, name)
    holders = [owner] if path else [
        module for key, module in list(sys.modules.items())
        if (key == "corecoder" or key.startswith("corecoder.")) and module is not None
        and vars(module).get(name) is original]
    try:
        for holder in holders:
            setattr(holder, name, mine)
        yield
    finally:
        for holder in holders:
            setattr(holder, name, original)


def pytest_configure(config) -> None:
    """As a pytest plugin: the pieces CORECODER_COURSE_YOURS names (comma-separated exercise
    ids) stand in for the shipped ones for the whole run, before any test module is imported."""
    wanted = [e for e in os.environ.get("CORECODER_COURSE_YOURS", "").split(",") if e]
    if not wanted:
        return
    engine = your_engine()
    missing = [e for e in wanted if e not in engine.answers]
    if missing:
        raise RuntimeError(f"no answer kept for {', '.join(missing)}")
    engine = Engine(engine.folder, {e: engine.answers[e] for e in wanted}, engine.missing)
    config.add_cleanup(engine.__exit__)
    engine.__enter__()
