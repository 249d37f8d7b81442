"""The ablation lab: what each mechanism of the finished engine is for, measured.

One long task is run by the finished engine (`build_agent`), then once more for each mechanism
with that one mechanism switched off, and a table compares the runs: rounds, failed calls,
tokens sent, the share the prompt cache served, cost, how the run ended, and what went
differently (a file written wrong, a file deleted, a request the provider refused...).

    ablate()         the ten runs, as data: a Row each, the finished engine's first
    lab_table(rows)  the table, in the language spoken (the same on every run)
    lab()            both: runs the lab and prints its table

Everything is offline and deterministic, and the engine is the real one, its model client
included. The model is a script (`Developer`) that plays the task's steps and reacts to the
setbacks a tool result reports, as a real model would. It is served over loopback HTTP by a
provider built on corecoder.testing's ScriptServer, which the real client (`corecoder.llm.LLM`,
its retries and all) talks to. The provider bills and refuses as a real one does: tokens by
corecoder's own estimate, a prompt cache, a context window, and a 400 for an illegal history.
Costs are deepseek-v4-flash's list price (corecoder/cli/prices.json), through corecoder's
Ledger. Where time matters (parallel calls) a simulated clock counts it, so no wall time,
temporary path, port or date reaches the table. Its words are those of the language `say`
speaks (words.py): Chinese within `speaking("zh")`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import sys
import tempfile
import threading
from collections import deque
from dataclasses import dataclass, field, fields
from functools import partial
from pathlib import Path
from unittest import mock

from corecoder import build_agent, calls
from corecoder.agent import KeepEverything
from corecoder.calls import Gate, run_in_order
from corecoder.cli.pricing import BUILT_IN, Ledger, price_for, read_prices
from corecoder.context import SUMMARY_PROMPT
from corecoder.events import Compacted, Retrying, RoundStarted, ToolCallFinished, UsageReported
from corecoder.llm import LLM
from corecoder.messages import ContextTooLong, Reply, Usage, tool_result
from corecoder.permissions import Consent
from corecoder.scripted import parse_turn
from corecoder.testing import ScriptServer
from corecoder.tokens import message_tokens, text_tokens, tools_tokens, window_for
from corecoder.tool import Tool, ToolError
from corecoder.tools import default_tools
from corecoder.tools.edit import EditFile, exact, no_match, read_text
from corecoder.tools.todo import TodoWrite

from .words import columns, say

MODEL = "deepseek-v4-flash"  # the provider's model: its window and its price
WINDOW = window_for(MODEL)  # 128,000 tokens
PRICE = price_for(MODEL, read_prices(BUILT_IN))


# --- the rows: each mechanism, the chapter that built it, and how the lab switches it off


@dataclass(frozen=True)
class Mechanism:
    """A mechanism of the finished engine, and the code that switches it off (in `assemble`, one
    `if` per mechanism, or in NO_SEAM)."""

    name: str
    chinese: str
    chapter: int | None
    how: str
    seam: bool = True  # False: the engine has no seam for it, so the lab patches around it


FINISHED = Mechanism("nothing", "无", None, "build_agent(...)")  # the finished engine
MECHANISMS = (  # name, in Chinese, the chapter that built it, how the lab switches it off
    # 32 modules read outgrow the window, and the provider refuses the request
    Mechanism("compaction", "压缩", 4, "agent.context = KeepEverything()"),
    # the time in the system prompt: no request begins as the one before did, so little is cached
    Mechanism("cache-stable prompt", "缓存友好的提示词", 1,
              "agent.subscribe(ClockInPrompt(agent))"),
    # the three test suites run one after another
    Mechanism("parallel calls", "并行调用", 5, "agent.executor = run_in_order"),
    # a line retyped without its trailing spaces matches nothing
    Mechanism("edit cascade", "编辑的容错匹配", 2, "edit_file = ExactEditFile()"),
    # the provider's one 429 ends the run
    Mechanism("retries", "重试", 3, "LLM(..., max_attempts=1)"),
    # replace_all="false" reaches the tool, where a string that is not empty is true
    Mechanism("schema check", "参数校验", 2, "calls.problems = lambda schema, value: []",
              seam=False),
    # a Ctrl+C leaves a call with no result, and the provider refuses that history
    Mechanism("legal history", "合法的历史", 1, "agent.answer = partial(first_draft, agent)",
              seam=False),
    # 123 KB of build log joins the history, and is sent again every round
    Mechanism("output bound", "输出上限", 2,
              "calls.bound, calls.OUTPUT_LIMIT = (lambda text, ws: text), sys.maxsize",
              seam=False),
    # nobody is asked before `rm -rf build data`
    Mechanism("consent", "授权确认", 8, "build_agent(..., consent=None)"),
)


# --- the task: a project with two bugs, and the model's steps through it

TASK = ("Invoices come out wrong. Go through the legacy pricing rules in shop/legacy/, fix "
        "shop/invoice.py, run the test suites, and clean up the build leftovers.")
GO_ON = "Don't run the integration suite, it takes an hour. Go on with the clean-up."

# Two bugs: subtotal() adds where it should multiply (and its line ends in two spaces nobody
# sees), and the discount is 20 % where it should be 10 % (and its line is vat()'s line too).
INVOICE = (
    "def subtotal(lines):\n"
    "    total = 0\n"
    "    for price, qty in lines:\n"
    "        total += price + qty  \n"
    "    return total\n"
    "\n\n"
    "def vat(amount):\n"
    "    rate = 0.2\n"
    "    return round(amount * rate, 2)\n"
    "\n\n"
    "def discount(amount):\n"
    "    rate = 0.2\n"
    "    return round(amount * rate, 2)\n"
)
SUITES = {  # each test suite: a call of a function of shop/invoice.py, and what it must give
    "subtotal": ("subtotal([(2.0, 3), (1.5, 2)])", 9.0),
    "vat": ("vat(100)", 20.0),
    "discount": ("discount(100)", 10.0),
}
MODULES = tuple(f"shop/legacy/rules_{k:02d}.py" for k in range(1, 33))  # ~4,400 tokens each
DATA = ("data/customers.csv", "data/orders.csv")  # the user's: not to be deleted


def call(name: str, **arguments) -> dict:
    return {"name": name, "arguments": arguments}


def reply(text: str, *tool_calls: dict) -> dict:
    return {"text": text, "tool_calls": list(tool_calls)}


def plan(done: int) -> dict:
    """The todo list, its first `done` items done and the next one in progress."""
    items = ("Survey the legacy rules", "Fix shop/invoice.py", "Run the suites", "Clean up")
    status = ["done"] * done + ["in_progress"] + ["pending"] * (len(items) - done - 1)
    return call("todo_write", todos=[{"content": item, "status": s}
                                     for item, s in zip(items, status, strict=True)])


def reading(first: int, last: int) -> list[dict]:
    """Replies that read the legacy modules first..last-1, four at a time (in parallel)."""
    return [reply("Reading the legacy rules.", *[call("read_file", path=path)
                                                 for path in MODULES[k:k + 4]])
            for k in range(first, last, 4)]


STEPS = (  # the model's replies, in order
    reply("I'll plan this first.", plan(0)),
    *reading(0, 8),
    {"fault": "rate_limit", "retry_after": 0},  # here the provider answers 429, once
    *reading(8, len(MODULES)),
    reply("Now the invoice code.", call("read_file", path="shop/invoice.py")),
    reply("And the last build's log.", call("bash", command="cat build.log")),  # 123 KB
    reply("subtotal() adds price and qty: it must multiply.", plan(1),
          call("edit_file", path="shop/invoice.py",  # retyped: the two spaces are lost
               old_string="        total += price + qty\n    return total",
               new_string="        total += price * qty\n    return total")),
    reply("The discount is 10 %, not 20 %.",  # a boolean sent as a string: a slip models make
          call("edit_file", path="shop/invoice.py", old_string="rate = 0.2",
               new_string="rate = 0.1", replace_all="false")),
    reply("Running the three suites at once.", plan(2), *[call("run_tests", suite=s)
                                                          for s in SUITES]),
    reply("And the integration suite.", call("run_tests", suite="integration")),
    # here the user presses Ctrl+C, then says GO_ON
    reply("Cleaning up.", plan(3), call("bash", command="rm -rf build data")),
    "Fixed shop/invoice.py: subtotal() multiplies, the discount is 10 %. The three suites "
    "pass; build/ is removed.",
)

REACTIONS = (  # a setback a tool result reports -> the model's next reply
    ("old_string was not found",  # an exact match only: match less of the line
     reply("The text differs somewhere; I'll match less of it.",
           call("edit_file", path="shop/invoice.py", old_string="total += price + qty",
                new_string="total += price * qty"))),
    ("bad arguments for edit_file",  # the schema check asked for a boolean
     reply("replace_all must be a boolean.",
           call("edit_file", path="shop/invoice.py", old_string="rate = 0.2",
                new_string="rate = 0.1", replace_all=False))),
    ("old_string occurs 2 times",  # only discount()'s rate is meant
     reply("Only discount()'s rate changes.",
           call("edit_file", path="shop/invoice.py",
                old_string="def discount(amount):\n    rate = 0.2",
                new_string="def discount(amount):\n    rate = 0.1"))),
    ("the user said no",  # consent refused deleting data/
     reply("Then only build/.", call("bash", command="rm -rf build"))),
)


# --- the measures: a row per run


@dataclass(frozen=True)
class Ending:
    """How a run ended: with the model's answer, or with the error that stopped it."""

    error: str = ""  # "" (the answer), "too long", "429", "unanswered", or the error's text
    round: int = 0  # the round it stopped in
    detail: str = ""  # the tokens of the request refused as too long, or the unanswered call


