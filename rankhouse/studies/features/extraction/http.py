"""The `http` provider: any OpenAI-compatible chat-completions endpoint with JSON-schema answers.

Configured from the environment (never from the protocol: it changes no methodology, and the key is
never stored or printed):

    RANKHOUSE_LLM_URL            the API base, e.g. https://api.example.com/v1 or http://127.0.0.1:8080/v1
                                 (llama.cpp's and vLLM's servers expose the same API); requests go to
                                 POST {url}/chat/completions
    RANKHOUSE_LLM_MODEL          the model asked for; the extractor id is 'http:<model>'
    RANKHOUSE_LLM_KEY            sent as `Authorization: Bearer <key>` when set
    RANKHOUSE_LLM_PRICE_INPUT    USD per million prompt tokens (default 0: the estimated cost is then 0)
    RANKHOUSE_LLM_PRICE_OUTPUT   USD per million completion tokens (default 0)

The prompt holds the fixed property questions (system message) and the message text alone (user
message): never an intent label, never another message. The answer is constrained by
response_format {"type": "json_schema"}: one number per feature, all required, in [0, 1] (for an E3
phrase: the same weights, plus booleans `unsupported` and `review` and a string `note`). An answer that
is not JSON is `malformed`; JSON of the wrong shape (a missing or extra key, a wrong type, a number out
of range) is `invalid`; both are failed attempts, retried like HTTP errors.

Everything here runs in worker threads and touches no warehouse: `call` returns an Outcome, which
the main thread records.
"""

from __future__ import annotations

import json
import math
import os
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime

from rankhouse.endpoint import post_json
from rankhouse.errors import RankhouseError
from rankhouse.studies.features.extraction.store import REQUIREMENTS, VALUES, Schema

PRICE_UNIT = 1_000_000  # prices are per million tokens
CHARS_PER_TOKEN = 4  # a failed attempt's prompt is estimated at its length / 4 tokens

VALUES_SYSTEM = (
    "You rate one customer message to a bank against fixed properties. For each property, answer a number "
    "from 0 to 1: how clearly the message has the property (0: not at all, 1: clearly). Judge the message "
    "text alone. Answer with the JSON object only.\n\nProperties:\n"
)
REQUIREMENTS_SYSTEM = (
    "You turn one search request for customer messages to a bank into weights over fixed properties. For "
    "each property, answer a number from 0 to 1: how much the request asks for messages that have it (0: "
    "not at all, 1: it is what the request is about). Set `unsupported` to true if the request asks for "
    "something these properties cannot express, `review` to true if the reading is uncertain, and say why "
    "in `note` (one short sentence). Answer with the JSON object only.\n\nProperties:\n"
)


@dataclass(frozen=True)
class Endpoint:
    """Where and how to call: the API base, the model, the key (never shown) and the prices."""

    url: str
    model: str
    key: str | None = field(default=None, repr=False)
    price_input: float = 0.0
    price_output: float = 0.0

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Endpoint:
        environ = os.environ if environ is None else environ
        url, model = environ.get("RANKHOUSE_LLM_URL", "").strip(), environ.get("RANKHOUSE_LLM_MODEL", "").strip()
        if not url or not model:
            raise RankhouseError(
                "the http provider needs RANKHOUSE_LLM_URL (an OpenAI-compatible API base, e.g. "
                "http://127.0.0.1:8080/v1) and RANKHOUSE_LLM_MODEL in the environment; RANKHOUSE_LLM_KEY if the "
                "endpoint wants one"
            )
        if not url.startswith(("http://", "https://")):
            raise RankhouseError(f"RANKHOUSE_LLM_URL must start with http:// or https://, not {url[:40]!r}")
        prices = []
        for name in ("INPUT", "OUTPUT"):
            variable = f"RANKHOUSE_LLM_PRICE_{name}"
            text = environ.get(variable, "").strip() or "0"
            try:
                price = float(text)
            except ValueError:
                raise RankhouseError(f"{variable}={text!r} is not a number (USD per million tokens)") from None
            if not math.isfinite(price) or price < 0:
                raise RankhouseError(f"{variable}={text!r} must be a price of at least 0 (USD per million tokens)")
            prices.append(price)
        key = environ.get("RANKHOUSE_LLM_KEY") or None
        return cls(url.rstrip("/"), model, key, prices[0], prices[1])

    @property
    def extractor(self) -> str:
        return f"http:{self.model}"

    def describe(self) -> str:
        if not (self.price_input or self.price_output):
            prices = ("prices not set (RANKHOUSE_LLM_PRICE_INPUT and _OUTPUT default to 0): every estimated "
                      "cost is 0 and the cost ceiling never stops the run")  # fmt: skip
        else:
            prices = f"USD {self.price_input:g} / {self.price_output:g} per million prompt / completion tokens"
        return f"{self.url}/chat/completions, model {self.model}, {'a key' if self.key else 'no key'}; {prices}"

    def cost(self, prompt_tokens: float, completion_tokens: float) -> float:
        return (prompt_tokens * self.price_input + completion_tokens * self.price_output) / PRICE_UNIT


