"""docs/measures.md, the measure reference, generated from the measure registry (rankhouse/measures.py:
names, aliases, cutoffs, aggregation) and the headers of the models that compute the measures
(models/metrics/: each measure's exact definition) and the macros that order rankings and add values
(sql/macros/). No definition is written here: the page quotes the one place each lives, so that it cannot
disagree with the code. `python scripts/measure_reference.py` rewrites the page;
tests/measures/test_measure_reference.py checks that the committed page is what this writes.

    >>> reference().startswith("# Measure reference")  # doctest: +SKIP
    True
"""

from __future__ import annotations

import json
import re
import textwrap

from rankhouse import measures as registry
from rankhouse.paths import MODELS_DIR, SQL_DIR
from rankhouse.warehouse.catalog import Model, load_models

WIDTH = 110
# Names as a user types them, read here by the registry to show what each stands for.
EXAMPLES = [
    "P@10", "P.5,10", "P(rel=2)@10", "Top-1", "Hit@5", "success.5", "R@100", "recall.100", "RR", "MRR", "RR@10",
    "recip_rank", "AP", "map", "AP@100", "map_cut.100", "AP(rel=2)", "GMAP", "nDCG@10", "ndcg_cut.10",
    "nDCG(dcg=exp-log2)@10", "nDCG_exp@10", "Rprec", "Bpref", "IPrec@0.5", "iprec_at_recall.0.5", "ERR@20",
    "Judged@10", "NumRet", "num_rel_ret", "nDCG_exp@5 as nDCG@5", "infAP", "RBP", "RBP(p=0.95)", "rbp", "rbp.p=0.8",
    "rbp_resid", "SetF(beta=2)", "set_F.2", "set_relative_P", "nDCG(gains={1:3,2:9})@10", "ndcg.1=3,2=9",
    "utility.2,-1,0,0", "11pt_avg.0.2,0.5,0.8", "Rprec_mult.0.5", "relative_P.10", "unj.5", "relstring.20",
    "map_avgjg", "P_avgjg.5", "Rprec_mult_avgjg.0.5", "prefs_simp", "prefs_num_prefs_ful",
]  # fmt: skip
# The models every measure reads besides its own: what is ranked, judged, counted and aggregated.
SHARED_MODELS = [
    "run_ranking", "rankings", "judgments", "judged_ranking", "grade_gains", "ranked_gains", "ideal_ranking",
    "evaluated_queries", "relevant_counts", "retrieved_counts", "query_subsets", "measure_requests",
    "measure_parameters", "query_measures", "run_measures",
]  # fmt: skip
FAMILY_JOIN = re.compile(r"\bfamily (?:= '(\w+)'|IN \(([^)]*)\))")
MACRO_COMMENT = re.compile(r"\{#-?(?P<comment>(?:(?!#\}).)*?)-?#\}\s*\{%-? macro (?P<name>\w+)\(", re.DOTALL)
MARKDOWN_START = re.compile(r"^(?:[-+*>#|]|\d+[.)])(?:\s|$)")  # a line that Markdown would read as a block


def families_by_model(models: dict[str, Model]) -> dict[str, list[str]]:
    """Per measure model (models/metrics/measure_*.sql), the registry families it computes: those its SQL
    names (`ON m.family = 'P'`, `WHERE family IN ('nDCG', 'nDCG_exp')`) and the registry says it computes,
    in registry order (measure_precision names P_avgjg too: it computes the per-group values that
    measure_avgjg, P_avgjg's model, averages)."""
    found: dict[str, list[str]] = {}
    for name, model in sorted(models.items()):
        if model.group != "metrics" or not name.startswith("measure_"):
            continue
        named = set()
        for single, several in FAMILY_JOIN.findall(model.template):
            named |= {single} if single else set(re.findall(r"'(\w+)'", several))
        computed = [f for f in registry.FAMILIES if f in named and registry.FAMILIES[f].model == name]
        if computed:
            found[name] = computed
    return found


