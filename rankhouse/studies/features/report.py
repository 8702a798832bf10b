"""The named-features study's report sections (seed 004): E5's ablations, E3's semantic groups and E4's
controllability cases; and its facts (the extractor, a stand-in's banner)."""

from __future__ import annotations

from rankhouse.report import plots
from rankhouse.report.plots import Bar, Interval, Ranks, number
from rankhouse.report.sections import (
    Block,
    Figure,
    Folder,
    Section,
    Text,
    as_float,
    as_int,
    csv_table,
    measure_table,
    missing,
    ordered,
    slug,
)

E3_SYSTEMS = ["phrase-bm25", "interpreted-requirements", "manual-requirements"]
E4_SYSTEMS = ["positive", "penalty-0.25", "penalty-0.5", "penalty-1", "hard-filter"]


def ablations(folder: Folder) -> Section | None:
    """E5: each ablation's change in Top-1 and Hit@5 against the full weighted system (feature_ablations)."""
    rows = folder.table("ablations.csv")
    if rows is None:
        return None
    measures = ordered((r["measure"] for r in rows), ["Top-1", "Hit@5"])
    by_variant: dict[str, dict[str, float | None]] = {}
    for r in rows:
        by_variant.setdefault(r["variant"].removeprefix("weighted-without-"), {})[r["measure"]] = as_float(r["change"])
    bars = [Bar(name, [by.get(m) for m in measures]) for name, by in by_variant.items()]
    svg = plots.bars("e5-ablations", "E5: change against the full weighted system", bars, measures,
                     axis="value without the feature or family - full value", desc="Per ablation, the change "
                     "in each measure against weighted relevance with every feature.")  # fmt: skip
    return Section("e5", "E5: ablations", [
        Text("Weighted relevance without each family and each feature, every other weight fixed (feature_ablations): "
             "descriptive diagnostics after the evaluation, not a selection of a method. Values: ablations.csv."),
        Figure("e5-ablations", "E5: change against the full weighted system", svg,
               "Change = value without it - the full system's value (negative: the feature or family helped)."),
    ])  # fmt: skip


def e3(folder: Folder) -> Section | None:
    """E3: the systems' measures over the phrases with intervals by group, and nDCG@10 per group."""
    e3 = folder.results.get("e3")
    if not e3:
        return None
    systems = ordered(e3.get("systems", {}), E3_SYSTEMS)
    measures = ordered((m for s in e3["systems"].values() for m in s), ["P@10", "R@10", "Hit@10", "nDCG@10", "MRR"])
    blocks: list[Block] = [
        Text(f"Intervals: {e3.get('intervals', '')}. {e3.get('judgments', '')}"),
        measure_table(e3["systems"], systems, measures, "E3 phrases: mean over every phrase, interval by group."),
    ]
    for measure in ("nDCG@10", "P@10"):
        rows = [Interval(s, e["value"], e["ci_low"], e["ci_high"]) for s in systems
                if (e := e3["systems"][s].get(measure)) and e.get("ci_low") is not None]  # fmt: skip
        if rows:
            ident = f"e3-{slug(measure)}"
            svg = plots.forest(
                ident,
                f"E3: {measure} by system",
                rows,
                axis=measure,
                signed=False,
                desc=f"Each E3 system's {measure} with its percentile interval over the groups.",
            )
            blocks.append(Figure(ident, f"E3: {measure} by system", svg, f"{measure}, 95% interval over the groups."))
    groups = folder.table("e3_groups.csv")
    if groups:
        by_group: dict[str, dict[str, float | None]] = {}
        for r in groups:
            by_group.setdefault(r["group_id"], {})[r["system"]] = as_float(r["ndcg10"])
        svg = plots.bars("e3-groups", "E3: nDCG@10 per group", [Bar(g, [by.get(s) for s in systems])
                         for g, by in by_group.items()], systems, axis="nDCG@10, mean over the group's paraphrases",
                         desc="Per E3 group and system, nDCG@10 averaged over its paraphrases.")  # fmt: skip
        blocks.append(Figure("e3-groups", "E3: nDCG@10 per group", svg, "Per group (group_results; e3_groups.csv)."))
    return Section("e3", "E3: broader semantic retrieval", blocks)


