"""Runs and qrels given in Python: pandas and polars DataFrames, Arrow tables, and the dict of dicts that
pytrec_eval and ranx take, read into the warehouse's raw.runs and the labels' qrels as files are.

Columns are ir_measures' names: a run has query_id, doc_id, score; qrels have query_id, doc_id,
relevance (and, optionally, iteration). Other columns are left alone. A dict of dicts is
{query_id: {doc_id: score}} for a run, {query_id: {doc_id: relevance}} for qrels; ranx's Run and Qrels
are read through their to_dict().

The rules are the TREC files' (loaders/trec.py), each reported with the frame, the row (0-based, as
`DataFrame.iloc` counts; in a dict, its keys) and the column, and nothing loaded:
- the columns are there, ids are text or whole numbers (a whole number is read as its decimal text),
  a score a number, a relevance a whole number;
- no value is missing (null); no id is empty or holds a blank (a TREC file cannot hold it, and the
  warehouse writes runs as TREC files); a score is finite (not NaN or infinite);
- one row per (query_id, doc_id); at least one row.

A frame's rows load as a file's lines would: row i is line i + 1 (raw.runs.line), a run's tag is its
name, its rank field the row's position among its query's rows (the rank is not read: runs are ranked
by score, then doc_id, as trec_eval ranks them). The SHA-256 recorded in meta.sources is that of the
checked rows as an Arrow IPC stream.
"""

from __future__ import annotations

import hashlib
import numbers
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from rankhouse.errors import FrameError, InputError, RankhouseError
from rankhouse.loaders.sources import (
    LoadResult,
    check_readable,
    loaded_source,
    record_source,
    writes_inputs,
)
from rankhouse.loaders.trec import RunInput, load_qrels, load_run, one_stdin, run_inputs, store_blocks
from rankhouse.warehouse import Warehouse

RUN_COLUMNS = ("query_id", "doc_id", "score")
QRELS_COLUMNS = ("query_id", "doc_id", "relevance")
# Other libraries' names for ir_measures' columns (PyTerrier, ranx, trec_eval), for the hint of an error.
OTHER_NAMES = {
    "qid": "query_id", "q_id": "query_id", "query": "query_id", "topic": "query_id",
    "docno": "doc_id", "docid": "doc_id", "doc": "doc_id", "document": "doc_id",
    "rel": "relevance", "label": "relevance", "grade": "relevance", "judgment": "relevance",
    "sim": "score", "rsv": "score",
}  # fmt: skip
BLANK = r"[\s\p{Z}]"  # ASCII and Unicode blanks (RE2)
LOADER = {"run": "python.run", "qrels": "python.qrels"}


@dataclass(frozen=True)
class Frame:
    """A run or qrels given in Python, checked: its rows as they will load (query_id, doc_id, score or
    relevance, iteration for qrels, line = row + 1), the name it loads under and how messages name it."""

    kind: str  # "run" or "qrels"
    name: str
    shown: str  # "run 'bm25' (pandas DataFrame)"
    rows: pa.Table
    keyed: bool = False  # from a dict of dicts: a row is named by its keys, not its position

    def __str__(self) -> str:
        return self.shown

    def where(self, row: int) -> str:
        """How a message names a row: `row 3`, or a dict's `['301']['D1']`."""
        if not self.keyed:
            return f"row {row}"
        return f"[{self.rows['query_id'][row].as_py()!r}][{self.rows['doc_id'][row].as_py()!r}]"

    def sha256(self) -> str:
        """The SHA-256 of the checked rows as an Arrow IPC stream."""
        sink = pa.BufferOutputStream()
        table = self.rows.combine_chunks()
        with pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
        return hashlib.sha256(sink.getvalue()).hexdigest()


def is_file(value: object) -> bool:
    """Whether an input is a file's path (text or os.PathLike) rather than rows given in Python."""
    return isinstance(value, (str, os.PathLike))


def read_frame(value: object, kind: str, name: str, shown: str | None = None) -> Frame:
    """A run (`kind` "run") or qrels ("qrels") given as a pandas or polars DataFrame, an Arrow table (or
    anything with Arrow's C stream), a dict of dicts or a ranx Run/Qrels, checked by the rules of this
    module's docstring; refused with a FrameError naming the frame, the row and the column.

    >>> read_frame({"q1": {"d1": 2.0, "d2": 1.0}}, "run", "bm25").rows.num_rows
    2
    """
    what, keyed = _kind_of(value)
    shown = shown or (f"run {name!r} ({what})" if kind == "run" else f"qrels ({what})")
    if keyed:
        table = _from_dict(value.to_dict() if _is_ranx(value) else value, kind, shown)
    else:
        table = _arrow(value, shown)
    return Frame(kind, name, shown, _checked(table, kind, shown, keyed), keyed)


