"""Usage errors through the real entry point (`python -m rankhouse`): one `error:` line and exit status 2,
never a traceback; `-h`, `--help` and `--version`; close-match suggestions for names; `--param` values
checked against their declared types before anything is opened or built (issue 14)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from clirunner import COMMANDS, LEAVES, error_line, rankhouse, rankhouse_in_process
from conftest import TREC
from typer.main import get_command

from rankhouse import __version__
from rankhouse.cli import app, run


def usage_error(*args: object) -> tuple[str, subprocess.CompletedProcess]:
    done = rankhouse_in_process(*args)
    line = error_line(done)
    return line, done


def test_in_process_and_subprocess_usage_errors_agree():
    """The in-process runner above prints what the real process prints."""
    for args in (("eval", "--no-such-option"), ("load", "run"), ("nope",)):
        real, here = rankhouse(*args), rankhouse_in_process(*args)
        assert (real.returncode, real.stdout, real.stderr) == (here.returncode, here.stdout, here.stderr)


GROUPS = [path for path, command in COMMANDS if hasattr(command, "commands")]
REQUIRED = [(path, command) for path, command in LEAVES if any(p.required for p in command.params)]


# -- every command: unknown option, missing argument, -h ------------------------------------------


@pytest.mark.parametrize("path", [path for path, _ in LEAVES], ids=" ".join)
def test_an_unknown_option_is_one_error_line_and_status_2(path):
    line, done = usage_error(*path, "--no-such-option")
    assert line.startswith("error: no such option: --no-such-option"), done.stderr
    assert f"try: rankhouse {' '.join(path)} --help" in done.stderr
    assert done.stdout == ""


@pytest.mark.parametrize("path", [path for path, _ in REQUIRED], ids=" ".join)
def test_a_missing_argument_is_one_error_line_and_status_2(path):
    command = dict(LEAVES)[path]
    first = next(p for p in command.params if p.required)
    line, done = usage_error(*path)
    assert line.startswith("error: missing "), done.stderr
    shown = first.opts[0] if first.param_type_name == "option" else (first.metavar or first.name).rstrip(".")
    assert shown.lower() in line.lower(), line
    assert done.stdout == ""


@pytest.mark.parametrize("path", [(), *[path for path, _ in COMMANDS]], ids=lambda p: " ".join(p) or "rankhouse")
def test_dash_h_is_help_everywhere(path, capsys):
    """In process, through the entry point's `run` (a process each would take minutes; the processes of
    test_help_and_dash_h_print_the_same check the same for a few)."""
    assert run([*path, "-h"]) == 0
    out, err = capsys.readouterr()
    assert f"Usage: {' '.join(('rankhouse', *path))} [OPTIONS]" in out
    assert err == ""


@pytest.mark.parametrize("path", [(), *GROUPS], ids=lambda p: " ".join(p) or "rankhouse")
def test_each_command_summary_in_help_is_its_first_sentence_whole(path, monkeypatch, capsys):
    """A summary in a group's help is the command's docstring's first sentence (e.g. and i.e. kept), never
    the docstring's first source line cut mid-sentence."""
    import inspect

    from rankhouse.sentences import first_sentence

    monkeypatch.setenv("COLUMNS", "400")  # one line per command: the summaries read back whole
    assert run([*path, "-h"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    group = get_command(app)
    for name in path:
        group = group.commands[name]
    for name, command in group.commands.items():
        doc = inspect.getdoc(command.callback) if command.callback is not None else None
        if doc:
            summary = first_sentence(doc)
            assert "\n" not in summary and f"{name} {summary}" in out, (name, summary)
            assert summary.count("(") == summary.count(")"), summary  # not cut inside a parenthesis


@pytest.mark.parametrize("path", GROUPS, ids=" ".join)
def test_a_group_without_its_command_prints_its_help_and_exits_2(path):
    done = rankhouse(*path)
    assert error_line(done) == "error: missing command", done.stderr
    assert f"Usage: {' '.join(('rankhouse', *path))} [OPTIONS] COMMAND" in done.stdout
    unknown, _ = usage_error(*path, "nope")
    assert unknown.startswith("error: no such command 'nope'")


# -- the top level --------------------------------------------------------------------------------


def test_bare_rankhouse_prints_the_help_and_exits_2():
    done = rankhouse()
    assert error_line(done) == "error: missing command"
    assert "Usage: rankhouse [OPTIONS] COMMAND [ARGS]..." in done.stdout
    # the help lists every command the parametrized tests cover, and they see every command
    names = {" ".join(path) for path, _ in LEAVES}
    assert {"eval", "demo", "query", "run", "fuse", "models lineage", "study run", "load run"} <= names
    assert {("load",), ("runs",), ("models",), ("study",)} <= set(GROUPS)
    assert all(f" {path[0]} " in done.stdout for path, _ in COMMANDS)


@pytest.mark.parametrize(
    "path", [(), ("eval",), ("study",), ("study", "run")], ids=lambda p: " ".join(p) or "rankhouse"
)
def test_help_and_dash_h_print_the_same(path):
    short, long = rankhouse(*path, "-h"), rankhouse(*path, "--help")
    assert short.returncode == long.returncode == 0
    assert short.stdout == long.stdout and "Usage: rankhouse" in short.stdout


def test_version():
    done = rankhouse("--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"rankhouse {__version__} (duckdb {duckdb.__version__})\n"


def test_an_unknown_command_gets_a_suggestion():
    line, _ = usage_error("evl", "q", "r")
    assert line == "error: no such command 'evl'. Did you mean 'eval'?"


# -- values of options ----------------------------------------------------------------------------


def test_eval_format_is_checked_with_a_suggestion():
    line, done = usage_error("eval", TREC / "qrels.test", TREC / "results.test", "--format", "jsn")
    assert "--format" in line and "'jsn'" in line and "did you mean 'json'?" in line, line
    assert "try: rankhouse eval --help" in done.stderr


def test_query_format_parquet_needs_output_and_format_is_checked(tmp_path):
    line, _ = usage_error("query", "SELECT 1", "--format", "parquet", "--db", tmp_path / "w.duckdb")
    assert line == "error: --format parquet needs --output FILE"
    line, _ = usage_error("query", "SELECT 1", "--format", "jsn", "--db", tmp_path / "w.duckdb")
    assert "did you mean 'json'?" in line, line


@pytest.mark.parametrize("value", ["1_0", "x", "1.5", "\u0661"])
def test_eval_level_is_ascii_digits(value):
    line, _ = usage_error("eval", TREC / "qrels.test", TREC / "results.test", "-l", value)
    assert "'--level' / '-l'" in line and repr(value) in line and "whole number" in line, line


def fuse_args(tmp_path: Path) -> list[object]:
    """Two arms (and their nulls) of one run file, into a fresh warehouse file."""
    run = TREC / "results.test"
    arms = ["--arm", f"a={run}", "--arm", f"b={run}", "--null", f"a={run}", "--null", f"b={run}"]
    return ["fuse", *arms, "-o", tmp_path / "f.run", "--db", tmp_path / "f.duckdb"]


def test_fuse_depth_is_ascii_digits(tmp_path):
    line, _ = usage_error(*fuse_args(tmp_path), "--depth", "1_0")
    assert "'--depth'" in line and "'1_0'" in line, line
    assert not (tmp_path / "f.duckdb").exists()


def fuse_without_nulls(tmp_path: Path) -> list[object]:
    """Two arms of one run file, no null run, into a fresh warehouse file (the rules and -o follow)."""
    run = TREC / "results.test"
    return ["fuse", "--arm", f"a={run}", "--arm", f"b={run}", "--db", tmp_path / "f.duckdb"]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--rule", "rff", "-o", "{out}"], "unknown rule 'rff'; did you mean"),
        (["--rule", "rrf", "--rule", "rrf", "-o", "{out}"], "rule rrf is asked twice"),
        (["-o", "{out}"], "mixture reads every arm's null run; no null run for a, b"),
        (["--rule", "rrf", "--rule", "stouffer", "-o", "{tmp}"], "stouffer reads every arm's null run"),
        (["--null", "c={run}", "--rule", "fisher", "-o", "{out}"], "null run for unknown arm c (the arms: a, b)"),
        (["--rule", "rrf", "-p", "fusion_rules=rsf", "-o", "{out}"], "parameter fusion_rules: set by the fusion"),
        (["--rule", "rrf", "-p", "beta=0.7", "-o", "{out}"], "parameter beta: read by no model that rrf needs"),
        (["--rule", "rrf", "--rule", "rsf", "-o", "{run}"], "is a file; 2 rules write <rule>.run files into a"),
        (["--rule", "rrf", "-o", "{tmp}"], "is a directory; one rule writes one file"),
        (["--rule", "rrf", "-o", "{tmp}/no/f.run"], "there is no folder"),
        (["--rule", "rrf", "-o", "{run}"], "is an input; writing the fused run there would overwrite it"),
        (["--arm", "c={tmp}/none.run", "--rule", "rrf", "-o", "{out}"], "none.run: no such file"),
    ],
)
def test_fuse_refuses_a_bad_request_before_it_loads_or_writes(tmp_path, args, expected):
    """A rule it does not know or asked twice, a p-value rule without null runs, an output that is not
    what the rules write (a file for one, a directory for several) or is an input, a missing input:
    one error line, and neither the warehouse nor any output exists."""
    run = TREC / "results.test"
    filled = [str(a).format(out=tmp_path / "f.run", tmp=tmp_path, run=run) for a in args]
    before = set(tmp_path.iterdir())
    line, _ = usage_error(*fuse_without_nulls(tmp_path), *filled)
    assert expected in line, line
    assert set(tmp_path.iterdir()) == before  # no warehouse, no output


def test_fuse_says_it_does_not_read_null_runs_the_rules_do_not_need(tmp_path):
    """Null runs given with rrf alone are not loaded (rrf reads list positions), and the command says so."""
    run = TREC / "results.test"
    done = rankhouse_in_process(
        *fuse_without_nulls(tmp_path), "--null", f"a={run}", "--null", f"b={run}", "--rule", "rrf", "-o", tmp_path / "r"
    )
    assert done.returncode == 0, done.stderr
    assert "--null: not read, rrf reads no null run (mixture, fisher and stouffer do)" in done.stderr
    from rankhouse.warehouse import Warehouse

    with Warehouse(tmp_path / "f.duckdb", read_only=True) as wh:
        assert wh.sql("SELECT DISTINCT run_id FROM raw.runs ORDER BY 1") == [("a",), ("b",)]


def test_demo_of_an_unknown_study_suggests_one(tmp_path):
    line, _ = usage_error("demo", "--study", "bankin77", "--db", tmp_path / "demo.duckdb")
    assert line.startswith("error: no study 'bankin77'") and "did you mean 'banking77'?" in line, line
    assert not (tmp_path / "demo.duckdb").exists()


# -- names: measures and models -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("typed", "meant"),
    [("ndcg@10", "nDCG@10"), ("NDCG_CUT.10", "ndcg_cut.10"), ("APP", "AP"), ("p@5", "P@5"), ("mrr", "MRR"),
     ("P_10", "P.10"), ("recall@100", "R@100"), ("nDGC@10", "nDCG@10")],
)  # fmt: skip
def test_an_unknown_measure_gets_a_close_match(typed, meant):
    line, _ = usage_error("eval", TREC / "qrels.test", TREC / "results.test", "-m", typed)
    assert f"unknown measure {typed!r}; did you mean {meant!r}?" in line, line


