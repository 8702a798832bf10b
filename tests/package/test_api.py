"""The Python API (rankhouse/api.py, rankhouse/frames.py; issue 38): every input form gives the command
line's numbers; the same DataFrames against ir_measures and ranx through their own Python APIs (values,
and ranx's paired t-test p-values); the command line's renderings; connect and Study with the gate's
rules; the errors (bad columns, NaN scores, duplicate rows...) naming frame, row, column and rule."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from clirunner import error_line, rankhouse_in_process, stdout_of
from conftest import TREC, read_qrels, read_run

import rankhouse
from rankhouse.errors import FrameError, FreezeError, GateError, InternalError, QueryError, RankhouseError
from rankhouse.paths import ROOT

QRELS, TEST, TRUNC = TREC / "qrels.test", TREC / "results.test", TREC / "results.trunc"
MEASURES = ["nDCG@10", "P@10", "AP", "RR", "R@100", "Rprec", "Bpref", "NumRelRet"]


def run_frame(run: dict[str, dict[str, float]]) -> pd.DataFrame:
    """A dict-of-dicts run as an ir_measures DataFrame (query_id, doc_id, score), ids as Python strings."""
    rows = [(qid, doc, score) for qid, docs in run.items() for doc, score in docs.items()]
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "score"]).astype({"query_id": object, "doc_id": object})


def qrels_frame(qrels: dict[str, dict[str, int]]) -> pd.DataFrame:
    rows = [(qid, doc, rel) for qid, docs in qrels.items() for doc, rel in docs.items()]
    frame = pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])
    return frame.astype({"query_id": object, "doc_id": object})


@pytest.fixture(scope="module")
def cli_json():
    """`rankhouse eval -q --format json` on the sample files, the numbers every input form must give."""
    return json.loads(stdout_of("eval", QRELS, TEST, TRUNC, "--format", "json", "-q", *(f"-m{m}" for m in MEASURES)))


# -- 1. every input form, the command line's numbers ------------------------------------------------------


def test_every_run_form_gives_the_numbers_of_rankhouse_eval(cli_json):
    """One evaluation of results.test given six ways (a file, NAME=PATH, pandas, polars, Arrow, a dict of
    dicts) beside results.trunc: each run's every value, per query and overall, is the command's to the
    last bit."""
    frame = run_frame(read_run(TEST))
    runs = {
        "file": str(TEST),
        "pandas": frame,
        "polars": pl.from_pandas(frame),
        "arrow": pa.Table.from_pandas(frame, preserve_index=False),
        "dict": read_run(TEST),
        "results.trunc": TRUNC,
    }
    result = rankhouse.evaluate(QRELS, runs, MEASURES, per_query=True)
    assert result.runs == list(runs)
    expected = cli_json["results.test"]
    for name in ("file", "pandas", "polars", "arrow", "dict"):
        assert result.to_dict(per_query=True)[name] == expected, name
        assert result.to_dict()[name] == expected["all"], name
    assert result.to_dict(per_query=True)["results.trunc"] == cli_json["results.trunc"]
    # the Arrow tables: the runs x measures table and the per-query rows carry the same numbers
    table = result.to_arrow().to_pylist()
    assert table[0] == {"run": "file", **expected["all"]}
    per_query = result.to_pandas(per_query=True).query("run == 'polars'")
    for qid, values in expected["per_query"].items():
        got = per_query[per_query.query_id == qid].set_index("measure")["value"].to_dict()
        assert got == values
    assert isinstance(result.to_arrow().column("NumRelRet")[0].as_py(), int)
    assert result.to_polars().columns == ["run", *MEASURES]


def test_paths_and_name_path_pairs_name_the_runs_as_the_command_does(cli_json):
    result = rankhouse.evaluate(str(QRELS), [str(TEST), f"trunc={TRUNC}"], MEASURES)
    assert result.runs == ["results.test", "trunc"]
    expected = {"results.test": cli_json["results.test"]["all"], "trunc": cli_json["results.trunc"]["all"]}
    assert result.to_dict() == expected
    one = rankhouse.evaluate(QRELS, TEST, ["AP"])  # one path: one run
    assert one.to_dict() == {"results.test": {"AP": cli_json["results.test"]["all"]["AP"]}}


@pytest.mark.parametrize("form", ["pandas", "polars", "arrow", "dict"])
def test_every_qrels_form_gives_the_numbers_of_rankhouse_eval(cli_json, form):
    frame = qrels_frame(read_qrels(QRELS))
    qrels = {"pandas": frame, "polars": pl.from_pandas(frame), "arrow": pa.Table.from_pandas(frame),
             "dict": read_qrels(QRELS)}[form]  # fmt: skip
    result = rankhouse.evaluate(qrels, [TEST, TRUNC], MEASURES, per_query=True)
    assert result.to_dict(per_query=True) == cli_json


def test_one_frame_is_one_run_and_ids_may_be_whole_numbers():
    """A single frame is a run named `run`; whole-number ids read as their decimal text."""
    qrels = pd.DataFrame({"query_id": [1, 1, 2], "doc_id": [10, 11, 12], "relevance": [1, 0, 2]})
    run = pd.DataFrame({"query_id": ["1", "1", "2"], "doc_id": ["11", "10", "12"], "score": [2.0, 1.0, 0.5]})
    result = rankhouse.evaluate(qrels, run, ["P@1", "RR"])
    assert result.to_dict() == {"run": {"P@1": 0.5, "RR": 0.75}}


# -- 2. the oracles through their own Python APIs, on the same DataFrames -----------------------------------


def test_the_same_dataframes_through_ir_measures():
    """ir_measures (its pytrec_eval provider: trec_eval 9, scores compared as 32-bit floats, so
    float_scores=True) on the same DataFrames: every query's value within 1e-12 (ir_measures too scores 0
    for a judged query the run did not answer, 302 of results.trunc, as -c does), and the means."""
    import ir_measures

    qrels = qrels_frame(read_qrels(QRELS))
    runs = {"test": run_frame(read_run(TEST)), "trunc": run_frame(read_run(TRUNC))}
    names = ["nDCG@10", "P@10", "AP", "RR", "R@100", "Rprec", "Bpref"]
    measures = [ir_measures.parse_measure(m) for m in names]
    ours = rankhouse.evaluate(qrels, runs, measures, per_query=True, float_scores=True)  # its objects as names
    per_query = ours.to_dict(per_query=True)
    for name, frame in runs.items():
        theirs = {}
        for metric in ir_measures.iter_calc(measures, qrels, frame):
            theirs.setdefault(metric.query_id, {})[str(metric.measure)] = metric.value
        assert set(theirs) == set(per_query[name]["per_query"])
        for qid, values in theirs.items():
            assert per_query[name]["per_query"][qid] == pytest.approx(values, abs=1e-12), (name, qid)
        aggregate = {str(m): v for m, v in ir_measures.calc_aggregate(measures, qrels, frame).items()}
        assert ours.to_dict()[name] == pytest.approx(aggregate, abs=1e-12)


def synthetic(seed: int = 38, queries: int = 30, docs: int = 40) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    """Graded qrels and three runs of continuous scores (no ties: ranx's order and trec_eval's agree), the
    runs' noise decreasing so that some differences are significant and some are not."""
    rng = np.random.default_rng(seed)
    judged = [(f"q{q}", f"d{d}", int(rng.integers(0, 3)) if rng.random() < 0.5 else 0)
              for q in range(queries) for d in range(docs)]  # fmt: skip
    qrels = pd.DataFrame(judged, columns=["query_id", "doc_id", "relevance"]).astype({"query_id": object,
                                                                                        "doc_id": object})  # fmt: skip
    runs = {}
    for name, noise in (("base", 2.0), ("close", 1.9), ("better", 1.0)):
        rows = [(q, d, float(g + rng.normal(0, noise))) for q, d, g in judged]
        runs[name] = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"]).astype(
            {"query_id": object, "doc_id": object}
        )
    return qrels, runs


