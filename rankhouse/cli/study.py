"""`rankhouse study prepare|freeze|evaluate|run|status PROTOCOL`: staged, frozen, gated studies."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from rankhouse.cli import engines
from rankhouse.cli.common import (
    DEFAULT,
    DbOption,
    JsonOption,
    NoSmokeOption,
    ProjectOption,
    QuietOption,
    progress_sink,
    say,
)
from rankhouse.progress import Progress

if TYPE_CHECKING:
    from rankhouse.study import Evaluation, Protocol, Study
    from rankhouse.warehouse import Warehouse
    from rankhouse.warehouse.runner import DuckDBEngine

study_app = typer.Typer(
    help="Studies: prepare (no labels), freeze, evaluate (labels behind the gate).", no_args_is_help=True
)
ProtocolArg = Annotated[Path, typer.Argument(help="The study's protocol file, e.g. studies/trec_sample.toml.")]
FreezesOption = Annotated[
    Path | None,
    typer.Option("--freezes", help="Directory of freeze files (default: the warehouse's own, <db>.d/freezes/)."),
]
OutOption = Annotated[
    Path | None,
    typer.Option(
        "--out",
        help="Write results.json, per_query.csv and the runs here (default: the warehouse's <db>.d/out/<study>/); "
        "a folder that holds another study's results.json is refused.",
    ),
]
ReloadOption = Annotated[
    bool, typer.Option("--reload", help="Load every input of this stage again from its file (after rows were edited).")
]
FullOption = Annotated[
    bool,
    typer.Option(
        "--full",
        help="Take every frozen table's canonical export (SHA-256 over its sorted rows) again, not only where "
        "its row digest differs from the freeze's (minutes on a large plan, instead of a scan).",
    ),
]


def _study(
    protocol: Path | Protocol,
    wh: Warehouse,
    freezes: Path | None,
    progress: Progress,
    engine: DuckDBEngine | None = None,
) -> Study:
    """The study of `protocol` on `wh`, its models built on `engine` (DuckDB by default); on another engine,
    a note of how many of its models run there."""
    from rankhouse.study import Protocol, Study

    protocol = protocol if isinstance(protocol, Protocol) else Protocol.load(protocol)
    study = Study(protocol, wh, freezes, progress=progress, engine=engine)
    models = study.prepare_models + study.companions + study.evaluate_models
    note = engines.engine_note(study.engine, study.project, models)
    if note:
        progress.say(f"{note}; freezes and the gate are the warehouse's on either engine")
    return study


def _output_dir(protocol: Protocol, out: Path | None, db: str) -> Path:
    """Where a study's outputs go (--out, default <db>.d/out/<study>/: the warehouse's), checked before
    anything is written: never a folder with another study's results, nor a protocol its writer cannot write."""
    from rankhouse.study import outputs_dir_for
    from rankhouse.study.outputs import check_output_dir, check_protocol

    check_protocol(protocol)
    out = out or outputs_dir_for(db, protocol.name)
    check_output_dir(out, protocol.name)
    return out


@study_app.command("prepare")
def prepare_command(protocol: ProtocolArg, db: DbOption = DEFAULT, freezes: FreezesOption = None,
                    reload: ReloadOption = False, quiet: QuietOption = False,
                    json_lines: JsonOption = False, engine: engines.EngineOption = "duckdb",
                    master: engines.MasterOption = None,
                    spark_workdir: engines.SparkWorkdirOption = None,
                    no_smoke: NoSmokeOption = None, project_dir: ProjectOption = None) -> None:  # fmt: skip
    """Load the label-free inputs and build the prepare models (on --engine: duckdb, or spark for the
    portable ones).  Example: rankhouse study prepare studies/x.toml --engine spark --master local[2]"""
    from rankhouse.study import Protocol
    from rankhouse.study.outputs import check_protocol
    from rankhouse.warehouse import Warehouse

    sink = progress_sink(quiet, json_lines)
    loaded = Protocol.load(protocol)
    check_protocol(loaded)
    builder = engines.open_engine(engine, master, spark_workdir)  # refused here, before the warehouse is opened
    with engines.engine_started(builder, sink.say), Warehouse(db, namespace=loaded.name, say=sink.say) as wh:
        _study(loaded, wh, freezes, sink, builder).prepare(reload, no_smoke)


