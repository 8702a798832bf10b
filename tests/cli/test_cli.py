"""The command line, run as a user runs it."""

from __future__ import annotations

import json

from clirunner import rankhouse
from conftest import TREC, read_qrels, read_run
from oracles import pytrec_per_query

from rankhouse.warehouse.dag import Project


def test_eval_prints_what_trec_eval_prints():
    done = rankhouse("eval", TREC / "qrels.test", TREC / "results.test")
    assert done.returncode == 0, done.stderr
    assert done.stdout == (TREC / "expected" / "out.test").read_text()


def test_eval_per_query_several_runs_and_json():
    done = rankhouse("eval", TREC / "qrels.test", TREC / "results.test", TREC / "results.trunc",
                     "-m", "map", "-m", "P.5,10", "-q")  # fmt: skip
    lines = [line.split("\t") for line in done.stdout.splitlines()]
    assert {len(line) for line in lines} == {4}
    assert ["results.trunc", "map                   ", "302", "0.0000"] in lines
    assert ["results.test", "P_10                  ", "all", "0.3000"] in lines
    as_json = json.loads(
        rankhouse("eval", TREC / "qrels.test", TREC / "results.test", "-m", "nDCG@10", "--format", "json").stdout
    )
    expected = pytrec_per_query(read_qrels(TREC / "qrels.test"), read_run(TREC / "results.test"), ["nDCG@10"])
    mean = sum(v["nDCG@10"] for v in expected.values()) / len(expected)
    assert abs(as_json["results.test"]["all"]["nDCG@10"] - mean) < 1e-9


def test_eval_options_change_the_numbers():
    base = rankhouse("eval", TREC / "qrels.test", TREC / "results.trunc", "-m", "map").stdout
    incomplete = rankhouse("eval", TREC / "qrels.test", TREC / "results.trunc", "-m", "map", "--no-complete").stdout
    assert base != incomplete
    answered = pytrec_per_query(read_qrels(TREC / "qrels.test"), read_run(TREC / "results.trunc"), ["AP"])
    assert len(answered) == 2
    assert incomplete.split()[-1] == f"{sum(v['AP'] for v in answered.values()) / 2:.4f}"


def test_bad_input_exits_2_naming_file_line_rule(tmp_path):
    bad = tmp_path / "bad.run"
    bad.write_text("q1 Q0 d1 1 1.0 tag\nq1 Q0 d2 1 NaN tag\n")
    done = rankhouse("eval", TREC / "qrels.test", bad)
    assert done.returncode == 2
    assert f"error: {bad}:2: score is NaN or infinite" in done.stderr
    assert "Traceback" not in done.stderr


def test_unknown_measure_is_a_clear_error():
    done = rankhouse("eval", TREC / "qrels.test", TREC / "results.test", "-m", "ndcg@10")
    assert done.returncode == 2 and "unknown measure 'ndcg@10'" in done.stderr


def test_models_list_show_lineage():
    listing = rankhouse("models", "list").stdout
    for name in ("run_ranking", "judged_ranking", "measure_ap", "run_measures"):
        assert name in listing
    show = rankhouse("models", "show", "measure_ap", "--db", ":memory:").stdout
    assert "parents      evaluated_queries, judged_ranking, measure_requests" in show
    assert "children     measure_avgjg, query_measures" in show
    assert "fingerprint" in show and "relevant_so_far" in show
    lineage = rankhouse("models", "lineage", "judged_ranking").stdout
    assert "raw.runs" in lineage and "gate.qrels" in lineage and "measure_ap" in lineage


def test_load_run_skip_export_sources_on_a_warehouse_file(tmp_path):
    db = tmp_path / "w.duckdb"
    assert rankhouse("load", "qrels", TREC / "qrels.test", "--db", db).returncode == 0
    loaded = rankhouse("load", "run", TREC / "results.test", "--db", db)
    assert "loaded 1500 rows into raw.runs" in loaded.stderr
    again = rankhouse("load", "run", TREC / "results.test", "--db", db)
    assert "already loaded" in again.stderr
    selected = len(Project.load().select("+run_measures"))
    first = rankhouse("run", "--select", "+run_measures", "--db", db)
    assert first.returncode == 0, first.stderr
    assert f"{selected} built, 0 skipped" in first.stderr
    second = rankhouse("run", "--select", "+run_measures", "--db", db)
    assert f"0 built, {selected} skipped" in second.stderr
    third = rankhouse("run", "-s", "+run_measures", "--param", "depth=10", "--db", db)
    assert "built    run_ranking" in third.stderr and "skipped  ideal_ranking" in third.stderr
    out = tmp_path / "copy.run"
    assert rankhouse("runs", "export", "results.test", out, "--db", db).returncode == 0
    assert len(out.read_text().splitlines()) == 1500
    sources = rankhouse("sources", "--db", db).stdout
    assert "raw.runs" in sources and "labels.qrels" in sources


