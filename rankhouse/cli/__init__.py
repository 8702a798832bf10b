"""The `rankhouse` command line (typer). Every command takes `--db PATH` (default ./rankhouse.duckdb).

No Python traceback reaches a user. `main` prints every failure as one line on stderr, `error: ...`
(a usage error adds `try: rankhouse CMD --help`; an error from DuckDB may add its context lines), and
exits with

- 0: done; also `-h`/`--help` (everywhere) and `--version`;
- 1: an internal error, an exception rankhouse did not expect: `error: internal error: <type>:
  <message> (please report it ...)`; set RANKHOUSE_TRACEBACK=1 to see the traceback instead; and
  `rankhouse test` when a model's output differs from its expected file (as pytest, dbt and sqlmesh);
- 2: a usage error (an unknown command or option, a missing argument, a value an option refuses,
  bare `rankhouse` or a command group without its command, which print their help first), or an
  error rankhouse reports (RankhouseError: an input that breaks a rule, an unknown name, a refused
  parameter, a failed audit) or a file it cannot read or write;
- 130: interrupted (Ctrl-C).

A command run with --json (machine-readable progress) prints its failure as one JSON event instead,
like its progress: {"event": "error", "message": ..., "hint": ... or null, "status": 2}.

typer (0.29 and later) vendors its own copy of click, so its usage errors are
`typer._click.exceptions` classes, not `click`'s.

Each command imports what it uses when it runs (DuckDB, Arrow, sqlglot, the study machinery), and its
options need nothing heavy: importing the app, `--version` and `--help` stay light (tests/test_cli_start.py).
"""

from __future__ import annotations

import copy
import inspect
import json
import os
import sys
from typing import Annotated

import typer
from typer._click import exceptions as usage

from rankhouse import __version__, registry
from rankhouse.cli import compare, encode, evaluate, export, load, migrate, models, project, query, report, study
from rankhouse.errors import RankhouseError
from rankhouse.project import use_project
from rankhouse.sentences import first_sentence

app = typer.Typer(
    name="rankhouse",
    help="An embedded DuckDB warehouse for reproducible retrieval experiments.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _print_version(value: bool) -> None:
    if value:
        import duckdb

        print(f"rankhouse {__version__} (duckdb {duckdb.__version__})")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool, typer.Option("--version", callback=_print_version, is_eager=True, help="Print the versions and exit.")
    ] = False,
) -> None:
    pass


app.command("eval")(evaluate.eval_command)
app.command("compare")(compare.compare_command)
app.command("demo")(evaluate.demo_command)
app.add_typer(load.load_app, name="load")
app.add_typer(load.runs_app, name="runs")
app.command("sources")(load.sources_command)
app.add_typer(models.models_app, name="models")
app.command("run")(models.run_command)
app.command("encode")(encode.encode_command)
app.add_typer(study.study_app, name="study")
app.command("query")(query.query_command)
app.command("shell")(query.shell_command)
app.command("export")(export.export_command)
app.command("report")(report.report_command)
app.command("migrate")(migrate.migrate_command)
app.command("init")(project.init_command)
app.command("test")(project.test_command)


def _study_commands() -> RankhouseError | None:
    """Add the studies' own commands (rankhouse fuse, features, lanes: rankhouse/registry.py Command); a
    study that cannot be registered is returned, for `run` to report as any other error."""
    try:
        for command in registry.entries(registry.Command).values():
            target = registry.resolve(command.target)
            if isinstance(target, typer.Typer):
                app.add_typer(target, name=command.name)
            else:
                app.command(command.name)(target)
    except RankhouseError as exc:
        return exc
    return None


_STUDIES_FAILED = _study_commands()


def _short_helps(typer_app: typer.Typer) -> None:
    """Each command's summary in `--help`: its docstring's first sentence on one line (typer would show
    the docstring's lines as they wrap in the source, cut mid-sentence)."""
    for info in typer_app.registered_commands:
        if info.short_help is None and info.callback is not None and info.callback.__doc__:
            info.short_help = first_sentence(inspect.getdoc(info.callback))
    for group in typer_app.registered_groups:
        _short_helps(group.typer_instance)


_short_helps(app)

PROGRAM = "rankhouse"


