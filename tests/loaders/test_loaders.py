"""TREC loaders: bad input names the file, the line and the rule, and leaves the warehouse unchanged."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest
from conftest import TREC
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rankhouse.errors import InputError
from rankhouse.loaders import load_qrels, load_run, write_run


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def snapshot(wh) -> tuple:
    """Everything a load can touch: runs, sources and (through a fresh gate) the qrels."""
    runs = wh.sql("SELECT * FROM raw.runs ORDER BY run_id, line")
    sources = wh.sql("SELECT table_name, name, sha256, rows FROM meta.sources ORDER BY ALL")
    wh.open_gate()
    qrels = wh.sql("SELECT * FROM gate.qrels ORDER BY line")
    label_sources = wh.sql("SELECT table_name, name, sha256, rows FROM gate.meta.sources ORDER BY ALL")
    wh.close_gate()
    return runs, sources, qrels, label_sources


GOOD_RUN = "q1 Q0 d1 1 2.5 tag\nq1 Q0 d2 2 1.5 tag\n"

BAD_RUNS = [
    ("q1 Q0 d1 1 2.5 tag\nq1 Q0 d2 2 1.5\n", 2, "expected 6 fields"),
    ("q1 Q0 d1 1 2.5 tag\n\nq1 Q0 d2 x 1.5 tag\n", 3, "rank is not a whole number"),
    ("q1 Q0 d1 1 2.5 tag\nq1 Q0 d2 2 high tag\n", 2, "score is not a number"),
    ("q1 Q0 d1 1 nan tag\n", 1, "score is NaN or infinite"),
    ("q1 Q0 d1 1 2.5 tag\nq1 Q0 d2 2 -inf tag\n", 2, "score is NaN or infinite"),
    ("q1 Q0 d1 1 2.5 tag\nq2 Q0 d1 1 2.5 tag\n# note\nq1 Q0 d1 3 0.5 tag\n", 4, "duplicate document for this query"),
    ("", 1, "no run lines"),
    ("# only a comment\n\n", 1, "no run lines"),
    (b"q1 Q0 d1 1 2.5 tag\nq1 Q0 d\xff2 2 1.5 tag\n", 2, "not valid UTF-8"),
]


@pytest.mark.parametrize(("text", "line", "rule"), BAD_RUNS)
def test_bad_run_names_file_line_rule_and_loads_nothing(wh, tmp_path, text, line, rule):
    load_run(wh, write(tmp_path, "good.run", GOOD_RUN))
    before = snapshot(wh)
    bad = write(tmp_path, "bad.run", text)
    with pytest.raises(InputError) as err:
        load_run(wh, bad)
    assert (err.value.path, err.value.line) == (str(bad), line)
    assert rule in err.value.rule
    assert str(bad) in str(err.value) and f":{line}:" in str(err.value)
    assert snapshot(wh) == before


BAD_QRELS = [
    ("q1 0 d1 1\nq1 0 d2\n", 2, "expected 4 fields"),
    ("q1 0 d1 1\nq1 0 d2 1 extra\n", 2, "expected 4 fields"),
    ("q1 0 d1 1\nq1 0 d2 1.5\n", 2, "rel is not a whole number"),
    ("q1 0 d1 1\nq1 0 d2 0\nq1 0 d1 2\n", 3, "judged twice"),
    ("", 1, "no qrels lines"),
]


@pytest.mark.parametrize(("text", "line", "rule"), BAD_QRELS)
def test_bad_qrels_names_file_line_rule_and_loads_nothing(wh, tmp_path, text, line, rule):
    load_qrels(wh, write(tmp_path, "good.qrels", "q1 0 d1 1\n"))
    before = snapshot(wh)
    bad = write(tmp_path, "bad.qrels", text)
    with pytest.raises(InputError) as err:
        load_qrels(wh, bad)
    assert (err.value.line, rule in err.value.rule) == (line, True)
    assert snapshot(wh) == before


def test_error_counts_the_other_bad_lines(wh, tmp_path):
    bad = write(tmp_path, "bad.run", "q1 Q0 d1 1 x tag\nq1 Q0 d2 1 y tag\nq1 Q0 d3 1 z tag\n")
    with pytest.raises(InputError, match="2 more bad lines"):
        load_run(wh, bad)


def test_negative_grades_and_comments_load(wh):
    result = load_qrels(wh, TREC / "qrels.rel_level")
    wh.open_gate()
    assert wh.sql("SELECT min(rel), max(rel) FROM gate.qrels") == [(-1, 4)]
    assert result.rows == wh.sql("SELECT count(*) FROM gate.qrels")[0][0]
    with_comments = load_qrels(wh, TREC / "qrels.test.with-comments")
    assert with_comments.rows == len(
        [x for x in (TREC / "qrels.test.with-comments").read_text().splitlines() if not x.startswith("#")]
    )


def test_same_bytes_twice_is_a_no_op_that_says_so(wh):
    first = load_run(wh, TREC / "results.test")
    second = load_run(wh, TREC / "results.test")
    assert (first.status, second.status) == ("loaded", "unchanged")
    assert "already loaded" in str(second)
    assert wh.sql("SELECT count(*) FROM raw.runs") == [(1500,)]
    assert wh.sql("SELECT count(*) FROM meta.sources") == [(1,)]
    assert load_qrels(wh, TREC / "qrels.test").status == "loaded"
    assert load_qrels(wh, TREC / "qrels.test").status == "unchanged"


def test_new_bytes_under_the_same_name_replace_the_run(wh, tmp_path):
    load_run(wh, write(tmp_path, "a.run", GOOD_RUN), run_id="a")
    result = load_run(wh, write(tmp_path, "b.run", "q9 Q0 d9 1 1.0 other\n"), run_id="a")
    assert result.status == "replaced"
    assert wh.sql("SELECT qid, docno, tag FROM raw.runs") == [("q9", "d9", "other")]
    assert wh.sql("SELECT rows, path FROM meta.sources") == [(1, str(tmp_path / "b.run"))]


def test_runs_sit_side_by_side(wh):
    load_run(wh, TREC / "results.test")
    load_run(wh, TREC / "results.trunc")
    assert wh.sql("SELECT run_id, count(*) FROM raw.runs GROUP BY run_id ORDER BY run_id") == [
        ("results.test", 1500),
        ("results.trunc", 584),
    ]


def test_meta_sources_records_hash_rows_loader(wh):
    import hashlib

    load_run(wh, TREC / "results.test")
    sha = hashlib.sha256((TREC / "results.test").read_bytes()).hexdigest()
    assert wh.sql("SELECT table_name, name, sha256, rows, loader FROM meta.sources") == [
        ("raw.runs", "results.test", sha, 1500, "trec.run")
    ]


def test_labels_never_enter_the_main_file(tmp_path):
    from warehouse_files import files_of

    from rankhouse.warehouse import Warehouse

    db = tmp_path / "w.duckdb"
    with Warehouse(db) as wh:
        load_run(wh, TREC / "results.test")
        load_qrels(wh, TREC / "qrels.test")
    labels = tmp_path / "w.d" / "labels" / "default.duckdb"
    assert labels.exists()
    for name, path in files_of(db).items():
        with duckdb.connect(str(path), read_only=True) as con:
            tables = {t for (t,) in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        assert ("qrels" in tables) == (path == labels), name


def test_trailing_fields_after_the_tag_are_ignored_as_in_trec_eval(wh):
    load_run(wh, TREC / "results.trunc")
    assert wh.sql("SELECT count(*), count(DISTINCT tag) FROM raw.runs") == [(584, 1)]


def test_write_run_round_trips(wh, tmp_path):
    load_run(wh, TREC / "results.test")
    out = tmp_path / "copy.run"
    assert write_run(wh, "results.test", out) == 1500
    load_run(wh, out, run_id="copy")
    original = wh.sql("SELECT qid, docno, rank, score, tag FROM raw.runs WHERE run_id = 'results.test' ORDER BY line")
    copied = wh.sql("SELECT qid, docno, rank, score, tag FROM raw.runs WHERE run_id = 'copy' ORDER BY line")
    assert copied == original


@pytest.mark.parametrize(("name", "kind"), [("results.comment.test", "run"), ("qrels.comment.test", "qrels")])
def test_fast_and_general_readers_load_the_same_rows(tmp_path, monkeypatch, name, kind):
    """A simple file loads straight from DuckDB's CSV reader, with the same rows as the general reader."""
    from rankhouse.loaders import trec
    from rankhouse.warehouse import Warehouse

    staged = []
    real_stage = trec._stage_and_check
    monkeypatch.setattr(trec, "_stage_and_check", lambda *args: staged.append(args) or real_stage(*args))
    tables = []
    for reader in ("fast", "general"):
        if reader == "general":
            monkeypatch.setattr(trec, "_load_simple", lambda *args: (_ for _ in ()).throw(trec._NotSimple()))
        with Warehouse(tmp_path / f"{reader}.duckdb") as wh:
            (load_run if kind == "run" else load_qrels)(wh, TREC / name)
            wh.open_gate()
            table = "raw.runs" if kind == "run" else "gate.qrels"
            tables.append(wh.sql(f"SELECT * FROM {table} ORDER BY line"))
        assert len(staged) == (0 if reader == "fast" else 1)
    assert tables[0] == tables[1]
    assert len(tables[0]) == (TREC / name).read_bytes().count(b"\n")


