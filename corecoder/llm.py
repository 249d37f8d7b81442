"""The real model client: any OpenAI-compatible API, through the official `openai` package.

It has the same `chat(messages, tools, emit) -> Reply` as the scripted models, so the loop
cannot tell them apart. The idea is one request, its reply streamed: text and reasoning
reach the subscribers as they arrive, and tool-call fragments are put back together
whatever the provider's dialect (stream.py). What follows the marked line is what real
networks and real providers throw at a client:

    retries       connection errors, timeouts, 408/409/425/429/5xx and a stream that
                  dies mid-way are retried with exponential backoff and jitter,
                  honouring Retry-After; text already shown is not shown twice
    time limits   a server that sends nothing for `idle_timeout` seconds has failed (and is
                  retried); a reply that takes longer than `reply_timeout`, its retries
                  included, is given up, so a stream that never finishes ends too
    adaptation    a provider that rejects `stream_options`, `max_tokens` or
                  `temperature` is asked again without it, and that is remembered
    clear errors  a bad key, an unknown model, a context overflow: a ModelError that
                  says what to do, never a stack of HTTP internals

`openai` is imported on the first call, not at import time (it costs ~0.35 s).
"""

from __future__ import annotations

import email.utils
import json
import os
import random
import re
import time
from collections.abc import Callable

from .events import ReasoningDelta, Retrying, TextDelta
from .messages import ContextTooLong, ModelError, Reply, Usage
from .stream import ThinkSplitter, ToolCallAssembler


def usage_of(raw) -> Usage:
    details = getattr(raw, "prompt_tokens_details", None)
    return Usage(tokens(getattr(raw, "prompt_tokens", 0)),
                 tokens(getattr(raw, "completion_tokens", 0)),
                 tokens(getattr(details, "cached_tokens", 0)))


IDLE_TIMEOUT = 60.0  # seconds without a byte from the server: the connection has failed
REPLY_TIMEOUT = 600.0  # seconds for one whole reply, its retries included


RETRY_STATUS = {408, 409, 425, 429}  # and every 5xx


def transient(error: Exception) -> bool:
    """Worth another try? Errors are matched by class name and module, because `openai` is not
    imported until the first call (its classes can't be named here): connection errors and
    timeouts; an error sent inside the stream (a bare APIError, as OpenRouter does mid-stream);
    the transport's own errors when a stream breaks (httpx); a stream that ended too soon, or
    sent a chunk that is not JSON. Not a 429 that says the quota is spent: it stays spent."""
    if quota_exhausted(error):
        return False
    code = status(error)
    if code is not None:
        return code in RETRY_STATUS or code >= 500
    kind = type(error)
    broken = (StreamDropped, json.JSONDecodeError)  # a chunk that is not JSON broke it too
    return isinstance(error, broken) or kind.__module__.startswith("httpx") \
        or kind.__name__ in ("APIConnectionError", "APITimeoutError", "APIError")