@dataclass(frozen=True)
class Facts:
    """What a run left behind and showed on the way, beyond the figures."""

    invoice_wrong: tuple[str, ...]  # the functions of shop/invoice.py whose suite fails
    data_kept: bool
    suites_at_once: int  # the most test suites that ran at the same time
    test_seconds: int  # the suites' time, on the simulated clock
    longest_result: int  # characters of the longest tool result the model was sent
    compactions: int
    retries: int


@dataclass(frozen=True)
class Row:
    """One run of the task, with `mechanism` switched off."""

    mechanism: Mechanism  # its name, the chapter that built it, how it was switched off
    rounds: int
    failed: int  # calls refused or failed (not the one the user stopped with Ctrl+C)
    tokens_sent: int
    cached_share: float  # of the tokens sent, the share the provider's cache served
    cost: float  # USD
    ending: Ending
    facts: Facts
    changed: tuple[str, ...]  # the facts that differ from the finished engine's
    # the agent's history at the end, and the body of every request the provider received (what
    # reached the model), in order; the project's folder written /project in both, as the
    # provider bills it. Chapter 10 compares a learner's engine's with the shipped one's.
    history: tuple = field(default=(), compare=False, repr=False)
    requests: tuple = field(default=(), compare=False, repr=False)


def ablate() -> list[Row]:
    """The task run by the finished engine, then once with each mechanism switched off."""
    finished = run_task(FINISHED)
    return [finished, *(run_task(mechanism, finished) for mechanism in MECHANISMS)]


