"""`--engine spark` end to end: `rankhouse eval` and the study commands on trec_eval's sample give DuckDB's
numbers, audits run on Spark, `models list --engine spark` names each model's engine, and the engine
options refuse before anything is written.

One SparkSession serves the test session (conftest's `spark`): a command adopts it as the process's
active session (SparkEngine.session) rather than starting a JVM of its own, and does not stop it. The
Spark tests skip without pyspark or Java; the others need neither.
"""

from __future__ import annotations

import csv
import json
import math
import re
import sys
from pathlib import Path

import pytest
from clirunner import error_line, rankhouse_in_process, stdout_of
from conftest import TREC, read_run
from model_files import model
from warehouse_files import copy_warehouse

from rankhouse.errors import AuditError
from rankhouse.loaders import load_run
from rankhouse.paths import MODELS_DIR, ROOT
from rankhouse.warehouse import Warehouse
from rankhouse.warehouse.dag import Project
from rankhouse.warehouse.runner import Runner

PROTOCOL = ROOT / "studies" / "trec_sample.toml"
# trec_eval's default set and every other family of models/metrics/
MEASURES = ["official", "nDCG", "nDCG@10", "nDCG_exp@10", "AP@10", "R@100", "RR@5", "Success@10", "ERR@10",
            "Judged@10", "P(rel=2)@5"]  # fmt: skip


def same(a: object, b: object) -> bool:
    """Equal: doubles within 1e-12 relative, anything else (integers, strings) exactly and of one type."""
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-12, abs_tol=0.0)
    return type(a) is type(b) and a == b


def same_tree(a: object, b: object) -> bool:
    """Two JSON values equal as `same` says, key for key and item for item."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_tree(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_tree(x, y) for x, y in zip(a, b))
    return same(a, b)


def test_eval_on_spark_gives_duckdbs_numbers(spark, tmp_path):
    args = ["eval", TREC / "qrels.test", TREC / "results.test", TREC / "results.trunc", "-q", "--format", "json"]
    args += [f"-m{m}" for m in MEASURES]
    duck = stdout_of(*args)
    db = tmp_path / "w.duckdb"  # a file, to see afterwards where each model was built
    done = rankhouse_in_process(*args, "--engine", "spark", "--master", "local[2]", "--db", db, "-v")
    assert done.returncode == 0, done.stderr
    assert "starting Spark" in done.stderr
    duck, sparked = json.loads(duck), json.loads(done.stdout)
    assert same_tree(sparked, duck)
    summary = duck["results.test"]["all"]
    assert {"map", "P_10", "num_rel_ret", "runid", "nDCG@10", "ERR@10"} <= summary.keys()
    assert isinstance(summary["num_rel_ret"], int) and len(duck["results.test"]["per_query"]) == 3
    with Warehouse(db, read_only=True) as wh:
        notes = dict(wh.sql("SELECT model, message FROM meta.model_runs WHERE status = 'built'"))
    assert notes["measure_ap"].startswith("built on spark 4.") and notes["run_measures"].startswith("built on spark")
    assert notes["qrels"] is None  # it reads the labels: DuckDB
    assert spark.range(3).count() == 3  # the test session's SparkSession is still running


def test_compare_on_spark_gives_duckdbs_table(spark, tmp_path):
    args = ["compare", TREC / "qrels.test", TREC / "results.test", TREC / "results.trunc", "-m", "AP", "-m", "nDCG@10",
            "--test", "randomization", "--replicates", "1000", "--format", "json"]  # fmt: skip
    duck = stdout_of(*args)
    db = tmp_path / "w.duckdb"
    done = rankhouse_in_process(*args, "--engine", "spark", "--master", "local[2]", "--db", db, "-v")
    assert done.returncode == 0, done.stderr
    assert "starting Spark" in done.stderr
    duck, sparked = json.loads(duck), json.loads(done.stdout)
    assert same_tree(sparked, duck)
    assert duck["runs"]["results.trunc"]["AP"]["p_value"] is not None and duck["replicates"] == 1000
    with Warehouse(db, read_only=True) as wh:
        notes = dict(wh.sql("SELECT model, message FROM meta.model_runs WHERE status = 'built'"))
    assert notes["paired_randomization_tests"].startswith("built on spark 4.")


@pytest.fixture(scope="module")
def spark_study(spark, tmp_path_factory):
    """trec_sample prepared by `rankhouse study prepare --engine spark` and frozen (root/p), then a copy of
    that warehouse and its freezes (root/s) run by `study run --engine spark` (its prepare models up to
    date, its freeze reused, its evaluation on Spark) and root/p evaluated by `study evaluate` on DuckDB:
    (root, what the Spark run wrote on stderr). The copy saves preparing twice on Spark."""
    root = tmp_path_factory.mktemp("spark_study")
    (root / "p").mkdir()
    (root / "s").mkdir()
    said = {}

    def step(*args) -> None:
        done = rankhouse_in_process(*args)
        assert done.returncode == 0, done.stderr
        said[args[1]] = done.stderr

    step("study", "prepare", PROTOCOL, "--db", root / "p" / "w.duckdb", "--engine", "spark", "--master", "local[2]")
    step("study", "freeze", PROTOCOL, "--db", root / "p" / "w.duckdb")
    copy_warehouse(root / "p" / "w.duckdb", root / "s" / "w.duckdb")  # no labels file yet: evaluate writes it
    step("study", "run", PROTOCOL, "--db", root / "s" / "w.duckdb", "--out", root / "s" / "out", "--engine", "spark")
    step("study", "evaluate", PROTOCOL, "--db", root / "p" / "w.duckdb", "--out", root / "p" / "out")
    return root, said["run"]


def per_query(path: Path) -> list[list]:
    """per_query.csv's rows, each value as a float."""
    with path.open(newline="") as handle:
        rows = list(csv.reader(handle))
    return [rows[0]] + [[*row[:-1], float(row[-1])] for row in rows[1:]]


