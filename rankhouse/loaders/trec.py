"""TREC runs (`qid Q0 docno rank score tag`) and qrels (`qid iter docno rel`).

Rules, each reported with the file, the line and the rule, and nothing loaded:
runs  - at least 6 fields (fields after the tag are ignored, as trec_eval does); a whole-number rank;
        a numeric, finite score; one line per (qid, docno); at least one line.
qrels - exactly 4 fields; a whole-number rel (negative allowed: trec_eval reads it as "pooled but not
        judged"); one line per (qid, docno); at least one line.
Blank lines and lines starting with `#` are skipped in both.

`run_checks` is the one definition of a run line's rules, in SQL over a staged line (lines.stage_fields):
this loader, the lanes study's lane-run loader and the stricter submission validator
(rankhouse/runfiles.py) all start from it.

Runs and qrels also keep the rules of every text reader (loaders/lines.py): a leading UTF-8 BOM is
stripped, a line with non-ASCII whitespace is refused, and so is a number with a `_` or a non-ASCII
character.

A file in a simple layout (one separator, a space or a tab, used singly; no blank, comment or CRLF
lines; lines.SimpleScan) is first loaded optimistically: Arrow's CSV reader parses it in blocks of
FAST_BLOCK bytes, each row numbered with its line, and the general reader's SQL inserts them, every rule
enforced by NOT NULL columns, the scan or one check query; if anything is off, even in the last block,
the transaction is rolled back and the file goes through the general reader, which finds and names the
broken rule. Numbers are read as doubles: Arrow refuses `1_000` and non-ASCII digits, and reads the
numbers it takes as DuckDB's casts do. Large files are nearly always simple, and this halves their load
time.

Memory: a plain file (not `-`, not gzip) is parsed as it is read: its bytes go through the scan, which
hashes them, into Arrow, a few blocks at a time, so a run of any size is never held whole in Python
(100M lines, 3.1 GB, load in DuckDB's memory alone). Standard input and gzip files are read whole
first (sources.read_input), then parsed the same way; the general reader always reads the file whole.
Both readers parse the bytes that were hashed: no path is handed to DuckDB, whose readers would expand
`*`, `?` and `[...]` in it as a glob.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from rankhouse.errors import InputError, RankhouseError
from rankhouse.loaders.lines import (
    FIRST_LINE,
    REPEATED_HASHES,
    Check,
    LineFormat,
    SimpleScan,
    ascii_blanks,
    field_count,
    finite_number,
    finite_value,
    stage_and_check,
    whole_number,
    whole_value,
    written_number,
)
from rankhouse.loaders.sources import (
    STDIN,
    Input,
    LoadResult,
    loaded_source,
    record_source,
    sha256_bytes,
    shown_path,
)
from rankhouse.warehouse import Warehouse

STAGED = "rh_staged"
FAST_FIELDS = "rh_simple"  # the fast reader's stream of Arrow batches, registered for the insert
FAST_BLOCK = 1 << 24  # bytes per block of the fast reader (Arrow's default, 1 MiB, parses slower)
RUN_FIELDS = "qid Q0 docno rank score tag"
# Where a repeated (qid, docno) is first.
FIRST_AT = "'qid ' || f1 || ', docno ' || f3 || ', ' || " + FIRST_LINE
# A staged run line's rank and score, NULL where they break a rule of run_checks.
RANK = whole_value("f4")
SCORE = finite_value("f5")


# The rules of a run line's rank (f4) and score (f5), in order: how the number is written, then its value.
RANK_CHECKS = (*written_number("f4", "rank"), whole_number("f4", "rank"))
SCORE_CHECKS = (*written_number("f5", "score"), *finite_number("f5", "score"))


def run_checks(fields: str = RUN_FIELDS) -> tuple[Check, ...]:
    """The rules of a TREC run line as trec_eval reads it: ASCII blanks between fields, at least 6 fields
    (named `fields` in the rule), a whole-number rank (f4), a numeric and finite score (f5)."""
    return (ascii_blanks(6), field_count(fields, "nfields < 6"), *RANK_CHECKS, *SCORE_CHECKS)


@dataclass(frozen=True)
class TrecFormat:
    """How one whitespace-separated format is read, checked and stored."""

    line: LineFormat  # the rules of a staged line
    fast_types: tuple[pa.DataType, ...]  # the fast reader's column types, one per field
    select: str  # f1 .. fN and line_no into the table's columns; NULL where a value breaks a rule
    key: str  # the table's (qid, docno) columns, for the duplicate check after a fast load


RUN = TrecFormat(
    line=LineFormat("run", 6, run_checks(), "f1, f3", "duplicate document for this query", FIRST_AT),
    fast_types=(pa.string(), pa.string(), pa.string(), pa.float64(), pa.float64(), pa.string()),
    select=f"f1, f3, {RANK}, {SCORE}, f6, line_no",
    key="qid, docno",
)

QRELS_CHECKS = (
    ascii_blanks(4),
    field_count("qid iter docno rel", "nfields <> 4"),
    *written_number("f4", "rel"),
    whole_number("f4", "rel"),
)
QRELS = TrecFormat(
    line=LineFormat("qrels", 4, QRELS_CHECKS, "f1, f3", "document judged twice for this query", FIRST_AT),
    fast_types=(pa.string(), pa.string(), pa.string(), pa.float64()),
    select=f"f1, f2, f3, {whole_value('f4')}, line_no",
    key="qid, docno",
)


class _NotSimple(Exception):
    """The optimistic load gave up; its transaction is rolled back and the general reader takes over."""


def _simple_fields(scan: SimpleScan, types: tuple[pa.DataType, ...]) -> pa.RecordBatchReader:
    """The fields f1 .. fN (of `types`) and line_no of a simple file, read from its scan in blocks by
    Arrow's CSV reader (no quotes, no escapes, no header, the scan's separator), so that no more than a
    few blocks are held at a time. Every line becomes a row (blank lines too): row i is line i. Reading it raises
    (pa.ArrowInvalid, or a duckdb.Error while DuckDB consumes it) if a line has another number of fields,
    a number does not parse or the bytes are not UTF-8."""
    names = [f"f{i}" for i in range(1, len(types) + 1)]
    try:
        reader = pacsv.open_csv(
            scan,
            read_options=pacsv.ReadOptions(column_names=names, block_size=FAST_BLOCK),
            parse_options=pacsv.ParseOptions(
                delimiter=scan.separator, quote_char=False, escape_char=False, ignore_empty_lines=False
            ),
            convert_options=pacsv.ConvertOptions(
                column_types=dict(zip(names, types)), null_values=[], strings_can_be_null=False
            ),
        )
    except pa.ArrowInvalid as exc:  # the first block is read on opening
        raise _NotSimple from exc
    schema = reader.schema.append(pa.field("line_no", pa.int64()))

    def numbered() -> Iterator[pa.RecordBatch]:
        first = 1
        for batch in reader:
            numbers = pa.Array.from_buffers(
                pa.int64(), batch.num_rows, [None, pa.py_buffer(np.arange(first, first + batch.num_rows))]
            )
            first += batch.num_rows
            yield pa.RecordBatch.from_arrays([*batch.columns, numbers], schema=schema)

    return pa.RecordBatchReader.from_batches(schema, numbered())


def _insert_simple(wh: Warehouse, scan: SimpleScan, fmt: TrecFormat, table: str, rows_sql: str, prefix: list) -> int:
    """Insert the fast reader's fields (registered as FAST_FIELDS) into `table`; raise _NotSimple if
    anything is off.

    Missing or extra fields and unparsable numbers made the reader fail already; a value that breaks a
    rule becomes NULL in a NOT NULL column; a blank or byte the scan found off the layout, skipped blank
    lines, comment lines and repeated (qid, docno) pairs are caught after the insert, by the scan and by
    the check query over `rows_sql` (the rows just inserted). Call it inside a transaction.
    """
    try:
        wh.sql(f"INSERT INTO {table} SELECT {'?, ' * len(prefix)}{fmt.select} FROM {FAST_FIELDS}", prefix)
    except duckdb.Error as exc:
        raise _NotSimple from exc
    if not scan.simple:
        raise _NotSimple
    rows, comments = wh.sql(f"SELECT count(*), count(*) FILTER (WHERE starts_with(qid, '#')) FROM {rows_sql}")[0]
    if comments or rows != scan.lines or wh.sql(REPEATED_HASHES.format(key=fmt.key, rows=rows_sql))[0][0]:
        raise _NotSimple
    return rows


def _stage_and_check(wh: Warehouse, path: str | Path, data: bytes, fmt: TrecFormat) -> None:
    """Stage every line with the general reader; raise an InputError for the first broken rule."""
    stage_and_check(wh, path, data, fmt.line, STAGED)


def _replace_rows(wh: Warehouse, replace: list[str], prefix: list, insert: Callable[[], int],
                  finish: Callable[[int], None]) -> int:  # fmt: skip
    """One transaction: the `replace` statements, then `insert()` (which returns the rows it inserted),
    then `finish(rows)`; the row count."""
    with wh.transaction():
        for statement in replace:
            wh.sql(statement, prefix)
        rows = insert()
        finish(rows)
    return rows


def _load(
    wh: Warehouse, source: Input, fmt: TrecFormat, table: str, rows_sql: str, prefix: list, replace: list[str],
    finish: Callable[[int, str], None],
) -> tuple[int, str]:  # fmt: skip
    """One transaction: run `replace` statements, insert the file's rows, then `finish(rows, sha256)`;
    (rows, the SHA-256 of the bytes as given).

    A plain file (sources.plain_file) is parsed by the fast reader as it is read, through a SimpleScan
    that hashes it on the way: a file of any size is never held whole. Standard input and gzip are read
    whole first, and the fast reader is tried on their bytes. If the file is not simple or the fast
    reader gives up, the file is read whole and goes through the general reader, which names the rule
    it breaks.
    """
    shown = shown_path(source.path)
    if source.plain:
        try:
            with open(source.path, "rb") as file:
                scan = SimpleScan(file, FAST_BLOCK, hashed=True)
                if scan.separator is not None:
                    return _load_simple(wh, scan, fmt, table, rows_sql, prefix, replace, finish, lambda: scan.sha256)
        except _NotSimple:
            pass
        except OSError as exc:
            raise InputError(shown, 0, "cannot read the file", exc.strerror or str(exc)) from None
    raw, data = source.read()
    with ThreadPoolExecutor(1) as pool:  # hashing releases the GIL: overlap it with loading
        hashing = pool.submit(sha256_bytes, raw)
        if not source.plain:
            scan = SimpleScan(io.BytesIO(data), FAST_BLOCK)
            if scan.separator is not None:
                try:
                    return _load_simple(wh, scan, fmt, table, rows_sql, prefix, replace, finish, hashing.result)
                except _NotSimple:
                    pass

        def insert_staged() -> int:
            wh.sql(f"INSERT INTO {table} SELECT {'?, ' * len(prefix)}{fmt.select} FROM {STAGED}", prefix)
            return wh.sql(f"SELECT count(*) FROM {rows_sql}")[0][0]

        try:
            _stage_and_check(wh, shown, data, fmt)
            rows = _replace_rows(wh, replace, prefix, insert_staged, lambda rows: finish(rows, hashing.result()))
        finally:
            wh.sql(f"DROP TABLE IF EXISTS {STAGED}")
        return rows, hashing.result()


def _load_simple(
    wh: Warehouse, scan: SimpleScan, fmt: TrecFormat, table: str, rows_sql: str, prefix: list, replace: list[str],
    finish: Callable[[int, str], None], sha: Callable[[], str],
) -> tuple[int, str]:  # fmt: skip
    """_load's fast reader over `scan`, in one transaction; raise _NotSimple (all rolled back) if it gives up."""
    wh.con.register(FAST_FIELDS, _simple_fields(scan, fmt.fast_types))
    try:
        rows = _replace_rows(
            wh, replace, prefix, lambda: _insert_simple(wh, scan, fmt, table, rows_sql, prefix),
            lambda rows: finish(rows, sha()),
        )  # fmt: skip
    finally:
        wh.con.unregister(FAST_FIELDS)
    return rows, sha()


