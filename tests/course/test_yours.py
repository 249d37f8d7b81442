"""The learner's engine (corecoder_course/yours.py): the kept answers stand in for the shipped
pieces, wherever the package holds them and only while the engine is entered; a piece not kept
(or kept but no longer loadable) is the shipped one, named; the tour runs on both engines and
says where their histories part; the long task says where what they sent the model parts, and
which of the learner's pieces it called; and the package's own tests run against the learner's
pieces."""

from __future__ import annotations

import sys
import textwrap

import pytest

import corecoder.context
from corecoder_course.words import columns, speaking
from corecoder_course.yours import (
    PIECES,
    SEAMS,
    a_learner,
    first_difference,
    the_long_task,
    tour,
    your_engine,
    your_tests,
)

RIGHT_SAFE_CUT = '''
from corecoder.messages import is_state_note


def safe_cut(messages, index):
    index = max(0, min(index, len(messages)))
    while 0 < index < len(messages) and (messages[index]["role"] == "tool"
                                         or is_state_note(messages[index])):
        index -= 1
    return index
'''
SKIPPING_EXECUTOR = '''
def executor(calls, agent, results):  # answers every call without running it
    for call in calls:
        results[call.id] = "not run"
'''
PRICELESS_COST = '''
def cost(usage, price):  # forgets the cached rate: every prompt token at the full price
    if price is None:
        return None
    return (usage.prompt_tokens * price.input + usage.completion_tokens * price.output) / 1e6
'''


def kept(folder, exercise: str, source: str, name: str) -> None:
    folder.mkdir(exist_ok=True)
    (folder / f"{exercise}.py").write_text(f"ANSWER = {name!r}\n" + textwrap.dedent(source),
                                           encoding="utf-8")


def test_with_nothing_kept_every_piece_is_the_shipped_one_and_says_so(tmp_path):
    engine = your_engine(tmp_path)
    assert engine.answers == {}
    lines = str(engine).splitlines()
    assert len(lines) == len(PIECES) + len(SEAMS)
    assert all(line.startswith("shipped") and line.endswith("(not kept yet)") for line in lines)
    assert tour(engine, tmp_path / "tour") == "the same history, message for message (12 messages)"


def test_a_kept_piece_stands_in_wherever_the_package_holds_it_and_only_inside_the_block(tmp_path):
    import corecoder.context as context

    kept(tmp_path, "ch04.safe_cut", RIGHT_SAFE_CUT, "safe_cut")
    shipped = context.turn_start
    holders = [m for name, m in sys.modules.items()  # the engine's modules, not the course's
               if (name == "corecoder" or name.startswith("corecoder.")) and
               vars(m).get("turn_start") is shipped]
    assert context in holders
    with your_engine(tmp_path) as engine:
        assert "yours    ch04.safe_cut" in str(engine)
        assert all(m.turn_start is engine.answers["ch04.safe_cut"] for m in holders)
        assert context.turn_start([{"role": "user", "content": "hi"}], 5) == 1
    assert all(m.turn_start is shipped for m in holders) and corecoder.context.turn_start is shipped


def test_a_kept_piece_that_no_longer_loads_is_said_and_the_shipped_one_stands(tmp_path):
    kept(tmp_path, "ch04.safe_cut", "from corecoder.context import no_such_name\n", "safe_cut")
    engine = your_engine(tmp_path)
    assert "ch04.safe_cut" not in engine.answers
    line = next(line for line in str(engine).splitlines() if "ch04.safe_cut" in line)
    assert line.startswith("shipped") and "kept, but it does not load: ImportError" in line


def test_the_tour_says_where_a_different_piece_makes_the_histories_part(tmp_path):
    kept(tmp_path, "ch05.executor", SKIPPING_EXECUTOR, "executor")
    said = tour(your_engine(tmp_path), tmp_path / "tour")
    assert said.startswith("the histories part at message 2:")  # the first tool result
    assert "'content': 'not run'" in said.splitlines()[2] and "yours:" in said.splitlines()[2]


