"""A loopback OpenAI-compatible server that replays a script: the real client, offline.

ScriptedLLM stands in for the client; this stands in for the provider, so the real
`openai` client, streaming included, runs with no key and no network, and meets the
ways real providers misbehave: rate limits, dropped streams, refused parameters, tool
calls streamed in odd shapes. Each request consumes one turn of ScriptedLLM's script
format; server-only keys: "fault" (faults.py) and "retry_after", "quirk" (QUIRKS),
"reasoning_field", "finish_reason" (FINISH_REASONS: "length" is a reply cut at the limit).
`aside`, if given, answers every request that offers no tools (a compaction's summary) without
taking a turn, so a script keeps its order however often the context policy asks for one.

    with ScriptServer(["hello"], reject=("stream_options",)) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="x")

From a shell: python -m corecoder.testing.serve SCRIPT.json [--port N]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import select
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from ..messages import IllegalHistory, Reply, Usage, check_history
from ..scripted import SERVER_KEYS, ScriptError, parse_turn
from .faults import FAULTS, check_fault, error_body

QUIRKS = ("standard", "repeat_first", "shared_index", "null_index", "stray_index", "whole",
          "id_every_chunk")
REASONING_FIELDS = ("reasoning_content", "reasoning", "think_tags")
# characters of tool-call arguments per streamed chunk: small, so reassembly is exercised
FRAGMENT = 7
FINISH_REASONS = ("stop", "tool_calls", "length", "content_filter")
HOLD_SECONDS = 120  # the most a stalled or endless stream holds its connection


class ScriptServer:
    """Serves a script on 127.0.0.1 from a background thread; use it as a context manager."""

    def __init__(self, turns: list | str | Path, reject=(), model: str | None = None,
                 port: int = 0, aside: str | dict | None = None):
        # a file, as ScriptedLLM.from_json reads it: [turns] or {model, turns}
        if isinstance(turns, (str, Path)):
            data = json.loads(Path(turns).read_text(encoding="utf-8"))
            turns, model = ((data["turns"], model or data.get("model"))
                            if isinstance(data, dict) else (data, model))
        self.turns = [(parse_turn(t, i), _server_keys(t, i)) for i, t in enumerate(turns)]
        self.model = model or "scripted"
        self.aside = None if aside is None else parse_turn(aside, -1)
        self.reject = frozenset(reject)
        self.port = port
        self.requests: list[dict] = []
        self._served = 0  # chat requests that reached the script, faults included
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> ScriptServer:
        self._httpd = ThreadingHTTPServer(("127.0.0.1", self.port), _Handler)
        self._httpd.block_on_close = False  # never wait on a client that keeps its socket open
        self._httpd.script = self
        self.port = self._httpd.server_address[1]
        threading.Thread(target=self._httpd.serve_forever,
                         kwargs={"poll_interval": 0.02},  # close() waits a poll
                         daemon=True, name="corecoder-serve").start()
        return self

    def close(self) -> None:
        if self._httpd:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> ScriptServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()

    # size: the raw body's bytes; key: what the Authorization header carried after "Bearer "
    def record(self, method: str, path: str, body, size: int = 0, key: str | None = None) -> None:
        stream = isinstance(body, dict) and bool(body.get("stream"))
        with self._lock:
            self.requests.append({"method": method, "path": path, "body": body, "stream": stream,
                                  "bytes": size, "key": key})

    def next_turn(self) -> tuple[int, Reply | None, dict]:
        """The request's number and its turn; (n, None, {}) once the script has run out."""
        with self._lock:
            self._served += 1
            n = self._served
        return (n, *self.turns[n - 1]) if n <= len(self.turns) else (n, None, {})