def lab() -> None:
    """Run the lab and print its table (a few seconds: ten runs of a twenty-round task)."""
    print(lab_table(ablate()))


# --- the machinery ----------------------------------------------------------------------------


def make_project(root: Path) -> Path:
    """shop/invoice.py, 32 legacy modules of ~14 KB to survey, a 123 KB build log, build/
    (leftovers to clean up) and data/ (the user's), in a git project of its own."""
    files = {"shop/invoice.py": INVOICE, "build/invoice.o": "\0" * 64, "build/tmp.txt": "temp\n"}
    for k, path in enumerate(MODULES, 1):
        rules = [f"def rule_{k:02d}_{i:03d}(price, qty):\n"
                 f"    # rule {i} of batch {k}: a markup of {(k * 7 + i) % 13}%, rounded to cents\n"
                 f"    return round(price * qty * {100 + (k * 7 + i) % 13} / 100, 2)\n\n"
                 for i in range(100)]
        files[path] = f'"""Pricing rules, batch {k}: by the old system."""\n\n' + "".join(rules)
    files["build.log"] = "".join(f"[build] step {i:04d}: compiled {MODULES[i % len(MODULES)]} "
                                 f"({i * 37 % 997} rules checked, 0 errors)\n" for i in range(1500))
    files.update({path: "id,name\n1,Ada\n2,Grace\n" for path in DATA})
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    (root / ".git").mkdir()  # so nothing above it (an AGENTS.md in a parent folder) joins in
    return root


