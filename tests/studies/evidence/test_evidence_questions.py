"""Seed 000 keeps "all 48 question vectors unchanged": a bundle's own question vectors (the loader
evidence.question_vectors, rankhouse/studies/evidence/loaders.py) are checked against its tasks, used instead of
encoding the questions (rankhouse/studies/evidence.py encode_bundle), and are the questions' facet vectors
the study reads (models/evidence/staging/evidence_facet_vectors.sql with own_question_vectors); and the
demonstration bundle is labelled a stand-in in results.json and the report."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from evidence_bundles import GOOD, parquet, unit_vectors, write_bundle

from rankhouse.errors import InputError
from rankhouse.loaders import LOADERS
from rankhouse.studies.evidence.generators import encode_bundle
from rankhouse.studies.evidence.loaders import (
    load_evidence_documents,
    load_evidence_question_vectors,
    load_evidence_tasks,
)
from rankhouse.warehouse.dag import Project
from rankhouse.warehouse.runner import Runner


class HashEncoder:
    """A stand-in encoder: a unit vector from each text's SHA-256, and a record of what it was asked."""

    dim, fingerprint, model_name = 384, "hash-encoder-1", "hash"

    def __init__(self) -> None:
        self.asked: list[str] = []

    def encode(self, texts, progress=None):  # noqa: ANN001, ANN201
        self.asked += list(texts)
        seeds = [int.from_bytes(hashlib.sha256(t.encode()).digest()[:4], "big") for t in texts]
        return np.stack([unit_vectors(1, seed)[0] for seed in seeds])


QUESTIONS = unit_vectors(2, seed=99)


def questions_file(ids=("t1", "t2"), vectors=None) -> bytes:
    vectors = QUESTIONS if vectors is None else vectors
    return parquet(None, None, task_id=list(ids), vector=[list(map(float, v)) for v in vectors])


@pytest.fixture
def bundle(wh, tmp_path):
    files = {name: GOOD[name] for name in ("tasks.jsonl", "documents.jsonl")}
    paths = write_bundle(tmp_path / "b", {**files, "question_vectors.parquet": questions_file()})
    load_evidence_tasks(wh, paths["tasks.jsonl"])
    load_evidence_documents(wh, paths["documents.jsonl"])
    return paths


def test_the_questions_load_under_the_bundles_questions_name(wh, bundle):
    result = load_evidence_question_vectors(wh, bundle["question_vectors.parquet"])
    assert (result.name, result.rows, result.status) == ("b:questions", 2, "loaded")
    rows = wh.sql("SELECT bundle, task_id, facet, vector FROM raw.evidence_facet_vectors ORDER BY task_id")
    assert [r[:3] for r in rows] == [("b:questions", "t1", 0), ("b:questions", "t2", 0)]
    np.testing.assert_array_equal(np.array([r[3] for r in rows], dtype=np.float32), QUESTIONS)  # unchanged
    assert load_evidence_question_vectors(wh, bundle["question_vectors.parquet"]).status == "unchanged"
    assert LOADERS["evidence.question_vectors"].load is load_evidence_question_vectors


@pytest.mark.parametrize(
    ("content", "rule"),
    [
        (lambda: questions_file(("t1",), QUESTIONS[:1]), "task without a vector"),
        (lambda: questions_file(("t1", "t9")), "unknown task_id"),
        (lambda: questions_file(("t1", "t1")), "duplicate task_id"),
        (lambda: questions_file(vectors=QUESTIONS * 2), "vector is not unit norm"),
        (lambda: parquet(["t1", "t2"], [list(v) for v in QUESTIONS]), "expected the columns task_id, vector"),
    ],
)
def test_bad_question_vectors_name_the_rule_and_load_nothing(wh, bundle, tmp_path, content, rule):
    path = tmp_path / "b" / "question_vectors.parquet"
    path.write_bytes(content())
    with pytest.raises(InputError, match=rule):
        load_evidence_question_vectors(wh, path)
    assert wh.sql("SELECT count(*) FROM raw.evidence_facet_vectors")[0][0] == 0
    with pytest.raises(InputError, match="<bundle>:questions"):
        load_evidence_question_vectors(wh, bundle["question_vectors.parquet"], "b")


def test_own_questions_are_not_encoded_and_are_the_facet_vectors_read(wh, bundle):
    encoder = HashEncoder()
    load_evidence_question_vectors(wh, bundle["question_vectors.parquet"])
    encode_bundle(wh, "b", encoder)
    questions = {"Card late?", "Fee?"}
    assert not questions & set(encoder.asked)  # the questions were never encoded
    assert {"delivery time", "what to do", "which fee"} <= set(encoder.asked)
    params = {"bundle": "b", "own_question_vectors": True}
    project = Project.load(params=params)
    Runner(wh, project, params).run(["evidence_facet_vectors"])
    facets = {(b, t, f): v for b, t, f, v in wh.sql("SELECT * FROM models.evidence_facet_vectors")}
    assert sorted(facets) == [("b", "t1", 0), ("b", "t1", 1), ("b", "t1", 2), ("b", "t2", 0), ("b", "t2", 1)]
    np.testing.assert_array_equal(np.array([facets[("b", t, 0)] for t in ("t1", "t2")], dtype=np.float32), QUESTIONS)
    # without own questions the same bundle encodes them, and the view is the table as it was
    other = HashEncoder()
    wh.sql("DELETE FROM raw.evidence_facet_vectors")
    wh.sql("DELETE FROM meta.sources WHERE table_name = 'raw.evidence_facet_vectors'")
    encode_bundle(wh, "b", other)
    assert questions <= set(other.asked)


def test_the_demonstration_bundle_is_labelled_a_stand_in(evidence_demo_study):
    block = evidence_demo_study.results["stand_in"]
    assert block["stand_in"] is True and "simulated" in block["note"]
    assert evidence_demo_study.results["question_vectors"] == "encoded"


def test_the_report_shows_the_stand_in_banner(study_reports):
    _, folder, html = study_reports["evidence"]
    assert "Every figure here is a stand-in&#39;s." in html or "Every figure here is a stand-in's." in html
    assert "simulated" in (folder / "report.md").read_text()
