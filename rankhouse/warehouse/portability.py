"""Keeping models portable to Spark SQL: constructs sqlglot translates wrongly, and a transpile check.

Rejected: bare `log(x)` (base 10 in DuckDB, natural in Spark: write ln or log10), an ordered
`list(... ORDER BY ...)` (Spark's collect_list has no order), `hash()` (engine- and version-specific)
and `random()` (not reproducible). A model whose header says `dialect: duckdb: <reason>` is exempt.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from rankhouse.warehouse.catalog import Model
from rankhouse.warehouse.render import parse, render


def forbidden_constructs(tree: exp.Expression) -> list[str]:
    """Descriptions of the constructs in `tree` that do not carry over to Spark SQL."""
    problems = []
    for node in tree.walk():
        if isinstance(node, exp.Log) and node.expression is None:
            problems.append(f"bare log({node.this.sql('duckdb')}): write ln() or log10()")
        elif isinstance(node, exp.ArrayAgg) and node.find(exp.Order):
            problems.append(f"ordered {node.sql('duckdb')}: Spark's collect_list keeps no order")
        elif isinstance(node, (exp.Rand, exp.Randn)):
            problems.append("random(): draws must come from a stored, seeded table")
        elif isinstance(node, exp.Anonymous) and node.name.lower() in ("hash", "random", "setseed"):
            problems.append(f"{node.name}(): not reproducible across engines and versions")
    return problems


def to_spark(model: Model, params: dict | None = None) -> str:
    """The model's SQL transpiled to Spark SQL; raises sqlglot.errors.UnsupportedError if it cannot be."""
    tree = parse(model, render(model, params))
    return tree.sql(dialect="spark", unsupported_level=sqlglot.ErrorLevel.RAISE, pretty=True)


def portability_problems(model: Model, params: dict | None = None) -> list[str]:
    """Why the model would not run the same on Spark SQL (empty when it is portable or exempt)."""
    if model.dialect and model.dialect.lower().startswith("duckdb"):
        return []
    problems = forbidden_constructs(parse(model, render(model, params)))
    try:
        to_spark(model, params)
    except sqlglot.errors.SqlglotError as exc:
        problems.append(f"sqlglot cannot transpile it to Spark SQL: {exc}")
    return problems
