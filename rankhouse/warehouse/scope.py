"""Which models a warehouse can build: those whose inputs it holds.

A model's inputs are the source tables it reads, itself or through the models it reads (in practice
through models/staging/, the only models that read raw.* and gate.*): Project.upstream_sources, read
from the SQL as rendered with the run's parameters, so nothing is declared a second time. A model is in
scope when every one of its source tables holds a row and, if it reads labels, the labels may open here
(a warehouse that holds a study opens them only through `rankhouse study evaluate`). The rest is out of
scope: an evidence model in a warehouse of TREC runs would only fail its audits on empty tables.

    >>> scope = Scope.of(wh, project, project.order)  # doctest: +SKIP
    >>> scope.split(project, project.order, named=[])  # doctest: +SKIP
    (['runs', 'run_ranking', ...], [Skipped(group='evidence', models=(...), reason='no inputs loaded ...')])
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rankhouse.errors import RankhouseError
from rankhouse.warehouse.connection import Warehouse
from rankhouse.warehouse.dag import Project


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
    """What a warehouse holds, as its models see it: the source tables that hold a row, and why its
    labels stay closed (None where they may open, or where no model asked was reading them)."""

    held: frozenset[str]
    gate_refusal: str | None = None

    @classmethod
    def of(cls, wh: Warehouse, project: Project, names: list[str]) -> Scope:
        """The scope of `names` in `wh`: which of their source tables hold rows. Labels are counted only
        where the gate may open (it is then opened, as a run of them would open it); a labels file not
        made yet holds none.

        Example: Scope.of(wh, project, project.select("stage:prepare"))
        """
        sources = set().union(*(project.upstream_sources[name] for name in names))
        held = _with_rows(wh, sorted(s for s in sources if s.startswith("raw.")))
        labels = sorted(s for s in sources if s.startswith("gate."))
        if not labels:
            return cls(held)
        try:
            wh.check_gate()
        except RankhouseError as exc:
            return cls(held, str(exc))
        if Path(wh.labels_path).exists():
            wh.open_gate()
            held |= _with_rows(wh, labels)
        return cls(held)

    def missing(self, project: Project, name: str) -> tuple[str, ...]:
        """The source tables `name` reads that hold no row here (sorted); labels it reads while the gate
        stays closed are not counted (see gated)."""
        return tuple(
            sorted(
                s
                for s in project.upstream_sources[name]
                if s not in self.held and not (s.startswith("gate.") and self.gate_refusal)
            )
        )

    def gated(self, project: Project, name: str) -> tuple[str, ...]:
        """The labels tables `name` reads where the gate stays closed (sorted; empty where it may open)."""
        if self.gate_refusal is None:
            return ()
        return tuple(sorted(s for s in project.upstream_sources[name] if s.startswith("gate.")))

    def status(self, project: Project, name: str) -> str | None:
        """Why `name` is out of scope, in a few words (`no inputs`, `labels gated`), or None.

        Example: scope.status(project, "evidence_greedy")  ->  'no inputs'
        """
        if self.missing(project, name):
            return "no inputs"
        if self.gated(project, name):
            return "labels gated"
        return None

    def why(self, project: Project, names: list[str]) -> str:
        """Why models out of scope for one reason (one status) are, in a sentence: the empty tables or the
        gated labels that any of them reads.

        Example: scope.why(project, ["evidence_greedy"])  ->  'no inputs loaded (raw.evidence_* empty)'
        """
        missing = sorted(set().union(*(self.missing(project, name) for name in names)))
        if missing:
            return _no_rows(missing, project.sources)
        gated = sorted(set().union(*(self.gated(project, name) for name in names)))
        return f"reads labels ({', '.join(gated)}), and {self.gate_refusal}"

    def split(self, project: Project, names: list[str], named: list[str]) -> tuple[list[str], list[Skipped]]:
        """`names` in scope (in their order), and the rest grouped by model group and reason. A model
        in `named` (named by the selection itself) that is out of scope is an error, raised before
        anything is built.

        Example: scope.split(project, project.select("+run_measures"), project.named("+run_measures"))
        """
        refused = [name for name in named if self.status(project, name)]
        if refused:
            reasons = "; ".join(f"{name}: {self.why(project, [name])}" for name in refused)
            raise RankhouseError(
                f"cannot build {', '.join(refused)} in this warehouse: {reasons} "
                "(`rankhouse models list --db DB` shows what it can build)"
            )
        # one line per group of models without inputs, one line for all the models kept from the labels
        empty: dict[str, list[str]] = {}
        gated: list[str] = []
        for name in names:
            status = self.status(project, name)
            if status == "no inputs":
                empty.setdefault(project.models[name].group, []).append(name)
            elif status:
                gated.append(name)
        skipped = [Skipped(_count(len(members), f"{group} model"), tuple(members), self.why(project, members))
                   for group, members in sorted(empty.items())]  # fmt: skip
        if gated:
            groups: dict[str, int] = {}
            for name in gated:
                groups[project.models[name].group] = groups.get(project.models[name].group, 0) + 1
            counts = ", ".join(f"{n} {group}" for group, n in sorted(groups.items(), key=lambda g: (-g[1], g[0])))
            what = f"{_count(len(gated), 'model')} that read labels ({counts})"
            skipped.append(Skipped(what, tuple(gated), str(self.gate_refusal)))
        return [name for name in names if not self.status(project, name)], skipped


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