def test_demo_runs_a_study_on_a_fresh_warehouse(tmp_path, monkeypatch):
    monkeypatch.delenv("RANKHOUSE_MEMORY_LIMIT", raising=False)
    done = rankhouse("demo", "--study", "trec_sample", "--db", tmp_path / "demo.duckdb", "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    assert "0.1785" in done.stdout  # trec_eval's MAP for results.test
    assert "DuckDB memory limit 1500MB (RANKHOUSE_MEMORY_LIMIT to change it)" in done.stdout + done.stderr


def test_demo_of_an_unknown_study_is_a_clear_error(tmp_path):
    done = rankhouse("demo", "--study", "nope", "--db", tmp_path / "demo.duckdb")
    assert done.returncode == 2
    assert done.stderr.startswith("error: no study 'nope' in ") and "Traceback" not in done.stderr
    assert not (tmp_path / "demo.duckdb").exists()


def test_load_a_corpus_and_encode_it_once(tmp_path):
    from conftest import FIXTURES

    db = tmp_path / "w.duckdb"
    corpus = FIXTURES / "retrieval"
    assert rankhouse("load", "documents", corpus / "documents.csv", "--corpus", "tiny", "--db", db).returncode == 0
    assert rankhouse("load", "queries", corpus / "queries.csv", "--corpus", "tiny", "--db", db).returncode == 0
    first = rankhouse("encode", "--corpus", "tiny", "--db", db)
    assert first.returncode == 0, first.stderr
    # query 2 is document 6 word for word: its vector comes from the cache
    assert "8 texts encoded, 0 from the cache" in first.stderr and "3 texts encoded, 1 from the cache" in first.stderr
    second = rankhouse("encode", "--corpus", "tiny", "--db", db)
    assert second.stderr.count("already loaded") == 2, second.stderr
    from rankhouse.warehouse import Warehouse

    with Warehouse(db) as wh:
        assert wh.sql("SELECT count(*) FROM raw.vector_cache") == [(11,)]  # query 2 is document 6: one text
        assert wh.sql("SELECT count(*) FROM raw.document_vectors") == [(8,)]


def test_query_computing_bm25_gets_array_aggregates_and_others_do_not(tmp_path):
    """`rankhouse query` over a view that computes BM25's sum (aggregate: array) runs with DuckDB's
    perfect_ht_threshold raised; a query over tables keeps DuckDB's default."""
    from conftest import FIXTURES

    from rankhouse.loaders import load_documents, load_queries
    from rankhouse.warehouse import Warehouse
    from rankhouse.warehouse.memory import PERFECT_HASH_DEFAULT_BITS, perfect_hash_bits
    from rankhouse.warehouse.runner import Runner

    db = tmp_path / "w.duckdb"
    with Warehouse(db) as wh:
        load_documents(wh, FIXTURES / "retrieval" / "documents.csv", "tiny")
        load_queries(wh, FIXTURES / "retrieval" / "queries.csv", "tiny")
        project = Project.load()
        Runner(wh, project, {"corpus": "tiny"}).run(project.select("+bm25_ranking"))
        raised = perfect_hash_bits(wh.con)
    setting = "current_setting('perfect_ht_threshold')"
    over_view = rankhouse("query", f"SELECT DISTINCT {setting} FROM models.bm25_scores", "--db", db, "--format", "csv")
    over_table = rankhouse(
        "query", f"SELECT DISTINCT {setting} FROM models.bm25_weights", "--db", db, "--format", "csv"
    )
    assert over_view.returncode == 0, over_view.stderr
    assert over_view.stdout.splitlines()[1:] == [str(raised)]
    assert over_table.stdout.splitlines()[1:] == [str(PERFECT_HASH_DEFAULT_BITS)]
