"""Keeping models portable to Spark SQL: the rules that carry DuckDB's SQL over, constructs sqlglot
translates wrongly, and a transpile check.

The rules (spark_tree), beyond sqlglot's own dialect translation: each division's dividend is cast to
DOUBLE (DuckDB's `/` gives a DOUBLE whatever its operands, Spark's a DECIMAL when they are decimals:
`1.0 / min(rank)` is 0.166666666667 there); `quantile_cont(x, q)` becomes Spark's `percentile(x, q)`
(the same linear interpolation between the two nearest order statistics; sqlglot writes
`PERCENTILE_CONT(x, q)`, which Spark refuses); `product(x)`, which Spark SQL lacks, becomes a fold
of the values' list (spark_product); a CTE's `MATERIALIZED` hint to DuckDB's planner is dropped.

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


SCHEMAS = ("raw", "models", "gate")
_PRODUCT = (
    "CASE WHEN count(rh_x) > 0 "
    "THEN aggregate(collect_list(CAST(rh_x AS DOUBLE)), CAST(1 AS DOUBLE), (acc, v) -> acc * v) END"
)


def _is_product(node: exp.Expression) -> bool:
    return isinstance(node, exp.Anonymous) and node.name.lower() == "product" and len(node.expressions) == 1


def spark_product(argument: exp.Expression, window: exp.Window | None = None) -> exp.Expression:
    """DuckDB's `product(x)` (an aggregate, or a window function over `window`) in Spark SQL, which has
    none: the DOUBLE product of the non-NULL values folded over their list, NULL when there are none (as
    DuckDB's). The fold's order is the list's, which Spark does not fix: the models multiply integers
    whose products stay below 2^53 (fusion_rrf, fusion_fisher), exact in any order.

    >>> spark_product(exp.column("x")).sql("spark")
    'CASE WHEN COUNT(x) > 0 THEN AGGREGATE(COLLECT_LIST(CAST(x AS DOUBLE)), CAST(1 AS DOUBLE), (acc, v) -> acc * v) END'
    """

    def fill(node: exp.Expression) -> exp.Expression:
        return argument.copy() if isinstance(node, exp.Column) and node.name == "rh_x" else node

    folded = sqlglot.parse_one(_PRODUCT, read="spark").transform(fill)
    if window is not None:
        for call in (folded.find(exp.Count), folded.find(exp.ArrayAgg)):
            over = window.copy()
            over.set("this", call.copy())
            call.replace(over)
    return folded


def spark_tree(tree: exp.Expression, view_of=None) -> exp.Expression:
    """`tree` (DuckDB's SQL, which it changes) with the rules of the module docstring applied, and each
    `schema.table` it reads renamed to `view_of(schema.table)` when `view_of` is given.

    >>> spark_tree(sqlglot.parse_one("SELECT sum(a) / 2 FROM models.x", read="duckdb")).sql("spark")
    'SELECT CAST(SUM(a) AS DOUBLE) / 2 FROM models.x'
    """

    def rule(node: exp.Expression) -> exp.Expression:
        read = isinstance(node, exp.Table) and node.db.lower() in SCHEMAS and isinstance(node.this, exp.Identifier)
        if view_of and read:
            renamed = exp.to_identifier(view_of(f"{node.db}.{node.name}".lower()))
            return exp.Table(this=renamed, alias=node.args.get("alias"))
        if isinstance(node, exp.Div) and not node.this.is_type(exp.DataType.Type.DOUBLE):
            node.set("this", exp.cast(node.this, exp.DataType.Type.DOUBLE))
        if isinstance(node, exp.PercentileCont) and node.expression is not None and not node.args.get("order"):
            return exp.Quantile(this=node.this, quantile=node.expression)  # Spark's percentile(x, q)
        if isinstance(node, exp.Window) and _is_product(node.this):
            return spark_product(node.this.expressions[0], node)
        if _is_product(node):
            return spark_product(node.expressions[0])
        if isinstance(node, exp.CTE) and node.args.get("materialized") is not None:
            node.set("materialized", None)
        return node

    return tree.transform(rule)


def to_spark(model: Model, params: dict | None = None) -> str:
    """The model's SQL transpiled to Spark SQL by the rules (spark_tree), its tables' names as they are;
    raises sqlglot.errors.UnsupportedError if it cannot be.

    Example: to_spark(Project.load().models["measure_rr"]) gives the Spark SQL of measure_rr.
    """
    tree = spark_tree(parse(model, render(model, params)).copy())
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
