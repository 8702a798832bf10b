"""Row digests of frozen tables (freeze.py's `quick`), and the warehouse's record of those taken before, used
again while the file that holds a table is provably the file they were taken from.

A verification takes every frozen table's row digest: one scan each, a second for BANKING77's 60 million
ranked rows, every `study status` and every evaluate. The rows cannot change unless the DuckDB file that
holds them does, so `RowDigests` keeps, in `<db>.d/cache/row_digests.json`, each table's digest and row
count with what identifies that file's state, and takes the digest again whenever any of it differs:

- the object the name resolves to: a table, or a view of exactly `SELECT * FROM <catalog>.<schema>.<table>`,
  optionally `WHERE` and a condition made of the table's columns compared with text (`=`), AND, OR,
  parentheses, true and false (a study's models over the store, its slice of the inputs), with the view's
  definition as the catalog holds it; a view defined otherwise (that joins, calls a function, reads
  another view or the clock) is never cached;
- the file of the table's catalog: its path, device, inode, size, and modification and status-change
  times in nanoseconds (a write changes the times; the status-change time cannot be set back by anyone
  but the clock's owner, and a file put in its place is another inode or a later time). A file with a
  write-ahead log beside it (`.wal`: changes not yet checkpointed) is never cached;
- DuckDB's version (its hash function is the digest's), rankhouse's, and the session's collation.

A digest is recorded only when the file's times are two seconds old or more when it is taken and the file
is the same after the scan: a write in the same tick of the file system's clock as the last one, which
would leave the times as they were, cannot follow a recorded state. A record that cannot be read, is not
JSON, or is not what this module writes is ignored (and replaced); a folder that cannot be written only
loses the record. `--full` reads no record. The record is rankhouse's own: the gate's threat model
(docs/gate.md, "What the gate cannot do") counts writing it by hand with rewriting the warehouse's records.

    >>> digests = RowDigests(wh); digests.take("models.bm25_ranking", wh.resolve("models.bm25_ranking"))
    ('3b0f...', 30809240)
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import time
from typing import TYPE_CHECKING

import duckdb

import rankhouse

if TYPE_CHECKING:
    from rankhouse.warehouse.connection import Warehouse

NAME = r'(?:[A-Za-z_][A-Za-z0-9_]*|"[^"]+")'  # a name as DuckDB writes it in a view's definition
# The views whose rows are a table's, or a slice of it by its columns' text: a model over its store table, a
# study's slice of a raw table (ledger.py). Anything else is not cached.
PLAIN_VIEW = re.compile(
    rf"CREATE VIEW {NAME}\.{NAME} AS SELECT \* FROM (?P<catalog>{NAME})\.(?P<schema>{NAME})\.(?P<table>{NAME})"
    r"(?: WHERE (?P<where>.+))?;",
    re.DOTALL,
)
# The tokens of a slice's condition: parentheses, AND, OR, true, false, and a column compared with text.
CONDITION = re.compile(rf"\s*(?:\(|\)|AND\b|OR\b|true\b|false\b|(?P<column>{NAME}) = '(?:[^']|'')*')")
# Names DuckDB reads as the session's or the clock's values, not as a column, when they are not quoted.
SPECIAL = {"current_date", "current_time", "current_timestamp", "localtime", "localtimestamp", "current_user",
           "session_user", "user", "current_role", "current_catalog", "current_schema"}  # fmt: skip
SETTLED_NS = 2_000_000_000  # a file's times must be this old for a digest of it to be recorded
FORMAT = 1  # of the record


def row_digest_and_count(wh: Warehouse, table: str) -> tuple[str, int]:
    """(the row digest of `table`, its row count): a table name or a parenthesised query; one scan.

    >>> row_digest_and_count(wh, "raw.resample_plans")  # doctest: +SKIP
    ('3b0f...', 20000)
    """
    described = wh.sql(f"DESCRIBE SELECT * FROM {table}")
    rows, total, xor = wh.sql(
        f"SELECT count(*), coalesce(sum(hash(rh_row)::HUGEINT), 0), coalesce(bit_xor(hash(rh_row)), 0) "
        f"FROM {table} AS rh_row"
    )[0]
    columns = "".join(f"{name}\t{kind}\n" for name, kind, *_ in described)
    return hashlib.sha256(f"{columns}{rows}\t{total}\t{xor}".encode()).hexdigest(), int(rows)


class RowDigests:
    """The row digests of one verification (or freeze) on `wh`: recorded ones where the table's file is the
    one they were taken from, the others taken now and recorded by `save()`."""

    def __init__(self, wh: Warehouse) -> None:
        self.wh = wh
        self.path = None if wh.layout.in_memory else wh.layout.cache / "row_digests.json"
        self.entries = self._read()
        self.changed = False
        self._catalog: tuple[dict, dict, dict, str] | None = None  # views, files, columns, collation: read once

    def _read(self) -> dict[str, dict]:
        if self.path is None:
            return {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("tables"), dict):
            return {}
        return {table: entry for table, entry in data["tables"].items() if _well_formed(entry)}

    def take(self, table: str, resolved: tuple[str, str, str]) -> tuple[str, int]:
        """(row digest, row count) of `table`, which resolves to `resolved` (Warehouse.resolve): the
        recorded one if its file is the one it was taken from, else taken now (and recorded if it can be)."""
        state, settled = self._state(resolved)
        entry = self.entries.get(table)
        if state is not None and entry is not None and entry["state"] == state:
            return entry["quick"], entry["rows"]
        quick, rows = row_digest_and_count(self.wh, table)
        if state is not None and settled and self._state(resolved) == (state, settled):
            self.entries[table] = {"state": state, "quick": quick, "rows": rows}
            self.changed = True
        return quick, rows

    def _state(self, resolved: tuple[str, str, str]) -> tuple[dict | None, bool]:
        """What identifies the rows `resolved` names (see the module's docstring), or None if they cannot
        be cached (a view of another kind, a catalog in memory, a file with a write-ahead log); and whether
        the file's times are old enough for a digest taken now to be recorded."""
        views, files, columns, collation = self._catalog_of_session()
        catalog, schema, name = resolved
        definition = views.get((catalog, schema, name))
        if definition is not None:
            plain = PLAIN_VIEW.fullmatch(definition.strip())
            if plain is None:
                return None, False
            catalog, schema, name = (_unquoted(part) for part in plain.group("catalog", "schema", "table"))
            if plain.group("where") and not _slice(plain.group("where"), columns.get((catalog, schema, name), set())):
                return None, False
        found = files.get((catalog, schema, name))
        if not found or found == ":memory:":
            return None, False
        path = os.path.realpath(found)
        try:
            if os.path.lexists(f"{path}.wal"):
                return None, False
            stat = os.stat(path)
        except OSError:
            return None, False
        settled = max(stat.st_mtime_ns, stat.st_ctime_ns) <= time.time_ns() - SETTLED_NS
        state = {
            "view": definition, "table": [catalog, schema, name], "file": path, "device": stat.st_dev,
            "inode": stat.st_ino, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "ctime_ns": stat.st_ctime_ns,
            "duckdb": duckdb.__version__, "rankhouse": rankhouse.__version__, "collation": collation,
        }  # fmt: skip
        return state, settled

    def _catalog_of_session(self) -> tuple[dict, dict, dict, str]:
        """The session's views (their definitions), its tables (the file of each one's catalog) and their
        columns, and its collation, read once for all the tables of a verification."""
        if self._catalog is None:
            views = {(d, s, n): sql for d, s, n, sql in self.wh.sql(
                "SELECT database_name, schema_name, view_name, sql FROM duckdb_views() WHERE NOT internal"
            )}  # fmt: skip
            files = {(d, s, n): path for d, s, n, path in self.wh.sql(
                "SELECT t.database_name, t.schema_name, t.table_name, d.path FROM duckdb_tables() AS t "
                "JOIN duckdb_databases() AS d USING (database_name)"
            )}  # fmt: skip
            columns: dict[tuple[str, str, str], set[str]] = {}
            for d, s, n, column in self.wh.sql(
                "SELECT database_name, schema_name, table_name, column_name FROM duckdb_columns()"
            ):
                columns.setdefault((d, s, n), set()).add(column)
            collation = self.wh.sql("SELECT current_setting('default_collation')")[0][0]
            self._catalog = views, files, columns, collation
        return self._catalog

    def save(self) -> None:
        """Record the digests taken since the record was read (written whole, then renamed into place)."""
        if not self.changed or self.path is None:
            return
        data = json.dumps({"format": FORMAT, "tables": self.entries}, sort_keys=True)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".row_digests.", suffix=".tmp")
            try:
                with os.fdopen(handle, "w", encoding="utf-8") as out:
                    out.write(data)
                os.replace(temporary, self.path)
            except BaseException:
                os.unlink(temporary)
                raise
        except OSError:
            return
        self.changed = False


def _unquoted(name: str) -> str:
    return name[1:-1] if name.startswith('"') else name


def _slice(condition: str, columns: set[str]) -> bool:
    """Whether a view's condition is made only of the table's `columns` compared with text, AND, OR,
    parentheses, true and false (as a study's slice of the inputs is: ledger.py).

    >>> _slice("((a = 'x') OR (b = 'it''s'))", {"a", "b"}), _slice("(current_date = 'x')", {"a"})
    (True, False)
    """
    position = 0
    while position < len(condition):
        token = CONDITION.match(condition, position)
        if token is None:
            return False
        column = token.group("column")
        if column is not None and (column.lower() in SPECIAL or _unquoted(column) not in columns):
            return False
        position = token.end()
    return True


def _well_formed(entry: object) -> bool:
    """Whether a recorded entry is one this module writes: a state, a digest and a row count."""
    return (
        isinstance(entry, dict)
        and isinstance(entry.get("state"), dict)
        and isinstance(entry.get("quick"), str)
        and isinstance(entry.get("rows"), int)
        and not isinstance(entry.get("rows"), bool)
    )
