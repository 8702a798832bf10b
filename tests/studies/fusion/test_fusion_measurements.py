"""Seed 003's section 9 measurements (the fusion study's evaluate models), checked against independent
computations: numpy and scipy over the study's own inputs (the null references, the arms' full rankings,
the vectors) and judgments rebuilt here from the CSV intents, never from the warehouse's labels.

The BANKING77 fusion study runs once for the test session (conftest.fusion_banking77_study); the macros the
models share (the normal distribution function and quantile, the cluster-robust ratio interval, the
tertile bins) are checked on their own against scipy and numpy.
"""

from __future__ import annotations

import json
import math

import duckdb
import numpy as np
import pytest
import pytrec_eval
from scipy import stats

from rankhouse.errors import AuditError
from rankhouse.resample import block_draws, panel_draws
from rankhouse.warehouse.render import ENV

LEVELS = [0.01, 0.05, 0.1]
SAMPLE = 60  # queries re-computed one by one where the computation is per query


@pytest.fixture
def fusion(fusion_banking77_study):
    return fusion_banking77_study


@pytest.fixture
def truth(fusion):
    """Independent judgments: per test row, the set of training rows of the same intent."""
    by_intent: dict[str, set[int]] = {}
    for row, record in enumerate(fusion.train):
        by_intent.setdefault(record["category"], set()).add(row)
    return [by_intent[record["category"]] for record in fusion.test]


def frame(wh, sql: str, params: list | None = None) -> dict[str, np.ndarray]:
    """The columns of a query's rows as arrays (a column of numbers with NULLs as floats with NaN)."""
    columns, rows = wh.columns(sql, params)
    arrays = {c: np.array([r[i] for r in rows]) for i, c in enumerate(columns)}
    for name, values in arrays.items():
        if values.dtype == object and all(v is None or isinstance(v, float) for v in values):
            arrays[name] = np.array([np.nan if v is None else v for v in values], dtype=float)
    return arrays


def by_query(wh, sql: str) -> dict[int, np.ndarray]:
    """(query_row, value) rows grouped into an array per query."""
    found: dict[int, list] = {}
    for query_row, value in wh.sql(sql):
        found.setdefault(query_row, []).append(value)
    return {q: np.asarray(v) for q, v in found.items()}


def cluster_ratio(numerators: np.ndarray, denominators: np.ndarray) -> tuple[float, float, float]:
    """A pooled share and its normal 95% interval by clusters (the linearised variance of a ratio)."""
    keep = denominators > 0
    y, n = numerators[keep].astype(float), denominators[keep].astype(float)
    ratio = y.sum() / n.sum()
    q = len(y)
    se = math.sqrt(q / (q - 1) * np.sum((y - ratio * n) ** 2)) / n.sum()
    return ratio, max(0.0, ratio - 1.959964 * se), min(1.0, ratio + 1.959964 * se)