def retry_after(error: Exception) -> float | None:
    """The wait the provider asked for: its Retry-After header, else "try again in 7s" in its
    message; None if it named none."""
    response = getattr(error, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    if not value:
        said = TRY_AGAIN.search(detail(error)) if status(error) else None
        return float(said[1]) / (1000 if said[2].lower() == "ms" else 1) if said else None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)  # the HTTP-date form
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class LLM:
    """The real model: any OpenAI-compatible API through the official client, streamed, with
    the retries and adaptations real providers need. One `chat()`, like the scripted models'."""

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None,
                 stream: bool = True, keep_reasoning: bool = False, max_attempts: int = 4,
                 idle_timeout: float = IDLE_TIMEOUT, reply_timeout: float = REPLY_TIMEOUT,
                 max_tokens: int | None = None,
                 temperature: float | None = None, sleep: Callable[[float], None] = time.sleep,
                 seed: int | None = None):
        self.model = model
        self.base_url = base_url
        self.api_key = api_key
        self.stream = stream
        self.keep_reasoning = keep_reasoning  # DeepSeek, Kimi want it back (Reply.message)
        self.max_attempts = max_attempts
        self.idle_timeout, self.reply_timeout = idle_timeout, reply_timeout
        self.options = {k: v for k, v in (("max_tokens", max_tokens), ("temperature", temperature))
                        if v is not None}
        self.stream_options = True  # set to False for good if the provider rejects it
        self.sleep = sleep
        self.random = random.Random(seed)
        self._client = None

    @property
    def client(self):
        if self._client is None:
            import openai

            # max_retries=0: the retries are ours (below), and they know what was shown already
            self._client = openai.OpenAI(api_key=self.api_key or "not-needed", max_retries=0,
                                         base_url=self.base_url, timeout=self.idle_timeout)
        return self._client

    def chat(self, messages: list[dict], tools: list[dict] | None = None,
             emit: Callable | None = None) -> Reply:
        shown = Shown(emit or (lambda event: None))
        attempt, deadline = 1, time.monotonic() + self.reply_timeout
        while True:
            try:
                return self.once(messages, tools, shown, deadline)
            except Exception as error:
                if self.adapt(error):
                    continue  # the same attempt, asked the way this provider accepts
                # give up when the error lasts, the tries are spent (None) or no time is left
                delay = self.retry_delay(error, attempt)
                if delay is None or time.monotonic() + delay > deadline:
                    raise self.explain(error, attempt) from error
                shown.emit(Retrying(attempt, delay, describe(error)))
                self.sleep(delay)
                attempt += 1
                shown.retried()

    def once(self, messages: list[dict], tools: list[dict] | None, shown: Shown,
             deadline: float = float("inf")) -> Reply:
        """One request, its reply put together from the chunks of the stream, by `deadline`
        (time.monotonic). (A server that cannot stream sends the reply whole: read as a stream
        of one chunk, its message the delta.)"""
        params = {"model": self.model, "messages": messages, **self.options}
        if tools:
            params["tools"] = tools
        if self.stream:
            params["stream"] = True
            if self.stream_options:
                params["stream_options"] = {"include_usage": True}
        response = self.send(params, deadline)
        if not self.stream and not hasattr(response, "choices"):  # a login page, say
            raise NotAReply("the server answered with something that is not a chat completion: "
                            f"{str(response)[:200]!r}; is the base URL an OpenAI-compatible API?")
        text, reasoning, calls, think = [], [], ToolCallAssembler(), ThinkSplitter()
        usage, finished, cut = None, False, False
        for chunk in response if self.stream else [response]:
            if getattr(chunk, "usage", None):
                usage = usage_of(chunk.usage)
            for choice in chunk.choices or []:
                delta = choice.delta if self.stream else choice.message
                thought, said = think.feed(delta.content or "") if delta else ("", "")
                shown.add(reasoning, ReasoningDelta, reasoning_of(delta) + thought)
                shown.add(text, TextDelta, said)
                for i, part in enumerate((delta.tool_calls if delta else None) or []):
                    function = part.function  # a whole reply's calls have no index: use their place
                    calls.add(part.index if self.stream else i, part.id, function and function.name,
                              function and function.arguments)
                finished = finished or bool(choice.finish_reason)
                cut = cut or choice.finish_reason == "length"
        if not finished:
            raise StreamDropped("the stream ended before the reply was complete")
        thought, said = think.flush()
        shown.add(reasoning, ReasoningDelta, thought)
        shown.add(text, TextDelta, said + (OUTPUT_LIMIT_REACHED if cut else ""))
        return Reply("".join(text), calls.result(), "".join(reasoning), usage, self.keep_reasoning)

    def send(self, params: dict, deadline: float):
        """The request made: a stream of chunks, or the reply whole (LiteLLM sends it its way)."""
        # read through `in_time`, so that the deadline holds however the server paces its bytes
        return in_time(self.client.chat.completions.with_streaming_response.create(**params),
                       deadline, self.reply_timeout)

    def adapt(self, error: Exception) -> bool:
        """Drop or rename a parameter this provider rejected. True if there was one."""
        if status(error) != 400 or CONTEXT_OVERFLOW.search(detail(error)):
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

    def retry_delay(self, error: Exception, attempt: int) -> float | None:
        """Seconds to wait before the next attempt, or None: the error lasts, or tries are spent."""
        if attempt >= self.max_attempts or not transient(error):
            return None
        waited = retry_after(error)
        if waited is not None:
            return min(waited, 60.0)
        # an overloaded provider (529) needs longer to recover than one that failed once
        backoff = min(60.0, 2.0 ** (attempt - 1) * (OVERLOADED_BACKOFF if overloaded(error) else 1))
        return backoff * (0.5 + self.random.random() / 2)  # jitter: who failed together spreads out

    # --- defences: errors a user can act on ----------------------------------------------------

    def explain(self, error: Exception, attempts: int) -> Exception:
        """The error to raise, worded for the user: what went wrong, and what to do about it."""
        code, why = status(error), detail(error)
        where = self.base_url or "the OpenAI API"
        from_api = type(error).__module__.startswith(("openai", "litellm"))
        if isinstance(error, (ReplyTooSlow, NotAReply)):
            return ModelError(str(error))
        if code is None and not transient(error) and not from_api:
            return error  # not an API problem: a bug to see as it is
        if code in (401, 403):
            return ModelError(f"{where} rejected the API key ({code}): {why}. Check OPENAI_API_KEY "
                              "or CORECODER_API_KEY (or run `corecoder --demo` to try it without a "
                              "key).")
        if code == 404:
            return ModelError(f"{where} does not know the model {self.model!r} (404): {why}")
        if quota_exhausted(error):
            return ModelError(f"{where} says the account's quota or credit is used up ({code}): "
                              f"{why.rstrip('.')}. Add credit or raise the limit with the "
                              "provider; trying again will not help.")
        if code == 400 and CONTEXT_OVERFLOW.search(why):
            return ContextTooLong(f"the request is longer than {self.model}'s context window: "
                                  f"{why}")
        if code is not None and code < 500 and code not in RETRY_STATUS:
            return ModelError(f"{where} refused the request ({code}): {why}")
        tries = "1 attempt" if attempts == 1 else f"{attempts} attempts"
        if type(error).__name__ in ("APITimeoutError", "ReadTimeout"):
            return ModelError(f"gave up on {where} after {tries}: it sent nothing for "
                              f"{self.idle_timeout:g} s (the limit is CORECODER_IDLE_TIMEOUT)")
        return ModelError(f"gave up on {where} after {tries}: {describe(error)}")


