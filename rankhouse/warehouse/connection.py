"""Opening a warehouse: the main DuckDB file, its labels file, transactions and the gate."""

from __future__ import annotations

import math
import os
import re
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import duckdb

from rankhouse.errors import RankhouseError
from rankhouse.paths import read_sql

DEFAULT_DB = "rankhouse.duckdb"
MEMORY = ":memory:"
NO_AUTOMATIC_CHECKPOINT = "1000TB"  # DuckDB's checkpoint_threshold where none should ever be reached


@dataclass(frozen=True)
class LabelsOwner:
    """A row of a labels file's meta.owner: the warehouse (id and path) and study it belongs to."""

    warehouse_id: str
    warehouse: str
    study: str


def labels_path_for(db: str | Path) -> str:
    """The default labels file of a warehouse: `x.duckdb` -> `x.labels.duckdb`.

    >>> labels_path_for("study.duckdb")
    'study.labels.duckdb'
    """
    db = str(db)
    if db.endswith(".duckdb"):
        return db[: -len(".duckdb")] + ".labels.duckdb"
    return db + ".labels.duckdb"


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
    outgrow the machine (at 100M run lines DuckDB's 80% and a 4 GB driver did, on 23.5 GB).

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


class Warehouse:
    """A connection to a warehouse file (or `:memory:`) and the path of its labels file.

    Labels are never written to the main file: loaders write them through `labels()`, and
    evaluation reads them through the read-only `gate` catalog that `open_gate()` attaches.
    `default_memory_limit` is DuckDB's memory_limit where $RANKHOUSE_MEMORY_LIMIT is not set (memory_limit()).

    >>> wh = Warehouse(":memory:")
    >>> wh.sql("SELECT count(*) FROM raw.runs")
    [(0,)]
    """

    def __init__(
        self,
        path: str | Path = DEFAULT_DB,
        labels: str | Path | None = None,
        read_only: bool = False,
        default_memory_limit: str | None = None,
    ) -> None:
        self.path = str(path)
        self.read_only = read_only
        self._memory_limit = memory_limit(default_memory_limit)  # refused before anything is opened
        # An in-memory warehouse gets a throw-away directory: its labels file (unless one is given), so
        # that labels keep the same rules (separate file, read-only gate) everywhere, and its spill space.
        self._tmpdir = tempfile.mkdtemp(prefix="rankhouse-") if self.path == MEMORY else None
        if labels is not None:
            self.labels_path = str(labels)
        elif self._tmpdir:
            self.labels_path = str(Path(self._tmpdir) / "labels.duckdb")
        else:
            self.labels_path = labels_path_for(self.path)
        if read_only and self.path != MEMORY and not Path(self.path).exists():
            raise RankhouseError(f"no warehouse at {self.path}")
        try:
            self.con = duckdb.connect(self.path, read_only=read_only and self.path != MEMORY)
        except duckdb.IOException as exc:
            if "lock" in str(exc).lower():
                raise RankhouseError(
                    f"warehouse {self.path} is in use by another process (DuckDB allows one writer at a time): {exc}"
                ) from None
            raise RankhouseError(f"cannot open warehouse {self.path}: {exc}") from None
        self.con.execute("SET enable_progress_bar = false")  # rankhouse reports progress itself
        if self.path == MEMORY:
            # A throw-away warehouse is never written out: DuckDB's automatic checkpoints would only
            # recompress its tables in memory (1.5-1.9 s of `rankhouse eval` at 20M run lines, no lower peak)
            self.con.execute(f"SET checkpoint_threshold = '{NO_AUTOMATIC_CHECKPOINT}'")
        self._limit_memory(self.con)
        self.writable = self.con.execute("SELECT current_setting('access_mode')").fetchall()[0][0] != "read_only"
        if self.writable:
            self.con.execute(read_sql("warehouse.sql"))
            if not self.con.execute("SELECT 1 FROM meta.warehouse").fetchall():
                self.con.execute("INSERT INTO meta.warehouse VALUES (?, current_localtimestamp())", [str(uuid.uuid4())])
        self.catalog = self.con.execute("SELECT current_database()").fetchall()[0][0]
        self.id = self._identity()
        self._files: duckdb.DuckDBPyConnection | None = None
        self._main_con = self.con
        if self.writable:
            self._forbid_files()

    def _limit_memory(self, con: duckdb.DuckDBPyConnection) -> None:
        """Give `con` the memory limit of $RANKHOUSE_MEMORY_LIMIT, if set (memory_limit())."""
        if self._memory_limit:
            con.execute(f"SET memory_limit = '{_quote(self._memory_limit)}'")

    def _identity(self) -> str | None:
        """The warehouse's id (meta.warehouse), which its labels file records; None in a warehouse made
        before ids existed and opened read-only."""
        if not self.table_exists("meta.warehouse"):
            return None
        rows = self.sql("SELECT id FROM meta.warehouse")
        return rows[0][0] if rows else None

    def _forbid_files(self) -> None:
        """From here on, SQL on this connection opens no file: not the labels file, not an input, not
        an export (models are built here). Only DuckDB's own spill directory stays usable. Loaders read
        files in `files`, a separate connection, and the gate is a copy (open_gate)."""
        spill = Path(self._tmpdir or self.path + ".tmp") / ("spill" if self._tmpdir else "")
        spill = str(spill.resolve())
        self.con.execute(f"SET temp_directory = '{_quote(spill)}'")
        self.con.execute(f"SET allowed_directories = ['{_quote(spill)}/']")
        self.con.execute("SET enable_external_access = false")
        self.con.execute("SET python_enable_replacements = false")  # no Python variables as tables either

    @property
    def files(self) -> duckdb.DuckDBPyConnection:
        """A separate in-memory DuckDB connection that may read and write files, for loaders (DuckDB's
        CSV reader) and exports; hand its results to the warehouse as Arrow.

        >>> wh.files.execute("SELECT count(*) FROM read_csv('runs.txt')").fetchall()  # doctest: +SKIP
        """
        if self._files is None:
            self._files = duckdb.connect()
            self._files.execute("SET enable_progress_bar = false")
            self._limit_memory(self._files)
        return self._files

    # -- plumbing -----------------------------------------------------------------------------
    def sql(self, query: str, params: list | tuple | dict | None = None) -> list[tuple]:
        """Run one statement and fetch every row."""
        return self.con.execute(query, params).fetchall()

    def columns(self, query: str, params: list | tuple | None = None) -> tuple[list[str], list[tuple]]:
        """Run one statement; return its column names and rows."""
        cur = self.con.execute(query, params)
        rows = cur.fetchall()
        return [d[0] for d in cur.description], rows

    def table_exists(self, qualified: str) -> bool:
        """Whether `schema.table` (or `catalog.schema.table`) exists."""
        parts = qualified.split(".")
        if len(parts) == 2:
            parts = [self.catalog, *parts]
        catalog, schema, table = parts
        return bool(
            self.sql(
                "SELECT 1 FROM duckdb_tables() WHERE database_name = ? AND schema_name = ? "
                "AND table_name = ? UNION ALL SELECT 1 FROM duckdb_views() WHERE database_name = ? "
                "AND schema_name = ? AND view_name = ?",
                [catalog, schema, table, catalog, schema, table],
            )
        )

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One transaction: committed if the block finishes, rolled back if it raises."""
        self.con.execute("BEGIN TRANSACTION")
        try:
            yield
        except BaseException:
            self.con.execute("ROLLBACK")
            raise
        self.con.execute("COMMIT")

    @contextmanager
    def registered(self, name: str, data: object) -> Iterator[None]:
        """`data` (an Arrow table or reader) readable as `name` on the main connection within the block.
        Unregistered after it; if the block raised, its error stands: in the transaction a failed
        statement aborted, DuckDB refuses even the unregister (the rollback undoes the register).

        >>> with wh.registered("rh_rows", pa.table({"n": [1]})):  # doctest: +SKIP
        ...     wh.sql("INSERT INTO main.t SELECT n FROM rh_rows")
        """
        self.con.register(name, data)
        try:
            yield
        except BaseException:
            with suppress(duckdb.Error):
                self.con.unregister(name)
            raise
        self.con.unregister(name)

    @contextmanager
    def array_aggregates(self) -> Iterator[None]:
        """For the statements in the block, let DuckDB sum a GROUP BY over a dense integer key into a
        directly indexed array (perfect_ht_threshold raised to perfect_hash_bits()), and hold DuckDB's
        own buffers to the part of memory_limit the arrays leave (ARRAY_SHARE): DuckDB allocates the
        arrays outside its limit. DuckDB's defaults after it. For statements that compute a model marked
        `aggregate: array`.

        >>> with wh.array_aggregates():  # doctest: +SKIP
        ...     wh.sql("CREATE TABLE scored AS SELECT * FROM models.bm25_scores")
        """
        for setting, value in array_aggregate_settings(self.con).items():
            self.con.execute(f"SET {setting} = '{value}'")
        try:
            yield
        finally:
            self.con.execute(f"SET perfect_ht_threshold = {PERFECT_HASH_DEFAULT_BITS}")
            self.con.execute("RESET memory_limit")
            self._limit_memory(self.con)

    def export_lines(self, query: str, params: dict | list | None, path: str | Path) -> None:
        """Write a one-column query's rows to `path`, one line each, in order (through `files`: the
        warehouse's connection writes no file)."""
        reader = self.con.sql(query, params=params).to_arrow_reader(1 << 17)
        self.files.register("rh_export_lines", reader)
        try:
            self.files.execute(
                f"COPY rh_export_lines TO '{_quote(str(path))}' "
                "(FORMAT csv, HEADER false, QUOTE '', ESCAPE '', DELIMITER '\t')"
            )
        finally:
            self.files.unregister("rh_export_lines")

    # -- labels and the gate ------------------------------------------------------------------
    def attached(self) -> set[str]:
        """Names of the attached catalogs."""
        return {row[0] for row in self.sql("SELECT database_name FROM duckdb_databases()")}

    @contextmanager
    def labels(self) -> Iterator[str]:
        """For the block, `sql`, `con` and `transaction` work on a separate in-memory connection that has
        the labels file attached read-write as catalog `labels` (and may read files, for the loaders);
        the warehouse's own connection never opens the labels file for writing. Loaders only.

        The labels file is bound to this warehouse and to the studies it holds (its meta.owner); a
        labels file bound to a study of another warehouse is refused.
        """
        self.close_gate()
        self._check_owner(writing=True)
        side = duckdb.connect()
        side.execute("SET enable_progress_bar = false")
        side.execute(f"ATTACH '{_quote(self.labels_path)}' AS labels")
        try:
            side.execute("USE labels")
            side.execute(read_sql("labels.sql"))
            side.execute("USE memory")
            self._bind_labels(side)
            self.con = side
            yield "labels"
        finally:
            self.con = self._main_con
            side.execute("USE memory")
            side.execute("DETACH labels")
            side.close()

    def _bind_labels(self, side: duckdb.DuckDBPyConnection) -> None:
        """Record in the attached labels file that it belongs to this warehouse and its studies."""
        bound = {row[0] for row in side.execute("SELECT study FROM labels.meta.owner").fetchall()}
        for study in sorted(set(self.studies()) - bound):
            side.execute(
                "INSERT INTO labels.meta.owner VALUES (?, ?, ?, current_localtimestamp())",
                [self.id, self.path, study],
            )

    def bind_labels(self) -> None:
        """Bind an existing labels file to the studies this warehouse holds (a new study's prepare)."""
        if Path(self.labels_path).exists():
            with self.labels():
                pass

    def labels_owners(self) -> list[LabelsOwner]:
        """Who the labels file belongs to (warehouse and study), read without opening it to anyone."""
        if not Path(self.labels_path).exists():
            return []
        side = duckdb.connect()
        try:
            side.execute(f"ATTACH '{_quote(self.labels_path)}' AS labels (READ_ONLY)")
            exists = side.execute(
                "SELECT 1 FROM duckdb_tables() WHERE database_name = 'labels' AND schema_name = 'meta' "
                "AND table_name = 'owner'"
            ).fetchall()
            rows = side.execute("SELECT * FROM labels.meta.owner ORDER BY study").fetchall() if exists else []
        except duckdb.Error as exc:
            raise RankhouseError(f"cannot read the labels file {self.labels_path}: {exc}") from None
        finally:
            side.close()
        return [LabelsOwner(warehouse_id, warehouse, study) for warehouse_id, warehouse, study, _ in rows]

    def _check_owner(self, writing: bool = False) -> list[LabelsOwner]:
        """The labels file's owners; an error if it belongs to a study of another warehouse."""
        owners = self.labels_owners()
        foreign = [o for o in owners if o.warehouse_id != self.id]
        if foreign:
            studies = ", ".join(sorted({o.study for o in foreign}))
            where = foreign[0].warehouse
            action = "written to" if writing else "opened"
            raise RankhouseError(
                f"the labels file {self.labels_path} belongs to study {studies} of warehouse {where}: it is "
                f"{action} only there, by `rankhouse study evaluate` or by `rankhouse query --db {where} --study "
                "PROTOCOL` once the study's freeze verifies"
            )
        return owners

    def studies(self) -> list[str]:
        """The studies this warehouse holds (registered by `rankhouse study prepare`)."""
        if not self.table_exists("meta.studies"):
            return []
        return [row[0] for row in self.sql("SELECT study FROM meta.studies ORDER BY study")]

    def check_gate(self, verified_freeze: str | None = None) -> None:
        """Raise the error open_gate would raise, without opening anything (commands check this before
        they write anything)."""
        owners = self._check_owner()
        held = sorted(set(self.studies()) | {o.study for o in owners})
        if held and verified_freeze is None:
            raise RankhouseError(
                f"this warehouse holds study {', '.join(held)}: its labels open only through "
                "`rankhouse study evaluate`, after the study's freeze verifies"
            )

    def open_gate(self, verified_freeze: str | None = None) -> None:
        """Make the labels readable as the read-only catalog `gate` (an empty one if there are none).

        A warehouse that holds a study (or whose labels file belongs to one) opens its labels only for
        a freeze that has just verified (`rankhouse study evaluate` passes its id); anything else is
        refused. On a writable warehouse, whose connection opens no file, `gate` is an in-memory copy
        of the labels file's tables; on a read-only one (analysts' queries), the file attached read-only.
        """
        if "gate" in self.attached():
            return
        self.check_gate(verified_freeze)
        if not Path(self.labels_path).exists():
            with self.labels():
                pass
        if not self.writable:
            self.con.execute(f"ATTACH '{_quote(self.labels_path)}' AS gate (READ_ONLY)")
            return
        side = duckdb.connect()
        try:
            side.execute(f"ATTACH '{_quote(self.labels_path)}' AS labels (READ_ONLY)")
            tables = side.execute(
                "SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = 'labels' ORDER BY ALL"
            ).fetchall()
            self.con.execute("ATTACH ':memory:' AS gate")
            self.con.execute("USE gate")
            self.con.execute(read_sql("labels.sql"))
            self.con.execute(f"USE {self.catalog}")
            for schema, table in tables:
                rows = side.sql(f'SELECT * FROM labels."{schema}"."{table}"').to_arrow_table()
                with self.registered("rh_gate_rows", rows):
                    self.con.execute(f'CREATE OR REPLACE TABLE gate."{schema}"."{table}" AS FROM rh_gate_rows')
        except BaseException:
            self.con.execute(f"USE {self.catalog}")
            self.close_gate()
            raise
        finally:
            side.close()

    def lock_down(self) -> None:
        """No files, no ATTACH, no settings changes from here on (for analysts' queries and shells)."""
        self.con.execute("SET enable_external_access = false")
        self.con.execute("SET lock_configuration = true")

    def close_gate(self) -> None:
        """Detach the `gate` catalog if it is attached."""
        if "gate" in self.attached():
            self.con.execute("DETACH gate")

    def close(self) -> None:
        """Close the connections and remove a throw-away labels file."""
        self.con.close()
        if self._files is not None:
            self._files.close()
        if self._tmpdir:
            shutil.rmtree(self._tmpdir, ignore_errors=True)

    def __enter__(self) -> Warehouse:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


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
    allocates them outside its limit. BANKING77's BM25 ranking under the demo's 1500MB peaked at 2,051 MB
    with the whole limit left to DuckDB's buffers, 1,516 MB with these settings (7.5 s, 8.1 s;
    2026-12-04).

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
    RANKHOUSE_MEMORY_LIMIT BM25 sums in DuckDB's hash table, which spills, instead). A GROUP BY of 1,000
    rows over BANKING77's ids takes 1.6 s with the array, 1.5 ms without, so only statements that compute
    a model marked `aggregate: array` get it (array_aggregates).

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
