"""Parity with trec_eval 10.0 and ir_measures where rankhouse gave other numbers (issue 14).

1. Score precision: trec_eval 10.0 compares scores as doubles (9.x, and so pytrec_eval, as 32-bit
   floats); rankhouse follows 10.0 by default and offers the float order as `score_precision = "float"`
   (`rankhouse eval --float-scores`).
2. Cutoffs: trec_eval reads a cutoff with atol (`P.2.6` is P_2, `ndcg_cut.23.4` is ndcg_cut_23), sorts
   the cutoffs and refuses duplicates and cutoffs below 1; in ir_measures syntax a cutoff is a whole
   number of at least 1 (`P@5.5`, `P@0` and `P@-1` are errors).
3. ir_measures' parameterised names: `P(rel=2)@10`, `R(rel=2)@100`, `AP(rel=2)`, `RR(rel=2)@10`,
   `Success(rel=2)@10`, `nDCG(dcg=exp-log2)@10` (nDCG_exp), `Judged@10` and `ERR@10`, each against
   ir_measures' own implementation (and, for rel=2, against trec_eval 10's -l2 output).
4. Every expected output of trec_eval's test directory (tests/fixtures/trec_eval/expected/: out.test,
   out.comment.test, out.test.a, .aq, .aqc, .aqcM, .aql, .meas_params, .prefs, .qrels_prefs, .qrels_jg and
   .aqZ) is reproduced byte for byte by `rankhouse eval` with trec_eval's options: every measure of
   `-m all_trec`, trec_eval's measure parameters, preference judgments (-R prefs, -R qrels_prefs: the
   prefs_* measures of `-m all_prefs`), qrels with judgment groups (-R qrels_jg: `-m qrels_jg`) and
   z-scores (-Z). The measures of trec_eval 10.0 (its measure table, TREC_EVAL_MEASURES) that rankhouse
   does not implement (so their lines are not compared):

   (none)

5. trec_eval 10.0's measures that no expected output prints (in none of its groups: dcg, ideal_dcg, yaap)
   against other oracles: dcg and ideal_dcg against Jarvelin and Kekalainen's DCG in numpy, of the run's
   ranking and of the ideal one; yaap against its formula over pytrec_eval's AP. The folder's source
   also holds m_ndcg_p.c (ndcg_p), which trec_eval 10.0 neither builds (its Makefile leaves it out) nor
   lists in its measure table, and declares a num_nonjudged_ret that it defines nowhere: neither is a
   trec_eval 10.0 measure.

The expected values of the wrong-number cases are written out by hand: what trec_eval 10.0 prints, or
what ir_measures documents its measures to give.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import ir_measures
import numpy as np
import pytest
from clirunner import rankhouse
from conftest import TREC, read_qrels, read_run
from oracles import float_only_ties, pytrec_per_query, read_trec_eval_output

from rankhouse.errors import RankhouseError
from rankhouse.evaluation import EvalOptions, evaluate
from rankhouse.measures import TREC_NAMES, parse_measures
from rankhouse.warehouse import Warehouse
from rankhouse.warehouse.dag import Project
from rankhouse.warehouse.runner import Runner


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines))
    return path


def summary(qrels: Path, run: Path, measures: list[str], options: EvalOptions = EvalOptions()) -> dict[str, str]:
    """{label: value as printed} of the `all` rows."""
    with Warehouse(":memory:") as wh:
        result = evaluate(wh, qrels, [run], measures, options)
    return {label.strip(): value for label, _, value in (line.split("\t") for line in result.lines())}


def per_query(qrels: Path, run: Path, measures: list[str], options: EvalOptions = EvalOptions()) -> dict:
    with Warehouse(":memory:") as wh:
        result = evaluate(wh, qrels, [run], measures, options)
    return result.per_query[result.runs[0]]


# 1. Score precision =================================================================================

NEAR_TIE_MEASURES = ["map", "recip_rank", "Rprec", "bpref", "ndcg", "success.1", "P.1"]


@pytest.fixture
def near_tie(tmp_path):
    """A relevant document at 0.30000002 and a non-relevant one at 0.30000001: different doubles, one
    float32 (0.300000011920929), where the tie goes to the larger docno, b."""
    qrels = write(tmp_path / "qrels", ["q1 0 a 1", "q1 0 b 0"])
    run = write(tmp_path / "run", ["q1 Q0 a 1 0.30000002 t", "q1 Q0 b 2 0.30000001 t"])
    return qrels, run


def test_scores_are_compared_as_doubles_by_default(near_tie):
    """trec_eval 10.0: a is ranked first."""
    assert summary(*near_tie, NEAR_TIE_MEASURES) == {
        "map": "1.0000", "recip_rank": "1.0000", "Rprec": "1.0000", "bpref": "1.0000", "ndcg": "1.0000",
        "success_1": "1.0000", "P_1": "1.0000",
    }  # fmt: skip


def test_float_scores_reproduce_trec_eval_9_and_pytrec_eval(near_tie):
    """trec_eval 9 (pytrec_eval): the scores tie and b, the larger docno, is ranked first."""
    assert summary(*near_tie, NEAR_TIE_MEASURES, EvalOptions(score_precision="float")) == {
        "map": "0.5000", "recip_rank": "0.5000", "Rprec": "0.0000", "bpref": "0.0000", "ndcg": "0.6309",
        "success_1": "0.0000", "P_1": "0.0000",
    }  # fmt: skip
    measures = ["AP", "RR", "Rprec", "Bpref", "nDCG", "Success@1", "P@1"]
    expected = pytrec_per_query(read_qrels(near_tie[0]), read_run(near_tie[1]), measures)
    ours = per_query(*near_tie, measures, EvalOptions(score_precision="float"))
    assert {m: ours["q1"][m] for m in measures} == pytest.approx(expected["q1"], abs=1e-12)
    assert expected["q1"]["AP"] == 0.5


def test_depth_cuts_in_the_chosen_order(near_tie):
    """-M 1 keeps a under double order (P_1 = 1) and b under float order (P_1 = 0)."""
    assert summary(*near_tie, ["P.1", "num_ret"], EvalOptions(depth=1)) == {"P_1": "1.0000", "num_ret": "1"}
    assert summary(*near_tie, ["P.1", "num_ret"], EvalOptions(depth=1, score_precision="float")) == {
        "P_1": "0.0000",
        "num_ret": "1",
    }


def test_eval_command_line_offers_float_scores(near_tie):
    default, as_float = (
        rankhouse("eval", *near_tie, "-m", "map"),
        rankhouse("eval", *near_tie, "-m", "map", "--float-scores"),
    )
    assert default.returncode == 0 and as_float.returncode == 0, default.stderr + as_float.stderr
    assert default.stdout.split() == ["map", "all", "1.0000"]
    assert as_float.stdout.split() == ["map", "all", "0.5000"]


def test_score_precision_is_a_validated_parameter_in_the_fingerprint():
    with pytest.raises(RankhouseError, match="score_precision"):
        EvalOptions(score_precision="half")
    with Warehouse(":memory:") as wh:
        project = Project.load()
        double = Runner(wh, project, {}).fingerprint("run_ranking")
        assert Runner(wh, project, {"score_precision": "double"}).fingerprint("run_ranking") == double
        assert Runner(wh, project, {"score_precision": "float"}).fingerprint("run_ranking") != double
        with pytest.raises(RankhouseError, match="score_precision.*double.*float"):
            Runner(wh, project, {"score_precision": "half"}).fingerprint("run_ranking")


# 2. Cutoffs =========================================================================================


def labels(*specs: str) -> list[tuple[str, str]]:
    return [(m.label, m.canonical) for m in parse_measures(list(specs))]


def test_fractional_trec_eval_cutoffs_are_truncated(tmp_path):
    """trec_eval reads long cutoffs with atol: -m P.2.6 prints P_2, the precision at 2 (1.0, not 2/2.6)."""
    assert labels("P.2.6") == [("P_2", "P@2")]
    assert [label for label, _ in labels("ndcg_cut.10,20,23.4")] == ["ndcg_cut_10", "ndcg_cut_20", "ndcg_cut_23"]
    assert labels("recall.5.9", "success.1.5", "map_cut.3.0") == [
        ("recall_5", "R@5"), ("success_1", "Success@1"), ("map_cut_3", "AP@3"),
    ]  # fmt: skip
    qrels = write(tmp_path / "qrels", ["q1 0 d1 1", "q1 0 d2 1", "q1 0 d3 0"])
    run = write(tmp_path / "run", ["q1 Q0 d1 1 3.0 t", "q1 Q0 d2 2 2.0 t", "q1 Q0 d3 3 1.0 t"])
    assert summary(qrels, run, ["P.2.6"]) == {"P_2": "1.0000"}
    assert summary(qrels, run, ["ndcg_cut.1,2.9"]) == {"ndcg_cut_1": "1.0000", "ndcg_cut_2": "1.0000"}


def test_trec_eval_cutoffs_are_sorted():
    """trec_eval sorts a measure's cutoffs before it prints them: -m P.10,5 prints P_5, then P_10."""
    assert [label for label, _ in labels("P.10,5")] == ["P_5", "P_10"]
    assert [label for label, _ in labels("P.20", "5,10")] == ["P_5", "P_10", "P_20"]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("P.0", "at least 1"), ("P.-3", "at least 1"), ("ndcg_cut.10,0", "at least 1"), ("P.0.5", "at least 1"),
        ("P.2,2.6", "duplicate"), ("P.5x", "not a number"), ("recall.5,x", "unknown measure 'x'"),
        ("P@5.5", "whole number"), ("nDCG@10.0", "whole number"), ("P@0", "at least 1"), ("P@-1", "at least 1"),
        ("R@0", "at least 1"), ("Success@-2", "at least 1"), ("RR@0", "at least 1"), ("AP@0", "at least 1"),
        ("nDCG@0", "at least 1"), ("P@x", "whole number"),
    ],
)  # fmt: skip
def test_bad_cutoffs_are_errors_with_a_message(name, message):
    with pytest.raises(RankhouseError, match=message):
        parse_measures([name])


