"""The fusion study's section 9 measurements (seed 003, "What to measure before implementing"), as the
writer exports them: one CSV per model's table of the evaluated freeze (results.<model>; the unit-norm
gate and the reference's identity cards from the frozen prepare models), and their headline rows in
results.json under `section9` and `success_condition`. Nothing here computes a figure: every number is a
model's (models/fusion/; docs/fusion.md, "Section 9").
"""

from __future__ import annotations

from pathlib import Path

from rankhouse.study import Evaluation, Study
from rankhouse.study.writing import write_csv

# file -> (the model, its rows' order); the evaluate models' rows are those of the evaluated freeze
EVALUATED = {
    "pipeline.csv": ("population_summary", "corpus"),
    "stage_populations.csv": ("stage_populations", "query_row"),
    "stage_transitions.csv": ("stage_transitions", "transition"),
    "null_calibration.csv": ("null_calibration", "reference, arm, level, stratum, stratum_value"),
    "relevance_joint.csv": ("relevance_joint", "relevant, bm25_order, dense_order"),
    "arm_error_rates.csv": ("arm_error_rates", "arm, level, error"),
    "relevance_by_score.csv": ("relevance_by_score", "rule, bin"),
    "gaussian_reversals.csv": ("gaussian_reversals", "pairs, query_group"),
    "cold_start.csv": ("cold_start_summary", "arm, query_group"),
    "cold_start_queries.csv": ("cold_start_distances", "arm, query_row"),
    "transport.csv": ("null_transport", "fold, level, kind"),
    "separation.csv": ("separation_acceptance", "arm"),
    "stouffer_weights.csv": ("stouffer_weights", "fold"),
    "success_condition.csv": ("success_condition", "task"),
}
LABEL_FREE = {"vector_norms.csv": ("vector_norms", "corpus, kind")}
# results.json's section9: per key, the file's rows that are its headline (all of them without a filter)
HEADLINES = {
    "pipeline": ("pipeline.csv", None),
    "stage_transitions": ("stage_transitions.csv", None),
    "null_calibration": ("null_calibration.csv", "stratum = 'all'"),
    "anti_conservative_strata": ("null_calibration.csv", "anti_conservative AND stratum <> 'all'"),
    "arm_error_rates": ("arm_error_rates.csv", None),
    "relevance_by_score": ("relevance_by_score.csv", "rule = 'mixture'"),
    "gaussian": ("gaussian_reversals.csv", "query_group = 'all'"),
    "cold_start": ("cold_start.csv", "query_group = 'all'"),
    "transport": ("transport.csv", "fold = 'all'"),
    "separation": ("separation.csv", None),
    "stouffer_weights": ("stouffer_weights.csv", None),
    "vector_norms": ("vector_norms.csv", None),
}
SEED_TASKS = (
    "The seed's success condition averages over its 22 benchmark tasks, which are not available here; the "
    "tasks this machine has replace them, one fusion study each (success_tasks): this study contributes its "
    "task's delta, and the condition is the mean of the declared tasks' deltas "
    "(docs/fusion.md#results-as-they-came-out)."
)


def _rows(study: Study, model: str, order: str, freeze_id: str | None, where: str | None = None) -> tuple:
    """(columns, rows) of a model's table: results.<model> of the freeze, or models.<model> (label-free)."""
    table = f"results.{model}" if freeze_id else f"models.{model}"
    clauses = [c for c in ("freeze_id = ?" if freeze_id else None, where) if c]
    sql = f"SELECT * {'EXCLUDE (freeze_id) ' if freeze_id else ''}FROM {table}"
    sql += f" WHERE {' AND '.join(clauses)}" if clauses else ""
    return study.wh.columns(f"{sql} ORDER BY {order}", [freeze_id] if freeze_id else None)


def _records(columns: list[str], rows: list[tuple]) -> list[dict]:
    return [dict(zip(columns, row)) for row in rows]


def write(study: Study, evaluation: Evaluation, out: Path) -> tuple[list[Path], dict]:
    """The section 9 CSVs; returns them and results.json's parts (`section9`, `success_condition`)."""
    freeze_id = evaluation.freeze.freeze_id
    written, tables = [], {}
    for files, frozen in ((EVALUATED, freeze_id), (LABEL_FREE, None)):
        for name, (model, order) in files.items():
            columns, rows = _rows(study, model, order, frozen)
            tables[name] = (model, order, frozen)
            written.append(write_csv(out / name, columns, rows))
    section9 = {}
    for key, (name, where) in HEADLINES.items():
        model, order, frozen = tables[name]
        section9[key] = _records(*_rows(study, model, order, frozen, where))
    success = _records(*_rows(study, "success_condition", "task", freeze_id))
    declared = {k: study.parameters[k] for k in ("success_rule", "success_baseline", "success_measure",
                                                   "success_tasks") if k in study.parameters}  # fmt: skip
    return written, {
        "section9": section9,
        "success_condition": {"declared": declared, "this_task": success[0] if success else None, "note": SEED_TASKS},
    }


def frozen_at(evaluation: Evaluation) -> str | None:
    """When the reference was frozen: the freeze's creation time (section 10's timestamp; a model cannot
    hold a clock reading and still rebuild to the same rows)."""
    return evaluation.freeze.record.get("created_at")
