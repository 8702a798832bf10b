"""`rankhouse eval` (trec_eval on the warehouse) and `rankhouse demo`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from rankhouse.cli.common import LabelsOption, report_model, say
from rankhouse.evaluation import EvalOptions, evaluate
from rankhouse.paths import ROOT
from rankhouse.warehouse import DEFAULT_DB, Warehouse

SAMPLE = ROOT / "tests" / "fixtures" / "trec_eval"


def eval_command(
    qrels: Annotated[Path, typer.Argument(help="TREC qrels file.")],
    runs: Annotated[list[Path], typer.Argument(help="One or more TREC run files.")],
    measure: Annotated[
        list[str] | None,
        typer.Option(
            "--measure",
            "-m",
            help="Measure, ir_measures (nDCG@10) or trec_eval (ndcg_cut.10) name; repeatable, or "
            "comma-separated. Default: trec_eval's default set.",
        ),
    ] = None,
    per_query: Annotated[bool, typer.Option("--per-query", "-q", help="Also print every query.")] = False,
    complete: Annotated[
        bool,
        typer.Option(
            "--complete/--no-complete",
            "-c",
            help="Average over every qrels query, a query missing from a run scoring 0 (trec_eval -c). "
            "On by default; --no-complete averages over the queries the run answered.",
        ),
    ] = True,
    level: Annotated[int, typer.Option("--level", "-l", help="Lowest grade counted relevant (trec_eval -l).")] = 1,
    depth: Annotated[int, typer.Option("--depth", "-M", help="Evaluate the top DEPTH documents only; 0 = all.")] = 0,
    judged_only: Annotated[
        bool, typer.Option("--judged-only", "-J", help="Drop unjudged documents first (trec_eval -J).")
    ] = False,
    output_format: Annotated[str, typer.Option("--format", help="text (trec_eval lines) or json.")] = "text",
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Report loads and model runs.")] = False,
    db: Annotated[str, typer.Option("--db", help="Warehouse file; default: a throw-away in-memory one.")] = ":memory:",
    labels: LabelsOption = None,
) -> None:
    """Evaluate runs against qrels, like trec_eval, with the warehouse's SQL measure models.

    Example: rankhouse eval qrels.test results.test -m map -m P.5,10 -q
    """
    if output_format not in ("text", "json"):
        raise typer.BadParameter("--format is text or json")
    options = EvalOptions(relevance_level=level, complete=complete, depth=depth, judged_only=judged_only)
    with Warehouse(db, labels) as wh:
        result = evaluate(
            wh, qrels, list(runs), measure, options,
            on_load=(lambda r: say(str(r))) if verbose else None,
            progress=report_model if verbose else None,
        )  # fmt: skip
    if output_format == "json":
        print(json.dumps(result.as_dict(per_query), indent=2))
    else:
        print("\n".join(result.lines(per_query)))


def demo_command(db: Annotated[str, typer.Option("--db", help="Warehouse file.")] = DEFAULT_DB) -> None:
    """The main job on the default warehouse: evaluate trec_eval's sample runs.  Example: rankhouse demo"""
    say(f"rankhouse demo: trec_eval's own sample qrels and runs, evaluated in {db}")
    with Warehouse(db) as wh:
        result = evaluate(
            wh,
            SAMPLE / "qrels.test",
            [SAMPLE / "results.test", SAMPLE / "results.trunc"],
            ["map", "gm_map", "Rprec", "bpref", "recip_rank", "ndcg", "ndcg_cut.10", "P.5,10", "recall.100",
             "num_q", "num_ret", "num_rel_ret"],
            on_load=lambda r: say(str(r)),
            progress=report_model,
        )  # fmt: skip
    runs = result.runs
    width = max(len(m.label) for m in result.measures)
    print(f"\n{'measure':<{width}}  " + "  ".join(f"{r:>14}" for r in runs))
    for m in result.measures:
        values = [result.summary[r][m.label] for r in runs]
        cells = [f"{v:>14,.0f}" if m.family.startswith("Num") else f"{v:>14.4f}" for v in values]
        print(f"{m.label:<{width}}  " + "  ".join(cells))
    say(f'\nthe warehouse is {db}: try  rankhouse models list  or  duckdb {db} "FROM models.run_measures"')