@pytest.fixture(scope="module")
def ranx_report():
    """ranx's evaluate and compare (paired t-test, `student`) on the synthetic DataFrames. ranx
    JIT-compiles on first use (cached on disk after that)."""
    from ranx import Qrels, Run, compare, evaluate

    qrels, runs = synthetic()
    ranx_qrels = Qrels.from_df(qrels, q_id_col="query_id", doc_id_col="doc_id", score_col="relevance")
    ranx_runs = []
    for name, frame in runs.items():
        run = Run.from_df(frame, q_id_col="query_id", doc_id_col="doc_id", score_col="score")
        run.name = name
        ranx_runs.append(run)
    metrics = ["ndcg@10", "map", "precision@10", "mrr"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba's warnings from ranx's compiled code
        values = {run.name: evaluate(ranx_qrels, run, metrics) for run in ranx_runs}
        report = compare(ranx_qrels, ranx_runs, metrics, stat_test="student", max_p=0.01)
    return qrels, runs, values, report, ranx_qrels, ranx_runs


RANX = {"ndcg@10": "nDCG@10", "map": "AP", "precision@10": "P@10", "mrr": "RR"}


def test_the_same_dataframes_through_ranx_evaluate(ranx_report):
    qrels, runs, values, _, _, _ = ranx_report
    ours = rankhouse.evaluate(qrels, runs, list(RANX.values())).to_dict()
    for name in runs:
        assert {RANX[m]: v for m, v in values[name].items()} == pytest.approx(ours[name], abs=1e-12)


def test_compare_has_ranx_compares_t_test_p_values_and_marks(ranx_report):
    """rankhouse.compare (test t, no correction, alpha 0.01) against ranx.compare(stat_test="student",
    max_p=0.01) on the same DataFrames: every p-value to 1e-9 relative, the same significant pairs, and
    ranx's Run and Qrels objects read as they are."""
    qrels, runs, _, report, ranx_qrels, ranx_runs = ranx_report
    ours = rankhouse.compare(qrels, runs, list(RANX.values()), baseline="base", correction="none", alpha=0.01)
    rows = {(r["run"], r["measure"]): r for r in ours.to_arrow().to_pylist()}
    significant = 0
    for name in ("close", "better"):
        for metric, measure in RANX.items():
            theirs = report.comparisons[name, "base"][metric]
            row = rows[name, measure]
            assert row["p_value"] == pytest.approx(theirs["p_value"], rel=1e-9, abs=1e-300), (name, measure)
            assert row["p_adjusted"] == row["p_value"]
            assert row["significant"] == bool(theirs["significant"]), (name, measure)
            assert row["mean"] == pytest.approx(report.results[name][metric], abs=1e-12)
            significant += row["significant"]
    assert 0 < significant < 8  # the table has both kinds of cell
    # ranx's own objects as inputs: the same table
    again = rankhouse.compare(
        ranx_qrels, ranx_runs, list(RANX.values()), baseline="base", correction="none", alpha=0.01
    )
    assert again.to_arrow().equals(ours.to_arrow())


# -- 3. the command line's renderings ------------------------------------------------------------------------


def test_evaluate_renders_as_rankhouse_eval():
    result = rankhouse.evaluate(QRELS, [TEST, TRUNC], ["nDCG@10", "P@10", "AP"], per_query=True)
    common = [QRELS, TEST, TRUNC, "-m", "nDCG@10", "-m", "P@10", "-m", "AP"]
    assert result.to_markdown() == stdout_of("eval", *common, "--format", "markdown")
    assert result.to_latex() == stdout_of("eval", *common, "--format", "latex")
    assert result.render("text") == stdout_of("eval", *common, "-q")
    assert result.render("csv") == stdout_of("eval", *common, "-q", "--format", "csv")
    assert '<td style="text-align:right">0.3016</td>' in result._repr_html_()  # nDCG@10 of results.test


def test_compare_renders_as_rankhouse_compare_on_frames_and_files(tmp_path):
    """The synthetic runs written as TREC files for the command, given to the API as DataFrames: the same
    text, Markdown, LaTeX and CSV; the notebook's HTML table marks the significant means."""
    qrels, runs = synthetic()
    files = {}
    with (tmp_path / "qrels").open("w") as out:
        for q, d, g in qrels.itertuples(index=False):
            out.write(f"{q} 0 {d} {g}\n")
    for name, frame in runs.items():
        files[name] = tmp_path / f"{name}.run"
        with files[name].open("w") as out:
            for i, (q, d, s) in enumerate(frame.itertuples(index=False)):
                out.write(f"{q} Q0 {d} {i} {s!r} {name}\n")
    ours = rankhouse.compare(qrels, runs, ["nDCG@10", "AP"], test="t", replicates=1000)
    args = ["compare", tmp_path / "qrels", *(f"{n}={p}" for n, p in files.items()), "-m", "nDCG@10", "-m", "AP",
            "--replicates", "1000"]  # fmt: skip
    assert repr(ours) + "\n" == stdout_of(*args)
    assert ours.to_markdown() + "\n" == stdout_of(*args, "--format", "markdown")
    assert ours.to_latex() + "\n" == stdout_of(*args, "--format", "latex")
    assert ours.to_dict() == json.loads(stdout_of(*args, "--format", "json"))
    page = ours._repr_html_()
    marked = [r for r in ours.to_arrow().to_pylist() if r["significant"]]
    assert marked and page.count("<sup>*</sup>") == len(marked)
    assert f"<b>{marked[0]['mean']:.4f}</b><sup>*</sup>" in page
    assert "p adjusted by Holm" in page


def test_fuse_is_rankhouse_fuse_on_files_and_frames(tmp_path):
    """rrf and rsf of the two sample runs: the rows `rankhouse fuse` writes, from files or from frames; the
    fused runs evaluate as they are; `output` writes the command's bytes."""
    arms = {"test": TEST, "trunc": TRUNC}
    stdout_of("fuse", "--arm", f"test={TEST}", "--arm", f"trunc={TRUNC}", "--rule", "rrf", "--rule", "rsf",
        "--depth", "50", "-o", tmp_path / "cli", "--db", ":memory:")  # fmt: skip
    fused = rankhouse.fuse(arms, ["rrf", "rsf"], depth=50, output=tmp_path / "api")
    for rule in ("rrf", "rsf"):
        lines = (tmp_path / "cli" / f"{rule}.run").read_text().splitlines()
        assert (tmp_path / "api" / f"{rule}.run").read_bytes() == (tmp_path / "cli" / f"{rule}.run").read_bytes()
        rows = fused.run(rule).to_pylist()
        assert len(rows) == len(lines)
        for row, line in zip(rows, lines):
            qid, _, docno, rank, score, _ = line.split()
            assert (row["query_id"], row["doc_id"], float(score)) == (qid, docno, row["score"])
    frames = rankhouse.fuse({"test": run_frame(read_run(TEST)), "trunc": read_run(TRUNC)}, ["rrf", "rsf"], depth=50)
    assert frames.to_arrow().equals(fused.to_arrow())
    evaluated = rankhouse.evaluate(QRELS, fused.runs, ["nDCG@10"])
    assert evaluated.runs == ["rrf", "rsf"]
    # the p-value rules read each arm's null run (here each arm's own run stands for its panel's scores)
    nulls = {"test": TRUNC, "trunc": TEST}
    mixture = rankhouse.fuse(arms, "mixture", nulls=nulls, depth=50)
    as_frames = rankhouse.fuse(
        {"test": read_run(TEST), "trunc": run_frame(read_run(TRUNC))}, "mixture", depth=50,
        nulls={"test": pl.from_pandas(run_frame(read_run(TRUNC))), "trunc": read_run(TEST)},
    )  # fmt: skip
    assert as_frames.to_arrow().equals(mixture.to_arrow()) and mixture.to_arrow().num_rows > 0
    assert (as_frames.incomplete, as_frames.candidates) == (mixture.incomplete, mixture.candidates)
    assert 0 < mixture.incomplete < mixture.candidates  # results.trunc lacks query 302: its candidates there
    with pytest.raises(RankhouseError, match="^mixture reads every arm's null run; no null run for test, trunc$"):
        rankhouse.fuse(arms, "mixture")


# -- 4. connect and Study: the gate's rules ------------------------------------------------------------------


def test_a_study_from_python_keeps_the_gate(tmp_path):
    """prepare, freeze, evaluate and status of trec_sample from Python: the labels closed (GateError) until
    the freeze verifies, a changed study refused a freeze (FreezeError) with the command's message, its
    results the numbers `rankhouse.evaluate` gives on the same files; connect reads the labels only
    through the verified study."""
    db = tmp_path / "sample.duckdb"
    study = rankhouse.Study(ROOT / "studies" / "trec_sample.toml", db)
    with pytest.raises(GateError, match="^study trec_sample has no freeze yet: run `rankhouse study freeze` first$"):
        study.evaluate()
    study.prepare()
    with pytest.raises(RankhouseError, match="^study trec_sample has no evaluated freeze yet: evaluate it first$"):
        study.results()
    assert study.status().stage == "prepared"
    with pytest.raises(GateError, match="^study trec_sample has no freeze: its labels stay closed$"):
        rankhouse.connect(db, study=study)
    frozen = study.freeze()
    assert (frozen.freeze_id, frozen.new) == ("trec_sample-1", True)
    assert study.status().stage == "frozen"
    evaluation = study.evaluate(out=tmp_path / "out")
    assert evaluation.freeze_id == "trec_sample-1" and (tmp_path / "out" / "results.json").exists()
    assert "AP                 0.1785          0.1016" in evaluation.summary
    assert study.status().stage == "evaluated"
    measures = ["AP", "nDCG", "nDCG@10", "P@5", "RR", "Bpref"]
    expected = rankhouse.evaluate(QRELS, [TEST, TRUNC], measures).to_dict()
    results = study.results().to_pandas().query("subset == 'all'")
    for run, values in expected.items():
        got = results[results.system == run].set_index("measure")["value"].to_dict()
        assert {m: got[m] for m in measures} == values
    with rankhouse.connect(db, study=study) as con:
        assert con.sql("SELECT count(*) AS n FROM gate.qrels").to_pydict() == {"n": [3681]}
        with pytest.raises(QueryError, match="^query failed: .*read-only"):
            con.sql("CREATE TABLE trec_sample.main.x (a INT)")
    with rankhouse.connect(db) as con:  # no study: no labels
        with pytest.raises(QueryError, match='^query failed: Catalog Error: Table with name "gate.qrels" does not'):
            con.sql("FROM gate.qrels")
        assert con.sql("SELECT count(*) AS n FROM trec_sample.results.run_measures").to_pydict()["n"][0] > 0
    # a changed protocol (another measure asked for) is a new freeze, refused without --supersedes
    changed = tmp_path / "trec_sample.toml"
    text = (ROOT / "studies" / "trec_sample.toml").read_text().replace('"../', f'"{ROOT}/')
    changed.write_text(text.replace('"RR",', '"RR", "P@20",', 1))
    moved = rankhouse.Study(changed, db)
    moved.prepare()
    with pytest.raises(FreezeError, match=r"^study trec_sample is frozen as trec_sample-1 and has changed since \("):
        moved.freeze()
    with pytest.raises(GateError, match="^the labels stay closed: study trec_sample changed since"):
        rankhouse.connect(db, study=changed)
    with pytest.raises(FreezeError, match=r"^study trec_sample is frozen as trec_sample-1 and has changed since \("):
        moved.run()
    assert "CHANGED" in str(moved.status())


# -- 5. errors: frame, row, column and rule ----------------------------------------------------------------

GOOD = {"301": {"d1": 1}}


@pytest.mark.parametrize(
    ("run", "message"),
    [
        (pd.DataFrame({"qid": ["301"], "docno": ["d1"], "score": [1.0]}),
         "run 'bm25' (pandas DataFrame): no column query_id, doc_id (its columns: qid, docno, score; run columns "
         "are ir_measures' query_id, doc_id, score; rename qid -> query_id, docno -> doc_id)"),
        (pd.DataFrame({"query_id": ["301", "301"], "doc_id": ["d1", "d2"], "score": [1.0, math.nan]}),
         "run 'bm25' (pandas DataFrame), row 1, column score: score is NaN or infinite (score nan)"),
        (pl.DataFrame({"query_id": ["301"], "doc_id": ["d1"], "score": [float("-inf")]}),
         "run 'bm25' (polars DataFrame), row 0, column score: score is NaN or infinite (score -inf)"),
        (pd.DataFrame({"query_id": ["301", "301", "302", "301"], "doc_id": ["d1", "d2", "d3", "d1"],
                       "score": [1.0, 2.0, 3.0, 4.0]}),
         "run 'bm25' (pandas DataFrame), row 3: duplicate document for this query (query_id '301', doc_id 'd1', "
         "first at row 0)"),
        (pa.table({"query_id": ["301", None], "doc_id": ["d1", "d2"], "score": [1.0, 2.0]}),
         "run 'bm25' (Arrow table), row 1, column query_id: query_id is missing (null)"),
        (pa.table({"query_id": ["301"], "doc_id": ["d 1"], "score": [1.0]}),
         "run 'bm25' (Arrow table), row 0, column doc_id: doc_id holds a blank, which a TREC file cannot "
         "(trec_eval splits its fields at blanks) (doc_id 'd 1')"),
        (pa.table({"query_id": ["301"], "doc_id": [""], "score": [1.0]}),
         "run 'bm25' (Arrow table), row 0, column doc_id: doc_id is empty (doc_id '')"),
        (pd.DataFrame({"query_id": ["301"], "doc_id": ["d1"], "score": ["high"]}),
         "run 'bm25' (pandas DataFrame), column score: score holds large_string: a score is a number"),
        (pd.DataFrame({"query_id": ["301", 5], "doc_id": ["d1", "d2"], "score": [1.0, 2.0]}),
         "run 'bm25' (pandas DataFrame), column query_id: query_id holds values of more than one type (Expected "
         "bytes, got a 'int' object)"),
        (pd.DataFrame({"query_id": [], "doc_id": [], "score": []}),
         "run 'bm25' (pandas DataFrame): has no rows: a run needs at least one"),
        ({"301": {"d1": "high"}}, "run 'bm25' (dict), ['301']['d1'], column score: score is not a number "
                                  "(score 'high')"),
        ({"301": {"d1": float("nan")}},
         "run 'bm25' (dict), ['301']['d1'], column score: score is NaN or infinite (score nan)"),
        (pa.table({"query_id": [1.5], "doc_id": ["d1"], "score": [1.0]}),
         "run 'bm25' (Arrow table), column query_id: query_id holds double: ids are text or whole numbers"),
    ],
)  # fmt: skip
def test_a_bad_run_is_refused_naming_frame_row_column_and_rule(run, message):
    with pytest.raises(FrameError) as refused:
        rankhouse.evaluate(GOOD, {"bm25": run}, ["P@1"])
    assert str(refused.value) == message


@pytest.mark.parametrize(
    ("qrels", "message"),
    [
        (pd.DataFrame({"query_id": ["301"], "doc_id": ["d1"], "rel": [1]}),
         "qrels (pandas DataFrame): no column relevance (its columns: query_id, doc_id, rel; qrels columns are "
         "ir_measures' query_id, doc_id, relevance; rename rel -> relevance)"),
        (pd.DataFrame({"query_id": ["301"], "doc_id": ["d1"], "relevance": [0.5]}),
         "qrels (pandas DataFrame), row 0, column relevance: relevance is not a whole number (relevance 0.5)"),
        (pl.DataFrame({"query_id": ["301", "301"], "doc_id": ["d1", "d1"], "relevance": [1, 0]}),
         "qrels (polars DataFrame), row 1: document judged twice for this query (query_id '301', doc_id 'd1', "
         "first at row 0)"),
    ],
)  # fmt: skip
def test_bad_qrels_are_refused_naming_frame_row_column_and_rule(qrels, message):
    with pytest.raises(FrameError) as refused:
        rankhouse.evaluate(qrels, {"bm25": {"301": {"d1": 1.0}}}, ["P@1"])
    assert str(refused.value) == message


def test_a_grade_a_measure_cannot_take_names_the_qrels_row():
    """The models' own check (ERR's highest grade, as `rankhouse eval` refuses it with the file's line)
    names the frame's row instead of a line."""
    qrels = pd.DataFrame({"query_id": ["301", "301"], "doc_id": ["d1", "d2"], "relevance": [1, 99]})
    with pytest.raises(FrameError) as refused:
        rankhouse.evaluate(qrels, {"bm25": {"301": {"d1": 1.0}}}, ["ERR@10"])
    assert str(refused.value).startswith(
        "qrels (pandas DataFrame), row 1, column relevance: grade 99 is above 4, the highest grade ERR@10 takes ("
    )


def test_options_and_names_are_refused_with_the_commands_messages():
    for call, args in (
        (lambda: rankhouse.compare(QRELS, [TEST, TRUNC], ["AP"], test="wilcoxon"), ["--test", "wilcoxon"]),
        (lambda: rankhouse.compare(QRELS, [TEST, TRUNC], ["NumRet"]), ["-m", "NumRet"]),
        (lambda: rankhouse.compare(QRELS, [TEST, TRUNC], ["AP"], baseline="x"), ["--baseline", "x"]),
    ):
        with pytest.raises(RankhouseError) as refused:
            call()
        done = rankhouse_in_process("compare", QRELS, TEST, TRUNC, "-m", "AP", *args)
        assert error_line(done) == f"error: {refused.value}"
    with pytest.raises(RankhouseError, match="^unknown measure 'ndcg@10x'"):
        rankhouse.evaluate(QRELS, TEST, ["ndcg@10x"])
    with pytest.raises(RankhouseError, match="^cannot read a int as a run or qrels"):
        rankhouse.evaluate(QRELS, {"a": 5}, ["AP"])
    with pytest.raises(RankhouseError, match="needs a name: give the runs as a dict"):
        rankhouse.evaluate(QRELS, [TEST, run_frame(read_run(TRUNC))], ["AP"])
    with pytest.raises(RankhouseError, match="no such file"):
        rankhouse.evaluate(QRELS, [TREC / "missing.run"], ["AP"])


def test_an_unexpected_error_is_an_internal_error_with_the_commands_line(monkeypatch):
    """What rankhouse did not expect (here DuckDB failing inside the measure models) is InternalError with
    the command line's one line, the original exception kept as its cause, never DuckDB's text alone."""
    import duckdb

    import rankhouse.evaluation

    def broken(*args, **kwargs):  # noqa: ANN002, ANN003, ARG001
        raise duckdb.InternalException("INTERNAL Error: something broke\nStack Trace: ...")

    monkeypatch.setattr(rankhouse.evaluation, "compute_measures", broken)
    with pytest.raises(InternalError) as failed:
        rankhouse.evaluate(GOOD, {"bm25": {"301": {"d1": 1.0}}}, ["P@1"])
    assert str(failed.value) == (
        "internal error: InternalException: INTERNAL Error: something broke Stack Trace: ... (please report it, "
        "with the call that raised it)"
    )
    assert isinstance(failed.value.__cause__, duckdb.InternalException)


def test_to_polars_without_polars_says_what_to_install(monkeypatch):
    result = rankhouse.evaluate(GOOD, {"bm25": {"301": {"d1": 1.0}}}, ["P@1"])
    monkeypatch.setitem(sys.modules, "polars", None)  # `import polars` now raises ImportError
    with pytest.raises(ImportError, match=r"^to_polars\(\) needs polars, which is not installed: pip install polars$"):
        result.to_polars()


def test_import_rankhouse_loads_nothing_but_its_version():
    """`import rankhouse` (what the command line imports first) loads no API module, DuckDB or Arrow: the
    API is imported on first use."""
    code = (
        "import sys, rankhouse; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('rankhouse', 'duckdb', 'pyarrow', 'pandas')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["['rankhouse']"]
