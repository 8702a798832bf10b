"""Snapshot (golden file) tests: every model's output on a small fixture, checked against tests/golden.

Each tests/golden/<fixture>/ is a model test fixture as an analyst's project has them (docs/projects.md,
rankhouse/model_tests.py): fixture.toml (the models it tests and their parameters), inputs/ (the
loaded input and label tables, one CSV each) and the expected output of each model. The builders below
say how each fixture's inputs are made, from the files in tests/fixtures with rankhouse's loaders and
generators; a test checks that the files in inputs/ are what they make. The models then run through
`rankhouse test`'s code: `rankhouse test tests/golden` runs the same tests from the command line.

Rewrite the golden files (inputs and expected outputs) after an intended change with
`pytest tests/measures/test_snapshots.py --update-golden` and review the diff.
"""

from __future__ import annotations

import json

import pytest
from clirunner import rankhouse_in_process
from conftest import FIXTURES, GOLDEN

from rankhouse.measures import parse_measures
from rankhouse.model_tests import FIXTURE_FILE, INPUTS, check, read_fixture, source_csv
from rankhouse.warehouse import Warehouse
from rankhouse.warehouse.dag import Project, selection_closure
from rankhouse.warehouse.runner import Runner

TINY = FIXTURES / "tiny"
METRICS = ["AP", "AP@2", "GMAP", "nDCG", "nDCG@3", "nDCG_exp@3", "P@2", "R@2", "RR", "RR@1", "Rprec",
           "Success@1", "Bpref", "NumRet", "NumRel", "NumRelRet", "NumQ", "IPrec@0.0", "IPrec@0.5",
           "P(rel=2)@2", "R(rel=2)@2", "AP(rel=2)", "RR(rel=3)", "Success(rel=2)@1", "ERR@3", "ERR", "Judged@2",
           "Judged", "infAP", "gm_bpref", "Rprec_mult@0.5", "utility", "utility.2,-1,0,0", "11pt_avg",
           "11pt_avg(levels=[0.2,0.5,0.8])", "binG", "G", "ndcg_rel", "Rndcg", "nDCG(gains={1:2.0,2:5.0})@3",
           "relative_P@2", "SetP", "SetP(relative=True)", "SetR", "SetAP", "SetF", "SetF(beta=2)",
           "num_nonrel_judged_ret", "RBP(p=0.8)", "rbp_resid", "unj@2", "relstring@3", "dcg", "ideal_dcg",
           "yaap"]  # fmt: skip


def load_tiny_runs(wh: Warehouse) -> None:
    """The tiny TREC qrels and runs a and b (tests/fixtures/tiny)."""
    from rankhouse.loaders import load_qrels, load_run

    load_qrels(wh, TINY / "qrels.txt")
    load_run(wh, TINY / "run_a.txt", "a")
    load_run(wh, TINY / "run_b.txt", "b")


def unit_vectors(rows: int, seed: int) -> list[list[float]]:
    """Synthetic unit vectors with exact float32 values (a few non-zero coordinates of 0.5)."""
    vectors = []
    for row in range(rows):
        vector = [0.0] * 384
        for k in range(4):
            vector[(seed * 31 + row * 7 + k * 97) % 384] = 0.5
        vectors.append(vector)
    return vectors


def load_retrieval_fixture(wh: Warehouse) -> None:
    """The tiny labelled collection (tests/fixtures/retrieval) with synthetic vectors."""
    from rankhouse.loaders import load_document_classes, load_documents, load_queries, load_query_classes

    folder = FIXTURES / "retrieval"
    load_documents(wh, folder / "documents.csv", "tiny")
    load_queries(wh, folder / "queries.csv", "tiny")
    load_document_classes(wh, folder / "documents.csv", "tiny")
    load_query_classes(wh, folder / "queries.csv", "tiny")
    for table, rows, seed in (("raw.document_vectors", 8, 1), ("raw.query_vectors", 4, 2)):
        for row, vector in enumerate(unit_vectors(rows, seed)):
            wh.sql(f"INSERT INTO {table} VALUES ('tiny', ?, ?::FLOAT[384])", [str(row), vector])
    wh.sql("INSERT INTO raw.vector_models VALUES ('tiny', 'documents', 'synthetic 0.5-vectors', 'fixture', 384)")


