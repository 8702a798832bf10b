"""`rankhouse export DIR`: the warehouse's models as files for other tools, with a manifest.

One file per model (`<model>.parquet` or `<model>.csv`, with a header), its rows in a total order (every
column ascending, the grain's columns first), written by DuckDB's COPY; and `manifest.json`: per model its
kind (table or view), the fingerprint of the build that made it, rows, file and the file's SHA-256.

What is exported, and the gate:
- `--select` takes `rankhouse run -s`'s selection (Project.select: `name`, `+name`, `name+`, `stage:...`,
  `group:...`); every model it names itself must be built in the warehouse, and those it brings in that
  are not (a study builds the models of the measures it asks for only) are left out, and said. Without
  it, every model that is built there, views included (a view is computed when exported: BANKING77's
  full-ranking views hold 30.8M rows each, so select what you need). A model is built when the
  warehouse holds the table or view its last build made (its catalog definition as recorded in
  meta.model_objects at build time): a relation replaced or created by hand is not exported.
- The warehouse is opened read-only, file access off, settings locked (open_models), in one namespace:
  the default one (with its evaluate models, built from labels loaded outside any study), or with
  `--study` a study's: its prepare models, and its evaluate models (which live in its labels file) only
  once its latest freeze verifies, as `rankhouse query --study` opens them. Before that they are not
  built, and refused.
- The rows go from that connection to a separate one that may write files (Warehouse.files), as Arrow:
  the warehouse's connection opens no file. HUGEINT columns (exact sums) arrive as DECIMAL(38,0).

Refusals, all before anything is written: an unknown selection, a named model that is not built,
DIR an existing file, or an existing non-empty DIR without `--force` (with it, files of the same names
are replaced and others left). Files are written to a temporary folder beside DIR and moved in at the end.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from rankhouse import __version__
from rankhouse.cli.common import DEFAULT, DbOption, ProjectOption, choose, say
from rankhouse.errors import RankhouseError
from rankhouse.warehouse.layout import DEFAULT_NAMESPACE
from rankhouse.warehouse.literals import literal
from rankhouse.warehouse.memory import array_aggregate_settings

if TYPE_CHECKING:
    from rankhouse.warehouse import Warehouse
    from rankhouse.warehouse.catalog import Model
    from rankhouse.warehouse.dag import Project

FORMATS = ("parquet", "csv")
COPY_OPTIONS = {"parquet": "FORMAT parquet", "csv": "FORMAT csv, HEADER true"}
MANIFEST = "manifest.json"
BATCH_ROWS = 1 << 17


@dataclass(frozen=True)
class Exported:
    """One model's file, as the manifest lists it."""

    model: str
    kind: str
    fingerprint: str
    rows: int
    file: str
    sha256: str


def built_models(wh: Warehouse, project: Project) -> dict[str, str]:
    """Model -> the fingerprint of its last build, for every model whose table or view in the warehouse is
    the object that build made (meta.model_objects) and, for a view, computed only from such relations (the
    models.* its stored definition reads, parsed), in dependency order."""
    from rankhouse.warehouse.runner import definition_sha256

    if not wh.table_exists("meta.model_objects"):
        return {}
    recorded = {name: (fingerprint, sha) for name, fingerprint, sha in wh.sql("FROM meta.model_objects")}
    views = dict(wh.sql(
        "SELECT view_name, sql FROM duckdb_views() WHERE list_contains(?, database_name) AND schema_name = 'models' "
        "AND NOT contains(sql, ' FROM store_')",  # a table model's view over its store table is its table
        [[wh.namespace, "gate"]],
    ))  # fmt: skip
    found: dict[str, bool] = {}

    def sound(name: str) -> bool:
        if name not in found:
            found[name] = False  # while it is looked at (no model reads itself)
            model = project.models.get(name)
            ok = model is not None and name in recorded and definition_sha256(wh, model) == recorded[name][1]
            if ok and name in views:
                ok = all(sound(parent) for parent in view_reads(views[name]))
            found[name] = ok
        return found[name]

    return {name: recorded[name][0] for name in project.order if sound(name)}


