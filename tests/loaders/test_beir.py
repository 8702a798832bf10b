"""SciFact and BEIR loaders: the real SciFact files load to the counts SOURCE.md gives, and bad input
names the file, the line and the rule, and leaves the warehouse unchanged."""

from __future__ import annotations

import csv
import hashlib
import re
from pathlib import Path

import pytest

from rankhouse.errors import InputError
from rankhouse.loaders import (
    LOADERS,
    load_beir_corpus,
    load_beir_qrels,
    load_beir_queries,
    load_scifact_documents,
    load_scifact_queries,
)
from rankhouse.loaders.beir import ABSTRACT_RULE, abstract_sentences
from rankhouse.paths import ROOT

DATA = ROOT / "data" / "scifact"
CORPUS = DATA / "corpus_train.csv"
CLAIMS = DATA / "claims_validation.csv"
QRELS = DATA / "derived" / "qrels_test.tsv"


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def snapshot(wh) -> tuple:
    """Everything these loads can touch: documents, queries, sources and (through a fresh gate) qrels."""
    documents = wh.sql("SELECT * FROM raw.documents ORDER BY ALL")
    queries = wh.sql("SELECT * FROM raw.queries ORDER BY ALL")
    sources = wh.sql("SELECT table_name, name, sha256, rows, loaded_at FROM meta.sources ORDER BY ALL")
    wh.open_gate()
    qrels = wh.sql("SELECT * FROM gate.qrels ORDER BY line")
    label_sources = wh.sql("SELECT table_name, name, sha256, rows, loaded_at FROM gate.meta.sources ORDER BY ALL")
    wh.close_gate()
    return documents, queries, sources, qrels, label_sources


def gate_qrels(wh) -> list[tuple]:
    wh.open_gate()
    rows = wh.sql("SELECT qid, iter, docno, rel, line FROM gate.qrels ORDER BY line")
    wh.close_gate()
    return rows


# -- the copied data --------------------------------------------------------------------------------
def test_copied_files_match_the_sha256_in_source_md():
    table = re.findall(r"^\| (\S+) \|.*\| ([0-9a-f]{64}) \|$", (DATA / "SOURCE.md").read_text(), re.MULTILINE)
    assert {name for name, _ in table} == {"corpus_train.csv", "claims_validation.csv", "LICENSE.md",
                                           "derived/qrels_test.tsv"}  # fmt: skip
    for name, sha in table:
        assert hashlib.sha256((DATA / name).read_bytes()).hexdigest() == sha, name


# -- SciFact, real values ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def corpus_rows() -> list[dict]:
    with CORPUS.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_scifact_abstracts_have_45952_sentences_3_to_367_each(corpus_rows):
    counts = [len(abstract_sentences(CORPUS, 0, row["abstract"])) for row in corpus_rows]
    assert (len(counts), sum(counts), min(counts), max(counts)) == (5183, 45952, 3, 367)


def test_scifact_documents_load_with_their_ids_order_and_text(wh, corpus_rows):
    result = load_scifact_documents(wh, CORPUS)
    assert (result.table, result.name, result.rows, result.status) == ("raw.documents", "scifact", 5183, "loaded")
    rows = wh.sql("SELECT doc_id, row_index, text FROM raw.documents WHERE corpus = 'scifact' ORDER BY row_index")
    assert [(r[0], r[1]) for r in rows] == [(row["doc_id"], i) for i, row in enumerate(corpus_rows)]
    assert len({r[0] for r in rows}) == 5183
    for (_, _, text), row in zip(rows, corpus_rows):
        assert text == row["title"] + " " + " ".join(abstract_sentences(CORPUS, 0, row["abstract"]))
    texts = {r[0]: r[2] for r in rows}
    assert texts["4983"].startswith(
        "Microstructural development of human newborn cerebral white matter assessed in vivo by diffusion "
        "tensor magnetic resonance imaging. Alterations of the architecture of cerebral white matter"
    )
    assert texts["102662"].startswith("A rapid method for extraction of cotton (Gossypium spp.) genomic DNA")
    # a double-quoted literal holding an apostrophe, and a literal whose \n escape is a real newline
    assert (
        " This self-priming ability is a consequence of the secondary structure of the 3'-unique region. "
        in texts["7912"]
    )
    assert (
        "based on the combination of genes detected.   \n RESULTS We propose an empirical Bayesian model"
        in texts["54440"]
    )


