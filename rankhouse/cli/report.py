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
    """Draw a study's HTML and Markdown report from its output directory alone (no warehouse is opened).

    The results with their intervals, paired contrasts, per-query differences, the study's own figures,
    its freeze chain and provenance, from DIR's results.json, provenance.json and CSV files.

    Example: rankhouse report out/banking77 --format html
    """
    from rankhouse.report import FORMATS, build

    choose(output_format, FORMATS, "--format")
    for path in build(directory, output_format):
        say(f"wrote {path}")