def test_a_zero_cutoff_stops_eval_before_anything_is_built(tmp_path):
    qrels = write(tmp_path / "qrels", ["q1 0 d1 1"])
    run = write(tmp_path / "run", ["q1 Q0 d1 1 1.0 t"])
    with Warehouse(":memory:") as wh:
        with pytest.raises(RankhouseError, match="P@0.*at least 1"):
            evaluate(wh, qrels, [run], ["P@0"])
        assert wh.sql("SELECT count(*) FROM meta.model_runs")[0][0] == 0


# 3. ir_measures' parameterised names ================================================================


def test_parameterised_names():
    assert labels("P(rel=2)@10", "R(rel=2)@100", "AP(rel=2)", "RR(rel=2)@10", "Success(rel=3)@5") == [
        ("P(rel=2)@10", "P(rel=2)@10"), ("R(rel=2)@100", "R(rel=2)@100"), ("AP(rel=2)", "AP(rel=2)"),
        ("RR(rel=2)@10", "RR(rel=2)@10"), ("Success(rel=3)@5", "Success(rel=3)@5"),
    ]  # fmt: skip
    measure = parse_measures(["P(rel=2)@10"])[0]
    assert (measure.family, measure.rel, measure.cutoff) == ("P", 2, 10.0)
    assert parse_measures(["AP"])[0].rel is None
    # the exponential-gain nDCG has one canonical name, however it is written
    exp = {m.canonical for m in parse_measures(["nDCG(dcg=exp-log2)@5", "nDCG(dcg='exp-log2')@5", "nDCG_exp@5"])}
    assert exp == {"nDCG_exp@5"}
    assert labels("nDCG(dcg=log2)@10", "nDCG(dcg=exp-log2)") == [
        ("nDCG(dcg=log2)@10", "nDCG@10"), ("nDCG(dcg=exp-log2)", "nDCG_exp"),
    ]  # fmt: skip
    assert labels("Judged@10", "Judged", "ERR@20", "ERR") == [
        ("Judged@10", "Judged@10"), ("Judged", "Judged"), ("ERR@20", "ERR@20"), ("ERR", "ERR"),
    ]  # fmt: skip
    # a comma inside the parentheses does not split the option
    assert [m.canonical for m in parse_measures(["P(rel=2)@5,nDCG(dcg=exp-log2)@10"])] == ["P(rel=2)@5", "nDCG_exp@10"]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("P(rel=x)@10", "rel"), ("P(rel=2.5)@10", "rel"), ("P(foo=2)@10", "foo"), ("nDCG(dcg=exp)@10", "dcg"),
        ("Bpref(rel=2)", "rel"), ("nDCG(rel=2)@10", "rel"), ("P(rel=2)", "cutoff"), ("P(rel=2@10", "unknown"),
        ("ERR@0", "at least 1"), ("Judged@2.5", "whole number"), ("P(rel=2,rel=3)@5", "twice"),
    ],
)  # fmt: skip
def test_bad_parameterised_names(name, message):
    with pytest.raises(RankhouseError, match=message):
        parse_measures([name])


