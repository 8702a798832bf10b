"""The whole named-feature study (seed 004 E2-E5) end to end on the small BANKING77 cut
(tests/fixtures/banking77_small/study.toml) with the `http` provider against the loopback
chat-completions server (tests/llm_server.py): `rankhouse study prepare` killed (SIGKILL) in the middle
of the extraction, then the study run to the end, which resumes the store and extracts no committed
message again; every output written; E2's weighted Top-1 checked against an exact Python recomputation
from the server's own answers."""

from __future__ import annotations

import csv
import json
import math
import os
import signal
import subprocess
import sys
import time
import tomllib
from collections import Counter
from types import SimpleNamespace

import duckdb
import pytest
from conftest import FIXTURES
from llm_server import MODEL, FakeLLM, feature_value

from rankhouse.paths import ROOT
from rankhouse.study import Protocol, Study
from rankhouse.study.outputs import write_outputs
from rankhouse.warehouse import Warehouse

SMALL = FIXTURES / "banking77_small"
PROTOCOL = SMALL / "study.toml"
SCHEMA = ROOT / "studies" / "banking77_features.schema.toml"
HELD_AFTER = 40  # answers let through before the kill


def rows(name: str) -> list[dict]:
    with (SMALL / name).open(newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """prepare killed mid-extraction, then the study run in this process, and its outputs written."""
    root = tmp_path_factory.mktemp("feature_study")
    db = root / "study.duckdb"
    command = [sys.executable, "-m", "rankhouse", "study", "prepare", str(PROTOCOL), "--db", str(db)]
    settings = {
        "RANKHOUSE_EXTRACT_RATE": "1000",
        "RANKHOUSE_EXTRACT_CONCURRENCY": "4",
        "RANKHOUSE_EXTRACT_NO_SMOKE": "the loopback server of the tests (the smoke gate: test_extraction)",
    }
    with FakeLLM(delay=0.01) as server, pytest.MonkeyPatch.context() as patch:
        env = {"RANKHOUSE_LLM_URL": server.url, "RANKHOUSE_LLM_MODEL": "asked-model", **settings}
        server.hold_after = HELD_AFTER
        process = subprocess.Popen(
            command, env={**os.environ, **env, "PYTHONPATH": str(ROOT)}, cwd=root,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        deadline = time.monotonic() + 120
        while (server.answered < HELD_AFTER or server.held < 1) and time.monotonic() < deadline:
            assert process.poll() is None, process.stderr.read().decode()
            time.sleep(0.02)
        time.sleep(0.3)  # the last answer let through is committed; the workers are held
        process.send_signal(signal.SIGKILL)
        process.wait()
        server.release.set()
        with Warehouse(db) as wh:  # readers see the inputs as published before the load: none of it
            published = wh.sql("SELECT count(*) FROM raw.feature_values")[0][0]
        # the rows committed before the kill are in the load's building copy, which the next load carries on
        building = duckdb.connect(str(root / "study.d" / "building" / "inputs.duckdb"), read_only=True)
        (committed,) = building.execute("SELECT count(DISTINCT (split, row_index)) FROM raw.feature_values").fetchone()
        (killed,) = building.execute("SELECT count(*) FILTER (WHERE possibly_charged) FROM raw.extraction_calls "
                                     "WHERE status = 'in_flight'").fetchone()  # fmt: skip
        building.close()
        server.hold_after = None
        for name, value in env.items():
            patch.setenv(name, value)
        wh = Warehouse(db)
        protocol = Protocol.load(PROTOCOL)
        run = Study(protocol, wh, root / "freezes")
        evaluation = run.run()
        written = write_outputs(run, evaluation, root / "out")
        answers = Counter(server.answers)
    yield SimpleNamespace(
        wh=wh, study=run, evaluation=evaluation, out=root / "out", written=written, answers=answers,
        committed=committed, published=published, killed=killed,
        results=json.loads((root / "out" / "results.json").read_text()),
        train=rows("train.csv"), test=rows("test.csv"),
    )  # fmt: skip
    wh.close()


def test_the_kill_left_a_resumable_store_and_no_message_was_extracted_twice(study):
    assert 0 < study.committed <= HELD_AFTER  # killed in the middle: some rows committed, most not
    assert study.published == 0  # and none of them published: readers saw the inputs as they were
    assert study.killed >= 1  # the attempts in flight at the kill stay in the receipts, possibly charged
    texts = Counter(r["text"] for r in study.train + study.test)
    groups = tomllib.loads((ROOT / "studies" / "banking77_groups.toml").read_text())["group"]
    phrases = Counter(p for g in groups for p in g["paraphrases"])
    by_kind: dict[str, Counter] = {}
    for (kind, text), n in study.answers.items():
        by_kind.setdefault(kind, Counter())[text] += n
    assert sorted(by_kind.values(), key=len) == [phrases, texts]  # messages, and the E3 phrases' readings
    # every message answered once per row it is (duplicated texts are rows of their own), none twice
    stored = study.wh.sql("SELECT split, count(DISTINCT row_index) FROM raw.feature_values GROUP BY split ORDER BY 1")
    assert stored == [("test", len(study.test)), ("train", len(study.train))]


def exact_weighted_top1(train: list[dict], test: list[dict], features: list[str]) -> float:
    """E2's weighted relevance Top-1 from the server's answers, in integers (sql/macros/features.sql's
    units: values in thousandths, weights in 1e-6), ties by training row."""
    D = [[round(feature_value(r["text"], f) * 1000) for f in features] for r in train]
    Q = [[round(feature_value(r["text"], f) * 1000) for f in features] for r in test]
    n = len(D)
    weights = [round(math.log((n + 1) / (sum(d[i] >= 500 for d in D) + 1)) * 1e6) for i in range(len(features))]
    hits = 0
    for q, query in zip(Q, test, strict=True):
        terms = [w * v for w, v in zip(weights, q, strict=True)]
        keys = [sum(t * v for t, v in zip(terms, d, strict=True)) for d in D]
        best = min(range(n), key=lambda row: (-keys[row], row))
        hits += train[best]["category"] == query["category"]
    return hits / len(test)


def test_e2_weighted_top1_matches_an_exact_recomputation(study):
    features = [f["name"] for f in tomllib.loads(SCHEMA.read_text())["feature"]]
    assert len(features) == 34
    expected = exact_weighted_top1(study.train, study.test, features)
    assert study.results["methods"]["weighted"]["Top-1"]["value"] == pytest.approx(expected, abs=1e-15)


def test_every_part_is_reported(study):
    found = study.results
    assert set(found["methods"]) == {"bm25", "cosine", "dot", "weighted"}
    assert set(found["e3"]["systems"]) == {"phrase-bm25", "interpreted-requirements", "manual-requirements"}
    assert set(found["e4"]["cases"]) == {f"C{i}" for i in range(1, 8)}
    assert all(len(case["systems"]) == 5 for case in found["e4"]["cases"].values())
    assert {a["kind"] for a in found["ablations"]} == {"feature", "family"} and len(found["ablations"]) == 2 * 38
    assert found["extractor"]["extractor"] == "http:asked-model" and found["extractor"]["stand_in"] is True
    receipts = {r["split"]: r for r in found["receipts"]}
    assert MODEL in json.dumps(receipts["train"])  # the model id the server answered with
    assert receipts["train"]["complete"] == len(study.train) and receipts["test"]["missing"] == 0
    for name in ("results.json", "report.md", "per_query.csv", "weights.csv", "ablations.csv", "e3_groups.csv",
                 "e4_cases.csv", "e4_semantic_failures.csv", "query_fixtures.json", "receipts.csv"):  # fmt: skip
        assert (study.out / name).stat().st_size > 0, name
    report = (study.out / "report.md").read_text()
    assert "## E3: broader semantic retrieval" in report and "## E4" in report and "## Extraction receipts" in report


# -- the report (rankhouse report DIR) --------------------------------------------------------------
def test_the_report_draws_e3_and_e4_as_the_models_have_them(study, tmp_path):
    """E4's rank-change plots against the case rankings read back here (each document of the positive top
    10 or of a changed system's top 10: its rank in both, or none where the filter removed it), E3's
    intervals against the cluster bootstrap, and the page in Chromium when it is installed."""
    from conftest import copied
    from report_pages import figures, marks

    from rankhouse.report import build

    folder = copied(study.out, tmp_path / "out")
    build(folder)
    html = (folder / "report.html").read_text()
    found = figures(html)
    freeze = study.results["freeze_id"]
    ranks: dict = {}
    for system, case_id, doc_id, rank in study.wh.sql(
        "SELECT r.system, r.case_id, d.doc_id, r.rank FROM models.case_rankings AS r "
        "JOIN models.documents AS d ON d.corpus = r.corpus AND d.doc_row = r.doc_key"
    ):
        ranks.setdefault((case_id, system), {})[doc_id] = rank
    roles = dict(
        ((c, d), role) for c, d, role in study.wh.sql("SELECT case_id, doc_id, role FROM models.case_intent_documents")
    )  # fmt: skip (a labels model: the gate's)
    cases = sorted({case for case, _ in ranks})
    assert len(cases) == 7
    for case in cases:
        positive = ranks[(case, "positive")]
        expected = set()
        for system in ("penalty-0.25", "penalty-0.5", "penalty-1", "hard-filter"):
            after = ranks[(case, system)]
            shown = {d for d, r in positive.items() if r <= 10} | {d for d, r in after.items() if r <= 10}
            expected |= {(d, system, str(positive[d]), str(after.get(d, ""))) for d in shown}
        drawn = {
            (m["label"].split(" ")[0], m["series"], m["before"], m["after"])
            for m in marks(found[f"e4-ranks-{case.lower()}"])
        }
        assert drawn == expected, case
        labels = {m["label"] for m in marks(found[f"e4-ranks-{case.lower()}"])}
        assert labels == {d + {"unwanted": " (unwanted)", "desired": ""}.get(roles.get((case, d)), " (other)")
                          for d, *_ in expected}  # fmt: skip
    intervals = study.wh.sql(
        "SELECT m.system, m.value, c.ci_low, c.ci_high FROM results.run_measures AS m JOIN results.cluster_bootstrap "
        "AS c ON c.freeze_id = m.freeze_id AND c.study = m.study AND c.system = m.system AND c.measure = m.measure "
        "AND c.subset = m.subset WHERE m.freeze_id = ? AND m.study = ? AND m.measure = 'nDCG@10' AND m.subset = 'all'",
        [freeze, f"{study.results['study']}/e3"],
    )
    drawn = {(m["label"], float(m["estimate"]), float(m["low"]), float(m["high"])) for m in marks(found["e3-ndcg-10"])}
    assert drawn == set(intervals) and len(drawn) == 3
    assert "Every figure here is a stand-in" in html  # the extractor's label, at the top of the page
    from browser import chromium, problems

    if chromium():
        assert problems(folder / "report.html", tmp_path / "browser", "features") == []