def study_spec(protocol: str, overrides: dict, extra: str = "") -> tuple[dict, str]:
    """A study protocol's parameters (overridden for a fixture) and a selection of every model of its
    prepare and evaluate stages (and `extra`), ancestors included."""
    from rankhouse.paths import STUDIES_DIR
    from rankhouse.study import Protocol

    spec = Protocol.load(STUDIES_DIR / protocol)
    params = {"study": spec.name, **spec.parameters, **overrides}
    stages = " ".join([spec.prepare, spec.evaluate, extra]).split()
    return params, " ".join("+" + item.lstrip("+") for item in stages)


RETRIEVAL = ("banking77.toml", {"corpus": "tiny", "run_depth": 5}, "corpus_qrels_judgments retrieval_ranking_ids")


def load_retrieval(wh: Warehouse) -> None:
    """The tiny labelled collection, BM25 and dense, and every measure of the BANKING77 protocol."""
    from rankhouse.loaders import load_qrels
    from rankhouse.resample import store_plan

    load_retrieval_fixture(wh)
    load_qrels(wh, FIXTURES / "retrieval" / "qrels.txt")
    store_plan(wh, "top1_bootstrap", units=4, replicates=50, seed=7)


FUSION = (
    "fusion_banking77.toml",
    {"corpus": "tiny", "candidate_depth": 3, "reserve_depth": 2},
    "run_document_keys run_query_keys fused_ranking_ids",
)


def load_fusion(wh: Warehouse) -> None:
    """The retrieval fixture's two arms fused over their top 3, against a null panel of 4 documents; section
    9's measurements over 2 held-out blocks of its 4 queries and a calibration order of its 8 documents."""
    from rankhouse.resample import store_block_plan, store_panel, store_plan

    load_retrieval_fixture(wh)
    store_panel(wh, "null_panel", "tiny", size=4, seed=11)
    store_panel(wh, "calibration_order", "tiny", size="all", seed=12)
    store_block_plan(wh, "query_blocks", units=4, blocks=2, seed=13)
    store_plan(wh, "fusion_bootstrap", units=4, replicates=50, seed=7)


def signed_vector(spec: str) -> list[float]:
    """A synthetic unit vector from '+0 -3 ...': 0.5 (or -0.5) at each listed dimension of 384."""
    vector = [0.0] * 384
    for item in spec.split():
        vector[int(item[1:])] = 0.5 if item[0] == "+" else -0.5
    return vector


def load_evidence(wh: Warehouse) -> None:
    """The tiny evidence bundle (tests/fixtures/evidence) with its synthetic vectors; every evidence model."""
    import json

    from rankhouse.studies.evidence.generators import store_subset_plans
    from rankhouse.studies.evidence.loaders import (
        load_evidence_documents,
        load_evidence_judgments,
        load_evidence_pool,
        load_evidence_tasks,
    )
    from rankhouse.studies.evidence.select import record_program

    folder = FIXTURES / "evidence"
    for load, name in (
        (load_evidence_tasks, "tasks.jsonl"),
        (load_evidence_documents, "documents.jsonl"),
        (load_evidence_pool, "pool-key.json"),
        (load_evidence_judgments, "judgments.jsonl"),
    ):
        load(wh, folder / name, "tiny")
    vectors = json.loads((folder / "vectors.json").read_text())
    for doc_id, spec in vectors["documents"].items():
        wh.sql("INSERT INTO raw.evidence_vectors VALUES ('tiny', ?, ?::FLOAT[384])", [doc_id, signed_vector(spec)])
    for task_id, specs in vectors["facets"].items():
        for facet, spec in enumerate(specs):
            wh.sql(
                "INSERT INTO raw.evidence_facet_vectors VALUES ('tiny', ?, ?, ?::FLOAT[384])",
                [task_id, facet, signed_vector(spec)],
            )
    record_program(wh)
    store_subset_plans(wh, "evidence_bootstrap", "tiny", replicates=50, seed=7)


