"""Attacks on the label gate and on the freeze, one per way around them that an adversarial analyst
found (issue 13's points 1 and 4-9, issue 34's per-study gate; file reads and templates are in
tests/warehouse/test_model_sandbox.py, inputs that load something else than they say in
tests/loaders/test_input_rules.py). Every
attack must be refused with a message that names the study, the object and the fix, and leave every file
of the warehouse byte for byte as it was (warehouse_files.state)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys

import duckdb
import pytest
from clirunner import rankhouse, rankhouse_in_process
from conftest import TREC
from gated_study import make_env, open_study, prepared_and_frozen, write_protocol
from warehouse_files import files_of, plain, state, store_table

from rankhouse.errors import RankhouseError
from rankhouse.loaders import load_qrels, load_run
from rankhouse.loaders.sources import expecting
from rankhouse.study.freeze import row_digest, table_digest
from rankhouse.warehouse import Warehouse
from rankhouse.warehouse.layout import Layout


@pytest.fixture
def env(tmp_path):
    """The gated study (gated_study.py), with its own copies of the data and the models."""
    return make_env(tmp_path)


def evaluated(root, protocol) -> None:
    wh, study = open_study(root, protocol)
    with wh:
        study.run()


def study_refused(root, protocol, action, *messages: str, stage: str = "evaluate") -> str:
    """Run `action(study)` on a fresh session; it must raise a RankhouseError holding every message
    and leave every file of the warehouse as it was. Returns the message."""
    before = state(root / "w.duckdb")
    wh, study = open_study(root, protocol)
    with wh, pytest.raises(RankhouseError) as err:
        action(study)
    for message in messages:
        assert message in str(err.value), str(err.value)
    assert state(root / "w.duckdb") == before, f"a refused {stage} changed the warehouse's files"
    return str(err.value)


def labels_of(root, study: str = "gated"):
    return Layout.of(root / "w.duckdb").labels_file(study)


# -- 1. another warehouse, another study, a copy as a side door ------------------------------------


def test_another_warehouse_cannot_open_or_write_a_studys_labels(env):
    """The study's labels file copied into another warehouse (as that warehouse's own labels, or as a study
    of the same name's) is refused there: it records the warehouse and the study it belongs to."""
    root, protocol = env
    evaluated(root, protocol)
    labels = labels_of(root)
    other = root / "other.duckdb"
    with Warehouse(other) as wh:
        load_run(wh, TREC / "results.trunc")
    for study in ("default", "gated"):
        copy = Layout.of(other).labels_file(study)
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(labels, copy)
        with Warehouse(other, namespace=study) as wh, pytest.raises(RankhouseError, match="another warehouse"):
            wh.open_gate("gated-1")
        with Warehouse(other, namespace=study) as wh, pytest.raises(RankhouseError, match="another warehouse"):
            wh.labels().__enter__()
        copy.unlink()
    shutil.copy(labels, Layout.of(other).labels_file("default"))
    before = state(other)
    done = rankhouse("query", "SELECT count(*) FROM gate.qrels", "--db", other, "--with-labels")
    assert done.returncode == 2 and "belongs to study gated of another warehouse" in done.stderr, done.stderr
    assert "3681" not in done.stdout
    loaded = rankhouse("load", "qrels", root / "data" / "qrels.test", "--db", other)
    assert loaded.returncode == 2 and "belongs to study gated of another warehouse" in loaded.stderr
    assert state(other) == before
    # the study's own warehouse still opens them through its verified freeze
    opened = rankhouse("query", "SELECT count(*) AS n FROM gate.qrels", "--db", root / "w.duckdb", "--study", protocol,
                       "--freezes", root / "freezes", "--format", "csv")  # fmt: skip
    assert opened.returncode == 0 and opened.stdout.splitlines() == ["n", "3681"], opened.stderr


def test_labels_loaded_outside_any_study_open_without_a_freeze(tmp_path):
    with Warehouse(tmp_path / "a.duckdb") as wh:
        load_qrels(wh, TREC / "qrels.test")
    with Warehouse(tmp_path / "a.duckdb", read_only=True) as wh:
        wh.open_gate()
        assert wh.sql("SELECT count(*) FROM gate.qrels") == [(3681,)]


