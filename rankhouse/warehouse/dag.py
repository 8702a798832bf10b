"""The model DAG: dependencies inferred from the SQL, checked, ordered and selected (dbt syntax).

What each model reads comes from its SQL rendered and parsed (sqlglot: table_references), kept between
processes by analysis.py; sqlglot is imported only when a model is analysed afresh.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from rankhouse.errors import ModelError, did_you_mean
from rankhouse.functions import FUNCTIONS
from rankhouse.project import as_roots
from rankhouse.warehouse.analysis import analysed
from rankhouse.warehouse.catalog import (
    IDENTIFIER,
    Model,
    load_glossary,
    load_models,
    model_paths,
    parse_model,
    root_of,
)
from rankhouse.warehouse.layout import schema_ddl

if TYPE_CHECKING:
    from sqlglot import exp

# Schemas a model may read: other models, loaded inputs, and labels through the gate (the kind of file
# whose DDL declares them: layout.schema_ddl, sql/ and every study's own tables).
SOURCE_SCHEMAS = {"raw": "warehouse", "gate": "labels"}
STAGING = "staging"  # the groups whose models read raw.* and gate.*: staging/ and <study>/staging/ (dbt's staging)
CREATE_TABLE = re.compile(r"CREATE TABLE IF NOT EXISTS ([\w.]+)", re.IGNORECASE)


def declared_sources() -> set[str]:
    """Tables a model may read besides models: `raw.*` of the inputs file, `gate.*` of the labels files, as
    sql/warehouse.sql, sql/labels.sql and the studies' own DDL declare them."""
    sources = set()
    for schema, kind in SOURCE_SCHEMAS.items():
        for name in CREATE_TABLE.findall(schema_ddl(kind)):
            if schema == "gate" and "." not in name:
                sources.add(f"gate.{name}")
            elif name.startswith(f"{schema}."):
                sources.add(name)
    return sources


# The only table functions a model may call where it reads a table: generators that read nothing.
TABLE_GENERATORS = ("generate_series", "range", "unnest")
# Functions refused wherever they appear, even where DuckDB would not run them (in case the parser puts
# a table function where this walk does not look for one): DuckDB's readers of files, of other queries
# and of its catalog, and getenv (a scalar of DuckDB's command line). DuckDB has no other scalar function
# that reads a file; current_setting reads settings, not data, and is refused with NONDETERMINISTIC.
FILE_FUNCTIONS = re.compile(
    r"^(read_\w+|\w+_scan|parquet_\w+|duckdb_\w+|pragma_\w+|glob|query|query_table|sniff_csv|"
    r"json_execute_serialized_sql|getenv)$",
    re.IGNORECASE,
)
READ_ONLY_TABLES = "models read only warehouse tables (load files with a loader)"
# Functions whose value depends on the session, the environment or the clock, refused wherever they appear:
# a model's rows are a function of its SQL, parameters and inputs alone (a frozen view must read the same
# rows whatever RANKHOUSE_MEMORY_LIMIT, the date or the file it was opened from).
NONDETERMINISTIC = re.compile(
    r"^(current_setting|getvariable|now|get_current_time|get_current_timestamp|current_date|current_time|"
    r"current_timestamp|localtimestamp|localtime|current_localtimestamp|today|transaction_timestamp|"
    r"statement_timestamp|current_database|current_catalog|current_schema|current_schemas|current_user|"
    r"session_user|current_role|user|current_query|current_version|version|txid_current|current_transaction_id|"
    r"rand|random|setseed|uuid|uuidv4|uuidv7|gen_random_uuid|nextval|currval|pragma_\w+)$",
    re.IGNORECASE,
)


