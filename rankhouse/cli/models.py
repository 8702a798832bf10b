"""`rankhouse models` (list, show, lineage) and `rankhouse run` (build selected models)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from rankhouse.cli.common import (
    DEFAULT,
    DbOption,
    JsonOption,
    ProjectOption,
    QuietOption,
    choose,
    parse_params,
    progress_sink,
    say,
    table,
)
from rankhouse.cli.engines import (
    ENGINES,
    EngineOption,
    MasterOption,
    SparkWorkdirOption,
    engine_note,
    engine_started,
    open_engine,
)
from rankhouse.errors import RankhouseError, did_you_mean
from rankhouse.sentences import first_sentence
from rankhouse.warehouse.layout import DEFAULT_NAMESPACE

if TYPE_CHECKING:
    from rankhouse.study import Protocol
    from rankhouse.warehouse import Warehouse
    from rankhouse.warehouse.dag import Project
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


STAGES = ("prepare", "evaluate")
LINEAGE_FORMATS = ("text", "dot", "mermaid")
StudyOption = Annotated[
    Path | None,
    typer.Option("--study", help="A study's protocol: its models (both stages) with its parameters."),
]


def _listed(project: Project, select: str | None, stage: str | None, study: Protocol | None) -> list[str]:
    """The models `models list` shows, in dependency order: a study's (its stages' selections), narrowed
    by --select and --stage."""
    names = project.select(select) if select else list(project.order)
    if study is not None:
        mine = set(project.select(f"{study.prepare} {study.evaluate}"))
        names = [n for n in names if n in mine]
    if stage is not None:
        names = [n for n in names if project.models[n].stage == stage]
    return names


def _parameters_of(protocol: Protocol | None, param: list[str] | None) -> dict:
    """The parameters the models render with: a study's, as the study renders them (its name as `study`,
    then its protocol's), then those of -p."""
    studied = {"study": protocol.name, **protocol.parameters} if protocol is not None else {}
    return {**studied, **parse_params(param)}


def _statuses(wh: Warehouse, runner: Runner, names: list[str]) -> dict[str, str]:
    """Per model: no inputs (a source table it reads is empty here: `rankhouse run` skips it), never built,
    built (its last build's fingerprint is the current one), out of date, or why its fingerprint cannot
    be taken here (e.g. the labels are gated)."""
    from rankhouse.warehouse.scope import Scope

    last = dict(wh.sql(
        "SELECT model, arg_max(fingerprint, started_at) FROM meta.model_runs WHERE status = 'built' GROUP BY model"
    ))  # fmt: skip
    scope = Scope.of(wh, runner.project, names)
    found = {}
    for name in names:
        if scope.status(name) == "no inputs":
            found[name] = "no inputs"
            continue
        if name not in last:
            found[name] = "never built" + (" (labels gated)" if scope.gated(name) else "")
            continue
        try:
            found[name] = "built" if runner.fingerprint(name) == last[name] else "out of date"
        except RankhouseError as exc:  # e.g. a study's evaluate model while its labels are gated
            found[name] = "built (labels gated: not checked)" if "gate" in str(exc) else f"built ({exc})"
    return found


