"""Whitespace-separated text files into a staging table of fields, with exact line numbers.

numpy cuts the bytes into lines (handed to DuckDB as an Arrow array without copying) and DuckDB
splits each line on runs of blanks. Blank lines and lines whose first non-blank character is `#` are
skipped (as trec_eval does); line numbers count every line of the file. This reader accepts any
layout and finds every broken rule; loaders may first try a faster reader on simple files
(`simple_separator`) and come here when it gives up.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa

from rankhouse.errors import InputError
from rankhouse.warehouse import Warehouse


def check_utf8(path: str | Path, data: bytes) -> None:
    """Raise an InputError naming the first line that is not valid UTF-8."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(path, line, "not valid UTF-8 text") from None


def simple_separator(data: bytes) -> str | None:
    """The separator of a file that may be simple (one separator, a space or a tab, used singly; no
    blank, comment, indented or CRLF lines), or None if it cannot be.

    Only single-byte scans here (they run at memory speed); a fast reader must still notice doubled
    separators, blank lines and comment lines itself and give up on them.
    """
    separator = b"\t" if b"\t" in data else b" "
    other = b" " if separator == b"\t" else b"\t"
    if not data or other in data or b"\r" in data or data[:1] in (separator, b"\n", b"#"):
        return None
    return separator.decode()


def count_lines(data: bytes) -> int:
    """Lines in a file, a last line without a newline included."""
    return data.count(b"\n") + (bool(data) and not data.endswith(b"\n"))


def line_table(data: bytes) -> pa.Table:
    """An Arrow table (line_no, line) with one row per line of `data` (line_no counts from 1)."""
    buf = np.frombuffer(data, dtype=np.uint8)
    newlines = np.flatnonzero(buf == 10)
    starts = np.empty(len(newlines) + 1, dtype=np.int64)
    starts[0] = 0
    starts[1:] = newlines + 1
    if starts[-1] == len(data):  # the file ends with a newline: no empty last line
        starts = starts[:-1]
    offsets = np.append(starts, len(data))
    lines = pa.LargeStringArray.from_buffers(len(starts), pa.py_buffer(offsets), pa.py_buffer(data))
    return pa.table({"line_no": pa.array(np.arange(1, len(starts) + 1)), "line": lines})


def stage_fields(wh: Warehouse, path: str | Path, data: bytes, fields: int, table: str) -> int:
    """Create TEMP `table`(line_no, f1 .. f<fields>, nfields) from the file; return its row count.

    Fields are text; columns past `fields` are dropped (nfields still counts them), missing ones NULL.
    """
    check_utf8(path, data)
    picks = ", ".join(f"parts[{i}] AS f{i}" for i in range(1, fields + 1))
    wh.con.register("rh_lines", line_table(data))
    try:
        wh.sql(
            f"""
            CREATE OR REPLACE TEMP TABLE {table} AS
            WITH content AS (
                SELECT line_no, trim(line, ' ' || chr(9) || chr(13) || chr(10)) AS line
                FROM rh_lines
            ),
            split AS (
                SELECT line_no, string_split_regex(line, '[ \\t\\r]+') AS parts
                FROM content
                WHERE line <> '' AND NOT starts_with(line, '#')
            )
            SELECT line_no, {picks}, len(parts) AS nfields
            FROM split
            """
        )
    finally:
        wh.con.unregister("rh_lines")
    return wh.sql(f"SELECT count(*) FROM {table}")[0][0]
