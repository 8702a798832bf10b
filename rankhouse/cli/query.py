"""`rankhouse query` and `rankhouse shell`: read-only SQL for analysts, with the labels behind the gate.

Both open the warehouse read-only, with DuckDB's file access off (no ATTACH of another file, no
read_csv, no COPY; settings locked), and every study's namespace attached under the study's name:
`FROM banking77.models.retrieval_metrics`, `FROM trec_sample.results.run_measures`. Unqualified names
(`models.x`, `results.x`, `raw.x`) resolve in the default namespace, or in the study `--study` names. A
study's labels (`gate.*`, and the evaluate tables built from them) open only with `--study PROTOCOL`,
once that study's latest freeze verifies; `--with-labels` opens the labels loaded outside any study.
Neither waits for, nor stops, a study that is building: they read what was last published. The shell's
session (history, Ctrl-C, the row limit) is in shell.py.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from rankhouse.cli.common import DEFAULT, DbOption, ProjectOption, choose, say, table
from rankhouse.errors import GateError, QueryError, RankhouseError
from rankhouse.warehouse.memory import array_aggregate_settings

if TYPE_CHECKING:
    from rankhouse.warehouse import Warehouse

StudyOption = Annotated[
    Path | None, typer.Option("--study", help="Open the labels (gate.*) of this study if its latest freeze verifies.")
]
WithLabels = Annotated[
    bool, typer.Option("--with-labels", help="Open the labels loaded outside any study (the default namespace's).")
]
FreezesOption = Annotated[Path | None, typer.Option("--freezes", help="Directory of freeze files.")]


def computes_array_aggregate(sql: str) -> bool:
    """Whether a query reads a view that computes a model marked `aggregate: array` (BM25's scores),
    and so should run with array aggregates (Warehouse.array_aggregates).

    >>> computes_array_aggregate("SELECT * FROM models.bm25_ranking WHERE rank = 1")
    True
    """
    import sqlglot
    from sqlglot import exp

    from rankhouse.warehouse.dag import Project

    try:
        trees = [tree for tree in sqlglot.parse(sql, read="duckdb") if tree is not None]
    except sqlglot.errors.ParseError:
        return False  # DuckDB will say what is wrong with it
    views = {t.name.lower() for tree in trees for t in tree.find_all(exp.Table) if t.db.lower() == "models"}
    if not views:
        return False
    project = Project.load()
    return any(
        project.models[name].materialized == "view" and project.computes_array_aggregate(name)
        for name in views
        if name in project.models
    )


def open_for_analysts(
    db: str,
    study: Path | None,
    with_labels: bool,
    freezes: Path | None,
    array_aggregates: bool = False,
    namespace: str | None = None,
) -> Warehouse:
    """A read-only, locked-down warehouse with every namespace attached; names resolve in --study's
    namespace (the default one without it); the gate open only as the options allow; array aggregates
    on for the session if asked (settings are locked after this)."""
    from rankhouse.study import Protocol, Study
    from rankhouse.warehouse import Warehouse

    protocol = Protocol.load(study) if study is not None else None
    if protocol is not None and with_labels:
        raise RankhouseError("--with-labels opens the labels loaded outside any study; --study opens a study's")
    wh = Warehouse(db, read_only=True)
    try:
        wh.attach_namespaces()
        if array_aggregates:
            for setting, value in array_aggregate_settings(wh.con).items():
                wh.con.execute(f"SET {setting} = '{value}'")
        if namespace is not None:
            wh.use(namespace)
        if protocol is not None:
            studied = Study(protocol, wh, freezes)
            existing = studied.freezes()
            if not existing:
                raise GateError(f"study {studied.protocol.name} has no freeze: its labels stay closed")
            problems = studied.verify(existing[-1])
            if problems:
                raise GateError(
                    f"the labels stay closed: study {studied.protocol.name} changed since {existing[-1].freeze_id}: "
                    + "; ".join(problems)
                )
            wh.open_gate(verified_freeze=existing[-1].freeze_id)
        elif with_labels:
            wh.open_gate()
        wh.lock_down()
    except BaseException:
        wh.close()
        raise
    return wh


def query_command(
    sql: Annotated[str, typer.Argument(help="SQL to run (read-only).")],
    output_format: Annotated[str, typer.Option("--format", help="table, csv, json or parquet.")] = "table",
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write to this file instead of stdout.")] = None,
    db: DbOption = DEFAULT,
    study: StudyOption = None,
    with_labels: WithLabels = False,
    freezes: FreezesOption = None,
    project_dir: ProjectOption = None,
) -> None:
    """Run one read-only query on the warehouse; every study's tables are `<study>.models.x` and
    `<study>.results.x`.  Example: rankhouse query "FROM trec_sample.results.run_measures" --format csv"""
    import duckdb

    choose(output_format, ("table", "csv", "json", "parquet"), "--format")
    if output_format == "parquet" and output is None:
        raise typer.BadParameter("--format parquet needs --output FILE")
    with open_for_analysts(db, study, with_labels, freezes, computes_array_aggregate(sql)) as wh:
        try:
            # the relation API: an execute() result turned into Arrow makes DuckDB 2.0 print a UserWarning
            relation = wh.con.sql(sql)
            result = relation.to_arrow_table() if relation is not None else None
        except duckdb.Error as exc:
            raise QueryError(f"query failed: {exc}") from None
    if result is None:
        raise RankhouseError("the statement gives no result to print (a query has a SELECT, FROM or VALUES)")
    write_result(result, output_format, output)


def write_result(result, output_format: str, output: Path | None) -> None:  # noqa: ANN001 - a pyarrow Table
    """Print or write an Arrow table in one of the query formats."""
    if output_format == "parquet":
        import pyarrow.parquet as pq

        pq.write_table(result, output)
        say(f"wrote {result.num_rows} rows to {output}")
        return
    rows = [list(r.values()) for r in result.to_pylist()]
    if output_format == "table":
        text = table(result.column_names, rows) + "\n"
    elif output_format == "json":
        text = json.dumps(result.to_pylist(), indent=2, default=str) + "\n"
    else:
        import io

        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(result.column_names)
        writer.writerows(rows)
        text = buffer.getvalue()
    if output:
        output.write_text(text)
        say(f"wrote {result.num_rows} rows to {output}")
    else:
        sys.stdout.write(text)


def shell_command(
    db: DbOption = DEFAULT,
    study: StudyOption = None,
    with_labels: WithLabels = False,
    freezes: FreezesOption = None,
    project_dir: ProjectOption = None,
) -> None:
    """An interactive, read-only SQL session on the warehouse; .help lists its commands (cli/shell.py).

    Example: rankhouse shell --db study.duckdb
    """
    from rankhouse.cli.shell import run_session

    with open_for_analysts(db, study, with_labels, freezes) as wh:
        run_session(wh, db)