@pytest.mark.parametrize(
    "args",
    [("models", "lineage", "measure_nDCG"), ("models", "show", "measure_nDCG", "--db", ":memory:"),
     ("run", "-s", "+measure_nDCG", "--db", ":memory:")],
)  # fmt: skip
def test_an_unknown_model_gets_a_close_match(args):
    line, _ = usage_error(*args)
    assert "measure_nDCG" in line and "did you mean 'measure_ndcg'?" in line, line


# -- --param --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def loaded(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("params") / "w.duckdb"
    assert rankhouse("load", "qrels", TREC / "qrels.test", "--db", db).returncode == 0
    assert rankhouse("load", "run", TREC / "results.test", "--db", db).returncode == 0
    return db


def test_a_bare_measures_value_is_the_measures_it_names(loaded):
    """`-p measures=AP` is AP (not A and P); the text is read as -m reads it: `P.5,10` is P_5 and P_10."""
    from rankhouse.warehouse import Warehouse

    done = rankhouse("run", "-s", "+measure_requests", "-p", "measures=AP,P.5,10", "--db", loaded)
    assert done.returncode == 0, done.stderr
    with Warehouse(loaded, read_only=True) as wh:
        rows = wh.sql("SELECT measure, canonical FROM models.measure_requests ORDER BY position")
    assert rows == [("AP", "AP"), ("P_5", "P@5"), ("P_10", "P@10")]


