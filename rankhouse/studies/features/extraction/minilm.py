"""The `minilm` provider: an offline stand-in for the seed's extractor (JEV), never the extractor itself.

Seed 004 allows only its own extractor. This stand-in lets the study run end to end without one:
every figure made with it must be labelled as the stand-in's (its extractor id starts with 'minilm:').
It shows that the pipeline (store, features, rankings, measures) works on real messages; it says
nothing about how well JEV's answers to the property questions retain intent information.

The rule, label-free and fitted on the TRAINING messages only:

1. s(m, i) = the cosine between message m's all-MiniLM-L6-v2 vector and the vector of property i's
   question (both unit vectors: their inner product, in float64 from the float32 vectors). Messages'
   vectors are the ones the `vectors` generator stored (raw.document_vectors, raw.query_vectors,
   encoded here through the vector cache if missing); only the questions are encoded.
2. For each feature i, lo_i = the median and hi_i = the 99th percentile (linear interpolation between
   the two nearest ranks, numpy's default) of s(m, i) over every training message m of the corpus.
3. value(m, i) = clip((s(m, i) - lo_i) / (hi_i - lo_i), 0, 1), rounded to 3 decimals; if hi_i = lo_i,
   1 where s > lo_i and 0 elsewhere. Training and test messages alike, with the same lo_i and hi_i.

E3 phrases (requirement interpretation) are encoded and mapped by the same rule, with the same lo_i
and hi_i, into weights; then `unsupported` = no weight >= 0.5, `review` = exactly one weight >= 0.5 or
the two largest weights within 0.05 of each other, `coverage` = the largest weight.

Calls are recorded like the http provider's, so that receipts are uniform: one batch call per split
(row_index NULL), provider 'minilm', the encoder as model id, 0 tokens, cost 0.
"""

from __future__ import annotations

import math
import time
from datetime import UTC, datetime

import numpy as np
import pyarrow as pa

from rankhouse.studies.features.extraction.store import (
    REQUIREMENTS,
    Call,
    Job,
    Task,
    last_attempts,
    record_batch,
    thousandths,
)
from rankhouse.vectors import KINDS, cached_vectors, encode_corpus, vector_matrix
from rankhouse.warehouse import Warehouse

LOW_QUANTILE, HIGH_QUANTILE = 0.5, 0.99
STRONG = 0.5  # a weight at least this strong is a requirement the phrase asks for
CLOSE = 0.05  # two top weights this close make the interpretation uncertain


def extractor_id(encoder) -> str:  # noqa: ANN001 - rankhouse.encode.Encoder
    return f"minilm:{encoder.fingerprint[:12]}"


def linear_quantile(values: np.ndarray, q: float) -> np.ndarray:
    """The q-quantile of each column, interpolating linearly between the two nearest ranks (0-based rank
    h = (n - 1) q)."""
    ordered = np.sort(values, axis=0)
    h = (ordered.shape[0] - 1) * q
    below = math.floor(h)
    above = min(below + 1, ordered.shape[0] - 1)
    return ordered[below] + (h - below) * (ordered[above] - ordered[below])


def fit_rule(train_cosines: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) per feature from the training messages' cosines (rows: messages, columns: features)."""
    return linear_quantile(train_cosines, LOW_QUANTILE), linear_quantile(train_cosines, HIGH_QUANTILE)


