"""Evidence bundles: the loaders accept a good bundle, name the file, line and rule of a bad one and
leave the warehouse unchanged, and the committed demonstration bundle is what its builder makes."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from evidence_bundles import DOCUMENTS, GOOD, JUDGMENTS, TASKS, parquet, unit_vectors, write_bundle

from rankhouse.errors import InputError
from rankhouse.loaders import LOADERS
from rankhouse.paths import ROOT
from rankhouse.studies.evidence.loaders import (
    load_evidence_documents,
    load_evidence_judgments,
    load_evidence_pool,
    load_evidence_tasks,
    load_evidence_vectors,
)
from rankhouse.warehouse import Warehouse

DEMO = ROOT / "data" / "evidence_demo"
BUILDER = ROOT / "scripts" / "build_evidence_bundle.py"
DOCS = ROOT / "docs" / "evidence_bundle.md"
DEMO_FILES = {"tasks.jsonl": load_evidence_tasks, "documents.jsonl": load_evidence_documents,
              "pool-key.json": load_evidence_pool, "judgments.jsonl": load_evidence_judgments}  # fmt: skip

LOADS = {"tasks.jsonl": load_evidence_tasks, "documents.jsonl": load_evidence_documents,
         "pool-key.json": load_evidence_pool, "judgments.jsonl": load_evidence_judgments,
         "vectors.parquet": load_evidence_vectors}  # fmt: skip


GOOD_VECTORS = parquet(["d1", "d2", "d3"], [list(v) for v in unit_vectors(3)])


def load_bundle(wh, paths: dict[str, Path], name: str | None = None) -> list:
    return [LOADS[file](wh, paths[file], name) for file in LOADS if file in paths]


def snapshot(wh) -> tuple:
    """Every table an evidence load can touch, main file and (through a fresh gate) labels file."""
    main = [
        wh.sql(f"SELECT * FROM raw.{table} ORDER BY ALL")
        for table in ("evidence_tasks", "evidence_requirements", "evidence_documents", "evidence_pools")
    ]
    vectors = wh.sql("SELECT bundle, doc_id, vector FROM raw.evidence_vectors ORDER BY bundle, doc_id")
    sources = wh.sql("SELECT table_name, name, sha256, rows, loaded_at FROM meta.sources ORDER BY ALL")
    wh.open_gate()
    labels = [wh.sql(f"SELECT * FROM gate.{t} ORDER BY ALL") for t in ("evidence_judgments", "evidence_obligations")]
    label_sources = wh.sql("SELECT table_name, name, sha256, rows, loaded_at FROM gate.meta.sources ORDER BY ALL")
    wh.close_gate()
    return main, vectors, sources, labels, label_sources


def labels(wh, query: str) -> list[tuple]:
    wh.open_gate()
    try:
        return wh.sql(query)
    finally:
        wh.close_gate()


# -- a good bundle ----------------------------------------------------------------------------------
def test_a_good_bundle_loads_with_its_rows(wh, tmp_path):
    paths = write_bundle(tmp_path / "tiny", {**GOOD, "vectors.parquet": GOOD_VECTORS})
    results = load_bundle(wh, paths)
    assert [(r.table, r.name, r.rows, r.status) for r in results] == [
        ("raw.evidence_tasks", "tiny", 2, "loaded"),  # the folder names the bundle
        ("raw.evidence_documents", "tiny", 3, "loaded"),
        ("raw.evidence_pools", "tiny", 4, "loaded"),
        ("evidence_judgments", "tiny", 3, "loaded"),
        ("raw.evidence_vectors", "tiny", 3, "loaded"),
    ]
    assert wh.sql("SELECT * FROM raw.evidence_tasks ORDER BY row_index") == [
        ("tiny", "t1", 0, "Card late?", "development"),
        ("tiny", "t2", 1, "Fee?", "final"),
    ]
    assert wh.sql("SELECT task_id, requirement, text FROM raw.evidence_requirements ORDER BY ALL") == [
        ("t1", 0, "delivery time"), ("t1", 1, "what to do"), ("t2", 0, "which fee")
    ]  # fmt: skip
    assert wh.sql("SELECT doc_id, row_index FROM raw.evidence_documents ORDER BY row_index") == [
        ("d1", 0), ("d2", 1), ("d3", 2)
    ]  # fmt: skip
    assert wh.sql("SELECT task_id, doc_id, position FROM raw.evidence_pools ORDER BY ALL") == [
        ("t1", "d1", 0), ("t1", "d2", 1), ("t2", "d2", 0), ("t2", "d3", 1)
    ]  # fmt: skip
    vector = wh.sql("SELECT typeof(vector), vector FROM raw.evidence_vectors WHERE doc_id = 'd2'")[0]
    assert vector[0] == "FLOAT[384]" and np.array_equal(np.asarray(vector[1], np.float32), unit_vectors(3)[1])
    assert labels(wh, "SELECT task_id, doc_id, judge, grade, line FROM gate.evidence_judgments ORDER BY line") == [
        ("t1", "d1", "A", 3, 1), ("t1", "d1", "B", 2, 2), ("t2", "d3", "A", 0, 3)
    ]  # fmt: skip
    assert labels(wh, "SELECT task_id, doc_id, judge, requirement FROM gate.evidence_obligations ORDER BY ALL") == [
        ("t1", "d1", "A", 0), ("t1", "d1", "A", 1), ("t1", "d1", "B", 1)
    ]  # fmt: skip
    assert wh.sql("SELECT count(*) FROM meta.sources WHERE table_name LIKE '%judgments%'") == [(0,)]  # labels apart


def test_reloading_the_same_bytes_is_a_no_op(wh, tmp_path):
    paths = write_bundle(tmp_path / "tiny", {**GOOD, "vectors.parquet": GOOD_VECTORS})
    load_bundle(wh, paths)
    before = snapshot(wh)
    assert [(r.status, r.rows) for r in load_bundle(wh, paths)] == [("unchanged", 0)] * 5
    assert snapshot(wh) == before


def test_bundles_coexist_by_name_and_a_vectors_file_may_hold_fixed_size_float64(wh, tmp_path):
    paths = write_bundle(tmp_path / "tiny", GOOD)
    load_bundle(wh, paths, "first")
    load_bundle(wh, paths, "second")
    vectors = pa.FixedSizeListArray.from_arrays(pa.array(unit_vectors(3, seed=1).astype(np.float64).ravel()), 384)
    (tmp_path / "v.parquet").write_bytes(parquet([], None, doc_id=["d3", "d1", "d2"], vector=vectors))
    assert load_evidence_vectors(wh, tmp_path / "v.parquet", "second").rows == 3
    counts = "SELECT bundle, count(*) FROM raw.{} GROUP BY bundle ORDER BY bundle"
    assert wh.sql(counts.format("evidence_pools")) == [("first", 4), ("second", 4)]
    assert wh.sql(counts.format("evidence_vectors")) == [("second", 3)]
    assert labels(wh, counts.format("evidence_judgments").replace("raw.", "gate.")) == [("first", 3), ("second", 3)]


def test_replacing_tasks_or_documents_clears_what_was_checked_against_them(wh, tmp_path):
    paths = write_bundle(tmp_path / "tiny", {**GOOD, "vectors.parquet": GOOD_VECTORS})
    load_bundle(wh, paths)
    paths["documents.jsonl"].write_text(DOCUMENTS + '{"doc_id": "d4", "text": "More."}\n')
    assert load_evidence_documents(wh, paths["documents.jsonl"]).status == "replaced"
    assert wh.sql("SELECT count(*) FROM raw.evidence_pools") == [(0,)]
    assert wh.sql("SELECT count(*) FROM raw.evidence_vectors") == [(0,)]
    assert wh.sql("SELECT table_name FROM meta.sources ORDER BY 1") == [("raw.evidence_documents",),
                                                                       ("raw.evidence_tasks",)]  # fmt: skip
    assert load_evidence_pool(wh, paths["pool-key.json"]).status == "loaded"
    with pytest.raises(InputError, match="document without a vector"):  # d4 has none
        load_evidence_vectors(wh, paths["vectors.parquet"])
    # t1 now has one requirement: the unchanged judgments are checked again, and refused
    paths["tasks.jsonl"].write_text(TASKS.replace('"delivery time", "what to do"', '"delivery time"'))
    assert load_evidence_tasks(wh, paths["tasks.jsonl"]).status == "replaced"
    load_evidence_pool(wh, paths["pool-key.json"])
    with pytest.raises(InputError) as err:
        load_evidence_judgments(wh, paths["judgments.jsonl"])
    assert (err.value.line, err.value.rule) == (1, "requirement index out of range")


def test_loaders_are_registered():
    expected = {"evidence.tasks": (load_evidence_tasks, False), "evidence.documents": (load_evidence_documents, False),
                "evidence.pool": (load_evidence_pool, False), "evidence.vectors": (load_evidence_vectors, False),
                "evidence.judgments": (load_evidence_judgments, True)}  # fmt: skip
    assert {name: (LOADERS[name].load, LOADERS[name].labels) for name in expected} == expected


# -- rules: file, line, rule, and nothing loaded ----------------------------------------------------
def task(**fields) -> str:
    record = {"task_id": "t3", "question": "Q?", "requirements": ["r"], "split": "final", **fields}
    return json.dumps({k: v for k, v in record.items() if v is not None}) + "\n"


def judgment(**fields) -> str:
    record = {"task_id": "t2", "doc_id": "d2", "judge": "A", "grade": 1, "obligations": [0], **fields}
    return json.dumps({k: v for k, v in record.items() if v is not None}) + "\n"


def vectors_with(row: int, vector: list | None) -> bytes:
    """The good vectors with row `row` (0-based) replaced."""
    rows = [list(v) for v in unit_vectors(3)]
    rows[row] = vector
    return parquet(["d1", "d2", "d3"], rows)


BAD = [
    # tasks.jsonl
    ("tasks.jsonl", "", 1, "empty file"),
    ("tasks.jsonl", "\n \n", 1, "empty file"),
    ("tasks.jsonl", TASKS.encode() + b'{"task_id": "t\xff"}\n', 3, "not valid UTF-8"),
    ("tasks.jsonl", TASKS + '{"task_id": "t3", "question": "Q?"\n', 3, "malformed JSON"),
    ("tasks.jsonl", TASKS + "\n" + task()[:-1] + ' {"x": 1}\n', 4, "malformed JSON"),
    ("tasks.jsonl", TASKS + task(task_id="t3")[:-2] + ', "task_id": "t4"}\n', 3, "malformed JSON"),  # key twice
    ("tasks.jsonl", TASKS + task(question=float("nan")), 3, "malformed JSON"),
    ("tasks.jsonl", TASKS + '["t3", "Q?"]\n', 3, "expected a JSON object"),
    ("tasks.jsonl", TASKS + task(question=None), 3, "missing question"),
    ("tasks.jsonl", TASKS + task(requirements=None, split=None), 3, "missing requirements"),
    ("tasks.jsonl", TASKS + task(intent="card_arrival"), 3, "unexpected key intent"),
    ("tasks.jsonl", TASKS + task(task_id=3), 3, "task_id is not a string"),
    ("tasks.jsonl", TASKS + task(task_id=""), 3, "empty task_id"),
    ("tasks.jsonl", TASKS + task(task_id="t 3"), 3, "task_id contains whitespace"),
    ("tasks.jsonl", TASKS + task(question="  "), 3, "empty question"),
    ("tasks.jsonl", TASKS + task(question=["Q?"]), 3, "question is not a string"),
    ("tasks.jsonl", TASKS + task(requirements="r"), 3, "requirements is not a list of strings"),
    ("tasks.jsonl", TASKS + task(requirements=["r", 2]), 3, "requirements is not a list of strings"),
    ("tasks.jsonl", TASKS + task(requirements=[]), 3, "empty requirements"),
    ("tasks.jsonl", TASKS + task(requirements=["r", " "]), 3, "empty requirement"),
    ("tasks.jsonl", TASKS + task(split="test"), 3, "split is not development or final"),
    ("tasks.jsonl", TASKS + task(split=None), 3, "missing split"),
    ("tasks.jsonl", TASKS + task() + task(task_id="t1"), 4, "duplicate task_id"),
    # documents.jsonl
    ("documents.jsonl", "", 1, "empty file"),
    ("documents.jsonl", DOCUMENTS + '{"doc_id": "d4"}\n', 4, "missing text"),
    ("documents.jsonl", DOCUMENTS + '{"doc_id": "d4", "text": "T", "title": "x"}\n', 4, "unexpected key title"),
    ("documents.jsonl", DOCUMENTS + '{"doc_id": "d\\t4", "text": "T"}\n', 4, "doc_id contains whitespace"),
    ("documents.jsonl", DOCUMENTS + '{"doc_id": 4, "text": "T"}\n', 4, "doc_id is not a string"),
    ("documents.jsonl", DOCUMENTS + '{"doc_id": "d4", "text": ""}\n', 4, "empty text"),
    ("documents.jsonl", DOCUMENTS + '\n{"doc_id": "d2", "text": "Again."}\n', 5, "duplicate doc_id"),
    ("documents.jsonl", DOCUMENTS + '{"doc_id": "d4", "text": "T"\n', 4, "malformed JSON"),
    # pool-key.json
    ("pool-key.json", "", 1, "empty file"),
    ("pool-key.json", '[\n  "d1"\n]\n', 1, "expected a JSON object of task_id: [doc_id, ...]"),
    ("pool-key.json", "{\n}\n", 2, "no pools in the file"),
    ("pool-key.json", '{\n  "t1": ["d1"],\n  "t9": ["d2"],\n  "t2": ["d3"]\n}\n', 3, "unknown task_id"),
    ("pool-key.json", '{\n  "t1": [\n    "d1",\n    "d7"\n  ],\n  "t2": ["d3"]\n}\n', 4,
     "pool member without a document"),
    ("pool-key.json", '{\n  "t1": ["d1", "d2",\n         "d1"],\n  "t2": ["d3"]\n}\n', 3,
     "doc_id listed twice in a pool"),
    ("pool-key.json", '{\n  "t1": ["d1"],\n  "t2": ["d3"],\n  "t1": ["d2"]\n}\n', 4,
     "task listed twice in the pool key"),
    ("pool-key.json", '{\n  "t1": ["d1"],\n  "t2": []\n}\n', 3, "empty pool"),
    ("pool-key.json", '{\n  "t1": ["d1"]\n}\n', 3, "task without a pool"),
    ("pool-key.json", '{\n  "t1": ["d1"],\n  "t2": "d3"\n}\n', 3, "pool is not a list of doc_id strings"),
    ("pool-key.json", '{\n  "t1": ["d1"],\n  "t2": ["d3", 4]\n}\n', 3, "pool is not a list of doc_id strings"),
    ("pool-key.json", '{\n  "t1": ["d1"],\n  "t2": ["d 3"]\n}\n', 3, "doc_id contains whitespace"),
    ("pool-key.json", '{\n  "t1": ["d1"]\n  "t2": ["d3"]\n}\n', 3, "malformed JSON"),  # a comma missing
    ("pool-key.json", '{\n  "t1": ["d1"],\n  "t2": ["d3"\n', 4, "malformed JSON"),
    ("pool-key.json", '{\n  "t1": ["d1"],\n  "t2": ["d3"]\n}\n{}\n', 5, "malformed JSON"),
    ("pool-key.json", '{\n  t1: ["d1"]\n}\n', 2, "expected a JSON object of task_id: [doc_id, ...]"),
    ("pool-key.json", b'{\n  "t1": ["d1"],\n  "t2": ["d\xe93"]\n}\n', 3, "not valid UTF-8"),
    # judgments.jsonl
    ("judgments.jsonl", "", 1, "empty file"),
    ("judgments.jsonl", JUDGMENTS + judgment(task_id="t9"), 4, "unknown task_id"),
    ("judgments.jsonl", JUDGMENTS + judgment(doc_id="d9"), 4, "unknown doc_id"),
    ("judgments.jsonl", JUDGMENTS + judgment(task_id="t1", doc_id="d3"), 4, "pair outside the pool"),
    ("judgments.jsonl", JUDGMENTS + judgment(judge="C"), 4, "judge is not A or B"),
    ("judgments.jsonl", JUDGMENTS + judgment(judge="a"), 4, "judge is not A or B"),
    ("judgments.jsonl", JUDGMENTS + judgment(grade=4), 4, "grade outside 0..3"),
    ("judgments.jsonl", JUDGMENTS + judgment(grade=-1), 4, "grade outside 0..3"),
    ("judgments.jsonl", JUDGMENTS + judgment(grade=2.5), 4, "grade is not an integer"),
    ("judgments.jsonl", JUDGMENTS + judgment(grade="2"), 4, "grade is not an integer"),
    ("judgments.jsonl", JUDGMENTS + judgment(grade=True), 4, "grade is not an integer"),
    ("judgments.jsonl", JUDGMENTS + judgment(obligations=[1]), 4, "requirement index out of range"),  # t2: one
    ("judgments.jsonl", JUDGMENTS + judgment(obligations=[-1]), 4, "requirement index out of range"),
    ("judgments.jsonl", JUDGMENTS + judgment(obligations=["0"]), 4, "obligations is not a list of integers"),
    ("judgments.jsonl", JUDGMENTS + judgment(obligations=0), 4, "obligations is not a list of integers"),
    ("judgments.jsonl", JUDGMENTS + judgment(task_id="t1", doc_id="d2", obligations=[1, 1]), 4,
     "requirement listed twice in obligations"),
    ("judgments.jsonl", JUDGMENTS + judgment(obligations=None), 4, "missing obligations"),
    ("judgments.jsonl", JUDGMENTS + judgment(comment="x"), 4, "unexpected key comment"),
    ("judgments.jsonl", JUDGMENTS + judgment() + judgment(judge="B") + judgment(grade=0), 6,
     "judge judged the same pair twice"),
    ("judgments.jsonl", JUDGMENTS + judgment()[:-3], 4, "malformed JSON"),
    # vectors (Parquet: the line is the 1-based row, 0 the file as a whole)
    ("vectors.parquet", b"PAR1 not really", 0, "not a Parquet file"),
    ("vectors.parquet", vectors_with(1, list(unit_vectors(1)[0][:383])), 2, "vector of the wrong dimension"),
    ("vectors.parquet", vectors_with(2, list(unit_vectors(1)[0]) + [0.0]), 3, "vector of the wrong dimension"),
    ("vectors.parquet", vectors_with(2, list(unit_vectors(1)[0] * 1.01)), 3, "vector is not unit norm"),
    ("vectors.parquet", vectors_with(0, [0.0] * 384), 1, "vector is not unit norm"),
    ("vectors.parquet", vectors_with(1, [float("nan")] + [0.0] * 383), 2, "vector is not finite"),
    ("vectors.parquet", vectors_with(1, None), 2, "missing doc_id or vector"),
    ("vectors.parquet", parquet(["d1", "d9", "d3"], [list(v) for v in unit_vectors(3)]), 2, "unknown doc_id"),
    ("vectors.parquet", parquet(["d1", "d2", "d3", "d2"], [list(v) for v in unit_vectors(4)]), 4, "duplicate doc_id"),
    ("vectors.parquet", parquet(["d1", "d3"], [list(v) for v in unit_vectors(2)]), 0, "document without a vector"),
    ("vectors.parquet", parquet([], None, id=["d1"], vector=[[1.0]]), 0, "expected the columns doc_id, vector"),
    ("vectors.parquet", parquet([], None, doc_id=[1], vector=[[1.0]]), 0, "doc_id is not a string column"),
    ("vectors.parquet", parquet([], None, doc_id=["d1"], vector=["x"]), 0, "vector is not a list of floating-point"),
]  # fmt: skip


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    """One in-memory warehouse with the good bundle `tiny` loaded, vectors included, shared by the rule
    tests (each checks that it leaves the warehouse as it found it; one warehouse per test was slow)."""
    folder = tmp_path_factory.mktemp("loaded") / "tiny"
    with Warehouse(":memory:") as warehouse:
        load_bundle(warehouse, write_bundle(folder, {**GOOD, "vectors.parquet": GOOD_VECTORS}))
        yield warehouse


@pytest.mark.parametrize(
    ("file", "content", "line", "rule"), BAD, ids=[f"{b[0]}:{b[3]}:{i}" for i, b in enumerate(BAD)]
)
def test_bad_file_names_file_line_rule_and_loads_nothing(loaded, tmp_path, file, content, line, rule):
    wh = loaded
    before = snapshot(wh)
    bad = write_bundle(tmp_path / "bad", {file: content})[file]
    with pytest.raises(InputError) as err:
        LOADS[file](wh, bad, "tiny")
    assert (err.value.path, err.value.line) == (str(bad), line), str(err.value)
    assert rule in err.value.rule, str(err.value)
    assert str(err.value).startswith(f"{bad}:{line}: ")
    assert snapshot(wh) == before


def test_a_key_given_twice_is_named(wh, tmp_path):
    bad = write_bundle(tmp_path / "b", {"tasks.jsonl": '{"task_id": "a", "task_id": "b"}\n'})["tasks.jsonl"]
    with pytest.raises(InputError, match="duplicate key 'task_id'"):
        load_evidence_tasks(wh, bad)


@pytest.mark.parametrize(
    ("loaded_files", "file", "needed"),
    [
        ((), "pool-key.json", "tasks.jsonl first (evidence.tasks)"),
        (("tasks.jsonl",), "pool-key.json", "documents.jsonl first (evidence.documents)"),
        (("tasks.jsonl", "documents.jsonl"), "judgments.jsonl", "pool-key.json first (evidence.pool)"),
        ((), "judgments.jsonl", "tasks.jsonl first (evidence.tasks)"),
        (("tasks.jsonl",), "vectors.parquet", "documents.jsonl first (evidence.documents)"),
    ],
)
def test_a_file_needs_the_files_it_is_checked_against(wh, tmp_path, loaded_files, file, needed):
    load_bundle(wh, write_bundle(tmp_path / "tiny", GOOD))  # another bundle, complete
    paths = write_bundle(tmp_path / "other", {**GOOD, "vectors.parquet": GOOD_VECTORS})
    for name in loaded_files:
        LOADS[name](wh, paths[name])
    before = snapshot(wh)
    with pytest.raises(InputError) as err:
        LOADS[file](wh, paths[file])
    assert (err.value.path, err.value.line) == (str(paths[file]), 0)
    assert err.value.rule == f"load the bundle's {needed}" and "bundle 'other'" in str(err.value)
    assert snapshot(wh) == before


# -- the demonstration bundle -----------------------------------------------------------------------
def test_demo_files_match_the_sha256_in_source_md():
    table = re.findall(r"^\| (\S+) \| \d+ \| ([0-9a-f]{64}) \|$", (DEMO / "SOURCE.md").read_text(), re.MULTILINE)
    assert {name for name, _ in table} == {*DEMO_FILES, "LICENSE"}
    for name, sha in table:
        assert hashlib.sha256((DEMO / name).read_bytes()).hexdigest() == sha, name
    assert (DEMO / "LICENSE").read_bytes() == (ROOT / "data" / "banking77" / "LICENSE").read_bytes()
    documented = re.findall(r"^\| (\S+) \| ([0-9a-f]{64}) \|$", DOCS.read_text(), re.MULTILINE)
    assert dict(documented) == {name: sha for name, sha in table if name in DEMO_FILES}


def test_demo_bundle_loads_completely(wh):
    results = [load(wh, DEMO / name) for name, load in DEMO_FILES.items()]
    assert [(r.name, r.rows) for r in results] == [("evidence_demo", n) for n in (48, 646, 666, 1332)]
    assert wh.sql("SELECT split, count(*) FROM raw.evidence_tasks GROUP BY split ORDER BY split") == [
        ("development", 12), ("final", 36)
    ]  # fmt: skip
    requirements = wh.sql("SELECT min(n), max(n), sum(n) FROM "
                          "(SELECT count(*) AS n FROM raw.evidence_requirements GROUP BY task_id)")  # fmt: skip
    pools = wh.sql(
        "SELECT min(n), max(n), count(*) FROM (SELECT count(*) AS n FROM raw.evidence_pools GROUP BY task_id)"
    )
    assert requirements == [(2, 5, 158)] and pools == [(10, 19, 48)]
    wh.open_gate()
    # both judges judge every pooled pair; B equals A or is one grade lower without obligations
    verdicts = wh.sql(
        """
        SELECT count(*), count(*) FILTER (WHERE a.grade = b.grade), count(*) FILTER (WHERE b.grade = a.grade - 1
               OR (a.grade = 0 AND b.grade = 0))
        FROM gate.evidence_judgments AS a
        JOIN gate.evidence_judgments AS b USING (bundle, task_id, doc_id)
        WHERE a.judge = 'A' AND b.judge = 'B'
        """
    )[0]
    assert verdicts[0] == 666 and verdicts[1] + verdicts[2] == 666 and 60 <= verdicts[2] <= 140
    obligations = wh.sql("SELECT judge, count(*) FROM gate.evidence_obligations GROUP BY judge ORDER BY judge")
    assert obligations == [("A", 474), ("B", 405)]


def test_the_builder_is_byte_deterministic(tmp_path):
    spec = importlib.util.spec_from_file_location("build_evidence_bundle", BUILDER)
    builder = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = builder  # dataclasses look their module up there
    try:
        spec.loader.exec_module(builder)
    finally:
        del sys.modules[spec.name]
    first, second = tmp_path / "first", tmp_path / "second"
    digests = builder.build(out=first)
    assert builder.build(out=second) == digests
    assert sorted(p.name for p in first.iterdir()) == sorted(p.name for p in DEMO.iterdir())
    for path in first.iterdir():
        assert path.read_bytes() == (second / path.name).read_bytes() == (DEMO / path.name).read_bytes(), path.name


# -- bundle validation: every documented rule has a test ----------------------------------------------
def test_every_documented_bundle_rule_is_exercised_by_the_loader_tests():
    docs = DOCS.read_text()
    section = docs.split("## Validation rules", 1)[1].split("\n## ", 1)[0]
    found = {" ".join(rule.split()) for rule in re.findall(r"`([a-z][^`]*)`", section)}
    rules = {rule for rule in found if ":" not in rule} - {"development", "final", "true", "trec.run"}
    tested = {rule for *_, rule in BAD} | {"missing <key>", "unexpected key <key>", "<key> is not a string",
                                            "load the bundle's tasks.jsonl first (evidence.tasks)"}  # fmt: skip
    untested = {rule for rule in rules if not any(rule in t or t in rule for t in tested)}
    assert untested == set()