@pytest.mark.parametrize(
    ("param", "expected"),
    [
        ("measures=APP", "--param measures: unknown measure 'APP'; did you mean 'AP'?"),
        ('measures=["APP"]', "--param measures: unknown measure 'APP'; did you mean 'AP'?"),
        ('measures=["ndcg@10"]', "--param measures: unknown measure 'ndcg@10'; did you mean 'nDCG@10'?"),
        (
            'depth="x"',
            "--param depth: '\"x\"' is not a whole number, the type preference_positions, run_ranking declare "
            "(default 0)",
        ),
        (
            "depth=1_0",
            "--param depth: '1_0' is not a whole number, the type preference_positions, run_ranking declare "
            "(default 0)",
        ),
        (
            "depth=true",
            "--param depth: 'true' is not a whole number, the type preference_positions, run_ranking declare "
            "(default 0)",
        ),
        (
            "complete=1",
            "--param complete: '1' is not true or false, the type evaluated_queries declares (default true)",
        ),
        ("measures=[]", "--param measures: names no measure"),
        ("measure=AP", "--param measure: no model declares a parameter measure; did you mean 'measures'?"),
    ],
)
def test_a_param_is_checked_before_anything_is_opened(tmp_path, param, expected):
    db = tmp_path / "w.duckdb"
    line, _ = usage_error("run", "-s", "+run_measures", "-p", param, "--db", db)
    assert line.startswith(f"error: {expected}"), line
    assert not db.exists()