@study_app.command("freeze")
def freeze_command(
    protocol: ProtocolArg,
    supersedes: Annotated[
        str | None, typer.Option(help="The freeze this one corrects (a new freeze, never an edit).")
    ] = None,
    reason: Annotated[str | None, typer.Option(help="Why the correction was needed (with --supersedes).")] = None,
    db: DbOption = DEFAULT,
    freezes: FreezesOption = None,
    quiet: QuietOption = False,
    json_lines: JsonOption = False,
    full: FullOption = False,
    project_dir: ProjectOption = None,
) -> None:
    """Hash the prepared outputs and the evaluate plan into <db>.d/freezes/<study>-<n>.json.
    Example: rankhouse study freeze studies/x.toml"""
    from rankhouse.study import Protocol
    from rankhouse.warehouse import Warehouse

    sink = progress_sink(quiet, json_lines)
    loaded = Protocol.load(protocol)
    with Warehouse(db, namespace=loaded.name, say=sink.say) as wh:
        _study(loaded, wh, freezes, sink).freeze(supersedes, reason, full)


def _evaluate(
    study: Study, out: Path | None, reload: bool = False, full: bool = False, show: Callable[[str], None] = print
) -> Evaluation:
    """Evaluate, write the outputs and the report into `out`, and show the writer's summary table."""
    from rankhouse.report import build as build_report
    from rankhouse.study.outputs import summary_table, write_outputs

    evaluation = study.evaluate(reload, full)
    study.say(f"evaluated under freeze {evaluation.freeze.freeze_id}")
    if out:
        for path in write_outputs(study, evaluation, out):
            study.say(f"wrote {path}")
        for path in build_report(out):
            study.say(f"wrote {path}")
    show(summary_table(study, evaluation))
    return evaluation


@study_app.command("evaluate")
def evaluate_command(protocol: ProtocolArg, out: OutOption = None, db: DbOption = DEFAULT,
                     freezes: FreezesOption = None, reload: ReloadOption = False, quiet: QuietOption = False,
                     json_lines: JsonOption = False, engine: engines.EngineOption = "duckdb",
                     master: engines.MasterOption = None,
                     spark_workdir: engines.SparkWorkdirOption = None, full: FullOption = False,
                     project_dir: ProjectOption = None) -> None:  # fmt: skip
    """Verify the latest freeze, then open the labels, evaluate (on --engine) and write the outputs (--out,
    default <db>.d/out/<study>/); the freeze verifies whichever engine prepared the study.
    Example: rankhouse study evaluate studies/x.toml"""
    from rankhouse.study import Protocol
    from rankhouse.warehouse import Warehouse

    sink = progress_sink(quiet, json_lines)
    loaded = Protocol.load(protocol)
    out = _output_dir(loaded, out, db)
    builder = engines.open_engine(engine, master, spark_workdir)  # refused here, before the warehouse is opened
    with engines.engine_started(builder, sink.say), Warehouse(db, namespace=loaded.name, say=sink.say) as wh:
        _evaluate(_study(loaded, wh, freezes, sink, builder), out, reload, full)


@study_app.command("run")
def run_command(protocol: ProtocolArg, out: OutOption = None, db: DbOption = DEFAULT,
                freezes: FreezesOption = None, quiet: QuietOption = False, json_lines: JsonOption = False,
                engine: engines.EngineOption = "duckdb", master: engines.MasterOption = None,
                spark_workdir: engines.SparkWorkdirOption = None,
                project_dir: ProjectOption = None) -> None:  # fmt: skip
    """prepare, freeze (reusing an identical freeze), evaluate, and write the outputs (--out, default
    <db>.d/out/<study>/), the models built on --engine (duckdb, or spark for the portable ones).
    Example: rankhouse study run studies/x.toml --engine spark"""
    from rankhouse.study import Protocol
    from rankhouse.warehouse import Warehouse

    sink = progress_sink(quiet, json_lines)
    loaded = Protocol.load(protocol)
    out = _output_dir(loaded, out, db)
    builder = engines.open_engine(engine, master, spark_workdir)  # refused here, before the warehouse is opened
    with engines.engine_started(builder, sink.say), Warehouse(db, namespace=loaded.name, say=sink.say) as wh:
        study = _study(loaded, wh, freezes, sink, builder)
        study.prepare()
        study.freeze()
        _evaluate(study, out)


@study_app.command("status")
def status_command(protocol: ProtocolArg, db: DbOption = DEFAULT, freezes: FreezesOption = None,
                   full: FullOption = False, project_dir: ProjectOption = None) -> None:  # fmt: skip
    """The study's stage, its freezes, whether the latest is intact (by row digests; --full: by canonical
    exports); read-only, so it answers while any study builds.  Example: rankhouse study status studies/x.toml"""
    from rankhouse.study import Protocol
    from rankhouse.warehouse import Warehouse

    loaded = Protocol.load(protocol)
    with Warehouse(db, read_only=True, namespace=loaded.name, say=say) as wh:
        print("\n".join(_study(loaded, wh, freezes, Progress()).status(full)))