# A run name in NAME=PATH: a letter, digit or _, then letters, digits and _ . + @ : - (no / or blank).
RUN_NAME = re.compile(r"\w[\w.+@:-]*")


@dataclass(frozen=True)
class RunInput:
    """A run to load: the name it loads under and its path (`-`: standard input)."""

    name: str
    path: str

    @classmethod
    def parse(cls, spec: str | Path | RunInput) -> RunInput:
        """A run argument: `NAME=PATH`, or a path named default_name(path).

        A string is NAME=PATH when the part before its first `=` is a run name (RUN_NAME: no `/`, no
        blank) and the whole string is not an existing file or directory; otherwise it is a path. So
        `bm25=runs/a.txt` names runs/a.txt bm25, the existing file `k1=0.9.run` is a path, and a path
        with an `=` that is not (yet) there is written `./k1=0.9.run` or named, `k1=k1=0.9.run`.
        A Path object is always a path.
        """
        if isinstance(spec, RunInput):
            return spec
        text = str(spec)
        if isinstance(spec, str) and "=" in text and not os.path.lexists(text):
            name, _, path = text.partition("=")
            if RUN_NAME.fullmatch(name):
                if not path:
                    raise RankhouseError(f"{text!r} names a run {name!r} but gives no path: write NAME=PATH")
                return cls(name, path)
        return cls(default_name(text), text)