def test_parameterised_measures_by_hand(tmp_path):
    """One query, graded 2, 1, 0 and one unjudged document, ranked b (1), a (2), c (0), x (unjudged).
    By ir_measures' definitions: P(rel=2)@10 = 1/10; R(rel=2)@100 = 1; AP(rel=2) = 1/2 (a at rank 2);
    RR(rel=2) = 1/2; nDCG(dcg=exp-log2)@10 = (1 + 3/log2 3) / (3 + 1/log2 3) = 0.796708; Judged@10 =
    3/4 (ir_measures divides by the documents retrieved when fewer than k), Judged@2 = 1; ERR@10, with
    R(g) = (2^g - 1) / 2^4: 1/16 + (15/16)(3/16)/2 = 0.150390625."""
    qrels = write(tmp_path / "qrels", ["1 0 a 2", "1 0 b 1", "1 0 c 0"])
    run = write(tmp_path / "run", ["1 Q0 b 1 0.5 t", "1 Q0 a 2 0.3 t", "1 Q0 c 3 0.1 t", "1 Q0 x 4 0.05 t"])
    expected = {
        "P(rel=2)@10": 0.1, "R(rel=2)@100": 1.0, "AP(rel=2)": 0.5, "RR(rel=2)": 0.5,
        "nDCG(dcg=exp-log2)@10": (1 + 3 / math.log2(3)) / (3 + 1 / math.log2(3)), "Judged@10": 0.75,
        "Judged@2": 1.0, "ERR@10": 0.150390625, "ERR@1": 1 / 16, "ERR": 0.150390625,
    }  # fmt: skip
    ours = per_query(qrels, run, list(expected))["1"]
    assert ours == pytest.approx(expected, abs=1e-12)
    assert expected["nDCG(dcg=exp-log2)@10"] == pytest.approx(0.796708, abs=1e-6)
    parsed = {name: ir_measures.parse_measure(name.replace("exp-log2", "'exp-log2'")) for name in expected}
    theirs = ir_measures.calc_aggregate([m for n, m in parsed.items() if n != "ERR"], read_qrels(qrels), read_run(run))
    for name, measure in parsed.items():
        if name != "ERR":  # ir_measures has ERR only with a cutoff (gdeval)
            assert ours[name] == pytest.approx(theirs[measure], abs=1e-5), name


