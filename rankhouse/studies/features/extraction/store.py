"""The extraction store in the warehouse (sql/warehouse.sql): raw.feature_values and raw.extraction_calls
for messages, raw.requirement_values and raw.requirement_flags for E3's phrases.

Everything here runs on the main thread, which is the only one that touches the warehouse. A completed
row is one committed transaction (its values and its call), a failed attempt another (its call), so
that a stopped or killed run loses nothing it was told and a restart extracts only what is missing.

meta.sources has one row per (table, `<corpus>/<extractor>/<schema sha256>`) of the store, so that
models reading the store are rebuilt when it changes: a run marks them `writing ...` before its first
write and sets them to a digest of the rows when it ends (a killed run leaves the mark, which matches
no digest). The row also records the SHA-256 of the texts' sources (raw.documents, raw.queries,
raw.group_paraphrases of the corpus) the rows were extracted from: a store whose texts were loaded
again from other bytes is refused rather than resumed with rows of other texts.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import datetime

import pyarrow as pa

from rankhouse.errors import RankhouseError
from rankhouse.loaders.sources import loaded_sha, record_source
from rankhouse.warehouse import Warehouse

VALUES = "values"  # a job's kind: messages' feature values (feature_extraction)
REQUIREMENTS = "requirements"  # phrases' weights and flags (requirement_interpretation), also a split
SPLITS = {"train": ("raw.documents", "documents"), "test": ("raw.queries", "queries")}
REQUIREMENT_KEY_BASE = 1000  # the E3 query key of an item: 1000 + 10 * group_row + paraphrase
TABLES = {
    VALUES: ("raw.feature_values", "raw.extraction_calls"),
    REQUIREMENTS: ("raw.requirement_values", "raw.requirement_flags", "raw.extraction_calls"),
}
TEXT_SOURCES = {VALUES: ("raw.documents", "raw.queries"), REQUIREMENTS: ("raw.group_paraphrases",)}


@dataclass(frozen=True)
class Schema:
    """A loaded feature schema: its name, its file's SHA-256 and its features in file order."""

    name: str
    sha256: str
    features: tuple[str, ...]
    questions: tuple[str, ...]


@dataclass(frozen=True)
class Job:
    """What one generator extracts: for a corpus and a schema, by one extractor, values or requirements."""

    corpus: str
    schema: Schema
    extractor: str
    provider: str
    kind: str  # VALUES | REQUIREMENTS

    @property
    def key(self) -> str:
        """The name the store's rows of this job have in meta.sources."""
        return f"{self.corpus}/{self.extractor}/{self.schema.sha256}"

    def describe(self) -> str:
        what = "feature extraction" if self.kind == VALUES else "requirement interpretation"
        return f"{what} of {self.corpus} (schema {self.schema.name}, extractor {self.extractor})"


@dataclass(frozen=True)
class Task:
    """One row to extract: a message (split train or test, its row index) or an E3 phrase (its item)."""

    split: str
    row_index: int  # the message's row; for a phrase its E3 query key
    text: str
    item: str | None = None


@dataclass(frozen=True)
class Call:
    """One attempt, as raw.extraction_calls records it (row_index None: a batch over a split)."""

    split: str
    row_index: int | None
    attempt: int
    model_id: str | None
    started_at: datetime
    latency_seconds: float
    status: str
    prompt_tokens: int | None
    completion_tokens: int | None
    cost_usd: float
    possibly_charged: bool
    error: str | None


def thousandths(value: float) -> float:
    """A value in [0, 1] as stored: rounded to 3 decimals (the nearest double to a whole number of
    thousandths, so that round(value * 1000) is exact downstream).

    >>> thousandths(0.12345), thousandths(1.0), thousandths(0.0004)
    (0.123, 1.0, 0.0)
    """
    return round(value * 1000) / 1000


