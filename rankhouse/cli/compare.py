"""`rankhouse compare`: a runs x measures table against a baseline, with paired significance tests."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rankhouse.cli.common import RUN_HELP, ProjectOption, say, silent
from rankhouse.cli.engines import EngineOption, MasterOption, SparkWorkdirOption, engine_started, open_engine
from rankhouse.errors import RankhouseError
from rankhouse.formats import COMPARE_FORMATS as FORMATS
from rankhouse.formats import DEFAULT_SEED
from rankhouse.progress import TextProgress


def compare_command(
    qrels: Annotated[Path, typer.Argument(help="TREC qrels file (.gz too; - for standard input).")],
    runs: Annotated[
        list[str],
        typer.Argument(
            metavar="RUN...",
            help="Two or more TREC run files, each PATH or NAME=PATH (.gz too; - for standard input, one input "
            "at most). " + RUN_HELP,
        ),
    ],
    measure: Annotated[
        list[str] | None,
        typer.Option(
            "--measure",
            "-m",
            help="Measure averaged over queries, ir_measures (nDCG@10) or trec_eval (ndcg_cut.10) name; "
            "repeatable, or comma-separated.",
        ),
    ] = None,
    baseline: Annotated[
        str | None, typer.Option("--baseline", "-b", help="The run the others are compared with. Default: the first.")
    ] = None,
    test: Annotated[
        str,
        typer.Option(
            "--test",
            "-t",
            help="t (paired t-test, the default, as ranx and PyTerrier), randomization (sign flips over a "
            "seeded plan) or bootstrap (shifted to mean 0, over a seeded plan).",
        ),
    ] = "t",
    correction: Annotated[
        str,
        typer.Option(
            "--correction", help="holm (default), bonferroni or none, over the runs x measures of the comparison."
        ),
    ] = "holm",
    alpha: Annotated[float, typer.Option("--alpha", help="Significance level; intervals are at 1 - alpha.")] = 0.05,
    replicates: Annotated[
        int, typer.Option("--replicates", help="Replicates of the bootstrap (interval) and sign-flip plans.")
    ] = 10000,
    seed: Annotated[
        int, typer.Option("--seed", help="Seed of the bootstrap plan (the sign-flip plan's is seed + 1).")
    ] = DEFAULT_SEED,
    output_format: Annotated[str, typer.Option("--format", help=" | ".join(FORMATS))] = "text",
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Report loads and model runs.")] = False,
    db: Annotated[str, typer.Option("--db", help="Warehouse file; default: a throw-away in-memory one.")] = ":memory:",
    engine: EngineOption = "duckdb",
    master: MasterOption = None,
    spark_workdir: SparkWorkdirOption = None,
    project_dir: ProjectOption = None,
) -> None:
    """Compare runs with a baseline: per measure the mean, the paired difference with its interval, the
    p-value (adjusted for multiple testing) and a mark where it is below alpha.

    Example: rankhouse compare qrels.test bm25.run dense.run -m AP -m nDCG@10 --test randomization

    Example: rankhouse compare qrels.test base=a/run.txt new=b/run.txt -m P@10 --baseline base

    Example: rankhouse compare qrels.test bm25.run dense.run --engine spark --master spark://host:7077
    """
    from rankhouse.comparison import CompareOptions, compare
    from rankhouse.warehouse import Warehouse

    if output_format not in FORMATS:
        raise RankhouseError(f"--format is one of {', '.join(FORMATS)}, not {output_format!r}")
    options = CompareOptions(baseline, test, correction, alpha, replicates, seed)
    builder = open_engine(engine, master, spark_workdir)  # refused here, before the warehouse is opened
    with engine_started(builder, say if verbose else silent), Warehouse(db) as wh:
        result = compare(
            wh, qrels, list(runs), measure, options,
            on_load=(lambda r: say(str(r))) if verbose else None,
            progress=TextProgress() if verbose else None,
            engine=builder,
        )  # fmt: skip
    print(result.render(output_format))
