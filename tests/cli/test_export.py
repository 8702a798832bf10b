"""`rankhouse export DIR`: files that read back equal to the models' tables (parquet and csv), the manifest,
refusals that write nothing, and the label gate (a frozen study's labels stay out; a hand-made relation is
not exported)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import duckdb
import pytest
from clirunner import error_line, rankhouse_in_process
from warehouse_files import plain

from rankhouse.paths import STUDIES_DIR

STUDY = STUDIES_DIR / "trec_sample.toml"  # the study of the trec_sample_study fixture


def export(*args: object) -> tuple[object, dict]:
    done = rankhouse_in_process("export", *args)
    assert done.returncode == 0, done.stderr
    target = Path(str(args[0]))
    return done, json.loads((target / "manifest.json").read_text())


def model_relations(db: Path, labels: bool = True) -> dict[str, str]:
    """Every model of the study's namespace and (with `labels`) of its labels file, and its kind, read with
    plain DuckDB (a table model's view over its store table counts as its table)."""
    with plain(db, "trec_sample", read_only=True, labels=labels) as con:
        return dict(con.execute(
            "SELECT table_name, 'table' FROM duckdb_tables() WHERE schema_name = 'models' UNION ALL "
            "SELECT view_name, CASE WHEN contains(sql, ' FROM store_') THEN 'table' ELSE 'view' END "
            "FROM duckdb_views() WHERE schema_name = 'models'"
        ).fetchall())  # fmt: skip


def assert_same_rows(db: Path, model: str, reader: str) -> None:
    """The model's relation and the file (read by `reader`) hold the same rows, as multisets, with the
    same column names in the same order."""
    with plain(db, "trec_sample", read_only=True, labels=True) as con:
        relation = f"models.{model}"
        names = [r[0] for r in con.execute(f"DESCRIBE {relation}").fetchall()]
        assert [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {reader}").fetchall()] == names
        count = con.execute(f"SELECT count(*) FROM {relation}").fetchall()[0][0]
        assert con.execute(f"SELECT count(*) FROM {reader}").fetchall()[0][0] == count
        for a, b in ((relation, reader), (reader, relation)):
            assert con.execute(f"SELECT count(*) FROM (FROM {a} EXCEPT ALL FROM {b})").fetchall() == [(0,)], (model, a)


def last_fingerprints(db: Path) -> dict[str, str]:
    with plain(db, "trec_sample", read_only=True) as con:
        rows = con.execute(
            "SELECT model, arg_max(fingerprint, started_at) FROM trec_sample.meta.model_runs WHERE status = 'built' "
            "GROUP BY model"
        ).fetchall()
    return dict(rows)


@pytest.fixture(scope="module")
def parquet_export(trec_sample_study, tmp_path_factory):
    target = tmp_path_factory.mktemp("export") / "tables"
    return target, export(target, "--db", trec_sample_study.db, "--study", STUDY)[1]


def test_every_built_model_is_exported_to_parquet_and_reads_back_equal(trec_sample_study, parquet_export):
    target, manifest = parquet_export
    db = trec_sample_study.db
    relations = model_relations(db)
    listed = {entry["model"]: entry for entry in manifest["models"]}
    assert set(listed) == set(relations) and len(listed) > 20
    assert manifest["format"] == "parquet" and sorted(p.name for p in target.iterdir()) == sorted(
        [f"{m}.parquet" for m in relations] + ["manifest.json"]
    )
    fingerprints = last_fingerprints(db)
    for model, entry in listed.items():
        path = target / entry["file"]
        assert entry["kind"] == relations[model] and entry["fingerprint"] == fingerprints[model]
        assert entry["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
        assert entry["rows"] == duckdb.sql(f"SELECT count(*) FROM read_parquet('{path}')").fetchall()[0][0]
        assert_same_rows(db, model, f"read_parquet('{path}')")
    assert listed["run_ranking"]["rows"] == 2084 and listed["run_measures"]["kind"] == "table"


def test_csv_export_of_a_selection_reads_back_equal_and_is_reproducible(trec_sample_study, tmp_path):
    db = trec_sample_study.db
    first, manifest = export(tmp_path / "a", "--format", "csv", "--select", "+run_measures", "--db", db,
                             "--study", STUDY)  # fmt: skip
    from rankhouse.warehouse.dag import Project

    selected = Project.load().select("+run_measures")  # with the models' defaults: more measures than the study's
    built = set(model_relations(db))
    assert [e["model"] for e in manifest["models"]] == [name for name in selected if name in built]
    left_out = [name for name in selected if name not in built]
    assert "measure_success" in left_out and f"left out: {', '.join(left_out)}" in first.stderr
    for entry in manifest["models"]:
        with plain(db, "trec_sample", read_only=True, labels=True) as con:
            types = con.execute(f"SELECT column_name, data_type FROM duckdb_columns() WHERE schema_name = 'models' "
                                f"AND table_name = '{entry['model']}' ORDER BY column_index").fetchall()  # fmt: skip
        columns = "{" + ", ".join(f"'{name}': '{kind}'" for name, kind in types) + "}"
        path = tmp_path / "a" / entry["file"]
        assert path.read_text().splitlines()[0] == ",".join(name for name, _ in types)  # the header
        reader = f"read_csv('{path}', header = true, auto_detect = false, columns = {columns})"
        assert_same_rows(db, entry["model"], reader)
    _, again = export(tmp_path / "b", "--format", "csv", "--select", "+run_measures", "--db", db, "--study", STUDY)
    assert [e["sha256"] for e in again["models"]] == [e["sha256"] for e in manifest["models"]]
    assert "run_measures.csv" in first.stderr and first.stdout == ""  # progress on stderr, no data on stdout


def export_refused(target: Path, *args: object) -> str:
    """The error line of an export that must write nothing: `target` and its parent as they were."""
    before = sorted(p.name for p in target.parent.iterdir())
    line = error_line(rankhouse_in_process("export", target, *args))
    assert sorted(p.name for p in target.parent.iterdir()) == before
    return line


def test_refusals_come_before_anything_is_written(trec_sample_study, tmp_path):
    db = trec_sample_study.db
    target = tmp_path / "out"
    study = ("--study", STUDY)
    assert "no such model" in export_refused(target, "--select", "run_measure", "--db", db, *study)
    assert "not built in" in export_refused(target, "--select", "+bm25_ranking", "--db", db, *study)
    assert "--format is parquet or csv" in export_refused(target, "--format", "xlsx", "--db", db)
    assert "no warehouse" in export_refused(target, "--db", tmp_path / "none.duckdb")
    assert "no model is built" in export_refused(target, "--db", db)  # the default namespace: nothing of the study's
    target.mkdir()
    (target / "notes.txt").write_text("mine\n")
    assert "is not empty" in export_refused(target, "--select", "runs", "--db", db, *study)
    assert sorted(p.name for p in target.iterdir()) == ["notes.txt"]
    (tmp_path / "file").write_text("")
    assert "is a file" in export_refused(tmp_path / "file", "--db", db, *study)
    # --force writes into it, replacing files of the same names and leaving the others
    (target / "runs.csv").write_text("old\n")
    export(target, "--select", "runs", "--format", "csv", "--force", "--db", db, *study)
    assert sorted(p.name for p in target.iterdir()) == ["manifest.json", "notes.txt", "runs.csv"]
    assert (target / "runs.csv").read_text().startswith("run_id,")


def test_a_frozen_studys_labels_are_not_exported(trec_sample_study, tmp_path):
    """Before evaluation the labels are only in the labels file: no model holding them is built, none is
    exported, whatever is selected; `rankhouse query` shows the same. After it, qrels is a model of the
    study's labels file, which query --study (its freeze verified) shows, and export --study writes it."""
    frozen, study = trec_sample_study.frozen, ("--study", STUDY)
    assert "not built in" in export_refused(tmp_path / "out", "--select", "qrels", "--db", frozen, *study)
    assert "not built in" in export_refused(tmp_path / "out", "--select", "+run_measures", "--db", frozen, *study)
    _, manifest = export(tmp_path / "all", "--db", frozen, *study)
    from rankhouse.study import Study
    from rankhouse.warehouse import Warehouse

    with Warehouse(frozen, read_only=True) as wh:
        prepare = Study(trec_sample_study.protocol, wh).prepare_models
    assert {e["model"] for e in manifest["models"]} == set(prepare)
    assert set(prepare) == {"runs", "run_blocks", "run_ranking", "measure_requests"}
    assert rankhouse_in_process("query", "FROM trec_sample.models.qrels", "--db", frozen).returncode == 2
    # evaluated: the labels are in the labels file's models.qrels, which query --study shows, and export too
    evaluated = trec_sample_study.db
    _, manifest = export(tmp_path / "qrels", "--select", "qrels", "--db", evaluated, *study)
    query = ("query", "SELECT count(*) FROM models.qrels", "--db", evaluated)
    assert rankhouse_in_process(*query).returncode == 2  # the default namespace has none
    assert rankhouse_in_process(*query, *study).returncode == 0
    labels = duckdb.connect(str(evaluated.parent / "w.d" / "labels" / "trec_sample.duckdb"), read_only=True)
    qrels = labels.execute("SELECT count(*) FROM qrels").fetchall()[0][0]
    labels.close()
    assert manifest["models"][0]["rows"] == qrels == 3681


def test_a_relation_made_by_hand_is_not_exported(trec_sample_study, tmp_path):
    """In an evaluated warehouse, a view of the study's namespace replaced or added by hand, reading the
    labels through an ATTACH in plain DuckDB: the replaced model is not the object its build made (refused,
    and so are the views over it), the added view is no model (refused, left out)."""
    shutil.copy(trec_sample_study.db, tmp_path / "w.duckdb")
    shutil.copytree(trec_sample_study.db.parent / "w.d", tmp_path / "w.d")
    db = tmp_path / "w.duckdb"
    with plain(db, "trec_sample", labels=True) as con:
        con.execute("CREATE OR REPLACE VIEW trec_sample.models.run_ranking AS SELECT 'peek' AS system, qid AS "
                    "query_key, docno AS doc_key, rel AS rank, 0.0 AS score FROM gate.qrels")  # fmt: skip
        con.execute("CREATE VIEW trec_sample.models.peek AS SELECT * FROM gate.qrels")
    study = ("--study", STUDY)
    assert "not built in" in export_refused(tmp_path / "out", "--select", "run_ranking", "--db", db, *study)
    assert "no such model" in export_refused(tmp_path / "out", "--select", "peek", "--db", db, *study)
    _, manifest = export(tmp_path / "all", "--db", db, *study)
    exported = {e["model"] for e in manifest["models"]}
    assert {"run_ranking", "rankings", "peek"} & exported == set()  # rankings: a view over run_ranking
    assert {"runs", "measure_requests"} <= exported
    # and the freeze no longer verifies: the evaluate models (qrels, run_measures, ...) stay behind the gate
    assert not {"qrels", "run_measures", "judgments"} & exported
