"""Warehouse.export_lines: a one-column query's text rows written as lines, in order, each followed by a
newline (a NULL as an empty line), the same bytes DuckDB's CSV writer (COPY, no quoting) writes; over
several Arrow batches and sliced arrays (text_lines)."""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pytest

from rankhouse.warehouse import Warehouse
from rankhouse.warehouse.connection import text_lines

LINES = """
    SELECT CASE WHEN i % 97 = 5 THEN NULL WHEN i % 89 = 3 THEN '' ELSE concat_ws(' ', 'q' || (i // 7), 'Q0', 'd' || i,
        i, CAST(1 / (i + 3) AS VARCHAR), 'tag-é') END AS line
    FROM range(300000) AS t(i) ORDER BY i DESC
"""


def copied(query: str, path) -> bytes:
    """What DuckDB's COPY writes of the query's rows (the writer export_lines had before)."""
    con = duckdb.connect()
    con.execute(f"COPY ({query}) TO '{path}' (FORMAT csv, HEADER false, QUOTE '', ESCAPE '', DELIMITER '\t')")
    return path.read_bytes()


def test_export_lines_writes_what_copy_writes(tmp_path):
    with Warehouse(":memory:") as wh:
        wh.export_lines(LINES, None, tmp_path / "lines.txt")  # 300,000 rows: three batches of 131,072 or fewer
    written = (tmp_path / "lines.txt").read_bytes()
    assert written == copied(LINES, tmp_path / "copied.txt")
    assert written.count(b"\n") == 300_000


def test_export_lines_of_no_row_writes_an_empty_file(tmp_path):
    with Warehouse(":memory:") as wh:
        wh.export_lines("SELECT 'x' AS line WHERE false", None, tmp_path / "empty.txt")
    assert (tmp_path / "empty.txt").read_bytes() == b""


@pytest.mark.parametrize("kind", [pa.string(), pa.large_string(), pa.string_view()])
def test_text_lines_of_sliced_arrays(kind):
    values = pa.array(["a", "", None, "bb", "é c"], type=kind)
    assert bytes(text_lines(values)) == b"a\n\n\nbb\n\xc3\xa9 c\n"
    assert bytes(text_lines(values.slice(3))) == b"bb\n\xc3\xa9 c\n"
    assert bytes(text_lines(values.slice(1, 2))) == b"\n\n"
    assert bytes(text_lines(values.slice(5))) == b""


def test_text_lines_refuses_other_types():
    with pytest.raises(TypeError, match="cast in the query"):
        text_lines(pa.array([1, 2]))
