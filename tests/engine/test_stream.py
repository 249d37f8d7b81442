"""Streamed replies are put back together whatever the provider's dialect."""

import pytest

from corecoder.messages import ToolCall
from corecoder.stream import ThinkSplitter, ToolCallAssembler


def assemble(*fragments):
    calls = ToolCallAssembler()
    for index, id, name, arguments in fragments:
        calls.add(index, id, name, arguments)
    return calls.result()


def test_the_openai_dialect_id_and_name_first_then_argument_slices():
    assert assemble((0, "a", "grep", ""), (0, None, None, '{"pat'), (0, None, None, 'tern": "x"}'),
                    (1, "b", "glob", '{"pattern"'), (1, None, None, ': "*"}')) == [
        ToolCall("a", "grep", '{"pattern": "x"}'), ToolCall("b", "glob", '{"pattern": "*"}')]


def test_a_first_chunk_sent_twice_is_counted_once():
    assert assemble((0, "a", "grep", ""), (0, "a", "grep", ""), (0, None, None, '{"pattern": "x"}')) == [
        ToolCall("a", "grep", '{"pattern": "x"}')]


def test_a_first_chunk_with_complete_arguments_sent_twice_is_counted_once():
    assert assemble((0, "a", "grep", '{"pattern": "x"}'), (0, "a", "grep", '{"pattern": "x"}')) == [
        ToolCall("a", "grep", '{"pattern": "x"}')]


def test_parallel_calls_sharing_one_index_are_told_apart_by_their_ids():
    assert assemble((0, "a", "grep", '{"pattern": '), (0, None, None, '"x"}'),
                    (0, "b", "glob", '{"pattern": '), (0, None, None, '"*"}')) == [
        ToolCall("a", "grep", '{"pattern": "x"}'), ToolCall("b", "glob", '{"pattern": "*"}')]


def test_null_indexes_follow_the_ids_and_then_the_latest_call():
    assert assemble((None, "a", "grep", '{"p'), (None, None, None, '": 1}'), (None, "b", "glob", "{}")) == [
        ToolCall("a", "grep", '{"p": 1}'), ToolCall("b", "glob", "{}")]


def test_fragments_under_a_stray_index_without_an_id_continue_the_latest_call():
    assert assemble((0, "a", "grep", '{"pattern"'), (99, None, None, ': "x"}')) == [
        ToolCall("a", "grep", '{"pattern": "x"}')]


def test_parallel_calls_without_ids_are_told_apart_by_their_indexes():
    # some local servers send no ids at all: each call's first fragment names it under its own index
    assert assemble((0, None, "read_file", ""), (1, None, "grep", ""), (0, None, None, '{"path": "a.py"}'),
                    (1, None, None, '{"pattern": "TODO"}')) == [
        ToolCall("call_1", "read_file", '{"path": "a.py"}'), ToolCall("call_2", "grep", '{"pattern": "TODO"}')]


def test_a_name_repeated_on_every_fragment_under_a_null_index_keeps_one_call():
    assert assemble((None, None, "grep", '{"pattern"'), (None, None, "grep", ': "x"}')) == [
        ToolCall("call_1", "grep", '{"pattern": "x"}')]


def test_an_id_repeated_on_every_fragment_keeps_one_call():
    assert assemble((0, "a", "grep", '{"pattern"'), (0, "a", "grep", ': "x"}')) == [
        ToolCall("a", "grep", '{"pattern": "x"}')]


def test_a_call_whose_id_never_came_gets_one():
    assert assemble((0, None, "grep", "{}")) == [ToolCall("call_1", "grep", "{}")]


def split(chunks):
    think, reasoning, text = ThinkSplitter(), [], []
    for chunk in chunks:
        r, t = think.feed(chunk)
        reasoning.append(r)
        text.append(t)
    r, t = think.flush()
    return "".join(reasoning + [r]), "".join(text + [t])


@pytest.mark.parametrize("chunks", [
    ["<think>plan it</think>\nThe answer."],
    ["<thi", "nk>plan", " it</th", "ink>", "\nThe answer."],
    ["  <think>", "plan it", "</think>The answer."],
])
def test_a_leading_think_block_is_reasoning_even_when_its_tags_are_cut(chunks):
    assert split(chunks) == ("plan it", "The answer.")


def test_a_think_tag_inside_the_answer_is_just_text():
    assert split(["Use the ", "<think> tag ", "like </think> this."]) == ("", "Use the <think> tag like </think> this.")


def test_text_that_only_looks_like_the_start_of_a_tag_is_not_lost():
    assert split(["<th"]) == ("", "<th")
    assert split(["<thinking about it>"]) == ("", "<thinking about it>")
