"""The faults a script can play, one vocabulary for both of their players.

A turn may be a fault instead of a reply: `{"fault": "rate_limit"}`. The loopback server
(serve.py) answers it the way a provider does, with an HTTP status and an error body,
or by breaking the stream; the real client then retries, or gives up with an error.
`FaultyScriptedLLM` plays the same script without HTTP, as the real client would end
up seeing it: a passing fault is skipped (a retry got past it) and reported as a
`Retrying` event; a lasting one raises what the client raises.

    passing   rate_limit 429 (with Retry-After), try_again 429 ("try again in 1.5s" in its
              message, no header), server_error 500, overloaded 529 (a longer backoff),
              drop (the connection dies mid-stream), error_event (an error inside the stream),
              stall (half the stream, then silence: the client's idle limit ends the try)
    lasting   auth 401, bad_request 400, context_length 400 (the request is too long),
              quota 429 (insufficient_quota: the account is out of credit, not retried),
              endless (text that never finishes: the client's limit for a reply ends it)

stall and endless break streamed replies only; a request without streaming gets its reply.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..events import Retrying
from ..messages import ContextTooLong, ModelError, Reply
from ..scripted import ScriptedLLM, ScriptError


def error_body(message: str, type_: str = "invalid_request_error", param: str | None = None,
           code: str | None = None) -> dict:
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


@dataclass(frozen=True)
class Fault:
    status: int | None  # the server's HTTP status; None: it breaks the stream itself
    body: dict | None  # the server's error body
    # what a client ends up raising; None: a retry passes it
    raises: Callable[[], Exception] | None = None


FAULTS = {
    "rate_limit": Fault(429, error_body("Rate limit reached for requests.", "rate_limit_error",
                                    code="rate_limit_exceeded")),
    "try_again": Fault(429, error_body("Rate limit reached for requests per min. Please try again "
                                       "in 1.5s.", "requests", code="rate_limit_exceeded")),
    "server_error": Fault(500, error_body("The server had an error while processing your request.",
                                          "server_error")),
    "overloaded": Fault(529, error_body("Overloaded", "overloaded_error")),
    "drop": Fault(None, None),  # half the stream, then the connection closes
    "error_event": Fault(None, None),  # half the stream, then an error event in it
    "stall": Fault(None, None),  # half the stream, then silence: the client's idle limit ends it
    # text that never finishes, until the client's limit for a whole reply gives it up
    "endless": Fault(None, None, lambda: ModelError("the reply went on past its time limit "
                                                    "(scripted)")),
    "auth": Fault(401, error_body("Incorrect API key provided", code="invalid_api_key"),
                  lambda: ModelError("the provider rejected the API key (401, scripted)")),
    "quota": Fault(429, error_body("You exceeded your current quota, please check your plan and "
                                   "billing details.", "insufficient_quota",
                                   code="insufficient_quota"),
                   lambda: ModelError("the account's quota or credit is used up (429, scripted)")),
    "bad_request": Fault(400, error_body("Bad request"),
                         lambda: ModelError("the provider refused the request (400, scripted)")),
    "context_length": Fault(400, error_body("This model's maximum context length is 8192 tokens. "
                                            "However, your messages resulted in 9000 tokens. "
                                            "Please reduce the length of the messages.",
                                            param="messages", code="context_length_exceeded"),
                            lambda: ContextTooLong("the request is longer than the context window "
                                                   "(scripted)")),
}


def check_fault(turn, index: int) -> str | None:
    """The turn's fault, if it has one the vocabulary knows; ScriptError for one it does not."""
    fault = turn.get("fault") if isinstance(turn, dict) else None
    if fault and fault not in FAULTS:
        raise ScriptError(f"turn {index + 1}: unknown fault {fault!r}; known: {', '.join(FAULTS)}")
    return fault


class FaultyScriptedLLM(ScriptedLLM):
    """A ScriptedLLM whose script may also hold faults, played as the real client meets them."""

    def __init__(self, turns: list, model: str = "scripted"):
        self.faults = [check_fault(t, i) for i, t in enumerate(turns)]
        super().__init__([{k: v for k, v in t.items() if k != "fault"} if isinstance(t, dict) else t
                          for t in turns], model)

    def chat(self, messages: list[dict], tools: list[dict] | None = None,
             emit: Callable | None = None) -> Reply:
        while self.position < len(self.turns) and self.faults[self.position]:
            fault = FAULTS[self.faults[self.position]]
            self.position += 1
            if fault.raises:
                self._receive(messages, tools)  # the request was made, and refused
                raise fault.raises()
            if emit:
                emit(Retrying(self.position, 0.0, f"scripted {self.faults[self.position - 1]}"))
        return super().chat(messages, tools, emit)