def _is_ranx(value: object) -> bool:
    return type(value).__module__.startswith("ranx") and hasattr(value, "to_dict")


def _kind_of(value: object) -> tuple[str, bool]:
    """(how messages name the kind of input, whether it is keyed: a dict of dicts or a ranx object)."""
    module = type(value).__module__
    if isinstance(value, Mapping):
        return "dict", True
    if _is_ranx(value):
        return f"ranx {type(value).__name__}", True
    if module.startswith("pandas") and type(value).__name__ == "DataFrame":
        return "pandas DataFrame", False
    if module.startswith("polars") and type(value).__name__ == "DataFrame":
        return "polars DataFrame", False
    if isinstance(value, (pa.Table, pa.RecordBatch)):
        return "Arrow table", False
    if hasattr(value, "__arrow_c_stream__"):
        return type(value).__name__, False
    raise RankhouseError(
        f"cannot read a {type(value).__name__} as a run or qrels: give a file path, a pandas or polars "
        "DataFrame, an Arrow table or a dict of dicts ({query_id: {doc_id: score or relevance}})"
    )


def _arrow(value: object, shown: str) -> pa.Table:
    """The input as an Arrow table, column by column for pandas, so that a column Arrow cannot read
    (mixed types) is named."""
    module = type(value).__module__
    if module.startswith("pandas"):
        columns = {}
        for column in value.columns:
            columns[str(column)] = pa.chunked_array([_pandas_column(value[column], shown, str(column))])
        return pa.table(columns) if columns else pa.table({})
    if module.startswith("polars"):
        return value.to_arrow()
    if isinstance(value, pa.RecordBatch):
        return pa.Table.from_batches([value])
    if isinstance(value, pa.Table):
        return value
    return pa.table(value)


def _pandas_column(series: object, shown: str, column: str) -> pa.Array:
    """A pandas column as Arrow: NaN kept as NaN where the column is a number (a NaN score is refused as
    NaN, not as missing), and as a missing value in a column of text."""
    try:
        return pa.array(series, from_pandas=False)
    except (pa.ArrowException, TypeError, ValueError):
        pass
    try:
        return pa.array(series, from_pandas=True)
    except (pa.ArrowException, TypeError, ValueError) as exc:
        raise FrameError(shown, f"{column} holds values of more than one type", _one_line(exc), column=column) from None


def _from_dict(data: Mapping, kind: str, shown: str) -> pa.Table:
    """{query_id: {doc_id: value}} as the columns query_id, doc_id and score or relevance, in the dict's order."""
    column = "score" if kind == "run" else "relevance"
    queries, documents, values = [], [], []
    for query, ranked in data.items():
        qid = _key(query, shown, "query_id", f"[{query!r}]")
        if not isinstance(ranked, Mapping):
            raise FrameError(
                shown, f"a query maps to a {type(ranked).__name__}, not a dict of doc_id -> {column}", "", f"[{qid!r}]"
            )
        for doc, value in ranked.items():
            docno = _key(doc, shown, "doc_id", f"[{qid!r}][{doc!r}]")
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                kind_of = "a whole number" if kind == "qrels" else "a number"
                raise FrameError(
                    shown, f"{column} is not {kind_of}", f"{column} {value!r}", f"[{qid!r}][{docno!r}]", column
                )
            queries.append(qid)
            documents.append(docno)
            values.append(float(value) if kind == "run" or not isinstance(value, numbers.Integral) else int(value))
    value_type = pa.float64() if kind == "run" or any(isinstance(v, float) for v in values) else pa.int64()
    return pa.table({"query_id": pa.array(queries, pa.string()), "doc_id": pa.array(documents, pa.string()),
                     column: pa.array(values, value_type)})  # fmt: skip


def _key(key: object, shown: str, column: str, where: str) -> str:
    """A dict key as an id: text, or a whole number as its decimal text."""
    if isinstance(key, str):
        return key
    if isinstance(key, numbers.Integral) and not isinstance(key, bool):
        return str(int(key))
    raise FrameError(shown, f"{column} is a {type(key).__name__}: ids are text or whole numbers", "", where, column)