@pytest.mark.parametrize("where", ["s", "p"])
def test_study_on_spark_writes_duckdbs_outputs(spark_study, trec_sample_run, where):
    root, _ = spark_study
    duck_root, _ = trec_sample_run
    duck, sparked = duck_root / "out", root / where / "out"
    results = [json.loads((folder / "results.json").read_text()) for folder in (sparked, duck)]
    assert same_tree(*results) and results[0]["methods"]["results.test"]["AP"]["value"] > 0
    expected, got = per_query(duck / "per_query.csv"), per_query(sparked / "per_query.csv")
    assert len(got) == len(expected) > 50
    assert all(same_tree(a, b) for a, b in zip(got, expected))
    for run_file in ("results.test.run", "results.trunc.run"):
        assert (sparked / "runs" / run_file).read_bytes() == (duck / "runs" / run_file).read_bytes()


def test_the_spark_run_built_on_spark_and_its_freeze_is_duckdbs(spark_study, trec_sample_run):
    root, err = spark_study
    duck_root, _ = trec_sample_run
    assert "engine spark:" in err and "starting Spark" in err
    db = root / "s" / "w.duckdb"
    with Warehouse(db, read_only=True, namespace="trec_sample") as wh:
        notes = dict(wh.sql("SELECT model, message FROM meta.model_runs WHERE status = 'built'"))
    assert notes["measure_ap"].startswith("built on spark 4.") and notes["qrels"] is None  # labels: DuckDB
    # the engine is no part of the freeze: the same fingerprints and table digests as DuckDB's own run
    frozen, duck_frozen = (
        json.loads((r / "w.d/freezes/trec_sample-1.json").read_text()) for r in (root / "s", duck_root)
    )
    assert frozen["models"] == duck_frozen["models"] and frozen["tables"] == duck_frozen["tables"]
    out = stdout_of("study", "status", PROTOCOL, "--db", db)
    assert "trec_sample-1: intact" in out and "stage      evaluated" in out
    # evaluated again on DuckDB, the freeze verifies and the results kept from Spark's evaluation agree
    done = rankhouse_in_process("study", "evaluate", PROTOCOL, "--db", db, "--out", root / "s" / "again")
    assert done.returncode == 0, done.stderr
    assert "trec_sample-1 was evaluated before; the results are identical" in done.stderr, done.stderr


