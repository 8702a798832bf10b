"""Seed 004's E3 (broader semantic retrieval) and E4 (controllability) in a study's outputs, for the
named-features writer (rankhouse/studies/features/writer.py), which calls these functions:

e3_results, e4_results   the `e3` and `e4` blocks of results.json
e3_sections, e4_sections  the report's Markdown sections (a list of blocks)
write_csvs               e3_groups.csv (per group and system), e4_cases.csv (per case and system),
                         e4_semantic_failures.csv and e4_rank_changes.csv (per case, system and document of
                         either top 10: its rank without and with the penalty or filter)

E3 is the study's part `e3` (rankings `group_rankings@e3`, judgments `group_judgments@e3`), E4 the parts
`e4` (desired intents) and `e4_unwanted` (the same rankings judged by the unwanted intents, so that the
unwanted-label rate in the top 10 is that part's P@10). Every figure is a model's: the shared measures
(results.run_measures, results.query_measures), the cluster bootstrap over E3's groups
(results.cluster_bootstrap) and the models of models/features/ (evaluate outputs from results.* under the
freeze, prepare outputs from models.*, frozen with the study).
"""

from __future__ import annotations

from pathlib import Path

from rankhouse.study import Evaluation, Study
from rankhouse.study.writing import write_csv

E3_PART, E4_PART, E4_UNWANTED_PART = "e3", "e4", "e4_unwanted"
E3_SYSTEMS = ("phrase-bm25", "interpreted-requirements", "manual-requirements")
E3_MEASURES = ("P@10", "R@10", "Hit@10", "nDCG@10", "MRR")
E4_SYSTEMS = ("positive", "penalty-0.25", "penalty-0.5", "penalty-1", "hard-filter")
E4_CHANGED = E4_SYSTEMS[1:]
E4_MEASURES = {"desired_P@10": (E4_PART, "P@10"), "desired_R@10": (E4_PART, "R@10"),
               "unwanted_rate@10": (E4_UNWANTED_PART, "P@10")}  # fmt: skip
PROXY = (
    "Judgments are label-derived proxies (a training message is relevant if its intent is one the group or "
    "case names), not document-level human judgments."
)


def part_study(study: Study, part: str) -> str:
    """The study name a part's rows carry (rankings' `model@part`): `<study>/<part>`."""
    return f"{study.protocol.name}/{part}"


def _rows(study: Study, sql: str, params: list) -> list[dict]:
    columns, rows = study.wh.columns(sql, params)
    return [dict(zip(columns, row)) for row in rows]


def _means(study: Study, evaluation: Evaluation, part: str, systems: tuple, measures: tuple) -> dict:
    """{(system, measure): run_measures row} of a part's `all` subset."""
    rows = _rows(
        study,
        "SELECT system, measure, value, queries FROM results.run_measures WHERE freeze_id = ? AND study = ? "
        "AND subset = 'all'",
        [evaluation.freeze.freeze_id, part_study(study, part)],
    )
    return {(r["system"], r["measure"]): r for r in rows if r["system"] in systems and r["measure"] in measures}


def _per_query(study: Study, evaluation: Evaluation, part: str, measure: str) -> dict:
    """{(system, query): value} of one measure of a part (results.query_measures)."""
    rows = study.wh.sql(
        "SELECT system, query, value FROM results.query_measures WHERE freeze_id = ? AND study = ? AND measure = ?",
        [evaluation.freeze.freeze_id, part_study(study, part), measure],
    )
    return {(system, query): value for system, query, value in rows}


