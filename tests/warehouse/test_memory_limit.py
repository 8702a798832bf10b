"""$RANKHOUSE_MEMORY_LIMIT: DuckDB's memory_limit on every connection of a warehouse; a bad value refused."""

from __future__ import annotations

import duckdb
import pytest
from clirunner import error_line, rankhouse_in_process
from conftest import TREC

from rankhouse.errors import RankhouseError
from rankhouse.warehouse import Warehouse


def duckdbs_reading(limit: str) -> str:
    """How DuckDB itself shows `limit` once set (the oracle: its own setting)."""
    con = duckdb.connect()
    con.execute(f"SET memory_limit = '{limit}'")
    return con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]


def test_the_limit_is_set_on_the_warehouse_and_its_file_connection(tmp_path, monkeypatch):
    monkeypatch.setenv("RANKHOUSE_MEMORY_LIMIT", "700MB")
    with Warehouse(tmp_path / "w.duckdb") as wh:
        assert wh.sql("SELECT current_setting('memory_limit')")[0][0] == duckdbs_reading("700MB")
        assert wh.files.execute("SELECT current_setting('memory_limit')").fetchall()[0][0] == duckdbs_reading("700MB")
    monkeypatch.delenv("RANKHOUSE_MEMORY_LIMIT")
    with Warehouse(":memory:") as wh:  # unset: DuckDB's default, not 700MB
        assert wh.sql("SELECT current_setting('memory_limit')")[0][0] != duckdbs_reading("700MB")


def test_a_callers_default_applies_where_the_variable_is_not_set(tmp_path, monkeypatch):
    """`rankhouse demo` opens its warehouse with DEMO_MEMORY_LIMIT; RANKHOUSE_MEMORY_LIMIT still wins."""
    monkeypatch.delenv("RANKHOUSE_MEMORY_LIMIT", raising=False)
    with Warehouse(tmp_path / "w.duckdb", default_memory_limit="700MB") as wh:
        assert wh.sql("SELECT current_setting('memory_limit')")[0][0] == duckdbs_reading("700MB")
        assert wh.files.execute("SELECT current_setting('memory_limit')").fetchall()[0][0] == duckdbs_reading("700MB")
    monkeypatch.setenv("RANKHOUSE_MEMORY_LIMIT", "900MB")
    with Warehouse(tmp_path / "w.duckdb", default_memory_limit="700MB") as wh:
        assert wh.sql("SELECT current_setting('memory_limit')")[0][0] == duckdbs_reading("900MB")


def test_a_bad_limit_is_refused_before_the_warehouse_is_made(tmp_path, monkeypatch):
    monkeypatch.setenv("RANKHOUSE_MEMORY_LIMIT", "lots")
    with pytest.raises(RankhouseError, match="RANKHOUSE_MEMORY_LIMIT='lots' is not a memory size"):
        Warehouse(tmp_path / "w.duckdb")
    assert not (tmp_path / "w.duckdb").exists()


def test_eval_under_a_limit_says_why_it_refuses(tmp_path, monkeypatch):
    monkeypatch.setenv("RANKHOUSE_MEMORY_LIMIT", "12 parsecs")
    done = rankhouse_in_process("eval", TREC / "qrels.test", TREC / "results.test")
    assert done.stdout == "" and error_line(done).startswith("error: RANKHOUSE_MEMORY_LIMIT='12 parsecs'")