@models_app.command("list")
def list_command(
    select: Annotated[str | None, typer.Option("--select", "-s", help="dbt-style: name, +name, name+.")] = None,
    stage: Annotated[str | None, typer.Option("--stage", help="prepare or evaluate.")] = None,
    study: StudyOption = None,
    db: Annotated[str | None, typer.Option("--db", help="A warehouse: add each model's status in it.")] = None,
    param: ParamOption = None,
    engine: Annotated[
        str,
        typer.Option(
            "--engine",
            help="spark: add a column saying where each model runs under --engine spark (spark, or duckdb and "
            "why); duckdb (the default) runs them all.",
        ),
    ] = "duckdb",
    project_dir: ProjectOption = None,
) -> None:
    """Models in dependency order: group, stage, version, what each holds, and with --db whether it is
    built, out of date or never built there, or has no inputs there (a table it reads is empty, so
    `rankhouse run` skips it), for the parameters of --study and -p (in the study's namespace; the default
    one without --study). With --study, where each model's rows are: `<study>.models.<name>` (a prepare
    model), `<study>.results.<name>` (an evaluate model's results, one copy per freeze) or the study's
    labels file (an evaluate model that holds labels: `models.<name>` with `rankhouse query --study`).
    With --engine spark, the engine each model runs on there: spark, or duckdb with the reason (its
    header's, "calls a Python function", "reads the labels").

    Example: rankhouse models list --study studies/banking77.toml --stage evaluate --db rankhouse.duckdb

    Example: rankhouse models list --study studies/trec_sample.toml --engine spark
    """
    from rankhouse.study import Protocol
    from rankhouse.warehouse import Warehouse
    from rankhouse.warehouse.dag import Project
    from rankhouse.warehouse.runner import Runner

    choose(engine, ENGINES, "--engine")
    if stage is not None:
        choose(stage, STAGES, "--stage")
    protocol = Protocol.load(study) if study is not None else None
    params = _parameters_of(protocol, param)
    project = Project.load(params=params)
    names = _listed(project, select, stage, protocol)
    headers = ["model", "group", "stage", "version", "description"]
    rows = [[n, project.models[n].group, project.models[n].stage, project.models[n].version,
             first_sentence(project.models[n].description)[:80]] for n in names]  # fmt: skip
    if engine != "duckdb":
        from rankhouse.warehouse.spark import duckdb_reason

        headers.insert(4, "engine")
        for row in rows:
            reason = duckdb_reason(project.models[row[0]], project)
            row.insert(4, f"duckdb ({reason})" if reason else engine)
    if protocol is not None:
        headers.insert(4, "where")
        for row in rows:
            row.insert(4, _where(project, row[0], protocol.name))
    if db is not None:
        if db != ":memory:" and not Path(db).exists():
            raise RankhouseError(f"no warehouse {db}")
        namespace = protocol.name if protocol is not None else DEFAULT_NAMESPACE
        with Warehouse(db, read_only=True, namespace=namespace) as wh:
            _open_gate_unless_a_study(wh)
            statuses = _statuses(wh, Runner(wh, project, params), names)
        headers.insert(4, "status")
        for row in rows:
            row.insert(4, statuses[row[0]])
    print(table(headers, rows))


def _where(project: Project, name: str, study: str) -> str:
    """Where a study's model's rows are for an analyst (rankhouse query).

    >>> _where(Project.load(closure=["run_measures"]), "run_measures", "trec_sample")
    'trec_sample.results.run_measures'
    """
    model = project.models[name]
    if model.stage == "prepare":
        return f"{study}.models.{name}"
    if project.holds_labels(name) or model.materialized == "view":
        return f"labels: models.{name} (query --study)"
    return f"{study}.results.{name}"


def _open_gate_unless_a_study(wh: Warehouse) -> None:
    """Open the labels of the default namespace (loaded outside any study; a study's open only after its
    freeze verifies), so that the fingerprints of evaluate models can be taken."""
    if not wh.gated() and Path(wh.labels_path).exists():
        wh.open_gate()


def _fingerprint_and_last_run(db: str, project: Project, name: str) -> tuple[str, str]:
    from rankhouse.warehouse import Warehouse
    from rankhouse.warehouse.runner import Runner

    if db != ":memory:" and not Path(db).exists():
        return "(no warehouse yet)", "never"
    with Warehouse(db, read_only=db != ":memory:") as wh:
        _open_gate_unless_a_study(wh)
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
    project_dir: ProjectOption = None,
) -> None:
    """A model's header, parents, children, fingerprint and last run (in the default namespace) and SQL.
    Example: rankhouse models show measure_ap"""
    from rankhouse.warehouse.dag import Project
    from rankhouse.warehouse.render import render

    project = Project.load()
    _known_model(project, name)
    model = project.models[name]
    fingerprint, last_run = _fingerprint_and_last_run(db, project, name)
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


