"""The course helpers (corecoder_course): show, check, the recording and its viewer, the notebook tools."""

import json

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

import corecoder.messages
from authoring.execute import WIDGET_VIEW, tidy
from authoring.notebook import digest
from authoring.student import strip_solutions, stub, student_notebook
from authoring.sync import (
    SyncError,
    export_source,
    regenerate,
    sync_exercises,
    sync_exports,
    sync_twin,
)
from corecoder import Agent, FunctionLLM, ScriptedLLM, build_agent
from corecoder.agent import Agent as PackageAgent
from corecoder.calls import run_in_order
from corecoder.demo import SCRIPT, TASK, copy_project
from corecoder.tool import Tool
from corecoder.tools import default_tools
from corecoder.workspace import project_root
from corecoder_course import check, outline, record, show, step_through, workdir
from corecoder_course.checks import CHECKERS, checker, verdict
from corecoder_course.source import PACKAGE_ROOT, source_of
from corecoder_course.viewer import Shown, viewer
from corecoder_course.words import speaking

# --- show -------------------------------------------------------------------------------


def test_show_finds_the_real_source_and_names_the_file_relative_to_the_package():
    source = source_of(corecoder.messages.check_history)
    assert (source.path, source.name) == ("corecoder/messages.py", "check_history")
    assert source.code.startswith("def check_history(messages: list[dict]) -> None:")
    assert str(PACKAGE_ROOT) not in repr(source) + source._repr_markdown_()


def test_show_dedents_a_method_and_shows_a_whole_module():
    method = source_of(PackageAgent.run)
    assert method.name == "Agent.run" and method.code.startswith("def run(self)")
    module = source_of(corecoder.messages)
    assert module.name == "" and module.code == (PACKAGE_ROOT / "corecoder/messages.py").read_text().rstrip("\n")


def test_show_markdown_is_a_fenced_python_block():
    markdown = source_of(corecoder.messages.user)._repr_markdown_()
    assert markdown.startswith("`corecoder/messages.py · user`\n\n```python\ndef user(")
    assert markdown.endswith("\n```\n")


def test_show_prints_plain_text_outside_jupyter(capsys):
    show(corecoder.messages.user)
    out = capsys.readouterr().out
    assert out.startswith("# corecoder/messages.py · user\ndef user(text: str) -> dict:")


def test_show_refuses_what_is_not_package_code():
    def mine():
        pass

    with pytest.raises(TypeError, match="corecoder package"):
        source_of(mine)
    with pytest.raises(TypeError, match="needs a function"):
        source_of(42)


# --- check ------------------------------------------------------------------------------


@pytest.fixture
def doubling():
    @checker("test.double")
    def run(fn):
        from corecoder_course.checks import attempt, expect

        for n in (1, 2, 5):
            expect(attempt(fn, n, given=f"double({n})"), 2 * n, f"double({n})", "multiply by two")

    yield "test.double"
    del CHECKERS["test.double"]


def test_check_passes_and_says_so(doubling, capsys):
    assert check(doubling, lambda n: n * 2) is None  # nothing for a notebook to show under the verdict
    assert capsys.readouterr().out == "✓ test.double passed\n"
    assert verdict(doubling, lambda n: n * 2) == (True, "✓ test.double passed")
    assert verdict(doubling, lambda n: n + 1)[0] is False


def test_a_wrong_answer_gets_input_expected_and_actual(doubling, capsys):
    assert check(doubling, lambda n: n + 1) is None
    out = capsys.readouterr().out
    assert "double(2)" in out and "expected: 4" in out and "got:      3" in out and "multiply by two" in out


def test_an_exception_in_the_learners_code_is_a_hint_not_a_traceback(doubling, capsys):
    assert check(doubling, lambda n: {}[n]) is None
    out = capsys.readouterr().out
    assert "double(1)" in out and "your code raised KeyError" in out
    assert "Traceback" not in out and len(out.splitlines()) <= 3


def test_the_student_stub_is_not_implemented_yet(doubling, capsys):
    def stub(n):
        raise NotImplementedError

    assert check(doubling, stub) is None
    assert "✗ test.double: not implemented yet" in capsys.readouterr().out


def test_an_unknown_exercise_and_a_broken_checker_are_one_line_each(capsys):
    assert check("ch99.nothing", print) is None
    assert check("nothing", print) is None

    @checker("test.broken")
    def broken(fn):
        raise ZeroDivisionError("oops")

    try:
        assert check("test.broken", print) is None
    finally:
        del CHECKERS["test.broken"]
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["✗ there is no exercise called 'ch99.nothing'", "✗ there is no exercise called 'nothing'",
                     "✗ test.broken: the check could not finish (ZeroDivisionError: oops)"]


