"""The lanes study (seed 002): its inputs, and the passage scoring step between its SQL models.

Inputs, each a loader (rankhouse/loaders/__init__.py), one transaction per file, errors naming the file,
the line and the rule:

lanes.narratives     topics: a TOML file of `[[group]]` (or `[[topic]]`) tables with `id`, `narrative` and
                     `[[group.subnarrative]]` tables with `name` and `text` (studies/banking77_groups.toml),
                     or JSON lines {"topic", "narrative", "subnarratives": [{"name", "text"}], "classes"?}.
                     Loaded under a corpus name into raw.lane_units: the untouched narrative is the unit
                     `narrative`, each subnarrative the unit `facet:<name>`. Each unit is also a query of the
                     corpus in raw.queries (qid `<topic>/<unit>`), so that the BM25 models can build lanes
                     from it; the corpus must have no queries from another loader.
lanes.topic_classes  labels: the classes a topic maps to (a TOML topic's `intents` or `classes`, a JSON
                     line's `classes`), into the labels file; a document of one of them (document_classes)
                     is relevant to the topic.
lanes.runs           lane runs: TREC lines `topic Q0 docno rank score lane`, the tag being the lane id
                     (`narrative` or `facet:<subnarrative>`), the score the lane's aggregate score A_u(d)
                     and the rank the document's source rank; into raw.lane_runs under a lane-set name.
lanes.passage_cache  a passage-score cache: lines `topic unit docno chunk score` (chunk 0-based, as
                     models/lanes/lane_chunks.sql numbers them), loaded under the name of the scorer that
                     made the scores; rescoring reads it first.

Rules. Narratives: UTF-8; at least one topic; a topic id and subnarrative names are non-empty and
without whitespace (they go into TREC files as qid and tag); no topic twice; no subnarrative name twice
within a topic; non-empty narrative and subnarrative texts. Topic classes: every topic has a non-empty
list of non-empty class names, none twice. Lane runs: at least 6 fields; a whole-number rank of at least
1; a finite score; a tag `narrative` or `facet:<name>`; one line per (topic, lane, docno); at least one
line. Passage cache: exactly 5 fields; unit `narrative` or `facet:<name>`; a whole-number chunk of at
least 0; a finite score; one line per (topic, unit, docno, chunk); at least one line. Blank lines and
lines starting with `#` are skipped in both whitespace-separated formats.

Passage scoring (`score_passages`, the study's `[generate] kind = "passage_scores"`): every chunk of every
admitted document (models.lane_chunks of models.lane_candidates) against every unit of its topic. The
cache is read first (rows of the scorer's name; a computed row also needs both texts' SHA-256 and the
scorer's fingerprint to match); misses go to the scorer, whose scores are written back to the cache.
The scorer is pluggable (`register_scorer`); the default, `minilm-cosine`, is the cosine of
all-MiniLM-L6-v2 vectors of the chunk and the unit text (vectors through raw.vector_cache, each distinct
text encoded once): a local stand-in for the seed's cross-encoder, not a reranker. The scores used go to
raw.passage_scores (what the models read), the receipts (requested, cache hits, misses, texts encoded,
model batches) to meta.passage_score_receipts and meta.passage_scorings.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import numpy as np
import pyarrow as pa

from rankhouse.errors import InputError, RankhouseError
from rankhouse.loaders.lines import WHOLE, check_utf8, stage_fields
from rankhouse.loaders.sources import LoadResult, loaded_sha, read_file, record_source, sha256_bytes
from rankhouse.warehouse import Warehouse

NARRATIVE = "narrative"
FACET = "facet:"
UNIT_PATTERN = r"narrative|facet:\S+"  # RE2 and Python alike
ANY_WHITESPACE = re.compile(r"\s")
STAGED = "rh_lanes_staged"

Progress = Callable[[int, int], None]


# -- narratives --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Topic:
    """One topic of a narratives file: its id, untouched narrative, subnarratives (name, text) and classes."""

    line: int
    topic: str
    narrative: str
    subnarratives: tuple[tuple[str, str], ...]
    classes: tuple[str, ...] | None


def _identifier(path: str | Path, line: int, value: object, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InputError(path, line, f"{what} is not a non-empty string", repr(value)[:60])
    if ANY_WHITESPACE.search(value):
        raise InputError(path, line, f"{what} contains whitespace", repr(value))
    return value


def _text(path: str | Path, line: int, value: object, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InputError(path, line, f"empty {what}", repr(value)[:60])
    return value


def _classes(path: str | Path, line: int, value: object) -> tuple[str, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not value:
        raise InputError(path, line, "classes must be a non-empty list of names", repr(value)[:60])
    classes = tuple(_identifier(path, line, c, "class") for c in value)
    if len(set(classes)) != len(classes):
        raise InputError(path, line, "a class is listed twice for this topic", repr(value)[:80])
    return classes


def _topic(path: str | Path, line: int, topic: object, narrative: object, subnarratives: object,
           classes: object) -> Topic:  # fmt: skip
    topic = _identifier(path, line, topic, "topic id")
    narrative = _text(path, line, narrative, "narrative")
    if not isinstance(subnarratives, list):
        raise InputError(path, line, "subnarratives must be a list of {name, text}", repr(subnarratives)[:60])
    pairs, seen = [], set()
    for entry in subnarratives:
        if not isinstance(entry, dict) or set(entry) - {"name", "text"} or not {"name", "text"} <= set(entry):
            raise InputError(path, line, "a subnarrative has exactly a name and a text", repr(entry)[:60])
        name = _identifier(path, line, entry["name"], "subnarrative name")
        if name in seen:
            raise InputError(path, line, "subnarrative name given twice in this topic", name)
        seen.add(name)
        pairs.append((name, _text(path, line, entry["text"], "subnarrative text")))
    return Topic(line, topic, narrative, tuple(pairs), _classes(path, line, classes))


def read_narratives(path: str | Path, data: bytes) -> list[Topic]:
    """The topics of a narratives file (TOML groups or JSON lines), checked."""
    check_utf8(path, data)
    text = data.decode("utf-8")
    if str(path).endswith(".jsonl"):
        topics = _jsonl_topics(path, text)
    else:
        topics = _toml_topics(path, text)
    if not topics:
        raise InputError(path, 1, "no topics in the file")
    first: dict[str, int] = {}
    for topic in topics:
        if topic.topic in first:
            raise InputError(
                path, topic.line, "topic id given twice", f"{topic.topic}, first at line {first[topic.topic]}"
            )
        first[topic.topic] = topic.line
    return topics


def _toml_topics(path: str | Path, text: str) -> list[Topic]:
    try:
        spec = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = re.search(r"line (\d+)", str(exc))
        raise InputError(path, int(line.group(1)) if line else 0, "not valid TOML", str(exc)) from None
    keys = [k for k in ("group", "topic") if k in spec]
    if len(keys) != 1 or not isinstance(spec[keys[0]], list):
        raise InputError(path, 1, "expected an array of [[group]] or of [[topic]] tables")
    key = keys[0]
    header = re.compile(rf"^\s*\[\[\s*{key}\s*\]\]")
    lines = [n for n, line in enumerate(text.split("\n"), start=1) if header.match(line)]
    topics = []
    for i, entry in enumerate(spec[key]):
        line = lines[i] if i < len(lines) else 0
        for needed in ("id", "narrative"):
            if needed not in entry:
                raise InputError(path, line, f"[[{key}]] lacks {needed}")
        classes = entry.get("intents", entry.get("classes"))
        topics.append(_topic(path, line, entry["id"], entry["narrative"], entry.get("subnarrative", []), classes))
    return topics


def _jsonl_topics(path: str | Path, text: str) -> list[Topic]:
    topics = []
    allowed = {"topic", "narrative", "subnarratives", "classes"}
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(path, number, "malformed JSON", exc.msg) from None
        if not isinstance(record, dict):
            raise InputError(path, number, "expected a JSON object")
        missing = sorted({"topic", "narrative", "subnarratives"} - set(record))
        if missing:
            raise InputError(path, number, f"missing {missing[0]}", "expected topic, narrative, subnarratives")
        extra = sorted(set(record) - allowed)
        if extra:
            raise InputError(path, number, f"unexpected key {extra[0]}")
        topics.append(
            _topic(path, number, record["topic"], record["narrative"], record["subnarratives"], record.get("classes"))
        )
    return topics


def unit_rows(corpus: str, topics: list[Topic]) -> list[tuple]:
    """raw.lane_units rows: (corpus, topic, topic_row, unit, unit_row, text, qid)."""
    rows = []
    for topic_row, topic in enumerate(topics):
        units = [(NARRATIVE, topic.narrative)] + [(FACET + name, text) for name, text in topic.subnarratives]
        for unit_row, (unit, text) in enumerate(units):
            rows.append((corpus, topic.topic, topic_row, unit, unit_row, text, f"{topic.topic}/{unit}"))
    return rows


def load_narratives(wh: Warehouse, path: str | Path, name: str | None = None) -> LoadResult:
    """Topics with their narrative and subnarratives into raw.lane_units, and each unit as a query of corpus
    `name` (default: the file name without extension).  Example: load_narratives(wh, "groups.toml", "b77")"""
    data = read_file(path)
    sha = sha256_bytes(data)
    corpus = name or Path(path).stem
    previous = loaded_sha(wh, "meta.sources", "raw.lane_units", corpus)
    if previous == sha:
        return LoadResult("raw.lane_units", corpus, str(path), sha, 0, "unchanged")
    other = wh.sql(
        "SELECT path, loader FROM meta.sources WHERE table_name = 'raw.queries' AND name = ? AND loader <> ?",
        [corpus, "lanes.narratives"],
    )
    if other:
        raise InputError(
            path, 0, f"corpus {corpus!r} already has queries from another file",
            f"{other[0][0]} ({other[0][1]}); load the narratives under a corpus of their own",
        )  # fmt: skip
    rows = unit_rows(corpus, read_narratives(path, data))
    columns = ["corpus", "topic", "topic_row", "unit", "unit_row", "text", "qid"]
    wh.con.register("rh_units", pa.table({c: [r[i] for r in rows] for i, c in enumerate(columns)}))
    try:
        with wh.transaction():
            wh.sql("DELETE FROM raw.lane_units WHERE corpus = ?", [corpus])
            wh.sql("DELETE FROM raw.queries WHERE corpus = ?", [corpus])
            wh.sql(f"INSERT INTO raw.lane_units SELECT {', '.join(columns)} FROM rh_units")
            wh.sql(
                "INSERT INTO raw.queries SELECT corpus, qid, row_number() OVER (ORDER BY topic_row, unit_row) - 1, "
                "text FROM rh_units"
            )
            record_source(wh, "meta.sources", "raw.lane_units", corpus, path, sha, len(rows), "lanes.narratives")
            record_source(wh, "meta.sources", "raw.queries", corpus, path, sha, len(rows), "lanes.narratives")
    finally:
        wh.con.unregister("rh_units")
    return LoadResult("raw.lane_units", corpus, str(path), sha, len(rows), "replaced" if previous else "loaded")


def load_topic_classes(wh: Warehouse, path: str | Path, name: str | None = None) -> LoadResult:
    """The classes of each topic of a narratives file, into the labels file (topic_classes) under corpus
    `name`.  Example: load_topic_classes(wh, "studies/banking77_groups.toml", "banking77_lanes")"""
    data = read_file(path)
    sha = sha256_bytes(data)
    corpus = name or Path(path).stem
    topics = read_narratives(path, data)
    for topic in topics:
        if topic.classes is None:
            raise InputError(path, topic.line, "topic has no classes (intents)", topic.topic)
    rows = [(corpus, t.topic, c) for t in topics for c in t.classes]
    with wh.labels():
        previous = loaded_sha(wh, "labels.meta.sources", "topic_classes", corpus)
        if previous == sha:
            return LoadResult("topic_classes", corpus, str(path), sha, 0, "unchanged")
        wh.con.register("rh_classes", pa.table({"corpus": [r[0] for r in rows], "topic": [r[1] for r in rows],
                                                "class": [r[2] for r in rows]}))  # fmt: skip
        try:
            with wh.transaction():
                wh.sql("DELETE FROM labels.topic_classes WHERE corpus = ?", [corpus])
                wh.sql("INSERT INTO labels.topic_classes SELECT corpus, topic, class FROM rh_classes")
                record_source(wh, "labels.meta.sources", "topic_classes", corpus, path, sha, len(rows),
                              "lanes.topic_classes")  # fmt: skip
        finally:
            wh.con.unregister("rh_classes")
    return LoadResult("topic_classes", corpus, str(path), sha, len(rows), "replaced" if previous else "loaded")


# -- whitespace-separated inputs: lane runs and the passage cache --------------------------------------
def _first_violation(wh: Warehouse, path: str | Path, rule: str, detail: str, key: str, duplicate: str) -> None:
    """Raise an InputError for the first staged line that breaks `rule` or repeats `key`, if any."""
    rows = wh.sql(
        f"""
        WITH violations AS (
            SELECT line_no, {rule} AS rule, {detail} AS detail FROM {STAGED} WHERE ({rule}) IS NOT NULL
            UNION ALL
            SELECT line_no, '{duplicate}', 'first at line ' || CAST(first_line AS VARCHAR)
            FROM (SELECT line_no, min(line_no) OVER (PARTITION BY {key}) AS first_line FROM {STAGED})
            WHERE line_no > first_line
        )
        SELECT line_no, rule, detail, count(*) OVER () AS total FROM violations ORDER BY line_no, rule LIMIT 1
        """
    )
    if rows:
        line, broken, shown, total = rows[0]
        if total > 1:
            shown += f"; {total - 1} more bad line{'s' if total > 2 else ''} in this file"
        raise InputError(path, line, broken, shown)


def _load_staged(wh: Warehouse, path: str | Path, name: str, table: str, fields: int, rule: str, detail: str,
                 key: str, duplicate: str, select: str, replace: str, loader: str,
                 what: str) -> LoadResult:  # fmt: skip
    """One transaction: `replace` (a DELETE of the name's earlier rows) and the file's rows, if every line is good."""
    data = read_file(path)
    sha = sha256_bytes(data)
    previous = loaded_sha(wh, "meta.sources", table, name)
    if previous == sha:
        return LoadResult(table, name, str(path), sha, 0, "unchanged")
    try:
        if stage_fields(wh, path, data, fields, STAGED) == 0:
            raise InputError(path, 1, f"no {what} lines in the file", "empty, or only blank and # lines")
        _first_violation(wh, path, rule, detail, key, duplicate)
        with wh.transaction():
            wh.sql(replace, [name])
            wh.sql(f"INSERT INTO {table} SELECT ?, {select} FROM {STAGED}", [name])
            rows = wh.sql(f"SELECT count(*) FROM {STAGED}")[0][0]
            record_source(wh, "meta.sources", table, name, path, sha, rows, loader)
    finally:
        wh.sql(f"DROP TABLE IF EXISTS {STAGED}")
    return LoadResult(table, name, str(path), sha, rows, "replaced" if previous else "loaded")


def _number_rules(rank: str, rank_name: str, minimum: int) -> str:
    return f"""
        WHEN NOT coalesce({WHOLE.format(rank)}, false) THEN '{rank_name} is not a whole number'
        WHEN CAST({rank} AS DOUBLE) < {minimum} THEN '{rank_name} must be at least {minimum}'"""


def load_lane_runs(wh: Warehouse, path: str | Path, name: str | None = None) -> LoadResult:
    """Lane runs (`topic Q0 docno rank score lane`) into raw.lane_runs under the lane set `name` (default:
    the file name).  Example: load_lane_runs(wh, "lanes.run", "lanes")"""
    rule = f"""CASE
        WHEN nfields < 6 THEN 'expected 6 fields: topic Q0 docno rank score lane'{_number_rules("f4", "rank", 1)}
        WHEN TRY_CAST(f5 AS DOUBLE) IS NULL THEN 'score is not a number'
        WHEN NOT isfinite(TRY_CAST(f5 AS DOUBLE)) THEN 'score is NaN or infinite'
        WHEN NOT regexp_full_match(f6, '{UNIT_PATTERN}') THEN 'lane (the tag) must be narrative or facet:<subnarrative>'
    END"""
    detail = """CASE WHEN nfields < 6 THEN 'found ' || CAST(nfields AS VARCHAR)
        ELSE 'rank ' || f4 || ', score ' || f5 || ', lane ' || f6 END"""
    select = "f1, f6, f3, CAST(CAST(f4 AS DOUBLE) AS BIGINT), CAST(f5 AS DOUBLE), line_no"
    return _load_staged(wh, path, name or Path(path).name, "raw.lane_runs", 6, rule, detail, "f1, f6, f3",
                        "duplicate document in this lane of this topic", select,
                        "DELETE FROM raw.lane_runs WHERE lane_set = ?", "lanes.runs", "lane run")  # fmt: skip


def load_passage_cache(wh: Warehouse, path: str | Path, name: str | None = None) -> LoadResult:
    """A passage-score cache (`topic unit docno chunk score`) under the scorer `name` that made the scores
    (default: the file name).  Example: load_passage_cache(wh, "scores.tsv", "mxbai-rerank-base-v2")"""
    rule = f"""CASE
        WHEN nfields <> 5 THEN 'expected 5 fields: topic unit docno chunk score'
        WHEN NOT regexp_full_match(f2, '{UNIT_PATTERN}') THEN 'unit must be narrative or facet:<subnarrative>'
        {_number_rules("f4", "chunk", 0)}
        WHEN TRY_CAST(f5 AS DOUBLE) IS NULL THEN 'score is not a number'
        WHEN NOT isfinite(TRY_CAST(f5 AS DOUBLE)) THEN 'score is NaN or infinite'
    END"""
    detail = """CASE WHEN nfields <> 5 THEN 'found ' || CAST(nfields AS VARCHAR)
        ELSE 'unit ' || f2 || ', chunk ' || f4 || ', score ' || f5 END"""
    select = "f1, f2, f3, CAST(CAST(f4 AS DOUBLE) AS INTEGER), CAST(f5 AS DOUBLE), NULL, NULL, NULL, line_no"
    return _load_staged(wh, path, name or Path(path).name, "raw.passage_score_cache", 5, rule, detail,
                        "f1, f2, f3, TRY_CAST(f4 AS DOUBLE)", "passage scored twice in this file", select,
                        # the file's earlier rows; scores the scorer wrote back stay (they carry their hashes)
                        "DELETE FROM raw.passage_score_cache WHERE scorer = ? AND line IS NOT NULL",
                        "lanes.passage_cache", "passage score")  # fmt: skip


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

    @property
    def fingerprint(self) -> str:
        raise NotImplementedError

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

    def score(self, wh: Warehouse, units: Sequence[str], chunks: Sequence[str],
              progress: Progress | None = None) -> Scored:  # fmt: skip
        vectors, encoded, batches = text_vectors(wh, self.encoder, [*units, *chunks], progress)
        left = np.stack([vectors[t] for t in units]).astype(np.float64)
        right = np.stack([vectors[t] for t in chunks]).astype(np.float64)
        return Scored((left * right).sum(axis=1), encoded, batches)


SCORERS: dict[str, Callable[[], PassageScorer]] = {MiniLMCosine.name: MiniLMCosine}


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
    fingerprint = implementation.fingerprint if implementation is not None else None
    registered = False
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
            scored = implementation.score(wh, [m[4] for m in misses], [m[5] for m in misses], progress)
            scores = np.asarray(scored.scores, dtype=np.float64)
            if scores.shape != (len(misses),) or not np.isfinite(scores).all():
                raise RankhouseError(f"scorer {name!r} must give one finite score per passage ({len(misses):,})")
        computed = pa.table({
            "topic": [m[0] for m in misses], "unit": [m[1] for m in misses], "doc_id": [m[2] for m in misses],
            "chunk": pa.array([m[3] for m in misses], pa.int32()), "score": pa.array(scored.scores, pa.float64()),
            "unit_sha256": [m[6] for m in misses], "chunk_sha256": [m[7] for m in misses],
        })  # fmt: skip
        wh.con.register("rh_computed", computed)
        registered = True
        scored_at = datetime.now()
        with wh.transaction():
            wh.sql(
                "INSERT INTO raw.passage_score_cache SELECT ?, topic, unit, doc_id, chunk, score, unit_sha256, "
                "chunk_sha256, ?, NULL FROM rh_computed",
                [name, fingerprint],
            )
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
                record_source(wh, "meta.sources", "raw.passage_scores", corpus, f"scorer {name} {fingerprint}",
                              sha, len(used), "lanes.passage_scores")  # fmt: skip
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
        if registered:
            wh.con.unregister("rh_computed")
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
