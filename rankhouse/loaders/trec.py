"""TREC runs (`qid Q0 docno rank score tag`) and qrels (`qid iter docno rel`).

Rules, each reported with the file, the line and the rule, and nothing loaded:
runs  - at least 6 fields (fields after the tag are ignored, as trec_eval does); an integer rank;
        a numeric, finite score; one line per (qid, docno); at least one line.
qrels - exactly 4 fields; an integer rel (negative allowed: trec_eval reads it as "pooled but not
        judged"); one line per (qid, docno); at least one line.
Blank lines and lines starting with `#` are skipped in both.
"""

from __future__ import annotations

from pathlib import Path

from rankhouse.errors import InputError
from rankhouse.loaders.lines import stage_fields
from rankhouse.loaders.sources import LoadResult, loaded_sha, read_file, record_source, sha256_bytes
from rankhouse.warehouse import Warehouse

STAGED = "rh_staged"
INTEGER = "'^[+-]?[0-9]+$'"

RUN_RULES = f"""
    SELECT line_no,
           CASE
               WHEN len(fields) < 6 THEN 'expected 6 fields: qid Q0 docno rank score tag'
               WHEN NOT regexp_full_match(fields[4], {INTEGER}) THEN 'rank is not an integer'
               WHEN TRY_CAST(fields[5] AS DOUBLE) IS NULL THEN 'score is not a number'
               WHEN NOT isfinite(TRY_CAST(fields[5] AS DOUBLE)) THEN 'score is NaN or infinite'
           END AS rule,
           CASE
               WHEN len(fields) < 6 THEN 'found ' || CAST(len(fields) AS VARCHAR)
               WHEN NOT regexp_full_match(fields[4], {INTEGER}) THEN 'rank ' || fields[4]
               ELSE 'score ' || fields[5]
           END AS detail
    FROM {STAGED}
"""

QRELS_RULES = f"""
    SELECT line_no,
           CASE
               WHEN len(fields) <> 4 THEN 'expected 4 fields: qid iter docno rel'
               WHEN NOT regexp_full_match(fields[4], {INTEGER}) THEN 'rel is not an integer'
           END AS rule,
           CASE
               WHEN len(fields) <> 4 THEN 'found ' || CAST(len(fields) AS VARCHAR)
               ELSE 'rel ' || fields[4]
           END AS detail
    FROM {STAGED}
"""

# A second line for the same (qid, docno), reported at the later line with the first one named.
DUPLICATES = f"""
    SELECT line_no, '{{rule}}' AS rule,
           'qid ' || qid || ', docno ' || docno || ', first at line ' || CAST(first_line AS VARCHAR) AS detail
    FROM (
        SELECT line_no, fields[1] AS qid, fields[3] AS docno,
               min(line_no) OVER (PARTITION BY fields[1], fields[3]) AS first_line
        FROM {STAGED}
        WHERE len(fields) >= {{min_fields}}
    )
    WHERE line_no > first_line
"""


def _check(wh: Warehouse, path: str | Path, rules_sql: str, duplicates_sql: str) -> None:
    """Raise an InputError for the first line (by line number) that breaks a rule."""
    rows = wh.sql(
        f"""
        WITH violations AS (
            SELECT * FROM ({rules_sql}) WHERE rule IS NOT NULL
            UNION ALL
            {duplicates_sql}
        )
        SELECT line_no, rule, detail, count(*) OVER () AS total
        FROM violations
        ORDER BY line_no, rule
        LIMIT 1
        """
    )
    if rows:
        line, rule, detail, total = rows[0]
        if total > 1:
            detail += f"; {total - 1} more bad line{'s' if total > 2 else ''} in this file"
        raise InputError(path, line, rule, detail)


def _stage(wh: Warehouse, path: str | Path, data: bytes, what: str) -> None:
    if stage_fields(wh, path, data, STAGED) == 0:
        raise InputError(path, 1, f"no {what} lines in the file", "empty, or only blank and # lines")