def test_scifact_claims_give_300_queries_in_first_appearance_order(wh):
    result = load_scifact_queries(wh, CLAIMS)
    assert (result.table, result.name, result.rows) == ("raw.queries", "scifact", 300)
    rows = wh.sql("SELECT qid, row_index, text FROM raw.queries ORDER BY row_index")
    with CLAIMS.open(newline="", encoding="utf-8") as handle:
        claims = {row["id"]: row["claim"] for row in csv.DictReader(handle)}  # dicts keep first insertion order
    assert rows == [(qid, i, claim) for i, (qid, claim) in enumerate(claims.items())]
    assert rows[0] == ("1", 0, "0-dimensional biomaterials show inductive properties.")
    assert rows[1][2].startswith("1,000 genomes project enables mapping")  # a quoted comma


def test_scifact_qrels_give_339_pairs_over_300_queries(wh):
    result = load_beir_qrels(wh, QRELS)
    assert (result.table, result.name, result.rows) == ("qrels", "qrels_test.tsv", 339)
    rows = gate_qrels(wh)
    assert len(rows) == 339 and len({r[0] for r in rows}) == 300
    assert rows[0] == ("1", "0", "31715818", 1, 2) and rows[-1] == ("1395", "0", "17717391", 1, 340)
    assert {(r[1], r[3]) for r in rows} == {("0", 1)}


def test_scifact_judged_documents_and_queries_are_all_loaded(wh):
    load_scifact_documents(wh, CORPUS)
    load_scifact_queries(wh, CLAIMS)
    load_beir_qrels(wh, QRELS)
    wh.open_gate()
    missing = wh.sql(
        "SELECT count(*) FILTER (WHERE docno NOT IN (SELECT doc_id FROM raw.documents)), "
        "count(*) FILTER (WHERE qid NOT IN (SELECT qid FROM raw.queries)) FROM gate.qrels"
    )
    assert missing == [(0, 0)]


def test_reloading_the_same_bytes_is_a_no_op(wh):
    loads = [(load_scifact_documents, CORPUS), (load_scifact_queries, CLAIMS), (load_beir_qrels, QRELS)]
    for load, path in loads:
        assert load(wh, path).status == "loaded"
    before = snapshot(wh)
    for load, path in loads:
        result = load(wh, path)
        assert (result.status, result.rows) == ("unchanged", 0)
    assert snapshot(wh) == before


def test_loaders_are_registered():
    names = {"scifact.documents": False, "scifact.queries": False, "beir.corpus": False, "beir.queries": False}
    for name, labels in {**names, "beir.qrels": True}.items():
        assert LOADERS[name].labels is labels
    assert LOADERS["beir.qrels"].load is load_beir_qrels


