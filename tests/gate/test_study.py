"""Studies and the label gate. Most tests are an attempt to break the gate: each must fail with a clear
message and leave the warehouse and the labels exactly as they were."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from clirunner import rankhouse
from conftest import TREC
from gated_study import (
    assert_evaluate_refused,
    labels_file,
    make_env,
    open_study,
    prepared_and_frozen,
    sha,
    tamper_input,
    tamper_model,
    tamper_parameter,
    tamper_table,
    write_protocol,
)
from warehouse_files import plain, state, store_table

from rankhouse.errors import ModelError, RankhouseError
from rankhouse.paths import STUDIES_DIR
from rankhouse.study import Protocol, Study, study_models
from rankhouse.study.freeze import CANONICAL_EXPORT_12G, canonical_sha256, table_digest, write_freeze
from rankhouse.warehouse import Warehouse, files
from rankhouse.warehouse.dag import Project


@pytest.fixture
def env(tmp_path):
    return make_env(tmp_path)


def test_the_stages_in_order_and_results_kept_by_freeze(env):
    root, protocol = env
    wh, study = open_study(root, protocol)
    with wh:
        study.prepare()
        assert not labels_file(root).exists(), "prepare must not create or touch the labels"
        frozen, new = study.freeze()
        assert new and frozen.freeze_id == "gated-1" and frozen.path == root / "freezes" / "gated-1.json"
        evaluation = study.evaluate()
        assert evaluation.new_results
        rows = wh.sql("SELECT freeze_id, system, value FROM results.run_measures WHERE measure = 'AP' ORDER BY system")
        assert [(r[0], r[1]) for r in rows] == [("gated-1", "results.test"), ("gated-1", "results.trunc")]
        assert rows[0][2] == pytest.approx(0.17852, abs=5e-5)  # trec_eval's map for results.test
        again = study.evaluate()
        assert not again.new_results  # re-evaluating an intact freeze gives the same results, kept once
        assert study.status()[1] == "stage      evaluated"


def test_a_forced_rebuild_of_a_frozen_table_to_the_same_rows_leaves_the_freeze_intact(env):
    """A forced rebuild of a frozen table model writes its table (same fingerprint, same name) into a new
    store file and points the model's view there: the same rows, so the freeze still verifies (the rows
    are checked, not which store file holds them; other rows fail: tamper_table below)."""
    root, protocol = env
    wh, study = open_study(root, protocol)
    with wh:
        study.prepare()
        study.freeze()
        before = store_table(wh.con, "gated", "measure_requests")
        study.runner().run(["measure_requests"], force=True)
        assert store_table(wh.con, "gated", "measure_requests") != before  # another store file
        assert "current    gated-1: intact" in study.status()
        evaluation = study.evaluate()  # evaluate verifies the freeze first
        assert evaluation.freeze.freeze_id == "gated-1" and evaluation.new_results


def test_freeze_records_every_hash(env):
    root, protocol = env
    prepared_and_frozen(root, protocol)
    record = json.loads((root / "freezes" / "gated-1.json").read_text())
    assert record["protocol"]["sha256"] == sha(protocol)
    assert {k: v["sha256"] for k, v in record["inputs"].items()} == {
        "results": sha(root / "data" / "results.test"),
        "trunc": sha(root / "data" / "results.trunc"),
        "qrels": sha(root / "data" / "qrels.test"),
    }
    assert set(record["models"]) == {"runs", "run_blocks", "run_ranking", "measure_requests"}
    assert set(record["objects"]) == set(record["models"])  # each catalog definition, by SHA-256
    assert record["previous_sha256"] is None and record["supersedes"] is None
    # tables are hashed (runs, run_blocks and run_ranking are views: frozen by their fingerprints and the
    # tables they read; raw.run_blocks says where each query's lines are, which decides run_ranking's ranks)
    assert set(record["tables"]) == {"models.measure_requests", "raw.runs", "raw.run_blocks"}
    assert record["tables"]["raw.runs"]["rows"] == 2084
    assert record["rankhouse_version"] and record["canonical_export"]


def test_canonical_export_is_what_the_documentation_says(wh):
    """Recompute a table's digest in plain Python from the documented canonical form."""
    wh.sql(
        "CREATE TABLE t AS SELECT * FROM (VALUES (2, 'tab\there', 0.1::DOUBLE + 0.2, true, [1.5, 2.0]), "
        "(1, NULL, 1e-20, false, NULL)) AS v (k, s, f, b, a)"
    )
    # numbers exactly: the shortest text that reads back as the same double (Python's repr)
    lines = [f"1\t\\N\t{1e-20!r}\tfalse\t\\N", f"2\ttab\\there\t{0.1 + 0.2!r}\ttrue\t[1.5,2.0]"]
    assert table_digest(wh, "t", ("k",)) == (chunked_sha256(lines), 2)
    # freezes made with the older export (12 significant digits) verify the way they were written
    lines_12g = ["1\t\\N\t1e-20\tfalse\t\\N", "2\ttab\\there\t0.3\ttrue\t[1.5,2]"]
    assert table_digest(wh, "t", ("k",), CANONICAL_EXPORT_12G) == (chunked_sha256(lines_12g), 2)
    wh.sql("CREATE TABLE big AS SELECT (i * 7919) % 250001 AS k, i % 3 = 0 AS flag FROM range(250001) AS r (i)")
    lines = [f"{k}\t{'true' if flag else 'false'}" for k, flag in wh.sql("SELECT k, flag FROM big ORDER BY k")]
    assert table_digest(wh, "big", ("k",)) == (chunked_sha256(lines), 250001)  # three chunks
    wh.sql("CREATE TABLE empty AS SELECT * FROM big WHERE false")
    assert table_digest(wh, "empty") == (chunked_sha256([]), 0)


