"""`rankhouse eval` (trec_eval on the warehouse) and `rankhouse demo`."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from rankhouse.cli.common import (
    RUN_HELP,
    JsonOption,
    ProjectOption,
    QuietOption,
    choose,
    progress_sink,
    say,
    silent,
    whole_number,
)
from rankhouse.cli.engines import EngineOption, MasterOption, SparkWorkdirOption, engine_started, open_engine
from rankhouse.errors import RankhouseError, did_you_mean
from rankhouse.formats import EVAL_FORMATS as FORMATS
from rankhouse.formats import MAX_PLACES
from rankhouse.paths import PACKAGE, ROOT, STUDIES_DIR, in_checkout
from rankhouse.progress import TextProgress
from rankhouse.warehouse import DEFAULT_DB
from rankhouse.warehouse.memory import MEMORY_LIMIT_VARIABLE, memory_limit

if TYPE_CHECKING:
    from rankhouse.loaders import LoadResult

# DuckDB's memory for the demo unless $RANKHOUSE_MEMORY_LIMIT says otherwise: BANKING77's evaluation
# (two full rankings of 30.8M pairs) then spills instead of growing, and the whole demo, encoder
# included, stays under 2 GB (issue 18; as measured: docs/performance.md).
DEMO_MEMORY_LIMIT = "1500MB"


def eval_command(
    qrels: Annotated[
        Path,
        typer.Argument(help="TREC qrels file, or with -R another relevance format (.gz too; - for standard input)."),
    ],
    runs: Annotated[
        list[str],
        typer.Argument(
            metavar="RUN...",
            help="TREC run files, each PATH or NAME=PATH (.gz too; - for standard input, one input at most). "
            + RUN_HELP,
        ),
    ],
    measure: Annotated[
        list[str] | None,
        typer.Option(
            "--measure",
            "-m",
            help="Measure, ir_measures (nDCG@10, RBP(p=0.8)) or trec_eval (ndcg_cut.10, rbp.p=0.8, "
            "utility.2,-1,0,0) name, or a trec_eval group (official, all_trec, set; all_prefs, prefs; qrels_jg); "
            "repeatable, or comma-separated. Default: trec_eval's default set (official; with -R prefs or "
            "qrels_prefs, prefs; with -R qrels_jg, qrels_jg).",
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
    level: Annotated[
        int,
        typer.Option(
            "--level", "-l", parser=whole_number(), metavar="N", help="Lowest grade counted relevant (trec_eval -l)."
        ),
    ] = 1,
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
    rel_format: Annotated[
        str,
        typer.Option(
            "--rel-format",
            "-R",
            metavar="FORMAT",
            help="The relevance file's format (trec_eval -R): qrels (qid iter docno rel), qrels_jg (qid jg docno "
            "rel: a set of qrels per judgment group, for map_avgjg, P_avgjg, Rprec_mult_avgjg), prefs (qid jg jsg "
            "docno rel_level: preference judgments, for the prefs_* measures) or qrels_prefs (qrels read as "
            "preferences, the second field the judgment group).",
        ),
    ] = "qrels",
    zscores: Annotated[
        Path | None,
        typer.Option(
            "--zscores",
            "-Z",
            metavar="FILE",
            help="Turn each query's values into z-scores, (value - mean) / stddev, with the means and deviations "
            "of a file of lines `qid measure mean stddev` (trec_eval -Z), before they are averaged; names print "
            "after a Z.",
        ),
    ] = None,
    float_scores: Annotated[
        bool,
        typer.Option(
            "--float-scores",
            help="Compare scores as 32-bit floats, as trec_eval 9 and pytrec_eval do (scores equal in float32 "
            "tie, the larger docno first). Default: as doubles, as trec_eval 10.0 does.",
        ),
    ] = False,
    output_format: Annotated[
        str, typer.Option("--format", help=f"Output format: {', '.join(FORMATS)} (defined above).")
    ] = "text",
    places: Annotated[
        str | None,
        typer.Option(
            "--places",
            metavar="N",
            help=f"Digits after the point, 0 to {MAX_PLACES}. Default: 4 (trec_eval's) in text, markdown and "
            "latex; every digit in json, jsonl and csv.",
        ),
    ] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Report loads and model runs.")] = False,
    db: Annotated[str, typer.Option("--db", help="Warehouse file; default: a throw-away in-memory one.")] = ":memory:",
    engine: EngineOption = "duckdb",
    master: MasterOption = None,
    spark_workdir: SparkWorkdirOption = None,
    project_dir: ProjectOption = None,
) -> None:
    """Evaluate runs against qrels, like trec_eval, with the warehouse's SQL measure models (computed on
    --engine: duckdb, or spark, which gives the same numbers).

    Every format has the columns run, measure, query, value (query: a query id,
    or all for the run's summary). Rows go run by run; with -q, each query's
    rows (ids sorted as text) come before the run's all rows.

    text: trec_eval's lines, measure (padded to 22), query and value separated
    by tabs; with more than one run, each line starts with the run and a tab.

    json: one object, run -> {"all": {measure: value},
    "per_query": {query: {measure: value}}} (per_query with -q only).

    jsonl: one object per line, {"run", "measure", "query", "value"}.

    csv: the header run,measure,query,value, then one line per row.

    markdown, latex: a runs x measures table of the all rows (latex: a booktabs
    tabular); they have no per-query rows, so -q is refused.

    Counts (num_ret, num_rel, num_rel_ret, num_q) are whole numbers in every
    format. The SHA-256 recorded for a .gz file is of its compressed bytes, as
    sha256sum prints it.

    Example: rankhouse eval qrels.test bm25=a/run.txt dense=b/run.txt -m map -m P.5,10 -q

    Example: rankhouse eval qrels.test bm25.run dense.run.gz --format markdown

    Example: rankhouse eval qrels.test bm25.run --engine spark --master spark://host:7077

    Example: rankhouse eval -R prefs prefs.test prefs.results.test -m all_prefs -q
    """
    from rankhouse.evaluation import EvalOptions, check_output, evaluate
    from rankhouse.warehouse import Warehouse

    choose(output_format, FORMATS, "--format")
    digits = places_option(places)
    check_output(output_format, per_query, digits)  # before anything is loaded
    options = EvalOptions(
        relevance_level=level, complete=complete, depth=depth_option(depth), judged_only=judged_only,
        score_precision="float" if float_scores else "double", rel_format=rel_format, zscores=zscores,
    )  # fmt: skip

    def on_load(result: LoadResult) -> None:
        if verbose or result.status == "replaced":  # a replaced run is reported even without -v
            say(str(result))

    builder = open_engine(engine, master, spark_workdir)  # refused here, before the warehouse is opened
    with engine_started(builder, say if verbose else silent), Warehouse(db) as wh:
        result = evaluate(
            wh, qrels, list(runs), measure, options,
            on_load=on_load,
            progress=TextProgress() if verbose else None,
            engine=builder,
            per_query=per_query,
        )  # fmt: skip
    sys.stdout.write(result.render(output_format, per_query, digits))


def places_option(text: str | None) -> int | None:
    """The N of `--places N` (None without it), refused unless N is ASCII digits from 0 to MAX_PLACES."""
    if text is None:
        return None
    if not re.fullmatch(r"[0-9]+", text) or int(text) > MAX_PLACES:
        raise RankhouseError(f"--places must be a whole number from 0 to {MAX_PLACES}, not {text!r}")
    return int(text)


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
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", help="Where the study writes its outputs (default: the warehouse's <db>.d/out/<study>/)."
        ),
    ] = None,
    study: Annotated[str, typer.Option(help="The study to run: banking77 or trec_sample.")] = "banking77",
    quiet: QuietOption = False,
    json_lines: JsonOption = False,
    engine: EngineOption = "duckdb",
    master: MasterOption = None,
    spark_workdir: SparkWorkdirOption = None,
    project_dir: ProjectOption = None,
) -> None:
    """The main job on the default warehouse: the BANKING77 study, end to end (its portable models on
    --engine: duckdb, or spark), in DEMO_MEMORY_LIMIT of DuckDB memory unless $RANKHOUSE_MEMORY_LIMIT is set.
    Example: rankhouse demo; rankhouse demo --study trec_sample --engine spark"""
    from rankhouse.cli.study import _evaluate, _output_dir, _study
    from rankhouse.study import Protocol
    from rankhouse.warehouse import Warehouse

    sink = progress_sink(quiet, json_lines)
    if not in_checkout():
        raise RankhouseError(
            f"rankhouse demo needs the source checkout: it runs studies/{study}.toml on the checkout's data/, "
            f"and this rankhouse is installed without one ({PACKAGE}). Run `make demo` in a clone of the "
            "repository, or `rankhouse study run PROTOCOL` on a protocol of your own"
        )
    protocol = STUDIES_DIR / f"{study}.toml"
    if not protocol.exists():
        known = sorted(p.stem for p in STUDIES_DIR.glob("*.toml"))
        raise RankhouseError(f"no study {study!r} in {protocol.parent}{did_you_mean(study, known)}")
    loaded = Protocol.load(protocol)
    out = _output_dir(loaded, out, db)
    builder = open_engine(engine, master, spark_workdir)  # refused here, before the warehouse is opened
    sink.say(f"rankhouse demo: {protocol.relative_to(ROOT)} on {db} (prepare, freeze, evaluate; outputs in {out})")
    sink.say(f"DuckDB memory limit {memory_limit(DEMO_MEMORY_LIMIT)} ({MEMORY_LIMIT_VARIABLE} to change it)")
    with (
        engine_started(builder, sink.say),
        Warehouse(db, default_memory_limit=DEMO_MEMORY_LIMIT, namespace=loaded.name, say=sink.say) as wh,
    ):
        studied = _study(loaded, wh, None, sink, engine=builder)
        studied.prepare()
        studied.freeze()
        _evaluate(studied, out)
    sink.say(f"\nnext: rankhouse study status {protocol.relative_to(ROOT)}")
    sink.say(f"      rankhouse query \"FROM {loaded.name}.results.run_measures WHERE subset = 'all'\"")
