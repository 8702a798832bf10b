"""Running selected models: fingerprint, skip when unchanged, build, audit, log."""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import time
from dataclasses import dataclass

import duckdb

from rankhouse import functions
from rankhouse.errors import AuditError, ModelError, RankhouseError
from rankhouse.progress import SILENT, Progress
from rankhouse.warehouse.analysis import analysed
from rankhouse.warehouse.audits import audit_sql
from rankhouse.warehouse.catalog import Audit, Model, effective_parameters
from rankhouse.warehouse.comments import describe
from rankhouse.warehouse.connection import Warehouse
from rankhouse.warehouse.dag import Project


@dataclass(frozen=True)
class ModelRun:
    """The outcome of one model in a DAG run."""

    model: str
    fingerprint: str
    status: str  # built | skipped | failed
    rows: int | None  # None for a view
    seconds: float


def source_versions(wh: Warehouse, refs: set[str]) -> dict[str, list[list[str]]]:
    """Per source table read: the (name, sha256) of every file loaded into it that the namespace in use
    reads (a study: its own slice, namespace.sql's meta.loads; outside a study: every load).

    Part of the fingerprint, so that reloading different data rebuilds the models that read it, and
    another study's loads change nothing.
    """
    versions: dict[str, list[list[str]]] = {}
    study = wh.gated()
    for ref in sorted(refs):
        schema, table = ref.split(".", 1)
        if schema == "raw" and study:
            rows = wh.sql(
                f"SELECT DISTINCT s.name, s.sha256 FROM inputs.meta.sources AS s JOIN {wh.catalog}.meta.loads AS l "
                "ON l.table_name = s.table_name AND l.source_name = s.name WHERE s.table_name = ? ORDER BY ALL",
                [ref],
            )
        elif schema == "raw":
            rows = wh.sql("SELECT name, sha256 FROM inputs.meta.sources WHERE table_name = ? ORDER BY name", [ref])
        elif schema == "gate":
            if "gate" not in wh.attached():
                raise RankhouseError(f"{ref} is behind the labels gate, which is closed")
            rows = wh.sql("SELECT name, sha256 FROM gate.meta.sources WHERE table_name = ? ORDER BY name", [table])
        else:
            continue
        versions[ref] = [list(row) for row in rows]
    return versions


def user_functions(wh: Warehouse) -> list[tuple[str, str]]:
    """(kind, catalog.schema.name) of every macro or type defined in a file the session attached (the
    inputs, namespaces, store files, the gate). DuckDB resolves a macro in a catalog on the search path
    before its built-in of the same name (a `log2` macro changes every nDCG), so none may define one.

    >>> user_functions(Warehouse(":memory:"))
    []
    """
    return wh.sql(
        "SELECT DISTINCT function_type, database_name || '.' || schema_name || '.' || function_name "
        "FROM duckdb_functions() WHERE database_name NOT IN ('system', 'temp') AND NOT internal "
        "AND function_type IN ('macro', 'table_macro') UNION SELECT 'type', database_name || '.' || schema_name "
        "|| '.' || type_name FROM duckdb_types() WHERE database_name NOT IN ('system', 'temp') AND NOT internal "
        "ORDER BY ALL"
    )


def model_home(wh: Warehouse, model: Model) -> str:
    """The catalog that holds a model's object: the namespace in use for a prepare model (a view; a table
    model's view reads its store table), the gate for an evaluate model (built from the labels, it stays
    with them)."""
    return wh.catalog if model.stage == "prepare" else "gate"


def object_kind(model: Model) -> str:
    """How a model's object is recorded: `table` or `view`, as its header says (a prepare table model's
    object is the view over its store table, recorded as its table)."""
    return model.materialized


def physical_name(model: Model, fingerprint: str) -> str:
    """The store table of a prepare table model built with `fingerprint`: shared by every study whose
    model has that fingerprint.

    >>> physical_name(Project.load(closure=["measure_requests"]).models["measure_requests"], "ab" * 32)[:20]
    'measure_requests__ab'
    """
    return f"{model.name}__{fingerprint}"


STORE_SEGMENT = re.compile(r"\bstore_[0-9a-f]{16}\.")


