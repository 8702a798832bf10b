"""Study outputs: `results.json`, `per_query.csv` and the runs as TREC files, from results.* of a freeze.

results.json: {study, freeze_id, protocol_sha256, supersedes: [{freeze_id, replaced_by, reason}],
methods: {<method>: {<measure>: {value, ci_low?, ci_high?}}}, contrasts: {<subset>: {<a - b>: {mean,
ci_low, ci_high}}}}, plus writer-specific parts; every figure comes from results.* rows of that freeze.
A protocol names its writer in `[outputs] writer` ("trec", the default, or "retrieval").
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


def _header(study: Study, evaluation: Evaluation) -> dict:
    freeze_id = evaluation.freeze.freeze_id
    return {
        "study": study.protocol.name,
        "freeze_id": freeze_id,
        "protocol_sha256": study.protocol.sha256,
        "supersedes": superseded_chain(study, freeze_id),
    }


def _write_csv(path: Path, columns: list[str], rows: list[tuple]) -> Path:
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows(rows)
    return path


def write_outputs(study: Study, evaluation: Evaluation, out: Path) -> list[Path]:
    """Write the study's outputs into `out` with the protocol's writer; return the files written."""
    out.mkdir(parents=True, exist_ok=True)
    writer = study.protocol.outputs.get("writer", "trec")
    if writer not in WRITERS:
        raise ValueError(f"unknown writer {writer!r}")
    return WRITERS[writer](study, evaluation, out)


def write_trec_outputs(study: Study, evaluation: Evaluation, out: Path) -> list[Path]:
    """A TREC-style study: run_measures per run, per-query values, the runs."""
    freeze_id = evaluation.freeze.freeze_id
    document = {**_header(study, evaluation), "methods": trec_results(study, evaluation), "contrasts": {}}
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


def _measure_block(rows: list[tuple]) -> dict:
    """{method: {measure: {value, ci_low?, ci_high?, queries}}} from (method, measure, value, low, high, n) rows."""
    block: dict = {}
    for method, measure, value, low, high, queries in rows:
        entry = {"value": value, "queries": queries}
        if low is not None:
            entry |= {"ci_low": low, "ci_high": high}
        block.setdefault(method, {})[measure] = entry
    return block


def retrieval_results(study: Study, evaluation: Evaluation) -> dict:
    """results.json of a retrieval study (BANKING77): measures per method and subset, contrasts, duplicates."""
    freeze_id = evaluation.freeze.freeze_id
    rows = study.wh.sql(
        "SELECT subset, method, measure, value, ci_low, ci_high, queries FROM results.retrieval_metrics "
        "WHERE freeze_id = ? ORDER BY ALL",
        [freeze_id],
    )
    subsets: dict[str, list] = {}
    for subset, *rest in rows:
        subsets.setdefault(subset, []).append(tuple(rest))
    contrasts: dict = {}
    for subset, contrast, mean, low, high, replicates in study.wh.sql(
        "SELECT subset, contrast, mean, ci_low, ci_high, replicates FROM results.top1_contrasts WHERE freeze_id = ?",
        [freeze_id],
    ):
        contrasts.setdefault(subset, {})[contrast] = {
            "measure": "Top-1", "mean": mean, "ci_low": low, "ci_high": high, "replicates": replicates
        }  # fmt: skip
    in_documents, repeated, queries = study.wh.sql(
        "SELECT count(*) FILTER (WHERE in_documents), count(*) FILTER (WHERE copies_in_queries > 0), count(*) "
        "FROM models.query_duplicates"
    )[0]
    return {
        **_header(study, evaluation),
        "methods": _measure_block(subsets.get("all", [])),
        "subsets": {name: _measure_block(block) for name, block in subsets.items() if name != "all"},
        "contrasts": contrasts,
        "duplicates": {
            "queries": queries,
            "queries_whose_text_is_a_document": in_documents,
            "queries_sharing_their_text_with_another_query": repeated,
        },
    }


def write_retrieval_outputs(study: Study, evaluation: Evaluation, out: Path) -> list[Path]:
    """A retrieval study: results.json, per_query.csv, class_results.csv, runs/<method>.run."""
    freeze_id = evaluation.freeze.freeze_id
    results = out / "results.json"
    results.write_text(json.dumps(retrieval_results(study, evaluation), indent=2, sort_keys=True) + "\n")
    columns = ["method", "qid", "class", "relevant", "top1", "hit5", "recall5", "rr", "ndcg10", "p5"]
    per_query = _write_csv(
        out / "per_query.csv",
        columns,
        study.wh.sql(
            f"SELECT {', '.join(columns)} FROM results.retrieval_query_metrics WHERE freeze_id = ? "
            "ORDER BY method, query_row",
            [freeze_id],
        ),
    )
    classes = _write_csv(
        out / "class_results.csv",
        ["method", "class", "documents", "queries", "top1_hits"],
        study.wh.sql(
            "SELECT method, class, documents, queries, top1_hits FROM results.class_results WHERE freeze_id = ? "
            "ORDER BY ALL",
            [freeze_id],
        ),
    )
    written = [results, per_query, classes]
    runs = out / "runs"
    runs.mkdir(exist_ok=True)
    for (method,) in study.wh.sql("SELECT DISTINCT method FROM models.retrieval_runs ORDER BY 1"):
        path = runs / f"{method}.run"
        rows = study.wh.sql(
            "SELECT r.qid, r.doc_id, r.rank, r.score FROM models.retrieval_runs AS r "
            "JOIN raw.queries AS q ON q.corpus = r.corpus AND q.qid = r.qid "
            "WHERE r.method = ? ORDER BY q.row_index, r.rank",
            [method],
        )
        with path.open("w") as handle:
            handle.writelines(f"{qid} Q0 {doc} {rank} {score!r} {method}\n" for qid, doc, rank, score in rows)
        written.append(path)
    return written


def retrieval_table(study: Study, evaluation: Evaluation) -> str:
    """Measures as rows, methods as columns, with Wilson intervals where there are any."""
    results = retrieval_results(study, evaluation)
    lines = []
    for title, block in [("all queries", results["methods"]), *results["subsets"].items()]:
        methods = sorted(block)
        count = next(iter(next(iter(block.values())).values()))["queries"] if block else 0
        lines.append(f"{title} ({count:,} queries)")
        lines.append(f"  {'measure':<12}" + "".join(f"{m:>28}" for m in methods))
        for measure in ["Top-1", "Hit@5", "R@5", "RR", "nDCG@10", "P@5", "macro-Top-1"]:
            cells = []
            for method in methods:
                entry = block[method].get(measure)
                if entry is None:
                    cells.append(f"{'':>28}")
                elif "ci_low" in entry:
                    cells.append(f"{entry['value']:>10.4f} [{entry['ci_low']:.4f}, {entry['ci_high']:.4f}]")
                else:
                    cells.append(f"{entry['value']:>10.4f}{'':>18}")
            lines.append(f"  {measure:<12}" + "".join(cells))
    for subset, contrasts in sorted(results["contrasts"].items()):
        for name, c in contrasts.items():
            lines.append(
                f"Top-1 {name} ({subset}): {c['mean']:+.4f} [{c['ci_low']:+.4f}, {c['ci_high']:+.4f}], "
                f"paired bootstrap, {c['replicates']:,} replicates"
            )
    d = results["duplicates"]
    lines.append(
        f"duplicates: {d['queries_whose_text_is_a_document']} test queries occur in training; "
        f"{d['queries_sharing_their_text_with_another_query']} share their text with another test query"
    )
    return "\n".join(lines)


RULES = ["bm25", "dense", "rrf", "rsf", "mixture", "fisher", "stouffer"]


def fusion_results(study: Study, evaluation: Evaluation) -> dict:
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
        "SELECT rule, baseline, measure, mean, ci_low, ci_high, replicates FROM results.fusion_contrasts "
        "WHERE freeze_id = ? ORDER BY ALL",
        [freeze_id],
    ):
        contrasts.setdefault(f"{rule} - {baseline}", {})[measure] = {
            "mean": mean, "ci_low": low, "ci_high": high, "replicates": replicates
        }  # fmt: skip
    return {**_header(study, evaluation), "methods": methods, "contrasts": {"all": contrasts}}


def write_fusion_outputs(study: Study, evaluation: Evaluation, out: Path) -> list[Path]:
    """A fusion study: results.json, per_query.csv, the diagnostics as CSV, runs/<rule>.run."""
    freeze_id = evaluation.freeze.freeze_id
    results = out / "results.json"
    results.write_text(json.dumps(fusion_results(study, evaluation), indent=2, sort_keys=True) + "\n")
    wh = study.wh
    written = [results]
    queries = "JOIN raw.queries AS q ON q.corpus = m.corpus AND q.row_index = m.query_row"
    tables = {
        "per_query.csv": (
            ["rule", "qid", "ndcg10", "recall100", "rr10", "rr", "top1"],
            f"SELECT m.rule, q.qid, m.ndcg10, m.recall100, m.rr10, m.rr, m.top1 FROM results.fusion_query_metrics AS m "
            f"{queries} WHERE m.freeze_id = ? ORDER BY m.rule, m.query_row",
        ),
        "reversals.csv": (
            ["rule", "dense_correct_reversed", "dense_wrong_corrected", "queries"],
            "SELECT rule, sum(dense_correct_reversed), sum(dense_wrong_corrected), count(*) FROM "
            "results.fusion_reversals WHERE freeze_id = ? GROUP BY rule ORDER BY rule",
        ),
        "ndcg_deltas.csv": (
            ["rule", "qid", "delta_ndcg10"],
            f"SELECT m.rule, q.qid, m.delta FROM results.fusion_ndcg_deltas AS m {queries} WHERE m.freeze_id = ? "
            "ORDER BY m.rule, m.query_row",
        ),
    }
    for name, (columns, sql) in tables.items():
        written.append(_write_csv(out / name, columns, wh.sql(sql, [freeze_id])))
    label_free = {
        "reference_fingerprints.csv": (
            ["arm", "scorer", "dimension", "tokenizer", "corpus_documents", "panel", "panel_seed", "panel_size",
             "reference_size", "tail_convention", "version", "fingerprint"],
            "SELECT arm, scorer, dimension, tokenizer, corpus_documents, panel, panel_seed, panel_size, "
            "reference_size, tail_convention, version, fingerprint FROM models.reference_fingerprints ORDER BY arm"),
        "tail_saturation.csv": (["arm", "candidates", "at_floor", "share_at_floor"],
                                "SELECT arm, candidates, at_floor, share_at_floor FROM models.tail_saturation "
                                "ORDER BY arm"),
        "reference_bounds.csv": (["arm", "reference_size", "dkw_epsilon"],
                                 "SELECT arm, reference_size, dkw_epsilon FROM models.reference_bounds ORDER BY arm"),
        "influence.csv": (["arm", "mean_influence", "median_influence", "candidates"],
                          "SELECT arm, avg(influence), median(influence), count(*) FROM models.fusion_influence "
                          "GROUP BY arm ORDER BY arm"),
        "admission.csv": (["queries", "candidates", "admitted", "fallback", "queries_without_admission"],
                          "SELECT count(DISTINCT query_row), count(*), count(*) FILTER (WHERE admitted), "
                          "count(*) FILTER (WHERE fallback), count(DISTINCT query_row) - count(DISTINCT query_row) "
                          "FILTER (WHERE admitted) FROM models.admission"),
    }  # fmt: skip
    for name, (columns, sql) in label_free.items():
        written.append(_write_csv(out / name, columns, wh.sql(sql)))
    runs = out / "runs"
    runs.mkdir(exist_ok=True)
    for (rule,) in wh.sql("SELECT DISTINCT rule FROM models.fused_rankings ORDER BY 1"):
        rows = wh.sql(
            "SELECT q.qid, d.doc_id, r.rank, r.score FROM models.fused_rankings AS r "
            "JOIN raw.queries AS q ON q.corpus = r.corpus AND q.row_index = r.query_row "
            "JOIN raw.documents AS d ON d.corpus = r.corpus AND d.row_index = r.doc_row "
            "WHERE r.rule = ? ORDER BY r.query_row, r.rank",
            [rule],
        )
        path = runs / f"{rule}.run"
        with path.open("w") as handle:
            handle.writelines(f"{qid} Q0 {doc} {rank} {score!r} {rule}\n" for qid, doc, rank, score in rows)
        written.append(path)
    return written


def fusion_table(study: Study, evaluation: Evaluation) -> str:
    """Rules as rows, measures as columns; then the contrasts of the p-value rules."""
    results = fusion_results(study, evaluation)
    measures = [
        m for m in ["nDCG@10", "R@100", "RR@10", "RR", "Top-1"] if any(m in v for v in results["methods"].values())
    ]
    lines = [f"{'rule':<10}" + "".join(f"{m:>10}" for m in measures)]
    for rule in [r for r in RULES if r in results["methods"]]:
        lines.append(f"{rule:<10}" + "".join(f"{results['methods'][rule][m]['value']:>10.4f}" for m in measures))
    for name, by_measure in sorted(results["contrasts"]["all"].items()):
        if name.split(" - ")[0] in ("mixture", "fisher", "stouffer"):
            for measure, c in sorted(by_measure.items()):
                lines.append(f"{measure} {name}: {c['mean']:+.4f} [{c['ci_low']:+.4f}, {c['ci_high']:+.4f}]")
    return "\n".join(lines)


WRITERS = {"trec": write_trec_outputs, "retrieval": write_retrieval_outputs, "fusion": write_fusion_outputs}
TABLES = {"trec": summary_table, "retrieval": retrieval_table, "fusion": fusion_table}


EVIDENCE_METHODS = ["coverage", "dense", "typed", "oracle"]
EVIDENCE_MEASURES = ["nDCG@5", "coverage", "redundancy", "pair_cosine", "objective", "gained_vs_dense",
                     "lost_vs_dense"]  # fmt: skip
EVIDENCE_PRIMARY = "coverage"  # the measure of contrasts.<subset>.<contrast>; the others under `measures`


def evidence_results(study: Study, evaluation: Evaluation, bundle_files: dict | None = None) -> dict:
    """results.json of an evidence study (seed 000): measures per method and subset, bootstrap contrasts
    (agreed coverage first, the other measures under `measures`), the example tasks in full."""
    wh, freeze_id = study.wh, evaluation.freeze.freeze_id
    bundle = study.protocol.parameters.get("bundle", "evidence_demo")
    subsets: dict = {}
    for subset, method, measure, value, tasks in wh.sql(
        "SELECT subset, method, measure, value, tasks FROM results.evidence_metrics WHERE freeze_id = ? ORDER BY ALL",
        [freeze_id],
    ):
        subsets.setdefault(subset, {}).setdefault(method, {})[measure] = {"value": value, "tasks": tasks}
    everything = next((name for name in subsets if name.startswith("all")), None)
    contrasts: dict = {}
    for subset, contrast, measure, diagnostic, mean, low, high, replicates, tasks in wh.sql(
        "SELECT subset, contrast, measure, diagnostic, mean, ci_low, ci_high, replicates, tasks "
        "FROM results.evidence_contrasts WHERE freeze_id = ? ORDER BY ALL",
        [freeze_id],
    ):
        entry = {"mean": mean, "ci_low": low, "ci_high": high, "replicates": replicates, "tasks": tasks}
        block = contrasts.setdefault(subset, {}).setdefault(contrast, {"diagnostic": diagnostic, "measures": {}})
        if measure == EVIDENCE_PRIMARY:
            block.update(entry, measure=measure)
        else:
            block["measures"][measure] = entry
    oracle = wh.sql(
        "SELECT sum(subsets), count(*) FILTER (WHERE tied > 1) FROM (SELECT DISTINCT task_id, subsets, tied "
        "FROM results.evidence_oracle WHERE freeze_id = ?)",
        [freeze_id],
    )[0]
    encoder = wh.sql(
        "SELECT path FROM meta.sources WHERE table_name = 'raw.evidence_facet_vectors' AND name = ?", [bundle]
    )
    program = wh.sql("SELECT sha256 FROM raw.evidence_programs WHERE program = 'evidence_greedy'")
    return {
        **_header(study, evaluation),
        "bundle": bundle,
        "methods": subsets.get(everything, {}),
        "subsets": subsets,
        "contrasts": contrasts,
        "examples": evidence_examples(study, evaluation),
        "oracle": {"diagnostic": True, "subsets_enumerated": oracle[0], "tasks_with_ties": oracle[1]},
        "greedy_program_sha256": program[0][0] if program else None,
        "encoder": encoder[0][0] if encoder else None,
        "bundle_files": bundle_files or {},
    }


def evidence_examples(study: Study, evaluation: Evaluation) -> dict:
    """The protocol's example tasks in full: question, requirements, every method's documents and labels."""
    wh, freeze_id = study.wh, evaluation.freeze.freeze_id
    bundle = study.protocol.parameters.get("bundle", "evidence_demo")
    examples: dict = {}
    for task_id in study.protocol.parameters.get("example_tasks", []):
        task = wh.sql("SELECT question, split FROM raw.evidence_tasks WHERE bundle = ? AND task_id = ?",
                      [bundle, task_id])  # fmt: skip
        if not task:
            continue
        requirements = wh.sql(
            "SELECT text FROM raw.evidence_requirements WHERE bundle = ? AND task_id = ? ORDER BY requirement",
            [bundle, task_id],
        )
        columns, rows = wh.columns(
            "SELECT method, rank, doc_id, text, grade_a, grade_b, mean_grade, obligations_a, obligations_b, agreed, "
            "step_gain FROM results.evidence_examples WHERE freeze_id = ? AND task_id = ? ORDER BY method, rank",
            [freeze_id, task_id],
        )
        methods: dict = {}
        for row in rows:
            methods.setdefault(row[0], []).append(dict(zip(columns[1:], row[1:], strict=True)))
        examples[task_id] = {
            "question": task[0][0],
            "split": task[0][1],
            "requirements": [text for (text,) in requirements],
            "methods": {m: methods[m] for m in EVIDENCE_METHODS if m in methods},
        }
    return examples


def write_evidence_outputs(study: Study, evaluation: Evaluation, out: Path) -> list[Path]:
    """An evidence study: results.json, selected.csv, per_task.csv and bundle/ (the bundle as used, with
    every vector and the comparator runs, so that the selections can be recomputed independently)."""
    from rankhouse.evidence import export_bundle

    wh, freeze_id = study.wh, evaluation.freeze.freeze_id
    bundle = study.protocol.parameters.get("bundle", "evidence_demo")
    files = export_bundle(wh, bundle, study.protocol.inputs, out / "bundle")
    results = out / "results.json"
    results.write_text(json.dumps(evidence_results(study, evaluation, files), indent=2, sort_keys=True) + "\n")
    order = "CASE method WHEN 'coverage' THEN 1 WHEN 'dense' THEN 2 WHEN 'typed' THEN 3 ELSE 4 END"
    selected = _write_csv(
        out / "selected.csv",
        ["task_id", "method", "rank", "doc_id"],
        wh.sql(
            "SELECT s.task_id, s.method, s.rank, s.doc_id FROM (SELECT bundle, method, task_id, rank, doc_id "
            "FROM models.evidence_selections UNION ALL SELECT bundle, 'oracle', task_id, rank, doc_id "
            "FROM results.evidence_oracle WHERE freeze_id = ?) AS s JOIN raw.evidence_tasks AS t "
            "ON t.bundle = s.bundle AND t.task_id = s.task_id WHERE s.bundle = ? "
            f"ORDER BY t.row_index, {order}, s.rank",
            [freeze_id, bundle],
        ),
    )
    columns = ["task_id", "split", "method", "requirements", "covered", "coverage", "assignments", "redundancy",
               "ndcg5", "pair_cosine", "objective", "gained", "lost"]  # fmt: skip
    per_task = _write_csv(
        out / "per_task.csv",
        columns,
        wh.sql(
            f"SELECT {', '.join(columns)} FROM results.evidence_task_metrics WHERE freeze_id = ? "
            f"ORDER BY task_row, {order}",
            [freeze_id],
        ),
    )
    return [results, selected, per_task, *(out / "bundle" / name for name in files)]


def evidence_table(study: Study, evaluation: Evaluation) -> str:
    """Methods as columns, measures as rows (all tasks); the contrasts per subset; the example tasks."""
    results = evidence_results(study, evaluation)
    methods = [m for m in EVIDENCE_METHODS if m in results["methods"]]
    lines = [f"{'measure':<16}" + "".join(f"{m + (' (diag.)' if m == 'oracle' else ''):>16}" for m in methods)]
    for measure in EVIDENCE_MEASURES:
        cells = []
        for method in methods:
            value = results["methods"][method].get(measure, {}).get("value")
            cells.append(
                f"{'':>16}" if value is None else f"{value:>16.4f}" if "vs" not in measure else f"{value:>16.0f}"
            )
        lines.append(f"{measure:<16}" + "".join(cells))
    for subset, contrasts in sorted(results["contrasts"].items()):
        for name, c in contrasts.items():
            note = " (diagnostic)" if c["diagnostic"] else ""
            lines.append(
                f"agreed coverage, {name} ({subset}): {c['mean']:+.4f} [{c['ci_low']:+.4f}, {c['ci_high']:+.4f}]{note}"
            )
    for task_id, example in results["examples"].items():
        lines.append(f"{task_id} ({example['split']}): {example['question']}")
        for method, documents in example["methods"].items():
            shown = ", ".join(f"{d['doc_id']}[{d['agreed'] or '-'}]" for d in documents)
            lines.append(f"  {method:<9} {shown}")
    return "\n".join(lines)


WRITERS["evidence"] = write_evidence_outputs
TABLES["evidence"] = evidence_table


LANE_METHODS = ["combo", "breadth", "narrative"]
LANE_MEASURES = ["P@10", "R@10", "nDCG@10", "RR"]


def lanes_results(study: Study, evaluation: Evaluation) -> dict:
    """results.json of a lanes study (seed 002): each ordering's measures, the k_t distribution, the fallback
    count and the passage-scoring receipt."""
    from rankhouse.lanes import latest_receipts

    corpus = study.protocol.parameters["corpus"]
    methods: dict = {}
    for method, measure, value, queries in study.wh.sql(
        "SELECT method, measure, value, queries FROM results.lane_metrics WHERE freeze_id = ? ORDER BY ALL",
        [evaluation.freeze.freeze_id],
    ):
        methods.setdefault(method, {})[measure] = {"value": value, "queries": queries}
    topics, k_min, k_max, distinct, mean, median, fallback, empty = study.wh.sql(
        "SELECT count(*), min(k), max(k), count(DISTINCT k), avg(k), quantile_cont(k, 0.5), "
        "count(*) FILTER (WHERE fallback), count(*) FILTER (WHERE k = 0) FROM models.lane_topics WHERE corpus = ?",
        [corpus],
    )[0]
    scoring, _ = latest_receipts(study.wh, corpus)
    return {
        **_header(study, evaluation),
        "methods": methods,
        "contrasts": {},
        "candidates": {
            "topics": topics, "k_min": k_min, "k_max": k_max, "k_distinct": distinct, "k_mean": mean,
            "k_median": median, "fallback_topics": fallback, "topics_without_candidates": empty,
        },
        "passage_scoring": scoring,
    }  # fmt: skip


def write_lanes_outputs(study: Study, evaluation: Evaluation, out: Path) -> list[Path]:
    """A lanes study: results.json, per_query.csv, k_distribution.csv, lanes.run, runs/<ordering>.run (validated)
    and manifest.json (SHA-256 of every input and output, per-topic receipts)."""
    from rankhouse.errors import RankhouseError
    from rankhouse.lanes import scoring_history
    from rankhouse.runfiles import lane_receipts, summary, validate_runs, write_lanes, write_manifest, write_orderings

    corpus = study.protocol.parameters["corpus"]
    freeze_id = evaluation.freeze.freeze_id
    results = lanes_results(study, evaluation)
    written = [out / "results.json"]
    written[0].write_text(json.dumps(results, indent=2, sort_keys=True, default=str) + "\n")
    written.append(_write_csv(
        out / "per_query.csv", ["method", "topic", "relevant", "retrieved", "P@10", "R@10", "nDCG@10", "RR"],
        study.wh.sql("SELECT m.method, m.topic, m.relevant, m.retrieved, m.p10, m.r10, m.ndcg10, m.rr "
                     "FROM results.lane_query_metrics AS m JOIN models.lane_topics AS t "
                     "ON t.corpus = m.corpus AND t.topic = m.topic WHERE m.freeze_id = ? "
                     "ORDER BY m.method, t.topic_row", [freeze_id]),
    ))  # fmt: skip
    written.append(_write_csv(
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
        "parameters": study.protocol.parameters, "candidates": results["candidates"],
        "passage_scoring": results["passage_scoring"], "passage_scorings": scoring_history(study.wh, corpus),
        "topics": lane_receipts(study.wh, corpus),
        "validation": {"doc_id_pattern": pattern, "problems": [str(p) for p in problems],
                       "files": summary(runs) if not problems else {}},
    })  # fmt: skip
    if problems:
        raise RankhouseError("the run files do not validate:\n  " + "\n  ".join(map(str, problems[:20])))
    return [*written, manifest]


def lanes_table(study: Study, evaluation: Evaluation) -> str:
    """Orderings as rows, measures as columns; then k_t, the fallback and the passage-scoring receipt."""
    results = lanes_results(study, evaluation)
    lines = [f"{'ordering':<10}" + "".join(f"{m:>10}" for m in LANE_MEASURES)]
    for method in [m for m in LANE_METHODS if m in results["methods"]]:
        entry = results["methods"][method]
        lines.append(f"{method:<10}" + "".join(f"{entry[m]['value']:>10.4f}" for m in LANE_MEASURES if m in entry))
    c = results["candidates"]
    lines.append(
        f"k_t over {c['topics']} topics: {c['k_min']} to {c['k_max']} ({c['k_distinct']} distinct values, mean "
        f"{c['k_mean']:.1f}, median {c['k_median']:g}); fallback used for {c['fallback_topics']} topic(s)"
    )
    s = results["passage_scoring"]
    if s:
        lines.append(
            f"passage scores: {s['requested']:,} requested, {s['cache_hits']:,} cache hits, {s['cache_misses']:,} "
            f"misses ({s['scorer']}), {s['model_batches']:,} model batches"
        )
    return "\n".join(lines)


WRITERS["lanes"] = write_lanes_outputs
TABLES["lanes"] = lanes_table
