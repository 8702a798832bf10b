"""The wheel, as a user installs it: built from this checkout, installed (not editable) into a fresh
virtual environment and run from a folder outside the checkout. Its model files and DDL must be the
copies inside that environment's site-packages, not the checkout's.

Offline and quick: the wheel is built with the running environment's setuptools (no build isolation)
and installed with --no-deps; the runtime dependencies come from the running environment through a
.pth file, which only appends their folders to sys.path (so the editable rankhouse beside them, whose
finder a .pth of that folder would install, cannot be imported instead of the wheel's)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from importlib.metadata import distribution, version
from pathlib import Path
from types import SimpleNamespace

import pytest
from analyst_project import FIRST_RELEVANT, JUDGED, first_relevant, judged_csv
from conftest import CHECKOUT, TREC

# What the build reads: the project file, its readme and the folders package-dir maps.
BUILD_INPUTS = ["pyproject.toml", "README.md", "rankhouse", "models", "sql"]


def measure_lines(expected: Path, measure: str) -> list[str]:
    """trec_eval's output lines for one measure."""
    return [line for line in expected.read_text().splitlines() if line.split("\t")[0].strip() == measure]


def run(*args: object, cwd: Path) -> subprocess.CompletedProcess:
    """A command as a user runs it: no PYTHONPATH pointing into the checkout, no active environment."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    return subprocess.run(list(map(str, args)), capture_output=True, text=True, cwd=cwd, env=env, timeout=300)


def dependency_folders() -> list[str]:
    """The folders the running environment imports rankhouse's runtime dependencies from."""
    declared = tomllib.loads((CHECKOUT / "pyproject.toml").read_text())["project"]["dependencies"]
    names = [re.match(r"[A-Za-z0-9._-]+", requirement).group(0) for requirement in declared]
    return sorted({str(distribution(name).locate_file("")) for name in names})


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The wheel built from a copy of the checkout's build inputs (setuptools builds in place, and a
    stale build/ would ship files deleted since), installed into a fresh venv."""
    found = version("setuptools")
    assert int(found.split(".")[0]) >= 77, f"setuptools {found} cannot build the wheel; the test extras want >=77"
    root = tmp_path_factory.mktemp("wheel")
    source = root / "source"
    source.mkdir()
    for name in BUILD_INPUTS:
        if (CHECKOUT / name).is_dir():
            shutil.copytree(CHECKOUT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(CHECKOUT / name, source / name)
    build = run(sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "--no-build-isolation", "--no-index",
                "-w", root / "dist", source, cwd=root)  # fmt: skip
    assert build.returncode == 0, build.stdout + build.stderr
    (wheel,) = (root / "dist").glob("rankhouse-*.whl")
    venv = root / "venv"
    assert run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=root).returncode == 0
    python = venv / "bin" / "python"
    done = run(sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index", wheel, cwd=root)
    assert done.returncode == 0, done.stderr
    where = run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=root)
    purelib = Path(where.stdout.strip())
    (purelib / "rankhouse-test-dependencies.pth").write_text("\n".join(dependency_folders()) + "\n")
    elsewhere = root / "elsewhere"
    elsewhere.mkdir()
    assert not elsewhere.is_relative_to(CHECKOUT)
    return SimpleNamespace(root=root, build=build, wheel=wheel, python=python, rankhouse=venv / "bin" / "rankhouse",
                           purelib=purelib, cwd=elsewhere)  # fmt: skip


def test_the_build_warns_of_nothing_deprecated(installed):
    log = installed.build.stdout + installed.build.stderr
    assert "Building wheel for rankhouse" in log  # -v shows the backend's own output
    assert not re.search("deprecat", log, re.IGNORECASE), log


def test_the_wheel_ships_every_model_and_ddl_file_at_every_depth(installed):
    with zipfile.ZipFile(installed.wheel) as wheel:
        shipped = {name for name in wheel.namelist() if name.endswith(".sql")}
    expected = {f"rankhouse/{path.relative_to(CHECKOUT).as_posix()}"
                for folder in ("models", "sql") for path in (CHECKOUT / folder).rglob("*.sql")}  # fmt: skip
    expected |= {path.relative_to(CHECKOUT).as_posix() for path in (CHECKOUT / "rankhouse/studies").rglob("*.sql")}
    assert any(name.count("/") >= 3 for name in expected)  # models/<group>/<model>.sql: a subfolder
    assert "rankhouse/studies/lanes/inputs.sql" in expected  # a study package's own DDL
    assert shipped == expected
    with zipfile.ZipFile(installed.wheel) as wheel:
        templates = {name for name in wheel.namelist() if name.startswith("rankhouse/report/templates/")}
    expected = {f"rankhouse/report/templates/{p.name}" for p in (CHECKOUT / "rankhouse/report/templates").glob("*.j2")}
    assert templates == expected != set()


def test_the_installed_package_reads_its_own_models_not_the_checkouts(installed):
    script = ("import json, rankhouse, rankhouse.paths as p; print(json.dumps([rankhouse.__file__, str(p.MODELS_DIR), "
              "str(p.SQL_DIR), p.in_checkout(), sorted(x.relative_to(p.MODELS_DIR).as_posix() "
              "for x in p.MODELS_DIR.rglob('*.sql'))]))")  # fmt: skip
    done = run(installed.python, "-c", script, cwd=installed.cwd)
    assert done.returncode == 0, done.stderr
    module, models, sql, in_checkout, files = json.loads(done.stdout)
    package = installed.purelib / "rankhouse"
    assert (Path(module), Path(models), Path(sql)) == (package / "__init__.py", package / "models", package / "sql")
    assert in_checkout is False
    assert files == sorted(x.relative_to(CHECKOUT / "models").as_posix() for x in (CHECKOUT / "models").rglob("*.sql"))


def test_installed_eval_prints_trec_eval_map(installed):
    done = run(installed.rankhouse, "eval", TREC / "qrels.test", TREC / "results.test", "-m", "map", cwd=installed.cwd)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == measure_lines(TREC / "expected" / "out.test", "map")


def test_installed_study_run_writes_results_of_both_runs(installed):
    out, db = installed.root / "out", installed.root / "w.duckdb"
    done = run(installed.rankhouse, "study", "run", CHECKOUT / "studies" / "trec_sample.toml", "--db", db,
               "--out", out, cwd=installed.cwd)  # fmt: skip
    assert done.returncode == 0, done.stderr
    methods = json.loads((out / "results.json").read_text())["methods"]
    assert sorted(methods) == ["results.test", "results.trunc"]
    # trec_eval's MAP: results.test as is, results.trunc (no topic 302) with -c, as the protocol says
    for run_id, expected in (("results.test", "out.test"), ("results.trunc", "out.test.aqc")):
        (line,) = [line for line in measure_lines(TREC / "expected" / expected, "map") if "\tall\t" in line]
        assert f"{methods[run_id]['AP']['value']:.4f}" == line.split("\t")[2], run_id
    # the report, rendered with the wheel's own templates
    assert f"{methods['results.test']['AP']['value']:.4f}" in (out / "report.html").read_text()
    assert (out / "report.md").is_file() and (out / "figures" / "per-query.svg").is_file()


def test_installed_models_docs_renders_its_shipped_templates(installed):
    with zipfile.ZipFile(installed.wheel) as wheel:
        shipped = {name for name in wheel.namelist() if name.startswith("rankhouse/catalog_docs/templates/")}
    templates = CHECKOUT / "rankhouse" / "catalog_docs" / "templates"
    assert shipped == {f"rankhouse/catalog_docs/templates/{p.name}" for p in templates.glob("*.html")} != set()
    out = installed.root / "catalog"
    done = run(installed.rankhouse, "models", "docs", out, "-s", "+measure_ap", cwd=installed.cwd)
    assert done.returncode == 0, done.stderr
    assert (out / "models" / "measure_ap.html").read_text().count("<h2") >= 5 and (out / "lineage.html").is_file()


def test_installed_demo_says_it_needs_the_checkout(installed):
    db = installed.root / "demo.duckdb"
    done = run(installed.rankhouse, "demo", "--db", db, cwd=installed.cwd)
    assert done.returncode == 2
    assert done.stderr.startswith("error: rankhouse demo needs the source checkout") and "Traceback" not in done.stderr
    assert not db.exists()


def test_installed_project_runs_its_own_measure_and_its_test_outside_the_checkout(installed):
    """Issue 35's demonstration, from the wheel: rankhouse init, a measure of one's own and its test,
    run (passes), broken on purpose (fails with a diff, status 1), --update (rewritten)."""
    done = run(installed.rankhouse, "init", "my_measures", cwd=installed.cwd)
    assert done.returncode == 0, done.stderr
    project = installed.cwd / "my_measures"
    (project / "models" / "first_relevant_rank.sql").write_text(FIRST_RELEVANT)
    fixture = project / "tests" / "first_relevant"
    (fixture / "inputs").mkdir(parents=True)
    (fixture / "fixture.toml").write_text('models = "first_relevant_rank"\n')
    (fixture / "inputs" / "models.judged_ranking.csv").write_text(judged_csv(JUDGED))
    shown = run(installed.rankhouse, "models", "show", "first_relevant_rank", cwd=project)
    assert shown.returncode == 0 and "my_measures/models/first_relevant_rank.sql" in shown.stdout, shown.stderr
    assert run(installed.rankhouse, "test", cwd=project).returncode == 1  # no expected file yet
    done = run(installed.rankhouse, "test", "--update", cwd=project)
    assert (done.returncode, done.stdout.splitlines()[-1]) == (0, "0 passed, 1 written"), done.stderr
    expected = fixture / "first_relevant_rank.csv"
    oracle = "".join(",".join(row) + "\n" for row in [["study", "system", "query", "first_relevant"],
                                                      *first_relevant(JUDGED)])  # fmt: skip
    assert expected.read_text() == oracle
    done = run(installed.rankhouse, "test", "--project", project, cwd=installed.cwd)
    assert (done.returncode, done.stdout.splitlines()[-1]) == (0, "1 passed"), done.stderr
    expected.write_text(oracle.replace("s,a,q1,3", "s,a,q1,4"))  # broken on purpose
    done = run(installed.rankhouse, "test", cwd=project)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "          row (study=s, system=a, query=q1): first_relevant expected 4, got 3" in done.stdout.splitlines()
    done = run(installed.rankhouse, "test", "--update", cwd=project)
    assert (done.returncode, done.stdout.splitlines()[-1]) == (0, "0 passed, 1 updated")
    assert expected.read_text() == oracle
