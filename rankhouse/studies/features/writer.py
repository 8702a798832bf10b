"""The writer of the named-feature study (seed 004 E2-E5; studies/banking77_features.toml): the four
E2 methods (bm25, cosine, dot, weighted) in the retrieval study's results shape, E5's ablations, the
published weights and feature distributions, per-query predictions, confusion summaries, fingerprints,
the dataset's attribution, reproduction commands and a readable report.

Every output carries the extractor block {provider, extractor, stand_in, note} (results.json,
fingerprints.json; the CSVs as the columns `extractor` and `stand_in`; report.md at its top): seed 004
allows only its own extractor (JEV), so the figures of any other (the default MiniLM stand-in) are
labelled as the stand-in's. An extractor counts as seed 004's only when the protocol names it, `[outputs]
seed_extractor = "http:<model id>"`.

results.json: the shared header, `extractor`, `methods.<method>.<measure>.{value, ci_low?, ci_high?,
queries}`, `subsets`, `contrasts.<subset>.<a - b>`, `duplicates` (as retrieval studies), `ablations`,
`weights`, `fingerprints`, `dataset`, `reproduction`, `receipts` (the extraction's, per split), and `e3`,
`e4` and `query_fixtures` when the protocol evaluates those parts (rankings `group_rankings@e3`,
`case_rankings@e4`). Files: weights.csv, feature_distributions.csv, per_query.csv, class_results.csv,
confusions.csv, ablations.csv, receipts.csv, paired_differences.csv (as every study's, labelled),
fingerprints.json, DATASET_SOURCE.md (the data's SOURCE.md, copied), report.md; with E3/E4 also
e3_groups.csv, e4_cases.csv, e4_semantic_failures.csv, e4_rank_changes.csv (written by
rankhouse/studies/features/requirements.py, which also gives E3's and E4's results and report sections).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from rankhouse.loaders.sources import sha256_file
from rankhouse.studies.features import requirements as feature_requirements
from rankhouse.studies.retrieval import writer as retrieval
from rankhouse.study import Evaluation, Study
from rankhouse.study.writing import DIFFERENCES, differences, loaded_sources, reproduction, write_csv, write_json

METHODS = ["bm25", "cosine", "dot", "weighted"]  # seed 004 E2, in its order
MEASURES = ["Top-1", "Hit@5", "R@5", "RR", "nDCG@10", "P@5", "macro-Top-1"]
PARTS = {"e3": "group_rankings@e3", "e4": "case_rankings@e4"}  # a part, and the rankings that evaluate it


def has_part(study: Study, part: str) -> bool:
    """Whether the protocol evaluates E3 (`e3`) or E4 (`e4`): its rankings name that part's source."""
    return PARTS[part] in study.protocol.parameters.get("rankings", [])


def receipts(study: Study) -> list[dict]:
    """The extraction's receipts per split (models.extraction_receipts), timestamps as ISO text."""
    if not study.wh.table_exists("models.extraction_receipts"):
        return []
    rows = _rows(study, "SELECT * FROM models.extraction_receipts ORDER BY split")
    return [{k: v.isoformat() if isinstance(v, datetime) else v for k, v in r.items()} for r in rows]


def query_fixtures(study: Study) -> dict:
    """The E3 phrases and E4 cases exactly as evaluated: ids, texts, weights, intents."""
    fixtures: dict = {}
    if has_part(study, "e3"):
        fixtures["e3_phrases"] = _rows(
            study, "SELECT item, group_id, paraphrase, text FROM models.group_queries ORDER BY query_key"
        )
        fixtures["e3_manual_weights"] = _rows(
            study, "SELECT group_id, feature, weight FROM models.group_weights ORDER BY group_id, feature"
        )
    if has_part(study, "e4"):
        fixtures["e4_cases"] = _rows(
            study, "SELECT case_id, name, unwanted_feature FROM models.control_cases ORDER BY case_row"
        )
        fixtures["e4_weights"] = _rows(
            study, "SELECT case_id, feature, weight FROM models.case_weights ORDER BY case_id, feature"
        )
        fixtures["e4_intents"] = _rows(
            study, "SELECT case_id, role, intent FROM models.case_intents ORDER BY case_id, role, intent"
        )
    return fixtures


