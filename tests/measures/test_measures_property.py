"""Random runs and qrels (ties, negative grades, empty queries, queries without relevant documents)
against pytrec_eval, which (as trec_eval 9) compares scores as 32-bit floats: rankhouse evaluates with
score_precision = "float" here (trec_eval 10's double order is tested in test_trec_eval_parity.py)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from oracles import EVERY_MEASURE, pytrec_per_query

from rankhouse.evaluation import EvalOptions, evaluate
from rankhouse.warehouse import Warehouse

QIDS = ["q1", "q2", "q3", "q4"]
DOCS = ["d0", "d1", "d2", "D3", "d10", "é4", "d#5", "x6", "d7", "d8", "d9", "a11"]
# Few distinct scores so that ties are common; 1.00000001 equals 1.0 in float32 (trec_eval's type).
SCORES = st.sampled_from([0.0, 0.5, 1.0, 1.00000001, 2.5, -1.0, 1e-3]) | st.floats(-10, 10, allow_nan=False)
MEASURES = EVERY_MEASURE + ["P@3", "R@3", "nDCG@3", "AP@3", "Success@3"]

# Every query keeps one grade >= 0: for a query whose judgments are all negative, trec_eval (and so
# pytrec_eval) reads a stale num_rel_levels left by the previous query and crashes or loops; rankhouse
# scores such a query 0 (tested in test_all_negative_query_scores_zero).
qrels_strategy = st.dictionaries(
    st.sampled_from(QIDS),
    st.dictionaries(st.sampled_from(DOCS), st.integers(-1, 3), min_size=1, max_size=8).filter(
        lambda docs: any(grade >= 0 for grade in docs.values())
    ),
    min_size=1,
    max_size=4,
)
run_strategy = st.dictionaries(
    st.sampled_from(QIDS),
    st.dictionaries(st.sampled_from(DOCS), SCORES, min_size=1, max_size=10),
    min_size=1,
    max_size=4,
)


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines))
    return path


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    qrels=qrels_strategy,
    run=run_strategy,
    level=st.sampled_from([1, 2]),
    judged_only=st.booleans(),
)
def test_random_runs_match_pytrec_eval(qrels, run, level, judged_only):
    assume(set(qrels) & set(run))  # with no judged query at all rankhouse refuses (tested elsewhere)
    with tempfile.TemporaryDirectory() as tmp:
        qrels_path = write(
            Path(tmp) / "qrels", [f"{q} 0 {d} {r}" for q, docs in qrels.items() for d, r in docs.items()]
        )
        run_path = write(
            Path(tmp) / "run", [f"{q} Q0 {d} 1 {s!r} tag" for q, docs in run.items() for d, s in docs.items()]
        )
        options = EvalOptions(relevance_level=level, judged_only=judged_only, complete=False, score_precision="float")
        with Warehouse(":memory:") as wh:
            result = evaluate(wh, qrels_path, [run_path], MEASURES, options)
    ours = result.per_query[result.runs[0]]
    expected = pytrec_per_query(qrels, run, MEASURES, level=level, judged_only=judged_only)
    assert set(ours) == set(expected)
    for qid in expected:
        for m in MEASURES:
            assert ours[qid][m] == pytest.approx(expected[qid][m], abs=1e-9), f"{m} on {qid}"


def test_all_negative_query_scores_zero(tmp_path):
    """A query judged only "pooled but not judged" (-1) has no relevant document: every measure is 0."""
    qrels = write(tmp_path / "qrels", ["q1 0 d1 -1", "q1 0 d2 -1", "q2 0 d1 1"])
    run = write(tmp_path / "run", ["q1 Q0 d1 1 2.0 t", "q1 Q0 d2 2 1.0 t", "q2 Q0 d1 1 1.0 t"])
    with Warehouse(":memory:") as wh:
        result = evaluate(wh, qrels, [run], MEASURES)
    q1 = result.per_query[result.runs[0]]["q1"]
    assert {m: v for m, v in q1.items() if m != "NumRet"} == {m: 0.0 for m in MEASURES if m != "NumRet"}
    assert q1["NumRet"] == 2
