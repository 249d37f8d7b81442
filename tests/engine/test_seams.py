"""The loop's seams are small named protocols, and everything the engine, the command and the course
plug into one of them satisfies it.

    Model          chat(messages, tools, emit) -> Reply, and its `model` name     (chapters 1, 3)
    ContextPolicy  attach(agent) once; prepare(messages, overflow=False) -> messages (chapter 4)
    Executor       executor(calls, agent, results): fills results as calls end    (chapters 2, 5)
    Gate           before(tool, args, workspace) / after(...): refuse, or note   (chapters 2, 7, 8)
    Subscriber     subscriber(event)                                              (chapter 1)

Each is `runtime_checkable`, so a learner's class is checked against the same protocol the
engine's classes are, and a class that lacks a method fails here by name.
"""

from __future__ import annotations

import io

import pytest

from corecoder.agent import ContextPolicy, KeepEverything, Model, Subscriber
from corecoder.calls import Executor, Gate, run_in_order
from corecoder.checkpoints import Checkpoints
from corecoder.cli.render import Renderer
from corecoder.cli.trace import Printer
from corecoder.context import Compactor
from corecoder.executor import RunInParallel
from corecoder.hooks import Hooks
from corecoder.llm import LLM
from corecoder.permissions import Consent, PlanMode
from corecoder.scripted import FunctionLLM, ScriptedLLM
from corecoder.testing import FaultyScriptedLLM
from corecoder_course.gauge import Gauge
from corecoder_course.recording import Recording
from corecoder_course.timeline import Timeline


def plugged(tmp_path) -> dict[type, list]:
    """Every class of the engine, the command and the course, by the seam it plugs into."""
    return {
        Model: [ScriptedLLM([]), FunctionLLM(lambda messages, tools: "done"), FaultyScriptedLLM([]),
                LLM("gpt-4o-mini")],
        ContextPolicy: [KeepEverything(), Compactor(), Gauge(Compactor())],
        Executor: [run_in_order, RunInParallel()],
        Gate: [PlanMode(), Consent(home=tmp_path), Hooks({}), Checkpoints(tmp_path, tmp_path)],
        Subscriber: [Printer(io.StringIO()), Renderer(console=None), Recording(agent=None), Timeline()],
    }


@pytest.mark.parametrize("seam", [Model, ContextPolicy, Executor, Gate, Subscriber],
                         ids=lambda seam: seam.__name__)
def test_everything_plugged_into_a_seam_satisfies_its_protocol(seam, tmp_path):
    for piece in plugged(tmp_path)[seam]:
        assert isinstance(piece, seam), f"{type(piece).__name__} is not a {seam.__name__}"


def test_a_class_without_the_seams_method_is_told_apart():
    class NoPrepare:
        def compact(self, messages):
            return messages

    class NoAttach:  # a policy must say what it takes of the agent, if only nothing
        def prepare(self, messages, overflow=False):
            return messages

    class NoModelName:
        def chat(self, messages, tools, emit):
            return None

    class NoBefore:  # a gate needs both methods (a subclass of Gate inherits the one it lacks)
        name = "half"

        def after(self, tool, args, result, workspace):
            return None

    assert not isinstance(NoPrepare(), ContextPolicy) and not isinstance(NoAttach(), ContextPolicy)
    assert not isinstance(NoModelName(), Model)
    assert not isinstance(NoBefore(), Gate)
    assert not isinstance("not callable", Executor) and not isinstance(42, Subscriber)


def test_a_gate_that_subclasses_the_protocol_needs_only_the_method_it_cares_about():
    class OnlyBefore(Gate):
        name = "only before"

        def before(self, tool, args, workspace):
            return "no"

    gate = OnlyBefore()
    assert isinstance(gate, Gate) and gate.after(None, {}, "result", None) is None
