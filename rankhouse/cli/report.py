"""`rankhouse report DIR`: a study's HTML and Markdown report, drawn from its output directory alone."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rankhouse.cli.common import choose, say


def report_command(
    directory: Annotated[
        Path, typer.Argument(metavar="DIR", help="A study's output directory (its --out), holding results.json.")
    ],
    output_format: Annotated[
        str,
        typer.Option(
            "--format",
            help="html (DIR/report.html), md (DIR/report.md and DIR/figures/*.svg) or both.",
        ),
    ] = "both",
) -> None:
    """Draw a study's report from its output directory: results with intervals, paired contrasts, per-query
    differences and the study's own figures, its freeze chain and provenance. It opens no warehouse.

    Example: rankhouse report out/banking77 --format html
    """
    from rankhouse.report import FORMATS, build

    choose(output_format, FORMATS, "--format")
    for path in build(directory, output_format):
        say(f"wrote {path}")
