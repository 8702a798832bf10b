"""Options and printing helpers shared by the commands."""

from __future__ import annotations

import json
import re
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from rankhouse.errors import RankhouseError, did_you_mean
from rankhouse.progress import JsonProgress, Progress, TextProgress
from rankhouse.warehouse import DEFAULT_DB

DbOption = Annotated[str, typer.Option("--db", help="Warehouse file (`:memory:` for a throw-away one).")]
RUN_HELP = (
    "A run is named NAME, or else its file name without .gz (stdin for -); two runs with one name are "
    "refused. NAME=PATH applies when NAME is a plain name (letters, digits, _ . + @ : -) and the whole "
    "argument is not an existing file: write ./a=b.run for a file a=b.run that is not there yet."
)
LabelsOption = Annotated[
    str | None, typer.Option("--labels", help="Labels file (default: <db>.labels.duckdb beside the warehouse).")
]
DEFAULT = DEFAULT_DB
WHOLE = re.compile(r"[-+]?[0-9]+")  # ASCII digits only: int() would also read `1_0` and `١`


def _use_project(value: Path | None) -> Path | None:
    """--project's callback: make the project it names (or the current folder's, or none) the one the
    command reads models from, before the command runs (rankhouse/project.py)."""
    from rankhouse.project import find_project, use_project

    try:
        found = find_project(value)
    except RankhouseError as exc:
        if value is None:  # the current folder's project file: not an option's value
            raise
        raise typer.BadParameter(str(exc).removeprefix(f"--project {value}: ")) from None
    use_project(found)  # its modules imported: a module's failure is its own error, not the option's
    return value


ProjectOption = Annotated[
    Path | None,
    typer.Option(
        "--project",
        callback=_use_project,
        help="An analyst's project (a folder `rankhouse init` made), whose models are read beside rankhouse's "
        "own (default: the current folder, when it holds rankhouse_project.toml).",
    ),
]


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


def silent(message: str) -> None:
    """No note: what a command passes for `say` unless -v asks for its notes."""


QuietOption = Annotated[
    bool, typer.Option("--quiet", help="Print only errors and the results: no progress or notes on stderr.")
]
JsonOption = Annotated[
    bool,
    typer.Option(
        "--json",
        help="Progress as JSON on stderr, one object per line: event (note, model_started, model_running, model, "
        "models_skipped, loading, load, progress) and its fields (model, status, rows, seconds, ...).",
    ),
]


def progress_sink(quiet: bool = False, json_lines: bool = False) -> Progress:
    """The progress sink of a command's --quiet and --json (rankhouse/progress.py): silent, JSON lines, or
    text for a person (live lines on a terminal). Refused before anything runs if both are given.

    Example: Study(protocol, wh, progress=progress_sink(quiet, json_lines)).prepare()
    """
    if quiet and json_lines:
        raise typer.BadParameter("--quiet and --json exclude each other (--quiet prints no progress at all)")
    if quiet:
        return Progress()
    return JsonProgress() if json_lines else TextProgress()


