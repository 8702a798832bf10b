"""Every measure, per query, against pytrec_eval (computed now) and trec_eval 10's own test outputs.

pytrec_eval embeds trec_eval 9.0.8, which compares scores as 32-bit floats: every comparison with it
evaluates with score_precision = "float" (FLOAT_ORDER); trec_eval 10's outputs are compared with the
default, double order."""

from __future__ import annotations

import re

import ir_measures
import pytest
from conftest import TREC, read_qrels, read_run
from oracles import (
    EVERY_MEASURE,
    float_only_ties,
    pytrec_per_query,
    rankhouse_per_query,
    read_trec_eval_output,
    trec_order_truncate,
)

from rankhouse.evaluation import EvalOptions, evaluate
from rankhouse.measures import parse_measures
from rankhouse.warehouse import Warehouse

TOLERANCE = 1e-6
FLOAT = "float"  # pytrec_eval's (trec_eval 9's) score precision
FLOAT_ORDER = EvalOptions(score_precision=FLOAT)


def assert_close(ours: dict, expected: dict, measures: list[str]) -> None:
    assert set(ours) == set(expected), "different query sets"
    for qid in expected:
        for m in measures:
            assert ours[qid][m] == pytest.approx(expected[qid][m], abs=TOLERANCE), f"{m} on query {qid}"


def test_every_measure_matches_pytrec_eval():
    ours = rankhouse_per_query(TREC / "qrels.test", TREC / "results.test", EVERY_MEASURE, FLOAT_ORDER)
    expected = pytrec_per_query(read_qrels(TREC / "qrels.test"), read_run(TREC / "results.test"), EVERY_MEASURE)
    assert_close(ours, expected, EVERY_MEASURE)


def test_comment_lines_in_qrels_are_skipped():
    ours = rankhouse_per_query(TREC / "qrels.test.with-comments", TREC / "results.test", EVERY_MEASURE, FLOAT_ORDER)
    expected = pytrec_per_query(read_qrels(TREC / "qrels.test"), read_run(TREC / "results.test"), EVERY_MEASURE)
    assert_close(ours, expected, EVERY_MEASURE)


def test_complete_scores_a_missing_query_zero():
    """results.trunc lacks query 302: with complete (-c) it is evaluated as an empty ranking."""
    qrels, run = read_qrels(TREC / "qrels.test"), read_run(TREC / "results.trunc")
    ours = rankhouse_per_query(TREC / "qrels.test", TREC / "results.trunc", EVERY_MEASURE, FLOAT_ORDER)
    expected = pytrec_per_query(qrels, run, EVERY_MEASURE)
    assert "302" not in expected and "302" in ours
    expected["302"] = {m: 0.0 for m in EVERY_MEASURE}
    expected["302"]["NumRel"] = sum(rel >= 1 for rel in qrels["302"].values())
    assert_close(ours, expected, EVERY_MEASURE)


def test_without_complete_only_answered_queries_count():
    ours = rankhouse_per_query(
        TREC / "qrels.test", TREC / "results.trunc", EVERY_MEASURE, EvalOptions(complete=False, score_precision=FLOAT)
    )
    expected = pytrec_per_query(read_qrels(TREC / "qrels.test"), read_run(TREC / "results.trunc"), EVERY_MEASURE)
    assert_close(ours, expected, EVERY_MEASURE)


def test_depth_keeps_the_first_documents_in_trec_eval_order():
    qrels, run = read_qrels(TREC / "qrels.test"), read_run(TREC / "results.trunc")
    ours = rankhouse_per_query(
        TREC / "qrels.test", TREC / "results.trunc", EVERY_MEASURE, EvalOptions(depth=100, score_precision=FLOAT)
    )
    expected = pytrec_per_query(qrels, trec_order_truncate(run, 100), EVERY_MEASURE)
    expected["302"] = {m: 0.0 for m in EVERY_MEASURE} | {"NumRel": sum(r >= 1 for r in qrels["302"].values())}
    assert_close(ours, expected, EVERY_MEASURE)


def test_relevance_level_two():
    ours = rankhouse_per_query(
        TREC / "qrels.rel_level",
        TREC / "results.test",
        EVERY_MEASURE,
        EvalOptions(relevance_level=2, score_precision=FLOAT),
    )
    expected = pytrec_per_query(
        read_qrels(TREC / "qrels.rel_level"), read_run(TREC / "results.test"), EVERY_MEASURE, level=2
    )
    assert_close(ours, expected, EVERY_MEASURE)


