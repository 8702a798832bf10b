"""The http-rerank passage scorer (rankhouse/studies/lanes/rerank.py, seed 002's cross-encoder behind a /rerank
endpoint) against a loopback server: the request shape, scores by document index, batching, limits, retries
with Retry-After, receipts of every attempt, refusal and persistent failure, TEI's variant, and cache-first
replay through score_passages (a second scoring makes no request)."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from conftest import FIXTURES

from rankhouse.endpoint import Settings
from rankhouse.errors import RankhouseError
from rankhouse.studies.lanes.rerank import HttpRerank, RerankEndpoint, parse_scores
from rankhouse.warehouse import Warehouse

FAST = Settings(concurrency=3, rate=1000.0, retries=3, timeout=5.0, backoff=0.01)


def relevance(query: str, document: str) -> float:
    """The server's score of a pair: shared words over the document's, plus a hash-made tie breaker."""
    q, d = set(query.lower().split()), document.lower().split()
    tie = int.from_bytes(hashlib.sha256((query + "|" + document).encode()).digest()[:2], "big") / 1e6
    return sum(w in q for w in d) / max(len(d), 1) + tie


class FakeReranker:
    """A loopback /rerank server: answers every request from its body; `faults[query]` scripts the n-th
    request of a query ('429:S', '500', '401', 'malformed', 'invalid'); `tei` answers TEI's list shape."""

    def __init__(self, tei: bool = False, key: str | None = None) -> None:
        self.tei, self.key = tei, key
        self.faults: dict[str, list[str]] = {}
        self.log: list[dict] = []
        self.in_flight = self.max_in_flight = 0
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                    seen = sum(entry["query"] == body["query"] for entry in server.log)
                    fault = (server.faults.get(body["query"]) or [])[seen] if seen < len(
                        server.faults.get(body["query"]) or []) else None  # fmt: skip
                    server.log.append({"query": body["query"], "body": body, "fault": fault,
                                       "auth": self.headers.get("Authorization")})  # fmt: skip
                time.sleep(0.01)
                try:
                    self._answer(body, fault)
                finally:
                    with server.lock:
                        server.in_flight -= 1

            def _answer(self, body: dict, fault: str | None) -> None:
                if fault and fault.split(":")[0] in ("429", "500", "401"):
                    code, _, after = fault.partition(":")
                    self.send_response(int(code))
                    if after:
                        self.send_header("Retry-After", after)
                    self.end_headers()
                    return
                documents = body["texts" if server.tei else "documents"]
                results = [{"index": i, ("score" if server.tei else "relevance_score"): relevance(body["query"], d)}
                           for i, d in enumerate(documents)]  # fmt: skip
                results.sort(key=lambda r: -r.get("score", r.get("relevance_score")))  # ranked, as servers answer
                if fault == "invalid":
                    results = results[1:]
                payload = results if server.tei else {"model": "mxbai-fake", "results": results}
                data = b"{not json" if fault == "malformed" else json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/rerank"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    found = FakeReranker()
    yield found
    found.close()


def scorer(url: str, batch: int = 2, settings: Settings = FAST, field: str = "documents", key: str | None = None):
    endpoint = RerankEndpoint(url, "mixedbread-ai/mxbai-rerank-base-v2", "3ea9d4d", key, field, batch)
    return HttpRerank(endpoint, settings, corpus="c")


UNITS = ["card not arrived"] * 5 + ["exchange rate euros"] * 3
CHUNKS = ["my card has not arrived", "the rate is bad", "card arrived broken", "not yet arrived", "hello",
          "what exchange rate for euros", "euros please", "my card"]  # fmt: skip


def receipts(wh: Warehouse) -> list[tuple]:
    return wh.sql("SELECT row_index, attempt, status, possibly_charged, provider, split, extractor FROM "
                  "raw.extraction_calls ORDER BY row_index, attempt")  # fmt: skip