def load_schema(wh: Warehouse, name: str) -> Schema:
    """The schema loaded as `name` (loader features.schema), or an error saying how to load it."""
    rows = wh.sql(
        "SELECT schema_sha256, feature, question FROM raw.feature_schema WHERE schema = ? ORDER BY position", [name]
    )
    if not rows:
        known = [r[0] for r in wh.sql("SELECT DISTINCT schema FROM raw.feature_schema ORDER BY 1")]
        raise RankhouseError(
            f"no feature schema {name!r} is loaded (loaded: {', '.join(known) or 'none'}); name the schema file "
            f'as a protocol input with loader = "features.schema" and name = {name!r}'
        )
    return Schema(name, rows[0][0], tuple(r[1] for r in rows), tuple(r[2] for r in rows))


def message_tasks(wh: Warehouse, corpus: str, split: str) -> list[Task]:
    """Every message of a split of `corpus`, in row order."""
    table = SPLITS[split][0]
    rows = wh.sql(f"SELECT row_index, text FROM {table} WHERE corpus = ? ORDER BY row_index", [corpus])
    return [Task(split, int(row), text) for row, text in rows]


def requirement_tasks(wh: Warehouse, corpus: str) -> list[Task]:
    """Every phrase of raw.group_paraphrases of `corpus` (loader features.groups), in file order."""
    if not wh.table_exists("raw.group_paraphrases"):
        raise RankhouseError(
            "raw.group_paraphrases does not exist: load the groups file first (loader features.groups)"
        )
    rows = wh.sql(
        "SELECT group_row, paraphrase, item, text FROM raw.group_paraphrases WHERE corpus = ? "
        "ORDER BY group_row, paraphrase",
        [corpus],
    )
    return [Task(REQUIREMENTS, REQUIREMENT_KEY_BASE + 10 * int(g) + int(p), text, item) for g, p, item, text in rows]


def completed(wh: Warehouse, job: Job) -> set[tuple[str, int]]:
    """(split, row_index) of every row the store holds in full for the job (every feature of the schema)."""
    features = list(job.schema.features)
    if job.kind == VALUES:
        rows = wh.sql(
            "SELECT split, row_index FROM raw.feature_values WHERE corpus = ? AND schema_sha256 = ? AND extractor = ? "
            "AND list_contains(?, feature) GROUP BY split, row_index HAVING count(DISTINCT feature) = ?",
            [job.corpus, job.schema.sha256, job.extractor, features, len(features)],
        )
        return {(split, int(row)) for split, row in rows}
    rows = wh.sql(
        "SELECT f.item FROM raw.requirement_flags AS f WHERE f.corpus = ? AND f.schema_sha256 = ? AND f.extractor = ? "
        "AND (SELECT count(DISTINCT v.feature) FROM raw.requirement_values AS v WHERE v.corpus = f.corpus "
        "AND v.item = f.item AND v.schema_sha256 = f.schema_sha256 AND v.extractor = f.extractor "
        "AND list_contains(?, v.feature)) = ?",
        [job.corpus, job.schema.sha256, job.extractor, features, len(features)],
    )
    return {(REQUIREMENTS, item) for (item,) in rows}


def is_done(task: Task, done: set) -> bool:
    return (task.split, task.item if task.split == REQUIREMENTS else task.row_index) in done


def last_attempts(wh: Warehouse, job: Job) -> dict[tuple[str, int | None], int]:
    """The highest attempt number recorded per (split, row_index) of the job's extractor and schema."""
    rows = wh.sql(
        "SELECT split, row_index, max(attempt) FROM raw.extraction_calls WHERE corpus = ? AND schema_sha256 = ? "
        "AND extractor = ? GROUP BY split, row_index",
        [job.corpus, job.schema.sha256, job.extractor],
    )
    return {(split, row): int(attempt) for split, row, attempt in rows}


def spent(wh: Warehouse, job: Job) -> float:
    """The estimated cost (USD) of every call recorded for the job's corpus, schema and extractor, failed
    attempts included: what the cost ceiling counts, over every run, values and requirements alike."""
    rows = wh.sql(
        "SELECT coalesce(sum(cost_usd), 0) FROM raw.extraction_calls WHERE corpus = ? AND schema_sha256 = ? "
        "AND extractor = ?",
        [job.corpus, job.schema.sha256, job.extractor],
    )
    return float(rows[0][0])


