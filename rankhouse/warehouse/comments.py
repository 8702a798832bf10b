"""Comments on a built model's table or view and its columns (COMMENT ON), from its header and the
column glossary models/columns.toml (catalog.py says where each comes from)."""

from __future__ import annotations

from rankhouse.warehouse.catalog import Model
from rankhouse.warehouse.connection import MEMORY, Warehouse
from rankhouse.warehouse.render import literal


def describe(wh: Warehouse, model: Model) -> None:
    """Set the comments of the model's built table or view: its description on it, and on each of its
    columns the definition of the column's name (the header's or the glossary's), where there is one;
    nothing for an in-memory warehouse.

    >>> describe(wh, project.models["run_measures"])  # doctest: +SKIP
    """
    if wh.path == MEMORY:  # thrown away with its process (rankhouse eval's): no analyst ever reads them
        return
    kind = "VIEW" if model.materialized == "view" else "TABLE"
    statements = [f"COMMENT ON {kind} {model.table} IS {literal(model.description)}"]
    columns = wh.sql(
        "SELECT column_name FROM duckdb_columns() WHERE database_name = current_database() "
        "AND schema_name = 'models' AND table_name = ? ORDER BY column_index",
        [model.name],
    )
    for (column,) in columns:
        definition = model.column_comment(column)
        if definition:
            quoted = column.replace('"', '""')
            statements.append(f'COMMENT ON COLUMN {model.table}."{quoted}" IS {literal(definition)}')
    wh.sql(";\n".join(statements))  # one call: a model's comments cost one round trip, not one per column
