"""Full rankings in NumPy, for the SQL functions that rank every document for every query of a part of the
queries (bm25_full_ranking: rankhouse/bm25.py; ranked_cosines, below): one sort of 64-bit keys per query,
each key a document's score as a whole number (its order) above its position, so that equal scores are
ranked by position, that is by doc_row ascending (the seed order: sql/macros/ranking.sql's seed_order),
and any sort gives that order (the keys are distinct). A window sort in DuckDB took three to four times as
long (docs/performance.md).

The functions are vectorized (DuckDB hands them Arrow arrays, a chunk of rows at a time): each row is a
part of the queries, and its result is the part's ranking as parallel lists (query_row, doc_row, score,
rank), query by query and rank by rank, which the model unnests.
"""

from __future__ import annotations

import threading

import duckdb
import numpy as np
import pyarrow as pa

from rankhouse.arrays import NUMPY_TYPES, int64_array, numpy_array, numpy_numbers, vector_array


def numbers(array: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """An int32, int64, float32 or float64 array of a function's input as a NumPy array over its buffer
    (numpy_numbers), a NULL among them refused.

    >>> numbers(pa.chunked_array([[1, 2], [3]])).tolist(), numbers(pa.array([0.5, 1.5], pa.float32()).slice(1)).tolist()
    ([1, 2, 3], [1.5])
    """
    array = array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array
    if array.null_count:
        raise ValueError("a NULL where the function takes numbers")
    return numpy_numbers(array)


def values(array: pa.Array, dtype: type) -> np.ndarray:
    """The values of a list array (one level), as a NumPy array of `dtype`, from its first list's start."""
    return numbers(array.flatten()).astype(dtype, copy=False)


def fields(array: pa.StructArray) -> dict[str, pa.Array]:
    """A struct array's fields by name (flatten: a slice's own rows, where field() would not be)."""
    return {array.type.field(i).name: child for i, child in enumerate(array.flatten())}


def offsets(array: pa.Array) -> np.ndarray:
    """A list array's offsets, from 0 (the array may be a slice)."""
    found = numbers(array.offsets).astype(np.int64)
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
    rows = np.empty((n, documents), dtype=NUMPY_TYPES[columns[0][1]])
    rows[:] = query_rows.astype(rows.dtype)[:, None]
    ranks = np.empty((n, documents), dtype=NUMPY_TYPES[columns[3][1]])
    ranks[:] = np.arange(1, documents + 1, dtype=ranks.dtype)
    return [rows.ravel(), doc_rows.astype(NUMPY_TYPES[columns[1][1]], copy=False).ravel(),
            scores.astype(NUMPY_TYPES[columns[2][1]], copy=False).ravel(), ranks.ravel()]  # fmt: skip


def empty(columns: tuple[tuple[str, pa.DataType], ...]) -> list[np.ndarray]:
    """No ranked pair (a part without queries or documents): empty lists, which unnest to no row."""
    return [np.empty(0, NUMPY_TYPES[kind]) for _, kind in columns]


def struct_of_lists(results: list[list[np.ndarray]], columns: tuple[tuple[str, pa.DataType], ...]) -> pa.Array:
    """One struct of parallel lists per result (a row of the function's input), built over the NumPy
    buffers (numpy_array)."""
    bounds = np.zeros(len(results) + 1, dtype=np.int64)
    np.cumsum([len(r[0]) for r in results], out=bounds[1:])
    children = []
    for column, (_, kind) in enumerate(columns):
        parts = [r[column] for r in results] or [np.empty(0, NUMPY_TYPES[kind])]
        flat = (parts[0] if len(parts) == 1 else np.concatenate(parts)).astype(NUMPY_TYPES[kind], copy=False)
        child = numpy_array(flat)
        children.append(
            pa.LargeListArray.from_buffers(
                pa.large_list(kind), len(results), [None, pa.py_buffer(bounds)], children=[child]
            )
        )
    return pa.StructArray.from_arrays(children, names=[name for name, _ in columns])


# ranked_cosines: float32 inner products of unit vectors, every query's in the order of the documents' rows
SCORE_COLUMNS = (("query_row", pa.int64()), ("doc_row", pa.int64()), ("score", pa.float32()), ("rank", pa.int64()))


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


def duckdb_products(queries: np.ndarray, documents: np.ndarray) -> np.ndarray:
    """DuckDB's own list_inner_product of every query (a row of `queries`) with every document, as a
    (queries x documents) float32 matrix: the definition inner_products reproduces, computed by DuckDB on
    a private in-memory connection of one thread, one per calling thread (about half a microsecond a
    product; opening a connection takes longer than a probe's 20,000 products)."""
    con = getattr(_private, "con", None)
    if con is None:
        con = _private.con = duckdb.connect(":memory:", config={"threads": 1})
    for name, matrix in (("rh_q", queries), ("rh_d", documents)):
        rows = int64_array(np.arange(len(matrix)))
        con.register(name, pa.Table.from_arrays([rows, vector_array(matrix)], names=["i", "v"]))
    try:
        found = con.sql(
            "SELECT list_inner_product(q.v::FLOAT[], d.v::FLOAT[]) AS p FROM rh_q AS q CROSS JOIN rh_d AS d "
            "ORDER BY q.i, d.i"
        ).to_arrow_table()["p"]
    finally:
        con.unregister("rh_q")
        con.unregister("rh_d")
    products = numbers(found).astype(np.float32, copy=False)
    return products.reshape(len(queries), len(documents))


_private = threading.local()  # duckdb_products' connection in each thread that called it


def blas_products(queries: np.ndarray, documents: np.ndarray) -> np.ndarray:
    """queries x documents transposed, by this machine's BLAS (single precision)."""
    return np.matmul(queries, documents.T, dtype=np.float32)


PROBE_EDGE = 16  # documents at each end of the list whose products with every query the probe compares


def inner_products(queries: np.ndarray, documents: np.ndarray) -> np.ndarray:
    """Every query's inner product with every document (float32 rows of equal length), bit for bit
    DuckDB's list_inner_product: a chain of fused multiply-adds over the components in order, from 0
    (measured against it on DuckDB 2.0; docs/performance.md). BLAS's single-precision matrix product
    computes the same chains where its kernel runs one chain of fused multiply-adds per product over the
    whole depth (OpenBLAS on x86-64 with FMA, 384 components: every one of BANKING77's 30.8M products
    the same), in a hundredth of the time. Whether this machine's BLAS does is checked on every call,
    bit for bit against DuckDB's own (duckdb_products): the first and last query's products with every
    document, and every query's with the first and last PROBE_EDGE documents (so every row and column a
    kernel of its own may compute, at the matrix's edges or where threads split it, is probed). If any
    differs, every product is DuckDB's own: a kernel of another order changes most products (in 82 to
    92% of them, measured), so a probe of thousands catches it.

    >>> q = np.array([[0.6, 0.8]], dtype=np.float32); d = np.array([[1.0, 0.0], [0.8, 0.6]], dtype=np.float32)
    >>> inner_products(q, d).tolist() == duckdb_products(q, d).tolist()
    True
    """
    products = blas_products(queries, documents)
    rows = sorted({0, len(queries) - 1})
    columns = [
        *range(min(PROBE_EDGE, len(documents))),
        *range(max(PROBE_EDGE, len(documents) - PROBE_EDGE), len(documents)),
    ]
    agree = np.array_equal(products[rows].view(np.uint32), duckdb_products(queries[rows], documents).view(np.uint32))
    agree = agree and np.array_equal(
        products[:, columns].view(np.uint32), duckdb_products(queries, documents[columns]).view(np.uint32)
    )
    return products if agree else duckdb_products(queries, documents)


def _vectors(lists: pa.Array, count: int, what: str) -> np.ndarray:
    """A list of `count` float vectors of one length as a (count x length) float32 matrix."""
    if len(lists) != count or lists.null_count:
        raise ValueError(f"ranked_cosines: not one vector for every {what}")
    bounds = offsets(lists)
    length = int(bounds[1]) if count else 0
    if np.any(np.diff(bounds) != length):
        raise ValueError(f"ranked_cosines: the {what} vectors are not all of one length")
    flat = lists.flatten()
    if flat.null_count:
        raise ValueError(f"ranked_cosines: a {what} vector has a NULL component")
    return numbers(flat).astype(np.float32, copy=False).reshape(count, length)


def ranked_cosines_udf(
    query_rows: pa.Array, query_vectors: pa.Array, doc_rows: pa.Array, doc_vectors: pa.Array
) -> pa.Array:
    """The SQL function ranked_cosines(query_rows BIGINT[], query_vectors FLOAT[][], doc_rows BIGINT[],
    doc_vectors FLOAT[][]) (its signature: rankhouse/registry.py): per row, its queries' full rankings by the inner
    product of their vectors with the documents' (inner_products: list_inner_product's bits), descending;
    the doc_rows must be ascending, so that equal products are ranked by doc_row."""
    results = []
    for i in range(len(query_rows)):
        rows, queries, docs, documents = query_rows[i], query_vectors[i], doc_rows[i], doc_vectors[i]
        if not all(x.is_valid for x in (rows, queries, docs, documents)):  # no query or no document: no pair
            results.append(empty(SCORE_COLUMNS))
            continue
        rows = numbers(rows.values)
        docs = numbers(docs.values).astype(np.int64)
        if np.any(np.diff(docs) <= 0):
            raise ValueError("ranked_cosines: the doc_rows are not ascending")
        query_matrix = _vectors(queries.values, len(rows), "query")
        document_matrix = _vectors(documents.values, len(docs), "document")
        if query_matrix.shape[1] != document_matrix.shape[1]:
            raise ValueError("ranked_cosines: the query and document vectors differ in length")
        matrix = inner_products(query_matrix, document_matrix)
        keys = float_order(matrix)
        positions = sort_descending(keys, position_bits(len(docs)))
        ranked = np.take_along_axis(matrix, positions, axis=1)
        results.append(ranking_lists(rows, docs[positions], ranked, SCORE_COLUMNS))
    return struct_of_lists(results, SCORE_COLUMNS)