def throwaway_protocol(root):
    """A study with no label input: nothing it could open would be its own labels."""
    path = root / "throwaway.toml"
    path.write_text(
        '[study]\nname = "throwaway"\n\n[inputs.run]\npath = "data/results.trunc"\n'
        f'sha256 = "{hashlib.sha256((root / "data" / "results.trunc").read_bytes()).hexdigest()}"\n'
        'loader = "trec.run"\n\n[stages]\nprepare = "run_ranking"\nevaluate = "+run_measures"\n'
    )
    return path


def test_a_gate_opens_only_its_own_studys_labels(env):
    """Issue 34: a throw-away study, prepared and frozen in the same warehouse, opens no label of another
    study, whether that one is frozen or not: its gate is its own labels file."""
    root, protocol = env
    throwaway = throwaway_protocol(root)
    db = root / "w.duckdb"
    wh, study = open_study(root, protocol)
    with wh:
        study.prepare()  # gated: prepared, no freeze yet
    for args in (("study", "prepare", throwaway), ("study", "freeze", throwaway)):
        assert rankhouse(*args, "--db", db).returncode == 0
    for sql in ("SELECT count(*) AS n FROM gate.qrels", "SELECT count(*) AS n FROM gate.meta.sources"):
        done = rankhouse("query", sql, "--db", db, "--study", throwaway, "--format", "csv")
        assert done.returncode == 0 and done.stdout.splitlines() == ["n", "0"], done.stderr
    evaluated(root, protocol)  # gated's labels loaded and evaluated: still none in the throw-away's gate
    done = rankhouse("query", "SELECT count(*) AS n FROM gate.qrels", "--db", db, "--study", throwaway, "--format",
                     "csv")  # fmt: skip
    assert done.stdout.splitlines() == ["n", "0"]
    assert not Layout.of(db).labels_file("throwaway").exists() or "3681" not in done.stdout


LABEL_TABLES = {"qrels", "document_classes", "query_classes", "topic_classes", "evidence_judgments",
                "evidence_obligations"}  # fmt: skip


def test_no_label_row_is_written_to_any_file_but_the_studys_labels_file(env):
    """After an evaluation, neither the inputs, the namespaces nor the store hold a labels table or the
    table of an evaluate model that holds labels (judgments, judged rankings): only the study's labels
    file does. The main file keeps results (measures, intervals, tests)."""
    from rankhouse.warehouse.dag import Project

    root, protocol = env
    evaluated(root, protocol)
    project = Project.load(root / "models")
    holding = {
        name for name in project.models if project.models[name].stage == "evaluate" and project.holds_labels(name)
    }
    assert {"qrels", "qrels_judgments", "judged_ranking", "ideal_ranking"} <= holding
    labels = labels_of(root)
    for name, path in files_of(root / "w.duckdb").items():
        if path.suffix != ".duckdb" or path == labels:
            continue
        with duckdb.connect(str(path), read_only=True) as con:
            tables = {t for (t,) in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        assert not tables & (LABEL_TABLES | holding), (name, tables & (LABEL_TABLES | holding))
    with duckdb.connect(str(labels), read_only=True) as con:
        held = {
            t for (t,) in con.execute("SELECT table_name FROM duckdb_tables() WHERE schema_name = 'models'").fetchall()
        }
    assert {"qrels", "judged_ranking"} <= held
    with plain(root / "w.duckdb", "gated", read_only=True) as con:
        kept = {t for (t,) in con.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = 'gated' "
                                          "AND schema_name = 'results'").fetchall()}  # fmt: skip
    assert "run_measures" in kept and not kept & holding


# -- the labels file is never a warehouse --------------------------------------------------------------


