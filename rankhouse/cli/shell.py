"""`rankhouse shell` (its command in query.py): an interactive, read-only SQL session on the warehouse,
the labels behind the gate as `rankhouse query` keeps them (query.open_for_analysts).

- Line editing and history (Python's readline, on a terminal): the history file is $RANKHOUSE_HISTORY,
  else ~/.rankhouse_history in the user's home (the last 1,000 lines, read at the start, written at the end).
- Ctrl-C while a query runs cancels it (DuckDB's interrupt, called from the main thread while a worker
  thread runs the query) and the session goes on; at the prompt it clears the line being typed (and a
  statement begun on earlier lines); Ctrl-D or `.quit` leaves. Reading from a pipe, Ctrl-C at the prompt
  ends the session (status 130).
- A result prints at most `.maxrows` rows (40 to begin with; `.maxrows 0` prints every row), then how
  many more there are; the rows past the limit are counted, not kept.
- Results come through DuckDB's relation API (`con.sql(...)`), which prints no Arrow UserWarning (DuckDB
  2.0 warns when an `execute()` result is turned into Arrow).

Results and the session's own messages (errors, "interrupted") go to stdout, as a transcript.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import duckdb

from rankhouse.cli.common import table
from rankhouse.warehouse import Warehouse

DEFAULT_MAXROWS = 40
HISTORY_LINES = 1000
BATCH_ROWS = 2048
TABLES = (
    "SELECT database_name AS db, schema_name AS schema, table_name AS name, 'table' AS kind "
    "FROM duckdb_tables() WHERE NOT internal UNION ALL SELECT database_name, schema_name, "
    "view_name, 'view' FROM duckdb_views() WHERE NOT internal ORDER BY ALL"
)
SHELL_HELP = """Statements end with ';' and may span lines.
  .tables       list the tables and views (every row)
  .maxrows N    print at most N rows of a result (now {maxrows}; 0 prints every row)
  .help         this text
  .quit, .exit  leave (Ctrl-D too)
Ctrl-C cancels a running query and keeps the session, or clears the line being typed.
The warehouse is read-only here, and file access is off. History: {history}"""


def history_path() -> Path:
    """The shell's history file: $RANKHOUSE_HISTORY, else ~/.rankhouse_history.

    >>> history_path().name in (".rankhouse_history", Path(os.environ.get("RANKHOUSE_HISTORY", "x")).name)
    True
    """
    return Path(os.environ.get("RANKHOUSE_HISTORY") or Path.home() / ".rankhouse_history")


@dataclass
class Result:
    """What a statement gave: its column names, the rows kept (at most the limit) and how many in all."""

    columns: list[str]
    rows: list[tuple]
    total: int


def fetch(con: duckdb.DuckDBPyConnection, sql: str, maxrows: int) -> Result | None:
    """Run `sql` and keep its first `maxrows` rows (every row if 0), counting the rest; None for a
    statement without a result.

    >>> fetch(duckdb.connect(), "SELECT * FROM range(5) t(i)", 2)
    Result(columns=['i'], rows=[(0,), (1,)], total=5)
    """
    relation = con.sql(sql)
    if relation is None:
        return None
    reader = relation.to_arrow_reader(BATCH_ROWS)
    rows: list[tuple] = []
    total = 0
    for batch in reader:
        room = batch.num_rows if maxrows == 0 else max(0, min(batch.num_rows, maxrows - len(rows)))
        if room:
            rows.extend(zip(*(column.to_pylist() for column in batch.slice(0, room).columns)))
        total += batch.num_rows
    return Result(list(reader.schema.names), rows, total)


def shown(result: Result) -> str:
    """A result as the shell prints it: the rows as a text table, then how many were left out.

    >>> print(shown(Result(["i"], [(0,), (1,)], 5)))
    i
    -
    0
    1
    ... 3 more rows (5 in all; .maxrows N prints up to N, .maxrows 0 all)
    """
    text = table(result.columns, [list(row) for row in result.rows])
    hidden = result.total - len(result.rows)
    if hidden:
        text += f"\n... {hidden:,} more row{'s' if hidden != 1 else ''} ({result.total:,} in all; "
        text += ".maxrows N prints up to N, .maxrows 0 all)"
    return text


class Session:
    """One shell session on a connection: statements run in a worker thread that Ctrl-C interrupts."""

    def __init__(self, con: duckdb.DuckDBPyConnection, history: Path, maxrows: int = DEFAULT_MAXROWS) -> None:
        self.con = con
        self.history = history
        self.maxrows = maxrows

    def run(self, sql: str, maxrows: int | None = None) -> None:
        """Run one or more statements and print the last one's result; Ctrl-C cancels them."""
        limit = self.maxrows if maxrows is None else maxrows
        outcome: dict[str, object] = {}
        done = threading.Event()

        def work() -> None:
            try:
                outcome["result"] = fetch(self.con, sql, limit)
            except BaseException as exc:  # handed to the main thread
                outcome["error"] = exc
            finally:
                done.set()

        threading.Thread(target=work, name="rankhouse-shell-query", daemon=True).start()
        while not done.is_set():
            try:
                done.wait(0.05)
            except KeyboardInterrupt:
                self.con.interrupt()
        error = outcome.get("error")
        if isinstance(error, duckdb.InterruptException):
            print("interrupted (the session goes on)")
        elif isinstance(error, duckdb.Error):
            print(f"error: {error}")
        elif error is not None:
            raise error
        elif outcome.get("result") is not None:
            print(shown(outcome["result"]))
        sys.stdout.flush()

    def meta(self, command: str) -> bool:
        """Carry out a dot command; False when it ends the session."""
        name, _, argument = command.partition(" ")
        argument = argument.strip()
        if name in (".quit", ".exit"):
            return False
        if name == ".tables":
            self.run(TABLES, maxrows=0)
        elif name == ".maxrows" and argument:
            if not argument.isascii() or not argument.isdigit():
                print(f"error: .maxrows wants a whole number of rows (0 for all), not {argument!r}")
            else:
                self.maxrows = int(argument)
                print(f"results print at most {self.maxrows} rows" if self.maxrows else "results print every row")
        elif name == ".maxrows":
            print(f"results print at most {self.maxrows} rows" if self.maxrows else "results print every row")
        else:
            if name != ".help":
                print(f"unknown command {name}")
            print(SHELL_HELP.format(maxrows=self.maxrows, history=self.history))
        return True