def _checked(table: pa.Table, kind: str, shown: str, keyed: bool) -> pa.Table:
    """The rows to load, every rule of the module's docstring checked, in the order of the columns."""
    wanted = RUN_COLUMNS if kind == "run" else QRELS_COLUMNS
    missing = [c for c in wanted if c not in table.column_names]
    if missing:
        raise FrameError(shown, f"no column {', '.join(missing)}", _column_hint(table.column_names, kind))
    for column in [*wanted, "iteration"]:
        if column in table.column_names and table.column_names.count(column) > 1:
            raise FrameError(shown, f"{column} is given as {table.column_names.count(column)} columns")
    if table.num_rows == 0:
        raise FrameError(shown, f"has no rows: a {kind} needs at least one")
    frame = Frame(kind, "", shown, table, keyed)  # for where() while checking
    columns = {
        "query_id": _ids(frame, table["query_id"], "query_id"),
        "doc_id": _ids(frame, table["doc_id"], "doc_id"),
    }
    if kind == "run":
        columns["score"] = _scores(frame, table["score"])
    else:
        columns["relevance"] = _grades(frame, table["relevance"])
        columns["iteration"] = (
            _ids(frame, table["iteration"], "iteration")
            if "iteration" in table.column_names
            else pa.chunked_array([pa.array(["0"] * table.num_rows, pa.string())])
        )
    rows = pa.table({**columns, "line": pa.array(range(1, table.num_rows + 1), pa.int64())})
    _unique(Frame(kind, "", shown, rows, keyed))
    return rows


def _column_hint(present: list[str], kind: str) -> str:
    wanted = RUN_COLUMNS if kind == "run" else QRELS_COLUMNS
    hints = [f"{c} -> {OTHER_NAMES[c.lower()]}" for c in present if OTHER_NAMES.get(c.lower()) in wanted]
    listed = ", ".join(present) if present else "none"
    text = f"its columns: {listed}; {kind} columns are ir_measures' {', '.join(wanted)}"
    return text + (f"; rename {', '.join(hints)}" if hints else "")


def _first(frame: Frame, mask: pa.ChunkedArray | pa.Array) -> int | None:
    """The first row where `mask` is true, or None."""
    found = pc.index(mask.fill_null(False), True).as_py()
    return None if found < 0 else found


def _refuse(frame: Frame, mask: pa.ChunkedArray, column: str, rule: str, values: pa.ChunkedArray) -> None:
    """A FrameError at the first row of `mask`, if any: its value shown after the column's name."""
    row = _first(frame, mask)
    if row is not None:
        raise FrameError(frame.shown, rule, f"{column} {values[row].as_py()!r}", frame.where(row), column)


def _missing(frame: Frame, values: pa.ChunkedArray, column: str) -> None:
    row = _first(frame, pc.is_null(values))
    if row is not None:
        raise FrameError(frame.shown, f"{column} is missing (null)", "", frame.where(row), column)


def _decoded(values: pa.ChunkedArray) -> pa.ChunkedArray:
    """A dictionary-encoded column (pandas' category) as its values."""
    return values.cast(values.type.value_type) if pa.types.is_dictionary(values.type) else values


def _ids(frame: Frame, values: pa.ChunkedArray, column: str) -> pa.ChunkedArray:
    values = _decoded(values)
    kind = values.type
    if pa.types.is_integer(kind) or pa.types.is_null(kind):
        values = values.cast(pa.string())
    elif pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_string_view(kind):
        values = values.cast(pa.string())
    else:
        raise FrameError(frame.shown, f"{column} holds {kind}: ids are text or whole numbers", "", column=column)
    _missing(frame, values, column)
    _refuse(frame, pc.equal(pc.utf8_length(values), 0), column, f"{column} is empty", values)
    _refuse(
        frame, pc.match_substring_regex(values, BLANK), column,
        f"{column} holds a blank, which a TREC file cannot (trec_eval splits its fields at blanks)", values,
    )  # fmt: skip
    return values


def _numbers(frame: Frame, values: pa.ChunkedArray, column: str, what: str) -> pa.ChunkedArray:
    values = _decoded(values)
    kind = values.type
    if pa.types.is_null(kind):
        _missing(frame, values, column)
    if not (pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_decimal(kind)):
        raise FrameError(frame.shown, f"{column} holds {kind}: {what}", "", column=column)
    _missing(frame, values, column)
    return values


def _scores(frame: Frame, values: pa.ChunkedArray) -> pa.ChunkedArray:
    values = _numbers(frame, values, "score", "a score is a number").cast(pa.float64())
    _refuse(frame, pc.invert(pc.is_finite(values)), "score", "score is NaN or infinite", values)
    return values