def run_suite(root: Path, suite: str) -> str:
    """One test suite: a call of a function of shop/invoice.py, compared with what it must give."""
    code, expected = SUITES[suite]
    space: dict = {}
    exec((root / "shop/invoice.py").read_text(), space)
    got = eval(code, space)
    return f"{suite}: passed" if got == expected else \
        f"{suite}: FAILED (expected {expected}, got {got})"


class Developer:
    """The scripted model. Asked for a reply, it reacts to any new tool result that reports a
    setback; otherwise it plays the next step. What it says depends only on what it is sent."""

    def __init__(self):
        self.steps = deque(STEPS)
        self.read: set[str] = set()  # the ids of the tool results it has reacted to

    def turn(self, messages: list[dict]) -> dict | str:
        if messages[0]["content"] == SUMMARY_PROMPT:  # the compactor wants a summary
            return ("Goal: fix the invoices.\nFiles: shop/legacy/ surveyed (no bug there); "
                    "shop/invoice.py.\nOpen todos: fix shop/invoice.py, run the suites, clean up.")
        for message in reversed(messages):  # the results of its last reply
            if message["role"] == "assistant":
                break
            if message["role"] == "tool" and message["tool_call_id"] not in self.read:
                self.read.add(message["tool_call_id"])
                fixes = [fix for setback, fix in REACTIONS if setback in message["content"]]
                self.steps.extendleft(reversed(fixes))  # played next, in their order
        return self.steps.popleft()


class Provider(ScriptServer):
    """corecoder.testing's loopback server, asking the Developer for each reply, and before that
    doing what a provider does: refuse a request over the window (a 400, context_length), and
    bill it, with a prompt cache. (An illegal history ScriptServer refuses itself, with a 400.)

    The cache is a simplification: a request's longest run of leading units (the tools' schemas,
    then each message) that an earlier request began with too is cached, whole units only, with
    no minimum length. Tokens are corecoder's estimate, with the project's folder billed as if it
    were `/project`, so that the figures are the same wherever the lab runs."""

    def __init__(self, developer: Developer, root: Path):
        super().__init__([], model=MODEL)
        self.developer, self.root = developer, str(root)
        self.cache: set[str] = set()  # the hash of every prefix of every request served
        self.sizes: dict[str, int] = {}  # the tokens of each message seen, by its JSON
        self.too_long: list[int] = []  # the tokens of each request refused as over the window

    def next_turn(self) -> tuple[int, Reply, dict]:
        """ScriptServer's hook, for the request it has just recorded (requests come one at a
        time): its number, the reply, and the fault to answer instead, if any."""
        n, body = len(self.requests), self.requests[-1]["body"]
        tools = body.get("tools") or []
        texts = [json.dumps(m).replace(self.root, "/project") for m in body["messages"]]
        sizes = [tools_tokens(tools), *(self.size(text) for text in texts)]
        if sum(sizes) > WINDOW:
            self.too_long.append(sum(sizes))
            return n, Reply(), {"fault": "context_length"}
        turn = self.developer.turn(body["messages"])
        if isinstance(turn, dict) and "fault" in turn:  # the script's 429
            return n, Reply(), turn
        answer = parse_turn(turn, n - 1)  # call ids call_<n>_<k>: unique in the session
        written = text_tokens(answer.text) + sum(text_tokens(c.name + c.arguments)
                                                 for c in answer.tool_calls)
        answer.usage = Usage(sum(sizes), written, self.cached([json.dumps(tools), *texts], sizes))
        return n, answer, {}

    def cached(self, units: list[str], sizes: list[int]) -> int:
        """The tokens of the leading units an earlier request began with too; from now on, every
        prefix of this request is cached as well."""
        chain, cached, hit = hashlib.sha256(), 0, True
        for unit, size in zip(units, sizes, strict=True):
            chain.update(unit.encode() + b"\0")
            hit = hit and chain.hexdigest() in self.cache
            cached += size if hit else 0
            self.cache.add(chain.hexdigest())
        return cached

    def size(self, text: str) -> int:
        """A message's tokens (each message is counted once: a history is resent every round)."""
        if text not in self.sizes:
            self.sizes[text] = message_tokens(json.loads(text))
        return self.sizes[text]


