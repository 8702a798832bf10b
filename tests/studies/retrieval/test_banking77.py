"""The BANKING77 baseline study (BM25 and MiniLM with seed 004's E1/E2 measures; not seed 004's protocol,
which forbids dense models), run once end to end; its figures checked against real oracles:
bm25s for BM25, pytrec_eval for the ranking measures, scipy for Wilson intervals, numpy for the
bootstrap, Python's re for the tokens."""

from __future__ import annotations

import csv
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from rankhouse.errors import AuditError, InputError
from rankhouse.loaders import load_documents, load_queries, load_run
from rankhouse.paths import ROOT
from rankhouse.study import Protocol
from rankhouse.warehouse import Warehouse
from rankhouse.warehouse.dag import Project
from rankhouse.warehouse.render import render
from rankhouse.warehouse.runner import Runner

STUDY = ROOT / "studies" / "banking77.toml"
DATA = ROOT / "data" / "banking77"
SAMPLE = 200  # queries checked against the oracles that are slow on 10,003-document rankings


def texts(name: str) -> list[dict]:
    with (DATA / name).open(newline="") as handle:
        return list(csv.DictReader(handle))


def tokens(text: str) -> list[str]:
    """Python's Unicode letter/number runs of the lowercased text (what the SQL regex must match)."""
    return re.findall(r"[^\W_]+", text.lower())


@pytest.fixture(scope="module")
def banking(banking77_study):
    return banking77_study


def read_bm25(banking, sql: str) -> list[tuple]:
    """The rows of a read of BM25's views, summed in their array as the Runner and `rankhouse query` sum them:
    at DuckDB's default threshold a filter on query_row does not reach the inputs of the pair numbers' sum,
    and all 30.8M pairs are summed in a hash table, several times slower (docs/performance.md)."""
    with banking.wh.array_aggregates():
        return banking.wh.sql(sql)


def test_tokens_are_pythons_unicode_letter_number_runs(banking):
    ours = {}
    for doc_row, term, tf in banking.wh.sql("SELECT doc_row, term, tf FROM models.document_tokens"):
        ours.setdefault(doc_row, Counter())[term] = tf
    for row, record in enumerate(banking.train):
        assert ours.get(row, Counter()) == Counter(tokens(record["text"])), row


def test_bm25_scores_match_bm25s(banking):
    import bm25s

    retriever = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
    retriever.index([tokens(r["text"]) for r in banking.train], show_progress=False)
    ours = np.zeros((SAMPLE, len(banking.train)))
    for query_row, doc_row, score in read_bm25(
        banking, f"SELECT query_row, doc_row, score FROM models.bm25_scores WHERE query_row < {SAMPLE}"
    ):
        ours[query_row, doc_row] = score
    for row in range(SAMPLE):
        query = list(dict.fromkeys(tokens(banking.test[row]["text"])))  # a repeated term counts once
        expected = retriever.get_scores(query) * (1.2 + 1)  # bm25s's lucene variant omits (k1 + 1)
        assert np.max(np.abs(ours[row] - expected)) < 1e-6 * max(1.0, np.max(expected)), row


def test_cosines_are_array_inner_products_bit_for_bit(banking):
    # sql/macros/dense.sql takes list_inner_product over the vectors as lists (faster): every cosine of the
    # study's 200 x 10,003 sample is the float32 that array_inner_product gives, and numpy's within 1e-6.
    scores = banking.wh.sql(
        "SELECT count(*) FILTER (WHERE s.score IS DISTINCT FROM array_inner_product(qv.vector, dv.vector)), "
        "count(*) FROM models.dense_scores AS s "
        "JOIN models.queries AS q ON q.corpus = s.corpus AND q.query_row = s.query_row "
        "JOIN models.query_vectors AS qv ON qv.corpus = q.corpus AND qv.qid = q.qid "
        "JOIN models.documents AS d ON d.corpus = s.corpus AND d.doc_row = s.doc_row "
        "JOIN models.document_vectors AS dv ON dv.corpus = d.corpus AND dv.doc_id = d.doc_id "
        f"WHERE s.query_row < {SAMPLE}"
    )
    assert scores == [(0, SAMPLE * len(banking.train))]
    rows = banking.wh.sql(
        "SELECT v.vector FROM models.queries AS q JOIN models.query_vectors AS v ON v.corpus = q.corpus AND "
        "v.qid = q.qid ORDER BY q.query_row LIMIT 3"
    )
    docs = banking.wh.sql(
        "SELECT v.vector FROM models.documents AS d JOIN models.document_vectors AS v ON v.corpus = d.corpus AND "
        "v.doc_id = d.doc_id ORDER BY d.doc_row"
    )
    expected = np.array([r[0] for r in rows], dtype=np.float32) @ np.array([d[0] for d in docs], dtype=np.float32).T
    ours = np.zeros_like(expected)
    for query_row, doc_row, score in banking.wh.sql("SELECT query_row, doc_row, score FROM models.dense_scores "
                                                    "WHERE query_row < 3"):  # fmt: skip
        ours[query_row, doc_row] = score
    assert np.max(np.abs(ours - expected)) < 1e-6


