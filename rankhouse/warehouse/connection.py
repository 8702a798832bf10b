"""Opening a warehouse: the main DuckDB file, its labels file, transactions and the gate."""

from __future__ import annotations

import math
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from rankhouse.errors import RankhouseError
from rankhouse.paths import read_sql

DEFAULT_DB = "rankhouse.duckdb"
MEMORY = ":memory:"


def labels_path_for(db: str | Path) -> str:
    """The default labels file of a warehouse: `x.duckdb` -> `x.labels.duckdb`.

    >>> labels_path_for("study.duckdb")
    'study.labels.duckdb'
    """
    db = str(db)
    if db.endswith(".duckdb"):
        return db[: -len(".duckdb")] + ".labels.duckdb"
    return db + ".labels.duckdb"


class Warehouse:
    """A connection to a warehouse file (or `:memory:`) and the path of its labels file.

    Labels are never written to the main file: loaders write them through `labels()`, and
    evaluation reads them through the read-only `gate` catalog that `open_gate()` attaches.

    >>> wh = Warehouse(":memory:")
    >>> wh.sql("SELECT count(*) FROM raw.runs")
    [(0,)]
    """

    def __init__(
        self, path: str | Path = DEFAULT_DB, labels: str | Path | None = None, read_only: bool = False
    ) -> None:
        self.path = str(path)
        self.read_only = read_only
        self._tmpdir: str | None = None
        if labels is not None:
            self.labels_path = str(labels)
        elif self.path == MEMORY:
            # An in-memory warehouse gets a throw-away labels file, so that labels keep the same
            # rules (separate file, read-only gate) everywhere.
            self._tmpdir = tempfile.mkdtemp(prefix="rankhouse-")
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
        if not self.con.execute("SELECT current_setting('access_mode')").fetchall()[0][0] == "read_only":
            self.con.execute(read_sql("warehouse.sql"))
        self.catalog = self.con.execute("SELECT current_database()").fetchall()[0][0]

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
    def array_aggregates(self) -> Iterator[None]:
        """For the statements in the block, let DuckDB sum a GROUP BY over a dense integer key into a
        directly indexed array (perfect_ht_threshold raised to perfect_hash_bits()); DuckDB's default
        after it. For statements that compute a model marked `aggregate: array`.

        >>> with wh.array_aggregates():  # doctest: +SKIP
        ...     wh.sql("CREATE TABLE ranked AS SELECT * FROM models.bm25_ranking")
        """
        self.con.execute(f"SET perfect_ht_threshold = {perfect_hash_bits(self.con)}")
        try:
            yield
        finally:
            self.con.execute(f"SET perfect_ht_threshold = {PERFECT_HASH_DEFAULT_BITS}")

    # -- labels and the gate ------------------------------------------------------------------
    def attached(self) -> set[str]:
        """Names of the attached catalogs."""
        return {row[0] for row in self.sql("SELECT database_name FROM duckdb_databases()")}

    @contextmanager
    def labels(self) -> Iterator[str]:
        """Attach the labels file read-write as catalog `labels` for the block (loaders only)."""
        if "gate" in self.attached():
            self.close_gate()
        self.con.execute(f"ATTACH '{_quote(self.labels_path)}' AS labels")
        try:
            self.con.execute("USE labels")
            self.con.execute(read_sql("labels.sql"))
            self.con.execute(f"USE {self.catalog}")
            yield "labels"
        finally:
            self.con.execute(f"USE {self.catalog}")
            self.con.execute("DETACH labels")

    def studies(self) -> list[str]:
        """The studies this warehouse holds (registered by `rankhouse study prepare`)."""
        if not self.table_exists("meta.studies"):
            return []
        return [row[0] for row in self.sql("SELECT study FROM meta.studies ORDER BY study")]

    def open_gate(self, verified_freeze: str | None = None) -> None:
        """Attach the labels file read-only as catalog `gate` (creating an empty one if missing).

        A warehouse that holds a study opens its labels only for a freeze that has just verified
        (`rankhouse study evaluate` passes its id); anything else is refused.
        """
        if "gate" in self.attached():
            return
        held = self.studies()
        if held and verified_freeze is None:
            raise RankhouseError(
                f"this warehouse holds study {', '.join(held)}: its labels open only through "
                "`rankhouse study evaluate`, after the study's freeze verifies"
            )
        if not Path(self.labels_path).exists():
            with self.labels():
                pass
        self.con.execute(f"ATTACH '{_quote(self.labels_path)}' AS gate (READ_ONLY)")

    def lock_down(self) -> None:
        """No files, no ATTACH, no settings changes from here on (for analysts' queries and shells)."""
        self.con.execute("SET enable_external_access = false")
        self.con.execute("SET lock_configuration = true")

    def close_gate(self) -> None:
        """Detach the `gate` catalog if it is attached."""
        if "gate" in self.attached():
            self.con.execute("DETACH gate")

    def close(self) -> None:
        """Close the connection and remove a throw-away labels file."""
        self.con.close()
        if self._tmpdir:
            shutil.rmtree(self._tmpdir, ignore_errors=True)

    def __enter__(self) -> Warehouse:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


PERFECT_HASH_ENTRY_BYTES = 40  # a sum's state (at most a flag and a 128-bit integer, padded), an is-set byte
PERFECT_HASH_DEFAULT_BITS = 12  # DuckDB's own perfect_ht_threshold


def perfect_hash_bits(con: duckdb.DuckDBPyConnection, share_of_memory: float = 0.25) -> int:
    """The largest key width (in bits) for which DuckDB may aggregate into a directly indexed array
    (a "perfect hash" group-by) instead of a hash table, bounded so that every thread's array fits in a
    quarter of physical memory; 12 (DuckDB's default) to 26. BM25 needs 26 bits (12 + 14) for
    BANKING77's 30.8M (query, document) pairs. The array is allocated whole for each thread, whatever the number
    of groups: a GROUP BY of 1,000 rows over BANKING77's ids takes 1.6 s with it, 1.5 ms without, so
    only statements that compute a model marked `aggregate: array` get it (array_aggregates).

    >>> perfect_hash_bits(duckdb.connect()) >= 12
    True
    """
    threads = int(con.execute("SELECT current_setting('threads')").fetchall()[0][0])
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    entries = memory * share_of_memory / (threads * PERFECT_HASH_ENTRY_BYTES)
    return max(12, min(26, int(math.log2(entries))))


def _quote(text: str) -> str:
    return text.replace("'", "''")
