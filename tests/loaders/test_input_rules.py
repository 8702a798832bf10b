"""Inputs load what they say (issue 13, point 10): a path is read as written, never as a glob; a UTF-8
BOM is stripped by every reader; numbers are read as trec_eval reads them; `-M` takes a depth of at least 1.

Every refusal names the file, the line and the rule, and leaves the warehouse as it was.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from clirunner import error_line, rankhouse_in_process
from conftest import FIXTURES, TREC

from rankhouse.errors import InputError, RankhouseError
from rankhouse.evaluation import EvalOptions, evaluate
from rankhouse.loaders import LOADERS, load_qrels, load_run
from rankhouse.runfiles import validate_runs
from rankhouse.warehouse import Warehouse

BOM = b"\xef\xbb\xbf"
GOOD_RUN = "q1 Q0 d1 1 2.5 tag\nq1 Q0 d2 2 1.5 tag\n"
GOOD_QRELS = "q1 0 d1 1\nq1 0 d2 0\n"


def write(path: Path, data: str | bytes) -> Path:
    """Write `data` (text as UTF-8) to `path`, making its directory."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def snapshot(wh: Warehouse, meta: bool = True) -> dict[str, list[tuple]]:
    """Every row of every table of the warehouse and (through the gate) of its labels file; without
    `meta`, the tables of the meta schemas are left out (paths, hashes, load times, the warehouse's id)."""
    wh.open_gate()
    try:
        tables = wh.sql(
            "SELECT database_name, schema_name, table_name FROM duckdb_tables() "
            "WHERE database_name IN ('inputs', 'gate') AND NOT temporary ORDER BY ALL"
        )
        return {
            f"{d}.{s}.{t}": wh.sql(f'SELECT * FROM "{d}"."{s}"."{t}" ORDER BY ALL')
            for d, s, t in tables
            if (meta or s != "meta") and t not in ("layout", "owner", "warehouse")  # what says whose a file is
        }
    finally:
        wh.close_gate()


def readers(cases: list[tuple]) -> list[tuple]:
    """Each case (its loader first) as the loader reads it (TREC files: the fast reader, where simple),
    and the TREC loaders' cases again with the general reader only."""
    general = [(*case, "general") for case in cases if case[0].startswith("trec.")]
    return [(*case, "default") for case in cases] + general


def use_reader(monkeypatch: pytest.MonkeyPatch, reader: str) -> None:
    """With "general", send every TREC file to the general reader (the fast one takes only simple files)."""
    from rankhouse.loaders import trec

    if reader == "general":
        monkeypatch.setattr(trec, "_load_simple", lambda *args: (_ for _ in ()).throw(trec._NotSimple()))


# -- 1. a path is a path: never a glob -----------------------------------------------------------------
@pytest.mark.parametrize(("name", "decoy"), [("g[ab].run", "ga.run"), ("g[ab]*?.run", "gab.run")])
@pytest.mark.parametrize("kind", ["run", "qrels"])
def test_a_path_with_glob_characters_loads_that_file_and_records_its_hash(wh, tmp_path, name, decoy, kind):
    """DuckDB's readers glob their path: `g[ab].run` would read `ga.run`. The rows and the SHA-256 are
    of the file named, whatever characters its name has."""
    line = "q1 Q0 {} 1 2.5 tag\n" if kind == "run" else "q1 0 {} 1\n"
    write(tmp_path / decoy, line.format("decoy"))
    named = write(tmp_path / name, line.format("named"))
    if kind == "run":
        load_run(wh, named, "r")
        docs = wh.sql("SELECT docno FROM raw.runs")
        sha = wh.sql("SELECT sha256 FROM meta.sources")
    else:
        load_qrels(wh, named)
        wh.open_gate()
        docs = wh.sql("SELECT docno FROM gate.qrels")
        sha = wh.sql("SELECT sha256 FROM gate.meta.sources")
    assert docs == [("named",)]
    assert sha == [(hashlib.sha256(named.read_bytes()).hexdigest(),)]