def test_a_labels_file_is_never_opened_as_a_warehouse(env):
    """Read or write, under its own name or through a hard or symbolic link: every command refuses a labels
    file given as --db, saying what it is, and leaves it as it was."""
    root, protocol = env
    evaluated(root, protocol)
    labels = labels_of(root)
    hard, soft = root / "hard.duckdb", root / "soft.duckdb"
    os.link(labels, hard)
    os.symlink(labels, soft)
    before = hashlib.sha256(labels.read_bytes()).hexdigest()
    for db in (labels, hard, soft):
        for args in (("query", "FROM qrels"), ("query", "SELECT 1"), ("shell",), ("sources",), ("run",),
                     ("models", "list", "--db"), ("runs", "list"), ("load", "run", TREC / "results.test"),
                     ("eval", TREC / "qrels.test", TREC / "results.test"), ("export", root / "x")):  # fmt: skip
            if args[-1] == "--db":
                done = rankhouse_in_process(*args, db)
            else:
                done = rankhouse_in_process(*args, "--db", db)
            assert done.returncode == 2, (args, done.stderr)
            assert "is the labels file of study gated" in done.stderr, (args, done.stderr)
            assert "FBIS" not in done.stdout
        done = rankhouse_in_process("models", "docs", root / "catalog", "--db", db)
        assert done.returncode == 2 and "is the labels file of study gated" in done.stderr, done.stderr
    assert hashlib.sha256(labels.read_bytes()).hexdigest() == before


def test_a_link_in_place_of_the_labels_file_is_refused(env):
    """The study's labels file replaced by a hard link to the warehouse's inputs file (so that labels would
    be written into it): evaluate refuses, and the inputs file is unchanged."""
    root, protocol = env
    evaluated(root, protocol)
    labels = labels_of(root)
    labels.unlink()
    os.link(root / "w.duckdb", labels)
    inputs = hashlib.sha256((root / "w.duckdb").read_bytes()).hexdigest()
    wh, study = open_study(root, protocol)
    with wh, pytest.raises(RankhouseError, match="same file as one of the warehouse's other files"):
        study.evaluate()
    assert hashlib.sha256((root / "w.duckdb").read_bytes()).hexdigest() == inputs


# -- 8. a refused command changes nothing; eval beside a study changes nothing of it --------------------


def test_eval_on_a_study_warehouse_leaves_the_study_and_its_labels_alone(env):
    """`rankhouse eval --db` of a warehouse that holds a study evaluates in the default namespace: the
    study's freeze stays intact and its labels file is neither read nor made."""
    root, protocol = env
    prepared_and_frozen(root, protocol)
    data = root / "data"
    done = rankhouse("eval", data / "qrels.test", data / "results.trunc", "--db", root / "w.duckdb", "-m", "AP")
    assert done.returncode == 0 and "0.1016" in done.stdout, done.stderr
    assert not labels_of(root).exists()
    status = rankhouse("study", "status", protocol, "--db", root / "w.duckdb", "--freezes", root / "freezes")
    assert "current    gated-1: intact" in status.stdout, status.stdout


# -- 4. redefined views, shadowing macros, objects made by hand ---------------------------------------


def test_a_redefined_view_is_detected(env):
    root, protocol = env
    prepared_and_frozen(root, protocol)
    with plain(root / "w.duckdb", "gated") as con:
        definition = con.execute(
            "SELECT sql FROM duckdb_views() WHERE database_name = 'gated' AND view_name = 'run_ranking'"
        ).fetchall()[0][0]
        reversed_ranks = definition.split(" AS ", 1)[1].rstrip(";")
        con.execute(
            "CREATE OR REPLACE VIEW gated.models.run_ranking AS SELECT * REPLACE "
            f"(count(*) OVER (PARTITION BY system, query_key) + 1 - rank AS rank) FROM ({reversed_ranks})"
        )
    study_refused(root, protocol, lambda s: s.evaluate(), "the labels stay closed",
            "view models.run_ranking is not the one its model built",
            "the definition of models.run_ranking in the warehouse differs from the frozen one")  # fmt: skip
    wh, study = open_study(root, protocol)
    with wh:
        assert any(line.startswith("current    gated-1: CHANGED") and "models.run_ranking" in line
                   for line in study.status())  # fmt: skip
    wh, study = open_study(root, protocol)
    with wh:
        study.prepare()  # rebuilds the view from its model
        assert study.evaluate().freeze.freeze_id == "gated-1"


