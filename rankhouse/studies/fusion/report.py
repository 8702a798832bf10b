"""The fusion study's report sections (seed 003): the diagnostics (reversals, influence, tail saturation,
admission, the references) and section 9's measurements."""

from __future__ import annotations

from rankhouse.report import plots
from rankhouse.report.plots import Bar, Point, number
from rankhouse.report.sections import (
    Block,
    Figure,
    Figures,
    Folder,
    Section,
    Table,
    Text,
    as_float,
    as_int,
    csv_table,
    missing,
    shown_value,
    slug,
)


def diagnostics(folder: Folder) -> Section:
    """Seed 003's diagnostics: reversals against the dense arm, each arm's influence on the mixture, the
    panel's tail saturation, admission, and the references' bounds and identity cards."""
    blocks: list[Block] = []
    reversals = folder.table("reversals.csv")
    if reversals is None:
        blocks.append(missing("reversals.csv"))
    else:
        series = ["dense_correct_reversed", "dense_wrong_corrected"]
        svg = plots.bars("fusion-reversals", "Pairwise reversals against the dense arm",
                         [Bar(r["rule"], [as_float(r[s]) for s in series]) for r in reversals], series,
                         axis="(relevant, irrelevant) pairs, summed over the judged queries",
                         desc="Per rule, pairs the dense arm orders correctly that the rule reverses, and pairs the "
                         "dense arm gets wrong that the rule puts right.", places=0)  # fmt: skip
        blocks.append(Figure("fusion-reversals", "Pairwise reversals against the dense arm", svg,
                             "Reversals (seed 003, eq. 15 and 16; reversal_totals)."))  # fmt: skip
    influence = folder.table("influence.csv")
    if influence is not None:
        series = ["mean_influence", "median_influence"]
        svg = plots.bars("fusion-influence", "Each arm's influence on the mixture score",
                         [Bar(r["arm"], [as_float(r[s]) for s in series]) for r in influence], series,
                         axis="influence (seed 003, eq. 13)", desc="Per arm, the mean and median influence over "
                         "all candidates.")  # fmt: skip
        blocks.append(Figure("fusion-influence", "Each arm's influence on the mixture score", svg,
                             "Influence over all candidates (influence_summary)."))  # fmt: skip
    tail = folder.table("tail_saturation.csv")
    if tail is not None:
        svg = plots.bars("fusion-tail", "Candidates at the p-value floor",
                         [Bar(r["arm"], [as_float(r["at_floor"])], [as_float(r["candidates"])]) for r in tail],
                         ["at the floor"], axis="candidates whose score beats every reference score (grey: all "
                         "candidates)", desc="Per arm, the candidates at the floor 1/(m + 1); arm all: at the floor "
                         "in every arm.", places=0)  # fmt: skip
        blocks.append(
            Figure(
                "fusion-tail",
                "Candidates at the p-value floor",
                svg,
                "Tail saturation (tail_saturation): share at the floor "
                + ", ".join(f"{r['arm']} {number(as_float(r['share_at_floor']))}" for r in tail)
                + ".",
            )
        )
    frozen_at = (folder.results.get("reference") or {}).get("frozen_at")
    if frozen_at:
        blocks.append(Text(f"The references were frozen at {frozen_at} (the freeze's time: section 10's timestamp of "
                           "the identity cards below, whose SHA-256 covers every other field)."))  # fmt: skip
    for name, title in (("admission.csv", "Admission (eq. 27)"), ("reference_bounds.csv", "Reference bounds (DKW)"),
                        ("reference_fingerprints.csv", "Reference identity cards")):  # fmt: skip
        rows = folder.table(name)
        if rows:
            blocks.append(csv_table(rows, f"{title}: {name}."))
    return Section("fusion", "Fusion diagnostics", blocks)


def _true(text: str | None) -> bool:
    """A CSV cell written from a boolean (DuckDB's True/False)."""
    return str(text).lower() == "true"