# -- BEIR round trip --------------------------------------------------------------------------------
def test_beir_round_trip(wh, tmp_path):
    folder = tmp_path / "tiny"
    folder.mkdir()
    corpus = write(folder, "corpus.jsonl",
                   '{"_id": "d1", "title": "Cats", "text": "Cats purr."}\n'
                   '\n'
                   '{"_id": "d2", "text": "Dogs bark.", "metadata": {}}\n'
                   '{"_id": 3, "title": "", "text": "Birds sing."}\n'
                   '{"_id": "d4", "title": "Only a title", "text": ""}\n')  # fmt: skip
    queries = write(folder, "queries.jsonl", '{"_id": "q1", "text": "purring"}\r\n{"_id": "q2", "text": "barking"}')
    qrels = write(folder, "qrels.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t2\nq2\td1\t0\n")
    assert load_beir_corpus(wh, corpus).name == "tiny"  # BEIR's layout: the folder names the collection
    assert load_beir_queries(wh, queries).rows == 2
    assert load_beir_qrels(wh, qrels).rows == 3
    assert wh.sql("SELECT * FROM raw.documents ORDER BY row_index") == [
        ("tiny", "d1", 0, "Cats Cats purr."),
        ("tiny", "d2", 1, "Dogs bark."),
        ("tiny", "3", 2, "Birds sing."),
        ("tiny", "d4", 3, "Only a title"),
    ]
    assert wh.sql("SELECT * FROM raw.queries ORDER BY row_index") == [("tiny", "q1", 0, "purring"),
                                                                       ("tiny", "q2", 1, "barking")]  # fmt: skip
    assert gate_qrels(wh) == [("q1", "0", "d1", 1, 2), ("q2", "0", "d2", 2, 3), ("q2", "0", "d1", 0, 4)]
    sources = wh.sql("SELECT table_name, name, rows, loader FROM meta.sources ORDER BY ALL")
    assert sources == [("raw.documents", "tiny", 4, "beir.corpus"), ("raw.queries", "tiny", 2, "beir.queries")]
    write(folder, "corpus.jsonl", '{"_id": "d9", "text": "New."}\n')
    assert load_beir_corpus(wh, corpus, "tiny").status == "replaced"
    assert wh.sql("SELECT doc_id, text FROM raw.documents") == [("d9", "New.")]


def test_beir_qrels_replace_earlier_qrels(wh, tmp_path):
    load_beir_qrels(wh, QRELS)
    other = write(tmp_path, "other.tsv", "query-id\tcorpus-id\tscore\nq\td\t1\n")
    assert load_beir_qrels(wh, other).status == "replaced"
    assert gate_qrels(wh) == [("q", "0", "d", 1, 2)]
    wh.open_gate()
    assert wh.sql("SELECT name, rows, loader FROM gate.meta.sources") == [("other.tsv", 1, "beir.qrels")]


# -- rules: file, line, rule, and nothing loaded ----------------------------------------------------
HEADER = "doc_id,title,abstract,structured\n"
GOOD_CORPUS = HEADER + "1,One,\"['A.' 'B.']\",False\n"
GOOD_CLAIMS = "id,claim,cited_doc_ids\n1,A claim.,[1]\n"
GOOD_JSONL = '{"_id": "a", "text": "Good."}\n'
GOOD_QRELS = "query-id\tcorpus-id\tscore\nq1\td1\t1\n"

