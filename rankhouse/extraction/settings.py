"""Runtime settings of an extraction: how fast and how far it may go, never what it computes.

They change no methodology (seed 004: "runtime cost/throughput settings can change without changing
scientific methodology"), so they are not protocol parameters and are in no fingerprint. Each comes
from an option of `rankhouse features extract`, else from its environment variable, else its default:

    concurrency  RANKHOUSE_EXTRACT_CONCURRENCY  8     requests in flight at most
    rate         RANKHOUSE_EXTRACT_RATE         15    request starts per second at most
    max_cost     RANKHOUSE_EXTRACT_MAX_COST     5     USD, estimated, over the whole store of the extractor
    retries      RANKHOUSE_EXTRACT_RETRIES      5     retries of a failed request (so 6 attempts per row)
    timeout      RANKHOUSE_EXTRACT_TIMEOUT      60    seconds per request
    backoff      RANKHOUSE_EXTRACT_BACKOFF      0.5   seconds before the first retry, doubled each time
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, fields, replace

from rankhouse.errors import RankhouseError

ENVIRONMENT = "RANKHOUSE_EXTRACT_"
BACKOFF_CAP = 60.0  # seconds: no retry waits longer, except as long as a Retry-After asks


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
