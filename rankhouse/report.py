"""Study outputs: `results.json`, `per_query.csv` and the runs as TREC files, from results.* of a freeze.

results.json: {study, freeze_id, protocol_sha256, supersedes: [{freeze_id, reason, created_at}],
methods: {<method>: {<measure>: {value, ci_low?, ci_high?}}}, contrasts: {}}; every figure comes from
results.* rows of that freeze.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from rankhouse.loaders import write_run
from rankhouse.study import Evaluation, Study


def superseded_chain(study: Study, freeze_id: str) -> list[dict]:
    """The freezes that `freeze_id` replaces, newest first, with their reasons."""
    by_id = {f.freeze_id: f for f in study.freezes()}
    chain, current = [], by_id[freeze_id]
    while current.supersedes:
        chain.append({"freeze_id": current.supersedes, "replaced_by": current.freeze_id, "reason": current.reason})
        current = by_id[current.supersedes]
    return chain


def trec_results(study: Study, evaluation: Evaluation) -> dict:
    """Per run and measure, the mean over queries (results.run_measures) of the freeze."""
    methods: dict[str, dict] = {}
    rows = study.wh.sql(
        "SELECT run_id, measure, value FROM results.run_measures WHERE freeze_id = ? ORDER BY run_id, measure",
        [evaluation.freeze.freeze_id],
    )
    for run_id, measure, value in rows:
        methods.setdefault(run_id, {})[measure] = {"value": value}
    return methods


def write_outputs(study: Study, evaluation: Evaluation, out: Path) -> list[Path]:
    """Write a TREC-style study's outputs into `out`; return the files written."""
    out.mkdir(parents=True, exist_ok=True)
    freeze_id = evaluation.freeze.freeze_id
    document = {
        "study": study.protocol.name,
        "freeze_id": freeze_id,
        "protocol_sha256": study.protocol.sha256,
        "supersedes": superseded_chain(study, freeze_id),
        "methods": trec_results(study, evaluation),
        "contrasts": {},
    }
    written = [out / "results.json"]
    written[0].write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")
    per_query = out / "per_query.csv"
    with per_query.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["run_id", "qid", "measure", "value"])
        writer.writerows(
            study.wh.sql(
                "SELECT run_id, qid, measure, value FROM results.query_measures WHERE freeze_id = ? ORDER BY ALL",
                [freeze_id],
            )
        )
    written.append(per_query)
    runs = out / "runs"
    runs.mkdir(exist_ok=True)
    for (run_id,) in study.wh.sql("SELECT DISTINCT run_id FROM raw.runs ORDER BY run_id"):
        path = runs / f"{run_id}.run"
        write_run(study.wh, run_id, path)
        written.append(path)
    return written


def summary_table(study: Study, evaluation: Evaluation) -> str:
    """Methods as columns, measures as rows."""
    methods = trec_results(study, evaluation)
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
            cells.append(
                f"{'':>14}"
                if value is None
                else f"{value:>14.4f}"
                if not measure.startswith("Num")
                else f"{value:>14,.0f}"
            )
        lines.append(f"{measure:<{width}}  " + "  ".join(cells))
    return "\n".join(lines)