# --- the recording and the viewer ---------------------------------------------------------


@pytest.fixture
def demo_run(tmp_path):
    agent = build_agent(ScriptedLLM(SCRIPT), copy_project(tmp_path))
    recording = record(agent)
    agent.chat(TASK)
    return agent, recording


def test_the_recording_has_each_round_sent_reply_and_results(demo_run):
    agent, recording = demo_run
    rounds = recording.rounds
    assert [r.number for r in rounds] == [1, 2, 3, 4, 5, 6]
    assert [len(r.sent) for r in rounds] == [1, 3, 5, 7, 9, 11]  # the history grows by a reply and a result
    for r, request in zip(rounds, agent.llm.requests, strict=True):
        assert r.sent == request["messages"][1:]  # exactly what the model got, after the system prompt
    assert [r.reply["tool_calls"][0]["function"]["name"] for r in rounds[:5]] == [
        "bash", "grep", "read_file", "edit_file", "bash"]
    assert all(len(r.answers) == 1 and r.answers[0].status == "ok" for r in rounds[:5])
    assert "tool_calls" not in rounds[5].reply and rounds[5].ended == "answer"


def test_the_text_twin_shows_what_was_sent_asked_and_answered(demo_run):
    _, recording = demo_run
    text = recording.text()
    assert text.count("── round ") == 6
    assert "sent: the system prompt, 8 tool schemas and 1 message" in text
    assert "sent: the previous request, its reply and 1 result: 11 messages" in text
    assert 'asks for bash(command="python3 test_stats.py")   [call_1_1]' in text
    assert "1 of 3 tests passed" in text and "3 of 3 tests passed" in text
    assert text.rstrip().endswith("(no tool calls: this text is the answer)")


class Stop(Tool):
    name = "stop"
    parameters = {"type": "object", "properties": {}, "additionalProperties": False}

    def run(self, ws):
        raise KeyboardInterrupt


def test_an_interrupted_round_is_recorded_with_its_interrupted_calls(tmp_path):
    agent = Agent(ScriptedLLM([{"tool_calls": [{"name": "glob", "arguments": {"pattern": "*"}}, {"name": "stop"},
                                               {"name": "glob", "arguments": {"pattern": "*"}}]}]),
                  tools=[*default_tools(), Stop()], cwd=tmp_path, executor=run_in_order)
    recording = record(agent)
    with pytest.raises(KeyboardInterrupt):
        agent.chat("go")
    (only,) = recording.rounds
    assert only.ended == "interrupted" and len(only.reply["tool_calls"]) == 3
    assert [a.status for a in only.answers] == ["ok", "interrupted", "interrupted"]
    assert "■ call_1_2" in recording.text()


def test_a_model_call_that_never_returns_is_recorded_without_a_reply(tmp_path):
    def hang_up(messages, tools):
        raise KeyboardInterrupt

    agent = build_agent(FunctionLLM(hang_up), tmp_path)
    recording = record(agent)
    with pytest.raises(KeyboardInterrupt):
        agent.chat("hello")
    assert recording.rounds[0].reply is None and recording.rounds[0].sent == agent.messages
    assert "replied: nothing (the call did not return)" in recording.text()


def test_the_round_limit_is_recorded(tmp_path):
    agent = Agent(ScriptedLLM([{"tool_calls": [{"name": "glob", "arguments": {"pattern": "*"}}]}] * 2),
                  default_tools(), cwd=tmp_path, max_rounds=2)
    recording = record(agent)
    agent.chat("go")
    assert recording.rounds[-1].ended == "max_rounds"
    assert recording.text().rstrip().endswith("say 'continue' to go on]")


def test_answers_are_shown_in_call_order_whatever_order_they_finished_in():
    from corecoder.messages import ToolCall, assistant
    from corecoder_course.recording import Answer, Round, round_text

    calls = [ToolCall("a", "glob"), ToolCall("b", "grep")]
    finished = [Answer(calls[1], "second", "ok"), Answer(calls[0], "first", "ok")]
    r = Round(1, reply=assistant("", calls), answers=finished)
    assert [a.result for a in r.in_call_order()] == ["first", "second"]
    text = round_text(r, 2)
    assert text.index("✓ a  first") < text.index("✓ b  second")


