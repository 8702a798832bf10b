"""Engine parity: the metrics models give the same rows on Spark (rankhouse/warehouse/spark.py) as on DuckDB.

On trec_eval's sample (two runs, qrels.test) every metrics model is built twice, once in DuckDB and once
with `--engine spark` in a second warehouse; DuckDB's rows are the oracle for Spark's: the same rows,
exactly for integers and strings, within 1e-12 relative for doubles. One SparkSession (local[2]) serves
the whole test session; the module is skipped without pyspark or Java.
"""

from __future__ import annotations

import math
from pathlib import Path

import duckdb
import pytest
from clirunner import error_line, rankhouse_in_process
from conftest import TREC, read_run
from model_files import model
from parity import row_differences

pytest.importorskip("pyspark", reason="pyspark is not installed: pip install 'rankhouse[spark]'")

from rankhouse.errors import ModelError  # noqa: E402
from rankhouse.evaluation import EvalOptions, load_inputs  # noqa: E402
from rankhouse.loaders import load_run  # noqa: E402
from rankhouse.measures import parse_measures  # noqa: E402
from rankhouse.warehouse import Warehouse  # noqa: E402
from rankhouse.warehouse.dag import Project  # noqa: E402
from rankhouse.warehouse.runner import Runner  # noqa: E402
from rankhouse.warehouse.spark import SparkEngine, java_available  # noqa: E402

if not java_available():
    pytest.skip("Spark needs Java 17 or 21 (JAVA_HOME or java on PATH)", allow_module_level=True)

# Every family of models/metrics/ (relevant_counts needs a measure with its own rel=, measure_ap GMAP).
MEASURES = ["AP", "AP@10", "AP(rel=1)", "GMAP", "nDCG", "nDCG@10", "nDCG_exp@10", "P@5", "P@10", "P(rel=1)@5",
            "R@100", "R(rel=1)@100", "RR", "Rprec", "Bpref", "Success@10", "IPrec@0.5", "ERR@10", "Judged@10",
            "NumRet", "NumRel", "NumRelRet", "NumQ", "infAP", "gm_bpref", "Rprec_mult@0.5", "utility.2,-1,0,0",
            "11pt_avg", "binG", "G", "ndcg_rel", "Rndcg", "nDCG(gains={1:3,2:9})@10", "relative_P@10", "SetP",
            "SetP(relative=True)", "SetR", "SetAP", "SetF(beta=2)", "num_nonrel_judged_ret", "RBP(p=0.8)", "rbp_resid",
            "unj@10", "relstring@20", "dcg", "ideal_dcg", "yaap"]  # fmt: skip
# with the z-scores of trec_eval's test folder (query_zscores; run_measures averages them)
OPTIONS = EvalOptions(zscores=TREC / "expected" / "zscores_file")
PARAMS = {**OPTIONS.parameters(), "measures": MEASURES}
# trec_eval's other relevance formats, each on its sample: (relevance file, run, measures); their models
# are built on trec_eval's sample of their format
OTHER = {
    "prefs": ("prefs.test", "prefs.results.test", ["all_prefs"]),
    "qrels_jg": ("qrels.123", "results.test", ["qrels_jg"]),
}
OTHER_MODELS = ["measure_prefs", "preference_documents", "preference_pairs", "preference_positions", "measure_avgjg"]
METRICS = sorted(name for name, m in Project.load().models.items() if m.group == "metrics")
DUCKDB_ONLY = {"preference_pairs"}  # a recursive CTE with UNION (its header's dialect)


def trec_sample(wh: Warehouse, qrels: str = "qrels.test", runs: tuple[str, ...] = ("results.test", "results.trunc"),
                options: EvalOptions = OPTIONS) -> None:  # fmt: skip
    """trec_eval's sample runs and relevance file, loaded and the gate opened (as `rankhouse eval` does)."""
    load_inputs(wh, TREC / qrels, [TREC / run for run in runs], options)
    wh.open_gate()


@pytest.fixture(scope="module")
def built(spark):
    """(DuckDB's warehouse, Spark's warehouse, the Spark engine): +run_measures built in each, in Spark's
    warehouse the staging models by DuckDB (handed to Spark as Parquet) and the metrics models by Spark."""
    with Warehouse(":memory:") as duck, Warehouse(":memory:") as sparked:
        engine = SparkEngine(session=spark)
        build_both(duck, sparked, engine, PARAMS, trec_sample)
        yield duck, sparked, engine
        engine.close()