def test_scores_are_the_servers_by_index_in_batches(server):
    with Warehouse(":memory:") as wh:
        s = scorer(server.url, batch=2)
        scored = s.score(wh, UNITS, CHUNKS)
        assert scored.scores.tolist() == pytest.approx([relevance(u, c) for u, c in zip(UNITS, CHUNKS)], abs=1e-15)
        assert len(server.log) == 5 == scored.model_batches  # 3 requests of the first query (2, 2, 1), 2 of the second
        first = next(entry["body"] for entry in server.log if entry["body"]["documents"][0] == CHUNKS[0])
        assert first == {"model": "mixedbread-ai/mxbai-rerank-base-v2", "query": "card not arrived",
                         "documents": CHUNKS[:2], "top_n": 2, "return_documents": False}  # fmt: skip
        assert [r[:4] for r in receipts(wh)] == [(n, 1, "ok", False) for n in range(1, 6)]
        assert {r[4:] for r in receipts(wh)} == {("rerank", "rerank", "rerank:mixedbread-ai/mxbai-rerank-base-v2")}
        assert server.max_in_flight <= FAST.concurrency


def test_failed_attempts_are_retried_recorded_and_possibly_charged(server):
    server.faults["card not arrived"] = ["429:0.05", "500", "malformed", "invalid"]
    with Warehouse(":memory:") as wh:
        start = time.monotonic()
        patient = Settings(concurrency=3, rate=1000.0, retries=4, timeout=5.0, backoff=0.01)
        scored = scorer(server.url, batch=8, settings=patient).score(wh, UNITS, CHUNKS)
        assert time.monotonic() - start >= 0.05  # the Retry-After was waited for
        assert scored.scores.tolist() == pytest.approx([relevance(u, c) for u, c in zip(UNITS, CHUNKS)], abs=1e-15)
        calls = receipts(wh)
        assert [(r[0], r[1], r[2], r[3]) for r in calls] == [
            (1, 1, "http_429", True), (1, 2, "http_5xx", True), (1, 3, "malformed", True), (1, 4, "invalid", True),
            (1, 5, "ok", False), (2, 1, "ok", False)]  # fmt: skip


def test_a_refused_key_stops_at_once_and_persistent_failures_after_the_retries(server):
    server.faults["card not arrived"] = ["401"]
    with Warehouse(":memory:") as wh, pytest.raises(RankhouseError, match="refused.*RANKHOUSE_RERANK_KEY"):
        scorer(server.url, batch=8).score(wh, UNITS, CHUNKS)
    server.faults["exchange rate euros"] = ["500"] * 10
    with Warehouse(":memory:") as wh:
        with pytest.raises(RankhouseError, match="failed all its 4 attempts"):
            scorer(server.url, batch=8).score(wh, UNITS[5:], CHUNKS[5:])
        assert [r[2] for r in receipts(wh)] == ["http_5xx"] * 4


def test_teis_shape_and_the_key():
    server = FakeReranker(tei=True)
    try:
        with Warehouse(":memory:") as wh:
            scored = scorer(server.url, batch=8, field="texts", key="sekret").score(wh, UNITS, CHUNKS)
            assert scored.scores.tolist() == pytest.approx([relevance(u, c) for u, c in zip(UNITS, CHUNKS)], abs=1e-15)
            assert "texts" in server.log[0]["body"] and server.log[0]["auth"] == "Bearer sekret"
    finally:
        server.close()


def test_parse_scores_wants_every_index_once():
    assert parse_scores({"results": [{"index": 1, "relevance_score": 0.5}, {"index": 0, "relevance_score": 2}]}, 2) == (
        2.0,
        0.5,
    )
    assert parse_scores([{"index": 0, "score": -1.5}], 1) == (-1.5,)
    for bad in ({"results": [{"index": 0, "relevance_score": 1}]}, {"results": [{"index": 0, "relevance_score": 1},
                {"index": 0, "relevance_score": 2}]}, {"results": [{"index": 0, "relevance_score": float("nan")},
                {"index": 1, "relevance_score": 1}]}, {"data": []}):  # fmt: skip
        with pytest.raises(ValueError):
            parse_scores(bad, 2)


def test_the_fingerprint_is_the_model_and_revision_and_the_environment_is_checked():
    a = RerankEndpoint("http://a/rerank", "m", "r1", "k1")
    assert a.fingerprint == RerankEndpoint("https://b/v1/rerank", "m", "r1", "k2").fingerprint
    assert a.fingerprint != RerankEndpoint("http://a/rerank", "m", "r2").fingerprint
    assert "k1" not in repr(a)
    with pytest.raises(RankhouseError, match="RANKHOUSE_RERANK_URL"):
        RerankEndpoint.from_env({})
    with pytest.raises(RankhouseError, match="documents or texts"):
        RerankEndpoint.from_env({"RANKHOUSE_RERANK_URL": "http://x/rerank", "RANKHOUSE_RERANK_MODEL": "m",
                                 "RANKHOUSE_RERANK_DOCUMENTS": "docs"})  # fmt: skip
    assert Settings.from_env({"RANKHOUSE_RERANK_CONCURRENCY": "2"}, prefix="RANKHOUSE_RERANK_").concurrency == 2


