"""Query blocks (rankhouse/loaders/query_blocks.py, raw.run_blocks): where each query's lines are in a
run file and whether they are in trec_eval's order; run_ranking ranks such a block by line position.
The oracle of every rank is the sort that run_ranking does without blocks."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rankhouse.loaders import load_run
from rankhouse.loaders.query_blocks import QueryBlocks
from rankhouse.warehouse import Warehouse
from rankhouse.warehouse.dag import Project
from rankhouse.warehouse.runner import Runner


def blocks_of(*chunks: list[tuple[str, str, float]]) -> list[tuple]:
    """QueryBlocks.rows() of a file given as chunks of (qid, docno, score) lines."""
    blocks, line = QueryBlocks(), 1
    for chunk in chunks:
        qids, docnos, scores = zip(*chunk)
        blocks.add(pa.array(qids), pa.array(docnos), pa.array(scores, pa.float64()), line)
        line += len(chunk)
    return blocks.rows()


def test_blocks_in_order_and_out_of_order():
    lines = [("q1", "d1", 3.0), ("q1", "d2", 2.0), ("q1", "d9", 2.0), ("q2", "d1", 1.0), ("q2", "d2", 5.0)]
    # q1: d2 before d9 at equal scores breaks docno descending; q2: 1.0 before 5.0 breaks score descending
    assert blocks_of(lines) == [("q1", 1, 3, False, False), ("q2", 4, 2, False, False)]
    fixed = [("q1", "d1", 3.0), ("q1", "d9", 2.0), ("q1", "d2", 2.0), ("q2", "d2", 5.0), ("q2", "d1", 1.0)]
    assert blocks_of(fixed) == [("q1", 1, 3, True, True), ("q2", 4, 2, True, True)]


def test_a_query_listed_in_two_places_is_in_no_order():
    lines = [("q1", "d1", 2.0), ("q2", "d1", 2.0), ("q1", "d2", 1.0), ("q3", "d1", 1.0), ("q3", "d0", 1.0)]
    assert blocks_of(lines) == [("q1", 1, 2, False, False), ("q2", 2, 1, True, True), ("q3", 4, 2, True, True)]


def test_doubles_apart_but_equal_as_floats_order_by_docno_in_float_order():
    # 1.00000001 and 1.0 are one float32: as floats they tie and d2 (the greater docno) comes first
    assert blocks_of([("q1", "d1", 1.00000001), ("q1", "d2", 1.0)]) == [("q1", 1, 2, True, False)]
    assert blocks_of([("q1", "d2", 1.00000001), ("q1", "d1", 1.0)]) == [("q1", 1, 2, True, True)]


def test_a_score_beyond_float32_leaves_no_block_in_float_order():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # and says nothing of it: numpy's overflow warning reached the user
        assert blocks_of([("q1", "d1", 1e39), ("q1", "d2", 1.0)]) == [("q1", 1, 2, True, False)]


def test_a_block_goes_on_across_chunks_and_its_boundary_pair_is_checked():
    first, second = [("q1", "d1", 3.0), ("q1", "d2", 2.0)], [("q1", "d3", 1.0), ("q2", "d1", 1.0)]
    assert blocks_of(first, second) == [("q1", 1, 3, True, True), ("q2", 4, 1, True, True)]
    broken = [("q1", "d3", 2.5), ("q2", "d1", 1.0)]  # 2.0 then 2.5: out of order across the chunks
    assert blocks_of(first, broken) == [("q1", 1, 3, False, False), ("q2", 4, 1, True, True)]
    assert blocks_of(first, [("q1", "d3", 2.0)]) == [("q1", 1, 3, False, False)]  # d2 before d3 at 2.0


def test_the_fast_reader_stores_the_blocks_it_found_across_its_chunks(wh, tmp_path, monkeypatch):
    from rankhouse.loaders import trec

    monkeypatch.setattr(trec, "FAST_BLOCK", 256)  # many chunks, so blocks span them
    lines = [f"q{i // 40} Q0 d{i} {i % 40 + 1} {100 - i % 40} t" for i in range(200)]
    path = tmp_path / "ordered.run"
    path.write_text("".join(line + "\n" for line in lines))
    load_run(wh, path, "r")
    expected = [("r", f"q{q}", 40 * q + 1, 40, True, True) for q in range(5)]
    assert wh.sql("SELECT * FROM raw.run_blocks ORDER BY first_line") == expected
    path.write_text("".join(line + "\n" for line in [*lines[1:], lines[0]]))  # q0 in two places
    load_run(wh, path, "r")  # replaces the run and its blocks
    assert wh.sql("SELECT * FROM raw.run_blocks ORDER BY first_line") == [
        ("r", "q0", 1, 40, False, False),
        *[("r", f"q{q}", 40 * q, 40, True, True) for q in range(1, 5)],
    ]


def test_the_general_reader_stores_every_query_in_no_order(wh, tmp_path):
    path = tmp_path / "two_spaces.run"
    path.write_text("q1 Q0 d1 1 2.0  t\n\nq1 Q0 d2 2 1.0  t\nq2 Q0 d2 2 1.0  t\n")  # doubled blanks: not simple
    load_run(wh, path, "r")
    assert wh.sql("SELECT count(*) FROM raw.runs") == [(3,)]
    assert wh.sql("SELECT * FROM raw.run_blocks ORDER BY qid") == [
        ("r", "q1", 1, 2, False, False),
        ("r", "q2", 4, 1, False, False),
    ]


QIDS = ["q1", "q2", "q3"]
DOCS = ["d0", "d1", "d2", "D3", "d10", "é4", "x6", "d7"]
SCORES = st.sampled_from([0.0, -0.0, 0.5, 1.0, 1.00000001, 2.5, -1.0]) | st.floats(-10, 10, allow_nan=False)
RUNS = st.dictionaries(
    st.sampled_from(QIDS), st.dictionaries(st.sampled_from(DOCS), SCORES, min_size=1, max_size=8), min_size=1
)


def ranks(wh: Warehouse, precision: str) -> list[tuple]:
    params = {"score_precision": precision}
    project = Project.load(params=params, closure=["run_ranking"])
    Runner(wh, project, params).run(project.select("+run_ranking"), force=True)
    return wh.sql("SELECT query_key, doc_key, rank FROM models.run_ranking ORDER BY ALL")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run=RUNS, order=st.sampled_from(["as drawn", "double", "float"]), precision=st.sampled_from(["double", "float"]))
def test_blocks_rank_as_the_sort_does(run, order, precision):
    """A run written as drawn (queries together, documents in any order) or sorted in trec_eval's order
    under either precision: the ranks from its blocks are the ranks of the sort alone."""
    import numpy as np

    lines = []
    for qid, docs in run.items():
        items = list(docs.items())
        if order != "as drawn":
            key = (lambda s: float(np.float32(s))) if order == "float" else float
            items.sort(key=lambda item: (key(item[1]), item[0].encode()), reverse=True)
        lines += [f"{qid} Q0 {d} 1 {s!r} tag" for d, s in items]
    with tempfile.TemporaryDirectory() as tmp, Warehouse(":memory:") as wh:
        path = Path(tmp) / "run"
        path.write_text("".join(line + "\n" for line in lines))
        load_run(wh, path, "r")
        assert wh.sql("SELECT count(*) FROM raw.run_blocks")[0][0] == len(run)  # every query, in order or not
        with_blocks = ranks(wh, precision)
        wh.sql("DELETE FROM raw.run_blocks")
        assert with_blocks == ranks(wh, precision)


@pytest.fixture
def wh():
    with Warehouse(":memory:") as warehouse:
        yield warehouse


def distinct_of(*chunks: list[tuple[str, str]]) -> bool:
    """QueryBlocks.distinct() of a file given as chunks of (qid, docno) lines (scores descending)."""
    blocks, line = QueryBlocks(), 1
    for chunk in chunks:
        qids, docnos = zip(*chunk)
        scores = [float(len(chunk) - i) for i in range(len(chunk))]
        blocks.add(pa.array(qids), pa.array(docnos), pa.array(scores, pa.float64()), line)
        line += len(chunk)
    return blocks.distinct()


def test_distinct_is_proved_within_blocks_and_across_chunks():
    assert distinct_of([("q1", "d1"), ("q1", "d2"), ("q2", "d1"), ("q2", "")])  # d1 in two queries is fine
    assert not distinct_of([("q1", "d1"), ("q1", "d2"), ("q1", "d1")])
    assert not distinct_of([("q1", ""), ("q1", "")])  # empty docnos hash alike too
    assert distinct_of([("q1", "d1"), ("q1", "d2")], [("q1", "d3"), ("q2", "d1")], [("q2", "d2")])
    # a repeat across the chunks of one block, two chunks back; and within the continued block
    assert not distinct_of([("q1", "d1"), ("q1", "d2")], [("q1", "d3")], [("q1", "d1"), ("q2", "d1")])
    assert not distinct_of([("q0", "d1"), ("q1", "d1")], [("q1", "d2"), ("q1", "d1")])
    # after the block ends, its docnos may come again in another query
    assert distinct_of([("q1", "d1"), ("q1", "d2")], [("q2", "d2"), ("q2", "d1")], [("q3", "d1")])


def test_distinct_is_not_proved_for_a_query_in_two_places_or_a_long_tail(monkeypatch):
    # q1 in two places may repeat a docno across them: the loader's check in DuckDB decides
    assert not distinct_of([("q1", "d1"), ("q2", "d1"), ("q1", "d2")])
    assert not distinct_of([("q1", "d1"), ("q2", "d1")], [("q1", "d1")])
    monkeypatch.setattr("rankhouse.loaders.query_blocks.TAIL_LIMIT", 2)
    assert not distinct_of([("q1", "d1"), ("q1", "d2"), ("q1", "d3")], [("q1", "d4")])
    assert distinct_of([("q1", "d1"), ("q1", "d2")], [("q2", "d4")])


@pytest.mark.parametrize("padded_width", [64, 2])
def test_hashes_of_sliced_and_odd_strings(padded_width, monkeypatch):
    """Equal strings hash equal, these different ones apart, padded to one width (64) or byte by byte (2)."""
    from rankhouse.loaders import query_blocks

    monkeypatch.setattr(query_blocks, "PADDED_WIDTH", padded_width)
    strings = pa.array(["x", "d1", "", "d1", "1d", "\u00e9\u00e9", "d10", "d1 ", "d1", "a" * 40]).slice(1)
    hashes = query_blocks._hashes(strings)
    assert len(hashes) == 9 and hashes[0] == hashes[2] == hashes[7]
    assert len({int(h) for h in hashes}) == 7  # d1, "", 1d, éé, d10, "d1 ", a...a


def test_a_run_repeating_a_document_is_refused_whichever_check_finds_it(wh, tmp_path, monkeypatch):
    """The blocks prove a run's lines distinct, or the check in DuckDB (REPEATED_HASHES) runs: a repeat is
    refused either way, naming its line."""
    from rankhouse.errors import InputError
    from rankhouse.loaders import trec

    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 3.0 t\nq1 Q0 d2 2 2.0 t\nq2 Q0 d1 1 2.0 t\nq1 Q0 d1 3 1.0 t\n")  # q1 in two places
    first = r"duplicate document for this query \(qid q1, docno d1, first at line 1\)"
    with pytest.raises(InputError, match=r"run.txt:4: " + first):
        load_run(wh, run)
    run.write_text("q1 Q0 d1 1 3.0 t\nq1 Q0 d2 2 2.0 t\nq1 Q0 d1 3 1.0 t\nq2 Q0 d1 1 2.0 t\n")  # one block
    with pytest.raises(InputError, match=r"run.txt:3: " + first):
        load_run(wh, run)
    run.write_text("q1 Q0 d1 1 3.0 t\nq1 Q0 d2 2 2.0 t\nq2 Q0 d1 1 2.0 t\n")
    monkeypatch.setattr(trec, "REPEATED_HASHES", "SELECT error('not needed: the blocks proved it')")
    assert load_run(wh, run).rows == 3
