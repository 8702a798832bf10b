"""What a model's SQL reads, its canonical text and the SQL itself, for given parameters: computed once, kept
between processes.

A model's dependencies (the DAG) and its fingerprint both come from its SQL rendered with its parameters
(jinja2) and parsed (sqlglot), and its build runs that SQL: for a study's fifty models a tenth of a second,
and as much again to import the two. None can change unless what they are computed from does, so
`analysed(model, params)` keeps them in the user's cache, beside the compiled templates
(default_cache_dir()/models/), one small JSON file per model and parameters (user_cache.py), named by the
SHA-256 of all they are computed from (so a build with a warm cache imports neither jinja2 nor sqlglot:
about 0.1 s of a `rankhouse eval`, docs/performance.md):

- the model's name, template (its SQL and jinja2), raw parameters and the values of its declared
  parameters (its header defaults overridden by `params`);
- every macro file (sql/macros/*.sql), which renders into the SQL;
- rankhouse's code (its modules' sizes and modification times: the renderer, the parser's checks, the
  measure registry's filters, ...), its version, Python's, jinja2's and sqlglot's.

So a change of any of them is a new name, computed afresh: an entry is never stale, only unused. An entry
that cannot be read, is not what this module writes, or names another key is ignored and written again;
a cache folder that cannot be written only loses the cache. A model whose SQL is refused (by the sandbox,
the parser or the checks of dag.py) is never kept: it is refused again on every load. The entries are
rankhouse's own, as the compiled templates are (a build runs an entry's SQL as it runs a compiled
template's): the gate's threat model (docs/gate.md) counts writing them by hand with editing rankhouse.

    >>> sorted(analysed(Project.load(closure=["measure_requests"]).models["measure_requests"], {}).references)
    ['raw.measure_requests']
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass

from rankhouse.paths import SQL_DIR
from rankhouse.user_cache import code_signature, key_of, read_entry, write_entry
from rankhouse.warehouse.catalog import Model, effective_parameters

FORMAT = 2  # of an entry; a new format is a new key (2: with the rendered SQL)
FOLDER = "models"  # of the user's cache (user_cache.py)
DEPENDENCIES = ("jinja2", "sqlglot")  # the packages that render and parse a model
_memory: dict[str, Analysis] = {}  # this process's analyses, by key


@dataclass(frozen=True)
class Analysis:
    """A model's SQL as rendered with its parameters (`rendered`: what its build runs), the tables it reads
    (`schema.table`, lower case; its header's depends_on aside) and its canonical text
    (render.canonical_sql: for its fingerprint)."""

    references: frozenset[str]
    canonical: str
    rendered: str


def analysed(model: Model, params: dict | None) -> Analysis:
    """The analysis of `model` rendered with `params` (its declared parameters' values, the header's where
    not given): from this process's memory, else from the cache, else rendered, parsed and checked (and
    kept). A refused model raises its ModelError."""
    values = effective_parameters(model, params)
    key = entry_key(model, values)
    found = _memory.get(key) or _read(key)
    if found is None:
        found = _compute(model, values)
        _write(key, found)
    _memory[key] = found
    return found


def entry_key(model: Model, values: dict) -> str:
    """The SHA-256 that names the entry of `model` rendered with its parameters' `values`."""
    values_text = json.dumps(values, sort_keys=True, default=repr)
    return _key(code_signature(*DEPENDENCIES), macros(), model.name, model.template, model.raw, values_text)


@functools.lru_cache(maxsize=4096)
def _key(code: str, macro_texts: tuple[str, ...], name: str, template: str, raw: tuple[str, ...], values: str) -> str:
    given = {"format": FORMAT, "code": code, "macros": list(macro_texts), "name": name, "template": template,
             "raw": list(raw), "parameters": json.loads(values)}  # fmt: skip
    return key_of(given)


@functools.cache
def macros() -> tuple[str, ...]:
    """The text of every macro file (sql/macros/), by name: rendered into the models' SQL."""
    return tuple(
        f"{path.name}\n{path.read_text(encoding='utf-8')}" for path in sorted((SQL_DIR / "macros").glob("*.sql"))
    )


def _read(key: str) -> Analysis | None:
    """The entry named `key`, if it is one this module wrote for that key (anything else is ignored)."""
    data = read_entry(FOLDER, key)
    if not (
        data is not None
        and isinstance(data.get("canonical"), str)
        and isinstance(data.get("rendered"), str)
        and isinstance(data.get("references"), list)
        and all(isinstance(ref, str) for ref in data["references"])
    ):
        return None
    return Analysis(frozenset(data["references"]), data["canonical"], data["rendered"])


def _write(key: str, analysis: Analysis) -> None:
    entry = {"references": sorted(analysis.references), "canonical": analysis.canonical, "rendered": analysis.rendered}
    write_entry(FOLDER, key, entry)


def _compute(model: Model, values: dict) -> Analysis:
    """Render the model with its parameters' `values`, parse and check it (dag.table_references)."""
    from rankhouse.warehouse.dag import table_references
    from rankhouse.warehouse.render import canonical_sql, parse, render

    sql = render(model, values)
    tree = parse(model, sql)
    return Analysis(frozenset(table_references(model, tree)), canonical_sql(tree), sql)
