"""bench/spark_scale.py at a tiny size: its generated files are deterministic and cached, its measurement
gives pytrec_eval's numbers on them (the real oracle), and its equality check fails when it should."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import pytrec_eval
from oracles import pytrec_per_query

from rankhouse.paths import ROOT

BENCH = ROOT / "bench"
QUERIES, DOCS = 200, 20
MEASURES = ["AP", "nDCG@10", "P@10", "R@100", "RR"]


@pytest.fixture(scope="module")
def bench():
    """bench/spark_scale.py as a module (bench/ is a folder of scripts: peers.py beside it on sys.path)."""
    sys.path.insert(0, str(BENCH))
    try:
        spec = importlib.util.spec_from_file_location("spark_scale", BENCH / "spark_scale.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.path.remove(str(BENCH))


@pytest.fixture(scope="module")
def files(bench, tmp_path_factory):
    return bench.generate(tmp_path_factory.mktemp("cache"), QUERIES, DOCS)


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_generated_files_are_deterministic_cached_and_a_prefix_of_larger_ones(bench, files, tmp_path):
    run, qrels = files
    lines = run.read_text().splitlines()
    assert len(lines) == QUERIES * DOCS
    assert lines[0].split()[1:] == ["Q0", lines[0].split()[2], "1", "1", "scale"]
    again = bench.generate(tmp_path / "other", QUERIES, DOCS)  # the same recipe elsewhere: the same bytes
    assert [digest(p) for p in again] == [digest(p) for p in files]
    before = [p.stat().st_mtime_ns for p in again]
    assert bench.generate(tmp_path / "other", QUERIES, DOCS) == again  # reused, not rewritten
    assert [p.stat().st_mtime_ns for p in again] == before
    again[0].unlink()  # a file deleted to free disk: written again, the same bytes
    assert bench.generate(tmp_path / "other", QUERIES, DOCS) == again
    assert [digest(p) for p in again] == [digest(p) for p in files]
    seeded = bench.generate(tmp_path / "seeded", QUERIES, DOCS, seed=18)
    assert digest(seeded[0]) != digest(run)
    # a larger run starts with the queries of a smaller one (blocks of BLOCK queries, each its own Generator)
    larger = bench.generate(tmp_path / "larger", bench.BLOCK + 50, DOCS)
    assert larger[0].read_text().splitlines()[: QUERIES * DOCS] == lines
    qrels_lines = qrels.read_text().splitlines()
    assert larger[1].read_text().splitlines()[: len(qrels_lines)] == qrels_lines
    assert json.loads((run.parent / "recipe.json").read_text()) == bench.recipe(QUERIES, DOCS)


def test_documents_are_distinct_and_every_query_has_a_relevant_one(files):
    run, qrels = files
    pairs = [tuple(line.split()[:3:2]) for line in run.read_text().splitlines()]
    assert len(set(pairs)) == len(pairs)
    judged = [line.split() for line in qrels.read_text().splitlines()]
    assert len({(q, d) for q, _, d, _ in judged}) == len(judged)
    assert {q for q, _, _, rel in judged if int(rel) > 0} == {f"q{i}" for i in range(QUERIES)}
    retrieved = set(pairs)
    unretrieved = [(q, d) for q, _, d, _ in judged if (q, d) not in retrieved]
    assert len(unretrieved) == QUERIES * 5


def test_measure_gives_pytrec_evals_values_per_query(bench, files, tmp_path):
    run, qrels = files
    result = bench.measure("duckdb", run, qrels, tmp_path / "values.parquet")
    with open(qrels) as q, open(run) as r:
        oracle = pytrec_per_query(pytrec_eval.parse_qrel(q), pytrec_eval.parse_run(r), MEASURES)
    values = pq.read_table(tmp_path / "values.parquet").to_pylist()
    assert len(values) == QUERIES * len(MEASURES) and result["queries"] == QUERIES
    for row in values:
        assert row["value"] == pytest.approx(oracle[row["query"]][row["measure"]], rel=1e-12, abs=1e-15)
    for measure in MEASURES:
        assert result["means"][measure] == pytest.approx(np.mean([v[measure] for v in oracle.values()]), rel=1e-12)
    assert 0 < result["means"]["AP"] < result["means"]["R@100"] < 1  # not a degenerate run
    assert result["warehouse"] == "memory"


def test_measure_in_a_warehouse_file_gives_the_same_values(bench, files, tmp_path):
    run, qrels = files
    memory = bench.measure("duckdb", run, qrels, tmp_path / "memory.parquet")
    stored = bench.measure("duckdb", run, qrels, tmp_path / "file.parquet", warehouse=tmp_path / "w.duckdb")
    assert stored["warehouse"] == "file" and (tmp_path / "w.duckdb").stat().st_size > 0
    assert stored["means"] == memory["means"]
    assert bench.compare(tmp_path / "memory.parquet", tmp_path / "file.parquet")["max_relative_difference"] == 0


def write_values(path, rows):
    pq.write_table(pa.table({k: [r[i] for r in rows] for i, k in enumerate(["query", "measure", "value"])}), path)


def test_compare_fails_when_it_should(bench, tmp_path):
    rows = [("q0", "AP", 0.25), ("q0", "RR", 1.0), ("q1", "AP", 0.0), ("q1", "RR", None)]
    a = tmp_path / "a.parquet"
    write_values(a, rows)

    def against(changed):
        b = tmp_path / "b.parquet"
        write_values(b, changed)
        return bench.compare(a, b)

    same = against(rows[::-1])  # row order does not matter
    assert same["equal"] and same["rows"] == 4 and same["max_relative_difference"] == 0
    close = against([("q0", "AP", 0.25 * (1 + 1e-14)), *rows[1:]])
    assert close["equal"] and 0 < close["max_relative_difference"] < 1e-12
    far = against([("q0", "AP", 0.25 * (1 + 1e-9)), *rows[1:]])
    assert not far["equal"] and far["different"] == 1 and far["examples"][0][:2] == ["q0", "AP"]
    assert far["max_relative_difference"] == pytest.approx(1e-9, rel=1e-3)
    zero = against([*rows[:2], ("q1", "AP", 1e-300), rows[3]])  # against 0 any difference is relative 1
    assert not zero["equal"] and zero["max_relative_difference"] == 1
    missing = against(rows[:3])
    assert not missing["equal"] and missing["one_side"] == 1 and missing["different"] == 1
    null = against([*rows[:3], ("q1", "RR", 0.5)])  # a value where the other side has NULL
    assert not null["equal"] and null["examples"] == [["q1", "RR", None, 0.5]]
    renamed = against([(q, "nDCG@10" if m == "AP" else m, v) for q, m, v in rows])
    assert not renamed["equal"] and renamed["one_side"] == 4


def test_docs_section_is_rewritten_between_the_markers_only(bench, tmp_path):
    page = tmp_path / "performance.md"
    page.write_text(f"# head\n\nbefore\n{bench.BEGIN}\nold figures\n{bench.END}\nafter\n")
    bench.rewrite_docs(page, "new figures\n")
    assert page.read_text() == f"# head\n\nbefore\n{bench.BEGIN}\nnew figures\n{bench.END}\nafter\n"
    page.write_text("no markers\n")
    with pytest.raises(SystemExit, match="needs one line"):
        bench.rewrite_docs(page, "new figures\n")
    assert page.read_text() == "no markers\n"  # refused: nothing written


def test_write_docs_and_its_old_name_readme_write_to_docs_performance(bench):
    """`--write-docs` (and `--readme`, its old name) rewrite the script's section of docs/performance.md,
    which holds each writing script's markers once."""
    import argparse

    import peers

    assert peers.PERFORMANCE == ROOT / "docs" / "performance.md"
    parser = argparse.ArgumentParser()
    peers.add_write_docs_option(parser)
    assert parser.parse_args(["--readme"]).write_docs and parser.parse_args(["--write-docs"]).write_docs
    assert not parser.parse_args([]).write_docs
    text = peers.PERFORMANCE.read_text()
    scripts = sorted((ROOT / "bench").glob("*.py"))
    writers = [p.name for p in scripts if "add_write_docs_option(parser)" in p.read_text()]
    assert writers == ["banking77_speed.py", "demo_speed.py", "eval_speed.py", "fusion_speed.py", "spark_scale.py"]
    for script in writers:
        begin, end = peers.markers(script)
        assert text.count(begin) == text.count(end) == 1 and text.index(begin) < text.index(end), script
        assert begin not in (ROOT / "README.md").read_text(), script


