"""`rankhouse run` scoped to what a warehouse holds (issue 16, item 4): in a trec_sample warehouse and in a
small BANKING77 one it builds, in the default namespace, the models whose inputs are loaded and names the
rest with a reason; a model named by -s that cannot be built is refused before anything is built; `models
list --db` agrees; a study's namespace is never touched (issue 34). The oracles are the warehouse's own
tables read with duckdb and the project's graph walked here."""

from __future__ import annotations

import csv
import json
import re

import duckdb
import pytest
from clirunner import error_line, rankhouse_in_process
from conftest import FIXTURES
from sqlglot import exp

from rankhouse.paths import ROOT
from rankhouse.study import Protocol, Study
from rankhouse.warehouse import Warehouse
from rankhouse.warehouse.dag import Project
from rankhouse.warehouse.runner import Runner
from rankhouse.warehouse.scope import FULL, MIXED, VOID, Reading, Scope

SMALL = FIXTURES / "banking77_small"


def ok(*args: object):  # noqa: ANN201 - a CompletedProcess
    done = rankhouse_in_process(*args)
    assert done.returncode == 0, done.stderr
    return done


def sources_read(project: Project) -> dict[str, set[str]]:
    """Per model, the raw.* and gate.* tables it reads itself or through its parents, by a walk of its
    parents written here."""
    found: dict[str, set[str]] = {}

    def walk(name: str) -> set[str]:
        if name not in found:
            refs = project.references[name]
            found[name] = {r for r in refs if not r.startswith("models.")}
            for ref in refs:
                if ref.startswith("models."):
                    found[name] |= walk(ref.split(".", 1)[1])
        return found[name]

    for name in project.models:
        walk(name)
    return found


def empty_tables(db) -> set[str]:  # noqa: ANN001
    """The raw.* tables of a warehouse file that hold no row, read with duckdb."""
    with duckdb.connect(str(db), read_only=True) as con:
        tables = [
            t for (t,) in con.execute("SELECT table_name FROM duckdb_tables() WHERE schema_name = 'raw'").fetchall()
        ]
        return {f"raw.{t}" for t in tables if con.execute(f"SELECT count(*) FROM raw.{t}").fetchone()[0] == 0}


def model_runs(db) -> list[tuple[str, str]]:  # noqa: ANN001
    """The runs of the default namespace (`rankhouse run`'s), read with duckdb."""
    path = db.parent / f"{db.stem}.d" / "studies" / "default.duckdb"
    if not path.exists():
        return []
    with duckdb.connect(str(path), read_only=True) as con:
        return con.execute("SELECT model, status FROM meta.model_runs ORDER BY started_at").fetchall()


def events(stderr: str) -> list[dict]:
    return [json.loads(line) for line in stderr.splitlines()]


@pytest.fixture(scope="module")
def trec(tmp_path_factory):
    """A warehouse holding the trec_sample study (prepared, frozen, evaluated), then `rankhouse run --json`."""
    db = tmp_path_factory.mktemp("scope") / "trec.duckdb"
    ok("demo", "--study", "trec_sample", "--db", db, "--quiet")
    before = len(model_runs(db))
    done = ok("run", "--db", db, "--json")
    return db, done, model_runs(db)[before:]


def test_run_in_a_trec_sample_warehouse_builds_what_it_holds_and_skips_the_rest(trec):
    db, done, runs = trec
    project = Project.load()
    read, empty = sources_read(project), empty_tables(db)
    found = events(done.stderr)
    ran = {e["model"]: e["status"] for e in found if e["event"] == "model"}
    skipped = {m: e["reason"] for e in found if e["event"] == "models_skipped" for m in e["models"]}
    assert not set(ran) & set(skipped) and set(ran) | set(skipped) == set(project.models)
    assert "failed" not in {status for _, status in runs} and dict(runs) == ran  # what was run, as recorded
    for name in (n for n in project.models if not read[n] & empty):  # every raw table it reads holds rows
        if any(s.startswith("gate.") for s in read[name]):  # the default namespace holds no label: the study's
            reason = skipped[name]  # (grouped with others of its folder, some without raw inputs)
            assert ("no labels loaded (gate." in reason or "no inputs loaded" in reason) and "gate." in reason, name
        else:
            assert name in ran, name
    evidence = [n for n, m in project.models.items() if m.group.split("/")[0] == "evidence" and n in skipped]
    assert {n for n, m in project.models.items() if m.group.split("/")[0] == "evidence"} <= set(skipped)
    assert {t for t in empty if t.startswith("raw.evidence_")} == {
        s for n in evidence for s in read[n] if s.startswith("raw.evidence_")
    }  # every evidence input is empty
    text = ok("run", "--db", db).stderr  # the same, for a person
    no_inputs = [n for n in evidence if "no inputs" in skipped[n]]
    said = (f"skipped {len(no_inputs)} evidence models: no inputs loaded (raw.evidence_*, gate.evidence_*, "
            "gate.qrels empty)")  # fmt: skip
    assert said in text.splitlines()
    assert re.search(r"^done: 0 built, \d+ skipped, \d+ not in scope$", text, re.M), text


