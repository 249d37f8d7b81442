"""The real model client: any OpenAI-compatible API, through the official `openai` package.

It has the same `chat(messages, tools, emit) -> Reply` as the scripted models, so
the loop cannot tell them apart. What it adds is everything a real network and
real providers throw at you:

    streaming     text and reasoning reach subscribers as they arrive; tool-call
                  fragments are reassembled whatever the dialect (stream.py)
    retries       connection errors, timeouts, 408/409/425/429/5xx and a stream that
                  dies mid-way are retried with exponential backoff and jitter,
                  honouring Retry-After; text already shown is not shown twice
    adaptation    a provider that rejects `stream_options`, `max_tokens` or
                  `temperature` is asked again without it, and that is remembered
    clear errors  a bad key, an unknown model, a context overflow: a ModelError that
                  says what to do, never a stack of HTTP internals

`openai` is imported on the first call, not at import time (it costs ~0.35 s).
"""

from __future__ import annotations

import email.utils
import random
import re
import time
from collections.abc import Callable

from .events import ReasoningDelta, Retrying, TextDelta
from .messages import ContextTooLong, ModelError, Reply, ToolCall, Usage
from .stream import ThinkSplitter, ToolCallAssembler

RETRY_STATUS = {408, 409, 425, 429}  # and every 5xx
CONTEXT_OVERFLOW = re.compile(r"context[ _]length|maximum context|too many tokens|context window", re.I)


class StreamDropped(Exception):
    """The stream ended before the reply was complete (no finish_reason)."""


class LLM:
    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None,
                 stream: bool = True, keep_reasoning: bool = False, max_attempts: int = 4,
                 timeout: float = 120.0, max_tokens: int | None = None, temperature: float | None = None,
                 sleep: Callable[[float], None] = time.sleep, seed: int | None = None):
        self.model = model
        self.base_url = base_url
        self.api_key = api_key
        self.stream = stream
        self.keep_reasoning = keep_reasoning
        self.max_attempts = max_attempts
        self.timeout = timeout
        self.options = {k: v for k, v in (("max_tokens", max_tokens), ("temperature", temperature)) if v is not None}
        self.stream_options = True  # set to False for good if the provider rejects it
        self.sleep = sleep
        self.random = random.Random(seed)
        self._client = None

    @property
    def client(self):
        if self._client is None:
            import openai

            self._client = openai.OpenAI(api_key=self.api_key or "not-needed", base_url=self.base_url,
                                         max_retries=0, timeout=self.timeout)  # retries are ours, below
        return self._client

    def chat(self, messages: list[dict], tools: list[dict] | None = None, emit: Callable | None = None) -> Reply:
        shown = _Shown(emit or (lambda event: None))
        attempt = 1
        while True:
            try:
                return self._once(messages, tools, shown)
            except Exception as error:
                if self._adapt(error):
                    continue  # the same attempt, asked the way this provider accepts
                delay = self._retry_delay(error, attempt)
                if delay is None:
                    raise self._explain(error, attempt) from error
                shown.emit(Retrying(attempt, delay, _describe(error)))
                self.sleep(delay)
                attempt += 1
                shown.next_attempt()

    def _once(self, messages: list[dict], tools: list[dict] | None, shown: _Shown) -> Reply:
        params = {"model": self.model, "messages": messages, **self.options}
        if tools:
            params["tools"] = tools
        if not self.stream:
            return self._whole(self.client.chat.completions.create(**params), shown)
        params["stream"] = True
        if self.stream_options:
            params["stream_options"] = {"include_usage": True}
        return self._streamed(self.client.chat.completions.create(**params), shown)

    def _streamed(self, stream, shown: _Shown) -> Reply:
        text, reasoning, calls, think = [], [], ToolCallAssembler(), ThinkSplitter()
        usage, finished = None, False
        for chunk in stream:
            if getattr(chunk, "usage", None):
                usage = _usage(chunk.usage)
            for choice in chunk.choices or []:
                delta = choice.delta
                thought, said = think.feed(delta.content or "") if delta else ("", "")
                shown.add(reasoning, ReasoningDelta, _reasoning_of(delta) + thought)
                shown.add(text, TextDelta, said)
                for fragment in (delta.tool_calls if delta else None) or []:
                    function = fragment.function
                    calls.add(fragment.index, fragment.id, function and function.name, function and function.arguments)
                finished = finished or bool(choice.finish_reason)
        if not finished:
            raise StreamDropped("the stream ended before the reply was complete")
        thought, said = think.flush()
        shown.add(reasoning, ReasoningDelta, thought)
        shown.add(text, TextDelta, said)
        return Reply("".join(text), calls.result(), "".join(reasoning), usage, self.keep_reasoning)

    def _whole(self, response, shown: _Shown) -> Reply:
        message = response.choices[0].message
        think = ThinkSplitter()
        thought, said = think.feed(message.content or "")
        rest_thought, rest_said = think.flush()
        reasoning, text = [], []
        shown.add(reasoning, ReasoningDelta, _reasoning_of(message) + thought + rest_thought)
        shown.add(text, TextDelta, said + rest_said)
        calls = [ToolCall(c.id, c.function.name, c.function.arguments or "") for c in message.tool_calls or []]
        usage = _usage(response.usage) if response.usage else None
        return Reply("".join(text), calls, "".join(reasoning), usage, self.keep_reasoning)

    def _adapt(self, error: Exception) -> bool:
        """Drop or rename a parameter this provider rejected. True if there was one."""
        if _status(error) != 400 or CONTEXT_OVERFLOW.search(_detail(error)):
            return False
        message = str(error)
        if "stream_options" in message and self.stream_options and self.stream:
            self.stream_options = False
            return True
        if "max_tokens" in message and "max_tokens" in self.options:
            self.options["max_completion_tokens"] = self.options.pop("max_tokens")
            return True
        if "temperature" in message and "temperature" in self.options:
            del self.options["temperature"]
            return True
        return False

    def _retry_delay(self, error: Exception, attempt: int) -> float | None:
        if attempt >= self.max_attempts or not _is_transient(error):
            return None
        waited = _retry_after(error)
        if waited is not None:
            return min(waited, 60.0)
        backoff = min(30.0, 2.0 ** (attempt - 1))
        return backoff * (0.5 + self.random.random() / 2)  # jitter: clients that failed together spread out

    def _explain(self, error: Exception, attempts: int) -> Exception:
        status, detail = _status(error), _detail(error)
        where = self.base_url or "the OpenAI API"
        if status is None and not _is_transient(error) and not type(error).__module__.startswith("openai"):
            return error  # not an API problem: a bug to see as it is
        if status in (401, 403):
            return ModelError(f"{where} rejected the API key ({status}): {detail}. Check OPENAI_API_KEY "
                              f"or CORECODER_API_KEY (or run `corecoder --demo` to try it without a key).")
        if status == 404:
            return ModelError(f"{where} does not know the model {self.model!r} (404): {detail}")
        if status == 400 and CONTEXT_OVERFLOW.search(detail):
            return ContextTooLong(f"the request is longer than {self.model}'s context window: {detail}")
        if status is not None and status < 500 and status not in RETRY_STATUS:
            return ModelError(f"{where} refused the request ({status}): {detail}")
        return ModelError(f"gave up on {where} after {attempts} attempt{'s' * (attempts > 1)}: {_describe(error)}")