def test_outline_is_one_line_per_message_numbered_like_check_history():
    history = [corecoder.messages.user("hi\nthere"), corecoder.messages.assistant("ok"),
               corecoder.messages.user("x" * 200)]
    lines = outline(history).splitlines()
    assert lines[:2] == ["   [0] user       hi there", "   [1] assistant  ok"]  # a message on one line
    assert len(lines[2]) == 100 and lines[2].endswith("characters cut ...]")  # cut with the one marker


def test_the_text_twin_prints_the_history_once_and_then_only_what_each_request_added(demo_run):
    _, recording = demo_run
    text = recording.text()
    assert text.count("The tests in test_stats.py fail.") == 1  # the task, sent six times, shown once
    assert len(text.splitlines()) < 70  # it was 100 lines when every round reprinted the history
    assert text.splitlines()[0].startswith("(each round: what the model was sent")  # the legend


def test_a_message_a_request_adds_beyond_the_last_reply_and_results_is_listed(tmp_path):
    agent = Agent(ScriptedLLM(["Hello.", "Bye."]), default_tools(), cwd=tmp_path)
    recording = record(agent)
    agent.chat("hi")
    agent.chat("bye")
    second = recording.text().split("── round 1 ")[2]
    assert "sent: the previous request, its reply and 0 results, and 1 more: 3 messages" in second
    assert "   [3] user       bye" in second


def test_a_history_rewritten_between_rounds_is_shown_in_full_again(tmp_path):
    agent = Agent(ScriptedLLM(["Hello.", "Bye."]), default_tools(), cwd=tmp_path)
    recording = record(agent)
    agent.chat("hi")
    agent.messages = [corecoder.messages.user("a summary of what came before")]  # as a compaction does
    agent.chat("bye")
    assert "(the history was rewritten)" in recording.text()
    assert "[1] user       a summary of what came before" in recording.text()


def test_the_recording_renders_every_event_type_of_the_package():
    import dataclasses
    import inspect

    import corecoder.events
    from corecoder_course.recording import RENDERERS, SHAPE

    kinds = [c for _, c in inspect.getmembers(corecoder.events, inspect.isclass)
             if dataclasses.is_dataclass(c) and c.__module__ == "corecoder.events"]
    assert len(kinds) == 10 and [k.__name__ for k in kinds if k not in (*SHAPE, *RENDERERS)] == []


def test_a_later_chapters_events_are_notes_in_their_round(tmp_path):
    from corecoder.events import Compacted, Retrying, RoundStarted, ToolCallStarted, WorkerEvent
    from corecoder.messages import ToolCall

    agent = Agent(ScriptedLLM(["Hello."]), default_tools(), cwd=tmp_path)
    recording = record(agent)
    recording(RoundStarted(1))
    recording(Compacted("summarize", 3100, 900))
    recording(Retrying(1, 2.0, "rate limited (429)"))
    recording(WorkerEvent("worker-1", ToolCallStarted(ToolCall("w1", "glob", '{"pattern": "*.py"}'))))
    text = recording.text()
    assert "the history was compacted (summarize): ~3,100 → ~900 tokens" in text
    assert "the model call failed; trying again in 2.0 s (rate limited (429))" in text
    assert '[worker-1] → glob(pattern="*.py")' in text
    with speaking("zh"):
        assert "历史经过了压缩（summarize）" in recording.text()
    html = viewer(recording).children[1].value  # the widget draws them through the same table
    assert "compacted (summarize)" in html and "[worker-1] → glob" in html


def test_a_real_compaction_is_a_note_before_the_reply_and_the_round_shows_what_was_really_sent(tmp_path):
    # the summary's own model call reports its usage before Compacted and before the real call
    from corecoder.context import SUMMARY_PROMPT, Compactor
    from corecoder.events import Compacted
    from corecoder.messages import ToolCall, assistant, tool_result, user

    usage = {"prompt_tokens": 10, "completion_tokens": 5}
    llm = FunctionLLM(lambda messages, tools: {"text": "Goal: fix it." if messages[0]["content"] == SUMMARY_PROMPT
                                               else "done", "usage": usage})
    agent = Agent(llm, default_tools(), cwd=tmp_path, context=Compactor(window=6_000, keep_recent=4))
    agent.messages = [user("fix the bug"), *[m for n in range(10) for m in (
        assistant("", [ToolCall(f"c{n}", "glob", '{"pattern": "*"}')]), tool_result(f"c{n}", "y" * 1_600))]]
    recording = record(agent)
    agent.run()
    (only,) = recording.rounds
    assert only.reply["content"] == "done" and only.sent == llm.requests[-1]["messages"][1:]
    assert [(early, type(event)) for early, event in only.notes] == [(True, Compacted)]
    text = recording.text()
    assert text.index("the history was compacted (") < text.index("replied:")


