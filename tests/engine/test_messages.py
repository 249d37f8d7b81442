"""The legality check is the single definition of a history the API accepts."""


import pytest

from corecoder.messages import IllegalHistory, ToolCall, assistant, check_history, system, tool_result, user


def calls(*ids):
    return [ToolCall(i, "read_file", '{"path": "a"}') for i in ids]


def test_a_plain_conversation_is_legal():
    check_history([system("s"), user("hi"), assistant("hello"), user("bye")])


def test_parallel_calls_answered_in_order_are_legal():
    check_history([user("go"), assistant("", calls("a", "b")), tool_result("a", "1"), tool_result("b", "2"),
                   assistant("done")])


def test_an_interrupted_turn_may_be_followed_by_a_new_user_message():
    check_history([user("go"), assistant("", calls("a")), tool_result("a", "[interrupted]"), user("again")])


@pytest.mark.parametrize("history, words", [
    ([user("x"), tool_result("a", "1")], "orphan tool result 'a'"),
    ([user("x"), assistant("", calls("a")), user("y")], "tool call 'a' is unanswered"),
    ([user("x"), assistant("", calls("a")), tool_result("a", "1"), tool_result("a", "1")], "orphan"),
    ([user("x"), assistant("", calls("a", "b")), tool_result("b", "1"), tool_result("a", "1")], "out of order"),
    ([user("x"), assistant("", calls("a")), tool_result("z", "1")], "answers no pending call"),
    ([user("x"), assistant("", calls("a")), tool_result("a", "1"), assistant("", calls("a")),
      tool_result("a", "1")], "duplicate tool call id 'a'"),
    ([user("x"), assistant("", calls("a", "a"))], "duplicate tool call id 'a'"),
    ([user("x"), assistant("", [ToolCall("", "read_file")])], "has no id"),
    ([user("x"), assistant("", calls("a"))], "ends with tool call 'a' unanswered"),
    ([user("x"), system("late")], "system message may only come first"),
    ([{"role": "robot", "content": "x"}], "unknown role"),
])
def test_each_violation_is_named(history, words):
    with pytest.raises(IllegalHistory, match=words):
        check_history(history)


def test_the_violation_names_the_message_index():
    with pytest.raises(IllegalHistory, match=r"^message 3 \(tool\)"):
        check_history([user("x"), assistant("", calls("a")), tool_result("a", "1"), tool_result("q", "2")])


def test_a_reply_becomes_an_assistant_message_in_api_format():
    message = assistant("ok", [ToolCall("c1", "grep", '{"pattern": "x"}')])
    assert message == {"role": "assistant", "content": "ok", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "grep", "arguments": '{"pattern": "x"}'}}]}


