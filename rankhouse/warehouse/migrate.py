"""`rankhouse migrate`: a warehouse of rankhouse 0.1 (one file holding every study's models, results and
freezes, labels in `<name>.labels.duckdb`, freeze files in `freezes/` beside it) carried over once into
the layout of many studies (layout.py), its freezes still verifying.

What moves where:
- the inputs (raw.*, meta.sources) stay in the file `--db` names, without the models, results and study
  bookkeeping, which go to each study's namespace file;
- each study of meta.studies gets its namespace: its freezes (the files copied byte for byte into
  `<db>.d/freezes/`), evaluations, load digests and results (those of evaluate models that hold labels
  go to its labels file, schema results); its slice of the inputs is every row (rankhouse 0.1's studies
  read whole tables), so that its models' fingerprints are the ones its freezes recorded;
- a prepare model whose table or view is the one its latest freeze covers (its last build has the frozen
  fingerprint) is carried over: a table into the store as `<model>__<fingerprint>`, a view by its
  definition; others are left for the study's next prepare;
- the labels file's rows are copied into each study's labels file (rankhouse 0.1 kept one labels file
  per warehouse: a study sees the labels it saw there).
The old files are kept beside the new ones as `<name>.v1.duckdb` and `<name>.labels.v1.duckdb`; the old
freezes folder is left as it was. A migrated freeze records no evaluate plan: the study's next
evaluation needs a new freeze that supersedes it (`rankhouse study status` says so).

    >>> migrate("rankhouse.duckdb")  # doctest: +SKIP
    ['trec_sample: 4 models, 1 freeze, 19 results tables carried over']
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path

import duckdb

from rankhouse.errors import RankhouseError
from rankhouse.warehouse import files
from rankhouse.warehouse.layout import LAYOUT_VERSION, Layout, identify, quoted, schema_ddl

OLD_META = ("model_runs", "model_objects", "studies", "freezes", "evaluations", "source_contents")
NOTE = "carried over from rankhouse 0.1 by rankhouse migrate"


def migrate(db: str | Path, freezes: Path | None = None, labels: Path | None = None,
            say: Callable[[str], None] = print) -> list[str]:  # fmt: skip
    """Carry the rankhouse 0.1 warehouse at `db` over (module docstring); a line per study."""
    path = Path(db).absolute()
    kind = identify(path)
    if kind is None:
        raise RankhouseError(f"no warehouse at {db}")
    if kind.kind != "warehouse" or kind.version != 1:
        raise RankhouseError(f"{db} is not a warehouse of rankhouse 0.1 (nothing to migrate)")
    layout = Layout.of(path)
    if layout.home.exists() and any(layout.home.iterdir()):
        raise RankhouseError(f"{layout.home} exists already: migrate a warehouse whose new files are not there yet")
    stem = path.name[: -len(".duckdb")] if path.name.endswith(".duckdb") else path.name
    old_labels = Path(labels) if labels else path.with_name(f"{stem}.labels.duckdb")
    old_freezes = Path(freezes) if freezes else path.parent / "freezes"
    for folder in (layout.building, layout.studies, layout.store, layout.labels, layout.freezes, layout.locks):
        folder.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect()
    lines = []
    try:
        con.execute(f"ATTACH '{_q(path)}' AS old (READ_ONLY)")
        has_labels = old_labels.exists()
        if has_labels:
            con.execute(f"ATTACH '{_q(old_labels)}' AS old_labels (READ_ONLY)")
        warehouse_id = con.execute("SELECT id FROM old.meta.warehouse").fetchall()[0][0]
        inputs = layout.building / "inputs.duckdb"
        shutil.copyfile(path, inputs)
        con.execute(f"ATTACH '{_q(inputs)}' AS inputs")
        _inputs(con, warehouse_id)
        segment = uuid.uuid4().hex[:16]
        store = layout.segment_file(segment, building=True)
        con.execute(f"ATTACH '{_q(store)}' AS store_{segment}")
        con.execute(f"USE store_{segment}")
        con.execute(schema_ddl("store"))
        con.execute("USE memory")
        _mark(con, f"store_{segment}", "store", warehouse_id, None)
        for study, protocol_path in con.execute(
            "SELECT study, protocol_path FROM old.meta.studies ORDER BY 1"
        ).fetchall():
            lines.append(_study(con, layout, study, segment, warehouse_id, old_freezes, has_labels, path))
            say(lines[-1])
        names = [name for (name,) in con.execute("SELECT database_name FROM duckdb_databases()").fetchall()]
        for name in names:
            if name not in ("memory", "system", "temp", "old", "old_labels"):
                con.execute(f"CHECKPOINT {quoted(name)}")
        con.execute("USE memory")
        tables = con.execute(f"SELECT count(*) FROM duckdb_tables() WHERE database_name = 'store_{segment}' "
                             "AND schema_name = 'main'").fetchall()[0][0]  # fmt: skip
        for name in names:
            if name not in ("memory", "system", "temp"):
                con.execute(f"DETACH {quoted(name)}")
    finally:
        con.close()
    if tables:
        os.replace(store, layout.segment_file(segment))
    else:
        files.discard(store)
    for building in layout.building.glob("*.duckdb"):
        if building.name == "inputs.duckdb":
            continue
        if building.name.startswith("labels-"):
            os.replace(building, layout.labels_file(building.name[len("labels-") : -len(".duckdb")]))
        else:
            os.replace(building, layout.namespace_file(building.name[: -len(".duckdb")]))
    os.replace(path, path.with_name(f"{stem}.v1.duckdb"))
    if has_labels:
        os.replace(old_labels, old_labels.with_name(f"{stem}.labels.v1.duckdb"))
    os.replace(inputs, path)
    say(f"kept the old files as {stem}.v1.duckdb" + (f" and {stem}.labels.v1.duckdb" if has_labels else ""))
    return lines


def _inputs(con: duckdb.DuckDBPyConnection, warehouse_id: str) -> None:
    """The old file, copied, as an inputs file: no models, results or study bookkeeping."""
    con.execute("DROP SCHEMA IF EXISTS inputs.models CASCADE")
    con.execute("DROP SCHEMA IF EXISTS inputs.results CASCADE")
    for table in OLD_META:
        con.execute(f"DROP TABLE IF EXISTS inputs.meta.{table}")
    con.execute("USE inputs")
    con.execute(schema_ddl("warehouse"))
    con.execute("USE memory")
    _mark(con, "inputs", "warehouse", warehouse_id, None)


def _mark(con: duckdb.DuckDBPyConnection, catalog: str, kind: str, warehouse_id: str, namespace: str | None) -> None:
    con.execute(f"INSERT INTO {catalog}.meta.layout VALUES (?, ?, ?, ?, current_localtimestamp())",
                [kind, LAYOUT_VERSION, warehouse_id, namespace])  # fmt: skip


def _study(con: duckdb.DuckDBPyConnection, layout: Layout, study: str, segment: str, warehouse_id: str,
           old_freezes: Path, has_labels: bool, warehouse: Path) -> str:  # fmt: skip
    """One study's namespace, labels file and freeze files; a line saying what was carried over."""
    from rankhouse.warehouse.dag import Project

    ns = quoted(study)
    con.execute(f"ATTACH '{_q(layout.building / f'{study}.duckdb')}' AS {ns}")
    con.execute(f"USE {ns}")
    con.execute(schema_ddl("namespace"))
    con.execute("USE memory")
    _mark(con, ns, "namespace", warehouse_id, study)
    con.execute(f"INSERT INTO {ns}.meta.studies SELECT * FROM old.meta.studies WHERE study = ?", [study])
    freezes = con.execute("SELECT * FROM old.meta.freezes WHERE study = ? ORDER BY n", [study]).fetchall()
    latest = None
    for row in freezes:
        source = _freeze_file(Path(row[3]), old_freezes)
        target = layout.freezes / source.name
        shutil.copyfile(source, target)
        if hashlib.sha256(target.read_bytes()).hexdigest() != row[4]:
            raise RankhouseError(f"the freeze file {source} is not the one warehouse recorded (edited): not migrated")
        con.execute(
            f"INSERT INTO {ns}.meta.freezes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", [*row[:3], str(target), *row[4:]]
        )
        latest = json.loads(target.read_bytes())
    ids = [row[0] for row in freezes]
    con.execute(f"INSERT INTO {ns}.meta.evaluations SELECT * FROM old.meta.evaluations "
                "WHERE list_contains(?, freeze_id)", [ids])  # fmt: skip
    con.execute(f"INSERT INTO {ns}.meta.source_contents BY NAME SELECT * FROM old.meta.source_contents")
    # the slice: every row of every raw table, every recorded load (rankhouse 0.1's studies read whole tables)
    raw = [t for (t,) in con.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = 'inputs' "
                                     "AND schema_name = 'raw' ORDER BY 1").fetchall()]  # fmt: skip
    for table in raw:
        con.execute(f"INSERT INTO {ns}.meta.loads VALUES (?, '{{}}', NULL, 'migrated')", [f"raw.{table}"])
        con.execute(f'CREATE VIEW {ns}.raw."{table}" AS SELECT * FROM inputs.raw."{table}"')
    con.execute(f"INSERT INTO {ns}.meta.loads SELECT table_name, '{{}}', name, 'migrated' FROM inputs.meta.sources")
    project = Project.load()
    frozen = (latest or {}).get("models", {})
    models = _models(con, ns, segment, {name: frozen[name] for name in project.order if name in frozen})
    holding = {
        name for name, model in project.models.items() if model.stage == "evaluate" and project.holds_labels(name)
    }
    labels = layout.building / f"labels-{study}.duckdb"
    con.execute(f"ATTACH '{_q(labels)}' AS labels")
    con.execute("USE labels")
    con.execute(schema_ddl("labels"))
    con.execute("CREATE SCHEMA IF NOT EXISTS labels.results")
    con.execute("USE memory")
    _mark(con, "labels", "labels", warehouse_id, study)
    con.execute("INSERT INTO labels.meta.owner VALUES (?, ?, ?, current_localtimestamp())",
                [warehouse_id, str(warehouse), study])  # fmt: skip
    if has_labels:
        tables = con.execute("SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = 'old_labels' "
                             "AND NOT (schema_name = 'meta' AND table_name = 'owner')").fetchall()  # fmt: skip
        for schema, table in tables:
            con.execute(f'INSERT INTO labels."{schema}"."{table}" SELECT * FROM old_labels."{schema}"."{table}"')
    kept = 0
    for (table,) in con.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = 'old' "
                                "AND schema_name = 'results' ORDER BY 1").fetchall():  # fmt: skip
        where = "labels" if table in holding else ns
        con.execute(f'CREATE TABLE {where}.results."{table}" AS SELECT * FROM old.results."{table}" '
                    "WHERE list_contains(?, freeze_id)", [ids])  # fmt: skip
        kept += 1
    freezes_said = f"{len(freezes)} freeze{'s' if len(freezes) != 1 else ''}"
    return f"{study}: {models} models, {freezes_said}, {kept} results tables carried over"