def section9(folder: Folder) -> Section | None:
    """Seed 003's section 9 measurements, in the seed's order: the pipeline and its populations, the
    stages with eq. 20 at each transition, null calibration against the nominal levels, the relevance
    model, the Gaussian approximation against measured reversals, the cold-start references, the doc-doc
    transport, eq. 26's acceptance, eq. 5's estimated weights and the success condition."""
    r = folder.results
    if "section9" not in r:
        return None
    s9 = r["section9"]
    blocks: list[Block] = []
    pipeline = (s9.get("pipeline") or [{}])[0]
    norms = s9.get("vector_norms") or []
    blocks.append(Text(
        f"Populations (first gate): every arm scored {number(pipeline.get('min_scored'))} to "
        f"{number(pipeline.get('max_scored'))} of the {number(pipeline.get('eligible'))} eligible documents per "
        f"query, the null reference holds {number(pipeline.get('min_reference'))} to "
        f"{number(pipeline.get('max_reference'))} scores per query and arm, "
        f"{number(pipeline.get('reference_outside_corpus'))} panel documents lie outside the corpus, "
        f"{number(pipeline.get('incomplete'))} candidates are incomplete: populations agree = "
        f"{shown_value(pipeline.get('populations_agree'))} (pipeline.csv; per query stage_populations.csv). "
        "Unit norms (second gate): " + "; ".join(
            f"{n['kind']} {number(n['vectors'])} vectors, norms {number(n['norm_min'], 7)} to "
            f"{number(n['norm_max'], 7)}, {number(n['unpaired'])} unpaired" for n in norms)
        + " (vector_norms.csv; audited in prepare: at most 1e-5 from 1)."
    ))  # fmt: skip
    stages = folder.table("stage_transitions.csv")
    if stages:
        contrasts = r.get("contrasts", {}).get("all", {})
        rows = []
        for row in stages:
            c = contrasts.get(f"{row['to_stage']} - {row['from_stage']}", {}).get("nDCG@10")
            interval = f"[{number(c['ci_low'], signed=True)}, {number(c['ci_high'], signed=True)}]" if c else ""
            rows.append(
                [
                    row["transition"],
                    number(as_float(row["mean_delta"]), signed=True),
                    interval,
                    number(as_int(row["improved"])),
                    number(as_int(row["worsened"])),
                    number(as_int(row["unchanged"])),
                ]
            )
        blocks.append(Table(["transition", "mean delta nDCG@10 (eq. 20)", "95% interval", "improved", "worsened",
                             "unchanged"], rows, [False, True, True, True, True, True],
                            "Stage separation: eq. 20 per query at every declared transition (stage_transitions.csv; "
                            "intervals: the paired bootstrap of the contrast [to, from] where the protocol lists "
                            "it). <rule>_admitted is the rule's ranking after admission (eq. 27) with the dense "
                            "fallback."))  # fmt: skip
    calibration = [row for row in folder.table("null_calibration.csv") or [] if row["stratum"] == "all"]
    if calibration:
        points = [Point(f"{row['arm']} ({row['reference']})", float(row["level"]), float(row["null_share"]),
                        as_float(row["null_ci_low"]), as_float(row["null_ci_high"]), row["level"])
                  for row in calibration]  # fmt: skip
        svg = plots.scatter("s9-calibration", "Null calibration: admitted share against the nominal level", points,
                            x_axis="nominal level alpha", y_axis="held-out null rows with p <= alpha",
                            desc="Per arm and reference, the share of held-out null rows admitted at each "
                            "predeclared level with its 95% interval by query clusters; the dashed line is y = x.",
                            diagonal=True, connect=True)  # fmt: skip
        blocks.append(Figure("s9-calibration", "Null calibration against the nominal level", svg,
                             "Below the dashed line: conservative; above: anti-conservative (null_calibration.csv, "
                             "stratum all)."))  # fmt: skip
        blocks.append(Table(
            ["reference", "arm", "level", "null rows", "admitted share [95%]", "gold rejection [95%]",
             "null at floor", "gold at floor", "anti-conservative"],
            [[row["reference"], row["arm"], row["level"], number(as_int(row["null_rows"])),
              f"{number(as_float(row['null_share']))} [{number(as_float(row['null_ci_low']))}, "
              f"{number(as_float(row['null_ci_high']))}]",
              f"{number(as_float(row['gold_rejection']))} [{number(as_float(row['gold_ci_low']))}, "
              f"{number(as_float(row['gold_ci_high']))}]",
              number(as_float(row["null_at_floor"])), number(as_float(row["gold_at_floor"])),
              shown_value(_true(row["anti_conservative"]))] for row in calibration],
            [False, False, True, True, True, True, True, True, False],
            "Null calibration over all held-out rows (panel: the frozen reference; pooled: the other blocks' "
            "retained queries). Strata (block, query length, document length, lexical match): "
            "null_calibration.csv."))  # fmt: skip
        flagged = s9.get("anti_conservative_strata") or []
        blocks.append(Text(
            "Anti-conservative strata (interval wholly above the level): " + ("; ".join(
                f"{f['reference']} {f['arm']} at {f['level']}: {f['stratum']} {f['stratum_value']} "
                f"{number(f['null_share'])}" for f in flagged) or "none") + "."))  # fmt: skip
    joint = folder.table("relevance_joint.csv")
    if joint:
        order = ["floor", "<=0.01", "<=0.05", "<=0.1", "<=0.5", "<=1"]
        figures = []
        for relevant, name in (("True", "relevant"), ("False", "non-relevant")):
            cells = {(row["bm25_bin"], row["dense_bin"]): float(row["share"]) for row in joint
                     if row["relevant"] == relevant}  # fmt: skip
            ident = f"s9-joint-{slug(name)}"
            svg = plots.heatmap(
                ident,
                f"Joint p-values of {name} candidates",
                cells,
                order,
                order,
                x_axis="dense p-value bin",
                y_axis="BM25 p-value bin",
                desc=f"The share of {name} candidates in each cell of (BM25 p bin, dense p bin).",
            )
            figures.append(
                Figure(
                    ident,
                    f"Joint p-values of {name} candidates",
                    svg,
                    f"{name.capitalize()} candidates (relevance_joint.csv).",
                )
            )
        blocks.append(Figures(figures))
    errors = folder.table("arm_error_rates.csv")
    if errors:
        blocks.append(Table(["arm", "level", "error", "rate [95%]", "candidates"],
                            [[e["arm"], e["level"], e["error"], f"{number(as_float(e['ratio']))} ["
                              f"{number(as_float(e['ci_low']))}, {number(as_float(e['ci_high']))}]",
                              number(as_int(e["denominator"]))] for e in errors],
                            [False, True, False, True, True],
                            "Per-arm conditional error rates among the candidates (arm_error_rates.csv)."))  # fmt: skip
    by_score = folder.table("relevance_by_score.csv")
    if by_score:
        rules = [rule for rule in ("mixture", "fisher", "rrf") if any(b["rule"] == rule for b in by_score)]
        figures = []
        for rule in rules:
            points = [Point(rule, float(b["score_mean"]), float(b["ratio"]), as_float(b["ci_low"]),
                            as_float(b["ci_high"]), b["bin"]) for b in by_score if b["rule"] == rule]  # fmt: skip
            ident = f"s9-relevance-{slug(rule)}"
            svg = plots.scatter(ident, f"Empirical relevance against S ({rule})", points, x_axis=f"{rule} score S "
                                "(mean of the bin)", y_axis="share of relevant candidates", desc=f"The share of "
                                f"relevant candidates in each of the {rule} score bins, with 95% intervals by query "
                                "clusters.", connect=True)  # fmt: skip
            figures.append(Figure(ident, f"Empirical relevance against S ({rule})", svg,
                                  "Equal-count bins of S (relevance_by_score.csv)."))  # fmt: skip
        blocks.append(Figures(figures))
    gaussian = folder.table("gaussian_reversals.csv")
    if gaussian:
        groups = [g for g in gaussian if g["query_group"] != "all" and g["predicted_change"] not in ("", None)]
        points = [Point(g["pairs"], float(g["predicted_change"]), float(g["measured_change"]), label=g["query_group"])
                  for g in groups]  # fmt: skip
        svg = plots.scatter("s9-gaussian", "Predicted against measured change in pairwise accuracy", points,
                            x_axis="Gaussian: Phi(fused) - Phi(delta_v) (eq. 17 under eq. 18's model)",
                            y_axis="measured: P(RRF right) - P(dense right)", desc="Per query group and pair set, "
                            "the change in pairwise accuracy from dense to RRF that the Gaussian approximation "
                            "predicts and the one measured; negative is harm.", diagonal=True)  # fmt: skip
        blocks.append(
            Figure(
                "s9-gaussian",
                "Gaussian approximation against measured reversals",
                svg,
                "One point per query group and pair set (all pairs; near-top: a document in either "
                "top 10); on the dashed line the approximation is exact (gaussian_reversals.csv).",
            )
        )
        overall = [g for g in gaussian if g["query_group"] == "all"]
        agree = sum(_true(g["predicted_harm"]) == _true(g["measured_harm"]) for g in groups)
        blocks.append(Table(
            ["pairs", "pairs counted", "delta_l", "delta_v", "rho", "eq. 18 bound", "predicted harm",
             "predicted change", "measured change", "measured harm", "reversals", "corrections"],
            [[g["pairs"], number(as_int(g["pair_count"])), number(as_float(g["delta_l"])),
              number(as_float(g["delta_v"])), number(as_float(g["rho"])), number(as_float(g["eq18_bound"])),
              shown_value(_true(g["predicted_harm"])),
              number(as_float(g["predicted_change"]), signed=True), number(as_float(g["measured_change"]), signed=True),
              shown_value(_true(g["measured_harm"])), number(as_int(g["reversals"])), number(as_int(g["corrections"]))]
             for g in overall],
            [False] + [True] * 11,
            f"All queries. Eq. 18's harm verdict agrees with the measured one in {number(agree)} of "
            f"{number(len(groups))} group rows."))  # fmt: skip
    cold = [c for c in folder.table("cold_start.csv") or [] if c["query_group"] == "all"]
    if cold:
        blocks.append(Table(
            ["arm", "queries", "mean sup |G - F|", "median", "max", "DKW term (m)", "mean shift bound",
             "queries shifted", "mean eta", "max eta", "contaminated queries"],
            [[c["arm"], number(as_int(c["queries"])), number(as_float(c["mean_distance"])),
              number(as_float(c["median_distance"])), number(as_float(c["max_distance"])),
              number(as_float(c["dkw_reference"])), number(as_float(c["mean_shift_lower"])),
              number(as_int(c["shifted_queries"])), number(as_float(c["mean_eta"])), number(as_float(c["max_eta"])),
              number(as_int(c["contaminated_queries"]))] for c in cold],
            [False] + [True] * 10,
            "Cold-start references against held-out real scores (eq. 25): per query the distance between its "
            "panel reference and its held-out null scores, the lower bound on the shift after both DKW terms, "
            "and the panel's contamination eta_q; by query group: cold_start.csv, per query: "
            "cold_start_queries.csv."))  # fmt: skip
    transport = folder.table("transport.csv")
    if transport:
        folds = [t for t in transport if t["fold"] != "all"]
        first = folds[0] if folds else {}
        blocks.append(Table(
            ["level", "kind", "held-out exceedance [95%]", "folds"],
            [[t["level"], t["kind"], f"{number(as_float(t['exceedance']))} [{number(as_float(t['ci_low']))}, "
              f"{number(as_float(t['ci_high']))}]", number(len({f['fold'] for f in folds}))]
             for t in transport if t["fold"] == "all"],
            [True, False, True, True],
            f"Doc-doc null transported to the query-doc null (eq. 22-24), dense arm: "
            f"{number(as_int(first.get('doc_pairs')))} panel pairs, mu_DD {number(as_float(first.get('mu_dd')))}, "
            f"sigma_DD {number(as_float(first.get('sigma_dd')))}; "
            f"fold {first.get('fold')}: mu_QD {number(as_float(first.get('mu_qd')))} (eq. 22 from the mean vectors: "
            f"{number(as_float(first.get('mu_qd_eq22')))}), sigma_QD {number(as_float(first.get('sigma_qd')))}. Each "
            "held-out "
            "block is tested with thresholds from the other blocks; exceedance should equal the level (per fold: "
            "transport.csv)."))  # fmt: skip
    separation = folder.table("separation.csv")
    if separation:
        blocks.append(Table(
            ["score", "m0", "m1", "threshold", "J-hat", "eps0 + eps1", "J lower", "J_min", "accepted"],
            [[s["arm"], number(as_int(s["null_units"])), number(as_int(s["relevant_units"])),
              number(as_float(s["threshold"])), number(as_float(s["j_hat"])),
              number(as_float(s["epsilon_null"]) + as_float(s["epsilon_relevant"])), number(as_float(s["j_lower"])),
              number(as_float(s["j_min"])), shown_value(_true(s["accepted"]))] for s in separation],
            [False] + [True] * 7 + [False],
            "Eq. 26's acceptance of a separation threshold, one null and one relevant observation per query "
            "(separation.csv)."))  # fmt: skip
    weights = folder.table("stouffer_weights.csv")
    if weights:
        learned = r.get("methods", {}).get("stouffer_learned", {})
        fixed = r.get("methods", {}).get("stouffer", {})
        measures = ", ".join(f"{m} {number(learned[m]['value'])} (fixed weights "
                             f"{number(fixed.get(m, {}).get('value'))})"
                             for m in ("nDCG@10", "Top-1") if m in learned)  # fmt: skip
        blocks.append(Table(
            ["fold", "delta_bm25", "delta_dense", "weight_bm25", "weight_dense", "monotone"],
            [[w["fold"], number(as_float(w["delta_bm25"])), number(as_float(w["delta_dense"])),
              number(as_float(w["weight_bm25"])), number(as_float(w["weight_dense"])),
              shown_value(_true(w["monotone"]))] for w in weights],
            [True, True, True, True, True, False],
            f"Eq. 5's weights Sigma^-1 delta estimated on the other blocks (stouffer_weights.csv); the cross-fitted "
            f"ranking stouffer_learned: {measures}."))  # fmt: skip
    success = r.get("success_condition") or {}
    task = success.get("this_task") or {}
    if task:
        blocks.append(Text(
            f"Success condition (declared before the run): for the endpoint {task.get('endpoint')}, the mean over "
            f"the tasks {', '.join(success.get('declared', {}).get('success_tasks', []))} of "
            f"{task.get('measure')}({task.get('new_rule')}) - {task.get('measure')}({task.get('baseline')}) > 0. "
            f"This task ({task.get('task')}): {number(task.get('delta'), signed=True)} "
            f"[{number(task.get('ci_low'), signed=True)}, {number(task.get('ci_high'), signed=True)}] "
            f"({number(task.get('new_value'))} against {number(task.get('baseline_value'))}); above 0 on this "
            f"task: {shown_value(task.get('holds_on_task'))}. {success.get('note', '')}"))  # fmt: skip
    return Section("section9", "Seed 003, section 9: the measurements before fusion", blocks)


def recognise(folder: Folder) -> bool:
    """An output directory of the fusion writer (one written before provenance.json named its writer)."""
    return (folder.path / "reversals.csv").is_file()
