"""Running the http provider over many rows: bounded concurrency, a start rate, retries, a cost ceiling.

The main thread owns the warehouse and decides everything; worker threads (at most `concurrency`)
only do one HTTP attempt each and hand back its Outcome. The main thread

- starts an attempt only while fewer than `concurrency` are in flight, at least 1 / `rate` seconds
  after the previous start, and only if the estimated cost so far (every call recorded for the
  extractor, failed attempts included), plus the estimates of the attempts in flight, plus this
  attempt's estimate stays within the ceiling: a call that could exceed it is not started. An
  attempt's estimate is the larger of its prompt's estimate (characters / 4 tokens) with a full
  answer's (http.completion_estimate) at the prices, and the cost of the dearest call answered so far;
- records every attempt as it ends (a completed row with its values in one transaction, a failed
  attempt on its own), so that the store is checkpointed after every successful call;
- retries a failed attempt after an exponential backoff (`backoff` x 2^(k-1) seconds after the k-th
  failure of the row, at most BACKOFF_CAP), and no earlier than a Retry-After the response asked for;
- stops cleanly on a persistent error: a row that failed all its 1 + `retries` attempts, a run of
  CONSECUTIVE_FAILURES failed attempts with no success between them, or HTTP 401/403 (the key is
  refused: at once). Stopping starts nothing new and waits for the attempts in flight, whose answers
  are recorded too; what is missing is left for a restart.

Cost: prompt_tokens x input price + completion_tokens x output price, from the response's usage. A
failed attempt is recorded as possibly charged, at its prompt's estimate (characters / 4 tokens) at
the input price (its usage, when the response gave one). Every attempt is recorded before it is sent,
as `in_flight` and possibly charged at its estimate (store.record_started), and its outcome replaces that
row when it ends: an attempt that was in flight when the process was killed stays in the receipts as a
possibly charged `in_flight` call.
"""

from __future__ import annotations

import heapq
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import UTC, datetime

from rankhouse.endpoint import CONSECUTIVE_FAILURES, IDLE, STOP_AT_ONCE, Settings, backoff
from rankhouse.progress import Meter
from rankhouse.studies.features.extraction import http
from rankhouse.studies.features.extraction.store import (
    IN_FLIGHT,
    Call,
    Job,
    Task,
    last_attempts,
    record_failure,
    record_requirement,
    record_started,
    record_values,
    spent,
)
from rankhouse.warehouse import Warehouse


@dataclass
class RunReport:
    """What a run did: rows completed, attempts made, estimated cost (this run), why it stopped (None: it did not)."""

    completed: int = 0
    attempts: int = 0
    cost: float = 0.0
    stopped: str | None = None


@dataclass
class _Pending:
    task: Task
    attempt: int  # the number the next attempt gets
    tried: int = 0  # attempts in this run