def ir_measures_per_query(names: dict[str, object], qrels_path: Path, run_path: Path) -> dict[str, dict[str, float]]:
    """{qid: {our name: value}} from ir_measures' default pipeline. gdeval names a query by its id after
    the last `-` (2024-127266 is 127266), and ir_measures then also gives 0 under the full id of every
    judged query its provider did not name: the value under the short id is the one computed."""
    qrels, run = read_qrels(qrels_path), read_run(run_path)
    short = {re.sub(r"^.*-", "", q): q for q in qrels}
    names_of = {str(m): name for name, m in names.items()}
    values: dict[str, dict[str, float]] = {}
    renamed: dict[str, dict[str, float]] = {}
    for metric in ir_measures.iter_calc(list(names.values()), qrels, run):
        found = values if metric.query_id in qrels else renamed
        qid = metric.query_id if metric.query_id in qrels else short[metric.query_id]
        found.setdefault(qid, {})[names_of[str(metric.measure)]] = metric.value
    for qid, computed in renamed.items():
        values.setdefault(qid, {}).update(computed)
    return values


def compare_with_ir_measures(names: dict, qrels: Path, run: Path, tolerance: float) -> int:
    """Every value of ours against ir_measures' (gdeval leaves out a query without a relevant document,
    where ours is 0). Returns the number of values compared."""
    assert float_only_ties(run) == 0  # so the precision of ir_measures' providers cannot matter
    theirs = ir_measures_per_query(names, qrels, run)
    ours = per_query(qrels, run, list(names), EvalOptions(complete=False))
    compared = 0
    for qid, values in ours.items():
        for name, value in values.items():
            if name in theirs.get(qid, {}):
                assert value == pytest.approx(theirs[qid][name], abs=tolerance), f"{name} on {qid}"
                compared += 1
            else:
                assert value == 0, f"{name} on {qid}: ir_measures gives none"
    # a judged query the run did not answer: ir_measures gives it 0, ours (without complete) leaves it out
    assert all(v == 0 for q in set(theirs) - set(ours) for v in theirs[q].values())
    return compared


