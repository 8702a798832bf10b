"""The writer of lanes studies (seed 002; studies/lanes_banking77.toml): each ordering's measures, the
candidate sets' sizes k_t, the passage-scoring receipt, and the run files for submission, validated,
with a manifest of hashes and per-topic receipts.

results.json `methods.<combo|breadth|narrative>.<measure>.value` (every measure the protocol asks for),
`candidates`, `passage_scoring`; per_query.csv (those of P@10, R@10, nDCG@10 and RR the protocol asks
for); k_distribution.csv; lanes.run; runs/<ordering>.run; manifest.json; metadata.json (seed 002's
compact provenance and its run classification table, which the report shows). `needs` says what a lanes
protocol's stages must build for this writer (rankhouse.study.outputs.check_protocol).
"""

from __future__ import annotations

from pathlib import Path

from rankhouse.measures import parse_measures
from rankhouse.study import Evaluation, Protocol, Study
from rankhouse.study.writing import header, write_csv, write_json

METHODS = ["combo", "breadth", "narrative"]
# per_query.csv's measures, each a column of lane_query_metrics (NULL where the protocol does not ask for it)
PER_QUERY = {"P@10": "p10", "R@10": "r10", "nDCG@10": "ndcg10", "RR": "rr"}
# What the writer reads: models a stage must build (the run files, receipts and k_t come from them), and
# evaluate models whose results it reads.
READS = ["lane_topics", "lane_candidates", "lane_chunks", "lane_scores", "lane_statistics", "lane_orderings",
         "candidate_summary"]  # fmt: skip
RESULTS = ["lane_metrics", "lane_query_metrics"]


def needs(protocol: Protocol, built: dict[str, set[str]]) -> list[str]:
    """What this writer reads that the protocol's stages do not build (`built`: studies.built_models), each
    with where to add it; nothing for a protocol it can write."""
    problems = []
    missing = [m for m in READS if m not in built["prepare"] | built["evaluate"]]
    if missing:
        problems.append(f"reads {', '.join(f'models.{m}' for m in missing)}, which no stage builds: add "
                        f"{' '.join(f'+{m}' for m in missing)} to [stages] prepare")  # fmt: skip
    missing = [m for m in RESULTS if m not in built["evaluate"]]
    if missing:
        problems.append(f"reads {', '.join(f'results.{m}' for m in missing)}, which the evaluate stage does not "
                        f"build: add {' '.join(f'+{m}' for m in missing)} to [stages] evaluate")  # fmt: skip
    return problems


def measures(study: Study) -> list[str]:
    """The labels of the measures the protocol asks for, in its order."""
    return [m.label for m in parse_measures(study.protocol.parameters.get("measures"))]


# the seed's run priorities and what each ordering is
RUNS = {
    "combo": (1, "narrative + subnarrative: 0.5 narrative percentile + 0.5 facet (0.7 best + 0.3 second-best)"),
    "breadth": (2, "subnarrative evidence breadth: supported subnarratives, strong passages, combo, source rank, id"),
    "narrative": (3, "narrative only: the untouched narrative's percentile, source rank, id"),
}
# seed 002's system classification, in its order: (protocol key under [outputs.classification], portal dimension)
CLASSIFICATION = [
    ("automatic_or_manual", "Automatic or manual"),
    ("run_type", "Real run or pool enrichment"),
    ("agents_in_development", "Agents used in development"),
    ("retrieval_access", "Retrieval access"),
    ("retrieval_category", "Retrieval category"),
    ("pipeline_type", "Pipeline type"),
    ("neural_networks", "Neural networks"),
    ("proprietary_models", "Proprietary models"),
    ("open_weight_models", "Open-weight models"),
]