def definition_digest(sql: str) -> str:
    """SHA-256 of a catalog definition, the store file a table model's view reads left out: a forced
    rebuild (same fingerprint, same name) writes the table into another store file, and the freeze checks
    the table's rows, not which file holds them.

    >>> a = 'CREATE VIEW models.x AS SELECT * FROM store_0123456789abcdef.main."x__ab";'
    >>> definition_digest(a) == definition_digest(a.replace("0123456789abcdef", "fedcba9876543210"))
    True
    """
    return hashlib.sha256(STORE_SEGMENT.sub("store.", sql).encode()).hexdigest()


def definition_sha256(wh: Warehouse, model: Model) -> str | None:
    """SHA-256 of the model's view or table definition as its home catalog holds it."""
    return model_objects(wh).get(model.name, {}).get(object_kind(model))


def model_objects(wh: Warehouse) -> dict[str, dict[str, str]]:
    """Every object of the namespace's and the gate's `models` schemas: name -> {"table" or "view":
    SHA-256 of its definition in the catalog} (one query for all of them). A view of the namespace that
    reads the store is its table model's object."""
    catalogs = [wh.namespace] + (["gate"] if "gate" in wh.attached() else [])
    found: dict[str, dict[str, str]] = {}
    for name, kind, sql in wh.sql(
        "SELECT table_name, 'table', sql FROM duckdb_tables() WHERE list_contains(?, database_name) "
        "AND schema_name = 'models' UNION ALL SELECT view_name, CASE WHEN contains(sql, ' FROM store_') THEN "
        "'table' ELSE 'view' END, sql FROM duckdb_views() WHERE list_contains(?, database_name) "
        "AND schema_name = 'models'",
        [catalogs, catalogs],
    ):
        found.setdefault(name, {})[kind] = definition_digest(sql)
    return found


def _literal(value: object) -> str:
    """A Python value (None, a number or a string) as a SQL literal, for the runner's bookkeeping statements."""
    if value is None:
        return "NULL"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


class DuckDBEngine:
    """Where models are computed: in the warehouse's own DuckDB connection (the default engine).
    Another engine (rankhouse/warehouse/spark.py) computes some models elsewhere and hands their rows
    back, so that the DuckDB file stays the catalog of record either way.

    Example: Runner(wh, project, params, engine=DuckDBEngine()).run(names)
    """

    name = "duckdb"

    def runs_on(self, model: Model, project: Project) -> str:
        """The engine that builds `model` of `project` here: always DuckDB.

        >>> DuckDBEngine().runs_on(Project.load().models["run_measures"], Project.load())
        'duckdb'
        """
        return "duckdb"

    def note(self, model: Model, project: Project) -> str | None:
        """What meta.model_runs' message says of a build: nothing for DuckDB, the default."""
        return None

    def start(self) -> None:
        """Get ready to build, before a command opens its warehouse (nothing to start for DuckDB)."""

    def create(self, runner: Runner, model: Model, sql: str, target: str) -> None:
        """Create the model's table or view as `target` in the warehouse (inside the runner's transaction)."""
        runner.create(model, sql, target)

    def audit(self, runner: Runner, model: Model, audit: Audit, target: str) -> tuple[list[str], list[tuple]]:
        """The columns and (a few) rows of `target` that break `audit` of the model just built, found by the
        engine that computed it: here, in the warehouse (rankhouse/warehouse/audits.py's SQL).

        Example: columns, bad = DuckDBEngine().audit(runner, model, model.audits[0], "models.run_measures")
        """
        return runner.wh.columns(audit_sql(model, audit, target))

    def discard(self, runner: Runner, model: Model) -> None:
        """Forget what a failed build or audit left outside the warehouse, which rolls the model back
        (nothing for DuckDB)."""

    def close(self) -> None:
        """Release what the engine holds (nothing for DuckDB)."""