def macro_comments(path: str) -> dict[str, str]:
    """The comment written just before each macro of sql/macros/<path>, by macro name, on one line."""
    text = (SQL_DIR / path).read_text(encoding="utf-8")
    return {m["name"]: " ".join(m["comment"].split()) for m in MACRO_COMMENT.finditer(text)}


def paragraph(text: str) -> str:
    """`text` wrapped to WIDTH, never starting a line where Markdown would read a list, quote or heading."""
    lines: list[str] = []
    for line in textwrap.wrap(text, WIDTH, break_on_hyphens=False, break_long_words=False):
        if lines and MARKDOWN_START.match(line):
            lines[-1] += " " + line
        else:
            lines.append(line)
    return "\n".join(lines)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def table(headers: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join(" --- " for _ in headers) + "|"]
    return "\n".join(lines + ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows])


def model_link(model: Model) -> str:
    """`[name](../models/<group>/<name>.sql)`: a link from docs/ to the model's file."""
    return f"[`{model.name}`](../{MODELS_DIR.name}/{model.path.relative_to(MODELS_DIR).as_posix()})"


def described(model: Model) -> str:
    """A model's link and its description, as one paragraph."""
    return paragraph(f"{model_link(model)}: {model.description}")


def _toml(value: object) -> str:
    return json.dumps(value)


def _code(items: list[str]) -> str:
    return ", ".join(f"`{i}`" for i in items) or "-"


def _names_section(computed_by: dict[str, Model]) -> list[str]:
    trec_of: dict[str, list[str]] = {}
    for name, (family, defaults) in registry.TREC_NAMES.items():
        trec_of.setdefault(family, []).append(
            f"`{name}`" + (f" (cutoffs if none given: {defaults})" if defaults else "")
        )
    rows = [
        [f"`{f.name}`", f.cutoff, f.aggregate, ", ".join(trec_of.get(f.name, [])) or "-",
         model_link(computed_by[f.name]), f.description]
        for f in registry.FAMILIES.values()
    ]  # fmt: skip
    examples = []
    for text in EXAMPLES:
        for m in registry.parse_measure(text):
            examples.append([f"`{text}`", f"`{m.label}`", f"`{m.canonical}`", m.family, m.aggregate])
    aliases = [[f"`{a}`", f"`{c}`"] for a, c in registry.ALIASES.items()]
    aliases += [[f"`{a}@k`", f"`{c}@k`"] for a, c in registry.FAMILY_ALIASES.items()]
    official = [m.label for m in registry.parse_measures(None)]
    return [
        "## Names",
        "",
        paragraph(
            "A measure is a family with an optional cutoff and relevance level, written as ir_measures writes it "
            "(`P@10`, `P(rel=2)@10`, `nDCG(dcg=exp-log2)@10`), as trec_eval's `-m` takes it (`P.5,10`, "
            "`ndcg_cut.10`: each cutoff read as trec_eval reads it, the whole part of `2.6` for every family but "
            "iprec_at_recall), or by an alias the seeds use. A protocol may give a measure its own label: "
            '`"nDCG_exp@5 as nDCG@5"`. The canonical name (`Family@k`, `Family(rel=g)@k`) is what the models '
            "compute; the label is what is printed. `rel` is accepted by "
            + _code(sorted(registry.REL_FAMILIES))
            + " (its lowest relevant grade, for that measure alone); `dcg` by nDCG: "
            + ", ".join(f"`dcg={k}` is `{v}`" for k, v in registry.DCG_FAMILIES.items())
            + ". A cutoff is required (`required`), optional or not taken (`none`). Other parameters, in "
            "ir_measures' syntax and in trec_eval's: RBP's persistence (`RBP(p=0.8)`, `rbp.p=0.8`; `RBP` alone "
            "is ir_measures' p = 0.8, `rbp` trec_eval's 0.9), SetF's `beta` (`SetF(beta=2)`, `set_F.2`), gains "
            "per grade for nDCG, G, ndcg_rel and Rndcg (`nDCG(gains={1:3,2:9})`, `ndcg.1=3,2=9`; a grade not "
            "named keeps the grade as its gain), utility's four weights (`utility(weights=[2,-1,0,0])`, "
            "`utility.2,-1,0,0`) and 11pt_avg's recall levels (`11pt_avg(levels=[0.2,0.5,0.8])`, "
            "`11pt_avg.0.2,0.5,0.8`); a trec_eval name given with parameters is labelled as trec_eval labels it "
            "(`utility_2,-1,0,0`). trec_eval's groups: "
            + ", ".join(f"`{name}`" for name in registry.TREC_GROUPS)
            + " (`-m all_trec -m relstring.20` gives all_trec's relstring those parameters, as trec_eval does). "
            "The measures read qrels but for "
            + _code([f.name for f in registry.FAMILIES.values() if f.judgments == "prefs"])
            + ", which read preference judgments (`rankhouse eval -R prefs` or `-R qrels_prefs`), and "
            + _code([f.name for f in registry.FAMILIES.values() if f.judgments == "qrels_jg"])
            + ", which read qrels with judgment groups (`-R qrels_jg`); a measure asked for with other labels "
            "is refused, but for `num_q` and `runid`, which go with any. Without `-m` the measures are trec_eval's "
            "`official` group, or with `-R prefs` and `-R qrels_prefs` its `prefs` group, with `-R qrels_jg` its "
            "`qrels_jg` group."
        ),
        "",
        table(["family", "cutoff", "over queries", "trec_eval names", "model", "what"], rows),
        "",
        "Aliases (the seeds' names):",
        "",
        table(["alias", "stands for"], aliases),
        "",
        "As the registry reads some names (label: printed; canonical: computed):",
        "",
        table(["typed", "label", "canonical", "family", "over queries"], examples),
        "",
        paragraph(
            "Without `-m`, `rankhouse eval` computes trec_eval's default set: "
            + _code(official)
            + f". {_code(sorted(registry.SUMMARY_ONLY - {registry.RUNID}))} are printed in the `all` rows only, "
            "as trec_eval prints them."
        ),
    ]