def _call_row(job: Job, call: Call) -> list:
    return [job.corpus, call.split, call.row_index, job.schema.sha256, job.extractor, call.attempt, job.provider,
            call.model_id, call.started_at, call.latency_seconds, call.status, call.prompt_tokens,
            call.completion_tokens, call.cost_usd, call.possibly_charged, call.error]  # fmt: skip


IN_FLIGHT = "in_flight"  # an attempt started and not (yet) ended: a process killed meanwhile leaves it so


def _insert_call(wh: Warehouse, job: Job, call: Call) -> None:
    """The attempt's row, in place of its in-flight row if record_started wrote one."""
    wh.sql(
        "DELETE FROM raw.extraction_calls WHERE corpus = ? AND split = ? AND row_index IS NOT DISTINCT FROM ? "
        "AND schema_sha256 = ? AND extractor = ? AND attempt = ? AND status = ?",
        [job.corpus, call.split, call.row_index, job.schema.sha256, job.extractor, call.attempt, IN_FLIGHT],
    )
    wh.sql("INSERT INTO raw.extraction_calls VALUES (" + ", ".join("?" * 16) + ")", _call_row(job, call))


def record_started(wh: Warehouse, job: Job, call: Call) -> None:
    """An attempt about to be sent, in its own transaction, before it is: status in_flight, possibly
    charged at its estimated cost. The attempt's outcome replaces the row when it ends; if the process is
    killed first, the row stays, and the receipts count the attempt as possibly charged (seed 004:
    "record that unobserved failed attempts could still have been charged")."""
    with wh.transaction():
        wh.sql("INSERT INTO raw.extraction_calls VALUES (" + ", ".join("?" * 16) + ")", _call_row(job, call))


def record_failure(wh: Warehouse, job: Job, call: Call) -> None:
    """A failed attempt, in its own transaction."""
    with wh.transaction():
        _insert_call(wh, job, call)


def record_values(wh: Warehouse, job: Job, task: Task, values: list[float], call: Call) -> None:
    """A completed message: its feature values (rounded) and its call, in one transaction."""
    with wh.transaction():
        wh.sql(
            "INSERT INTO raw.feature_values SELECT ?, ?, ?, ?, ?, unnest(?::VARCHAR[]), unnest(?::DOUBLE[])",
            [job.corpus, task.split, task.row_index, job.schema.sha256, job.extractor, list(job.schema.features),
             [thousandths(v) for v in values]],
        )  # fmt: skip
        _insert_call(wh, job, call)


def record_requirement(wh: Warehouse, job: Job, task: Task, weights: list[float], unsupported: bool, review: bool,
                       note: str | None, call: Call) -> None:  # fmt: skip
    """A completed phrase: its weights (rounded), its flags (coverage: the largest weight) and its call."""
    weights = [thousandths(w) for w in weights]
    with wh.transaction():
        wh.sql(
            "INSERT INTO raw.requirement_values SELECT ?, ?, ?, ?, unnest(?::VARCHAR[]), unnest(?::DOUBLE[])",
            [job.corpus, task.item, job.schema.sha256, job.extractor, list(job.schema.features), weights],
        )
        wh.sql(
            "INSERT INTO raw.requirement_flags VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [job.corpus, task.item, job.schema.sha256, job.extractor, unsupported, review, max(weights), note],
        )
        _insert_call(wh, job, call)


def record_batch(wh: Warehouse, job: Job, rows: pa.Table, flags: pa.Table | None, call: Call) -> None:
    """Many completed rows of one batch call (the minilm stand-in): one transaction. `rows` has the
    columns of raw.feature_values (or raw.requirement_values) after the key's corpus, `flags` those of
    raw.requirement_flags."""
    targets = [(TABLES[job.kind][0], rows)] + ([(TABLES[job.kind][1], flags)] if flags is not None else [])
    with wh.transaction():
        for table, data in targets:
            with wh.registered("rh_batch", data):
                wh.sql(f"INSERT INTO {table} SELECT * FROM rh_batch")
        _insert_call(wh, job, call)


# -- meta.sources: the store's version, for model fingerprints ------------------------------------------
def _text_sources(wh: Warehouse, job: Job) -> dict[str, str | None]:
    return {table: loaded_sha(wh, "meta.sources", table, job.corpus) for table in TEXT_SOURCES[job.kind]}


