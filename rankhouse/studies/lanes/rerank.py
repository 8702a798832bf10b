"""Seed 002's own passage scorer: a cross-encoder behind an HTTP rerank endpoint (`http-rerank`).

The request is the shape that Cohere's, Jina's, Hugging Face TEI's and vLLM's `/rerank` share: one query
and a list of documents, relevance scores back by document index. A scorer with
`mixedbread-ai/mxbai-rerank-base-v2` behind such a server (e.g. `vllm serve mixedbread-ai/mxbai-rerank-base-v2
--task score`, or TEI) is the seed's cross-encoder; MiniLM cosine (`minilm-cosine`, passages.py)
stays the offline default, a stand-in. Configured from the environment (a runtime setting, never the
protocol; the key is never stored or printed):

    RANKHOUSE_RERANK_URL       the endpoint itself, e.g. http://127.0.0.1:8000/rerank, https://api.jina.ai/v1/rerank
    RANKHOUSE_RERANK_MODEL     the model asked for (sent as "model"), e.g. mixedbread-ai/mxbai-rerank-base-v2
    RANKHOUSE_RERANK_REVISION  the model's revision, part of the scorer's fingerprint (the seed's provenance)
    RANKHOUSE_RERANK_KEY       sent as `Authorization: Bearer <key>` when set
    RANKHOUSE_RERANK_DOCUMENTS the request's field for the list: "documents" (Cohere, Jina, vLLM; the
                               default) or "texts" (TEI)
    RANKHOUSE_RERANK_BATCH     documents per request (default 32)

and the limits of the extraction provider (rankhouse/studies/features/extraction/settings.py) under RANKHOUSE_RERANK_:
CONCURRENCY (8 requests in flight), RATE (15 starts per second), RETRIES (5), TIMEOUT (60 s), BACKOFF (0.5 s,
doubled per failure, at least a Retry-After the server asks for). A request that failed every attempt, 20
failed attempts in a row, or HTTP 401/403 stop the scoring with an error that says how many requests were
answered (every attempt is in the receipts; the answered scores are written to the cache, so a rerun asks
only for the rest).

Request: {"model": M, "query": unit text, "documents": [chunk texts], "top_n": n, "return_documents": false}.
Response: {"results": [{"index": i, "relevance_score": s}, ...]} (Cohere, Jina, vLLM) or a list
[{"index": i, "score": s}, ...] (TEI); every index exactly once, every score finite, or the attempt is
`invalid` (a body that is not JSON: `malformed`) and retried.

Receipts: every attempt is a row of raw.extraction_calls (provider `rerank`, split `rerank`, row_index the
request's number in the scoring, schema_sha256 the scorer's fingerprint, extractor `rerank:<model>`), with
its latency, status and error; a failed attempt is marked possibly charged. Cache first: score_passages
(passages.py) sends only the pairs the cache lacks, and writes every answered score to the cache
under the scorer's fingerprint, so a replay makes no request.
"""

from __future__ import annotations

import hashlib
import heapq
import json
import math
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np

from rankhouse.endpoint import CONSECUTIVE_FAILURES, IDLE, STOP_AT_ONCE, Settings, backoff, post_json
from rankhouse.errors import RankhouseError, ScoringStopped
from rankhouse.studies.lanes.passages import PassageScorer, Progress, Scored
from rankhouse.warehouse import Warehouse

PREFIX = "RANKHOUSE_RERANK_"
FIELDS = ("documents", "texts")


@dataclass(frozen=True)
class RerankEndpoint:
    """Where and how to call: the endpoint URL, the model and its revision, the key (never shown)."""

    url: str
    model: str
    revision: str = ""
    key: str | None = field(default=None, repr=False)
    documents_field: str = "documents"
    batch: int = 32

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> RerankEndpoint:
        environ = os.environ if environ is None else environ
        url, model = environ.get(PREFIX + "URL", "").strip(), environ.get(PREFIX + "MODEL", "").strip()
        if not url or not model:
            raise RankhouseError(
                "the http-rerank scorer needs RANKHOUSE_RERANK_URL (a /rerank endpoint, e.g. "
                "http://127.0.0.1:8000/rerank) and RANKHOUSE_RERANK_MODEL (e.g. mixedbread-ai/mxbai-rerank-base-v2)"
            )
        if not url.startswith(("http://", "https://")):
            raise RankhouseError(f"RANKHOUSE_RERANK_URL must start with http:// or https://, not {url[:40]!r}")
        documents_field = environ.get(PREFIX + "DOCUMENTS", "").strip() or "documents"
        if documents_field not in FIELDS:
            raise RankhouseError(f"RANKHOUSE_RERANK_DOCUMENTS is documents or texts, not {documents_field!r}")
        text = environ.get(PREFIX + "BATCH", "").strip() or "32"
        if not text.isdigit() or int(text) < 1:
            raise RankhouseError(f"RANKHOUSE_RERANK_BATCH={text!r} must be a whole number of at least 1")
        return cls(url, model, environ.get(PREFIX + "REVISION", "").strip(), environ.get(PREFIX + "KEY") or None,
                   documents_field, int(text))  # fmt: skip

    @property
    def fingerprint(self) -> str:
        """The scores' identity: the model, its revision and the request's field (not the URL or the key:
        the same model behind another server scores alike)."""
        card = json.dumps({"model": self.model, "revision": self.revision, "field": self.documents_field},
                          sort_keys=True)  # fmt: skip
        return hashlib.sha256(card.encode()).hexdigest()

    def body(self, query: str, documents: Sequence[str]) -> dict:
        return {"model": self.model, "query": query, self.documents_field: list(documents),
                "top_n": len(documents), "return_documents": False}  # fmt: skip