def simple_run(lines: int) -> list[str]:
    """A run in the simple layout (single spaces): 100 documents per query, ranks 1-100, distinct scores."""
    return [f"q{i // 100} Q0 d{i} {i % 100 + 1} {1 - (i % 100) / 100} t" for i in range(lines)]


def test_the_fast_reader_numbers_lines_across_its_blocks(wh, tmp_path, monkeypatch):
    """The fast reader streams the file in blocks (here of 1 KiB: 3,000 lines of about 25 bytes are 72
    of them); each row keeps its line number, as the general reader gives it."""
    from rankhouse.loaders import trec

    staged = []
    real_stage = trec._stage_and_check
    monkeypatch.setattr(trec, "_stage_and_check", lambda *args: staged.append(args) or real_stage(*args))
    monkeypatch.setattr(trec, "FAST_BLOCK", 1024)
    lines = simple_run(3000)
    load_run(wh, write(tmp_path, "blocks.run", "\n".join(lines) + "\n"))
    assert not staged
    expected = [(i, line.split()[2], float(line.split()[4])) for i, line in enumerate(lines, start=1)]
    assert wh.sql("SELECT line, docno, score FROM raw.runs ORDER BY line") == expected


@pytest.mark.parametrize(
    ("broken", "rule"),
    [("q9 Q0 d9 9 high t", "score"), ("q9 Q0 d9 9 0.5", "6 fields"), ("q9 Q0 d9 9 inf t", "finite")],
)
def test_a_break_in_a_later_block_rolls_back_to_the_general_reader(wh, tmp_path, monkeypatch, broken, rule):
    """A line that breaks a rule far into the file, after blocks were already inserted, rolls the fast
    load back; the general reader names its line and nothing is loaded."""
    from rankhouse.loaders import trec

    monkeypatch.setattr(trec, "FAST_BLOCK", 1024)
    lines = simple_run(3000)
    lines[2500] = broken
    path = write(tmp_path, "late.run", "\n".join(lines) + "\n")
    with pytest.raises(InputError, match=f"late.run:2501: .*{rule}"):
        load_run(wh, path)
    assert wh.sql("SELECT count(*) FROM raw.runs") == [(0,)]
    assert wh.sql("SELECT count(*) FROM meta.sources") == [(0,)]