def build_both(duck: Warehouse, sparked: Warehouse, engine: SparkEngine, params: dict, load) -> None:  # noqa: ANN001
    """+run_measures built in `duck` and, its staging models by DuckDB, its other models by `engine`, in
    `sparked`, after `load`(warehouse) loaded the inputs of each."""
    project = Project.load(params=params)
    names = project.select("+run_measures +measure_relstring")
    staging = [n for n in names if project.models[n].group == "staging"]
    load(duck)
    load(sparked)
    Runner(duck, project, params).run(names)
    Runner(sparked, project, params).run(staging)
    Runner(sparked, project, params, engine=engine).run([n for n in names if n not in staging])


@pytest.fixture(scope="module")
def built_other(spark):
    """{model: (DuckDB's warehouse, Spark's)} for the models of trec_eval's other relevance formats, each
    format's sample built in DuckDB, and in Spark's warehouse those models by Spark (the models they read
    by DuckDB, handed to Spark as Parquet)."""
    found = {}
    with Warehouse(":memory:") as p_duck, Warehouse(":memory:") as p_spark, Warehouse(":memory:") as g_duck, \
            Warehouse(":memory:") as g_spark:  # fmt: skip
        engine = SparkEngine(session=spark)
        for fmt, duck, sparked in (("prefs", p_duck, p_spark), ("qrels_jg", g_duck, g_spark)):
            qrels, run, measures = OTHER[fmt]
            options = EvalOptions(rel_format=fmt)
            params = {**options.parameters(), "measures": [m.canonical for m in parse_measures(measures)
                                                           if m.canonical != "runid"]}  # fmt: skip
            project = Project.load(params=params)
            names = project.select("+run_measures")
            own = [n for n in names if n in OTHER_MODELS]
            upstream = [n for n in project.select(" ".join(f"+{n}" for n in own)) if n not in own]
            for wh in (duck, sparked):
                trec_sample(wh, qrels, (run,), options)
            Runner(duck, project, params).run(names)
            Runner(sparked, project, params).run(upstream)
            Runner(sparked, project, params, engine=engine).run(own)
            found.update({name: (duck, sparked) for name in own})
        yield found
        engine.close()


def rows(wh: Warehouse, name: str) -> tuple[list[tuple[str, str]], list[tuple]]:
    """A model's (column, type) pairs and its rows in the order of its grain."""
    grain = ", ".join(Project.load().models[name].grain)
    types = wh.sql(f"SELECT column_name, column_type FROM (DESCRIBE models.{name})")
    return types, wh.sql(f"SELECT * FROM models.{name} ORDER BY {grain}")


@pytest.mark.parametrize("name", METRICS)
def test_metrics_model_gives_the_same_rows_on_spark(request, name):
    if name in OTHER_MODELS:
        duck, sparked = request.getfixturevalue("built_other")[name]
    else:
        duck, sparked, _ = request.getfixturevalue("built")
    duck_types, expected = rows(duck, name)
    spark_types, got = rows(sparked, name)
    assert spark_types == duck_types
    assert expected, f"{name} has no rows on the sample: the comparison would prove nothing"
    columns = [c for c, _ in duck_types]
    assert row_differences(Project.load().models[name], columns, expected, got) is None


def test_the_metrics_models_ran_on_spark_and_the_labels_in_duckdb(built):
    duck, sparked, engine = built
    project = Project.load(params=PARAMS)
    assert {engine.runs_on(project.models[n], project) for n in set(METRICS) - DUCKDB_ONLY} == {"spark"}
    assert {engine.runs_on(project.models[n], project) for n in DUCKDB_ONLY} == {"duckdb"}
    assert engine.runs_on(project.models["qrels"], project) == "duckdb"  # it reads gate.*

    def logged(wh, name):
        return wh.sql("SELECT fingerprint, message FROM meta.model_runs WHERE model = ? AND status = 'built'", [name])

    [(duck_fingerprint, duck_note)] = logged(duck, "measure_ap")
    [(spark_fingerprint, spark_note)] = logged(sparked, "measure_ap")
    assert duck_fingerprint == spark_fingerprint and duck_note is None  # the engine is no part of it
    assert spark_note.startswith("built on spark 4.")
    assert logged(sparked, "qrels_judgments")[0][1] is None  # built by DuckDB
    exported = {p.parent.parent.name for p in engine.workdir(None).glob("*/*/*/*.parquet")}
    assert {"qrels_judgments", "measure_ap", "run_measures"} <= exported


