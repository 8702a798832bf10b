"""The one way the tests run the command line, and read a refusal.

`rankhouse(*args)` runs `python -m rankhouse` in a fresh interpreter, as a user does (`cwd`, and `stdin`
piped in as text or bytes, else an empty standard input); `rankhouse_in_process(*args)` calls the function
that command calls (`rankhouse.cli.run`) in this process, which parametrized tests over many commands
need (an interpreter start each would take minutes; tests/test_cli_usage.py checks that both print the
same). Both give a CompletedProcess with text stdout and stderr. `error_line` and `refused` read a
failure: one `error:` line, the status, no traceback.
"""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
from pathlib import Path

from rankhouse.cli import run


def rankhouse(*args: object, cwd: Path | None = None, stdin: str | bytes | None = None) -> subprocess.CompletedProcess:
    """`python -m rankhouse ARGS` in a fresh interpreter, its output as text."""
    data = stdin.encode() if isinstance(stdin, str) else (stdin or b"")
    done = subprocess.run(
        [sys.executable, "-m", "rankhouse", *map(str, args)], input=data, capture_output=True, cwd=cwd, timeout=300
    )
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(), done.stderr.decode())


def rankhouse_in_process(*args: object) -> subprocess.CompletedProcess:
    """`run`, the function `python -m rankhouse` calls, in this process, its output captured."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = run([str(a) for a in args])
    return subprocess.CompletedProcess(["rankhouse", *map(str, args)], status, out.getvalue(), err.getvalue())


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
