"""Full rankings in NumPy, for the SQL functions that rank every document for every query of a part of the
queries (bm25_full_ranking: rankhouse/bm25.py; ranked_scores, below): one sort of 64-bit keys per query,
each key a document's score as a whole number (its order) above its position, so that equal scores are
ranked by position, that is by doc_row ascending (the seed order: sql/macros/ranking.sql's seed_order),
and any sort gives that order (the keys are distinct). A window sort in DuckDB took three to four times as
long (docs/performance.md).

The functions are vectorized (DuckDB hands them Arrow arrays, a chunk of rows at a time): each row is a
part of the queries, and its result is the part's ranking as parallel lists (query_row, doc_row, score,
rank), query by query and rank by rank, which the model unnests.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa


def values(array: pa.Array, dtype: type) -> np.ndarray:
    """The values of a list array (one level), as a NumPy array of `dtype`, from its first list's start."""
    return array.flatten().to_numpy(zero_copy_only=False).astype(dtype, copy=False)


def fields(array: pa.StructArray) -> dict[str, pa.Array]:
    """A struct array's fields by name (flatten: a slice's own rows, where field() would not be)."""
    return {array.type.field(i).name: child for i, child in enumerate(array.flatten())}


def offsets(array: pa.Array) -> np.ndarray:
    """A list array's offsets, from 0 (the array may be a slice)."""
    found = array.offsets.to_numpy(zero_copy_only=False).astype(np.int64)
    return found - found[0]


def sort_descending(keys: np.ndarray, bits: int) -> np.ndarray:
    """Rank each row of `keys` (whole numbers from 0 to 2^(63 - bits) - 1, one per position) by key
    descending, then position ascending; return the positions in that order, and leave `keys` holding
    the keys in that order.

    >>> keys = np.array([[3, 5, 5, 0]])
    >>> sort_descending(keys, 2).tolist(), keys.tolist()
    ([[1, 2, 0, 3]], [[5, 5, 3, 0]])
    """
    top = np.int64((1 << (63 - bits)) - 1)
    np.subtract(top, keys, out=keys)
    np.left_shift(keys, bits, out=keys)
    keys |= np.arange(keys.shape[1], dtype=np.int64)
    keys.sort(axis=1)
    positions = keys & np.int64((1 << bits) - 1)
    np.right_shift(keys, bits, out=keys)
    np.subtract(top, keys, out=keys)
    return positions


def position_bits(documents: int) -> int:
    """The bits a position among `documents` documents takes in a key.

    >>> position_bits(10003), position_bits(1)
    (14, 1)
    """
    return max(1, int(documents - 1).bit_length())


def ranking_lists(
    query_rows: np.ndarray, doc_rows: np.ndarray, scores: np.ndarray, columns: tuple[tuple[str, pa.DataType], ...]
) -> list[np.ndarray]:
    """A part's ranking as four flat arrays (query_row, doc_row, score, rank) of `columns`' types, from its
    queries' rows and the (queries x documents) doc_rows and scores in rank order."""
    n, documents = doc_rows.shape
    rows = np.empty((n, documents), dtype=_dtype(columns[0][1]))
    rows[:] = query_rows.astype(rows.dtype)[:, None]
    ranks = np.empty((n, documents), dtype=_dtype(columns[3][1]))
    ranks[:] = np.arange(1, documents + 1, dtype=ranks.dtype)
    return [rows.ravel(), doc_rows.astype(_dtype(columns[1][1]), copy=False).ravel(),
            scores.astype(_dtype(columns[2][1]), copy=False).ravel(), ranks.ravel()]  # fmt: skip


def _dtype(kind: pa.DataType) -> np.dtype:
    return np.dtype(
        {pa.int32(): np.int32, pa.int64(): np.int64, pa.float32(): np.float32, pa.float64(): np.float64}[kind]
    )


def empty(columns: tuple[tuple[str, pa.DataType], ...]) -> list[np.ndarray]:
    """No ranked pair (a part without queries or documents): empty lists, which unnest to no row."""
    return [np.empty(0, _dtype(kind)) for _, kind in columns]


