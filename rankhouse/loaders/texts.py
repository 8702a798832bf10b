"""Labelled text collections in CSV (`text,category` with a header, RFC 4180 quoting), e.g. BANKING77.

One file gives two things that live apart: its texts (documents or queries, in the main file) and
its categories (class labels, used as relevance judgments, in the labels file). So each is its own
loader, and a protocol names the file twice. Ids are the 0-based data row index.

Rules, each reported with the file, the line and the rule, and nothing loaded: a `text,category`
header; exactly two fields per row; a non-empty text and category; UTF-8; at least one row. A leading
UTF-8 BOM is stripped.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pyarrow as pa

from rankhouse.arrays import numpy_array, string_array
from rankhouse.errors import InputError
from rankhouse.loaders.lines import without_bom
from rankhouse.loaders.sources import LoadResult, loaded_sha, read_file, replace_named_rows, sha256_bytes, writes_inputs
from rankhouse.warehouse import Warehouse

HEADER = ["text", "category"]


def read_labelled_csv(path: str | Path, data: bytes) -> list[tuple[int, str, str]]:
    """(line, text, category) per data row, checked (a leading BOM is not part of the header)."""
    data = without_bom(data)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(path, data.count(b"\n", 0, exc.start) + 1, "not valid UTF-8 text") from None
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    rows = []
    try:
        header = next(reader, None)
        if header != HEADER:
            raise InputError(path, 1, "expected the header text,category", f"found {','.join(header or [])}")
        start = reader.line_num + 1
        for fields in reader:
            if len(fields) != 2:
                raise InputError(path, start, "expected 2 fields: text,category", f"found {len(fields)}")
            if not fields[0].strip() or not fields[1].strip():
                raise InputError(path, start, "empty text or category")
            rows.append((start, fields[0], fields[1]))
            start = reader.line_num + 1
    except csv.Error as exc:
        raise InputError(path, reader.line_num, "malformed CSV", str(exc)) from None
    if not rows:
        raise InputError(path, 2, "no data rows in the file")
    return rows


def _load(wh: Warehouse, path: str | Path, name: str | None, table: str, meta: str, build: callable,
          loader: str) -> LoadResult:  # fmt: skip
    """Replace `table`'s rows of corpus `name` by the file's, in one transaction (a no-op for the same bytes)."""
    data = read_file(path)
    sha = sha256_bytes(data)
    name = name or Path(path).stem
    key = table.split(".", 1)[1] if meta.startswith("labels.") else table
    previous = loaded_sha(wh, meta, key, name)
    if previous == sha:
        return LoadResult(key, name, str(path), sha, 0, "unchanged")
    rows = read_labelled_csv(path, data)
    replace_named_rows(wh, table, "corpus", name, build(name, rows), meta, key, path, sha, loader)
    return LoadResult(key, name, str(path), sha, len(rows), "replaced" if previous else "loaded")


def _texts(name: str, rows: list[tuple[int, str, str]]) -> pa.Table:
    """corpus, id, row_index and text of each row (built from buffers: pa.table would import pandas)."""
    columns = [*_named_rows(name, len(rows)), numpy_array(np.arange(len(rows), dtype=np.int64)),
               string_array([r[1] for r in rows])]  # fmt: skip
    return pa.Table.from_arrays(columns, names=["corpus", "id", "row_index", "text"])


def _classes(name: str, rows: list[tuple[int, str, str]]) -> pa.Table:
    """corpus, id and class of each row."""
    columns = [*_named_rows(name, len(rows)), string_array([r[2] for r in rows])]
    return pa.Table.from_arrays(columns, names=["corpus", "id", "class"])


def _named_rows(name: str, rows: int) -> tuple[pa.Array, pa.Array]:
    """The corpus (`name`) and the id ("0", "1", ...) of `rows` rows."""
    return string_array([name] * rows), string_array([str(i) for i in range(rows)])


@writes_inputs
def load_documents(wh: Warehouse, path: str | Path, name: str | None = None) -> LoadResult:
    """The texts of a labelled CSV as documents of corpus `name`.  Example: load_documents(wh, "train.csv", "b77")"""
    return _load(wh, path, name, "raw.documents", "meta.sources", _texts, "csv.documents")


@writes_inputs
def load_queries(wh: Warehouse, path: str | Path, name: str | None = None) -> LoadResult:
    """The texts of a labelled CSV as queries of corpus `name`.  Example: load_queries(wh, "test.csv", "banking77")"""
    return _load(wh, path, name, "raw.queries", "meta.sources", _texts, "csv.queries")


def load_document_classes(wh: Warehouse, path: str | Path, name: str | None = None) -> LoadResult:
    """The categories of a labelled CSV as the documents' classes, into the labels file."""
    with wh.labels():
        return _load(wh, path, name, "labels.document_classes", "labels.meta.sources", _classes, "csv.document_classes")


def load_query_classes(wh: Warehouse, path: str | Path, name: str | None = None) -> LoadResult:
    """The categories of a labelled CSV as the queries' classes, into the labels file."""
    with wh.labels():
        return _load(wh, path, name, "labels.query_classes", "labels.meta.sources", _classes, "csv.query_classes")