EVIDENCE = ("evidence_demo.toml", {"bundle": "tiny", "example_tasks": ["t1", "t3"]})


def load_lanes(wh: Warehouse) -> None:
    """The hand-made lanes fixture (tests/fixtures/lanes): three topics, lanes with MAD > 0, MAD = 0 and an
    empty union (fallback), a long document of three chunks, hand-set passage scores; BM25 lanes too."""
    from rankhouse.loaders import load_document_classes, load_documents
    from rankhouse.studies.lanes.loaders import load_lane_runs, load_narratives, load_passage_cache, load_topic_classes
    from rankhouse.studies.lanes.passages import score_passages

    folder = FIXTURES / "lanes"
    load_documents(wh, folder / "documents.csv", "tiny_lanes")
    load_narratives(wh, folder / "narratives.toml", "tiny_lanes")
    load_lane_runs(wh, folder / "lanes.run", "fixture")
    load_passage_cache(wh, folder / "passage_cache.tsv", "fixture")
    params, _ = study_spec(*LANES)
    project = Project.load(params=params)
    Runner(wh, project, params).run(project.select("+lane_chunks"))  # what the passage scores are of
    score_passages(wh, "tiny_lanes", "fixture")
    load_document_classes(wh, folder / "documents.csv", "tiny_lanes")
    load_topic_classes(wh, folder / "narratives.toml", "tiny_lanes")


# the BM25 lanes too, though the fixture's lanes come from its runs
LANES = (
    "lanes_banking77.toml",
    {"corpus": "tiny_lanes", "lane_source": "runs", "lane_set": "fixture", "lane_depth": 5},
    "bm25_lanes",
)


COMPARE_MEASURES = ["AP", "nDCG@3", "P@2", "RR"]


def compare_spec() -> tuple[dict, str]:
    """`rankhouse compare`'s models (with the randomization test) and the other two tests, those the
    metrics fixture does not test (the fixture builds those too, but tests only these)."""
    params = {"measures": COMPARE_MEASURES, "contrasts": [["a", "b"], ["b", "a"]],
              "contrast_measures": COMPARE_MEASURES, "bootstrap_plan": "boot", "permutation_plan": "flips",
              "significance_test": "randomization"}  # fmt: skip
    project = Project.load(params=params, closure=["comparisons", "paired_t_tests", "paired_bootstrap_tests"])
    names = project.select("+comparisons +paired_t_tests +paired_bootstrap_tests")
    measured = set(project.select("+run_measures"))
    return params, " ".join(name for name in names if name not in measured)


def load_compare(wh: Warehouse) -> None:
    """The tiny qrels and runs a and b compared both ways, over plans of 50 replicates of its 4 queries."""
    from rankhouse.resample import store_permutation_plan, store_plan

    load_tiny_runs(wh)
    store_plan(wh, "boot", units=4, replicates=50, seed=7)
    store_permutation_plan(wh, "flips", units=4, replicates=50, seed=8)


EXTRACTION = {"corpus": "tiny", "schema": "small", "provider": "http"}