def _grades(frame: Frame, values: pa.ChunkedArray) -> pa.ChunkedArray:
    values = _numbers(frame, values, "relevance", "a relevance is a whole number")
    if pa.types.is_integer(values.type):
        return values.cast(pa.int64())
    as_double = values.cast(pa.float64())
    whole = pc.and_(pc.is_finite(as_double), pc.equal(pc.floor(as_double), as_double))
    too_large = pc.greater(pc.abs(as_double), float(2**53))
    _refuse(frame, pc.invert(whole), "relevance", "relevance is not a whole number", values)
    _refuse(frame, too_large, "relevance", "relevance is beyond 2^53", values)
    return as_double.cast(pa.int64())


def _unique(frame: Frame) -> None:
    """Refuse a second row of one (query_id, doc_id), naming it and where the first one is."""
    rows = frame.rows
    order = pc.sort_indices(rows, sort_keys=[("query_id", "ascending"), ("doc_id", "ascending"), ("line", "ascending")])
    ordered = rows.select(["query_id", "doc_id", "line"]).take(order)
    if ordered.num_rows < 2:
        return
    query, doc, line = (ordered[c].combine_chunks() for c in ("query_id", "doc_id", "line"))
    same = pc.and_(pc.equal(query[1:], query[:-1]), pc.equal(doc[1:], doc[:-1]))
    if not pc.any(same).as_py():
        return
    repeated = pc.min(pc.filter(line[1:], same)).as_py()  # the earliest line that repeats a key
    row = repeated - 1
    qid, docno = rows["query_id"][row].as_py(), rows["doc_id"][row].as_py()
    first = pc.min(pc.filter(rows["line"], pc.and_(pc.equal(rows["query_id"], qid), pc.equal(rows["doc_id"], docno))))
    what = "document judged twice for this query" if frame.kind == "qrels" else "duplicate document for this query"
    raise FrameError(
        frame.shown, what, f"query_id {qid!r}, doc_id {docno!r}, first at {frame.where(first.as_py() - 1)}",
        frame.where(row),
    )  # fmt: skip


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())


# -- loading -------------------------------------------------------------------------------------------


@writes_inputs
def load_frame_run(wh: Warehouse, frame: Frame, run_id: str | None = None) -> LoadResult:
    """Load a run given in Python into raw.runs under `run_id` (default: its name), as load_run loads a
    file: replacing a run of that name, unchanged if the same rows were loaded under it already.

    >>> load_frame_run(wh, read_frame({"q1": {"d1": 1.0}}, "run", "bm25"))  # doctest: +SKIP
    """
    run_id = run_id or frame.name
    sha = frame.sha256()
    previous = loaded_source(wh, "meta.sources", "raw.runs", run_id)
    if previous is not None and previous[1] == sha:
        return LoadResult("raw.runs", run_id, frame.shown, sha, 0, "unchanged")
    with wh.registered("rh_frame_run", frame.rows), wh.transaction():
        wh.sql("DELETE FROM raw.runs WHERE run_id = ?", [run_id])
        wh.sql("DELETE FROM raw.run_blocks WHERE run_id = ?", [run_id])
        wh.sql(
            "INSERT INTO raw.runs SELECT $run, query_id, doc_id, "
            "row_number() OVER (PARTITION BY query_id ORDER BY line), score, $run, line FROM rh_frame_run",
            {"run": run_id},
        )
        record_source(wh, "meta.sources", "raw.runs", run_id, frame.shown, sha, frame.rows.num_rows, LOADER["run"])
        store_blocks(wh, run_id, None)
    status = "loaded" if previous is None else "replaced"
    return LoadResult("raw.runs", run_id, frame.shown, sha, frame.rows.num_rows, status, *(previous or ()))


def load_frame_qrels(wh: Warehouse, frame: Frame) -> LoadResult:
    """Load qrels given in Python into the labels file (table `qrels`), replacing any earlier qrels there,
    as load_qrels loads a file."""
    sha = frame.sha256()
    with wh.labels():
        previous = wh.sql("SELECT name, path, sha256 FROM labels.meta.sources WHERE table_name = 'qrels'")
        if [n for n, _, _ in previous] == [frame.name] and previous[0][2] == sha:
            return LoadResult("qrels", frame.name, frame.shown, sha, 0, "unchanged")
        with wh.registered("rh_frame_qrels", frame.rows), wh.transaction():
            wh.sql("DELETE FROM labels.qrels")
            wh.sql("DELETE FROM labels.meta.sources WHERE table_name = 'qrels'")
            wh.sql("INSERT INTO labels.qrels SELECT query_id, iteration, doc_id, relevance, line FROM rh_frame_qrels")
            rows = frame.rows.num_rows
            record_source(wh, "labels.meta.sources", "qrels", frame.name, frame.shown, sha, rows, LOADER["qrels"])
    if not previous:
        return LoadResult("qrels", frame.name, frame.shown, sha, rows, "loaded")
    return LoadResult("qrels", frame.name, frame.shown, sha, rows, "replaced", previous[0][1], previous[0][2])


