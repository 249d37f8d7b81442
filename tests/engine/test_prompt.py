"""What the model is told: a system prompt that never changes in a session, and the agent's state told
in notes at the end of the history, so every request extends the one before it (a provider's prompt
cache serves all but what is new), while the model always knows the cwd and the todo list."""

import json

from corecoder import Agent, ScriptedLLM
from corecoder.agent import STATE_NOTE, labelled
from corecoder.context import Compactor
from corecoder.session import SessionLog
from corecoder.tools import Bash
from corecoder.tools.todo import TodoWrite
from helpers import Echo, call


def notes(agent) -> list[str]:
    return [m["content"] for m in agent.messages if m["role"] == "user" and m["content"].startswith(STATE_NOTE)]


def test_each_request_extends_the_previous_one_byte_for_byte(tmp_path):
    (tmp_path / "sub").mkdir()
    todo = [{"content": "look", "status": "in_progress"}]
    turns = [{"tool_calls": [call("todo_write", todos=todo)]}, {"tool_calls": [call("bash", command="cd sub")]},
             {"tool_calls": [call("bash", command="pwd")]}, "done"]
    agent = Agent(ScriptedLLM(turns), [Bash(), TodoWrite()], cwd=tmp_path)
    agent.chat("go")
    sent = [json.dumps(r["messages"]) for r in agent.llm.requests]
    for before, after in zip(sent, sent[1:], strict=False):
        assert after.startswith(before[:-1]), "a request repeats the previous one and adds to its end"
    last = agent.llm.requests[-1]["messages"]
    assert "[>] look" in json.dumps(last) and str((tmp_path / "sub").resolve()) in json.dumps(last)


def test_the_system_prompt_tells_the_state_once_and_a_note_tells_only_what_changed(tmp_path):
    (tmp_path / "sub").mkdir()
    todo = [{"content": "fix the bug", "status": "pending"}]
    turns = [{"tool_calls": [call("todo_write", todos=todo)]}, {"tool_calls": [call("bash", command="cd sub")]},
             {"tool_calls": [call("bash", command="true")]}, "done"]
    agent = Agent(ScriptedLLM(turns), [Bash(), TodoWrite()], cwd=tmp_path)
    agent.chat("go")
    prompts = {r["messages"][0]["content"] for r in agent.llm.requests}
    assert len(prompts) == 1  # one system prompt for the whole session
    [prompt] = prompts
    assert f"Working directory: {tmp_path.resolve()}" in prompt and "Your todo list: none" in prompt
    todo_note, cd_note = notes(agent)
    assert "[ ] fix the bug" in todo_note and "Working directory" not in todo_note
    assert cd_note == f"{STATE_NOTE}\n\nWorking directory: {(tmp_path / 'sub').resolve()}"
    assert len(notes(agent)) == 2  # the round after the cd changed nothing: no third note


def test_nothing_is_told_when_nothing_changed(tmp_path):
    agent = Agent(ScriptedLLM([{"tool_calls": [call("echo", text="a")]}, "done", "again"]), [Echo()], cwd=tmp_path)
    agent.chat("go")
    agent.chat("more")
    assert notes(agent) == [] and [m["role"] for m in agent.messages].count("user") == 2


def test_state_paragraphs_are_read_back_by_their_labels():
    state = "Working directory: /p\n\nYour todo list:\n[ ] a\n[x] b"
    assert labelled(state) == {"Working directory": "Working directory: /p",
                               "Your todo list": "Your todo list:\n[ ] a\n[x] b"}
    assert labelled(f"{STATE_NOTE}\n\nWorking directory: /q".removeprefix(STATE_NOTE)) == {
        "Working directory": "Working directory: /q"}


def test_a_tools_state_of_several_paragraphs_or_none_at_all_is_still_told(tmp_path):
    from corecoder import Tool

    class Notes(Tool):  # a tool whose state has blank lines in it, and none when it is empty
        name = "notes"
        parameters = {"type": "object", "properties": {"items": {"type": "array"}}, "required": ["items"]}

        def run(self, ws, items):
            self.items = items
            return "ok"

        def state(self, ws):
            return "Your notes:\n\n" + "\n\n".join(self.items) if getattr(self, "items", []) else ""

    turns = [{"tool_calls": [call("notes", items=items)]} for items in (["- milk", "- Bob"], ["- milk"], [])]
    agent = Agent(ScriptedLLM([*turns, "done", "again"]), [Notes()], cwd=tmp_path)
    agent.chat("go")
    agent.chat("more")
    told = [note.removeprefix(STATE_NOTE) for note in notes(agent)]
    assert told == ["\n\nYour notes:\n- milk\n- Bob", "\n\nYour notes:\n- milk", "\n\nYour notes: none"]


def test_a_todo_item_written_over_several_lines_stays_one_line_of_its_paragraph(tmp_path):
    todo = [{"content": "first\n\nthen more", "status": "pending"}]
    agent = Agent(ScriptedLLM([{"tool_calls": [call("todo_write", todos=todo)]}, "done"]), [TodoWrite()],
                  cwd=tmp_path)
    agent.chat("go")
    [note] = notes(agent)
    assert note.endswith("Your todo list:\n[ ] first then more")


def test_a_resumed_session_tells_the_state_as_it_is_now_not_as_an_old_note_said(tmp_path):
    home, project = tmp_path / "home", tmp_path / "p"
    (project / "sub").mkdir(parents=True)
    first = Agent(ScriptedLLM([{"tool_calls": [call("bash", command="cd sub")]}, "done"]), [Bash()], cwd=project)
    log = SessionLog(home).attach(first)
    first.chat("go")
    assert "sub" in notes(first)[-1]  # the old session's last word on the cwd
    second = Agent(ScriptedLLM(["back"]), [Bash()], cwd=project)  # a new process, started in the project
    log.close()  # as the first process would, by ending
    SessionLog(home, log.id, resume=True).attach(second)
    second.chat("go on")
    assert notes(second)[-1] == f"{STATE_NOTE}\n\nWorking directory: {project.resolve()}"


def test_after_a_compaction_takes_the_notes_away_the_state_is_told_again(tmp_path):
    from corecoder import FunctionLLM
    from corecoder.context import SUMMARY_PROMPT

    def model(messages, tools):
        if messages[0]["content"] == SUMMARY_PROMPT:
            return "Goal: work."
        n = sum(m["role"] == "assistant" for m in messages)
        if n == 0:
            return {"tool_calls": [call("todo_write", todos=[{"content": "keep me", "status": "in_progress"}])]}
        return {"tool_calls": [call("echo", text="x" * 3_000)]} if n < 12 else "done"

    agent = Agent(FunctionLLM(model), [Echo(), TodoWrite()], cwd=tmp_path,
                  context=Compactor(window=4_000, keep_recent=2))
    agent.chat("go")
    last = agent.llm.requests[-1]["messages"]
    summary = next(i for i, m in enumerate(last) if str(m["content"]).startswith("[Summary"))
    assert not any(m.get("tool_calls", [{}])[0].get("function", {}).get("name") == "todo_write" for m in last
                   if m["role"] == "assistant")  # the call that wrote the list was summarized away
    told = [i for i, m in enumerate(last) if str(m["content"]).startswith(STATE_NOTE) and "[>] keep me" in m["content"]]
    assert told and told[0] > summary  # and the list was told again after the summary