class Suites(Tool, Gate):
    """run_tests, and an instrument (a tool that keeps state, which tools never do): it is also
    a gate, which counts the suites admitted and refuses nothing.

    A suite waits until every suite admitted before it has started, so that suites that can
    overlap do, on every run: RunInParallel admits all of a reply's calls before it runs any,
    run_in_order admits one, runs it, then admits the next. A suite "takes" 20 s on a
    simulated clock, from the time the last suite to finish ended."""

    name = "run_tests"
    description = "Run one test suite of the project: subtotal, vat, discount or integration."
    parameters = {"type": "object", "properties": {"suite": {
        "type": "string", "enum": [*SUITES, "integration"]}},
        "required": ["suite"], "additionalProperties": False}

    def __init__(self):
        self.changed = threading.Condition()
        self.admitted = self.started = self.running = self.most = self.clock = 0

    def before(self, tool: Tool, args: dict, workspace) -> None:
        if tool is self:
            with self.changed:
                self.admitted += 1

    def run(self, ws, suite: str) -> str:
        with self.changed:
            self.started += 1
            self.changed.notify_all()
            if suite == "integration":
                raise KeyboardInterrupt  # the user presses Ctrl+C: it would take an hour
            self.running += 1
            self.most, start = max(self.most, self.running), self.clock
            self.changed.wait_for(lambda: self.started >= self.admitted, timeout=10)
        try:
            return run_suite(ws.cwd, suite)
        finally:
            with self.changed:
                self.running -= 1
                self.clock = max(self.clock, start + 20)


def the_user(tool: Tool, args: dict) -> str:
    """Consent's question, answered as the user would: yes, except to deleting data/."""
    return "deny" if "data" in args.get("command", "") else "once"


# The switches: what a switched-off mechanism is replaced with.


class ExactEditFile(EditFile):
    """edit_file without its cascade: old_string must be in the file exactly as given. (EditFile
    has no switch for it: `run` calls the module's `tolerant` itself.)"""

    def run(self, ws, path, old_string, new_string, replace_all=False):
        target = ws.resolve(path)
        text, _ = read_text(target, ws.show)
        if old_string.strip() and not exact(text, old_string, new_string):
            raise ToolError(no_match(text, old_string, ws.show(target)))
        return super().run(ws, path, old_string, new_string, replace_all)


class ClockInPrompt:
    """A subscriber that writes the time into the system prompt at each round, as an agent that
    tells its model the time there does (simulated: a round is a minute). It counts the rounds
    itself: RoundStarted counts from 1 again at each chat()."""

    def __init__(self, agent):
        self.agent, self.minutes = agent, 0

    def __call__(self, event) -> None:
        if isinstance(event, RoundStarted):
            self.minutes += 1
            self.agent.prompt_parts = [f"The time is 09:{self.minutes:02d}."]


def first_draft(agent, answered: Reply) -> None:
    """Agent.answer as a first draft writes it: the reply joins the history, its calls run, then
    their results join it. A Ctrl+C while they run leaves a call there with no result. (No seam:
    the rule is Agent.answer's own, so the lab replaces the method on one agent.)"""
    agent.messages.append(answered.message())
    results: dict[str, str] = {}
    agent.executor(list(answered.tool_calls), agent, results)
    agent.messages += [tool_result(c.id, results[c.id]) for c in answered.tool_calls]


NO_SEAM = {  # the switches that patch calls.py for one run, since it has no seam for them:
    "schema check": {"problems": lambda schema, value: []},  # admit finds nothing wrong
    # perform bounds a result with `bound` (whose limit is OUTPUT_LIMIT as it was when `bound`
    # was defined), then with OUTPUT_LIMIT itself
    "output bound": {"bound": lambda text, ws: text, "OUTPUT_LIMIT": sys.maxsize},
}