def struct_of_lists(results: list[list[np.ndarray]], columns: tuple[tuple[str, pa.DataType], ...]) -> pa.Array:
    """One struct of parallel lists per result (a row of the function's input), built over the NumPy
    buffers (pa.array would import pandas)."""
    bounds = np.zeros(len(results) + 1, dtype=np.int64)
    np.cumsum([len(r[0]) for r in results], out=bounds[1:])
    children = []
    for column, (_, kind) in enumerate(columns):
        parts = [r[column] for r in results] or [np.empty(0, _dtype(kind))]
        flat = (parts[0] if len(parts) == 1 else np.concatenate(parts)).astype(_dtype(kind), copy=False)
        child = pa.Array.from_buffers(kind, len(flat), [None, pa.py_buffer(flat)])
        children.append(
            pa.LargeListArray.from_buffers(
                pa.large_list(kind), len(results), [None, pa.py_buffer(bounds)], children=[child]
            )
        )
    return pa.StructArray.from_arrays(children, names=[name for name, _ in columns])


# ranked_scores: float scores (cosines), every query's in the order of the documents' rows
SCORE_COLUMNS = (("query_row", pa.int64()), ("doc_row", pa.int64()), ("score", pa.float32()), ("rank", pa.int64()))
SCORES_RETURNS = "STRUCT(query_row BIGINT[], doc_row BIGINT[], score FLOAT[], rank BIGINT[])"
SCORES_PARAMETERS = ("BIGINT[]", "BIGINT[]", "FLOAT[][]")


def float_order(scores: np.ndarray) -> np.ndarray:
    """32-bit floats as whole numbers (int64) in the same order as DuckDB sorts them: -0.0 equal to 0.0,
    NaN above every number.

    >>> float_order(np.array([-1.0, -0.0, 0.0, 1.0, np.inf, np.nan], dtype=np.float32)).tolist()
    [1082130431, 2147483648, 2147483648, 3212836864, 4286578688, 4294967295]
    """
    bits = (scores + np.float32(0)).view(np.uint32)  # -0.0 + 0.0 is 0.0
    ordered = np.where(bits >> np.uint32(31), ~bits, bits | np.uint32(1 << 31)).astype(np.int64)
    ordered[np.isnan(scores)] = (1 << 32) - 1
    return ordered


def ranked_scores_udf(query_rows: pa.Array, doc_rows: pa.Array, scores: pa.Array) -> pa.Array:
    """The SQL function ranked_scores(query_rows BIGINT[], doc_rows BIGINT[], scores FLOAT[][]) (RETURNS
    SCORES_RETURNS): per row, its queries' full rankings; query i's scores are scores[i], one per document
    in the order of doc_rows, which must be ascending (so that equal scores are ranked by doc_row)."""
    results = []
    for i in range(len(query_rows)):
        rows, docs, lists = query_rows[i], doc_rows[i], scores[i]
        if not rows.is_valid or not docs.is_valid or not lists.is_valid:  # no query or no document: no pair
            results.append(empty(SCORE_COLUMNS))
            continue
        rows = rows.values.to_numpy(zero_copy_only=False)
        docs = docs.values.to_numpy(zero_copy_only=False).astype(np.int64)
        lists = lists.values
        if np.any(np.diff(docs) <= 0):
            raise ValueError("ranked_scores: the doc_rows are not ascending")
        if len(lists) != len(rows) or lists.null_count or np.any(np.diff(offsets(lists)) != len(docs)):
            raise ValueError("ranked_scores: not one score per document for every query")
        matrix = values(lists, np.float32).reshape(len(rows), len(docs))
        keys = float_order(matrix)
        positions = sort_descending(keys, position_bits(len(docs)))
        ranked = np.take_along_axis(matrix, positions, axis=1)
        results.append(ranking_lists(rows, docs[positions], ranked, SCORE_COLUMNS))
    return struct_of_lists(results, SCORE_COLUMNS)