def test_rel_parameter_matches_ir_measures_and_trec_eval_l2():
    """P, R, AP, RR and Success with rel=2 on qrels.rel_level (grades -1 to 4): ir_measures (pytrec_eval
    for these) and trec_eval 10's own -l2 output (out.test.aql) per query."""
    names = {
        "P(rel=2)@10": ir_measures.P(rel=2) @ 10, "R(rel=2)@100": ir_measures.R(rel=2) @ 100,
        "AP(rel=2)": ir_measures.AP(rel=2), "RR(rel=2)": ir_measures.RR(rel=2),
        "Success(rel=2)@10": ir_measures.Success(rel=2) @ 10, "P(rel=3)@5": ir_measures.P(rel=3) @ 5,
    }  # fmt: skip
    assert compare_with_ir_measures(names, TREC / "qrels.rel_level", TREC / "results.test", 1e-9) == 18
    trec_eval = read_trec_eval_output(TREC / "expected" / "out.test.aql")
    ours = per_query(TREC / "qrels.rel_level", TREC / "results.test", list(names))
    as_trec = {"P(rel=2)@10": "P_10", "R(rel=2)@100": "recall_100", "AP(rel=2)": "map", "RR(rel=2)": "recip_rank",
               "Success(rel=2)@10": "success_10"}  # fmt: skip
    for qid, values in ours.items():
        for name, label in as_trec.items():
            assert f"{values[name]:.4f}" == trec_eval[(label, qid)], f"{name} on {qid}"


@pytest.mark.parametrize(
    ("qrels", "run", "compared"),
    [("qrels.rel_level", "results.test", 12), ("qrels.comment.test", "results.comment.test", 124)],
)
def test_exponential_ndcg_and_err_match_ir_measures(qrels, run, compared):
    """nDCG(dcg=exp-log2)@k and ERR@k against ir_measures, which computes both with gdeval (printed to 5
    decimals; ERR's gain (2^g - 1) / 2^4 for grades 0 to 4)."""
    names = {
        "nDCG(dcg=exp-log2)@10": ir_measures.nDCG(dcg="exp-log2") @ 10,
        "nDCG(dcg=exp-log2)@20": ir_measures.nDCG(dcg="exp-log2") @ 20,
        "ERR@10": ir_measures.ERR @ 10, "ERR@20": ir_measures.ERR @ 20,
    }  # fmt: skip
    assert compare_with_ir_measures(names, TREC / qrels, TREC / run, 5e-6 + 1e-12) == compared