def results(study: Study, evaluation: Evaluation) -> dict:
    """results.json of a lanes study (seed 002): each ordering's measures, the k_t distribution, the fallback
    count and the passage-scoring receipt."""
    from rankhouse.studies.lanes.passages import latest_receipts

    corpus = study.protocol.parameters["corpus"]
    methods: dict = {}
    for method, measure, value, queries in study.wh.sql(
        "SELECT method, measure, value, queries FROM results.lane_metrics WHERE freeze_id = ? ORDER BY ALL",
        [evaluation.freeze.freeze_id],
    ):
        methods.setdefault(method, {})[measure] = {"value": value, "queries": queries}
    topics, k_min, k_max, distinct, mean, median, fallback, empty = study.wh.sql(
        "SELECT topics, k_min, k_max, k_distinct, k_mean, k_median, fallback_topics, topics_without_candidates "
        "FROM models.candidate_summary WHERE corpus = ?",
        [corpus],
    )[0]
    scoring, _ = latest_receipts(study.wh, corpus)
    return {
        **header(study, evaluation),
        "methods": methods,
        "contrasts": {},
        "candidates": {
            "topics": topics, "k_min": k_min, "k_max": k_max, "k_distinct": distinct, "k_mean": mean,
            "k_median": median, "fallback_topics": fallback, "topics_without_candidates": empty,
        },
        "passage_scoring": scoring,
    }  # fmt: skip


def write(study: Study, evaluation: Evaluation, out: Path) -> list[Path]:
    """A lanes study: results.json, per_query.csv, k_distribution.csv, lanes.run, runs/<ordering>.run (validated)
    and manifest.json (SHA-256 of every input and output, per-topic receipts)."""
    from rankhouse.errors import RankhouseError
    from rankhouse.runfiles import summary, validate_runs, write_manifest
    from rankhouse.studies.lanes.passages import scoring_history
    from rankhouse.studies.lanes.runs import lane_receipts, write_lanes, write_orderings

    corpus = study.protocol.parameters["corpus"]
    freeze_id = evaluation.freeze.freeze_id
    found = results(study, evaluation)
    written = [write_json(out / "results.json", found)]
    per_query = [m for m in measures(study) if m in PER_QUERY]
    written.append(write_csv(
        out / "per_query.csv", ["method", "topic", "relevant", "retrieved", *per_query],
        study.wh.sql("SELECT m.method, m.topic, m.relevant, m.retrieved"
                     + "".join(f", m.{PER_QUERY[label]}" for label in per_query)
                     + " FROM results.lane_query_metrics AS m JOIN models.lane_topics AS t "
                     "ON t.corpus = m.corpus AND t.topic = m.topic WHERE m.freeze_id = ? "
                     "ORDER BY m.method, t.topic_row", [freeze_id]),
    ))  # fmt: skip
    written.append(write_csv(
        out / "k_distribution.csv", ["topic", "k", "fallback", "subnarratives", "lanes", "lane_documents", "admitted"],
        study.wh.sql("SELECT topic, k, fallback, subnarratives, lanes, lane_documents, admitted "
                     "FROM models.lane_topics WHERE corpus = ? ORDER BY topic_row", [corpus]),
    ))  # fmt: skip
    write_lanes(study.wh, corpus, out / "lanes.run")
    written.append(out / "lanes.run")
    tag = str(study.protocol.outputs.get("run_tag", "rankhouse-lanes"))
    runs = write_orderings(study.wh, corpus, out / "runs", tag)
    written += runs
    pattern = study.protocol.outputs.get("doc_id_pattern")
    problems = validate_runs(runs, pattern)
    inputs = {item.key: item.path for item in study.protocol.inputs} | {"protocol": study.protocol.path}
    manifest = write_manifest(out / "manifest.json", inputs=inputs, outputs=written, extra={
        "study": study.protocol.name, "freeze_id": freeze_id, "protocol_sha256": study.protocol.sha256,
        "parameters": study.protocol.parameters, "candidates": found["candidates"],
        "passage_scoring": found["passage_scoring"], "passage_scorings": scoring_history(study.wh, corpus),
        "topics": lane_receipts(study.wh, corpus),
        "validation": {"doc_id_pattern": pattern, "problems": [str(p) for p in problems],
                       "files": summary(runs) if not problems else {}},
    })  # fmt: skip
    if problems:
        raise RankhouseError("the run files do not validate:\n  " + "\n  ".join(map(str, problems[:20])))
    return [*written, manifest, *write_metadata(study, evaluation, out, runs, found)]


