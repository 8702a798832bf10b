"""Rendering a model's jinja2 template with its parameters, and canonical SQL for fingerprints.

Every model can call the macros of sql/macros/*.sql (one definition each of the formulas several models
use: trec_eval's order, the DCG term, BM25's term weight, the robust threshold, percentile intervals);
they expand into the model's SQL before it is parsed, so a macro's text is part of every fingerprint
that uses it. Filters: `literal` (a value as SQL), `identifier` (a checked model or column name) and
`measure_values` and `measure_families` (rankhouse.measures: measure names as rows, their families);
`require(condition, message)` lets a template refuse parameters it cannot use.

Templates render in jinja2's sandbox: no attribute of Python's internals, no change to a parameter, no
global but `range`, `require` and the macros. Parameters are checked against the types their defaults
declare (catalog.parameter_fits).
"""

from __future__ import annotations

import functools
import re

import jinja2
import sqlglot
from jinja2.runtime import Macro
from jinja2.sandbox import ImmutableSandboxedEnvironment, SandboxedEnvironment, modifies_known_mutable
from sqlglot import exp

from rankhouse.errors import ModelError, RankhouseError
from rankhouse.measures import measure_families, measure_values
from rankhouse.paths import SQL_DIR
from rankhouse.warehouse.catalog import Model, parameter_fits, parameter_kind

MACROS_DIR = SQL_DIR / "macros"
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


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


def identifier(value: object) -> str:
    """A model or column name given as a parameter, checked to be a plain SQL identifier.

    >>> identifier("fused_rankings")
    'fused_rankings'
    """
    if not isinstance(value, str) or not IDENTIFIER.match(value):
        raise RankhouseError(f"{value!r} is not a name (letters, digits and _, not starting with a digit)")
    return value


def require(condition: object, message: str) -> str:
    """A template's check of its parameters: nothing when `condition` holds, else an error (naming the
    model) with `message`.

    >>> require(True, "never shown")
    ''
    """
    if not condition:
        raise RankhouseError(message)
    return ""


class ParameterList(list):
    """A list parameter while a template renders (immutable in the sandbox)."""

    def __init__(self, items: object, name: str) -> None:
        super().__init__(items)
        self.name = name


class ParameterTable(dict):
    """A table parameter while a template renders (immutable in the sandbox)."""

    def __init__(self, items: object, name: str) -> None:
        super().__init__(items)
        self.name = name


def marked(value: object, name: str) -> object:
    """A parameter value as the template sees it: lists and tables as ParameterList and ParameterTable."""
    if isinstance(value, (list, tuple)):
        return ParameterList((marked(v, name) for v in value), name)
    if isinstance(value, dict):
        return ParameterTable({k: marked(v, name) for k, v in value.items()}, name)
    return value


class ModelSandbox(ImmutableSandboxedEnvironment):
    """jinja2's immutable sandbox, where a template may still change the lists and dicts it builds (a
    parameter's are ParameterList and ParameterTable, which stay unchangeable) and may not look into a
    macro (it calls them)."""

    def is_safe_attribute(self, obj: object, attr: str, value: object) -> bool:
        if isinstance(obj, Macro):
            return False
        if super().is_safe_attribute(obj, attr, value):
            return True
        built = type(obj) in (list, dict, set) and modifies_known_mutable(obj, attr)
        return built and SandboxedEnvironment.is_safe_attribute(self, obj, attr, value)


def _environment() -> jinja2.Environment:
    """The jinja2 environment of models: sandboxed, strict about undefined names, with the filters and
    every macro of sql/macros/ as a global (and no other global but `range` and `require`)."""
    env = ModelSandbox(
        loader=jinja2.FileSystemLoader(MACROS_DIR),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
    )
    env.filters.update(
        literal=literal, identifier=identifier, measure_values=measure_values, measure_families=measure_families
    )
    env.globals = {"range": env.globals["range"], "require": require}
    for _ in range(2):  # twice, so that a macro can call the macros of every file, its own included
        for path in sorted(MACROS_DIR.glob("*.sql")):
            module = env.get_template(path.name).make_module()
            env.globals.update({name: getattr(module, name) for name in dir(module) if not name.startswith("_")})
    return env


ENV = _environment()


def effective_parameters(model: Model, params: dict | None) -> dict:
    """The model's declared parameters: header defaults, overridden by `params` where given, each
    checked to be of the type its default declares."""
    given = params or {}
    values = {}
    for key, default in model.parameters.items():
        value = given.get(key, default)
        if not parameter_fits(value, default):
            raise ModelError(
                model.name,
                f"parameter {key} is declared {parameter_kind(default)} (default {default!r}), given {value!r}",
            )
        values[key] = value
    return values


def render(model: Model, params: dict | None = None) -> str:
    """The model's SQL with its parameters filled in."""
    values = {k: marked(v, k) for k, v in effective_parameters(model, params).items()}
    try:
        return ENV.from_string(model.template).render(**values)
    except jinja2.exceptions.SecurityError as exc:
        raise ModelError(
            model.name,
            f"template is refused by the sandbox: {str(exc).rstrip('.')} (a template reads its parameters, "
            "unchanged, and calls the macros, the filters, range and require: it reaches no Python object)",
        ) from None
    except jinja2.UndefinedError as exc:
        raise ModelError(model.name, f"uses a parameter it does not declare in its header: {exc.message}") from None
    except jinja2.TemplateError as exc:
        raise ModelError(model.name, f"template error: {exc}") from None
    except RankhouseError as exc:
        raise ModelError(model.name, str(exc)) from None


@functools.lru_cache(maxsize=1024)
def _statements(sql: str) -> tuple[exp.Expression, ...]:
    return tuple(s for s in sqlglot.parse(sql, read="duckdb") if s is not None)


def parse(model: Model, sql: str) -> exp.Expression:
    """Parse rendered SQL (DuckDB dialect); a model is exactly one SELECT (or set operation).

    The tree is cached and shared: read it, do not modify it.
    """
    try:
        statements = _statements(sql)
    except (sqlglot.errors.ParseError, sqlglot.errors.TokenError) as exc:
        raise ModelError(model.name, f"SQL does not parse: {exc}") from None
    if len(statements) != 1 or not isinstance(statements[0], exp.Query):
        raise ModelError(model.name, "a model is exactly one SELECT statement")
    return statements[0]


def canonical_sql(tree: exp.Expression) -> str:
    """The SQL with comments and layout removed and identifiers normalised, for fingerprints."""
    return tree.sql(dialect="duckdb", comments=False, normalize=True)
