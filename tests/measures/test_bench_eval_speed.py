"""bench/eval_speed.py at a tiny size: its floor (one DuckDB statement from the files) gives pytrec_eval's
means, and its tables show the floor and, with TREC_EVAL, the whole processes (or say they were left out)."""

from __future__ import annotations

import importlib
import json

import pytest

from rankhouse.paths import ROOT

BENCH = ROOT / "bench"


@pytest.fixture
def bench(monkeypatch):
    """bench/eval_speed.py as a module (bench/ is a folder of scripts: peers.py beside it on sys.path)."""
    monkeypatch.syspath_prepend(str(BENCH))
    return importlib.import_module("eval_speed")


def test_the_floor_gives_pytrec_evals_means(bench, tmp_path):
    run, qrels = bench.generate(tmp_path, 40, 100)
    floor, reference = bench.run_floor(str(run), str(qrels)), bench.run_pytrec_eval(str(run), str(qrels))
    assert floor["values"] == pytest.approx(reference["values"], abs=1e-12)


def results(processes: bool) -> dict:
    """What main() gathers, for one size of 10 queries, with or without the whole processes."""
    row = {"seconds": 2.0, "runs": [2.0], "peak_rss_mb": 100.0, "values": [0.5], "max_difference_from_reference": 0.0}
    size = {"queries": 10, "docs": 100, "run_mb": 1.0, "systems": {
        "rankhouse": row, "pytrec_eval": {**row, "seconds": 6.0, "runs": [6.0]},
        "one DuckDB statement (floor)": {**row, "seconds": 1.0, "runs": [1.0]},
    }}  # fmt: skip
    if processes:
        size["processes"] = {
            "rankhouse eval": {**row, "seconds": 3.0, "runs": [3.0, 3.5], "cpu": [4.0, 4.5]},
            "trec_eval": {**row, "seconds": 9.0, "runs": [9.0, 9.5], "cpu": [8.9, 9.4]},
        }
    machine = {"date": "2026-12-05", "commit": "abc", "cores": 2, "memory_gb": 8, "load_average": 0.5}
    return {"machine": machine, "versions": {"rankhouse": "0.1"}, "missing": [], "repeat": 2,
            "trec_eval": "/x/trec_eval" if processes else None, "sizes": [size]}  # fmt: skip


def test_the_tables_show_the_floor_and_the_whole_processes(bench):
    text = bench.section(results(processes=True))
    assert "| one DuckDB statement (floor), the same measures read from the files | 1.00 | 2.00x faster |" in text
    assert "| trec_eval | 9.00 (9.00, 9.50) | 3.00x slower | 8.90, 9.40 | 100 |" in text
    assert "| rankhouse eval | 3.00 (3.00, 3.50) | 1.00x | 4.00, 4.50 | 100 |" in text
    assert "TREC_EVAL not set" not in text
    text = bench.section(results(processes=False))
    assert "trec_eval (the C program): TREC_EVAL not set, whole processes left out." in text
    assert "Whole process" not in text


def test_from_results_renders_an_earlier_run_and_measures_nothing(bench, tmp_path, monkeypatch, capsys):
    earlier = tmp_path / "eval_speed.json"
    earlier.write_text(json.dumps(results(processes=True)))
    monkeypatch.setattr(bench, "measure", lambda *a, **k: pytest.fail("measured"))
    monkeypatch.setattr("sys.argv", ["eval_speed.py", "--from-results", str(earlier)])
    bench.main()
    assert bench.section(results(processes=True)) in capsys.readouterr().out