def test_models_list_agrees_with_what_run_skipped(trec):
    db, done, _ = trec
    lines = ok("models", "list", "--db", db).stdout.splitlines()[2:]
    status = {row[0]: row[4] for row in (re.split(r"\s{2,}", line) for line in lines)}
    skipped = {m for e in events(done.stderr) if e["event"] == "models_skipped"
               and ("no inputs" in e["reason"] or "no labels" in e["reason"]) for m in e["models"]}  # fmt: skip
    assert {n for n, s in status.items() if s == "no inputs"} == skipped
    assert status["run_ranking"] == "built" and status["judged_ranking"] == "no inputs"


def test_a_named_model_without_inputs_is_refused_before_anything_is_built(trec):
    db = trec[0]
    before = model_runs(db)
    line = error_line(rankhouse_in_process("run", "-s", "+bm25_ranking +run_ranking", "--db", db))
    assert line.startswith("error: cannot build bm25_ranking in this warehouse: bm25_ranking: no inputs loaded")
    assert "raw.documents" in line and "raw.queries" in line and "run_ranking" not in line.split(":")[1]
    assert model_runs(db) == before
    line = error_line(rankhouse_in_process("run", "-s", "run_measures", "--db", db))
    assert "run_measures: no labels loaded (gate.qrels empty)" in line  # the study's labels are its own
    assert model_runs(db) == before


def test_run_never_touches_a_studys_namespace(trec):
    """`rankhouse run` builds with the models' defaults and -p (measure_requests: the default measures, not
    trec_sample's) in the default namespace: the study's freeze stays intact, its files unchanged."""
    from warehouse_files import state

    db = trec[0]
    protocol = Protocol.load(ROOT / "studies" / "trec_sample.toml")
    frozen = json.loads((db.parent / f"{db.stem}.d" / "freezes" / "trec_sample-1.json").read_text())["models"]
    ours = {k: v for k, v in state(db).items() if "trec_sample" in k}
    ok("run", "-s", "measure_requests+", "--db", db, "-p", "measures=AP")
    with Warehouse(db, read_only=True) as wh:  # built with other parameters, in the default namespace
        assert (
            Runner(wh, Project.load(), {"measures": ["AP"]}).fingerprint("measure_requests")
            != frozen["measure_requests"]
        )
        assert wh.sql("SELECT measure FROM models.measure_requests") == [("AP",)]
    with Warehouse(db, read_only=True) as wh:  # after `rankhouse run` (the fixture's two and this), intact
        assert any(line == "current    trec_sample-1: intact" for line in Study(protocol, wh).status())
    assert {k: v for k, v in state(db).items() if "trec_sample" in k} == ours


@pytest.fixture(scope="module")
def banking(tmp_path_factory):
    """A BANKING77 warehouse of tests/fixtures/banking77_small's texts and intents (no study, no
    vectors, no features), then `rankhouse run --json`."""
    db = tmp_path_factory.mktemp("scope") / "b77.duckdb"
    for kind, file in (("documents", "train.csv"), ("queries", "test.csv"), ("document-classes", "train.csv"),
                       ("query-classes", "test.csv")):  # fmt: skip
        ok("load", kind, SMALL / file, "--corpus", "banking77", "--db", db, "--quiet")
    return db, ok("run", "--db", db, "--json")