def check_texts(wh: Warehouse, job: Job) -> None:
    """Refuse to resume a store whose rows were extracted from texts loaded from other bytes."""
    for table in TABLES[job.kind]:
        rows = wh.sql("SELECT path FROM meta.sources WHERE table_name = ? AND name = ?", [table, job.key])
        if not rows or not rows[0][0].startswith("generated: "):
            continue
        recorded = json.loads(rows[0][0][len("generated: ") :]).get("texts", {})
        now = _text_sources(wh, job)
        changed = [t for t, sha in recorded.items() if sha is not None and now.get(t) not in (None, sha)]
        if changed:
            raise RankhouseError(
                f"the store of the {job.describe()} was extracted from other texts: {', '.join(changed)} of corpus "
                f"{job.corpus!r} were loaded again from other bytes since. Its rows cannot be resumed; delete them "
                f"first: DELETE FROM {', '.join(TABLES[job.kind])} WHERE corpus = '{job.corpus}' AND extractor = "
                f"'{job.extractor}' (in `rankhouse shell`)"
            )


def _record(wh: Warehouse, job: Job, digests: dict[str, tuple[str, int]]) -> None:
    source = "generated: " + json.dumps(
        {"kind": job.kind, "extractor": job.extractor, "schema": job.schema.name, "schema_sha256": job.schema.sha256,
         "texts": _text_sources(wh, job)}, sort_keys=True)  # fmt: skip
    with wh.transaction():
        for table, (sha, rows) in digests.items():
            record_source(wh, "meta.sources", table, job.key, source, sha, rows, f"extraction.{job.provider}")


def needs_digest(wh: Warehouse, job: Job) -> bool:
    """Whether a store table of the job has no meta.sources row yet, or still the mark of a run that never ended."""
    for table in TABLES[job.kind]:
        rows = wh.sql("SELECT sha256 FROM meta.sources WHERE table_name = ? AND name = ?", [table, job.key])
        if not rows or rows[0][0].startswith("writing "):
            return True
    return False


def mark_writing(wh: Warehouse, job: Job) -> None:
    """Before a run's first write: the store's meta.sources rows say it is being written."""
    mark = f"writing {uuid.uuid4()}"
    _record(wh, job, {table: (mark, 0) for table in TABLES[job.kind]})


def _digest_sql(table: str) -> str:
    return (
        f"SELECT sha256(coalesce(string_agg(CAST(t AS VARCHAR), chr(10) ORDER BY CAST(t AS VARCHAR)), '')), "
        f"count(*) FROM {table} AS t WHERE corpus = ? AND schema_sha256 = ? AND extractor = ?"
    )


def record_digests(wh: Warehouse, job: Job) -> None:
    """After a run: the store's meta.sources rows get a SHA-256 over the job's rows of each table."""
    digests = {}
    for table in TABLES[job.kind]:
        sha, rows = wh.sql(_digest_sql(table), [job.corpus, job.schema.sha256, job.extractor])[0]
        digests[table] = (sha, int(rows))
    _record(wh, job, digests)


def missing_message(job: Job, tasks: list[Task], done: set, reason: str | None) -> str | None:
    """None if every task is in the store; else the error that says how many rows are missing and how to resume."""
    missing: dict[str, list[int]] = {}
    for task in tasks:
        counts = missing.setdefault(task.split, [0, 0])
        counts[1] += 1
        counts[0] += not is_done(task, done)
    total = sum(m for m, _ in missing.values())
    if not total:
        return None
    per_split = ", ".join(f"{split} {m:,} of {n:,}" for split, (m, n) in missing.items())
    stopped = f" It stopped: {reason}." if reason else ""
    return (
        f"the {job.describe()} is incomplete: {total:,} of {len(tasks):,} rows are missing ({per_split}).{stopped} "
        "The store is resumable: every completed row is kept and never extracted again. To resume, re-run the same "
        "command (rankhouse features extract PROTOCOL, or rankhouse study prepare PROTOCOL); an incomplete "
        "extraction cannot be frozen."
    )
