"""Options and printing helpers shared by the commands."""

from __future__ import annotations

import re
import sys
import tomllib
from collections.abc import Callable
from typing import Annotated

import typer

from rankhouse.errors import RankhouseError, did_you_mean
from rankhouse.warehouse import DEFAULT_DB
from rankhouse.warehouse.runner import ModelRun

DbOption = Annotated[str, typer.Option("--db", help="Warehouse file (`:memory:` for a throw-away one).")]
LabelsOption = Annotated[
    str | None, typer.Option("--labels", help="Labels file (default: <db>.labels.duckdb beside the warehouse).")
]
DEFAULT = DEFAULT_DB
WHOLE = re.compile(r"[-+]?[0-9]+")  # ASCII digits only: int() would also read `1_0` and `١`


def whole_number(minimum: int | None = None) -> Callable[[str | int], int]:
    """A typer `parser` for a numeric option: ASCII digits, optionally signed, at least `minimum`.
    `1_0`, `0x10`, `1.5` and non-ASCII digits such as `١`, which int() or pydantic would read, are refused."""

    def parse(text: str | int) -> int:
        if isinstance(text, int):  # the option's default
            return text
        least = "" if minimum is None else f" of at least {minimum}"
        if not WHOLE.fullmatch(text) or (minimum is not None and int(text) < minimum):
            raise ValueError(f"{text!r} is not a whole number{least} (ASCII digits)")
        return int(text)

    return parse


def choose(value: str, choices: tuple[str, ...], option: str) -> str:
    """`value` if it is one of `choices`, else a usage error naming them and the closest one."""
    if value not in choices:
        listed = f"{', '.join(choices[:-1])} or {choices[-1]}"
        raise typer.BadParameter(f"{option} is {listed}, not {value!r}{did_you_mean(value, choices)}")
    return value


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