def test_bm25_sums_its_30_million_pairs_into_an_array(banking):
    # The pair number's known range and `aggregate: array` keep BM25's sum a direct array in the
    # statements that compute it (the full ranking is slower without it: docs/performance.md).
    model = Project.load().models["bm25_scores"]
    assert model.aggregate == "array"
    with banking.wh.array_aggregates():
        plan = "\n".join(row[-1] for row in banking.wh.sql("EXPLAIN " + render(model, {"corpus": "banking77"})))
    assert "Perfect Hash Group By" in plan or "PERFECT_HASH_GROUP_BY" in plan


def test_under_a_small_memory_limit_bm25_sums_in_a_hash_table_to_the_same_scores(banking):
    # The arrays (one per part of the queries: 22 bits for BANKING77's eight parts) are held to a third of
    # DuckDB's memory_limit: under 256MB BM25 sums in DuckDB's hash table, which spills, to the same scores.
    model = Project.load().models["bm25_scores"]
    sql = render(model, {"corpus": "banking77"})
    sample = f"SELECT query_row, doc_row, CAST(score AS VARCHAR) FROM ({sql}) WHERE query_row < 100 ORDER BY ALL"
    wh = banking.wh
    limit = wh.sql("SELECT current_setting('memory_limit')")[0][0]
    with wh.array_aggregates():
        expected = wh.sql(sample)
    wh.sql("SET memory_limit = '256MB'")
    try:
        with wh.array_aggregates():
            plan = "\n".join(row[-1] for row in wh.sql("EXPLAIN " + sql))
            found = wh.sql(sample)
    finally:
        wh.sql(f"SET memory_limit = '{limit}'")
    assert "Perfect Hash Group By" not in plan and "PERFECT_HASH_GROUP_BY" not in plan
    assert found == expected and len(found) == 100 * len(banking.train)


def test_every_bm25_score_stays_under_its_query_ceiling(banking):
    # bm25_query_ceilings bounds each score by (k1 + 1) * sum idf; its audit (below 9,007) is what
    # makes the double sums in bm25_scores exact.
    over = read_bm25(
        banking,
        "SELECT count(*), max(c.ceiling) FROM models.bm25_scores AS s JOIN models.bm25_query_ceilings AS c "
        "ON c.corpus = s.corpus AND c.query_row = s.query_row WHERE s.score > c.ceiling",
    )
    assert over[0][0] == 0
    top = banking.wh.sql("SELECT max(ceiling) FROM models.bm25_query_ceilings WHERE corpus = 'banking77'")[0][0]
    assert 10 < top < 9007


def test_a_query_that_could_reach_2_53_units_is_refused(wh, tmp_path):
    words = [f"w{i:04d}" for i in range(1000)]  # each word in one document: idf = ln(1 + 999.5 / 1.5)
    (tmp_path / "docs.csv").write_text("text,category\n" + "".join(f"{w},x\n" for w in words))
    (tmp_path / "queries.csv").write_text("text,category\n" + " ".join(words) + ",x\n")
    load_documents(wh, tmp_path / "docs.csv", "wide")
    load_queries(wh, tmp_path / "queries.csv", "wide")
    project = Project.load()
    with pytest.raises(AuditError, match="bm25_query_ceilings.*accepted_range"):
        Runner(wh, project, {"corpus": "wide"}).run(project.select("+bm25_scores"))


def test_rankings_break_exact_ties_by_row_index(banking):
    scores = {}
    for method, query_row, doc_row, score in read_bm25(
        banking,
        "SELECT 'bm25', query_row, doc_row, score FROM models.bm25_scores WHERE query_row < 50 UNION ALL "
        "SELECT 'dense', query_row, doc_row, score FROM models.dense_scores WHERE query_row < 50",
    ):
        scores.setdefault((method, query_row), []).append((doc_row, score))
    ranked = {}
    for method, query_row, doc_row, rank in read_bm25(
        banking,
        "SELECT system, query_key, doc_key, rank FROM models.retrieval_rankings WHERE query_key < 50 AND rank <= 20",
    ):
        ranked.setdefault((method, query_row), {})[rank] = doc_row
    for key, pairs in scores.items():
        expected = [doc for doc, _ in sorted(pairs, key=lambda p: (-p[1], p[0]))[:20]]
        assert [ranked[key][r] for r in range(1, 21)] == expected, key
    # BANKING77 has exact BM25 ties at the top (FACTS: 3-7% of queries): the rule decides Top-1 there
    ties = read_bm25(
        banking,
        "SELECT a.doc_row < b.doc_row FROM models.bm25_ranking AS a JOIN models.bm25_ranking AS b "
        "ON b.query_row = a.query_row AND a.rank = 1 AND b.rank = 2 WHERE a.score = b.score",
    )
    assert 0.03 * 3080 < len(ties) < 0.07 * 3080 and all(first for (first,) in ties)


