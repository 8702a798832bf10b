"""Running selected models: fingerprint, skip when unchanged, build, audit, log."""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass

import duckdb

from rankhouse import functions
from rankhouse.errors import AuditError, ModelError, RankhouseError
from rankhouse.progress import SILENT, Progress
from rankhouse.warehouse.audits import audit_sql
from rankhouse.warehouse.catalog import Audit, Model
from rankhouse.warehouse.comments import describe
from rankhouse.warehouse.connection import Warehouse
from rankhouse.warehouse.dag import Project
from rankhouse.warehouse.render import canonical_sql, effective_parameters, parse, render


@dataclass(frozen=True)
class ModelRun:
    """The outcome of one model in a DAG run."""

    model: str
    fingerprint: str
    status: str  # built | skipped | failed
    rows: int | None  # None for a view
    seconds: float


def source_versions(wh: Warehouse, refs: set[str]) -> dict[str, list[list[str]]]:
    """Per source table read: the (name, sha256) of every file loaded into it.

    Part of the fingerprint, so that reloading different data rebuilds the models that read it.
    """
    versions: dict[str, list[list[str]]] = {}
    for ref in sorted(refs):
        schema, table = ref.split(".", 1)
        if schema == "raw":
            rows = wh.sql("SELECT name, sha256 FROM meta.sources WHERE table_name = ? ORDER BY name", [ref])
        elif schema == "gate":
            if "gate" not in wh.attached():
                raise RankhouseError(f"{ref} is behind the labels gate, which is closed")
            rows = wh.sql("SELECT name, sha256 FROM gate.meta.sources WHERE table_name = ? ORDER BY name", [table])
        else:
            continue
        versions[ref] = [list(row) for row in rows]
    return versions


def user_functions(wh: Warehouse) -> list[tuple[str, str]]:
    """(kind, schema.name) of every macro or type defined in the warehouse file. DuckDB resolves a
    macro in `main` before its built-in of the same name (a `log2` macro changes every nDCG), so a
    warehouse that builds models defines none.

    >>> user_functions(Warehouse(":memory:"))
    []
    """
    return wh.sql(
        "SELECT DISTINCT function_type, schema_name || '.' || function_name FROM duckdb_functions() "
        "WHERE database_name = current_database() AND NOT internal AND function_type IN ('macro', 'table_macro') "
        "UNION SELECT 'type', schema_name || '.' || type_name FROM duckdb_types() "
        "WHERE database_name = current_database() AND NOT internal ORDER BY ALL"
    )


def definition_sha256(wh: Warehouse, model: Model) -> str | None:
    """SHA-256 of the model's view or table definition as the warehouse's catalog holds it."""
    return model_objects(wh).get(model.name, {}).get(model.materialized)


