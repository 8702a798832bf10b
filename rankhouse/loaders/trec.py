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
lines; lines.SimpleScan) is first loaded optimistically: it is cut into chunks of whole lines
(FAST_BLOCK bytes), each parsed by Arrow's CSV reader on every core, each row numbered with its line,
and the general reader's SQL inserts them, every rule enforced by NOT NULL columns, the scan or one
check query; if anything is off, even in the last chunk, the transaction is rolled back and the file goes
through the general reader, which finds and names the broken rule. A thread reads, scans, hashes and
parses the next chunk while DuckDB inserts the last (_ahead). Numbers are read as doubles: Arrow refuses
`1_000` and non-ASCII digits, and reads the numbers it takes as DuckDB's casts do. Large files are
nearly always simple, and this halves their load time. On the way, the fast reader finds where each
query's lines are and whether they are in trec_eval's order (query_blocks.py, raw.run_blocks), so that
run_ranking need not sort them.

Memory: a load of any size stays within DuckDB's memory_limit and a fixed margin
(tests/test_bounded_loads.py, docs/performance.md). A plain file (not `-`, not gzip) is parsed as it is
read: its bytes are hashed as they are read (sources.Input), and go through the scan into Arrow two
chunks at a time. Standard input and gzip are read once into a private, decompressed copy (hashed as
they are read; deleted after the load), which is parsed the same way. The general reader reads its
file a block at a time too (lines.stage_fields), and a run's query blocks are arrays, not Python objects
(query_blocks.py).
Both readers parse the bytes that were hashed: no path is handed to DuckDB, whose readers would expand
`*`, `?` and `[...]` in it as a glob.
"""

from __future__ import annotations

import itertools
import os
import queue
import re
import threading
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, TypeVar

import duckdb
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
    line_numbers,
    stage_and_check,
    whole_lines,
    whole_number,
    whole_value,
    written_number,
)
from rankhouse.loaders.query_blocks import QueryBlocks
from rankhouse.loaders.sources import (
    STDIN,
    Input,
    LoadResult,
    loaded_source,
    record_source,
    shown_path,
    writes_inputs,
)
from rankhouse.warehouse import Warehouse

STAGED = "rh_staged"
FAST_FIELDS = "rh_simple"  # the fast reader's parsed chunk, an Arrow table registered for the insert
FAST_BLOCK = 1 << 24  # bytes per chunk of the fast reader: Arrow parses one on every core as DuckDB inserts the last;
# small enough that the pipeline fills and drains quickly (DuckDB waits for the first chunk, the reader for the last)
ARROW_BLOCK = 1 << 22  # bytes per block that one of Arrow's threads parses within a chunk
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
    unread: tuple[str, ...] = ()  # fields the fast reader counts but does not convert (not stored)
    blocks: bool = False  # whether a fast load finds the file's query blocks (query_blocks.py)


RUN = TrecFormat(
    line=LineFormat("run", 6, run_checks(), "f1, f3", "duplicate document for this query", FIRST_AT),
    fast_types=(pa.string(), pa.string(), pa.string(), pa.float64(), pa.float64(), pa.string()),
    select=f"f1, f3, {RANK}, {SCORE}, f6, line_no",
    key="qid, docno",
    unread=("f2",),
    blocks=True,
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


# A rel_level as trec_eval reads preferences (atof): a finite number, at least 0.
LEVEL = f"CASE WHEN {finite_value('f{0}')} >= 0 THEN {finite_value('f{0}')} END"
LEVEL_CHECKS = (
    *written_number("f{0}", "rel_level"),
    *finite_number("f{0}", "rel_level"),
    Check("rel_level is below 0", "TRY_CAST(f{0} AS DOUBLE) < 0", "'rel_level ' || f{0} || '; 0 is non-relevant'"),
)


def _level_checks(field: int) -> tuple[Check, ...]:
    """LEVEL_CHECKS of the field numbered `field`."""
    return tuple(Check(c.rule, c.broken.format(field), c.detail.format(field)) for c in LEVEL_CHECKS)


QRELS_JG = TrecFormat(
    line=LineFormat("qrels", 4, QRELS_CHECKS, "f1, f2, f3", "document judged twice in this judgment group", FIRST_AT),
    fast_types=(pa.string(), pa.string(), pa.string(), pa.float64()),
    select=f"f1, f2, f3, {whole_value('f4')}, line_no",
    key="qid, jg, docno",
)
PREFS = TrecFormat(
    line=LineFormat(
        "prefs", 5,
        (ascii_blanks(5), field_count("qid jg jsg docno rel_level", "nfields <> 5"), *_level_checks(5)),
        "f1, f2, f3, f4", "document given twice in this judgment sub-group",
        "'qid ' || f1 || ', judgment group ' || f2 || ', sub-group ' || f3 || ', docno ' || f4 || ', ' || "
        + FIRST_LINE,
    ),
    fast_types=(pa.string(), pa.string(), pa.string(), pa.string(), pa.float64()),
    select=f"f1, f2, f3, f4, {LEVEL.format(5)}, line_no",
    key="qid, jg, jsg, docno",
)  # fmt: skip
QRELS_PREFS = TrecFormat(
    line=LineFormat(
        "qrels_prefs", 4,
        (ascii_blanks(4), field_count("qid jg docno rel_level", "nfields <> 4"), *_level_checks(4)),
        "f1, f2, f3", "document judged twice in this judgment group",
        "'qid ' || f1 || ', judgment group ' || f2 || ', docno ' || f3 || ', ' || " + FIRST_LINE,
    ),
    fast_types=(pa.string(), pa.string(), pa.string(), pa.float64()),
    select=f"f1, f2, '0', f3, {LEVEL.format(4)}, line_no",
    key="qid, jg, jsg, docno",
)  # fmt: skip
ZSCORES = TrecFormat(
    line=LineFormat(
        "z-score", 4,
        (ascii_blanks(4), field_count("qid measure mean stddev", "nfields <> 4"),
         *written_number("f3", "mean"), *finite_number("f3", "mean"),
         *written_number("f4", "stddev"), *finite_number("f4", "stddev")),
        "f1, f2", "measure given twice for this query", "'qid ' || f1 || ', measure ' || f2 || ', ' || " + FIRST_LINE,
    ),
    fast_types=(pa.string(), pa.string(), pa.float64(), pa.float64()),
    select=f"f1, f2, NULL, {finite_value('f3')}, {finite_value('f4')}, line_no",
    key="qid, measure",
)  # fmt: skip


def _parse_chunk(chunk: memoryview, fmt: TrecFormat, separator: str, first_line: int) -> pa.Table:
    """The fields of a chunk of whole lines (f1 .. fN of fmt.fast_types, but fmt.unread) and line_no,
    the first line being `first_line`; parsed by Arrow's CSV reader on every core (no quotes, no
    escapes, no header, the scan's separator). Every line becomes a row (blank lines too): raises
    _NotSimple if a line has another number of fields, a number does not parse or the bytes are not UTF-8.
    """
    names = [f"f{i}" for i in range(1, len(fmt.fast_types) + 1)]
    try:
        table = pacsv.read_csv(
            pa.BufferReader(pa.py_buffer(chunk)),
            read_options=pacsv.ReadOptions(column_names=names, block_size=ARROW_BLOCK, use_threads=True),
            parse_options=pacsv.ParseOptions(
                delimiter=separator, quote_char=False, escape_char=False, ignore_empty_lines=False
            ),
            convert_options=pacsv.ConvertOptions(
                column_types=dict(zip(names, fmt.fast_types)),
                include_columns=[name for name in names if name not in fmt.unread],
                null_values=[],
                strings_can_be_null=False,
            ),
        )
    except pa.ArrowInvalid as exc:
        raise _NotSimple from exc
    return table.append_column("line_no", line_numbers(table.num_rows, first_line))


T = TypeVar("T")


def _ahead(items: Iterator[T]) -> Generator[T, None, None]:
    """`items`, each produced in a thread while the caller works on the one before (reading and parsing a
    chunk overlaps inserting the last); an exception raised producing an item is raised here. If the
    caller stops early, the thread stops after the item it is producing."""
    handoff: queue.Queue = queue.Queue(maxsize=1)
    stop = threading.Event()
    done = object()

    def produce() -> None:
        try:
            for item in items:
                while not stop.is_set():
                    try:
                        handoff.put((item, None), timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            handoff.put((done, None))
        except BaseException as exc:  # handed to the caller, raised there
            handoff.put((done, exc))
        finally:  # a stage before this one (another _ahead) stops too, now, not when collected
            close = getattr(items, "close", None)
            if close is not None:
                close()

    worker = threading.Thread(target=produce, name="rankhouse-fast-reader", daemon=True)
    worker.start()
    try:
        while True:
            item, error = handoff.get()
            if error is not None:
                raise error
            if item is done:
                return
            yield item
    finally:
        stop.set()
        while worker.is_alive():  # unblock a producer waiting to hand over its item
            try:
                handoff.get(timeout=0.1)
            except queue.Empty:
                pass
        worker.join()


def _simple_tables(scan: SimpleScan, fmt: TrecFormat, blocks: QueryBlocks | None) -> Generator[pa.Table, None, None]:
    """The parsed chunks of a simple file (_parse_chunk), read, scanned and parsed in a thread one chunk
    ahead of the caller; with `blocks`, each run chunk's query blocks are found on the way, in a second
    thread, a chunk behind the parsing and a chunk ahead of the caller (one thread doing both was the
    load's slowest stage: DuckDB waited for it; docs/performance.md)."""

    def parsed() -> Iterator[tuple[pa.Table, int]]:
        first_line = 1
        for chunk in whole_lines(scan, FAST_BLOCK):
            table = _parse_chunk(chunk, fmt, scan.separator, first_line)
            yield table, first_line
            first_line += table.num_rows

    def blocked(tables: Iterator[tuple[pa.Table, int]]) -> Iterator[pa.Table]:
        for table, first_line in tables:
            if blocks is not None:
                blocks.add(table["f1"], table["f3"], table["f5"], first_line)
            yield table

    if blocks is None:
        return _ahead(table for table, _ in parsed())
    return _ahead(blocked(_ahead(parsed())))


class _NotSimple(Exception):
    """The optimistic load gave up; its transaction is rolled back and the general reader takes over."""


def _insert_simple(
    wh: Warehouse, scan: SimpleScan, fmt: TrecFormat, table: str, rows_sql: str, prefix: list,
    blocks: QueryBlocks | None,
) -> int:  # fmt: skip
    """Insert the fast reader's chunks into `table`; raise _NotSimple if anything is off.

    Missing or extra fields and unparsable numbers made the reader fail already; a value that breaks a
    rule becomes NULL in a NOT NULL column; a blank, byte or comment line the scan found off the layout,
    skipped blank lines and repeated (qid, docno) pairs are caught after the insert, by the scan and by
    the check query over `rows_sql` (the rows just inserted), unless the run's blocks proved that no pair
    repeats (QueryBlocks.distinct). Call it inside a transaction.
    """
    insert = f"INSERT INTO {table} SELECT {'?, ' * len(prefix)}{fmt.select} FROM {FAST_FIELDS}"
    tables = _simple_tables(scan, fmt, blocks)
    rows = 0  # the rows inserted: all of `rows_sql`, the statements before them having removed any others
    try:
        first = next(tables, None)
        if first is not None:
            # One INSERT over a stream of the chunks (unregistered by _load_simple). Not a view registered
            # per chunk: inside the transaction DuckDB keeps each replaced view, and its Arrow table, until
            # the commit, so a large run held gigabytes of Arrow buffers beyond memory_limit.
            batches = itertools.chain(first.to_batches(), (batch for chunk in tables for batch in chunk.to_batches()))
            wh.con.register(FAST_FIELDS, pa.RecordBatchReader.from_batches(first.schema, batches))
            try:
                rows = wh.sql(insert, prefix)[0][0]  # DuckDB's INSERT returns its row count
            except (duckdb.Error, pa.ArrowException) as exc:
                raise _NotSimple from exc
    finally:
        tables.close()  # the reading thread stops, whether or not DuckDB read every chunk
    if not scan.simple:
        raise _NotSimple
    if rows != scan.lines:
        raise _NotSimple
    if blocks is not None and blocks.distinct():  # proved as the chunks were read: no sort of every line's hash
        return rows
    if wh.sql(REPEATED_HASHES.format(key=fmt.key, rows=rows_sql))[0][0]:
        raise _NotSimple
    return rows


def _stage_and_check(wh: Warehouse, path: str | Path, data: BinaryIO, fmt: TrecFormat) -> None:
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


Finish = Callable[[int, str, "QueryBlocks | None"], None]


def _load(
    wh: Warehouse, source: Input, fmt: TrecFormat, table: str, rows_sql: str, prefix: list, replace: list[str],
    finish: Finish,
) -> tuple[int, str]:  # fmt: skip
    """One transaction: run `replace` statements, insert the file's rows, then `finish(rows, sha256,
    blocks)`; (rows, the SHA-256 of the bytes as given). `blocks` are the query blocks the fast reader
    found in a run (fmt.blocks), None where the general reader loaded the file.

    The bytes to parse (a plain file, or the private copy of standard input or a gzip file: sources.Input)
    are read a block at a time: first by the fast reader, through a SimpleScan; if the file is not
    simple or the fast reader gives up, from their start again by the general reader, which names the
    rule a line breaks. A plain file's SHA-256 is of the bytes the reader that loaded it read.
    """
    shown = shown_path(source.path)
    try:
        with source.open() as reader:
            scan = SimpleScan(reader, FAST_BLOCK)
            if scan.separator is not None:
                sha = lambda: source.sha256_of(reader)  # noqa: E731
                return _load_simple(wh, scan, fmt, table, rows_sql, prefix, replace, finish, sha)
    except _NotSimple:
        pass
    except OSError as exc:
        raise InputError(shown, 0, "cannot read the file", exc.strerror or str(exc)) from None

    def insert_staged() -> int:
        wh.sql(f"INSERT INTO {table} SELECT {'?, ' * len(prefix)}{fmt.select} FROM {STAGED}", prefix)
        return wh.sql(f"SELECT count(*) FROM {rows_sql}")[0][0]

    try:
        with source.open() as reader:
            _stage_and_check(wh, shown, reader, fmt)
            sha = source.sha256_of(reader)
        rows = _replace_rows(wh, replace, prefix, insert_staged, lambda rows: finish(rows, sha, None))
    except OSError as exc:
        raise InputError(shown, 0, "cannot read the file", exc.strerror or str(exc)) from None
    finally:
        wh.sql(f"DROP TABLE IF EXISTS {STAGED}")
    return rows, sha


def _load_simple(
    wh: Warehouse, scan: SimpleScan, fmt: TrecFormat, table: str, rows_sql: str, prefix: list, replace: list[str],
    finish: Finish, sha: Callable[[], str],
) -> tuple[int, str]:  # fmt: skip
    """_load's fast reader over `scan`, in one transaction; raise _NotSimple (all rolled back) if it gives up."""
    blocks = QueryBlocks() if fmt.blocks else None
    try:
        rows = _replace_rows(
            wh, replace, prefix, lambda: _insert_simple(wh, scan, fmt, table, rows_sql, prefix, blocks),
            lambda rows: finish(rows, sha(), blocks),
        )  # fmt: skip
    finally:  # after the transaction (in an aborted one DuckDB refuses even this); a no-op if none was registered
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


@writes_inputs
def load_run(wh: Warehouse, path: str | Path, run_id: str | None = None) -> LoadResult:
    """Load a TREC run into raw.runs under `run_id` (default: default_name, the file name without .gz).

    `path` may be `-` (standard input) or gzip-compressed (sources.Input); the SHA-256 recorded is
    of its bytes as given. Replacing a run of the same name loaded from other bytes says which it was.

    >>> load_run(wh, "tests/fixtures/trec_eval/results.test")  # doctest: +SKIP
    """
    with Input(path, wh.work) as source:
        shown = shown_path(path)
        run_id = run_id or default_name(path)
        previous = loaded_source(wh, "meta.sources", "raw.runs", run_id)
        if previous is not None and previous[1] == source.sha256():
            return LoadResult("raw.runs", run_id, shown, previous[1], 0, "unchanged")
        rows_sql = f"raw.runs WHERE run_id = '{run_id.replace(chr(39), chr(39) * 2)}'"

        def finish(rows: int, sha: str, blocks: QueryBlocks | None) -> None:
            record_source(wh, "meta.sources", "raw.runs", run_id, shown, sha, rows, "trec.run")
            store_blocks(wh, run_id, blocks)

        replace = ["DELETE FROM raw.runs WHERE run_id = ?", "DELETE FROM raw.run_blocks WHERE run_id = ?"]
        rows, sha = _load(wh, source, RUN, "raw.runs", rows_sql, [run_id], replace, finish)
        if previous is None:
            return LoadResult("raw.runs", run_id, shown, sha, rows, "loaded")
        return LoadResult("raw.runs", run_id, shown, sha, rows, "replaced", *previous)


def store_blocks(wh: Warehouse, run_id: str, blocks: QueryBlocks | None) -> None:
    """Store where each query of a run is (raw.run_blocks), inside the load's transaction: the fast
    reader's blocks (query_blocks.py; a query in two places is in no order), or for a file the general
    reader loaded (`blocks` None) or whose blocks were too many to keep, each query's first line and line
    count, in no order (its lines were not checked)."""
    if blocks is None or not blocks.kept:
        wh.sql(
            "INSERT INTO raw.run_blocks SELECT run_id, qid, min(line), count(*), false, false FROM raw.runs "
            "WHERE run_id = ? GROUP BY run_id, qid",
            [run_id],
        )
        return
    with wh.registered("rh_blocks", blocks.reader()):
        wh.sql(
            "INSERT INTO raw.run_blocks SELECT ?, qid, min(first_line), sum(lines), "
            "count(*) = 1 AND bool_and(double_order), count(*) = 1 AND bool_and(float_order) "
            "FROM rh_blocks GROUP BY qid ORDER BY min(first_line)",
            [run_id],
        )


def load_qrels(wh: Warehouse, path: str | Path, name: str | None = None) -> LoadResult:
    """Load TREC qrels into the labels file (table `qrels`), replacing any earlier qrels there.

    A labels file holds one set of qrels; loading the same bytes again is a no-op. `path` may be `-` or
    gzip-compressed, as for load_run.
    """
    return _load_labels(wh, path, name, QRELS, "qrels", "trec.qrels")


def load_qrels_jg(wh: Warehouse, path: str | Path, name: str | None = None) -> LoadResult:
    """Load qrels with judgment groups (`qid jg docno rel`, trec_eval -R qrels_jg) into the labels file
    (table `qrels_jg`), replacing any earlier ones: the qrels rules, a document judged once per group."""
    return _load_labels(wh, path, name, QRELS_JG, "qrels_jg", "trec.qrels_jg")


def load_prefs(wh: Warehouse, path: str | Path, name: str | None = None) -> LoadResult:
    """Load preference judgments (`qid jg jsg docno rel_level`, trec_eval -R prefs) into the labels file
    (table `prefs`), replacing any earlier ones. Besides each line's rules (PREFS), a judgment group must be
    consistent, as trec_eval requires (check_preferences)."""
    return _load_labels(wh, path, name, PREFS, "prefs", "trec.prefs", check_preferences)


def load_qrels_prefs(wh: Warehouse, path: str | Path, name: str | None = None) -> LoadResult:
    """Load qrels read as preferences (`qid jg docno rel_level`, trec_eval -R qrels_prefs: the second field
    is the judgment group, each group one sub-group '0') into the labels file (table `prefs`)."""
    return _load_labels(wh, path, name, QRELS_PREFS, "prefs", "trec.qrels_prefs")


def load_zscores(wh: Warehouse, path: str | Path, name: str | None = None) -> LoadResult:
    """Load a z-score file (`qid measure mean stddev`, trec_eval -Z) into the labels file (table `zscores`),
    replacing any earlier one; each measure name, as trec_eval prints it, is read as the measure it is
    (measures.canonical_of_label). A label input: its means and deviations come from judged evaluations."""
    return _load_labels(wh, path, name, ZSCORES, "zscores", "trec.zscores", name_measures)


def _load_labels(
    wh: Warehouse, path: str | Path, name: str | None, fmt: TrecFormat, table: str, loader: str,
    check: Callable[[Warehouse, str], None] | None = None,
) -> LoadResult:  # fmt: skip
    """Load a labels file of format `fmt` into the labels table `table` (replacing what it held; the same
    bytes again are a no-op); `check(wh, shown path)` runs over the loaded rows before the load commits."""
    with Input(path, wh.work) as source:
        shown = shown_path(path)
        name = name or default_name(path)
        with wh.labels():
            previous = wh.sql("SELECT name, path, sha256 FROM labels.meta.sources WHERE table_name = ?", [table])
            if [n for n, _, _ in previous] == [name] and previous[0][2] == source.sha256():
                return LoadResult(table, name, shown, previous[0][2], 0, "unchanged")

            def finish(rows: int, sha: str, _: QueryBlocks | None) -> None:
                if check is not None:
                    check(wh, shown)
                record_source(wh, "labels.meta.sources", table, name, shown, sha, rows, loader)

            replace = [f"DELETE FROM labels.{table}", f"DELETE FROM labels.meta.sources WHERE table_name = '{table}'"]
            rows, sha = _load(wh, source, fmt, f"labels.{table}", f"labels.{table}", [], replace, finish)
        if not previous:
            return LoadResult(table, name, shown, sha, rows, "loaded")
        return LoadResult(table, name, shown, sha, rows, "replaced", previous[0][1], previous[0][2])


def check_preferences(wh: Warehouse, path: str) -> None:
    """The rules of a judgment group as a whole (labels.prefs, just loaded), which trec_eval enforces when it
    evaluates: a document is non-relevant (rel_level 0) in every sub-group of a group or in none; and no
    document is preferred to itself through a chain of sub-groups' preferences (a > b in one, b > a in
    another). Raises an InputError naming a line of the first conflict."""
    mixed = wh.sql(
        """
        SELECT p.line, p.docno, p.jg, q.line
        FROM labels.prefs AS p
        JOIN labels.prefs AS q ON q.qid = p.qid AND q.jg = p.jg AND q.docno = p.docno AND q.line < p.line
        WHERE (p.rel_level = 0) <> (q.rel_level = 0)
        ORDER BY p.line, q.line
        LIMIT 1
        """
    )
    if mixed:
        line, docno, jg, first = mixed[0]
        raise InputError(
            path, line, "a document non-relevant (rel_level 0) in one sub-group and relevant in another of the same "
            "judgment group", f"docno {docno}, judgment group {jg}; first at line {first}",
        )  # fmt: skip
    cycle = wh.sql(
        """
        WITH RECURSIVE preferred AS (
            SELECT DISTINCT a.qid, a.jg, a.docno AS better, b.docno AS worse
            FROM labels.prefs AS a
            JOIN labels.prefs AS b ON b.qid = a.qid AND b.jg = a.jg AND b.jsg = a.jsg AND a.rel_level > b.rel_level
        ),
        chains AS (
            SELECT qid, jg, better, worse FROM preferred
            UNION
            SELECT c.qid, c.jg, c.better, p.worse
            FROM chains AS c
            JOIN preferred AS p ON p.qid = c.qid AND p.jg = c.jg AND p.better = c.worse
        )
        SELECT min(p.line), c.better, c.jg
        FROM chains AS c
        JOIN labels.prefs AS p ON p.qid = c.qid AND p.jg = c.jg AND p.docno = c.better
        WHERE c.better = c.worse
        GROUP BY c.qid, c.jg, c.better
        ORDER BY 1
        LIMIT 1
        """
    )
    if cycle:
        line, docno, jg = cycle[0]
        raise InputError(
            path, line, "a document preferred to itself through the sub-groups of its judgment group",
            f"docno {docno}, judgment group {jg}: the sub-groups' rel_levels contradict each other",
        )  # fmt: skip


def name_measures(wh: Warehouse, path: str) -> None:
    """Give each measure of a z-score file just loaded (labels.zscores) the canonical name of the measure
    trec_eval prints under that name (NULL for none)."""
    from rankhouse.measures import canonical_of_label

    names = [row[0] for row in wh.sql("SELECT DISTINCT measure FROM labels.zscores ORDER BY measure")]
    mapping = pa.table({"measure": names, "canonical": [canonical_of_label(n) for n in names]})
    with wh.registered("rh_zscore_names", mapping):
        wh.sql(
            "UPDATE labels.zscores AS z SET canonical = n.canonical "
            "FROM rh_zscore_names AS n WHERE n.measure = z.measure"
        )


def write_run(wh: Warehouse, run_id: str, path: str | Path) -> int:
    """Write a loaded run back out as a TREC file, lines in their original order; return the line count."""
    rows = wh.sql("SELECT qid, docno, rank, score, tag FROM raw.runs WHERE run_id = ? ORDER BY line", [run_id])
    if not rows:
        raise InputError(path, 0, f"no run named {run_id!r} in the warehouse")
    with open(path, "w", encoding="utf-8") as out:
        for qid, docno, rank, score, tag in rows:
            out.write(f"{qid} Q0 {docno} {rank} {score!r} {tag}\n")
    return len(rows)