def test_runs_are_the_first_documents_of_the_scores_sorted_in_python(banking):
    # the runs are the full rankings' first run_depth documents: Python's sort of the scores views by
    # (score descending, row index), to the last bit of each score (BM25 has exact ties at the top)
    expected = {}
    for method, query_row, doc_row, score in read_bm25(
        banking,
        "SELECT 'bm25', query_row, doc_row, score FROM models.bm25_scores WHERE query_row < 300 UNION ALL "
        "SELECT 'dense', query_row, doc_row, score FROM models.dense_scores WHERE query_row < 300",
    ):
        expected.setdefault((method, query_row), []).append((-score, doc_row))
    runs = {}
    for method, query_row, doc_row, rank, score in banking.wh.sql(
        "SELECT r.method, q.query_row, d.doc_row, r.rank, r.score FROM models.retrieval_runs AS r "
        "JOIN models.queries AS q ON q.qid = r.qid JOIN models.documents AS d ON d.doc_id = r.doc_id "
        "WHERE q.query_row < 300"
    ):
        runs.setdefault((method, query_row), {})[rank] = (-score, doc_row)
    assert len(expected) == len(runs) == 2 * 300
    for key, pairs in expected.items():
        assert [runs[key][rank] for rank in range(1, 101)] == sorted(pairs)[:100], key
    tied = sum(runs[key][r][0] == runs[key][r + 1][0] for key in runs if key[0] == "bm25" for r in range(1, 100))
    assert tied > 0  # the sample has exact ties for the row index to decide


def test_measures_match_pytrec_eval(banking):
    import pytrec_eval

    classes_train = [r["category"] for r in banking.train]
    qrels = {
        str(row): {str(doc): 1 for doc, c in enumerate(classes_train) if c == banking.test[row]["category"]}
        for row in range(SAMPLE)
    }
    runs: dict = {}
    for method, query_row, doc_row, rank in read_bm25(
        banking, f"SELECT system, query_key, doc_key, rank FROM models.retrieval_rankings WHERE query_key < {SAMPLE}"
    ):
        runs.setdefault(method, {}).setdefault(str(query_row), {})[str(doc_row)] = -float(rank)
    measures = {"P_1": "top1", "success_5": "hit5", "recall_5": "recall5", "recip_rank": "rr",
                "ndcg_cut_10": "ndcg10", "P_5": "p5"}  # fmt: skip
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"P.1,5", "success.5", "recall.5", "recip_rank", "ndcg_cut.10"})
    columns = ", ".join(measures.values())
    for method, run in runs.items():
        expected = evaluator.evaluate(run)
        rows = banking.wh.sql(
            f"SELECT query_row, {columns} FROM results.retrieval_query_metrics "
            f"WHERE freeze_id = ? AND method = ? AND query_row < {SAMPLE}",
            [banking.freeze, method],
        )
        assert len(rows) == SAMPLE
        for query_row, *values in rows:
            for (name, _), value in zip(measures.items(), values):
                assert value == pytest.approx(expected[str(query_row)][name], abs=1e-9), (method, query_row, name)


def test_wilson_intervals_match_scipy(banking):
    from scipy.stats import binomtest

    checked = 0
    for subset, block in [("all", banking.results["methods"]), *banking.results["subsets"].items()]:
        for method, measures in block.items():
            for name in ("Top-1", "Hit@5"):
                entry = measures[name]
                n = entry["queries"]
                k = round(entry["value"] * n)
                interval = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
                assert (entry["ci_low"], entry["ci_high"]) == pytest.approx((interval.low, interval.high), abs=1e-7)
                checked += 1
    assert checked == 8


