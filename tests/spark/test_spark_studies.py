"""Engine parity of the studies: on small cuts, every portable model of every study gives DuckDB's rows on Spark.

Each case runs its studies end to end (prepare, freeze, evaluate: `rankhouse study run`) twice, in one
warehouse on DuckDB and in another with `--engine spark` (the test session's SparkSession, local[2]):
the BANKING77 retrieval study and the fusion study after it in the same warehouse (trec measures,
BM25, the paired bootstrap, Wilson intervals, p-values, the five fusion rules), the lanes study, the
evidence study (coverage, greedy selections, set measures, bootstrap within subsets) and the
named-feature study (extraction from the loopback chat server, feature scores, ablations, groups).
DuckDB's rows are the oracle for Spark's (tests/parity.py: exact for integers and strings, 1e-12
relative for doubles, a header's `parity: within(...)` columns within their amounts); a view is read from Spark
(its transpiled SQL run there). The studies run on tests/fixtures/banking77_small (304 training and 79
test messages), with plans of 200 replicates and null panels of 100 documents instead of the
protocols' 10,000 and 1,000 (the fixture has 304 documents); the evidence study on its own bundle.
"""

from __future__ import annotations

import hashlib
import json
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import FIXTURES
from parity import grain_order, row_differences

pytest.importorskip("pyspark", reason="pyspark is not installed: pip install 'rankhouse[spark]'")

from rankhouse.paths import ROOT  # noqa: E402
from rankhouse.study import Protocol, Study  # noqa: E402
from rankhouse.warehouse import Warehouse  # noqa: E402
from rankhouse.warehouse.spark import SparkEngine  # noqa: E402

SMALL = FIXTURES / "banking77_small"
FULL = {  # the protocols' BANKING77 files and their SHA-256
    "../data/banking77/train.csv": "b06e26ac675513959a63135f11b94ea7786ed02da65db93a5650d8838cbc664b",
    "../data/banking77/test.csv": "d12d6e3bc4c3103966ae786dc435913c0c563dfa328f5a3646d0e62cfeeb474d",
}
CASES = {
    "retrieval_fusion": ["banking77.toml", "fusion_banking77.toml"],
    "lanes": ["lanes_banking77.toml"],
    "evidence": ["evidence_demo.toml"],
    "features": [SMALL / "study.toml"],
}
# models whose rows the comparison must hold (so that it proves something), by case
MUST_HAVE_ROWS = {
    "retrieval_fusion": ["measure_ndcg", "paired_bootstrap", "wilson_intervals", "fusion_rrf", "fusion_fisher",
                         "fusion_stouffer", "arm_p_values", "admission", "fusion_metrics"],
    "lanes": ["lane_rankings", "lane_metrics", "bm25_lanes"],
    "evidence": ["evidence_coverage", "evidence_set_measures", "paired_differences", "bootstrap_replicates",
                 "paired_bootstrap", "evidence_metrics"],
    "features": ["feature_cosine_scores", "feature_ablations", "group_results", "group_interpretations",
                 "feature_distributions"],
}  # fmt: skip
# Models whose inputs are not the same in the two warehouses: each extracts the features once and records
# its own calls' times and latencies (the extracted values are the same: the server answers from the text).
OWN_INPUTS = {"extraction_calls", "extraction_receipts"}
# The prepare tables whose rows hold no double are the same to the bit on both engines, so a freeze
# records DuckDB's digests for them. A table of doubles may differ in their last bit (within 1e-12
# relative, the test above) and get another digest: ln and exp differ between Java's Math.log and the
# C library's (BM25's IDF: 15 of the small cut's 482 terms; Fisher's and the mixture's scores), sums of
# doubles run in the order each engine picks (evidence_objective), Spark casts a double to a DECIMAL from
# its shortest decimal form (0.935), DuckDB from its exact binary value (0.93499999999999999778), which
# the statistics macro `mean` adds (group_interpretations), and quantiles interpolate in another order.
# A freeze digests the tables as built, so a study frozen on one engine verifies and evaluates on the
# other until they are rebuilt.
OWN_TABLES = {"raw.extraction_calls", *(f"models.{name}" for name in OWN_INPUTS)}
DOUBLES = ("DOUBLE", "FLOAT")


def small_protocol(name: str | Path, root: Path) -> Path:
    """A protocol of studies/ on the small cut (FULL's files replaced by the fixture's), with smaller
    plans and panels; a protocol given as a path as it is."""
    if isinstance(name, Path):
        return name
    text = (ROOT / "studies" / name).read_text()
    for path, digest in FULL.items():
        cut = SMALL / Path(path).name
        text = text.replace(path, str(cut)).replace(digest, hashlib.sha256(cut.read_bytes()).hexdigest())
    text = text.replace('"banking77_groups.toml"', json.dumps(str(ROOT / "studies" / "banking77_groups.toml")))
    text = text.replace('"../data/', json.dumps(str(ROOT / "data"))[:-1] + "/")
    text = text.replace("replicates = 10000", "replicates = 200").replace("size = 1000", "size = 100")
    path = root / Path(name).name
    path.write_text(text)
    return path


@pytest.fixture(scope="module", params=sorted(CASES))
def studied(request, spark, tmp_path_factory):
    """A case's studies run on DuckDB and on Spark: {engine: (warehouse, [(study, evaluation)])}."""
    case = request.param
    root = tmp_path_factory.mktemp(f"parity_{case}")
    protocols = [small_protocol(name, root) for name in CASES[case]]
    with pytest.MonkeyPatch.context() as patch, _chat_server(case, patch):
        built, engine = {}, SparkEngine(session=spark)
        for name, on in (("duckdb", None), ("spark", engine)):
            wh = Warehouse(root / f"{name}.duckdb")
            runs = []
            for protocol in protocols:
                study = Study(Protocol.load(protocol), wh, root / f"freezes_{name}", engine=on)
                runs.append((study, study.run()))
            built[name] = SimpleNamespace(wh=wh, runs=runs)
    yield SimpleNamespace(case=case, engine=engine, **built)
    for name in ("duckdb", "spark"):
        built[name].wh.close()
    engine.close()


