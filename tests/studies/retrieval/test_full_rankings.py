"""The full rankings computed in NumPy (bm25_ranking: rankhouse/bm25.py; dense_ranking: rankhouse/ranking.py)
are the rows the SQL window gave (full_ranking over bm25_scores and dense_scores: score descending, ties by
doc_row), to the bit, on a small corpus with many exact ties: repeated texts, and vectors of a few distinct
values. On BANKING77 itself the recorded results (tests/studies/test_recorded_results.py) hold."""

from __future__ import annotations

import hashlib

import numpy as np
import pyarrow as pa
import pytest

from rankhouse import ranking
from rankhouse.loaders import load_documents, load_queries
from rankhouse.paths import ROOT
from rankhouse.vectors import encode_corpus
from rankhouse.warehouse import Warehouse
from rankhouse.warehouse.dag import Project
from rankhouse.warehouse.runner import Runner

SMALL = ROOT / "tests" / "fixtures" / "banking77_small"
WINDOW = (
    "SELECT query_row, doc_row, score, row_number() OVER (PARTITION BY query_row ORDER BY score DESC, doc_row) "
    "AS rank FROM models.{}"
)


class CoarseEncoder:
    """384 components of -1, 0 or 1 from a text's SHA-256, normalised: many documents share a cosine."""

    dim, model_name, fingerprint = 384, "coarse", "coarse-test-encoder"

    def encode(self, texts: list[str], progress=None) -> np.ndarray:  # noqa: ANN001
        rows = []
        for text in texts:
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
            signs = np.random.default_rng(seed).integers(-1, 2, self.dim).astype(np.float32)
            signs[seed % self.dim] = 1.0
            rows.append(signs / np.linalg.norm(signs))
        return np.stack(rows).astype(np.float32)


def _cut(source, target, rows: int | None, copies: int = 3) -> None:  # noqa: ANN001
    """The CSV's first `rows` rows (all: None), then its first rows again: the same text, so the same
    scores, in other rows."""
    lines = source.read_text().splitlines()
    kept = lines[: None if rows is None else rows + 1]
    target.write_text("\n".join(kept + lines[1 : 1 + copies]) + "\n")


@pytest.fixture(scope="module", params=[None, 5], ids=["81 queries", "8 queries"])
def small(request, tmp_path_factory):
    """The small cut of BANKING77 with repeated texts; and 8 of its queries (fewer than the rankings' 16
    parts: a part without queries adds no row) against 300 documents."""
    folder = tmp_path_factory.mktemp("full_rankings")
    _cut(SMALL / "train.csv", folder / "train.csv", None if request.param is None else 300)
    _cut(SMALL / "test.csv", folder / "test.csv", request.param)
    with Warehouse(folder / "w.duckdb") as wh:
        load_documents(wh, folder / "train.csv", "small")
        load_queries(wh, folder / "test.csv", "small")
        for kind in ("documents", "queries"):
            encode_corpus(wh, "small", CoarseEncoder(), kind)
        project = Project.load(closure=["bm25_ranking", "dense_ranking"])
        Runner(wh, project, {"corpus": "small"}).run(project.select("+bm25_ranking +dense_ranking"))
        yield wh


@pytest.mark.parametrize(("ranking", "scores"), [("bm25_ranking", "bm25_scores"), ("dense_ranking", "dense_scores")])
def test_the_numpy_ranking_is_the_windows_to_the_bit(small, ranking, scores):
    with small.array_aggregates():
        window = small.con.sql(WINDOW.format(scores)).to_arrow_table()
    ours = small.con.sql(f"SELECT query_row, doc_row, score, rank FROM models.{ranking}").to_arrow_table()
    assert ours.schema == window.schema
    order = [("query_row", "ascending"), ("rank", "ascending")]
    ours, window = ours.sort_by(order), window.sort_by(order)
    assert ours.num_rows == window.num_rows > 0
    for column in ("query_row", "doc_row", "rank"):
        assert ours[column].equals(window[column]), column
    bits = pa.uint64() if scores == "bm25_scores" else pa.uint32()
    same = [np.asarray(t["score"].combine_chunks().view(bits)) for t in (ours, window)]
    assert np.array_equal(*same)
    # the ties this checks: pairs that share their score with another document of their query
    ties = small.sql(
        f"SELECT count(*) FROM (SELECT count(*) AS n FROM models.{ranking} GROUP BY query_row, score) WHERE n > 1"
    )
    assert ties[0][0] > 0
    queries, documents = small.sql(
        "SELECT (SELECT count(*) FROM models.queries), (SELECT count(*) FROM models.documents)"
    )[0]
    assert ours.num_rows == queries * documents