@dataclass(frozen=True)
class Attempt:
    """One request's outcome: its status ('ok' or why it failed), scores in document order when ok."""

    status: str
    started_at: datetime
    latency_seconds: float
    scores: tuple[float, ...] | None = None
    model_id: str | None = None
    error: str | None = None
    http_status: int | None = None
    retry_after: float | None = None


def parse_scores(data: object, count: int) -> tuple[float, ...]:
    """The scores of a rerank response in document order; ValueError if it is not one score per index."""
    results = data.get("results") if isinstance(data, dict) else data
    if not isinstance(results, list):
        raise ValueError("the response has no results list")
    scores: dict[int, float] = {}
    for item in results:
        if not isinstance(item, dict):
            raise ValueError("a result is not an object")
        index = item.get("index")
        score = item.get("relevance_score", item.get("score"))
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count or index in scores:
            raise ValueError(f"a result has a bad or repeated index {index!r}")
        if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
            raise ValueError(f"the result of document {index} has no finite score")
        scores[index] = float(score)
    if len(scores) != count:
        raise ValueError(f"{count - len(scores)} of the {count} documents have no score")
    return tuple(scores[i] for i in range(count))


def request(endpoint: RerankEndpoint, body: dict, timeout: float) -> Attempt:
    """One attempt: POST the request, read and check the scores. Never raises; every failure is an Attempt."""
    started_at = datetime.now(UTC).replace(tzinfo=None)
    start = time.monotonic()

    def attempt(status: str, **found) -> Attempt:
        return Attempt(status, started_at, time.monotonic() - start, **found)

    raw, failure = post_json(endpoint.url, body, endpoint.key, timeout)
    if raw is None:
        return attempt(**failure)
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return attempt("malformed", error=f"the response is not JSON: {raw[:80]!r}")
    model = data.get("model") if isinstance(data, dict) and isinstance(data.get("model"), str) else None
    try:
        scores = parse_scores(data, len(body[endpoint.documents_field]))
    except ValueError as exc:
        return attempt("invalid", error=str(exc)[:300], model_id=model)
    return attempt("ok", scores=scores, model_id=model)


@dataclass
class _Request:
    number: int
    query: str
    positions: list[int]  # the pairs' positions in the scorer's input
    documents: list[str]
    attempt: int = 1


