"""Row digests kept while the files of frozen tables stay as they were (rankhouse/study/digests.py, issue 39).

A verification takes a frozen table's row digest again only where the DuckDB file that holds it may have
changed: every change a verification finds without the record it still finds with it (the attacks of
test_study.py and test_gate_attacks.py, on a warehouse whose record holds every table), `--full` takes
every digest afresh, and a record that is damaged, foreign, or of another state of a file is never an
error and never a wrong answer. Most tests record digests at once (SETTLED_NS 0): a warehouse made a moment
ago is otherwise too fresh to record."""

from __future__ import annotations

import json
import os
import time

import pytest
from gated_study import (
    assert_evaluate_refused,
    make_env,
    open_study,
    prepared_and_frozen,
    tamper_input,
    tamper_model,
    tamper_parameter,
    tamper_table,
)
from warehouse_files import copy_warehouse, plain, store_table

from rankhouse.study import digests
from rankhouse.warehouse.layout import Layout


@pytest.fixture
def env(tmp_path):
    return make_env(tmp_path)


@pytest.fixture
def at_once(monkeypatch):
    """Digests recorded however recently their files were written."""
    monkeypatch.setattr(digests, "SETTLED_NS", 0)


@pytest.fixture
def taken(monkeypatch) -> list[str]:
    """The frozen tables whose row digest is taken (not read from the record), in order (not the loads' rows,
    which the ledger digests by query)."""
    seen: list[str] = []
    original = digests.row_digest_and_count

    def spy(wh, table):  # noqa: ANN001, ANN202
        if not table.startswith("("):
            seen.append(table)
        return original(wh, table)

    monkeypatch.setattr(digests, "row_digest_and_count", spy)
    monkeypatch.setattr("rankhouse.study.freeze.row_digest_and_count", spy)
    return seen


def record(root) -> dict:
    return json.loads((Layout.of(root / "w.duckdb").cache / "row_digests.json").read_text())


def verified(root, protocol, full: bool = False) -> list[str]:
    """The problems a fresh session's verification of the latest freeze finds."""
    wh, study = open_study(root, protocol)
    with wh:
        return study.verify(study.freezes()[-1], full)


def test_digests_of_unchanged_files_are_read_back_not_taken(env, at_once, taken):
    root, protocol = env
    prepared_and_frozen(root, protocol)
    assert verified(root, protocol) == []
    kept = record(root)["tables"]
    wh, study = open_study(root, protocol)
    with wh:
        frozen = [t for t in study.frozen_tables() if wh.table_exists(t)]
    assert sorted(kept) == sorted(frozen)
    taken.clear()
    assert verified(root, protocol) == [] and taken == []
    assert verified(root, protocol, full=True) == [] and sorted(taken) == sorted(frozen)  # --full: all again


def test_a_file_written_moments_ago_is_not_recorded(env, monkeypatch):
    root, protocol = env
    monkeypatch.setattr(digests, "SETTLED_NS", 10**18)  # every file is "moments" old
    prepared_and_frozen(root, protocol)
    assert verified(root, protocol) == []
    assert not (Layout.of(root / "w.duckdb").cache / "row_digests.json").exists()


def test_a_file_is_recorded_once_its_times_are_two_seconds_old(env, taken):
    root, protocol = env
    prepared_and_frozen(root, protocol)
    time.sleep(digests.SETTLED_NS / 1e9 + 0.1)
    assert verified(root, protocol) == []
    taken.clear()
    assert verified(root, protocol) == [] and taken == []


@pytest.mark.parametrize("tamper", [tamper_model, tamper_parameter, tamper_input, tamper_table])
def test_every_change_is_still_refused_with_every_digest_recorded(env, at_once, tamper):
    """test_study's refusals after each change, the change made once an evaluation recorded every digest."""

    def recorded_then_changed(root, protocol):  # noqa: ANN001, ANN202
        assert record(root)["tables"]
        return tamper(root, protocol)

    assert_evaluate_refused(env, recorded_then_changed, evaluated_before=True)


def test_raw_rows_edited_after_the_freeze_are_found_with_the_digest_recorded(env, at_once, taken):
    root, protocol = env
    prepared_and_frozen(root, protocol)
    assert verified(root, protocol) == [] and "raw.runs" in record(root)["tables"]
    with plain(root / "w.duckdb") as con:
        con.execute("UPDATE inputs.raw.runs SET score = score * (1 + 1e-13) WHERE run_id = 'results.trunc'")
    taken.clear()
    problems = verified(root, protocol)
    assert any("raw.runs" in p for p in problems), problems
    assert "raw.runs" in taken