# -- 2. one BOM rule: stripped by every reader ------------------------------------------------------------
EVIDENCE = FIXTURES / "evidence"
LANES = FIXTURES / "lanes"
NARRATIVES_JSONL = '{"topic": "T1", "narrative": "card late", "subnarratives": [{"name": "a", "text": "where"}]}\n'
SCIFACT_CORPUS = "doc_id,title,abstract,structured\n1,A title,\"['One.' 'Two.']\",False\n"
BEIR_QRELS = "query-id\tcorpus-id\tscore\nq1\td1\t1\n"
# (loader, file name, contents or a fixture file) loaded in order, each under the name "x"
BOM_CASES = {
    "trec.run": [("trec.run", "a.run", GOOD_RUN)],
    "trec.qrels": [("trec.qrels", "a.qrels", GOOD_QRELS)],
    "lanes.runs": [("lanes.runs", "lanes.run", LANES / "lanes.run")],
    "lanes.passage_cache": [("lanes.passage_cache", "cache.tsv", LANES / "passage_cache.tsv")],
    "lanes.narratives (TOML)": [("lanes.narratives", "n.toml", LANES / "narratives.toml"),
                                ("lanes.topic_classes", "n.toml", LANES / "narratives.toml")],
    "lanes.narratives (JSONL)": [("lanes.narratives", "n.jsonl", NARRATIVES_JSONL)],
    "csv": [(loader, "docs.csv", LANES / "documents.csv")
            for loader in ("csv.documents", "csv.queries", "csv.document_classes", "csv.query_classes")],
    "scifact": [("scifact.documents", "corpus.csv", SCIFACT_CORPUS),
                ("scifact.queries", "claims.csv", "id,claim,evidence\n7,A claim,x\n")],
    "beir": [("beir.corpus", "corpus.jsonl", '{"_id": "d1", "title": "T", "text": "x"}\n'),
             ("beir.queries", "queries.jsonl", '{"_id": "q1", "text": "y"}\n'),
             ("beir.qrels", "qrels.tsv", BEIR_QRELS)],
    "evidence": [(f"evidence.{kind}", file, EVIDENCE / file) for kind, file in
                 [("tasks", "tasks.jsonl"), ("documents", "documents.jsonl"), ("pool", "pool-key.json"),
                  ("judgments", "judgments.jsonl")]],
}  # fmt: skip


def load_case(root: Path, case: list[tuple[str, str, str | Path]], bom: bool) -> dict[str, list[tuple]]:
    """Load a case's files (each with a BOM in front if `bom`) into a fresh warehouse; its tables."""
    with Warehouse(":memory:") as wh:
        for loader, name, contents in case:
            data = contents.read_bytes() if isinstance(contents, Path) else contents.encode()
            LOADERS[loader].load(wh, write(root / name, BOM * bom + data), "x")
        return snapshot(wh, meta=False)


@pytest.mark.parametrize(("case", "reader"), readers([(case,) for case in BOM_CASES]))
def test_a_utf8_bom_is_stripped_by_every_reader(tmp_path, monkeypatch, case, reader):
    """The same data with and without a BOM gives the same tables, in every loader (TREC files by
    both of their readers)."""
    use_reader(monkeypatch, reader)
    plain = load_case(tmp_path / "plain", BOM_CASES[case], bom=False)
    assert any(plain.values())
    assert load_case(tmp_path / "bom", BOM_CASES[case], bom=True) == plain


@pytest.mark.parametrize("reader", ["default", "general"])
def test_qrels_with_a_bom_evaluate_as_without(tmp_path, monkeypatch, reader):
    """The issue's example: a BOM in front of trec_eval's sample qrels must not change P_5."""
    use_reader(monkeypatch, reader)
    with_bom = write(tmp_path / "qrels.test", BOM + (TREC / "qrels.test").read_bytes())
    values = []
    for qrels in (TREC / "qrels.test", with_bom):
        with Warehouse(":memory:") as wh:
            values.append(evaluate(wh, qrels, [TREC / "results.test"], ["P.5"]).lines())
    assert values[0] == values[1] == ["P_5                   \tall\t0.2667"]  # expected/out.test


def test_runs_validate_strips_a_bom(tmp_path):
    """A BOM does not make a file's first topic another topic."""
    plain = write(tmp_path / "plain.run", GOOD_RUN)
    with_bom = write(tmp_path / "bom.run", BOM + GOOD_RUN.replace("tag", "other").encode())
    assert validate_runs([plain, with_bom]) == []