BAD = [
    # SciFact documents
    (load_scifact_documents, "", 1, "empty file"),
    (load_scifact_documents, "id,title,abstract,structured\n1,T,\"['a.']\",False\n", 1, "expected the header"),
    (load_scifact_documents, HEADER, 2, "no documents"),
    (load_scifact_documents, HEADER + "1,T,\"['a.']\",False\n2,T,\"['b.']\"\n", 3, "expected 4 fields"),
    (load_scifact_documents, HEADER + '1,T,"[\'a.\']",False\n2,"T"x,"[\'b.\']",False\n', 3, "malformed CSV"),
    (load_scifact_documents, HEADER + "1,T,\"['a.']\",False\n ,T,\"['b.']\",False\n", 3, "empty doc_id"),
    (
        load_scifact_documents,
        HEADER + "7,T,\"['a.']\",False\n8,U,\"['b.']\",True\n7,V,\"['c.']\",False\n",
        4,
        "duplicate doc_id",
    ),
    (load_scifact_documents, HEADER + "1,T,\"['a.', 'b.']\",False\n", 2, ABSTRACT_RULE),
    (
        load_scifact_documents,
        HEADER + "1,T,\"['a.'\n 'b.'\n len('c')]\",False\n",
        4,
        ABSTRACT_RULE,
    ),
    (load_scifact_documents, HEADER + "1,T,\"[b'a.']\",False\n", 2, ABSTRACT_RULE),
    (load_scifact_documents, HEADER + "1,T,\"[f'{a}']\",False\n", 2, ABSTRACT_RULE),
    (
        load_scifact_documents,
        HEADER + "1,T,\"['a.' # note\n]\",False\n",
        2,
        ABSTRACT_RULE,
    ),
    (load_scifact_documents, HEADER + '1,T,"[\'a.]",False\n', 2, ABSTRACT_RULE),
    (load_scifact_documents, HEADER + "1,T,\"'a.' 'b.'\",False\n", 2, ABSTRACT_RULE),
    (
        load_scifact_documents,
        HEADER + "1,T,\"['a.'] + ['b.']\",False\n",
        2,
        ABSTRACT_RULE,
    ),
    (load_scifact_documents, HEADER + "1,T,\"['a.'\",False\n", 2, ABSTRACT_RULE),
    (load_scifact_documents, HEADER + "1,T,\"['a.'\n 'b.\n 'c.']\",False\n", 3, ABSTRACT_RULE),
    (load_scifact_documents, HEADER + "1,T,\"['a.'\n 'b.'\n\",False\n", 4, ABSTRACT_RULE),
    (load_scifact_documents, HEADER + "1,,[],False\n", 2, "empty title and abstract"),
    (
        load_scifact_documents,
        (HEADER + "1,T,\"['a.']\",False\n2,\xff,[],False\n").encode("latin-1"),
        3,
        "not valid UTF-8",
    ),
    # SciFact claims
    (load_scifact_queries, "", 1, "empty file"),
    (load_scifact_queries, "claim,id\nA.,1\n", 1, "expected the header id,claim"),
    (load_scifact_queries, "id,claim,x\n", 2, "no claims"),
    (load_scifact_queries, "id,claim,x\n1,A.,[1]\n2,B.\n", 3, "expected 3 fields"),
    (load_scifact_queries, "id,claim,x\n1,A.,[1]\n2,,[2]\n", 3, "empty id or claim"),
    (load_scifact_queries, "id,claim,x\n1,A.,[1]\n1,A.,[2]\n2,B.,[]\n1,C.,[3]\n", 5, "different claim"),
    (load_scifact_queries, 'id,claim,x\n1,"A.,[1]\n', 2, "malformed CSV"),
    # BEIR corpus
    (load_beir_corpus, "", 1, "empty file"),
    (load_beir_corpus, "\n  \n", 1, "empty file"),
    (load_beir_corpus, '{"_id": "a", "text": "A."}\n{"_id": "b", "text": "B."\n', 2, "malformed JSON"),
    (load_beir_corpus, '{"_id": "a", "text": "A."}\n\n["b", "B."]\n', 3, "expected a JSON object"),
    (load_beir_corpus, '{"_id": "a", "text": "A."}\n{"text": "B."}\n', 2, "missing _id"),
    (load_beir_corpus, '{"_id": "a", "title": "A"}\n', 1, "missing text"),
    (load_beir_corpus, '{"_id": "a", "text": "A."}\n{"_id": "", "text": "B."}\n', 2, "empty _id or text"),
    (load_beir_corpus, '{"_id": "a", "text": " "}\n', 1, "empty _id or text"),
    (load_beir_corpus, '{"_id": "a", "text": ["A."]}\n', 1, "text is not a string"),
    (load_beir_corpus, '{"_id": "a", "text": "A.", "title": 5}\n', 1, "title is not a string"),
    (
        load_beir_corpus,
        '{"_id": "a", "text": "A."}\n{"_id": "b", "text": "B."}\n{"_id": "a", "text": "C."}\n',
        3,
        "duplicate _id",
    ),
    (load_beir_corpus, b'{"_id": "a", "text": "A."}\n{"_id": "b", "text": "\xe9"}\n', 2, "not valid UTF-8"),
    # BEIR queries
    (load_beir_queries, "", 1, "empty file"),
    (load_beir_queries, '{"_id": "q", "text": "A"}\n{"_id": "r", "text": "B"} x\n', 2, "malformed JSON"),
    (load_beir_queries, '{"_id": "q"}\n', 1, "missing text"),
    (load_beir_queries, '{"_id": "q", "text": ""}\n', 1, "empty _id or text"),
    (load_beir_queries, '{"_id": "q", "text": "A"}\n{"_id": "q", "text": "B"}\n', 2, "duplicate _id"),
    # BEIR qrels
    (load_beir_qrels, "", 1, "empty file"),
    (load_beir_qrels, "query-id corpus-id score\nq1 d1 1\n", 1, "expected the header"),
    (load_beir_qrels, "q1\td1\t1\n", 1, "expected the header"),
    (load_beir_qrels, "query-id\tcorpus-id\tscore\n", 2, "no qrels lines"),
    (load_beir_qrels, "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\n", 3, "expected 3 fields"),
    (load_beir_qrels, "query-id\tcorpus-id\tscore\nq1\td1\t1\t0\n", 2, "expected 3 fields"),
    (load_beir_qrels, "query-id\tcorpus-id\tscore\nq1\td1\t1\n\nq1\td2\t1.5\n", 4, "score is not an integer"),
    (load_beir_qrels, "query-id\tcorpus-id\tscore\nq1\td1\thigh\n", 2, "score is not an integer"),
    (load_beir_qrels, "query-id\tcorpus-id\tscore\nq1\t\t1\n", 2, "empty query-id or corpus-id"),
    (load_beir_qrels, "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td1\t1\nq1\td1\t0\n", 4, "judged twice"),
    (load_beir_qrels, b"query-id\tcorpus-id\tscore\nq1\td\xff\t1\n", 2, "not valid UTF-8"),
]


