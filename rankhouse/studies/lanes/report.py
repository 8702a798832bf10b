"""The lanes study's report section (seed 002): the candidate sets' sizes k_t, the fallback, the passage-scoring
receipt and the run classification, from k_distribution.csv, results.json and metadata.json."""

from __future__ import annotations

from rankhouse.report import plots
from rankhouse.report.plots import Bar, number
from rankhouse.report.sections import Block, Figure, Folder, Section, Table, Text, as_float, missing, shown_value


def candidate_sets(folder: Folder) -> Section:
    """The candidate sets' sizes k_t (their distribution and per topic), the fallback and the scoring receipt."""
    c = folder.results.get("candidates", {})
    blocks: list[Block] = [Text(
        f"k_t over {number(c.get('topics'))} topics: {number(c.get('k_min'))} to {number(c.get('k_max'))} "
        f"({number(c.get('k_distinct'))} distinct values, mean {number(c.get('k_mean'), 1)}, median "
        f"{number(c.get('k_median'), 1)}); the fallback was used for {number(c.get('fallback_topics'))} topic(s) "
        "(candidate_summary)."
    )] if c else []  # fmt: skip
    rows = folder.table("k_distribution.csv")
    if rows is None:
        blocks.append(missing("k_distribution.csv"))
    else:
        values = [float(r["k"]) for r in rows]
        svg = plots.histogram("lanes-k", "Distribution of k_t", values, axis="k_t, candidates per topic",
                              desc="Histogram of the candidate set sizes k_t over the topics.")  # fmt: skip
        blocks.append(Figure("lanes-k", "Distribution of k_t", svg, "k_t per topic (lane_topics), binned."))
        series = ["k", "admitted"]
        svg = plots.bars(
            "lanes-topics",
            "k_t and admissions per topic",
            [Bar(r["topic"], [as_float(r["k"]), as_float(r["admitted"])]) for r in rows],
            series,
            axis="documents",
            desc="Per topic, the candidate set size k_t and the admissions summed "
            "over its lanes (a document admitted by several lanes counts once in k_t).",
            places=0,
        )
        blocks.append(Figure("lanes-topics", "k_t and admissions per topic", svg,
                             "Per topic: k_t and the lanes' admissions (k_distribution.csv)."))  # fmt: skip
    receipt = folder.results.get("passage_scoring")
    if receipt:
        keys = ["scorer", "requested", "cache_hits", "cache_misses", "model_batches", "texts_encoded",
                "model_fingerprint"]  # fmt: skip
        rows = [[k, shown_value(receipt.get(k))] for k in keys if k in receipt]
        blocks.append(Table(["passage scoring", "value"], rows, [False, True], "The latest passage-scoring receipt."))
    metadata_path = folder.path / "metadata.json"
    if metadata_path.is_file():
        metadata = folder.read_json(metadata_path)
        rows = [[r["dimension"], r["answer"], r["rationale"]] for r in metadata.get("classification", [])]
        blocks.append(Table(["Portal dimension", "Recorded answer", "Rationale"], rows, caption="Run classification "
                            "(seed 002's table, declared in the protocol; metadata.json)."))  # fmt: skip
        runs = [[name, str(r.get("priority")), r.get("ordering", ""), r.get("sha256", "")]
                for name, r in metadata.get("runs", {}).items()]  # fmt: skip
        blocks.append(Table(["run", "priority", "ordering", "SHA-256"], runs, [False, True, False, False],
                            "The runs as written (metadata.json)."))  # fmt: skip
        provenance = metadata.get("provenance", {})
        scorer = provenance.get("scorer") or {}
        blocks.append(Text(
            f"Provenance: source lanes (lanes.run) SHA-256 {provenance.get('source_lanes_sha256')}; narratives "
            f"SHA-256 {provenance.get('narratives_sha256')}; passage scorer {scorer.get('scorer')} "
            f"({scorer.get('model')}, revision {scorer.get('revision')}, fingerprint {scorer.get('fingerprint')}"
            f"{', a stand-in for the seed' + chr(39) + 's cross-encoder' if scorer.get('stand_in') else ''}); chunker "
            f"{(provenance.get('chunker') or {}).get('chunker')}."
        ))  # fmt: skip
    return Section("lanes", "Candidate sets", blocks)


def recognise(folder: Folder) -> bool:
    """An output directory of the lanes writer (one written before provenance.json named its writer)."""
    return "candidates" in folder.results
