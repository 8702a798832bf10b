"""Rendering a model's jinja2 template with its parameters, and canonical SQL for fingerprints.

Every model can call the macros of sql/macros/*.sql (one definition each of the formulas several models
use: trec_eval's order, the DCG term, BM25's term weight, the robust threshold, percentile intervals);
they expand into the model's SQL before it is parsed, so a macro's text is part of every fingerprint
that uses it. Filters: `literal` (a value as SQL), `identifier` (a checked model or column name) and
`measure_values`, `measure_families` and `measure_models` (rankhouse.measures: measure names as rows,
their families, the models that compute them);
`require(condition, message)` lets a template refuse parameters it cannot use.

Templates render in jinja2's sandbox: no attribute of Python's internals, no change to a parameter, no
global but `range`, `require` and the macros. Parameters are checked against the types their defaults
declare (catalog.parameter_fits) and render as SQL literals: a string parameter is held as a
`ParameterText`, which the template can compare, test and pass on but not make into other text, and
which renders, bare or through `literal`, as one quoted literal. The literal must land where SQL reads
a literal (not inside quotes or a comment, where its text would become SQL): it is written as a
placeholder, checked in the tokens of the rendered SQL, then replaced. Raw parameters (the header's
`raw`) render as they are, their values checked to be plain names.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import secrets
import statistics
from collections import Counter
from pathlib import Path

import jinja2
import sqlglot
from jinja2.bccache import FileSystemBytecodeCache
from jinja2.runtime import Macro
from jinja2.sandbox import ImmutableSandboxedEnvironment, SandboxedEnvironment, modifies_known_mutable
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.tokens import TokenType

from rankhouse.errors import ModelError, RankhouseError
from rankhouse.measures import measure_families, measure_models, measure_values
from rankhouse.paths import SQL_DIR, default_cache_dir
from rankhouse.warehouse.catalog import IDENTIFIER, Model, effective_parameters
from rankhouse.warehouse.literals import RENDERING, ParameterText, literal, quote

MACROS_DIR = SQL_DIR / "macros"
DUCKDB = Dialect.get_or_raise("duckdb")


class Named:
    """A container that knows the parameter it holds."""

    def __init__(self, items: object, name: str) -> None:
        super().__init__(items)
        self.name = name


class ParameterList(Named, list):
    """A list parameter while a template renders (immutable in the sandbox; bare, an error)."""


class ParameterTable(Named, dict):
    """A table parameter while a template renders (immutable in the sandbox; bare, an error)."""


def marked(value: object, name: str, raw: bool = False) -> object:
    """A parameter value as the template sees it: strings as ParameterText (as they are when raw),
    lists and tables as ParameterList and ParameterTable."""
    if isinstance(value, str):
        return value if raw else ParameterText(value, name)
    if isinstance(value, (list, tuple)):
        return ParameterList((marked(v, name, raw) for v in value), name)
    if isinstance(value, dict):
        return ParameterTable({marked(k, name, raw): marked(v, name, raw) for k, v in value.items()}, name)
    return value


def unmarked(value: object) -> object:
    """A value with its parameter strings, lists and tables back as plain str, list and dict."""
    if isinstance(value, ParameterText):
        return str.__str__(value)
    if isinstance(value, tuple):
        return tuple(unmarked(v) for v in value)
    if isinstance(value, list):
        return [unmarked(v) for v in value]
    if isinstance(value, dict):
        return {unmarked(k): unmarked(v) for k, v in value.items()}
    return value


def parameter_text_in(value: object, depth: int = 0) -> ParameterText | None:
    """The first parameter string in a value, its lists, tuples, sets and dicts."""
    if isinstance(value, ParameterText):
        return value
    if depth < 8 and isinstance(value, (list, tuple, set, frozenset, dict)):
        items = [*value.keys(), *value.values()] if isinstance(value, dict) else value
        return next((found for v in items if (found := parameter_text_in(v, depth + 1)) is not None), None)
    return None


class Literals:
    """The SQL literals of one render's string parameters: written as placeholders, then checked to be
    whole string tokens of the rendered SQL and replaced."""

    def __init__(self) -> None:
        self.marker = f"rankhouse-literal-{secrets.token_hex(8)}-"
        self.quoted: list[tuple[str, str]] = []  # (parameter, SQL literal)

    def placeholder(self, text: ParameterText) -> str:
        self.quoted.append((text.name, quote(str.__str__(text))))
        return f"'{self.marker}{len(self.quoted) - 1}'"

    def fill(self, model: Model, sql: str) -> str:
        """The rendered SQL with each placeholder replaced by its literal, once each placeholder is seen
        to be a whole string token (not inside quotes or a comment, no prefix such as E'...')."""
        if not self.quoted:
            return sql
        try:
            tokens = DUCKDB.tokenize(sql)
        except sqlglot.errors.TokenError as exc:
            raise ModelError(model.name, f"SQL does not parse: {exc}") from None
        whole = Counter(
            t.text
            for t in tokens
            if t.token_type == TokenType.STRING
            and t.text.startswith(self.marker)
            and sql[t.start : t.end + 1] == f"'{t.text}'"
            and not (t.start and (sql[t.start - 1].isalnum() or sql[t.start - 1] in "_$&"))
        )
        written = Counter(re.findall(re.escape(self.marker) + r"\d+", sql))
        misplaced = [text for text, n in written.items() if whole[text] < n]
        if misplaced:
            name = self.quoted[int(misplaced[0].removeprefix(self.marker))][0]
            raise ModelError(
                model.name,
                f"renders parameter {name} inside a string, a quoted name or a comment (or right after a letter, "
                f"as in E'...'); write {{{{ {name} }}}} alone: it renders as a quoted SQL literal",
            )
        return re.sub(f"'{re.escape(self.marker)}(\\d+)'", lambda m: self.quoted[int(m.group(1))][1], sql)


def identifier(value: object) -> str:
    """A model or column name given as a parameter, checked to be a plain SQL identifier.

    >>> identifier("fused_rankings")
    'fused_rankings'
    """
    value = unmarked(value)
    if not isinstance(value, str) or not IDENTIFIER.match(value):
        raise RankhouseError(f"{value!r} is not a name (letters, digits and _, not starting with a digit)")
    return value


def source_model(source: object) -> str:
    """The model of an evaluation source written `model` or `model@part` (a part of a study: its own
    queries and judgments, e.g. `group_rankings@e3`).

    >>> source_model("group_rankings@e3"), source_model("run_ranking")
    ('group_rankings', 'run_ranking')
    """
    return identifier(str(unmarked(source)).partition("@")[0])


def source_study(source: object, study: object) -> ParameterText:
    """The study name a source's rows carry: the study's own for `model`, `<study>/<part>` for
    `model@part`; a parameter string, so that it renders only as a literal.

    >>> str.__str__(source_study("group_rankings@e3", "banking77_features"))
    'banking77_features/e3'
    """
    _, at, part = str(unmarked(source)).partition("@")
    name = str(unmarked(study))
    if at:
        name += "/" + identifier(part)
    return ParameterText(name, getattr(source, "name", "study"))


def require(condition: object, message: str) -> str:
    """A template's check of its parameters: nothing when `condition` holds, else an error (naming the
    model) with `message`.

    >>> require(True, "never shown")
    ''
    """
    if not condition:
        raise RankhouseError(str(unmarked(message)))
    return ""


def two_sided_z(level: object) -> str:
    """The standard normal quantile of a two-sided interval at `level` (0.95: the 97.5% quantile), to six
    decimals, as statistical tables print it and the models have always used (1.959964 at 95%).

    >>> two_sided_z(0.95), two_sided_z(0.9), two_sided_z(0.99)
    ('1.959964', '1.644854', '2.575829')
    """
    level = float(unmarked(level))
    if not 0 < level < 1:
        raise RankhouseError(f"an interval level is between 0 and 1, not {level}")
    return f"{statistics.NormalDist().inv_cdf(0.5 + level / 2):.6f}"


def finalize(value: object) -> object:
    """What `{{ value }}` writes: a parameter string, a number or a boolean as a SQL literal (anything else
    as it is); a bare list or table parameter is an error."""
    if isinstance(value, (ParameterList, ParameterTable)):
        kind = "a list" if isinstance(value, list) else "a table"
        raise RankhouseError(f"renders parameter {value.name}, {kind}, bare; write {{{{ {value.name} | literal }}}}")
    return literal(value) if isinstance(value, (ParameterText, int, float)) else value


def guarded(name: str, function):
    """A jinja2 filter that may not turn a parameter string into other text."""

    @functools.wraps(function)
    def guard(*args: object, **kwargs: object) -> object:
        result = function(*args, **kwargs)
        if isinstance(result, str) and not isinstance(result, ParameterText):
            text = parameter_text_in([*args, *kwargs.values()])
            if text is not None:
                raise RankhouseError(text.misuse(f"the filter {name}"))
        return result

    return guard


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

    def call(__self, __context, __obj, *args, **kwargs):  # the names of jinja2's SandboxedEnvironment.call
        """A call from the template; a method of a string given a parameter string would make text of it."""
        owner = getattr(__obj, "__self__", None)
        if isinstance(owner, str) and not isinstance(owner, ParameterText):
            text = parameter_text_in([*args, *kwargs.values()])
            if text is not None:
                raise RankhouseError(text.misuse(f"the string method .{__obj.__name__}()"))
        return super().call(__context, __obj, *args, **kwargs)


class TemplateCache(FileSystemBytecodeCache):
    """jinja2's compiled templates kept between processes (under default_cache_dir()/templates), so that
    a command does not compile the macros and 200 model templates again: jinja2 checks each entry
    against the template's source and the Python version. A folder that cannot be written only loses
    the cache."""

    def __init__(self, directory: Path | None = None) -> None:
        super().__init__(str(directory or default_cache_dir() / "templates"), "%s.jinja")

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            os.makedirs(self.directory, exist_ok=True)
            super().dump_bytecode(bucket)
        except OSError:
            pass

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except Exception:  # noqa: BLE001 - whatever a damaged entry raises (pickle, marshal, I/O), it is compiled again
            bucket.reset()


def _environment() -> jinja2.Environment:
    """The jinja2 environment of models: sandboxed, strict about undefined names, with the filters and
    every macro of sql/macros/ as a global (and no other global but `range` and `require`)."""
    env = ModelSandbox(
        loader=jinja2.FileSystemLoader(MACROS_DIR),
        bytecode_cache=TemplateCache(),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        finalize=finalize,
    )
    env.filters = {name: guarded(name, f) for name, f in env.filters.items()}
    env.filters.update(
        literal=literal,
        identifier=identifier,
        measure_values=lambda names: measure_values(unmarked(names)),
        measure_families=lambda names: measure_families(unmarked(names)),
        measure_models=lambda names: measure_models(unmarked(names)),
        source_model=source_model,
        source_study=source_study,
        two_sided_z=two_sided_z,
    )
    env.globals = {"range": env.globals["range"], "require": require}
    for _ in range(2):  # twice, so that a macro can call the macros of every file, its own included
        for path in sorted(MACROS_DIR.glob("*.sql")):
            module = env.get_template(path.name).make_module()
            env.globals.update({name: getattr(module, name) for name in dir(module) if not name.startswith("_")})
    return env


ENV = _environment()


@functools.lru_cache(maxsize=1024)
def compiled(template: str) -> jinja2.Template:
    """A model's template, compiled once per process and kept in the environment's TemplateCache
    (jinja2 compiles on every from_string and caches only the templates its loader finds)."""
    cache = ENV.bytecode_cache
    bucket = cache.get_bucket(ENV, hashlib.sha256(template.encode()).hexdigest(), None, template)
    if bucket.code is None:
        bucket.code = ENV.compile(template)
        cache.set_bucket(bucket)
    return ENV.template_class.from_code(ENV, bucket.code, ENV.make_globals(None))


MEASURE_FILTER = re.compile(r"\b(\w+)\s*\|\s*measure_(?:values|families|models)\b")


def measure_list_parameters(model: Model) -> set[str]:
    """The parameters the model's template passes to a measure filter (measure_values, _families, _models):
    lists of measure names that the measure registry reads (as `rankhouse eval -m` does)."""
    return set(MEASURE_FILTER.findall(model.template)) & set(model.parameters)


def render(model: Model, params: dict | None = None) -> str:
    """The model's SQL with its parameters filled in."""
    values = {k: marked(v, k, raw=k in model.raw) for k, v in effective_parameters(model, params).items()}
    literals = Literals()
    rendering = RENDERING.set(literals)
    try:
        sql = compiled(model.template).render(**values)
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
    finally:
        RENDERING.reset(rendering)
    return literals.fill(model, sql)


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