class HttpRerank(PassageScorer):
    """The seed's cross-encoder through an HTTP rerank endpoint (see the module docstring)."""

    name = "http-rerank"
    description = "a cross-encoder behind an HTTP /rerank endpoint (Cohere, Jina, TEI, vLLM request shape)"

    def __init__(self, endpoint: RerankEndpoint | None = None, settings: Settings | None = None,
                 corpus: str = "rerank", clock: Callable[[], float] = time.monotonic) -> None:  # fmt: skip
        self._endpoint, self._settings, self.corpus, self.clock = endpoint, settings, corpus, clock
        self.requests_made = 0

    @property
    def endpoint(self) -> RerankEndpoint:
        if self._endpoint is None:
            self._endpoint = RerankEndpoint.from_env()
        return self._endpoint

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            self._settings = Settings.from_env(prefix=PREFIX)
        return self._settings

    @property
    def fingerprint(self) -> str:
        return self.endpoint.fingerprint

    @property
    def identity(self) -> dict:
        return {**super().identity, "model": self.endpoint.model, "revision": self.endpoint.revision or None,
                "endpoint": self.endpoint.url, "stand_in": False}  # fmt: skip

    def _requests(self, units: Sequence[str], chunks: Sequence[str]) -> list[_Request]:
        """The pairs grouped by query (first appearance order), in batches of the endpoint's size."""
        by_query: dict[str, list[int]] = {}
        for position, unit in enumerate(units):
            by_query.setdefault(unit, []).append(position)
        found = []
        for query, positions in by_query.items():
            for begin in range(0, len(positions), self.endpoint.batch):
                part = positions[begin : begin + self.endpoint.batch]
                found.append(_Request(len(found) + 1, query, part, [chunks[p] for p in part]))
        return found

    def _record(self, wh: Warehouse, req: _Request, attempt: Attempt) -> None:
        wh.sql(
            "INSERT INTO raw.extraction_calls VALUES (?, 'rerank', ?, ?, ?, ?, 'rerank', ?, ?, ?, ?, NULL, NULL, 0.0, "
            "?, ?)",
            [self.corpus, req.number, self.fingerprint, f"rerank:{self.endpoint.model}", req.attempt,
             attempt.model_id or (self.endpoint.model if attempt.status == "ok" else None), attempt.started_at,
             attempt.latency_seconds, attempt.status, attempt.status != "ok", attempt.error],
        )  # fmt: skip

    def score(self, wh: Warehouse, units: Sequence[str], chunks: Sequence[str],
              progress: Progress | None = None) -> Scored:  # fmt: skip
        """Every (unit, chunk) pair's score: requests of one query and up to `batch` chunks, at most
        `concurrency` in flight and `rate` starts per second, failed ones retried after a backoff."""
        settings, endpoint = self.settings, self.endpoint
        scores = np.full(len(units), np.nan)
        pending = self._requests(units, chunks)
        total = len(pending)
        fresh = list(reversed(pending))
        retries: list[tuple[float, int, _Request]] = []
        in_flight: dict[Future, _Request] = {}
        tried: dict[int, int] = {}
        consecutive, done_requests, next_start, sequence, stopped = 0, 0, self.clock(), 0, None
        with ThreadPoolExecutor(max_workers=settings.concurrency, thread_name_prefix="rankhouse-rerank") as pool:
            while True:
                now = self.clock()
                while stopped is None and len(in_flight) < settings.concurrency and now >= next_start:
                    if retries and retries[0][0] <= now:
                        req = heapq.heappop(retries)[2]
                    elif fresh:
                        req = fresh.pop()
                    else:
                        break
                    future = pool.submit(request, endpoint, endpoint.body(req.query, req.documents), settings.timeout)
                    in_flight[future] = req
                    self.requests_made += 1
                    next_start = now + 1 / settings.rate
                    now = self.clock()
                if not in_flight and (stopped is not None or not (fresh or retries)):
                    break
                horizon = [IDLE] + ([retries[0][0] - now] if retries else [])
                if fresh or retries:
                    horizon.append(next_start - now)
                finished, _ = wait(list(in_flight), timeout=max(0.0, min(horizon)), return_when=FIRST_COMPLETED)
                for future in sorted(finished, key=lambda f: in_flight[f].number):
                    req = in_flight.pop(future)
                    attempt = future.result()
                    with wh.transaction():
                        self._record(wh, req, attempt)
                    if attempt.status == "ok":
                        consecutive = 0
                        scores[req.positions] = attempt.scores
                        done_requests += 1
                        if progress is not None:
                            progress(done_requests, total)
                        continue
                    consecutive += 1
                    tried[req.number] = tried.get(req.number, 0) + 1
                    if attempt.http_status in STOP_AT_ONCE:
                        stopped = f"the endpoint refused the request ({attempt.error}); check RANKHOUSE_RERANK_KEY"
                    elif tried[req.number] > settings.retries:
                        stopped = (f"request {req.number} failed all its {tried[req.number]} attempts, the last with "
                                   f"{attempt.status}: {attempt.error}")  # fmt: skip
                    elif consecutive >= CONSECUTIVE_FAILURES:
                        stopped = (
                            f"{consecutive} attempts in a row failed, the last with {attempt.status}: {attempt.error}"
                        )
                    req.attempt += 1
                    if stopped is None:
                        sequence += 1
                        not_before = self.clock() + backoff(settings, tried[req.number], attempt.retry_after)
                        heapq.heappush(retries, (not_before, sequence, req))
        if stopped is not None:
            raise ScoringStopped(
                f"http-rerank stopped: {stopped} ({done_requests:,} of {total:,} requests answered and kept in the "
                "passage score cache, so a rerun asks only for the rest; every attempt is in raw.extraction_calls)",
                scores,
            )
        return Scored(scores, len(units), done_requests)
