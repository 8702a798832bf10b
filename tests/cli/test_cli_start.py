"""The command line starts light (issue 39): `rankhouse --version`, `--help` and every command import only
what they use. Importing the app (every command's options, the studies' commands from the registry) loads
no Arrow, NumPy, pandas, sqlglot or jinja2, and none of the evaluation, the study machinery or the loaders;
a command imports them when it runs."""

from __future__ import annotations

import ast
import subprocess
import sys

HEAVY = ("pyarrow", "numpy", "pandas", "sqlglot", "jinja2", "duckdb")
HEAVY_OF_RANKHOUSE = ("rankhouse.study", "rankhouse.loaders", "rankhouse.evaluation", "rankhouse.comparison",
                      "rankhouse.warehouse.connection", "rankhouse.warehouse.dag", "rankhouse.warehouse.render",
                      "rankhouse.warehouse.runner", "rankhouse.report")  # fmt: skip


def loaded_after(code: str) -> list[str]:
    """The heavy modules a fresh Python holds after running `code` (the last line it prints)."""
    probe = (
        f"{code}\nimport sys\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r} or m.startswith({HEAVY_OF_RANKHOUSE!r})))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return ast.literal_eval(out.stdout.splitlines()[-1])


def test_importing_the_command_line_loads_no_heavy_module():
    assert loaded_after("import rankhouse.cli") == []


def test_version_loads_duckdb_for_its_version_and_nothing_else_heavy():
    loaded = loaded_after("from rankhouse.cli import run\nassert run(['--version']) == 0")
    assert {m.split(".")[0] for m in loaded} == {"duckdb"}, loaded


def test_help_of_every_command_group_loads_no_heavy_module():
    quietly = "import contextlib, io\nfrom rankhouse.cli import run\nwith contextlib.redirect_stdout(io.StringIO()):\n"
    for args in (["--help"], ["study", "--help"], ["study", "status", "--help"], ["fuse", "--help"],
                 ["lanes", "--help"], ["features", "--help"], ["load", "--help"]):  # fmt: skip
        assert loaded_after(f"{quietly}    assert run({args!r}) == 0") == [], args