def test_a_chapter_adds_a_renderer_for_its_own_event_without_editing_the_recording(tmp_path):
    from dataclasses import dataclass

    from corecoder.events import RoundStarted

    @dataclass(frozen=True)
    class Linted:
        path: str

    recording = record(Agent(ScriptedLLM(["ok"]), default_tools(), cwd=tmp_path))
    recording.renderers[Linted] = lambda event: f"linted {event.path}"
    recording(RoundStarted(1))
    recording(Linted("stats.py"))
    assert "  linted stats.py" in recording.text()


def test_the_helpers_that_speak_are_the_ones_the_chinese_edition_binds():
    # sync keeps a speaking cell's Chinese output: the list must be exactly the helpers zh.py rebinds
    import corecoder_course
    import corecoder_course.zh
    from corecoder_course.words import SPEAKING

    rebound = {name for name in corecoder_course.zh.__all__
               if getattr(corecoder_course.zh, name) is not getattr(corecoder_course, name)}
    assert rebound == set(SPEAKING)


def test_the_twin_and_the_widget_speak_the_notebooks_language(demo_run):
    _, recording = demo_run
    with speaking("zh"):
        text = recording.text()
        box = viewer(recording)
    assert "── 第 1 轮 " in text and "发送：系统提示词、8 个工具的 JSON Schema 和 1 条消息" in text
    assert "回复：" in text and "工具的回应：" in text and "replied:" not in text
    (back, _, forward), page = box.children[0].children, box.children[1]
    assert back.description == "◀ 上一轮" and "<h4>第 1 轮</h4>" in page.value
    forward.click()  # a click comes later, outside the cell that built the widget: still Chinese
    assert "<h4>第 2 轮</h4>" in page.value


def test_step_through_prints_the_text_twin_outside_jupyter(demo_run, capsys):
    _, recording = demo_run
    step_through(recording)
    assert capsys.readouterr().out == recording.text() + "\n"


def test_the_widget_steps_through_the_rounds(demo_run):
    _, recording = demo_run
    box = viewer(recording)
    (back, slider, forward), page = box.children[0].children, box.children[1]
    assert (slider.min, slider.max, slider.value) == (1, 6, 1) and "<h4>Round 1</h4>" in page.value
    forward.click()
    forward.click()
    assert slider.value == 3 and "<h4>Round 3</h4>" in page.value and "read_file" in page.value
    back.click()
    assert slider.value == 2
    for _ in range(9):
        forward.click()
    assert slider.value == 6 and "Fixed:" in page.value


def test_the_widget_and_its_text_twin_are_one_output(demo_run):
    _, recording = demo_run
    bundle = Shown(viewer(recording), recording.text())._repr_mimebundle_()
    assert bundle["text/plain"] == recording.text()  # what nbval, the site and a console get
    assert WIDGET_VIEW in bundle  # what JupyterLab renders instead: the twin is not printed under it


# --- workdir ----------------------------------------------------------------------------


