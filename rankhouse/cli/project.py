"""`rankhouse init DIR` and `rankhouse test`: an analyst's project and its model tests (docs/projects.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rankhouse.cli.common import ProjectOption, say
from rankhouse.errors import RankhouseError


def init_command(
    folder: Annotated[Path, typer.Argument(help="The project's folder (made if missing).")],
    name: Annotated[str | None, typer.Option("--name", help="The project's name (default: the folder's).")] = None,
) -> None:
    """Lay out a project of your own: rankhouse_project.toml, models/, studies/ and tests/, whose models
    every command run there (or with --project) reads beside rankhouse's.  Example: rankhouse init my_measures"""
    from rankhouse.project import MARKER, init_project

    for path in init_project(folder, name):
        say(f"wrote {path}{'/' if path.is_dir() else ''}")
    say(f"{folder} is a rankhouse project ({MARKER}): add models to models/ and their tests to tests/, then run "
        f"`rankhouse test` there (docs/projects.md)")  # fmt: skip


def test_command(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(help="Fixture folders, or folders of them (default: the project's tests/).", show_default=False),
    ] = None,
    update: Annotated[
        bool,
        typer.Option(
            "--update",
            help="Write each expected file that differs or is missing from the model's output "
            "(review the change before you commit it).",
        ),
    ] = False,  # fmt: skip
    project_dir: ProjectOption = None,
) -> None:
    """Run model tests: each fixture's models built on its input tables in an in-memory warehouse and
    compared with its expected files; exit status 1 if one differs.  Example: rankhouse test --project my_measures"""
    from rankhouse.model_tests import check, find_fixtures, read_fixture
    from rankhouse.project import project_in_use

    if not paths:
        project = project_in_use()
        if project is None:
            raise RankhouseError(
                "no project here (no rankhouse_project.toml in this folder): give --project DIR, or fixture folders"
            )
        here = Path.cwd()
        paths = [project.tests.relative_to(here) if project.tests.is_relative_to(here) else project.tests]
    fixtures = [read_fixture(folder) for folder in find_fixtures(paths)]  # every one checked before any runs
    outcomes = check(fixtures, update)
    for outcome in outcomes:
        print(f"{outcome.status:<7} {outcome.fixture}: {outcome.model}")
        if outcome.status == "failed":
            print("\n".join("        " + line for line in outcome.detail.splitlines()))
    counts = {
        status: sum(o.status == status for o in outcomes) for status in ("passed", "failed", "updated", "written")
    }
    print(", ".join(f"{n} {status}" for status, n in counts.items() if n or status == "passed"))
    if counts["failed"]:
        if not update:
            say("rankhouse test --update writes the expected files from the models' output, for you to review")
        raise typer.Exit(1)
