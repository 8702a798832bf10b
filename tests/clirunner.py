"""The one way the tests run the command line, and read a refusal.

`rankhouse(*args)` runs `python -m rankhouse` in a fresh interpreter, as a user does (`cwd`, `env` (the
whole environment, as subprocess takes it), and `stdin` piped in as text or bytes, else an empty standard
input); `rankhouse_in_process(*args)` calls the function that command calls (`rankhouse.cli.run`) in this
process, which parametrized tests over many commands need (an interpreter start each would take minutes;
tests/cli/test_cli_usage.py checks that both print the same); `rankhouse_auto(*args)` chooses the
second unless standard input or the directory matter. Each gives a CompletedProcess with text stdout
and stderr. `stdout_of(*args)` is the output of a command run in this process that must succeed.
`error_line` and `refused` read a failure: one `error:` line, the status, no traceback. COMMANDS and LEAVES
are the command line's commands (every group and command) and those that run something (no group).

A test that needs what these cannot give (a process to signal or kill while it runs, a pseudo-terminal,
an interpreter option) starts `python -m rankhouse` itself.
"""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
from pathlib import Path

from typer.main import get_command

from rankhouse.cli import app, run


def rankhouse(
    *args: object, cwd: Path | None = None, stdin: str | bytes | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """`python -m rankhouse ARGS` in a fresh interpreter, its output as text."""
    data = stdin.encode() if isinstance(stdin, str) else (stdin or b"")
    done = subprocess.run(
        [sys.executable, "-m", "rankhouse", *map(str, args)], input=data, capture_output=True, cwd=cwd, env=env,
        timeout=300,
    )  # fmt: skip
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(), done.stderr.decode())


def rankhouse_in_process(*args: object) -> subprocess.CompletedProcess:
    """`run`, the function `python -m rankhouse` calls, in this process, its output captured."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = run([str(a) for a in args])
    return subprocess.CompletedProcess(["rankhouse", *map(str, args)], status, out.getvalue(), err.getvalue())


def rankhouse_auto(
    *args: object, cwd: Path | None = None, stdin: str | bytes | None = None
) -> subprocess.CompletedProcess:
    """In a fresh interpreter when standard input or the directory matter (`cwd`, `stdin`, or `-` among the
    arguments), otherwise in this process (a file of many commands would spend most of its time starting
    interpreters)."""
    if cwd is None and stdin is None and "-" not in map(str, args):
        return rankhouse_in_process(*args)
    return rankhouse(*args, cwd=cwd, stdin=stdin)


def stdout_of(*args: object) -> str:
    """The standard output of `rankhouse ARGS` in this process (exit status 0 asserted)."""
    done = rankhouse_in_process(*args)
    assert done.returncode == 0, done.stderr
    return done.stdout


def error_line(done: subprocess.CompletedProcess, status: int = 2) -> str:
    """The one `error:` line of a failed command (asserting the status, the single line, no traceback)."""
    assert "Traceback" not in done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, done.stderr
    assert done.returncode == status, (done.returncode, done.stderr)
    return errors[0]


def refused(done: subprocess.CompletedProcess, message: str, status: int = 2) -> None:
    """A command that refused with `message` in its one error line."""
    assert message in error_line(done, status), done.stderr


def _commands(group, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], object]]:  # noqa: ANN001
    found = []
    for name, command in sorted(group.commands.items()):
        found.append(((*path, name), command))
        if hasattr(command, "commands"):
            found.extend(_commands(command, (*path, name)))
    return found


COMMANDS = _commands(get_command(app))  # (path, click command) of every group and command, sorted
LEAVES = [(path, command) for path, command in COMMANDS if not hasattr(command, "commands")]
