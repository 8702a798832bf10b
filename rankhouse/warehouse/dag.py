"""The model DAG: dependencies inferred from the SQL, checked, ordered and selected (dbt syntax)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from sqlglot import exp

from rankhouse.errors import ModelError
from rankhouse.functions import FUNCTIONS
from rankhouse.paths import MODELS_DIR, read_sql
from rankhouse.warehouse.catalog import Model, load_models
from rankhouse.warehouse.render import parse, render

# Schemas a model may read: other models, loaded inputs, and labels through the gate.
SOURCE_SCHEMAS = {"raw": "warehouse.sql", "gate": "labels.sql"}
STAGING = "staging"  # the one group whose models read raw.* and gate.* (dbt's staging layer)
CREATE_TABLE = re.compile(r"CREATE TABLE IF NOT EXISTS ([\w.]+)", re.IGNORECASE)


def declared_sources() -> set[str]:
    """Tables a model may read besides models: `raw.*` from sql/warehouse.sql, `gate.*` from sql/labels.sql."""
    sources = set()
    for schema, ddl in SOURCE_SCHEMAS.items():
        for name in CREATE_TABLE.findall(read_sql(ddl)):
            if schema == "gate" and "." not in name:
                sources.add(f"gate.{name}")
            elif name.startswith(f"{schema}."):
                sources.add(name)
    return sources


def table_references(model: Model, tree: exp.Expression) -> set[str]:
    """`schema.table` names the SQL reads; CTE names are excluded, file readers are rejected."""
    ctes = {cte.alias_or_name for cte in tree.find_all(exp.CTE)}
    refs = set()
    for table in tree.find_all(exp.Table):
        if not isinstance(table.this, exp.Identifier):
            raise ModelError(
                model.name,
                f"reads {table.this.sql('duckdb')} directly; models read only warehouse tables "
                "(load files with a loader)",
            )
        if table.catalog:
            raise ModelError(model.name, f"names a database: {table.sql('duckdb')}; write schema.table")
        if not table.db:
            if table.name in ctes:
                continue
            raise ModelError(
                model.name,
                f"reads {table.name!r}, which is neither a CTE nor schema-qualified (models.x, raw.x, gate.x)",
            )
        refs.add(f"{table.db}.{table.name}".lower())
    return refs


@dataclass
class Project:
    """All models of a project, with their dependencies checked and ordered."""

    models: dict[str, Model]
    sources: set[str]
    params: dict = field(default_factory=dict)

    @classmethod
    def load(cls, models_dir: Path = MODELS_DIR, params: dict | None = None) -> Project:
        """The models under `models_dir`, their dependencies read from the SQL rendered with `params`
        (header defaults where not given), so that a parameter can switch a model's source."""
        project = cls(load_models(models_dir), declared_sources(), dict(params or {}))
        project.check()
        return project

    @cached_property
    def references(self) -> dict[str, set[str]]:
        """Per model: every table it reads (parsed from the SQL rendered with the project's parameters)."""
        refs = {}
        for model in self.models.values():
            refs[model.name] = table_references(model, parse(model, render(model, self.params))) | {
                d.lower() for d in model.depends_on
            }
        return refs

    @cached_property
    def parents(self) -> dict[str, list[str]]:
        """Per model: the models it reads, sorted."""
        return {
            name: sorted(r.split(".", 1)[1] for r in refs if r.startswith("models."))
            for name, refs in self.references.items()
        }

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
                if schema in SOURCE_SCHEMAS and model.group != STAGING:
                    raise ModelError(
                        name,
                        f"reads {ref}: only models in models/{STAGING}/ read loaded inputs and labels; read its model",
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
        one it reads through views (a view is computed by the statement that reads it)."""
        if self.models[name].aggregate == "array":
            return True
        return any(
            self.models[parent].materialized == "view" and self.computes_array_aggregate(parent)
            for parent in self.parents[name]
        )

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
        for item in filter(None, re.split(r"[\s,]+", spec)):
            if item.startswith("stage:") or item.startswith("group:"):
                key, value = item.split(":", 1)
                found = {m.name for m in self.models.values() if getattr(m, key) == value}
                if not found:
                    raise ModelError(item, f"selects no model (no {key} {value!r})")
                chosen |= found
                continue
            name = item.strip("+")
            if name not in self.models:
                raise ModelError(name, f"no such model (selection {item!r})")
            chosen.add(name)
            if item.startswith("+"):
                chosen |= self.ancestors(name)
            if item.endswith("+"):
                chosen |= self.descendants(name)
        return [name for name in self.order if name in chosen]