@pytest.fixture
def handed_over(tmp_path, spark):
    """A DuckDB-only model (list_dot_product) and a portable model reading it, on results.test."""
    model(tmp_path, "native", "SELECT run_id, docno, list_dot_product([1.0, 2.0], [score, score]) AS x FROM raw.runs",
          grain="run_id, docno", audits="not_null(x)", extra="-- dialect: duckdb: list_dot_product")  # fmt: skip
    model(tmp_path, "totals", "SELECT run_id, count(*) AS n, sum(x) AS total FROM models.native GROUP BY run_id",
          group="summary")  # fmt: skip
    model(tmp_path, "broken", "SELECT run_id, jaro_winkler_similarity(run_id, 'x') AS s FROM models.native",
          group="summary")  # fmt: skip
    model(tmp_path, "spread", "SELECT run_id, quantile_cont(score, 0.025) AS low, 1.0 / count(*) AS share "
          "FROM raw.runs GROUP BY run_id")  # fmt: skip
    model(tmp_path, "unit_sums", "SELECT run_id, {{ units_sum('u') }} AS total, {{ mean_of_units('u') }} AS mean "
          "FROM (SELECT run_id, {{ units('score / 10') }} AS u FROM raw.runs) GROUP BY run_id")  # fmt: skip
    project = Project.load(tmp_path)
    with Warehouse(":memory:") as wh:
        load_run(wh, TREC / "results.test")
        engine = SparkEngine(session=spark)
        yield wh, project, Runner(wh, project, engine=engine), engine
        engine.close()


def test_a_duckdb_only_model_is_built_in_duckdb_and_read_by_spark(handed_over):
    wh, project, runner, engine = handed_over
    assert [engine.runs_on(project.models[n], project) for n in ("native", "totals")] == ["duckdb", "spark"]
    runner.run(project.select("+totals"))
    scores = read_run(TREC / "results.test")
    lines = [score for docs in scores.values() for score in docs.values()]
    (run_id, n, total), *rest = wh.sql("SELECT run_id, n, total FROM models.totals")
    assert not rest and run_id == "results.test" and n == len(lines)
    assert math.isclose(total, 3 * sum(lines), rel_tol=1e-12)
    assert list(Path(engine.workdir(runner)).glob("models/native/*/rows.parquet"))  # handed over as Parquet


def test_quantiles_and_divisions_are_duckdbs_on_spark(handed_over):
    # sqlglot writes PERCENTILE_CONT(x, q), which Spark refuses, and Spark divides decimals as decimals
    import numpy as np

    wh, project, runner, _ = handed_over
    runner.run(["spread"])
    scores = [s for docs in read_run(TREC / "results.test").values() for s in docs.values()]
    [(low, share)] = wh.sql("SELECT low, share FROM models.spread")
    assert math.isclose(low, float(np.percentile(scores, 2.5)), rel_tol=1e-12)
    assert share == 1 / len(scores)  # not a decimal rounded to 12 places


def test_sums_of_units_beyond_a_bigint_are_exact_on_spark(handed_over):
    # a bootstrap over thousands of queries sums more than 2^63 units of 1e-17: Spark sums BIGINTs as BIGINTs
    from decimal import ROUND_HALF_UP, Decimal

    wh, project, runner, _ = handed_over
    runner.run(["unit_sums"])
    scores = [s for docs in read_run(TREC / "results.test").values() for s in docs.values()]
    [(total, mean)] = wh.sql("SELECT total, mean FROM models.unit_sums")
    # the double s / 10 * 1e17 rounded half away from 0 (DuckDB's round), summed exactly
    expected = sum(int(Decimal(s / 10 * 1e17).to_integral_value(ROUND_HALF_UP)) for s in scores)
    assert int(total) == expected > 2**63
    assert mean == float(expected) / 1e17 / len(scores)


