"""How many tokens a history costs, without a tokenizer, and how many a model can take.

A tokenizer per provider would be exact and heavy; for deciding *when* to compact,
a careful estimate is enough. Token density depends on the kind of character:
English prose packs about four characters into a token, symbols (brackets,
operators, quotes) about two, and Chinese, Japanese or Korean text close to one per
character; code, words and symbols mixed, falls between. So we count
by class. When the provider reports real usage we trust that instead, and only
estimate what was added since (Estimate.anchor), so the cost of estimating a round
does not grow with the length of the history.
"""

from __future__ import annotations

import json
import re

# Chinese, Japanese and Korean characters, their punctuation and full-width forms
CJK = re.compile("[\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
                 "\uff00-\uffef]")
SYMBOL = re.compile(r"[^\w\s\u3000-\u303f\uff00-\uffef]")  # code punctuation, brackets, quotes
PER_MESSAGE = 4  # role and framing tokens the API adds to every message

DEFAULT_WINDOW = 128_000
WINDOWS = (  # name prefix -> context window in tokens; the first prefix that matches wins
    ("gpt-4.1", 1_000_000), ("gpt-5", 400_000), ("gpt-4o", 128_000), ("o3", 200_000),
    ("o4", 200_000),
    ("deepseek", 128_000), ("qwen", 128_000), ("kimi", 256_000), ("moonshot", 128_000),
    ("claude", 200_000), ("anthropic/", 200_000), ("gemini", 1_000_000), ("llama", 128_000),
)


def text_tokens(text: str) -> int:
    cjk = len(CJK.findall(text))
    symbols = len(SYMBOL.findall(text))
    return round(cjk + symbols / 2 + (len(text) - cjk - symbols) / 4)


def message_tokens(message: dict) -> int:
    total = PER_MESSAGE + text_tokens(message.get("content") or "")
    for call in message.get("tool_calls") or []:
        total += PER_MESSAGE + text_tokens(call["function"]["name"] + call["function"]["arguments"])
    return total


def history_tokens(messages: list[dict]) -> int:
    return sum(message_tokens(m) for m in messages)


def tools_tokens(schemas: list[dict]) -> int:
    return text_tokens(json.dumps(schemas))


def window_for(model: str) -> int:
    name = model.lower()
    return next((window for prefix, window in WINDOWS if name.startswith(prefix)), DEFAULT_WINDOW)


class Estimate:
    """The tokens of the next request: the last real count plus an estimate of what came after.

    `anchor(history, tokens)` records that a request with this history cost `tokens` prompt
    tokens in all (system prompt and tool schemas included). The anchor holds for a history
    that extends that one: one whose message at the anchor's end is the same object. A
    history put in its place (a reset, `agent.messages = []` in a notebook) is estimated
    whole. A rewrite of older messages must call `forget()`, or `shift()` by what it changed,
    so the anchor survives it (a trim: the next round stays cheap).
    """

    def __init__(self):
        self.count = 0
        self.tokens = 0
        self.last: dict | None = None  # the anchored history's last message

    def anchor(self, history: list[dict], tokens: int) -> None:
        self.count, self.tokens = len(history), tokens
        self.last = history[-1] if history else None

    def forget(self) -> None:
        self.count = self.tokens = 0

    def shift(self, messages: list[dict], before: list[dict]) -> None:
        """`before` (of the first `count` messages) became `messages`: move the anchor by it."""
        if self.tokens:
            self.tokens += history_tokens(messages) - history_tokens(before)
            self.last = next((new for new, old in zip(messages, before, strict=True)
                              if old is self.last), self.last)

    def of(self, messages: list[dict], overhead: int) -> int:
        extends = 0 < self.count <= len(messages) and messages[self.count - 1] is self.last
        if self.tokens and extends:
            return self.tokens + history_tokens(messages[self.count:])
        return overhead + history_tokens(messages)