def model_objects(wh: Warehouse) -> dict[str, dict[str, str]]:
    """Every table and view of the warehouse's `models` schema: name -> {"table" or "view": SHA-256 of its
    definition in the catalog} (one query for all of them)."""
    found: dict[str, dict[str, str]] = {}
    for name, kind, sql in wh.sql(
        "SELECT table_name, 'table', sql FROM duckdb_tables() WHERE database_name = current_database() "
        "AND schema_name = 'models' UNION ALL SELECT view_name, 'view', sql FROM duckdb_views() "
        "WHERE database_name = current_database() AND schema_name = 'models'"
    ):
        found.setdefault(name, {})[kind] = hashlib.sha256(sql.encode()).hexdigest()
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

    def create(self, runner: Runner, model: Model, sql: str) -> None:
        """Create the model's table or view in the warehouse (inside the runner's transaction)."""
        runner.create(model, sql)

    def audit(self, runner: Runner, model: Model, audit: Audit) -> tuple[list[str], list[tuple]]:
        """The columns and (a few) rows that break `audit` of the model just built, found by the engine
        that computed it: here, in the warehouse (rankhouse/warehouse/audits.py's SQL).

        Example: columns, bad = DuckDBEngine().audit(runner, model, model.audits[0])
        """
        return runner.wh.columns(audit_sql(model, audit))

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
        self._functions_checked = False  # user_functions, once per runner: a model defines none
        self._objects: dict[str, dict[str, str]] = {}  # the models schema's objects, read by run()
        unknown = set(self.params) - {k for m in project.models.values() for k in m.parameters}
        if unknown:
            raise RankhouseError(f"no model declares parameter(s) {', '.join(sorted(unknown))}")

    def fingerprint(self, name: str) -> str:
        """SHA-256 over canonical SQL, version, materialisation, parameters, parents' fingerprints, source
        data and DuckDB version. Not the engine: a model gives the same rows on DuckDB and on Spark
        (tests/test_spark_engine.py), so a model built on one is up to date on the other (`--force`
        rebuilds it), and a freeze verifies whichever engine built its models."""
        if name not in self._fingerprints:
            model = self.project.models[name]
            tree = parse(model, render(model, self.params))
            payload = {
                "sql": canonical_sql(tree),
                "version": model.version,
                "materialized": model.materialized,
                "parameters": effective_parameters(model, self.params),
                "parents": {p: self.fingerprint(p) for p in self.project.parents[name]},
                "sources": source_versions(self.wh, self.project.references[name]),
                "engine": f"duckdb {duckdb.__version__}",
            }
            blob = json.dumps(payload, sort_keys=True, default=str).encode()
            self._fingerprints[name] = hashlib.sha256(blob).hexdigest()
        return self._fingerprints[name]

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
            current = objects.get(name, {}).get(self.project.models[name].materialized)
            ok = fingerprint is not None and current is not None and recorded.get((name, fingerprint)) == current
            found[name] = fingerprint if ok else None
        return found

    def run(self, names: list[str], force: bool = False, progress: Progress | None = None) -> list[ModelRun]:
        """Build `names` (in the order given, which must respect dependencies); stop at the first failure.
        `progress` hears of each model as it starts and ends (rankhouse/progress.py).

        Example: Runner(wh, project).run(project.select("+run_measures"), progress=TextProgress())
        """
        progress = progress or SILENT
        results = []
        selected = set(names)
        outside = sorted({parent for name in names for parent in self.project.parents[name]} - selected)
        built = self.last_builds(sorted(selected | set(outside)))
        self._objects = model_objects(self.wh)  # kept up to date by _run_one
        for name in names:
            for parent in self.project.parents[name]:
                if parent not in selected and built[parent] != self.fingerprint(parent):
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

    def _built(self, model: Model) -> tuple[int | None, str]:
        """The rows of a model's new table (None for a view: counting would run it) and the SHA-256 of its
        definition in the catalog, in one query."""
        catalog = "duckdb_views()" if model.materialized == "view" else "duckdb_tables()"
        column = "view_name" if model.materialized == "view" else "table_name"
        count = "NULL" if model.materialized == "view" else f"(SELECT count(*) FROM {model.table})"
        rows, sql = self.wh.sql(
            f"SELECT {count}, (SELECT sql FROM {catalog} WHERE database_name = current_database() "
            f"AND schema_name = 'models' AND {column} = ?)",
            [model.name],
        )[0]
        return rows, hashlib.sha256(sql.encode()).hexdigest()

    def _drop_other_kind(self, model: Model) -> None:
        """Drop a view where a table is to be built, or the other way round."""
        other = "table" if model.materialized == "view" else "view"
        if other in self._objects.get(model.name, {}):
            self.wh.sql(f"DROP {other.upper()} {model.table}")

    def create(self, model: Model, sql: str) -> None:
        """Create the model's table or view from its rendered SQL; with array aggregates
        (Warehouse.array_aggregates) when the statement computes a model marked `aggregate: array`
        (Project.computes_array_aggregate).

        >>> runner.create(project.models["retrieval_runs"], render(model, params))  # doctest: +SKIP
        """
        create = f"CREATE OR REPLACE {model.materialized.upper()} {model.table} AS\n{sql}"
        if model.materialized == "table" and self.project.computes_array_aggregate(model.name):
            with self.wh.array_aggregates():
                self.wh.sql(create)
        else:
            self.wh.sql(create)

    def _run_one(self, model: Model, force: bool, last: str | None) -> ModelRun:
        """Build `model` (its last build's fingerprint is `last`), or skip it if that is its fingerprint."""
        start = time.perf_counter()
        fingerprint = self.fingerprint(model.name)
        if not force and last == fingerprint:
            rows = None if model.materialized == "view" else self.wh.sql(f"SELECT count(*) FROM {model.table}")[0][0]
            seconds = time.perf_counter() - start
            self.wh.sql(self._log(model.name, fingerprint, "skipped", rows, seconds, None))
            return ModelRun(model.name, fingerprint, "skipped", rows, seconds)
        sql = render(model, self.params)
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
        try:
            with self.wh.transaction():
                self._drop_other_kind(model)
                self.engine.create(self, model, sql)
                describe(self.wh, model)  # comments from its header and the column glossary
                rows, definition = self._built(model)
                for audit in model.audits:
                    if rows == 0 and audit.kind != "at_least_one_row":
                        continue  # no row can break it
                    columns, bad = self.engine.audit(self, model, audit)  # where the model was computed
                    if bad:
                        raise AuditError(model.name, str(audit), bad, columns)
                seconds = time.perf_counter() - start
                note = self.engine.note(model, self.project)
                recorded = ", ".join(map(_literal, (model.name, fingerprint, definition)))
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
        self._objects[model.name] = {model.materialized: definition}
        return ModelRun(model.name, fingerprint, "built", rows, seconds)