def test_paired_bootstrap_matches_numpy_and_ignores_thread_count(banking):
    wh = banking.wh
    top1 = {m: np.zeros(len(banking.test)) for m in ("bm25", "dense")}
    for method, query_row, hit in wh.sql(
        "SELECT method, query_row, top1 FROM results.retrieval_query_metrics WHERE freeze_id = ?", [banking.freeze]
    ):
        top1[method][query_row] = hit
    differences = top1["dense"] - top1["bm25"]
    draws = np.zeros((10_000, len(banking.test)), dtype=np.int64)
    for replicate, draw, item in wh.sql(
        "SELECT replicate, draw, item FROM raw.resample_plans WHERE plan = 'top1_bootstrap'"
    ):
        draws[replicate, draw] = item
    means = differences[draws].mean(axis=1)
    contrast = banking.results["contrasts"]["all"]["dense - bm25"]
    assert contrast["mean"] == pytest.approx(differences.mean(), abs=1e-12)
    assert (contrast["ci_low"], contrast["ci_high"]) == pytest.approx(
        tuple(np.quantile(means, [0.025, 0.975])), abs=1e-12
    )
    sql = "SELECT subset, mean, ci_low, ci_high FROM models.paired_bootstrap ORDER BY subset"
    before = wh.sql(sql)
    threads = wh.sql("SELECT current_setting('threads')")[0][0]
    wh.sql("SET threads = 1")
    try:
        params = {"study": "banking77", **Protocol.load(STUDY).parameters}
        Runner(wh, Project.load(params=params), params).run(["paired_bootstrap"], force=True)
    finally:
        wh.sql(f"SET threads = {threads}")
    assert wh.sql(sql) == before


def test_duplicates_are_counted_as_python_counts_them(banking):
    normal = lambda text: " ".join(text.lower().split())  # noqa: E731
    training = {normal(r["text"]) for r in banking.train}
    tests = [normal(r["text"]) for r in banking.test]
    counts = Counter(tests)
    duplicates = banking.results["duplicates"]
    assert duplicates["queries_whose_text_is_a_document"] == sum(t in training for t in tests) == 7
    assert duplicates["queries_sharing_their_text_with_another_query"] == sum(counts[t] > 1 for t in tests)
    assert banking.results["subsets"]["without_training_duplicates"]["bm25"]["Top-1"]["queries"] == 3080 - 7


def test_results_and_outputs_have_the_documented_shape(banking):
    results = banking.results
    assert results["freeze_id"] == banking.freeze and results["study"] == "banking77"
    for method in ("bm25", "dense"):
        measures = results["methods"][method]
        assert set(measures) == {"Top-1", "Hit@5", "R@5", "RR", "nDCG@10", "P@5", "macro-Top-1"}
        assert {"ci_low", "ci_high"} <= set(measures["Top-1"]) and {"ci_low", "ci_high"} <= set(measures["Hit@5"])
        assert measures["R@5"]["value"] < measures["Hit@5"]["value"]  # true recall, not Hit@5
    out = banking.root / "out"
    assert len((out / "per_query.csv").read_text().splitlines()) == 1 + 2 * 3080
    with Warehouse(":memory:") as wh:
        for method in ("bm25", "dense"):
            assert load_run(wh, out / "runs" / f"{method}.run").rows == 3080 * 100


def test_dense_scores_are_cosines_of_the_stored_vectors(banking):
    documents = np.asarray(
        [v for (v,) in banking.wh.sql("SELECT vector FROM raw.document_vectors ORDER BY CAST(doc_id AS INT)")]
    )
    queries = np.asarray(
        [v for (v,) in banking.wh.sql("SELECT vector FROM raw.query_vectors ORDER BY CAST(qid AS INT) LIMIT 20")]
    )
    assert np.allclose(np.linalg.norm(documents, axis=1), 1, atol=1e-5)
    expected = queries @ documents.T
    ours = np.zeros_like(expected)
    for query_row, doc_row, score in banking.wh.sql(
        "SELECT query_row, doc_row, score FROM models.dense_scores WHERE query_row < 20"
    ):
        ours[query_row, doc_row] = score
    assert np.max(np.abs(ours - expected)) < 1e-5


@pytest.mark.parametrize(
    ("text", "line", "rule"),
    [
        ("text,intent\nhello,a\n", 1, "expected the header text,category"),
        ("text,category\nhello,a\nworld\n", 3, "expected 2 fields"),
        ('text,category\nhello,a\n"quoted, text",b\n,c\n', 4, "empty text or category"),
        ("text,category\n", 2, "no data rows"),
    ],
)
def test_labelled_csv_rules(wh, tmp_path, text, line, rule):
    load_documents(wh, DATA / "train.csv", "banking77")
    before = wh.sql("SELECT count(*) FROM raw.documents")
    bad = tmp_path / "bad.csv"
    bad.write_text(text)
    with pytest.raises(InputError) as err:
        load_documents(wh, bad, "banking77")
    assert (err.value.line, rule in err.value.rule, Path(err.value.path)) == (line, True, bad)
    assert wh.sql("SELECT count(*) FROM raw.documents") == before