def chunked_sha256(lines: list[str], chunk: int = 100_000) -> str:
    """The documented digest: SHA-256 over the SHA-256s of newline-joined chunks of 100,000 lines."""
    chunks = [lines[i : i + chunk] for i in range(0, len(lines), chunk)] or [[]]
    digests = [hashlib.sha256("\n".join(c).encode()).hexdigest() for c in chunks]
    return hashlib.sha256("\n".join(digests).encode()).hexdigest()


def test_labels_are_not_readable_during_prepare_by_any_route(env):
    root, protocol = env
    qrels_source = root / "data" / "qrels.test"
    attempts = {
        "by_name": ("SELECT qid AS run_id FROM gate.qrels", "may not read labels"),
        "by_labels_catalog": ("SELECT qid AS run_id FROM labels.qrels", "unknown table labels.qrels"),
        "by_attach": (f"ATTACH '{labels_file(root)}' AS peek", "exactly one SELECT"),
        "by_file": (f"SELECT * FROM read_csv('{qrels_source}')", "reads READ_CSV"),
    }
    for name, (sql, message) in attempts.items():
        path = root / "models" / "metrics" / "peek.sql"
        path.write_text(
            "-- name: peek\n-- version: 1\n-- stage: prepare\n-- grain: run_id\n-- audits: at_least_one_row\n"
            f"-- description: an attempt to read labels {name}.\n{sql}\n"
        )
        with pytest.raises(ModelError, match=message) as err:
            Project.load(root / "models")
        assert err.value.model == "peek"
    assert not labels_file(root).exists()


def test_a_prepare_stage_cannot_select_evaluate_models(env):
    root, protocol = env
    protocol.write_text(
        protocol.read_text().replace('prepare = "run_ranking measure_requests"', 'prepare = "+run_measures"')
    )
    with pytest.raises(RankhouseError, match="prepare stage selects evaluate models"):
        open_study(root, protocol)


@pytest.mark.parametrize("tamper", [tamper_model, tamper_parameter, tamper_input, tamper_table])
@pytest.mark.parametrize("evaluated_before", [False, True])
def test_evaluate_refuses_after_any_change_since_the_freeze(env, tamper, evaluated_before):
    assert_evaluate_refused(env, tamper, evaluated_before)