class _Shown:
    """Emits streamed text, but after a retry skips what the user has already seen."""

    def __init__(self, emit: Callable):
        self.emit = emit
        self.seen: dict[type, int] = {}  # characters shown so far, by kind, in earlier attempts
        self.now: dict[type, int] = {}  # characters received in this attempt

    def add(self, parts: list[str], kind: type, piece: str) -> None:
        if not piece:
            return
        parts.append(piece)
        start = self.now.get(kind, 0)
        self.now[kind] = start + len(piece)
        fresh = piece[max(0, self.seen.get(kind, 0) - start):]
        if fresh:
            self.emit(kind(fresh))

    def next_attempt(self) -> None:
        self.seen = {k: max(self.seen.get(k, 0), self.now.get(k, 0)) for k in {*self.seen, *self.now}}
        self.now = {}


def _reasoning_of(delta) -> str:
    if delta is None:
        return ""
    return getattr(delta, "reasoning_content", None) or getattr(delta, "reasoning", None) or ""


def _usage(raw) -> Usage:
    details = getattr(raw, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) or 0
    return Usage(raw.prompt_tokens or 0, raw.completion_tokens or 0, cached)


def _status(error: Exception) -> int | None:
    return getattr(error, "status_code", None)


def _is_transient(error: Exception) -> bool:
    status = _status(error)
    if status is not None:
        return status in RETRY_STATUS or status >= 500
    if isinstance(error, StreamDropped):
        return True
    kind = type(error)
    # Connection errors and timeouts; an error sent inside the stream (a bare APIError, as
    # OpenRouter does mid-stream); or the transport's own errors when a stream breaks.
    return kind.__name__ in ("APIConnectionError", "APITimeoutError", "APIError") or kind.__module__.startswith("httpx")


def _retry_after(error: Exception) -> float | None:
    response = getattr(error, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)  # the HTTP-date form
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _detail(error: Exception) -> str:
    body = getattr(error, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
    return str(error)


def _describe(error: Exception) -> str:
    status = _status(error)
    return f"{status} {_detail(error)}" if status else f"{type(error).__name__}: {error}"
