"""Attacks on the label gate and on the freeze, one per way around them that an adversarial analyst
found (issue 13's points 1 and 4-9; file reads and templates are in test_model_sandbox.py, inputs that
load something else than they say in test_input_rules.py). Every attack must be refused with a message
that names the study, the object and the fix, and leave the warehouse and the labels file exactly as
they were (compared by the digest of every table and view, test_study.state)."""

from __future__ import annotations

import hashlib
import json
import shutil

import duckdb
import pytest
from conftest import TREC
from test_study import make_env, open_study, prepared_and_frozen, rankhouse, state, write_protocol

from rankhouse.errors import RankhouseError
from rankhouse.loaders import load_qrels
from rankhouse.warehouse import Warehouse
from rankhouse.warehouse.freeze import row_digest, table_digest


@pytest.fixture
def env(tmp_path):
    """test_study's gated study, with its own copies of the data and the models."""
    return make_env(tmp_path)


def evaluated(root, protocol) -> None:
    wh, study = open_study(root, protocol)
    with wh:
        study.run()


def refused(root, protocol, action, *messages: str, stage: str = "evaluate") -> str:
    """Run `action(study)` on a fresh connection; it must raise a RankhouseError holding every message
    and leave both files as they were. Returns the message."""
    before = state(root)
    wh, study = open_study(root, protocol)
    with wh, pytest.raises(RankhouseError) as err:
        action(study)
    for message in messages:
        assert message in str(err.value), str(err.value)
    assert state(root) == before, f"a refused {stage} changed the warehouse or the labels"
    return str(err.value)


# -- 1. another warehouse as a side door -------------------------------------------------------------


def test_another_warehouse_cannot_open_or_write_a_studys_labels(env):
    root, protocol = env
    evaluated(root, protocol)
    labels = root / "w.labels.duckdb"
    before = state(root)
    for db in (":memory:", root / "other.duckdb"):
        with Warehouse(db, labels) as other, pytest.raises(RankhouseError, match="belongs to study gated of warehouse"):
            other.open_gate()
        with Warehouse(db, labels) as other, pytest.raises(RankhouseError, match="written to only there"):
            other.labels().__enter__()
    assert state(root) == before
    for db in (":memory:", root / "other.duckdb"):
        done = rankhouse("query", "SELECT count(*) FROM gate.qrels", "--db", db, "--labels", labels, "--with-labels")
        assert done.returncode == 2 and "belongs to study gated" in done.stderr, done.stderr
        assert "3681" not in done.stdout
        shell = rankhouse("shell", "--db", db, "--labels", labels, "--with-labels")
        assert shell.returncode == 2 and "belongs to study gated" in shell.stderr
    loaded = rankhouse("load", "qrels", root / "data" / "qrels.test", "--db", root / "other.duckdb", "--labels", labels)
    assert loaded.returncode == 2 and "belongs to study gated" in loaded.stderr
    assert state(root) == before
    # the study's own warehouse still opens them through its verified freeze
    opened = rankhouse("query", "SELECT count(*) AS n FROM gate.qrels", "--db", root / "w.duckdb", "--study", protocol,
                       "--freezes", root / "freezes", "--format", "csv")  # fmt: skip
    assert opened.returncode == 0 and opened.stdout.splitlines() == ["n", "3681"], opened.stderr


def test_a_labels_file_of_no_study_opens_as_before(tmp_path):
    labels = tmp_path / "mine.labels.duckdb"
    with Warehouse(tmp_path / "a.duckdb", labels) as wh:
        load_qrels(wh, TREC / "qrels.test")
    with Warehouse(":memory:", labels) as other:
        other.open_gate()
        assert other.sql("SELECT count(*) FROM gate.qrels") == [(3681,)]


# -- 8. a refused command changes nothing --------------------------------------------------------------


def test_eval_on_a_study_warehouse_refuses_before_it_loads_anything(env):
    root, protocol = env
    prepared_and_frozen(root, protocol)
    before = state(root)
    data = root / "data"
    done = rankhouse("eval", data / "qrels.test", data / "results.trunc", "--db", root / "w.duckdb")
    assert done.returncode == 2 and "holds study gated" in done.stderr, done.stderr
    assert state(root) == before
    assert not (root / "w.labels.duckdb").exists()