def test_a_study_prepared_on_spark_is_evaluated_by_duckdb(spark_study):
    from rankhouse.study import Protocol, Study
    from rankhouse.warehouse.spark import duckdb_reason

    root, _ = spark_study
    with Warehouse(root / "p" / "w.duckdb", read_only=True, namespace="trec_sample") as wh:
        notes = dict(wh.sql("SELECT model, message FROM meta.model_runs WHERE status = 'built'"))
        study = Study(Protocol.load(PROTOCOL), wh)
    project = study.project
    tables = [project.models[n] for n in study.prepare_models if project.models[n].materialized == "table"]
    on_spark = [m.name for m in tables if not duckdb_reason(m, project)]
    assert on_spark and all(notes[name].startswith("built on spark") for name in on_spark)
    assert all(notes[name] is None for name in study.evaluate_models)  # built by DuckDB


def test_a_study_prepared_by_duckdb_is_evaluated_on_spark(spark, trec_sample_study, trec_sample_run, tmp_path):
    copy_warehouse(trec_sample_study.frozen, tmp_path / "w.duckdb")  # prepared and frozen by DuckDB, not evaluated
    db, out = tmp_path / "w.duckdb", tmp_path / "out"
    done = rankhouse_in_process("study", "evaluate", PROTOCOL, "--db", db, "--out", out, "--engine", "spark")
    assert done.returncode == 0, done.stderr  # DuckDB's freeze verified (evaluate refuses a freeze that is not intact)
    with Warehouse(db, read_only=True, namespace="trec_sample") as wh:
        notes = dict(wh.sql("SELECT model, message FROM meta.model_runs WHERE status = 'built'"))
    assert notes["run_measures"].startswith("built on spark 4.") and notes["run_ranking"] is None  # DuckDB's
    duck = trec_sample_run[0] / "out"
    results = [json.loads((folder / "results.json").read_text()) for folder in (out, duck)]
    assert same_tree(*results)
    expected, got = per_query(duck / "per_query.csv"), per_query(out / "per_query.csv")
    assert len(got) == len(expected) > 50 and all(same_tree(a, b) for a, b in zip(got, expected))


class Recorder:
    """A SparkSession that keeps the text of every SQL statement it is asked to run: what ran on Spark."""

    def __init__(self, session) -> None:
        self._session = session
        self.statements: list[str] = []

    def sql(self, text: str, *args, **kwargs):
        self.statements.append(text)
        return self._session.sql(text, *args, **kwargs)

    def __getattr__(self, name: str):
        return getattr(self._session, name)


BOUND = 1.5
# a model per audit kind, each broken on results.test: (name, SQL, grain, audit)
BROKEN = [
    ("high", "SELECT qid, docno, score FROM raw.runs", "qid, docno", f"accepted_range(score, 0, {BOUND})"),
    ("holes", "SELECT qid, docno, CASE WHEN rank > 497 THEN NULL ELSE rank END AS kept FROM raw.runs",
     "qid, docno", "not_null(kept)"),
    ("nan", "SELECT qid, docno, CASE WHEN rank = 1 THEN CAST('NaN' AS DOUBLE) ELSE 0.5 END AS x FROM raw.runs",
     "qid, docno", "accepted_range(x, 0, 1)"),
    ("per_query", "SELECT qid, docno FROM raw.runs", "qid", "unique_grain"),
    ("none", "SELECT qid FROM raw.runs WHERE rank < 0", "qid", "at_least_one_row"),
]  # fmt: skip