def test_disk_is_measured_for_folders_globs_and_files(bench, tmp_path):
    import peers

    (tmp_path / "a" / "spill").mkdir(parents=True)
    (tmp_path / "a" / "spill" / "x").write_bytes(b"0" * 2**20)
    (tmp_path / "w.duckdb").write_bytes(b"0" * 2**19)
    assert peers.folder_mb(tmp_path / "a") == 1.0
    assert peers.folder_mb(tmp_path / "*" / "spill") == 1.0
    assert peers.folder_mb(tmp_path / "w.duckdb") == 0.5  # a file: its own size
    assert peers.folder_mb(tmp_path) == 1.5
    assert peers.folder_mb(tmp_path / "none") == 0.0


SCRIPTS = sorted(p.stem for p in BENCH.glob("*.py") if p.stem != "peers")  # every script but the shared module


@pytest.mark.parametrize("script", SCRIPTS)
def test_every_bench_script_takes_a_folder_as_out_and_refuses_a_file_before_it_measures(script, tmp_path):
    """One convention for the bench scripts: `--out DIR`, the results in DIR/<script>.json; a file as --out
    is refused at once (it used to fail with IsADirectoryError after the whole run)."""
    import subprocess

    taken = tmp_path / "results.json"
    taken.write_text("kept")
    done = subprocess.run([sys.executable, str(BENCH / f"{script}.py"), "--out", str(taken)],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    assert (
        done.stderr.strip() == f"--out {taken}: is a file; --out names a folder (the results go to {script}.json in it)"
    )
    assert taken.read_text() == "kept" and sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]


