"""A study's report as sections of text, tables and figures, read from its output directory alone.

`read(directory)` takes results.json (required), provenance.json and the CSV files the study's writer
exported from the models' tables (rankhouse/studies/), and returns a `Report`: the study kind's sections
(results, paired _contrasts, per-query differences, per-class counts, fusion diagnostics, k_t, E3-E5,
the freeze chain, provenance), each made of `Text`, `Code`, `Table` and `Figure` blocks that the HTML and
Markdown templates both render. Nothing here opens a warehouse or computes a measure, an interval or a
test: a cell or a mark is a number from one of those files, formatted by plots.number. A section whose
file is missing (an output directory written before the file was exported) says so instead.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rankhouse.errors import RankhouseError
from rankhouse.report import plots
from rankhouse.report.plots import Bar, Interval, Point, Ranks, number

KINDS = ("trec", "retrieval", "fusion", "lanes", "evidence", "features")


# -- blocks -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Text:
    """A paragraph (plain text; the templates escape it)."""

    text: str
    kind: str = "text"


@dataclass(frozen=True)
class Code:
    """Command lines, shown as they are."""

    lines: Sequence[str]
    kind: str = "code"


@dataclass(frozen=True)
class Table:
    """Rows of formatted cells under their columns, with a caption above."""

    columns: Sequence[str]
    rows: Sequence[Sequence[str]]
    numeric: Sequence[bool] = ()  # right-aligned columns
    caption: str = ""
    kind: str = "table"


@dataclass(frozen=True)
class Figure:
    """An SVG figure (plots.py), its id (also its file name under figures/), title and caption."""

    ident: str
    title: str
    svg: str
    caption: str = ""
    kind: str = "figure"


@dataclass(frozen=True)
class Figures:
    """Small figures side by side (a grid in HTML, one after the other in Markdown)."""

    figures: Sequence[Figure]
    kind: str = "figures"


Block = Text | Code | Table | Figure | Figures


@dataclass(frozen=True)
class Section:
    """A titled part of the report (its id is the page's anchor)."""

    ident: str
    title: str
    blocks: Sequence[Block]


@dataclass
class Report:
    """What both templates render: a title, facts under it, a warning banner (a stand-in extractor), the
    sections, and the kind of study."""

    title: str
    kind: str
    facts: list[tuple[str, str]]
    banner: str | None
    sections: list[Section] = field(default_factory=list)

    def figures(self) -> list[Figure]:
        """Every figure, in the order the report shows them."""
        found = []
        for section in self.sections:
            for block in section.blocks:
                found += [block] if isinstance(block, Figure) else list(getattr(block, "figures", []))
        return found


# -- reading the directory --------------------------------------------------------------------------
class Folder:
    """A study's output directory, read file by file (each at most once)."""

    def __init__(self, directory: Path) -> None:
        self.path = Path(directory)
        if not self.path.is_dir():
            raise RankhouseError(f"{self.path} is not a directory (give a study's output directory, its --out)")
        results = self.path / "results.json"
        if not results.is_file():
            raise RankhouseError(
                f"{results} not found: the report is drawn from a study's output directory, written by "
                "`rankhouse study evaluate PROTOCOL --out DIR` (or `study run`)"
            )
        self.results = self._json(results)
        if not isinstance(self.results, dict) or "methods" not in self.results:
            raise RankhouseError(f"{results} is not a study's results.json (it has no `methods`)")
        self.provenance = self._json(self.path / "provenance.json") if (self.path / "provenance.json").is_file() else {}
        self._tables: dict[str, list[dict] | None] = {}

    @staticmethod
    def _json(path: Path) -> dict:
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise RankhouseError(f"{path} is not valid JSON: {exc}") from None

    def table(self, name: str) -> list[dict] | None:
        """The rows of DIR/name (a CSV with a header), or None if the file is not there."""
        if name not in self._tables:
            path = self.path / name
            if not path.is_file():
                self._tables[name] = None
            else:
                with path.open(newline="", encoding="utf-8") as handle:
                    self._tables[name] = list(csv.DictReader(handle))
        return self._tables[name]

    @property
    def parameters(self) -> dict:
        return self.provenance.get("parameters", {})

    def kind(self) -> str:
        """The study's writer: provenance.json says it; an older directory is recognised by its files."""
        writer = self.provenance.get("writer")
        if writer in KINDS:
            return writer
        r = self.results
        if "extractor" in r:
            return "features"
        if "candidates" in r:
            return "lanes"
        if "examples" in r and "bundle" in r:
            return "evidence"
        if (self.path / "reversals.csv").is_file():
            return "fusion"
        return "retrieval" if "duplicates" in r else "trec"


def _float(text: str | None) -> float | None:
    """A CSV cell as a number (None if empty); the writers write floats as Python's repr, read back exactly."""
    return None if text in (None, "") else float(text)


def _int(text: str | None) -> int | None:
    return None if text in (None, "") else int(float(text))


def slug(text: str) -> str:
    """An identifier made of the text's letters and digits (figure ids and file names).

    >>> slug("dense - bm25 (all)"), slug("nDCG@10")
    ('dense-bm25-all', 'ndcg-10')
    """
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


def _label(measure: str) -> str:
    """A protocol's measure as results.json names it (`nDCG_exp@5 as nDCG@5` -> `nDCG@5`)."""
    return measure.split(" as ")[-1].strip()


def _ordered(found: Iterable[str], preferred: Sequence[str]) -> list[str]:
    """`found`, the `preferred` ones first in their order, then the rest sorted."""
    found = list(dict.fromkeys(found))
    first = [p for p in preferred if p in found]
    return first + sorted(set(found) - set(first))


COUNTS = ("gained_vs_dense", "lost_vs_dense")  # measures that are counts (and trec_eval's Num*)


def _cell(entry: dict | None, places: int = 4, count: bool = False) -> str:
    """A measure's value with its interval when it has one: `0.8010 [0.7865, 0.8147]`; a count as a whole number."""
    if not entry or entry.get("value") is None:
        return ""
    value = entry["value"]
    text = number(int(value)) if count and float(value).is_integer() else number(value, places)
    if entry.get("ci_low") is not None:
        text += f" [{number(entry['ci_low'], places)}, {number(entry['ci_high'], places)}]"
    return text


def _missing(name: str) -> Text:
    return Text(f"{name} is not in this directory (written before the writer exported it): not drawn.")


# -- results ----------------------------------------------------------------------------------------
METHOD_ORDER = {
    "retrieval": ["bm25", "dense"],
    "features": ["bm25", "cosine", "dot", "weighted"],
    "evidence": ["coverage", "dense", "typed", "oracle"],
    "lanes": ["combo", "breadth", "narrative"],
    "fusion": [
        "bm25",
        "dense",
        "rrf",
        "rsf",
        "mixture",
        "fisher",
        "stouffer",
        "dense_admitted",
        "rrf_admitted",
        "mixture_admitted",
        "stouffer_learned",
    ],
}
EXTRA_MEASURES = ["macro-Top-1", "coverage", "redundancy", "pair_cosine", "objective", "gained_vs_dense",
                  "lost_vs_dense"]  # fmt: skip


def _measure_table(block: dict, methods: Sequence[str], measures: Sequence[str], caption: str = "") -> Table:
    """Measures as rows, methods as columns; each cell the value with its interval when it has one."""
    rows = [
        [m, *(_cell(block.get(method, {}).get(m), count=m in COUNTS or m.startswith("Num")) for method in methods)]
        for m in measures
    ]
    return Table(["measure", *methods], rows, [False] + [True] * len(methods), caption)


def _measures_of(folder: Folder, block: dict) -> list[str]:
    wanted = [_label(m) for m in folder.parameters.get("measures", [])] + EXTRA_MEASURES
    return _ordered((m for entries in block.values() for m in entries), wanted)


def _queries(block: dict) -> int | None:
    for entries in block.values():
        for entry in entries.values():
            count = entry.get("queries", entry.get("tasks"))
            if count is not None:
                return count
    return None


def _results_section(folder: Folder, kind: str) -> Section:
    """The results table(s): every method's measures over all queries (with the Wilson or bootstrap
    intervals the study computed), then each subset's."""
    r = folder.results
    order = METHOD_ORDER.get(kind, [])
    blocks: list[Block] = []
    if kind == "evidence":
        groups = list(r.get("subsets", {}).items()) or [("all", r["methods"])]
    else:
        groups = [("all", r["methods"]), *r.get("subsets", {}).items()]
    for subset, block in groups:
        if not block:
            continue
        methods = _ordered(block, order)
        count = _queries(block)
        unit = "tasks" if kind == "evidence" else "topics" if kind == "lanes" else "queries"
        counted = f"{number(count)} {unit}" if count is not None else unit
        caption = f"All {counted}." if subset == "all" else f"Subset {subset}, {counted}."
        blocks.append(_measure_table(block, methods, _measures_of(folder, block), caption))
    notes = {
        "retrieval": "Intervals: Wilson 95% for the hit rates (wilson_intervals); the other measures are means.",
        "features": "Intervals: Wilson 95% for the hit rates (wilson_intervals); the other measures are means.",
        "evidence": "Oracle: a diagnostic upper bound (every 5-subset of each pool), not a method. gained_vs_dense "
                    "and lost_vs_dense are obligations summed over the tasks.",
        "trec": "Means over the queries (trec_eval's summary), counts summed.",
    }  # fmt: skip
    if kind in notes:
        blocks.insert(0, Text(notes[kind]))
    return Section("results", "Results", blocks)


# -- paired contrasts -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Contrast:
    subset: str
    name: str
    measure: str
    mean: float
    low: float
    high: float
    replicates: int | None
    note: str = ""


def _contrasts(folder: Folder, kind: str) -> list[Contrast]:
    """Every paired bootstrap contrast of results.json, whatever the writer's shape."""
    found = []
    for subset, by_name in folder.results.get("contrasts", {}).items():
        for name, entry in by_name.items():
            if kind == "fusion":
                for measure, c in entry.items():
                    found.append(Contrast(subset, name, measure, c["mean"], c["ci_low"], c["ci_high"],
                                          c.get("replicates")))  # fmt: skip
            elif "mean" in entry:
                note = "diagnostic" if entry.get("diagnostic") else ""
                found.append(Contrast(subset, name, entry.get("measure", ""), entry["mean"], entry["ci_low"],
                                      entry["ci_high"], entry.get("replicates"), note))  # fmt: skip
                for measure, c in entry.get("measures", {}).items():
                    found.append(Contrast(subset, name, measure, c["mean"], c["ci_low"], c["ci_high"],
                                          c.get("replicates"), note))  # fmt: skip
    names = [f"{a} - {b}" for a, b in folder.parameters.get("contrasts", [])]
    measures = [_label(m) for m in folder.parameters.get("contrast_measures", [])]
    position = {n: i for i, n in enumerate(names)}
    return sorted(found, key=lambda c: (_rank(measures, c.measure), c.measure, c.subset, position.get(c.name, 99),
                                        c.name))  # fmt: skip


def _rank(order: Sequence[str], item: str) -> int:
    return order.index(item) if item in order else len(order)


def _contrasts_section(folder: Folder, kind: str) -> Section | None:
    """Forest plots of the paired contrasts (one per measure), their table, and the per-query differences
    of each contrast sorted into wins and losses (paired_differences.csv)."""
    found = _contrasts(folder, kind)
    if not found:
        return None
    blocks: list[Block] = [Text(
        "Paired bootstrap of each contrast a - b: the mean of the per-query differences with its percentile 95% "
        "interval (paired_bootstrap); an interval that excludes 0 (the dashed line) separates the two systems."
    )]  # fmt: skip
    subsets = sorted({c.subset for c in found})
    for measure in dict.fromkeys(c.measure for c in found):
        rows = [c for c in found if c.measure == measure]
        intervals = [Interval(c.name if len(subsets) == 1 else f"{c.name} ({c.subset})", c.mean, c.low, c.high, c.note)
                     for c in rows]  # fmt: skip
        replicates = next((c.replicates for c in rows if c.replicates), None)
        ident = f"forest-{slug(measure)}"
        svg = plots.forest(ident, f"Paired contrasts in {measure}", intervals, axis=f"difference in {measure} (a - b)",
                           desc=f"Forest plot of the paired bootstrap contrasts in {measure}.")  # fmt: skip
        blocks.append(Figure(ident, f"Paired contrasts in {measure}", svg,
                             f"{measure}: mean difference a - b and percentile 95% interval"
                             + (f" ({number(replicates)} replicates)." if replicates else ".")))  # fmt: skip
    blocks.append(Table(
        ["measure", "contrast", "subset", "mean", "95% interval", "replicates"],
        [[c.measure, c.name + (f" ({c.note})" if c.note else ""), c.subset, number(c.mean, signed=True),
          f"[{number(c.low, signed=True)}, {number(c.high, signed=True)}]", number(c.replicates)] for c in found],
        [False, False, False, True, True, True],
    ))  # fmt: skip
    blocks += _differences_blocks(folder, kind)
    return Section("contrasts", "Paired contrasts", blocks)


def _differences_blocks(folder: Folder, kind: str) -> list[Block]:
    """One sorted per-query difference plot per contrast, over all queries, in the first contrast measure."""
    rows = folder.table("paired_differences.csv")
    if rows is None:
        return [_missing("paired_differences.csv")]
    study = folder.results.get("study")
    rows = [r for r in rows if r["study"] == study and r["subset"] == "all"]
    if not rows:
        return []
    measures = _ordered(
        (r["measure"] for r in rows), [_label(m) for m in folder.parameters.get("contrast_measures", [])]
    )
    measure = measures[0]
    names = [f"{a} - {b}" for a, b in folder.parameters.get("contrasts", [])]
    by_contrast: dict[str, list[float]] = {}
    for r in rows:
        if r["measure"] == measure and r["difference"] != "":
            by_contrast.setdefault(r["contrast"], []).append(float(r["difference"]))
    unit = "task" if kind == "evidence" else "query"
    figures = []
    for name in _ordered(by_contrast, names):
        ident = f"differences-{slug(name)}-{slug(measure)}"
        title = f"{name}: per-{unit} differences in {measure}"
        svg = plots.sorted_differences(ident, title, by_contrast[name], axis=f"{measure}, a - b",
                                       desc=f"Per-{unit} differences in {measure}, {name}, sorted.")  # fmt: skip
        figures.append(Figure(ident, title, svg, f"{name}, {measure}: each {unit}'s difference, sorted."))
    text = (f"Per-{unit} differences a - b in {measure} (paired_differences), sorted from the largest win of a to "
            f"its largest loss; every {unit} of the study, a {unit} without a value in either system left out. "
            "The other measures' differences: paired_differences.csv.")  # fmt: skip
    return [Text(text), Figures(figures)]


# -- per class --------------------------------------------------------------------------------------
def _classes_section(folder: Folder, kind: str) -> Section | None:
    """Per intent, each method's queries whose first document is of their intent (class_results)."""
    rows = folder.table("class_results.csv")
    if rows is None:
        return None
    methods = _ordered((r["method"] for r in rows), METHOD_ORDER.get(kind, []))
    by_class: dict[str, dict[str, dict]] = {}
    for r in rows:
        by_class.setdefault(r["class"], {})[r["method"]] = r
    bars = [
        Bar(name, [_float(by.get(m, {}).get("top1_hits")) for m in methods],
            [_float(by.get(m, {}).get("queries")) for m in methods])
        for name, by in by_class.items()
    ]  # fmt: skip
    svg = plots.bars("classes-top1", "Top-1 hits per class", bars, methods, axis="queries whose first document is "
                     "of their class (grey: the class's queries)", desc="Per class and method, the Top-1 hits out of "
                     "the class's queries.", places=0)  # fmt: skip
    return Section("classes", "Per class", [
        Text("Per class (intent), the queries whose first document is of the same class, out of the class's "
             "queries (class_results; class_results.csv also counts the class's documents)."),
        Figure("classes-top1", "Top-1 hits per class", svg, "Top-1 hits per class and method (bar) out of the "
               "class's queries (grey track)."),
    ])  # fmt: skip


# -- fusion -----------------------------------------------------------------------------------------
def _fusion_section(folder: Folder) -> Section:
    """Seed 003's diagnostics: reversals against the dense arm, each arm's influence on the mixture, the
    panel's tail saturation, admission, and the references' bounds and identity cards."""
    blocks: list[Block] = []
    reversals = folder.table("reversals.csv")
    if reversals is None:
        blocks.append(_missing("reversals.csv"))
    else:
        series = ["dense_correct_reversed", "dense_wrong_corrected"]
        svg = plots.bars("fusion-reversals", "Pairwise reversals against the dense arm",
                         [Bar(r["rule"], [_float(r[s]) for s in series]) for r in reversals], series,
                         axis="(relevant, irrelevant) pairs, summed over the judged queries",
                         desc="Per rule, pairs the dense arm orders correctly that the rule reverses, and pairs the "
                         "dense arm gets wrong that the rule puts right.", places=0)  # fmt: skip
        blocks.append(Figure("fusion-reversals", "Pairwise reversals against the dense arm", svg,
                             "Reversals (seed 003, eq. 15 and 16; reversal_totals)."))  # fmt: skip
    influence = folder.table("influence.csv")
    if influence is not None:
        series = ["mean_influence", "median_influence"]
        svg = plots.bars("fusion-influence", "Each arm's influence on the mixture score",
                         [Bar(r["arm"], [_float(r[s]) for s in series]) for r in influence], series,
                         axis="influence (seed 003, eq. 13)", desc="Per arm, the mean and median influence over "
                         "all candidates.")  # fmt: skip
        blocks.append(Figure("fusion-influence", "Each arm's influence on the mixture score", svg,
                             "Influence over all candidates (influence_summary)."))  # fmt: skip
    tail = folder.table("tail_saturation.csv")
    if tail is not None:
        svg = plots.bars("fusion-tail", "Candidates at the p-value floor",
                         [Bar(r["arm"], [_float(r["at_floor"])], [_float(r["candidates"])]) for r in tail],
                         ["at the floor"], axis="candidates whose score beats every reference score (grey: all "
                         "candidates)", desc="Per arm, the candidates at the floor 1/(m + 1); arm all: at the floor "
                         "in every arm.", places=0)  # fmt: skip
        blocks.append(
            Figure(
                "fusion-tail",
                "Candidates at the p-value floor",
                svg,
                "Tail saturation (tail_saturation): share at the floor "
                + ", ".join(f"{r['arm']} {number(_float(r['share_at_floor']))}" for r in tail)
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
            blocks.append(_csv_table(rows, f"{title}: {name}."))
    return Section("fusion", "Fusion diagnostics", blocks)


def _true(text: str | None) -> bool:
    """A CSV cell written from a boolean (DuckDB's True/False)."""
    return str(text).lower() == "true"


def _section9(folder: Folder) -> Section | None:
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
        f"{_value(pipeline.get('populations_agree'))} (pipeline.csv; per query stage_populations.csv). "
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
                    number(_float(row["mean_delta"]), signed=True),
                    interval,
                    number(_int(row["improved"])),
                    number(_int(row["worsened"])),
                    number(_int(row["unchanged"])),
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
                        _float(row["null_ci_low"]), _float(row["null_ci_high"]), row["level"])
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
            [[row["reference"], row["arm"], row["level"], number(_int(row["null_rows"])),
              f"{number(_float(row['null_share']))} [{number(_float(row['null_ci_low']))}, "
              f"{number(_float(row['null_ci_high']))}]",
              f"{number(_float(row['gold_rejection']))} [{number(_float(row['gold_ci_low']))}, "
              f"{number(_float(row['gold_ci_high']))}]",
              number(_float(row["null_at_floor"])), number(_float(row["gold_at_floor"])),
              _value(_true(row["anti_conservative"]))] for row in calibration],
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
                            [[e["arm"], e["level"], e["error"], f"{number(_float(e['ratio']))} ["
                              f"{number(_float(e['ci_low']))}, {number(_float(e['ci_high']))}]",
                              number(_int(e["denominator"]))] for e in errors],
                            [False, True, False, True, True],
                            "Per-arm conditional error rates among the candidates (arm_error_rates.csv)."))  # fmt: skip
    by_score = folder.table("relevance_by_score.csv")
    if by_score:
        rules = [rule for rule in ("mixture", "fisher", "rrf") if any(b["rule"] == rule for b in by_score)]
        figures = []
        for rule in rules:
            points = [Point(rule, float(b["score_mean"]), float(b["ratio"]), _float(b["ci_low"]), _float(b["ci_high"]),
                            b["bin"]) for b in by_score if b["rule"] == rule]  # fmt: skip
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
            [[g["pairs"], number(_int(g["pair_count"])), number(_float(g["delta_l"])), number(_float(g["delta_v"])),
              number(_float(g["rho"])), number(_float(g["eq18_bound"])), _value(_true(g["predicted_harm"])),
              number(_float(g["predicted_change"]), signed=True), number(_float(g["measured_change"]), signed=True),
              _value(_true(g["measured_harm"])), number(_int(g["reversals"])), number(_int(g["corrections"]))]
             for g in overall],
            [False] + [True] * 11,
            f"All queries. Eq. 18's harm verdict agrees with the measured one in {number(agree)} of "
            f"{number(len(groups))} group rows."))  # fmt: skip
    cold = [c for c in folder.table("cold_start.csv") or [] if c["query_group"] == "all"]
    if cold:
        blocks.append(Table(
            ["arm", "queries", "mean sup |G - F|", "median", "max", "DKW term (m)", "mean shift bound",
             "queries shifted", "mean eta", "max eta", "contaminated queries"],
            [[c["arm"], number(_int(c["queries"])), number(_float(c["mean_distance"])),
              number(_float(c["median_distance"])), number(_float(c["max_distance"])),
              number(_float(c["dkw_reference"])), number(_float(c["mean_shift_lower"])),
              number(_int(c["shifted_queries"])), number(_float(c["mean_eta"])), number(_float(c["max_eta"])),
              number(_int(c["contaminated_queries"]))] for c in cold],
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
            [[t["level"], t["kind"], f"{number(_float(t['exceedance']))} [{number(_float(t['ci_low']))}, "
              f"{number(_float(t['ci_high']))}]", number(len({f['fold'] for f in folds}))]
             for t in transport if t["fold"] == "all"],
            [True, False, True, True],
            f"Doc-doc null transported to the query-doc null (eq. 22-24), dense arm: "
            f"{number(_int(first.get('doc_pairs')))} panel pairs, mu_DD {number(_float(first.get('mu_dd')))}, "
            f"sigma_DD {number(_float(first.get('sigma_dd')))}; "
            f"fold {first.get('fold')}: mu_QD {number(_float(first.get('mu_qd')))} (eq. 22 from the mean vectors: "
            f"{number(_float(first.get('mu_qd_eq22')))}), sigma_QD {number(_float(first.get('sigma_qd')))}. Each "
            "held-out "
            "block is tested with thresholds from the other blocks; exceedance should equal the level (per fold: "
            "transport.csv)."))  # fmt: skip
    separation = folder.table("separation.csv")
    if separation:
        blocks.append(Table(
            ["score", "m0", "m1", "threshold", "J-hat", "eps0 + eps1", "J lower", "J_min", "accepted"],
            [[s["arm"], number(_int(s["null_units"])), number(_int(s["relevant_units"])),
              number(_float(s["threshold"])), number(_float(s["j_hat"])),
              number(_float(s["epsilon_null"]) + _float(s["epsilon_relevant"])), number(_float(s["j_lower"])),
              number(_float(s["j_min"])), _value(_true(s["accepted"]))] for s in separation],
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
            [[w["fold"], number(_float(w["delta_bm25"])), number(_float(w["delta_dense"])),
              number(_float(w["weight_bm25"])), number(_float(w["weight_dense"])), _value(_true(w["monotone"]))]
             for w in weights],
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
            f"task: {_value(task.get('holds_on_task'))}. {success.get('note', '')}"))  # fmt: skip
    return Section("section9", "Seed 003, section 9: the measurements before fusion", blocks)