# -- E3 ---------------------------------------------------------------------------------------------
def e3_results(study: Study, evaluation: Evaluation) -> dict:
    """results.json's `e3`: per system and measure the mean over every phrase (strict: none dropped) with
    the percentile interval of the bootstrap over groups; per group the means over its paraphrases; the
    interpretations' review and unsupported rates."""
    freeze = evaluation.freeze.freeze_id
    means = _means(study, evaluation, E3_PART, E3_SYSTEMS, E3_MEASURES)
    intervals = {
        (r["system"], r["measure"]): r
        for r in _rows(
            study,
            "SELECT system, measure, ci_low, ci_high, replicates, clusters FROM results.cluster_bootstrap "
            "WHERE freeze_id = ? AND study = ? AND subset = 'all'",
            [freeze, part_study(study, E3_PART)],
        )
    }
    systems: dict = {}
    for (system, measure), row in sorted(means.items()):
        entry = {"value": row["value"], "queries": row["queries"]}
        interval = intervals.get((system, measure))
        if interval:
            entry |= {"ci_low": interval["ci_low"], "ci_high": interval["ci_high"], "groups": interval["clusters"],
                      "replicates": interval["replicates"]}  # fmt: skip
        systems.setdefault(system, {})[measure] = entry
    groups: dict = {}
    for row in _rows(
        study,
        "SELECT group_id, system, measure, value, queries FROM results.group_results WHERE freeze_id = ? "
        "AND study = ? ORDER BY group_row, system, measure",
        [freeze, part_study(study, E3_PART)],
    ):
        if row["system"] in E3_SYSTEMS and row["measure"] in E3_MEASURES:
            groups.setdefault(row["group_id"], {}).setdefault(row["system"], {})[row["measure"]] = row["value"]
    interpretation = {r.pop("group_id"): r for r in _rows(
        study, "SELECT * EXCLUDE (group_row) FROM models.group_interpretations ORDER BY group_row NULLS FIRST", []
    )}  # fmt: skip
    return {
        "part": part_study(study, E3_PART),
        "features": study.protocol.parameters.get("provider"),
        "systems": systems,
        "groups": groups,
        "interpretation": interpretation.pop("all", {}) | {"groups": interpretation},
        "intervals": "percentile bootstrap over the groups (a group's four paraphrases are resampled together)",
        "judgments": PROXY,
    }


def measure_cell(entry: dict | None) -> str:
    """A measure as a report cell: its value, with its interval when it has one."""
    if entry is None:
        return ""
    if "ci_low" in entry:
        return f"{entry['value']:.4f} [{entry['ci_low']:.4f}, {entry['ci_high']:.4f}]"
    return f"{entry['value']:.4f}"


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(["---"] + ["---:"] * (len(header) - 1)) + " |"]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


def e3_sections(study: Study, evaluation: Evaluation) -> list[str]:
    """The report's E3 section: the systems' measures with intervals by group, per-group nDCG@10 and the
    interpretations' review and unsupported rates."""
    found = e3_results(study, evaluation)
    rates = found["interpretation"]
    count = next((e["queries"] for s in found["systems"].values() for e in s.values()), 0)
    groups = next((e.get("groups") for s in found["systems"].values() for e in s.values()), None)
    blocks = [
        "## E3: broader semantic retrieval",
        f"{count} phrase queries ({groups or len(found['groups'])} groups of four paraphrases) over the training "
        f"messages, document features from the `{found['features']}` extractor. Strict results: every phrase "
        "counts, whatever its interpretation's flags. Intervals: 95% percentile bootstrap over the groups, not the "
        "phrases (a group's paraphrases are correlated). " + PROXY,
        _table(["system", *E3_MEASURES],
               [[s, *(measure_cell(found["systems"].get(s, {}).get(m)) for m in E3_MEASURES)] for s in E3_SYSTEMS]),
        f"Interpretations: {rates.get('review', 0)} of {rates.get('phrases', 0)} phrases flagged for review "
        f"({rates.get('review_rate') or 0:.1%}), {rates.get('unsupported', 0)} unsupported "
        f"({rates.get('unsupported_rate') or 0:.1%}), {rates.get('without_weights', 0)} with no feature named "
        f"(scored 0 for every message), {rates.get('diagnosed', 0)} with diagnostics; none is left out.",
        "nDCG@10 per group (mean over its four paraphrases; every measure in e3_groups.csv):",
        _table(["group", *E3_SYSTEMS],
               [[g, *(f"{by.get(s, {}).get('nDCG@10', float('nan')):.4f}" for s in E3_SYSTEMS)]
                for g, by in found["groups"].items()]),
    ]  # fmt: skip
    return blocks