def run_http(wh: Warehouse, job: Job, tasks: list[Task], endpoint: http.Endpoint, settings: Settings,
             progress: Meter, clock: Callable[[], float] = time.monotonic) -> RunReport:  # fmt: skip
    """Extract `tasks` (rows not yet in the store) through `endpoint`; see the module docstring."""
    report = RunReport()
    previous = last_attempts(wh, job)
    fresh = deque(_Pending(t, previous.get((t.split, t.row_index), 0) + 1) for t in tasks)
    retries: list[tuple[float, int, _Pending]] = []  # (not before, sequence, row): a heap
    sequence = 0
    spent_before = spent(wh, job)
    completion = http.completion_estimate(job.schema, job.kind)
    in_flight: dict[Future, tuple[_Pending, float, dict]] = {}  # future -> (row, its estimated cost, its request)
    next_start = clock()
    consecutive = 0

    largest = 0.0  # the cost of the dearest answered call of this run

    def estimate(body: dict) -> float:
        return max(endpoint.cost(http.prompt_estimate(body), completion), largest)

    def ready(now: float) -> _Pending | None:
        if retries and retries[0][0] <= now:
            return heapq.heappop(retries)[2]
        return fresh.popleft() if fresh else None

    def stop(reason: str) -> None:
        if report.stopped is None:
            report.stopped = reason

    with ThreadPoolExecutor(max_workers=settings.concurrency, thread_name_prefix="rankhouse-http") as pool:
        try:
            while True:
                now = clock()
                while report.stopped is None and len(in_flight) < settings.concurrency and now >= next_start:
                    row = ready(now)
                    if row is None:
                        break
                    body = http.request_body(endpoint, job.schema, job.kind, row.task.text)
                    cost = estimate(body)
                    reserved = sum(c for _, c, _ in in_flight.values())
                    if spent_before + report.cost + reserved + cost > settings.max_cost:
                        fresh.appendleft(row)
                        stop(f"the cost ceiling of USD {settings.max_cost:g} would be exceeded by the next call "
                             f"(USD {spent_before + report.cost:.4f} estimated so far, over every run); raise it "
                             "with --max-cost or RANKHOUSE_EXTRACT_MAX_COST to continue")  # fmt: skip
                        break
                    record_started(wh, job, _started(row, cost, endpoint))
                    future = pool.submit(http.call, endpoint, body, job.schema, job.kind, settings.timeout)
                    in_flight[future] = (row, cost, body)
                    next_start = now + 1 / settings.rate
                    now = clock()
                if not in_flight and (report.stopped is not None or not (fresh or retries)):
                    break
                horizon = [IDLE]
                if retries:
                    horizon.append(retries[0][0] - now)
                if (fresh or retries) and len(in_flight) < settings.concurrency:
                    horizon.append(next_start - now)
                done, _ = wait(list(in_flight), timeout=max(0.0, min(horizon)), return_when=FIRST_COMPLETED)
                for future in sorted(done, key=lambda f: (in_flight[f][0].task.split, in_flight[f][0].task.row_index)):
                    row, _, body = in_flight.pop(future)
                    outcome = future.result()
                    row.tried += 1
                    report.attempts += 1
                    cost = _cost(endpoint, outcome, body)
                    report.cost += cost
                    call = _call(row, outcome, cost, endpoint)
                    if outcome.status == "ok":
                        consecutive = 0
                        largest = max(largest, cost)
                        _record_ok(wh, job, row.task, outcome.answer, call)
                        report.completed += 1
                        progress.advance(1, spent_before + report.cost)
                        continue
                    consecutive += 1
                    record_failure(wh, job, call)
                    progress.advance(0, spent_before + report.cost)
                    where = f"{row.task.split} row {row.task.row_index}" + (f" ({row.task.item})" if row.task.item
                                                                           else "")  # fmt: skip
                    if outcome.http_status in STOP_AT_ONCE:
                        stop(f"the endpoint refused the request ({outcome.error}); check RANKHOUSE_LLM_KEY")
                    elif row.tried > settings.retries:
                        stop(f"{where} failed all its {row.tried} attempts, the last with {outcome.status}: "
                             f"{outcome.error}")  # fmt: skip
                    elif consecutive >= CONSECUTIVE_FAILURES:
                        stop(f"{consecutive} attempts in a row failed, the last with {outcome.status}: {outcome.error}")
                    row.attempt += 1
                    if report.stopped is None:
                        sequence += 1
                        not_before = clock() + backoff(settings, row.tried, outcome.retry_after)
                        heapq.heappush(retries, (not_before, sequence, row))
        except KeyboardInterrupt:
            for future in in_flight:
                future.cancel()
            raise
    return report


def _cost(endpoint: http.Endpoint, outcome: http.Outcome, body: dict) -> float:
    """The attempt's estimated cost: its usage at the prices, else its prompt's estimate (and, for an
    answer without usage, the answer's length / 4 tokens at the output price)."""
    prompt = outcome.prompt_tokens if outcome.prompt_tokens is not None else http.prompt_estimate(body)
    if outcome.completion_tokens is not None:
        completion = outcome.completion_tokens
    else:
        completion = -(-outcome.answer_chars // http.CHARS_PER_TOKEN) if outcome.status == "ok" else 0
    return endpoint.cost(prompt, completion)


def _started(row: _Pending, estimate: float, endpoint: http.Endpoint) -> Call:
    """The attempt's in-flight record: possibly charged at its estimated cost until its outcome replaces it."""
    return Call(row.task.split, row.task.row_index, row.attempt, endpoint.model, datetime.now(UTC).replace(tzinfo=None),
                0.0, IN_FLIGHT, None, None, estimate, True,
                "in flight: the process ended before the attempt did (it may still have been charged)")  # fmt: skip


def _call(row: _Pending, outcome: http.Outcome, cost: float, endpoint: http.Endpoint) -> Call:
    """The attempt's record; its model id is the response's (for an answer without one, the model asked for)."""
    model = outcome.model_id or (endpoint.model if outcome.status == "ok" else None)
    return Call(row.task.split, row.task.row_index, row.attempt, model,
                outcome.started_at, outcome.latency_seconds, outcome.status, outcome.prompt_tokens,
                outcome.completion_tokens, cost, outcome.status != "ok", outcome.error)  # fmt: skip


def _record_ok(wh: Warehouse, job: Job, task: Task, answer: http.Answer, call: Call) -> None:
    if task.item is None:
        record_values(wh, job, task, list(answer.values), call)
    else:
        record_requirement(wh, job, task, list(answer.values), answer.unsupported, answer.review, answer.note, call)