IDENTIFIERS = ("id", "row", "seed", "version", "rank", "dimension")  # column names (or endings) of labels


def _csv_table(rows: list[dict], caption: str = "", columns: Sequence[str] | None = None) -> Table:
    """A CSV's rows as a table, numbers formatted as everywhere else (counts as whole numbers with separators,
    identifiers such as ids, rows, ranks and seeds as written)."""
    columns = list(columns or (rows[0].keys() if rows else []))
    labels = [c == "extractor" or c.split("_")[-1] in IDENTIFIERS for c in columns]
    numeric = [all(_is_number(r.get(c, "")) for r in rows) and any(r.get(c) for r in rows) for c in columns]
    out = [[r.get(c, "") if label else _shown(r.get(c, ""), is_number) for c, label, is_number in
            zip(columns, labels, numeric)] for r in rows]  # fmt: skip
    return Table(columns, out, [n and not label for n, label in zip(numeric, labels)], caption)


def _is_number(text: str) -> bool:
    if text == "":
        return True
    try:
        float(text)
    except ValueError:
        return False
    return text.lower() not in ("nan", "inf", "-inf", "infinity")


def _shown(text: str, is_number: bool) -> str:
    if not is_number or text == "":
        return text
    return number(int(text)) if re.fullmatch(r"-?\d+", text) else number(float(text))


