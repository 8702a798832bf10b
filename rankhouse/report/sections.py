"""A study's report as sections of text, tables and figures, read from its output directory alone.

`read(directory)` takes results.json (required), provenance.json and the CSV files the study's writer
exported from the models' tables, and returns a `Report`: the sections of the writer's report kind (the
shared results, paired contrasts with per-query differences, per-class counts, and a study's own, which its
package registers: rankhouse/registry.py ReportKind), then the freeze chain and provenance, each made of
`Text`, `Code`, `Table` and `Figure` blocks that the HTML and Markdown templates both render. The blocks and
the helpers below (Folder, as_float, ordered, measure_table, csv_table, missing, ...) are what a study's
own sections are written with. Nothing here opens a warehouse or computes a measure, an interval or a
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

from rankhouse import registry
from rankhouse.errors import RankhouseError
from rankhouse.registry import ReportKind
from rankhouse.report import plots
from rankhouse.report.plots import Bar, Interval, number


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
    sections, and the kind of study (its name; `spec`: the registered ReportKind)."""

    title: str
    kind: str
    facts: list[tuple[str, str]]
    banner: str | None
    sections: list[Section] = field(default_factory=list)
    spec: ReportKind = field(default_factory=lambda: ReportKind("trec"))

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
        self.results = self.read_json(results)
        if not isinstance(self.results, dict) or "methods" not in self.results:
            raise RankhouseError(f"{results} is not a study's results.json (it has no `methods`)")
        provenance = self.path / "provenance.json"
        self.provenance = self.read_json(provenance) if provenance.is_file() else {}
        self._tables: dict[str, list[dict] | None] = {}

    @staticmethod
    def read_json(path: Path) -> dict:
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

    def kind(self) -> ReportKind:
        """The study's report kind: the writer provenance.json names; a directory written before it did is
        recognised by its files (each kind's `recognise`, in name order), else the TREC writer's."""
        kinds = registry.entries(ReportKind)
        writer = self.provenance.get("writer")
        if writer in kinds:
            return kinds[writer]
        for name in sorted(kinds):
            if kinds[name].recognise and registry.resolve(kinds[name].recognise)(self):
                return kinds[name]
        return kinds["trec"]


def as_float(text: str | None) -> float | None:
    """A CSV cell as a number (None if empty); the writers write floats as Python's repr, read back exactly."""
    return None if text in (None, "") else float(text)


def as_int(text: str | None) -> int | None:
    return None if text in (None, "") else int(float(text))


def slug(text: str) -> str:
    """An identifier made of the text's letters and digits (figure ids and file names).

    >>> slug("dense - bm25 (all)"), slug("nDCG@10")
    ('dense-bm25-all', 'ndcg-10')
    """
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


def measure_label(measure: str) -> str:
    """A protocol's measure as results.json names it (`nDCG_exp@5 as nDCG@5` -> `nDCG@5`)."""
    return measure.split(" as ")[-1].strip()


def ordered(found: Iterable[str], preferred: Sequence[str]) -> list[str]:
    """`found`, the `preferred` ones first in their order, then the rest sorted."""
    found = list(dict.fromkeys(found))
    first = [p for p in preferred if p in found]
    return first + sorted(set(found) - set(first))


def cell(entry: dict | None, places: int = 4, count: bool = False) -> str:
    """A measure's value with its interval when it has one: `0.8010 [0.7865, 0.8147]`; a count as a whole number."""
    if not entry or entry.get("value") is None:
        return ""
    value = entry["value"]
    text = number(int(value)) if count and float(value).is_integer() else number(value, places)
    if entry.get("ci_low") is not None:
        text += f" [{number(entry['ci_low'], places)}, {number(entry['ci_high'], places)}]"
    return text


def missing(name: str) -> Text:
    return Text(f"{name} is not in this directory (written before the writer exported it): not drawn.")


# -- results ----------------------------------------------------------------------------------------
def measure_table(
    block: dict, methods: Sequence[str], measures: Sequence[str], caption: str = "", counts: Sequence[str] = ()
) -> Table:
    """Measures as rows, methods as columns; each cell the value with its interval when it has one (a measure
    of `counts`, or trec_eval's Num*, as a whole number)."""
    rows = [
        [m, *(cell(block.get(method, {}).get(m), count=m in counts or m.startswith("Num")) for method in methods)]
        for m in measures
    ]
    return Table(["measure", *methods], rows, [False] + [True] * len(methods), caption)


def _measures_of(folder: Folder, block: dict, kind: ReportKind) -> list[str]:
    wanted = [measure_label(m) for m in folder.parameters.get("measures", [])] + list(kind.measures)
    return ordered((m for entries in block.values() for m in entries), wanted)


def _queries(block: dict) -> int | None:
    for entries in block.values():
        for entry in entries.values():
            count = entry.get("queries", entry.get("tasks"))
            if count is not None:
                return count
    return None


def _results_section(folder: Folder, kind: ReportKind) -> Section:
    """The results table(s): every method's measures over all queries (with the Wilson or bootstrap
    intervals the study computed), then each subset's (a kind with `subsets_only`: the subsets' alone)."""
    r = folder.results
    blocks: list[Block] = []
    if kind.subsets_only:
        groups = list(r.get("subsets", {}).items()) or [("all", r["methods"])]
    else:
        groups = [("all", r["methods"]), *r.get("subsets", {}).items()]
    for subset, block in groups:
        if not block:
            continue
        methods = ordered(block, kind.methods)
        count = _queries(block)
        counted = f"{number(count)} {kind.units}" if count is not None else kind.units
        caption = f"All {counted}." if subset == "all" else f"Subset {subset}, {counted}."
        blocks.append(measure_table(block, methods, _measures_of(folder, block, kind), caption, kind.counts))
    if kind.note:
        blocks.insert(0, Text(kind.note))
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