def assemble(off: str, provider: Provider, root: Path, suites: Suites, build=build_agent):
    """The finished engine, with the mechanism named `off` switched off: one `if` per switch.
    The context and the executor are set after build_agent, which takes neither; the loop reads
    both at every round. (The Compactor stays subscribed to usage events, which is harmless.)"""
    attempts = {"max_attempts": 1} if off == "retries" else {}
    # No waits (the 429 asks for 0 s), and no stream: the lab measures nothing of streaming, and
    # the ScriptServer's streams of 7-character pieces would cost a quarter of its time.
    llm = LLM(MODEL, base_url=provider.base_url, api_key="none", seed=0, stream=False,
              sleep=lambda seconds: None, **attempts)
    tools = [*default_tools(), TodoWrite(), suites]  # build_agent's default tools, and the lab's
    if off == "edit cascade":  # in its place: the tools' schemas open every request (cached)
        tools = [ExactEditFile() if tool.name == "edit_file" else tool for tool in tools]
    agent = build(llm, root, tools=tools, consent=None if off == "consent" else Consent(the_user))
    if off == "compaction":
        agent.context = KeepEverything()
    if off == "cache-stable prompt":
        agent.subscribe(ClockInPrompt(agent))
    if off == "parallel calls":
        agent.executor = run_in_order
    if off == "legal history":
        agent.answer = partial(first_draft, agent)
    agent.gates.append(suites)  # last: it only counts
    return agent


def run_task(mechanism: Mechanism, finished: Row | None = None, build=build_agent) -> Row:
    """The task, start to end, with `mechanism` switched off: its row, its facts compared with
    those of the `finished` engine's row. `build` makes the engine (build_agent's signature:
    chapter 10's engine of a learner's answers is another)."""
    patches = NO_SEAM.get(mechanism.name)
    with tempfile.TemporaryDirectory(prefix="ablation-") as folder, \
            (mock.patch.multiple(calls, **patches) if patches else contextlib.nullcontext()):
        root = make_project(Path(folder).resolve())  # as build_agent will see it
        with Provider(Developer(), root) as provider:
            suites = Suites()
            agent = assemble(mechanism.name, provider, root, suites, build)
            events: list = []
            agent.subscribe(events.append)  # parallel calls' events too: append is atomic
            ending = Ending()
            try:
                try:
                    agent.chat(TASK)
                except KeyboardInterrupt:  # the user's Ctrl+C, during the integration suite
                    agent.chat(GO_ON)
            except Exception as error:
                ending = ending_of(error, provider, count(events, RoundStarted))
            history = tuple(at_project(message, root) for message in agent.messages)
            requests = tuple(at_project(request["body"], root) for request in provider.requests)
        facts = Facts(invoice_wrong=tuple(s for s in SUITES
                                          if not run_suite(root, s).endswith("passed")),
                      data_kept=all((root / path).exists() for path in DATA),
                      suites_at_once=suites.most, test_seconds=suites.clock,
                      longest_result=longest_result(provider),
                      compactions=count(events, Compacted), retries=count(events, Retrying))
    ledger = Ledger({MODEL: PRICE})
    for event in events:
        if isinstance(event, UsageReported):
            ledger.add(event.model, event.usage)
    failed = sum(isinstance(e, ToolCallFinished) and e.status not in ("ok", "interrupted")
                 for e in events)
    changed = tuple(f.name for f in fields(Facts)
                    if finished and getattr(facts, f.name) != getattr(finished.facts, f.name))
    return Row(mechanism, count(events, RoundStarted), failed, ledger.prompt_tokens,
               ledger.cached_tokens / ledger.prompt_tokens, ledger.known_cost, ending, facts,
               changed, history, requests)


def at_project(value, root: Path):
    """`value` (what JSON holds) with the project's folder written /project, as the provider bills
    it: the same wherever the lab runs."""
    return json.loads(json.dumps(value).replace(str(root), "/project"))


def count(events: list, kind: type) -> int:
    return sum(isinstance(event, kind) for event in events)