def load_extraction(wh: Warehouse) -> None:
    """The retrieval fixture's messages in a complete extraction store (tests/fixtures/features schema),
    with hand-made attempts: two retried rows, one killed in flight and retried, an E3 phrase, and calls
    of another provider and schema."""
    from datetime import datetime, timedelta

    from rankhouse.loaders import load_documents, load_queries
    from rankhouse.studies.features.schema import load_feature_schema

    folder = FIXTURES / "retrieval"
    load_documents(wh, folder / "documents.csv", "tiny")
    load_queries(wh, folder / "queries.csv", "tiny")
    load_feature_schema(wh, FIXTURES / "features" / "small.schema.toml")
    rows = wh.sql("SELECT schema_sha256, feature FROM raw.feature_schema ORDER BY position")
    sha, features = rows[0][0], [feature for _, feature in rows]
    start = datetime(2026, 9, 26, 12, 0, 0)
    rows = [("train", i) for i in range(8)] + [("test", i) for i in range(4)]
    for n, (split, row) in enumerate(rows):
        values = [((row * 7 + position * 3 + (split == "test")) % 9) / 8 for position in range(len(features))]
        wh.sql("INSERT INTO raw.feature_values SELECT 'tiny', ?, ?, ?, 'http:m', unnest(?::VARCHAR[]), "
               "unnest(?::DOUBLE[])", [split, row, sha, features, [round(v, 3) for v in values]])  # fmt: skip
        attempts = ["http_429", "ok"] if n == 2 else ["timeout", "malformed", "ok"] if n == 9 else ["ok"]
        attempts = ["in_flight", "ok"] if n == 5 else attempts  # an attempt killed in flight, then retried
        for attempt, status in enumerate(attempts, start=1):
            ok = status == "ok"
            wh.sql("INSERT INTO raw.extraction_calls VALUES ('tiny', ?, ?, ?, 'http:m', ?, 'http', ?, ?, ?, ?, ?, ?, "
                   "?, ?, ?)", [split, row, sha, attempt, "m-2026" if ok else None,
                                start + timedelta(seconds=n * 0.5 + attempt * 0.25), 0.1 + 0.05 * (n % 4), status,
                                300 + n if ok else None, 40 if ok else None, 0.001 * (n + 1) if ok else 0.0005,
                                not ok, None if ok else f"scripted {status}"])  # fmt: skip
    wh.sql("INSERT INTO raw.extraction_calls VALUES ('tiny', 'requirements', 1011, ?, 'http:m', 1, 'http', 'm-2026', "
           "?, 2.5, 'ok', 500, 60, 0.002, false, NULL)", [sha, start + timedelta(seconds=30)])  # fmt: skip
    for provider, schema in (("minilm", sha), ("http", "another schema")):  # neither is this extraction's
        wh.sql("INSERT INTO raw.extraction_calls VALUES ('tiny', 'train', NULL, ?, ?, 1, ?, 'x', ?, 1.0, 'ok', 0, 0, "
               "0.0, false, NULL)", [schema, f"{provider}:x", provider, start])  # fmt: skip


# (card_delivery, card_payment, pending_state, declined_or_rejected) in thousandths, by row of
# tests/fixtures/features/snapshot_train.csv and snapshot_test.csv. Training rows 2 and 4 are the same
# message (an exact tie everywhere); 6 and 7 are proportional (one cosine); 8 has 499 (below df's 0.5);
# 9 is all zeros; 11 and 12 tie under C1's penalty 0.5 (600 - 200 = 500 - 100); 12 and 14 pass C1's
# filter (pending_state <= 200) although pending (semantic failures); 18 has 201 (just over C2's filter).
FEATURE_UNITS = {
    "train": [(900, 0, 300, 0), (700, 100, 600, 0), (800, 0, 200, 100), (650, 0, 500, 0), (800, 0, 200, 100),
              (1000, 0, 0, 0), (400, 0, 0, 0), (800, 0, 0, 0), (499, 0, 100, 0), (0, 0, 0, 0),
              (0, 900, 900, 0), (0, 600, 400, 0), (0, 500, 200, 0), (100, 700, 1000, 0), (0, 800, 150, 200),
              (0, 900, 0, 1000), (0, 500, 0, 800), (0, 600, 100, 700), (200, 700, 0, 201), (0, 400, 0, 450)],
    "test": [(800, 0, 300, 0), (800, 0, 0, 0), (0, 700, 800, 0), (0, 700, 800, 0), (0, 800, 0, 900), (0, 0, 0, 0)],
}  # fmt: skip
# the provider's reading of each E3 phrase (G01.4 named no feature) and its flags (G02.3 has none)
INTERPRETED = {
    "G01.1": {"card_delivery": 0.9}, "G01.2": {"card_delivery": 0.8, "pending_state": 0.4},
    "G01.3": {"card_delivery": 1.0}, "G01.4": {},
    "G02.1": {"card_payment": 0.7, "pending_state": 0.9}, "G02.2": {"card_payment": 0.6, "declined_or_rejected": 0.8},
    "G02.3": {"pending_state": 1.0}, "G02.4": {"declined_or_rejected": 0.75, "card_payment": 0.25},
}  # fmt: skip
FLAGGED = {"G01.2": (False, True), "G01.4": (True, False)}  # (unsupported, review); the others (False, False)
# seed 004 E3/E4 as parts of the feature study: the parameters of studies/banking77_features.toml
FEATURE_STUDY = (
    "banking77_features.toml",
    {"corpus": "tiny", "schema": "snapshot", "cluster_plan": "group_bootstrap",
     "rankings": ["feature_rankings", "feature_ablation_rankings", "group_rankings@e3", "case_rankings@e4",
                  "case_rankings@e4_unwanted"],
     "part_judgments": ["group_judgments@e3", "case_judgments@e4", "case_unwanted_judgments@e4_unwanted"],
     "measures": ["Top-1", "Hit@5", "R@5", "RR", "nDCG@10", "P@5", "P@10", "R@10", "Hit@10", "MRR"],
     "cluster_measures": ["P@10", "R@10", "Hit@10", "nDCG@10", "MRR"], "filter_units": 200},
    "+extraction_receipts +group_rankings +group_clusters +group_interpretations +case_rankings "
    "+case_penalty_checks +case_filter +case_top10_changes +cluster_bootstrap +group_results "
    "+case_unwanted_rank_changes +case_semantic_failures feature_ranking_ids",
)  # fmt: skip


