"""The writer of fusion studies (seed 003; studies/fusion_*.toml): every rule's and arm's measures,
their paired bootstrap contrasts against the dense arm and RRF, the diagnostics and the fused runs.

results.json `methods.<rule>.<measure>.{value, queries}`, `contrasts.all.<rule - baseline>.<measure>.
{mean, ci_low, ci_high, replicates}`, `section9` and `success_condition` (seed 003's measurements:
rankhouse/studies/fusion/measurements.py), `reference` (the identity cards with the time they were frozen);
per_query.csv; reversals.csv, ndcg_deltas.csv and the section 9 CSVs (evaluate); reference_fingerprints.csv,
tail_saturation.csv, reference_bounds.csv, influence.csv, admission.csv, vector_norms.csv (label-free,
frozen); runs/<rule>.run.
"""

from __future__ import annotations

from pathlib import Path

from rankhouse.studies.fusion import measurements as fusion_measurements
from rankhouse.study import Evaluation, Study
from rankhouse.study.writing import header, write_csv, write_json, write_runs

ARMS = ["bm25", "dense"]
P_VALUE_RULES = ("mixture", "fisher", "stouffer")


def rules(study: Study) -> list[str]:
    """The arms, then the study's fusion rules in the order its fusion_rules parameter lists them."""
    default = study.project.models["fused_rankings"].parameters["fusion_rules"]
    return [*ARMS, *study.parameters.get("fusion_rules", default)]


def results(study: Study, evaluation: Evaluation) -> dict:
    """results.json of a fusion study: every rule's measures, and contrasts against dense and RRF."""
    freeze_id = evaluation.freeze.freeze_id
    methods: dict = {}
    for rule, measure, value, queries in study.wh.sql(
        "SELECT rule, measure, value, queries FROM results.fusion_metrics WHERE freeze_id = ? ORDER BY ALL",
        [freeze_id],
    ):
        methods.setdefault(rule, {})[measure] = {"value": value, "queries": queries}
    contrasts: dict = {}
    for rule, baseline, measure, mean, low, high, replicates in study.wh.sql(
        "SELECT system_a, system_b, measure, mean, ci_low, ci_high, replicates FROM results.paired_bootstrap "
        "WHERE freeze_id = ? ORDER BY ALL",
        [freeze_id],
    ):
        contrasts.setdefault(f"{rule} - {baseline}", {})[measure] = {
            "mean": mean, "ci_low": low, "ci_high": high, "replicates": replicates
        }  # fmt: skip
    return {**header(study, evaluation), "methods": methods, "contrasts": {"all": contrasts}}


def write(study: Study, evaluation: Evaluation, out: Path) -> list[Path]:
    """A fusion study: results.json, per_query.csv, the diagnostics and section 9's measurements as CSV,
    runs/<rule>.run."""
    freeze_id = evaluation.freeze.freeze_id
    wh = study.wh
    measured, parts = fusion_measurements.write(study, evaluation, out)
    frozen_at = fusion_measurements.frozen_at(evaluation)
    columns, cards = wh.columns("SELECT * FROM models.reference_fingerprints ORDER BY arm")
    reference = {"frozen_at": frozen_at, "cards": [dict(zip(columns, card)) for card in cards]}
    written = [write_json(out / "results.json", {**results(study, evaluation), **parts, "reference": reference})]
    written += measured
    queries = "JOIN models.queries AS q ON q.corpus = m.corpus AND q.query_row = m.query_row"
    tables = {
        "per_query.csv": (
            ["rule", "qid", "ndcg10", "recall100", "rr10", "rr", "top1"],
            f"SELECT m.rule, q.qid, m.ndcg10, m.recall100, m.rr10, m.rr, m.top1 FROM results.fusion_query_metrics AS m "
            f"{queries} WHERE m.freeze_id = ? ORDER BY m.rule, m.query_row",
        ),
        "reversals.csv": (
            ["rule", "dense_correct_reversed", "dense_wrong_corrected", "queries"],
            "SELECT rule, dense_correct_reversed, dense_wrong_corrected, queries FROM results.reversal_totals "
            "WHERE freeze_id = ? ORDER BY rule",
        ),
        "ndcg_deltas.csv": (
            ["rule", "qid", "delta_ndcg10"],
            f"SELECT m.rule, q.qid, m.delta FROM results.fusion_ndcg_deltas AS m {queries} WHERE m.freeze_id = ? "
            "ORDER BY m.rule, m.query_row",
        ),
    }
    for name, (columns, sql) in tables.items():
        written.append(write_csv(out / name, columns, wh.sql(sql, [freeze_id])))
    label_free = {
        "reference_fingerprints.csv": (
            ["arm", "scorer", "dimension", "tokenizer", "corpus_documents", "panel", "panel_seed", "panel_size",
             "reference_size", "tail_convention", "version", "combiner", "arm_applicability", "depth_contract",
             "tie_policy", "schema_version", "fingerprint"],
            "SELECT arm, scorer, dimension, tokenizer, corpus_documents, panel, panel_seed, panel_size, "
            "reference_size, tail_convention, version, combiner, arm_applicability, depth_contract, tie_policy, "
            "schema_version, fingerprint FROM models.reference_fingerprints ORDER BY arm"),
        "tail_saturation.csv": (["arm", "candidates", "at_floor", "share_at_floor"],
                                "SELECT arm, candidates, at_floor, share_at_floor FROM models.tail_saturation "
                                "ORDER BY arm"),
        "reference_bounds.csv": (["arm", "reference_size", "dkw_epsilon"],
                                 "SELECT arm, reference_size, dkw_epsilon FROM models.reference_bounds ORDER BY arm"),
        "influence.csv": (["arm", "mean_influence", "median_influence", "candidates"],
                          "SELECT arm, mean_influence, median_influence, candidates FROM models.influence_summary "
                          "ORDER BY arm"),
        "admission.csv": (["queries", "candidates", "admitted", "fallback", "queries_without_admission"],
                          "SELECT queries, candidates, admitted, fallback, queries_without_admission "
                          "FROM models.admission_summary"),
    }  # fmt: skip
    for name, (columns, sql) in label_free.items():
        written.append(write_csv(out / name, columns, wh.sql(sql)))
    return written + write_runs(
        study,
        out / "runs",
        "SELECT r.rule, q.qid, d.doc_id, r.rank, r.score, r.query_row FROM models.fused_rankings AS r "
        "JOIN models.queries AS q ON q.corpus = r.corpus AND q.query_row = r.query_row "
        "JOIN models.documents AS d ON d.corpus = r.corpus AND d.doc_row = r.doc_row",
    )


def table(study: Study, evaluation: Evaluation) -> str:
    """Rules as rows, measures as columns; then the contrasts of the p-value rules."""
    found = results(study, evaluation)
    measures = [
        m for m in ["nDCG@10", "R@100", "RR@10", "RR", "Top-1"] if any(m in v for v in found["methods"].values())
    ]
    lines = [f"{'rule':<10}" + "".join(f"{m:>10}" for m in measures)]
    for rule in [r for r in rules(study) if r in found["methods"]]:
        lines.append(f"{rule:<10}" + "".join(f"{found['methods'][rule][m]['value']:>10.4f}" for m in measures))
    for name, by_measure in sorted(found["contrasts"]["all"].items()):
        if name.split(" - ")[0] in P_VALUE_RULES:
            for measure, c in sorted(by_measure.items()):
                lines.append(f"{measure} {name}: {c['mean']:+.4f} [{c['ci_low']:+.4f}, {c['ci_high']:+.4f}]")
    return "\n".join(lines)