def test_a_view_redefined_by_hand_is_taken_again(env, at_once, taken):
    root, protocol = env
    prepared_and_frozen(root, protocol)
    assert verified(root, protocol) == []
    with plain(root / "w.duckdb", "gated") as con:
        source = store_table(con, "gated", "measure_requests")
        con.execute(f"CREATE OR REPLACE VIEW gated.models.measure_requests AS SELECT * FROM {source} WHERE cutoff > 3")
    taken.clear()
    problems = verified(root, protocol)
    assert "models.measure_requests" in taken
    assert any("measure_requests" in p for p in problems), problems


def test_a_write_that_sets_the_modification_time_back_is_still_a_change(env, at_once, taken):
    """The same bytes written over the store file and its modification time set back: only the status-change
    time tells, and it is enough (as any write that is not a rankhouse publication, an edit with plain
    DuckDB or another file copied over it, changes it)."""
    root, protocol = env
    prepared_and_frozen(root, protocol)
    assert verified(root, protocol) == []
    with plain(root / "w.duckdb", "gated", read_only=True) as con:
        catalog = store_table(con, "gated", "measure_requests").split(".")[0]
        path = con.execute("SELECT path FROM duckdb_databases() WHERE database_name = ?", [catalog]).fetchall()[0][0]
    before = os.stat(path)
    time.sleep(0.05)
    with open(path, "r+b") as handle:
        first = handle.read(4096)
        handle.seek(0)
        handle.write(first)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (before.st_ino, before.st_size, before.st_mtime_ns)
    assert after.st_ctime_ns != before.st_ctime_ns
    taken.clear()
    assert verified(root, protocol) == []  # the same rows
    assert "models.measure_requests" in taken


def test_a_file_with_a_write_ahead_log_is_never_read_from_the_record(env, at_once, taken):
    root, protocol = env
    prepared_and_frozen(root, protocol)
    assert verified(root, protocol) == []
    wal = root / "w.duckdb.wal"
    wal.write_bytes(b"")  # as a writer that has not checkpointed leaves it
    try:
        taken.clear()
        wh, study = open_study(root, protocol)
        with wh:
            study.verify(study.freezes()[-1])
        assert any(t.startswith("raw.") for t in taken)
    finally:
        wal.unlink(missing_ok=True)


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: "not json {",
        lambda data: "",
        lambda data: json.dumps([data]),
        lambda data: json.dumps({**data, "format": 99}),
        lambda data: json.dumps({"format": 1, "tables": {t: {**e, "rows": "many"} for t, e in data["tables"].items()}}),
        lambda data: json.dumps({"format": 1, "tables": {t: {**e, "state": None} for t, e in data["tables"].items()}}),
        # another state of the files: the digests recorded for an inode that is not theirs now
        lambda data: json.dumps({"format": 1, "tables": {
            t: {**e, "quick": "0" * 64, "state": {**e["state"], "inode": e["state"]["inode"] + 1}}
            for t, e in data["tables"].items()}}),
    ],
    ids=["not-json", "empty", "a-list", "another-format", "rows-not-a-number", "no-state", "another-inode"],
)  # fmt: skip
def test_a_damaged_or_foreign_record_is_ignored(env, at_once, damage):
    root, protocol = env
    prepared_and_frozen(root, protocol)
    assert verified(root, protocol) == []
    path = Layout.of(root / "w.duckdb").cache / "row_digests.json"
    path.write_text(damage(json.loads(path.read_text())))
    assert verified(root, protocol) == []  # no error, no false change
    assert record(root)["format"] == digests.FORMAT  # written again, whole
    tamper_table(root, protocol)
    assert any("measure_requests differs" in p for p in verified(root, protocol))


def test_a_copied_warehouse_takes_its_own_digests(env, at_once, taken, tmp_path):
    root, protocol = env
    prepared_and_frozen(root, protocol)
    assert verified(root, protocol) == []
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in ("data", "models", "freezes"):
        os.symlink(root / name, copy / name)
    copy_warehouse(root / "w.duckdb", copy / "w.duckdb")
    assert (Layout.of(copy / "w.duckdb").cache / "row_digests.json").exists()  # the original's record, copied
    taken.clear()
    assert verified(copy, protocol) == []
    assert taken  # the copy's files are other inodes: its digests are taken, not read