def run_inputs(specs: Iterable[str | Path | RunInput]) -> list[RunInput]:
    """The runs of `specs` (RunInput.parse), refused before anything is read if more than one is `-`
    or two would load under one name (the message names their paths and suggests NAME=PATH)."""
    runs = [RunInput.parse(spec) for spec in specs]
    one_stdin([run.path for run in runs])
    by_name: dict[str, list[str]] = {}
    for run in runs:
        by_name.setdefault(run.name, []).append(run.path)
    for name, paths in by_name.items():
        if len(paths) > 1:
            raise RankhouseError(_same_name(name, paths))
    return runs


def one_stdin(paths: Iterable[str | Path]) -> None:
    """Refuse more than one `-` among the inputs of one command: standard input can be read once."""
    if sum(str(p) == STDIN for p in paths) > 1:
        raise RankhouseError("standard input can be read once: at most one input (qrels or run) may be '-'")


def _same_name(name: str, paths: list[str]) -> str:
    """Why runs at `paths` cannot all load as `name`, with NAME=PATH names to give them instead."""
    shown = [shown_path(p) for p in paths]
    if len(set(paths)) == 1:
        return f"{shown[0]} is given {len(paths)} times (each would be run {name!r}); give each a name (NAME=PATH)"
    dirs = [Path(p).parent.name for p in paths]
    if len(set(dirs)) < len(dirs) or not all(RUN_NAME.fullmatch(d) for d in dirs):
        dirs = [f"run{i}" for i in range(1, len(paths) + 1)]
    listed = ", ".join(shown[:-1]) + " and " + shown[-1]
    example = " ".join(f"{d}={p}" for d, p in zip(dirs, paths))
    return f"{len(paths)} runs would be named {name!r}: {listed}; name each with NAME=PATH, e.g. {example}"


