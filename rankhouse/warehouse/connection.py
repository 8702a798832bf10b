"""A warehouse session: one DuckDB connection over a warehouse's files, a namespace, and the gate.

The connection holds no data of its own: it attaches the warehouse's files (layout.py) as catalogs:

    inputs        the inputs file (`--db`): raw.* and meta.sources, shared by every study
    store_<id>    the store files: model tables by fingerprint (`<model>__<fingerprint>`)
    "<study>"     the namespace in use (`default` outside a study): models.* (views), raw.* (a study's
                  slice of the inputs, views), results.*, meta.* (runs, freezes, evaluations)
    gate          the namespace's labels, and the evaluate models built from them (gate.models.*), once
                  opened: only for a study whose latest freeze has just verified

and resolves names so that SQL written against `models.x`, `raw.x`, `results.x`, `meta.x` and `gate.x`
reads the namespace in use (USE and search_path). A view stored in a namespace reads `models.*` and
`raw.*` of its own namespace, whoever reads it.

Files are never written in place (files.py): a session that writes a namespace holds its lock and
works on a building copy, published (renamed over the published file) at `publish()` and `close()`;
the inputs are written the same way inside `writing_inputs()`; a model table goes to a new store file,
sealed when the namespace is published. Readers (`read_only=True`) attach the published files and are
never locked out by a writer. The connection opens no file on its own behalf once set up: DuckDB's
file access is off but for the warehouse's store, namespace and building folders and this process's
scratch folder; labels are attached only as a copy made for the gate. Loaders read files in `files`, a
separate connection, and label loaders write through `labels()`, another one.

    >>> wh = Warehouse(":memory:")
    >>> wh.sql("SELECT count(*) FROM raw.runs")
    [(0,)]
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import sys
import tempfile
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import duckdb

from rankhouse.errors import GateError, RankhouseError
from rankhouse.warehouse import files
from rankhouse.warehouse.layout import (
    DEFAULT_DB,
    DEFAULT_NAMESPACE,
    LAYOUT_VERSION,
    MEMORY,
    FileKind,
    Layout,
    check_namespace,
    described,
    file_identity,
    identify,
    quoted,
    schema_ddl,
)
from rankhouse.warehouse.memory import PERFECT_HASH_DEFAULT_BITS, array_aggregate_settings, memory_limit

INPUTS = "inputs"
GATE = "gate"
MEMORY_STORE = "store_memory"  # the one store catalog of an in-memory warehouse
NO_AUTOMATIC_CHECKPOINT = "1000TB"  # DuckDB's checkpoint_threshold where none should ever be reached
CREATE_TABLE = re.compile(r"CREATE TABLE IF NOT EXISTS ([\w.]+)", re.IGNORECASE)


@dataclass(frozen=True)
class LabelsOwner:
    """A row of a labels file's meta.owner: the warehouse (id and path) and study it belongs to."""

    warehouse_id: str
    warehouse: str
    study: str


def labels_path_for(db: str | Path, namespace: str = DEFAULT_NAMESPACE) -> str:
    """The labels file of a namespace of the warehouse at `db` (layout.py).

    >>> labels_path_for("/data/study.duckdb", "trec_sample")
    '/data/study.d/labels/trec_sample.duckdb'
    """
    return str(Layout.of(db, Path(tempfile.gettempdir())).labels_file(namespace))


def no_progress_bar(con: duckdb.DuckDBPyConnection) -> None:
    """Turn DuckDB's progress bar off where it is on. In a Jupyter kernel without ipywidgets it is off
    already, and DuckDB refuses any change of the setting (even to false): it is then left alone. (The
    setting is fetched whole: DuckDB 2 refuses other work on a connection whose result is left open.)"""
    if con.execute("SELECT current_setting('enable_progress_bar')").fetchall()[0][0]:
        con.execute("SET enable_progress_bar = false")


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


def old_layout_message(path: str) -> str:
    """Why a warehouse file of rankhouse 0.1 is refused, and how to carry its studies over."""
    return (
        f"{path} was made by rankhouse 0.1, which kept every study's models, results and freezes in one file; "
        "this rankhouse keeps each study in a namespace of its own (docs/gate.md). Carry it over once with "
        f"`rankhouse migrate --db {path}` (its studies, freezes and results move into the new layout and its "
        "freezes still verify), or run each study again in a new warehouse: rankhouse study run PROTOCOL --db NEW"
    )