def _unit_vectors(rows: int, seed: int) -> np.ndarray:
    vectors = np.random.default_rng(seed).standard_normal((rows, 384)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_inner_products_are_list_inner_products_to_the_bit():
    """ranked_cosines' products are DuckDB's list_inner_product's, bit for bit, on vectors like MiniLM's
    (unit length, 384 components, no exact ties): 23 queries x 1,001 documents (neither a multiple of a
    BLAS kernel's block)."""
    queries, documents = _unit_vectors(23, 1), _unit_vectors(1_001, 2)
    with Warehouse(":memory:") as wh:
        wh.con.register("q", pa.table({"i": np.arange(23), "v": [list(map(float, v)) for v in queries]}))
        wh.con.register("d", pa.table({"j": np.arange(1_001), "v": [list(map(float, v)) for v in documents]}))
        found = wh.con.execute(
            "SELECT list_inner_product(q.v::FLOAT[], d.v::FLOAT[]) AS p FROM q CROSS JOIN d ORDER BY q.i, d.j"
        ).fetchnumpy()["p"]
    expected = np.asarray(found, dtype=np.float32).reshape(23, 1_001)
    ours = ranking.inner_products(queries, documents)
    assert np.array_equal(ours.view(np.uint32), expected.view(np.uint32))
    # a product of another order differs in most pairs: this data tells the orders apart
    assert np.count_nonzero((queries.astype(np.float64) @ documents.T.astype(np.float64)).astype(np.float32) != ours)


def test_a_blas_of_other_bits_gives_way_to_duckdbs_own(monkeypatch):
    """Where this machine's BLAS does not give list_inner_product's bits (here one product off by one unit
    in the last place: of the last query, or of a middle query with the first document), every product is
    DuckDB's own."""
    queries, documents = _unit_vectors(9, 3), _unit_vectors(50, 4)
    exact = ranking.duckdb_products(queries, documents)

    def off_by_one(q: np.ndarray, d: np.ndarray) -> np.ndarray:
        products = exact.copy()
        products[-1, 7] = np.nextafter(products[-1, 7], np.float32(2))
        return products

    monkeypatch.setattr(ranking, "blas_products", off_by_one)
    assert np.array_equal(ranking.inner_products(queries, documents).view(np.uint32), exact.view(np.uint32))

    # a middle query off (a kernel of its own where threads split the rows): its products with the
    # first and last documents are probed too
    def middle_off(q: np.ndarray, d: np.ndarray) -> np.ndarray:
        products = exact.copy()
        products[4, 0] = np.nextafter(products[4, 0], np.float32(2))
        return products

    monkeypatch.setattr(ranking, "blas_products", middle_off)
    assert np.array_equal(ranking.inner_products(queries, documents).view(np.uint32), exact.view(np.uint32))
    # where BLAS agrees (here a BLAS that gives DuckDB's bits), DuckDB computes only the probe (OpenBLAS's
    # own kernel for matrices this small is not one of them)
    probed, duckdbs = [], ranking.duckdb_products
    monkeypatch.setattr(ranking, "blas_products", lambda q, d: exact.copy())
    monkeypatch.setattr(ranking, "duckdb_products", lambda q, d: probed.append(len(q)) or duckdbs(q, d))
    assert np.array_equal(ranking.inner_products(queries, documents).view(np.uint32), exact.view(np.uint32))
    assert probed == [2, 9]  # the first and last query with every document, every query with the edges


def test_ranked_cosines_refuses_vectors_of_two_lengths():
    rows, docs = pa.array([[0]], pa.list_(pa.int64())), pa.array([[0, 1]], pa.list_(pa.int64()))
    queries = pa.array([[[1.0, 0.0]]], pa.list_(pa.list_(pa.float32())))
    documents = pa.array([[[1.0, 0.0], [1.0]]], pa.list_(pa.list_(pa.float32())))
    with pytest.raises(ValueError, match="not all of one length"):
        ranking.ranked_cosines_udf(rows, queries, docs, documents)
    documents = pa.array([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]], pa.list_(pa.list_(pa.float32())))
    with pytest.raises(ValueError, match="differ in length"):
        ranking.ranked_cosines_udf(rows, queries, docs, documents)
