"""Seed 002's semantic chunker (rankhouse/studies/lanes/chunking.py) on hand-made texts whose chunks are
written out here, its invariants on generated ones, and the SQL function and model that use it beside the fixed-window
alternative (models/lanes/lane_semantic_chunks.sql, lane_chunks.sql)."""

from __future__ import annotations

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankhouse.functions import register
from rankhouse.studies.lanes.chunking import chunks, chunks_udf, units
from rankhouse.warehouse.dag import Project
from rankhouse.warehouse.render import render


def cut(text: str, size: int, overlap: int) -> list[str]:
    return [text[start : start + length] for start, length in chunks(text, size, overlap)]


def test_sentences_and_paragraphs_are_the_units():
    text = 'He said "stop." Then left! Why? Because.\n\nA new paragraph\nwith a line break. End'
    assert [text[s:e] for s, e in units(text, 100)] == [
        'He said "stop." ',
        "Then left! ",
        "Why? ",
        "Because.\n\n",
        "A new paragraph\nwith a line break. ",
        "End",
    ]


def test_hand_made_texts_chunk_as_written():
    text = "Alpha beta. Gamma delta! Epsilon? Zeta eta.\n\nNew para here. Last one"
    # 25 characters at most, 12 of overlap: "Zeta eta.\n\n" (11) would fit the overlap, but a chunk from it
    # could not take "New para here. " within 25, so the third chunk starts where the second ended
    assert cut(text, 25, 12) == ["Alpha beta. Gamma delta! ", "Epsilon? Zeta eta.\n\n", "New para here. Last one"]
    # 30 and 12: "Gamma delta! " (13) is longer than the overlap, so the second chunk starts after it; from
    # "Zeta eta.\n\n" (within the last 12 of the second) a chunk can take "New para here. " (26 <= 30)
    assert cut(text, 30, 12) == ["Alpha beta. Gamma delta! ", "Epsilon? Zeta eta.\n\n", "Zeta eta.\n\nNew para here. ",
                                 "Last one"]  # fmt: skip
    assert cut("Short text. Fits.", 3500, 350) == ["Short text. Fits."]
    assert chunks("", 3500, 350) == [(0, 0)]


def test_a_sentence_longer_than_a_chunk_is_cut_at_words_and_a_word_at_the_limit():
    text = "aaaa bbbb cccc dddd. eeeeeeeeeeeeeeeeeeee"
    assert [text[s:e] for s, e in units(text, 12)] == ["aaaa bbbb ", "cccc dddd. ", "eeeeeeeeeeee", "eeeeeeee"]
    assert cut(text, 12, 5) == ["aaaa bbbb ", "cccc dddd. ", "eeeeeeeeeeee", "eeeeeeee"]


def test_the_seeds_sizes_on_a_long_document():
    sentence = "The new card I ordered weeks ago has still not been delivered and the fee was charged twice. "
    text = sentence * 100  # 9,300 characters of 93-character sentences
    found = chunks(text, 3500, 350)
    assert len(sentence) == 93
    # 37 whole sentences fit 3,500 (3,441); the overlap is 3 sentences (279 <= 350, 4 would be 372), so
    # chunks start at 0, 3441 - 279 and 3162 + 3441 - 279, the last one with the 32 sentences left
    assert [length for _, length in found] == [3441, 3441, 2976]
    assert [start for start, _ in found] == [0, 3162, 6324]  # overlaps of 3 sentences: 279 <= 350
    assert "".join(text[s : s + n] for s, n in found[:1]) == sentence * 37


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.text(alphabet="ab é😀", min_size=0, max_size=40), st.sampled_from([". ", "! ", "\n\n", " "])),
             max_size=60),
    st.integers(min_value=5, max_value=120),
    st.data(),
)  # fmt: skip
def test_chunks_cover_the_text_within_the_size_and_overlap(parts, size, data):
    text = "".join(words + end for words, end in parts)
    overlap = data.draw(st.integers(min_value=0, max_value=size - 1))
    found = chunks(text, size, overlap)
    assert found == chunks(text, size, overlap)  # deterministic
    assert found[0][0] == 0 and sum(1 for _ in found) >= 1
    boundaries = {s for s, _ in units(text, size)}
    end = 0
    for start, length in found:
        assert length <= size
        assert start in boundaries or start == 0  # every chunk starts at a unit
        assert end - overlap <= start <= end  # overlap of at most `overlap`, and no gap
        assert start + length > end or len(found) == 1  # every chunk adds text
        end = start + length
    assert end == len(text)


def test_the_sql_function_and_model_match_the_python_chunker():
    con = duckdb.connect()
    register(con, ("semantic_chunks",))
    text = "Première phrase. Deuxième 😀 phrase! Troisième?\n\nQuatrième."
    got = con.execute("SELECT semantic_chunks(?, 30, 12)", [text]).fetchone()[0]
    assert got == chunks_udf(text, 30, 12)
    rows = con.execute(
        "SELECT substr(?, s.start + 1, s.length) FROM (SELECT unnest(semantic_chunks(?, 30, 12)) AS s)", [text, text]
    ).fetchall()
    assert [r[0] for r in rows] == cut(text, 30, 12)  # DuckDB's substr counts code points, as Python does
    assert con.execute("SELECT semantic_chunks(NULL, 30, 12)").fetchone()[0] is None
    with pytest.raises(ValueError):
        chunks("x", 10, 10)


@pytest.mark.parametrize("chunker", ["semantic", "window"])
def test_lane_chunks_follows_the_protocols_chunker(chunker):
    project = Project.load(params={"chunker": chunker})
    sql = render(
        project.models["lane_chunks"], {"chunker": chunker, "chunk_size": 20, "chunk_overlap": 6, "corpus": "c"}
    )
    assert ("models.lane_semantic_chunks" in sql) == (chunker == "semantic")
    con = duckdb.connect()
    register(con, ("semantic_chunks",))
    con.execute("CREATE SCHEMA models")
    text = "One two three. Four five six. Seven eight."
    con.execute("CREATE TABLE models.lane_candidates AS SELECT 'c' AS corpus, 0 AS doc_row, 'd0' AS doc_id")
    con.execute(
        "CREATE TABLE models.documents AS SELECT 'c' AS corpus, 0 AS doc_row, 'd0' AS doc_id, ? AS text", [text]
    )
    semantic = render(project.models["lane_semantic_chunks"], {"chunk_size": 20, "chunk_overlap": 6, "corpus": "c"})
    con.execute(f"CREATE TABLE models.lane_semantic_chunks AS {semantic}")
    rows = con.execute(f"SELECT chunk, start, length, text, chunks FROM ({sql}) ORDER BY chunk").fetchall()
    if chunker == "semantic":
        assert [r[3] for r in rows] == cut(text, 20, 6) == ["One two three. ", "Four five six. ", "Seven eight."]
    else:  # the named alternative: windows from 0, 14, 28 (size 20, step 14)
        assert [(r[1], r[3]) for r in rows] == [(0, text[0:20]), (14, text[14:34]), (28, text[28:48])]
    assert {r[4] for r in rows} == {len(rows)}
