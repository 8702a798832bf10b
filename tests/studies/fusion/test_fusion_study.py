"""The fusion study (seed 003) on BANKING77, run end to end in the BANKING77 study's warehouse; its
figures checked against pytrec_eval, numpy re-computations of the seed's equations, and the freeze.

Judgments are rebuilt here from the CSV intents (a training message is relevant to a test query of
the same intent), independently of rankhouse.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import pytrec_eval

from rankhouse.paths import ROOT
from rankhouse.resample import panel_draws

STUDY = ROOT / "studies" / "fusion_banking77.toml"
RULES = ["bm25", "dense", "rrf", "rsf", "mixture", "fisher", "stouffer"]
SAMPLE = 40  # queries re-computed in Python for the per-row equations


@pytest.fixture
def fusion(fusion_banking77_study):
    """The fusion study run in the BANKING77 study's warehouse (conftest.fusion_banking77_study)."""
    return fusion_banking77_study


def intent_qrels(fusion) -> dict[str, dict[str, int]]:
    by_intent: dict[str, list[str]] = {}
    for row, record in enumerate(fusion.train):
        by_intent.setdefault(record["category"], []).append(str(row))
    return {str(q): dict.fromkeys(by_intent[r["category"]], 1) for q, r in enumerate(fusion.test)}


def fused_runs(fusion) -> dict[str, dict[str, dict[str, float]]]:
    """Each rule's ranking with scores that encode its rank, so that pytrec_eval keeps rankhouse's
    documented tie order instead of re-breaking ties by document id."""
    runs: dict[str, dict] = {rule: {} for rule in RULES}
    for rule, query_row, doc_row, rank in fusion.wh.sql(
        "SELECT rule, query_row, doc_row, rank FROM models.fused_rankings"
    ):
        runs[rule].setdefault(str(query_row), {})[str(doc_row)] = 10_000.0 - rank
    return runs


def test_measures_match_pytrec_eval(fusion):
    qrels = intent_qrels(fusion)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"P.1", "recip_rank", "ndcg_cut.10", "recall.100"})
    for rule, run in fused_runs(fusion).items():
        per_query = evaluator.evaluate(run)
        assert len(per_query) == len(fusion.test)
        ours = fusion.results["methods"][rule]
        for measure, key in (
            ("Top-1", "P_1"),
            ("RR", "recip_rank"),
            ("nDCG@10", "ndcg_cut_10"),
            ("R@100", "recall_100"),
        ):
            expected = np.mean([v[key] for v in per_query.values()])
            assert ours[measure]["value"] == pytest.approx(expected, abs=1e-9), (rule, measure)


def test_results_json_has_every_rule_and_measure(fusion):
    for rule in RULES:
        for measure in ("Top-1", "RR", "nDCG@10", "R@100", "RR@10"):
            assert 0 <= fusion.results["methods"][rule][measure]["value"] <= 1
    for name in ("reversals.csv", "ndcg_deltas.csv", "influence.csv", "admission.csv", "reference_bounds.csv",
                 "reference_fingerprints.csv", "runs/mixture.run"):  # fmt: skip
        assert (fusion.out / name).stat().st_size > 0, name
    assert fusion.results["freeze_id"] == fusion.freeze.freeze_id


def test_null_panel_is_the_seeded_draw_and_keeps_lexical_non_matches(fusion):
    wh = fusion.wh
    panel = [
        row for (row,) in wh.sql("SELECT doc_row FROM raw.null_panels WHERE panel = 'null_panel' ORDER BY position")
    ]
    assert panel == panel_draws(len(fusion.train), 1000, 20261130).tolist()
    assert len(set(panel)) == 1000
    zeros, per_query = wh.sql(
        "SELECT count(*) FILTER (WHERE score = 0), count(*) / count(DISTINCT query_row) FROM models.null_references "
        "WHERE arm = 'bm25'"
    )[0]
    assert per_query == 1000 and zeros > 0  # a BM25 non-match is an observation of the null


