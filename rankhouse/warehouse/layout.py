"""Where a warehouse's files are, and what each file is.

A warehouse is a set of DuckDB files, named after the file `--db` gives (`rankhouse.duckdb`):

    rankhouse.duckdb          the inputs: every loaded and generated table (raw.*), shared by all studies,
                              and what was loaded (meta.sources); the file `--db` names
    rankhouse.d/
      studies/<study>.duckdb  a study's namespace: its models (views), its results, its freezes and runs;
                              `default.duckdb` is the namespace of commands run outside a study
      store/<id>.duckdb       model tables, named by fingerprint and shared by every study that builds the
                              same model from the same data; a file is written once, by one build
      labels/<study>.duckdb   a study's labels and the evaluate tables made from them (never in the files above)
      freezes/<study>-<n>.json, out/<study>/   a study's freeze files and default outputs
      attach.sql              the ATTACH statements that show it all to a plain DuckDB client
      cache/row_digests.json  row digests of frozen tables, kept while their files stay as they were
      building/, work/, locks/  copies being written, per-process scratch space, writers' locks

Every file carries `meta.layout` (kind, warehouse id, namespace), so that no command takes a labels,
namespace or store file for a warehouse, and no file of one warehouse for another's. A file is also
known by its device and inode: a hard or symbolic link to one of a warehouse's files is the same file.

    >>> Layout.of("/data/rankhouse.duckdb").namespace_file("banking77")
    PosixPath('/data/rankhouse.d/studies/banking77.duckdb')
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rankhouse.errors import RankhouseError
from rankhouse.paths import read_sql

if TYPE_CHECKING:
    import duckdb

MEMORY = ":memory:"
DEFAULT_DB = "rankhouse.duckdb"  # the warehouse a command opens without --db
LAYOUT_VERSION = 2  # 1: the single file of rankhouse 0.1 (models, results and meta of every study in one)
DEFAULT_NAMESPACE = "default"  # the namespace of commands run outside a study (`rankhouse run`, `load`, `eval`)
KINDS = ("warehouse", "namespace", "store", "labels")
# Catalog names a session attaches besides the namespaces, which a study may therefore not be called.
RESERVED = {"inputs", "gate", "memory", "system", "temp", "main"}
STUDY_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
KIND_SQL = {"warehouse": "warehouse.sql", "namespace": "namespace.sql", "labels": "labels.sql", "store": None}


def schema_ddl(kind: str) -> str:
    """The DDL of a file of `kind` (sql/): layout.sql's meta.layout, which every file has, then the
    kind's own tables (a store file has none: its tables are the models'), then, in the inputs file and
    the labels files, every registered study's own tables (rankhouse/registry.py Tables), by study name.

    >>> "meta.layout" in schema_ddl("store") and "meta.sources" in schema_ddl("warehouse")
    True
    """
    from rankhouse.registry import Tables, entries

    own = KIND_SQL[kind]
    ddl = read_sql("layout.sql") + ("\n" + read_sql(own) if own else "")
    if kind in ("warehouse", "labels"):
        studies = entries(Tables)
        ddl += "".join("\n" + studies[name].ddl(kind) for name in sorted(studies))
    return ddl


def check_namespace(name: str) -> str:
    """A study's name as a namespace: letters, digits, `_` and `-` (not first), and not a name a session
    attaches for itself.

    >>> check_namespace("trec_sample")
    'trec_sample'
    """
    if not STUDY_NAME.match(name):
        raise RankhouseError(
            f"study name {name!r}: letters, digits, - and _ only, starting with a letter or _ (it names the "
            "study's namespace in the warehouse)"
        )
    if name.lower() in RESERVED:
        raise RankhouseError(f"study name {name!r} is reserved (the warehouse attaches a catalog of that name)")
    return name


def quoted(name: str) -> str:
    """An identifier in double quotes (a study name may hold `-`).

    >>> quoted("trec-sample")
    '"trec-sample"'
    """
    return '"' + name.replace('"', '""') + '"'


@dataclass(frozen=True)
class Layout:
    """The paths of one warehouse's files (see the module's docstring); `:memory:` keeps them under a
    throw-away folder, `home`, and its catalogs in memory."""

    inputs: str  # the --db path, or ":memory:"
    home: Path

    @classmethod
    def of(cls, db: str | Path, scratch: Path | None = None) -> Layout:
        """The layout of the warehouse at `db` (`scratch`: the throw-away home of a `:memory:` one)."""
        db = str(db)
        if db == MEMORY:
            if scratch is None:
                raise ValueError("a :memory: warehouse needs a scratch folder")
            return cls(MEMORY, scratch)
        path = Path(db).absolute()
        stem = path.name[: -len(".duckdb")] if path.name.endswith(".duckdb") else path.name
        return cls(str(path), path.parent / f"{stem}.d")

    @property
    def in_memory(self) -> bool:
        return self.inputs == MEMORY

    @property
    def studies(self) -> Path:
        return self.home / "studies"

    @property
    def store(self) -> Path:
        return self.home / "store"

    @property
    def labels(self) -> Path:
        return self.home / "labels"

    @property
    def freezes(self) -> Path:
        return self.home / "freezes"

    @property
    def out(self) -> Path:
        return self.home / "out"

    @property
    def building(self) -> Path:
        return self.home / "building"

    @property
    def locks(self) -> Path:
        return self.home / "locks"

    @property
    def cache(self) -> Path:
        return self.home / "cache"

    def work(self) -> Path:
        """This process's scratch folder (spill space, copies of labels it opens), removed when it closes."""
        return self.home / "work" / f"{os.getpid()}-{os.urandom(4).hex()}"

    def namespace_file(self, namespace: str) -> Path:
        return self.studies / f"{namespace}.duckdb"

    def labels_file(self, namespace: str) -> Path:
        return self.labels / f"{namespace}.duckdb"

    def namespaces(self) -> list[str]:
        """The namespaces with a published file, sorted."""
        if self.in_memory or not self.studies.is_dir():
            return []
        return sorted(p.name[: -len(".duckdb")] for p in self.studies.glob("*.duckdb") if not p.name.startswith("."))

    def segments(self) -> list[str]:
        """The ids of the sealed store files (written whole, never written again), sorted."""
        if self.in_memory or not self.store.is_dir():
            return []
        return sorted(p.name[: -len(".duckdb")] for p in self.store.glob("*.duckdb") if "." not in p.name[:-7])

    def segment_file(self, segment: str, building: bool = False) -> Path:
        return self.store / (f"{segment}.building.duckdb" if building else f"{segment}.duckdb")