def test_fuse_checks_its_params_before_loading_the_arms(tmp_path):
    line, _ = usage_error(*fuse_args(tmp_path), "-p", 'rrf_k="x"')
    assert line.startswith("error: --param rrf_k: '\"x\"' is not a whole number"), line
    assert not (tmp_path / "f.duckdb").exists()


# -- errors that are not usage errors -------------------------------------------------------------


def test_a_file_that_cannot_be_written_is_an_error_line(loaded, tmp_path):
    out = tmp_path / "missing" / "o.run"
    line = error_line(rankhouse("runs", "export", "results.test", out, "--db", loaded))
    assert line == f"error: {out}: No such file or directory"


BOOM = """
import sys
from rankhouse.warehouse.dag import Project
def boom(*args, **kwargs):
    raise ZeroDivisionError("boom")
Project.load = boom
sys.argv = ["rankhouse", "models", "list"]
from rankhouse.cli import main
main()
"""


def test_an_unexpected_exception_is_an_internal_error_line_with_status_1():
    done = subprocess.run([sys.executable, "-c", BOOM], capture_output=True, text=True, timeout=300)
    line = error_line(done, status=1)
    assert line.startswith("error: internal error: ZeroDivisionError: boom (please report it"), line
    shown = subprocess.run([sys.executable, "-c", BOOM], capture_output=True, text=True, timeout=300,
                           env={**os.environ, "RANKHOUSE_TRACEBACK": "1"})  # fmt: skip
    assert "Traceback" in shown.stderr and "ZeroDivisionError: boom" in shown.stderr and shown.returncode == 1


def test_ctrl_c_exits_130_without_a_traceback():
    shell = subprocess.Popen(
        [sys.executable, "-u", "-m", "rankhouse", "shell", "--db", ":memory:"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # a background job inherits SIGINT ignored
    )  # fmt: skip
    try:
        shell.stdin.write("SELECT 41 + 1 AS answer;\n")
        shell.stdin.flush()
        assert "answer" in shell.stdout.readline()  # the shell is reading its next statement
        shell.send_signal(signal.SIGINT)
        _, stderr = shell.communicate(timeout=60)
    finally:
        shell.kill()
    assert shell.returncode == 130, stderr
    assert "Traceback" not in stderr