@pytest.mark.parametrize("where", ["gated", "inputs"])
def test_a_macro_shadowing_a_builtin_is_detected(env, where):
    root, protocol = env
    prepared_and_frozen(root, protocol)
    with plain(root / "w.duckdb", "gated") as con:
        con.execute(f"CREATE MACRO {where}.main.log2(x) AS 1")  # would change every nDCG
    study_refused(root, protocol, lambda s: s.evaluate(), "the labels stay closed", f"defines macro {where}.main.log2")


@pytest.mark.parametrize("where", ["gated", "inputs"])
def test_a_gate_schema_made_by_hand_is_a_change_not_an_internal_error(env, where):
    """Issue 34: a `gate` schema (with a qrels table) added to a file after the freeze: status says CHANGED
    and evaluate refuses cleanly, naming it."""
    root, protocol = env
    prepared_and_frozen(root, protocol)
    with plain(root / "w.duckdb", "gated") as con:
        con.execute(f"CREATE SCHEMA {where}.gate")
        con.execute(f"CREATE TABLE {where}.gate.qrels AS SELECT 'q' AS qid, '0' AS iter, 'd' AS docno, 1 AS rel")
    status = rankhouse("study", "status", protocol, "--db", root / "w.duckdb", "--freezes", root / "freezes")
    assert status.returncode == 0 and "CHANGED" in status.stdout and "schema gate" in status.stdout, status.stdout
    study_refused(root, protocol, lambda s: s.evaluate(), "the labels stay closed", "holds schema gate",
            "which rankhouse does not make")  # fmt: skip


# -- 5. re-adopted and hand-placed freeze files -------------------------------------------------------


def test_a_freeze_file_is_not_readopted_after_its_record_is_deleted(env):
    root, protocol = env
    prepared_and_frozen(root, protocol)
    path = root / "freezes" / "gated-1.json"
    with plain(root / "w.duckdb", "gated") as con:
        con.execute(f"UPDATE {store_table(con, 'gated', 'measure_requests')} SET cutoff = 3 WHERE measure = 'P@5'")
        con.execute("DELETE FROM gated.meta.freezes")
    with Warehouse(root / "w.duckdb", read_only=True, namespace="gated") as wh:
        digest, rows = table_digest(wh, "models.measure_requests", ("measure",))
    record = json.loads(path.read_text())
    record["tables"]["models.measure_requests"] = {"sha256": digest, "rows": rows}
    path.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
    study_refused(root, protocol, lambda s: s.evaluate(), "gated-1.json is not recorded in warehouse",
            "never adopts a freeze file")  # fmt: skip


def test_a_hand_placed_freeze_without_supersedes_and_reason_is_refused(env):
    root, protocol = env
    prepared_and_frozen(root, protocol)
    shutil.copy(root / "freezes" / "gated-1.json", root / "freezes" / "gated-2.json")
    study_refused(root, protocol, lambda s: s.evaluate(), "gated-2.json does not name the freeze it supersedes")
    record = json.loads((root / "freezes" / "gated-1.json").read_text())
    record.update(supersedes="gated-1", reason="forged", previous_sha256="0" * 64)
    (root / "freezes" / "gated-2.json").write_text(json.dumps(record))
    study_refused(root, protocol, lambda s: s.evaluate(), "records gated-1's SHA-256 as 000")


def test_freezes_chain_their_predecessors(env):
    root, protocol = env
    evaluated(root, protocol)
    protocol.write_text(protocol.read_text().replace('"NumRelRet"]', '"NumRelRet", "P@10"]'))
    wh, study = open_study(root, protocol)
    with wh:
        study.prepare()
        second, _ = study.freeze(supersedes="gated-1", reason="P@10 was left out")
    first = root / "freezes" / "gated-1.json"
    assert second.record["previous_sha256"] == hashlib.sha256(first.read_bytes()).hexdigest()
    assert json.loads(first.read_text())["previous_sha256"] is None


# -- the freeze covers the evaluation ---------------------------------------------------------------


