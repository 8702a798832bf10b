"""Blocking audits: SQL that returns offending rows of a model's freshly built table.

The SQL is DuckDB's and transpiles to Spark SQL, where `--engine spark` runs the audits of the models it
computed (rankhouse/warehouse/spark.py): the few offending rows come in the order of the model's grain,
so that both engines name the same ones, and "not finite" is written without DuckDB's isfinite, which
Spark lacks.
"""

from __future__ import annotations

from rankhouse.warehouse.catalog import Audit, Model

SAMPLE = 5
LARGEST_DOUBLE = "1.7976931348623157e308"


def audit_sql(model: Model, audit: Audit, table: str | None = None) -> str:
    """A query returning (up to a few) rows of `table` (the model's, by default) that break the audit; no
    rows means it passes."""
    table = table or model.table
    ordered = f" ORDER BY {', '.join(model.grain)}" if model.grain else ""
    if audit.kind == "not_null":
        condition = " OR ".join(f"{column} IS NULL" for column in audit.args)
        return f"SELECT * FROM {table} WHERE {condition}{ordered} LIMIT {SAMPLE}"
    if audit.kind == "unique_grain":
        grain = ", ".join(model.grain)
        return (
            f"SELECT {grain}, count(*) AS copies FROM {table} GROUP BY {grain} "
            f"HAVING count(*) > 1 ORDER BY {grain} LIMIT {SAMPLE}"
        )
    if audit.kind == "accepted_range":
        column, low, high = audit.args
        # NaN and infinities never pass: NaN is above every double in DuckDB and Spark, infinity above the largest
        outside = [f"NOT (abs(CAST({column} AS DOUBLE)) <= {LARGEST_DOUBLE})"]
        if low:
            outside.append(f"{column} < {low}")
        if high:
            outside.append(f"{column} > {high}")
        return f"SELECT * FROM {table} WHERE {column} IS NOT NULL AND ({' OR '.join(outside)}){ordered} LIMIT {SAMPLE}"
    if audit.kind == "at_least_one_row":
        # the first row is enough: a view over a large table (run_ranking) stops there
        return f"SELECT count(*) AS row_count FROM (SELECT 1 FROM {table} LIMIT 1) AS first_row HAVING count(*) = 0"
    raise ValueError(f"unknown audit {audit.kind}")