def default_name(path: str | Path) -> str:
    """The name a run or qrels file loads under unless it is given one: the file name without `.gz`
    (`d1/run.txt.gz` -> `run.txt`), `stdin` for `-`."""
    if str(path) == STDIN:
        return "stdin"
    name = Path(path).name
    return name[:-3] if name.lower().endswith(".gz") and len(name) > 3 else name


def load_run(wh: Warehouse, path: str | Path, run_id: str | None = None) -> LoadResult:
    """Load a TREC run into raw.runs under `run_id` (default: default_name, the file name without .gz).

    `path` may be `-` (standard input) or gzip-compressed (sources.read_input); the SHA-256 recorded is
    of its bytes as given. Replacing a run of the same name loaded from other bytes says which it was.

    >>> load_run(wh, "tests/fixtures/trec_eval/results.test")  # doctest: +SKIP
    """
    source = Input(path)
    shown = shown_path(path)
    run_id = run_id or default_name(path)
    previous = loaded_source(wh, "meta.sources", "raw.runs", run_id)
    if previous is not None and previous[1] == source.sha256():
        return LoadResult("raw.runs", run_id, shown, previous[1], 0, "unchanged")
    rows_sql = f"raw.runs WHERE run_id = '{run_id.replace(chr(39), chr(39) * 2)}'"

    def finish(rows: int, sha: str) -> None:
        record_source(wh, "meta.sources", "raw.runs", run_id, shown, sha, rows, "trec.run")

    replace = ["DELETE FROM raw.runs WHERE run_id = ?"]
    rows, sha = _load(wh, source, RUN, "raw.runs", rows_sql, [run_id], replace, finish)
    if previous is None:
        return LoadResult("raw.runs", run_id, shown, sha, rows, "loaded")
    return LoadResult("raw.runs", run_id, shown, sha, rows, "replaced", *previous)