def e4(folder: Folder) -> Section | None:
    """E4: the systems' means over the cases, and per case the rank changes of the top-10 documents."""
    e4 = folder.results.get("e4")
    if not e4:
        return None
    measures = ["desired_P@10", "desired_R@10", "unwanted_rate@10"]
    systems = ordered(e4.get("systems", {}), E4_SYSTEMS)
    blocks: list[Block] = [
        Text(f"{len(e4.get('cases', {}))} cases; {number(e4.get('hard_filter_violations'))} hard-filter violations, "
             f"{number(e4.get('penalty_violations'))} scores that rose with their penalty (audits), "
             f"{number(e4.get('semantic_failures'))} semantic failures. {e4.get('judgments', '')}"),
        measure_table(e4.get("systems", {}), systems, measures, "E4: means over the cases."),
    ]  # fmt: skip
    changes = folder.table("e4_rank_changes.csv")
    if changes is None:
        blocks.append(missing("e4_rank_changes.csv"))
    else:
        changed = [s for s in E4_SYSTEMS[1:] if any(r["system"] == s for r in changes)]
        figures = []
        names = {case_id: case.get("name", "") for case_id, case in e4.get("cases", {}).items()}
        for case_id in dict.fromkeys(r["case_id"] for r in changes):
            before: dict[str, tuple[str, int]] = {}  # document -> (label, positive rank)
            after: dict[str, dict[str, int | None]] = {}  # document -> {system: rank, None if removed}
            for r in (r for r in changes if r["case_id"] == case_id):
                label = r["doc_id"] + {"unwanted": " (unwanted)", "desired": ""}.get(r["role"], " (other)")
                before[r["doc_id"]] = (label, int(r["positive_rank"]))
                after.setdefault(r["doc_id"], {})[r["system"]] = as_int(r["rank"])
            ranks = sorted((Ranks(label, rank, after[doc]) for doc, (label, rank) in before.items()),
                             key=lambda x: x.before)  # fmt: skip
            ident = f"e4-ranks-{slug(case_id)}"
            title = f"E4 {case_id}: ranks without and with the penalty or filter"
            svg = plots.rank_change(ident, title, ranks, changed, axis="rank (log scale)",
                                    desc=f"Case {case_id} ({names.get(case_id, '')}): each document of the positive "
                                    "top 10 or of a system's top 10, its rank in the positive-only ranking (circle) "
                                    "and under each penalty or the filter.")  # fmt: skip
            figures.append(Figure(ident, title, svg, f"{case_id}: {names.get(case_id, '')}."))
        blocks += [Text("Rank changes per case (e4_rank_changes.csv): each document of the positive-only top 10 or "
                        "of a changed system's top 10, its positive rank (circle) and its rank under each penalty "
                        "and the hard filter; a cross: removed by the filter. Documents of the case's desired intents "
                        "are unmarked, of its unwanted intents marked (unwanted), others (other)."),
                   *figures]  # fmt: skip
    failures = folder.table("e4_semantic_failures.csv")
    if failures:
        blocks.append(csv_table(failures, "Semantic failures: hard-filtered top-10 documents of an unwanted intent."))
    return Section("e4", "E4: controllability", blocks)


def recognise(folder: Folder) -> bool:
    """An output directory of the features writer (one written before provenance.json named its writer)."""
    return "extractor" in folder.results


def facts(results: dict) -> tuple[list[tuple[str, str]], str | None]:
    """The extractor under the title; a stand-in extractor's banner."""
    extractor = results.get("extractor")
    if not isinstance(extractor, dict):
        return [], None
    banner = f"Every figure here is a stand-in's. {extractor.get('note', '')}" if extractor.get("stand_in") else None
    return [("extractor", f"{extractor.get('extractor')} (provider {extractor.get('provider')})")], banner
