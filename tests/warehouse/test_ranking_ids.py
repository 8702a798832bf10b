"""The ranking views keyed by qid and docno (retrieval_ranking_ids, fused_ranking_ids, feature_ranking_ids):
the same rows as the rankings they key, each row's ids those of its query and document rows in the
staging views; a study builds them after its prepare models (companions) and never freezes them."""

from __future__ import annotations

import hashlib

import pytest
from golden_warehouses import build_golden

from rankhouse.paths import ROOT
from rankhouse.study import Protocol, Study
from rankhouse.warehouse import Warehouse
from rankhouse.warehouse.dag import Project
from rankhouse.warehouse.runner import Runner


def renumbered_ids(wh: Warehouse) -> tuple[dict[int, str], dict[int, str]]:
    """Give the queries and documents ids unlike their rows (loaded ids are the row numbers): query row r
    gets 'q<9 - r>', document row r 'd<r * 7>'; the ids by row, computed here."""
    wh.sql("UPDATE raw.queries SET qid = 'q' || CAST(9 - row_index AS VARCHAR)")
    wh.sql("UPDATE raw.documents SET doc_id = 'd' || CAST(row_index * 7 AS VARCHAR)")
    # the vectors are keyed by id (the loaded ids were the rows), the dense scores read them by id
    wh.sql("UPDATE raw.query_vectors SET qid = 'q' || CAST(9 - CAST(qid AS INTEGER) AS VARCHAR)")
    wh.sql("UPDATE raw.document_vectors SET doc_id = 'd' || CAST(CAST(doc_id AS INTEGER) * 7 AS VARCHAR)")
    rows = {r for (r,) in wh.sql("SELECT row_index FROM raw.queries")}
    docs = {r for (r,) in wh.sql("SELECT row_index FROM raw.documents")}
    return {r: f"q{9 - r}" for r in rows}, {r: f"d{r * 7}" for r in docs}


@pytest.fixture(scope="module")
def retrieval():
    with Warehouse(":memory:") as wh:
        build_golden(wh, "retrieval")
        yield wh, *renumbered_ids(wh)


@pytest.fixture(scope="module")
def fusion():
    with Warehouse(":memory:") as wh:
        build_golden(wh, "fusion")
        yield wh, *renumbered_ids(wh)


def test_retrieval_ranking_ids_are_the_rankings_with_their_rows_ids(retrieval):
    wh, qids, docnos = retrieval
    ranked = wh.sql("SELECT system, corpus, query_key, doc_key, rank, score FROM models.retrieval_rankings")
    expected = sorted((s, c, qids[q], docnos[d], rank, score, q, d) for s, c, q, d, rank, score in ranked)
    keyed = wh.sql(
        "SELECT system, corpus, qid, docno, rank, score, query_row, doc_row FROM models.retrieval_ranking_ids"
    )
    assert sorted(keyed) == expected and len(expected) == 64
    assert {row[0] for row in keyed} == {"bm25", "dense"}


def test_fused_ranking_ids_are_the_fused_rankings_with_their_rows_ids(fusion):
    wh, qids, docnos = fusion
    ranked = wh.sql("SELECT rule, corpus, query_row, doc_row, rank, score, dense_score FROM models.fused_rankings")
    expected = sorted((r, c, qids[q], docnos[d], rank, s, ds, q, d) for r, c, q, d, rank, s, ds in ranked)
    keyed = wh.sql(
        "SELECT rule, corpus, qid, docno, rank, score, dense_score, query_row, doc_row FROM models.fused_ranking_ids"
    )
    assert sorted(keyed) == expected and len({row[0] for row in keyed}) == 7  # five rules and two arms


def test_fused_ranking_ids_of_run_files_use_the_run_files_ids(fusion):
    """Fusing run files (arm_runs), the ids are those of run_query_keys and run_document_keys."""
    wh, _, _ = fusion
    project = Project.load(params={"arm_runs": ["a"]})
    sql = project.models["fused_ranking_ids"]
    assert {"run_query_keys", "run_document_keys", "fused_rankings"} <= set(project.parents[sql.name])
    assert "queries" not in project.parents[sql.name]


def test_a_study_builds_its_companions_after_the_prepare_models_and_does_not_freeze_them(tmp_path):
    """BANKING77's protocol on the tiny labelled collection (tests/fixtures/retrieval): prepare builds
    retrieval_ranking_ids; the freeze records only the prepare models."""
    folder = ROOT / "tests" / "fixtures" / "retrieval"
    text = (ROOT / "studies" / "banking77.toml").read_text()
    for name, split in (("documents.csv", "train"), ("queries.csv", "test")):
        text = text.replace(f"../data/banking77/{split}.csv", str(folder / name))
    train, test = ("b06e26ac675513959a63135f11b94ea7786ed02da65db93a5650d8838cbc664b",
                   "d12d6e3bc4c3103966ae786dc435913c0c563dfa328f5a3646d0e62cfeeb474d")  # fmt: skip
    text = text.replace(train, hashlib.sha256((folder / "documents.csv").read_bytes()).hexdigest())
    text = text.replace(test, hashlib.sha256((folder / "queries.csv").read_bytes()).hexdigest())
    text = text.replace("replicates = 10000", "replicates = 20")
    protocol = tmp_path / "tiny.toml"
    protocol.write_text(text)
    with Warehouse(tmp_path / "w.duckdb") as wh:
        study = Study(Protocol.load(protocol), wh, tmp_path / "freezes")
        assert study.companions == ["retrieval_ranking_ids"]
        built = [run.model for run in study.prepare()]
        assert built[-1] == "retrieval_ranking_ids" and "retrieval_ranking_ids" not in study.prepare_models
        freeze, _ = study.freeze()
        assert "retrieval_ranking_ids" not in freeze.record["models"]
        runner = Runner(wh, study.project, study.parameters)
        assert runner.last_built("retrieval_ranking_ids") == runner.fingerprint("retrieval_ranking_ids")
        assert wh.sql("SELECT count(*) FROM models.retrieval_ranking_ids") == [(2 * 4 * 8,)]


def test_companions_are_prepare_views_that_no_model_reads():
    project = Project.load()
    companions = [name for name, model in project.models.items() if model.companion]
    assert sorted(companions) == ["feature_ranking_ids", "fused_ranking_ids", "retrieval_ranking_ids"]
    for name in companions:
        model = project.models[name]
        assert (model.materialized, model.stage, project.children[name]) == ("view", "prepare", [])