class Warehouse:
    """A session on a warehouse (`:memory:` for a throw-away one) in one namespace.

    `read_only` sessions attach the published files and write nothing; the others may write the
    namespace in use (its lock held until they switch or close) and, inside `writing_inputs()`, the
    inputs. `default_memory_limit` is DuckDB's memory_limit where $RANKHOUSE_MEMORY_LIMIT is not set
    (memory.py). `say` hears notes (a wait for another writer, an interrupted run carried on).
    """

    def __init__(
        self,
        path: str | Path = DEFAULT_DB,
        read_only: bool = False,
        default_memory_limit: str | None = None,
        namespace: str = DEFAULT_NAMESPACE,
        say: Callable[[str], None] | None = None,
    ) -> None:
        self.path = str(path)
        self.read_only = read_only
        self.writable = not read_only
        self.say = say or _stderr
        self._memory_limit = memory_limit(default_memory_limit)  # refused before anything is opened
        self._scratch = tempfile.mkdtemp(prefix="rankhouse-") if self.path == MEMORY else None
        self.layout = Layout.of(self.path, Path(self._scratch) if self._scratch else None)
        self.con = duckdb.connect()  # also the one the inputs file is identified in: one DuckDB instance
        self._main_con = self.con
        try:
            self._check_inputs_file()
        except BaseException:
            self.con.close()
            raise
        self.work = self.layout.work()
        self._files: duckdb.DuckDBPyConnection | None = None
        self.namespace: str = ""
        self._namespace_lock: files.WriterLock | None = None
        self._inputs_depth = 0
        self._inputs_lock: files.WriterLock | None = None
        self._segment: str | None = None
        self._gate_copy: Path | None = None
        self._gate_writable = False
        self._resolving_inputs = False
        self._unborn = False  # a new warehouse whose inputs file is not written yet
        try:
            self._open(namespace)
        except BaseException:
            self.close()
            raise

    # -- opening --------------------------------------------------------------------------------------
    def _check_inputs_file(self) -> None:
        """Refuse a --db that is not a warehouse's inputs file (a labels, namespace or store file, a file of
        rankhouse 0.1, or another DuckDB file), before anything is opened or written."""
        if self.layout.in_memory:
            return
        kind = identify(self.path, self.con)
        if kind is None:
            if self.read_only:
                raise RankhouseError(f"no warehouse at {self.path}")
            return
        if kind.kind == "warehouse" and kind.version == LAYOUT_VERSION:
            return
        if kind.kind == "warehouse":
            raise RankhouseError(old_layout_message(self.path))
        if kind.kind == "other":
            raise RankhouseError(f"{self.path} is a DuckDB file that is not a rankhouse warehouse")
        raise RankhouseError(f"{described(kind, self.path)}, not a warehouse: open its warehouse instead")

    def _open(self, namespace: str) -> None:
        self.work.mkdir(parents=True, exist_ok=True)
        con = self.con
        no_progress_bar(con)  # rankhouse reports progress itself
        if self.layout.in_memory:
            # A throw-away warehouse is never written out: DuckDB's automatic checkpoints would only
            # recompress its tables in memory, time for no lower peak (docs/performance.md)
            con.execute(f"SET checkpoint_threshold = '{NO_AUTOMATIC_CHECKPOINT}'")
        self._limit_memory(con)
        self._forbid_files()
        self._attach_inputs()
        self.id = self.sql(f"SELECT id FROM {INPUTS}.meta.warehouse")[0][0]
        if self.layout.in_memory:
            self.con.execute(f"ATTACH ':memory:' AS {MEMORY_STORE}")
        else:
            for segment in self.layout.segments():
                self._attach_segment(segment)
        self.use(namespace)

    def _limit_memory(self, con: duckdb.DuckDBPyConnection) -> None:
        """Give `con` the memory limit of $RANKHOUSE_MEMORY_LIMIT, if set (memory.memory_limit)."""
        if self._memory_limit:
            con.execute(f"SET memory_limit = '{_quote(self._memory_limit)}'")

    def _forbid_files(self) -> None:
        """From here on, SQL on this connection opens no file but the warehouse's own label-free ones (the
        inputs file, the store, namespace and building folders) and this process's scratch folder (spill
        space, the gate's copy of the labels): not a labels file, not an input, not an export (models are
        built here). Loaders read files in `files`, a separate connection."""
        spill = self.work / "spill"
        allowed = [self.work]
        if not self.layout.in_memory:
            allowed += [self.layout.store, self.layout.studies, self.layout.building]
        for folder in allowed:
            folder.mkdir(parents=True, exist_ok=True)
        self.con.execute(f"SET temp_directory = '{_quote(str(spill.resolve()))}'")
        folders = ", ".join(f"'{_quote(str(folder.resolve()))}/'" for folder in allowed)
        self.con.execute(f"SET allowed_directories = [{folders}]")
        if not self.layout.in_memory:
            inputs = _quote(str(Path(self.path).resolve()))
            self.con.execute(f"SET allowed_paths = ['{inputs}', '{inputs}.wal']")
        self.con.execute("SET enable_external_access = false")
        self.con.execute("SET python_enable_replacements = false")  # no Python variables as tables either

    def _attach_inputs(self) -> None:
        if self.layout.in_memory:
            self.con.execute(f"ATTACH ':memory:' AS {INPUTS}")
            self._create_schema(INPUTS, "warehouse")
            self.con.execute(
                f"INSERT INTO {INPUTS}.meta.warehouse VALUES (?, current_localtimestamp())", [str(uuid.uuid4())]
            )
            self._mark(INPUTS, "warehouse", self.sql(f"SELECT id FROM {INPUTS}.meta.warehouse")[0][0], None)
            return
        if not Path(self.path).exists():  # a new warehouse: its file is made when something is first written
            self.con.execute(f"ATTACH ':memory:' AS {INPUTS}")
            self._create_schema(INPUTS, "warehouse")
            identity = _building_identity(self.layout.building / "inputs.duckdb") or str(uuid.uuid4())
            self.con.execute(f"INSERT INTO {INPUTS}.meta.warehouse VALUES (?, current_localtimestamp())", [identity])
            self._unborn = True
            return
        self.con.execute(f"ATTACH '{_quote(str(Path(self.path).resolve()))}' AS {INPUTS} (READ_ONLY)")

    def _create_schema(self, catalog: str, kind: str) -> None:
        """Run a file kind's DDL (sql/) in `catalog` (tables created if missing, columns added); the
        session's current catalog and search path are left as they were."""
        current, path = self.con.execute("SELECT current_database(), current_setting('search_path')").fetchone()
        self.con.execute(f"USE {catalog}")
        try:
            self.con.execute(schema_ddl(kind))
        finally:
            self.con.execute(f"USE {quoted(current)}")
            self.con.execute(f"SET search_path = '{_quote(path)}'")

    def _mark(self, catalog: str, kind: str, warehouse_id: str, namespace: str | None) -> None:
        """Record what a new file is (meta.layout), once."""
        if not self.sql(f"SELECT 1 FROM {catalog}.meta.layout"):
            self.con.execute(
                f"INSERT INTO {catalog}.meta.layout VALUES (?, ?, ?, ?, current_localtimestamp())",
                [kind, LAYOUT_VERSION, warehouse_id, namespace],
            )

    def _check_mark(self, catalog: str, kind: str, namespace: str | None, path: object) -> None:
        """Refuse a file whose meta.layout says it is another kind, another warehouse's or another
        namespace's (a link to another file, or a file copied in from elsewhere)."""
        rows = self.sql(f"SELECT kind, version, warehouse_id, namespace FROM {catalog}.meta.layout")
        found = FileKind(*rows[0]) if rows else FileKind("other", 0)
        if found.kind != kind or found.warehouse_id != self.id or (namespace and found.namespace != namespace):
            whose = "" if found.warehouse_id in (None, self.id) else f" of warehouse {found.warehouse_id}"
            raise RankhouseError(
                f"{described(found, path)}{whose}, where warehouse {self.path} keeps its {kind} file"
                f"{' of ' + namespace if namespace else ''}: rankhouse will not use it"
            )

    # -- namespaces -----------------------------------------------------------------------------------
    def use(self, namespace: str) -> None:
        """Make `namespace` (a study's name, or `default`) the one models.*, raw.*, results.* and meta.*
        resolve to; a writable session publishes the namespace it leaves and takes the new one's lock.

        >>> wh.use("trec_sample"); wh.sql("SELECT count(*) FROM meta.freezes")  # doctest: +SKIP
        """
        if namespace != DEFAULT_NAMESPACE:
            check_namespace(namespace)
        if namespace == self.namespace:
            return
        self.close_gate()
        if self.namespace:
            self._leave_namespace()
        self._enter_namespace(namespace)
        self.namespace = namespace
        self._resolve()

    @property
    def catalog(self) -> str:
        """The catalog of the namespace in use (its name, quoted as SQL needs it)."""
        return quoted(self.namespace)

    def _enter_namespace(self, namespace: str) -> None:
        alias = quoted(namespace)
        attached = self.attached()
        if self.layout.in_memory:
            if namespace not in attached:
                self.con.execute(f"ATTACH ':memory:' AS {alias}")
                self._create_schema(alias, "namespace")
                self._mark(alias, "namespace", self.id, namespace)
            return
        if namespace in attached:  # attached read-only by attach_namespaces
            self.con.execute(f"DETACH {alias}")
        published = self.layout.namespace_file(namespace)
        if self.read_only:
            if published.exists():
                self.con.execute(f"ATTACH '{_quote(str(published))}' AS {alias} (READ_ONLY)")
                self._check_mark(alias, "namespace", namespace, published)
            else:  # nothing of it built yet: an empty namespace
                self.con.execute(f"ATTACH ':memory:' AS {alias}")
                self._create_schema(alias, "namespace")
            return
        what = "the default namespace" if namespace == DEFAULT_NAMESPACE else f"study {namespace}"
        lock = files.WriterLock(self.layout.locks / f"namespace-{namespace}.lock", f"{what} of {self.path}")
        lock.acquire(self.say)
        self._namespace_lock = lock
        building = self.layout.building / f"{namespace}.duckdb"
        try:
            how = files.start_copy(published, building)
            self.con.execute(f"ATTACH '{_quote(str(building))}' AS {alias}")
            self._create_schema(alias, "namespace")
            if how == "new":
                self._mark(alias, "namespace", self.id, namespace)
            self._check_mark(alias, "namespace", namespace, published)
            if how == "resumed":
                self.say(f"carrying on from an interrupted run of {what} ({building})")
                self._seal_interrupted(alias)
        except BaseException:
            with suppress(duckdb.Error):
                self.con.execute(f"DETACH {alias}")
            lock.release()
            self._namespace_lock = None
            raise

    def _leave_namespace(self) -> None:
        """Publish the namespace in use (a writable session) and let the next writer in."""
        if self.layout.in_memory or self._namespace_lock is None:
            return
        alias = self.catalog
        self._seal_segment()
        published = self.layout.namespace_file(self.namespace)
        empty = not published.exists() and self._holds_nothing(alias)
        self.con.execute("USE memory")
        self.con.execute(f"CHECKPOINT {alias}")
        self.con.execute(f"DETACH {alias}")
        building = self.layout.building / f"{self.namespace}.duckdb"
        try:
            if empty:  # a namespace nothing was written to (a refused first command) leaves no file behind
                files.discard(building)
            else:
                self._ensure_inputs_file()
                files.publish(building, published)
        finally:
            self._namespace_lock.release()
            self._namespace_lock = None
        self._write_attach_script()

    def _holds_nothing(self, alias: str) -> bool:
        """Whether a namespace holds no object and no bookkeeping row (only its own meta.layout)."""
        objects = self.sql(
            "SELECT count(*) FROM duckdb_views() WHERE database_name = ? AND NOT internal",
            [alias.strip('"')],
        )[0][0]
        tables = [
            (schema, name)
            for schema, name in self.sql(
                "SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = ?", [alias.strip('"')]
            )
            if (schema, name) != ("meta", "layout")
        ]
        if objects or any(schema != "meta" for schema, _ in tables):
            return False
        return all(self.sql(f'SELECT count(*) FROM {alias}.meta."{name}"')[0][0] == 0 for _, name in tables)

    def publish(self) -> None:
        """Publish what this session wrote (the namespace, its store file, the labels it holds open) so
        that readers see it, and go on writing: a study's stages end with it."""
        if self.layout.in_memory or self.read_only:
            return
        gate = self._gate_copy is not None
        verified = self._gate_verified
        self.close_gate()
        namespace = self.namespace
        self._leave_namespace()
        self._enter_namespace(namespace)
        self._resolve()
        if gate:
            self.open_gate(verified_freeze=verified)

    def attach_namespaces(self) -> list[str]:
        """Attach every other published namespace read-only (an analyst's session, which may query every
        study: `FROM banking77.models.retrieval_metrics`); returns their names."""
        attached = self.attached()
        names = []
        for namespace in self.layout.namespaces():
            if namespace not in attached:
                path = self.layout.namespace_file(namespace)
                self.con.execute(f"ATTACH '{_quote(str(path))}' AS {quoted(namespace)} (READ_ONLY)")
                self._check_mark(quoted(namespace), "namespace", namespace, path)
            names.append(namespace)
        return names

    def namespaces(self) -> list[str]:
        """The namespaces of this warehouse (published, or in use)."""
        return sorted(set(self.layout.namespaces()) | ({self.namespace} if self.namespace else set()))

    def studies(self) -> list[str]:
        """The studies this warehouse holds: its namespaces but the default one."""
        return [name for name in self.namespaces() if name != DEFAULT_NAMESPACE]

    def frozen_sources(self) -> dict[tuple[str, str], str]:
        """The loads (table, name in meta.sources) that another namespace's latest freeze covers, each with
        that freeze's id: a load that would replace their rows with other bytes is refused (guard_source).
        Read from the published namespace files."""
        found: dict[tuple[str, str], str] = {}
        query = (
            "SELECT DISTINCT l.table_name, l.source_name, f.freeze_id FROM {ns}.meta.loads AS l, "
            "(SELECT freeze_id FROM {ns}.meta.freezes ORDER BY n DESC LIMIT 1) AS f WHERE l.source_name IS NOT NULL"
        )
        for namespace in self.namespaces():
            if namespace == self.namespace:
                continue
            if namespace in self.attached():
                rows = self.sql(query.format(ns=quoted(namespace)))
            else:
                side = duckdb.connect()
                try:
                    path = self.layout.namespace_file(namespace)
                    side.execute(f"ATTACH '{_quote(str(path))}' AS ns (READ_ONLY)")
                    rows = side.execute(query.format(ns="ns")).fetchall()
                finally:
                    side.close()
            for table, name, freeze_id in rows:
                found.setdefault((table, name), freeze_id)
        return found

    def guard_source(self, table: str, name: str, sha256: str) -> None:
        """Refuse a load that would replace, with other bytes, rows that another study's latest freeze
        covers (a study never changes what another's freeze covers): inside the load's transaction."""
        current = self.sql("SELECT sha256 FROM inputs.meta.sources WHERE table_name = ? AND name = ?", [table, name])
        if not current or current[0][0] == sha256:
            return
        freeze_id = self.frozen_sources().get((table, name))
        if freeze_id is not None:
            raise RankhouseError(
                f"loading other bytes as {name!r} into {table} would replace rows that freeze {freeze_id} covers: "
                f"load them under another name (a protocol input's `name`, or NAME=PATH)"
            )

    def _resolve(self) -> None:
        """USE and search_path: names resolve to the namespace in use (to the inputs first inside
        writing_inputs, where loaders write raw.* and meta.sources)."""
        ns = self.catalog
        study = self.namespace != DEFAULT_NAMESPACE
        own = [f"{ns}.main", f"{ns}.models", *([f"{ns}.raw"] if study else []), f"{ns}.results", f"{ns}.meta"]
        if self._resolving_inputs:
            path = [f"{INPUTS}.main", f"{INPUTS}.raw", f"{INPUTS}.meta", *own]
        else:
            path = [*own, f"{INPUTS}.main", *([] if study else [f"{INPUTS}.raw"]), f"{INPUTS}.meta"]
        if GATE in self.attached():
            path += [f"{GATE}.main", f"{GATE}.models", f"{GATE}.meta"]
        self.con.execute(f"USE {INPUTS if self._resolving_inputs else ns}")
        self.con.execute(f"SET search_path = '{','.join(path)}'")

    @contextmanager
    def resolving_models(self) -> Iterator[None]:
        """Within the block names resolve to the namespace in use even inside writing_inputs (a model
        built while a generator writes the inputs reads the study's raw.* slice, not every row)."""
        before = self._resolving_inputs
        if before:
            self._resolving_inputs = False
            self._resolve()
        try:
            yield
        finally:
            if before:
                self._resolving_inputs = True
                self._resolve()

    # -- the inputs -----------------------------------------------------------------------------------
    @contextmanager
    def writing_inputs(self) -> Iterator[None]:
        """Within the block the inputs (raw.*, meta.sources) are writable and names resolve to them first:
        loaders and generators write there. A file warehouse's inputs are written on a building copy under
        the inputs' lock and published when the outermost block ends (readers meanwhile read the last
        published file). Blocks nest.

        >>> with wh.writing_inputs():  # doctest: +SKIP
        ...     load_run(wh, "a.run")
        """
        if self.read_only:
            raise RankhouseError(f"warehouse {self.path} is open read-only: nothing can be loaded into it")
        first = self._inputs_depth == 0
        if first and not self.layout.in_memory:
            self._start_inputs()
        self._inputs_depth += 1
        outer = self._resolving_inputs
        self._resolving_inputs = True
        if self.namespace:
            self._resolve()
        try:
            yield
        finally:
            self._inputs_depth -= 1
            self._resolving_inputs = outer
            if first and not self.layout.in_memory:
                self._finish_inputs()
            if self.namespace:
                self._resolve()

    def _ensure_inputs_file(self) -> None:
        """Write a new warehouse's inputs file (its identity) before any other file of it is published."""
        if self._unborn and not self.layout.in_memory:
            self._start_inputs()
            self._finish_inputs(keep_new=True)

    def _start_inputs(self) -> None:
        lock = files.WriterLock(self.layout.locks / "inputs.lock", f"the inputs of {self.path}")
        lock.acquire(self.say)
        self._inputs_lock = lock
        building = self.layout.building / "inputs.duckdb"
        try:
            how = files.start_copy(Path(self.path), building)
            if INPUTS in self.attached():
                self.con.execute("USE memory")
                self.con.execute(f"DETACH {INPUTS}")
            self.con.execute(f"ATTACH '{_quote(str(building))}' AS {INPUTS}")
            self._create_schema(INPUTS, "warehouse")
            if how == "new":
                identity = getattr(self, "id", None) or str(uuid.uuid4())
                self.con.execute(
                    f"INSERT INTO {INPUTS}.meta.warehouse VALUES (?, current_localtimestamp())", [identity]
                )
                self._mark(INPUTS, "warehouse", identity, None)
            if how == "resumed":
                self.say(f"carrying on from an interrupted load into {self.path} ({building})")
        except BaseException:
            lock.release()
            self._inputs_lock = None
            raise

    def _finish_inputs(self, keep_new: bool = False) -> None:
        building = self.layout.building / "inputs.duckdb"
        try:
            self.con.execute("USE memory")
            # a new warehouse into which nothing was loaded (a refused first load) gets no file yet
            unborn = (
                self._unborn
                and not keep_new
                and not self.sql(
                    "SELECT 1 FROM duckdb_tables() WHERE database_name = ? AND schema_name IN ('raw', 'meta') "
                    "AND table_name NOT IN ('warehouse', 'layout') AND estimated_size > 0 LIMIT 1",
                    [INPUTS],
                )
            )
            self.con.execute(f"CHECKPOINT {INPUTS}")
            self.con.execute(f"DETACH {INPUTS}")
            if unborn:
                files.discard(building)
                self.con.execute(f"ATTACH ':memory:' AS {INPUTS}")
                self._create_schema(INPUTS, "warehouse")
                self.con.execute(f"INSERT INTO {INPUTS}.meta.warehouse VALUES (?, current_localtimestamp())", [self.id])
                return
            files.publish(building, Path(self.path))
            self._unborn = False
            self.con.execute(f"ATTACH '{_quote(str(Path(self.path).resolve()))}' AS {INPUTS} (READ_ONLY)")
        finally:
            if self._inputs_lock is not None:
                self._inputs_lock.release()
                self._inputs_lock = None

    # -- the store ------------------------------------------------------------------------------------
    def _attach_segment(self, segment: str, building: bool = False) -> None:
        path = self.layout.segment_file(segment, building)
        mode = "" if building else " (READ_ONLY)"
        self.con.execute(f"ATTACH '{_quote(str(path))}' AS store_{segment}{mode}")
        if not building:
            self._check_mark(f"store_{segment}", "store", None, path)

    def store_table(self, name: str) -> str | None:
        """The store table `name` (`<model>__<fingerprint>`) where some build made it, qualified; None if
        no store file holds it."""
        found = self.sql(
            "SELECT database_name FROM duckdb_tables() WHERE starts_with(database_name, 'store_') "
            "AND schema_name = 'main' AND table_name = ? ORDER BY database_name",
            [name],
        )
        return f'{found[0][0]}.main."{name}"' if found else None

    def store_target(self, name: str) -> str:
        """Where a build writes the store table `name`: this session's store file, made on first use."""
        if self.layout.in_memory:
            return f'{MEMORY_STORE}.main."{name}"'
        if self._segment is None:
            segment = uuid.uuid4().hex[:16]
            with self.transaction():
                self.con.execute(f"INSERT INTO {self.catalog}.meta.building VALUES (?)", [segment])
            self._attach_segment(segment, building=True)
            self._create_schema(f"store_{segment}", "store")
            self._mark(f"store_{segment}", "store", self.id, None)
            self._segment = segment
        return f'store_{self._segment}.main."{name}"'

    def _seal_segment(self, namespace: str | None = None) -> None:
        """Seal this session's store file (written whole, never written again), or remove it if it holds
        no table; readers attach it from then on. `namespace`: the catalog that records it as building
        (the namespace in use by default)."""
        if self._segment is None or self.layout.in_memory:
            return
        segment, self._segment = self._segment, None
        alias = f"store_{segment}"
        tables = self.sql(
            "SELECT count(*) FROM duckdb_tables() WHERE database_name = ? AND schema_name = 'main'", [alias]
        )[0][0]
        self.con.execute(f"CHECKPOINT {alias}")
        self.con.execute(f"DETACH {alias}")
        building = self.layout.segment_file(segment, building=True)
        if tables:
            self._ensure_inputs_file()
            os.replace(building, self.layout.segment_file(segment))
            self._attach_segment(segment)
        else:
            files.discard(building)
        self.con.execute(f"DELETE FROM {namespace or self.catalog}.meta.building WHERE segment = ?", [segment])

    def _seal_interrupted(self, alias: str) -> None:
        """Seal the store files an interrupted run of this namespace was writing (their committed tables
        stand; the namespace's views may read them)."""
        for (segment,) in self.sql(f"SELECT segment FROM {alias}.meta.building"):
            building = self.layout.segment_file(segment, building=True)
            if building.exists():
                self._attach_segment(segment, building=True)
                self._segment = segment
                self._seal_segment(alias)
            else:
                self.con.execute(f"DELETE FROM {alias}.meta.building WHERE segment = ?", [segment])

    # -- plumbing -------------------------------------------------------------------------------------
    @property
    def files(self) -> duckdb.DuckDBPyConnection:
        """A separate in-memory DuckDB connection that may read and write files, for loaders (DuckDB's
        CSV reader) and exports; hand its results to the warehouse as Arrow.

        >>> wh.files.execute("SELECT count(*) FROM read_csv('runs.txt')").fetchall()  # doctest: +SKIP
        """
        if self._files is None:
            self._files = duckdb.connect()
            no_progress_bar(self._files)
            self._limit_memory(self._files)
        return self._files

    def sql(self, query: str, params: list | tuple | dict | None = None) -> list[tuple]:
        """Run one statement and fetch every row."""
        return self.con.execute(query, params).fetchall()

    def columns(self, query: str, params: list | tuple | None = None) -> tuple[list[str], list[tuple]]:
        """Run one statement; return its column names and rows."""
        cur = self.con.execute(query, params)
        rows = cur.fetchall()
        return [d[0] for d in cur.description], rows

    def resolve(self, qualified: str) -> tuple[str, str, str] | None:
        """(catalog, schema, name) of the table or view `schema.name` (or `catalog.schema.name`) resolves
        to in this session, or None if there is none.

        >>> wh.resolve("models.run_measures")  # doctest: +SKIP
        ('trec_sample', 'models', 'run_measures')
        """
        parts = [part.strip('"') for part in qualified.split(".")]
        if len(parts) == 3:
            candidates = [tuple(parts)]
        else:
            schema, name = parts
            path = self.sql("SELECT current_setting('search_path')")[0][0]
            entries = [entry.rsplit(".", 1) for entry in _split_path(path)]
            candidates = [(catalog.strip('"'), schema, name) for catalog, found in entries if found == schema]
            candidates.append((schema, "main", name))  # `gate.qrels`: a catalog and its main schema
        for catalog, schema, name in candidates:
            if self.sql(
                "SELECT 1 FROM duckdb_tables() WHERE database_name = ? AND schema_name = ? AND table_name = ? "
                "UNION ALL SELECT 1 FROM duckdb_views() WHERE database_name = ? AND schema_name = ? "
                "AND view_name = ?",
                [catalog, schema, name, catalog, schema, name],
            ):
                return catalog, schema, name
        return None

    def table_exists(self, qualified: str) -> bool:
        """Whether `schema.table` (or `catalog.schema.table`) resolves to a table or view here."""
        return self.resolve(qualified) is not None

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One transaction: committed if the block finishes, rolled back if it raises. DuckDB lets one
        transaction write one attached file: the inputs, a namespace, a store file or the gate."""
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
        ...     wh.sql("INSERT INTO raw.t SELECT n FROM rh_rows")
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
        directly indexed array (perfect_ht_threshold raised to memory.perfect_hash_bits()), and hold
        DuckDB's own buffers to the part of memory_limit the arrays leave (memory.ARRAY_SHARE): DuckDB
        allocates the arrays outside its limit. DuckDB's defaults after it. For statements that compute
        a model marked `aggregate: array`.

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

    @contextmanager
    def any_row_order(self) -> Iterator[None]:
        """For the statements in the block, let DuckDB store a result's rows in any order
        (preserve_insertion_order off): a CREATE TABLE AS over a UNION ALL then computes its parts side by
        side instead of one after the other. For the builds of models marked `row_order: any`.

        >>> with wh.any_row_order():  # doctest: +SKIP
        ...     wh.sql("CREATE TABLE ranked AS SELECT * FROM models.bm25_ranking")
        """
        self.con.execute("SET preserve_insertion_order = false")
        try:
            yield
        finally:
            self.con.execute("RESET preserve_insertion_order")

    def export_lines(self, query: str, params: dict | list | None, path: str | Path) -> None:
        """Write a one-column query's text rows to `path`, one line each (a newline after each, a NULL as an
        empty line), in order: each Arrow batch's text written as it is, with the newlines put in (text_lines);
        Python writes the file, the warehouse's connection writes none."""
        reader = self.con.sql(query, params=params).to_arrow_reader(1 << 17)
        with open(path, "wb") as out:
            for batch in reader:
                out.write(text_lines(batch.column(0)))

    def attached(self) -> set[str]:
        """Names of the attached catalogs."""
        return {row[0] for row in self.sql("SELECT database_name FROM duckdb_databases()")}

    def foreign_objects(self) -> list[str]:
        """What the inputs file and the namespace in use hold that rankhouse does not make (a schema made by
        hand, such as one named `gate`, which DuckDB would read in place of the gate; a table or view added
        to a schema of rankhouse's): one line each, for the checks of a freeze."""
        found = []
        files = {INPUTS: ("the inputs file", "warehouse", {"main", "raw", "meta"})}
        files[self.namespace] = (f"the namespace file of {self.namespace}", "namespace",
                                 {"main", "models", "raw", "results", "meta"})  # fmt: skip
        for catalog, (what, kind, schemas) in files.items():
            declared = {name.lower() for name in CREATE_TABLE.findall(schema_ddl(kind))}
            for (schema,) in self.sql(
                "SELECT schema_name FROM duckdb_schemas() WHERE database_name = ? AND NOT internal ORDER BY 1",
                [catalog],
            ):
                if schema not in schemas:
                    found.append(f"{what} holds schema {schema}, which rankhouse does not make: drop it")
            for schema, name, kind_of in self.sql(
                "SELECT schema_name, table_name, 'table' FROM duckdb_tables() WHERE database_name = ? UNION ALL "
                "SELECT schema_name, view_name, 'view' FROM duckdb_views() WHERE database_name = ? AND NOT internal "
                "ORDER BY ALL",
                [catalog, catalog],
            ):
                made = (
                    f"{schema}.{name}".lower() in declared
                    and kind_of == "table"
                    or schema in ("models", "results")
                    or (schema == "raw" and kind == "namespace" and kind_of == "view")
                )
                if not made and schema in schemas:
                    found.append(f"{what} holds {kind_of} {schema}.{name}, which rankhouse does not make: drop it")
        return found

    def lock_down(self) -> None:
        """No settings changes from here on (for analysts' queries and shells; file access is off already)."""
        self.con.execute("SET lock_configuration = true")

    # -- labels and the gate --------------------------------------------------------------------------
    @property
    def labels_path(self) -> str:
        """The published labels file of the namespace in use."""
        return str(self.layout.labels_file(self.namespace))

    def _labels_copy(self) -> Path:
        """This session's copy of the namespace's labels file (made on first use, from the published file
        or new), which label loaders write and the gate attaches; a writable session publishes it."""
        if self._gate_copy is not None and self._gate_copy.exists():
            return self._gate_copy
        published = Path(self.labels_path)
        self._check_labels_file(published)
        copy = self.work / f"labels-{self.namespace}.duckdb"
        files.discard(copy)
        if published.exists():
            shutil.copyfile(published, copy)
        side = duckdb.connect()
        try:
            no_progress_bar(side)
            side.execute(f"ATTACH '{_quote(str(copy))}' AS labels")
            side.execute("USE labels")
            side.execute(schema_ddl("labels"))
            if not side.execute("SELECT 1 FROM labels.meta.layout").fetchall():
                side.execute(
                    "INSERT INTO labels.meta.layout VALUES ('labels', ?, ?, ?, current_localtimestamp())",
                    [LAYOUT_VERSION, self.id, self.namespace],
                )
            if not side.execute("SELECT 1 FROM labels.meta.owner").fetchall():
                side.execute(
                    "INSERT INTO labels.meta.owner VALUES (?, ?, ?, current_localtimestamp())",
                    [self.id, self.path, self.namespace],
                )
            side.execute("USE memory")
            side.execute("DETACH labels")
        finally:
            side.close()
        self._gate_copy = copy
        return copy

    def _check_labels_file(self, published: Path) -> None:
        """The namespace's published labels file must be its own: a labels file (not a link to another of
        the warehouse's files) of this warehouse and this namespace."""
        if not published.exists():
            return
        identity = file_identity(published)
        others = [Path(self.path), self.layout.namespace_file(self.namespace)]
        if any(identity == file_identity(other) for other in others):
            raise RankhouseError(f"{published} is the same file as one of the warehouse's other files (a link)")
        kind = identify(published)
        if kind is None or kind.kind != "labels" or kind.warehouse_id != self.id or kind.namespace != self.namespace:
            if kind is not None and kind.kind == "labels" and kind.warehouse_id == self.id:
                raise RankhouseError(
                    f"{published} holds the labels of study {kind.namespace}, not of {self.namespace}: a study's "
                    "labels are opened only for it"
                )
            if kind is not None and kind.kind == "labels":
                raise RankhouseError(
                    f"the labels file {published} belongs to study {kind.namespace} of another warehouse "
                    f"({kind.warehouse_id}): it is opened only there"
                )
            raise RankhouseError(
                f"{described(kind, published) if kind else published} is not the labels file of study "
                f"{self.namespace}: rankhouse will not open it as labels"
            )

    @contextmanager
    def labels(self) -> Iterator[str]:
        """For the block, `sql`, `con` and `transaction` work on a separate in-memory connection that has
        the namespace's labels (this session's copy) attached read-write as catalog `labels` (and may
        read files, for the loaders); the warehouse's own connection never writes a labels file. Loaders
        only. The connection has the warehouse's memory_limit and spills into this session's scratch
        folder, as the warehouse's own does (a labels load is as bounded as any other)."""
        if self.read_only:
            raise RankhouseError(f"warehouse {self.path} is open read-only: no labels can be loaded into it")
        self.close_gate(publish_labels=False)
        copy = self._labels_copy()
        side = duckdb.connect()
        no_progress_bar(side)
        self._limit_memory(side)
        side.execute(f"SET temp_directory = '{_quote(str((self.work / 'spill-labels').resolve()))}'")
        side.execute(f"ATTACH '{_quote(str(copy))}' AS labels")
        try:
            self.con = side
            yield "labels"
        finally:
            self.con = self._main_con
            side.execute("USE memory")
            side.execute("DETACH labels")
            side.close()

    def labels_owners(self) -> list[LabelsOwner]:
        """Who the namespace's labels file belongs to (warehouse and study), read without opening it to anyone."""
        published = Path(self.labels_path)
        if not published.exists():
            return []
        side = duckdb.connect()
        try:
            side.execute(f"ATTACH '{_quote(str(published))}' AS labels (READ_ONLY)")
            rows = side.execute("SELECT * FROM labels.meta.owner ORDER BY study").fetchall()
        except duckdb.Error as exc:
            raise RankhouseError(f"cannot read the labels file {published}: {exc}") from None
        finally:
            side.close()
        return [LabelsOwner(warehouse_id, warehouse, study) for warehouse_id, warehouse, study, _ in rows]

    def gated(self) -> bool:
        """Whether the namespace's labels open only for a verified freeze: a study's do, the default
        namespace's (labels loaded outside any study) do not."""
        return self.namespace != DEFAULT_NAMESPACE

    def check_gate(self, verified_freeze: str | None = None) -> None:
        """Raise the error open_gate would raise, without opening anything (commands check this before
        they write anything)."""
        if self.gated() and verified_freeze is None:
            raise GateError(
                f"the labels of study {self.namespace} open only through `rankhouse study evaluate` (or "
                "`rankhouse query --study`), after the study's latest freeze verifies"
            )

    _gate_verified: str | None = None

    def open_gate(self, verified_freeze: str | None = None) -> None:
        """Make the namespace's labels (and the evaluate models built from them) readable as the catalog
        `gate`: a study's only for a freeze that has just verified (`rankhouse study evaluate` and
        `rankhouse query --study` pass its id). The gate is this session's copy of the labels file, in
        its scratch folder: a writable session builds evaluate models into it and publishes it; a
        read-only one reads it and removes it."""
        if GATE in self.attached():
            return
        self.check_gate(verified_freeze)
        copy = self._labels_copy()
        self._gate_verified = verified_freeze
        if self.layout.in_memory:
            self._copy_gate(copy)
            self._resolve()
            return
        mode = "" if self.writable else " (READ_ONLY)"
        self.con.execute(f"ATTACH '{_quote(str(copy))}' AS {GATE}{mode}")
        self._gate_writable = self.writable
        try:
            self._check_mark(GATE, "labels", self.namespace, self.labels_path)
        except BaseException:
            self.close_gate(publish_labels=False)
            raise
        self._resolve()

    def _copy_gate(self, copy: Path) -> None:
        """The gate of a throw-away (`:memory:`) warehouse: an in-memory copy of its labels' tables, where
        its evaluate models are built in memory too (nothing of them outlives the process). Each table
        is handed over as a stream of Arrow batches, never whole."""
        side = duckdb.connect()
        try:
            self._limit_memory(side)
            side.execute(f"ATTACH '{_quote(str(copy))}' AS labels (READ_ONLY)")
            tables = side.execute(
                "SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = 'labels' ORDER BY ALL"
            ).fetchall()
            self.con.execute(f"ATTACH ':memory:' AS {GATE}")
            self._create_schema(GATE, "labels")
            for schema, table in tables:
                rows = side.sql(f'SELECT * FROM labels."{schema}"."{table}"').to_arrow_reader(1 << 17)
                with self.registered("rh_gate_rows", rows):
                    self.con.execute(f'CREATE OR REPLACE TABLE {GATE}."{schema}"."{table}" AS FROM rh_gate_rows')
        except BaseException:
            with suppress(duckdb.Error):
                self.con.execute(f"DETACH {GATE}")
            raise
        finally:
            side.close()
        self._gate_writable = False  # nothing to publish

    def _labels_empty(self, copy: Path) -> bool:
        """Whether a copy of labels holds no label row and no evaluate model (only what says whose it is)."""
        side = duckdb.connect()
        try:
            side.execute(f"ATTACH '{_quote(str(copy))}' AS labels (READ_ONLY)")
            tables = side.execute(
                "SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = 'labels'"
            ).fetchall()
            views = side.execute("SELECT count(*) FROM duckdb_views() WHERE database_name = 'labels' AND NOT internal")
            if views.fetchall()[0][0]:
                return False
            return all(
                side.execute(f'SELECT count(*) FROM labels."{schema}"."{name}"').fetchall()[0][0] == 0
                for schema, name in tables
                if (schema, name) not in (("meta", "layout"), ("meta", "owner"))
            )
        finally:
            side.close()

    def close_gate(self, publish_labels: bool = True) -> None:
        """Detach the `gate` catalog if it is attached; a writable session publishes its copy of the labels
        (the labels it loaded, the evaluate models it built), a read-only one removes it."""
        if GATE in self.attached():
            self.con.execute(f"USE {self.catalog if self.namespace else 'memory'}")
            if self._gate_writable:
                self.con.execute(f"CHECKPOINT {GATE}")
            self.con.execute(f"DETACH {GATE}")
            if self.namespace:
                self._resolve()
        if self._gate_copy is not None and publish_labels:
            published = Path(self.labels_path)
            if self.writable and (published.exists() or not self._labels_empty(self._gate_copy)):
                self._ensure_inputs_file()
                files.publish(self._gate_copy, published)
            files.discard(self._gate_copy)
            self._gate_copy = None
        self._gate_verified = None

    # -- closing --------------------------------------------------------------------------------------
    def _write_attach_script(self) -> None:
        """rankhouse.d/attach.sql: what a plain DuckDB client runs to read the warehouse as rankhouse's
        sessions do (`duckdb -init rankhouse.d/attach.sql`), every file read-only; labels are left out."""
        if self.layout.in_memory:
            return
        lines = [
            "-- Written by rankhouse: the warehouse's files, read-only, as its sessions attach them.",
            f"ATTACH '{_quote(str(Path(self.path).resolve()))}' AS {INPUTS} (READ_ONLY);",
        ]
        lines += [
            f"ATTACH '{_quote(str(self.layout.segment_file(s).resolve()))}' AS store_{s} (READ_ONLY);"
            for s in self.layout.segments()
        ]
        for namespace in self.layout.namespaces():
            path = self.layout.namespace_file(namespace).resolve()
            lines.append(f"ATTACH '{_quote(str(path))}' AS {quoted(namespace)} (READ_ONLY);")
        lines.append(f'USE "{DEFAULT_NAMESPACE}";' if DEFAULT_NAMESPACE in self.layout.namespaces() else "")
        lines.append("-- a study's names: USE <study>; SET search_path = '<study>.main,<study>.models,<study>.raw,"
                     "<study>.results,<study>.meta,inputs.main,inputs.meta';")  # fmt: skip
        script = self.layout.home / "attach.sql"
        text = "\n".join(line for line in lines if line) + "\n"
        temporary = script.with_suffix(".sql.tmp")
        temporary.write_text(text)
        os.replace(temporary, script)

    def close(self) -> None:
        """Publish what this session wrote, close the connections and remove its scratch space."""
        try:
            if self.con is not None and self._main_con is not None and self.namespace:
                # a throw-away warehouse's labels go with its scratch folder: nothing to publish them to
                self.close_gate(publish_labels=not self.layout.in_memory)
                self._leave_namespace()
        finally:
            if self._inputs_lock is not None:
                self._inputs_lock.release()
            if self._namespace_lock is not None:
                self._namespace_lock.release()
            with suppress(duckdb.Error):
                self._main_con.close()
            if self._files is not None:
                self._files.close()
            shutil.rmtree(self.work, ignore_errors=True)
            if self._scratch:
                shutil.rmtree(self._scratch, ignore_errors=True)
            self.namespace = ""

    def __enter__(self) -> Warehouse:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _building_identity(building: Path) -> str | None:
    """The warehouse id in the inputs' building copy that an interrupted first load left (the new warehouse's
    files already carry it), or None."""
    if not building.exists():
        return None
    side = duckdb.connect()
    try:
        side.execute(f"ATTACH '{_quote(str(building))}' AS b (READ_ONLY)")
        rows = side.execute("SELECT id FROM b.meta.warehouse").fetchall()
    except duckdb.Error:
        return None
    finally:
        side.close()
    return rows[0][0] if rows else None


