"""Study outputs (issue 16, item 5; issue 34): the warehouse's own <db>.d/out/<study>/ unless --out says
otherwise, never a folder shared by two studies or two warehouses (refused before anything is written),
and run files named <system>.run (a run loaded from a.run written as a.run). Checked against the files on
disk and the inputs' bytes."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from clirunner import error_line, rankhouse_in_process
from conftest import TREC

from rankhouse.paths import STUDIES_DIR


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def files_under(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def run_protocol(root: Path) -> Path:
    """A TREC study whose runs are files named a.run and b.run (the trec_eval sample's two runs)."""
    (root / "data").mkdir()
    for name, source in (("a.run", "results.test"), ("b.run", "results.trunc"), ("qrels.test", "qrels.test")):
        shutil.copy(TREC / source, root / "data" / name)
    lines = ["[study]", 'name = "two_runs"', ""]
    for key, name, loader in (
        ("a", "a.run", "trec.run"),
        ("b", "b.run", "trec.run"),
        ("q", "qrels.test", "trec.qrels"),
    ):
        lines += [f"[inputs.{key}]", f'path = "data/{name}"', f'sha256 = "{sha(root / "data" / name)}"',
                  f'loader = "{loader}"', ""]  # fmt: skip
    lines += ["[parameters]", 'measures = ["AP"]', "", "[stages]", 'prepare = "run_ranking measure_requests"',
              'evaluate = "+run_measures"']  # fmt: skip
    path = root / "two_runs.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


# what `rankhouse report` adds to a study without contrasts (tests/report/test_report.py checks their content)
REPORT = ["figures/per-query.svg", "provenance.json", "report.html", "report.md"]


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """`rankhouse demo --study trec_sample` without --out, in a folder of its own."""
    root = tmp_path_factory.mktemp("outputs")
    done = rankhouse_in_process("demo", "--study", "trec_sample", "--db", root / "w.duckdb", "--quiet")
    assert done.returncode == 0, done.stderr
    return root


def test_demo_writes_out_study_in_the_warehouses_folder_and_nothing_else(demo):
    assert sorted(p.name for p in demo.iterdir()) == ["w.d", "w.duckdb"]
    assert sorted(p.name for p in (demo / "w.d" / "out").iterdir()) == ["trec_sample"]
    written = files_under(demo / "w.d" / "out" / "trec_sample")
    assert sorted(written) == [*REPORT[:1], "per_query.csv", *REPORT[1:], "results.json", "runs/results.test.run",
                               "runs/results.trunc.run"]  # fmt: skip
    assert json.loads(written["results.json"])["study"] == "trec_sample"
    for name in ("results.test", "results.trunc"):  # the runs as loaded: trec_eval's sample files, line for line
        assert parsed(written[f"runs/{name}.run"].decode()) == parsed((TREC / name).read_text())


def parsed(text: str) -> list[tuple]:
    """A TREC run's lines as (qid, docno, rank, score, tag), fields after the sixth left out as trec_eval does."""
    return [(q, d, int(r), float(s), t) for q, _, d, r, s, t in (line.split()[:6] for line in text.splitlines())]


def test_another_studys_folder_is_refused_before_anything_is_written(demo, tmp_path):
    protocol = run_protocol(tmp_path)
    taken = demo / "w.d" / "out" / "trec_sample"
    before = files_under(taken)
    db = tmp_path / "w.duckdb"
    for command in ("run", "evaluate"):
        line = error_line(rankhouse_in_process("study", command, protocol, "--db", db, "--out", taken))
        assert f"{taken} holds the results of study trec_sample" in line and "two_runs" in line
    assert files_under(taken) == before and not db.exists()
    line = error_line(rankhouse_in_process("demo", "--study", "banking77", "--db", db, "--out", taken))
    assert "holds the results of study trec_sample" in line and not db.exists()
    (tmp_path / "odd").mkdir()
    (tmp_path / "odd" / "results.json").write_text("[1, 2]")
    line = error_line(rankhouse_in_process("study", "run", protocol, "--db", db, "--out", tmp_path / "odd"))
    assert "a results.json that no study wrote" in line and not db.exists()


def test_study_run_writes_its_own_folder_and_names_run_files_after_their_systems(demo, tmp_path):
    protocol = run_protocol(tmp_path)
    done = rankhouse_in_process("study", "run", protocol, "--db", tmp_path / "w.duckdb", "--quiet")
    assert done.returncode == 0, done.stderr
    written = files_under(tmp_path / "w.d" / "out" / "two_runs")
    assert sorted(written) == [*REPORT[:1], "per_query.csv", *REPORT[1:], "results.json", "runs/a.run", "runs/b.run"]
    methods = json.loads(written["results.json"])["methods"]
    assert sorted(methods) == ["a.run", "b.run"]  # the systems, named after their files
    assert parsed(written["runs/a.run"].decode()) == parsed((TREC / "results.test").read_text())
    again = rankhouse_in_process("study", "run", protocol, "--db", tmp_path / "w.duckdb", "--quiet")
    assert again.returncode == 0 and files_under(tmp_path / "w.d" / "out" / "two_runs") == written  # rewritten


def test_a_second_study_in_the_warehouse_changes_nothing_of_the_first(demo, tmp_path):
    """Issue 34: two_runs in trec_sample's warehouse builds measure_requests (measures ["AP"]) and the runs'
    models (other run files) in its own namespace: trec_sample's freeze stays intact, and its files too."""
    from warehouse_files import state

    db = tmp_path / "w.duckdb"
    shutil.copy(demo / "w.duckdb", db)
    shutil.copytree(demo / "w.d", tmp_path / "w.d")
    ours = {k: v for k, v in state(db).items() if "trec_sample" in k}
    done = rankhouse_in_process("study", "run", run_protocol(tmp_path), "--db", db, "--quiet")
    assert done.returncode == 0, done.stderr
    status = rankhouse_in_process("study", "status", STUDIES_DIR / "trec_sample.toml", "--db", db).stdout
    assert "current    trec_sample-1: intact" in status, status
    assert {k: v for k, v in state(db).items() if "trec_sample" in k} == ours


def test_two_warehouses_in_one_folder_keep_their_own_freezes_and_outputs(tmp_path):
    """Issue 34: trec_sample in a.duckdb and then in b.duckdb beside it: each has its freeze and outputs
    (a.d/, b.d/), neither refuses the other's."""
    for name in ("a", "b"):
        done = rankhouse_in_process("demo", "--study", "trec_sample", "--db", tmp_path / f"{name}.duckdb", "--quiet")
        assert done.returncode == 0, done.stderr
    for name in ("a", "b"):
        home = tmp_path / f"{name}.d"
        assert sorted(p.name for p in (home / "freezes").iterdir()) == ["trec_sample-1.json"]
        assert json.loads((home / "out" / "trec_sample" / "results.json").read_text())["freeze_id"] == "trec_sample-1"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.d", "a.duckdb", "b.d", "b.duckdb"]
