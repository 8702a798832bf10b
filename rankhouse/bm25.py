"""BM25's full ranking in NumPy: the SQL function bm25_full_ranking that models/retrieval/bm25_ranking.sql
calls, one call per part of the queries.

It computes what the SQL of bm25_sums and full_ranking computed (sql/macros/bm25.sql,
sql/macros/ranking.sql), to the bit: a pair's score is the sum of the document's weights (whole 1e-12
units, models.bm25_weights) over the query's distinct terms, divided by 1e12; 0 when they share no term.
The sums of whole units are exact in any order (below 2^53 units: bm25_query_ceilings' audit), so they
are the same doubles as DuckDB's `sum(CAST(weight_units AS DOUBLE)) / 1e12`. Each query's documents are
then ranked by score descending, exact ties by doc_row ascending (seed 004), with one sort of 64-bit keys
per query (score units and doc_row in one number; a slower two-key sort where they do not fit in 63 bits).
In SQL the same took a GROUP BY of 30.8M pairs into arrays and a window sort (docs/performance.md).

The function is vectorized (DuckDB hands it Arrow arrays): its arguments per row are a part's query rows,
each query's term indices, and every term's postings (doc_rows and weight units, by term index); it
returns the part's ranking as four parallel lists (query_row, doc_row, score, rank) that the model unnests.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

UNITS = 1e12  # weight units per score point (bm25_weight_units)
EXACT_UNITS = 1 << 52  # below this many units (score < 4,503) distinct unit sums are distinct doubles
BLOCK = 64  # queries summed and sorted at a time: 64 x N doubles (5 MB at N = 10,003)

RETURNS = "STRUCT(query_row INTEGER[], doc_row INTEGER[], score DOUBLE[], rank BIGINT[])"


def _values(array: pa.Array, dtype: type) -> np.ndarray:
    """The values of a list array (one level), as a NumPy array of `dtype`, from its first list's start."""
    return array.flatten().to_numpy(zero_copy_only=False).astype(dtype, copy=False)


def _fields(array: pa.StructArray) -> dict[str, pa.Array]:
    """A struct array's fields by name (flatten: a slice's own rows, where field() would not be)."""
    return {array.type.field(i).name: child for i, child in enumerate(array.flatten())}


def _offsets(array: pa.Array) -> np.ndarray:
    """A list array's offsets, from 0 (the array may be a slice)."""
    offsets = array.offsets.to_numpy(zero_copy_only=False).astype(np.int64)
    return offsets - offsets[0]


