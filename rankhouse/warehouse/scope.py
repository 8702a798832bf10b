"""Which models a warehouse can build: those whose inputs it holds.

A model's inputs are the source tables it reads, itself or through the models it reads (in practice
through models/staging/, the only models that read raw.* and gate.*), read from the SQL as rendered
with the run's parameters: nothing is declared a second time. How a model reads them is read from the
SQL too (`Reading`): each query is `full` when every table it reads holds rows, `void` when what it
reads is empty so that it has no row (an inner join with an empty table, a query of empty tables),
and `mixed` when it would have rows made partly of nothing (a LEFT JOIN onto an empty table, an
aggregate over one, a subquery reading one). One empty branch of a UNION leaves the other's rows whole:
the evidence study ranks with its own runs where no run file is loaded.

A model is in scope when it is full, reads no labels that stay closed here (a warehouse that holds a
study opens them only through `rankhouse study evaluate`), and every model it reads is in scope or is
void and has no `at_least_one_row` audit (such a model is built empty, for its readers). The rest is
out of scope: an evidence model in a warehouse of TREC runs would only fail its audits on empty tables.

    >>> scope = Scope.of(wh, project, project.order)  # doctest: +SKIP
    >>> scope.split(project.order, named=[])  # doctest: +SKIP
    (['runs', 'run_ranking', ...], [Skipped(what='19 evidence models', models=(...), reason='no inputs ...')])
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from sqlglot import exp

from rankhouse.errors import RankhouseError
from rankhouse.warehouse.connection import Warehouse
from rankhouse.warehouse.dag import Project

FULL, VOID, MIXED = "full", "void", "mixed"


def _inner(a: str, b: str) -> str:
    """Both read together (an inner or cross join, an INTERSECT): no row if either has none."""
    return VOID if VOID in (a, b) else MIXED if MIXED in (a, b) else FULL


def _outer(kept: str, other: str) -> str:
    """Every row of `kept`, with `other`'s where they match (a LEFT JOIN): partial where `other` is not whole."""
    return VOID if kept == VOID else kept if other == FULL else MIXED


def _anti(kept: str, other: str) -> str:
    """The rows of `kept` that `other` does not match (an ANTI JOIN): whole rows, all of them where `other`
    is empty; partial where `other` is (which rows it leaves is then unsure).

    >>> _anti(FULL, VOID), _anti(FULL, FULL), _anti(FULL, MIXED)
    ('full', 'full', 'mixed')
    """
    return MIXED if other == MIXED and kept != VOID else kept


def _union(a: str, b: str) -> str:
    """The rows of either: an empty branch takes nothing from the other's."""
    return MIXED if MIXED in (a, b) else b if a == VOID else a


class Reading:
    """How a model's queries read their tables (full, void or mixed), given the verdicts of the source
    tables and of the models it reads.

    >>> reading, sql = Reading({"raw.a": FULL, "raw.b": VOID}, {}), "SELECT * FROM raw.a {} raw.b USING (k)"
    >>> [reading.query(exp.maybe_parse(sql.format(how), dialect="duckdb"), {})
    ...  for how in ("JOIN", "LEFT JOIN", "ANTI JOIN")]
    ['void', 'mixed', 'full']
    >>> [reading.query(exp.maybe_parse(text, dialect="duckdb"), {})
    ...  for text in ("SELECT * FROM raw.a UNION ALL SELECT * FROM raw.b", "SELECT count(*) FROM raw.b")]
    ['full', 'mixed']
    """

    def __init__(self, sources: dict[str, str], models: dict[str, str]) -> None:
        self.sources = sources
        self.models = models

    def query(self, node: exp.Expression, ctes: dict[str, str]) -> str:
        """The verdict of a query, with the CTEs `ctes` visible."""
        with_ = node.args.get("with_")
        if with_ is not None:
            ctes = dict(ctes)
            for cte in with_.expressions:
                name = cte.alias_or_name.lower()
                ctes[name] = VOID  # where a recursive CTE reads itself, the rest of its UNION decides
                ctes[name] = self.query(cte.this, ctes)
        if isinstance(node, exp.Union):
            return _union(self.query(node.this, ctes), self.query(node.expression, ctes))
        if isinstance(node, exp.Intersect):
            return _inner(self.query(node.this, ctes), self.query(node.expression, ctes))
        if isinstance(node, exp.Except):
            return _outer(self.query(node.this, ctes), self.query(node.expression, ctes))
        if isinstance(node, (exp.Subquery, exp.Paren)):
            return self.query(node.this, ctes)
        if not isinstance(node, exp.Select):
            return FULL  # VALUES, and anything else that reads no table
        from_ = node.args.get("from_")
        verdict = FULL if from_ is None else self.relation(from_.this, ctes)
        for join in node.args.get("joins") or []:
            right = self.relation(join.this, ctes)
            side, kind = (join.side or "").upper(), (join.kind or "").upper()
            if kind == "ANTI":
                verdict = _anti(verdict, right)
            elif side == "LEFT":
                verdict = _outer(verdict, right)
            elif side == "RIGHT":
                verdict = _outer(right, verdict)
            elif side == "FULL":
                verdict = VOID if verdict == right == VOID else FULL if verdict == right == FULL else MIXED
            else:
                verdict = _inner(verdict, right)
        if verdict == VOID:
            return MIXED if _aggregates_all(node) else VOID  # an aggregate without GROUP BY has a row
        for arg, value in node.args.items():  # subqueries in its columns, filters and the like
            if arg not in ("from_", "joins", "with_"):
                for nested in _queries(value):
                    if self.query(nested, ctes) != FULL:
                        return MIXED
        return verdict

    def relation(self, relation: exp.Expression, ctes: dict[str, str]) -> str:
        """The verdict of what FROM or JOIN reads: a table, a CTE, a model, a subquery or a generator."""
        if isinstance(relation, exp.Table) and isinstance(relation.this, exp.Identifier):
            return self.table(f"{relation.db}.{relation.name}" if relation.db else relation.name, ctes)
        if isinstance(relation, exp.Subquery):
            return self.query(relation.this, ctes)
        return FULL  # a generator (generate_series, range, unnest), VALUES

    def table(self, name: str, ctes: dict[str, str]) -> str:
        """The verdict of a named table: a CTE visible here, a model, or a source table."""
        schema, _, table = name.lower().rpartition(".")
        if not schema:
            return ctes.get(table, FULL)
        return self.models[table] if schema == "models" else self.sources.get(f"{schema}.{table}", FULL)


