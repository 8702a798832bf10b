"""`rankhouse load`, `rankhouse runs` and `rankhouse sources`: inputs into the warehouse and back out."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from rankhouse.cli.common import DEFAULT, DbOption, JsonOption, QuietOption, progress_sink, say, table
from rankhouse.errors import RankhouseError

if TYPE_CHECKING:
    from rankhouse.loaders.sources import LoadResult
    from rankhouse.progress import Progress

load_app = typer.Typer(help="Load input files into the warehouse (one transaction per file).", no_args_is_help=True)
runs_app = typer.Typer(help="List and export the TREC runs in the warehouse.", no_args_is_help=True)


@load_app.command("run")
def load_run_command(
    files: Annotated[
        list[str],
        typer.Argument(
            metavar="RUN...",
            help="TREC run files (qid Q0 docno rank score tag), each PATH or NAME=PATH as in `rankhouse eval` "
            "(.gz too; - for standard input). Default name: the file name without .gz.",
        ),
    ],
    run_id: Annotated[str | None, typer.Option(help="Name to load under (one file only; default: file name).")] = None,
    db: DbOption = DEFAULT,
    quiet: QuietOption = False,
    json_lines: JsonOption = False,
) -> None:
    """Load TREC runs into raw.runs.  Example: rankhouse load run bm25=a/run.txt dense=b/run.txt

    Two files that would load under one name are refused before anything is loaded; a load that
    replaces a run loaded before from other bytes says which (its path and SHA-256).
    """
    from rankhouse.loaders import load_run
    from rankhouse.loaders.sources import check_readable, shown_path
    from rankhouse.loaders.trec import RunInput, run_inputs
    from rankhouse.warehouse import Warehouse

    sink = progress_sink(quiet, json_lines)
    if run_id and len(files) > 1:
        raise RankhouseError("--run-id names a single file; name several with NAME=PATH")
    inputs = run_inputs(files)
    if run_id:
        if inputs[0].path != files[0]:
            raise RankhouseError(f"{files[0]!r} names the run already: give --run-id or NAME=PATH, not both")
        inputs = [RunInput(run_id, inputs[0].path)]
    for run in inputs:
        check_readable(run.path)
    with Warehouse(db) as wh:
        for run in inputs:
            with sink.loading(shown_path(run.path)):
                result = load_run(wh, run.path, run.name)
            sink.loaded(result)


@load_app.command("qrels")
def load_qrels_command(
    file: Annotated[Path, typer.Argument(help="TREC qrels: qid iter docno rel (.gz too; - for standard input).")],
    db: DbOption = DEFAULT,
    quiet: QuietOption = False,
    json_lines: JsonOption = False,
) -> None:
    """Load TREC qrels into the labels file of the default namespace (never a file of models or inputs);
    a study loads its own labels at `rankhouse study evaluate`.  Example: rankhouse load qrels qrels.txt"""
    from rankhouse.loaders import load_qrels

    _load_one(progress_sink(quiet, json_lines), db, load_qrels, file)


def _load_one(sink: Progress, db: str, load: Callable[..., LoadResult], file: Path, *args: str) -> None:
    """One file loaded by `load`, reported to `sink`."""
    from rankhouse.warehouse import Warehouse

    with Warehouse(db, say=sink.say) as wh:
        with sink.loading(str(file)):
            result = load(wh, file, *args)
        sink.loaded(result)


def _csv_loader(loader: str, what: str):  # noqa: ANN202 - a typer command
    def command(
        file: Annotated[Path, typer.Argument(help="CSV with a header text,category (RFC 4180 quoting).")],
        corpus: Annotated[str, typer.Option("--corpus", help="The corpus to load under.")],
        db: DbOption = DEFAULT,
        quiet: QuietOption = False,
        json_lines: JsonOption = False,
    ) -> None:
        from rankhouse.loaders import LOADERS

        _load_one(progress_sink(quiet, json_lines), db, LOADERS[loader].load, file, corpus)

    command.__doc__ = (
        f"Load {what}.  Example: rankhouse load {loader.split('.')[1].replace('_', '-')} train.csv --corpus b77"
    )
    return command


for _loader, _what in (
    ("csv.documents", "the texts of a labelled CSV as documents (ids: row index)"),
    ("csv.queries", "the texts of a labelled CSV as queries (ids: row index)"),
    ("csv.document_classes", "the categories of a labelled CSV as document classes, into the labels file"),
    ("csv.query_classes", "the categories of a labelled CSV as query classes, into the labels file"),
):
    load_app.command(_loader.split(".")[1].replace("_", "-"))(_csv_loader(_loader, _what))


def _labels_loader(loader: str, layout: str, what: str):  # noqa: ANN202 - a typer command
    def command(file: Path, db: DbOption = DEFAULT, quiet: QuietOption = False, json_lines: JsonOption = False) -> None:
        from rankhouse.loaders import LOADERS

        _load_one(progress_sink(quiet, json_lines), db, LOADERS[loader].load, file)

    # the file's help names its layout: an annotation object (annotations are strings in this module)
    command.__annotations__["file"] = Annotated[Path, typer.Argument(help=f"{layout} (.gz too; - for standard input).")]
    name = loader.split(".")[1].replace("_", "-")
    command.__doc__ = (
        f"Load {what} into the labels file of the default namespace, where the models of docs/measures.md read "
        f"them (`rankhouse eval` loads its own).  Example: rankhouse load {name} FILE"
    )
    return command


for _loader, _layout, _what in (
    ("trec.prefs", "Preference judgments: qid jg jsg docno rel_level", "preference judgments (trec_eval -R prefs)"),
    ("trec.qrels_prefs", "Qrels read as preferences: qid jg docno rel_level",
     "qrels as preference judgments (trec_eval -R qrels_prefs)"),
    ("trec.qrels_jg", "Qrels with judgment groups: qid jg docno rel",
     "qrels with judgment groups (trec_eval -R qrels_jg)"),
    ("trec.zscores", "A z-score file: qid measure mean stddev", "a z-score file (trec_eval -Z)"),
):  # fmt: skip
    load_app.command(_loader.split(".")[1].replace("_", "-"))(_labels_loader(_loader, _layout, _what))


@runs_app.command("list")
def runs_list_command(db: DbOption = DEFAULT) -> None:
    """The runs in the warehouse's inputs, with their sizes.  Example: rankhouse runs list"""
    from rankhouse.warehouse import Warehouse

    with Warehouse(db, read_only=db != ":memory:") as wh:
        rows = wh.sql(
            "SELECT run_id, count(DISTINCT qid), count(*), any_value(tag) FROM raw.runs GROUP BY run_id ORDER BY run_id"
        )
    print(table(["run_id", "queries", "rows", "tag"], [list(r) for r in rows]))