# -- lanes ------------------------------------------------------------------------------------------
def _lanes_section(folder: Folder) -> Section:
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
        blocks.append(_missing("k_distribution.csv"))
    else:
        values = [float(r["k"]) for r in rows]
        svg = plots.histogram("lanes-k", "Distribution of k_t", values, axis="k_t, candidates per topic",
                              desc="Histogram of the candidate set sizes k_t over the topics.")  # fmt: skip
        blocks.append(Figure("lanes-k", "Distribution of k_t", svg, "k_t per topic (lane_topics), binned."))
        series = ["k", "admitted"]
        svg = plots.bars(
            "lanes-topics",
            "k_t and admissions per topic",
            [Bar(r["topic"], [_float(r["k"]), _float(r["admitted"])]) for r in rows],
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
        blocks.append(Table(["passage scoring", "value"], [[k, _value(receipt.get(k))] for k in keys if k in receipt],
                            [False, True], "The latest passage-scoring receipt."))  # fmt: skip
    metadata_path = folder.path / "metadata.json"
    if metadata_path.is_file():
        metadata = folder._json(metadata_path)
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


def _value(value: object) -> str:
    if isinstance(value, bool) or value is None:
        return "" if value is None else str(value).lower()
    if isinstance(value, (int, float)):
        return number(value)
    return str(value)


# -- evidence ---------------------------------------------------------------------------------------
def _evidence_section(folder: Folder) -> Section:
    """The example tasks in full: each method's five documents with the judges' grades and agreed obligations."""
    r = folder.results
    blocks: list[Block] = [Text(
        f"Bundle {r.get('bundle')}; greedy program SHA-256 {r.get('greedy_program_sha256')}; encoder "
        f"{r.get('encoder')}. Oracle: {number(r.get('oracle', {}).get('subsets_enumerated'))} subsets enumerated, "
        f"{number(r.get('oracle', {}).get('tasks_with_ties'))} tasks with ties (diagnostic). Per task: per_task.csv; "
        "the selections: selected.csv; the bundle as used: bundle/."
    )]  # fmt: skip
    for task_id, example in r.get("examples", {}).items():
        rows = [[method, str(d["rank"]), d["doc_id"], number(d.get("mean_grade"), 1), d.get("agreed") or "",
                 d.get("text", "")] for method, documents in example["methods"].items() for d in documents]  # fmt: skip
        requirements = "; ".join(f"{i}: {t}" for i, t in enumerate(example.get("requirements", [])))
        blocks.append(Table(["method", "rank", "doc_id", "mean grade", "agreed", "text"], rows,
                            [False, True, False, True, False, False],
                            f"Task {task_id} ({example.get('split')}): {example.get('question')} Requirements: "
                            f"{requirements}."))  # fmt: skip
    return Section("evidence", "Example tasks", blocks)


# -- features (seed 004 E3-E5) ----------------------------------------------------------------------
E3_SYSTEMS = ["phrase-bm25", "interpreted-requirements", "manual-requirements"]
E4_SYSTEMS = ["positive", "penalty-0.25", "penalty-0.5", "penalty-1", "hard-filter"]


def _ablations_section(folder: Folder) -> Section | None:
    """E5: each ablation's change in Top-1 and Hit@5 against the full weighted system (feature_ablations)."""
    rows = folder.table("ablations.csv")
    if rows is None:
        return None
    measures = _ordered((r["measure"] for r in rows), ["Top-1", "Hit@5"])
    by_variant: dict[str, dict[str, float | None]] = {}
    for r in rows:
        by_variant.setdefault(r["variant"].removeprefix("weighted-without-"), {})[r["measure"]] = _float(r["change"])
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


def _e3_section(folder: Folder) -> Section | None:
    """E3: the systems' measures over the phrases with intervals by group, and nDCG@10 per group."""
    e3 = folder.results.get("e3")
    if not e3:
        return None
    systems = _ordered(e3.get("systems", {}), E3_SYSTEMS)
    measures = _ordered((m for s in e3["systems"].values() for m in s), ["P@10", "R@10", "Hit@10", "nDCG@10", "MRR"])
    blocks: list[Block] = [
        Text(f"Intervals: {e3.get('intervals', '')}. {e3.get('judgments', '')}"),
        _measure_table(e3["systems"], systems, measures, "E3 phrases: mean over every phrase, interval by group."),
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
            by_group.setdefault(r["group_id"], {})[r["system"]] = _float(r["ndcg10"])
        svg = plots.bars("e3-groups", "E3: nDCG@10 per group", [Bar(g, [by.get(s) for s in systems])
                         for g, by in by_group.items()], systems, axis="nDCG@10, mean over the group's paraphrases",
                         desc="Per E3 group and system, nDCG@10 averaged over its paraphrases.")  # fmt: skip
        blocks.append(Figure("e3-groups", "E3: nDCG@10 per group", svg, "Per group (group_results; e3_groups.csv)."))
    return Section("e3", "E3: broader semantic retrieval", blocks)


def _e4_section(folder: Folder) -> Section | None:
    """E4: the systems' means over the cases, and per case the rank changes of the top-10 documents."""
    e4 = folder.results.get("e4")
    if not e4:
        return None
    measures = ["desired_P@10", "desired_R@10", "unwanted_rate@10"]
    systems = _ordered(e4.get("systems", {}), E4_SYSTEMS)
    blocks: list[Block] = [
        Text(f"{len(e4.get('cases', {}))} cases; {number(e4.get('hard_filter_violations'))} hard-filter violations, "
             f"{number(e4.get('penalty_violations'))} scores that rose with their penalty (audits), "
             f"{number(e4.get('semantic_failures'))} semantic failures. {e4.get('judgments', '')}"),
        _measure_table(e4.get("systems", {}), systems, measures, "E4: means over the cases."),
    ]  # fmt: skip
    changes = folder.table("e4_rank_changes.csv")
    if changes is None:
        blocks.append(_missing("e4_rank_changes.csv"))
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
                after.setdefault(r["doc_id"], {})[r["system"]] = _int(r["rank"])
            ordered = sorted((Ranks(label, rank, after[doc]) for doc, (label, rank) in before.items()),
                             key=lambda x: x.before)  # fmt: skip
            ident = f"e4-ranks-{slug(case_id)}"
            title = f"E4 {case_id}: ranks without and with the penalty or filter"
            svg = plots.rank_change(ident, title, ordered, changed, axis="rank (log scale)",
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
        blocks.append(_csv_table(failures, "Semantic failures: hard-filtered top-10 documents of an unwanted intent."))
    return Section("e4", "E4: controllability", blocks)


# -- trec -------------------------------------------------------------------------------------------
def _per_query_section(folder: Folder) -> Section | None:
    """A TREC study's first measure per query and run (per_query.csv, trec_eval -q's values)."""
    rows = folder.table("per_query.csv")
    if not rows or "run_id" not in rows[0]:
        return None
    measures = _ordered((r["measure"] for r in rows), [_label(m) for m in folder.parameters.get("measures", [])])
    measure = next((m for m in measures if not m.startswith("Num")), measures[0])
    runs = sorted({r["run_id"] for r in rows})
    by_query: dict[str, dict[str, float | None]] = {}
    for r in rows:
        if r["measure"] == measure:
            by_query.setdefault(r["qid"], {})[r["run_id"]] = _float(r["value"])
    svg = plots.bars(
        "per-query",
        f"{measure} per query",
        [Bar(q, [by.get(run) for run in runs]) for q, by in by_query.items()],
        runs,
        axis=measure,
        desc=f"{measure} of each run per query.",
    )
    return Section("per-query", "Per query", [Figure("per-query", f"{measure} per query", svg,
                   f"{measure} per query and run (query_measures; every measure in per_query.csv).")])  # fmt: skip


# -- freeze chain and provenance --------------------------------------------------------------------
def _freeze_section(folder: Folder) -> Section:
    """The study's freezes, oldest first: id, time, file SHA-256, the predecessor's, what each supersedes and why."""
    r, p = folder.results, folder.provenance
    current = r.get("freeze_id")
    if p.get("freezes"):
        rows = [[f["freeze_id"] + (" (evaluated)" if f["freeze_id"] == current else ""), f.get("created_at") or "",
                 f.get("file_sha256") or "", f.get("previous_sha256") or "", f.get("supersedes") or "",
                 f.get("reason") or ""] for f in p["freezes"]]  # fmt: skip
        table = Table(["freeze", "created", "file SHA-256", "previous file SHA-256", "supersedes", "reason"], rows)
    else:
        rows = [[s["freeze_id"], s.get("replaced_by", ""), s.get("reason", "")] for s in r.get("supersedes", [])]
        table = Table(["superseded freeze", "replaced by", "reason"], rows, caption="provenance.json is not in this "
                      "directory: the superseded freezes of results.json only.")  # fmt: skip
    return Section("freezes", "Freeze chain", [
        Text(f"Evaluated under freeze {current}; protocol SHA-256 {r.get('protocol_sha256')}. A freeze records the "
             "SHA-256 of the protocol, every input, every prepare model and every frozen table; a correction is a new "
             "freeze naming the one it supersedes, why, and that file's SHA-256 (docs/gate.md)."),
        table,
    ])  # fmt: skip


def _provenance_section(folder: Folder) -> Section:
    """Inputs and loaded sources with their SHA-256, model fingerprints, package versions, the commands."""
    p = folder.provenance
    if not p:
        return Section("provenance", "Provenance", [_missing("provenance.json")])
    blocks: list[Block] = [
        Text(f"Protocol {p['protocol']['path']}, SHA-256 {p['protocol']['sha256']}; writer {p.get('writer')}."),
        Table(["input", "path", "SHA-256", "loader"],
              [[k, v.get("path", ""), v.get("sha256", ""), v.get("loader", "")]
               for k, v in p.get("inputs", {}).items()],
              caption="Input files, as the freeze recorded them."),
        Table(["table", "name", "SHA-256", "rows", "loader"],
              [[s["table"], s["name"], s["sha256"], number(s["rows"]), s["loader"]] for s in p.get("sources", [])],
              [False, False, False, True, False], "Loaded and generated sources the models read (meta.sources)."),
        Table(["stage", "model", "fingerprint"],
              [[stage, name, fingerprint] for stage in ("prepare", "evaluate")
               for name, fingerprint in sorted(p.get("models", {}).get(stage, {}).items())],
              caption="Every model's fingerprint (its SQL, parameters, parents and loaded data)."),
        Table(["package", "version"], [[k, v or "not installed"] for k, v in p.get("versions", {}).items()],
              caption="Versions when the outputs were written."),
        Text("Reproduction:"),
        Code(p.get("reproduction", [])),
    ]  # fmt: skip
    return Section("provenance", "Provenance", blocks)


# -- the report -------------------------------------------------------------------------------------
SECTIONS: dict[str, list[Callable[[Folder, str], Section | None]]] = {
    "trec": [_results_section, lambda f, k: _per_query_section(f)],
    "retrieval": [_results_section, _contrasts_section, _classes_section],
    "fusion": [_results_section, _contrasts_section, lambda f, k: _fusion_section(f), lambda f, k: _section9(f)],
    "lanes": [_results_section, lambda f, k: _lanes_section(f)],
    "evidence": [_results_section, _contrasts_section, lambda f, k: _evidence_section(f)],
    "features": [_results_section, _contrasts_section, _classes_section, lambda f, k: _ablations_section(f),
                 lambda f, k: _e3_section(f), lambda f, k: _e4_section(f)],
}  # fmt: skip


def read(directory: Path) -> Report:
    """The report of a study's output directory (see the module's docstring).

    Example: [s.title for s in read(Path("out/banking77")).sections]
    """
    folder = Folder(directory)
    kind = folder.kind()
    r = folder.results
    description = folder.provenance.get("description") or ""
    title = f"{r.get('study', folder.path.name)}" + (f": {description}" if description else "")
    facts = [("study", str(r.get("study", ""))), ("kind", kind), ("freeze", str(r.get("freeze_id", ""))),
             ("protocol SHA-256", str(r.get("protocol_sha256", "")))]  # fmt: skip
    extractor = r.get("extractor")
    banner = None
    if isinstance(extractor, dict):
        facts.append(("extractor", f"{extractor.get('extractor')} (provider {extractor.get('provider')})"))
        if extractor.get("stand_in"):
            banner = f"Every figure here is a stand-in's. {extractor.get('note', '')}"
    bundle = r.get("stand_in")
    if isinstance(bundle, dict):
        facts.append(("stand-in", "yes" if bundle.get("stand_in") else "no"))
        if bundle.get("stand_in"):
            banner = f"Every figure here is a stand-in's. {bundle.get('note') or ''}".strip()
    report = Report(title, kind, facts, banner)
    for build in SECTIONS[kind]:
        section = build(folder, kind)
        if section is not None and section.blocks:
            report.sections.append(section)
    report.sections += [_freeze_section(folder), _provenance_section(folder)]
    return report