def view_reads(sql: str) -> set[str]:
    """The models.* relations a view's stored definition reads.

    >>> sorted(view_reads("CREATE VIEW models.v AS WITH a AS (FROM models.x) FROM a JOIN raw.y USING (k)"))
    ['x']
    """
    import sqlglot
    from sqlglot import exp

    tree = sqlglot.parse_one(sql, read="duckdb")
    created = tree.this if isinstance(tree, exp.Create) else None
    created = created.this if isinstance(created, exp.Schema) else created
    tables = (t for t in tree.find_all(exp.Table) if t is not created and t.db.lower() == "models")
    return {t.name.lower() for t in tables}


def chosen(project: Project, built: dict[str, str], select: str | None, db: str) -> tuple[list[str], list[str]]:
    """The models to export: the selection's, or every built one; and the models the selection brings in
    (`+name`, `name+`, `stage:`, `group:`) that are not built here, left out (a study builds only the
    models of the measures it asks for, where the models' defaults name more). A model the selection
    names itself must be built."""
    if not select:
        if not built:
            raise RankhouseError(f"no model is built in {db}: nothing to export")
        return list(built), []
    names = project.select(select)
    missing = [name for name in project.named(select) if name not in built]
    if missing:
        shown = ", ".join(missing[:8]) + (f" and {len(missing) - 8} more" if len(missing) > 8 else "")
        raise RankhouseError(
            f"not built in {db}: {shown} (a model is built by `rankhouse run` or its study's stage; a study's "
            "evaluate models once its freeze verifies); `rankhouse models list --db` shows each model's status"
        )
    return [name for name in names if name in built], [name for name in names if name not in built]


def check_target(target: Path, force: bool) -> None:
    """Refuse a target that is a file, or a non-empty folder without --force."""
    if target.exists() and not target.is_dir():
        raise RankhouseError(f"{target} is a file, not a folder")
    if target.is_dir() and any(target.iterdir()) and not force:
        raise RankhouseError(f"{target} is not empty: choose another folder, or --force to replace its files")


def ordered_rows(wh: Warehouse, model: Model) -> str:
    """SELECT of a model's rows in a total order: every column ascending, the grain's first."""
    catalog, schema, name = wh.resolve(model.table) or (wh.namespace, "models", model.name)
    columns = [
        row[0]
        for row in wh.sql(
            "SELECT column_name FROM duckdb_columns() WHERE database_name = ? AND schema_name = ? AND table_name = ? "
            "ORDER BY column_index",
            [catalog, schema, name],
        )
    ]
    keys = [c for c in model.grain if c in columns] + [c for c in columns if c not in model.grain]
    order = ", ".join(f'"{c}"' for c in keys)
    return f"SELECT * FROM {model.table} ORDER BY {order}"


def write_model(wh: Warehouse, model: Model, path: Path, output_format: str) -> int:
    """Write one model's rows to `path` with COPY (in the file-writing connection); the row count."""
    reader = wh.con.sql(ordered_rows(wh, model)).to_arrow_reader(BATCH_ROWS)
    wh.files.register("rh_export_rows", reader)
    try:
        copy = f"COPY rh_export_rows TO {literal(str(path))} ({COPY_OPTIONS[output_format]})"
        copied = wh.files.execute(copy).fetchall()
    finally:
        wh.files.unregister("rh_export_rows")
    return int(copied[0][0])


