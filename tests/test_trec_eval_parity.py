"""Parity with trec_eval 10.0 and ir_measures where rankhouse gave other numbers (issue 14).

4. Every expected output of trec_eval's test directory (tests/fixtures/trec_eval/expected/) is compared,
   line by line and digit for digit, for every measure rankhouse supports. The measures of
   `-m all_trec` that rankhouse does not implement (so their lines are not compared):

   11pt_avg, G, Rndcg, Rprec_mult, binG, gm_bpref, infAP, ndcg_rel, num_nonrel_judged_ret, rbp,
   rbp_resid, relative_P, relstring, set_F, set_P, set_map, set_recall, set_relative_P, unj, utility
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import TREC

from rankhouse.evaluation import EvalOptions, evaluate
from rankhouse.measures import TREC_NAMES
from rankhouse.warehouse import Warehouse


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