def load_features(wh: Warehouse) -> None:
    """Seed 004 E2-E5 on 20 hand-made training messages of 4 intents and 6 test messages (one also in
    training, two equal once normalised, one without features), a schema of 4 features in 2 families,
    2 groups and 6 cases (tests/fixtures/features/snapshot_*), the provider's values and readings as
    above, and plans of 20 replicates from the study's generators."""
    from datetime import datetime

    from rankhouse.generators import GENERATORS, Context
    from rankhouse.loaders import load_document_classes, load_documents, load_queries, load_query_classes
    from rankhouse.studies.features.groups import load_groups, load_requirements
    from rankhouse.studies.features.schema import load_feature_schema

    folder = FIXTURES / "features"
    load_documents(wh, folder / "snapshot_train.csv", "tiny")
    load_queries(wh, folder / "snapshot_test.csv", "tiny")
    load_document_classes(wh, folder / "snapshot_train.csv", "tiny")
    load_query_classes(wh, folder / "snapshot_test.csv", "tiny")
    load_feature_schema(wh, folder / "snapshot.schema.toml")
    load_groups(wh, folder / "snapshot_groups.toml", "tiny")
    load_requirements(wh, folder / "snapshot_requirements.toml", "tiny")
    rows = wh.sql("SELECT schema_sha256, feature FROM raw.feature_schema WHERE schema = 'snapshot' ORDER BY position")
    sha, features, extractor = rows[0][0], [feature for _, feature in rows], "minilm:0123456789ab"
    wh.con.executemany("INSERT INTO raw.feature_values VALUES ('tiny', ?, ?, ?, ?, ?, ?)",
                       [(split, row, sha, extractor, f, u / 1000) for split, table in FEATURE_UNITS.items()
                        for row, units in enumerate(table) for f, u in zip(features, units)])  # fmt: skip
    wh.con.executemany(
        "INSERT INTO raw.requirement_values VALUES ('tiny', ?, ?, ?, ?, ?)",
        [(item, sha, extractor, f, w) for item, ws in INTERPRETED.items() for f, w in ws.items()],
    )
    wh.con.executemany("INSERT INTO raw.requirement_flags VALUES ('tiny', ?, ?, ?, ?, ?, ?, ?)",
                       [(item, sha, extractor, *FLAGGED.get(item, (False, False)), max(ws.values(), default=0.0),
                         "names no feature" if not ws else None) for item, ws in INTERPRETED.items()
                        if item != "G02.3"])  # fmt: skip
    for n, split in enumerate(("train", "test", "requirements")):  # the stand-in's batch calls, one per split
        wh.sql("INSERT INTO raw.extraction_calls VALUES ('tiny', ?, NULL, ?, ?, 1, 'minilm', 'all-MiniLM-L6-v2', ?, "
               "?, 'ok', NULL, NULL, 0.0, false, NULL)",
               [split, sha, extractor, datetime(2026, 9, 26, 12, 0, n), 0.5 + n])  # fmt: skip
    context = Context(wh, lambda _: None, lambda _: lambda done, total: None, lambda _: None)
    for kind, plan in (("resample_plan", "top1_bootstrap"), ("cluster_plan", "group_bootstrap")):
        GENERATORS[kind].run(context, plan, {"corpus": "tiny", "seed": 20260926, "replicates": 20})