def exceedance_p(reference: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Eq. 1: (1 + #{reference >= s}) / (m + 1)."""
    ordered = np.sort(reference)
    above = len(ordered) - np.searchsorted(ordered, scores, side="left")
    return (1 + above) / (len(ordered) + 1)


# -- the shared macros ------------------------------------------------------------------------------
def run_sql(template: str) -> list[tuple]:
    return duckdb.connect().sql(ENV.from_string(template).render()).fetchall()


def test_normal_cdf_and_quantile_macros_match_scipy():
    xs = [-40.0, -37.5, -12.0, -7.08, -7.0, -3.3, -1.0, -1e-9, 0.0, 1e-9, 0.5, 2.2, 6.9, 7.2, 11.0, 38.0]
    values = ", ".join(f"({i}, {x!r})" for i, x in enumerate(xs))
    rows = run_sql(f"SELECT {{{{ normal_cdf('x') }}}} FROM (VALUES {values}) AS v(k, x) ORDER BY k")
    for (got,), x in zip(rows, xs):
        want = stats.norm.cdf(x)
        assert got == pytest.approx(want, rel=1e-8, abs=1e-15), x
    us = [1e-12, 1e-6, 0.001, 0.02, 0.02425, 0.2, 0.5, 0.77, 0.97575, 0.99, 1 - 1e-9]
    values = ", ".join(f"({i}, {u!r})" for i, u in enumerate(us))
    rows = run_sql(f"SELECT {{{{ normal_quantile('u') }}}} FROM (VALUES {values}) AS v(k, u) ORDER BY k")
    for (got,), u in zip(rows, us):
        assert got == pytest.approx(stats.norm.ppf(u), rel=1.2e-9, abs=1e-12), u


def test_cluster_ratio_macro_is_the_linearised_ratio_interval():
    rng = np.random.default_rng(5)
    denominators = rng.integers(0, 40, size=50)
    numerators = rng.binomial(denominators, 0.3)
    groups = np.arange(50) % 2
    rows = ", ".join(f"({g}, {i}, {y}, {n})" for i, (g, y, n) in enumerate(zip(groups, numerators, denominators)))
    got = run_sql(
        f"WITH source AS (SELECT * FROM (VALUES {rows}) AS v(g, cluster, numerator, denominator)),\n"
        "{{ cluster_ratio('shares', 'source', ['g']) }}\n"
        "SELECT g, clusters, numerator, denominator, ratio, ci_low, ci_high FROM shares ORDER BY g"
    )
    for g, clusters, y, n, ratio, low, high in got:
        mine = groups == g
        assert (clusters, y, n) == ((denominators[mine] > 0).sum(), numerators[mine].sum(), denominators[mine].sum())
        assert (ratio, low, high) == pytest.approx(cluster_ratio(numerators[mine], denominators[mine]), rel=1e-12)


def test_tertile_macros_put_equal_values_in_one_bin():
    values = [5, 1, 1, 1, 2, 3, 3, 9, 9, 4]
    rows = ", ".join(f"({i}, {v})" for i, v in enumerate(values))
    got = run_sql(
        f"WITH source AS (SELECT * FROM (VALUES {rows}) AS v(k, value)),\n"
        "{{ tertile_edges('edges', 'source', 'value', 'k') }}\n"
        "SELECT s.value, {{ tertile_bin('s.value', 'e') }} FROM source AS s CROSS JOIN edges AS e ORDER BY s.k"
    )
    ordered = sorted(values)
    first, second = ordered[math.ceil(len(values) / 3) - 1], ordered[math.ceil(2 * len(values) / 3) - 1]
    for value, label in got:
        assert label == ("short" if value <= first else "medium" if value <= second else "long")


# -- the plans --------------------------------------------------------------------------------------
def test_blocks_and_calibration_order_are_the_seeded_draws(fusion):
    wh = fusion.wh
    blocks = [b for (b,) in wh.sql("SELECT item FROM raw.resample_plans WHERE plan = 'query_blocks' ORDER BY draw")]
    assert blocks == block_draws(len(fusion.test), 10, 20261201).tolist()
    assert sorted(np.bincount(blocks).tolist()) == [308] * 10
    order = [
        r for (r,) in wh.sql("SELECT doc_row FROM raw.null_panels WHERE panel = 'calibration_order' ORDER BY position")
    ]
    assert order == panel_draws(len(fusion.train), len(fusion.train), 20261202).tolist()
    with pytest.raises(ValueError):
        block_draws(3, 4, 1)


# -- the gates of section 9: populations and unit norms ---------------------------------------------
def test_populations_agree_and_vectors_are_unit_norm(fusion):
    wh = fusion.wh
    summary = frame(wh, "SELECT * FROM models.population_summary")
    assert summary["populations_agree"].tolist() == [True]
    assert summary["min_scored"][0] == summary["max_scored"][0] == len(fusion.train)
    assert summary["min_reference"][0] == summary["max_reference"][0] == 1000
    candidates = by_query(wh, "SELECT query_row, doc_row FROM models.candidate_completeness")
    assert summary["max_candidates"][0] == max(len(v) for v in candidates.values())
    for kind, table, key in (("documents", "raw.document_vectors", "doc_id"), ("queries", "raw.query_vectors", "qid")):
        vectors = np.array([v for (v,) in wh.sql(f"SELECT vector FROM {table} ORDER BY {key}")], dtype=np.float64)
        norms = np.sqrt((vectors**2).sum(axis=1))
        row = frame(wh, "SELECT * FROM models.vector_norms WHERE kind = ?", [kind])
        assert row["vectors"][0] == len(vectors) and row["unpaired"][0] == 0
        assert row["norm_min"][0] == pytest.approx(norms.min(), abs=1e-12)
        assert row["max_norm_error"][0] == pytest.approx(np.abs(norms - 1).max(), abs=1e-12)


def test_a_vector_that_is_not_unit_norm_stops_prepare(tmp_path):
    """The unit-norm gate is an audit of a prepare model: a scaled vector fails the build."""
    from conftest import FIXTURES

    from rankhouse.loaders import load_documents, load_queries
    from rankhouse.warehouse import Warehouse
    from rankhouse.warehouse.dag import Project
    from rankhouse.warehouse.runner import Runner

    with Warehouse(":memory:") as wh:
        load_documents(wh, FIXTURES / "retrieval" / "documents.csv", "tiny")
        load_queries(wh, FIXTURES / "retrieval" / "queries.csv", "tiny")
        for table, rows in (("raw.document_vectors", 8), ("raw.query_vectors", 4)):
            for row in range(rows):
                vector = [0.0] * 384
                vector[row] = 1.0 if (table, row) != ("raw.document_vectors", 5) else 1.01
                wh.sql(f"INSERT INTO {table} VALUES ('tiny', ?, ?::FLOAT[384])", [str(row), vector])
        runner = Runner(wh, Project.load(), {"corpus": "tiny"})
        with pytest.raises(AuditError, match="max_norm_error"):
            runner.run(["documents", "queries", "document_vectors", "query_vectors", "vector_norms"])


# -- null calibration on held-out blocks ------------------------------------------------------------
def arm_scores(wh, arm: str, pairs: list[tuple[int, int]]) -> dict[tuple[int, int], float]:
    """The arm's scores (its full ranking, fusion_arms) of the given (query_row, doc_row) pairs, in one scan."""
    rows = wh.sql(
        "SELECT a.query_row, a.doc_row, a.score FROM models.fusion_arms AS a JOIN (SELECT unnest(?) AS query_row, "
        "unnest(?) AS doc_row) AS w ON w.query_row = a.query_row AND w.doc_row = a.doc_row WHERE a.arm = ?",
        [[q for q, _ in pairs], [d for _, d in pairs], arm],
    )
    return {(q, d): s for q, d, s in rows}


def held_out_documents(fusion) -> list[int]:
    panel = {r for (r,) in fusion.wh.sql("SELECT doc_row FROM raw.null_panels WHERE panel = 'null_panel'")}
    order = panel_draws(len(fusion.train), len(fusion.train), 20261202).tolist()
    return [d for d in order if d not in panel][: fusion.params["calibration_size"]]


def test_calibration_p_values_follow_eq_1_against_both_references(fusion, truth):
    wh = fusion.wh
    held_out = held_out_documents(fusion)
    blocks = np.asarray(block_draws(len(fusion.test), 10, 20261201))
    panel_order = [
        r for (r,) in wh.sql("SELECT doc_row FROM raw.null_panels WHERE panel = 'null_panel' ORDER BY position")
    ]
    pooled_docs = set(panel_order[: fusion.params["pooled_panel_size"]])
    for arm in ("bm25", "dense"):
        reference: dict[int, dict[int, float]] = {}
        for query_row, doc_row, score in wh.sql(
            "SELECT query_row, doc_row, score FROM models.null_references WHERE arm = ?", [arm]
        ):
            reference.setdefault(query_row, {})[doc_row] = score
        pooled_by_block = {
            b: np.array(
                [s for q, scores in reference.items() if blocks[q] == b for d, s in scores.items() if d in pooled_docs]
            )
            for b in range(10)
        }
        for query_row in range(0, len(fusion.test), len(fusion.test) // SAMPLE):
            rows = frame(
                wh,
                "SELECT doc_row, held_out, relevant, score, panel_p, pooled_p, panel_floor FROM "
                "models.calibration_scores WHERE arm = ? AND query_row = ? ORDER BY doc_row",
                [arm, query_row],
            )
            gold = truth[query_row]
            assert set(rows["doc_row"].tolist()) == set(held_out) | gold
            assert {d for d, h in zip(rows["doc_row"], rows["held_out"]) if h} == set(held_out)
            assert {d for d, r in zip(rows["doc_row"], rows["relevant"]) if r} == gold
            null = np.array(list(reference[query_row].values()))
            np.testing.assert_allclose(rows["panel_p"], exceedance_p(null, rows["score"]), rtol=0, atol=1e-15)
            assert (rows["panel_floor"] == (rows["panel_p"] == 1 / 1001)).all()
            others = np.concatenate([pooled_by_block[b] for b in range(10) if b != blocks[query_row]])
            np.testing.assert_allclose(rows["pooled_p"], exceedance_p(others, rows["score"]), rtol=0, atol=1e-15)


def test_the_mixtures_combined_p_is_min_1_over_e(fusion):
    wh = fusion.wh
    rows = frame(wh, "SELECT b.panel_p AS p_bm25, d.panel_p AS p_dense, m.panel_p AS combined "
                 "FROM models.calibration_scores AS m "
                 "JOIN models.calibration_scores AS b "
                 "ON b.arm = 'bm25' AND b.query_row = m.query_row AND b.doc_row = m.doc_row "
                 "JOIN models.calibration_scores AS d "
                 "ON d.arm = 'dense' AND d.query_row = m.query_row AND d.doc_row = m.doc_row "
                 "WHERE m.arm = 'mixture' AND m.query_row < 40")  # fmt: skip
    e = (1 / (2 * np.sqrt(rows["p_bm25"])) + 1 / (2 * np.sqrt(rows["p_dense"]))) / 2  # eq. 11
    np.testing.assert_allclose(rows["combined"], np.minimum(1, 1 / e), rtol=1e-12)


def test_null_calibration_shares_intervals_and_gold_rejection(fusion, truth):
    wh = fusion.wh
    rows = frame(wh, "SELECT arm, query_row, held_out, relevant, lexical_match, panel_p, pooled_p, panel_floor "
                 "FROM models.calibration_scores")  # fmt: skip
    queries = len(fusion.test)
    lengths = np.zeros(queries, dtype=int)
    for query_row, terms in wh.sql("SELECT query_row, count(*) FROM models.query_tokens GROUP BY ALL"):
        lengths[query_row] = terms
    ordered = np.sort(lengths)
    first, second = ordered[math.ceil(queries / 3) - 1], ordered[math.ceil(2 * queries / 3) - 1]
    length_bin = np.where(lengths <= first, "short", np.where(lengths <= second, "medium", "long"))
    table = {(r[0], r[1], r[2], r[3], r[4]): r[5:] for r in wh.sql(
        "SELECT reference, arm, level, stratum, stratum_value, null_rows, null_share, null_ci_low, null_ci_high, "
        "gold_rows, gold_rejection, gold_ci_low, gold_ci_high, null_at_floor, anti_conservative "
        "FROM models.null_calibration")}  # fmt: skip
    strata = {"all": lambda m: np.ones_like(m, dtype=bool), "short": lambda m: length_bin[rows["query_row"]] == "short",
              "match": lambda m: rows["lexical_match"], "non-match": lambda m: ~rows["lexical_match"]}  # fmt: skip
    names = {"all": ("all", "all"), "short": ("query_length", "short"), "match": ("lexical", "match"),
             "non-match": ("lexical", "non-match")}  # fmt: skip
    for reference, arms in (("panel", ("bm25", "dense", "mixture")), ("pooled", ("bm25", "dense"))):
        p = rows[f"{reference}_p"]
        for arm in arms:
            for level in LEVELS:
                for name, chosen in strata.items():
                    mask = (rows["arm"] == arm) & chosen(None)
                    null = mask & rows["held_out"] & ~rows["relevant"]
                    gold = mask & rows["relevant"]
                    per_query = lambda hits, among: (  # noqa: E731
                        np.bincount(rows["query_row"][hits], minlength=queries),
                        np.bincount(rows["query_row"][among], minlength=queries),
                    )
                    admitted, total = per_query(null & (p <= level), null)
                    got = table[(reference, arm, level, *names[name])]
                    assert got[0] == total.sum()
                    expected = cluster_ratio(admitted, total)
                    assert got[1:4] == pytest.approx(expected, rel=1e-12, abs=1e-15), (reference, arm, level, name)
                    rejected, relevant = per_query(gold & (p > level), gold)
                    assert got[4] == relevant.sum()
                    if relevant.sum():
                        assert got[5:8] == pytest.approx(cluster_ratio(rejected, relevant), rel=1e-12, abs=1e-15)
                    assert got[9] == (expected[1] > level)
    # what a lexical non-match is: a BM25 score of 0, whose p is 1 and is never admitted
    assert table[("panel", "bm25", 0.1, "lexical", "non-match")][1] == 0.0
    floors = rows["panel_floor"][(rows["arm"] == "bm25") & rows["held_out"] & ~rows["relevant"]]
    assert table[("panel", "bm25", 0.05, "all", "all")][8] == pytest.approx(floors.mean(), rel=1e-12)


# -- the relevance model ----------------------------------------------------------------------------
def candidate_p_values(fusion, truth) -> dict[str, np.ndarray]:
    rows = frame(fusion.wh, "SELECT b.query_row, b.doc_row, b.p AS p_bm25, b.exceedances = 1 AS floor_bm25, "
                 "d.p AS p_dense, d.exceedances = 1 AS floor_dense FROM models.arm_p_values AS b "
                 "JOIN models.arm_p_values AS d "
                 "ON d.arm = 'dense' AND d.query_row = b.query_row AND d.doc_row = b.doc_row "
                 "WHERE b.arm = 'bm25'")  # fmt: skip
    rows["relevant"] = np.array([d in truth[q] for q, d in zip(rows["query_row"], rows["doc_row"])])
    return rows


def test_joint_p_value_distribution_and_error_rates(fusion, truth):
    rows = candidate_p_values(fusion, truth)
    edges = [0.01, 0.05, 0.1, 0.5, 1.0]

    def bins(p: np.ndarray, floor: np.ndarray) -> np.ndarray:
        return np.where(floor, 0, 1 + np.searchsorted(edges, p, side="left"))

    b, d = bins(rows["p_bm25"], rows["floor_bm25"]), bins(rows["p_dense"], rows["floor_dense"])
    for relevant, bm25_order, dense_order, candidates, share in fusion.wh.sql(
        "SELECT relevant, bm25_order, dense_order, candidates, share FROM models.relevance_joint"
    ):
        mask = (rows["relevant"] == relevant) & (b == bm25_order) & (d == dense_order)
        assert candidates == mask.sum()
        assert share == pytest.approx(mask.sum() / (rows["relevant"] == relevant).sum(), rel=1e-12)
    queries = len(fusion.test)
    for arm, level, error, ratio, low, high in fusion.wh.sql(
        "SELECT arm, level, error, ratio, ci_low, ci_high FROM models.arm_error_rates"
    ):
        p, other = (rows["p_bm25"], rows["p_dense"]) if arm == "bm25" else (rows["p_dense"], rows["p_bm25"])
        relevant = rows["relevant"]
        hit, among = {
            "false_admission": (~relevant & (p <= level), ~relevant),
            "missed": (relevant & (p > level), relevant),
            "lone_distractor": (~relevant & (p <= level) & (other > level), ~relevant),
            "lone_correction": (relevant & (p <= level) & (other > level), relevant),
        }[error]
        expected = cluster_ratio(np.bincount(rows["query_row"][hit], minlength=queries),
                                 np.bincount(rows["query_row"][among], minlength=queries))  # fmt: skip
        assert (ratio, low, high) == pytest.approx(expected, rel=1e-12, abs=1e-15), (arm, level, error)


def test_relevance_rises_with_the_mixture_score_in_equal_count_bins(fusion, truth):
    rows = frame(fusion.wh, "SELECT query_row, doc_row, score FROM models.fused_rankings WHERE rule = 'mixture'")
    relevant = np.array([d in truth[q] for q, d in zip(rows["query_row"], rows["doc_row"])])
    ordered = np.sort(rows["score"])
    n = len(ordered)
    edges = [ordered[math.ceil(k * n / 10) - 1] for k in range(1, 10)]
    bins = np.sum(rows["score"][:, None] > np.asarray(edges)[None, :], axis=1)
    got = frame(fusion.wh, "SELECT bin, candidates, relevant, ratio, ci_low, ci_high, score_mean FROM "
                "models.relevance_by_score WHERE rule = 'mixture' ORDER BY bin")  # fmt: skip
    queries = len(fusion.test)
    for i, k in enumerate(got["bin"]):
        mask = bins == k
        assert got["candidates"][i] == mask.sum() and got["relevant"][i] == relevant[mask].sum()
        expected = cluster_ratio(np.bincount(rows["query_row"][mask & relevant], minlength=queries),
                                 np.bincount(rows["query_row"][mask], minlength=queries))  # fmt: skip
        assert (got["ratio"][i], got["ci_low"][i], got["ci_high"][i]) == pytest.approx(expected, rel=1e-12)
        assert got["score_mean"][i] == pytest.approx(rows["score"][mask].mean(), rel=1e-12)
    assert (np.diff(got["ratio"]) > 0).all()  # as it came out on BANKING77: relevance rises with S


# -- the Gaussian approximation against measured reversals ------------------------------------------
def test_gaussian_approximation_and_measured_reversals(fusion, truth):
    wh = fusion.wh
    k = fusion.params["rrf_k"]
    votes: dict[int, dict[int, list[float]]] = {}
    for arm, query_row, doc_row, rank, listed in wh.sql(
        "SELECT arm, query_row, doc_row, rank, listed FROM models.fusion_candidates"
    ):
        votes.setdefault(query_row, {}).setdefault(doc_row, [0.0, 0.0])[arm == "dense"] = (
            1 / (k + rank) if listed else 0.0
        )
    rrf = {(q, d): s for q, d, s in wh.sql("SELECT query_row, doc_row, score FROM models.fusion_rrf")}
    intents = [record["category"] for record in fusion.test]
    chosen = sorted(set(intents))[:3]
    margins: dict[str, list[np.ndarray]] = {group: [] for group in [*chosen, "all"]}
    for query_row, documents in votes.items():
        ids = np.array(list(documents))
        x = np.array([documents[d] for d in ids])
        fused = np.array([rrf[(query_row, d)] for d in ids])
        relevant = np.array([d in truth[query_row] for d in ids])
        g, b = np.nonzero(relevant)[0], np.nonzero(~relevant)[0]
        m = np.stack([(x[g, 0][:, None] - x[b, 0][None, :]).ravel(), (x[g, 1][:, None] - x[b, 1][None, :]).ravel(),
                      np.sign(fused[g][:, None] - fused[b][None, :]).ravel()], axis=1)  # fmt: skip
        margins["all"].append(m)
        if intents[query_row] in chosen:
            margins[intents[query_row]].append(m)
    got = {r[0]: r[1:] for r in wh.sql(
        "SELECT query_group, pair_count, delta_l, delta_v, rho, eq18_bound, predicted_harm, predicted_dense_correct, "
        "predicted_fused_correct, measured_dense_correct, measured_fused_correct, reversals, corrections "
        "FROM models.gaussian_reversals WHERE pairs = 'all'")}  # fmt: skip
    for group, parts in margins.items():
        m = np.concatenate(parts)
        lexical, dense, sign = m[:, 0], m[:, 1], m[:, 2]
        mu_l, mu_v, sd_l, sd_v = lexical.mean(), dense.mean(), lexical.std(), dense.std()
        rho = np.mean((lexical - mu_l) * (dense - mu_v)) / (sd_l * sd_v)
        delta_l, delta_v = mu_l / sd_l, mu_v / sd_v
        bound = (math.sqrt(2 + 2 * rho) - 1) * delta_v  # eq. 18
        fused_sd = math.sqrt(sd_l**2 + sd_v**2 + 2 * rho * sd_l * sd_v)
        row = got[group]
        assert row[0] == len(m)
        assert row[1:5] == pytest.approx([delta_l, delta_v, rho, bound], rel=1e-9), group
        assert row[5] == (delta_l < bound)
        assert row[6] == pytest.approx(stats.norm.cdf(delta_v), rel=1e-8)
        assert row[7] == pytest.approx(stats.norm.cdf((mu_l + mu_v) / fused_sd), rel=1e-8)
        assert row[8] == pytest.approx(np.mean(dense > 0), rel=1e-12)
        assert row[9] == pytest.approx(np.mean(sign > 0), rel=1e-12)
        # eq. 15's reversals: M_v > 0 (the dense vote orders the pair right) and RRF's exact scores reverse it
        assert row[10:] == (np.sum((dense > 0) & (sign < 0)), np.sum((dense < 0) & (sign > 0)))


# -- cold-start references, transport and eq. 26 -----------------------------------------------------
def test_cold_start_distance_is_ks_2samp_and_eta_is_the_panels_relevant_share(fusion, truth):
    wh = fusion.wh
    panel = {r for (r,) in wh.sql("SELECT doc_row FROM raw.null_panels WHERE panel = 'null_panel'")}
    held_out = held_out_documents(fusion)
    got = {(a, q): (dist, lower, eta) for a, q, dist, lower, eta in wh.sql(
        "SELECT arm, query_row, distance, shift_lower, eta FROM models.cold_start_distances")}  # fmt: skip
    epsilon = lambda m: math.sqrt(math.log(2 / 0.05) / (2 * m))  # noqa: E731  (eq. 25's first term)
    for arm in ("bm25", "dense"):
        for query_row in range(0, len(fusion.test), len(fusion.test) // SAMPLE):
            reference = np.array([s for (s,) in wh.sql(
                "SELECT score FROM models.null_references WHERE arm = ? AND query_row = ?",
                [arm, query_row])])  # fmt: skip
            nulls = [d for d in held_out if d not in truth[query_row]]
            scores = dict(wh.sql("SELECT doc_row, score FROM models.fusion_arms WHERE arm = ? AND query_row = ? AND "
                                 "list_contains(?, doc_row)", [arm, query_row, nulls]))  # fmt: skip
            sample = np.array([scores[d] for d in nulls])
            distance, lower, eta = got[(arm, query_row)]
            assert distance == pytest.approx(stats.ks_2samp(reference, sample).statistic, abs=1e-12)
            assert lower == pytest.approx(max(0.0, distance - epsilon(1000) - epsilon(len(sample))), abs=1e-12)
            assert eta == len(panel & truth[query_row]) / 1000


def test_doc_doc_transport_eq_22_to_24_and_its_held_out_validation(fusion, truth):
    wh = fusion.wh
    vectors = {d: np.asarray(v, dtype=np.float64) for d, v in wh.sql(
        "SELECT d.row_index, v.vector FROM raw.documents AS d JOIN raw.document_vectors AS v USING (corpus, doc_id) "
        "JOIN raw.null_panels AS p ON p.doc_row = d.row_index AND p.panel = 'null_panel'")}  # fmt: skip
    panel = np.stack(list(vectors.values()))
    pairs = (panel @ panel.T)[np.triu_indices(len(panel), k=1)]
    queries = {q: np.asarray(v, dtype=np.float64) for q, v in wh.sql(
        "SELECT q.row_index, v.vector FROM raw.queries AS q "
        "JOIN raw.query_vectors AS v USING (corpus, qid)")}  # fmt: skip
    blocks = np.asarray(block_draws(len(fusion.test), 10, 20261201))
    rows = {(f, lv, k): r for f, lv, k, *r in wh.sql(
        "SELECT fold, level, kind, doc_pairs, mu_dd, sigma_dd, t_dd, mu_qd, mu_qd_eq22, sigma_qd, threshold, "
        "exceedance "
        "FROM models.null_transport")}  # fmt: skip
    held_out = held_out_documents(fusion)
    fold = 3
    training = np.stack([v for q, v in queries.items() if blocks[q] != fold])
    mu_q, mu_d = training.mean(axis=0), panel.mean(axis=0)
    sigma_q, sigma_d = np.cov(training, rowvar=False, bias=True), np.cov(panel, rowvar=False, bias=True)
    # eq. 22 and eq. 23 in closed form, from the vectors' means and covariances
    mean_qd = mu_q @ mu_d
    var_qd = np.trace(sigma_q @ sigma_d) + mu_q @ sigma_d @ mu_q + mu_d @ sigma_q @ mu_d
    for level in LEVELS:
        t_dd = np.quantile(pairs, 1 - level)
        doc_pairs, mu_dd, sigma_dd, t, mu_qd, mu_qd_eq22, sigma_qd, threshold, exceedance = rows[
            (str(fold), level, "affine")
        ]
        assert doc_pairs == len(pairs)
        assert (mu_dd, sigma_dd, t) == pytest.approx((pairs.mean(), pairs.std(), t_dd), rel=1e-5)
        assert mu_qd_eq22 == pytest.approx(mean_qd, rel=1e-6) and mu_qd == pytest.approx(mean_qd, rel=1e-5)
        assert sigma_qd == pytest.approx(math.sqrt(var_qd), rel=1e-4)
        assert threshold == pytest.approx(mu_qd + sigma_qd / sigma_dd * (t - mu_dd), rel=1e-12)  # eq. 24
        assert rows[(str(fold), level, "multiplicative")][7] == pytest.approx(sigma_qd / sigma_dd * t, rel=1e-12)
        tested = [(q, d) for q in range(len(fusion.test)) if blocks[q] == fold for d in held_out if d not in truth[q]]
        scores = np.array(list(arm_scores(wh, "dense", tested).values()))
        assert len(scores) == len(tested)
        assert exceedance == pytest.approx(np.mean(scores >= threshold), rel=1e-12)


def test_eq_26_acceptance_with_dkw_margins_in_independent_units(fusion, truth):
    wh = fusion.wh
    order = {d: i for i, d in enumerate(panel_draws(len(fusion.train), len(fusion.train), 20261202))}
    held_out = held_out_documents(fusion)
    for arm, m0, m1, threshold, j_hat, e0, e1, j_lower, accepted in wh.sql(
        "SELECT arm, null_units, relevant_units, threshold, j_hat, epsilon_null, epsilon_relevant, j_lower, accepted "
        "FROM models.separation_acceptance WHERE arm IN ('bm25', 'dense')"
    ):
        first_nulls = [(q, next(d for d in held_out if d not in truth[q])) for q in range(len(fusion.test))]
        first_golds = [(q, min(truth[q], key=order.__getitem__)) for q in range(len(fusion.test))]
        scores = arm_scores(wh, arm, first_nulls + first_golds)
        nulls, golds = np.sort([scores[p] for p in first_nulls]), np.sort([scores[p] for p in first_golds])
        candidates = np.unique(np.concatenate([nulls, golds]))
        j = np.searchsorted(nulls, candidates, side="right") / len(nulls) - np.searchsorted(
            golds, candidates, side="right"
        ) / len(golds)
        best = int(np.argmax(j))  # the first (lowest) of the maximising scores
        epsilon = lambda m: math.sqrt(math.log(4 / 0.05) / (2 * m))  # noqa: E731
        assert (m0, m1) == (len(fusion.test), len(fusion.test))
        assert (threshold, j_hat) == pytest.approx((candidates[best], j[best]), rel=1e-12)
        assert (e0, e1) == pytest.approx((epsilon(m0), epsilon(m1)), rel=1e-12)
        assert j_lower == pytest.approx(j[best] - e0 - e1, rel=1e-12) and accepted == (j_lower >= 0.2)


# -- eq. 5's estimated weights --------------------------------------------------------------------
def test_stouffer_weights_are_sigma_inverse_delta_from_the_other_blocks(fusion, truth):
    rows = candidate_p_values(fusion, truth)
    sizes = 1001
    z = np.stack([stats.norm.ppf(1 - (rows[f"p_{arm}"] - 1 / (2 * sizes))) for arm in ("bm25", "dense")], axis=1)
    blocks = np.asarray(block_draws(len(fusion.test), 10, 20261201))[rows["query_row"]]
    got = {
        f: r
        for f, *r in fusion.wh.sql(
            "SELECT fold, delta_bm25, delta_dense, weight_bm25, weight_dense, monotone FROM models.stouffer_weights"
        )
    }
    for fold in range(10):
        train = blocks != fold
        relevant, irrelevant = z[train & rows["relevant"]], z[train & ~rows["relevant"]]
        delta = relevant.mean(axis=0) - irrelevant.mean(axis=0)
        pooled = ((relevant - relevant.mean(axis=0)).T @ (relevant - relevant.mean(axis=0))
                  + (irrelevant - irrelevant.mean(axis=0)).T @ (irrelevant - irrelevant.mean(axis=0))) \
            / (len(relevant) + len(irrelevant) - 2)  # fmt: skip
        weights = np.linalg.solve(pooled, delta)
        assert got[fold][:4] == pytest.approx([*delta, *weights], rel=1e-6)
        assert got[fold][4] == bool((weights >= 0).all())
    ranked = fusion.wh.sql("SELECT query_key, doc_key, rank, score FROM models.stouffer_learned_rankings "
                           "WHERE query_key = 7 ORDER BY rank")  # fmt: skip
    weights = got[int(block_draws(len(fusion.test), 10, 20261201)[7])][2:4]
    mine = rows["query_row"] == 7
    expected = {d: weights[0] * zb + weights[1] * zd for d, zb, zd in zip(rows["doc_row"][mine], *z[mine].T)}
    assert [s for *_, s in ranked] == pytest.approx([expected[d] for _, d, _, _ in ranked], rel=1e-6)
    assert [s for *_, s in ranked] == sorted((s for *_, s in ranked), reverse=True)


# -- stages and eq. 20 ------------------------------------------------------------------------------
def test_stages_after_admission_and_eq_20_at_every_transition(fusion, truth):
    wh = fusion.wh
    qrels = {str(q): {str(d): 1 for d in docs} for q, docs in enumerate(truth)}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"})
    rankings: dict[str, dict[int, list[int]]] = {}
    for system, query_key, doc_key in wh.sql(
        "SELECT system, query_key, doc_key FROM models.rankings ORDER BY system, query_key, rank"
    ):
        rankings.setdefault(system, {}).setdefault(query_key, []).append(doc_key)
    retained = by_query(wh, "SELECT query_row, doc_row FROM models.admission WHERE admitted OR fallback")
    for rule in ("dense", "rrf", "mixture"):
        for query_row, documents in list(rankings[f"{rule}_admitted"].items())[:200]:
            keep = set(retained[query_row].tolist())
            assert documents == [d for d in rankings[rule][query_row] if d in keep]

    def ndcg(system: str) -> dict[str, float]:
        run = {str(q): {str(d): 1000.0 - r for r, d in enumerate(docs)} for q, docs in rankings[system].items()}
        return {q: v["ndcg_cut_10"] for q, v in evaluator.evaluate(run).items()}

    def eq20(ranking_to: list[int], ranking_from: list[int], relevant: set[int]) -> float:
        w = lambda r: 1 / math.log2(r + 1) if r <= 10 else 0.0  # noqa: E731
        rank_to = {d: r for r, d in enumerate(ranking_to, start=1)}
        rank_from = {d: r for r, d in enumerate(ranking_from, start=1)}
        ideal = sum(w(r) for r in range(1, len(relevant) + 1))
        gains = sum(w(rank_to.get(d, 10**9)) - w(rank_from.get(d, 10**9)) for d in relevant)
        return gains / ideal

    deltas = {(t, q): v for t, q, v in wh.sql("SELECT transition, query, delta FROM models.stage_ndcg_deltas")}
    summary = {
        t: r
        for t, *r in wh.sql("SELECT transition, queries, mean_delta, improved, worsened FROM models.stage_transitions")
    }
    for from_stage, to_stage in fusion.params["stage_transitions"]:
        transition = f"{from_stage} -> {to_stage}"
        before, after = ndcg(from_stage), ndcg(to_stage)
        values = np.array([after[q] - before[q] for q in before])
        assert summary[transition][0] == len(values)
        assert summary[transition][1] == pytest.approx(values.mean(), abs=1e-12)
        assert summary[transition][2:] == [np.sum(values > 0), np.sum(values < 0)]
        for query_row in range(0, len(fusion.test), 97):
            qid = fusion.wh.sql("SELECT qid FROM models.queries WHERE query_row = ?", [query_row])[0][0]
            expected = eq20(rankings[to_stage][query_row], rankings[from_stage][query_row], truth[query_row])
            assert deltas[(transition, qid)] == pytest.approx(expected, abs=1e-12)
    # admission at eq. 27's level admits nothing (the e-value is capped at sqrt(1001)/2 < 20): the dense
    # ranking after admission is its top 10, whose nDCG@10 is the dense arm's
    assert summary["dense -> dense_admitted"][1:] == [0.0, 0, 0]


# -- the success condition, the outputs and the report ----------------------------------------------
def test_success_condition_is_the_declared_contrast(fusion):
    r = fusion.results
    task = r["success_condition"]["this_task"]
    assert r["success_condition"]["declared"] == {
        "success_rule": "mixture",
        "success_baseline": "rrf",
        "success_measure": "nDCG@10",
        "success_tasks": ["scifact", "banking77"],
    }
    methods = r["methods"]
    assert task["delta"] == pytest.approx(
        methods["mixture"]["nDCG@10"]["value"] - methods["rrf"]["nDCG@10"]["value"], abs=1e-15
    )
    contrast = r["contrasts"]["all"]["mixture - rrf"]["nDCG@10"]
    assert (task["ci_low"], task["ci_high"]) == (contrast["ci_low"], contrast["ci_high"])
    assert task["holds_on_task"] == (task["delta"] > 0) and task["tasks_declared"] == 2 and task["task_declared"]
    assert "22" in r["success_condition"]["note"]


def test_results_json_csvs_and_the_reference_card(fusion):
    r, out = fusion.results, fusion.out
    for name in ("pipeline.csv", "stage_transitions.csv", "null_calibration.csv", "relevance_joint.csv",
                 "arm_error_rates.csv", "relevance_by_score.csv", "gaussian_reversals.csv", "cold_start.csv",
                 "cold_start_queries.csv", "transport.csv", "separation.csv", "stouffer_weights.csv",
                 "vector_norms.csv", "success_condition.csv"):  # fmt: skip
        assert (out / name).stat().st_size > 100, name
    assert set(r["section9"]) >= {"pipeline", "null_calibration", "gaussian", "cold_start", "transport", "separation"}
    assert {"dense_admitted", "rrf_admitted", "mixture_admitted", "stouffer_learned"} <= set(r["methods"])
    assert r["reference"]["frozen_at"] == fusion.freeze.record["created_at"]
    for card in r["reference"]["cards"]:
        assert card["tie_policy"] == "(-S, -s_dense NULLS LAST, row_type, doc_row)"
        assert "kappa = 0.0, beta = 0.5" in card["combiner"] and "first 100" in card["depth_contract"]
    assert fusion.wh.sql("SELECT DISTINCT row_type FROM models.fused_rankings") == [("document",)]


def test_the_report_draws_section_9_from_the_csvs(study_reports):
    import re

    fixture, folder, html = study_reports["fusion"]
    assert "Seed 003, section 9" in html
    svg = re.search(r'<svg[^>]*id="s9-calibration".*?</svg>', html, re.S).group(0)
    marks = re.findall(r'data-series="([^"]+)" data-label="([^"]+)" data-x="([^"]*)" data-y="([^"]*)"', svg)
    rows = [
        row for row in __import__("csv").DictReader((folder / "null_calibration.csv").open()) if row["stratum"] == "all"
    ]
    assert {(s, float(y)) for s, _, _, y in marks} == {(f"{r['arm']} ({r['reference']})", float(r["null_share"]))
                                                          for r in rows}  # fmt: skip
    for ident in ("s9-gaussian", "s9-relevance-mixture", "s9-joint-relevant", "s9-joint-non-relevant"):
        assert f'id="{ident}"' in html, ident
    assert json.loads((folder / "results.json").read_text())["success_condition"]["this_task"]["task"] == "banking77"