@functools.cache
def nodes() -> tuple[tuple[type, ...], tuple[type, ...]]:
    """sqlglot's nodes of the table generators (TABLE_GENERATORS) and of the functions of the session and
    the clock (NONDETERMINISTIC), for the walk of table_references."""
    from sqlglot import exp

    generators = (exp.GenerateSeries, exp.ExplodingGenerateSeries, exp.Unnest, exp.Explode)
    session = (exp.CurrentDate, exp.CurrentTime, exp.CurrentTimestamp, exp.CurrentUser, exp.Rand, exp.Uuid,
               exp.CurrentDatabase, exp.CurrentSchema, exp.CurrentVersion, exp.CurrentCatalog, exp.Localtimestamp,
               exp.SessionUser)  # fmt: skip
    return generators, session


def function_name(func: exp.Func) -> str:
    """A function's name as written (sqlglot's name for the functions it knows)."""
    from sqlglot import exp

    return func.name if isinstance(func, exp.Anonymous) else func.sql_name()


def table_references(model: Model, tree: exp.Expression) -> set[str]:
    """`schema.table` names the SQL reads, from a walk of the whole tree: CTE names are resolved where
    they are used; table functions other than the generators, names that are not plain identifiers
    (DuckDB reads a quoted path as a file) and the functions of FILE_FUNCTIONS are refused."""
    from sqlglot import exp

    session_nodes = nodes()[1]
    refs = set()
    for node in tree.walk():
        if isinstance(node, exp.Func) and FILE_FUNCTIONS.match(function_name(node)):
            name = function_name(node).upper()
            raise ModelError(model.name, f"calls {name}, which reads files, queries or the process; {READ_ONLY_TABLES}")
        if isinstance(node, session_nodes) or (
            isinstance(node, exp.Func) and NONDETERMINISTIC.match(function_name(node))
        ):
            name = function_name(node) if isinstance(node, exp.Func) else node.sql("duckdb")
            raise ModelError(
                model.name,
                f"calls {name}, whose value depends on the session, the environment or the clock: a model's rows "
                "are a function of its SQL, parameters and inputs alone (a seeded plan or a parameter instead)",
            )
        if isinstance(node, exp.CTE) and not IDENTIFIER.match(node.alias_or_name):
            raise ModelError(
                model.name,
                f"defines a CTE {node.alias_or_name!r}, which is not a plain name (letters, digits and _): "
                f"DuckDB reads such a name as a file where the CTE is not visible; {READ_ONLY_TABLES}",
            )
        if isinstance(node, (exp.From, exp.Join, exp.Lateral)):
            relation = node.this
            if isinstance(relation, exp.Func):
                check_table_function(model, relation)
            elif not isinstance(relation, (exp.Table, exp.Subquery, exp.Lateral, exp.Values)):
                shown = relation.sql("duckdb")
                raise ModelError(model.name, f"reads {shown}, which is not a table; {READ_ONLY_TABLES}")
        if isinstance(node, exp.Table):
            ref = table_reference(model, node)
            if ref:
                refs.add(ref)
    return refs


def check_table_function(model: Model, func: exp.Func) -> None:
    """A function read as a table must be one of the generators."""
    if isinstance(func, nodes()[0]) or function_name(func).lower() in TABLE_GENERATORS:
        return
    raise ModelError(
        model.name,
        f"reads {func.sql('duckdb')} directly; {READ_ONLY_TABLES}; the only table functions a model calls "
        f"are the generators {', '.join(TABLE_GENERATORS)}",
    )


def table_reference(model: Model, table: exp.Table) -> str | None:
    """The `schema.table` a table node reads, or None for a CTE visible where it is read."""
    from sqlglot import exp

    if not isinstance(table.this, exp.Identifier):
        if isinstance(table.this, exp.Func):
            check_table_function(model, table.this)
            return None
        raise ModelError(model.name, f"reads {table.this.sql('duckdb')} directly; {READ_ONLY_TABLES}")
    for part in (table.this, table.args.get("db"), table.args.get("catalog")):
        if part is not None and not IDENTIFIER.match(part.name):
            raise ModelError(
                model.name,
                f"reads {table.sql('duckdb')}, whose name {part.name!r} is not a plain name (letters, digits "
                f"and _): DuckDB reads such a name as a file; {READ_ONLY_TABLES}",
            )
    if table.catalog:
        raise ModelError(model.name, f"names a database: {table.sql('duckdb')}; write schema.table")
    if table.db:
        return f"{table.db}.{table.name}".lower()
    if table.name.lower() in visible_ctes(table):
        return None
    message = f"reads {table.name!r}, which is neither a CTE nor schema-qualified (models.x, raw.x, gate.x)"
    if any(cte.alias_or_name.lower() == table.name.lower() for cte in table.root().find_all(exp.CTE)):
        message += (
            f"; a CTE {table.name} is defined elsewhere in the SQL but is not visible here (a CTE is visible "
            "in its query, that query's subqueries and the CTEs after it)"
        )
    raise ModelError(model.name, message)