def test_judged_only_drops_unjudged_documents():
    ours = rankhouse_per_query(
        TREC / "qrels.rel_level",
        TREC / "results.test",
        EVERY_MEASURE,
        EvalOptions(judged_only=True, score_precision=FLOAT),
    )
    expected = pytrec_per_query(
        read_qrels(TREC / "qrels.rel_level"), read_run(TREC / "results.test"), EVERY_MEASURE, judged_only=True
    )
    assert_close(ours, expected, EVERY_MEASURE)


def test_graded_segments_with_hashes_in_docnos():
    ours = rankhouse_per_query(TREC / "qrels.comment.test", TREC / "results.comment.test", EVERY_MEASURE, FLOAT_ORDER)
    expected = pytrec_per_query(
        read_qrels(TREC / "qrels.comment.test"), read_run(TREC / "results.comment.test"), EVERY_MEASURE
    )
    assert len(expected) == 31
    assert_close(ours, expected, EVERY_MEASURE)


def _ir_measures_per_query(measures, qrels_path, run_path) -> dict:
    qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
    run = list(ir_measures.read_trec_run(str(run_path)))
    values: dict = {}
    for metric in ir_measures.iter_calc(measures, qrels, run):
        values.setdefault(metric.query_id, {})[str(metric.measure)] = metric.value
    return values


def test_cutoff_rr_and_exponential_ndcg_match_ir_measures():
    """RR@k and nDCG_exp (gain 2^grade - 1), which trec_eval lacks, against ir_measures (which computes
    nDCG with gains through pytrec_eval, in float order, and RR@k in Python, in double order: the run has
    no scores that tie as floats only, so the default order is either's)."""
    assert float_only_ties(TREC / "results.comment.test") == 0
    grades = {rel for docs in read_qrels(TREC / "qrels.comment.test").values() for rel in docs.values()}
    gains = {g: 2**g - 1 for g in grades if g >= 0}
    oracle = {
        "RR@10": ir_measures.RR @ 10,
        "nDCG_exp@10": ir_measures.nDCG(gains=gains) @ 10,
        "nDCG_exp": ir_measures.nDCG(gains=gains),
    }
    expected = _ir_measures_per_query(list(oracle.values()), TREC / "qrels.comment.test", TREC / "results.comment.test")
    ours = rankhouse_per_query(TREC / "qrels.comment.test", TREC / "results.comment.test", list(oracle))
    assert len(expected) == 31
    for qid, values in expected.items():
        for name, measure in oracle.items():
            assert ours[qid][name] == pytest.approx(values[str(measure)], abs=TOLERANCE), f"{name} on {qid}"


@pytest.fixture(scope="module")
def high_grades(tmp_path_factory):
    """Graded qrels with grades up to 100 on 12 queries (one query's top grade 100, one's 40, the rest
    at most 4) and a run ranking every judged document and some unjudged ones."""
    import numpy as np

    root = tmp_path_factory.mktemp("grades")
    rng = np.random.default_rng(100)
    qrels, run = [], []
    for q in range(12):
        grades = rng.integers(-1, 5, size=20).tolist()
        grades[3] = {0: 100, 1: 40, 2: 31}.get(q, grades[3])
        qrels += [f"{q + 1} 0 d{d:02d} {g}" for d, g in enumerate(grades)]
        order = rng.permutation(26).tolist()
        run += [f"{q + 1} Q0 d{d:02d} {r + 1} {50 - r} run" for r, d in enumerate(order)]
    (root / "qrels").write_text("\n".join(qrels) + "\n")
    (root / "run").write_text("\n".join(run) + "\n")
    return root


