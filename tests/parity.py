"""The engine parity rule: a model gives the same rows on DuckDB and on Spark (tests/spark/test_spark_*.py).

Rows are compared in the order of the model's grain: integers, strings, dates and booleans exactly,
doubles within 1e-12 relative (NaN equal to NaN), lists and structs element by element, and each column
a model's header lists in `parity: within(<column> <amount>, ...)` within its absolute amount."""

from __future__ import annotations

import math
from decimal import Decimal

from rankhouse.warehouse.catalog import Model

RELATIVE = 1e-12


def same(a: object, b: object, within: float | None = None) -> bool:
    """Equal by the rule above; with `within`, two numbers at most that far apart.

    >>> same(0.1 + 0.2, 0.3), same(1, 1.0), same(0.0, 2**-53), same(0.0, 2**-53, within=1e-12)
    (True, False, False, True)
    """
    numbers = (int, float, Decimal)
    if within is not None and isinstance(a, numbers) and isinstance(b, numbers) and type(a) is type(b):
        return abs(a - b) <= within
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=RELATIVE, abs_tol=0.0)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def grain_order(model: Model, columns: list[str], rows: list[tuple]) -> list[tuple]:
    """`rows` sorted by the model's grain (NULLs first), for a row-by-row comparison."""
    places = [columns.index(c) for c in model.grain]
    return sorted(rows, key=lambda row: tuple((row[p] is not None, row[p]) for p in places))


def row_differences(model: Model, columns: list[str], expected: list[tuple], got: list[tuple]) -> str | None:
    """Why `got` (Spark's rows) are not `expected` (DuckDB's), both in grain order, or None."""
    if len(got) != len(expected):
        return f"{len(got)} rows, DuckDB {len(expected)}"
    within = [model.tolerances.get(c) for c in columns]
    for want, have in zip(expected, got):
        if not all(same(a, b, amount) for a, b, amount in zip(want, have, within)):
            differing = [c for c, a, b, amount in zip(columns, want, have, within) if not same(a, b, amount)]
            return f"differs in {', '.join(differing)}: DuckDB {want}, Spark {have}"
    return None
