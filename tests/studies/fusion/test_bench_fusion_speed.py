"""bench/fusion_speed.py at a tiny size: its floor (rrf and rsf in one DuckDB statement from the files) ranks
as rankhouse's fusion does, and its section shows the floor beside rankhouse and ranx."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from rankhouse.paths import ROOT

BENCH = ROOT / "bench"


@pytest.fixture
def bench(monkeypatch):
    """bench/fusion_speed.py as a module (bench/ is a folder of scripts: peers.py beside it on sys.path)."""
    monkeypatch.syspath_prepend(str(BENCH))
    return importlib.import_module("fusion_speed")


def lines(path):
    """Each line of a TREC run without its tag."""
    return [line.rsplit(" ", 1)[0] for line in path.read_text().splitlines()]


def tiny_runs(bench, folder):
    """30 queries, each arm listing its own 40 of a pool of 60 documents (bench.generate draws from ten
    million ids: slow at any size), scores distinct within an arm, some RRF sums tied across documents."""
    rng = np.random.default_rng(7)
    qids = np.char.add("q", np.arange(30).astype(str))
    for arm, scale in (("bm25", 10.0), ("dense", 1.0)):
        pools = np.stack([rng.permutation(60)[:40] for _ in qids])
        scores = np.sort(rng.random((30, 40)) * scale, axis=1)[:, ::-1]
        bench.write_trec(folder / f"{arm}.run", qids, pools, scores, arm)
    return folder


def test_the_floor_ranks_as_rankhouse_does(bench, tmp_path):
    data = tiny_runs(bench, tmp_path)
    fused = tmp_path / "fused's"  # a quote in the folder: COPY's path is an SQL literal
    fused.mkdir()
    bench.run_rankhouse(data, 40, fused, "two")
    floor = bench.run_floor(data, fused)
    assert 0 < floor["build"] < floor["seconds"]
    # rsf sums the same two rescaled scores: the same lines but for the tag; rrf sums in doubles where
    # rankhouse divides exact fractions once: the same documents in the same order, scores within 1e-15.
    assert lines(fused / "floor.rsf.run") == lines(fused / "rankhouse.two.rsf.run")
    ours = [line.split() for line in lines(fused / "rankhouse.two.rrf.run")]
    theirs = [line.split() for line in lines(fused / "floor.rrf.run")]
    assert [row[:4] for row in theirs] == [row[:4] for row in ours] and len(ours) > 30 * 40
    assert max(abs(float(a[4]) - float(b[4])) for a, b in zip(ours, theirs)) < 1e-15
    sample = {f"q{q}" for q in range(30)}
    assert bench.agreement(fused / "rankhouse.two.rrf.run", fused / "floor.rrf.run", sample)["identical"] == 30


def test_the_section_shows_the_floor_and_the_goals_against_it(bench):
    two = {
        "seconds": 4.0,
        "build": 3.0,
        "plan": 0.1,
        "load": 0.5,
        "models": {"fusion_rrf": 0.4},
        "writes": {"rrf": 0.5, "rsf": 0.5},
        "union": [1415.0, 1400.0, 1450.0],
        "peak_rss_mb": 1000.0,
    }
    every = {**two, "seconds": 8.0, "build": 6.0}
    ranx = {
        "seconds": 30.0,
        "build": 4.5,
        "peak_rss_mb": 2000.0,
        "warm": {"load": 2, "rrf": 1, "wsum": 1, "save": 26, "seconds": 30.0},
        "first_call": {"load": 16, "rrf": 12, "wsum": 6, "save": 30, "seconds": 64.0, "build": 34.0},
    }
    floor = {"seconds": 2.0, "build": 1.5, "peak_rss_mb": 900.0}
    check = {"queries": 100, "identical": 100, "up_to_ties": 100, "max_score_gap": 0.0}
    results = {
        "machine": {"date": "2026-12-05", "commit": "abc", "cores": 2, "memory_gb": 8, "load_average": 0.5},
        "setup": {"queries": 1000, "candidates": 1000, "seed": 1, "repeat": 1},
        "versions": {"rankhouse": "0.1", "duckdb": "2", "ranx": "0.3"}, "missing": [],
        "runs": {"rankhouse_two": [two], "rankhouse_all": [every], "ranx": [ranx], "floor": [floor]},
        "agreement": {"rrf": check, "rsf": check}, "floor_agreement": {"rrf": check, "rsf": check},
        "same_files": {"rrf": True, "rsf": True},
    }  # fmt: skip
    text = bench.section(results)
    assert (
        "| one DuckDB statement (floor): rrf + rsf from the files, nothing checked, then COPY | 2.00 | 15.00x faster"
        in text
    )
    assert "takes 2.00x its time files to fused files and 2.00x without writing." in text
    assert "3.00 s files to fused files (10x ranx warm: 1.50x the floor) and 1.50 s without writing" in text
    assert "(3x ranx warm: 1.00x the floor)" in text
    assert "Top-10 agreement, rankhouse rrf vs the floor's, 100 sampled queries: 100 identical" in text
