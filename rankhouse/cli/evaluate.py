"""`rankhouse eval` (trec_eval on the warehouse) and `rankhouse demo`."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated

import typer

from rankhouse.cli.common import LabelsOption, report_model, say
from rankhouse.errors import RankhouseError
from rankhouse.evaluation import EvalOptions, evaluate
from rankhouse.paths import PACKAGE, ROOT, STUDIES_DIR, in_checkout
from rankhouse.warehouse import DEFAULT_DB, Warehouse


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
    depth: Annotated[
        str | None,
        typer.Option(
            "--depth",
            "-M",
            metavar="N",
            help="Evaluate the first N documents of each query only, N >= 1 (trec_eval -M). Default: all.",
        ),
    ] = None,
    judged_only: Annotated[
        bool, typer.Option("--judged-only", "-J", help="Drop unjudged documents first (trec_eval -J).")
    ] = False,
    float_scores: Annotated[
        bool,
        typer.Option(
            "--float-scores",
            help="Compare scores as 32-bit floats, as trec_eval 9 and pytrec_eval do (scores equal in float32 "
            "tie, the larger docno first). Default: as doubles, as trec_eval 10.0 does.",
        ),
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
    options = EvalOptions(
        relevance_level=level, complete=complete, depth=depth_option(depth), judged_only=judged_only,
        score_precision="float" if float_scores else "double",
    )  # fmt: skip
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


def depth_option(text: str | None) -> int:
    """The depth of `-M N` (0 without -M: every document), refused unless N is ASCII digits and at least 1.

    trec_eval evaluates the documents ranked 1 .. N, so its -M 0 (or a negative N) evaluates none and
    scores every query 0; rather than that, or than reading 0 as "all" where trec_eval would not, it is
    refused. So are `1_0` and non-ASCII digits, which Python's int() would read.
    """
    if text is None:
        return 0
    if not re.fullmatch(r"[0-9]+", text) or int(text) < 1:
        raise RankhouseError(
            f"-M/--depth must be a whole number of at least 1, not {text!r} (trec_eval's -M 0 evaluates no "
            "document; leave -M out to evaluate every retrieved document)"
        )
    return int(text)


def demo_command(
    db: Annotated[str, typer.Option("--db", help="Warehouse file.")] = DEFAULT_DB,
    out: Annotated[Path, typer.Option("--out", help="Where the study writes its outputs.")] = Path("out/banking77"),
    study: Annotated[str, typer.Option(help="The study to run: banking77 or trec_sample.")] = "banking77",
) -> None:
    """The main job on the default warehouse: the BANKING77 study, end to end.  Example: rankhouse demo"""
    from rankhouse.cli.study import _evaluate, _study

    if not in_checkout():
        raise RankhouseError(
            f"rankhouse demo needs the source checkout: it runs studies/{study}.toml on the checkout's data/, "
            f"and this rankhouse is installed without one ({PACKAGE}). Run `make demo` in a clone of the "
            "repository, or `rankhouse study run PROTOCOL` on a protocol of your own"
        )
    protocol = STUDIES_DIR / f"{study}.toml"
    if not protocol.exists():
        raise RankhouseError(f"no study {study!r} in {protocol.parent}")
    say(f"rankhouse demo: {protocol.relative_to(ROOT)} on {db} (prepare, freeze, evaluate)")
    with Warehouse(db) as wh:
        studied = _study(protocol, wh, None)
        studied.prepare()
        studied.freeze()
        _evaluate(studied, out)
    say(f"\nnext: rankhouse study status {protocol.relative_to(ROOT)}")
    say("      rankhouse query \"FROM results.retrieval_metrics WHERE subset = 'all'\"")
