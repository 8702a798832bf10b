"""The writer of retrieval studies (studies/banking77.toml: the BANKING77 baseline, BM25 against MiniLM
with seed 004's E1/E2 measures; not seed 004's protocol, which forbids dense models): every measure per
method and query subset with Wilson intervals for the hit rates, the paired bootstrap contrasts, the
duplicate counts, per-query and per-intent tables and the runs.

results.json `methods.<method>.<measure>.{value, ci_low?, ci_high?, queries}`, `subsets.<subset>...`,
`contrasts.<subset>.<a - b>.{measure, mean, ci_low, ci_high, replicates}`, `duplicates`; per_query.csv;
class_results.csv; runs/<method>.run (the first run_depth documents per query).
"""

from __future__ import annotations

from pathlib import Path

from rankhouse.study import Evaluation, Study
from rankhouse.study.writing import header, measure_block, write_csv, write_json, write_runs


def results(study: Study, evaluation: Evaluation) -> dict:
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
    for subset, contrast, measure, mean, low, high, replicates in study.wh.sql(
        "SELECT subset, contrast, measure, mean, ci_low, ci_high, replicates FROM results.paired_bootstrap "
        "WHERE freeze_id = ?",
        [freeze_id],
    ):
        contrasts.setdefault(subset, {})[contrast] = {
            "measure": measure, "mean": mean, "ci_low": low, "ci_high": high, "replicates": replicates
        }  # fmt: skip
    queries, in_documents, repeated = study.wh.sql(
        "SELECT queries, queries_whose_text_is_a_document, queries_sharing_their_text_with_another_query "
        "FROM models.query_duplicate_counts WHERE corpus = ?",
        [study.protocol.parameters["corpus"]],
    )[0]
    return {
        **header(study, evaluation),
        "methods": measure_block(subsets.get("all", [])),
        "subsets": {name: measure_block(block) for name, block in subsets.items() if name != "all"},
        "contrasts": contrasts,
        "duplicates": {
            "queries": queries,
            "queries_whose_text_is_a_document": in_documents,
            "queries_sharing_their_text_with_another_query": repeated,
        },
    }


def write(study: Study, evaluation: Evaluation, out: Path) -> list[Path]:
    """A retrieval study: results.json, per_query.csv, class_results.csv, runs/<method>.run."""
    freeze_id = evaluation.freeze.freeze_id
    document = write_json(out / "results.json", results(study, evaluation))
    columns = ["method", "qid", "class", "relevant", "top1", "hit5", "recall5", "rr", "ndcg10", "p5"]
    per_query = write_csv(
        out / "per_query.csv",
        columns,
        study.wh.sql(
            f"SELECT {', '.join(columns)} FROM results.retrieval_query_metrics WHERE freeze_id = ? "
            "ORDER BY method, query_row",
            [freeze_id],
        ),
    )
    classes = write_csv(
        out / "class_results.csv",
        ["method", "class", "documents", "queries", "top1_hits"],
        study.wh.sql(
            "SELECT method, class, documents, queries, top1_hits FROM results.class_results WHERE freeze_id = ? "
            "ORDER BY ALL",
            [freeze_id],
        ),
    )
    written = [document, per_query, classes]
    return written + write_runs(
        study,
        out / "runs",
        "SELECT r.method, r.qid, r.doc_id, r.rank, r.score, q.query_row FROM models.retrieval_runs AS r "
        "JOIN models.queries AS q ON q.corpus = r.corpus AND q.qid = r.qid",
    )


def table(study: Study, evaluation: Evaluation) -> str:
    """Measures as rows, methods as columns, with Wilson intervals where there are any."""
    return format_table(results(study, evaluation))


def format_table(found: dict) -> str:
    """The summary of a retrieval results.json: per subset, measures as rows and methods as columns (with
    Wilson intervals where there are any), the paired bootstrap contrasts and the duplicate counts."""
    lines = []
    for title, block in [("all queries", found["methods"]), *found["subsets"].items()]:
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
    for subset, contrasts in sorted(found["contrasts"].items()):
        for name, c in contrasts.items():
            lines.append(
                f"Top-1 {name} ({subset}): {c['mean']:+.4f} [{c['ci_low']:+.4f}, {c['ci_high']:+.4f}], "
                f"paired bootstrap, {c['replicates']:,} replicates"
            )
    d = found["duplicates"]
    lines.append(
        f"duplicates: {d['queries_whose_text_is_a_document']} test queries occur in training; "
        f"{d['queries_sharing_their_text_with_another_query']} share their text with another test query"
    )
    return "\n".join(lines)