def general_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: Path) -> list[tuple]:
    """The rows the general reader alone loads from `path` (the oracle of the fast reader)."""
    from rankhouse.loaders import trec
    from rankhouse.warehouse import Warehouse

    with monkeypatch.context() as patched, Warehouse(tmp_path / "general.duckdb") as other:
        patched.setattr(trec, "_load_simple", lambda *args: (_ for _ in ()).throw(trec._NotSimple()))
        load_run(other, path)
        return other.sql("SELECT * FROM raw.runs ORDER BY line")


def test_a_plain_file_is_parsed_as_it_is_read_never_whole(wh, tmp_path, monkeypatch):
    """A simple run file streams from disk through the scan into the fast reader: it is never read
    whole, nor copied (sources.copy_input is not called), and the SHA-256 recorded is hashlib's of its bytes."""
    import hashlib

    from rankhouse.loaders import sources, trec

    monkeypatch.setattr(trec, "FAST_BLOCK", 1024)
    monkeypatch.setattr(sources, "copy_input", lambda path, folder: pytest.fail(f"{path} was copied"))
    path = write(tmp_path, "plain.run", "\n".join(simple_run(3000)) + "\n")
    result = load_run(wh, path)
    assert (result.status, result.rows) == ("loaded", 3000)
    assert wh.sql("SELECT sha256 FROM meta.sources") == [(hashlib.sha256(path.read_bytes()).hexdigest(),)]
    assert load_run(wh, path).status == "unchanged"