def extractor(study: Study) -> dict:
    """The extractor block: which provider and extractor made the values, and whether it is a stand-in."""
    corpus = study.protocol.parameters["corpus"]
    rows = study.wh.sql("SELECT provider, extractor FROM models.feature_extractor WHERE corpus = ?", [corpus])
    provider, found = rows[0] if rows else (study.protocol.parameters.get("provider"), None)
    stand_in = found is None or found != study.protocol.outputs.get("seed_extractor")
    if stand_in:
        note = (
            f"STAND-IN extractor ({found or 'none'}, provider {provider}), not seed 004's JEV: the seed allows "
            "only its own extractor, so these figures show what this pipeline gives with the stand-in's "
            "values and say nothing about JEV's features."
        )
    else:
        note = f"seed 004's extractor ({found}), as the protocol names it."
    return {"provider": provider, "extractor": found, "stand_in": stand_in, "note": note}


def _schema(study: Study) -> tuple[str, str | None, int, int]:
    """(schema name, its SHA-256, features, families) of the study's schema."""
    name, sha, features, families = study.wh.sql(
        "SELECT max(schema), max(schema_sha256), count(*), count(DISTINCT family) FROM models.feature_schema"
    )[0]
    return name or study.protocol.parameters.get("schema"), sha, features, families


def _rows(study: Study, sql: str, params: list | None = None) -> list[dict]:
    columns, rows = study.wh.columns(sql, params)
    return [dict(zip(columns, row)) for row in rows]


def fingerprints(study: Study, evaluation: Evaluation, block: dict) -> dict:
    """Protocol, schema and extractor identities, the freeze, every input file and every loaded or
    generated source the study's models read (meta.sources), with their SHA-256."""
    schema, schema_sha, _, _ = _schema(study)
    return {
        "protocol": {"path": str(study.protocol.path), "sha256": study.protocol.sha256},
        "schema": {"name": schema, "sha256": schema_sha},
        "extractor": block,
        "freeze": {"freeze_id": evaluation.freeze.freeze_id, "file_sha256": evaluation.freeze.file_sha256},
        "inputs": {i.key: {"path": str(i.path), "sha256": i.sha256, "loader": i.loader} for i in study.protocol.inputs},
        "sources": loaded_sources(study),
    }


def dataset(study: Study) -> dict:
    """The dataset's attribution: the SOURCE.md beside the study's text files (data/banking77/SOURCE.md)."""
    folders = sorted({i.path.parent for i in study.protocol.inputs if i.loader.startswith("csv.")})
    found = [folder / "SOURCE.md" for folder in folders if (folder / "SOURCE.md").is_file()]
    if not found:
        return {"source": None, "sha256": None, "text": "no SOURCE.md beside the study's data files"}
    return {"source": str(found[0]), "sha256": sha256_file(found[0]), "text": found[0].read_text()}


def results(study: Study, evaluation: Evaluation) -> dict:
    """results.json: the retrieval study's shape for the four E2 methods, and E5, weights, identities."""
    found = retrieval.results(study, evaluation)
    freeze_id = evaluation.freeze.freeze_id
    block = extractor(study)
    e2 = {"methods": {m: v for m, v in found["methods"].items() if m in METHODS}}
    e2["subsets"] = {s: {m: v for m, v in b.items() if m in METHODS} for s, b in found["subsets"].items()}
    return {
        **found,
        **e2,
        "extractor": block,
        "ablations": _rows(
            study,
            "SELECT variant, kind, removed, measure, value, full_value, change, queries FROM results.feature_ablations "
            "WHERE freeze_id = ? ORDER BY variant_order, measure",
            [freeze_id],
        ),
        "weights": _rows(
            study,
            "SELECT feature, position, family, df, documents, weight FROM models.feature_weights ORDER BY position",
        ),  # fmt: skip
        "fingerprints": fingerprints(study, evaluation, block),
        "dataset": {k: v for k, v in dataset(study).items() if k != "text"},
        "reproduction": reproduction(study),
        "receipts": receipts(study),
        **({"e3": feature_requirements.e3_results(study, evaluation)} if has_part(study, "e3") else {}),
        **({"e4": feature_requirements.e4_results(study, evaluation)} if has_part(study, "e4") else {}),
        **({"query_fixtures": query_fixtures(study)} if has_part(study, "e3") or has_part(study, "e4") else {}),
    }