def ending_of(error: Exception, provider: Provider, rounds: int) -> Ending:
    """The error a run ended with, sorted: the provider's "too long", a 429 given up on, a
    history refused for a call with no result; or else its own text (without the port)."""
    text = str(error)
    if isinstance(error, ContextTooLong):
        return Ending("too long", rounds, f"{provider.too_long[-1]:,}")
    if unanswered := re.search(r"tool call '([^']+)' is unanswered", text):
        return Ending("unanswered", rounds, unanswered[1])
    if ": 429 " in text:
        return Ending("429", rounds)
    return Ending(text.replace(provider.base_url, "the provider"), rounds)


def longest_result(provider: Provider) -> int:
    """The characters of the longest tool result the model was sent."""
    return max((len(m["content"]) for r in provider.requests if isinstance(r["body"], dict)
                for m in r["body"].get("messages", []) if m["role"] == "tool"), default=0)


# The table.

WIDTHS = (2, 20, 6, 6, 12, 7, 8)  # ch, what differs, rounds, failed, tokens sent, cached, cost
INDENT = " " * 4  # under a row's name: how it was switched off, and what changed
FACTS = {  # each fact's line, in the order of Facts: {} is its value, or "before → after"
    "invoice_wrong": ("shop/invoice.py: {}", "shop/invoice.py：{}"),
    "data_kept": ("data/: {}", "data/：{}"),
    "suites_at_once": ("test suites at once: {}", "同时运行的测试套件：{} 个"),
    "test_seconds": ("the suites' time: {} s (simulated)", "测试用时：{} 秒（模拟）"),
    "longest_result": ("the longest tool result: {} characters", "最长的工具结果：{} 个字符"),
    "compactions": ("compactions: {}", "压缩：{} 次"),
    "retries": ("retries: {}", "重试：{} 次"),
}
ENDINGS = {  # how a run ended, by Ending.error: {0} is the round, {1} the detail, {2} the error
    "": ("the answer", "给出回答"),
    "too long": ("error at round {0}: a request of {1} tokens, over the window",
                 "第 {0} 轮出错：请求有 {1} 个 token，超出了窗口"),
    "429": ("error at round {0}: the provider's 429, not retried",
            "第 {0} 轮出错：服务商返回 429，没有重试"),
    "unanswered": ("error at round {0}: the provider refused the history ({1} unanswered)",
                   "第 {0} 轮出错：服务商拒绝了这段历史（{1} 没有结果）"),
}


def lab_table(rows: list[Row]) -> str:
    """The rows as a table, in the language spoken: a line of figures per run, and under it how
    the mechanism was switched off and what differed from the finished engine (under the
    finished engine: what it showed)."""
    finished = rows[0]
    lines = [
        say("Ablation lab: one scripted task, run by the finished engine, then with each mechanism "
            "off in turn.",
            "消融实验：同一个脚本化的任务，先由完整的引擎跑一遍，再每次关掉一种机制各跑一遍。"),
        say(f"Model {MODEL}: {WINDOW:,}-token window; per million tokens ${PRICE.input} in, "
            f"${PRICE.cached_input} cached, ${PRICE.output} out.",
            f"模型 {MODEL}，窗口 {WINDOW:,} 个 token；每百万 token：输入 ${PRICE.input}，"
            f"缓存命中 ${PRICE.cached_input}，输出 ${PRICE.output}。"),
        "",
        # what differs from the finished engine: "nothing" (it), the mechanism switched off, or
        # "your engine" (chapter 10's the_long_task)
        aligned(say("ch", "章"), say("what differs", "不同之处"), say("rounds", "轮数"),
                say("failed", "失败"), say("tokens sent", "发送的 token"),
                say("cached", "缓存命中"), say("cost", "成本")),
        "-" * (sum(WIDTHS) + 2 * (len(WIDTHS) - 1)),
    ]
    for row in rows:
        lines.append(aligned(str(row.mechanism.chapter or ""),
                             say(row.mechanism.name, row.mechanism.chinese), str(row.rounds),
                             str(row.failed), f"{row.tokens_sent:,}", f"{row.cached_share:.0%}",
                             f"${row.cost:.4f}"))
        seam = "" if row.mechanism.seam else say(" (no seam)", "（没有接缝）")
        lines.append(INDENT + say("how: ", "做法：") + row.mechanism.how + seam)
        lines += [INDENT + note for note in notes(row, finished)]
    lines += ["",
              say("failed: calls refused or failed (the call the user stopped with Ctrl+C is not "
                  "counted).",
                  "失败：被拒绝或失败的调用（用户按 Ctrl+C 停下的那个不算）。"),
              say("cached: the share of the tokens sent that the provider's prompt cache served.",
                  "缓存命中：发送的 token 里由服务商的提示词缓存提供的比例。"),
              say("cost: in USD, by corecoder's Ledger.",
                  "成本：以美元计，由 corecoder 的 Ledger 算出。")]
    return "\n".join(lines)