def rank_part(
    query_rows: np.ndarray,
    term_offsets: np.ndarray,
    query_terms: np.ndarray,
    posting_offsets: np.ndarray,
    posting_docs: np.ndarray,
    posting_units: np.ndarray,
    documents: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The full ranking of some queries: (query_row, doc_row, score, rank), query by query, rank by rank.

    Query i's term indices are query_terms[term_offsets[i]:term_offsets[i + 1]]; term t's documents and
    weight units are posting_docs and posting_units[posting_offsets[t]:posting_offsets[t + 1]].

    >>> r = rank_part(np.array([7]), np.array([0, 2]), np.array([0, 1]), np.array([0, 2, 3]),
    ...               np.array([0, 2, 2]), np.array([5, 3, 2]), 4)
    >>> [x.tolist() for x in r]
    [[7, 7, 7, 7], [0, 2, 1, 3], [5e-12, 5e-12, 0.0, 0.0], [1, 2, 3, 4]]
    """
    n = len(query_rows)
    bits = max(1, int(documents - 1).bit_length())
    doc_range = np.arange(documents, dtype=np.int64)
    order = np.empty((n, documents), dtype=np.int32)
    scores = np.empty((n, documents), dtype=np.float64)
    if len(posting_docs) and (posting_docs.min() < 0 or posting_docs.max() >= documents):
        raise ValueError(f"bm25_full_ranking: a doc_row outside 0..{documents - 1}")
    for start in range(0, n, BLOCK):
        stop = min(n, start + BLOCK)
        terms = query_terms[term_offsets[start] : term_offsets[stop]]
        owner = np.repeat(np.arange(stop - start, dtype=np.int64), np.diff(term_offsets[start : stop + 1]))
        lengths = posting_offsets[terms + 1] - posting_offsets[terms]
        total = int(lengths.sum())
        # the postings of every (query, term) of the block, one after the other
        shift = np.repeat(posting_offsets[terms] - (np.cumsum(lengths) - lengths), lengths)
        at = shift + np.arange(total, dtype=np.int64)
        pairs = np.repeat(owner * documents, lengths) + posting_docs[at]
        # whole units summed as doubles: exact (below 2^53), so the same doubles in any order
        sums = np.bincount(pairs, weights=posting_units[at].astype(np.float64), minlength=(stop - start) * documents)
        sums = sums.reshape(stop - start, documents)
        top = float(sums.max()) if sums.size else 0.0
        if top < min(EXACT_UNITS, 1 << (63 - bits)):
            # one key per pair: units descending, then doc_row ascending; unique, so any sort gives this order
            units = sums.astype(np.int64)
            keys = ((np.int64((1 << (63 - bits)) - 1) - units) << bits) | doc_range
            keys.sort(axis=1)
            ranked = keys & np.int64((1 << bits) - 1)
        else:  # score descending, then doc_row ascending, as two keys
            ranked = np.stack([np.lexsort((doc_range, -row / UNITS)) for row in sums])
        order[start:stop] = ranked
        scores[start:stop] = np.take_along_axis(sums, ranked, axis=1) / UNITS
    rows = np.repeat(query_rows.astype(np.int32), documents)
    ranks = np.tile(np.arange(1, documents + 1, dtype=np.int64), n)
    return rows, order.ravel(), scores.ravel(), ranks


QUERIES = "STRUCT(query_row INTEGER, terms INTEGER[])[]"
POSTINGS = "STRUCT(doc_rows INTEGER[], weight_units BIGINT[])[]"
PARAMETERS = (QUERIES, POSTINGS, "BIGINT")


def full_ranking_udf(queries: pa.Array, postings: pa.Array, documents: pa.Array) -> pa.Array:
    """The SQL function bm25_full_ranking(queries, postings, documents) (signature: PARAMETERS, RETURNS): per
    row, the full ranking (rank_part) of a part's queries, each with the indices of its terms in
    `postings`, every term's documents and weight units, over `documents` documents numbered from 0."""
    results = []
    for i in range(len(queries)):
        part, terms, n = queries[i], postings[i], documents[i].as_py()
        if not part.is_valid or not terms.is_valid or n is None:
            raise ValueError("bm25_full_ranking: no queries, no postings or no document count")
        part, terms = _fields(part.values), _fields(terms.values)  # a query, a term per row
        query_terms, doc_rows, weight_units = part["terms"], terms["doc_rows"], terms["weight_units"]
        if query_terms.null_count or doc_rows.null_count or weight_units.null_count:
            raise ValueError("bm25_full_ranking: a query or a term without its list")
        docs = _values(doc_rows, np.int64)
        if len(docs) != len(weight_units.values) or not np.array_equal(_offsets(doc_rows), _offsets(weight_units)):
            raise ValueError("bm25_full_ranking: a term's doc_rows and weight_units differ in length")
        ranking = rank_part(
            part["query_row"].to_numpy(zero_copy_only=False),
            _offsets(query_terms),
            _values(query_terms, np.int64),
            _offsets(doc_rows),
            docs,
            _values(weight_units, np.int64),
            int(n),
        )
        results.append(ranking)
    return _struct(results)


COLUMNS = (("query_row", pa.int32(), np.int32), ("doc_row", pa.int32(), np.int32),
           ("score", pa.float64(), np.float64), ("rank", pa.int64(), np.int64))  # fmt: skip


def _struct(results: list[tuple[np.ndarray, ...]]) -> pa.Array:
    """Rows of four parallel lists as one Arrow struct array, built over the NumPy buffers (pa.array would
    import pandas)."""
    offsets = np.zeros(len(results) + 1, dtype=np.int64)
    np.cumsum([len(r[0]) for r in results], out=offsets[1:])
    columns = []
    for column, (_, kind, dtype) in enumerate(COLUMNS):
        flat = np.concatenate([r[column] for r in results]).astype(dtype, copy=False) if results else np.empty(0, dtype)
        child = pa.Array.from_buffers(kind, len(flat), [None, pa.py_buffer(flat)])
        columns.append(
            pa.LargeListArray.from_buffers(
                pa.large_list(kind), len(results), [None, pa.py_buffer(offsets)], children=[child]
            )
        )
    return pa.StructArray.from_arrays(columns, names=[name for name, _, _ in COLUMNS])