# -- files ------------------------------------------------------------------------------------------
def _labelled(study: Study, path: Path, block: dict, sql: str, params: list | None = None) -> Path:
    """A CSV of a query's rows with the extractor's id and the stand-in flag as its last two columns."""
    columns, rows = study.wh.columns(sql, params)
    label = [block["extractor"], str(block["stand_in"]).lower()]
    return write_csv(path, columns + ["extractor", "stand_in"], [list(row) + label for row in rows])


def write(study: Study, evaluation: Evaluation, out: Path) -> list[Path]:
    """The study's outputs in `out` (see the module's docstring)."""
    freeze_id = evaluation.freeze.freeze_id
    found = results(study, evaluation)
    block = found["extractor"]
    methods = ", ".join(f"'{m}'" for m in METHODS)
    written = [write_json(out / "results.json", found)]
    tables = {
        "weights.csv": ("SELECT feature, position, family, df, documents, weight FROM models.feature_weights "
                        "ORDER BY position", []),
        "feature_distributions.csv": ("SELECT feature, position, family, split, rows, mean, p10, p50, p90, share_high "
                                      "FROM models.feature_distributions ORDER BY position, split DESC", []),
        "per_query.csv": ("SELECT method, qid, intent, top1_doc_id, top1_intent, correct, relevant, top1, hit5, "
                          "recall5, rr, ndcg10, p5 FROM results.feature_query_results WHERE freeze_id = ? "
                          "ORDER BY method, query_row", [freeze_id]),
        "class_results.csv": ("SELECT method, class, documents, queries, top1_hits FROM results.class_results "
                              f"WHERE freeze_id = ? AND method IN ({methods}) ORDER BY ALL", [freeze_id]),
        "confusions.csv": ("SELECT method, rank, query_intent, top1_intent, errors, method_errors "
                           "FROM results.feature_confusions WHERE freeze_id = ? ORDER BY method, rank", [freeze_id]),
        "ablations.csv": ("SELECT variant, kind, removed, measure, value, full_value, change, queries "
                          "FROM results.feature_ablations WHERE freeze_id = ? ORDER BY variant_order, measure",
                          [freeze_id]),
    }  # fmt: skip
    for name, (sql, params) in tables.items():
        written.append(_labelled(study, out / name, block, sql, params))
    if rows := differences(study, evaluation):
        label = [block["extractor"], str(block["stand_in"]).lower()]
        written.append(write_csv(out / "paired_differences.csv", [*DIFFERENCES, "extractor", "stand_in"],
                                 [[*row, *label] for row in rows]))  # fmt: skip
    if found["receipts"]:
        columns = list(found["receipts"][0])
        written.append(write_csv(out / "receipts.csv", columns, [[r[c] for c in columns] for r in found["receipts"]]))
    if has_part(study, "e3") or has_part(study, "e4"):
        written += feature_requirements.write_csvs(study, evaluation, out)
        written.append(write_json(out / "query_fixtures.json", found["query_fixtures"]))
    written.append(write_json(out / "fingerprints.json", found["fingerprints"]))
    source = dataset(study)
    (out / "DATASET_SOURCE.md").write_text(source["text"])
    written.append(out / "DATASET_SOURCE.md")
    (out / "report.md").write_text(report(study, evaluation, found, source))
    written.append(out / "report.md")
    return written


def table(study: Study, evaluation: Evaluation) -> str:
    """The E2 table (as the retrieval study prints it), E5's largest Top-1 changes, and the extractor."""
    found = results(study, evaluation)
    lines = [f"extractor: {found['extractor']['note']}", retrieval.format_table(found)]
    drops = sorted(
        (a for a in found["ablations"] if a["measure"] == "Top-1"), key=lambda a: (a["change"], a["variant"])
    )
    for a in drops[:5]:
        lines.append(f"E5 {a['variant']}: Top-1 {a['value']:.4f} ({a['change']:+.4f} against weighted)")
    return "\n".join(lines)


