"""Comments on a built model's table or view and its columns (COMMENT ON), from its header and the
column glossary models/columns.toml (catalog.py says where each comes from)."""

from __future__ import annotations

from rankhouse.warehouse.catalog import Model
from rankhouse.warehouse.connection import MEMORY, Warehouse
from rankhouse.warehouse.literals import literal


def describe(wh: Warehouse, model: Model, home: str) -> None:
    """Set the comments of the model's built table or view in catalog `home` (the namespace, where a
    table model's object is a view over its store table; or the gate): its description on it, and on
    each of its columns the definition of the column's name (the header's or the glossary's), where
    there is one; nothing for an in-memory warehouse.

    >>> describe(wh, project.models["run_measures"], "gate")  # doctest: +SKIP
    """
    if wh.path == MEMORY:  # thrown away with its process (rankhouse eval's): no analyst ever reads them
        return
    view = model.materialized == "view" or model.stage == "prepare"
    table = f'{home}.models."{model.name}"'
    statements = [f"COMMENT ON {'VIEW' if view else 'TABLE'} {table} IS {literal(model.description)}"]
    columns = wh.sql(
        "SELECT column_name FROM duckdb_columns() WHERE database_name = ? "
        "AND schema_name = 'models' AND table_name = ? ORDER BY column_index",
        [home.strip('"'), model.name],
    )
    for (column,) in columns:
        definition = model.column_comment(column)
        if definition:
            quoted = column.replace('"', '""')
            statements.append(f'COMMENT ON COLUMN {table}."{quoted}" IS {literal(definition)}')
    wh.sql(";\n".join(statements))  # one call: a model's comments cost one round trip, not one per column