def test_exponential_ndcg_of_grades_up_to_100_matches_ranx(high_grades):
    """nDCG(dcg=exp-log2) with grade 100 (gain 2^100 - 1) is computed, as ranx's ndcg_burges computes it
    (and a plain Python sum of doubles), not stopped by the exact sums' range; linear nDCG with grades
    up to 100 as pytrec_eval."""
    import math

    import ranx

    names = ["nDCG(dcg=exp-log2)@10", "nDCG_exp", "nDCG@10", "nDCG"]
    ours = rankhouse_per_query(high_grades / "qrels", high_grades / "run", names)
    qrels, run = read_qrels(high_grades / "qrels"), read_run(high_grades / "run")
    scored = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), ["ndcg_burges@10", "ndcg_burges"], return_mean=False)
    queries = sorted(qrels, key=lambda q: list(ranx.Qrels(qrels).keys()).index(q))
    for i, qid in enumerate(queries):
        assert ours[qid]["nDCG(dcg=exp-log2)@10"] == pytest.approx(scored["ndcg_burges@10"][i], rel=1e-12, abs=1e-15)
        assert ours[qid]["nDCG_exp"] == pytest.approx(scored["ndcg_burges"][i], rel=1e-12, abs=1e-15)

        def dcg(grades: list[int]) -> float:
            return sum((2.0**g - 1) / math.log2(r + 2) for r, g in enumerate(grades) if g > 0)

        ranked = [qrels[qid].get(d, 0) for d, _ in sorted(run[qid].items(), key=lambda x: -x[1])]
        ideal = sorted((g for g in qrels[qid].values() if g > 0), reverse=True)
        assert ours[qid]["nDCG(dcg=exp-log2)@10"] == pytest.approx(dcg(ranked[:10]) / dcg(ideal[:10]), rel=1e-12)
    assert ours["1"]["nDCG(dcg=exp-log2)@10"] not in (0.0, 1.0)  # grade 100 is ranked and counts
    expected = pytrec_per_query(qrels, run, ["nDCG@10", "nDCG"])
    assert_close({q: {m: v[m] for m in ("nDCG@10", "nDCG")} for q, v in ours.items()}, expected, ["nDCG@10", "nDCG"])


def test_grades_beyond_a_measures_limit_are_refused_before_anything_is_built(high_grades, tmp_path):
    """ERR's scale ends at 4 (gdeval's, which refuses such qrels too) and an exponential gain is a finite
    double up to grade 1023: a higher grade is an error naming the line, the grade, the measure and the
    limit, and no model is built; the other measures of such qrels are computed."""
    from rankhouse.errors import InputError

    with Warehouse(":memory:") as wh, pytest.raises(InputError) as refused:
        evaluate(wh, high_grades / "qrels", [high_grades / "run"], ["nDCG@10", "ERR@10"])
    message = str(refused.value)
    assert message.startswith(f"{high_grades / 'qrels'}:4: grade 100 is above 4, the highest grade ERR@10 takes")
    with Warehouse(":memory:") as wh:
        with pytest.raises(InputError):
            evaluate(wh, high_grades / "qrels", [high_grades / "run"], ["ERR"])
        assert not wh.table_exists("models.measure_requests") and not wh.table_exists("models.measure_err")
    huge = tmp_path / "qrels"
    huge.write_text("1 0 d00 1\n1 0 d01 1024\n")
    with Warehouse(":memory:") as wh, pytest.raises(InputError, match=r":2: grade 1024 is above 1023, the highest "
                                                    r"grade nDCG\(dcg=exp-log2\)@10 takes"):  # fmt: skip
        evaluate(wh, huge, [high_grades / "run"], ["nDCG(dcg=exp-log2)@10"])
    assert rankhouse_per_query(huge, high_grades / "run", ["nDCG@10"])["1"]["nDCG@10"] >= 0


# trec_eval 10's own expected outputs: every measure rankhouse implements, per query and `all`.
TREC_EVAL_NAMES = [
    "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
    "iprec_at_recall", "P", "recall", "ndcg", "ndcg_cut", "map_cut", "success",
]  # fmt: skip
CASES = {
    "out.test.aq": ("qrels.test", "results.test", EvalOptions()),
    "out.test.aqc": ("qrels.test", "results.trunc", EvalOptions()),
    "out.test.aqcM": ("qrels.test", "results.trunc", EvalOptions(depth=100)),
    "out.test.aql": ("qrels.rel_level", "results.test", EvalOptions(relevance_level=2)),
}


@pytest.mark.parametrize("expected_file", sorted(CASES))
def test_matches_trec_eval_10_output(expected_file):
    qrels, run, options = CASES[expected_file]
    expected = read_trec_eval_output(TREC / "expected" / expected_file)
    measures = parse_measures(TREC_EVAL_NAMES)
    with Warehouse(":memory:") as wh:
        result = evaluate(wh, TREC / qrels, [TREC / run], TREC_EVAL_NAMES, options)
    ours = {(line.split("\t")[0].strip(), line.split("\t")[1]): line.split("\t")[2] for line in result.lines(True)}
    compared = 0
    for key, value in ours.items():
        assert key in expected, f"{key} is not in trec_eval's output"
        assert float(value) == pytest.approx(float(expected[key]), abs=1e-4 + 1e-9), key
        compared += 1
    labels = {m.label for m in measures}
    missing = [k for k in expected if k[0] in labels and k not in ours]
    assert not missing, f"trec_eval printed values rankhouse did not: {missing[:5]}"
    assert compared > 150


