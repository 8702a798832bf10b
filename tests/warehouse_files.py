"""A warehouse's files as a test (or an attacker) sees them, without rankhouse: their bytes, and a plain
DuckDB connection to all of them (rankhouse/warehouse/layout.py says which files a warehouse has)."""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from rankhouse.warehouse.layout import Layout, quoted


def files_of(db: str | Path) -> dict[str, Path]:
    """Every published file of the warehouse at `db`, by its path relative to the warehouse's folder: the
    inputs file, each namespace, store and labels file, and the freeze files."""
    layout = Layout.of(db)
    found = {Path(db).name: Path(db)} if Path(db).exists() else {}
    for folder, pattern in ((layout.studies, "*.duckdb"), (layout.store, "*.duckdb"), (layout.labels, "*.duckdb"),
                            (layout.freezes, "*.json")):  # fmt: skip
        for path in sorted(folder.glob(pattern)) if folder.is_dir() else []:
            if ".building." not in path.name:
                found[str(path.relative_to(Path(db).parent))] = path
    return found


def copy_warehouse(db: str | Path, to: str | Path) -> Path:
    """Copy the warehouse at `db` (its inputs file and its folder, freezes included; not its locks, scratch
    or building copies) to `to`: what a user does to keep or move one (docs/gate.md)."""
    source, target = Layout.of(db), Layout.of(to)
    shutil.copyfile(db, to)
    shutil.copytree(source.home, target.home, ignore=shutil.ignore_patterns("locks", "work", "building"))
    return Path(to)


def state(db: str | Path) -> dict[str, str]:
    """The SHA-256 of every published file of the warehouse: a command that refuses leaves it equal."""
    return {name: hashlib.sha256(path.read_bytes()).hexdigest() for name, path in files_of(db).items()}


@contextmanager
def plain(db: str | Path, namespace: str = "default", read_only: bool = False,
          labels: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:  # fmt: skip
    """A plain DuckDB connection (no rankhouse) with every published file of the warehouse attached under the
    names rankhouse gives them (inputs, store_<id>, each namespace by its name; with `labels`, the labels
    file of `namespace` as gate), names resolved as in `namespace`: what an analyst, or an attacker, with
    the duckdb package can do to the files."""
    layout = Layout.of(db)
    mode = " (READ_ONLY)" if read_only else ""
    con = duckdb.connect()
    try:
        con.execute(f"ATTACH '{Path(db).resolve()}' AS inputs{mode}")
        for segment in layout.segments():
            con.execute(f"ATTACH '{layout.segment_file(segment).resolve()}' AS store_{segment}{mode}")
        for name in layout.namespaces():
            con.execute(f"ATTACH '{layout.namespace_file(name).resolve()}' AS {quoted(name)}{mode}")
        path = [f"{quoted(namespace)}.{schema}" for schema in ("main", "models", "raw", "results", "meta")]
        path += ["inputs.main", "inputs.meta"] + (["inputs.raw"] if namespace == "default" else [])
        if labels:
            con.execute(f"ATTACH '{layout.labels_file(namespace).resolve()}' AS gate{mode}")
            path += ["gate.main", "gate.models", "gate.meta"]
        if namespace in layout.namespaces():
            con.execute(f"USE {quoted(namespace)}")
        else:  # no file of it yet: names resolve in the inputs
            path = [entry for entry in path if entry.startswith(("inputs.", "gate."))] + ["inputs.raw"]
            con.execute("USE inputs")
        con.execute(f"SET search_path = '{','.join(dict.fromkeys(path))}'")
        yield con
    finally:
        con.close()


def store_table(con: duckdb.DuckDBPyConnection, namespace: str, model: str) -> str:
    """The store table a namespace's table model reads (its view's definition names it), qualified."""
    sql = con.execute(
        "SELECT sql FROM duckdb_views() WHERE database_name = ? AND schema_name = 'models' AND view_name = ?",
        [namespace, model],
    ).fetchall()[0][0]
    return sql.split(" FROM ", 1)[1].rstrip(";").strip()