def test_verifying_exports_again_only_the_tables_whose_row_digest_changed(env, monkeypatch):
    import rankhouse.study.freeze as study_module  # where verify takes the canonical exports

    root, protocol = env
    prepared_and_frozen(root, protocol)
    frozen = json.loads((root / "freezes" / "gated-1.json").read_text())["tables"]
    assert all(len(entry["quick"]) == 64 for entry in frozen.values())
    # the loaded inputs by their canonical export; the tables prepare models build by their row digest
    loaded = sorted(table for table, entry in frozen.items() if "sha256" in entry)
    assert loaded == ["raw.run_blocks", "raw.runs"] and "models.measure_requests" in frozen
    exported = []

    def counted(wh, table, *args):
        if table in frozen:
            exported.append(table)
        return table_digest(wh, table, *args)

    monkeypatch.setattr(study_module, "table_digest", counted)
    wh, study = open_study(root, protocol)
    with wh:
        freeze = study.freezes()[-1]
        assert study.verify(freeze) == [] and exported == []  # every row digest is the frozen one
        assert study.verify(freeze, full=True) == [] and sorted(exported) == loaded
    exported.clear()
    # an edited loaded table: its row digest differs, so it is exported again, and its export differs
    edit = "UPDATE inputs.raw.runs SET score = score {} 1e-13 WHERE run_id = 'results.test' AND line = 1"
    with plain(root / "w.duckdb") as con:
        con.execute(edit.format("+"))
    wh, study = open_study(root, protocol)
    with wh:
        problems = study.verify(study.freezes()[-1])
    assert exported == ["raw.runs"] and any("table raw.runs differs from its frozen rows" in p for p in problems)
    with plain(root / "w.duckdb") as con:
        con.execute(edit.format("-"))
    message = tamper_table(root, protocol)
    exported.clear()
    wh, study = open_study(root, protocol)
    with wh:
        problems = study.verify(study.freezes()[-1])
    assert exported == [] and any(message in p for p in problems)
    tamper_table(root, protocol, cutoff=5)  # undone: the same rows give the frozen digests again
    wh, study = open_study(root, protocol)
    with wh:
        assert study.verify(study.freezes()[-1]) == []


def test_a_freeze_without_row_digests_is_verified_by_its_canonical_exports(env):
    root, protocol = env
    prepared_and_frozen(root, protocol)
    path = root / "freezes" / "gated-1.json"
    record = json.loads(path.read_text())
    with Warehouse(root / "w.duckdb", namespace="gated") as wh:
        for table, entry in record["tables"].items():  # as an older rankhouse wrote it: exports, no row digests
            digest, rows = table_digest(wh, table, ("measure",) if table == "models.measure_requests" else ())
            assert entry.get("sha256", digest) == digest and entry["rows"] == rows
            record["tables"][table] = {"sha256": digest, "rows": rows}
        data = (json.dumps(record, indent=2, sort_keys=True) + "\n").encode()
        path.write_bytes(data)
        wh.sql("UPDATE meta.freezes SET file_sha256 = ?", [hashlib.sha256(data).hexdigest()])
    wh, study = open_study(root, protocol)
    with wh:
        assert study.verify(study.freezes()[-1]) == []
    tamper_table(root, protocol)
    wh, study = open_study(root, protocol)
    with wh:
        assert any("models.measure_requests differs" in p for p in study.verify(study.freezes()[-1]))


def test_a_freeze_file_is_never_overwritten(env):
    root, protocol = env
    prepared_and_frozen(root, protocol)
    path = root / "freezes" / "gated-1.json"
    original = path.read_bytes()
    forged = {**json.loads(original), "forged": True}
    with (
        Warehouse(root / "w.duckdb", namespace="gated") as wh,
        pytest.raises(RankhouseError, match="already exists; freeze files are never overwritten"),
    ):
        write_freeze(wh, root / "freezes", "gated", 1, forged)
    with Warehouse(root / "w.duckdb", namespace="gated") as wh:
        assert wh.sql("SELECT count(*) FROM meta.freezes")[0][0] == 1  # the refused freeze left no row
    assert path.read_bytes() == original