@pytest.mark.parametrize(("run", "compared"), [("results.test", 9), ("results.trunc", 6)])
def test_judged_matches_ir_measures(run, compared):
    names = {"Judged@10": ir_measures.Judged @ 10, "Judged@100": ir_measures.Judged @ 100, "Judged": ir_measures.Judged}
    assert compare_with_ir_measures(names, TREC / "qrels.test", TREC / run, 1e-12) == compared


# 4. trec_eval's test directory ======================================================================

UNSUPPORTED = {
    name.strip() for name in re.search(r"not compared\):\n\n(.*?)(?:\n\n|\n?$)", __doc__, re.S).group(1).split(",")
} - {"(none)"}  # the docstring's list
# trec_eval 10.0's measure table (measures.c, te_trec_measures), in its order
TREC_EVAL_MEASURES = [
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
    "iprec_at_recall", "P", "relstring", "recall", "infAP", "gm_bpref", "Rprec_mult", "utility", "11pt_avg", "binG",
    "G", "dcg", "ideal_dcg", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut", "relative_P", "success", "set_P",
    "set_relative_P", "set_recall", "set_map", "set_F", "num_nonrel_judged_ret", "prefs_num_prefs_poss",
    "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret", "prefs_simp", "prefs_pair", "prefs_avgjg",
    "prefs_avgjg_Rnonrel", "prefs_simp_ret", "prefs_pair_ret", "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret",
    "prefs_simp_imp", "prefs_pair_imp", "prefs_avgjg_imp", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg", "yaap",
    "rbp", "rbp_resid", "unj",
]  # fmt: skip
ALL = ["all_trec"]
MEAS_PARAMS = ["iprec_at_recall..10,.20,.25,.75,.50", "P.5,7,3", "recall.20,2000", "Rprec_mult.5.0,0.2,0.35",
               "utility.2,-1,0,0", "11pt_avg..25,.5,.75", "ndcg.1=3,2=9,4=4.5", "ndcg_cut.10,20,23.4",
               "success.2,5,20"]  # fmt: skip
NO_C = EvalOptions(complete=False)
PREFS = EvalOptions(complete=False, rel_format="prefs")
JG = EvalOptions(complete=False, rel_format="qrels_jg")
Z = EvalOptions(complete=False, zscores=TREC / "expected" / "zscores_file")
INPUTS = {"zscores_file"}  # in expected/ as in trec_eval's test folder, but an input (-Z)
# case -> (expected output, qrels, run, options, per query, measures), as SOURCE.md gives trec_eval's command lines
CASES = {
    "out.test": ("out.test", "qrels.test", "results.test", NO_C, False, None),
    "out.test, qrels with comments": ("out.test", "qrels.test.with-comments", "results.test", NO_C, False, None),
    "out.comment.test": ("out.comment.test", "qrels.comment.test", "results.comment.test", NO_C, False, None),
    "out.test.a": ("out.test.a", "qrels.test", "results.test", NO_C, False, ALL),
    "out.test.aq": ("out.test.aq", "qrels.test", "results.test", NO_C, True, ALL),
    "out.test.aqc": ("out.test.aqc", "qrels.test", "results.trunc", EvalOptions(), True, ALL),
    "out.test.aqcM": ("out.test.aqcM", "qrels.test", "results.trunc", EvalOptions(depth=100), True, ALL),
    "out.test.aql": ("out.test.aql", "qrels.rel_level", "results.test", EvalOptions(complete=False, relevance_level=2),
                     True, [*ALL, "relstring.20"]),
    "out.test.meas_params": ("out.test.meas_params", "qrels.test", "results.test", NO_C, True, MEAS_PARAMS),
    "out.test.prefs": ("out.test.prefs", "prefs.test", "prefs.results.test", PREFS, True, ["all_prefs"]),
    "out.test.prefs, prefs with comments": (
        "out.test.prefs", "prefs.comment.test", "prefs.results.test", PREFS, True, ["all_prefs"],
    ),
    "out.test.qrels_prefs": ("out.test.qrels_prefs", "qrels.test", "results.test",
                             EvalOptions(complete=False, rel_format="qrels_prefs"), True, ["all_prefs"]),
    "out.test.qrels_jg": ("out.test.qrels_jg", "qrels.123", "results.test", JG, True, ["qrels_jg"]),
    "out.test.qrels_jg, qrels with comments": ("out.test.qrels_jg", "qrels.comments.123", "results.test", JG, True,
                                               ["qrels_jg"]),
    "out.test.aqZ": ("out.test.aqZ", "qrels.test", "results.test", Z, True, ALL),
}  # fmt: skip