# -- report.md --------------------------------------------------------------------------------------
def _measure_table(block: dict) -> list[str]:
    methods = [m for m in METHODS if m in block]
    lines = ["| measure | " + " | ".join(methods) + " |", "| --- |" + " ---: |" * len(methods)]
    for measure in MEASURES:
        cells = (feature_requirements.measure_cell(block[m].get(measure)) for m in methods)
        lines.append(f"| {measure} | " + " | ".join(cells) + " |")
    return lines


def _verdict(contrast: dict) -> str:
    a, b = (part.strip() for part in contrast["name"].split(" - "))
    if contrast["ci_high"] < 0:
        return f"{a} loses to {b}"
    if contrast["ci_low"] > 0:
        return f"{a} beats {b}"
    return f"no difference between {a} and {b} is shown (the interval contains 0)"


def _sections(name: str, study: Study, evaluation: Evaluation) -> list[str]:
    """E3's or E4's report sections (rankhouse/studies/features/requirements.py), or a line saying that
    this protocol does not evaluate the part."""
    if not has_part(study, name):
        return [f"not part of this protocol (its rankings do not name {PARTS[name]})."]
    return list(getattr(feature_requirements, f"{name}_sections")(study, evaluation))


def report(study: Study, evaluation: Evaluation, found: dict, source: dict) -> str:
    """report.md: E2 and E5 as they came out, the weights and distributions, the limits seed 004 lists."""
    block = found["extractor"]
    schema, schema_sha, features, families = _schema(study)
    duplicates = found["duplicates"]
    queries = duplicates["queries"]
    documents = found["weights"][0]["documents"] if found["weights"] else 0
    lines = [f"# {study.protocol.name}: named features on BANKING77 (seed 004, E2-E5)", ""]
    if block["stand_in"]:
        lines += [f"> **Every figure here is a stand-in's.** {block['note']} The same holds for every file "
                  "beside this report.", ""]  # fmt: skip
    lines += [
        f"Freeze {evaluation.freeze.freeze_id}; protocol SHA-256 {study.protocol.sha256}; schema {schema} "
        f"({features} features in {families} families, SHA-256 {schema_sha}); extractor {block['extractor']} "
        f"(provider {block['provider']}). {documents:,} training messages are the documents and {queries:,} test "
        "messages the queries; a document is relevant to a query of the same intent (labels read only after "
        "the freeze). Full rankings of every document, exact ties by training row.",
        "",
        "## E2: BM25, cosine, dot product and weighted relevance",
        "",
        f"All {queries:,} queries (Wilson 95% intervals for the hit rates):",
        "",
        *_measure_table(found["methods"]),
    ]
    for subset, block_ in found["subsets"].items():
        count = next(iter(next(iter(block_.values())).values()))["queries"] if block_ else 0
        lines += ["", f"Subset {subset} ({count:,} queries):", "", *_measure_table(block_)]
    lines += ["", "Paired bootstrap of the Top-1 differences (percentile 95% intervals):", ""]
    for subset, contrasts in sorted(found["contrasts"].items()):
        for name, c in sorted(contrasts.items()):
            c = {**c, "name": name}
            lines.append(f"- {name} ({subset}): {c['mean']:+.4f} [{c['ci_low']:+.4f}, {c['ci_high']:+.4f}], "
                         f"{c['replicates']:,} replicates: {_verdict(c)}.")  # fmt: skip
    methods = found["methods"]
    if "dot" in methods and "weighted" in methods:
        same = all(
            methods["dot"][m]["value"] == methods["weighted"][m]["value"] for m in MEASURES if m in methods["dot"]
        )
        lines += ["", "Dividing a dot product by a query-only denominator cannot change its ranking, so any "
                  "difference between dot and weighted is the global weights' (seed 004): here they "
                  + ("agree on every measure above." if same else "differ on at least one measure above.")]  # fmt: skip
    lines += ["", f"Duplicates: {duplicates['queries_whose_text_is_a_document']} test messages occur in training "
              "(the subset without_training_duplicates leaves them out); "
              f"{duplicates['queries_sharing_their_text_with_another_query']} share their text with another test "
              "message. Per-intent counts: class_results.csv; per-query predictions: per_query.csv; the most "
              "frequent errors: confusions.csv.", ""]  # fmt: skip
    lines += _confusion_lines(study, evaluation)
    lines += ["", "## E5: ablations of weighted relevance", "",
              "Weighted relevance without each feature and each family, every other global weight fixed, on the "
              "same stored values (nothing extracted again); Top-1 and Hit@5 over all queries, against the full "
              "system's. Descriptive diagnostics after the evaluation, not a selection of a method.", "",
              "| variant | Top-1 | change | Hit@5 | change |", "| --- | ---: | ---: | ---: | ---: |"]  # fmt: skip
    by_variant: dict = {}
    for a in found["ablations"]:
        by_variant.setdefault(a["variant"], {})[a["measure"]] = a
    for variant, measures in by_variant.items():
        top1, hit5 = measures.get("Top-1"), measures.get("Hit@5")
        lines.append(f"| {variant} | {top1['value']:.4f} | {top1['change']:+.4f} | {hit5['value']:.4f} | "
                     f"{hit5['change']:+.4f} |" if top1 and hit5 else f"| {variant} | | | | |")  # fmt: skip
    lines += ["", "## Weights and feature distributions", "",
              "w = ln((N + 1) / (df + 1)), df = training messages with a value >= 0.5 (weights.csv; per split: "
              "feature_distributions.csv).", "",
              "| feature | family | df | weight | train mean | test mean | train share >= 0.5 |",
              "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]  # fmt: skip
    distributions = {(r["feature"], r["split"]): r for r in _rows(study, "SELECT * FROM models.feature_distributions")}
    for w in found["weights"]:
        train, test = distributions.get((w["feature"], "train"), {}), distributions.get((w["feature"], "test"), {})
        lines.append(
            f"| {w['feature']} | {w['family']} | {w['df']:,} | {w['weight']:.4f} | "
            f"{train.get('mean', 0):.3f} | {test.get('mean', 0):.3f} | {train.get('share_high', 0):.3f} |"
        )
    for part, title in (("e3", "E3: broader semantic retrieval"), ("e4", "E4: controllability")):
        if has_part(study, part):
            for section in _sections(part, study, evaluation):
                lines += ["", section]
        else:
            lines += ["", f"## {title}", "", *_sections(part, study, evaluation)]
    lines += ["", "## Extraction receipts", "", *_receipt_lines(found["receipts"])]
    lines += ["", *limits(study, found, block)]
    lines += ["", "## Reproduction", "", "```sh", *found["reproduction"], "```", "",
              "## Fingerprints", "", f"- protocol {study.protocol.path}: {study.protocol.sha256}",
              f"- schema {schema}: {schema_sha}", f"- extractor: {block['extractor']}",
              f"- freeze {evaluation.freeze.freeze_id}: {evaluation.freeze.file_sha256}"]  # fmt: skip
    lines += [f"- input {k}: {v['sha256']} ({v['path']})" for k, v in found["fingerprints"]["inputs"].items()]
    lines += ["", "All of them, and every generated source: fingerprints.json.", "", "## Dataset attribution", "",
              f"From {source['source']} (copied as DATASET_SOURCE.md):", ""]  # fmt: skip
    lines += ["> " + line if line else ">" for line in source["text"].splitlines()]
    return "\n".join(lines) + "\n"


def _receipt_lines(rows: list[dict]) -> list[str]:
    """The receipts as a Markdown table, one column per split (receipts.csv has every column)."""
    if not rows:
        return ["No extraction calls are recorded."]
    splits = [r["split"] for r in rows]
    lines = ["| | " + " | ".join(splits) + " |", "| --- |" + " ---: |" * len(splits)]
    for key in rows[0]:
        if key not in ("corpus", "split"):
            lines.append(f"| {key} | " + " | ".join("" if r[key] is None else str(r[key]) for r in rows) + " |")
    return lines


def _confusion_lines(study: Study, evaluation: Evaluation) -> list[str]:
    rows = study.wh.sql(
        "SELECT method, query_intent, top1_intent, errors, method_errors FROM results.feature_confusions "
        "WHERE freeze_id = ? AND rank <= 3 ORDER BY method, rank",
        [evaluation.freeze.freeze_id],
    )
    lines = ["The three most frequent errors per method (query intent -> intent of the first document):", ""]
    for method in METHODS:
        pairs = [f"{q} -> {t} ({n})" for m, q, t, n, _ in rows if m == method]
        total = next((e for m, _, _, _, e in rows if m == method), 0)
        lines.append(f"- {method} ({total:,} errors): " + ("; ".join(pairs) or "none"))
    return lines


def limits(study: Study, found: dict, block: dict) -> list[str]:
    """The limits seed 004 asks the report to discuss, with this run's figures where there are any."""
    _, _, features, families = _schema(study)
    unused = [w["feature"] for w in found["weights"] if w["df"] == 0]
    correlated = study.wh.sql(
        "SELECT feature_a, feature_b, correlation FROM models.feature_correlations WHERE correlation IS NOT NULL "
        "ORDER BY abs(correlation) DESC, feature_a, feature_b LIMIT 3"
    )
    lines = [
        "## Limits",
        "",
        f"- **Small schema.** {features} named properties in {families} families stand for 77 intents; "
        "whatever distinguishes two intents outside these properties is lost to cosine, dot and weighted "
        "relevance, and documents with the same feature list are indistinguishable (the row-index rule then "
        "decides). "
        + (f"{len(unused)} feature(s) never reach 0.5 on a training message (df = 0, the largest weight): "
           f"{', '.join(unused)}." if unused else "Every feature reaches 0.5 on some training message."),
        "- **Correlated features.** The properties are not independent, so a weight counts shared evidence "
        "more than once and an ablation understates what a family carries; the most correlated pairs on the "
        "training messages: "
        + ("; ".join(f"{a} / {b} {c:+.3f}" for a, b, c in correlated) or "none") + ".",
    ]  # fmt: skip
    if block["stand_in"]:
        made = (
            "a MiniLM similarity between a message and each property's question mapped to [0, 1], not an "
            "answer to the question"
            if block["provider"] == "minilm"
            else "another model's answers, not JEV's"
        )
        lines.append(
            "- **Extractor errors, and what the stand-in shows.** The values are the stand-in's "
            f"({block['extractor']}): {made}. The study shows how BM25, cosine, dot and weighted "
            "relevance compare on such values over the same frozen pipeline, and that the pipeline (full "
            "rankings, tie rule, measures, intervals, ablations) runs end to end; it does not show how "
            "seed 004's extractor (JEV) would do, nor how accurate any feature is."
        )
    else:
        lines.append("- **Extractor errors.** The extractor's answers are predictions and can be wrong.")
    lines += [
        "  No feature-level ground truth exists here: intents are not annotations of each property, so "
        "agreement between features and intents is not a calibration evaluation, which would need a "
        "separately human-labelled feature set and is not claimed.",
        f"- **Benchmark contamination.** BANKING77 has been public since 2020 and a pretrained extractor may "
        f"have seen it; within the data, {found['duplicates']['queries_whose_text_is_a_document']} test messages "
        "occur verbatim in training, and every measure is also reported without them.",
        "- **Proxy judgments.** Relevance is derived from the intent labels (same intent = relevant), not "
        "from document-level human judgments of each query.",
        "- **Uncertain interpretation.** E2 uses the query's own extracted values, not interpreted search "
        "requirements; interpreting natural-language requirements (E3) adds its own errors and review cases.",
        "- **Single domain.** One English banking data set; nothing here generalises to other domains, and no "
        "claim is made that named features replace black-box embeddings (none is evaluated here).",
        "",
        "Results are reported as they came out, under parameters fixed before the evaluation; where a method "
        "loses to BM25, the contrasts above say so.",
    ]
    return lines