def _edges(project: Project, upstream: bool) -> dict[str, list[str]]:
    """Per model (and source table), what it reads (upstream) or what reads it (downstream)."""
    if not upstream:
        return project.children
    edges = {
        n: project.parents[n] + sorted(r for r in project.references[n] if not r.startswith("models."))
        for n in project.models
    }
    for ref in {r for refs in project.references.values() for r in refs if not r.startswith("models.")}:
        edges[ref] = []
    return edges


def _walk(edges: dict[str, list[str]], name: str, depth: int | None) -> list[tuple[int, str, str, bool]]:
    """(level, parent, node, seen before) for every edge below `name`, depth first, to `depth` levels."""
    out, seen = [], set()

    def visit(node: str, level: int) -> None:
        if depth is not None and level >= depth:
            return
        for child in edges[node]:
            out.append((level, node, child, child in seen))
            if child not in seen:
                seen.add(child)
                visit(child, level + 1)

    visit(name, 0)
    return out


def _graph(name: str, upstream: list, downstream: list, output_format: str) -> str:
    """The lineage as Graphviz dot or a Mermaid flowchart: an arrow from what is read to what reads it."""
    edges = sorted({(child, parent) for _, parent, child, _ in upstream} | {(p, c) for _, p, c, _ in downstream})
    nodes = sorted({n for edge in edges for n in edge} | {name})
    if output_format == "dot":
        lines = ["digraph lineage {", "  rankdir=LR;", f'  "{name}" [style=bold];']
        lines += [f'  "{a}" -> "{b}";' for a, b in edges]
        return "\n".join(lines + ["}"])
    ids = {n: f"n{i}" for i, n in enumerate(nodes)}
    lines = ["flowchart LR"] + [f'  {ids[n]}["{n}"]' for n in nodes]
    lines += [f"  {ids[a]} --> {ids[b]}" for a, b in edges] + [f"  style {ids[name]} stroke-width:3px"]
    return "\n".join(lines)


@models_app.command("lineage")
def lineage_command(
    name: Annotated[str, typer.Argument(help="Model name.")],
    depth: Annotated[int | None, typer.Option("--depth", min=1, help="Levels to follow each way (all).")] = None,
    output_format: Annotated[str, typer.Option("--format", help="text (default), dot or mermaid.")] = "text",
    project_dir: ProjectOption = None,
) -> None:
    """What a model reads (upstream, down to source tables) and what reads it (downstream), as a tree or
    as a Graphviz (dot) or Mermaid graph.

    Example: rankhouse models lineage judged_ranking --depth 2 --format mermaid
    """
    from rankhouse.warehouse.dag import Project

    choose(output_format, LINEAGE_FORMATS, "--format")
    project = Project.load()
    _known_model(project, name)
    upstream = _walk(_edges(project, True), name, depth)
    downstream = _walk(_edges(project, False), name, depth)
    if output_format != "text":
        print(_graph(name, upstream, downstream, output_format))
        return
    out = [name, "upstream (reads):"]
    out += [f"{'    ' * level}└── {node}{' (see above)' if seen else ''}" for level, _, node, seen in upstream]
    out.append("downstream (read by):")
    out += [f"{'    ' * level}└── {node}{' (see above)' if seen else ''}" for level, _, node, seen in downstream]
    print("\n".join(out))