def text_lines(column: object) -> memoryview:
    """The values of an Arrow text column as lines, each followed by a newline (a NULL as an empty line):
    the column's character data copied once, around the newlines.

    >>> import pyarrow as pa
    >>> bytes(text_lines(pa.array(["q1 Q0 d1", None, "q2"]).slice(1)))
    b'\\nq2\\n'
    """
    import numpy as np
    import pyarrow as pa

    if pa.types.is_string_view(column.type):
        column = column.cast(pa.large_string())
    if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
        raise TypeError(f"export_lines writes text, not {column.type}: cast in the query")
    if column.null_count:
        column = column.fill_null("")
    lines = len(column)
    if not lines:
        return memoryview(b"")
    offsets_type = np.int64 if pa.types.is_large_string(column.type) else np.int32
    _, offsets_buffer, data_buffer = column.buffers()
    offsets = np.frombuffer(offsets_buffer, dtype=offsets_type)[column.offset : column.offset + lines + 1]
    data = (
        np.frombuffer(data_buffer, dtype=np.uint8)[offsets[0] : offsets[-1]] if data_buffer else np.zeros(0, np.uint8)
    )
    text = np.empty(len(data) + lines, dtype=np.uint8)
    newlines = offsets[1:] - offsets[0] + np.arange(lines)  # where each line's newline goes
    characters = np.ones(len(text), dtype=bool)
    characters[newlines] = False
    text[characters] = data
    text[newlines] = 10
    return memoryview(text)


def _split_path(path: str) -> list[str]:
    """The entries of a search_path setting (commas outside double quotes)."""
    entries, current, quoting = [], "", False
    for char in path:
        if char == '"':
            quoting = not quoting
        if char == "," and not quoting:
            entries.append(current)
            current = ""
        else:
            current += char
    return [entry for entry in [*entries, current] if entry]


def _quote(text: str) -> str:
    return text.replace("'", "''")


def digest(text: str) -> str:
    """SHA-256 hex of a text (a definition, a name)."""
    return hashlib.sha256(text.encode()).hexdigest()