def test_an_edited_freeze_file_is_detected(env):
    root, protocol = env
    prepared_and_frozen(root, protocol)
    path = root / "freezes" / "gated-1.json"
    record = json.loads(path.read_text())
    record["tables"]["raw.runs"]["rows"] = 1
    path.write_text(json.dumps(record))
    wh, study = open_study(root, protocol)
    with wh, pytest.raises(RankhouseError, match="was edited after it was written"):
        study.evaluate()


def test_corrections_are_new_freezes_and_results_sit_side_by_side(env):
    root, protocol = env
    wh, study = open_study(root, protocol)
    with wh:
        study.run()
    tamper_parameter(root, protocol)
    wh, study = open_study(root, protocol)
    with wh:
        study.prepare()
        with pytest.raises(RankhouseError, match=r"frozen as gated-1 and has changed since .*--supersedes gated-1"):
            study.freeze()
        with pytest.raises(RankhouseError, match="needs --reason"):
            study.freeze(supersedes="gated-1")
        frozen, new = study.freeze(supersedes="gated-1", reason="P@10 was left out of the measures by mistake")
        assert new and frozen.freeze_id == "gated-2" and frozen.supersedes == "gated-1"
        study.evaluate()
        assert wh.sql("SELECT freeze_id, count(*) FROM results.run_measures GROUP BY ALL ORDER BY 1") == [
            ("gated-1", 12),
            ("gated-2", 14),
        ]
        assert wh.sql("SELECT freeze_id, supersedes FROM meta.freezes ORDER BY 1") == [
            ("gated-1", None),
            ("gated-2", "gated-1"),
        ]
    assert (root / "freezes" / "gated-1.json").exists()


def test_changed_evaluate_models_cannot_replace_a_freezes_results(env):
    root, protocol = env
    wh, study = open_study(root, protocol)
    with wh:
        study.run()
    path = root / "models" / "metrics" / "measure_precision.sql"
    path.write_text(path.read_text().replace("/ m.cutoff AS value", "/ (m.cutoff + 1) AS value"))
    before = state(root / "w.duckdb")
    wh, study = open_study(root, protocol)
    # the freeze covers the evaluate plan: the changed model is named, and nothing is evaluated or replaced
    with wh, pytest.raises(RankhouseError, match="evaluate model measure_precision changed") as err:
        study.evaluate()
    assert "the labels stay closed" in str(err.value)
    assert state(root / "w.duckdb") == before


def test_other_commands_cannot_open_a_studys_labels(env):
    root, protocol = env
    wh, study = open_study(root, protocol)
    with wh:
        study.run()
    with Warehouse(root / "w.duckdb", namespace="gated") as wh, pytest.raises(RankhouseError, match="open only"):
        wh.open_gate()
    with Warehouse(root / "w.duckdb") as wh:  # the default namespace's gate holds no study's labels
        wh.open_gate()
        assert wh.sql("SELECT count(*) FROM gate.qrels") == [(0,)]


def test_analysts_cannot_reach_labels_before_an_intact_freeze(tmp_path):
    """Through rankhouse query: by name, by ATTACH, by reading the source file; then through --study."""
    protocol = write_protocol_in_repo_layout(tmp_path)
    db = tmp_path / "w.duckdb"
    assert rankhouse("study", "prepare", protocol, "--db", db).returncode == 0
    for sql in (
        "SELECT * FROM gate.qrels",
        f"ATTACH '{tmp_path / 'w.labels.duckdb'}' AS peek",
        f"SELECT * FROM read_csv('{tmp_path / 'data' / 'qrels.test'}')",
        "SET enable_external_access = true",
    ):
        done = rankhouse("query", sql, "--db", db)
        assert done.returncode == 2 and "error:" in done.stderr, sql
    blocked = rankhouse("query", "SELECT 1", "--db", db, "--study", protocol)
    assert blocked.returncode == 2 and "has no freeze" in blocked.stderr
    assert rankhouse("study", "run", protocol, "--db", db).returncode == 0
    opened = rankhouse(
        "query", "SELECT count(*) AS n FROM gate.qrels", "--db", db, "--study", protocol, "--format", "csv"
    )
    assert opened.returncode == 0, opened.stderr
    assert opened.stdout.splitlines() == ["n", "3681"]
    still_closed = rankhouse("query", "SELECT count(*) FROM gate.qrels", "--db", db)
    assert still_closed.returncode == 2