def _properties(schema: Schema) -> str:
    return "\n".join(f"- {name}: {question}" for name, question in zip(schema.features, schema.questions, strict=True))


def _numbers(schema: Schema) -> dict:
    return {
        "type": "object",
        "properties": {name: {"type": "number", "minimum": 0, "maximum": 1} for name in schema.features},
        "required": list(schema.features),
        "additionalProperties": False,
    }


def answer_schema(schema: Schema, kind: str) -> dict:
    """The JSON schema of an answer: one number per feature (values), or weights plus flags (requirements)."""
    if kind == VALUES:
        return _numbers(schema)
    return {
        "type": "object",
        "properties": {"weights": _numbers(schema), "unsupported": {"type": "boolean"},
                       "review": {"type": "boolean"}, "note": {"type": "string"}},
        "required": ["weights", "unsupported", "review", "note"],
        "additionalProperties": False,
    }  # fmt: skip


def request_body(endpoint: Endpoint, schema: Schema, kind: str, text: str) -> dict:
    """The chat-completions request for one message (or phrase): the questions and the text, nothing else."""
    system = (VALUES_SYSTEM if kind == VALUES else REQUIREMENTS_SYSTEM) + _properties(schema)
    name = "feature_values" if kind == VALUES else "requirement_interpretation"
    return {
        "model": endpoint.model,
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": text}],
        "response_format": {"type": "json_schema",
                            "json_schema": {"name": name, "strict": True, "schema": answer_schema(schema, kind)}},
        "temperature": 0,
    }  # fmt: skip


def prompt_estimate(body: dict) -> int:
    """Estimated prompt tokens of a request: the characters of its messages / 4, rounded up."""
    return math.ceil(sum(len(m["content"]) for m in body["messages"]) / CHARS_PER_TOKEN)


def completion_estimate(schema: Schema, kind: str) -> int:
    """Estimated completion tokens of a full answer (its JSON at 3 decimals, plus a 200-character note)."""
    answer: dict = {name: 0.125 for name in schema.features}
    if kind == REQUIREMENTS:
        answer = {"weights": answer, "unsupported": False, "review": False, "note": "x" * 200}
    return math.ceil(len(json.dumps(answer)) / CHARS_PER_TOKEN)


@dataclass(frozen=True)
class Answer:
    """A valid answer: values (or weights) in schema order, and for a phrase its flags."""

    values: tuple[float, ...]
    unsupported: bool = False
    review: bool = False
    note: str | None = None


@dataclass(frozen=True)
class Outcome:
    """What one attempt gave: its status ('ok' or why it failed) and what the response said."""

    status: str
    started_at: datetime
    latency_seconds: float
    answer: Answer | None = None
    model_id: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    answer_chars: int = 0
    error: str | None = None
    http_status: int | None = None
    retry_after: float | None = None


