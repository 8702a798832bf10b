"""Rendering a model's jinja2 template with its parameters, and canonical SQL for fingerprints."""

from __future__ import annotations

import functools

import jinja2
import sqlglot
from sqlglot import exp

from rankhouse.errors import ModelError
from rankhouse.warehouse.catalog import Model


def literal(value: object) -> str:
    """A Python value as a SQL literal: strings quoted, None as NULL, booleans as TRUE/FALSE, a list
    as a parenthesised list for `IN` (an empty list as `(NULL)`, which matches nothing).

    >>> literal("it's"), literal(None), literal(True), literal(2.5), literal(["a", "b"]), literal([])
    ("'it''s'", 'NULL', 'TRUE', '2.5', "('a', 'b')", '(NULL)')
    """
    if isinstance(value, (list, tuple)):
        return "(" + (", ".join(literal(v) for v in value) or "NULL") + ")"
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, float)):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


ENV = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True)
ENV.filters["literal"] = literal


def effective_parameters(model: Model, params: dict | None) -> dict:
    """The model's declared parameters: header defaults, overridden by `params` where given."""
    given = params or {}
    return {key: given.get(key, default) for key, default in model.parameters.items()}


def render(model: Model, params: dict | None = None) -> str:
    """The model's SQL with its parameters filled in."""
    try:
        return ENV.from_string(model.template).render(**effective_parameters(model, params))
    except jinja2.UndefinedError as exc:
        raise ModelError(model.name, f"uses a parameter it does not declare in its header: {exc.message}") from None
    except jinja2.TemplateError as exc:
        raise ModelError(model.name, f"template error: {exc}") from None


@functools.lru_cache(maxsize=1024)
def _statements(sql: str) -> tuple[exp.Expression, ...]:
    return tuple(s for s in sqlglot.parse(sql, read="duckdb") if s is not None)


def parse(model: Model, sql: str) -> exp.Expression:
    """Parse rendered SQL (DuckDB dialect); a model is exactly one SELECT (or set operation).

    The tree is cached and shared: read it, do not modify it.
    """
    try:
        statements = _statements(sql)
    except sqlglot.errors.ParseError as exc:
        raise ModelError(model.name, f"SQL does not parse: {exc}") from None
    if len(statements) != 1 or not isinstance(statements[0], exp.Query):
        raise ModelError(model.name, "a model is exactly one SELECT statement")
    return statements[0]


def canonical_sql(tree: exp.Expression) -> str:
    """The SQL with comments and layout removed and identifiers normalised, for fingerprints."""
    return tree.sql(dialect="duckdb", comments=False, normalize=True)
