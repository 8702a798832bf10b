"""Calling a model endpoint over HTTP, as the named-features study's extraction and the lanes study's
rerank scorer do: the runtime settings (how fast and how far, never what is computed), one JSON POST that
never raises, and the retry policy.

The settings change no methodology (seed 004: "runtime cost/throughput settings can change without changing
scientific methodology"), so they are not protocol parameters and are in no fingerprint. Each comes from an
option of the command (`rankhouse features extract`), else from its environment variable (a prefix per
caller: RANKHOUSE_EXTRACT_, RANKHOUSE_RERANK_), else its default:

    concurrency  RANKHOUSE_EXTRACT_CONCURRENCY  8     requests in flight at most
    rate         RANKHOUSE_EXTRACT_RATE         15    request starts per second at most
    max_cost     RANKHOUSE_EXTRACT_MAX_COST     5     USD, estimated, over the whole store of the extractor
    retries      RANKHOUSE_EXTRACT_RETRIES      5     retries of a failed request (so 6 attempts per row)
    timeout      RANKHOUSE_EXTRACT_TIMEOUT      60    seconds per request
    backoff      RANKHOUSE_EXTRACT_BACKOFF      0.5   seconds before the first retry, doubled each time
"""

from __future__ import annotations

import http.client
import json
import math
import os
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, fields, replace

from rankhouse.errors import RankhouseError

ENVIRONMENT = "RANKHOUSE_EXTRACT_"
BACKOFF_CAP = 60.0  # seconds: no retry waits longer, except as long as a Retry-After asks
CONSECUTIVE_FAILURES = 20  # failed attempts in a row that stop a run
STOP_AT_ONCE = (401, 403)  # HTTP statuses that stop a run at once
IDLE = 0.25  # seconds a run's main thread waits at most before looking again
READ_BLOCK = 1 << 16


@dataclass(frozen=True)
class Settings:
    """How an extraction runs (see the module docstring)."""

    concurrency: int = 8
    rate: float = 15.0
    max_cost: float = 5.0
    retries: int = 5
    timeout: float = 60.0
    backoff: float = 0.5

    def __post_init__(self) -> None:
        for name, least, strict in (("concurrency", 1, False), ("rate", 0, True), ("max_cost", 0, False),
                                    ("retries", 0, False), ("timeout", 0, True), ("backoff", 0, False)):  # fmt: skip
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise RankhouseError(f"extraction setting {name} must be a finite number, not {value!r}")
            if value < least or (strict and value == least):
                bound = f"above {least}" if strict else f"at least {least}"
                raise RankhouseError(f"extraction setting {name} must be {bound}, not {value!r}")

    @classmethod
    def from_env(
        cls, environ: dict[str, str] | None = None, prefix: str = ENVIRONMENT, **given: float | int | None
    ) -> Settings:
        """The settings `given` (None: not given), else from <prefix><NAME> (RANKHOUSE_EXTRACT_<NAME>; the
        rerank scorer's RANKHOUSE_RERANK_<NAME>), else the defaults."""
        environ = os.environ if environ is None else environ
        chosen: dict[str, float | int] = {}
        for field in fields(cls):
            value = given.get(field.name)
            variable = prefix + field.name.upper()
            if value is None and environ.get(variable, "").strip():
                value = _number(variable, environ[variable], whole=field.type == "int")
            if value is not None:
                chosen[field.name] = value
        return replace(cls(), **chosen)

    def describe(self) -> str:
        return (f"concurrency {self.concurrency}, {self.rate:g} starts/s, cost ceiling USD {self.max_cost:g}, "
                f"{self.retries} retries, timeout {self.timeout:g} s")  # fmt: skip


def _number(variable: str, text: str, whole: bool) -> float | int:
    try:
        value = int(text) if whole else float(text)
    except ValueError:
        kind = "a whole number" if whole else "a number"
        raise RankhouseError(f"environment variable {variable}={text!r} is not {kind}") from None
    if not math.isfinite(value):
        raise RankhouseError(f"environment variable {variable}={text!r} is not a finite number")
    return value


def backoff(settings: Settings, failures: int, retry_after: float | None) -> float:
    """Seconds to wait before the next attempt of a row after its `failures`-th failure in this run."""
    wait_for = min(settings.backoff * 2 ** (failures - 1), BACKOFF_CAP)
    return max(wait_for, retry_after or 0.0)


def _retry_after(headers: object) -> float | None:
    """Retry-After in seconds, if the response gives it as a number (an HTTP date is ignored)."""
    text = headers.get("Retry-After") if headers is not None else None
    try:
        seconds = float(text)
    except (TypeError, ValueError):
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def _status_of(code: int) -> str:
    if code == 429:
        return "http_429"
    return "http_5xx" if code >= 500 else "http_4xx"


def _read(response: http.client.HTTPResponse, deadline: float) -> bytes:
    """The body, in blocks, so that a slowly dripping answer also ends at the deadline."""
    parts = []
    while block := response.read1(READ_BLOCK):
        parts.append(block)
        if time.monotonic() > deadline:
            raise TimeoutError("the answer took longer than the timeout")
    return b"".join(parts)


def post_json(url: str, body: dict, key: str | None, timeout: float) -> tuple[bytes | None, dict]:
    """POST `body` as JSON (with `Authorization: Bearer <key>` when there is a key) and read the answer
    within `timeout`: (the body's bytes, {}) or, for a failed attempt, (None, {status, error, http_status?,
    retry_after?}) with the statuses of raw.extraction_calls. Never raises. Shared by the features study's
    chat-completions calls and the lanes study's rerank scorer."""
    start = time.monotonic()
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return _read(response, start + timeout), {}
    except urllib.error.HTTPError as exc:
        detail = ""
        try:
            detail = exc.read(300).decode("utf-8", "replace")
        except (OSError, http.client.HTTPException):
            pass
        exc.close()
        message = f"HTTP {exc.code} {exc.reason}" + (f": {' '.join(detail.split())[:200]}" if detail else "")
        return None, {"status": _status_of(exc.code), "error": message, "http_status": exc.code,
                      "retry_after": _retry_after(exc.headers)}  # fmt: skip
    except TimeoutError as exc:
        return None, {"status": "timeout", "error": f"no answer within {timeout:g} s ({exc})"}
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, TimeoutError):
            return None, {"status": "timeout", "error": f"no answer within {timeout:g} s ({exc.reason})"}
        return None, {"status": "connection", "error": f"cannot connect: {exc.reason}"}
    except (OSError, http.client.HTTPException, ValueError) as exc:
        return None, {"status": "connection", "error": f"{type(exc).__name__}: {exc}"[:300]}
