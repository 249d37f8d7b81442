"""What the model is sent each round. Chapter 1 sends everything; chapter 4 compacts."""

from __future__ import annotations


class KeepEverything:
    """The context seam's simplest policy: the history goes out as it is."""

    def prepare(self, messages: list[dict], agent) -> list[dict]:
        return messages