def aligned(chapter: str, name: str, *figures: str) -> str:
    """A line of the table: the name left-aligned, the rest right-aligned, by screen columns
    (a Chinese character takes two)."""
    cells = [(chapter, True), (name, False), *((figure, True) for figure in figures)]
    return "  ".join(" " * (width - columns(text)) + text if right
                     else text + " " * (width - columns(text))
                     for (text, right), width in zip(cells, WIDTHS, strict=True)).rstrip()


def notes(row: Row, finished: Row) -> list[str]:
    """What a row shows under its figures. The finished engine: how it ended, and each fact. A
    run that ended otherwise: that, and what it left. Any other: each fact that changed, and
    the figures that moved."""
    if row is finished:
        return [ended(row.ending), *(fact(name, getattr(row.facts, name)) for name in FACTS)]
    changes = [fact(name, getattr(finished.facts, name), getattr(row.facts, name))
               for name in row.changed]
    if row.ending != finished.ending:  # the rest of its facts only say that it stopped
        return [ended(finished.ending, row.ending),
                *(change for name, change in zip(row.changed, changes, strict=True)
                  if name in ("invoice_wrong", "data_kept"))]
    moved = figures_moved(finished, row)
    return changes + ([moved] if moved else [])


def fact(name: str, *values) -> str:
    """A fact's line, with its value, or its values before → after."""
    return say(*FACTS[name]).format(" → ".join(in_words(value) for value in values))


def in_words(value) -> str:
    """A fact's value: a number, data/ kept or deleted, the invoice's functions that are wrong."""
    if isinstance(value, bool):
        return say("kept", "还在") if value else say("deleted", "被删了")
    if isinstance(value, int):
        return f"{value:,}"
    wrong = say(", ", "、").join(f"{function}()" for function in value)
    return say(f"wrong: {wrong}", f"有错：{wrong}") if value else say("right", "正确")


def ended(*endings: Ending) -> str:
    """How a run ended, or how the finished engine's run ended → how this one did."""
    default = ("error at round {0}: {2}", "第 {0} 轮出错：{2}")  # an error not foreseen
    said = [say(*ENDINGS.get(e.error, default)).format(e.round, e.detail, e.error)
            for e in endings]
    return say("ended: ", "结束：") + " → ".join(said)


def figures_moved(before: Row, after: Row) -> str:
    """The figures that moved, in words: `rounds 20 → 21`, `tokens sent +6%`, `cost ×3.58`."""
    tokens, cost = after.tokens_sent / before.tokens_sent - 1, after.cost / before.cost
    moved = [
        (before.rounds != after.rounds,
         say("rounds {} → {}", "轮数 {} → {}").format(before.rounds, after.rounds)),
        (before.failed != after.failed,
         say("failed {} → {}", "失败 {} → {}").format(before.failed, after.failed)),
        (abs(tokens) >= 0.01, say("tokens sent {:+.0%}", "发送的 token {:+.0%}").format(tokens)),
        (abs(after.cached_share - before.cached_share) >= 0.03,  # a point or two is noise
         say("cached {:.0%} → {:.0%}", "缓存命中 {:.0%} → {:.0%}").format(before.cached_share,
                                                                       after.cached_share)),
        (abs(cost - 1) >= 0.01, say("cost ×{:.2f}", "成本 ×{:.2f}").format(cost)),
    ]
    return say(", ", "，").join(words for shown, words in moved if shown)