def write_protocol_in_repo_layout(root: Path) -> Path:
    (root / "data").mkdir()
    for name in ("results.test", "results.trunc", "qrels.test"):
        shutil.copy(TREC / name, root / "data" / name)
    return write_protocol(root)


def test_query_formats_and_the_shell(tmp_path):
    protocol = write_protocol_in_repo_layout(tmp_path)
    db = tmp_path / "w.duckdb"
    assert rankhouse("study", "run", protocol, "--db", db, "--out", tmp_path / "out").returncode == 0
    sql = "SELECT system, value FROM gated.results.run_measures WHERE measure = 'AP' ORDER BY system"
    as_json = json.loads(rankhouse("query", sql, "--db", db, "--format", "json").stdout)
    assert [r["system"] for r in as_json] == ["results.test", "results.trunc"]
    parquet = tmp_path / "ap.parquet"
    assert rankhouse("query", sql, "--db", db, "--format", "parquet", "--output", parquet).returncode == 0
    assert duckdb.sql(f"SELECT count(*) FROM '{parquet}'").fetchall() == [(2,)]
    script = "SELECT count(*) AS n\nFROM raw.runs;\nSELECT * FROM gate.qrels;\n.tables gated\n.quit\n"
    shell = rankhouse("shell", "--db", db, stdin=script)
    assert "2084" in shell.stdout and "error:" in shell.stdout and "run_measures" in shell.stdout
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["freeze_id"] == "gated-1" and results["methods"]["results.test"]["AP"]["value"] == pytest.approx(
        0.1785, abs=5e-5
    )


def test_the_warehouse_stays_readable_by_any_duckdb_client(tmp_path):
    """A plain DuckDB client that runs <db>.d/attach.sql reads every table and view of every file."""
    protocol = write_protocol_in_repo_layout(tmp_path)
    db = tmp_path / "w.duckdb"
    assert rankhouse("study", "run", protocol, "--db", db).returncode == 0
    con = duckdb.connect()
    con.execute((tmp_path / "w.d" / "attach.sql").read_text())
    relations = con.execute(
        "SELECT database_name, schema_name, table_name FROM duckdb_tables() WHERE database_name <> 'memory' "
        "UNION ALL SELECT database_name, schema_name, view_name FROM duckdb_views() WHERE NOT internal "
        "AND database_name <> 'memory' ORDER BY ALL"
    ).fetchall()
    for catalog, schema, name in relations:
        con.execute(f'USE "{catalog}"')
        path = f"{catalog}.main,{catalog}.models,{catalog}.raw,{catalog}.results,{catalog}.meta,inputs.main,inputs.meta"
        own = catalog == "inputs" or catalog.startswith("store_")  # files with no namespace: their main only
        con.execute(f"SET search_path = '{catalog + '.main' if own else path}'")
        con.execute(f'SELECT count(*) FROM "{catalog}"."{schema}"."{name}"').fetchall()
    assert {c for c, _, _ in relations} >= {"inputs", "gated"} and len(relations) > 20
    assert not [r for r in relations if r[0] == "gated" and r[2] == "qrels"]  # no label in any file it attaches