def line_reader(interactive: bool, history: Path) -> tuple[Callable[[str], str | None], Callable[[], None]]:
    """(read a line with a prompt, None at the end of input; save the history). On a terminal input()
    with readline's editing and history; otherwise plain lines from stdin, no prompt, no history."""
    if not interactive:

        def read_plain(prompt: str) -> str | None:
            line = sys.stdin.readline()
            return line if line else None

        return read_plain, lambda: None
    try:
        import readline
    except ImportError:  # Python built without it: input() still reads lines
        readline = None
    if readline is not None:
        readline.set_history_length(HISTORY_LINES)
        try:
            readline.read_history_file(history)
        except OSError:
            pass  # none yet, or unreadable: start a new one

    def read_edited(prompt: str) -> str | None:
        try:
            return input(prompt)
        except EOFError:
            print()
            return None

    def save() -> None:
        if readline is None:
            return
        try:
            readline.write_history_file(history)
        except OSError as exc:
            print(f"note: history not saved to {history}: {exc.strerror or exc}", file=sys.stderr)

    return read_edited, save


def run_session(wh: Warehouse, db: str) -> None:
    """The shell on a warehouse opened for analysts (query.open_for_analysts), until the end of input.

    >>> with open_for_analysts(db, None, None, False, None) as wh:  # doctest: +SKIP
    ...     run_session(wh, db)
    """
    interactive = sys.stdin.isatty()
    history = history_path()
    session = Session(wh.con, history)
    read, save_history = line_reader(interactive, history)
    if interactive:
        print(f"rankhouse shell on {db} (read-only). .help lists the commands; Ctrl-D leaves.")
    try:
        session_loop(session, read, interactive)
    finally:
        save_history()


def session_loop(session: Session, read: Callable[[str], str | None], interactive: bool) -> None:
    """Read statements until the end of input or `.quit`, running each once its ';' is typed."""
    buffer = ""
    while True:
        try:
            line = read("rankhouse> " if not buffer else "      ...> ")
        except KeyboardInterrupt:
            if not interactive:
                raise  # a pipe's reader is stopped: status 130
            print()  # the line (and any statement begun) is dropped
            buffer = ""
            continue
        if line is None:
            break
        command = line.strip()
        if not buffer and command.startswith("."):
            if not session.meta(command):
                break
            continue
        buffer += command + "\n"
        if buffer.rstrip().endswith(";"):
            session.run(buffer)
            buffer = ""