def apply_rule(cosines: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Values in [0, 1] at 3 decimals (the module docstring's step 3)."""
    span = hi - lo
    flat = span <= 0
    scaled = (cosines - lo) / np.where(flat, 1.0, span)
    scaled = np.where(flat, (cosines > lo).astype(np.float64), scaled)
    return np.rint(np.clip(scaled, 0.0, 1.0) * 1000) / 1000


def flags(weights: np.ndarray) -> tuple[bool, bool, float]:
    """(unsupported, review, coverage) of one phrase's weights."""
    strong = int((weights >= STRONG).sum())
    top = np.sort(weights)[::-1]
    close = len(top) > 1 and top[0] - top[1] <= CLOSE + 1e-12
    return strong == 0, strong == 1 or bool(close), float(top[0])


def ensure_vectors(wh: Warehouse, corpus: str, encoder, say) -> None:  # noqa: ANN001
    """The corpus's message vectors by this encoder, encoded (through the cache) if missing or another's."""
    for kind, (source, _, target) in KINDS.items():
        texts = wh.sql(f"SELECT count(*) FROM {source} WHERE corpus = ?", [corpus])[0][0]
        made = wh.sql("SELECT fingerprint FROM raw.vector_models WHERE corpus = ? AND kind = ?", [corpus, kind])
        vectors = wh.sql(f"SELECT count(*) FROM {target} WHERE corpus = ?", [corpus])[0][0]
        if texts and (made != [(encoder.fingerprint,)] or vectors != texts):
            say(str(encode_corpus(wh, corpus, encoder, kind)))


def _matrix(wh: Warehouse, corpus: str, split: str) -> tuple[np.ndarray, np.ndarray]:
    """(row indexes, vectors as float64) of a split's messages, in row order."""
    source, key, target = KINDS["documents" if split == "train" else "queries"]
    table = wh.con.sql(
        f"SELECT s.row_index, v.vector FROM {source} AS s JOIN {target} AS v ON v.corpus = s.corpus AND v.{key} = "
        f"s.{key} WHERE s.corpus = ? ORDER BY s.row_index",
        params=[corpus],
    ).to_arrow_table()
    return table.column("row_index").to_numpy(), vector_matrix(table.column("vector")).astype(np.float64)


class StandIn:
    """The rule fitted on one corpus's training messages for one schema's questions."""

    def __init__(self, wh: Warehouse, corpus: str, questions: tuple[str, ...], encoder, say) -> None:  # noqa: ANN001
        ensure_vectors(wh, corpus, encoder, say)
        self.wh, self.corpus, self.encoder = wh, corpus, encoder
        self.questions = cached_vectors(wh, encoder, list(questions))[0].astype(np.float64)
        rows, train = _matrix(wh, corpus, "train")
        self.lo, self.hi = fit_rule(train @ self.questions.T)
        self.model_id = f"{encoder.model_name} {encoder.fingerprint[:12]}"

    def values(self, split: str) -> tuple[np.ndarray, np.ndarray]:
        """(row indexes, values: rows x features) of every message of a split."""
        rows, vectors = _matrix(self.wh, self.corpus, split)
        return rows, apply_rule(vectors @ self.questions.T, self.lo, self.hi)

    def weights(self, phrases: list[str]) -> np.ndarray:
        vectors = cached_vectors(self.wh, self.encoder, phrases)[0].astype(np.float64)
        return apply_rule(vectors @ self.questions.T, self.lo, self.hi)


def _batch_call(wh: Warehouse, job: Job, split: str, model_id: str, started_at: datetime, seconds: float) -> Call:
    attempt = last_attempts(wh, job).get((split, None), 0) + 1
    return Call(split, None, attempt, model_id, started_at, seconds, "ok", 0, 0, 0.0, False, None)


def extract_values(wh: Warehouse, job: Job, stand_in: StandIn, tasks: list[Task]) -> int:
    """Write the values of `tasks` (pending messages), one batch transaction per split; rows written."""
    written = 0
    features = list(job.schema.features)
    for split in ("train", "test"):
        wanted = {t.row_index for t in tasks if t.split == split}
        if not wanted:
            continue
        started_at, start = datetime.now(UTC).replace(tzinfo=None), time.perf_counter()
        rows, values = stand_in.values(split)
        keep = np.isin(rows, list(wanted))
        rows, values = rows[keep], values[keep]
        n, k = values.shape
        table = pa.table({
            "corpus": [job.corpus] * (n * k), "split": [split] * (n * k),
            "row_index": pa.array(np.repeat(rows, k), pa.int32()), "schema_sha256": [job.schema.sha256] * (n * k),
            "extractor": [job.extractor] * (n * k), "feature": features * n, "value": values.ravel(),
        })  # fmt: skip
        call = _batch_call(wh, job, split, stand_in.model_id, started_at, time.perf_counter() - start)
        record_batch(wh, job, table, None, call)
        written += n
    return written


def interpret(wh: Warehouse, job: Job, stand_in: StandIn, tasks: list[Task]) -> int:
    """Write the weights and flags of `tasks` (pending phrases) in one batch transaction; rows written."""
    if not tasks:
        return 0
    started_at, start = datetime.now(UTC).replace(tzinfo=None), time.perf_counter()
    weights = stand_in.weights([t.text for t in tasks])
    features = list(job.schema.features)
    n, k = weights.shape
    items = [t.item for t in tasks]
    values = pa.table({
        "corpus": [job.corpus] * (n * k), "item": [i for i in items for _ in range(k)],
        "schema_sha256": [job.schema.sha256] * (n * k), "extractor": [job.extractor] * (n * k),
        "feature": features * n, "weight": weights.ravel(),
    })  # fmt: skip
    read = [flags(row) for row in weights]
    notes = []
    for row in weights:
        top = np.argsort(-row, kind="stable")[:2]
        notes.append("minilm stand-in (question cosines): strongest " +
                     ", ".join(f"{features[i]} {thousandths(row[i]):.3f}" for i in top))  # fmt: skip
    flag_table = pa.table({
        "corpus": [job.corpus] * n, "item": items, "schema_sha256": [job.schema.sha256] * n,
        "extractor": [job.extractor] * n, "unsupported": [r[0] for r in read], "review": [r[1] for r in read],
        "coverage": [r[2] for r in read], "note": notes,
    })  # fmt: skip
    call = _batch_call(wh, job, REQUIREMENTS, stand_in.model_id, started_at, time.perf_counter() - start)
    record_batch(wh, job, values, flag_table, call)
    return n