# -- E4 ---------------------------------------------------------------------------------------------
def e4_results(study: Study, evaluation: Evaluation) -> dict:
    """results.json's `e4`: per system the means over the cases of desired P@10 and R@10 and of the
    unwanted-label rate in the top 10; per case its filter (survival, violations), the penalty check,
    each system's measures and rank changes against the positive-only ranking, and its semantic failures."""
    freeze = evaluation.freeze.freeze_id
    params = [freeze]
    means = {}
    for name, (part, measure) in E4_MEASURES.items():
        for (system, _), row in _means(study, evaluation, part, E4_SYSTEMS, (measure,)).items():
            means.setdefault(system, {})[name] = {"value": row["value"], "queries": row["queries"]}
    per_query = {name: _per_query(study, evaluation, part, measure) for name, (part, measure) in E4_MEASURES.items()}
    top10 = {(r["case_id"], r["system"]): r for r in _rows(study, "SELECT * FROM models.case_top10_changes", [])}
    unwanted = {(r["case_id"], r["system"]): r for r in _rows(
        study, "SELECT * EXCLUDE (freeze_id) FROM results.case_unwanted_rank_changes WHERE freeze_id = ?", params
    )}  # fmt: skip
    filters = {r.pop("case_id"): r for r in _rows(study, "SELECT * FROM models.case_filter", [])}
    checks = {r.pop("case_id"): r for r in _rows(study, "SELECT * FROM models.case_penalty_checks", [])}
    failures: dict = {}
    listed = ("SELECT case_id, rank, doc_key, doc_id, intent, unwanted_units FROM results.case_semantic_failures "
              "WHERE freeze_id = ? ORDER BY case_id, rank")  # fmt: skip
    for r in _rows(study, listed, params):
        failures.setdefault(r.pop("case_id"), []).append(r)
    cases = {}
    corpus = study.protocol.parameters.get("corpus")
    for case_id, name, feature in study.wh.sql(
        "SELECT case_id, name, unwanted_feature FROM models.control_cases WHERE corpus = ? ORDER BY case_row", [corpus]
    ):
        systems = {}
        for system in E4_SYSTEMS:
            queries = {"desired_P@10": case_id, "desired_R@10": case_id, "unwanted_rate@10": f"{case_id}/unwanted"}
            entry = {n: per_query[n].get((system, q)) for n, q in queries.items()}
            if system in E4_CHANGED:
                moved, demoted = top10.get((case_id, system), {}), unwanted.get((case_id, system), {})
                entry |= {
                    "positive_top10_left": moved.get("top10_left"),
                    "positive_top10_unranked": moved.get("top10_unranked"),
                    "positive_top10_mean_rank_change": moved.get("mean_rank_change"),
                    "unwanted_documents": demoted.get("unwanted_documents"),
                    "unwanted_top10_before": demoted.get("top10_before"),
                    "unwanted_top10_after": demoted.get("top10_after"),
                    "unwanted_unranked": demoted.get("unranked"),
                    "unwanted_mean_rank_change": demoted.get("mean_rank_change"),
                }
            systems[system] = entry
        cases[case_id] = {"name": name, "unwanted_feature": feature, "filter": filters.get(case_id),
                          "penalty_check": checks.get(case_id), "systems": systems,
                          "semantic_failures": failures.get(case_id, [])}  # fmt: skip
    return {
        "part": part_study(study, E4_PART),
        "unwanted_part": part_study(study, E4_UNWANTED_PART),
        "features": study.protocol.parameters.get("provider"),
        "systems": means,
        "cases": cases,
        "hard_filter_violations": sum(f["violations"] for f in filters.values()),
        "penalty_violations": sum(c["violations"] for c in checks.values()),
        "semantic_failures": sum(map(len, failures.values())),
        "judgments": PROXY,
    }


