"""Where each query's lines are in a run file, found while the file is read: raw.run_blocks.

Nearly every TREC run file lists each query's documents together, already in trec_eval's order (score
descending, then docno descending). The fast reader (loaders/trec.py) hands every parsed chunk of a
run to `QueryBlocks.add`, which finds, with vectorised comparisons of neighbouring lines, the block of
consecutive lines each query occupies and whether the block is in that order, comparing scores as
doubles (trec_eval 10) and as 32-bit floats (trec_eval 9, pytrec_eval); a query listed in two places is
in no order. Every query of a run has its row (the general reader's too, all in no order).
run_ranking (models/staging/run_ranking.sql) ranks the lines of a block in order by their position in
it (line - first_line + 1), and sorts only the others: the same ranks, without sorting every line of a
large run.

    >>> import pyarrow as pa
    >>> blocks = QueryBlocks()
    >>> blocks.add(pa.array(["q1", "q1", "q2"]), pa.array(["d1", "d2", "d3"]), pa.array([2.0, 1.0, 0.5]), 1)
    >>> blocks.rows()
    [('q1', 1, 2, True, True), ('q2', 3, 1, True, True)]
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankhouse.loaders.lines import int64_array, numpy_numbers

FLOAT_MAX = float(np.finfo(np.float32).max)  # DuckDB refuses to cast a larger double to FLOAT


class QueryBlocks:
    """The blocks of a run file's lines, one per query, built chunk by chunk in file order (`add`)."""

    def __init__(self) -> None:
        self._qids: list[str] = []
        self._first: list[int] = []
        self._lines: list[int] = []
        self._double: list[bool] = []
        self._float: list[bool] = []
        self._last: tuple[str, str, float] | None = None  # the previous chunk's last (qid, docno, score)
        self._floats_fit = True

    def add(self, qid: pa.Array, docno: pa.Array, score: pa.Array, first_line: int) -> None:
        """The next chunk of the file: its lines' qid, docno and score (doubles), the first of them at
        line `first_line` (lines are consecutive: the fast reader takes no blank or comment line)."""
        rows = len(qid)
        if rows == 0:
            return
        qid, docno = _plain(qid), _plain(docno)
        scores = numpy_numbers(score)
        floats = scores.astype(np.float32)
        self._floats_fit &= bool(np.all(np.abs(scores) <= FLOAT_MAX))
        runs = pc.run_end_encode(qid)  # one run of equal qids per block: its values and where it ends
        qids = runs.values.to_pylist()
        starts = np.concatenate(([0], numpy_numbers(runs.run_ends)[:-1])).astype(np.int64)
        lengths = np.diff(np.append(starts, rows))
        # pair i: lines i and i + 1 of the chunk; the pair across a block boundary does not count. The
        # docnos decide only between equal scores (equal doubles are equal floats): compared there alone.
        docno_after = np.zeros(rows - 1, dtype=bool)
        tied = np.flatnonzero(floats[:-1] == floats[1:])
        if len(tied):
            # Arrow indices: take() would convert numpy ones with pa.array
            pairs = docno.take(int64_array(tied)), docno.take(int64_array(tied + 1))
            docno_after[tied] = numpy_numbers(pc.greater(*pairs))
        out_of_double = ~_before(scores[:-1], scores[1:], docno_after)
        out_of_float = ~_before(floats[:-1], floats[1:], docno_after)
        out_of_double[starts[1:] - 1] = out_of_float[starts[1:] - 1] = False
        # a block's pairs are those from its first line to its last but one (reduceat sums each block's)
        double_breaks = np.add.reduceat(np.append(out_of_double, False), starts)
        float_breaks = np.add.reduceat(np.append(out_of_float, False), starts)
        first_qid, first_docno, first_score = qids[0], docno[0].as_py(), float(scores[0])
        continues = self._last is not None and self._last[0] == first_qid
        if continues:  # the chunk's first block goes on with the previous chunk's last block
            _, last_docno, last_score = self._last
            after = last_docno > first_docno
            self._lines[-1] += int(lengths[0])
            self._double[-1] &= bool(_before(last_score, first_score, after)) and not double_breaks[0]
            self._float[-1] &= (
                bool(_before(np.float32(last_score), np.float32(first_score), after)) and not float_breaks[0]
            )
        skip = 1 if continues else 0
        self._qids += qids[skip:]
        self._first += (starts[skip:] + first_line).tolist()
        self._lines += lengths[skip:].tolist()
        self._double += (double_breaks[skip:] == 0).tolist()
        self._float += (float_breaks[skip:] == 0).tolist()
        self._last = (qids[-1], docno[rows - 1].as_py(), float(scores[rows - 1]))

    def rows(self) -> list[tuple[str, int, int, bool, bool]]:
        """(qid, first_line, lines, double_order, float_order) of every query, in the order of its first
        line: double_order and float_order say that its `lines` lines are the consecutive lines from
        first_line, in trec_eval's order. A query listed in two places is in no order; float_order is false
        everywhere if a score does not fit in a 32-bit float (DuckDB's cast refuses it)."""
        queries: dict[str, list] = {}
        for row in zip(self._qids, self._first, self._lines, self._double, self._float):
            if row[0] in queries:
                query = queries[row[0]]
                query[2] += row[2]
                query[3] = query[4] = False
            else:
                queries[row[0]] = list(row)
        if not self._floats_fit:
            for query in queries.values():
                query[4] = False
        return [tuple(query) for query in queries.values()]

    def table(self) -> pa.Table:
        """rows() as an Arrow table with the columns of raw.run_blocks (but run_id)."""
        names = ("qid", "first_line", "lines", "double_order", "float_order")
        qids, first, lines, double, single = list(zip(*self.rows())) or [[] for _ in names]
        positions = [int64_array(np.fromiter(values, np.int64)) for values in (first, lines)]
        columns = [_strings(qids), *positions, _booleans(double), _booleans(single)]
        return pa.table(columns, names=names)


def _plain(array: pa.Array | pa.ChunkedArray) -> pa.Array:
    """An array as one contiguous array (a chunked column's chunks combined)."""
    return array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array


# Arrow arrays from Python values and back, through their buffers: pa.array and to_numpy import pandas
# on their first call, on the way of every run's load (docs/performance.md).


def _strings(values: Iterable[str]) -> pa.Array:
    """A large_string array of `values`."""
    encoded = [value.encode() for value in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(value) for value in encoded], out=offsets[1:])
    return pa.LargeStringArray.from_buffers(len(encoded), pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded)))


def _booleans(values: Iterable[bool]) -> pa.Array:
    """A boolean array of `values`."""
    flags = np.fromiter(values, dtype=bool)
    return pa.Array.from_buffers(pa.bool_(), len(flags), [None, pa.py_buffer(np.packbits(flags, bitorder="little"))])


def _before(score: np.ndarray | float, next_score: np.ndarray | float, docno_after: np.ndarray | bool):  # noqa: ANN202
    """Whether a line with `score` comes before the next line, `next_score`, in trec_eval's order (score
    descending, then docno descending; `docno_after`: the first docno is the greater): element-wise
    for arrays."""
    return (score > next_score) | ((score == next_score) & docno_after)
