"""Where each query's lines are in a run file, found while the file is read: raw.run_blocks.

Nearly every TREC run file lists each query's documents together, already in trec_eval's order (score
descending, then docno descending). The fast reader (loaders/trec.py) hands every parsed chunk of a
run to `QueryBlocks.add`, which finds, with vectorised comparisons of neighbouring lines, the block of
consecutive lines each query occupies and whether the block is in that order, comparing scores as
doubles (trec_eval 10) and as 32-bit floats (trec_eval 9, pytrec_eval); a query listed in two places is
in no order. Every query of a run has its row (the general reader's too, all in no order). The blocks
are kept in Arrow and numpy arrays, a few dozen bytes each, up to BLOCKS_MEMORY: a run with more (tens
of millions of queries, or queries in many places) is stored as the general reader's is.
run_ranking (models/staging/run_ranking.sql) ranks the lines of a block in order by their position in
it (line - first_line + 1), and sorts only the others: the same ranks, without sorting every line of a
large run.

On the way, `add` proves that no query lists a document twice where it can (`distinct`): it hashes each
line's docno and looks for a hash repeated within a block (each hash mixed with its block's number; the
keys that share a bucket with another are sorted, a few percent of them). Distinct hashes are distinct
docnos; so when every query is one block and no block repeats a hash, no (qid, docno) repeats, and the
loader need not sort the hashes of every line of the run in DuckDB (REPEATED_HASHES: 1.4-1.7 CPU-seconds
at 10M lines, against 0.4 here, docs/performance.md). A repeated hash (a repeated docno, or two docnos
with one hash), a query in two places or a block too long to carry across chunks (TAIL_LIMIT) proves
nothing, and the loader checks in DuckDB as before.

    >>> import pyarrow as pa
    >>> blocks = QueryBlocks()
    >>> blocks.add(pa.array(["q1", "q1", "q2"]), pa.array(["d1", "d2", "d3"]), pa.array([2.0, 1.0, 0.5]), 1)
    >>> blocks.rows()
    [('q1', 1, 2, True, True), ('q2', 3, 1, True, True)]
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankhouse.arrays import int64_array, numpy_numbers

FLOAT_MAX = float(np.finfo(np.float32).max)  # DuckDB refuses to cast a larger double to FLOAT


# What a run's blocks may hold in memory as it is read (about 25 bytes a block, mostly the qid); a file
# with more blocks (a query in many places, or tens of millions of queries) is stored as the general
# reader's is, every query in no order, so that a load's memory does not grow with its file.
BLOCKS_MEMORY = 1 << 28
# The most lines of one block whose docno hashes are carried from a chunk to the next (8 bytes a line):
# a longer block leaves the repeated documents to the loader's check in DuckDB.
TAIL_LIMIT = 1 << 22
HASH_BASE = np.uint64(0x9E3779B97F4A7C15)  # odd: a byte's weight is never a multiple of 2**64
BLOCK_MIX = np.uint64(0xC2B2AE3D27D4EB4F)  # spreads a block's number over the bits of its hashes
PADDED_WIDTH = 32  # the longest docnos (bytes) that _hashes pads to one width, a chunk's copy at most 4x


class QueryBlocks:
    """The blocks of a run file's lines, one per query, built chunk by chunk in file order (`add`), and
    kept as Arrow and numpy arrays (not Python objects) while `kept`."""

    def __init__(self) -> None:
        # per chunk: the first line of its first block, and each block's qid, lines and orders
        self._parts: list[tuple[int, pa.Array, np.ndarray, np.ndarray, np.ndarray]] = []
        self._bytes = 0
        self._last: tuple[str, str, float] | None = None  # the previous chunk's last (qid, docno, score)
        self._floats_fit = True
        self.kept = True  # False once the blocks outgrew BLOCKS_MEMORY (and were dropped)
        self._tail = np.zeros(0, dtype=np.uint64)  # the docno hashes of the last block so far
        self._hashes_distinct = True  # no block repeats a docno hash; False also once a tail outgrew TAIL_LIMIT

    def add(self, qid: pa.Array, docno: pa.Array, score: pa.Array, first_line: int) -> None:
        """The next chunk of the file: its lines' qid, docno and score (doubles), the first of them at
        line `first_line` (lines are consecutive: the fast reader takes no blank or comment line)."""
        rows = len(qid)
        if rows == 0 or not self.kept:
            return
        qid, docno = _plain(qid), _plain(docno)
        scores = numpy_numbers(score)
        with np.errstate(over="ignore"):  # a score beyond float32 becomes inf here; _floats_fit records it
            floats = scores.astype(np.float32)
        self._floats_fit &= bool(np.all(np.abs(scores) <= FLOAT_MAX))
        runs = pc.run_end_encode(qid)  # one run of equal qids per block: its values and where it ends
        qids = runs.values
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
        double = np.add.reduceat(np.append(out_of_double, False), starts) == 0
        single = np.add.reduceat(np.append(out_of_float, False), starts) == 0
        first_qid, first_docno, first_score = qids[0].as_py(), docno[0].as_py(), float(scores[0])
        continues = self._last is not None and self._last[0] == first_qid
        if self._hashes_distinct:
            self._check_hashes(docno, starts, lengths, continues)
        if continues:  # the chunk's first block goes on with the previous chunk's last block
            _, last_docno, last_score = self._last
            after = last_docno > first_docno
            _, _, last_lines, last_double, last_single = self._parts[-1]
            last_lines[-1] += lengths[0]
            last_double[-1] &= bool(_before(last_score, first_score, after)) and double[0]
            last_single[-1] &= bool(_before(np.float32(last_score), np.float32(first_score), after)) and single[0]
        skip = 1 if continues else 0
        if len(qids) > skip:
            part = (first_line + int(starts[skip]), qids.slice(skip), lengths[skip:], double[skip:], single[skip:])
            self._parts.append(part)
            self._bytes += sum(column.nbytes for column in part[1:])
        self._last = (qids[-1].as_py(), docno[rows - 1].as_py(), float(scores[rows - 1]))
        if self._bytes > BLOCKS_MEMORY:
            self.kept, self._parts = False, []

    def _check_hashes(self, docno: pa.Array, starts: np.ndarray, lengths: np.ndarray, continues: bool) -> None:
        """Look for a docno hash repeated within a block of this chunk (its first block with the previous
        chunk's last if it `continues` it), and keep the hashes of its last block for the next chunk."""
        if docno.type != pa.string():  # _hashes reads 32-bit offsets
            self._hashes_distinct = False
            return
        hashes = _hashes(docno)
        block = np.repeat(np.arange(len(starts), dtype=np.uint64), lengths)
        if continues:  # the tail is block 0 of this chunk too
            hashes, block = np.concatenate((self._tail, hashes)), np.concatenate((np.zeros_like(self._tail), block))
        if _repeats(hashes ^ (block * BLOCK_MIX)):
            self._hashes_distinct = False
            return
        last = len(hashes) - int(lengths[-1]) - (len(self._tail) if continues and len(starts) == 1 else 0)
        self._tail = hashes[last:]
        if len(self._tail) > TAIL_LIMIT:
            self._hashes_distinct, self._tail = False, self._tail[:0]

    def distinct(self) -> bool:
        """Whether the lines added so far are proved to repeat no (qid, docno): every query is one block,
        and no block repeats a docno hash (blocks kept)."""
        if not (self.kept and self._hashes_distinct):
            return False
        qids = pa.chunked_array([part[1] for part in self._parts], pa.string())
        return pc.count_distinct(qids).as_py() == len(qids)

    def batches(self) -> Iterator[pa.RecordBatch]:
        """The blocks, in file order, as Arrow batches with the columns of raw.run_blocks (but run_id): a
        query listed in two places has a row for each (store_blocks merges them). float_order is false
        everywhere if a score does not fit in a 32-bit float (DuckDB's cast refuses it)."""
        for first, qids, lines, double, single in self._parts:
            firsts = first + np.concatenate(([0], np.cumsum(lines[:-1]))).astype(np.int64)
            columns = [qids, int64_array(firsts), int64_array(lines), _booleans(double), _booleans(single)]
            if not self._floats_fit:
                columns[4] = _booleans(np.zeros(len(single), dtype=bool))
            yield pa.RecordBatch.from_arrays(columns, schema=BLOCKS)

    def reader(self) -> pa.RecordBatchReader:
        """batches() as a stream, for DuckDB."""
        return pa.RecordBatchReader.from_batches(BLOCKS, self.batches())

    def rows(self) -> list[tuple[str, int, int, bool, bool]]:
        """(qid, first_line, lines, double_order, float_order) of every query, in the order of its first
        line: double_order and float_order say that its `lines` lines are the consecutive lines from
        first_line, in trec_eval's order. A query listed in two places is in no order (as store_blocks
        stores it)."""
        queries: dict[str, list] = {}
        for batch in self.batches():
            for row in zip(*(column.to_pylist() for column in batch.columns)):
                if row[0] in queries:
                    query = queries[row[0]]
                    query[2] += row[2]
                    query[3] = query[4] = False
                else:
                    queries[row[0]] = list(row)
        return [tuple(query) for query in queries.values()]


BLOCKS = pa.schema(
    [("qid", pa.string()), ("first_line", pa.int64()), ("lines", pa.int64()), ("double_order", pa.bool_()),
     ("float_order", pa.bool_())]
)  # fmt: skip


def _plain(array: pa.Array | pa.ChunkedArray) -> pa.Array:
    """An array as one contiguous array (a chunked column's chunks combined)."""
    return array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array


# Arrow arrays from Python values and back, through their buffers: pa.array and to_numpy import pandas
# on their first call, on the way of every run's load (docs/performance.md).


def _booleans(values: np.ndarray) -> pa.Array:
    """A boolean array of `values`."""
    flags = np.asarray(values, dtype=bool)
    return pa.Array.from_buffers(pa.bool_(), len(flags), [None, pa.py_buffer(np.packbits(flags, bitorder="little"))])


def _hashes(strings: pa.Array) -> np.ndarray:
    """A 64-bit hash of each string of a string array without nulls: equal strings hash equal, so strings
    with different hashes differ. Strings of at most PADDED_WIDTH bytes are padded to one width and read as
    64-bit words; longer ones are hashed byte by byte (_byte_hashes)."""
    if not len(strings):
        return np.zeros(0, np.uint64)
    width = pc.max(pc.binary_length(strings)).as_py()
    words = -(-max(width, 1) // 8)
    if width > PADDED_WIDTH:
        return _byte_hashes(strings)
    padded = pc.ascii_rpad(strings, words * 8, " ")  # bytes: equal strings stay equal
    offsets = np.frombuffer(padded.buffers()[1], np.int32, count=len(padded) + 1, offset=padded.offset * 4)
    if int(offsets[-1] - offsets[0]) != len(padded) * words * 8:  # a string not padded to the width
        return _byte_hashes(strings)
    matrix = np.frombuffer(padded.buffers()[2], np.uint64, count=len(padded) * words, offset=int(offsets[0]))
    matrix = matrix.reshape(len(padded), words)
    hashes = matrix[:, 0] * HASH_BASE
    for column in range(1, words):
        hashes = (hashes ^ matrix[:, column]) * HASH_BASE
    hashes ^= numpy_numbers(pc.binary_length(strings)).astype(np.uint64)  # "d1" and "d1 " apart
    # a product's low bits depend on the low bits alone: fold the high bits down (murmur3's finaliser)
    hashes ^= hashes >> np.uint64(33)
    hashes *= np.uint64(0xFF51AFD7ED558CCD)
    return hashes ^ (hashes >> np.uint64(33))


def _byte_hashes(strings: pa.Array) -> np.ndarray:
    """_hashes byte by byte (a polynomial of the bytes), for strings of any length."""
    offsets = np.frombuffer(strings.buffers()[1], np.int32, count=len(strings) + 1, offset=strings.offset * 4)
    first = int(offsets[0])
    starts, lengths = offsets[:-1] - first, np.diff(offsets)
    data = strings.buffers()[2]
    raw = np.frombuffer(data, np.uint8)[first : int(offsets[-1])] if data is not None else np.zeros(0, np.uint8)
    weights = np.cumprod(np.full(max(int(lengths.max(initial=0)), 1), HASH_BASE, dtype=np.uint64))
    terms = (raw.astype(np.uint64) + np.uint64(1)) * weights[np.arange(len(raw)) - np.repeat(starts, lengths)]
    hashes = np.add.reduceat(np.append(terms, np.uint64(0)), starts)
    hashes[lengths == 0] = 0  # reduceat gives an empty string the next string's first term
    return hashes


def _repeats(keys: np.ndarray) -> bool:
    """Whether a value repeats in `keys` (well-mixed 64-bit values): the values that share a bucket of their
    top bits, then of the bits below, with another (bincount, no sort), are sorted and compared."""
    bits = max(12, min(22, len(keys).bit_length()))
    for shift in (64 - bits, 64 - 2 * bits):
        if len(keys) < 4096:
            break
        buckets = ((keys >> np.uint64(shift)) & np.uint64((1 << bits) - 1)).astype(np.intp)
        keys = keys[np.bincount(buckets, minlength=1 << bits)[buckets] > 1]
    keys = np.sort(keys)
    return bool(np.any(keys[1:] == keys[:-1]))


def _before(score: np.ndarray | float, next_score: np.ndarray | float, docno_after: np.ndarray | bool):  # noqa: ANN202
    """Whether a line with `score` comes before the next line, `next_score`, in trec_eval's order (score
    descending, then docno descending; `docno_after`: the first docno is the greater): element-wise
    for arrays."""
    return (score > next_score) | ((score == next_score) & docno_after)
