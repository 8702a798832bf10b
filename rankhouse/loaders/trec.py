"""TREC runs (`qid Q0 docno rank score tag`) and qrels (`qid iter docno rel`).

Rules, each reported with the file, the line and the rule, and nothing loaded:
runs  - at least 6 fields (fields after the tag are ignored, as trec_eval does); a whole-number rank;
        a numeric, finite score; one line per (qid, docno); at least one line.
qrels - exactly 4 fields; a whole-number rel (negative allowed: trec_eval reads it as "pooled but not
        judged"); one line per (qid, docno); at least one line.
Blank lines and lines starting with `#` are skipped in both.

A file in a simple layout (see lines.simple_separator) is first loaded optimistically, straight from
DuckDB's CSV reader into its table, every rule enforced by NOT NULL columns or one check query; if
anything is off, the transaction is rolled back and the file goes through the general reader, which
finds and names the broken rule. Large files are nearly always simple, and this halves their load time.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import duckdb

from rankhouse.errors import InputError
from rankhouse.loaders.lines import count_lines, simple_separator, stage_fields
from rankhouse.loaders.sources import LoadResult, loaded_sha, read_file, record_source, sha256_bytes
from rankhouse.warehouse import Warehouse

STAGED = "rh_staged"
# A whole number within +-2^53 (exact in a DOUBLE), as ranks and grades must be.
WHOLE = "(TRY_CAST({0} AS DOUBLE) = floor(TRY_CAST({0} AS DOUBLE)) AND abs(TRY_CAST({0} AS DOUBLE)) < 9007199254740992)"


@dataclass(frozen=True)
class TrecFormat:
    """How one whitespace-separated format is read, checked and stored."""

    what: str
    fields: int
    csv_types: tuple[str, ...]  # the fast reader's column types
    select: str  # f1 .. fN and line_no into the table's columns; NULL where a value breaks a rule
    rule: str  # the rule a staged line breaks, or NULL
    detail: str  # what to show of a line that breaks a rule
    duplicate: str  # the rule for a repeated (qid, docno), i.e. (f1, f3)
    key: str  # the table's (qid, docno) columns, for the duplicate check after a fast load


RUN = TrecFormat(
    what="run",
    fields=6,
    csv_types=("VARCHAR", "VARCHAR", "VARCHAR", "DOUBLE", "DOUBLE", "VARCHAR"),
    select=f"""f1, f3, CASE WHEN {WHOLE.format("f4")} THEN CAST(CAST(f4 AS DOUBLE) AS BIGINT) END,
               CASE WHEN isfinite(TRY_CAST(f5 AS DOUBLE)) THEN TRY_CAST(f5 AS DOUBLE) END, f6, line_no""",
    rule=f"""CASE
        WHEN nfields < 6 THEN 'expected 6 fields: qid Q0 docno rank score tag'
        WHEN NOT coalesce({WHOLE.format("f4")}, false) THEN 'rank is not a whole number'
        WHEN TRY_CAST(f5 AS DOUBLE) IS NULL THEN 'score is not a number'
        WHEN NOT isfinite(TRY_CAST(f5 AS DOUBLE)) THEN 'score is NaN or infinite'
    END""",
    detail=f"""CASE
        WHEN nfields < 6 THEN 'found ' || CAST(nfields AS VARCHAR)
        WHEN NOT coalesce({WHOLE.format("f4")}, false) THEN 'rank ' || f4
        ELSE 'score ' || f5
    END""",
    duplicate="duplicate document for this query",
    key="qid, docno",
)

QRELS = TrecFormat(
    what="qrels",
    fields=4,
    csv_types=("VARCHAR", "VARCHAR", "VARCHAR", "DOUBLE"),
    select=f"f1, f2, f3, CASE WHEN {WHOLE.format('f4')} THEN CAST(CAST(f4 AS DOUBLE) AS BIGINT) END, line_no",
    rule=f"""CASE
        WHEN nfields <> 4 THEN 'expected 4 fields: qid iter docno rel'
        WHEN NOT coalesce({WHOLE.format("f4")}, false) THEN 'rel is not a whole number'
    END""",
    detail="CASE WHEN nfields <> 4 THEN 'found ' || CAST(nfields AS VARCHAR) ELSE 'rel ' || f4 END",
    duplicate="document judged twice for this query",
    key="qid, docno",
)

# How many hashes repeat, found by sorting them: cheaper than a hash aggregate over string pairs.
# A collision only sends the file to the exact, slower query.
REPEATED_HASHES = """
    SELECT count(*) FILTER (WHERE repeated) FROM (
        SELECT h = lag(h) OVER (ORDER BY h) AS repeated FROM (SELECT hash({key}) AS h FROM {rows})
    )