def visible_ctes(node: exp.Expression) -> set[str]:
    """The CTE names visible at `node` (lower case): every CTE of each enclosing query whose body
    contains it; of a WITH that contains it, the CTEs before its own (and its own in WITH RECURSIVE)."""
    from sqlglot import exp

    names: set[str] = set()
    child, parent = node, node.parent
    while parent is not None:
        if isinstance(parent, exp.With):
            ctes = parent.expressions
            own = next((i for i, cte in enumerate(ctes) if cte is child), len(ctes))
            names.update(cte.alias_or_name.lower() for cte in ctes[: own + bool(parent.args.get("recursive"))])
            child, parent = parent.parent, parent.parent.parent  # past the query that owns the WITH
            continue
        with_ = next((v for v in parent.args.values() if isinstance(v, exp.With)), None)
        if with_ is not None:
            names.update(cte.alias_or_name.lower() for cte in with_.expressions)
        child, parent = parent, parent.parent
    return names


@dataclass
class Project:
    """All models of a project, with their dependencies checked and ordered."""

    models: dict[str, Model]
    sources: set[str]
    params: dict = field(default_factory=dict)
    roots: tuple[Path, ...] = ()  # the folders the models were read from

    @classmethod
    def load(
        cls,
        models_dir: Path | Sequence[Path] | None = None,
        params: dict | None = None,
        closure: list[str] | None = None,
    ) -> Project:
        """The models under `models_dir` (a folder or several; by default rankhouse's own and those of the
        analyst's project in use: rankhouse/project.py model_roots), their dependencies read from the SQL
        rendered with `params` (header defaults where not given), so that a parameter can switch a model's
        source.

        With `closure` (model names), the project holds only those models and every model they read,
        directly or not: only those are rendered, parsed and checked, which is what a command that builds
        them needs (`rankhouse eval` reads 30 of the 200 models), at a fraction of the cost.

        >>> sorted(Project.load(closure=["measure_requests"]).models)
        ['measure_requests']
        """
        params = dict(params or {})
        roots = as_roots(models_dir)
        references = None
        if closure is None:
            models = load_models(roots)
        else:
            models, references = reachable(roots, closure, params)
        project = cls(models, declared_sources(), params, roots)
        if references is not None:
            project.__dict__["references"] = references  # read already: the cached property's value
        project.check()
        return project

    @cached_property
    def trees(self) -> dict[str, exp.Expression]:
        """Per model: its SQL rendered with the project's parameters, parsed (sqlglot's tree: shared, read it
        only)."""
        from rankhouse.warehouse.render import parse, render

        return {model.name: parse(model, render(model, self.params)) for model in self.models.values()}

    @cached_property
    def references(self) -> dict[str, set[str]]:
        """Per model: every table it reads (parsed from the SQL rendered with the project's parameters: its
        analysis, analysis.py) and those its header's depends_on names."""
        return {model.name: reads(model, self.params) for model in self.models.values()}

    @cached_property
    def parents(self) -> dict[str, list[str]]:
        """Per model: the models it reads, sorted."""
        return {
            name: sorted(r.split(".", 1)[1] for r in refs if r.startswith("models."))
            for name, refs in self.references.items()
        }

    @cached_property
    def upstream_sources(self) -> dict[str, frozenset[str]]:
        """Per model: every source table (raw.*, gate.*) it reads, itself or through the models it reads
        (in practice through models/staging/): the inputs it cannot be built without."""
        found: dict[str, frozenset[str]] = {}
        for name in self.order:  # parents first
            own = {ref for ref in self.references[name] if not ref.startswith("models.")}
            found[name] = frozenset(own.union(*(found[parent] for parent in self.parents[name])))
        return found

    @cached_property
    def children(self) -> dict[str, list[str]]:
        """Per model: the models that read it, sorted."""
        kids: dict[str, list[str]] = {name: [] for name in self.models}
        for name, parents in self.parents.items():
            for parent in parents:
                kids[parent].append(name)
        return {name: sorted(k) for name, k in kids.items()}

    def check(self) -> None:
        """Unknown tables, stage leaks, disagreeing parameter defaults and cycles name the model."""
        defaults: dict[str, tuple[str, object]] = {}
        for model in self.models.values():
            for key, value in model.parameters.items():
                first = defaults.setdefault(key, (model.name, value))
                if first[1] != value:
                    raise ModelError(
                        model.name, f"declares {key} = {value!r} but {first[0]} declares {key} = {first[1]!r}"
                    )
        for name, refs in self.references.items():
            model = self.models[name]
            unknown = [f for f in model.functions if f not in FUNCTIONS]
            if unknown:
                known = ", ".join(FUNCTIONS)
                raise ModelError(name, f"calls unknown function(s) {', '.join(unknown)}; known: {known}")
            for ref in sorted(refs):
                schema, table = ref.split(".", 1)
                if schema == "models":
                    if table not in self.models:
                        raise ModelError(name, f"reads unknown model {ref}")
                    if model.stage == "prepare" and self.models[table].stage == "evaluate":
                        raise ModelError(name, f"is a prepare model but reads evaluate model {ref}")
                elif ref not in self.sources:
                    raise ModelError(name, f"reads unknown table {ref}")
                if schema == "gate" and model.stage == "prepare":
                    raise ModelError(name, f"is a prepare model and may not read labels ({ref})")
                if schema in SOURCE_SCHEMAS and model.group.split("/")[-1] != STAGING:
                    raise ModelError(
                        name,
                        f"reads {ref}: only models in models/{STAGING}/ (or a study's models/<study>/{STAGING}/) read "
                        "loaded inputs and labels; read its model",
                    )
                if schema == "gate" and model.materialized == "view":
                    raise ModelError(
                        name, f"reads labels ({ref}) but is a view: a table, so that no view refers to the labels file"
                    )
        self.order  # noqa: B018 - raises on a cycle

    @cached_property
    def order(self) -> list[str]:
        """Every model in dependency order (ties by name), or an error naming a cycle."""
        remaining = {name: set(parents) for name, parents in self.parents.items()}
        ordered: list[str] = []
        while remaining:
            ready = sorted(name for name, parents in remaining.items() if not parents)
            if not ready:
                raise ModelError(sorted(remaining)[0], f"is in a dependency cycle among {', '.join(sorted(remaining))}")
            for name in ready:
                ordered.append(name)
                del remaining[name]
            for parents in remaining.values():
                parents.difference_update(ready)
        return ordered

    def computes_array_aggregate(self, name: str) -> bool:
        """Whether computing `name` computes a model marked `aggregate: array`: the model itself, or
        one its SQL reads through views (a view is computed by the statement that reads it); a model its
        header's depends_on names but its SQL does not read is built before it, not computed by it."""
        if self.models[name].aggregate == "array":
            return True
        read = analysed(self.models[name], self.params).references
        return any(
            f"models.{parent}" in read
            and self.models[parent].materialized == "view"
            and self.computes_array_aggregate(parent)
            for parent in self.parents[name]
        )

    def holds_labels(self, name: str) -> bool:
        """Whether an evaluate model's rows hold labels (judgments, a label per document), so that they
        stay in the study's labels file and never reach results.*: its header says `holds: labels`, or it
        reads gate.* itself."""
        model = self.models[name]
        return model.holds == "labels" or any(ref.startswith("gate.") for ref in self.references[name])

    def ancestors(self, name: str) -> set[str]:
        """Every model `name` reads, directly or not."""
        return self._closure(name, self.parents)

    def descendants(self, name: str) -> set[str]:
        """Every model that reads `name`, directly or not."""
        return self._closure(name, self.children)

    def _closure(self, name: str, edges: dict[str, list[str]]) -> set[str]:
        seen: set[str] = set()
        todo = list(edges[name])
        while todo:
            current = todo.pop()
            if current not in seen:
                seen.add(current)
                todo.extend(edges[current])
        return seen

    def select(self, spec: str | None) -> list[str]:
        """Models chosen by a dbt-style spec, in dependency order.

        Items are separated by spaces or commas: `name`, `+name` (with its ancestors), `name+`
        (with its descendants), `+name+`, `stage:prepare`, `group:metrics`. None selects all.
        """
        if not spec:
            return list(self.order)
        chosen: set[str] = set()
        for item in selection_items(spec):
            if item.startswith("stage:") or item.startswith("group:"):
                key, value = item.split(":", 1)
                found = {m.name for m in self.models.values() if getattr(m, key) == value}
                if not found:
                    raise ModelError(item, f"selects no model (no {key} {value!r})")
                chosen |= found
                continue
            name = item.strip("+")
            if name not in self.models:
                raise ModelError(name, f"no such model (selection {item!r}){did_you_mean(name, self.models)}")
            chosen.add(name)
            if item.startswith("+"):
                chosen |= self.ancestors(name)
            if item.endswith("+"):
                chosen |= self.descendants(name)
        return [name for name in self.order if name in chosen]

    def named(self, spec: str | None) -> list[str]:
        """The models a spec names itself (`name`, `+name`, `name+`), not those it brings in with them or
        selects by stage or group.

        >>> Project.load().named("+run_measures stage:prepare measure_ap+")
        ['run_measures', 'measure_ap']
        """
        return [item.strip("+") for item in selection_items(spec or "") if not item.startswith(("stage:", "group:"))]