def _queries(value: object) -> Iterator[exp.Expression]:
    """The outermost queries inside an expression (or a list of them)."""
    for item in value if isinstance(value, list) else [value]:
        if isinstance(item, (exp.Select, exp.SetOperation)):
            yield item
        elif isinstance(item, exp.Expression):
            for child in item.args.values():
                yield from _queries(child)


def _aggregates_all(select: exp.Select) -> bool:
    """Whether a SELECT aggregates all its rows into one (an aggregate function, no GROUP BY): it has
    that row even when it reads none."""
    if select.args.get("group") is not None:
        return False
    return any(
        agg.find_ancestor(exp.Window, exp.Select) is select
        for column in select.expressions
        for agg in column.find_all(exp.AggFunc)
    )


@dataclass(frozen=True)
class Skipped:
    """Models left out of a run for one reason: `what` they are (`21 evidence models`) and why."""

    what: str
    models: tuple[str, ...]
    reason: str

    def __str__(self) -> str:
        return f"skipped {self.what}: {self.reason}"


@dataclass(frozen=True)
class Scope:
    """What a warehouse holds, as a project's models see it: the source tables that hold a row, and why
    its labels stay closed (None where they may open, or where no model asked about reads them)."""

    project: Project
    held: frozenset[str]
    gate_refusal: str | None = None

    @classmethod
    def of(cls, wh: Warehouse, project: Project, names: list[str]) -> Scope:
        """The scope of `project` in `wh`, for a run of `names`: which source tables hold rows. Labels are
        counted only where one of `names` reads them and the gate may open (it is then opened, as a run
        of them opens it); a labels file not made yet holds none.

        Example: Scope.of(wh, project, project.select("stage:prepare"))
        """
        held = _with_rows(wh, sorted(s for s in project.sources if s.startswith("raw.")))
        labels = sorted({s for name in names for s in project.upstream_sources[name] if s.startswith("gate.")})
        if not labels:
            return cls(project, held)
        try:
            wh.check_gate()
        except RankhouseError as exc:
            return cls(project, held, str(exc))
        if Path(wh.labels_path).exists():
            wh.open_gate()
            held |= _with_rows(wh, labels)
        return cls(project, held)

    @cached_property
    def _assumed(self) -> frozenset[str]:
        """The tables taken to hold rows: those that do, and the labels while the gate stays closed
        (what keeps those models out is the gate, not their rows)."""
        if self.gate_refusal is None:
            return self.held
        return self.held | {s for s in self.project.sources if s.startswith("gate.")}

    @cached_property
    def verdicts(self) -> dict[str, str]:
        """Per model: full, void or mixed (Reading), from the tables that hold rows here."""
        sources = {s: FULL if s in self._assumed else VOID for s in self.project.sources}
        found: dict[str, str] = {}
        reading = Reading(sources, found)
        for name in self.project.order:  # parents first
            verdict = reading.query(self.project.trees[name], {})
            for table in self.project.models[name].depends_on:
                verdict = _inner(verdict, reading.table(table, {}))
            found[name] = verdict
        return found

    @cached_property
    def _whole(self) -> frozenset[str]:
        """The full models that read only whole models or void ones (built empty: none with an
        at_least_one_row audit), the labels taken to be there."""
        project, whole, empty = self.project, set(), set()
        for name in project.order:
            if not all(p in whole or p in empty for p in project.parents[name]):
                continue
            if self.verdicts[name] == FULL:
                whole.add(name)
            elif self.verdicts[name] == VOID and all(a.kind != "at_least_one_row" for a in project.models[name].audits):
                empty.add(name)
        return frozenset(whole)

    @cached_property
    def buildable(self) -> frozenset[str]:
        """Every model in scope: the whole ones that read no closed labels, and every model they read."""
        kept = {name for name in self._whole if not self.gated(name)}
        return frozenset(kept.union(*(self.project.ancestors(name) for name in kept)))

    def missing(self, name: str) -> tuple[str, ...]:
        """The empty source tables `name` reads, itself or through the models it reads (sorted); labels
        read while the gate stays closed are not counted (see gated)."""
        return tuple(sorted(s for s in self.project.upstream_sources[name] if s not in self._assumed))

    def gated(self, name: str) -> tuple[str, ...]:
        """The labels tables `name` reads, itself or through its parents, where the gate stays closed
        (sorted; none where it may open)."""
        if self.gate_refusal is None:
            return ()
        return tuple(sorted(s for s in self.project.upstream_sources[name] if s.startswith("gate.")))

    def status(self, name: str) -> str | None:
        """Why `name` is out of scope, in a few words (`no inputs`, `labels gated`), or None.

        Example: scope.status("evidence_greedy")  ->  'no inputs'
        """
        if name in self.buildable:
            return None
        return "labels gated" if name in self._whole else "no inputs"

    def why(self, names: list[str]) -> str:
        """Why models out of scope for one reason (one status) are, in a sentence: the empty tables or the
        gated labels that any of them reads.

        Example: scope.why(["evidence_greedy"])  ->  'no inputs loaded (raw.evidence_* empty)'
        """
        missing = sorted(set().union(*(self.missing(name) for name in names)))
        if missing:
            return _no_rows(missing, self.project.sources)
        gated = sorted(set().union(*(self.gated(name) for name in names)))
        if gated:
            return f"reads labels ({', '.join(gated)}), and {self.gate_refusal}"
        return "a model it reads cannot be built here"

    def split(self, names: list[str], named: list[str]) -> tuple[list[str], list[Skipped]]:
        """`names` in scope (in their order), and the rest grouped by model group and reason. A model
        in `named` (named by the selection itself) that is out of scope is an error, raised before
        anything is built.

        Example: scope.split(project.select("+run_measures"), project.named("+run_measures"))
        """
        refused = [name for name in named if self.status(name)]
        if refused:
            reasons = "; ".join(f"{name}: {self.why([name])}" for name in refused)
            raise RankhouseError(
                f"cannot build {', '.join(refused)} in this warehouse: {reasons} "
                "(`rankhouse models list --db DB` shows what it can build)"
            )
        # one line per folder of models without inputs (a study's staging/ with its study), one line for all
        # the models kept from the labels
        empty: dict[str, list[str]] = {}
        gated: list[str] = []
        for name in names:
            status = self.status(name)
            if status == "no inputs":
                empty.setdefault(self.project.models[name].group.split("/")[0], []).append(name)
            elif status:
                gated.append(name)
        skipped = [Skipped(_count(len(members), f"{group} model"), tuple(members), self.why(members))
                   for group, members in sorted(empty.items())]  # fmt: skip
        if gated:
            groups: dict[str, int] = {}
            for name in gated:
                group = self.project.models[name].group.split("/")[0]
                groups[group] = groups.get(group, 0) + 1
            counts = ", ".join(f"{n} {group}" for group, n in sorted(groups.items(), key=lambda g: (-g[1], g[0])))
            what = f"{_count(len(gated), 'model')} that read labels ({counts})"
            skipped.append(Skipped(what, tuple(gated), str(self.gate_refusal)))
        return [name for name in names if not self.status(name)], skipped


