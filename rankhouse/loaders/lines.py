"""Whitespace-separated text files into a staging table of (line_no, fields), with exact line numbers.

The bytes are cut into lines with numpy and handed to DuckDB as an Arrow array without copying;
DuckDB splits the fields. Blank lines and lines whose first non-blank character is `#` are skipped
(as trec_eval does), but line numbers always count every line of the file.
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


def stage_fields(wh: Warehouse, path: str | Path, data: bytes, table: str) -> int:
    """Create TEMP table `table`(line_no, fields VARCHAR[]) from the content lines; return its row count."""
    check_utf8(path, data)
    lines = line_table(data)  # noqa: F841 - read by DuckDB's replacement scan below
    wh.con.register("rh_lines", lines)
    try:
        wh.sql(
            f"""
            CREATE OR REPLACE TEMP TABLE {table} AS
            WITH content AS (
                SELECT line_no, trim(line, ' ' || chr(9) || chr(13) || chr(10)) AS line
                FROM rh_lines
            )
            SELECT line_no, string_split_regex(line, '[ \\t\\r]+') AS fields
            FROM content
            WHERE line <> '' AND NOT starts_with(line, '#')
            """
        )
    finally:
        wh.con.unregister("rh_lines")
    return wh.sql(f"SELECT count(*) FROM {table}")[0][0]