def test_the_tour_says_which_message_is_whose_in_the_notebooks_language_the_two_aligned(tmp_path):
    kept(tmp_path, "ch05.executor", SKIPPING_EXECUTOR, "executor")
    with speaking("zh"):
        said = tour(your_engine(tmp_path), tmp_path / "tour")
    shipped, yours = said.splitlines()[1:3]
    assert shipped.startswith("  自带的：") and yours.startswith("  你的：")
    label_end = [columns(line) - columns(line.lstrip(" ").split(" ", 1)[1].lstrip(" ")) for line in (shipped, yours)]
    assert label_end[0] == label_end[1]  # the two messages start in the same column
    assert "shipped" not in said and "yours" not in said


def test_first_difference_is_the_first_index_that_differs_or_where_one_history_ends():
    a, b = {"role": "user", "content": "a"}, {"role": "user", "content": "b"}
    assert first_difference([a, b], [a, b]) is None
    assert first_difference([a, b], [a, a]) == 1
    assert first_difference([a], [a, b]) == 1 and first_difference([], []) is None


@pytest.mark.parametrize("answer, verdict", [(None, "pass"), (PRICELESS_COST, "failed: ")])
def test_the_packages_own_tests_grade_the_learners_piece(tmp_path, monkeypatch, answer, verdict):
    from corecoder_course.answers import keep
    from corecoder_course.exercises.ch03 import cost

    if answer is None:  # the chapter's own answer, kept as a learner's passing check keeps it
        monkeypatch.setenv("CORECODER_COURSE_ANSWERS", str(tmp_path / "kept"))
        keep("ch03.cost", cost)
    else:
        kept(tmp_path / "kept", "ch03.cost", answer, "cost")
    said = your_tests(your_engine(tmp_path / "kept"))
    assert said.startswith("ch03.cost") and verdict in said, said


def test_the_long_task_finds_where_a_passing_policy_is_not_enough(tmp_path):
    """KeepLastTurns(4) passes chapter 4's check, and keeps whole turns; the long task is one
    turn of twenty rounds, so it cuts nothing, and the window runs out. Where what was sent parts
    is where the shipped Compactor had trimmed an old output inside the turn (the request's
    message 6: the system prompt is its message 0)."""
    learner = your_engine(a_learner(tmp_path / "kept", ["ch04.policy"]))
    assert list(learner.answers) == ["ch04.policy"]
    said = the_long_task(learner)
    mine = next(line for line in said.splitlines() if line.lstrip().startswith("your engine"))
    assert mine.split()[2] == "10"  # rounds: it stopped at round 10
    assert "error at round 10: a request of" in said and "over the window" in said
    assert "parts from the shipped engine's at request 9, message 6:" in said
    assert "characters cut; trimmed" in said
    assert said.endswith("your pieces it called: ch04.policy (1 of 1 kept)")


@pytest.fixture(scope="module")
def a_tool_never_called(tmp_path_factory):
    """The long task, by a learner who kept a tool (count_lines, which the task's model never
    calls), an estimate (the engine's own formula) and an MCP line classifier (the task has no MCP
    server): each stands in, and the task ends as the shipped engine's does, in the same history."""
    return the_long_task(your_engine(a_learner(tmp_path_factory.mktemp("kept"),
                                               ["ch02.tool", "ch04.estimate", "ch07.classify"])))


def test_the_long_task_compares_what_reached_the_model_not_only_the_history(a_tool_never_called):
    """The tool is never called, so both histories end alike; but its schema went out with every
    request, from the first: what the model was sent differs, and that is what is said."""
    said = a_tool_never_called
    assert "the same history" not in said
    at = said.index("what your engine sent the model parts from the shipped engine's at request 1, "
                    "beside its messages (the tools' schemas, the model):")
    shipped, yours = said[at:].splitlines()[1:3]
    assert shipped.startswith("  shipped: ") and yours.startswith("  yours:   ")
    assert "'name': 'count_lines'" in yours and "count_lines" not in shipped


