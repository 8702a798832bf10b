"""Mathematically equal scores are equal (issue 12): where a tie chain decides an order (the lanes study's
combo and breadth, Fisher's products, RRF's sums, the greedy selection's coverage gains), the models
rank on an exact key, so that two scores reached along different arithmetic paths tie and the
documented chain decides, where doubles would have let rounding decide. Each case is built so that the
double arithmetic used before orders the two documents the other way round (asserted too, so that the
test can fail)."""

from __future__ import annotations

import math
from fractions import Fraction

from fusion_runs import fuse
from lanes_warehouses import CORPUS, HandScores, chunks, insert_documents, run, write_lanes, write_topics

from rankhouse.studies.lanes.loaders import load_lane_runs, load_narratives
from rankhouse.studies.lanes.passages import score_passages


def ranked(fused, rule: str) -> list[str]:
    return [d for _, d in sorted((rank, d) for (_, d), (_, rank) in fused.rules[rule].items())]


def test_rrf_sums_that_are_equal_tie_and_the_dense_score_decides():
    # x: bm25 rank 80, dense rank 3; y: bm25 rank 30, dense rank 24. 1/140 + 1/63 = 1/90 + 1/84 = 29/1260.
    assert Fraction(1, 140) + Fraction(1, 63) == Fraction(1, 90) + Fraction(1, 84)
    assert 1 / 140 + 1 / 63 < 1 / 90 + 1 / 84  # in doubles y would win
    fillers = [f"f{i:03d}" for i in range(100)]
    bm25 = fillers[:98]
    bm25.insert(29, "y")
    bm25.insert(79, "x")
    dense = fillers[2:99]
    dense.insert(2, "x")
    dense.insert(23, "y")
    assert (bm25.index("x"), bm25.index("y"), dense.index("x"), dense.index("y")) == (79, 29, 2, 23)
    runs = {arm: {"q": {d: 1000.0 - r for r, d in enumerate(docs)}} for arm, docs in (("bm25", bm25), ("dense", dense))}
    nulls = {arm: {"q": {f"n{i}": float(i) for i in range(10)}} for arm in runs}
    fused = fuse(runs, nulls, depth=100)
    assert fused.rules["rrf"]["q", "x"][0] == fused.rules["rrf"]["q", "y"][0] == 29 / 1260
    order = ranked(fused, "rrf")
    assert order.index("x") < order.index("y")  # tied; x has the higher dense score


def test_fisher_products_that_are_equal_tie_and_the_dense_score_decides():
    # p = (1 + #{reference >= s}) / 1001 with references 1..1000: x has numerators (18, 1), y (3, 6).
    assert -2 * (math.log(18 / 1001) + math.log(1 / 1001)) < -2 * (math.log(3 / 1001) + math.log(6 / 1001))
    runs = {"bm25": {"q": {"x": 983.5, "y": 998.5}}, "dense": {"q": {"x": 2000.0, "y": 995.5}}}
    nulls = {arm: {"q": {f"n{i}": float(i) for i in range(1, 1001)}} for arm in runs}
    fused = fuse(runs, nulls, depth=2)
    assert {key: round(p * 1001) for key, (_, p, _) in fused.p.items()} == {
        ("bm25", "q", "x"): 18, ("bm25", "q", "y"): 3, ("dense", "q", "x"): 1, ("dense", "q", "y"): 6,
    }  # fmt: skip
    assert fused.rules["fisher"]["q", "x"][0] == fused.rules["fisher"]["q", "y"][0]
    assert ranked(fused, "fisher") == ["x", "y"]  # tied; x has the higher dense score


def test_lane_combos_that_are_equal_tie_and_the_source_rank_decides(wh, tmp_path):
    """Five candidates; per unit the documents' scores rank them 1..5 (percentiles i / 5). a has the
    narrative's 3/5 and both subnarratives' 1/5, b the narrative's 1/5 and both 3/5: combo 2/5 for both,
    0.39999999999999997 and 0.4 in doubles. a has the better source rank, so it comes first."""
    counts = {  # document -> (narrative, facet:x, facet:y) counts of candidates scored at most its score
        "a": (3, 1, 1), "b": (1, 3, 3), "c": (2, 2, 2), "d": (4, 4, 4), "e": (5, 5, 5),
    }  # fmt: skip
    combo = {d: Fraction(1, 2) * Fraction(n, 5) + Fraction(1, 2) * (Fraction(7, 10) * Fraction(max(x, y), 5)
             + Fraction(3, 10) * Fraction(min(x, y), 5)) for d, (n, x, y) in counts.items()}  # fmt: skip
    assert combo["a"] == combo["b"] == Fraction(2, 5)
    doubled = {
        d: 0.5 * (n / 5) + 0.5 * (0.7 * (max(x, y) / 5) + 0.3 * (min(x, y) / 5)) for d, (n, x, y) in counts.items()
    }
    assert doubled["a"] < doubled["b"]  # in doubles b would win
    documents = {d: f"document {d}" for d in counts} | {f"z{i}": "filler" for i in range(6)}
    insert_documents(wh, documents)
    load_narratives(wh, write_topics(tmp_path, {"T": ["x", "y"]}), CORPUS)
    ranks = {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5}
    lanes = [("T", "narrative", f"z{i}", 10 + i, 0.0) for i in range(6)]  # MAD 0: the five above the median
    lanes += [("T", "narrative", d, ranks[d], 1.0) for d in counts]
    load_lane_runs(wh, write_lanes(tmp_path, lanes), "lanes")
    run(wh, "+lane_chunks")
    texts = {(unit, text) for unit, text in wh.sql("SELECT unit, text FROM raw.lane_units WHERE topic = 'T'")}
    unit_text = {unit: text for unit, text in texts}
    table = {}
    for d, by_unit in counts.items():
        for unit, count in zip(("narrative", "facet:x", "facet:y"), by_unit):
            table[unit_text[unit], chunks(documents[d])[0][1]] = count / 10
    score_passages(wh, CORPUS, HandScores(table))
    run(wh, "+lane_orderings")
    rows = wh.sql("SELECT doc_id, combo_key, combo FROM models.lane_orderings WHERE method = 'combo' ORDER BY rank")
    assert [d for d, _, _ in rows] == ["e", "d", "a", "b", "c"]
    keys = {d: key for d, key, _ in rows}
    assert keys["a"] == keys["b"]
    assert {d: value for d, _, value in rows}["a"] == {d: value for d, _, value in rows}["b"] == 0.4


def test_coverage_gains_that_are_equal_tie_and_the_smaller_doc_id_decides():
    """Seed 000's greedy step: b's facet gains are a's in another order, so F({a}) = F({b}) exactly, though
    added one by one in doubles they differ ((0.03 + 0.84) + 0.43 = 1.3, (0.43 + 0.03) + 0.84 =
    1.2999999999999998): the selection's sums are exact (math.fsum), the tie goes to the smaller id."""
    from rankhouse.studies.evidence.select import greedy_steps, objective

    gains = [[0.03, 0.43], [0.84, 0.03], [0.43, 0.84]]  # facet rows; columns: documents "b", "a"
    penalties = [[0.0, 0.0], [0.0, 0.0]]
    assert sum(row[0] for row in gains) > sum(row[1] for row in gains)  # added one by one, b would win
    assert objective(gains, penalties, [0]) == objective(gains, penalties, [1])
    assert [doc for doc, _ in greedy_steps(["b", "a"], gains, penalties, 1)] == ["a"]
