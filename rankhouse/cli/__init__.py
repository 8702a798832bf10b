"""The `rankhouse` command line (typer). Every command takes `--db PATH` (default ./rankhouse.duckdb)."""

from __future__ import annotations

import sys

import typer

from rankhouse.cli import compare, encode, evaluate, fuse, load, models, query, study
from rankhouse.errors import RankhouseError

app = typer.Typer(
    name="rankhouse",
    help="An embedded DuckDB warehouse for reproducible retrieval experiments.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command("eval")(evaluate.eval_command)
app.command("compare")(compare.compare_command)
app.command("demo")(evaluate.demo_command)
app.add_typer(load.load_app, name="load")
app.add_typer(load.runs_app, name="runs")
app.command("sources")(load.sources_command)
app.add_typer(models.models_app, name="models")
app.command("run")(models.run_command)
app.command("encode")(encode.encode_command)
app.command("fuse")(fuse.fuse_command)
app.add_typer(study.study_app, name="study")
app.command("query")(query.query_command)
app.command("shell")(query.shell_command)


def main() -> None:
    """Entry point: run the app; a RankhouseError prints as `error: ...` and exits with status 2."""
    try:
        app(standalone_mode=False)
    except RankhouseError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    except typer.Abort:
        sys.exit(130)
    except Exception as exc:  # click usage errors and the like
        import click

        if isinstance(exc, click.exceptions.ClickException):
            exc.show()
            sys.exit(exc.exit_code)
        if isinstance(exc, click.exceptions.Exit):
            sys.exit(exc.exit_code)
        raise