def _number(value: float | int | None, spec: str = ".4f") -> str:
    return "" if value is None else format(value, spec)


def e4_sections(study: Study, evaluation: Evaluation) -> list[str]:
    """The report's E4 section: per system and case the desired P@10 and R@10, the unwanted-label rate in
    the top 10 and rank changes; the filter's survival; the mechanical checks; the semantic failures."""
    found = e4_results(study, evaluation)
    rows = []
    for case_id, case in found["cases"].items():
        for system, entry in case["systems"].items():
            survival = case["filter"]["survival"] if system == "hard-filter" and case["filter"] else None
            rows.append([case_id, system, _number(entry["desired_P@10"]), _number(entry["desired_R@10"]),
                         _number(entry["unwanted_rate@10"]), _number(entry.get("positive_top10_left"), "d"),
                         _number(entry.get("unwanted_mean_rank_change"), ".1f"), _number(survival, ".1%")])  # fmt: skip
    means = found["systems"]
    failures = [[c, str(f["rank"]), f["doc_id"], f["intent"], f"{f['unwanted_units'] / 1000:.3f}"]
                for c, case in found["cases"].items() for f in case["semantic_failures"]]  # fmt: skip
    blocks = [
        "## E4: controllability",
        f"{len(found['cases'])} cases, document features from the `{found['features']}` extractor: the positive "
        "query alone, penalised by 0.25, 0.5 and 1 times the unwanted feature, and the hard filter (unwanted "
        "feature <= 0.2). The unwanted-label rate is P@10 judged by the case's unwanted intents. " + PROXY,
        _table(["system", "desired P@10", "desired R@10", "unwanted rate @10"],
               [[s, *(_number(means.get(s, {}).get(m, {}).get("value")) for m in E4_MEASURES)] for s in E4_SYSTEMS]),
        "Per case (top-10 left: documents of the positive top 10 no longer in the top 10; rank change: mean rank "
        "change of the unwanted-intent documents against the positive ranking, positive = demoted):",
        _table(["case", "system", "desired P@10", "desired R@10", "unwanted @10", "top-10 left", "rank change",
                "survival"], rows),
        f"Mechanical checks: {found['hard_filter_violations']} hard-filter violations (filtered documents above "
        f"0.2), {found['penalty_violations']} documents whose score rose with the penalty; both are audits that "
        "stop the build unless 0.",
        f"Semantic failures (reported apart): {found['semantic_failures']} hard-filtered top-10 documents of an "
        "unwanted intent whose unwanted feature passed the filter: the number was right and the feature wrong.",
    ]  # fmt: skip
    if failures:
        blocks.append(_table(["case", "rank", "doc_id", "intent", "unwanted feature"], failures))
    return blocks