# -- 4. redefined views, shadowing macros --------------------------------------------------------------


def test_a_redefined_view_is_detected(env):
    root, protocol = env
    prepared_and_frozen(root, protocol)
    with Warehouse(root / "w.duckdb") as wh:
        definition = wh.sql("SELECT sql FROM duckdb_views() WHERE view_name = 'run_ranking'")[0][0]
        reversed_ranks = definition.replace("CREATE VIEW models.run_ranking AS", "").rstrip(";")
        wh.sql(
            "CREATE OR REPLACE VIEW models.run_ranking AS SELECT * REPLACE "
            f"(count(*) OVER (PARTITION BY system, query_key) + 1 - rank AS rank) FROM ({reversed_ranks})"
        )
    refused(root, protocol, lambda s: s.evaluate(), "the labels stay closed",
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


def test_a_macro_shadowing_a_builtin_is_detected(env):
    root, protocol = env
    prepared_and_frozen(root, protocol)
    with Warehouse(root / "w.duckdb") as wh:
        wh.sql("CREATE MACRO log2(x) AS 1")  # would change every nDCG
    refused(root, protocol, lambda s: s.evaluate(), "the labels stay closed", "defines macro main.log2")


# -- 5. re-adopted and hand-placed freeze files -------------------------------------------------------


def test_a_freeze_file_is_not_readopted_after_its_record_is_deleted(env):
    root, protocol = env
    prepared_and_frozen(root, protocol)
    path = root / "freezes" / "gated-1.json"
    with Warehouse(root / "w.duckdb") as wh:
        wh.sql("UPDATE models.measure_requests SET cutoff = 3 WHERE measure = 'P@5'")
        digest, rows = table_digest(wh, "models.measure_requests", ("measure",))
        wh.sql("DELETE FROM meta.freezes")
    record = json.loads(path.read_text())
    record["tables"]["models.measure_requests"] = {"sha256": digest, "rows": rows}
    path.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
    refused(root, protocol, lambda s: s.evaluate(), "gated-1.json is not recorded in warehouse",
            "never adopts a freeze file")  # fmt: skip


def test_a_hand_placed_freeze_without_supersedes_and_reason_is_refused(env):
    root, protocol = env
    prepared_and_frozen(root, protocol)
    shutil.copy(root / "freezes" / "gated-1.json", root / "freezes" / "gated-2.json")
    refused(root, protocol, lambda s: s.evaluate(), "gated-2.json does not name the freeze it supersedes")
    record = json.loads((root / "freezes" / "gated-1.json").read_text())
    record.update(supersedes="gated-1", reason="forged", previous_sha256="0" * 64)
    (root / "freezes" / "gated-2.json").write_text(json.dumps(record))
    refused(root, protocol, lambda s: s.evaluate(), "records gated-1's SHA-256 as 000")


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


# -- 6. labels edited in place -----------------------------------------------------------------------


def test_labels_edited_in_place_are_refused_and_reload_restores_them(env):
    root, protocol = env
    evaluated(root, protocol)
    con = duckdb.connect(str(root / "w.labels.duckdb"))
    con.execute("UPDATE qrels SET rel = 1")  # every judged document relevant
    con.close()
    refused(root, protocol, lambda s: s.evaluate(), "the labels stay closed",
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
    with Warehouse(root / "w.duckdb") as wh:
        wh.sql("UPDATE raw.runs SET score = -score WHERE run_id = 'results.test'")
    message = refused(
        root,
        protocol,
        lambda s: s.prepare(),
        "cannot be prepared",
        "rows it loaded into raw.runs as 'results.test' were changed in the warehouse",
        stage="prepare",
    )
    assert "rankhouse study prepare" in message and "--reload" in message
    refused(root, protocol, lambda s: s.freeze(), "cannot be frozen", "raw.runs", stage="freeze")
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
    with Warehouse(root / "w.duckdb") as store:
        store.sql("UPDATE raw.runs SET score = score * (1 + 1e-13) WHERE run_id = 'results.trunc'")
    refused(root, protocol, lambda s: s.evaluate(), "the labels stay closed", "raw.runs")
