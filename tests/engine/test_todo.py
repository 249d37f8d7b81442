"""todo_write and render_todos: the plan the agent keeps, and how the prompt shows it."""

from __future__ import annotations

import pytest

from corecoder import Agent, ScriptedLLM
from corecoder.tool import ToolError, problems
from corecoder.tools.todo import TodoWrite, render_todos
from corecoder.workspace import Workspace

PLAN = [
    {"content": "read the failing test", "status": "done"},
    {"content": "fix the parser", "status": "in_progress"},
    {"content": "run the suite", "status": "pending"},
]


def test_the_result_is_the_rendered_list_in_the_order_given(tmp_path):
    ws = Workspace(cwd=tmp_path)
    assert TodoWrite().run(ws, todos=PLAN).split("\n") == [
        "[x] read the failing test", "[>] fix the parser", "[ ] run the suite"]


def test_render_todos_marks_each_status_and_renders_nothing_for_no_list():
    assert render_todos(PLAN) == "[x] read the failing test\n[>] fix the parser\n[ ] run the suite"
    assert render_todos([]) == ""


def test_each_call_replaces_the_whole_list(tmp_path):
    ws = Workspace(cwd=tmp_path)
    TodoWrite().run(ws, todos=PLAN)
    TodoWrite().run(ws, todos=[{"content": "only this", "status": "pending"}])
    assert ws.todos == [{"content": "only this", "status": "pending"}]


def test_the_workspace_gets_a_new_list_of_plain_dicts_not_the_callers_objects(tmp_path):
    ws = Workspace(cwd=tmp_path)
    old = ws.todos
    given = [{"content": "step", "status": "pending"}]
    TodoWrite().run(ws, todos=given)
    given[0]["status"] = "done"
    given.append({"content": "sneaked in", "status": "pending"})
    assert ws.todos == [{"content": "step", "status": "pending"}]
    assert ws.todos is not old and old == []
    assert all(type(item) is dict for item in ws.todos)


def test_content_is_stored_and_shown_without_surrounding_whitespace(tmp_path):
    ws = Workspace(cwd=tmp_path)
    assert TodoWrite().run(ws, todos=[{"content": "  tidy up \n", "status": "pending"}]) == "[ ] tidy up"
    assert ws.todos == [{"content": "tidy up", "status": "pending"}]


@pytest.mark.parametrize("content", ["", "   ", "\n\t"])
def test_an_empty_item_is_refused_and_the_old_list_kept(tmp_path, content):
    ws = Workspace(cwd=tmp_path)
    TodoWrite().run(ws, todos=PLAN)
    bad = [{"content": "fine", "status": "pending"}, {"content": content, "status": "pending"}]
    with pytest.raises(ToolError, match=r"todos\[1\]\.content is empty"):
        TodoWrite().run(ws, todos=bad)
    assert ws.todos == PLAN


def test_two_items_in_progress_are_refused_naming_both_and_the_old_list_kept(tmp_path):
    ws = Workspace(cwd=tmp_path)
    TodoWrite().run(ws, todos=PLAN)
    bad = [{"content": "a", "status": "in_progress"}, {"content": "b", "status": "done"},
           {"content": "c", "status": "in_progress"}]
    with pytest.raises(ToolError, match=r"2 items are in_progress \(todos\[0\], todos\[2\]\)"):
        TodoWrite().run(ws, todos=bad)
    assert ws.todos == PLAN


def test_no_item_in_progress_is_fine(tmp_path):
    ws = Workspace(cwd=tmp_path)
    todos = [{"content": "a", "status": "pending"}, {"content": "b", "status": "done"}]
    assert TodoWrite().run(ws, todos=todos) == "[ ] a\n[x] b"


def test_an_unknown_status_never_reaches_the_tool_the_schema_refuses_it(tmp_path):
    bad = {"name": "todo_write", "arguments": {"todos": [{"content": "a", "status": "completed"}]}}
    agent = Agent(ScriptedLLM([{"tool_calls": [bad]}, "ok"]), [TodoWrite()], cwd=tmp_path)
    agent.chat("go")
    assert agent.messages[2]["content"].startswith("bad arguments for todo_write: todos[0].status should be one "
                                                   "of ['pending', 'in_progress', 'done'], got 'completed'")
    assert agent.workspace.todos == []


def test_an_empty_list_clears_the_plan_and_says_so(tmp_path):
    ws = Workspace(cwd=tmp_path)
    TodoWrite().run(ws, todos=PLAN)
    assert TodoWrite().run(ws, todos=[]) == "todo list cleared"
    assert ws.todos == []


def test_two_workspaces_keep_separate_lists_with_one_tool_instance(tmp_path):
    tool, first, second = TodoWrite(), Workspace(cwd=tmp_path), Workspace(cwd=tmp_path)
    tool.run(first, todos=PLAN)
    assert second.todos == [] and first.todos == PLAN


def test_the_schema_rejects_unknown_statuses_missing_fields_and_extra_keys():
    schema = TodoWrite().parameters
    assert not problems(schema, {"todos": PLAN})
    assert problems(schema, {"todos": [{"content": "a", "status": "completed"}]})
    assert problems(schema, {"todos": [{"content": "a"}]})
    assert problems(schema, {"todos": [{"content": "a", "status": "done", "priority": "high"}]})
    assert problems(schema, {"todos": "[x] a"})
    assert problems(schema, {})


def test_todo_write_is_not_mutating_so_plan_mode_may_use_it():
    assert (TodoWrite().name, TodoWrite().mutating) == ("todo_write", False)