def load_qrels(wh: Warehouse, path: str | Path, name: str | None = None) -> LoadResult:
    """Load TREC qrels into the labels file (table `qrels`), replacing any earlier qrels there.

    A labels file holds one set of qrels; loading the same bytes again is a no-op. `path` may be `-` or
    gzip-compressed, as for load_run.
    """
    source = Input(path)
    shown = shown_path(path)
    name = name or default_name(path)
    with wh.labels():
        previous = wh.sql("SELECT name, path, sha256 FROM labels.meta.sources WHERE table_name = 'qrels'")
        if [n for n, _, _ in previous] == [name] and previous[0][2] == source.sha256():
            return LoadResult("qrels", name, shown, previous[0][2], 0, "unchanged")

        def finish(rows: int, sha: str) -> None:
            record_source(wh, "labels.meta.sources", "qrels", name, shown, sha, rows, "trec.qrels")

        replace = ["DELETE FROM labels.qrels", "DELETE FROM labels.meta.sources WHERE table_name = 'qrels'"]
        rows, sha = _load(wh, source, QRELS, "labels.qrels", "labels.qrels", [], replace, finish)
    if not previous:
        return LoadResult("qrels", name, shown, sha, rows, "loaded")
    return LoadResult("qrels", name, shown, sha, rows, "replaced", previous[0][1], previous[0][2])


def write_run(wh: Warehouse, run_id: str, path: str | Path) -> int:
    """Write a loaded run back out as a TREC file, lines in their original order; return the line count."""
    rows = wh.sql("SELECT qid, docno, rank, score, tag FROM raw.runs WHERE run_id = ? ORDER BY line", [run_id])
    if not rows:
        raise InputError(path, 0, f"no run named {run_id!r} in the warehouse")
    with open(path, "w", encoding="utf-8") as out:
        for qid, docno, rank, score, tag in rows:
            out.write(f"{qid} Q0 {docno} {rank} {score!r} {tag}\n")
    return len(rows)