def load_run(wh: Warehouse, path: str | Path, run_id: str | None = None) -> LoadResult:
    """Load a TREC run into raw.runs under `run_id` (default: the file name).

    >>> load_run(wh, "tests/fixtures/trec_eval/results.test")  # doctest: +SKIP
    """
    data = read_file(path)
    sha = sha256_bytes(data)
    run_id = run_id or Path(path).name
    previous = loaded_sha(wh, "meta.sources", "raw.runs", run_id)
    if previous == sha:
        return LoadResult("raw.runs", run_id, str(path), sha, 0, "unchanged")
    try:
        _stage(wh, path, data, "run")
        _check(wh, path, RUN_RULES, DUPLICATES.format(rule="duplicate document for this query", min_fields=6))
        with wh.transaction():
            wh.sql("DELETE FROM raw.runs WHERE run_id = ?", [run_id])
            wh.sql(
                f"""
                INSERT INTO raw.runs
                SELECT ?, fields[1], fields[3], CAST(fields[4] AS BIGINT), CAST(fields[5] AS DOUBLE),
                       fields[6], line_no
                FROM {STAGED}
                """,
                [run_id],
            )
            rows = wh.sql("SELECT count(*) FROM raw.runs WHERE run_id = ?", [run_id])[0][0]
            record_source(wh, "meta.sources", "raw.runs", run_id, path, sha, rows, "trec.run")
    finally:
        wh.sql(f"DROP TABLE IF EXISTS {STAGED}")
    return LoadResult("raw.runs", run_id, str(path), sha, rows, "replaced" if previous else "loaded")


def load_qrels(wh: Warehouse, path: str | Path, name: str | None = None) -> LoadResult:
    """Load TREC qrels into the labels file (table `qrels`), replacing any earlier qrels there.

    A labels file holds one set of qrels; loading the same bytes again is a no-op.
    """
    data = read_file(path)
    sha = sha256_bytes(data)
    name = name or Path(path).name
    try:
        _stage(wh, path, data, "qrels")
        _check(wh, path, QRELS_RULES, DUPLICATES.format(rule="document judged twice for this query", min_fields=4))
        with wh.labels():
            previous = wh.sql("SELECT name, sha256 FROM labels.meta.sources WHERE table_name = 'qrels'")
            if previous == [(name, sha)]:
                return LoadResult("qrels", name, str(path), sha, 0, "unchanged")
            with wh.transaction():
                wh.sql("DELETE FROM labels.qrels")
                wh.sql("DELETE FROM labels.meta.sources WHERE table_name = 'qrels'")
                wh.sql(
                    f"""
                    INSERT INTO labels.qrels
                    SELECT fields[1], fields[2], fields[3], CAST(fields[4] AS BIGINT), line_no
                    FROM {STAGED}
                    """
                )
                rows = wh.sql("SELECT count(*) FROM labels.qrels")[0][0]
                record_source(wh, "labels.meta.sources", "qrels", name, path, sha, rows, "trec.qrels")
    finally:
        wh.sql(f"DROP TABLE IF EXISTS {STAGED}")
    return LoadResult("qrels", name, str(path), sha, rows, "replaced" if previous else "loaded")


def write_run(wh: Warehouse, run_id: str, path: str | Path) -> int:
    """Write a loaded run back out as a TREC file, lines in their original order; return the line count."""
    rows = wh.sql("SELECT qid, docno, rank, score, tag FROM raw.runs WHERE run_id = ? ORDER BY line", [run_id])
    if not rows:
        raise InputError(path, 0, f"no run named {run_id!r} in the warehouse")
    with open(path, "w", encoding="utf-8") as out:
        for qid, docno, rank, score, tag in rows:
            out.write(f"{qid} Q0 {docno} {rank} {score!r} {tag}\n")
    return len(rows)