def classification(study: Study) -> list[dict]:
    """The protocol's run classification (`[outputs.classification]`), in the seed's order of dimensions."""
    from rankhouse.errors import RankhouseError

    declared = study.protocol.outputs.get("classification", {})
    unknown = sorted(set(declared) - {key for key, _ in CLASSIFICATION})
    if unknown:
        raise RankhouseError(f"protocol {study.protocol.path}: [outputs.classification] has no dimension "
                             f"{unknown[0]!r}; known: {', '.join(key for key, _ in CLASSIFICATION)}")  # fmt: skip
    rows = []
    for key, dimension in CLASSIFICATION:
        answer = declared.get(key)
        if not (isinstance(answer, list) and len(answer) == 2 and all(isinstance(a, str) for a in answer)):
            raise RankhouseError(f"protocol {study.protocol.path}: [outputs.classification] {key} must be "
                                 "[answer, rationale] (two strings)")  # fmt: skip
        rows.append({"dimension": dimension, "answer": answer[0], "rationale": answer[1]})
    return rows


def write_metadata(study: Study, evaluation: Evaluation, out: Path, runs: list[Path], found: dict) -> list[Path]:
    """metadata.json (seed 002's compact provenance: the runs with their SHA-256, the classification, the
    source lanes', the narratives' and the documents' SHA-256, the scorer's identity and revision, the
    chunker, the scoring receipt); the report draws the classification table from it."""
    from rankhouse.loaders.sources import sha256_file as file_sha256
    from rankhouse.studies.lanes.passages import scorer_identity

    corpus = study.protocol.parameters["corpus"]
    freeze = evaluation.freeze
    inputs = freeze.record.get("inputs", {})
    by_loader = {item.loader: item.key for item in study.protocol.inputs}
    rows = classification(study)
    metadata = {
        "format": "rankhouse-lanes-metadata/1",
        "study": study.protocol.name,
        "freeze_id": freeze.freeze_id,
        "protocol_sha256": study.protocol.sha256,
        "runs": {
            path.stem: {
                "file": f"runs/{path.name}",
                "sha256": file_sha256(path),
                "priority": RUNS[path.stem][0],
                "ordering": RUNS[path.stem][1],
            }
            for path in runs
            if path.stem in RUNS
        },  # fmt: skip
        "classification": rows,
        "provenance": {
            "lane_source": study.protocol.parameters.get("lane_source"),
            "source_lanes_sha256": file_sha256(out / "lanes.run"),
            "narratives_sha256": inputs.get(by_loader.get("lanes.narratives"), {}).get("sha256"),
            "documents_sha256": inputs.get(by_loader.get("csv.documents"), {}).get("sha256"),
            "scorer": scorer_identity(study.wh, corpus),
            "chunker": {k: study.protocol.parameters.get(k) for k in ("chunker", "chunk_size", "chunk_overlap")},
            "passage_scoring": found["passage_scoring"],
            "freeze_file_sha256": freeze.file_sha256,
        },
        "candidates": found["candidates"],
    }
    return [write_json(out / "metadata.json", metadata)]


def table(study: Study, evaluation: Evaluation) -> str:
    """Orderings as rows, measures as columns; then k_t, the fallback and the passage-scoring receipt."""
    found = results(study, evaluation)
    shown = measures(study)
    width = max([10, *(len(m) + 2 for m in shown)])
    lines = [f"{'ordering':<10}" + "".join(f"{m:>{width}}" for m in shown)]
    for method in [m for m in METHODS if m in found["methods"]]:
        entry = found["methods"][method]
        lines.append(f"{method:<10}" + "".join(f"{entry[m]['value']:>{width}.4f}" for m in shown))
    c = found["candidates"]
    lines.append(
        f"k_t over {c['topics']} topics: {c['k_min']} to {c['k_max']} ({c['k_distinct']} distinct values, mean "
        f"{c['k_mean']:.1f}, median {c['k_median']:g}); fallback used for {c['fallback_topics']} topic(s)"
    )
    s = found["passage_scoring"]
    if s:
        lines.append(
            f"passage scores: {s['requested']:,} requested, {s['cache_hits']:,} cache hits, {s['cache_misses']:,} "
            f"misses ({s['scorer']}), {s['model_batches']:,} model batches"
        )
    return "\n".join(lines)