def file_sha256(path: Path) -> str:
    """SHA-256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def export_models(
    wh: Warehouse, project: Project, names: list[str], built: dict[str, str], folder: Path, output_format: str
) -> list[Exported]:
    """Write every named model into `folder`, and the manifest."""
    import duckdb

    exported = []
    for name in names:
        model = project.models[name]
        path = folder / f"{name}.{output_format}"
        try:
            rows = write_model(wh, model, path, output_format)
        except duckdb.Error as exc:
            raise RankhouseError(f"model {name} could not be exported: {exc}") from None
        exported.append(Exported(name, model.materialized, built[name], rows, path.name, file_sha256(path)))
        say(f"  {name:<32} {rows:>12,} rows  {path.name}")
    manifest = {
        "warehouse": wh.path,
        "format": output_format,
        "rankhouse": __version__,
        "duckdb": duckdb.__version__,
        "models": [vars(e) for e in exported],
    }
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    return exported


def open_models(db: str, protocol: object | None, freezes: Path | None, array_aggregates: bool = False) -> Warehouse:
    """A read-only, locked-down session in the namespace whose models are exported: the default one, its
    evaluate models with it (labels loaded outside any study open freely), or a study's, its evaluate
    models only once its latest freeze verifies (as `rankhouse query --study` opens them)."""
    from rankhouse.study import Study
    from rankhouse.warehouse import Warehouse

    namespace = protocol.name if protocol is not None else DEFAULT_NAMESPACE
    wh = Warehouse(db, read_only=True, namespace=namespace)
    try:
        if array_aggregates:
            for setting, value in array_aggregate_settings(wh.con).items():
                wh.con.execute(f"SET {setting} = '{value}'")
        if protocol is None:
            if Path(wh.labels_path).exists():
                wh.open_gate()
        else:
            study = Study(protocol, wh, freezes)
            existing = study.freezes()
            if existing and not study.verify(existing[-1]):
                wh.open_gate(verified_freeze=existing[-1].freeze_id)
        wh.lock_down()
    except BaseException:
        wh.close()
        raise
    return wh


def export_command(
    target: Annotated[Path, typer.Argument(metavar="DIR", help="Folder to write (created if missing).")],
    output_format: Annotated[str, typer.Option("--format", help="parquet (default) or csv.")] = "parquet",
    select: Annotated[
        str | None, typer.Option("--select", "-s", help="dbt-style, as `rankhouse run -s`: name, +name, name+.")
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Write into a non-empty folder, replacing files.")] = False,
    db: DbOption = DEFAULT,
    study: Annotated[
        Path | None,
        typer.Option("--study", help="Export this study's models (its namespace) instead of the default namespace's."),
    ] = None,
    freezes: Annotated[Path | None, typer.Option("--freezes", help="Directory of the study's freeze files.")] = None,
    project_dir: ProjectOption = None,
) -> None:
    """Write built models to files, one per model, with a manifest (fingerprint, rows, SHA-256): those of
    the default namespace, or with --study those of a study: its prepare models, and its evaluate models
    (built from its labels) only once its latest freeze verifies.

    Example: rankhouse export out/tables --format parquet --select +run_measures --db rankhouse.duckdb
    """
    from rankhouse.study import Protocol
    from rankhouse.warehouse.dag import Project

    choose(output_format, FORMATS, "--format")
    protocol = Protocol.load(study) if study is not None else None
    project = Project.load()
    check_target(target, force)
    with open_models(db, protocol, freezes) as wh:
        built = built_models(wh, project)
    names, left_out = chosen(project, built, select, db)
    if left_out:
        say(f"not built in {db}, left out: {', '.join(left_out)}")
    # the models' views that sum into arrays (BM25's) get array aggregates: settings are locked once open
    arrays = any(project.computes_array_aggregate(n) for n in names)
    with open_models(db, protocol, freezes, array_aggregates=arrays) as wh:
        if built_models(wh, project) != built:
            raise RankhouseError(f"{db} changed while the export started; run it again")
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
        try:
            say(f"exporting {len(names)} model(s) from {db} to {target} as {output_format}")
            exported = export_models(wh, project, names, built, staging, output_format)
            target.mkdir(exist_ok=True)
            for path in staging.iterdir():
                os.replace(path, target / path.name)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    say(f"wrote {len(exported)} file(s) and {MANIFEST} to {target}")
