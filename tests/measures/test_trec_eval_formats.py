"""trec_eval's other relevance formats and z-scores beyond its expected outputs (which
test_trec_eval_parity.py reproduces byte for byte): what those outputs do not pin down, worked out by
hand from trec_eval's definitions (form_prefs_counts.c, convert_zscores.c), and the rules of the files.

- Preferences: where a group of several sub-groups keeps only the first R non-relevant documents
  (prefs_avgjg_Rnonrel), the unretrieved ones are placed by docno; with -M, the run is cut in trec_eval's
  order for preferences (score descending, then docno ascending), not in its order for ranked lists.
- Z-scores: a z-score whose query or measure the file lacks, or whose deviation is 0 while the value is
  not the mean, is -1000000; a count's z-score is not a whole number.
- Every rule of the files is reported with the file, the line and the rule, before anything is evaluated,
  and a measure asked for with labels it does not read is refused before anything is loaded.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rankhouse.errors import InputError, RankhouseError
from rankhouse.evaluation import EvalOptions, evaluate
from rankhouse.loaders import load_prefs, load_qrels_jg, load_qrels_prefs, load_zscores
from rankhouse.warehouse import Warehouse


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines))
    return path


def printed(path: Path, run: Path, measures: list[str], options: EvalOptions) -> list[str]:
    with Warehouse(":memory:") as wh:
        return evaluate(wh, path, [run], measures, options).lines(per_query=True)


def test_unretrieved_non_relevant_documents_are_kept_in_docno_order(tmp_path):
    """One group of three sub-groups: a > n1 (s1), b > n2 (s2), n3 alone (s3); the run retrieves b only.
    Placed: b, then the unretrieved a, n1, n2, n3 by docno. R = 2 relevant (a, b), N = 3 non-relevant, so
    prefs_avgjg_Rnonrel keeps the first two non-relevant placed, n1 and n2: of the preferences among the
    kept, b > n2 is fulfilled (b retrieved, n2 not), a > n1 not (neither retrieved): 1/2 (keeping n2 and
    n3 would give 1/1). prefs_avgjg_Rnonrel_ret: R = 1 relevant retrieved >= N = 0, so 0 + 1 x (1 - 0)
    fulfilled over 0 + 2 x (1 - 0) possible: 1/2. The rest: 2 preferences, 1 fulfilled (implied), none
    retrieved; pairs {a, n1} (neither retrieved: 0) and {b, n2} (1)."""
    prefs = write(tmp_path / "prefs", ["q u s1 a 1", "q u s1 n1 0", "q u s2 b 1", "q u s2 n2 0", "q u s3 n3 0"])
    run = write(tmp_path / "run", ["q Q0 b 1 5.0 r", "q Q0 x 2 4.0 r"])
    lines = printed(prefs, run, ["all_prefs"], EvalOptions(rel_format="prefs"))
    assert {line.split("\t")[0].strip(): line.split("\t")[2] for line in lines if "\tq\t" in line} == {
        "prefs_num_prefs_poss": "2", "prefs_num_prefs_ful": "1", "prefs_num_prefs_ful_ret": "0",
        "prefs_simp": "0.5000", "prefs_pair": "0.5000", "prefs_avgjg": "0.5000", "prefs_avgjg_Rnonrel": "0.5000",
        "prefs_simp_ret": "0.0000", "prefs_pair_ret": "0.0000", "prefs_avgjg_ret": "0.0000",
        "prefs_avgjg_Rnonrel_ret": "0.5000", "prefs_simp_imp": "1.0000", "prefs_pair_imp": "1.0000",
        "prefs_avgjg_imp": "1.0000",
    }  # fmt: skip


@pytest.mark.parametrize(("depth", "fulfilled"), [(0, 1), (2, 1)])
def test_preferences_rank_ties_by_docno_ascending_before_the_cut(tmp_path, depth, fulfilled):
    """d2 > d3, which tie at score 1 behind d1. trec_eval's order for preferences puts d2 before d3 (docno
    ascending; its ranked lists put d3 first), and with -M 2 keeps d1 and d2: the preference is fulfilled,
    retrieved without -M and implied with -M 2. Ranked as trec_order ranks, it would fail either way."""
    qrels = write(tmp_path / "qrels", ["q u d2 2", "q u d3 1"])
    run = write(tmp_path / "run", ["q Q0 d1 1 2 r", "q Q0 d2 2 1 r", "q Q0 d3 3 1 r"])
    options = EvalOptions(rel_format="qrels_prefs", depth=depth)
    lines = printed(qrels, run, ["prefs_simp", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret"], options)
    assert lines[:3] == [
        "prefs_simp            \tq\t1.0000",
        f"prefs_num_prefs_ful   \tq\t{fulfilled}",
        f"prefs_num_prefs_ful_ret\tq\t{1 if depth == 0 else 0}",
    ]


def test_missing_z_scores_are_trec_eval_s_mark(tmp_path):
    """q1: AP 1/2 (a at rank 1, c unretrieved), P@5 1/5, 3 retrieved, RR 1, 2 relevant; q2: AP 0, RR 0,
    1 retrieved, 1 relevant. z = (value - mean) / stddev: map (0.5 - 0.25) / 0.5 = 0.5; a deviation of 0
    gives 0 where the value is the mean (q1's P_5, recip_rank; q2's num_ret, num_rel) and -1000000 where it
    is not (q1's num_ret, 3 against 2); q2 has no P_5 line: -1000000. The `all` rows average (sum, for the
    counts) the z-scores; num_q counts the queries."""
    qrels = write(tmp_path / "qrels", ["q1 0 a 1", "q1 0 b 0", "q1 0 c 1", "q2 0 a 1"])
    run = write(tmp_path / "run", ["q1 Q0 a 1 3 r", "q1 Q0 x 2 2 r", "q1 Q0 b 3 1 r", "q2 Q0 z 1 1 r"])
    zscores = write(tmp_path / "z", [
        "q1 map 0.25 0.5", "q1 P_5 0.2 0", "q1 num_ret 2 0", "q1 recip_rank 1 0", "q1 num_rel 2 1",
        "q2 map 0 1", "q2 num_ret 1 0", "q2 num_rel 1 0", "q2 recip_rank 0 2", "q2 unknown_measure 0 1",
    ])  # fmt: skip
    options = EvalOptions(zscores=zscores)
    lines = printed(qrels, run, ["num_q", "num_ret", "num_rel", "map", "recip_rank", "P.5"], options)
    assert [tuple(line.split("\t")) for line in lines] == [
        ("Znum_ret               ", "q1", "-1000000.0000"), ("Znum_rel               ", "q1", "0.0000"),
        ("Zmap                   ", "q1", "0.5000"), ("Zrecip_rank            ", "q1", "0.0000"),
        ("ZP_5                   ", "q1", "0.0000"), ("Znum_ret               ", "q2", "0.0000"),
        ("Znum_rel               ", "q2", "0.0000"), ("Zmap                   ", "q2", "0.0000"),
        ("Zrecip_rank            ", "q2", "0.0000"), ("ZP_5                   ", "q2", "-1000000.0000"),
        ("Znum_q                 ", "all", "2.0000"), ("Znum_ret               ", "all", "-1000000.0000"),
        ("Znum_rel               ", "all", "0.0000"), ("Zmap                   ", "all", "0.2500"),
        ("Zrecip_rank            ", "all", "0.0000"), ("ZP_5                   ", "all", "-500000.0000"),
    ]  # fmt: skip
    with Warehouse(":memory:") as wh:
        result = evaluate(wh, qrels, [run], ["num_ret", "map"], options)
    assert json.loads(result.render("json")) == {"run": {"all": {"Znum_ret": -1000000.0, "Zmap": 0.25}}}


@pytest.mark.parametrize(
    ("loader", "lines", "line", "rule"),
    [
        (load_prefs, ["q u s d1 1", "q u s d2"], 2, "expected 5 fields: qid jg jsg docno rel_level"),
        (load_prefs, ["q u s d1 1", "q u s d2 -1"], 2, "rel_level is below 0"),
        (load_prefs, ["q u s d1 x"], 1, "rel_level is not a number"),
        (load_prefs, ["q u s d1 1", "q u s d1 2"], 2, "document given twice in this judgment sub-group"),
        (load_prefs, ["q u s1 d1 1", "q u s1 d2 0", "q u s2 d2 1"], 3,
         "a document non-relevant (rel_level 0) in one sub-group and relevant in another"),
        (load_prefs, ["q u s1 d1 2", "q u s1 d2 1", "q u s2 d2 2", "q u s2 d3 1", "q u s3 d3 2", "q u s3 d1 1"], 1,
         "a document preferred to itself through the sub-groups of its judgment group"),
        (load_qrels_prefs, ["q u d1 1", "q u d1 0"], 2, "document judged twice in this judgment group"),
        (load_qrels_prefs, ["q u s d1 1"], 1, "expected 4 fields: qid jg docno rel_level"),
        (load_qrels_jg, ["q u d1 1", "q v d1 0", "q u d1 2"], 3, "document judged twice in this judgment group"),
        (load_qrels_jg, ["q u d1 1.5"], 1, "rel is not a whole number"),
        (load_zscores, ["q map 0.1 nan"], 1, "stddev is NaN or infinite"),
        (load_zscores, ["q map 0.1 0.2", "q map 0.1 0.3"], 2, "measure given twice for this query"),
    ],
)  # fmt: skip
def test_bad_lines_are_reported_with_file_line_and_rule(tmp_path, loader, lines, line, rule):
    path = write(tmp_path / "labels", lines)
    with Warehouse(":memory:") as wh:
        with pytest.raises(InputError, match=re.escape(f"labels:{line}: {rule}")) as raised:
            loader(wh, path)
        assert raised.value.line == line
        wh.open_gate()
        assert wh.sql("SELECT count(*) FROM gate.prefs")[0][0] + wh.sql("SELECT count(*) FROM gate.zscores")[0][0] == 0


def test_a_judgment_group_may_repeat_another_s_documents(tmp_path):
    path = write(tmp_path / "qrels", ["q u d1 1", "q v d1 0", "q v d2 1"])
    with Warehouse(":memory:") as wh:
        assert load_qrels_jg(wh, path).rows == 3


@pytest.mark.parametrize(
    ("rel_format", "measure", "message"),
    [
        ("prefs", "map", "measure map reads qrels (-R qrels): it cannot be computed from prefs judgments"),
        ("qrels", "prefs_simp", "reads preference judgments (-R prefs or -R qrels_prefs)"),
        ("qrels_prefs", "P_avgjg.5", "reads qrels with judgment groups (-R qrels_jg)"),
        ("qrels_jg", "all_trec", "measure num_ret reads qrels"),
    ],
)
def test_a_measure_of_other_labels_is_refused_before_anything_is_loaded(tmp_path, rel_format, measure, message):
    qrels = write(tmp_path / "qrels", ["q u d1 1"])
    run = write(tmp_path / "run", ["q Q0 d1 1 1 r"])
    with Warehouse(":memory:") as wh:
        with pytest.raises(RankhouseError, match=re.escape(message)):
            evaluate(wh, qrels, [run], [measure], EvalOptions(rel_format=rel_format))
        assert wh.sql("SELECT count(*) FROM raw.runs")[0][0] == 0


def test_each_format_has_its_default_measures(tmp_path):
    """Without -m: trec_eval's `prefs` group with -R prefs and qrels_prefs, `qrels_jg` with -R qrels_jg."""
    qrels = write(tmp_path / "qrels", ["q u d1 1", "q u d2 0"])
    run = write(tmp_path / "run", ["q Q0 d1 1 1 r"])
    with Warehouse(":memory:") as wh:
        prefs = evaluate(wh, qrels, [run], None, EvalOptions(rel_format="qrels_prefs"))
    with Warehouse(":memory:") as wh:
        groups = evaluate(wh, qrels, [run], None, EvalOptions(rel_format="qrels_jg"))
    assert [m.label for m in prefs.measures][-3:] == ["prefs_simp", "prefs_pair", "prefs_avgjg"]
    assert [m.label for m in groups.measures][:3] == ["runid", "num_q", "map_avgjg"]
    with pytest.raises(RankhouseError, match=r"-R/--rel-format is one of .*not 'pref'; did you mean 'prefs'"):
        EvalOptions(rel_format="pref")
