"""BM25's full ranking in NumPy: the SQL function bm25_full_ranking that models/retrieval/bm25_ranking.sql
calls, one call per part of the queries.

It computes what the SQL of bm25_sums and full_ranking computed (sql/macros/bm25.sql,
sql/macros/ranking.sql), to the bit: a pair's score is the sum of the document's weights (whole 1e-12
units, models.bm25_weights) over the query's distinct terms, divided by 1e12; 0 when they share no term.
The sums of whole units are exact in any order (below 2^53 units: bm25_query_ceilings' audit), so they
are the same doubles as DuckDB's `sum(CAST(weight_units AS DOUBLE)) / 1e12`. Each query's documents are
then ranked by score descending, exact ties by doc_row ascending (seed 004), with one sort of 64-bit keys
per query (rankhouse/ranking.py: score units above the doc_row; a slower two-key sort where they do not
fit in 63 bits). In SQL the same took a GROUP BY of 30.8M pairs into arrays and a window sort
(docs/performance.md).

The function's arguments per row are a part's queries with their term indices, and every term's
postings (doc_rows and weight units, by term index); it returns the part's ranking as parallel lists.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from rankhouse.ranking import (
    empty,
    fields,
    numbers,
    offsets,
    position_bits,
    ranking_lists,
    sort_descending,
    struct_of_lists,
    values,
)

UNITS = 1e12  # weight units per score point (bm25_weight_units)
EXACT_UNITS = 1 << 52  # below this many units (score < 4,503) distinct unit sums are distinct doubles
BLOCK = 64  # queries summed and sorted at a time: 64 x N doubles (5 MB at N = 10,003)

COLUMNS = (("query_row", pa.int32()), ("doc_row", pa.int32()), ("score", pa.float64()), ("rank", pa.int64()))


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
    bits = position_bits(documents)
    limit = min(EXACT_UNITS, 1 << (63 - bits))  # unit sums below this fit in a key beside the doc_row
    order = np.empty((n, documents), dtype=np.int64)
    scores = np.empty((n, documents), dtype=np.float64)
    if len(posting_docs) and (posting_docs.min() < 0 or posting_docs.max() >= documents):
        raise ValueError(f"bm25_full_ranking: a doc_row outside 0..{documents - 1}")
    weights = posting_units.astype(np.float64)  # whole units: exact below 2^53
    starts, terms = posting_offsets.tolist(), query_terms.tolist()
    bounds = term_offsets.tolist()
    for first in range(0, n, BLOCK):
        last = min(n, first + BLOCK)
        sums = np.zeros((last - first, documents), dtype=np.float64)
        for row, query in enumerate(range(first, last)):
            spans = [(starts[t], starts[t + 1]) for t in terms[bounds[query] : bounds[query + 1]]]
            if spans:  # the sum of the query's terms' weights per document, exact in any order
                docs = np.concatenate([posting_docs[a:b] for a, b in spans])
                units = np.concatenate([weights[a:b] for a, b in spans])
                sums[row] = np.bincount(docs, weights=units, minlength=documents)
        keys = sums.astype(np.int64)
        if int(keys.max()) < limit:  # distinct unit sums are distinct scores: rank by units
            order[first:last] = sort_descending(keys, bits)
            scores[first:last] = keys
            scores[first:last] /= UNITS
        else:  # score descending, then doc_row ascending, as two keys
            doc_range = np.arange(documents)
            ranked = np.stack([np.lexsort((doc_range, -row / UNITS)) for row in sums])
            order[first:last] = ranked
            scores[first:last] = np.take_along_axis(sums, ranked, axis=1) / UNITS
    return tuple(ranking_lists(query_rows, order, scores, COLUMNS))


def full_ranking_udf(queries: pa.Array, postings: pa.Array, documents: pa.Array) -> pa.Array:
    """The SQL function bm25_full_ranking(queries, postings, documents) (its signature: rankhouse/registry.py): per
    row, the full ranking (rank_part) of a part's queries, each with the indices of its terms in
    `postings`, every term's documents and weight units, over `documents` documents numbered from 0."""
    results = []
    for i in range(len(queries)):
        part, terms, n = queries[i], postings[i], documents[i].as_py()
        if not part.is_valid or n is None:  # no query or no document: no pair
            results.append(empty(COLUMNS))
            continue
        if not terms.is_valid:  # no term in any document: every score 0
            terms = pa.array(
                [[]], pa.list_(pa.struct([("doc_rows", pa.list_(pa.int32())), ("weight_units", pa.list_(pa.int64()))]))
            )[0]
        part, terms = fields(part.values), fields(terms.values)  # a query, a term per row
        query_terms, doc_rows, weight_units = part["terms"], terms["doc_rows"], terms["weight_units"]
        if query_terms.null_count or doc_rows.null_count or weight_units.null_count:
            raise ValueError("bm25_full_ranking: a query or a term without its list")
        docs, units = values(doc_rows, np.int64), values(weight_units, np.int64)
        if len(docs) != len(units) or not np.array_equal(offsets(doc_rows), offsets(weight_units)):
            raise ValueError("bm25_full_ranking: a term's doc_rows and weight_units differ in length")
        ranking = rank_part(
            numbers(part["query_row"]),
            offsets(query_terms),
            values(query_terms, np.int64),
            offsets(doc_rows),
            docs,
            units,
            int(n),
        )
        results.append(ranking)
    return struct_of_lists(results, COLUMNS)