def table(headers: list[str], rows: list[list[object]]) -> str:
    """Rows as left-aligned text columns."""
    cells = [[str(h) for h in headers]] + [["" if v is None else str(v) for v in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def parse_params(items: list[str] | None) -> dict:
    """`--param key=value` pairs, each value read as the type the models declaring `key` give it (their
    defaults) and checked before anything is opened or built:

    - a whole number in ASCII digits (`depth=10`; not `1_0` or `0x10`), a finite number (`k1=0.9`,
      `alpha=1e-3`), `true` or `false`;
    - a string as written (`corpus=banking77`) or as a TOML string (`corpus="banking77"`);
    - a list or table in TOML (`rankings=["run_ranking"]`); a list of strings also as comma-separated
      text (`fusion_rules=rrf,rsf`), a bare word being a list of one;
    - a list of measure names (a parameter the models pass to the measure registry: `measures`) as
      `-m` reads its text (`measures=AP` is AP, `measures=AP,P.5,10` is AP, P_5 and P_10), or as a TOML
      list of names; every name checked by the registry, an unknown one with its closest match.
    """
    if not items:
        return {}
    from rankhouse.project import model_roots
    from rankhouse.warehouse.catalog import declared_parameters, load_models
    from rankhouse.warehouse.render import measure_list_parameters

    models = load_models(model_roots())
    declared = declared_parameters(models.values())
    measure_lists = {key for model in models.values() for key in measure_list_parameters(model)}
    params: dict = {}
    for item in items:
        key, sep, text = item.partition("=")
        key, text = key.strip(), text.strip()
        if not sep or not key:
            raise RankhouseError(f"--param wants key=value, got {item!r}")
        if key not in declared:
            raise RankhouseError(f"--param {key}: no model declares a parameter {key}{did_you_mean(key, declared)}")
        if key in params:
            raise RankhouseError(f"--param {key} is given twice")
        params[key] = _param_value(key, text, declared[key], key in measure_lists)
    return params


def _param_value(key: str, text: str, defaults: dict[str, object], measure_list: bool) -> object:
    """The value of `--param key=text`, of the type every model declaring `key` gives it."""
    from rankhouse.measures import parse_measures
    from rankhouse.warehouse.catalog import parameter_fits, parameter_kind

    reference = max(defaults.values(), key=lambda d: isinstance(d, list) and bool(d))  # a typed list if any
    try:
        value = _read_param(text, reference, measure_list)
    except ValueError:
        value = None  # no parameter value is None: TOML has no null
    misfits = [d for d in defaults.values() if value is None or not parameter_fits(value, d)]
    if misfits:
        declarers = [model for model, d in defaults.items() if d == misfits[0]]
        names = ", ".join(declarers[:3]) + (f" and {len(declarers) - 3} more" if len(declarers) > 3 else "")
        shown = json.dumps(misfits[0])
        shown = shown if len(shown) <= 60 else shown[:56] + " ..."
        raise RankhouseError(
            f"--param {key}: {text!r} is not {parameter_kind(misfits[0])}, the type {names} "
            f"declare{'s' if len(declarers) == 1 else ''} (default {shown})"
        )
    if measure_list:
        if not value:
            raise RankhouseError(f"--param {key}: names no measure (leave it out for the models' default)")
        try:
            parse_measures(value)
        except RankhouseError as exc:
            raise RankhouseError(f"--param {key}: {exc}") from None
    return value


FINITE = re.compile(r"[-+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+)?")


def _read_param(text: str, default: object, measure_list: bool = False) -> object:
    """`text` read as the type of `default`; ValueError if it is not one."""
    if isinstance(default, bool):
        if text in ("true", "false"):
            return text == "true"
    elif isinstance(default, int):
        if WHOLE.fullmatch(text):
            return int(text)
    elif isinstance(default, float):
        if FINITE.fullmatch(text):
            return int(text) if WHOLE.fullmatch(text) else float(text)
    elif isinstance(default, str):
        return _toml(text) if text[:1] in ("'", '"') else text
    elif isinstance(default, list):
        if text.startswith("["):
            return _toml(text)
        if measure_list:
            return [text]  # the measure registry reads the commas, as it does in -m's text
        element = default[0] if default else ""
        return [_read_param(part.strip(), element) for part in text.split(",") if part.strip()]
    elif isinstance(default, dict) and text.startswith("{"):
        return _toml(text)
    raise ValueError(text)


def _toml(text: str) -> object:
    if "\n" in text or "\r" in text:
        raise ValueError(text)
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        raise ValueError(text) from None


NoSmokeOption = Annotated[
    str | None,
    typer.Option("--no-smoke", metavar="REASON", help="Start the full http extraction without a smoke batch, "
                 "saying why (recorded; the default refuses until a --smoke batch has completed)."),
]  # fmt: skip