def test_the_long_task_names_the_pieces_it_called_and_those_it_never_exercised(a_tool_never_called):
    """A piece the task never calls can't be wrong in it: "the same" speaks only for the others."""
    assert a_tool_never_called.splitlines()[-2:] == [
        "your pieces it called: ch04.estimate (1 of 3 kept)",
        "not exercised: it never called them, so no result here vouches for them: ch07.classify, ch02.tool"]


def test_with_nothing_kept_the_long_task_sends_the_same_requests_and_ends_in_the_same_history(tmp_path):
    said = the_long_task(your_engine(tmp_path))
    assert said.split("\n\n")[1:] == [
        "the same requests, one for one (21 requests), and the same history, message for message (74 messages)",
        "no piece of yours is kept: both runs were the shipped engine"]


def test_the_long_task_speaks_chinese_in_the_chinese_notebook(tmp_path):
    with speaking("zh"):
        said = the_long_task(your_engine(a_learner(tmp_path / "kept", ["ch02.tool", "ch07.classify"])))
    lines = said.split("\n\n", 1)[1].splitlines()  # below the figures
    assert lines[0] == "你的引擎发给模型的内容，从第 1 个请求起和自带的引擎不同，在消息之外（工具的 schema、模型名）："
    assert lines[1].startswith("  自带的： ") and lines[2].startswith("  你的：   ")
    assert lines[-2:] == ["它调用了你的组件：一个也没有（保存的 2 个里的 0 个）",
                          "没有检验到：它从没调用它们，这里的结果证明不了它们是对的：ch07.classify、ch02.tool"]


def test_an_engine_that_cannot_even_start_the_long_task_is_said_not_raised(tmp_path):
    kept(tmp_path, "ch02.tool", "class Broken:\n    def __init__(self):\n        raise ValueError('no')\n",
         "Broken")
    said = the_long_task(your_engine(tmp_path))
    assert said == "your engine could not start the task: ValueError: no"


FAILING_EVERYWHERE = '''
import pytest


@pytest.mark.parametrize("case", [1, 2], ids=["a b", "c::d - e"])
def test_keeps(case):
    assert case == 0, "what failed - said after a dash"
'''


def test_a_failed_test_is_named_with_its_file_and_its_whole_id(tmp_path):
    """Where tests fail, each is named by its file and its whole id, parameters included, even one
    that holds spaces, "::" or " - " (pytest's short summary puts " - " before what failed)."""
    root = tmp_path / "repository"  # a repository whose test of ch03.cost fails everywhere
    (root / "tests/command").mkdir(parents=True)
    (root / "tests/command/test_pricing.py").write_text(FAILING_EVERYWHERE, encoding="utf-8")
    kept(tmp_path / "kept", "ch03.cost", PRICELESS_COST, "cost")
    said = your_tests(your_engine(tmp_path / "kept"), root)
    assert said == ("ch03.cost          2 failed: test_pricing.py::test_keeps[a b], "
                    "test_pricing.py::test_keeps[c::d - e]")


def test_a_seam_piece_is_listed_as_tested_by_its_exercises_check_not_skipped(tmp_path):
    kept(tmp_path, "ch05.executor", SKIPPING_EXECUTOR, "executor")
    said = your_tests(your_engine(tmp_path))
    assert said == ('ch05.executor      no package test of its own: check("ch05.executor", ...), its exercise\'s '
                    "check, is what tests it")
    with speaking("zh"):
        said = your_tests(your_engine(tmp_path))
    assert said == 'ch05.executor      包里没有它自己的测试：检验它的是这道练习的 check("ch05.executor", ...)'


def test_a_piece_kept_from_the_engines_own_definition_raises_the_engines_own_errors(tmp_path):
    """a_learner keeps the references, some of them the engine's own functions: what such a function
    uses from its module is imported, not copied, or the package's tests, which catch the engine's
    SessionError, would fail the chapter's own answer (22 of test_session.py's did)."""
    from corecoder.session import SessionError

    session_path = your_engine(a_learner(tmp_path / "kept", ["ch09.session_path"])).answers[
        "ch09.session_path"]
    with pytest.raises(SessionError, match="bad session id"):
        session_path(tmp_path, "../x")