def _holds_doubles(wh: Warehouse, table: str) -> bool:
    types = wh.sql(f"SELECT column_type FROM (DESCRIBE {table})")
    return any(kind.startswith(DOUBLES) for (kind,) in types)


@contextmanager
def _chat_server(case: str, patch: pytest.MonkeyPatch):
    """The loopback chat-completions server (tests/llm_server.py) for the feature study's extraction."""
    if case != "features":
        yield
        return
    from llm_server import FakeLLM

    with FakeLLM(delay=0.0) as server:
        settings = {"RANKHOUSE_LLM_URL": server.url, "RANKHOUSE_LLM_MODEL": "asked-model",
                    "RANKHOUSE_EXTRACT_NO_SMOKE": "the loopback server of the tests",
                    "RANKHOUSE_EXTRACT_RATE": "1000", "RANKHOUSE_EXTRACT_CONCURRENCY": "4"}  # fmt: skip
        for name, value in settings.items():
            patch.setenv(name, value)
        yield


def portable_models(studied) -> dict[str, Study]:
    """Every portable model the case's studies ran, each with the (last) Spark study that ran it."""
    found = {}
    for study, _ in studied.spark.runs:
        for name in [*study.prepare_models, *study.companions, *study.evaluate_models]:
            if name not in OWN_INPUTS and studied.engine.runs_on(study.project.models[name], study.project) == "spark":
                found[name] = study
    return found


def by_study(studied) -> list[tuple[int, list[str]]]:
    """portable_models grouped by the study that ran them: (its index in the case's runs, its models)."""
    found = portable_models(studied)
    studies = [study for study, _ in studied.spark.runs]
    return [(i, sorted(n for n, s in found.items() if s is study)) for i, study in enumerate(studies)]


def enter(studied, index: int) -> None:
    """Both warehouses in the namespace of the case's `index`-th study, its gate open for its evaluated
    freeze (as `rankhouse query --study` opens it once the freeze verifies)."""
    for side in (studied.duckdb, studied.spark):
        study, evaluation = side.runs[index]
        side.wh.use(study.protocol.name)
        side.wh.open_gate(evaluation.freeze.freeze_id)


def spark_rows(studied, study: Study, name: str) -> tuple[list[str], list[tuple]]:
    model = study.project.models[name]
    if model.materialized == "view":  # a view's rows as Spark computes them
        return studied.engine.read(study.runner(), model.table)
    return studied.spark.wh.columns(f"SELECT * FROM {model.table}")  # Spark's output, handed back


def test_every_portable_model_gives_duckdbs_rows(studied):
    problems, counted = {}, {}
    for index, names in by_study(studied):
        enter(studied, index)
        study = studied.spark.runs[index][0]
        for name in names:
            model = study.project.models[name]
            columns, expected = studied.duckdb.wh.columns(f"SELECT * FROM {model.table}")
            spark_columns, got = spark_rows(studied, study, name)
            assert spark_columns == columns, name
            problem = row_differences(model, columns, grain_order(model, columns, expected),
                                      grain_order(model, columns, got))  # fmt: skip
            if problem:
                problems[name] = problem
            counted[name] = len(expected)
    assert not problems, problems
    empty = [name for name in MUST_HAVE_ROWS[studied.case] if not counted.get(name)]
    assert not empty, f"{empty} have no rows (or were not compared): the comparison would prove nothing"
    assert len(counted) >= 30


def test_the_portable_tables_were_built_on_spark(studied):
    """Each table's first build (in whichever study's namespace computed it; a later study on the same SQL,
    parameters and data reuses its store table) says it was built on Spark."""
    first: dict[str, tuple] = {}
    for index in range(len(studied.spark.runs)):
        enter(studied, index)
        for model, started, message in studied.spark.wh.sql(
            "SELECT model, started_at, message FROM meta.model_runs WHERE status = 'built'"
        ):
            if model not in first or started < first[model][0]:
                first[model] = (started, message)
    tables = [n for n, s in portable_models(studied).items() if s.project.models[n].materialized == "table"]
    assert tables
    assert {n: (first.get(n, (None, None))[1] or "")[:15] for n in tables} == {n: "built on spark " for n in tables}


def test_a_study_frozen_on_spark_has_duckdbs_freeze(studied):
    for index, ((_, on_duckdb), (_, on_spark)) in enumerate(zip(studied.duckdb.runs, studied.spark.runs)):
        enter(studied, index)
        duck, spark = on_duckdb.freeze.record, on_spark.freeze.record
        assert {n: f for n, f in spark["models"].items() if n not in OWN_INPUTS} == {
            n: f for n, f in duck["models"].items() if n not in OWN_INPUTS
        }  # the same fingerprints: the engine is no part of them
        assert spark["tables"].keys() == duck["tables"].keys()
        digest = {t: (e or {}).get("sha256") for t, e in duck["tables"].items()}
        differ = {t for t, e in spark["tables"].items() if (e or {}).get("sha256") != digest[t]}
        assert len(spark["tables"]) - len(differ) >= 10
        exact = [t for t in differ - OWN_TABLES if not _holds_doubles(studied.duckdb.wh, t)]
        assert not exact, f"tables without doubles whose digests differ between the engines: {exact}"