@pytest.mark.parametrize(
    "late",
    [
        "q24 Q0 d2400 1 1.0 a\tb",  # a tab in a file of spaces: the general reader's tag is `a`
        "q24 Q0 d2400 1 1.0 t\r",  # a CRLF line: the general reader's tag is `t`
        "q24 Q0 d2400 1 1.0 t  x",  # a doubled blank
        "q24 Q0 d2400 1 1.0 t\u2003x",  # non-ASCII whitespace (refused, naming line 2401)
    ],
)
def test_a_file_off_the_layout_after_its_head_loads_as_the_general_reader_reads_it(wh, tmp_path, monkeypatch, late):
    """The head decides the separator; a line off the layout found later (after blocks were inserted:
    line 2401 of 3,000, blocks of 1 KiB) rolls the fast load back, and the rows, or the error, are the
    general reader's."""
    from rankhouse.loaders import trec

    monkeypatch.setattr(trec, "FAST_BLOCK", 1024)
    lines = simple_run(3000)
    lines[2400] = late
    path = write(tmp_path, "late.run", "\n".join(lines) + "\n")
    try:
        expected = general_rows(tmp_path, monkeypatch, path)
    except InputError as refused:
        with pytest.raises(InputError, match=re.escape(str(refused))):
            load_run(wh, path)
        assert "late.run:2401:" in str(refused)
        return
    load_run(wh, path)
    assert wh.sql("SELECT * FROM raw.runs ORDER BY line") == expected
    assert expected[2400][5] == late.split()[5]


def test_non_ascii_whitespace_split_between_two_blocks_is_refused(wh, tmp_path, monkeypatch):
    """U+00A0 (two bytes in UTF-8) inside a tag, its bytes in two blocks of the scan, is still found
    (Arrow would keep it in the field)."""
    from rankhouse.loaders import trec

    monkeypatch.setattr(trec, "FAST_BLOCK", 1024)
    data = ("\n".join(simple_run(3000)) + "\n").encode()
    start = 3 * 1024 - 1  # the NBSP's first byte ends the third block, its second begins the fourth
    end = data.rindex(b"\n", 0, start)  # the tag that ends there, lengthened to reach it: 6 fields for Arrow
    data = data[:end] + b"x" * (start - end) + "\u00a0".encode() + data[end:]
    path = tmp_path / "nbsp.run"
    path.write_bytes(data)
    line = data[:end].count(b"\n") + 1
    with pytest.raises(InputError, match=f"nbsp.run:{line}: .*non-ASCII whitespace"):
        load_run(wh, path)
    assert wh.sql("SELECT count(*) FROM raw.runs") == [(0,)]


@pytest.mark.parametrize(
    "text",
    ["q1 Q0 d1 1 1.0 t\n\nq1 Q0 d2 2 0.5 t\n", "q1 Q0 d1 1 1.0 t\n q1 Q0 d2 2 0.5 t\n",
     "q1 Q0 d1 1 1.0 t\n#c\nq1 Q0 d2 2 0.5 t\n", "q1 Q0  d1 1 1.0 t\nq1 Q0 d2 2 0.5 t\n"],
)  # fmt: skip
def test_irregular_files_fall_back_to_the_general_reader_with_right_line_numbers(wh, tmp_path, text):
    load_run(wh, write(tmp_path, "r.run", text))
    assert wh.sql("SELECT docno, line FROM raw.runs ORDER BY line")[-1] == ("d2", text.count("\n"))


def split_oracle(data: bytes, every_line: bool) -> list[tuple]:
    """(line_no, f1, f2, f3, nfields) of each line split on runs of spaces, tabs and CRs, in plain Python."""
    lines = data.decode().split("\n")
    if lines[-1] == "":
        lines.pop()
    rows = []
    for number, line in enumerate(lines, start=1):
        content = line.strip(" \t\r")
        if not every_line and (content == "" or content.startswith("#")):
            continue
        parts = re.split(r"[ \t\r]+", content) if content else []
        rows.append((number, *(parts + [None] * 3)[:3], len(parts)))
    return rows


@pytest.fixture(scope="module")
def staging():
    from rankhouse.warehouse import Warehouse

    with Warehouse(":memory:") as wh:
        yield wh


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.text(alphabet="ab# \t\r", max_size=10), max_size=6), newline=st.booleans())
def test_staged_fields_are_the_lines_split_on_runs_of_blanks(staging, lines, newline):
    """Both ways of splitting (on the one separator of a plain file, or on runs of blanks) give Python's fields."""
    from rankhouse.loaders.lines import stage_fields

    data = ("\n".join(lines) + ("\n" if newline and lines else "")).encode()
    for every_line in (False, True):
        stage_fields(staging, "x", data, 3, "rh_test", every_line)
        staged = staging.sql("SELECT line_no, f1, f2, f3, nfields FROM rh_test ORDER BY line_no")
        assert staged == split_oracle(data, every_line)