def _count(n: int, noun: str) -> str:
    """`1 model`, `2 models`."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _with_rows(wh: Warehouse, tables: list[str]) -> frozenset[str]:
    """The tables of `tables` that exist and hold at least one row (one statement for all)."""
    # gate.x is the labels catalog's table main.x; raw.x the warehouse's schema raw
    present = [
        t for t in tables if wh.table_exists(t.replace("gate.", "gate.main.", 1) if t.startswith("gate.") else t)
    ]
    if not present:
        return frozenset()
    query = " UNION ALL ".join(f"SELECT '{t}', EXISTS (SELECT 1 FROM {t})" for t in present)
    return frozenset(table for table, has_rows in wh.sql(query) if has_rows)


def _no_rows(missing: list[str], sources: set[str]) -> str:
    """`no inputs loaded (raw.evidence_* empty)`: the empty tables, those sharing a prefix written as
    one pattern where every source table with that prefix is among them."""
    shown, done = [], set()
    for table in sorted(missing, key=lambda t: (t.startswith("gate."), t)):  # inputs, then labels
        if table in done:
            continue
        schema, name = table.split(".", 1)
        prefix = f"{schema}.{name.split('_', 1)[0]}_"
        family = sorted(s for s in sources if s.startswith(prefix))
        if "_" in name and len(family) > 1 and set(family) <= set(missing):
            shown.append(prefix + "*")
            done.update(family)
        else:
            shown.append(table)
            done.add(table)
    what = "labels" if all(t.startswith("gate.") for t in missing) else "inputs"
    return f"no {what} loaded ({', '.join(shown)} empty)"
