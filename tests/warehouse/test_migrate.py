"""A warehouse made by rankhouse 0.1 (commit a9a3359, the release before study namespaces): refused with a
message that says how to carry it over, then carried over by `rankhouse migrate`, its freeze still
verifying, its results kept, its labels in the study's own labels file only. The fixture is that
release's warehouse of studies/trec_sample.toml (tests/fixtures/warehouse_a9a3359/README.md)."""

from __future__ import annotations

import gzip
import json
import shutil

import duckdb
import pytest
from clirunner import error_line, rankhouse_in_process
from conftest import FIXTURES
from warehouse_files import files_of, plain

from rankhouse.paths import STUDIES_DIR

OLD = FIXTURES / "warehouse_a9a3359"
PROTOCOL = STUDIES_DIR / "trec_sample.toml"


@pytest.fixture
def old(tmp_path):
    """The 0.1 warehouse as its release left it: w.duckdb, w.labels.duckdb and freezes/ in one folder."""
    for name in ("w.duckdb", "w.labels.duckdb"):
        (tmp_path / name).write_bytes(gzip.decompress((OLD / f"{name}.gz").read_bytes()))
    shutil.copytree(OLD / "freezes", tmp_path / "freezes")
    return tmp_path / "w.duckdb"


def results(db, namespace: str, freeze: str) -> list[tuple]:
    with plain(db, namespace, read_only=True) as con:
        return con.execute(
            f"SELECT * EXCLUDE (freeze_id) FROM {namespace}.results.run_measures WHERE freeze_id = ? ORDER BY ALL",
            [freeze],
        ).fetchall()


def test_every_command_refuses_it_and_says_how_to_carry_it_over(old):
    before = {name: path.read_bytes() for name, path in ((p.name, p) for p in old.parent.iterdir() if p.is_file())}
    for args in (("study", "status", PROTOCOL), ("query", "SELECT 1"), ("study", "prepare", PROTOCOL), ("sources",)):
        line = error_line(rankhouse_in_process(*args, "--db", old))
        assert "was made by rankhouse 0.1" in line and f"rankhouse migrate --db {old}" in line, line
    assert {p.name: p.read_bytes() for p in old.parent.iterdir() if p.is_file()} == before
    assert not (old.parent / "w.d").exists()


def test_migrate_carries_the_study_over_and_its_freeze_still_verifies(old):
    with duckdb.connect(str(old), read_only=True) as con:
        recorded = con.execute(
            "SELECT * EXCLUDE (freeze_id) FROM results.run_measures WHERE freeze_id = 'trec_sample-1' ORDER BY ALL"
        ).fetchall()
    done = rankhouse_in_process("migrate", "--db", old)
    assert done.returncode == 0, done.stderr
    assert "trec_sample: 4 models, 1 freeze" in done.stderr
    assert (old.parent / "w.v1.duckdb").exists() and (old.parent / "w.labels.v1.duckdb").exists()
    status = rankhouse_in_process("study", "status", PROTOCOL, "--db", old).stdout
    # what the carry-over kept verifies; the changes are this release's measure_requests (version 3 -> 4, a
    # parameters column) and run_ranking (issue 39: it finds the runs from their blocks), which 0.1 built and
    # froze: the freeze says so, and nothing else
    current = next(line for line in status.splitlines() if line.startswith("current    "))
    changed = [f"{kind} models.{name} was built by the frozen definition of its model, which changed since: rebuild "
               f"it with rankhouse study prepare {PROTOCOL}" for kind, name in (("table", "measure_requests"),
                                                                               ("view", "run_ranking"))]  # fmt: skip
    changed += [f"model {name} changed (its SQL, parameters, parents or data)" for name in ("measure_requests",
                                                                                          "run_ranking")]  # fmt: skip
    assert current == "current    trec_sample-1: CHANGED: " + "; ".join(changed), status
    assert "records no evaluate plan" in status
    assert results(old, "trec_sample", "trec_sample-1") == recorded  # the 0.1 results, kept by freeze
    # no label row outside the study's labels file
    labels = old.parent / "w.d" / "labels" / "trec_sample.duckdb"
    for name, path in files_of(old).items():
        if path.suffix == ".duckdb" and path != labels:
            with duckdb.connect(str(path), read_only=True) as con:
                tables = {t for (t,) in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
            assert not tables & {"qrels", "qrels_judgments", "judged_ranking", "ideal_ranking"}, name
    # its next evaluation: the changed model rebuilt, then a freeze that records the evaluate plan; the same results
    line = error_line(rankhouse_in_process("study", "evaluate", PROTOCOL, "--db", old))
    assert "the labels stay closed" in line, line
    prepared = rankhouse_in_process("study", "prepare", PROTOCOL, "--db", old)
    assert prepared.returncode == 0, prepared.stderr
    line = error_line(rankhouse_in_process("study", "evaluate", PROTOCOL, "--db", old))
    assert "changed since freeze trec_sample-1" in line, line
    froze = rankhouse_in_process("study", "freeze", PROTOCOL, "--db", old, "--supersedes", "trec_sample-1",
                                 "--reason", "record the evaluate plan (carried over from rankhouse 0.1)")  # fmt: skip
    assert froze.returncode == 0, froze.stderr
    evaluated = rankhouse_in_process("study", "evaluate", PROTOCOL, "--db", old)
    assert evaluated.returncode == 0, evaluated.stderr
    assert results(old, "trec_sample", "trec_sample-2") == recorded
    out = json.loads((old.parent / "w.d" / "out" / "trec_sample" / "results.json").read_text())
    assert out["freeze_id"] == "trec_sample-2" and out["supersedes"][0]["freeze_id"] == "trec_sample-1"


def test_migrate_refuses_what_is_not_a_0_1_warehouse(old, tmp_path):
    assert rankhouse_in_process("migrate", "--db", old).returncode == 0
    assert "is not a warehouse of rankhouse 0.1" in error_line(rankhouse_in_process("migrate", "--db", old))
    assert "no warehouse at" in error_line(rankhouse_in_process("migrate", "--db", tmp_path / "none.duckdb"))