def _contrasts(folder: Folder, kind: ReportKind) -> list[Contrast]:
    """Every paired bootstrap contrast of results.json, whatever the writer's shape (`by_measure`: a
    contrast's entry holds one block per measure)."""
    found = []
    for subset, by_name in folder.results.get("contrasts", {}).items():
        for name, entry in by_name.items():
            if kind.by_measure:
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
    measures = [measure_label(m) for m in folder.parameters.get("contrast_measures", [])]
    position = {n: i for i, n in enumerate(names)}
    return sorted(found, key=lambda c: (_rank(measures, c.measure), c.measure, c.subset, position.get(c.name, 99),
                                        c.name))  # fmt: skip


def _rank(order: Sequence[str], item: str) -> int:
    return order.index(item) if item in order else len(order)


def _contrasts_section(folder: Folder, kind: ReportKind) -> Section | None:
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


def _differences_blocks(folder: Folder, kind: ReportKind) -> list[Block]:
    """One sorted per-query difference plot per contrast, over all queries, in the first contrast measure."""
    rows = folder.table("paired_differences.csv")
    if rows is None:
        return [missing("paired_differences.csv")]
    study = folder.results.get("study")
    rows = [r for r in rows if r["study"] == study and r["subset"] == "all"]
    if not rows:
        return []
    measures = ordered(
        (r["measure"] for r in rows), [measure_label(m) for m in folder.parameters.get("contrast_measures", [])]
    )
    measure = measures[0]
    names = [f"{a} - {b}" for a, b in folder.parameters.get("contrasts", [])]
    by_contrast: dict[str, list[float]] = {}
    for r in rows:
        if r["measure"] == measure and r["difference"] != "":
            by_contrast.setdefault(r["contrast"], []).append(float(r["difference"]))
    unit = kind.unit
    figures = []
    for name in ordered(by_contrast, names):
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
def _classes_section(folder: Folder, kind: ReportKind) -> Section | None:
    """Per intent, each method's queries whose first document is of their intent (class_results)."""
    rows = folder.table("class_results.csv")
    if rows is None:
        return None
    methods = ordered((r["method"] for r in rows), kind.methods)
    by_class: dict[str, dict[str, dict]] = {}
    for r in rows:
        by_class.setdefault(r["class"], {})[r["method"]] = r
    bars = [
        Bar(name, [as_float(by.get(m, {}).get("top1_hits")) for m in methods],
            [as_float(by.get(m, {}).get("queries")) for m in methods])
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


IDENTIFIERS = ("id", "row", "seed", "version", "rank", "dimension")  # column names (or endings) of labels


def csv_table(rows: list[dict], caption: str = "", columns: Sequence[str] | None = None) -> Table:
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


def shown_value(value: object) -> str:
    if isinstance(value, bool) or value is None:
        return "" if value is None else str(value).lower()
    if isinstance(value, (int, float)):
        return number(value)
    return str(value)


# -- trec (the default writer's) --------------------------------------------------------------------
def per_query_section(folder: Folder) -> Section | None:
    """A TREC study's first measure per query and run (per_query.csv, trec_eval -q's values)."""
    rows = folder.table("per_query.csv")
    if not rows or "run_id" not in rows[0]:
        return None
    measures = ordered((r["measure"] for r in rows), [measure_label(m) for m in folder.parameters.get("measures", [])])
    measure = next((m for m in measures if not m.startswith("Num")), measures[0])
    runs = sorted({r["run_id"] for r in rows})
    by_query: dict[str, dict[str, float | None]] = {}
    for r in rows:
        if r["measure"] == measure:
            by_query.setdefault(r["qid"], {})[r["run_id"]] = as_float(r["value"])
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
        return Section("provenance", "Provenance", [missing("provenance.json")])
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
SHARED: dict[str, Callable[[Folder, ReportKind], Section | None]] = {
    "results": _results_section,
    "contrasts": _contrasts_section,
    "classes": _classes_section,
}


def section(name: str, folder: Folder, kind: ReportKind) -> Section | None:
    """A section a report kind names: a shared one, or a study's own function ("module:attribute")."""
    if name in SHARED:
        return SHARED[name](folder, kind)
    return registry.resolve(name)(folder)


def read(directory: Path) -> Report:
    """The report of a study's output directory (see the module's docstring).

    Example: [s.title for s in read(Path("out/banking77")).sections]
    """
    folder = Folder(directory)
    kind = folder.kind()
    r = folder.results
    description = folder.provenance.get("description") or ""
    title = f"{r.get('study', folder.path.name)}" + (f": {description}" if description else "")
    facts = [("study", str(r.get("study", ""))), ("kind", kind.name), ("freeze", str(r.get("freeze_id", ""))),
             ("protocol SHA-256", str(r.get("protocol_sha256", "")))]  # fmt: skip
    banner = None
    if kind.facts:
        own, banner = registry.resolve(kind.facts)(r)
        facts += own
    report = Report(title, kind.name, facts, banner, spec=kind)
    for name in kind.sections:
        found = section(name, folder, kind)
        if found is not None and found.blocks:
            report.sections.append(found)
    report.sections += [_freeze_section(folder), _provenance_section(folder)]
    return report