def _definitions_section(models: dict[str, Model], families: dict[str, list[str]]) -> list[str]:
    out = [
        "## Definitions",
        "",
        paragraph(
            "Each family is computed by one model of `models/metrics/`, per query, into the long form "
            "(study, system, query, measure, value); the text below is that model's own description."
        ),
    ]
    order = list(registry.FAMILIES)
    for name, computed in sorted(families.items(), key=lambda item: order.index(item[1][0])):
        model = models[name]
        out += ["", f"### {', '.join(computed)}: {model_link(model)}", "", paragraph(model.description)]
        if model.parameters:
            out += ["", "Parameters: " + ", ".join(f"`{k} = {_toml(v)}`" for k, v in model.parameters.items()) + "."]
    return out


def _shared_section(models: dict[str, Model]) -> list[str]:
    trec_order = macro_comments("macros/ranking.sql")["trec_order"]
    trec_prefs_order = macro_comments("macros/ranking.sql")["trec_prefs_order"]
    sums = macro_comments("macros/statistics.sql")["mean"]
    dcg = macro_comments("macros/dcg.sql")["dcg_term"]
    declared: dict[str, dict[str, object]] = {}
    for name in (*SHARED_MODELS, *sorted(n for n, m in models.items() if m.group == "metrics")):
        for key, default in models[name].parameters.items():
            declared.setdefault(key, {"default": default, "models": []})["models"].append(name)
    parameters = [[f"`{k}`", f"`{_toml(v['default'])}`", _code(sorted(set(v["models"])))] for k, v in declared.items()]
    out = [
        "## Ranking order and ties",
        "",
        paragraph("A loaded run is ranked by the macro `trec_order` (`sql/macros/ranking.sql`): " + trec_order),
        "",
        paragraph(
            "A study's own rankings (BM25, dense, fusion, lanes, evidence, features) come with their rank: each "
            "study's model orders its documents by a total order (its score, then the tie rule its seed names, "
            "e.g. the training row for BANKING77), and the measures read that rank as it is."
        ),
    ]
    for name in ("run_ranking", "rankings", "judged_ranking", "grade_gains", "ranked_gains", "ideal_ranking"):
        out += ["", described(models[name])]
    out += ["", "## Which measures, with which parameters"]
    for name in ("measure_requests", "measure_parameters"):
        out += ["", described(models[name])]
    out += ["", "## Which queries count"]
    for name in ("judgments", "evaluated_queries", "relevant_counts", "retrieved_counts", "query_subsets"):
        out += ["", described(models[name])]
    out += [
        "",
        "## Aggregation over queries",
        "",
        described(models["run_measures"]),
        "",
        paragraph("Exact sums and means (the `mean` and `exact_sum` macros, `sql/macros/statistics.sql`): " + sums),
        "",
        described(models["query_measures"]),
        "",
        paragraph("The DCG term (`sql/macros/dcg.sql`, `dcg_term`): " + dcg),
        "",
        "## Preferences, judgment groups and z-scores",
        "",
        paragraph(
            "trec_eval's other relevance formats (`rankhouse eval -R prefs`, `-R qrels_prefs`, `-R qrels_jg`) load "
            "into tables of their own, read by these models; the preference measures rank a run by "
            "`trec_prefs_order` (`sql/macros/ranking.sql`): " + trec_prefs_order
        ),
        *[
            line
            for name in (
                "prefs",
                "prefs_judgments",
                "preference_documents",
                "preference_pairs",
                "preference_positions",
                "qrels_jg",
                "judgment_group_topics",
                "judgment_group_judgments",
                "zscores",
                "query_zscores",
            )
            for line in ("", described(models[name]))
        ],  # fmt: skip
        "",
        "## Intervals and tests over the measures",
        "",
        paragraph(
            "The statistics a study reports over the per-query values (`models/stats/`), each defined by its model:"
        ),
        *[
            line
            for name in sorted(n for n, m in models.items() if m.group == "stats")
            for line in ("", described(models[name]))
        ],  # fmt: skip
        "",
        "## Parameters",
        "",
        paragraph(
            "The model parameters that change what is measured, with their defaults. `rankhouse eval` sets them "
            "from trec_eval's options (`-l` relevance_level, `-c`/`--no-complete` complete, `-J` judged_only, "
            "`-M` depth, `--float-scores` score_precision, `-m` measures, `-R` the judgments, rankings and "
            "part_judgments that read its format, `-Z` zscores); a study sets them in its protocol's "
            "`[parameters]`."
        ),
        "",
        table(["parameter", "default", "read by"], parameters),
    ]
    return out


def reference() -> str:
    """The text of docs/measures.md."""
    models = load_models(MODELS_DIR)
    families = families_by_model(models)
    computed_by = {f: models[m] for m, fs in families.items() for f in fs}
    lines = [
        "# Measure reference",
        "",
        "<!-- Generated by scripts/measure_reference.py from rankhouse/measures.py, the headers of models/ and the",
        "     comments of sql/macros/: edit those, then run `python scripts/measure_reference.py`. -->",
        "",
        paragraph(
            "Every ranked-list measure of every study is one model of `models/metrics/`, reading two shapes: the "
            "rankings (study, system, query_key, doc_key, rank, score) and the judgments (study, query_key, "
            "doc_key, grade). `rankhouse eval` runs the same models on run files (and prints what trec_eval 10.0 "
            "prints). This page gives each measure's names, its exact definition, and the rules shared by all: "
            "the ranking order and its ties, which queries count, and how values combine over queries."
        ),
        "",
        *_names_section(computed_by),
        "",
        *_definitions_section(models, families),
        "",
        *_shared_section(models),
    ]
    return "\n".join(lines) + "\n"
