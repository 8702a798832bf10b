"""Memory policy: DuckDB's memory_limit for a warehouse's connections, the share local engines (Spark's
JVM) reserve, and the settings a statement that sums into perfect-hash arrays runs under."""

from __future__ import annotations

import math
import os
import re
from typing import TYPE_CHECKING

from rankhouse.errors import RankhouseError

if TYPE_CHECKING:
    import duckdb

MEMORY_LIMIT_VARIABLE = "RANKHOUSE_MEMORY_LIMIT"


def memory_limit(default: str | None = None) -> str | None:
    """DuckDB's memory_limit for every connection of a warehouse, from $RANKHOUSE_MEMORY_LIMIT (`2GB`,
    `1500MB`); when it is not set, the caller's `default` (`rankhouse demo`'s DEMO_MEMORY_LIMIT), else
    DuckDB's default (80% of RAM), or 80% of what a local engine's JVM leaves while one runs in this
    process (reserve_memory). Beyond it DuckDB spills to the warehouse's temporary directory instead of
    growing. A value DuckDB does not take is refused.

    Example: RANKHOUSE_MEMORY_LIMIT=2GB rankhouse demo
    """
    limit = os.environ.get(MEMORY_LIMIT_VARIABLE, "").strip()
    if not limit:
        return default or _shared_default()
    import duckdb

    check = duckdb.connect()
    try:
        check.execute(f"SET memory_limit = '{_quote(limit)}'")
    except duckdb.Error as exc:
        raise RankhouseError(
            f"{MEMORY_LIMIT_VARIABLE}={limit!r} is not a memory size DuckDB takes (such as 2GB or 1500MB): "
            f"{str(exc).splitlines()[0]}"
        ) from None
    finally:
        check.close()
    return limit


JVM_OVERHEAD = 1 << 30  # what a JVM holds beyond its heap (metaspace, threads, buffers): about 1 GiB
_reserved: list[int] = []  # bytes reserved by local engines running in this process (reserve_memory)


def reserve_memory(heap_bytes: int) -> None:
    """A local engine in this process (Spark's driver JVM, `local[*]`) takes `heap_bytes` of heap and some
    more: until release_memory, a warehouse opened without $RANKHOUSE_MEMORY_LIMIT gets DuckDB's default
    share (80%) of the physical memory that is left, not of all of it, so that the two do not together
    outgrow the machine (as they did at 100M run lines: docs/performance.md).

    Example: reserve_memory(4 << 30); Warehouse(":memory:")  # memory_limit 80% of (RAM - 5 GiB)
    """
    _reserved.append(heap_bytes + JVM_OVERHEAD)


def release_memory() -> None:
    """Undo the last reserve_memory (the engine stopped)."""
    if _reserved:
        _reserved.pop()


def _shared_default() -> str | None:
    """80% of the physical memory that local engines leave (reserve_memory), or None (DuckDB's default)
    when none runs here."""
    if not _reserved:
        return None
    physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    left = max(physical - sum(_reserved), physical // 10)
    return f"{int(0.8 * left) >> 20}MiB"


# What DuckDB's perfect-hash table holds per group of a sum of doubles (BM25's, the one model marked
# `aggregate: array`): the sum's state (a flag and the double, 16 bytes aligned) and an is-set byte.
PERFECT_HASH_ENTRY_BYTES = 17
PERFECT_HASH_DEFAULT_BITS = 12  # DuckDB's own perfect_ht_threshold
ARRAY_SHARE = 1 / 3  # of memory_limit, for a statement's perfect-hash arrays (array_aggregate_settings)
_SIZE = re.compile(r"^\s*([\d.]+)\s*(bytes|[KMGTP]i?B)?\s*$", re.IGNORECASE)


def memory_limit_bytes(con: duckdb.DuckDBPyConnection) -> int:
    """DuckDB's memory_limit in force on `con`, in bytes (read from the text DuckDB shows, such as
    `18.7 GiB`, so to its one decimal: 1500MB reads as 1.3 GiB); physical memory when there is no limit.

    >>> con = duckdb.connect(); _ = con.execute("SET memory_limit = '1500MB'"); memory_limit_bytes(con)
    1395864371
    """
    shown = con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]
    match = _SIZE.match(str(shown))
    if not match:  # no limit (-1, 'unlimited')
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    unit = (match.group(2) or "bytes").upper()
    power = "BKMGTP".index(unit[0]) if unit != "BYTES" else 0
    return int(float(match.group(1)) * (1024 if "I" in unit or power == 0 else 1000) ** power)


def array_aggregate_settings(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """The settings a statement that sums into arrays runs under: perfect_ht_threshold raised to
    perfect_hash_bits(), and memory_limit lowered by the arrays' share (ARRAY_SHARE), since DuckDB
    allocates them outside its limit (BANKING77's BM25 ranking under the demo's limit, with and without
    these settings: docs/performance.md).

    >>> con = duckdb.connect(); _ = con.execute("SET threads = 2; SET memory_limit = '1500MB'")
    >>> array_aggregate_settings(con)
    {'perfect_ht_threshold': '23', 'memory_limit': '887MiB'}
    """
    kept = int(memory_limit_bytes(con) * (1 - ARRAY_SHARE)) >> 20
    return {"perfect_ht_threshold": str(perfect_hash_bits(con)), "memory_limit": f"{kept}MiB"}


def perfect_hash_bits(con: duckdb.DuckDBPyConnection, share_of_limit: float = ARRAY_SHARE) -> int:
    """The largest key width (in bits) for which DuckDB may aggregate into a directly indexed array
    (a "perfect hash" group-by) instead of a hash table; 12 (DuckDB's default) to 26. BM25 sums
    BANKING77's 30.8M (query, document) pairs in eight parts, each numbering its pairs in 22 bits
    (sql/macros/bm25.sql). DuckDB allocates a part's array whole, once per thread and once more for their
    merge, whatever the number of groups, and outside its memory_limit: so these arrays together are held
    to a share of that limit (ARRAY_SHARE, a third; a part's fit from about 1GB up; under a smaller
    RANKHOUSE_MEMORY_LIMIT BM25 sums in DuckDB's hash table, which spills, instead). A small GROUP BY over
    BANKING77's ids takes a thousand times longer with the array than without (docs/performance.md), so
    only statements that compute a model marked `aggregate: array` get it (array_aggregates).

    >>> con = duckdb.connect(); _ = con.execute("SET threads = 2; SET memory_limit = '2GB'")
    >>> perfect_hash_bits(con)  # 1.86 GiB / 3 over 3 arrays of 17-byte entries: 13.1M entries
    23
    """
    threads = int(con.execute("SELECT current_setting('threads')").fetchall()[0][0])
    arrays = threads + 1
    entries = memory_limit_bytes(con) * share_of_limit / (arrays * PERFECT_HASH_ENTRY_BYTES)
    return max(PERFECT_HASH_DEFAULT_BITS, min(26, int(math.log2(entries))))


def _quote(text: str) -> str:
    return text.replace("'", "''")