def main(args: list[str] | None = None) -> None:
    """Entry point: run the app and exit with the status the module docstring lists."""
    sys.exit(run(args))


def run(args: list[str] | None = None) -> int:
    """The app on `args` (default: the command line's); every failure printed as one `error:` line."""
    use_project(None)  # a command's --project (cli/common.py ProjectOption) chooses it anew
    try:
        return _run(args)
    finally:
        use_project(None)  # the project's parts leave the registry with its command


def _run(args: list[str] | None) -> int:
    as_json = "--json" in (sys.argv[1:] if args is None else args)  # a failure is then a JSON event too
    try:
        if _STUDIES_FAILED is not None:
            raise _STUDIES_FAILED
        status = _only_the_command_of(sys.argv[1:] if args is None else args)(
            args=args, prog_name=PROGRAM, standalone_mode=False
        )
    except usage.NoArgsIsHelpError:  # the help is printed already
        return _error("missing command", as_json=as_json)
    except usage.UsageError as exc:
        command = exc.ctx.command_path if exc.ctx is not None else _command_path(args)
        return _error(_usage_message(exc), f"try: {command} --help", as_json=as_json)
    except usage.ClickException as exc:
        return _error(_one_line(exc.format_message()), as_json=as_json)
    except RankhouseError as exc:
        return _error(str(exc), as_json=as_json)
    except (KeyboardInterrupt, typer.Abort):
        return 130
    except OSError as exc:
        if os.environ.get("RANKHOUSE_TRACEBACK"):
            raise
        where = f"{exc.filename}: " if exc.filename is not None else ""
        return _error(f"{where}{exc.strerror or exc}", status=2, as_json=as_json)
    except Exception as exc:
        if os.environ.get("RANKHOUSE_TRACEBACK"):
            raise
        message = _one_line(str(exc))
        return _error(
            f"internal error: {type(exc).__name__}: {message} (please report it, with the command; "
            "RANKHOUSE_TRACEBACK=1 shows where it happened)",
            status=1,
            as_json=as_json,
        )
    # typer returns the status of an Exit (0 after --help or --version, 130 after Ctrl-C), and a
    # command's own return value (None) otherwise
    return status if isinstance(status, int) else 0


def _only_the_command_of(args: list[str]) -> typer.Typer:
    """The app with only the command or group its first argument names, when it names one: typer builds
    every command's options before it parses the command line (a tenth of a second for the 40 commands),
    and a command's parsing, help and errors read nothing of the others. Any other first argument (an
    option, `--help`, a misspelt command) gets the whole app."""
    first = args[0] if args else None
    commands = [info for info in app.registered_commands if info.name == first]
    groups = [info for info in app.registered_groups if info.name == first]
    if first is None or len(commands) + len(groups) != 1:
        return app
    only = copy.copy(app)
    only.registered_commands, only.registered_groups = commands, groups
    return only


def _command_path(args: list[str] | None) -> str:
    """`rankhouse load run`: the (sub)command the arguments name, for an error raised without its context."""
    command, path = typer.main.get_command(app), [PROGRAM]
    for arg in sys.argv[1:] if args is None else args:
        if arg.startswith("-"):
            continue
        if arg not in getattr(command, "commands", {}):
            break
        command = command.commands[arg]
        path.append(arg)
    return " ".join(path)


def _usage_message(exc: usage.UsageError) -> str:
    if isinstance(exc, usage.BadParameter) and exc.param is None and exc.param_hint is None:
        message = exc.message  # raised by a command on its own, naming its option in the message
    else:
        message = exc.format_message()
    message = message.replace("Value error, ", "")  # how pydantic reports a ValueError from a parser
    message = _one_line(message)
    return message[:1].lower() + message[1:] if message[1:2].islower() else message


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _error(message: str, hint: str | None = None, status: int = 2, as_json: bool = False) -> int:
    """Print a failure on stderr: `error: ...` (and its hint) for a person, or, when the command line asks
    for --json progress, one JSON event {"event": "error", "message", "hint", "status"} like the others."""
    if as_json:
        print(json.dumps({"event": "error", "message": message, "hint": hint, "status": status}), file=sys.stderr)
        return status
    print(f"error: {message}", file=sys.stderr)
    if hint:
        print(hint, file=sys.stderr)
    return status
