"""Blocking audits: SQL that returns offending rows of a model's freshly built table."""

from __future__ import annotations

from rankhouse.warehouse.catalog import Audit, Model

SAMPLE = 5


def audit_sql(model: Model, audit: Audit) -> str:
    """A query returning (up to a few) rows that break the audit; no rows means it passes."""
    table = model.table
    if audit.kind == "not_null":
        condition = " OR ".join(f"{column} IS NULL" for column in audit.args)
        return f"SELECT * FROM {table} WHERE {condition} LIMIT {SAMPLE}"
    if audit.kind == "unique_grain":
        grain = ", ".join(model.grain)
        return (
            f"SELECT {grain}, count(*) AS copies FROM {table} GROUP BY {grain} "
            f"HAVING count(*) > 1 ORDER BY {grain} LIMIT {SAMPLE}"
        )
    if audit.kind == "accepted_range":
        column, low, high = audit.args
        outside = [f"NOT isfinite(CAST({column} AS DOUBLE))"]  # NaN and infinities never pass
        if low:
            outside.append(f"{column} < {low}")
        if high:
            outside.append(f"{column} > {high}")
        return f"SELECT * FROM {table} WHERE {column} IS NOT NULL AND ({' OR '.join(outside)}) LIMIT {SAMPLE}"
    if audit.kind == "at_least_one_row":
        return f"SELECT count(*) AS row_count FROM {table} HAVING count(*) = 0"
    raise ValueError(f"unknown audit {audit.kind}")