def lanes_candidates(wh: Warehouse) -> None:
    """The lanes fixture's candidates and chunks (+lane_chunks) in `wh`."""
    from rankhouse.loaders import load_documents
    from rankhouse.paths import STUDIES_DIR
    from rankhouse.studies.lanes.loaders import load_lane_runs, load_narratives
    from rankhouse.study import Protocol
    from rankhouse.warehouse.dag import Project
    from rankhouse.warehouse.runner import Runner

    folder = FIXTURES / "lanes"
    params = {**Protocol.load(STUDIES_DIR / "lanes_banking77.toml").parameters,
              "corpus": "tiny_lanes", "lane_source": "runs", "lane_set": "fixture", "lane_depth": 5}  # fmt: skip
    params = {k: v for k, v in params.items() if k not in ("rankings", "judgments", "measures")}
    load_documents(wh, folder / "documents.csv", "tiny_lanes")
    load_narratives(wh, folder / "narratives.toml", "tiny_lanes")
    load_lane_runs(wh, folder / "lanes.run", "fixture")
    project = Project.load(params=params)
    Runner(wh, project, params).run(project.select("+lane_chunks"))


def test_a_stopped_scoring_keeps_what_was_answered_so_a_rerun_asks_only_for_the_rest(server):
    from rankhouse.errors import ScoringStopped
    from rankhouse.studies.lanes.passages import score_passages

    with Warehouse(":memory:") as wh:
        lanes_candidates(wh)
        topics = wh.sql("SELECT DISTINCT u.text FROM raw.lane_units AS u ORDER BY 1")
        server.faults[topics[0][0]] = ["401"] * 50  # every request of one unit refused: the scoring stops
        with pytest.raises(ScoringStopped, match="kept in the passage score cache"):
            score_passages(wh, "tiny_lanes", scorer(server.url, batch=4, settings=replace(FAST, concurrency=1)))
        answered = [e for e in server.log if e["fault"] is None]
        cached = wh.sql("SELECT count(*) FROM raw.passage_score_cache")[0][0]
        assert cached == sum(len(e["body"]["documents"]) for e in answered) > 0  # each answered score, once
        server.faults.clear()
        before = len(server.log)
        done = score_passages(wh, "tiny_lanes", scorer(server.url, batch=4))
        assert done.cache_hits == cached and done.cache_misses == done.requested - cached > 0
        asked = server.log[before:]
        assert sum(len(e["body"]["documents"]) for e in asked) == done.cache_misses  # only the rest


def test_score_passages_is_cache_first_so_a_replay_makes_no_request(server):
    """The lanes fixture's candidates scored through the loopback reranker, then again from the cache."""
    from rankhouse.studies.lanes.passages import score_passages

    with Warehouse(":memory:") as wh:
        lanes_candidates(wh)
        first = score_passages(wh, "tiny_lanes", scorer(server.url, batch=4))
        requests = len(server.log)
        assert first.cache_misses == first.requested > 0 and requests > 0
        stored = wh.sql("SELECT topic, unit, doc_id, chunk, score FROM raw.passage_scores ORDER BY ALL")
        texts = dict(((t, u, d, c), (ut, ct)) for t, u, d, c, ut, ct in wh.sql(
            "SELECT c.topic, u.unit, ch.doc_id, ch.chunk, u.text, ch.text FROM models.lane_candidates AS c "
            "JOIN models.lane_chunks AS ch ON ch.doc_id = c.doc_id "
            "JOIN raw.lane_units AS u ON u.topic = c.topic"))  # fmt: skip
        for topic, unit, doc_id, chunk, score in stored:
            assert score == pytest.approx(relevance(*texts[(topic, unit, doc_id, chunk)]), abs=1e-15)
        replay = score_passages(wh, "tiny_lanes", scorer(server.url, batch=4))
        assert (replay.cache_hits, replay.cache_misses, len(server.log)) == (first.requested, 0, requests)
        assert wh.sql("SELECT topic, unit, doc_id, chunk, score FROM raw.passage_scores ORDER BY ALL") == stored
        assert wh.sql("SELECT DISTINCT corpus FROM raw.extraction_calls") == [("tiny_lanes",)]