def load_good(wh, tmp_path: Path) -> None:
    """One good load per loader, under the names the bad files would load under."""
    load_scifact_documents(wh, write(tmp_path, "good.csv", GOOD_CORPUS), "scifact")
    load_scifact_queries(wh, write(tmp_path, "good_claims.csv", GOOD_CLAIMS), "scifact")
    load_beir_corpus(wh, write(tmp_path, "corpus.jsonl", GOOD_JSONL), "beir")
    load_beir_queries(wh, write(tmp_path, "queries.jsonl", GOOD_JSONL), "beir")
    load_beir_qrels(wh, write(tmp_path, "good.tsv", GOOD_QRELS))


@pytest.mark.parametrize(("load", "text", "line", "rule"), BAD)
def test_bad_file_names_file_line_rule_and_loads_nothing(wh, tmp_path, load, text, line, rule):
    load_good(wh, tmp_path)
    before = snapshot(wh)
    bad = write(tmp_path, "bad.txt", text)
    name = "beir" if load in (load_beir_corpus, load_beir_queries) else "scifact"
    with pytest.raises(InputError) as err:
        load(wh, bad, None if load is load_beir_qrels else name)
    assert (err.value.path, err.value.line) == (str(bad), line), str(err.value)
    assert rule in err.value.rule, str(err.value)
    assert f"{bad}:{line}:" in str(err.value)
    assert snapshot(wh) == before


def test_an_abstract_is_never_evaluated(wh, tmp_path):
    marker = tmp_path / "evaluated"
    code = f"[open({str(marker)!r}, 'w')]"
    bad = write(tmp_path, "bad.csv", HEADER + '1,T,"' + code.replace('"', '""') + '",False\n')
    with pytest.raises(InputError, match=re.escape(ABSTRACT_RULE)):
        load_scifact_documents(wh, bad)
    assert not marker.exists()
    assert wh.sql("SELECT count(*) FROM raw.documents") == [(0,)]


def test_claims_repeat_rows_for_one_claim_but_give_one_query(wh, tmp_path):
    claims = write(tmp_path, "claims.csv", 'id,claim,cited\n5,B.,[1]\n2,"A, too.",[2]\n5,B.,[3]\n2,"A, too.",[]\n')
    assert load_scifact_queries(wh, claims, "c").rows == 2
    assert wh.sql("SELECT * FROM raw.queries ORDER BY row_index") == [("c", "5", 0, "B."), ("c", "2", 1, "A, too.")]
