"""Parity with trec_eval 10.0 and ir_measures where rankhouse gave other numbers (issue 14).

1. Score precision: trec_eval 10.0 compares scores as doubles (9.x, and so pytrec_eval, as 32-bit
   floats); rankhouse follows 10.0 by default and offers the float order as `score_precision = "float"`
   (`rankhouse eval --float-scores`).
2. Cutoffs: trec_eval reads a cutoff with atol (`P.2.6` is P_2, `ndcg_cut.23.4` is ndcg_cut_23), sorts
   the cutoffs and refuses duplicates and cutoffs below 1; in ir_measures syntax a cutoff is a whole
   number of at least 1 (`P@5.5`, `P@0` and `P@-1` are errors).
4. Every expected output of trec_eval's test directory (tests/fixtures/trec_eval/expected/) is compared,
   line by line and digit for digit, for every measure rankhouse supports. The measures of
   `-m all_trec` that rankhouse does not implement (so their lines are not compared):

   11pt_avg, G, Rndcg, Rprec_mult, binG, gm_bpref, infAP, ndcg_rel, num_nonrel_judged_ret, rbp,
   rbp_resid, relative_P, relstring, set_F, set_P, set_map, set_recall, set_relative_P, unj, utility

The expected values of the wrong-number cases are written out by hand: what trec_eval 10.0 prints.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import TREC, read_qrels, read_run
from oracles import pytrec_per_query

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
    def run(*extra: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "rankhouse", "eval", *map(str, near_tie), "-m", "map", *extra],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip

    default, as_float = run(), run("--float-scores")
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


# 4. trec_eval's test directory ======================================================================

UNSUPPORTED = {
    name.strip() for name in re.search(r"not compared\):\n\n(.*?)(?:\n\n|\n?$)", __doc__, re.S).group(1).split(",")
}  # the docstring's list
# case -> (expected output, qrels, run, options, per query), as SOURCE.md gives trec_eval's command lines
CASES = {
    "out.test": ("out.test", "qrels.test", "results.test", EvalOptions(complete=False), False),
    "out.test, qrels with comments": (
        "out.test", "qrels.test.with-comments", "results.test", EvalOptions(complete=False), False,
    ),
    "out.comment.test": ("out.comment.test", "qrels.comment.test", "results.comment.test", EvalOptions(complete=False),
                         False),
    "out.test.a": ("out.test.a", "qrels.test", "results.test", EvalOptions(complete=False), False),
    "out.test.aq": ("out.test.aq", "qrels.test", "results.test", EvalOptions(complete=False), True),
    "out.test.aqc": ("out.test.aqc", "qrels.test", "results.trunc", EvalOptions(), True),
    "out.test.aqcM": ("out.test.aqcM", "qrels.test", "results.trunc", EvalOptions(depth=100), True),
    "out.test.aql": ("out.test.aql", "qrels.rel_level", "results.test", EvalOptions(complete=False, relevance_level=2),
                     True),
}  # fmt: skip


def trec_name(label: str) -> str:
    """The trec_eval measure a printed label belongs to: P_5 -> P, iprec_at_recall_0.10 -> iprec_at_recall
    (no trec_eval measure's own name ends in _ and a number)."""
    found = re.fullmatch(r"(.+?)_(\d+(?:\.\d+)?)", label)
    return found.group(1) if found else label


def printed(lines: list[str]) -> dict[tuple[str, str], str]:
    return {(m.strip(), q): v for m, q, v in (re.split(r"\s*\t", line.strip()) for line in lines)}


def test_every_expected_output_is_compared():
    assert {case[0] for case in CASES.values()} == {p.name for p in (TREC / "expected").iterdir()}


@pytest.mark.parametrize("case", sorted(CASES))
def test_trec_eval_directory_matches_for_every_supported_measure(case):
    """Every line trec_eval 10.0 printed for a measure rankhouse supports is printed the same, to the
    last digit, and rankhouse prints no other line."""
    expected_file, qrels, run, options, by_query = CASES[case]
    text = (TREC / "expected" / expected_file).read_text()
    expected = printed(text.splitlines())
    names = list(dict.fromkeys(trec_name(label) for label, _ in expected))
    supported = [n for n in names if n in TREC_NAMES or n == "runid"]
    assert set(names) - set(supported) <= UNSUPPORTED, "a measure missing from the docstring's list"
    with Warehouse(":memory:") as wh:
        result = evaluate(wh, TREC / qrels, [TREC / run], supported, options)
        lines = result.lines(per_query=by_query)
    ours = printed(lines)
    wanted = {key: value for key, value in expected.items() if trec_name(key[0]) in supported}
    assert ours == wanted
    assert len(wanted) > 20
    if set(names) == set(supported):  # trec_eval's default measures: byte for byte
        assert "\n".join(lines) + "\n" == text


def test_the_unsupported_list_is_exact():
    """The docstring names exactly the measures of trec_eval's all_trec output that rankhouse lacks."""
    every = {trec_name(label) for label, _ in printed((TREC / "expected" / "out.test.aql").read_text().splitlines())}
    assert UNSUPPORTED == every - set(TREC_NAMES) - {"runid"}