def metrics_spec() -> tuple[dict, str]:
    """Every ranked-list measure of METRICS on the tiny runs, as `rankhouse eval` computes them."""
    return {"measures": [m.canonical for m in parse_measures(METRICS)]}, "+run_measures +measure_relstring"


def load_tiny_prefs(wh: Warehouse) -> None:
    """Runs a and b with trec_eval preferences (-R prefs): tests/fixtures/tiny/prefs.txt."""
    from rankhouse.loaders import load_prefs, load_run

    load_prefs(wh, TINY / "prefs.txt")
    load_run(wh, TINY / "run_a.txt", "a")
    load_run(wh, TINY / "run_b.txt", "b")


def load_tiny_qrels_jg(wh: Warehouse) -> None:
    """Runs a and b with trec_eval judgment groups (-R qrels_jg): tests/fixtures/tiny/qrels_jg.txt."""
    from rankhouse.loaders import load_qrels_jg, load_run

    load_qrels_jg(wh, TINY / "qrels_jg.txt")
    load_run(wh, TINY / "run_a.txt", "a")
    load_run(wh, TINY / "run_b.txt", "b")


def load_tiny_zscores(wh: Warehouse) -> None:
    """The tiny qrels and runs a and b, with z-score parameters (-Z): tests/fixtures/tiny/zscores.txt."""
    from rankhouse.loaders import load_zscores

    load_tiny_runs(wh)
    load_zscores(wh, TINY / "zscores.txt")


def format_spec(measures: list[str], **options: object) -> tuple[dict, str]:
    """`rankhouse eval`'s models under -R or -Z: the measures of that format on the tiny runs, testing the
    models the metrics fixture does not reach (with run_measures, their outcome)."""
    from rankhouse.evaluation import EvalOptions

    params = {"measures": [m.canonical for m in parse_measures(measures)], **EvalOptions(**options).parameters()}
    targets = ["run_measures", *(["query_zscores"] if "zscores" in options else [])]
    project = Project.load(params=params, closure=targets)
    names = project.select(" ".join(f"+{t}" for t in targets))
    params_metrics, selection = metrics_spec()
    reached = set(Project.load(params=params_metrics, closure=selection_closure(selection)).select(selection))
    return params, " ".join(n for n in names if n not in reached or n in targets)


# fixture -> (how its inputs are made, its parameters and the models it tests)
SNAPSHOTS = {
    "metrics": (load_tiny_runs, metrics_spec),
    "retrieval": (load_retrieval, lambda: study_spec(*RETRIEVAL)),
    "fusion": (load_fusion, lambda: study_spec(*FUSION)),
    "evidence": (load_evidence, lambda: study_spec(*EVIDENCE)),
    "lanes": (load_lanes, lambda: study_spec(*LANES)),
    "compare": (load_compare, compare_spec),
    "extraction": (load_extraction, lambda: (EXTRACTION, "+feature_coverage +extraction_receipts")),
    "features": (load_features, lambda: study_spec(*FEATURE_STUDY)),
    "prefs": (load_tiny_prefs, lambda: format_spec(["prefs"], rel_format="prefs")),
    "qrels_jg": (load_tiny_qrels_jg, lambda: format_spec(["qrels_jg"], rel_format="qrels_jg")),
    "zscores": (load_tiny_zscores, lambda: format_spec(["map", "P.5", "num_ret"], zscores=TINY / "zscores.txt")),
}  # fmt: skip