def trec_name(label: str) -> str:
    """The trec_eval measure a printed label belongs to: P_5 -> P, iprec_at_recall_0.10 -> iprec_at_recall,
    utility_2,-1,0,0 -> utility (no trec_eval measure's own name ends in _ and a number)."""
    found = re.fullmatch(r"(.+?)_(\d+(?:\.\d+)?|[-.,=\d]+)", label)
    return found.group(1) if found else label


def printed(lines: list[str]) -> dict[tuple[str, str], str]:
    return {(m.strip(), q): v for m, q, v in (re.split(r"\s*\t", line.strip()) for line in lines)}


def test_every_expected_output_is_compared():
    assert {case[0] for case in CASES.values()} == {p.name for p in (TREC / "expected").iterdir()} - INPUTS


@pytest.mark.parametrize("case", sorted(CASES))
def test_trec_eval_directory_is_reproduced_byte_for_byte(case):
    """Every line trec_eval 10.0 printed is printed the same, to the last digit and byte, in the same
    order, and rankhouse prints no other line."""
    expected_file, qrels, run, options, by_query, measures = CASES[case]
    text = (TREC / "expected" / expected_file).read_text()
    assert {trec_name(label) for label, _ in printed(text.splitlines())} & UNSUPPORTED == set()
    with Warehouse(":memory:") as wh:
        result = evaluate(wh, TREC / qrels, [TREC / run], measures, options)
        lines = result.lines(per_query=by_query)
    assert "\n".join(lines) + "\n" == text
    assert len(lines) > 20


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (
            [*(arg for spec in MEAS_PARAMS for arg in ("-m", spec)), "qrels.test", "results.test"],
            "out.test.meas_params",
        ),
        (["-m", "all_prefs", "-R", "prefs", "prefs.comment.test", "prefs.results.test"], "out.test.prefs"),
        (["-m", "qrels_jg", "-R", "qrels_jg", "qrels.123", "results.test"], "out.test.qrels_jg"),
        (["-m", "all_trec", "-Z", "expected/zscores_file", "qrels.test", "results.test"], "out.test.aqZ"),
    ],
    ids=["measure parameters", "-R prefs", "-R qrels_jg", "-Z"],
)
def test_the_command_line_takes_trec_eval_options(options, expected):
    """`rankhouse eval` with trec_eval's own arguments (its measure parameters, -R, -Z; no -c there) prints
    trec_eval's output."""
    args = [str(TREC / a) if (TREC / a).is_file() else a for a in options]
    done = rankhouse("eval", "-q", "--no-complete", *args)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (TREC / "expected" / expected).read_text()


