"""`rankhouse migrate`: carry a warehouse of rankhouse 0.1 over into the layout of many studies, once."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rankhouse.cli.common import DEFAULT, DbOption, ProjectOption, say


def migrate_command(
    db: DbOption = DEFAULT,
    freezes: Annotated[
        Path | None, typer.Option("--freezes", help="Where its freeze files are (default: freezes/ beside it).")
    ] = None,
    labels: Annotated[
        Path | None, typer.Option("--labels", help="Its labels file (default: <name>.labels.duckdb beside it).")
    ] = None,
    project_dir: ProjectOption = None,
) -> None:
    """Carry a warehouse made by rankhouse 0.1 over into namespaces per study, its freezes still verifying;
    the old files are kept as <name>.v1.duckdb and <name>.labels.v1.duckdb.

    Example: rankhouse migrate --db rankhouse.duckdb
    """
    from rankhouse.warehouse.migrate import migrate

    migrate(db, freezes, labels, say)
    say(
        f"done: `rankhouse study status PROTOCOL --db {db}` checks each study's freeze; a study's next evaluation "
        "needs a freeze that records its evaluate plan (--supersedes, --reason)"
    )