@pytest.mark.parametrize(
    ("qrels", "run", "expected_file"),
    [("qrels.test", "results.test", "out.test"), ("qrels.comment.test", "results.comment.test", "out.comment.test")],
)
def test_default_output_is_trec_eval_byte_for_byte(qrels, run, expected_file):
    with Warehouse(":memory:") as wh:
        result = evaluate(wh, TREC / qrels, [TREC / run])
    assert "\n".join(result.lines()) + "\n" == (TREC / "expected" / expected_file).read_text()


# -- every trec_eval measure against pytrec_eval (trec_eval 9.0.8) --------------------------------------

TREC_9_DIFFERS = {"iprec_at_recall", "11pt_avg"}  # trec_eval 10 rounds their recall cutoffs (lround), 9.0.8 truncated
TREC_10_ONLY = {"rbp", "rbp_resid", "unj"}  # new in trec_eval 10: tests/measures/test_trec_eval_parity.py and below


def label_family(label: str) -> str:
    found = re.fullmatch(r"(.+?)_(\d+(?:\.\d+)?)", label)
    return found.group(1) if found else label


@pytest.mark.parametrize(
    ("qrels", "run", "level", "compared"),
    [("qrels.comment.test", "results.comment.test", 1, 2418), ("qrels.rel_level", "results.test", 2, 234)],
)
def test_every_trec_eval_measure_matches_pytrec_eval_on_graded_judgments(qrels, run, level, compared):
    """`-m all_trec` per query against pytrec_eval's every measure: graded judgments 0-3 (TREC 2024 RAG),
    and grades -1 to 4 (pooled but not judged included) at relevance level 2. iprec_at_recall and
    11pt_avg are trec_eval 10's (compared with its own outputs), rbp, rbp_resid and unj new in it."""
    import pytrec_eval

    options = EvalOptions(score_precision=FLOAT, relevance_level=level, complete=False)
    ours = rankhouse_per_query(TREC / qrels, TREC / run, ["all_trec"], options)
    evaluator = pytrec_eval.RelevanceEvaluator(read_qrels(TREC / qrels), pytrec_eval.supported_measures,
                                               relevance_level=level)  # fmt: skip
    expected = evaluator.evaluate(read_run(TREC / run))
    assert set(ours) == set(expected)
    checked, families = 0, set()
    for qid, values in expected.items():
        for label, value in values.items():
            family = label_family(label)
            if family in TREC_9_DIFFERS or label not in ours[qid] or family == "relstring":
                continue
            assert ours[qid][label] == pytest.approx(value, abs=1e-9), f"{label} on {qid}"
            checked += 1
            families.add(family)
    assert checked == compared
    every = {label_family(label) for label in ours[next(iter(ours))]} - {"relstring"}
    assert every - families == TREC_9_DIFFERS | TREC_10_ONLY


def test_measure_parameters_match_pytrec_eval():
    """set_F.2, relative_P.7 and Rprec_mult.0.35 (SetF(beta=2), relative_P@7, Rprec_mult@0.35) against
    pytrec_eval given the same parameters, on graded judgments."""
    import pytrec_eval

    names = {"SetF(beta=2)": ("set_F.2", "set_F"), "relative_P@7": ("relative_P.7", "relative_P_7"),
             "Rprec_mult@0.35": ("Rprec_mult.0.35", "Rprec_mult_0.35")}  # fmt: skip
    qrels, run = TREC / "qrels.comment.test", TREC / "results.comment.test"
    ours = rankhouse_per_query(qrels, run, list(names), FLOAT_ORDER)
    for name, (request, key) in names.items():
        evaluator = pytrec_eval.RelevanceEvaluator(read_qrels(qrels), {request})
        expected = evaluator.evaluate(read_run(run))
        ours_values = {q: v[name] for q, v in ours.items()}
        assert {q: v[key] for q, v in expected.items()} == pytest.approx(ours_values, abs=1e-12)