"""


class _NotSimple(Exception):
    """The optimistic load gave up; its transaction is rolled back and the general reader takes over."""


def _insert_simple(
    wh: Warehouse, path: str | Path, data: bytes, separator: str, fmt: TrecFormat, table: str, rows_sql: str,
    prefix: list,
) -> int:  # fmt: skip
    """Insert a simple-layout file straight into `table`; raise _NotSimple if anything is off.

    Missing or extra fields and unparsable numbers make the reader fail, a value that breaks a rule
    becomes NULL in a NOT NULL column, and skipped blank lines, comment lines and repeated (qid,
    docno) pairs are caught by the check query over `rows_sql` (the rows just inserted). Call it
    inside a transaction.
    """
    source = str(path).replace("'", "''")
    columns = "{" + ", ".join(f"'f{i}': '{t}'" for i, t in enumerate(fmt.csv_types, start=1)) + "}"
    placeholders = "?, " * len(prefix)
    try:
        wh.sql(
            f"""
            INSERT INTO {table}
            SELECT {placeholders}{fmt.select}
            FROM (
                SELECT *, row_number() OVER () AS line_no  -- file order, which DuckDB's reader keeps
                FROM read_csv('{source}', delim = '{separator}', quote = '', escape = '', header = false,
                              auto_detect = false, columns = {columns})
            )
            """,
            prefix,
        )
    except duckdb.Error as exc:
        raise _NotSimple from exc
    rows, comments = wh.sql(f"SELECT count(*), count(*) FILTER (WHERE starts_with(qid, '#')) FROM {rows_sql}")[0]
    if comments or rows != count_lines(data) or wh.sql(REPEATED_HASHES.format(key=fmt.key, rows=rows_sql))[0][0]:
        raise _NotSimple
    return rows


def _stage_and_check(wh: Warehouse, path: str | Path, data: bytes, fmt: TrecFormat) -> None:
    """Stage every line with the general reader; raise an InputError for the first broken rule."""
    if stage_fields(wh, path, data, fmt.fields, STAGED) == 0:
        raise InputError(path, 1, f"no {fmt.what} lines in the file", "empty, or only blank and # lines")
    broken = wh.sql(f"SELECT count(*) FILTER (WHERE ({fmt.rule}) IS NOT NULL) FROM {STAGED}")[0][0]
    repeated = wh.sql(REPEATED_HASHES.format(key="f1, f3", rows=f"{STAGED} WHERE f3 IS NOT NULL"))[0][0]
    if not broken and not repeated:
        return
    rows = wh.sql(
        f"""
        WITH repeated_keys AS (
            SELECT f1, f3 FROM {STAGED} WHERE f3 IS NOT NULL GROUP BY f1, f3 HAVING count(*) > 1
        ),
        repeats AS (
            SELECT line_no, f1, f3, min(line_no) OVER (PARTITION BY f1, f3) AS first_line
            FROM {STAGED}
            WHERE (f1, f3) IN (SELECT * FROM repeated_keys)
        ),
        violations AS (
            SELECT line_no, {fmt.rule} AS rule, {fmt.detail} AS detail FROM {STAGED} WHERE ({fmt.rule}) IS NOT NULL
            UNION ALL
            SELECT line_no, '{fmt.duplicate}',
                   'qid ' || f1 || ', docno ' || f3 || ', first at line ' || CAST(first_line AS VARCHAR)
            FROM repeats
            WHERE line_no > first_line
        )
        SELECT line_no, rule, detail, count(*) OVER () AS total
        FROM violations
        ORDER BY line_no, rule
        LIMIT 1
        """
    )
    line, rule, detail, total = rows[0]
    if total > 1:
        detail += f"; {total - 1} more bad line{'s' if total > 2 else ''} in this file"
    raise InputError(path, line, rule, detail)


def _load(
    wh: Warehouse, path: str | Path, data: bytes, fmt: TrecFormat, table: str, rows_sql: str, prefix: list,
    replace: list[str], finish: callable,
) -> int:  # fmt: skip
    """One transaction: run `replace` statements, insert the file's rows, then `finish(rows)`.

    The fast reader is tried first on a simple file; otherwise (or if it gives up) the general one.
    """
    separator = simple_separator(data)
    if separator is not None:
        try:
            with wh.transaction():
                for statement in replace:
                    wh.sql(statement, prefix)
                rows = _insert_simple(wh, path, data, separator, fmt, table, rows_sql, prefix)
                finish(rows)
            return rows
        except _NotSimple:
            pass
    try:
        _stage_and_check(wh, path, data, fmt)
        with wh.transaction():
            for statement in replace:
                wh.sql(statement, prefix)
            wh.sql(f"INSERT INTO {table} SELECT {'?, ' * len(prefix)}{fmt.select} FROM {STAGED}", prefix)
            rows = wh.sql(f"SELECT count(*) FROM {rows_sql}")[0][0]
            finish(rows)
        return rows
    finally:
        wh.sql(f"DROP TABLE IF EXISTS {STAGED}")


def load_run(wh: Warehouse, path: str | Path, run_id: str | None = None) -> LoadResult:
    """Load a TREC run into raw.runs under `run_id` (default: the file name).

    >>> load_run(wh, "tests/fixtures/trec_eval/results.test")  # doctest: +SKIP
    """
    data = read_file(path)
    run_id = run_id or Path(path).name
    previous = loaded_sha(wh, "meta.sources", "raw.runs", run_id)
    with ThreadPoolExecutor(1) as pool:  # hashing releases the GIL: overlap it with loading
        hashing = pool.submit(sha256_bytes, data)
        if previous is not None and previous == hashing.result():
            return LoadResult("raw.runs", run_id, str(path), previous, 0, "unchanged")
        rows_sql = f"raw.runs WHERE run_id = '{run_id.replace(chr(39), chr(39) * 2)}'"

        def finish(rows: int) -> None:
            record_source(wh, "meta.sources", "raw.runs", run_id, path, hashing.result(), rows, "trec.run")

        rows = _load(
            wh, path, data, RUN, "raw.runs", rows_sql, [run_id], ["DELETE FROM raw.runs WHERE run_id = ?"], finish
        )
        sha = hashing.result()
    return LoadResult("raw.runs", run_id, str(path), sha, rows, "replaced" if previous else "loaded")


def load_qrels(wh: Warehouse, path: str | Path, name: str | None = None) -> LoadResult:
    """Load TREC qrels into the labels file (table `qrels`), replacing any earlier qrels there.

    A labels file holds one set of qrels; loading the same bytes again is a no-op.
    """
    data = read_file(path)
    sha = sha256_bytes(data)
    name = name or Path(path).name
    with wh.labels():
        previous = wh.sql("SELECT name, sha256 FROM labels.meta.sources WHERE table_name = 'qrels'")
        if previous == [(name, sha)]:
            return LoadResult("qrels", name, str(path), sha, 0, "unchanged")

        def finish(rows: int) -> None:
            record_source(wh, "labels.meta.sources", "qrels", name, path, sha, rows, "trec.qrels")

        replace = ["DELETE FROM labels.qrels", "DELETE FROM labels.meta.sources WHERE table_name = 'qrels'"]
        rows = _load(wh, path, data, QRELS, "labels.qrels", "labels.qrels", [], replace, finish)
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
