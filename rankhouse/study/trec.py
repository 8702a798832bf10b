"""The TREC writer, the default of every study that names no writer of its own (studies/trec_sample.toml):
each run's measures over its queries, every per-query value (trec_eval -q) and the runs as loaded.

results.json `methods.<run_id>.<measure>.value`; per_query.csv `run_id, qid, measure, value` (the
summary-only measures, GMAP and NumQ, left out, as trec_eval -q does); runs/<run_id>.run (writing.run_files).
"""

from __future__ import annotations

from pathlib import Path

from rankhouse.loaders.trec import write_run
from rankhouse.measures import SUMMARY_ONLY, parse_measures
from rankhouse.study.results import Evaluation
from rankhouse.study.stages import Study
from rankhouse.study.writing import header, run_files, write_csv, write_json


def results(study: Study, evaluation: Evaluation) -> dict:
    """Per run and measure, the mean over queries (results.run_measures) of the freeze."""
    methods: dict[str, dict] = {}
    rows = study.wh.sql(
        "SELECT system, measure, value FROM results.run_measures WHERE freeze_id = ? AND subset = 'all' "
        "ORDER BY system, measure",
        [evaluation.freeze.freeze_id],
    )
    for run_id, measure, value in rows:
        methods.setdefault(run_id, {})[measure] = {"value": value}
    return methods


def write(study: Study, evaluation: Evaluation, out: Path) -> list[Path]:
    """results.json, per_query.csv and runs/<run_id>.run (a run loaded from a.run: runs/a.run)."""
    freeze_id = evaluation.freeze.freeze_id
    run_ids = [run_id for (run_id,) in study.wh.sql("SELECT DISTINCT run_id FROM models.runs ORDER BY run_id")]
    run_paths = run_files(out / "runs", run_ids)  # two runs that would share a file: refused before writing
    document = {**header(study, evaluation), "methods": results(study, evaluation), "contrasts": {}}
    written = [write_json(out / "results.json", document)]
    measures = parse_measures(study.protocol.parameters.get("measures"))
    summary_only = [m.label for m in measures if m.family in SUMMARY_ONLY]
    rows = study.wh.sql(
        "SELECT system, query, measure, value FROM results.query_measures WHERE freeze_id = ? "
        "AND NOT list_contains(?, measure) ORDER BY ALL",
        [freeze_id, summary_only],
    )
    written.append(write_csv(out / "per_query.csv", ["run_id", "qid", "measure", "value"], rows))
    runs = out / "runs"
    runs.mkdir(exist_ok=True)
    for run_id, path in run_paths.items():
        write_run(study.wh, run_id, path)
        written.append(path)
    return written


def table(study: Study, evaluation: Evaluation) -> str:
    """Methods as columns, measures as rows."""
    methods = results(study, evaluation)
    names = sorted(methods)
    found = {m for values in methods.values() for m in values}
    wanted = [m for m in study.protocol.parameters.get("measures", []) if m in found]
    measures = wanted + sorted(found - set(wanted))
    width = max([len("measure"), *map(len, measures)])
    lines = [f"{'measure':<{width}}  " + "  ".join(f"{n:>14}" for n in names)]
    for measure in measures:
        cells = []
        for name in names:
            value = methods[name].get(measure, {}).get("value")
            if value is None:
                cells.append(f"{'':>14}")
            else:
                cells.append(f"{value:>14,.0f}" if measure.startswith("Num") else f"{value:>14.4f}")
        lines.append(f"{measure:<{width}}  " + "  ".join(cells))
    return "\n".join(lines)