def reads(model: Model, params: dict) -> set[str]:
    """Every table `model` reads with `params`: its SQL's (analysis.py) and its header's depends_on."""
    return set(analysed(model, params).references) | {d.lower() for d in model.depends_on}


def reachable(
    models_dir: Path | Sequence[Path], names: list[str], params: dict
) -> tuple[dict[str, Model], dict[str, set[str]]]:
    """The models `names` and every model they read, directly or not, with the tables each reads (its SQL
    rendered with `params`): found by reading and analysing only those files. A name that is not a model
    is refused; a model read that does not exist is left for Project.check to name."""
    paths, glossary = model_paths(models_dir), load_glossary(models_dir)
    for name in names:
        if name not in paths:
            raise ModelError(name, f"no such model{did_you_mean(name, paths)}")
    models: dict[str, Model] = {}
    references: dict[str, set[str]] = {}
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in references:
            continue
        model = models[name] = parse_model(paths[name], root_of(paths[name], models_dir), glossary)
        refs = references[name] = reads(model, params)
        todo += [ref.split(".", 1)[1] for ref in refs if ref.startswith("models.") and ref.split(".", 1)[1] in paths]
    return models, references


def selection_items(spec: str) -> list[str]:
    """The items of a dbt-style selection, separated by spaces or commas."""
    return list(filter(None, re.split(r"[\s,]+", spec)))


def selection_closure(spec: str | None) -> list[str] | None:
    """The models a selection needs loaded (Project.load's closure): the names of its `name` and `+name`
    items; None (the whole project) where it selects everything, descendants (`name+`), a stage or a group.

    >>> selection_closure("+bm25_ranking, retrieval_runs")
    ['bm25_ranking', 'retrieval_runs']
    >>> selection_closure("measure_ap+") is None
    True
    """
    items = selection_items(spec or "")
    if not items or any(item.endswith("+") or ":" in item for item in items):
        return None
    return list(dict.fromkeys(item.lstrip("+") for item in items))
