"""`rankhouse lanes export`: an ordering of the lanes study (seed 002) as a run file for submission, validated
(the shared rankhouse/runfiles.py) as it is written."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from rankhouse.cli.common import DEFAULT, DbOption, say
from rankhouse.errors import RankhouseError
from rankhouse.studies.lanes.runs import METHODS
from rankhouse.warehouse.layout import DEFAULT_NAMESPACE

if TYPE_CHECKING:
    from rankhouse.warehouse import Warehouse

lanes_app = typer.Typer(help="The lanes study (seed 002): its orderings as run files.", no_args_is_help=True)


@lanes_app.command("export")
def export_command(
    ordering: Annotated[str, typer.Argument(help=f"The ordering to write: {', '.join(METHODS)}.")],
    out: Annotated[Path, typer.Argument(help="The TREC file to write.")],
    corpus: Annotated[str, typer.Option("--corpus", help="The corpus whose lanes study made the ordering.")],
    db: DbOption = DEFAULT,
    tag: Annotated[str | None, typer.Option(help="Run tag (default rankhouse-lanes-ORDERING).")] = None,
    doc_pattern: Annotated[
        str | None, typer.Option(help="A regular expression (RE2 syntax) every whole document id must match.")
    ] = None,
) -> None:
    """Write an ordering of the lanes study (six fields, ranks 1..k_t per topic, score k_t + 1 - rank) and
    validate it.  Example: rankhouse lanes export combo combo.run --corpus banking77_lanes"""
    from rankhouse.runfiles import validate_runs
    from rankhouse.studies.lanes.runs import write_ordering
    from rankhouse.warehouse import Warehouse

    with Warehouse(db, read_only=True) as wh:
        _use_study_with(wh, "lane_orderings", "corpus", corpus)
        lines = write_ordering(wh, corpus, ordering, out, tag or f"rankhouse-lanes-{ordering}")
    problems = validate_runs([out], doc_pattern)
    for problem in problems:
        say(str(problem))
    if problems:
        raise RankhouseError(f"wrote {lines:,} lines to {out}, but {len(problems)} rules are broken (above)")
    say(f"wrote {lines:,} lines to {out}; it validates")


def _use_study_with(wh: Warehouse, model: str, column: str, value: str) -> None:
    """Make the namespace in use the study whose `models.<model>` holds rows with `column` = `value` (the
    lanes study of a corpus), or say none does."""
    for study in [DEFAULT_NAMESPACE, *wh.studies()]:
        wh.use(study)
        if wh.table_exists(f"models.{model}") and wh.sql(
            f"SELECT 1 FROM models.{model} WHERE {column} = ? LIMIT 1", [value]
        ):
            return
    raise RankhouseError(f"no namespace of warehouse {wh.path} has built models.{model} for {column} {value!r}")