def models_tested(fixture: str) -> list[str]:
    """The models a fixture tests: those its selection names (and their ancestors, with `+`)."""
    params, selection = SNAPSHOTS[fixture][1]()
    return Project.load(params=params, closure=selection_closure(selection)).select(selection)


CASES = [(fixture, name) for fixture in SNAPSHOTS for name in models_tested(fixture)]


def toml_value(value: object) -> str:
    """A parameter value in TOML."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(map(toml_value, value)) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


def fixture_files(fixture: str) -> dict[str, str]:
    """A fixture's fixture.toml and input files as its builder makes them: every table its models read
    that the builder filled, dumped exactly (model_tests.source_csv)."""
    load, spec = SNAPSHOTS[fixture]
    params, selection = spec()
    project = Project.load(params=params, closure=selection_closure(selection))
    read = set().union(*(project.upstream_sources[name] for name in project.select(selection)))
    description = " ".join(load.__doc__.split())
    head = f"description = {json.dumps(description)}\nmodels = {json.dumps(selection)}\n\n[parameters]\n"
    files = {FIXTURE_FILE: head + "".join(f"{k} = {toml_value(v)}\n" for k, v in params.items())}
    with Warehouse(":memory:") as wh:
        load(wh)
        wh.open_gate()
        for table in sorted(read):
            if wh.sql(f"SELECT count(*) FROM {table}")[0][0]:
                files[f"{INPUTS}/{table}.csv"] = source_csv(wh, table)
    return files


def files_on_disk(fixture: str) -> dict[str, str]:
    folder = GOLDEN / fixture
    found = [folder / FIXTURE_FILE, *sorted((folder / INPUTS).glob("*"))] if (folder / INPUTS).is_dir() else []
    return {path.relative_to(folder).as_posix(): path.read_text() for path in found if path.is_file()}


def write_fixture_files(fixture: str) -> None:
    """--update-golden: the fixture's files as its builder makes them, stale inputs and expected files removed."""
    folder = GOLDEN / fixture
    made = fixture_files(fixture)
    for name in set(files_on_disk(fixture)) - set(made):
        (folder / name).unlink()
    for path in folder.glob("*.csv"):
        if path.stem not in models_tested(fixture):
            path.unlink()
    for name, text in made.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)


@pytest.fixture(scope="module")
def outcomes(request):
    """Every golden fixture run through `rankhouse test`'s code (model_tests.check): each tested model's outcome."""
    update = request.config.getoption("--update-golden")
    if update:
        for fixture in SNAPSHOTS:
            write_fixture_files(fixture)
    fixtures = [read_fixture(GOLDEN / fixture) for fixture in SNAPSHOTS]
    return {(outcome.fixture.name, outcome.model): outcome for outcome in check(fixtures, update)}


@pytest.mark.parametrize("fixture", SNAPSHOTS)
def test_the_fixture_files_are_what_its_builder_makes(fixture, request):
    if request.config.getoption("--update-golden"):
        write_fixture_files(fixture)
    made = fixture_files(fixture)
    assert made.keys() == files_on_disk(fixture).keys()
    for name, text in made.items():
        assert files_on_disk(fixture)[name] == text, f"{GOLDEN / fixture / name}: run pytest --update-golden"


def test_every_model_has_a_snapshot():
    assert set(Project.load().models) - {name for _, name in CASES} == set()


def test_every_golden_file_belongs_to_a_snapshot():
    stale = {(p.parent.name, p.stem) for p in GOLDEN.glob("*/*.csv")} - set(CASES)
    assert stale == set(), f"golden files of no snapshot (a model renamed or removed?): {sorted(stale)}"


@pytest.mark.parametrize(("fixture", "name"), CASES)
def test_model_output_matches_golden_file(outcomes, fixture, name):
    outcome = outcomes[(fixture, name)]
    assert outcome.status in ("passed", "written", "updated"), outcome.detail


def test_rankhouse_test_runs_a_golden_fixture_from_the_command_line():
    done = rankhouse_in_process("test", GOLDEN / "compare")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == f"{sum(f == 'compare' for f, _ in CASES)} passed" != "0 passed"