def load_run_input(wh: Warehouse, run: RunInput | Frame | str | Path, name: str) -> LoadResult:
    """Load one run under `name`, from its file or from the rows given in Python."""
    if isinstance(run, Frame):
        return load_frame_run(wh, run, name)
    return load_run(wh, run.path if isinstance(run, RunInput) else run, name)


def load_sources(
    wh: Warehouse, qrels: str | Path | Frame, runs: Iterable[RunInput | Frame]
) -> tuple[list[LoadResult], list[str]]:
    """evaluation.load_inputs for inputs of which some are given in Python (Frame): every file checked
    readable and a study's warehouse refused before anything is loaded; (the loads, qrels first; the run
    names in order)."""
    runs = list(runs)
    files = [item.path for item in runs if isinstance(item, RunInput)] + ([] if isinstance(qrels, Frame) else [qrels])
    one_stdin(files)
    for path in files:
        check_readable(path)
    wh.check_gate()
    loaded = [load_frame_qrels(wh, qrels) if isinstance(qrels, Frame) else load_qrels(wh, qrels)]
    loaded += [load_run_input(wh, item, item.name) for item in runs]
    return loaded, [item.name for item in runs]


def run_sources(runs: object) -> list[RunInput | Frame]:
    """The runs of the API's `runs` argument, each a RunInput (a file) or a Frame, their names unique:

    - a path or `NAME=PATH` text, or a list of them (names as `rankhouse eval` gives them);
    - a dict {name: path, DataFrame, Arrow table or dict of dicts};
    - one DataFrame, Arrow table or dict of dicts {query_id: {doc_id: score}}: a run named `run`;
    - a dict {name: {query_id: {doc_id: score}}} (ranx's and pytrec_eval's runs by name), or a list of
      ranx Runs (named by their name).
    """
    if is_file(runs):
        return run_inputs([runs])
    if isinstance(runs, Mapping) and runs and all(isinstance(v, Mapping) for v in runs.values()):
        if _is_single_run(runs):
            return [read_frame(runs, "run", "run")]
    if isinstance(runs, Mapping):
        if not runs:
            raise RankhouseError("no run given: runs is an empty dict")
        sources: list[RunInput | Frame] = []
        for name, value in runs.items():
            if not isinstance(name, str) or not name:
                raise RankhouseError(f"a run's name is a non-empty string, not {name!r}")
            sources.append(RunInput(name, str(value)) if is_file(value) else read_frame(value, "run", name))
        return sources
    if isinstance(runs, (list, tuple)):
        if not runs:
            raise RankhouseError("no run given: runs is an empty list")
        if all(is_file(item) for item in runs):
            return run_inputs(list(runs))
        sources, names = [], []
        for item in runs:
            if is_file(item):
                sources.append(RunInput.parse(item))
            elif _is_ranx(item) and getattr(item, "name", None):
                sources.append(read_frame(item, "run", item.name))
            else:
                raise RankhouseError(
                    f"a run in a list is a file path (or NAME=PATH); a {type(item).__name__} needs a name: "
                    "give the runs as a dict {name: run}"
                )
            names.append(sources[-1].name)
        _distinct(names)
        return sources
    return [read_frame(runs, "run", "run")]


def _is_single_run(runs: Mapping) -> bool:
    """Whether a dict of dicts is one run {query_id: {doc_id: score}} rather than runs by name {name:
    {query_id: {doc_id: score}}}: its values' values are numbers, not dicts."""
    for ranked in runs.values():
        for value in ranked.values():
            return not isinstance(value, Mapping)
    return True


def _distinct(names: list[str]) -> None:
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise RankhouseError(f"two runs are named {repeated[0]!r}: give each run a name of its own")


def qrels_source(qrels: object) -> str | Path | Frame:
    """The qrels of the API's `qrels` argument: a file's path, or a Frame."""
    return qrels if is_file(qrels) else read_frame(qrels, "qrels", "qrels")


def frame_input_error(exc: InputError, sources: Iterable[object]) -> RankhouseError:
    """An InputError a model check raised about a frame's line (check_grades), as a FrameError naming
    its row; any other error as it is."""
    for source in sources:
        if isinstance(source, Frame) and exc.path == source.shown and exc.line > 0:
            column = "relevance" if source.kind == "qrels" else None
            return FrameError(source.shown, exc.rule, exc.detail, source.where(exc.line - 1), column)
    return exc