def test_an_evaluate_model_edited_after_the_freeze_is_refused_until_a_new_freeze(env):
    """Issue 34 (seed 004: no change after seeing test results): a filter added to the evaluate model
    staging/qrels.sql after the freeze (dropping one query) is named by status and evaluate; only a new
    freeze with --supersedes and --reason evaluates it, and the outputs show the chain."""
    from rankhouse.study.outputs import write_outputs

    root, protocol = env
    evaluated(root, protocol)
    qrels = root / "models" / "staging" / "qrels.sql"
    text = qrels.read_text()
    assert "FROM gate.qrels" in text
    qrels.write_text(text.replace("FROM gate.qrels", "FROM gate.qrels WHERE qid <> '401'", 1))
    wh, study = open_study(root, protocol)
    with wh:
        assert any("CHANGED" in line and "evaluate model qrels changed" in line for line in study.status())
    study_refused(root, protocol, lambda s: s.evaluate(), "the labels stay closed", "evaluate model qrels changed")
    study_refused(root, protocol, lambda s: s.freeze(), "evaluate model qrels changed", "--supersedes gated-1",
            stage="freeze")  # fmt: skip
    wh, study = open_study(root, protocol)
    with wh:
        frozen, new = study.freeze(supersedes="gated-1", reason="qrels of topic 401 were judged by mistake")
        evaluation = study.evaluate()
        written = write_outputs(study, evaluation, root / "out")
    assert new and frozen.freeze_id == "gated-2" and evaluation.freeze.freeze_id == "gated-2"
    results = json.loads((root / "out" / "results.json").read_text())
    assert results["freeze_id"] == "gated-2"
    assert results["supersedes"] == [
        {"freeze_id": "gated-1", "replaced_by": "gated-2", "reason": "qrels of topic 401 were judged by mistake"}
    ]
    provenance = json.loads((root / "out" / "provenance.json").read_text())
    assert [f["freeze_id"] for f in provenance["freezes"]] == ["gated-1", "gated-2"]
    assert provenance["plan"] == frozen.record["plan"]
    assert any(p.name == "provenance.json" for p in written)
    assert frozen.record["plan"]["evaluate"]["qrels"] != json.loads(
        (root / "freezes" / "gated-1.json").read_text())["plan"]["evaluate"]["qrels"]  # fmt: skip


def test_the_freeze_records_the_measures_asked_for(env):
    root, protocol = env
    prepared_and_frozen(root, protocol)
    record = json.loads((root / "freezes" / "gated-1.json").read_text())
    assert record["plan"]["measures"] == ["AP", "nDCG@10", "P@5", "RR", "NumRet", "NumRelRet"]
    assert "run_measures" in record["plan"]["evaluate"] and "qrels" in record["plan"]["evaluate"]


# -- one read per input -------------------------------------------------------------------------------


def test_a_named_pipe_as_an_input_is_refused(env):
    """Issue 34: a pipe gives the hash one content and the loader another; a study refuses any input that is
    not a regular file, before anything is written."""
    root, protocol = env
    run = root / "data" / "results.trunc"
    data = run.read_bytes()
    run.unlink()
    os.mkfifo(run)
    writer = subprocess.Popen([sys.executable, "-c", f"open({str(run)!r}, 'wb').write({data!r})"])
    try:
        study_refused(root, protocol, lambda s: s.prepare(), "input trunc", "is not a regular file", stage="prepare")
    finally:
        writer.kill()
        writer.wait()


def test_a_load_that_reads_other_bytes_than_the_protocols_writes_nothing(tmp_path):
    """The bytes a loader parses are the bytes it hashes: a load whose bytes are not the protocol's is
    refused inside its own transaction (loaders.sources.expecting), whichever reader parsed it."""
    db = tmp_path / "w.duckdb"
    with Warehouse(db):
        pass
    before = state(db)
    with Warehouse(db) as wh:
        with pytest.raises(RankhouseError, match="the protocol expects 00000"), expecting("0" * 64, "results.test"):
            load_run(wh, TREC / "results.test")
        with pytest.raises(RankhouseError, match="the protocol expects 00000"), expecting("0" * 64, "qrels.test"):
            load_qrels(wh, TREC / "qrels.test")
    assert state(db) == before


