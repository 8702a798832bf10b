"""Source bookkeeping shared by every loader: file hashes and meta.sources rows."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from rankhouse.errors import InputError
from rankhouse.warehouse import Warehouse


@dataclass(frozen=True)
class LoadResult:
    """What a load did: `loaded`, `replaced` (same name, new bytes) or `unchanged` (a no-op)."""

    table: str
    name: str
    path: str
    sha256: str
    rows: int
    status: str

    def __str__(self) -> str:
        if self.status == "unchanged":
            return f"{self.path}: already loaded as {self.name} in {self.table} (same bytes); nothing to do"
        return f"{self.path}: {self.status} {self.rows} rows into {self.table} as {self.name}"


def read_file(path: str | Path) -> bytes:
    """The bytes of a file, with an error that names it when it cannot be read."""
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise InputError(path, 0, "cannot read the file", exc.strerror or str(exc)) from None


def sha256_bytes(data: bytes) -> str:
    """Hex SHA-256 of some bytes."""
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: str | Path) -> str:
    """Hex SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def loaded_sha(wh: Warehouse, meta: str, table: str, name: str) -> str | None:
    """The SHA-256 recorded for (table, name) in a meta.sources table, if any."""
    rows = wh.sql(f"SELECT sha256 FROM {meta} WHERE table_name = ? AND name = ?", [table, name])
    return rows[0][0] if rows else None


def record_source(
    wh: Warehouse, meta: str, table: str, name: str, path: str | Path, sha: str, rows: int, loader: str
) -> None:
    """Insert or replace the meta.sources row of (table, name); call inside the load's transaction."""
    wh.sql(f"DELETE FROM {meta} WHERE table_name = ? AND name = ?", [table, name])
    wh.sql(
        f"INSERT INTO {meta} VALUES (?, ?, ?, ?, ?, ?, current_localtimestamp())",
        [table, name, str(path), sha, rows, loader],
    )


def replace_named_rows(
    wh: Warehouse, table: str, key_column: str, name: str, rows: pa.Table,
    meta: str, source_table: str, path: str | Path, sha: str, loader: str,
) -> None:  # fmt: skip
    """One transaction: `table`'s rows whose `key_column` is `name` replaced by `rows` (its columns in
    the table's order), and the source recorded in `meta` under `source_table`."""
    wh.con.register("rh_replacement", rows)
    try:
        with wh.transaction():
            wh.sql(f"DELETE FROM {table} WHERE {key_column} = ?", [name])
            wh.sql(f"INSERT INTO {table} SELECT * FROM rh_replacement")
            record_source(wh, meta, source_table, name, path, sha, rows.num_rows, loader)
    finally:
        wh.con.unregister("rh_replacement")