def _server_keys(turn, index: int) -> dict:
    """The turn's server-only keys, checked now so that a typo fails at once, not mid-test."""
    check_fault(turn, index)
    turn = turn if isinstance(turn, dict) else {}
    keys = {k: turn[k] for k in SERVER_KEYS if k in turn}
    for key, allowed in (("quirk", QUIRKS), ("reasoning_field", REASONING_FIELDS),
                         ("finish_reason", FINISH_REASONS)):
        if key in keys and keys[key] not in allowed:
            raise ScriptError(f"turn {index + 1}: {key} {keys[key]!r} is not one of "
                              f"{', '.join(allowed)}")
    return keys


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # chunked streams, so a dropped stream is visibly incomplete

    def log_message(self, format, *args) -> None:  # quiet: tests and notebooks own stderr
        pass

    def do_GET(self) -> None:
        script = self.server.script
        script.record("GET", self.path, None, key=self._key())
        if self.path.split("?")[0].rstrip("/") != "/v1/models":
            return self._not_found("GET")
        model = {"id": script.model, "object": "model", "owned_by": "corecoder"}
        self._send_json(200, {"object": "list", "data": [model]})

    def _key(self) -> str | None:
        auth = self.headers.get("Authorization") or ""
        return auth.removeprefix("Bearer ") if auth.startswith("Bearer ") else None

    def do_POST(self) -> None:
        script = self.server.script
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        script.record("POST", self.path, body, len(raw), key=self._key())
        if self.path.split("?")[0] != "/v1/chat/completions":
            return self._not_found("POST")
        problem = _invalid(body, script.reject)
        # refused before the script is touched: the turn is still there for the next try
        if problem:
            return self._send_json(400, problem)
        if script.aside is not None and not body.get("tools"):
            return self._answer(body, 0, script.aside, {})
        n, reply, keys = script.next_turn()
        if reply is None:
            message = f"the script has {len(script.turns)} turns but request {n} was made"
            return self._send_json(400, error_body(message, code="script_exhausted"))
        self._answer(body, n, reply, keys)

    def _answer(self, body: dict, n: int, reply: Reply, keys: dict) -> None:
        fault, stream = keys.get("fault"), bool(body.get("stream"))
        if fault == "drop" and not stream:
            # no status line, nothing: the client sees the socket close
            self.close_connection = True
            return
        if fault and FAULTS[fault].status:
            retry = ({"Retry-After": str(keys.get("retry_after", 0))} if fault == "rate_limit"
                     else {})
            return self._send_json(FAULTS[fault].status, FAULTS[fault].body, retry)
        cid, model = f"chatcmpl-scripted-{n}", body.get("model") or self.server.script.model
        if not stream:
            return self._send_json(200, completion(reply, keys, model, cid, _usage(reply, body)))
        chunks = stream_chunks(reply, keys, model, cid)
        half = chunks[: max(1, len(chunks) // 2)]
        if fault == "drop":  # half the reply, then the socket closes
            return self._send_stream(half, done=False)
        if fault == "stall":  # half the reply, then nothing, with the connection held open
            self._send_stream(half, done=False)
            select.select([self.connection], [], [], HOLD_SECONDS)  # until the client hangs up
            return None
        if fault == "endless":  # half the reply, then a character at a time, never finishing
            self._send_stream(half, done=False)
            more = {**_chunk_head(cid, model),
                    "choices": [{"index": 0, "delta": {"content": "."}, "finish_reason": None}]}
            with contextlib.suppress(OSError):  # the client hung up
                for _ in range(int(HOLD_SECONDS * 100)):
                    self._event(json.dumps(more))
                    time.sleep(0.01)
            return None
        # half the reply, then an error inside the stream (OpenRouter does this)
        if fault == "error_event":
            return self._send_stream([*half, error_body("Upstream provider error mid-stream",
                                                        "server_error")], done=True)
        if (body.get("stream_options") or {}).get("include_usage"):
            chunks.append({**_chunk_head(cid, model), "choices": [], "usage": _usage(reply, body)})
        self._send_stream(chunks, done=True)

    def _send_head(self, status: int, headers: dict) -> None:
        self.send_response(status)
        # one request a connection: no idle sockets
        for name, value in {**headers, "Connection": "close"}.items():
            self.send_header(name, value)
        self.end_headers()

    def _send_json(self, status: int, payload: dict, headers: dict | None = None) -> None:
        data = json.dumps(payload).encode()
        self._send_head(status, {"Content-Type": "application/json",
                                 "Content-Length": str(len(data)), **(headers or {})})
        self.wfile.write(data)

    def _send_stream(self, chunks: list[dict], done: bool) -> None:
        """Server-sent events in HTTP chunks; without `done` the body is cut off mid-stream."""
        self._send_head(200, {"Content-Type": "text/event-stream", "Cache-Control": "no-cache",
                              "Transfer-Encoding": "chunked"})
        for event in [json.dumps(c) for c in chunks] + (["[DONE]"] if done else []):
            self._event(event)
        if done:
            self.wfile.write(b"0\r\n\r\n")

    def _event(self, event: str) -> None:
        data = f"data: {event}\n\n".encode()
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _not_found(self, method: str) -> None:
        self._send_json(404, error_body(f"Invalid URL ({method} {self.path})"))


def _invalid(body, reject: frozenset) -> dict | None:
    """The 400 a real provider would answer before looking at the conversation, if any."""
    if not isinstance(body, dict):
        return error_body("We could not parse the JSON body of your request.")
    refused = sorted(reject & set(body))
    if refused:
        return _rejection(refused[0], body[refused[0]])
    if not isinstance(body.get("messages"), list):
        return error_body("Missing required parameter: 'messages'.", param="messages")
    try:
        check_history(body["messages"])
    except IllegalHistory as e:
        return error_body(str(e), param="messages")
    return None


def _rejection(name: str, value) -> dict:
    """A parameter this provider refuses, worded the way the real ones word it."""
    if name == "max_tokens":
        return error_body("Unsupported parameter: 'max_tokens' is not supported with this model. "
                          "Use 'max_completion_tokens' instead.",
                          param="max_tokens", code="unsupported_parameter")
    if name == "temperature":
        return error_body(f"Unsupported value: 'temperature' does not support {value} "
                          "with this model. Only the default (1) value is supported.",
                          param="temperature", code="unsupported_value")
    return error_body(f"Unrecognized request argument supplied: {name}")


def _usage(reply: Reply, body: dict) -> dict:
    """The turn's usage, or a deterministic estimate at ~4 characters a token."""
    reply_chars = (len(reply.text) + len(reply.reasoning)
                   + sum(len(c.name + c.arguments) for c in reply.tool_calls))
    usage = reply.usage or Usage(len(json.dumps(body)) // 4, reply_chars // 4)
    return {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.prompt_tokens + usage.completion_tokens,
            "prompt_tokens_details": {"cached_tokens": usage.cached_tokens}}


def _content(reply: Reply, keys: dict) -> str:
    if keys.get("reasoning_field") == "think_tags" and reply.reasoning:
        return f"<think>{reply.reasoning}</think>{reply.text}"
    return reply.text


def completion(reply: Reply, keys: dict, model: str, cid: str, usage: dict) -> dict:
    """The whole reply as one non-streaming `chat.completion` object."""
    field = keys.get("reasoning_field", "reasoning_content")
    message = {"role": "assistant",
               "content": _content(reply, keys) or (None if reply.tool_calls else "")}
    if reply.reasoning and field != "think_tags":
        message[field] = reply.reasoning
    if reply.tool_calls:
        message["tool_calls"] = [call.as_dict() for call in reply.tool_calls]
    choice = {"index": 0, "message": message, "finish_reason": _finish(reply, keys),
              "logprobs": None}
    return {"id": cid, "object": "chat.completion", "created": 0, "model": model,
            "choices": [choice], "usage": usage}


def _chunk_head(cid: str, model: str) -> dict:
    # created: fixed, for replay
    return {"id": cid, "object": "chat.completion.chunk", "created": 0, "model": model}


def stream_chunks(reply: Reply, keys: dict, model: str, cid: str) -> list[dict]:
    """The reply as the `chat.completion.chunk`s a provider streams, usage chunk excluded."""
    field = keys.get("reasoning_field", "reasoning_content")
    deltas = [{"role": "assistant", "content": ""}]
    if field != "think_tags":
        deltas += [{field: word} for word in _words(reply.reasoning)]
    deltas += [{"content": word} for word in _words(_content(reply, keys))]
    deltas += [{"tool_calls": [d]} for d in tool_call_deltas(reply, keys.get("quirk", "standard"))]
    choices = [{"index": 0, "delta": d, "finish_reason": None} for d in deltas]
    choices.append({"index": 0, "delta": {}, "finish_reason": _finish(reply, keys)})
    return [{**_chunk_head(cid, model), "choices": [c]} for c in choices]


def _finish(reply: Reply, keys: dict) -> str:
    return keys.get("finish_reason") or ("tool_calls" if reply.tool_calls else "stop")


def _words(text: str) -> list[str]:
    """Split before every word that follows whitespace: the pieces join back to the exact text."""
    return [piece for piece in re.split(r"(?<=\s)(?=\S)", text) if piece]


def tool_call_deltas(reply: Reply, quirk: str = "standard") -> list[dict]:
    """Each call's tool-call deltas, shaped the way one family of providers streams them."""
    deltas = []
    for i, call in enumerate(reply.tool_calls):
        index = {"shared_index": 0, "null_index": None}.get(quirk, i)
        head = {"index": index, "id": call.id, "type": "function",
                "function": {"name": call.name, "arguments": ""}}
        if quirk == "whole":
            deltas.append({**head, "function": {"name": call.name, "arguments": call.arguments}})
            continue
        deltas += [head, dict(head)] if quirk == "repeat_first" else [head]
        fragments = [call.arguments[k:k + FRAGMENT]
                     for k in range(0, len(call.arguments), FRAGMENT)]
        for k, fragment in enumerate(fragments):
            if quirk == "id_every_chunk":
                deltas.append({**head, "function": {"name": call.name, "arguments": fragment}})
            else:  # only the first chunk of a call carries its id and name
                stray = quirk == "stray_index" and k > 0
                deltas.append({"index": 99 + i if stray else index,
                               "function": {"arguments": fragment}})
    return deltas


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m corecoder.testing.serve",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("script", help="a JSON script: a list of turns, "
                                       "or {\"model\": ..., \"turns\": [...]}")
    parser.add_argument("--port", type=int, default=0,
                        help="port on 127.0.0.1 (default: any free port)")
    args = parser.parse_args(argv)
    with (ScriptServer(args.script, port=args.port) as server,
          contextlib.suppress(KeyboardInterrupt)):
        print(server.base_url, flush=True)
        threading.Event().wait()  # until Ctrl+C


if __name__ == "__main__":
    main()