# -- 6. labels edited in place -----------------------------------------------------------------------


def test_labels_edited_in_place_are_refused_and_reload_restores_them(env):
    root, protocol = env
    evaluated(root, protocol)
    con = duckdb.connect(str(labels_of(root)))
    con.execute("UPDATE qrels SET rel = 1")  # every judged document relevant
    con.close()
    study_refused(root, protocol, lambda s: s.evaluate(), "the labels stay closed",
            "rows it loaded into labels.qrels as 'qrels.test' were changed in the labels file",
            "--reload")  # fmt: skip
    wh, study = open_study(root, protocol)
    with wh:
        assert not study.evaluate(reload=True).new_results  # the same results as before the edit
        assert wh.sql("SELECT count(*) FROM gate.qrels WHERE rel > 0")[0][0] < 3681


# -- 7. tampering before the freeze ------------------------------------------------------------------


def test_raw_rows_edited_before_the_freeze_are_refused(env):
    root, protocol = env
    wh, study = open_study(root, protocol)
    with wh:
        study.prepare()
    with plain(root / "w.duckdb") as con:
        con.execute("UPDATE inputs.raw.runs SET score = -score WHERE run_id = 'results.test'")
    message = study_refused(
        root,
        protocol,
        lambda s: s.prepare(),
        "cannot be prepared",
        "rows it loaded into raw.runs as 'results.test' were changed in the warehouse",
        stage="prepare",
    )
    assert "rankhouse study prepare" in message and "--reload" in message
    study_refused(root, protocol, lambda s: s.freeze(), "cannot be frozen", "raw.runs", stage="freeze")
    wh, study = open_study(root, protocol)
    with wh:
        study.prepare(reload=True)
        frozen, _ = study.freeze()
    clean = root / "clean"
    clean.mkdir()
    for name in ("data", "models"):
        shutil.copytree(root / name, clean / name)
    wh, study = open_study(clean, write_protocol(clean))
    with wh:
        study.prepare()
        again, _ = study.freeze()
    assert frozen.record["tables"]["raw.runs"] == again.record["tables"]["raw.runs"]


# -- 9. digests of exact bits ------------------------------------------------------------------------


def test_a_change_below_twelve_digits_is_detected(env, wh):
    wh.sql("CREATE TABLE t AS SELECT 0.7::DOUBLE AS x")
    before, quick = table_digest(wh, "t"), row_digest(wh, "t")
    wh.sql("UPDATE t SET x = x * (1 + 1e-13)")
    # the canonical export (loaded tables) and the row digest (tables a recipe decides) both see it
    assert table_digest(wh, "t") != before and row_digest(wh, "t") != quick
    root, protocol = env
    prepared_and_frozen(root, protocol)
    with plain(root / "w.duckdb") as con:
        con.execute("UPDATE inputs.raw.runs SET score = score * (1 + 1e-13) WHERE run_id = 'results.trunc'")
    study_refused(root, protocol, lambda s: s.evaluate(), "the labels stay closed", "raw.runs")


# -- models depend on nothing but their inputs -------------------------------------------------------


@pytest.mark.parametrize("call", ["current_setting('memory_limit')", "now()", "current_database()", "random()",
                                  "gen_random_uuid()", "version()", "current_date"])  # fmt: skip
def test_a_model_that_reads_the_session_the_environment_or_the_clock_is_refused(env, call):
    """Issue 34: a prepare model whose rows change with RANKHOUSE_MEMORY_LIMIT, the date or the file is
    refused when the project is read, naming the model and the function."""
    from rankhouse.errors import ModelError
    from rankhouse.warehouse.dag import Project

    root, _ = env
    (root / "models" / "staging" / "peek.sql").write_text(
        "-- name: peek\n-- version: 1\n-- stage: prepare\n-- grain: x\n-- audits: unique_grain\n"
        f"-- description: an environment-dependent model.\nSELECT {call} AS x\n"
    )
    with pytest.raises(ModelError, match="depends on the session, the environment or the clock") as err:
        Project.load(root / "models")
    assert err.value.model == "peek"