@dataclass(frozen=True)
class FileKind:
    """What a DuckDB file is, read from its `meta.layout` (version 2) or recognised as rankhouse 0.1's
    warehouse (version 1) or labels file."""

    kind: str  # warehouse | namespace | store | labels | other
    version: int
    warehouse_id: str | None = None
    namespace: str | None = None


def identify(path: str | Path, con: duckdb.DuckDBPyConnection | None = None) -> FileKind | None:
    """The kind of the DuckDB file at `path` (None if there is no file), read without writing to it (in
    `con`, attached and detached again, or in a connection of its own); a file that is not DuckDB's is
    refused.

    Example: identify("rankhouse.d/labels/banking77.duckdb") gives FileKind('labels', 2, '3f2a...', 'banking77').
    """
    path = Path(path)
    if not path.exists():
        return None
    if not path.is_file():
        raise RankhouseError(f"{path} is not a file")
    import duckdb

    own = con is None
    con = duckdb.connect() if own else con
    try:
        con.execute(f"ATTACH '{_quote(str(path))}' AS probe (READ_ONLY)")
        tables = {
            (schema, table)
            for schema, table in con.execute(
                "SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = 'probe'"
            ).fetchall()
        }
        if ("meta", "layout") in tables:
            row = con.execute("SELECT kind, version, warehouse_id, namespace FROM probe.meta.layout").fetchall()
            if row:
                return FileKind(*row[0])
        if ("meta", "owner") in tables and ("main", "qrels") in tables:
            owner = con.execute("SELECT warehouse_id, study FROM probe.meta.owner ORDER BY study").fetchall()
            return FileKind("labels", 1, owner[0][0] if owner else None, owner[0][1] if owner else None)
        if ("meta", "warehouse") in tables:
            row = con.execute("SELECT id FROM probe.meta.warehouse").fetchall()
            return FileKind("warehouse", 1, row[0][0] if row else None)
        return FileKind("other", 0)
    except duckdb.IOException as exc:
        if "lock" in str(exc).lower():
            raise RankhouseError(f"{path} is in use by another process that writes it: {exc}") from None
        raise RankhouseError(f"{path} is not a DuckDB file rankhouse can read: {str(exc).splitlines()[0]}") from None
    except duckdb.Error as exc:
        raise RankhouseError(f"{path} is not a DuckDB file rankhouse can read: {str(exc).splitlines()[0]}") from None
    finally:
        if own:
            con.close()
        elif "probe" in {name for (name,) in con.execute("SELECT database_name FROM duckdb_databases()").fetchall()}:
            con.execute("DETACH probe")


def file_identity(path: str | Path) -> tuple[int, int] | None:
    """(device, inode) of the file at `path` after following links, or None if there is none."""
    try:
        found = os.stat(path)
    except FileNotFoundError:
        return None
    return found.st_dev, found.st_ino


def described(kind: FileKind, path: str | Path) -> str:
    """A file's kind in words, for a refusal.

    >>> described(FileKind("labels", 2, "x", "banking77"), "l.duckdb")
    'l.duckdb is the labels file of study banking77'
    """
    if kind.kind == "labels":
        return f"{path} is the labels file of study {kind.namespace}"
    if kind.kind == "namespace":
        return f"{path} is the namespace file of study {kind.namespace}"
    if kind.kind == "store":
        return f"{path} is a store file of model tables"
    return f"{path} is a {kind.kind} file"


def _quote(text: str) -> str:
    return text.replace("'", "''")