OVERLOADED_BACKOFF = 4  # times the usual wait, for a provider that says it is overloaded
# Said, to the user as it streams and to the model in its own message, when a reply stops at
# the output limit (finish_reason "length"): a tool call's arguments are then cut off too.
OUTPUT_LIMIT_REACHED = ("\n[the reply was cut here: the model reached its output limit; anything "
                        "after this, a tool call's arguments included, is missing. Write less in "
                        "one reply, a large file in several steps]")
# "Too long", in each provider's words: OpenAI's (and its error code), Anthropic's "prompt is too
# long: N tokens > M maximum", Gemini's "The input token count (N) exceeds the maximum number of
# tokens allowed", and the usual others.
CONTEXT_OVERFLOW = re.compile(r"context[ _]length|maximum context|too many tokens|context window"
                              r"|prompt is too long|input token count.*exceeds", re.I)


class StreamDropped(Exception):
    """The stream ended before the reply was complete (no finish_reason)."""


class ReplyTooSlow(Exception):
    """A reply took longer than its time limit: not worth another try."""


def in_time(request, deadline: float, limit: float):
    """What `request` (a call through the client's `with_streaming_response`) parses to, every
    piece of it read by `deadline` (time.monotonic), or ReplyTooSlow. The transport's own time
    limit is for one read: a server that sends a byte a second, or keeps a stream alive with
    SSE comments that make no chunk, would never trip it. So each piece that arrives, whatever
    it is, is checked against the deadline, and the response is closed when it has passed.
    (Entered, never exited: a response read to its end closes itself.)"""
    raw = request.__enter__()
    pieces = raw.http_response.iter_bytes  # what the client reads a body through, streamed or not
    raw.http_response.iter_bytes = lambda *args, **kwargs: by_deadline(
        pieces(*args, **kwargs), deadline, limit, raw.close)
    return raw.parse()


def by_deadline(pieces, deadline: float, limit: float, close: Callable[[], None]):
    """`pieces` as they come, until one comes after `deadline`: then `close()` and ReplyTooSlow."""
    for piece in pieces:
        if time.monotonic() > deadline:
            close()
            raise ReplyTooSlow(f"the reply went on for more than {limit:g} s without finishing, "
                               "so it was given up (the limit is CORECODER_REPLY_TIMEOUT)")
        yield piece