# -- 3. numbers as trec_eval reads them; fields separated by ASCII blanks only ----------------------------
SEPARATOR = "_ digit separator"
NON_ASCII = "non-ASCII character"
BLANK = "non-ASCII whitespace"
# (loader, good file, bad file, bad line, rule)
BAD_NUMBERS = [
    ("trec.run", GOOD_RUN, "q1 Q0 d1 1 2.5 tag\nq1 Q0 d2 2 1_000 tag\n", 2, f"score has a {SEPARATOR}"),
    ("trec.run", GOOD_RUN, "q1 Q0 d1 1_0 2.5 tag\n", 1, f"rank has a {SEPARATOR}"),
    ("trec.run", GOOD_RUN, "q1 Q0 d1 1 2.5 tag\nq1 Q0 d2 ٣ 1.5 tag\n", 2, f"rank has a {NON_ASCII}"),
    ("trec.run", GOOD_RUN, "q1 Q0 d1 1 ２.５ tag\n", 1, f"score has a {NON_ASCII}"),
    ("trec.qrels", GOOD_QRELS, "q1 0 d1 1\nq1 0 d2 1_0\n", 2, f"rel has a {SEPARATOR}"),
    ("trec.qrels", GOOD_QRELS, "q1 0 d1 １\n", 1, f"rel has a {NON_ASCII}"),
    ("lanes.runs", "T1 Q0 d1 1 2.5 narrative\n", "T1 Q0 d1 1 2_5 narrative\n", 1, f"score has a {SEPARATOR}"),
    ("lanes.passage_cache", "T1 narrative d1 0 0.5\n", "T1 narrative d1 1_0 0.5\n", 1, f"chunk has a {SEPARATOR}"),
    ("trec.run", GOOD_RUN, "q1 Q0 d1 1 2.5 tag\nq1 Q0 d\u00a02 2 1.5 tag\n", 2, BLANK),
    ("trec.run", GOOD_RUN, "q1 Q0 d1 1 2.5\u2003tag x\n", 1, BLANK),
    ("trec.qrels", GOOD_QRELS, "q1 0 d1\u30001\n", 1, BLANK),
    ("lanes.runs", "T1 Q0 d1 1 2.5 narrative\n", "T1\u00a0Q0 d1 1 2.5 narrative x\n", 1, BLANK),
    ("beir.qrels", BEIR_QRELS, BEIR_QRELS + "q1\td2\u00a0\t1\n", 3, BLANK),
]


@pytest.mark.parametrize(("loader", "good", "bad", "line", "rule", "reader"), readers(BAD_NUMBERS))
def test_numbers_and_separators_trec_eval_would_read_otherwise_are_refused(
    wh, tmp_path, monkeypatch, loader, good, bad, line, rule, reader
):
    """`1_000` (trec_eval reads 1), digits that are not ASCII and non-ASCII spaces between fields: each is
    refused with the file, the line and the rule, before anything is written."""
    use_reader(monkeypatch, reader)
    LOADERS[loader].load(wh, write(tmp_path / "good", good), "x")
    before = snapshot(wh)
    path = write(tmp_path / "bad", bad)
    with pytest.raises(InputError) as err:
        LOADERS[loader].load(wh, path, "x")
    assert (err.value.path, err.value.line) == (str(path), line)
    assert err.value.rule.startswith(rule)
    assert str(err.value).startswith(f"{path}:{line}: {rule}")
    assert snapshot(wh) == before


VALIDATE = [
    ("q1 Q0 d1 2 1_000 run-a\n", f"score has a {SEPARATOR}"),
    ("q1 Q0 d1 ٢ 1.0 run-a\n", f"rank has a {NON_ASCII}"),
    ("q1 Q0 d\u00a01 2 1.0 run-a\n", BLANK),
    ("q1\u3000Q0 d1 2 1.0 run-a\n", BLANK),
]


def test_the_non_ascii_blanks_are_pythons_whitespace_beyond_ascii():
    from rankhouse.loaders.lines import NON_ASCII_BLANKS

    assert NON_ASCII_BLANKS == "".join(chr(c) for c in range(0x80, 0x110000) if chr(c).isspace())


@pytest.mark.parametrize(("text", "rule"), VALIDATE)
def test_runs_validate_refuses_them_too(tmp_path, text, rule):
    path = write(tmp_path / "a.run", "q1 Q0 d0 1 2.0 run-a\n" + text)
    problems = validate_runs([path])
    assert problems, rule
    assert [(p.path, p.line) for p in problems][:1] == [(str(path), 2)]
    assert problems[0].rule.startswith(rule)
    assert str(problems[0]).startswith(f"{path}:2: {rule}")


# -- 4. -M: a depth of at least 1 ---------------------------------------------------------------------------
@pytest.mark.parametrize("depth", ["-5", "0", "1.5", "1_0", "٣", "ten"])
def test_a_depth_that_is_not_a_whole_number_of_at_least_1_is_refused_before_loading(tmp_path, depth):
    """trec_eval's -M 0 evaluates no document at all (and a negative depth the same): refused, as is
    anything but ASCII digits, with `error:` and exit status 2, and no warehouse written."""
    db = tmp_path / "w.duckdb"
    line = error_line(rankhouse_in_process("eval", TREC / "qrels.test", TREC / "results.test", "-M", depth, "--db", db))
    assert line.startswith("error: -M/--depth must be a whole number of at least 1"), line
    assert repr(depth) in line
    assert not db.exists() and not db.with_suffix(".labels.duckdb").exists()


def test_the_api_refuses_a_negative_depth():
    with pytest.raises(RankhouseError, match="depth must be a whole number of at least 0"):
        EvalOptions(depth=-5)