def test_workdir_is_a_fixed_fresh_folder_that_git_ignores(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    first = workdir("ch")
    (first / "leftover.txt").write_text("x")
    again = workdir("ch")
    assert again == tmp_path / ".work" / "ch" and [p.name for p in again.iterdir()] == [".git"]
    assert (tmp_path / ".work" / ".gitignore").read_text().splitlines()[-1] == "*"


def test_a_workdir_is_a_project_of_its_own_so_nothing_of_the_clone_around_it_gets_in(tmp_path, monkeypatch):
    clone = tmp_path / "clone"
    (clone / ".git").mkdir(parents=True)
    (clone / "CLAUDE.md").write_text("Always answer in French.\n")  # the user's own, in the clone
    (clone / "notebooks").mkdir()
    monkeypatch.chdir(clone / "notebooks")
    project = copy_project(workdir("00-tour"))
    agent = build_agent(ScriptedLLM(["ok"]), project)
    agent.chat("hi")
    assert "French" not in json.dumps(agent.llm.requests[0]["messages"])
    assert project_root(project) == clone / "notebooks" / ".work" / "00-tour"


def test_workdir_from_the_repository_root_uses_notebooks(tmp_path, monkeypatch):
    (tmp_path / "notebooks").mkdir()
    monkeypatch.chdir(tmp_path)
    assert workdir("ch") == tmp_path / "notebooks" / ".work" / "ch"


# --- the student edition ----------------------------------------------------------------


def test_solutions_become_not_implemented_at_their_indentation():
    code = ("import json\n\n\ndef f(x):\n    \"\"\"Doc.\"\"\"\n    ### BEGIN SOLUTION\n    if x:\n        return 1\n"
            "    return 2\n    ### END SOLUTION\n\n\ndef g():\n        ### BEGIN SOLUTION\n        pass\n"
            "        ### END SOLUTION\n")
    assert strip_solutions(code) == ("import json\n\n\ndef f(x):\n    \"\"\"Doc.\"\"\"\n    raise NotImplementedError\n"
                                     "\n\ndef g():\n        raise NotImplementedError\n")


def test_unmatched_solution_markers_are_an_error():
    with pytest.raises(ValueError, match="unmatched"):
        strip_solutions("def f():\n    ### BEGIN SOLUTION\n    return 1\n")


def tagged(cell, *tags):
    cell.metadata["tags"] = list(tags)
    return cell


def test_the_student_notebook_has_no_solution_cells_and_no_stored_verdicts():
    verdict_output = [new_output("stream", name="stdout", text="✗ not implemented yet\n")]
    nb = new_notebook(cells=[
        new_code_cell("print(1)", outputs=[new_output("stream", name="stdout", text="1\n")], execution_count=1),
        tagged(new_code_cell("def f():\n    raise NotImplementedError", execution_count=2), "exercise"),
        new_code_cell('check("ch01.f", f)', outputs=verdict_output, execution_count=3),
        tagged(new_code_cell("def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION\n\n\n"
                             'check("ch01.f", f)', execution_count=4), "solution"),
    ])
    student = student_notebook(nb)
    assert [c.source.split("\n")[0] for c in student.cells] == ["print(1)", "def f():", 'check("ch01.f", f)']
    assert student.cells[0].outputs and student.cells[2].outputs == []
    assert len(nb.cells) == 4 and nb.cells[2].outputs, "the original is left as it was"


def test_the_learners_cell_is_the_solution_without_its_solution_comments_and_check():
    solution = ('# the solution, folded away\nimport json\n\n\ndef f(x):\n    """Doc."""\n    ### BEGIN SOLUTION\n'
                '    return json.dumps(x)\n    ### END SOLUTION\n\n\ncheck("ch01.f", f)')
    assert stub(solution) == 'import json\n\n\ndef f(x):\n    """Doc."""\n    raise NotImplementedError'


def test_sync_writes_each_learners_cell_from_its_solution():
    nb = new_notebook(cells=[tagged(new_code_cell("def f(): ..."), "exercise"), new_code_cell('check("ch01.f", f)'),
                             tagged(new_code_cell('def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION'
                                                  '\n\n\ncheck("ch01.f", f)'), "solution")])
    assert sync_exercises(nb, "x.ipynb") == ["x.ipynb cell 0: the exercise differs from its solution's stub"]
    assert nb.cells[0].source == "def f():\n    raise NotImplementedError"
    assert sync_exercises(nb, "x.ipynb") == []


# --- sync -------------------------------------------------------------------------------


def export(source):
    cell = new_code_cell(source)
    cell.metadata["tags"] = ["export"]
    return cell


def test_regenerate_replaces_definitions_and_keeps_everything_else():
    code = "# corecoder/messages.py\nimport json\n\n\ndef user(): ...\n\n\nX = 1\nuser.note = 'kept'\n"
    new = regenerate(code, {"user": "def user(text):\n    return text", "X": "X = 2"}, "here")
    assert new == "# corecoder/messages.py\nimport json\n\n\ndef user(text):\n    return text\n\n\nX = 2\n" \
                  "user.note = 'kept'\n"


def test_regenerate_refuses_a_name_the_package_lacks():
    with pytest.raises(SyncError, match="defines nonsense"):
        regenerate("def nonsense(): ...", {}, "cell 3")


def test_export_headers_name_a_module_or_a_class():
    assert export_source(export("# corecoder/agent.py: class Agent\ndef run(): ...")) == ("corecoder/agent.py", "Agent")
    assert export_source(export("# corecoder/messages.py\n")) == ("corecoder/messages.py", None)
    assert export_source(new_code_cell("# corecoder/messages.py\n")) is None  # not tagged: not an export cell
    with pytest.raises(SyncError, match="must start with"):
        export_source(export("def user(): ..."))


def test_sync_exports_brings_methods_and_functions_from_the_package():
    nb = new_notebook(cells=[export("# corecoder/messages.py\ndef user(): ..."),
                             export("# corecoder/agent.py: class Agent\ndef chat(): ...\n\n\nAgent.chat = chat")])
    changes = sync_exports(nb, "x.ipynb")
    assert len(changes) == 2 and "user" in changes[0] and "chat" in changes[1]
    assert nb.cells[0].source.endswith('return {"role": "user", "content": text}')
    assert nb.cells[1].source.startswith("# corecoder/agent.py: class Agent\ndef chat(self, text: str) -> str:")
    assert nb.cells[1].source.endswith("\n\n\nAgent.chat = chat")
    assert sync_exports(nb, "x.ipynb") == []  # a second sync finds nothing to do


def make_pair():
    english = new_notebook(cells=[new_markdown_cell("# Title"), new_code_cell("x = 1"), new_markdown_cell("More.")])
    for cell, cell_id in zip(english.cells, ["t", "c", "m"], strict=True):
        cell.id = cell_id
    chinese = nbformat.from_dict(json.loads(json.dumps(english)))
    chinese.cells[0].source, chinese.cells[2].source = "# 标题", "更多。"
    for cell, theirs in zip(chinese.cells, english.cells, strict=True):
        if cell.cell_type == "markdown":  # each translation records the English it was made from
            cell.metadata["translated_from"] = digest(theirs.source)
    return english, chinese


def test_sync_twin_copies_code_and_keeps_the_translations():
    english, chinese = make_pair()
    english.cells[1].source = "x = 2"
    english.cells[1].outputs = [new_output("stream", name="stdout", text="2\n")]
    result, notes = sync_twin(english, chinese, "t.zh.ipynb")
    assert [c.source for c in result.cells] == ["# 标题", "x = 2", "更多。"]
    assert result.cells[1].outputs == english.cells[1].outputs
    assert notes == ["t.zh.ipynb: differs from the English notebook (code cells, or the order of cells)"]
    assert sync_twin(english, result, "t.zh.ipynb")[1] == []
    english.cells[1].metadata["tags"] = ["export"]  # a tag is part of the code cell too
    assert sync_twin(english, result, "t.zh.ipynb")[1] != []


def test_the_language_cell_imports_the_chinese_helpers_and_a_speaking_cell_keeps_its_chinese_output():
    english, chinese = make_pair()
    english.cells[1].source = "from corecoder_course import check, show"
    english.cells[1].metadata["tags"] = ["language"]
    english.cells.append(new_code_cell('check("ch01.x", f)', id="v",
                                       outputs=[new_output("stream", name="stdout", text="✓ ch01.x passed\n")]))
    chinese.cells.append(new_code_cell('check("ch01.x", f)', id="v",
                                       outputs=[new_output("stream", name="stdout", text="✓ ch01.x 通过\n")]))
    result, _ = sync_twin(english, chinese, "t.zh.ipynb")
    assert result.cells[1].source == "from corecoder_course.zh import check, show"
    assert result.cells[3].outputs[0].text == "✓ ch01.x 通过\n"  # what the Chinese run printed


def test_a_translation_records_its_english_and_sync_says_when_the_english_moved_on():
    english, chinese = make_pair()
    assert sync_twin(english, chinese, "t.zh.ipynb")[1] == []
    english.cells[2].source = "More, and better."
    assert sync_twin(english, chinese, "t.zh.ipynb")[1] == [
        "t.zh.ipynb: markdown cell 2 (id m): the English has changed since it was translated"]
    del chinese.cells[0].metadata["translated_from"]
    assert "markdown cell 0 (id t): no record of the English" in sync_twin(english, chinese, "t.zh.ipynb")[1][0]


def test_an_essay_gets_a_link_to_the_source_under_each_include_kept_up_to_date():
    from authoring.essays import with_source_links

    text = "# T\n\n<!-- include: corecoder/messages.py::user -->\n\nProse.\n"
    linked = with_source_links(text, "en", PACKAGE_ROOT)
    start = (PACKAGE_ROOT / "corecoder/messages.py").read_text().splitlines().index("def user(text: str) -> dict:") + 1
    assert f"[source: `corecoder/messages.py` · `user`](../corecoder/messages.py#L{start}-L{start + 1})" in linked
    assert with_source_links(linked, "en", PACKAGE_ROOT) == linked  # the old link is replaced, not repeated
    moved = linked.replace(f"#L{start}-", "#L1-")
    assert with_source_links(moved, "en", PACKAGE_ROOT) == linked
    assert "源码：`corecoder/messages.py`" in with_source_links(text, "zh", PACKAGE_ROOT)


def test_each_section_of_a_chinese_essay_records_its_english_and_a_changed_one_is_reported():
    from authoring.essays import record_translation, stale

    english = "# Title\n\nIntro.\n\n## One\n\nFirst.\n\n## Two\n\nSecond.\n"
    chinese = "# 标题\n\n引言。\n\n## 一\n\n第一。\n\n## 二\n\n第二。\n"
    assert len(stale(english, chinese, "e.zh.md")) == 3  # nothing recorded yet
    recorded = record_translation(english, chinese)
    assert "## 一\n<!-- translated from: " in recorded and stale(english, recorded, "e.zh.md") == []
    assert record_translation(english, recorded) == recorded
    assert stale(english.replace("Second.", "Second, changed."), recorded, "e.zh.md") == [
        "e.zh.md: section 3 (二): the English has changed since it was translated"]
    assert stale(english + "\n## Three\n", recorded, "e.zh.md") == ["e.zh.md: 3 headings, the English has 4"]


def test_a_class_written_without_its_methods_is_its_skeleton():
    nb = new_notebook(cells=[export('# corecoder/agent.py\nclass Agent:\n    """old"""')])
    sync_exports(nb, "x.ipynb")
    assert nb.cells[0].source.startswith('# corecoder/agent.py\nclass Agent:\n    """The loop, and what it runs')
    assert "def " not in nb.cells[0].source


def test_sync_twin_reports_what_is_not_translated():
    english, chinese = make_pair()
    english.cells.append(new_markdown_cell("New.", id="new"))
    chinese.cells[2].source = "More."
    _, notes = sync_twin(english, chinese, "t.zh.ipynb")
    assert any("markdown cell 2 (id m) is still in English" in n for n in notes)
    assert any("markdown cell 3 (id new) has no translation" in n for n in notes)


# --- execute ----------------------------------------------------------------------------


def test_tidy_drops_widget_views_and_joins_stream_pieces():
    cell = new_code_cell("x", outputs=[
        new_output("display_data", data={"text/plain": "[viewer]", WIDGET_VIEW: {"model_id": "abc"}}),
        new_output("stream", name="stdout", text="a"), new_output("stream", name="stdout", text="b\n")])
    nb = tidy(new_notebook(cells=[cell], metadata={"widgets": {"state": {}}}))
    assert "widgets" not in nb.metadata and "version" not in nb.metadata["language_info"]
    assert [o.get("data", o.get("text")) for o in nb.cells[0].outputs] == [{"text/plain": "[viewer]"}, "ab\n"]


@pytest.mark.parametrize("command", [["sync", "--check"], ["student", "out"], ["execute"]])
def test_a_folder_without_chapters_is_an_error_not_a_silent_pass(tmp_path, command):
    from authoring.__main__ import main

    assert main(["--folder", str(tmp_path), *command]) == 2


def test_find_orphan_fails_an_answer_that_demands_results_in_call_order():

    def strict(messages):
        waiting = []
        for i, m in enumerate(messages):
            if m["role"] == "tool":
                if not waiting or m["tool_call_id"] != waiting[0]:
                    return i
                waiting.pop(0)
            else:
                waiting = [c["id"] for c in m.get("tool_calls") or []]
        return None

    assert verdict("ch01.find_orphan", strict)[0] is False


def test_run_call_fails_an_answer_that_joins_problems_wrongly_and_its_hint_says_how():
    from corecoder.calls import parse_arguments
    from corecoder.tool import problems

    def commas(tool, arguments, workspace):
        args, trouble = parse_arguments(arguments)
        if args is not None:
            trouble = ", ".join(problems(tool.parameters, args))
        if trouble:
            return f"bad arguments for {tool.name}: {trouble}"
        try:
            return tool.run(workspace, **args)
        except Exception as e:
            return f"{tool.name} failed: {e}"

    assert verdict("ch01.run_call", commas)[0] is False


# --- chapter 0's checks: the hint says what went wrong ------------------------------------

BASH_TESTS = {"name": "bash", "arguments": {"command": "python3 test_stats.py"}}


def judged(name, answer) -> tuple[bool, str]:
    """Whether `answer` passes, and what the learner is told (as `check` prints it)."""
    passed, told = verdict(name, answer)
    return passed, told + "\n"


def test_script_passes_any_script_that_runs_the_tests_and_quotes_what_they_printed(capsys):
    fix_then_report = [*SCRIPT[:-1], "Fixed the mean; now 3 of 3 tests passed."]  # the last run printed 3 of 3
    assert judged("ch00.script", lambda: fix_then_report) == (True, "✓ ch00.script passed\n")
    in_a_dict = [{"tool_calls": [{"name": "bash", "arguments": {"command": "cd . && python3 ./test_stats.py"}}]},
                 {"text": "The run says 1 of 3 tests passed."}]
    assert judged("ch00.script", lambda: in_a_dict)[0] is True
    for says in ("1 of 3 tests passed; test_mean and test_median_even did not pass.",  # a denial elsewhere
                 "No luck: 1 of 3 tests passed.", "1 of 3 tests passed, so the tests don't all pass yet.",
                 "测试结果：1 of 3 tests passed。"):
        assert judged("ch00.script", lambda says=says: [{"tool_calls": [BASH_TESTS]}, says])[0] is True, says
    module = [{"tool_calls": [{"name": "bash", "arguments": {"command": "python3 -m test_stats"}}]},
              "1 of 3 tests passed."]
    assert judged("ch00.script", lambda: module)[0] is True


@pytest.mark.parametrize("turns, says", [
    ([{"tool_calls": [BASH_TESTS]}], ["a turn with tool calls is never the last one", "End the script with a string"]),
    ([{"tool_calls": [BASH_TESTS]}, "All 3 of 3 tests passed."],
     ["→  1 of 3 tests passed", "the final answer: 'All 3 of 3 tests passed.'", "never reads"]),
    ([{"tool_calls": [BASH_TESTS]}, "The tests ran."], ["the tests printed '1 of 3 tests passed'"]),
    (["1 of 3 tests passed"], ["no bash call ran the tests", "asked for no tool call at all"]),
    ([{"tool_calls": [{"name": "bash", "arguments": {"cmd": "python3 test_stats.py"}}]}, "1 of 3 tests passed"],
     ['bash(cmd="python3 test_stats.py")  →  bad arguments for bash', 'bash takes its command as the argument']),
    ([{"tool_calls": [{"name": "bash", "arguments": {"command": "cat missing.txt"}}]}, "1 of 3 tests passed"],
     ["no bash call ran the tests", 'bash(command="cat missing.txt")  →']),
    ([{"text": "x", "calls": []}, "done"], ["not a script a ScriptedLLM can play", "unknown keys ['calls']"]),
    ("python3 test_stats.py", ["should return a list of turns", "str: 'python3 test_stats.py'"]),
    ([{"fault": "auth"}], ["not a script a ScriptedLLM can play", "FaultyScriptedLLM plays faults"]),
], ids=["runs-out", "wrong-summary", "no-summary", "no-tool", "bad-arguments", "wrong-command", "bad-turn",
        "not-a-list", "model-error"])
def test_script_fails_a_wrong_script_with_a_hint_that_says_why(turns, says, capsys):
    passed, out = judged("ch00.script", lambda: turns)
    assert not passed and out.startswith("✗ ch00.script: not yet.\n"), out
    for words in says:
        assert words in out, out
    assert "Traceback" not in out and "/tmp" not in out and "corecoder-ch00-" not in out


def test_count_calls_hints_at_the_history_layout_and_at_parallel_calls(capsys):
    def by_script_name(messages):
        return {c["name"]: 1 for m in messages for c in m.get("tool_calls", [])}

    def first_per_round(messages):
        counts = {}
        for m in messages:
            if m.get("tool_calls"):
                name = m["tool_calls"][0]["function"]["name"]
                counts[name] = counts.get(name, 0) + 1
        return counts

    def mutates(messages):
        messages.clear()
        return {}

    passed, out = judged("ch00.count_calls", by_script_name)
    assert not passed and "your code raised KeyError: 'name'" in out and 'call["function"]["name"]' in out
    passed, out = judged("ch00.count_calls", first_per_round)
    assert not passed and "a round can ask for several calls" in out
    passed, out = judged("ch00.count_calls", mutates)
    assert not passed and "changed the input it was handed" in out
