"""Options and printing helpers shared by the commands."""

from __future__ import annotations

import sys
import tomllib
from collections.abc import Callable
from typing import Annotated

import typer

from rankhouse.errors import RankhouseError
from rankhouse.warehouse import DEFAULT_DB
from rankhouse.warehouse.runner import ModelRun

DbOption = Annotated[str, typer.Option("--db", help="Warehouse file (`:memory:` for a throw-away one).")]
LabelsOption = Annotated[
    str | None, typer.Option("--labels", help="Labels file (default: <db>.labels.duckdb beside the warehouse).")
]
DEFAULT = DEFAULT_DB


def say(message: str) -> None:
    """Progress and notes go to stderr, so stdout stays machine-readable."""
    print(message, file=sys.stderr)


def progress_bar(label: str) -> Callable[[int, int], None]:
    """A progress callback: a bar redrawn in place on a terminal, a line every 10% otherwise."""
    if not sys.stderr.isatty():
        from rankhouse.study import progress_printer

        return progress_printer(label, say)

    def draw(done: int, total: int) -> None:
        filled = int(30 * done / total) if total else 30
        end = "\n" if done >= total else ""
        print(
            f"\r{label} [{'#' * filled}{'.' * (30 - filled)}] {done:,}/{total:,}", end=end, file=sys.stderr, flush=True
        )

    return draw


def report_model(result: ModelRun) -> None:
    """One line per model of a DAG run."""
    rows = "view" if result.rows is None else f"{result.rows:,} rows"
    say(f"  {result.status:<8} {result.model:<28} {rows:>15}  {result.seconds:7.2f} s")


def table(headers: list[str], rows: list[list[object]]) -> str:
    """Rows as left-aligned text columns."""
    cells = [[str(h) for h in headers]] + [["" if v is None else str(v) for v in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def parse_params(items: list[str] | None) -> dict:
    """`key=value` pairs; values are TOML (`10`, `true`, `["AP", "P@10"]`), else plain strings."""
    params = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise RankhouseError(f"--param wants key=value, got {item!r}")
        try:
            params[key.strip()] = tomllib.loads(f"v = {value}")["v"]
        except tomllib.TOMLDecodeError:
            params[key.strip()] = value
    return params