class Rejected(Exception):
    """A response that is not an answer: status 'malformed' (not JSON) or 'invalid' (the wrong shape)."""

    def __init__(self, status: str, problem: str) -> None:
        super().__init__(problem)
        self.status = status


def _number_map(value: object, features: tuple[str, ...], what: str) -> tuple[float, ...]:
    if not isinstance(value, dict):
        raise Rejected("invalid", f"{what} is not a JSON object")
    missing = [f for f in features if f not in value]
    extra = sorted(set(value) - set(features))
    if missing or extra:
        raise Rejected("invalid", f"{what}: " + (f"missing {missing[0]}" if missing else f"unexpected key {extra[0]}"))
    numbers = []
    for name in features:
        number = value[name]
        if isinstance(number, bool) or not isinstance(number, int | float) or not math.isfinite(number):
            raise Rejected("invalid", f"{what}: {name} is not a number ({json.dumps(number)[:40]})")
        if not 0 <= number <= 1:
            raise Rejected("invalid", f"{what}: {name} = {number} is outside [0, 1]")
        numbers.append(float(number))
    return tuple(numbers)


def parse_answer(content: object, schema: Schema, kind: str) -> Answer:
    """The answer in a response's message content, checked against the answer schema (Rejected if not)."""
    if not isinstance(content, str):
        raise Rejected("malformed", "the message content is not text")
    try:
        data = json.loads(content)
    except json.JSONDecodeError as exc:
        raise Rejected("malformed", f"the answer is not JSON ({exc.msg} at character {exc.pos})") from None
    if kind == VALUES:
        return Answer(_number_map(data, schema.features, "the answer"))
    if not isinstance(data, dict):
        raise Rejected("invalid", "the answer is not a JSON object")
    extra = sorted(set(data) - {"weights", "unsupported", "review", "note"})
    if extra:
        raise Rejected("invalid", f"the answer has an unexpected key {extra[0]}")
    flags = []
    for name in ("unsupported", "review"):
        if not isinstance(data.get(name), bool):
            raise Rejected("invalid", f"the answer's {name} is not a boolean")
        flags.append(data[name])
    if not isinstance(data.get("note"), str):
        raise Rejected("invalid", "the answer's note is not a string")
    return Answer(_number_map(data.get("weights"), schema.features, "weights"), flags[0], flags[1], data["note"])


def call(endpoint: Endpoint, body: dict, schema: Schema, kind: str, timeout: float) -> Outcome:
    """One attempt: POST the request, read and check the answer. Never raises; every failure is an Outcome."""
    started_at = datetime.now(UTC).replace(tzinfo=None)
    start = time.monotonic()

    def outcome(status: str, **found) -> Outcome:
        return Outcome(status, started_at, time.monotonic() - start, **found)

    raw, failure = post_json(f"{endpoint.url}/chat/completions", body, endpoint.key, timeout)
    if raw is None:
        return outcome(**failure)
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return outcome("malformed", error=f"the response is not JSON: {raw[:80]!r}")
    if not isinstance(data, dict):
        return outcome("malformed", error="the response is not a JSON object")
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    tokens = [usage.get(k) if isinstance(usage.get(k), int) and not isinstance(usage.get(k), bool) else None
              for k in ("prompt_tokens", "completion_tokens")]  # fmt: skip
    model = data.get("model") if isinstance(data.get("model"), str) else None
    found = {"model_id": model, "prompt_tokens": tokens[0], "completion_tokens": tokens[1]}
    try:
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise Rejected("malformed", "the response has no choices")
        message = choices[0].get("message")
        content = message.get("content") if isinstance(message, dict) else None
        answer = parse_answer(content, schema, kind)
    except Rejected as exc:
        return outcome(exc.status, error=str(exc)[:300], **found)
    return outcome("ok", answer=answer, answer_chars=len(content), **found)
