"""A loopback OpenAI-compatible chat-completions server for tests, with scripted faults.

    with FakeLLM(delay=0.05) as server:
        server.faults["some message"] = ["429:0.5", "malformed"]   # its 1st and 2nd requests fail
        ... RANKHOUSE_LLM_URL=server.url ...

It answers deterministically from the request alone: the message text is the last message's content,
the features are the properties of the request's JSON schema, and feature f of text t is
`feature_value(t, f)`: the first two bytes of sha256(t + f) over 65535 (so most values need rounding
to 3 decimals). An E3 interpretation request (schema name `requirement_interpretation`) gets the same
numbers as weights, plus flags and a note. Usage: prompt tokens = ceil(characters of the messages / 4)
+ PROMPT_OVERHEAD, completion tokens = ceil(characters of the answer / 4).

Faults, per text and per request in order (`faults[text][n]` for its n-th request), or for every
request (`always`): `429:S` and `503:S` (with Retry-After: S), `500`, `401`, `malformed` (the answer
content is not JSON), `broken` (the response body is not JSON), `wrong_types` (a value is a string),
`missing` (a feature left out), `range` (a value of 1.5), `hang:S` (no answer; the connection is
closed after S seconds), `slow:S` (an answer S seconds late). `hold_after = n` lets n successful answers
through and holds every later one until `release` is set; a held request whose client is gone by then
is dropped unanswered (the kill test).

The log has one entry per request: text, kind, arrival and answer times (time.monotonic), the fault,
the HTTP status sent, the usage sent and the prompt's characters; `answers` counts successful answers
per (kind, text); `max_in_flight` is the most requests it held at once.
"""

from __future__ import annotations

import hashlib
import json
import math
import select
import socket
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PROMPT_OVERHEAD = 7
MODEL = "fake-model-2026-01"


def feature_value(text: str, feature: str) -> float:
    """The server's answer for one feature of one text, in [0, 1]."""
    digest = hashlib.sha256((text + feature).encode("utf-8")).digest()
    return int.from_bytes(digest[:2], "big") / 65535


def flags_of(text: str) -> tuple[bool, bool]:
    """The server's (unsupported, review) for a phrase."""
    digest = hashlib.sha256(("flags" + text).encode("utf-8")).digest()
    return digest[0] % 3 == 0, digest[1] % 2 == 0


class FakeLLM:
    """The server, run in a thread on 127.0.0.1 (an ephemeral port) until close()."""

    def __init__(self, delay: float = 0.0, key: str | None = None, model: str = MODEL) -> None:
        self.delay, self.key, self.model = delay, key, model
        self.faults: dict[str, list[str]] = {}
        self.always: str | None = None
        self.hold_after: int | None = None
        self.release = threading.Event()
        self.lock = threading.Lock()
        self.log: list[dict] = []
        self.answers: Counter = Counter()
        self.requests: Counter = Counter()
        self.in_flight = self.max_in_flight = self.held = self.granted = 0
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.server.daemon_threads = True
        self.server.fake = self
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    @property
    def answered(self) -> int:
        with self.lock:
            return sum(self.answers.values())

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> FakeLLM:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _client_gone(connection: socket.socket) -> bool:
    """Whether the client closed its end (the request was read in full, so readable means EOF)."""
    readable, _, _ = select.select([connection], [], [], 0)
    if not readable:
        return False
    try:
        return connection.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        fake: FakeLLM = self.server.fake
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        text = body["messages"][-1]["content"]
        spec = body["response_format"]["json_schema"]
        kind = spec["name"]
        properties = spec["schema"]["properties"]
        features = list(properties["weights"]["properties"] if "weights" in properties else properties)
        entry = {"text": text, "kind": kind, "arrived": time.monotonic(), "answered": None, "status": None,
                 "usage": None, "prompt_chars": sum(len(m["content"]) for m in body["messages"]),
                 "path": self.path, "model": body.get("model")}  # fmt: skip
        with fake.lock:
            nth = fake.requests[kind, text]
            fake.requests[kind, text] += 1
            scripted = fake.faults.get(text, [])
            fault = scripted[nth] if nth < len(scripted) else fake.always
            entry["fault"] = fault
            fake.log.append(entry)
            fake.in_flight += 1
            fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
        try:
            self._answer(fake, entry, text, kind, features, fault)
        finally:
            self._leave(fake, entry)

    def _leave(self, fake: FakeLLM, entry: dict) -> None:
        """The request is no longer held: counted once, before its answer's last bytes go out (the client
        may send its next request as soon as it has them, before this thread runs again)."""
        with fake.lock:
            if not entry.get("left"):
                entry["left"] = True
                fake.in_flight -= 1

    def _held(self, fake: FakeLLM) -> bool:
        """Whether this answer is dropped: held (after `hold_after` answers) until release, and its client
        gone by then. Answers are granted one by one, so that exactly `hold_after` get through."""
        with fake.lock:
            if fake.hold_after is None or fake.granted < fake.hold_after:
                fake.granted += 1
                return False
            fake.held += 1
        try:
            while not fake.release.wait(0.05):
                pass
        finally:
            with fake.lock:
                fake.held -= 1
        if _client_gone(self.connection):
            return True
        with fake.lock:
            fake.granted += 1
        return False

    def _send(self, entry: dict, status: int, payload: bytes, headers: dict | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self._leave(self.server.fake, entry)
        self.wfile.write(payload)
        self.wfile.flush()
        entry["answered"] = time.monotonic()
        entry["status"] = status

    def _answer(self, fake: FakeLLM, entry: dict, text: str, kind: str, features: list[str], fault: str | None) -> None:
        name, _, argument = (fault or "").partition(":")
        if fake.key is not None and self.headers.get("Authorization") != f"Bearer {fake.key}":
            name = "401"
        if name == "hang":
            time.sleep(float(argument))
            entry["status"] = "hang"
            self.close_connection = True
            return
        time.sleep(fake.delay + (float(argument) if name == "slow" else 0.0))
        if name in ("429", "503", "500", "401"):
            headers = {"Retry-After": argument} if argument else {}
            error = {"error": {"message": f"scripted {name}", "type": "test"}}
            self._send(entry, int(name), json.dumps(error).encode(), headers)
            return
        if name in ("", "slow") and self._held(fake):
            entry["status"] = "dropped"
            return
        values = {f: feature_value(text, f) for f in features}
        if name == "wrong_types":
            values[features[0]] = str(values[features[0]])
        elif name == "missing":
            values.pop(features[-1])
        elif name == "range":
            values[features[0]] = 1.5
        answer: object = values
        if kind == "requirement_interpretation":
            unsupported, review = flags_of(text)
            answer = {"weights": values, "unsupported": unsupported, "review": review, "note": "fake reading"}
        content = "{not json" if name == "malformed" else json.dumps(answer)
        prompt = math.ceil(entry["prompt_chars"] / 4) + PROMPT_OVERHEAD
        usage = {"prompt_tokens": prompt, "completion_tokens": math.ceil(len(content) / 4)}
        response = {"id": "fake", "object": "chat.completion", "model": fake.model, "usage": usage,
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                 "finish_reason": "stop"}]}  # fmt: skip
        payload = b"<html>not json" if name == "broken" else json.dumps(response).encode()
        entry["usage"] = None if name == "broken" else usage
        self._send(entry, 200, payload)
        if name in ("", "slow"):
            with fake.lock:
                fake.answers[kind, text] += 1