def test_gains_given_per_grade_equal_the_measures_on_regraded_judgments(tmp_path):
    """nDCG, G, ndcg_rel and Rndcg with gains {1: 3, 2: 9, 3: 20} (trec_eval's ndcg.1=3,2=9,3=20) equal
    pytrec_eval's on the same judgments with each grade replaced by its gain; nDCG@10 with those gains
    equals ir_measures' nDCG(gains=...)@10."""
    import pytrec_eval

    gains = {0: 0, 1: 3, 2: 9, 3: 20}
    qrels, run = TREC / "qrels.comment.test", TREC / "results.comment.test"
    regraded = {q: {d: gains.get(g, g) for d, g in docs.items()} for q, docs in read_qrels(qrels).items()}
    given = "1=3,2=9,3=20"
    names = {f"ndcg.{given}": "ndcg", f"G.{given}": "G", f"ndcg_rel.{given}": "ndcg_rel", f"Rndcg.{given}": "Rndcg"}
    ours = rankhouse_per_query(qrels, run, list(names), FLOAT_ORDER)
    expected = pytrec_eval.RelevanceEvaluator(regraded, set(names.values())).evaluate(read_run(run))
    for name, key in names.items():
        label = name.replace(".", "_", 1)
        assert {q: v[label] for q, v in ours.items()} == pytest.approx({q: v[key] for q, v in expected.items()},
                                                                      abs=1e-9), name  # fmt: skip
        assert len({v[label] for v in ours.values()}) > 10  # not a constant
    measure = ir_measures.nDCG(gains=gains) @ 10
    theirs = _ir_measures_per_query([measure], qrels, run)
    mine = rankhouse_per_query(qrels, run, ["nDCG(gains={1:3,2:9,3:20})@10"], FLOAT_ORDER)
    for qid, values in theirs.items():
        assert mine[qid]["nDCG(gains={1:3,2:9,3:20})@10"] == pytest.approx(values[str(measure)], abs=1e-9), qid


def ranked_grades(qrels: dict, run: dict) -> dict[str, list[int | None]]:
    """Per query, the grades of the run's documents in trec_eval's order (score descending, then docno
    descending), None for a document not in the judgments."""
    return {
        qid: [qrels.get(qid, {}).get(d) for d, _ in sorted(docs.items(), key=lambda x: (x[1], x[0]), reverse=True)]
        for qid, docs in run.items()
    }


@pytest.mark.parametrize("p", [0.5, 0.8, 0.95])
def test_rbp_rbp_resid_and_unj_equal_their_definitions(p):
    """On grades -1 to 4 (qrels.rel_level: pooled-but-unjudged documents and documents outside the pool
    among the retrieved): RBP(p) = (1 - p) sum g / g_max p^(k-1) (g_max the query's highest grade, where
    above 1), rbp_resid(p) = p^n + (1 - p) sum over the unjudged of p^(k-1), unj@k the unjudged share of
    the first k ranks over k, written out here from Moffat and Zobel 2008 and trec_eval 10's definitions."""
    qrels, run = read_qrels(TREC / "qrels.rel_level"), read_run(TREC / "results.test")
    names = [f"RBP(p={p})", f"rbp_resid.p={p}", "unj.5,10,20,1000"]
    ours = rankhouse_per_query(TREC / "qrels.rel_level", TREC / "results.test", names, EvalOptions(complete=False))
    for qid, grades in ranked_grades(qrels, run).items():
        top = max(max(qrels[qid].values()), 1)
        rbp = (1 - p) * sum(g / top * p**k for k, g in enumerate(grades) if g is not None and g > 0)
        unjudged = [k for k, g in enumerate(grades) if g is None or g < 0]
        resid = p ** len(grades) + (1 - p) * sum(p**k for k in unjudged) if unjudged else 0.0
        assert ours[qid][f"RBP(p={p})"] == pytest.approx(rbp, rel=1e-12, abs=1e-15)
        assert ours[qid][f"rbp_resid_p={p}"] == pytest.approx(resid, rel=1e-12, abs=1e-15)
        for k in (5, 10, 20, 1000):
            assert ours[qid][f"unj_{k}"] == sum(1 for i in unjudged if i < k) / k
    assert any(ours[q]["rbp_resid_p=" + str(p)] > 0 for q in ours) and any(ours[q]["unj_20"] > 0 for q in ours)