@pytest.mark.parametrize("in_file", [True, False])
def test_the_bench_watches_where_the_warehouse_spills_and_keeps_its_tables(bench, tmp_path, monkeypatch, in_file):
    """The DuckDB process's spill and warehouse files as the bench measures them are the folders a warehouse
    uses (its sessions' temp_directory, its file, store, namespaces and labels): the 4x stage once reported
    0 MB spilled while 31 GB were on disk, after the spill moved into each session's scratch folder."""
    import glob
    import tempfile
    from pathlib import Path

    import peers

    from rankhouse.warehouse import Warehouse

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    file = tmp_path / "scale.duckdb" if in_file else None
    folders = bench.duckdb_folders(tmp, file)
    with Warehouse(file or ":memory:") as wh:
        spill = Path(wh.sql("SELECT current_setting('temp_directory')")[0][0])
        spill.mkdir(parents=True, exist_ok=True)
        (spill / "block").write_bytes(b"0" * 2**20)
        watched = {found for pattern in folders["duckdb_spill"] for found in glob.glob(str(pattern))}
        assert str(spill) in watched and peers.folder_mb(folders["duckdb_spill"]) == 1.0, (spill, watched)
        if in_file:
            layout = wh.layout
            kept = [layout.store, layout.studies, layout.labels]
            for folder in kept:
                folder.mkdir(parents=True, exist_ok=True)
                (folder / "t.duckdb").write_bytes(b"0" * 2**19)
            assert peers.folder_mb(folders["duckdb_file"]) >= 1.5
