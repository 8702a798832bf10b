"""The fast reader's stages (loaders/trec.py _simple_tables): parsing in one thread and a run's query blocks in
another, each a chunk ahead of the next stage. They hand over every chunk in file order, find the same
blocks as one thread doing both, and stop, both of them, when the caller stops early."""

from __future__ import annotations

import threading

from rankhouse.loaders import trec
from rankhouse.loaders.lines import SimpleScan
from rankhouse.loaders.query_blocks import QueryBlocks


def _run_file(path, queries: int = 40, docs: int = 50) -> None:  # noqa: ANN001
    lines = [f"q{q} Q0 d{d} {d + 1} {docs - d}.5 tag" for q in range(queries) for d in range(docs)]
    lines[7], lines[8] = lines[8], lines[7]  # query 0 out of order
    path.write_text("\n".join(lines) + "\n")


def _readers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "rankhouse-fast-reader"]


def test_chunks_come_in_file_order_and_the_blocks_are_found(tmp_path, monkeypatch):
    monkeypatch.setattr(trec, "FAST_BLOCK", 1 << 12)  # many chunks; blocks across their boundaries
    _run_file(tmp_path / "run")
    blocks = QueryBlocks()
    with open(tmp_path / "run", "rb") as f:
        tables = list(trec._simple_tables(SimpleScan(f, 1 << 12), trec.RUN, blocks))
    assert len(tables) > 10
    lines = [n for t in tables for n in t["line_no"].to_pylist()]
    assert lines == list(range(1, 2001))
    rows = blocks.rows()
    assert [r[0] for r in rows] == [f"q{q}" for q in range(40)]
    assert [(r[1], r[2]) for r in rows] == [(1 + 50 * q, 50) for q in range(40)]
    assert [r[3] for r in rows] == [False] + [True] * 39  # in trec_eval's order but query 0
    assert blocks.distinct()
    assert not _readers()


def test_both_stages_stop_when_the_caller_stops_early(tmp_path, monkeypatch):
    monkeypatch.setattr(trec, "FAST_BLOCK", 1 << 12)
    _run_file(tmp_path / "run")
    with open(tmp_path / "run", "rb") as f:
        tables = trec._simple_tables(SimpleScan(f, 1 << 12), trec.RUN, QueryBlocks())
        next(tables)
        assert len(_readers()) == 2  # the parsing thread and the blocks' thread
        tables.close()
        assert not _readers()
