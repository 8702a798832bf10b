"""`rankhouse features extract|receipts PROTOCOL`: seed 004's named features, extracted into the
resumable store, and the receipts of that extraction (rankhouse/studies/features/extraction/, docs/features.md)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from rankhouse.cli.common import (
    DEFAULT,
    FINITE,
    DbOption,
    JsonOption,
    NoSmokeOption,
    ProjectOption,
    QuietOption,
    choose,
    progress_sink,
    table,
    whole_number,
)
from rankhouse.errors import RankhouseError
from rankhouse.progress import Progress, TextProgress

if TYPE_CHECKING:
    from rankhouse.study import Study
    from rankhouse.warehouse import Warehouse

features_app = typer.Typer(
    help="Named features (seed 004): extraction into the resumable store, and its receipts.", no_args_is_help=True
)
ProtocolArg = Annotated[Path, typer.Argument(help="The study's protocol file, e.g. studies/banking77_features.toml.")]
RECEIPT_FORMATS = ("text", "json")
SPLIT_ORDER = ("train", "test", "requirements", "all")


def number(least: float, strict: bool = False):  # noqa: ANN201 - a typer parser
    """A typer `parser` for a finite decimal number (ASCII digits) of at least (or above) `least`."""

    def parse(text: str | float) -> float:
        if isinstance(text, int | float):
            return text
        bound = f"above {least:g}" if strict else f"at least {least:g}"
        if not FINITE.fullmatch(text) or float(text) < least or (strict and float(text) == least):
            raise ValueError(f"{text!r} is not a number {bound} (ASCII digits)")
        return float(text)

    return parse


def _option(name: str, parser, metavar: str, help_text: str):  # noqa: ANN001, ANN202
    return typer.Option(name, parser=parser, metavar=metavar, help=help_text)


SmokeOption = Annotated[
    int | None,
    _option("--smoke", whole_number(1), "N", "Extract only the first N training rows: a smoke batch to check "
            "response types and cost (never counted complete)."),
]  # fmt: skip
ConcurrencyOption = Annotated[
    int | None, _option("--concurrency", whole_number(1), "N", "Requests in flight at most (default 8).")
]
RateOption = Annotated[
    float | None, _option("--rate", number(0, strict=True), "PER_S", "Request starts per second at most (default 15).")
]
MaxCostOption = Annotated[
    float | None,
    _option("--max-cost", number(0), "USD", "Estimated-cost ceiling over every run of the extractor (default 5)."),
]
RetriesOption = Annotated[
    int | None, _option("--retries", whole_number(0), "N", "Retries of a failed request (default 5).")
]
TimeoutOption = Annotated[
    float | None, _option("--timeout", number(0, strict=True), "SECONDS", "Seconds per request (default 60).")
]


def _study(protocol: Path, wh: Warehouse, sink: Progress | None = None) -> Study:
    from rankhouse.study import Protocol, Study

    return Study(Protocol.load(protocol), wh, progress=sink or TextProgress())


@features_app.command("extract")
def extract_command(
    protocol: ProtocolArg,
    db: DbOption = DEFAULT,
    smoke: SmokeOption = None,
    no_smoke: NoSmokeOption = None,
    concurrency: ConcurrencyOption = None,
    rate: RateOption = None,
    max_cost: MaxCostOption = None,
    retries: RetriesOption = None,
    timeout: TimeoutOption = None,
    quiet: QuietOption = False,
    json_lines: JsonOption = False,
    project_dir: ProjectOption = None,
) -> None:
    """Load the protocol's label-free inputs and run its feature generators (feature_extraction,
    requirement_interpretation), extracting only what the store lacks. With the http provider a full
    extraction starts only after a --smoke batch has completed (or with --no-smoke REASON). Runtime
    settings come from the options, else RANKHOUSE_EXTRACT_CONCURRENCY, _RATE, _MAX_COST, _RETRIES,
    _TIMEOUT; the http provider from RANKHOUSE_LLM_URL, _MODEL, _KEY, _PRICE_INPUT, _PRICE_OUTPUT.

    Example: rankhouse features extract studies/banking77_features.toml --smoke 20
    """
    from rankhouse.endpoint import Settings
    from rankhouse.studies.features.extraction.run import KINDS, extract, extraction_slice
    from rankhouse.study import Protocol
    from rankhouse.warehouse import Warehouse

    if smoke is not None and no_smoke is not None:
        raise RankhouseError("--smoke and --no-smoke exclude each other: a smoke batch, or a full run without one")
    sink = progress_sink(quiet, json_lines)
    say = sink.say
    settings = Settings.from_env(concurrency=concurrency, rate=rate, max_cost=max_cost, retries=retries,
                                 timeout=timeout)  # fmt: skip
    with Warehouse(db, namespace=Protocol.load(protocol).name, say=say) as wh:
        study = _study(protocol, wh, sink)
        items = [g for g in study.protocol.generated if g.kind in KINDS]
        if not items:
            raise RankhouseError(f"protocol {protocol} has no [generate.*] of kind {' or '.join(KINDS)}")
        if any(item.options.get("provider") == "http" for item in items):
            from rankhouse.studies.features.extraction.http import Endpoint

            Endpoint.from_env()  # its configuration is checked before anything is loaded
        study.load_inputs()
        encoder = _lazy_encoder()
        for item in items:
            if smoke is not None and item.kind != "feature_extraction":
                say(f"[generate.{item.key}]: not part of a smoke batch (training messages only)")
                continue
            with wh.writing_inputs():
                result = extract(wh, item.kind, item.options, settings, say, encoder, smoke, sink.meter, no_smoke)
            study.record_generated(item.key, extraction_slice(result.job))
            if result.missing and smoke is None:
                raise RankhouseError(f"[generate.{item.key}]: {result.missing}")
            say(f"[generate.{item.key}]: {result.complete:,} of {result.total:,} rows in the store")
        if smoke is not None:
            say(
                "a smoke batch is never a complete extraction (models.feature_coverage refuses the prepare build "
                f"until every row is in the store); its calls and cost: rankhouse features receipts {protocol}"
            )


def _lazy_encoder():  # noqa: ANN202
    made: list = []

    def encoder():  # noqa: ANN202
        if not made:
            from rankhouse.encode import Encoder

            made.append(Encoder())
        return made[0]

    return encoder


def _shown(value: object) -> object:
    if isinstance(value, datetime):
        return value.isoformat(sep=" ", timespec="seconds")
    if isinstance(value, float):
        return f"{value:.4f}" if abs(value) < 1e6 else f"{value:.6g}"
    return value


@features_app.command("receipts")
def receipts_command(
    protocol: ProtocolArg,
    db: DbOption = DEFAULT,
    output_format: Annotated[str, typer.Option("--format", help="text (default) or json.")] = "text",
    project_dir: ProjectOption = None,
) -> None:
    """The extraction's receipts, computed in SQL over raw.extraction_calls (models/features/
    extraction_receipts.sql): model ids, calls by status, tokens, estimated cost and its possibly charged
    part, latency p50/p90/p99, wall time, complete and missing rows per split.

    Example: rankhouse features receipts studies/banking77_features.toml --format json
    """
    choose(output_format, RECEIPT_FORMATS, "--format")
    from rankhouse.study import Protocol
    from rankhouse.warehouse import Warehouse
    from rankhouse.warehouse.dag import Project
    from rankhouse.warehouse.runner import Runner

    loaded = Protocol.load(protocol)
    parameters = {"study": loaded.name, **loaded.parameters}
    project = Project.load(params=parameters, closure=["extraction_receipts"])
    parameters = {k: v for k, v in parameters.items() if any(k in m.parameters for m in project.models.values())}
    # the store is shared by every study that extracts the same corpus: its receipts are read in the
    # default namespace, which sees every row of the inputs, with the study's parameters
    with Warehouse(db) as wh:
        Runner(wh, project, parameters).run(project.select("+extraction_receipts"))
        columns, rows = wh.columns("SELECT * FROM models.extraction_receipts")
    rows.sort(key=lambda r: SPLIT_ORDER.index(r[1]) if r[1] in SPLIT_ORDER else len(SPLIT_ORDER))
    if not rows:
        raise RankhouseError(f"no extraction calls or messages for study {loaded.name} in {db}")
    by_split = {row[1]: dict(zip(columns, row, strict=True)) for row in rows}
    parameters = {k: loaded.parameters.get(k) for k in ("corpus", "schema", "provider")}
    if output_format == "json":
        shown = {s: {k: v.isoformat() if isinstance(v, datetime) else v for k, v in r.items() if k not in ("corpus",
                 "split")} for s, r in by_split.items()}  # fmt: skip
        print(json.dumps({**parameters, "splits": shown}, indent=2))
        return
    splits = list(by_split)
    lines = [[column] + [_shown(by_split[s][column]) for s in splits] for column in columns[2:]]
    print(f"extraction receipts: corpus {parameters['corpus']}, schema {parameters['schema']}, "
          f"provider {parameters['provider']} (costs are estimates in USD)")  # fmt: skip
    print(table(["", *splits], lines))