def test_run_in_a_small_banking77_warehouse_builds_bm25_and_names_what_it_skipped(banking):
    db, done = banking
    found = events(done.stderr)
    ran = {e["model"]: e for e in found if e["event"] == "model"}
    skipped = {m: e["reason"] for e in found if e["event"] == "models_skipped" for m in e["models"]}
    assert {e["status"] for e in ran.values()} == {"built"}
    with (SMALL / "train.csv").open(newline="") as handle:
        train = [row["category"] for row in csv.DictReader(handle)]
    with (SMALL / "test.csv").open(newline="") as handle:
        test = [row["category"] for row in csv.DictReader(handle)]
    from warehouse_files import plain

    with plain(db, labels=True, read_only=True) as con:  # BM25's full rankings: every document for every query
        assert con.execute("SELECT count(*) FROM models.bm25_ranking").fetchone()[0] == len(train) * len(test)
        # the labels open in a warehouse without a study: a judgment per same-intent (test, train) pair
        assert con.execute("SELECT count(*) FROM models.class_judgments").fetchone()[0] == sum(map(train.count, test))
        # the dense arm of retrieval_rankings has no vectors: built empty, for the BM25 arm beside it
        assert con.execute("SELECT count(*) FROM models.dense_ranking").fetchone()[0] == 0
    assert {"bm25_ranking", "class_judgments", "retrieval_runs", "dense_ranking"} <= set(ran)
    assert "raw.feature_*" in skipped["feature_cosine_scores"] and "raw.runs" in skipped["run_measures"]
    assert "raw.null_panels" in skipped["null_references"]
    text = ok("run", "--db", db).stderr.splitlines()
    assert any(re.fullmatch(r"skipped \d+ features models: no inputs loaded \(.*raw\.feature_\*.*\)", t) for t in text)


def test_the_reading_of_a_query_matches_duckdbs_rows():
    """Void is a query with no row when its empty table stays empty; full and mixed have rows."""
    con = duckdb.connect()
    con.execute("CREATE SCHEMA raw; CREATE TABLE raw.a AS SELECT 1 AS k; CREATE TABLE raw.b (k INTEGER)")
    reading = Reading({"raw.a": FULL, "raw.b": VOID}, {})
    cases = {
        "SELECT * FROM raw.a UNION ALL SELECT * FROM raw.b": FULL,
        "SELECT * FROM raw.a JOIN raw.b USING (k)": VOID,
        "SELECT * FROM raw.b LEFT JOIN raw.a USING (k)": VOID,
        "SELECT * FROM raw.a LEFT JOIN raw.b USING (k)": MIXED,
        "SELECT * FROM raw.a, raw.b": VOID,
        "SELECT count(*) AS n FROM raw.b": MIXED,
        "SELECT k, count(*) AS n FROM raw.b GROUP BY k": VOID,
        "WITH c AS (SELECT * FROM raw.b) SELECT * FROM raw.a WHERE k NOT IN (SELECT k FROM c)": MIXED,
        "SELECT * FROM raw.a WHERE k IN (SELECT k FROM raw.a)": FULL,
        "SELECT * FROM generate_series(1, 3) AS g(k)": FULL,
    }
    for sql, verdict in cases.items():
        assert reading.query(exp.maybe_parse(sql, dialect="duckdb"), {}) == verdict, sql
        assert (con.execute(f"SELECT count(*) FROM ({sql})").fetchone()[0] == 0) == (verdict == VOID), sql


@pytest.mark.xdist_group("studies")  # its study fixtures come by name (conftest.py: SESSION_GROUPS)
@pytest.mark.parametrize(
    "fixture", ["banking77_study", "fusion_banking77_study", "evidence_demo_study", "lanes_subset_study"]
)
def test_every_study_model_is_in_scope_in_its_own_warehouse(fixture, request):
    """With a study's parameters, each of its prepare models can be built where it ran, and each evaluate
    model too but for the labels, which its warehouse opens only in `study evaluate`."""
    held = request.getfixturevalue(fixture)
    protocol = held.study.protocol if hasattr(held, "study") else None
    if protocol is None:
        path = {"banking77_study": "banking77", "fusion_banking77_study": "fusion_banking77",
                "evidence_demo_study": "evidence_demo"}[fixture]  # fmt: skip
        from rankhouse.paths import STUDIES_DIR

        protocol = Protocol.load(STUDIES_DIR / f"{path}.toml")
    study = Study(protocol, held.wh)
    names = study.prepare_models + study.evaluate_models
    scope = Scope.of(held.wh, study.project, names)
    assert scope.gate_refusal and "open only through" in scope.gate_refusal
    for name in study.prepare_models:
        assert scope.status(name) is None, (name, scope.missing(name))
    for name in study.evaluate_models:
        assert scope.status(name) in (None, "labels gated"), (name, scope.missing(name))
