"""Putting a streamed reply back together, whatever the provider's dialect.

Tool calls arrive in fragments: the first names the call (index, id, name), the
rest carry slices of its JSON arguments under the same index. That is OpenAI's
dialect. Others differ, and each difference has broken a real agent:

    the first chunk of a call sent twice            -> don't double the name or id
    parallel calls all under index 0 (Ollama)       -> a new id means a new call
    "index": null on every chunk (some gateways)    -> follow ids, then the last call
    the id only on the first chunk                  -> later fragments follow the index
    fragments under a stray index with no id        -> they belong to the last call
    no ids at all, parallel calls by index          -> a name under a new index is a new call

So: an id decides which call a fragment belongs to; without an id, a known index
does; without either, the latest call does, unless the fragment names a call under a
new index: then it is a new call.

Reasoning arrives in `reasoning_content` (DeepSeek, Kimi), `reasoning` (OpenRouter
and others) or inside the text as <think>...</think> (many open models).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from .messages import ToolCall


@dataclass
class _Partial:
    id: str | None
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    size: int = 0  # characters in `arguments`: so a fragment need not join them to compare

    def text(self) -> str:
        return "".join(self.arguments)


class ToolCallAssembler:
    def __init__(self):
        self.calls: list[_Partial] = []
        self.by_id: dict[str, _Partial] = {}
        self.by_index: dict[int, _Partial] = {}

    def add(self, index: int | None, id: str | None, name: str | None,
            arguments: str | None) -> None:
        call = self._target(index, id, name)
        if name and not call.name:
            call.name = name
        if arguments and not self._is_repeat(call, arguments):
            call.arguments.append(arguments)
            call.size += len(arguments)

    def _target(self, index: int | None, id: str | None, name: str | None) -> _Partial:
        if id and id in self.by_id:
            return self.by_id[id]
        if not id and index is not None and index in self.by_index:
            return self.by_index[index]
        if not id and self.calls and not (name and index is not None):
            return self.calls[-1]  # a stray or null index: it continues the latest call
        call = _Partial(id)
        self.calls.append(call)
        if id:
            self.by_id[id] = call
        if index is not None:
            self.by_index[index] = call  # the latest call of an index takes its id-less fragments
        return call

    @staticmethod
    def _is_repeat(call: _Partial, arguments: str) -> bool:
        """A first chunk sent twice repeats complete arguments: keep them once. (Only a fragment
        as long as all before it can be one: the others cost no join, so reassembly is linear.)"""
        return call.size == len(arguments) and call.text() == arguments and _is_json(arguments)

    def result(self) -> list[ToolCall]:
        return [ToolCall(c.id or f"call_{i + 1}", c.name, c.text())
                for i, c in enumerate(self.calls)]


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


class ThinkSplitter:
    """Separates a leading <think>...</think> from the answer as it streams, even when
    a tag is cut across two chunks. `feed` returns (reasoning, text) for each chunk.
    Only a block that opens the reply counts: once the answer has begun, a "<think>"
    in it is just text (the model may be writing about HTML)."""

    OPEN, CLOSE = "<think>", "</think>"

    def __init__(self):
        self.inside = False
        self.answering = False  # real answer text has begun: stop looking for tags
        self.pending = ""  # the end of a chunk that may be the start of a tag
        self.just_closed = False  # drop the newline(s) between </think> and the answer

    def feed(self, chunk: str) -> tuple[str, str]:
        data, self.pending = self.pending + chunk, ""
        if self.answering:
            return "", self._answer(data)
        if self.inside:
            return self._inside(data)
        start = data.lstrip()
        if start.startswith(self.OPEN):
            self.inside = True
            return self._inside(start[len(self.OPEN):])
        if self.OPEN.startswith(start):  # nothing yet, or the tag cut short: wait for more
            self.pending = data
            return "", ""
        self.answering = True
        return "", data

    def _inside(self, data: str) -> tuple[str, str]:
        at = data.find(self.CLOSE)
        if at >= 0:
            self.inside, self.answering, self.just_closed = False, True, True
            return data[:at], self._answer(data[at + len(self.CLOSE):])
        keep = _partial_tag_length(data, self.CLOSE)
        self.pending = data[len(data) - keep:]
        return data[: len(data) - keep], ""

    def _answer(self, data: str) -> str:
        if self.just_closed:
            data = data.lstrip("\n")
            self.just_closed = not data
        return data

    def flush(self) -> tuple[str, str]:
        rest, self.pending = self.pending, ""
        return (rest, "") if self.inside else ("", rest)


# --- defences: a tag cut at a chunk's end


def _partial_tag_length(data: str, tag: str) -> int:
    """How many characters at the end of `data` could begin `tag`."""
    longest = min(len(tag) - 1, len(data))
    return next((n for n in range(longest, 0, -1) if tag.startswith(data[-n:])), 0)
