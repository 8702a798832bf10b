"""`rankhouse fuse`: fuse TREC run files with the fusion models (p-value, e-value, RRF, min-max)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rankhouse.cli.common import DEFAULT, DbOption, parse_params, say, whole_number
from rankhouse.errors import RankhouseError
from rankhouse.fusion import RULES, fuse_runs, incomplete_candidates, write_fused_run
from rankhouse.progress import TextProgress
from rankhouse.warehouse import Warehouse


def _named_files(items: list[str], option: str) -> dict[str, str]:
    named: dict[str, str] = {}
    for item in items:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise RankhouseError(f"{option} wants NAME=FILE, got {item!r}")
        if name in named:
            raise RankhouseError(f"{option} {name} given twice")
        named[name] = path
    return named


def fuse_command(
    arm: Annotated[list[str], typer.Option("--arm", help="An arm's run file, NAME=FILE; at least two.")],
    null: Annotated[
        list[str], typer.Option("--null", help="An arm's null run (its scores of a random panel), NAME=FILE.")
    ],
    output: Annotated[Path, typer.Option("--output", "-o", help="The fused TREC run to write.")],
    rule: Annotated[str, typer.Option(help=f"Fusion rule: {', '.join(RULES)}, or an arm's name.")] = "mixture",
    depth: Annotated[
        int,
        typer.Option(parser=whole_number(1), metavar="L", help="Candidate depth L: each arm's top L form the union."),
    ] = 100,
    param: Annotated[
        list[str] | None, typer.Option("--param", "-p", help="Model parameter key=value, e.g. rrf_k=60.")
    ] = None,
    db: DbOption = DEFAULT,
) -> None:
    """Fuse run files into one run.  Example: rankhouse fuse --arm bm25=a.run --arm dense=b.run
    --null bm25=a.null --null dense=b.null --rule mixture -o fused.run --db :memory:"""
    arms = _named_files(arm, "--arm")
    nulls = _named_files(null, "--null")
    params = parse_params(param)  # checked before the warehouse is opened
    with Warehouse(db) as wh:
        fuse_runs(wh, arms, nulls, depth, params, progress=TextProgress())
        lines = write_fused_run(wh, rule, output)
        incomplete, candidates = incomplete_candidates(wh)
    say(f"{output}: {lines:,} lines ({rule} over {', '.join(sorted(arms))}, depth {depth})")
    if incomplete:
        say(
            f"{incomplete:,} of {candidates:,} candidates lack a score in some arm's file: mixture, fisher "
            "and stouffer leave them out (missing is not non-matching, seed 003 section 8); rrf and rsf "
            "rank them. Deeper arm files score more of them."
        )