def _models(con: duckdb.DuckDBPyConnection, ns: str, segment: str, frozen: dict[str, str]) -> int:
    """The study's prepare models whose table or view is the one its latest freeze covers (`frozen`, in
    dependency order: a view is made after what it reads), carried over; how many."""
    from rankhouse.warehouse.runner import definition_digest

    built = dict(con.execute(
        "SELECT model, arg_max(fingerprint, started_at) FROM old.meta.model_runs WHERE status IN ('built', 'skipped') "
        "GROUP BY model"
    ).fetchall())  # fmt: skip
    tables = {t for (t,) in con.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = 'old' "
                                        "AND schema_name = 'models'").fetchall()}  # fmt: skip
    views = dict(con.execute("SELECT view_name, sql FROM duckdb_views() WHERE database_name = 'old' "
                             "AND schema_name = 'models'").fetchall())  # fmt: skip
    carried = 0
    con.execute(f"USE {ns}")
    con.execute(f"SET search_path = '{ns}.main,{ns}.models,{ns}.raw,{ns}.meta,inputs.main,inputs.meta'")
    try:
        for name, fingerprint in frozen.items():
            if built.get(name) != fingerprint:
                continue
            if name in tables:
                physical = f'store_{segment}.main."{name}__{fingerprint}"'
                con.execute(f'CREATE TABLE {physical} AS SELECT * FROM old.models."{name}"')
                con.execute(f'CREATE VIEW {ns}.models."{name}" AS SELECT * FROM {physical}')
                rows = con.execute(f"SELECT count(*) FROM {physical}").fetchall()[0][0]
            elif name in views:
                body = views[name].split(" AS ", 1)[1].rstrip().rstrip(";")
                con.execute(f'CREATE VIEW {ns}.models."{name}" AS {body}')
                rows = None
            else:
                continue
            sql = con.execute("SELECT sql FROM duckdb_views() WHERE database_name = ? AND schema_name = 'models' "
                              "AND view_name = ?", [ns.strip('"'), name]).fetchall()[0][0]  # fmt: skip
            con.execute(f"INSERT INTO {ns}.meta.model_objects VALUES (?, ?, ?)",
                        [name, fingerprint, definition_digest(sql)])  # fmt: skip
            con.execute(f"INSERT INTO {ns}.meta.model_runs VALUES (?, ?, 'built', ?, 0, current_localtimestamp(), ?)",
                        [name, fingerprint, rows, NOTE])  # fmt: skip
            carried += 1
    finally:
        con.execute("USE memory")
    return carried


def _freeze_file(recorded: Path, folder: Path) -> Path:
    """A freeze file where meta.freezes recorded it, else under the freezes folder given."""
    for candidate in (recorded, folder / recorded.name):
        if candidate.is_file():
            return candidate
    raise RankhouseError(
        f"the freeze file {recorded.name} is neither at {recorded} nor in {folder}: give --freezes DIR"
    )


def _q(path: Path) -> str:
    return str(path).replace("'", "''")