@models_app.command("docs")
def docs_command(
    directory: Annotated[Path, typer.Argument(help="Folder for the catalog: new, empty or an earlier catalog.")],
    select: Annotated[str | None, typer.Option("--select", "-s", help="dbt-style: name, +name, name+.")] = None,
    study: StudyOption = None,
    db: Annotated[str | None, typer.Option("--db", help="A warehouse: each model's status, last run, rows.")] = None,
    param: ParamOption = None,
    project_dir: ProjectOption = None,
) -> None:
    """A static catalog of the models, like dbt docs (plain HTML, nothing fetched): an index by folder, the
    project's lineage graph, and a page per model with its header, SQL, lineage, audits and, with --db,
    its status, last run and row count there.

    Example: rankhouse models docs out/catalog --db rankhouse.duckdb
    """
    from rankhouse.catalog_docs import check_directory, warehouse_states, write_catalog
    from rankhouse.study import Protocol
    from rankhouse.warehouse import Warehouse
    from rankhouse.warehouse.dag import Project
    from rankhouse.warehouse.runner import Runner

    check_directory(directory)
    protocol = Protocol.load(study) if study is not None else None
    params = _parameters_of(protocol, param)
    project = Project.load(params=params)
    names = _listed(project, select, None, protocol)
    states, source = None, "the model files"
    if db is not None:
        namespace = protocol.name if protocol is not None else DEFAULT_NAMESPACE
        with Warehouse(db, read_only=True, namespace=namespace) as wh:
            _open_gate_unless_a_study(wh)
            states = warehouse_states(wh, project, names, _statuses(wh, Runner(wh, project, params), names))
        source = f"the model files and the warehouse {db}"
    written = write_catalog(project, directory, names, states, source)
    say(f"wrote {len(written)} pages to {directory} (open {directory / 'index.html'})")


def run_command(
    select: Annotated[
        str | None, typer.Option("--select", "-s", help="dbt-style: name, +name (ancestors), name+ (descendants).")
    ] = None,
    param: ParamOption = None,
    force: Annotated[bool, typer.Option(help="Rebuild even when the fingerprint is unchanged.")] = False,
    db: DbOption = DEFAULT,
    quiet: QuietOption = False,
    json_lines: JsonOption = False,
    engine: EngineOption = "duckdb",
    master: MasterOption = None,
    spark_workdir: SparkWorkdirOption = None,
    project_dir: ProjectOption = None,
) -> None:
    """Build models in dependency order; unchanged ones are skipped.  Example: rankhouse run -s +run_measures

    With `--engine spark [--master URL]` the portable models are computed on Apache Spark and handed back
    to the warehouse, which stays the catalog (rankhouse/warehouse/spark.py); models marked `dialect:
    duckdb`, those calling Python functions and those reading labels are built in DuckDB. Example:
    rankhouse run --engine spark --master local[2] -s +run_measures

    Only the models whose inputs the warehouse holds are built (rankhouse/warehouse/scope.py): the
    source tables a model reads, itself or through the models it reads (raw.* inputs, gate.* labels),
    must hold rows, but for a UNION branch that is empty as a whole (it is built empty), and labels
    must be able to open here (a warehouse that holds a study opens them only in `rankhouse study
    evaluate`). The rest of the selection (all models without -s, or those of stage:, group:, +name
    and name+) is skipped with a line saying which and why (`models list --db` shows each model); a
    model that -s names itself and cannot be built is an error, before anything is built. The models
    are built in the warehouse's default namespace, with the models' defaults and -p: a study's own
    models live in its namespace, which `rankhouse run` never touches.
    """
    from rankhouse.warehouse import Warehouse
    from rankhouse.warehouse.dag import Project, selection_closure
    from rankhouse.warehouse.runner import Runner
    from rankhouse.warehouse.scope import Scope

    sink = progress_sink(quiet, json_lines)
    params = parse_params(param)
    project = Project.load(params=params, closure=selection_closure(select))  # only what the selection reads
    names = project.select(select)
    builder = open_engine(engine, master, spark_workdir)  # refused here, before the warehouse is opened
    with engine_started(builder, sink.say), Warehouse(db, say=sink.say) as wh:
        # the scope opens the labels gate where a model in it reads labels
        names, skipped = Scope.of(wh, project, names).split(names, project.named(select))
        runner = Runner(wh, project, params, engine=builder)
        sink.say(f"running {len(names)} model(s) on {db}")
        for group in skipped:
            sink.models_skipped(group)
        note = engine_note(builder, project, names)
        if note:
            sink.say(f"{note}; a model built and unchanged is skipped whichever engine built it (--force rebuilds it)")
        results = runner.run(names, force=force, progress=sink)
    built = sum(r.status == "built" for r in results)
    left = sum(len(group.models) for group in skipped)
    sink.say(f"done: {built} built, {len(results) - built} skipped" + (f", {left} not in scope" if left else ""))
