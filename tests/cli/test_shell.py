"""`rankhouse shell` on a pseudo-terminal (readline, Ctrl-C, history) and through a pipe (the row limit),
and `rankhouse query`: no UserWarning on stderr."""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

from clirunner import rankhouse
from warehouse_files import plain

from rankhouse.cli.shell import DEFAULT_MAXROWS

LONG_QUERY = "SELECT sum(hash(i)) AS total FROM range(100000000000) t(i);"  # hours if not cancelled


class Terminal:
    """`rankhouse shell` with a pseudo-terminal as its controlling terminal (stdin and stdout), stderr
    apart; typed bytes go through the terminal's line discipline (Ctrl-C becomes SIGINT)."""

    def __init__(self, db: Path, history: Path) -> None:
        master, slave = pty.openpty()

        def controlling_terminal() -> None:
            os.setsid()
            os.close(os.open(os.ttyname(0), os.O_RDWR))  # the first terminal a session leader opens
            signal.signal(signal.SIGINT, signal.SIG_DFL)  # a background job inherits SIGINT ignored

        env = {**os.environ, "TERM": "dumb", "RANKHOUSE_HISTORY": str(history)}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "rankhouse", "shell", "--db", str(db)],
            stdin=slave, stdout=slave, stderr=subprocess.PIPE, preexec_fn=controlling_terminal, env=env,
        )  # fmt: skip
        os.close(slave)
        self.master, self.pending = master, b""

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def until(self, text: str, timeout: float = 60) -> str:
        """What the shell printed up to and including `text`."""
        end = time.monotonic() + timeout
        while text.encode() not in self.pending:
            ready, _, _ = select.select([self.master], [], [], max(0.0, end - time.monotonic()))
            if not ready:  # what the shell said on stderr, to tell a slow start from a hang
                alive = self.process.poll() is None
                self.process.kill()
                stderr = self.process.communicate(timeout=10)[1].decode(errors="replace")
                raise AssertionError(
                    f"no {text!r} within {timeout} s (the shell {'was running' if alive else 'had exited'}); "
                    f"printed: {self.pending.decode(errors='replace')!r}; stderr: {stderr!r}"
                )
            self.pending += os.read(self.master, 1 << 16)
        cut = self.pending.index(text.encode()) + len(text)
        shown, self.pending = self.pending[:cut], self.pending[cut:]
        return shown.decode(errors="replace")

    def close(self) -> tuple[int, str]:
        try:
            _, stderr = self.process.communicate(timeout=60)
        finally:
            self.process.kill()
            os.close(self.master)
        return self.process.returncode, stderr.decode()


PROMPT = "rankhouse> "


def test_ctrl_c_cancels_a_running_query_and_the_session_goes_on(trec_sample_study, tmp_path):
    history = tmp_path / "history"
    shell = Terminal(trec_sample_study.db, history)
    try:
        shell.until(PROMPT, timeout=180)  # a new process, on two loaded cores (the Spark tests' JVM beside)
        shell.type(LONG_QUERY + "\n")
        time.sleep(1.5)  # the query is running
        started = time.monotonic()
        shell.type("\x03")  # Ctrl-C
        assert "interrupted" in shell.until(PROMPT, timeout=20)
        assert time.monotonic() - started < 10
        # Ctrl-C at the prompt drops the line being typed
        shell.type("SELECT 'dropped' AS gone")
        shell.until("AS gone")  # readline has echoed the line, but a SIGINT that arrives before it is back in
        time.sleep(1.0)  # its select() waits for the next key (CPython's readline): let it get there first
        shell.type("\x03")
        shell.until(PROMPT)
        shell.type("SELECT count(*) AS n\n")
        shell.until("...> ")  # a statement goes on until its ';'
        shell.type("FROM trec_sample.models.run_ranking;\n")
        answer = shell.until(PROMPT)
        assert "2084" in answer and "dropped" not in answer and "error" not in answer
        shell.type("\x04")  # Ctrl-D leaves
        status, stderr = shell.close()
    finally:
        shell.process.kill()
    assert status == 0 and stderr == ""
    lines = history.read_text().splitlines()
    assert LONG_QUERY in lines and "FROM trec_sample.models.run_ranking;" in lines
    assert not any("dropped" in x for x in lines)


def test_history_is_read_back_at_the_next_session(trec_sample_study, tmp_path):
    history = tmp_path / "history"
    history.write_text("SELECT 40 + 2 AS recalled;\n")
    shell = Terminal(trec_sample_study.db, history)
    try:
        shell.until(PROMPT)
        shell.type("\x10\n")  # Ctrl-P (readline's previous line, as the up arrow): the history's last line
        answer = shell.until(PROMPT)
        assert "recalled" in answer and "42" in answer
        shell.type(".quit\n")
        status, stderr = shell.close()
    finally:
        shell.process.kill()
    assert status == 0 and stderr == ""


def test_results_print_up_to_the_row_limit_and_say_how_many_more(trec_sample_study):
    db = trec_sample_study.db
    with plain(db, "trec_sample", read_only=True) as con:
        expected = con.execute("SELECT doc_key FROM models.run_ranking ORDER BY system, query_key, rank").fetchall()
    sql = "SELECT doc_key FROM trec_sample.models.run_ranking ORDER BY system, query_key, rank;\n"
    done = rankhouse(
        "shell", "--db", db, stdin=sql + ".maxrows 5\n" + sql + ".maxrows 0\n" + sql + ".maxrows x\n.help\n"
    )
    assert done.returncode == 0 and done.stderr == ""
    out = done.stdout.splitlines()
    blocks, current = [], []
    for line in out:
        if line == "doc_key":
            current = []
            blocks.append(current)
        elif current is not None and line and not line.startswith("-"):
            current.append(line)
    shown = [[row for row in block if not row.startswith("...") and not row.startswith("results print")]
             for block in blocks]  # fmt: skip
    rows = [r[0] for r in expected]
    assert shown[0][:DEFAULT_MAXROWS] == rows[:DEFAULT_MAXROWS] and len(shown[0]) == DEFAULT_MAXROWS
    assert f"... {len(rows) - DEFAULT_MAXROWS:,} more rows ({len(rows):,} in all;" in done.stdout
    assert shown[1][:5] == rows[:5] and f"... {len(rows) - 5:,} more rows" in done.stdout
    assert shown[2][: len(rows)] == rows  # .maxrows 0: every row
    assert "error: .maxrows wants a whole number" in done.stdout and ".maxrows N" in done.stdout


def test_no_warning_on_stderr_from_the_shell_or_query(trec_sample_study):
    db = trec_sample_study.db
    done = rankhouse(
        "shell", "--db", db, stdin="SELECT * FROM trec_sample.results.run_measures;\nSELECT 1 AS a; SELECT 2 AS b;\n"
    )
    assert done.returncode == 0 and done.stderr == "" and "run_measures" not in done.stderr
    assert "NumRet" in done.stdout and "b\n-\n2" in done.stdout
    query = subprocess.run([sys.executable, "-W", "error", "-m", "rankhouse", "query",
                            "FROM trec_sample.results.run_measures", "--db", str(db)],
                           capture_output=True, text=True, timeout=120)  # fmt: skip
    assert query.returncode == 0 and query.stderr == "" and "NumRet" in query.stdout