# -- CSV ----------------------------------------------------------------------------------------------
def write_csvs(study: Study, evaluation: Evaluation, out: Path) -> list[Path]:
    """e3_groups.csv (group, system, the E3 measures, the group's review and unsupported counts),
    e4_cases.csv (case, system, measures and rank changes, the filter's survival),
    e4_semantic_failures.csv and e4_rank_changes.csv (rank_changes)."""
    e3, e4 = e3_results(study, evaluation), e4_results(study, evaluation)
    flags = e3["interpretation"]["groups"]
    groups = [[g, s, *(by.get(s, {}).get(m) for m in E3_MEASURES), flags.get(g, {}).get("review"),
               flags.get(g, {}).get("unsupported")] for g, by in e3["groups"].items() for s in E3_SYSTEMS]  # fmt: skip
    measure_columns = ["p10", "r10", "hit10", "ndcg10", "mrr"]
    change_columns = ["positive_top10_left", "positive_top10_unranked", "positive_top10_mean_rank_change",
                      "unwanted_documents", "unwanted_top10_before", "unwanted_top10_after", "unwanted_unranked",
                      "unwanted_mean_rank_change"]  # fmt: skip
    cases = []
    for case_id, case in e4["cases"].items():
        for system, entry in case["systems"].items():
            kept = case["filter"] if system == "hard-filter" else {}
            cases.append([case_id, case["name"], case["unwanted_feature"], system, entry["desired_P@10"],
                          entry["desired_R@10"], entry["unwanted_rate@10"], *(entry.get(c) for c in change_columns),
                          (kept or {}).get("survivors"), (kept or {}).get("survival"),
                          (kept or {}).get("violations")])  # fmt: skip
    failures = [[c, f["rank"], f["doc_key"], f["doc_id"], f["intent"], f["unwanted_units"]]
                for c, case in e4["cases"].items() for f in case["semantic_failures"]]  # fmt: skip
    return [
        write_csv(out / "e3_groups.csv", ["group_id", "system", *measure_columns, "review", "unsupported"], groups),
        write_csv(out / "e4_cases.csv", ["case_id", "name", "unwanted_feature", "system", "desired_p10", "desired_r10",
                                         "unwanted_rate10", *change_columns, "survivors", "survival",
                                         "filter_violations"], cases),
        write_csv(out / "e4_semantic_failures.csv", ["case_id", "rank", "doc_row", "doc_id", "intent",
                                                     "unwanted_units"], failures),
        write_csv(out / "e4_rank_changes.csv", *rank_changes(study, evaluation)),
    ]  # fmt: skip


def rank_changes(study: Study, evaluation: Evaluation) -> tuple[list[str], list[tuple]]:
    """E4's rank changes document by document: per case and changed system, every document in the
    positive-only top 10 or in the system's top 10, with its rank in both (rank empty where the hard filter
    removed it) and its role, the case's desired or unwanted intents (models.case_intent_documents, beside the
    labels it is made of: the gate is open while a study's outputs are written) or
    none; cases in their file's order, systems in E4_SYSTEMS' order, documents by positive rank.

    Example: columns, rows = rank_changes(study, evaluation)  # ['case_id', 'system', 'doc_id', 'role', ...]
    """
    columns, rows = study.wh.columns(
        """
        WITH systems AS (
            SELECT DISTINCT case_id, system FROM models.case_rankings WHERE system <> 'positive'
        ),
        tops AS (
            SELECT s.case_id, s.system, p.doc_key
            FROM systems AS s
            JOIN models.case_rankings AS p ON p.system = 'positive' AND p.case_id = s.case_id AND p.rank <= 10
            UNION
            SELECT case_id, system, doc_key FROM models.case_rankings WHERE system <> 'positive' AND rank <= 10
        ),
        roles AS (
            SELECT case_id, doc_row, min(role) AS role
            FROM models.case_intent_documents
            GROUP BY case_id, doc_row
        )
        SELECT t.case_id, t.system, d.doc_id, coalesce(r.role, '') AS role, p.rank AS positive_rank, s.rank
        FROM tops AS t
        JOIN models.control_cases AS c ON c.corpus = ? AND c.case_id = t.case_id
        JOIN models.case_rankings AS p ON p.system = 'positive' AND p.case_id = t.case_id AND p.doc_key = t.doc_key
        LEFT JOIN models.case_rankings AS s ON s.system = t.system AND s.case_id = t.case_id AND s.doc_key = t.doc_key
        JOIN models.documents AS d ON d.corpus = c.corpus AND d.doc_row = t.doc_key
        LEFT JOIN roles AS r ON r.case_id = t.case_id AND r.doc_row = t.doc_key
        ORDER BY c.case_row, list_position(?, t.system), p.rank
        """,
        [study.protocol.parameters.get("corpus"), list(E4_SYSTEMS)],
    )
    return columns, rows