@pytest.fixture(scope="module")
def broken(spark, tmp_path_factory):
    """The BROKEN models' project, and results.test loaded in a DuckDB warehouse and a Spark one."""
    root = tmp_path_factory.mktemp("broken")
    for name, sql, grain, audit in BROKEN:
        model(root, name, sql, grain=grain, audits=audit)
    project = Project.load(root)
    with Warehouse(":memory:") as duck, Warehouse(":memory:") as sparked:
        for wh in (duck, sparked):
            load_run(wh, TREC / "results.test")
        from rankhouse.warehouse.spark import SparkEngine

        engine = SparkEngine(session=Recorder(spark))
        yield project, duck, sparked, engine
        engine.close()


def run_lines(path: Path) -> list[tuple[str, str, int, float]]:
    """(qid, docno, rank, score) of every line of a TREC run file, read independently of rankhouse."""
    lines = []
    for line in path.read_text().splitlines():
        if line.strip():
            qid, _, docno, rank, score = line.split()[:5]
            lines.append((qid, docno, int(rank), float(score)))
    return lines


def expected_rows(name: str) -> list[tuple]:
    """The first (five) offending rows of BROKEN's model `name` in the order of its grain, from the run file."""
    lines = run_lines(TREC / "results.test")
    if name == "high":
        found = [(qid, docno, score) for qid, docno, _, score in lines if score > BOUND]
    elif name == "holes":
        found = [(qid, docno, None) for qid, docno, rank, _ in lines if rank > 497]
    elif name == "nan":
        found = [(qid, docno) for qid, docno, rank, _ in lines if rank == 1]
    elif name == "per_query":
        found = [(qid, sum(line[0] == qid for line in lines)) for qid in {line[0] for line in lines}]
    else:
        found = [(0,)]
    return sorted(found)[:5]


@pytest.mark.parametrize("name", [b[0] for b in BROKEN])
def test_a_broken_audit_fails_on_spark_as_on_duckdb(broken, spark, name):
    project, duck, sparked, engine = broken
    with pytest.raises(AuditError) as on_duckdb:
        Runner(duck, project).run([name])
    before = len(engine.session.statements)
    with pytest.raises(AuditError) as on_spark:
        Runner(sparked, project, engine=engine).run([name])
    assert str(on_spark.value) == str(on_duckdb.value)  # the same rows, named alike
    got = [row[:2] if name == "nan" else row for row in on_spark.value.rows]
    assert got == expected_rows(name), on_spark.value
    # the audit ran on Spark: the session's last statement reads the model's Spark view
    built, audited = engine.session.statements[before:][-2:]
    view = engine.view(f"models.{name}")
    assert view in audited and view not in built and "raw__runs" in built
    # and nothing is left: the table rolled back, the Spark view and its Parquet output gone
    assert not sparked.table_exists(f"models.{name}")
    assert sparked.sql("SELECT status FROM meta.model_runs WHERE model = ?", [name]) == [("failed",)]
    assert not spark.catalog.tableExists(view)
    assert not (engine.workdir(None) / "models" / name).exists()


def test_models_list_names_each_models_engine():
    header, _, *lines = stdout_of("models", "list", "--engine", "spark").splitlines()
    start = header.index("engine")
    listed = {line.split()[0]: line[start : header.index("description")].strip() for line in lines}
    expected = {}
    for path in MODELS_DIR.rglob("*.sql"):
        text = path.read_text()
        dialect = re.search(r"^-- dialect: duckdb: (.*)$", text, re.M)
        body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("--"))
        if dialect:
            expected[path.stem] = f"duckdb ({dialect.group(1).strip()})"
        elif re.search(r"^-- functions:", text, re.M):
            expected[path.stem] = "duckdb (calls a Python function)"
        elif "gate." in body:
            expected[path.stem] = "duckdb (reads the labels)"
        else:
            expected[path.stem] = "spark"
    assert listed == expected
    assert {"spark", "duckdb (reads the labels)"} <= set(listed.values())
    assert "engine" not in stdout_of("models", "list").splitlines()[0]
    assert "did you mean 'spark'" in error_line(rankhouse_in_process("models", "list", "--engine", "sparks"))