class Runner:
    """Builds models of a project into a warehouse with the given parameters, on an engine (DuckDB by
    default; `SparkEngine` for `rankhouse run --engine spark`)."""

    def __init__(
        self, wh: Warehouse, project: Project, params: dict | None = None, engine: DuckDBEngine | None = None
    ) -> None:
        self.wh = wh
        self.project = project
        self.params = params or {}
        self.engine = engine or DuckDBEngine()
        self._fingerprints: dict[str, str] = {}
        self._plans: dict[str, str] = {}
        self._functions_checked = False  # user_functions, once per runner: a model defines none
        self._objects: dict[str, dict[str, str]] = {}  # the models schema's objects, read by run()
        unknown = set(self.params) - {k for m in project.models.values() for k in m.parameters}
        if unknown:
            raise RankhouseError(f"no model declares parameter(s) {', '.join(sorted(unknown))}")

    def fingerprint(self, name: str) -> str:
        """SHA-256 over canonical SQL, version, materialisation, parameters, parents' fingerprints, source
        data, DuckDB version and the source of the Python functions the model calls. Not the engine: a
        model gives the same rows on DuckDB and on Spark
        (tests/spark/test_spark_engine.py), so a model built on one is up to date on the other (`--force`
        rebuilds it), and a freeze verifies whichever engine built its models. Not the namespace either:
        two studies whose model has the same fingerprint share its store table."""
        if name not in self._fingerprints:
            self._fingerprints[name] = self._digest(name, labelled=True)
        return self._fingerprints[name]

    def plan_fingerprint(self, name: str) -> str:
        """The fingerprint of an evaluate model as a freeze records it, before any label is loaded: its
        SQL, parameters and parents' plan fingerprints (a prepare parent's fingerprint), its label-free
        sources, but not the labels it reads (the protocol's SHA-256 of each label file stands for them).
        A change of any evaluate model's SQL, parameters or parents after the freeze changes it."""
        if name not in self._plans:
            model = self.project.models[name]
            self._plans[name] = self.fingerprint(name) if model.stage == "prepare" else self._digest(name, False)
        return self._plans[name]

    def _digest(self, name: str, labelled: bool) -> str:
        model = self.project.models[name]
        refs = self.project.references[name]
        parents = {
            p: (self.fingerprint(p) if labelled else self.plan_fingerprint(p)) for p in self.project.parents[name]
        }
        payload = {
            "sql": analysed(model, self.params).canonical,  # render.canonical_sql of its rendered SQL
            "version": model.version,
            "materialized": model.materialized,
            "parameters": effective_parameters(model, self.params),
            "parents": parents,
            "sources": source_versions(self.wh, refs if labelled else {r for r in refs if not r.startswith("gate.")}),
            "engine": f"duckdb {duckdb.__version__}",
        }
        if model.functions:  # the Python code of the functions it calls (functions.code_digest)
            payload["functions"] = {name: functions.code_digest(name) for name in sorted(model.functions)}
        blob = json.dumps(payload, sort_keys=True, default=str).encode()
        return hashlib.sha256(blob).hexdigest()

    def last_built(self, name: str) -> str | None:
        """The fingerprint of the model's current table or view, if it was built, still exists and is
        still the object the build made (its catalog definition as recorded in meta.model_objects)."""
        return self.last_builds([name])[name]

    def last_builds(self, names: list[str]) -> dict[str, str | None]:
        """last_built of each of `names`, read from the warehouse in three queries for all of them."""
        latest = dict(
            self.wh.sql(
                "SELECT model, arg_max(fingerprint, started_at) FROM meta.model_runs "
                "WHERE status IN ('built', 'skipped') AND list_contains(?, model) GROUP BY model",
                [list(names)],
            )
        )
        recorded = {
            (model, fingerprint): sha
            for model, fingerprint, sha in self.wh.sql(
                "SELECT model, fingerprint, definition_sha256 FROM meta.model_objects WHERE list_contains(?, model)",
                [list(names)],
            )
        }
        objects = model_objects(self.wh) if latest else {}
        found: dict[str, str | None] = {}
        for name in names:
            fingerprint = latest.get(name)
            current = objects.get(name, {}).get(object_kind(self.project.models[name]))
            ok = fingerprint is not None and current is not None and recorded.get((name, fingerprint)) == current
            found[name] = fingerprint if ok else None
        return found

    def run(
        self,
        names: list[str],
        force: bool = False,
        progress: Progress | None = None,
        given: frozenset[str] = frozenset(),
    ) -> list[ModelRun]:
        """Build `names` (in the order given, which must respect dependencies); stop at the first failure.
        `progress` hears of each model as it starts and ends (rankhouse/progress.py). The models of `given`
        are read as the warehouse holds them (a model test's fixture tables standing in for them:
        rankhouse/model_tests.py), never checked against their fingerprint.

        Example: Runner(wh, project).run(project.select("+run_measures"), progress=TextProgress())
        """
        progress = progress or SILENT
        results = []
        selected = set(names)
        outside = sorted({parent for name in names for parent in self.project.parents[name]} - selected - given)
        built = self.last_builds(sorted(selected | set(outside)))
        self._objects = model_objects(self.wh)  # kept up to date by _run_one
        for name in names:
            for parent in self.project.parents[name]:
                if parent not in selected and parent not in given and built[parent] != self.fingerprint(parent):
                    raise ModelError(name, f"needs {parent}, which is missing or out of date; select +{name}")
            progress.model_started(name)
            start = time.perf_counter()
            try:
                result = self._run_one(self.project.models[name], force, built[name])
            except BaseException as exc:
                status = "failed" if isinstance(exc, Exception) else "interrupted"
                seconds = time.perf_counter() - start
                progress.model_finished(ModelRun(name, self._fingerprints.get(name, ""), status, None, seconds))
                raise
            results.append(result)
            progress.model_finished(result)
        return results

    def _log(
        self, name: str, fingerprint: str, status: str, rows: int | None, seconds: float, message: str | None
    ) -> str:
        """The statement that records a model run in meta.model_runs."""
        values = ", ".join(_literal(v) for v in (name, fingerprint, status, rows, seconds))
        return f"INSERT INTO meta.model_runs VALUES ({values}, current_localtimestamp(), {_literal(message)})"

    def _definition(self, model: Model) -> str:
        """The SHA-256 of the model's object as its home catalog holds it now."""
        catalog, kind = model_home(self.wh, model).strip('"'), object_kind(model)
        found = model_objects(self.wh).get(model.name, {}).get(kind)
        if found is None:
            raise ModelError(model.name, f"left no {kind} in {catalog}.models")
        return found

    def _drop_other_kind(self, model: Model, home: str) -> None:
        """Drop a view where a table is to be built, or the other way round (in the gate: evaluate models)."""
        if home != "gate":
            return
        other = "table" if model.materialized == "view" else "view"
        if other in self._objects.get(model.name, {}):
            self.wh.sql(f'DROP {other.upper()} gate.models."{model.name}"')

    def create(self, model: Model, sql: str, target: str) -> None:
        """Create the model's table or view `target` from its rendered SQL; with array aggregates
        (Warehouse.array_aggregates) when the statement computes a model marked `aggregate: array`
        (Project.computes_array_aggregate).

        >>> runner.create(model, render(model, params), 'store_x.main."retrieval_runs__ab..."')  # doctest: +SKIP
        """
        kind = "VIEW" if model.materialized == "view" else "TABLE"
        create = f"CREATE OR REPLACE {kind} {target} AS\n{sql}"
        with contextlib.ExitStack() as settings:
            if model.materialized == "table" and self.project.computes_array_aggregate(model.name):
                settings.enter_context(self.wh.array_aggregates())
            if model.materialized == "table" and model.row_order == "any":
                settings.enter_context(self.wh.any_row_order())
            self.wh.sql(create)

    def _audit(self, model: Model, target: str, rows: int | None) -> None:
        """Run the model's audits on `target`, by the engine that computed it; an AuditError names the rows."""
        for audit in model.audits:
            if rows == 0 and audit.kind != "at_least_one_row":
                continue  # no row can break it
            columns, bad = self.engine.audit(self, model, audit, target)
            if bad:
                raise AuditError(model.name, str(audit), bad, columns)

    def _count(self, relation: str) -> int:
        return self.wh.sql(f"SELECT count(*) FROM {relation}")[0][0]

    def _run_one(self, model: Model, force: bool, last: str | None) -> ModelRun:
        """Build `model` (its last build's fingerprint is `last`), or skip it if that is its fingerprint.

        A prepare table is computed into the store as `<model>__<fingerprint>` (or found there, built by
        another study from the same SQL, parameters and data) and shown in the namespace as the view
        models.<model>; a prepare view is a view of the namespace; an evaluate model is built in the
        gate, beside the labels it is made of. Each write is its own transaction (DuckDB writes one
        file per transaction): the store table, then the namespace's view and bookkeeping."""
        start = time.perf_counter()
        fingerprint = self.fingerprint(model.name)
        if not force and last == fingerprint:
            rows = None if model.materialized == "view" else self._count(model.table)
            seconds = time.perf_counter() - start
            self.wh.sql(self._log(model.name, fingerprint, "skipped", rows, seconds, None))
            return ModelRun(model.name, fingerprint, "skipped", rows, seconds)
        home = model_home(self.wh, model)
        if home == "gate" and "gate" not in self.wh.attached():
            if self.wh.gated():
                raise ModelError(model.name, "is an evaluate model: it is built only once the labels gate is open")
            self.wh.open_gate()  # outside a study: evaluate models live beside the labels loaded outside one
        sql = analysed(model, self.params).rendered  # render.render's SQL, kept with the model's analysis
        defined = [] if self._functions_checked else user_functions(self.wh)
        self._functions_checked = not defined
        if defined:
            kind, name = defined[0]
            raise ModelError(
                model.name,
                f"is not built: the warehouse defines {kind} {name} (DuckDB would use it in place of a built-in "
                f"function of that name); drop it (DROP {'TYPE' if kind == 'type' else 'MACRO'} {name})",
            )
        functions.register(self.wh.con, model.functions)
        note = self.engine.note(model, self.project)
        try:
            with self.wh.resolving_models():
                rows, shared = self._build(model, fingerprint, sql, home, force)
                note = shared or note
                seconds = time.perf_counter() - start
                definition = self._definition(model)
                recorded = ", ".join(map(_literal, (model.name, fingerprint, definition)))
                with self.wh.transaction():
                    self.wh.sql(
                        f"DELETE FROM meta.model_objects WHERE model = {_literal(model.name)};\n"
                        f"INSERT INTO meta.model_objects VALUES ({recorded});\n"
                        + self._log(model.name, fingerprint, "built", rows, seconds, note)
                    )  # one round trip for the bookkeeping
        except (AuditError, ModelError) as exc:  # a ModelError here: the engine failed (Spark)
            self.engine.discard(self, model)
            self.wh.sql(self._log(model.name, fingerprint, "failed", None, time.perf_counter() - start, str(exc)))
            raise
        except duckdb.Error as exc:
            self.engine.discard(self, model)
            self.wh.sql(self._log(model.name, fingerprint, "failed", None, time.perf_counter() - start, str(exc)))
            raise ModelError(model.name, f"failed in DuckDB: {exc}") from None
        self._objects[model.name] = {object_kind(model): definition}
        return ModelRun(model.name, fingerprint, "built", rows, time.perf_counter() - start)

    def _build(self, model: Model, fingerprint: str, sql: str, home: str, force: bool) -> tuple[int | None, str | None]:
        """Make the model's object in `home` (with its store table, for a prepare table): its row count
        (None for a view), and a note when its store table was another build's."""
        name = f'{home}.models."{model.name}"'
        if model.stage == "prepare" and model.materialized == "table":
            physical = physical_name(model, fingerprint)
            shared = None if force else self.wh.store_table(physical)
            if shared is None:
                shared = self.wh.store_target(physical)
                with self.wh.transaction():
                    self.engine.create(self, model, sql, shared)
                    rows = self._count(shared)
                    self._audit(model, shared, rows)
                note = None
            else:
                rows = self._count(shared)
                note = f"its table {shared} was built before, from the same SQL, parameters and data"
            with self.wh.transaction():
                self.wh.sql(f"CREATE OR REPLACE VIEW {name} AS SELECT * FROM {shared}")
                describe(self.wh, model, home)
            return rows, note
        with self.wh.transaction():
            self._drop_other_kind(model, home)
            self.engine.create(self, model, sql, name)
            rows = None if model.materialized == "view" else self._count(name)
            describe(self.wh, model, home)
            self._audit(model, name, rows)
        return rows, None
