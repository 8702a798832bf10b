"""`rankhouse models` (list, show, lineage) and `rankhouse run` (build selected models)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rankhouse.cli.common import DEFAULT, DbOption, LabelsOption, parse_params, report_model, say, table
from rankhouse.errors import RankhouseError, did_you_mean
from rankhouse.warehouse import Warehouse
from rankhouse.warehouse.dag import Project
from rankhouse.warehouse.render import render
from rankhouse.warehouse.runner import Runner

models_app = typer.Typer(help="The model catalog: list, show and trace models.", no_args_is_help=True)
ParamOption = Annotated[
    list[str] | None,
    typer.Option(
        "--param",
        "-p",
        help="Model parameter key=value, read as the type the models declare: depth=10, corpus=banking77, "
        'rankings=a,b or TOML (rankings=["a"]); measures=AP,P.5,10 as -m reads it. Repeatable.',
    ),
]


def _known_model(project: Project, name: str) -> None:
    if name not in project.models:
        hint = did_you_mean(name, project.models) or "; see `rankhouse models list`"
        raise RankhouseError(f"no model named {name!r}{hint}")


def _summary(description: str) -> str:
    return description.split(". ")[0].rstrip(".")


@models_app.command("list")
def list_command() -> None:
    """Every model: group, stage, version, what it holds.  Example: rankhouse models list"""
    project = Project.load()
    rows = [
        [m.name, m.group, m.stage, m.version, _summary(m.description)[:80]]
        for m in (project.models[n] for n in project.order)
    ]
    print(table(["model", "group", "stage", "version", "description"], rows))


def _fingerprint_and_last_run(db: str, labels: str | None, project: Project, name: str) -> tuple[str, str]:
    if db != ":memory:" and not Path(db).exists():
        return "(no warehouse yet)", "never"
    with Warehouse(db, labels) as wh:
        if Path(wh.labels_path).exists() and not wh.studies():
            wh.open_gate()
        try:
            fingerprint = Runner(wh, project).fingerprint(name)
        except RankhouseError as exc:
            fingerprint = f"(unavailable: {exc})"
        rows = wh.sql(
            "SELECT status, started_at, rows, seconds, fingerprint FROM meta.model_runs WHERE model = ? "
            "ORDER BY started_at DESC LIMIT 1",
            [name],
        )
    if not rows:
        return fingerprint, "never"
    status, started, count, seconds, built = rows[0]
    same = "current" if built == fingerprint else "out of date"
    return fingerprint, f"{status} at {started:%Y-%m-%d %H:%M:%S}, {count} rows, {seconds:.2f} s ({same})"


@models_app.command("show")
def show_command(
    name: Annotated[str, typer.Argument(help="Model name.")],
    db: DbOption = DEFAULT,
    labels: LabelsOption = None,
) -> None:
    """A model's header, parents, children, fingerprint, last run and SQL.  Example: rankhouse models show measure_ap"""
    project = Project.load()
    _known_model(project, name)
    model = project.models[name]
    fingerprint, last_run = _fingerprint_and_last_run(db, labels, project, name)
    sources = sorted(r for r in project.references[name] if not r.startswith("models."))
    print(f"model        {model.name} (version {model.version}, {model.stage}, group {model.group})")
    print(f"file         {model.path}")
    print(f"grain        {', '.join(model.grain)}")
    print(f"audits       {'; '.join(map(str, model.audits))}")
    print(f"parameters   {model.parameters or '-'}")
    print(f"parents      {', '.join(project.parents[name] + sources) or '-'}")
    print(f"children     {', '.join(project.children[name]) or '-'}")
    print(f"fingerprint  {fingerprint}")
    print(f"last run     {last_run}")
    print(f"description  {model.description}")
    print()
    print(render(model).rstrip())


def _tree(project: Project, name: str, edges: dict[str, list[str]], depth: int, seen: set[str], out: list[str]) -> None:
    for node in edges[name]:
        repeat = " (see above)" if node in seen else ""
        out.append(f"{'    ' * depth}└── {node}{repeat}")
        if not repeat:
            seen.add(node)
            _tree(project, node, edges, depth + 1, seen, out)


@models_app.command("lineage")
def lineage_command(name: Annotated[str, typer.Argument(help="Model name.")]) -> None:
    """What a model reads (upstream, down to source tables) and what reads it (downstream).

    Example: rankhouse models lineage judged_ranking
    """
    project = Project.load()
    _known_model(project, name)
    upstream_edges = {
        n: project.parents[n] + sorted(r for r in project.references[n] if not r.startswith("models."))
        for n in project.models
    }
    for ref in {r for refs in project.references.values() for r in refs if not r.startswith("models.")}:
        upstream_edges[ref] = []
    out = [f"{name}", "upstream (reads):"]
    _tree(project, name, upstream_edges, 0, set(), out)
    out.append("downstream (read by):")
    _tree(project, name, project.children, 0, set(), out)
    print("\n".join(out))


def run_command(
    select: Annotated[
        str | None, typer.Option("--select", "-s", help="dbt-style: name, +name (ancestors), name+ (descendants).")
    ] = None,
    param: ParamOption = None,
    force: Annotated[bool, typer.Option(help="Rebuild even when the fingerprint is unchanged.")] = False,
    db: DbOption = DEFAULT,
    labels: LabelsOption = None,
) -> None:
    """Build models in dependency order; unchanged ones are skipped.  Example: rankhouse run -s +run_measures"""
    params = parse_params(param)
    project = Project.load(params=params)
    names = project.select(select)
    with Warehouse(db, labels) as wh:
        if any(project.models[n].stage == "evaluate" for n in names):
            wh.open_gate()
        say(f"running {len(names)} model(s) on {db}")
        results = Runner(wh, project, params).run(names, force=force, progress=report_model)
    built = sum(r.status == "built" for r in results)
    say(f"done: {built} built, {len(results) - built} skipped")