COMMANDS = {
    "eval": ["eval", TREC / "qrels.test", TREC / "results.test", "--db", "{db}"],
    "study prepare": ["study", "prepare", PROTOCOL, "--db", "{db}"],
    "study evaluate": ["study", "evaluate", PROTOCOL, "--db", "{db}", "--out", "{out}"],
    "study run": ["study", "run", PROTOCOL, "--db", "{db}", "--out", "{out}"],
    "compare": ["compare", TREC / "qrels.test", TREC / "results.test", TREC / "results.trunc", "--db", "{db}"],
    "demo": ["demo", "--study", "trec_sample", "--db", "{db}", "--out", "{out}"],
}
REFUSED = {
    "master without spark": (["--master", "local[2]"], "--master is for --engine spark"),
    "workdir without spark": (["--spark-workdir", "x"], "--spark-workdir is for --engine spark"),
    "unknown engine": (["--engine", "flink"], "--engine is duckdb or spark, not 'flink'"),
    "pyspark missing": (["--engine", "spark"], "--engine spark needs pyspark"),
    "workdir a URL": (["--engine", "spark", "--spark-workdir", "s3a://bucket/x"], "is a folder path, not"),
}


@pytest.mark.parametrize("refused", REFUSED)
@pytest.mark.parametrize("command", COMMANDS)
def test_engine_options_are_refused_before_anything_is_written(tmp_path, monkeypatch, command, refused):
    options, message = REFUSED[refused]
    if refused == "pyspark missing":
        monkeypatch.setitem(sys.modules, "pyspark", None)  # `import pyspark` raises ImportError
    place = tmp_path / "work"
    place.mkdir()
    args = [str(a).format(db=place / "w.duckdb", out=place / "out") for a in COMMANDS[command]]
    monkeypatch.chdir(place)
    done = rankhouse_in_process(*args, *options)
    assert message in error_line(done) and done.stdout == ""
    assert list(place.iterdir()) == []  # no warehouse, labels, freezes, outputs or work folder


def test_the_work_folder_is_the_one_given(spark, tmp_path):
    db, workdir = tmp_path / "w.duckdb", tmp_path / "shared"
    stdout_of("load", "qrels", TREC / "qrels.test", "--db", db)
    stdout_of("load", "run", TREC / "results.trunc", "--db", db)
    stdout_of("run", "-s", "+retrieved_counts", "--db", db, "--engine", "spark", "--spark-workdir", workdir)
    with Warehouse(db, read_only=True) as wh:
        wh.open_gate()  # the default namespace's labels, and the evaluate models built from them
        counted = dict(wh.sql("SELECT query, num_ret FROM models.retrieved_counts"))
    assert counted == {qid: len(docs) for qid, docs in read_run(TREC / "results.trunc").items()}
    assert list((workdir / "models" / "retrieved_counts").glob("*/*.parquet"))
    assert not (tmp_path / "w.duckdb.spark").exists()


def test_the_work_folder_may_come_from_the_environment(spark, tmp_path, monkeypatch):
    from rankhouse.cli.engines import WORKDIR_VARIABLE, open_engine

    monkeypatch.setenv(WORKDIR_VARIABLE, str(tmp_path / "from_env"))
    engine = open_engine("spark")
    assert engine.workdir(None) == tmp_path / "from_env" and (tmp_path / "from_env").is_dir()
    assert open_engine("spark", workdir=tmp_path / "given").workdir(None) == tmp_path / "given"