def test_p_values_follow_eq_1(fusion):
    wh = fusion.wh
    for arm in ("bm25", "dense"):
        reference: dict[int, list[float]] = {}
        for query_row, score in wh.sql(
            f"SELECT query_row, score FROM models.null_references WHERE arm = ? AND query_row < {SAMPLE}", [arm]
        ):
            reference.setdefault(query_row, []).append(score)
        rows = wh.sql(
            f"SELECT query_row, score, p FROM models.arm_p_values WHERE arm = ? AND query_row < {SAMPLE}", [arm]
        )
        assert rows
        for query_row, score, p in rows:
            null = np.asarray(reference[query_row])
            assert p == pytest.approx((1 + np.sum(null >= score)) / (len(null) + 1), abs=1e-15)
            assert p >= 1 / (len(null) + 1)


def test_every_arm_scores_every_candidate(fusion):
    missing = fusion.wh.sql(
        "SELECT count(*) FROM (SELECT query_row, doc_row, count(*) AS arms FROM models.fusion_candidates "
        "GROUP BY ALL) WHERE arms <> 2"
    )[0][0]
    assert missing == 0


def test_mixture_matches_eq_7_to_11(fusion):
    kappa, beta = fusion.params["kappa"], fusion.params["beta"]
    z = ((1 + kappa) ** (1 - beta) - kappa ** (1 - beta)) / (1 - beta)
    p_values: dict[tuple, list[float]] = {}
    for query_row, doc_row, p in fusion.wh.sql(
        f"SELECT query_row, doc_row, p FROM models.arm_p_values WHERE query_row < {SAMPLE}"
    ):
        p_values.setdefault((query_row, doc_row), []).append(p)
    for query_row, doc_row, score in fusion.wh.sql(
        f"SELECT query_row, doc_row, score FROM models.fusion_mixture WHERE query_row < {SAMPLE}"
    ):
        ps = np.asarray(p_values[(query_row, doc_row)])
        expected = math.log(np.mean((kappa + ps) ** -beta / z))
        assert score == pytest.approx(expected, abs=1e-12)


def test_influence_reference_bounds_and_admission(fusion):
    wh, params = fusion.wh, fusion.params
    for influence, p, p_other in wh.sql(
        f"SELECT i.influence, a.p, b.p FROM models.fusion_influence AS i "
        f"JOIN models.arm_p_values AS a USING (arm, query_row, doc_row) "
        f"JOIN models.arm_p_values AS b ON b.query_row = i.query_row AND b.doc_row = i.doc_row AND b.arm <> i.arm "
        f"WHERE i.query_row < {SAMPLE}"
    ):  # eq. 13 with equal pi
        w, w_other = (params["kappa"] + p) ** -params["beta"], (params["kappa"] + p_other) ** -params["beta"]
        assert influence == pytest.approx(w / (w + w_other), abs=1e-12)
    for arm, m, epsilon in wh.sql("SELECT arm, reference_size, dkw_epsilon FROM models.reference_bounds"):
        assert m == 1000
        assert epsilon == pytest.approx(math.sqrt(math.log(2 / params["dkw_delta"]) / (2 * m)), abs=1e-15)
    for n, alpha, admitted_wrongly, fallback_outside_reserve in wh.sql(
        "SELECT count(*), min(a.alpha), count(*) FILTER (WHERE a.admitted <> (a.combined_p <= a.alpha)), "
        "count(*) FILTER (WHERE a.fallback AND c.rank > ?) FROM models.admission AS a "
        "JOIN models.fusion_candidates AS c ON c.arm = 'dense' AND c.query_row = a.query_row AND c.doc_row = a.doc_row "
        "GROUP BY a.query_row",
        [params["reserve_depth"]],
    ):  # eq. 27: alpha(n) = max(alpha0, 1 - eta^(1/n))
        assert alpha == pytest.approx(max(params["alpha0"], 1 - params["eta"] ** (1 / n)), abs=1e-15)
        assert admitted_wrongly == 0 and fallback_outside_reserve == 0