@runs_app.command("export")
def runs_export_command(
    run_id: Annotated[str, typer.Argument(help="The run to write.")],
    out: Annotated[Path, typer.Argument(help="The TREC file to write.")],
    db: DbOption = DEFAULT,
) -> None:
    """Write a loaded run back out as a TREC file.  Example: rankhouse runs export bm25.run out/bm25.run

    A study's own orderings are written by its commands (the lanes study's: rankhouse lanes export).
    """
    from rankhouse.loaders import write_run
    from rankhouse.warehouse import Warehouse

    with Warehouse(db, read_only=db != ":memory:") as wh:
        say(f"wrote {write_run(wh, run_id, out):,} lines to {out}")


@runs_app.command("validate")
def runs_validate_command(
    files: Annotated[list[Path], typer.Argument(help="TREC run files, the variants of one submission.")],
    doc_pattern: Annotated[
        str | None,
        typer.Option(
            help="A regular expression every whole document id must match, e.g. 'shard_\\S+'; RE2 syntax (DuckDB's "
            "regexp_full_match): no lookaround or backreferences, and \\d, \\w, \\s match ASCII only."
        ),
    ] = None,
) -> None:
    """Check run files for submission (seed 002): six fields, ranks restarting at 1 per topic, non-increasing
    scores, no topic-document pair twice, allowed document ids, the same topics and rows in every file.
    Every rule is SQL over each file's lines, read once. Exit status 2 if a rule is broken.
    Example: rankhouse runs validate runs/*.run --doc-pattern '[0-9]+'
    """
    from rankhouse.runfiles import summary, validate_runs

    problems = validate_runs(files, doc_pattern)
    for problem in problems:
        print(problem)
    if problems:
        raise RankhouseError(f"{len(problems)} problem{'s' if len(problems) > 1 else ''} in {len(files)} file(s)")
    for name, counts in summary(files).items():
        say(f"{name}: {counts['topics']} topics, {counts['rows']:,} rows")
    say(f"{len(files)} file(s) validate")


def sources_command(db: DbOption = DEFAULT) -> None:
    """Every loaded file: table, name, rows, SHA-256, loader, time; the labels loaded outside any study too
    (a study's stay behind its gate).  Example: rankhouse sources"""
    from rankhouse.warehouse import Warehouse

    with Warehouse(db, read_only=db != ":memory:") as wh:
        query = "SELECT table_name, name, rows, sha256, loader, loaded_at, path FROM {} ORDER BY table_name, name"
        rows = wh.sql(query.format("inputs.meta.sources"))
        if Path(wh.labels_path).exists():
            wh.open_gate()
            rows += [("labels." + r[0], *r[1:]) for r in wh.sql(query.format("gate.meta.sources"))]
        if wh.studies():
            say(
                "the labels of study " + ", ".join(wh.studies()) + " stay behind their gates (`rankhouse study status`)"
            )
    print(table(["table", "name", "rows", "sha256", "loader", "loaded_at", "path"], [list(r) for r in rows]))
