"""The engine options of the commands that build models (`run`, `eval`, `study prepare|evaluate|run`):
--engine duckdb|spark, --master URL and --spark-workdir DIR, checked before anything is opened, and the
engine started before a command opens its warehouse and closed after (rankhouse/warehouse/spark.py)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from rankhouse.cli.common import choose

if TYPE_CHECKING:
    from rankhouse.warehouse.dag import Project
    from rankhouse.warehouse.runner import DuckDBEngine

ENGINES = ("duckdb", "spark")
EngineOption = Annotated[
    str,
    typer.Option(
        "--engine",
        help="Where models are computed: duckdb (the default) or spark (portable models transpiled to Spark "
        "SQL and run in a SparkSession, their rows handed back to the warehouse; needs pyspark, the spark extra, and "
        "Java 17).",
    ),
]
MasterOption = Annotated[
    str | None,
    typer.Option(
        "--master", help="With --engine spark: the Spark master URL (default local[*]; spark://host:7077, yarn, ...)."
    ),
]


WORKDIR_VARIABLE = "RANKHOUSE_SPARK_WORKDIR"
SparkWorkdirOption = Annotated[
    str | None,  # as typed: a Path would turn s3a://b into s3a:/b
    typer.Option(
        "--spark-workdir",
        metavar="DIR",
        help="With --engine spark: the folder of the Parquet files the engines hand each other (default: "
        f"<db>.spark/ beside the warehouse, or ${WORKDIR_VARIABLE}); on a cluster, a shared file system mounted at "
        "the same path here and on every executor.",
    ),
]


def open_engine(engine: str = "duckdb", master: str | None = None, workdir: str | Path | None = None) -> DuckDBEngine:
    """The engine of --engine, --master and --spark-workdir (else $RANKHOUSE_SPARK_WORKDIR), checked before
    anything is opened or written: DuckDB's, or a SparkEngine. Pair it with `engine_started`.

    Example: runner = Runner(wh, project, params, engine=open_engine("spark", "local[2]"))
    """
    from rankhouse.warehouse.runner import DuckDBEngine

    choose(engine, ENGINES, "--engine")
    if engine == "duckdb":
        for given, option in ((master, "--master"), (workdir, "--spark-workdir")):
            if given is not None:
                raise typer.BadParameter(f"{option} is for --engine spark")
        return DuckDBEngine()
    from rankhouse.warehouse.spark import DEFAULT_MASTER, SparkEngine

    return SparkEngine(master or DEFAULT_MASTER, workdir or os.environ.get(WORKDIR_VARIABLE) or None)


@contextmanager
def engine_started(builder: DuckDBEngine, say: Callable[[str], None]) -> Iterator[DuckDBEngine]:
    """`builder` started (a SparkSession: before the command opens its warehouse, so that a master that
    does not answer is refused before anything is written), and closed when the block ends (a session
    is stopped only if the engine started it).

    Example: with engine_started(open_engine(engine, master), sink.say) as builder: ...
    """
    try:
        if builder.name != "duckdb":
            say(f"starting Spark ({builder.master})")  # a SparkEngine
            builder.start()
        yield builder
    finally:
        builder.close()


def engine_note(builder: DuckDBEngine, project: Project, names: list[str]) -> str | None:
    """What a command says of its engine before it builds `names`: how many of them run on Spark (None on
    DuckDB, where all do).

    Example: engine_note(SparkEngine(), project, ["qrels", "measure_ap"]) gives
    'engine spark: 1 of the 2 model(s) run there, the others in DuckDB'
    """
    if builder.name == "duckdb":
        return None
    there = sum(builder.runs_on(project.models[name], project) == builder.name for name in names)
    return f"engine {builder.name}: {there} of the {len(names)} model(s) run there, the others in DuckDB"