def test_reversals_and_ndcg_deltas_match_eq_15_16_and_20(fusion):
    wh, freeze = fusion.wh, fusion.freeze.freeze_id
    qrels = intent_qrels(fusion)
    ranks: dict[tuple, dict[str, int]] = {}
    for rule, query_row, doc_row, rank in wh.sql(
        f"SELECT rule, query_row, doc_row, rank FROM models.fused_rankings WHERE query_row < {SAMPLE}"
    ):
        ranks.setdefault((rule, query_row), {})[str(doc_row)] = rank
    reversals = {
        (rule, q): (reversed_, corrected)
        for rule, q, reversed_, corrected in wh.sql(
            "SELECT rule, query_row, dense_correct_reversed, dense_wrong_corrected FROM results.fusion_reversals "
            f"WHERE freeze_id = ? AND query_row < {SAMPLE}",
            [freeze],
        )
    }
    deltas = {
        (rule, q): delta
        for rule, q, delta in wh.sql(
            "SELECT rule, query_row, delta FROM results.fusion_ndcg_deltas "
            f"WHERE freeze_id = ? AND query_row < {SAMPLE}",
            [freeze],
        )
    }
    for query_row in range(SAMPLE):
        relevant = qrels[str(query_row)]
        dense = ranks[("dense", query_row)]
        idcg = sum(1 / math.log2(i + 2) for i in range(min(10, len(relevant))))
        for rule in RULES[:1] + RULES[2:]:
            fused = ranks[(rule, query_row)]
            good = [d for d in fused if d in relevant]
            bad = [d for d in fused if d not in relevant]
            reversed_ = sum(dense[g] < dense[b] and fused[g] > fused[b] for g in good for b in bad)
            corrected = sum(dense[g] > dense[b] and fused[g] < fused[b] for g in good for b in bad)
            if good:
                assert reversals[(rule, query_row)] == (reversed_, corrected), (rule, query_row)

            def w(r: int) -> float:
                return 1 / math.log2(r + 1) if r <= 10 else 0.0

            expected = sum(w(fused[d]) - w(dense[d]) for d in good) / idcg  # eq. 20
            assert deltas[(rule, query_row)] == pytest.approx(expected, abs=1e-12), (rule, query_row)


def test_contrasts_match_a_numpy_bootstrap_over_the_stored_plan(fusion):
    wh, freeze = fusion.wh, fusion.freeze.freeze_id
    values = {rule: np.zeros(len(fusion.test)) for rule in RULES}
    for rule, query_row, top1 in wh.sql(
        "SELECT rule, query_row, top1 FROM results.fusion_query_metrics WHERE freeze_id = ?", [freeze]
    ):
        values.setdefault(rule, np.zeros(len(fusion.test)))[query_row] = top1  # and section 9's stages
    draws = np.zeros((10_000, len(fusion.test)), dtype=np.int64)
    for replicate, draw, item in wh.sql(
        "SELECT replicate, draw, item FROM raw.resample_plans WHERE plan = ?", [fusion.params["bootstrap_plan"]]
    ):
        draws[replicate, draw] = item
    for rule, baseline in (("mixture", "dense"), ("mixture", "rrf"), ("rrf", "dense")):
        differences = values[rule] - values[baseline]
        contrast = fusion.results["contrasts"]["all"][f"{rule} - {baseline}"]["Top-1"]
        assert contrast["mean"] == pytest.approx(differences.mean(), abs=1e-12)
        low, high = np.quantile(differences[draws].mean(axis=1), [0.025, 0.975])
        assert (contrast["ci_low"], contrast["ci_high"]) == pytest.approx((low, high), abs=1e-12)


def test_the_freeze_holds_the_null_reference_and_its_fingerprint(fusion):
    record = json.loads(fusion.freeze.path.read_text())
    for table in ("models.null_references", "models.reference_fingerprints", "raw.null_panels"):
        assert table in record["tables"], table
    cards = {row[0]: row[1:] for row in fusion.wh.sql(
        "SELECT arm, panel_seed, panel_size, reference_size, dimension FROM models.reference_fingerprints"
    )}  # fmt: skip
    assert cards == {"bm25": (20261130, 1000, 1000, None), "dense": (20261130, 1000, 1000, 384)}