def test_a_local_engine_reserves_its_heap_from_duckdbs_default_limit(monkeypatch):
    """While a local engine's JVM runs here (reserve_memory), DuckDB's default is 80% of what it leaves;
    an explicit RANKHOUSE_MEMORY_LIMIT still wins, and release_memory restores DuckDB's own default."""
    import os

    from rankhouse.warehouse.memory import JVM_OVERHEAD, release_memory, reserve_memory

    monkeypatch.delenv("RANKHOUSE_MEMORY_LIMIT", raising=False)
    physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    with Warehouse(":memory:") as wh:
        default = wh.sql("SELECT current_setting('memory_limit')")[0][0]
    reserve_memory(2 << 30)
    try:
        expected = f"{int(0.8 * (physical - (2 << 30) - JVM_OVERHEAD)) >> 20}MiB"
        with Warehouse(":memory:") as wh:
            assert wh.sql("SELECT current_setting('memory_limit')")[0][0] == duckdbs_reading(expected)
        monkeypatch.setenv("RANKHOUSE_MEMORY_LIMIT", "700MB")
        with Warehouse(":memory:") as wh:
            assert wh.sql("SELECT current_setting('memory_limit')")[0][0] == duckdbs_reading("700MB")
        monkeypatch.delenv("RANKHOUSE_MEMORY_LIMIT")
    finally:
        release_memory()
    with Warehouse(":memory:") as wh:
        assert wh.sql("SELECT current_setting('memory_limit')")[0][0] == default


@pytest.mark.parametrize(
    ("limit", "bits"), [("640MB", 21), ("1GB", 22), ("2GB", 23), ("4GB", 24), ("8GB", 25), ("20GB", 26)]
)
def test_the_array_aggregates_are_held_to_a_third_of_the_limit(limit, bits):
    """perfect_hash_bits: 2 threads' arrays and their merge, 17 bytes an entry, in a third of memory_limit;
    each of BANKING77's eight BM25 parts (22 bits) gets its array from 1GB up, and sums in a hash table below."""
    from rankhouse.warehouse.memory import perfect_hash_bits

    con = duckdb.connect()
    con.execute(f"SET threads = 2; SET memory_limit = '{limit}'")
    assert perfect_hash_bits(con) == bits


def test_a_throw_away_warehouse_never_checkpoints_on_its_own(tmp_path):
    """An in-memory warehouse is never written out: its checkpoint threshold is out of reach (an automatic
    checkpoint only recompressed its tables, time for nothing: docs/performance.md); a file keeps DuckDB's."""
    from rankhouse.warehouse.connection import NO_AUTOMATIC_CHECKPOINT

    fresh = duckdb.connect()
    default = fresh.execute("SELECT current_setting('checkpoint_threshold')").fetchall()[0][0]
    fresh.execute(f"SET checkpoint_threshold = '{NO_AUTOMATIC_CHECKPOINT}'")
    unreachable = fresh.execute("SELECT current_setting('checkpoint_threshold')").fetchall()[0][0]
    assert default != unreachable
    with Warehouse(":memory:") as wh:
        assert wh.sql("SELECT current_setting('checkpoint_threshold')")[0][0] == unreachable
    with Warehouse(tmp_path / "w.duckdb") as wh:
        assert wh.sql("SELECT current_setting('checkpoint_threshold')")[0][0] == default


@pytest.mark.parametrize("configured", [None, "1500MB"])
def test_array_aggregates_leave_duckdbs_buffers_two_thirds_and_restore_the_limit(monkeypatch, configured):
    """Inside array_aggregates the arrays' third of memory_limit is taken from DuckDB's buffers (DuckDB
    allocates the arrays outside its limit); after it, the warehouse's limit and threshold are back."""
    from rankhouse.warehouse.memory import PERFECT_HASH_DEFAULT_BITS, memory_limit_bytes

    if configured:
        monkeypatch.setenv("RANKHOUSE_MEMORY_LIMIT", configured)
    else:
        monkeypatch.delenv("RANKHOUSE_MEMORY_LIMIT", raising=False)
    with Warehouse(":memory:") as wh:
        setting = "SELECT current_setting('memory_limit'), current_setting('perfect_ht_threshold')"
        before = wh.sql(setting)[0]
        limit = memory_limit_bytes(wh.con)
        with wh.array_aggregates():
            inside = memory_limit_bytes(wh.con)
            assert int(wh.sql(setting)[0][1]) > PERFECT_HASH_DEFAULT_BITS
        assert abs(inside - limit * 2 / 3) < 0.06 * limit  # DuckDB shows the limit to one decimal
        assert wh.sql(setting)[0] == before and before[1] == PERFECT_HASH_DEFAULT_BITS
