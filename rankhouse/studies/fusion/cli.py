"""`rankhouse fuse`: fuse TREC run files with the fusion models (p-value, e-value, RRF, min-max)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rankhouse.cli.common import DEFAULT, DbOption, ProjectOption, parse_params, say, whole_number
from rankhouse.errors import RankhouseError
from rankhouse.progress import TextProgress
from rankhouse.studies.fusion.fuse import RULES

DEFAULT_RULE = "mixture"


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


def output_files(output: Path, rankings: tuple[str, ...], inputs: list[str]) -> dict[str, Path]:
    """Where each asked ranking is written: one ranking to the file `output`; several to
    `output/<rule>.run`, a directory (made if missing). Refused before anything is loaded: a file where a
    directory is wanted or the other way round, a missing parent folder, an output that is an input.

    >>> output_files(Path("fused"), ("rrf", "rsf"), ["a.run", "b.run"])
    {'rrf': PosixPath('fused/rrf.run'), 'rsf': PosixPath('fused/rsf.run')}
    """
    if len(rankings) == 1:
        if output.is_dir():
            raise RankhouseError(
                f"-o {output} is a directory; one rule writes one file (several write <rule>.run there)"
            )
        files = {rankings[0]: output}
    else:
        if output.exists() and not output.is_dir():
            raise RankhouseError(
                f"-o {output} is a file; {len(rankings)} rules write <rule>.run files into a directory"
            )
        files = {name: output / f"{name}.run" for name in rankings}
    if not output.resolve().parent.is_dir():
        raise RankhouseError(f"-o {output}: there is no folder {output.resolve().parent}")
    read = {Path(path).resolve() for path in inputs if path != "-"}
    for path in files.values():
        if path.resolve() in read:
            raise RankhouseError(f"{path} is an input; writing the fused run there would overwrite it")
    return files


def fuse_command(
    arm: Annotated[list[str], typer.Option("--arm", help="An arm's run file, NAME=FILE; at least two.")],
    output: Annotated[
        Path,
        typer.Option(
            "--output", "-o", help="The fused TREC run (one --rule), or a directory for <rule>.run (several)."
        ),
    ],
    null: Annotated[
        list[str] | None,
        typer.Option(
            "--null",
            help="An arm's null run (its scores of a random panel), NAME=FILE; for every arm, and only when a "
            "rule reads them (mixture, fisher, stouffer).",
        ),
    ] = None,
    rule: Annotated[
        list[str] | None,
        typer.Option(
            "--rule",
            help=f"A ranking to write: a fusion rule ({', '.join(RULES)}) or an arm's name, which ranks that "
            f"arm alone; repeat for several. Default: {DEFAULT_RULE}.",
        ),
    ] = None,
    depth: Annotated[
        int,
        typer.Option(parser=whole_number(1), metavar="L", help="Candidate depth L: each arm's top L form the union."),
    ] = 100,
    param: Annotated[
        list[str] | None, typer.Option("--param", "-p", help="Model parameter key=value, e.g. rrf_k=60.")
    ] = None,
    db: DbOption = DEFAULT,
    project_dir: ProjectOption = None,
) -> None:
    """Fuse run files into fused runs: each asked rule's ranking of the union of the arms' top L.

    Only the models the asked rules need are built: rrf and rsf read the arms' lists alone and need no
    null run; mixture, fisher and stouffer turn each score into a p-value against that arm's null run
    (--null, for every arm) and leave out a candidate some arm's file has no score for. One --rule
    writes the file -o names; several write <rule>.run into the directory -o names. Everything is
    checked before a file is loaded or written.

    Example: rankhouse fuse --arm bm25=a.run --arm dense=b.run --rule rrf --rule rsf -o fused/ --db :memory:

    Example: rankhouse fuse --arm bm25=a.run --arm dense=b.run --null bm25=a.null --null dense=b.null
    --rule mixture -o mixture.run --db :memory:
    """
    from rankhouse.loaders.sources import check_readable
    from rankhouse.loaders.trec import one_stdin
    from rankhouse.studies.fusion.fuse import incomplete_candidates, plan_fusion, run_fusion, write_fused_run
    from rankhouse.warehouse import Warehouse

    arms = _named_files(arm, "--arm")
    nulls = _named_files(null or [], "--null")
    params = parse_params(param)  # checked before the warehouse is opened
    plan = plan_fusion(arms, nulls, rule or [DEFAULT_RULE], depth, params)
    inputs = [*plan.arms.values(), *plan.nulls.values()]
    one_stdin(inputs)
    for path in inputs:
        check_readable(path)
    if plan.unused_nulls:
        verb = "reads" if len(plan.rankings) == 1 else "read"
        say(f"--null: not read, {', '.join(plan.rankings)} {verb} no null run (mixture, fisher and stouffer do)")
    files = output_files(output, plan.rankings, [str(path) for path in inputs])
    with Warehouse(db) as wh:
        run_fusion(wh, plan, progress=TextProgress())
        if len(files) > 1:
            output.mkdir(exist_ok=True)
        written = {name: write_fused_run(wh, name, path) for name, path in files.items()}
        incomplete, candidates = incomplete_candidates(wh) if plan.null_rules else (0, 0)
    for name, path in files.items():
        say(f"{path}: {written[name]:,} lines ({name} over {', '.join(sorted(arms))}, depth {depth})")
    if incomplete:
        say(
            f"{incomplete:,} of {candidates:,} candidates lack a score in some arm's file: "
            f"{', '.join(plan.null_rules)} leave them out (missing is not non-matching, seed 003 section 8); "
            "rrf and rsf rank them. Deeper arm files score more of them."
        )