def test_two_runs_of_a_study_at_once_take_turns_and_a_wait_too_long_is_a_clear_error(tmp_path):
    """One process writes a study at a time: the second waits for the first (saying so), and gives up with a
    clear error after $RANKHOUSE_LOCK_WAIT seconds; both ending well leaves one intact freeze."""
    protocol = write_protocol_in_repo_layout(tmp_path)
    db = tmp_path / "w.duckdb"
    assert rankhouse("study", "prepare", protocol, "--db", db).returncode == 0
    holder = Warehouse(db, namespace="gated")  # another writer of the study: this test process
    try:
        done = rankhouse("study", "run", protocol, "--db", db, env={**os.environ, "RANKHOUSE_LOCK_WAIT": "1"})
    finally:
        holder.close()
    assert done.returncode == 2, done.stderr
    assert f"waiting for process {os.getpid()}, which is writing study gated" in done.stderr
    assert "is still being written by process" in done.stderr and "RANKHOUSE_LOCK_WAIT" in done.stderr
    runs = [
        subprocess.Popen([sys.executable, "-m", "rankhouse", "study", "run", str(protocol), "--db", str(db)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]  # fmt: skip
    outcomes = [(p.wait(timeout=300), p.stderr.read()) for p in runs]
    assert [code for code, _ in outcomes] == [0, 0], outcomes
    status = rankhouse("study", "status", protocol, "--db", db)
    assert "stage      evaluated" in status.stdout and "intact" in status.stdout
    assert sorted(p.name for p in (tmp_path / "w.d" / "freezes").iterdir()) == ["gated-1.json"]


def test_a_crash_during_prepare_leaves_a_warehouse_the_next_run_resumes(tmp_path):
    """Kill -9 while a large run is loading: the load is all or nothing, and the next run carries on."""
    protocol = write_protocol_in_repo_layout(tmp_path)
    big = tmp_path / "data" / "big.run"
    with big.open("w") as out:
        for q in range(300):
            out.writelines(f"q{q} Q0 d{d} {d} {1 / (d + 1)!r} big\n" for d in range(3000))
    entry = f'[inputs.big]\npath = "data/big.run"\nsha256 = "{sha(big)}"\nloader = "trec.run"\n\n[inputs.qrels]'
    protocol.write_text(protocol.read_text().replace("[inputs.qrels]", entry))
    db = tmp_path / "w.duckdb"
    process = subprocess.Popen([sys.executable, "-m", "rankhouse", "study", "prepare", str(protocol), "--db", str(db)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    for line in process.stderr:  # the kill lands while big.run (the next input) is loading
        if "results.trunc" in line:
            break
    process.send_signal(signal.SIGKILL)
    process.wait()
    # the loads were written on the inputs' building copy, which nothing published: each load committed or not
    building = tmp_path / "w.d" / "building" / "inputs.duckdb"
    with duckdb.connect(str(building), read_only=True) as con:
        rows = con.execute("SELECT count(*) FROM raw.runs WHERE run_id = 'big.run'").fetchall()[0][0]
        recorded = con.execute("SELECT count(*) FROM meta.sources WHERE name = 'big.run'").fetchall()[0][0]
        assert (rows, recorded) in ((0, 0), (900_000, 1))
        assert con.execute("SELECT count(*) FROM raw.runs WHERE run_id = 'results.trunc'").fetchall() == [(584,)]
    resumed = rankhouse("study", "run", protocol, "--db", db)
    assert resumed.returncode == 0, resumed.stderr
    assert "carrying on from an interrupted load" in resumed.stderr
    with Warehouse(db, read_only=True) as wh:
        assert wh.sql("SELECT count(*) FROM raw.runs WHERE run_id = 'big.run'") == [(900_000,)]
    assert "intact" in rankhouse("study", "status", protocol, "--db", db).stdout
    assert not building.exists()


def test_a_freeze_made_before_exact_digests_still_verifies_and_is_reused(env):
    """A freeze written by the release before (12-digit floats, no catalog definitions, no chain hash)
    stays valid: verified the way it was written, and an unchanged study does not need a new freeze."""
    root, protocol = env
    prepared_and_frozen(root, protocol)
    path = root / "freezes" / "gated-1.json"
    record = json.loads(path.read_text())
    with Warehouse(root / "w.duckdb", namespace="gated") as wh:
        for table, entry in record["tables"].items():
            grain = ("measure",) if table == "models.measure_requests" else ()
            digest, rows = table_digest(wh, table, grain, CANONICAL_EXPORT_12G)
            record["tables"][table] = {"sha256": digest, "rows": rows}
        del record["objects"], record["previous_sha256"]
        record["canonical_export"] = CANONICAL_EXPORT_12G
        data = (json.dumps(record, indent=2, sort_keys=True) + "\n").encode()
        path.write_bytes(data)
        wh.sql("UPDATE meta.freezes SET file_sha256 = ?", [hashlib.sha256(data).hexdigest()])
    wh, study = open_study(root, protocol)
    with wh:
        frozen, new = study.freeze()
        assert not new and frozen.freeze_id == "gated-1"
        assert study.evaluate().freeze.freeze_id == "gated-1"


@pytest.mark.parametrize(
    ("rows", "grain", "stored_in_order"),
    [
        ("range(250001)", ("k",), True),  # three chunks, as written
        ("range(250001)", (), True),  # no grain: every column
        ("(SELECT CASE WHEN i = 200000 THEN -1 ELSE i END FROM range(250001) _(i))", ("k",), False),  # late
        ("(SELECT i // 2 FROM range(1000) _(i))", ("k",), False),  # in order, but the grain repeats
    ],
)
def test_a_table_stored_in_its_order_is_hashed_as_it_is_stored(monkeypatch, rows, grain, stored_in_order):
    """table_digest skips the sort for a table written in its canonical order (its key strictly
    increasing), and sorts one that is not (found out of order at any row): the same digest either way."""
    from rankhouse.study import freeze

    seen = []

    def spied(batches, ordered=False):
        found = canonical_sha256(batches, ordered)
        seen.append((ordered, found is not None))
        return found

    monkeypatch.setattr(freeze, "canonical_sha256", spied)
    with Warehouse(":memory:") as wh:
        wh.sql(f"CREATE TABLE t AS SELECT k, 'x' || k AS s, k * 2 AS d FROM {rows} AS r (k)")
        expected = chunked_sha256([f"{k}\tx{k}\t{d}" for k, d in wh.sql("SELECT k, d FROM t ORDER BY k, d")])
        assert table_digest(wh, "t", grain) == (expected, wh.sql("SELECT count(*) FROM t")[0][0])
    assert seen[0] == (True, stored_in_order) and len(seen) == (1 if stored_in_order else 2)


@pytest.mark.parametrize("kind", ["string", "large_string", "string_view"])
def test_lines_are_hashed_in_chunks_whatever_batches_they_arrive_in(monkeypatch, kind):
    """The chunks of canonical_sha256 do not depend on how the lines are batched (a batch may end inside a
    chunk, or hold the end of one chunk and the start of the next), nor on Arrow's string layout."""
    import pyarrow as pa

    from rankhouse.study import freeze

    monkeypatch.setattr(freeze, "CHUNK", 4)
    lines = [f"line {i}\tx" * (i % 3) for i in range(11)]  # empty lines too
    chunks = [lines[at : at + 4] for at in range(0, len(lines), 4)]
    expected = hashlib.sha256("\n".join(hashlib.sha256("\n".join(c).encode()).hexdigest() for c in chunks).encode())
    column = pa.array([line + "\n" for line in lines], type=getattr(pa, kind)())
    for sizes in ([11], [1] * 11, [3, 5, 3], [4, 4, 3], [0, 7, 0, 4]):
        batches, at = [], 0
        for size in sizes:
            batches.append(pa.record_batch([column.slice(at, size)], names=["line"]))  # offsets not from 0
            at += size
        assert canonical_sha256(batches) == (expected.hexdigest(), 11), sizes


@pytest.mark.parametrize("rows", [0, 1, 250_001])
def test_a_canonical_digest_is_the_sha256_the_export_rule_describes(rows):
    """freeze.py's rule, written out in Python: lines in grain-then-column order, chunks of 100,000 lines
    joined by newlines, the SHA-256 of the chunks' hex digests (an empty table: one empty chunk)."""
    lines = [f"{i}\tx\\t{i}\t\\N\t{-i}" for i in sorted(range(rows), key=lambda i: -i)]  # by grain g = -i
    chunks = [lines[at : at + 100_000] for at in range(0, len(lines), 100_000)] or [[]]
    digests = [hashlib.sha256("\n".join(chunk).encode()).hexdigest() for chunk in chunks]
    expected = hashlib.sha256("\n".join(digests).encode())
    with Warehouse(":memory:") as wh:
        columns = "i, 'x' || chr(9) || i AS s, NULL::DOUBLE AS d, -i AS g"
        wh.sql(f"CREATE TABLE t AS SELECT {columns} FROM range({rows}) _(i)")
        assert table_digest(wh, "t", ("g",)) == (expected.hexdigest(), rows)


def test_loaded_rows_are_exported_again_only_where_their_row_digest_changed(env, monkeypatch):
    root, protocol = env
    wh, study = open_study(root, protocol)
    with wh:
        study.prepare()
        recorded = wh.sql("SELECT name, row_digest FROM meta.source_contents ORDER BY ALL")
    assert [name for name, _ in recorded] == ["results.test", "results.trunc"]
    assert all(len(digest) == 64 for _, digest in recorded)
    exported = []
    original = Study._content_sha256
    monkeypatch.setattr(Study, "_content_sha256", lambda self, item, name: exported.append(name) or original(
        self, item, name))  # fmt: skip
    wh, study = open_study(root, protocol)
    with wh:
        assert study.content_problems() == [] and exported == []
        assert study.content_problems(full=True) == [] and exported == ["results.test", "results.trunc"]
    # a warehouse made before row digests: its loads are checked by content once, then by row digest
    with Warehouse(root / "w.duckdb", namespace="gated") as wh:
        wh.sql("ALTER TABLE meta.source_contents DROP COLUMN row_digest")
    exported.clear()
    wh, study = open_study(root, protocol)
    with wh:
        assert study.content_problems() == [] and exported == ["results.test", "results.trunc"]
        assert wh.sql("SELECT name, row_digest FROM meta.source_contents ORDER BY ALL") == recorded
        exported.clear()
        assert study.content_problems() == [] and exported == []
    with plain(root / "w.duckdb") as con:
        con.execute("UPDATE inputs.raw.runs SET score = -score WHERE run_id = 'results.test'")
    wh, study = open_study(root, protocol)
    with wh:
        problems = study.content_problems()
    assert exported == ["results.test"] and len(problems) == 1
    assert "rows it loaded into raw.runs as 'results.test' were changed in the warehouse" in problems[0]


@pytest.mark.parametrize("name", sorted(p.stem for p in STUDIES_DIR.glob("*.toml") if "[stages]" in p.read_text()))
def test_a_study_holds_only_the_models_it_needs_and_the_same_stages(name, wh):
    protocol = Protocol.load(STUDIES_DIR / f"{name}.toml")
    whole = Study(protocol, wh, project=Project.load(params={"study": protocol.name, **protocol.parameters}))
    study = Study(protocol, wh)
    names = study_models(protocol)
    if names is not None:
        assert set(study.project.models) < set(whole.project.models)
    for stage in ("prepare_models", "companions", "evaluate_models"):
        assert getattr(study, stage) == getattr(whole, stage), stage
    models = study.prepare_models + study.companions  # (an evaluate model's reads the labels, closed here)
    assert [study.runner().fingerprint(m) for m in models] == [whole.runner().fingerprint(m) for m in models]
    assert study.frozen_tables() == whole.frozen_tables()


@pytest.mark.parametrize("db", [":memory:", "w.duckdb"])
def test_only_a_warehouse_file_publishes_its_labels_when_it_closes(tmp_path, monkeypatch, db):
    """A `:memory:` warehouse's labels live in its scratch folder, removed as it closes: publishing them there
    first was 0.03 s of every `rankhouse eval` (docs/performance.md). A warehouse file's labels (the qrels
    loaded, the evaluate models built beside them) are published, and read again by its next session."""
    from rankhouse.loaders.trec import load_qrels

    original, published = files.publish, []
    monkeypatch.setattr(files, "publish", lambda copy, target: published.append(target) or original(copy, target))
    path = db if db == ":memory:" else str(tmp_path / db)
    with Warehouse(path) as wh:
        load_qrels(wh, TREC / "qrels.test")
        wh.open_gate()
        judged = wh.sql("SELECT count(*) FROM gate.qrels")[0][0]
        labels = wh.labels_path
    assert judged > 0
    if db == ":memory:":
        assert published == [] and not Path(labels).exists()
    else:
        assert [str(p) for p in published][-1:] == [labels]
        with Warehouse(path) as wh:
            wh.open_gate()
            assert wh.sql("SELECT count(*) FROM gate.qrels")[0][0] == judged
