"""Running portable models on Apache Spark, the DuckDB warehouse staying the catalog of record.

`rankhouse run --engine spark [--master URL]` builds each portable model in a SparkSession (local[*] by
default, or any master URL: a standalone cluster, YARN, k8s): its rendered SQL is transpiled by sqlglot
from DuckDB's dialect to Spark SQL and run there; its rows are written to Parquet and read back into
the warehouse as the model's table, so that meta.model_runs, fingerprints, comments, audits, freezes and
the gate work as they do on DuckDB. The rows travel as Parquet both ways:

- the tables a Spark model reads and Spark does not hold yet (raw.* inputs, models built by DuckDB) are
  exported from the warehouse with DuckDB's COPY (through Warehouse.files: the warehouse's own
  connection writes no file) and registered as Spark temporary views;
- a model built on Spark is registered as a view over its own Parquet output for the models after it.

Names. Spark's temporary views cannot be schema-qualified, and creating databases `raw` and `models`
would write into a cluster's shared metastore, so every `schema.table` a model reads is renamed in the
transpiled SQL to the view `rh<n>_<schema>__<table>` (n numbers the engines of a process, so that two
warehouses can share one SparkSession): `models.judged_ranking` is read as `rh1_models__judged_ranking`.

What runs on DuckDB (`runs_on`): a model whose header says `dialect: duckdb: <reason>` (vectors,
list lambdas, ordered list aggregates, max_by with a count), a model that calls a Python function of
the registry (rankhouse/functions.py) and a model that reads the labels (gate.*): the labels file is
opened by DuckDB's gate only, and a staging copy of the labels is in the warehouse anyway. Such a model
is built in DuckDB and handed to Spark as Parquet when a Spark model reads it. A view model runs on
Spark as a temporary view of its transpiled SQL (DuckDB gets its view too, for the catalog).

The Parquet files live in `workdir` (default: `<warehouse>.spark/` beside the file, a temporary folder
for `:memory:`; `--spark-workdir DIR` or RANKHOUSE_SPARK_WORKDIR); on a cluster it must be a folder of a
shared file system mounted at the same path on this machine (DuckDB writes and reads the files) and on
every executor, such as NFS; a URL (hdfs://, s3a://) is refused. A model's fingerprint does not name the engine
(the parity tests hold the engines to the same rows), so a model built on DuckDB is up to date for a
Spark run and the other way round (`--force` rebuilds it), a Spark run can read the prepare models a
study froze on DuckDB, and meta.model_runs' message says `built on spark <version> (<master>, sqlglot
<version>)` for a model built on Spark. The work folder is given to Spark as a file:// URI, so that a
cluster whose default file system is HDFS still reads and writes where DuckDB does.

Audits run on the engine that computed the model: a model that runs on Spark is audited there, the
SQL of rankhouse/warehouse/audits.py transpiled like a model's and run against the model's Spark view
(a table's Parquet output, a view's transpiled SQL); the few offending rows are cast to the types the
warehouse gives the model's columns, so that the AuditError reads as it does on DuckDB. A failed build
or audit leaves nothing behind: the warehouse rolls the table back and the engine drops the model's
Spark view and Parquet output (`discard`), so a later reader exports the warehouse's table again.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import shutil
import tempfile
from pathlib import Path

import sqlglot

from rankhouse.errors import ModelError, RankhouseError
from rankhouse.warehouse.audits import audit_sql
from rankhouse.warehouse.catalog import Audit, Model
from rankhouse.warehouse.connection import MEMORY, Warehouse
from rankhouse.warehouse.dag import Project
from rankhouse.warehouse.memory import release_memory, reserve_memory
from rankhouse.warehouse.portability import spark_tree
from rankhouse.warehouse.render import literal, parse, render
from rankhouse.warehouse.runner import DuckDBEngine, Runner, source_versions

DEFAULT_MASTER = "local[*]"
_ENGINES = itertools.count(1)


def spark_version() -> str | None:
    """The installed pyspark's version, or None when pyspark is not installed.

    >>> spark_version() is None or spark_version() >= "4.1"
    True
    """
    try:
        import pyspark
    except ImportError:
        return None
    return pyspark.__version__


def java_available() -> bool:
    """Whether a Java runtime is reachable (JAVA_HOME or `java` on PATH), which Spark needs."""
    import os

    home = os.environ.get("JAVA_HOME")
    return bool((home and Path(home, "bin", "java").exists()) or shutil.which("java"))


def spark_sql(model: Model, sql: str, view_of) -> str:
    """The model's rendered SQL in Spark SQL by the portability rules (portability.spark_tree), each
    `schema.table` it reads renamed by `view_of`; raises ModelError when sqlglot cannot transpile it.

    Example: spark_sql(model, "SELECT * FROM models.x", lambda ref: ref.replace(".", "__")) gives
    'SELECT * FROM models__x'.
    """
    tree = spark_tree(parse(model, sql).copy(), view_of)  # parse's tree is cached and shared: a copy
    try:
        return tree.sql(dialect="spark", unsupported_level=sqlglot.ErrorLevel.RAISE)
    except sqlglot.errors.SqlglotError as exc:
        raise ModelError(model.name, f"sqlglot cannot transpile it to Spark SQL: {exc}") from None


def duckdb_reason(model: Model, project: Project) -> str | None:
    """Why `--engine spark` builds `model` in DuckDB, or None when it runs on Spark: the reason its header
    gives (`dialect: duckdb: <reason>`), "calls a Python function" (`functions:`) or "reads the labels"
    (gate.*, which only DuckDB's gate opens).

    Example: duckdb_reason(project.models["qrels"], project) gives 'reads the labels'.
    """
    dialect = (model.dialect or "").strip()
    if dialect.lower().startswith("duckdb"):
        return dialect[len("duckdb") :].lstrip(" :") or "dialect: duckdb"
    if model.functions:
        return "calls a Python function"
    if any(ref.startswith("gate.") for ref in project.references[model.name]):
        return "reads the labels"
    return None


def quoted(name: str) -> str:
    """A column name as a quoted SQL identifier.

    >>> quoted('a"b')
    '"a""b"'
    """
    return '"' + name.replace('"', '""') + '"'


def column_casts(names: list[str], described: list[tuple]) -> str:
    """A select list casting each column of `names` (Spark's) to the DuckDB type `described` (DESCRIBE
    rows: name, type) gives the column of the same place, under DuckDB's name.

    >>> column_casts(["n"], [("n", "BIGINT")])
    'CAST("n" AS BIGINT) AS "n"'
    """
    return ", ".join(f"CAST({quoted(name)} AS {row[1]}) AS {quoted(row[0])}" for name, row in zip(names, described))


class SparkEngine(DuckDBEngine):
    """Builds the portable models of a run on Spark and hands their rows back to the warehouse.

    Example: Runner(wh, project, params, engine=SparkEngine("local[2]")).run(project.select("+run_measures"))
    """

    name = "spark"

    def __init__(self, master: str = DEFAULT_MASTER, workdir: str | Path | None = None, session=None) -> None:
        if workdir is not None and re.match(r"[a-z][a-z0-9+.-]+:/", str(workdir), re.IGNORECASE):  # s3a:// or s3a:/
            raise RankhouseError(
                f"the Spark work folder is a folder path, not {str(workdir)!r}: DuckDB writes and reads its Parquet "
                "files there, so on a cluster it is a shared file system mounted at the same path on this machine "
                "and every executor"
            )
        if session is None:
            if spark_version() is None:
                raise RankhouseError("--engine spark needs pyspark: pip install 'rankhouse[spark]' (and Java 17)")
            if not java_available():
                raise RankhouseError("--engine spark needs Java 17 or 21 (JAVA_HOME or java on PATH); none found")
        self.master = session.sparkContext.master if session is not None else master
        self._workdir = Path(workdir).absolute() if workdir is not None else None
        self._own_tmp: list[str] = []  # temporary work folders (in-memory warehouses), removed by close
        self._session = session
        self._owns_session = session is None
        self.prefix = f"rh{next(_ENGINES)}_"
        self._registered: dict[str, str] = {}  # schema.table -> the key (version) of what its view holds
        self._warehouse: object | None = None  # the warehouse the views hold rows of
        self._given_workdir = self._workdir is not None
        self._reserved = False  # whether start() reserved the driver's heap from DuckDB's default limit

    # -- where models run, and their fingerprints -------------------------------------------------
    def runs_on(self, model: Model, project: Project) -> str:
        """`duckdb` for a model marked `dialect: duckdb`, calling a Python function or reading labels
        (duckdb_reason); `spark` otherwise.

        Example: SparkEngine().runs_on(project.models["measure_ap"], project) gives 'spark'.
        """
        return "duckdb" if duckdb_reason(model, project) else "spark"

    def note(self, model: Model, project: Project) -> str | None:
        """meta.model_runs' message of a model built on Spark: Spark's and sqlglot's versions and the master.

        Example: engine.note(project.models["measure_ap"], project) gives
        'built on spark 4.3.0 (local[*], sqlglot 30.31.0)'.
        """
        if self.runs_on(model, project) == "duckdb":
            return super().note(model, project)
        return f"built on spark {spark_version()} ({self.master}, sqlglot {sqlglot.__version__})"

    # -- the session and the files ----------------------------------------------------------------
    @property
    def session(self):
        """The SparkSession, started on first use (a few seconds: a JVM)."""
        if self._session is None:
            from pyspark.sql import SparkSession

            self._session = SparkSession.getActiveSession()  # one of the process's own (a notebook's, a test's)
            if self._session is not None:
                self._owns_session = False
                self.master = self._session.sparkContext.master  # the session's, whatever --master said
                return self._session
            builder = SparkSession.builder.master(self.master).appName("rankhouse")
            builder = builder.config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
            builder = builder.config("spark.sql.session.timeZone", "UTC")
            try:
                self._session = builder.getOrCreate()
                # a failing model is one `error:` line (ModelError), not Spark's log of the Java stack trace
                self._session.sparkContext.setLogLevel("OFF")
            except Exception as exc:  # Java missing or too old, a master that does not answer
                raise RankhouseError(f"cannot start Spark on {self.master}: {str(exc).splitlines()[0]}") from None
        return self._session

    def start(self) -> None:
        """Start the SparkSession now (a few seconds), so that a master that does not answer is refused
        before a command opens its warehouse. A local master computes in this machine's driver JVM: its
        heap is reserved from DuckDB's default memory limit until close (connection.reserve_memory)."""
        self.session  # noqa: B018 - the property starts it
        if self.master.startswith("local") and not self._reserved:
            runtime = self.session.sparkContext._jvm.java.lang.Runtime.getRuntime()
            reserve_memory(int(runtime.maxMemory()))
            self._reserved = True

    def workdir(self, runner: Runner) -> Path:
        """The folder of the Parquet files: the one given, else `<warehouse>.spark/` (a temporary one
        for an in-memory warehouse)."""
        if self._workdir is None:
            if runner.wh.path == MEMORY:
                self._own_tmp.append(tempfile.mkdtemp(prefix="rankhouse-spark-"))
                self._workdir = Path(self._own_tmp[-1])
            else:
                self._workdir = Path(runner.wh.path + ".spark")
        self._workdir.mkdir(parents=True, exist_ok=True)
        return self._workdir

    def view(self, ref: str) -> str:
        """The Spark view that holds `schema.table`.

        Example: engine.view("models.judged_ranking") gives 'rh1_models__judged_ranking'.
        """
        schema, table = ref.split(".", 1)
        return f"{self.prefix}{schema}__{table}"

    def _bind(self, runner: Runner) -> None:
        """Serve `runner`'s warehouse: the views and (unless given) the work folder of another warehouse
        the engine served before are forgotten, as their keys (fingerprints) may be the same."""
        if self._warehouse is not runner.wh:
            self._warehouse = runner.wh
            self._registered.clear()
            if not self._given_workdir:
                self._workdir = None

    def _folder(self, runner: Runner, ref: str, key: str) -> Path:
        """A fresh folder for a version of `ref`'s rows (earlier versions removed)."""
        base = self.workdir(runner) / ref.replace(".", "/")
        shutil.rmtree(base, ignore_errors=True)
        folder = base / hashlib.sha256(key.encode()).hexdigest()[:16]
        folder.mkdir(parents=True)
        return folder

    # -- building ---------------------------------------------------------------------------------
    def create(self, runner: Runner, model: Model, sql: str, target: str) -> None:
        """Build the model on its engine: in DuckDB (a DuckDB-only model, and every view, which is only
        a definition there) and, for a portable model, on Spark, its rows handed back as its table `target`."""
        self._bind(runner)
        self._registered.pop(model.table, None)
        if self.runs_on(model, runner.project) == "duckdb" or model.materialized == "view":
            super().create(runner, model, sql, target)
            return
        for ref in sorted(runner.project.references[model.name]):
            self._register(runner, ref)
        text = spark_sql(model, sql, self.view)
        folder = self._folder(runner, model.table, runner.fingerprint(model.name))
        try:
            rows = self.session.sql(text)
            rows.write.mode("overwrite").parquet(folder.as_uri())
        except RankhouseError:
            raise
        except Exception as exc:  # pyspark's AnalysisException, Py4JJavaError, ...
            raise ModelError(model.name, f"failed on Spark: {_first_line(exc)}") from None
        self._hand_back(runner, model, sql, folder, target)
        # the schema given, Spark reads no file to infer it
        self.session.read.schema(rows.schema).parquet(folder.as_uri()).createOrReplaceTempView(self.view(model.table))
        self._registered[model.table] = runner.fingerprint(model.name)

    def _hand_back(self, runner: Runner, model: Model, sql: str, folder: Path, target: str) -> None:
        """Read the model's Parquet output into its table `target`, each column cast to the type DuckDB gives
        it (so that the catalog's types do not depend on the engine)."""
        wh = runner.wh
        described = wh.sql(f"DESCRIBE {sql}")
        reader = wh.files.sql(
            f"SELECT * FROM read_parquet({literal(f'{folder}/*.parquet')}, union_by_name = false)"
        ).to_arrow_reader(1 << 17)
        columns = reader.schema.names
        if len(columns) != len(described):
            raise ModelError(model.name, f"Spark gave {len(columns)} columns, DuckDB's SQL {len(described)}")
        casts = column_casts(columns, described)
        with wh.registered("rh_spark_rows", reader):  # a failed CREATE's own error stands (not "aborted")
            wh.sql(f"CREATE OR REPLACE TABLE {target} AS SELECT {casts} FROM rh_spark_rows")

    def audit(self, runner: Runner, model: Model, audit: Audit, target: str) -> tuple[list[str], list[tuple]]:
        """The rows that break `audit`, found where the model was computed: on Spark, against the model's
        Spark view, for a model that runs there (its offending rows cast to the warehouse's column types,
        so that the AuditError reads as on DuckDB); in DuckDB otherwise.

        Example: columns, bad = engine.audit(runner, model, model.audits[0], "models.run_measures")
        """
        if self.runs_on(model, runner.project) == "duckdb":
            return super().audit(runner, model, audit, target)
        self._register(runner, model.table)  # a view's Spark view (a table's was registered when built)
        text = spark_sql(model, audit_sql(model, audit), self.view)
        try:
            found = self.session.sql(text).toArrow()
        except Exception as exc:
            raise ModelError(model.name, f"audit {audit} failed to run on Spark: {_first_line(exc)}") from None
        if not found.num_rows:
            return found.schema.names, []
        return _in_duckdb_types(runner.wh, target, found)

    def read(self, runner: Runner, ref: str):
        """The rows of model table or view `ref` as Spark holds them (a portable view: its transpiled SQL
        run there; a model built on Spark: its Parquet output): (column names, rows), each value in the
        type the warehouse gives its column. For the engine parity tests and for looking at a Spark run.

        Example: columns, rows = engine.read(runner, "models.bm25_scores")
        """
        self._bind(runner)
        self._register(runner, ref)
        found = self.session.sql(f"SELECT * FROM {self.view(ref)}").toArrow()
        return _in_duckdb_types(runner.wh, ref, found)

    def discard(self, runner: Runner, model: Model) -> None:
        """Forget what a failed build or audit of `model` left on Spark: its view and its Parquet output
        (the warehouse rolls its table back; a later reader exports that table again)."""
        self._registered.pop(model.table, None)
        if self._session is not None:
            self._session.catalog.dropTempView(self.view(model.table))
        if self._workdir is not None:
            shutil.rmtree(self._workdir / model.table.replace(".", "/"), ignore_errors=True)

    def _register(self, runner: Runner, ref: str) -> None:
        """Make `ref` readable on Spark as its view: a portable view model as a view of its transpiled
        SQL, any other table (an input, a model built by DuckDB or before this run) exported to Parquet."""
        schema, table = ref.split(".", 1)
        model = runner.project.models.get(table) if schema == "models" else None
        if model is not None:
            key = runner.fingerprint(table)
        else:
            key = json.dumps(source_versions(runner.wh, {ref}), sort_keys=True)
        if self._registered.get(ref) == key:
            return
        if model is not None and model.materialized == "view" and self.runs_on(model, runner.project) == "spark":
            for parent in sorted(runner.project.references[table]):
                self._register(runner, parent)
            text = spark_sql(model, render(model, runner.params), self.view)
            try:
                self.session.sql(text).createOrReplaceTempView(self.view(ref))
            except Exception as exc:
                raise ModelError(table, f"failed on Spark (as a view): {_first_line(exc)}") from None
        else:
            folder = self._folder(runner, ref, key)
            self._export(runner, ref, folder / "rows.parquet")
            self.session.read.parquet(folder.as_uri()).createOrReplaceTempView(self.view(ref))
        self._registered[ref] = key

    def _export(self, runner: Runner, ref: str, path: Path) -> None:
        """Write the warehouse's `ref` to a Parquet file with DuckDB's COPY (through Warehouse.files)."""
        wh = runner.wh
        reader = wh.con.sql(f"SELECT * FROM {ref}").to_arrow_reader(1 << 17)
        wh.files.register("rh_spark_export", reader)
        try:
            wh.files.execute(f"COPY rh_spark_export TO {literal(str(path))} (FORMAT parquet)")
        finally:
            wh.files.unregister("rh_spark_export")

    def close(self) -> None:
        """Stop the SparkSession the engine started, give back the memory reserved for it, and remove a
        temporary work folder."""
        if self._reserved:
            release_memory()
            self._reserved = False
        if self._owns_session and self._session is not None:
            self._session.stop()
            self._session = None
        for folder in self._own_tmp:
            shutil.rmtree(folder, ignore_errors=True)
        self._own_tmp = []


def _in_duckdb_types(wh: Warehouse, relation: str, found) -> tuple[list[str], list[tuple]]:
    """Rows from Spark (an Arrow table), each column that is one of the model's cast to the type the
    warehouse gives it in `relation` (an audit's own columns, such as `copies`, as they are)."""
    types = {name.lower(): kind for name, kind, *_ in wh.sql(f"DESCRIBE SELECT * FROM {relation}")}
    select = ", ".join(
        column_casts([name], [(name, types[name.lower()])]) if name.lower() in types else quoted(name)
        for name in found.schema.names
    )
    with wh.registered("rh_spark_audit", found):
        return wh.columns(f"SELECT {select} FROM rh_spark_audit")


def _first_line(exc: BaseException) -> str:
    """An exception's message, its first line (a Java stack trace follows Spark's)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
