"""Inputs for the checkers, drawn from the whole domain a chapter promises (hypothesis
strategies). A chapter shows a few histories; its checker draws from every legal one:
parallel batches of any size, state notes of every kind (two in a row now and then), user
messages that begin with "[" as a note does, text in any script, with CRLF, tabs and
trailing spaces. `kit.judge` shrinks a failing one to the smallest that still fails.
"""

from __future__ import annotations

import json

from hypothesis import strategies as st

from corecoder.messages import STATE_NOTE, ToolCall, assistant, tool_result, user

# Text as a model, a user or a file may write it: scripts other than Latin, CRLF, tabs,
# trailing spaces, an empty last line, and the characters JSON and a shell treat apart.
ALPHABET = st.sampled_from(list("ab Z09_(){}[]=:;,.'\"\\/-\t\r\néü") + list("中文字。") +
                           list("かなカナ") + list("한글") + list("Жжё") + ["\u3000", "😀"])
texts = st.text(ALPHABET, max_size=24)
words = st.sampled_from(["Why does the test fail?", "Fix it.", "Run the tests again.", "[CI] log",
                         "[", "", "Go on in src.", "为什么测试失败了？", "テストを直して"])


# A note of the agent's state, as Agent.tell_state writes it: the todo list, the working
# directory, or both.
_todo = st.sampled_from(["[>] read the tests", "[x] read the tests\n[>] fix mean", "[x] 修好"])
_folder = st.sampled_from(["/home/ada/calc", "/home/ada/calc/src", "C:\\work", "/tmp/é"])
state_notes = st.lists(st.one_of(_todo.map(lambda t: f"Your todo list:\n{t}"),
                                 _folder.map(lambda f: f"Working directory: {f}")),
                       min_size=1, max_size=2).map(lambda ps: user("\n\n".join([STATE_NOTE, *ps])))
# What a tool returns: empty, one line, CRLF, tabs, trailing spaces, other scripts.
outputs = st.sampled_from(["", "ok", "     1\tprint('a')\r\n", "1 passed  \n\n", "找不到文件",
                           "Ошибка: нет файла", "{\"a\":[1,{}]}", "x" * 300])


@st.composite
def legal_histories(draw, max_turns: int = 4) -> list[dict]:
    """A history the API accepts (check_history): turns of a user's message (a state note after
    it now and then, as after a compaction), batches of 1 to 4 calls each answered in order (notes
    after the results, now and then two), and mostly an answer."""
    # now and then a note first: what a resumed session that was cut by hand may begin with
    messages: list[dict] = [draw(state_notes)] if draw(st.integers(0, 7)) == 0 else []
    made = 0
    for _ in range(draw(st.integers(0, max_turns))):
        messages.append(user(draw(words)))
        if draw(st.integers(0, 5)) == 0:
            messages.append(draw(state_notes))
        for _ in range(draw(st.integers(0, 3))):
            n = draw(st.integers(1, 4))
            ids = [f"call_{made + k}" for k in range(1, n + 1)]
            made += n
            calls = [ToolCall(i, "read_file", json.dumps({"path": f"{i}.py"})) for i in ids]
            messages.append(assistant(draw(st.sampled_from(["", "Let me look."])), calls))
            messages += [tool_result(i, draw(outputs)) for i in ids]
            messages += draw(st.lists(state_notes, max_size=2))
        if draw(st.booleans()):
            messages.append(assistant(draw(st.sampled_from(["Fixed.", "All 3 tests pass."]))))
    return messages