def test_a_model_spark_rejects_fails_before_anything_is_written(handed_over):
    wh, project, runner, _ = handed_over
    with pytest.raises(ModelError, match="broken: failed on Spark"):
        runner.run(project.select("+broken"))
    assert wh.sql("SELECT status FROM meta.model_runs WHERE model = 'broken'") == [("failed",)]
    assert not wh.table_exists("models.broken")


def test_run_engine_spark_from_the_command_line(tmp_path, spark):
    db = str(tmp_path / "w.duckdb")
    error_line(rankhouse_in_process("run", "--master", "local[2]", "--db", db))  # --master needs --engine spark
    assert not Path(db).exists()  # refused before the warehouse was opened
    assert rankhouse_in_process("load", "qrels", TREC / "qrels.test", "--db", db).returncode == 0
    assert rankhouse_in_process("load", "run", TREC / "results.trunc", "--db", db).returncode == 0
    done = rankhouse_in_process(
        "run", "--engine", "spark", "--master", "local[2]", "-s", "+retrieved_counts", "--db", db
    )
    assert done.returncode == 0 and done.stdout == "" and "engine spark" in done.stderr, done.stderr
    with Warehouse(db, read_only=True) as wh:
        wh.open_gate()  # the default namespace's labels, and the evaluate models built from them
        counted = dict(wh.sql("SELECT query, num_ret FROM models.retrieved_counts"))
        statuses = dict(wh.sql("SELECT model, status FROM meta.model_runs"))
    assert counted == {qid: len(docs) for qid, docs in read_run(TREC / "results.trunc").items()}
    assert statuses["retrieved_counts"] == "built"
    assert (tmp_path / "w.duckdb.spark" / "models" / "retrieved_counts").is_dir()


def test_a_local_session_reserves_its_heap_from_duckdbs_default_limit(spark, monkeypatch):
    """Started on a local master, the engine holds its driver's heap (the JVM's own maxMemory) out of
    DuckDB's default memory limit until it closes (connection.reserve_memory)."""
    import os

    from rankhouse.warehouse.memory import JVM_OVERHEAD

    monkeypatch.delenv("RANKHOUSE_MEMORY_LIMIT", raising=False)
    with Warehouse(":memory:") as wh:
        default = wh.sql("SELECT current_setting('memory_limit')")[0][0]
    heap = spark.sparkContext._jvm.java.lang.Runtime.getRuntime().maxMemory()
    physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    engine = SparkEngine(session=spark)
    engine.start()
    try:
        with Warehouse(":memory:") as wh:
            shared = wh.sql("SELECT current_setting('memory_limit')")[0][0]
        reference = duckdb.connect()
        reference.execute(f"SET memory_limit = '{int(0.8 * (physical - heap - JVM_OVERHEAD)) >> 20}MiB'")
        assert shared == reference.execute("SELECT current_setting('memory_limit')").fetchall()[0][0] != default
    finally:
        engine.close()  # a session it did not start stays up
    with Warehouse(":memory:") as wh:
        assert wh.sql("SELECT current_setting('memory_limit')")[0][0] == default
    assert not spark.sparkContext._jsc.sc().isStopped()


def test_a_hand_back_that_fails_says_why_not_that_the_transaction_is_aborted(tmp_path):
    """A model's Parquet rows that DuckDB cannot take (here a text where its SQL gives an integer; at 400M
    lines it was a full disk) fail with DuckDB's own error: the unregister after it, which DuckDB refuses
    in the aborted transaction, no longer replaces that error by 'Current transaction is aborted'."""
    folder = tmp_path / "rows"
    folder.mkdir()
    duckdb.sql(f"COPY (SELECT 'not a number' AS n) TO '{folder / 'part-0.parquet'}' (FORMAT parquet)")

    class Built:  # what _hand_back reads of the runner and the model
        def __init__(self, wh: Warehouse) -> None:
            self.wh, self.name, self.table = wh, "numbers", "main.numbers"

    with Warehouse(":memory:") as wh:
        built = Built(wh)
        with pytest.raises(duckdb.ConversionException, match="not a number"):
            with wh.transaction():
                SparkEngine._hand_back(None, built, built, "SELECT 1 AS n", folder, built.table)  # type: ignore[arg-type]
        assert not wh.table_exists("main.numbers")