def test_every_trec_eval_measure_is_known():
    """Every measure of trec_eval 10.0's measure table is a name the registry reads, but for the docstring's
    list; and every measure the expected outputs print (with -Z after its Z) is one of the table's."""
    assert UNSUPPORTED == set(TREC_EVAL_MEASURES) - set(TREC_NAMES) - {"runid"} == set()
    every = set()
    for path in (TREC / "expected").iterdir():
        if path.name not in INPUTS:
            labels = (label.removeprefix("Z") if path.name == "out.test.aqZ" else label
                      for label, _ in printed(path.read_text().splitlines()))  # fmt: skip
            every |= {trec_name(label) for label in labels}
    assert every == set(TREC_EVAL_MEASURES) - {"dcg", "ideal_dcg", "yaap"}


# 5. The measures no expected output prints ==========================================================


def trec_ranking(run: Path) -> dict[str, list[str]]:
    """Each query's documents in trec_eval's order: score descending, then docno descending (byte order)."""
    lines = [line.split() for line in run.read_text().splitlines() if line.strip()]
    ranked: dict[str, list[tuple[float, bytes, str]]] = {}
    for qid, _, docno, _, score, _ in lines:
        ranked.setdefault(qid, []).append((float(score), docno.encode(), docno))
    return {qid: [d for _, _, d in sorted(docs, reverse=True)] for qid, docs in ranked.items()}


def dcg(gains: list[float]) -> float:
    """Jarvelin and Kekalainen's DCG, in numpy: the i-th gain over log2(i + 1)."""
    values = np.asarray(gains, dtype=np.float64)
    return float(np.sum(values / np.log2(np.arange(2, len(values) + 2))))


@pytest.mark.parametrize("qrels", ["qrels.test", "qrels.rel_level"])
def test_dcg_and_ideal_dcg_are_the_dcg_of_the_ranking_and_of_the_ideal_one(qrels):
    """dcg: the DCG of the run's ranking, each document's grade its gain (grades below 1 and unjudged
    documents gaining nothing); ideal_dcg: the DCG of every judged document by decreasing grade; their
    ratio is ndcg (trec_eval's expected outputs check that)."""
    judged = read_qrels(TREC / qrels)
    ranking = trec_ranking(TREC / "results.test")
    ours = per_query(TREC / qrels, TREC / "results.test", ["dcg", "ideal_dcg", "ndcg"], NO_C)
    assert set(ours) == set(judged) and len(ours) == 3
    for qid, grades in judged.items():
        ranked = dcg([max(grades.get(d, 0), 0) for d in ranking[qid]])
        ideal = dcg(sorted((g for g in grades.values() if g > 0), reverse=True))
        assert ours[qid]["dcg"] == pytest.approx(ranked, rel=1e-12), qid
        assert ours[qid]["ideal_dcg"] == pytest.approx(ideal, rel=1e-12), qid
        assert ours[qid]["ndcg"] == pytest.approx(ranked / ideal, rel=1e-12), qid
        assert ranked > 1 and ideal > ranked


@pytest.mark.parametrize(("qrels", "level"), [("qrels.test", 1), ("qrels.rel_level", 2), ("qrels.comment.test", 1)])
def test_yaap_is_its_formula_over_pytrec_eval_ap(qrels, level):
    """yaap = ln((1 + S) / (1 + R - S)) (Robertson 2012), S = AP x R: AP from pytrec_eval, R counted in the
    qrels at the relevance level."""
    run = "results.comment.test" if qrels == "qrels.comment.test" else "results.test"
    judged = read_qrels(TREC / qrels)
    assert float_only_ties(TREC / run) == 0  # so pytrec_eval's float scores rank as ours
    ap = pytrec_per_query(judged, read_run(TREC / run), ["AP"], level=level)
    ours = per_query(TREC / qrels, TREC / run, ["yaap"], EvalOptions(complete=False, relevance_level=level))
    assert set(ours) == set(ap) and len(ours) >= 3
    for qid, values in ours.items():
        relevant = sum(grade >= level for grade in judged[qid].values())
        s = ap[qid]["AP"] * relevant
        assert values["yaap"] == pytest.approx(math.log((1 + s) / (1 + relevant - s)), abs=1e-9), qid