class LiteLLM(LLM):
    """The same model reached through LiteLLM, for a provider with no OpenAI-compatible endpoint
    (`pip install "corecoder-course[litellm]"`, then CORECODER_PROVIDER=litellm or `-m
    litellm/anthropic/claude-sonnet-4-5`). The model is LiteLLM's name for it, and the key its
    provider's own variable (ANTHROPIC_API_KEY...) unless one is given. LiteLLM answers in the
    OpenAI client's shapes, and its errors are the client's classes: the stream's assembly, the
    retries and the adaptations above are the same."""

    def send(self, params: dict, deadline: float):
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # its import, offline
        import litellm

        litellm.suppress_debug_info = True  # its own hints on stdout would mix with the answer
        key = {"api_key": self.api_key} if self.api_key else {}  # else: the provider's variable
        response = litellm.completion(**params, **key, api_base=self.base_url, num_retries=0,
                                      timeout=self.idle_timeout)
        if not self.stream:
            return response
        return by_deadline(response, deadline, self.reply_timeout, response.close)


class NotAReply(Exception):
    """The server's answer is not a chat completion at all (an HTML page): not worth another try."""


class Shown:
    """Streamed text goes to the subscribers once: after a retry, what was shown is skipped."""

    def __init__(self, emit: Callable):
        self.emit = emit
        self.before: dict[type, int] = {}  # characters shown in earlier attempts, by kind of delta
        self.now: dict[type, int] = {}  # characters received in this attempt

    def add(self, parts: list[str], kind: type, piece: str) -> None:
        parts.append(piece)  # an empty piece changes nothing, and is emitted to no one
        start = self.now.get(kind, 0)
        self.now[kind] = start + len(piece)
        fresh = piece[max(0, self.before.get(kind, 0) - start):]
        if fresh:
            self.emit(kind(fresh))

    def retried(self) -> None:
        kinds = {*self.before, *self.now}
        self.before = {k: max(self.before.get(k, 0), self.now.get(k, 0)) for k in kinds}
        self.now = {}


def quota_exhausted(error: Exception) -> bool:
    """A 429 for an account out of quota or credit (OpenAI's insufficient_quota), not a rate.
    One that names a time to retry is a rate after all: Gemini's per-minute limit says "You
    exceeded your current quota ... Please retry in 58.8s"."""
    body = getattr(error, "body", None)
    inner = body.get("error", body) if isinstance(body, dict) else {}
    kinds = {str(inner.get(k)) for k in ("code", "type")} if isinstance(inner, dict) else set()
    said = "insufficient_quota" in kinds or QUOTA.search(detail(error)) is not None
    return status(error) == 429 and said and not TRY_AGAIN.search(detail(error))


QUOTA = re.compile(r"insufficient (?:quota|balance|credit)|credit balance is too low", re.I)
# "Please try again in 7s." (OpenAI), "in 820ms", "Please retry in 7.5s" (Gemini)
TRY_AGAIN = re.compile(r"(?:try again|retry)(?: after| in)\s+(\d+(?:\.\d+)?)\s*(ms|s\b|sec|second)",
                       re.I)


def overloaded(error: Exception) -> bool:
    return status(error) == 529 or "overloaded" in detail(error).lower()


def status(error: Exception) -> int | None:
    return getattr(error, "status_code", None)


def detail(error: Exception) -> str:
    """The provider's own words, from the error body when it has them."""
    body = getattr(error, "body", None)
    inner = body.get("error", body) if isinstance(body, dict) else None
    return str(inner["message"]) if isinstance(inner, dict) and inner.get("message") else str(error)


def describe(error: Exception) -> str:
    """`429 Rate limit reached`, or `APIConnectionError: ...`: a retry's line, the last error."""
    if status(error):
        return f"{status(error)} {detail(error)}"
    return f"{type(error).__name__}: {error}"


def reasoning_of(delta) -> str:
    """Reasoning, from `reasoning_content` (DeepSeek, Kimi) or `reasoning` (OpenRouter...)."""
    # A chunk without a delta (None) has neither: getattr's default answers for it.
    return getattr(delta, "reasoning_content", None) or getattr(delta, "reasoning", None) or ""


def tokens(value) -> int:
    """A token count as a server reported it: a string of digits counts, a negative or a
    nonsense value is 0 (a wrong count must not break the cost line)."""
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError):
        return 0
