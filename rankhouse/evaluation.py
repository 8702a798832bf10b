r"""`rankhouse eval`: load qrels and runs, run the measure models, read back trec_eval-style results.

Inputs: each run is `PATH` or `NAME=PATH` (loaders.trec.RunInput.parse); a run's default name is its file
name without `.gz`, and two runs that would load under one name are refused before anything is read.
Either file may be gzip-compressed or `-` (standard input, one input at most): loaders.sources.Input.

Output formats (EvalResult.render). Every format has the columns run, measure, query, value: `measure` is
the measure's printed label (`P_10`, `nDCG@10`, as asked for), `query` a query id or `all` (the run's
summary). Rows come run by run in the order given; within a run, with per-query rows asked for (-q), each
query (ids sorted as text) with its measures in the order asked for, then the `all` rows.

text      trec_eval's lines: `measure<TAB>query<TAB>value`, the measure padded to 22 characters; with
          more than one run each line starts with `run<TAB>`. Byte-identical to trec_eval on its sample.
json      one object: `{run: {"all": {measure: value}, "per_query": {query: {measure: value}}}}`,
          `per_query` only with -q; indented by 2.
jsonl     one object per line: `{"run": ..., "measure": ..., "query": ..., "value": ...}`.
csv       a header line `run,measure,query,value`, then one line per row (RFC 4180 quoting, lines end
          in `\n`).
markdown  a runs x measures table of the `all` rows: a header `| run | measure... |`, an alignment line,
          one line per run. No per-query rows (-q is refused).
latex     the same table as a booktabs `tabular` (`\usepackage{booktabs}`): `\begin{tabular}{lr...}`,
          \toprule, the header, \midrule, one line per run ending in `\\`, \bottomrule, `\end{tabular}`;
          `& % $ # _ { } ~ ^ \` in names are escaped. No per-query rows (-q is refused).

Values: counts (num_ret, num_rel, num_rel_ret, num_q) are whole numbers and runid is its string in every
format. Others are printed with `places` digits after the point (default 4, trec_eval's) in text,
markdown and latex. json, jsonl and csv keep every digit of the double unless `places` is given; then
csv prints that many digits and json/jsonl carry the value rounded to that many places.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from rankhouse.errors import InputError, RankhouseError
from rankhouse.formats import EVAL_FORMATS, MAX_PLACES
from rankhouse.loaders import (
    LoadResult,
    load_prefs,
    load_qrels,
    load_qrels_jg,
    load_qrels_prefs,
    load_run,
    load_zscores,
)
from rankhouse.loaders.sources import check_readable
from rankhouse.loaders.trec import RunInput, one_stdin, run_inputs
from rankhouse.measures import (
    COUNTS,
    FAMILIES,
    GRADE_LIMITS,
    RUNID,
    SUMMARY_ONLY,
    TEXT,
    Measure,
    check_judgments,
    format_value,
    parse_measures,
    text_models,
)
from rankhouse.progress import Progress
from rankhouse.warehouse import Warehouse
from rankhouse.warehouse.dag import Project
from rankhouse.warehouse.runner import DuckDBEngine, ModelRun, Runner

MEASURE_TARGETS = "+run_measures"
STUDY = "eval"  # the study `rankhouse eval` computes (the measure models' default `study`)
# trec_eval's relevance formats (-R): the loader of each, the labels table it fills, the models'
# parameters that evaluate it, and the measures measured without -m (trec_eval's group for the format).
# Preferences: the queries are those with preferences (prefs_judgments). Judgment groups: the study's
# queries are the topics (judgment_group_topics), and its part `judgment_groups` has a query per topic and
# group (judgment_group_judgments), which the measures of judgment groups average (measure_avgjg).
REL_FORMATS = {
    "qrels": (load_qrels, "qrels", {}, "official"),
    "qrels_jg": (load_qrels_jg, "qrels_jg", {
        "judgments": "judgment_group_topics",
        "rankings": ["run_ranking", "run_ranking@judgment_groups"],
        "part_judgments": ["judgment_group_judgments@judgment_groups"],
    }, "qrels_jg"),
    "prefs": (load_prefs, "prefs", {"judgments": "prefs_judgments"}, "prefs"),
    "qrels_prefs": (load_qrels_prefs, "prefs", {"judgments": "prefs_judgments"}, "prefs"),
}  # fmt: skip
ZSCORE_PREFIX = "Z"  # before a z-score's measure name, as trec_eval -Z prints it
FORMATS = EVAL_FORMATS
TABLE_FORMATS = ("markdown", "latex")  # a runs x measures table of the `all` rows: no per-query rows
PLACES = 4  # trec_eval's digits after the point
LATEX_SPECIAL = {c: "\\" + c for c in "&%$#_{}"} | {"~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                                                     "\\": r"\textbackslash{}"}  # fmt: skip


@dataclass(frozen=True)
class EvalOptions:
    """trec_eval's options. `complete` (-c) is on by default: a qrels query a run missed scores 0.

    `depth` is -M, the documents evaluated per query; 0 (the default) evaluates every retrieved document.
    (trec_eval's own -M 0 evaluates none, so the command line takes -M 1 and up only: cli/evaluate.py.)
    `score_precision` is how scores compare when a run is ranked: "double" as trec_eval 10.0, "float"
    (32-bit) as trec_eval 9 and pytrec_eval (`--float-scores`). `rel_format` is the relevance file's
    format (-R: qrels, qrels_jg, prefs, qrels_prefs; REL_FORMATS) and `zscores` a z-score file (-Z): every
    per-query value becomes (value - mean) / stddev, the mean and deviation the file gives its query and
    measure (query_zscores), before the values are averaged.
    """

    relevance_level: int = 1  # -l
    complete: bool = True  # -c
    depth: int = 0  # -M; 0 = every retrieved document
    judged_only: bool = False  # -J
    score_precision: str = "double"  # --float-scores: "float"
    rel_format: str = "qrels"  # -R
    zscores: str | Path | None = None  # -Z

    def __post_init__(self) -> None:
        """Refuse a depth that is not a whole number of at least 0, an unknown score precision and an
        unknown relevance format."""
        if not isinstance(self.depth, int) or isinstance(self.depth, bool) or self.depth < 0:
            raise RankhouseError(
                f"depth must be a whole number of at least 0 (0: every retrieved document), not {self.depth!r}"
            )
        if self.score_precision not in ("double", "float"):
            raise RankhouseError(
                'score_precision is "double" (trec_eval 10) or "float" (trec_eval 9 and pytrec_eval), '
                f"not {self.score_precision!r}"
            )
        check_judgments([], self.rel_format)

    def parameters(self) -> dict:
        return {
            "relevance_level": self.relevance_level,
            "complete": self.complete,
            "depth": self.depth,
            "judged_only": self.judged_only,
            "score_precision": self.score_precision,
            **REL_FORMATS[self.rel_format][2],
            **({"zscores": True} if self.zscores is not None else {}),
        }


@dataclass
class EvalResult:
    """Per-run summaries (`all`) and per-query values, keyed by the measures' printed labels."""

    measures: list[Measure]
    runs: list[str]
    summary: dict[str, dict[str, float | str]]
    per_query: dict[str, dict[str, dict[str, float]]] | None = field(default_factory=dict)  # None: not read
    zscores: bool = False  # values are z-scores (-Z): names start with Z, counts are not whole numbers

    def lines(self, per_query: bool = False, places: int = PLACES) -> list[str]:
        """trec_eval's output: `measure<TAB>query<TAB>value`, per query first with per_query, then `all`.

        With more than one run, each line starts with the run id and a tab. Z-scores (-Z) as trec_eval
        prints them: `Z` before the padded name, every value to `places` digits.
        """
        out = []
        for run, m, qid, value in self.rows(per_query):
            name = f"{m.label:<22}"
            if self.z_score(m):
                name = ZSCORE_PREFIX + name
            line = f"{name}\t{qid}\t{fixed(m, value, places, not self.z_score(m))}"
            out.append(f"{run}\t{line}" if len(self.runs) > 1 else line)
        return out

    def z_score(self, measure: Measure) -> bool:
        """Whether `measure`'s values are z-scores: all but runid and strings, with -Z."""
        return self.zscores and measure.canonical != RUNID and measure.family not in TEXT

    def name(self, measure: Measure) -> str:
        """A measure's name in json, jsonl, csv and tables: its label, after `Z` for a z-score."""
        return (ZSCORE_PREFIX if self.z_score(measure) else "") + measure.label

    def rows(self, per_query: bool = False) -> list[tuple[str, Measure, str, float | str]]:
        """(run, measure, query, value) in the output's order: run by run, each query's rows (ids sorted
        as text, measures in the order asked for) with per_query, then the run's `all` rows."""
        if per_query and self.per_query is None:
            raise RankhouseError("these results were read without their per-query rows (read_results(per_query=True))")
        out = []
        for run in self.runs:
            if per_query:
                for qid, values in sorted(self.per_query[run].items()):
                    out += [(run, m, qid, values[m.label]) for m in self.measures if m.label in values]
            out += [(run, m, "all", self.summary[run][m.label]) for m in self.measures if m.family not in TEXT]
        return out

    def as_dict(self, per_query: bool = False, places: int | None = None) -> dict:
        """`{run: {"all": {measure: value}, "per_query": {qid: {measure: value}}}}` (per_query if asked);
        values as json_value gives them."""
        result: dict = {}
        for run, m, qid, value in self.rows(per_query):
            entry = result.setdefault(run, {"all": {}, **({"per_query": {}} if per_query else {})})
            target = entry["all"] if qid == "all" else entry["per_query"].setdefault(qid, {})
            target[self.name(m)] = json_value(m, value, places, not self.z_score(m))
        return result

    def render(self, output_format: str = "text", per_query: bool = False, places: int | None = None) -> str:
        """The whole output in one of FORMATS (defined in this module's docstring), ending in a newline."""
        check_output(output_format, per_query, places)
        if output_format == "text":
            return "".join(line + "\n" for line in self.lines(per_query, PLACES if places is None else places))
        if output_format == "json":
            return json.dumps(self.as_dict(per_query, places), indent=2) + "\n"
        if output_format == "jsonl":
            return "".join(
                json.dumps(
                    {
                        "run": run,
                        "measure": self.name(m),
                        "query": qid,
                        "value": json_value(m, value, places, not self.z_score(m)),
                    }
                )
                + "\n"  # fmt: skip
                for run, m, qid, value in self.rows(per_query)
            )
        if output_format == "csv":
            out = io.StringIO()
            writer = csv.writer(out, lineterminator="\n")
            writer.writerow(["run", "measure", "query", "value"])
            for run, m, qid, value in self.rows(per_query):
                whole = not self.z_score(m)
                shown = exact(m, value, whole) if places is None else fixed(m, value, places, whole)
                writer.writerow([run, self.name(m), qid, shown])
            return out.getvalue()
        return self._table(output_format, PLACES if places is None else places)

    def _table(self, output_format: str, places: int) -> str:
        """The runs x measures table of the `all` rows, in markdown or LaTeX (a per-query string, relstring,
        has none)."""
        shown = [m for m in self.measures if m.family not in TEXT]
        header = ["run", *(self.name(m) for m in shown)]
        body = [
            [run, *(fixed(m, self.summary[run][m.label], places, not self.z_score(m)) for m in shown)]
            for run in self.runs
        ]
        if output_format == "markdown":

            def line(cells: Iterable[str]) -> str:
                return "| " + " | ".join(c.replace("\\", "\\\\").replace("|", "\\|") for c in cells) + " |"

            align = "| --- |" + " ---: |" * len(shown)
            return "\n".join([line(header), align, *(line(row) for row in body)]) + "\n"

        def row(cells: Iterable[str]) -> str:
            return " & ".join("".join(LATEX_SPECIAL.get(c, c) for c in cell) for cell in cells) + r" \\"

        return "\n".join([
            r"\begin{tabular}{l" + "r" * len(shown) + "}", r"\toprule", row(header), r"\midrule",
            *(row(cells) for cells in body), r"\bottomrule", r"\end{tabular}",
        ]) + "\n"  # fmt: skip


def check_output(output_format: str, per_query: bool = False, places: int | None = None) -> None:
    """Refuse an unknown format, per-query rows in a table format and places outside 0 .. MAX_PLACES."""
    if output_format not in FORMATS:
        raise RankhouseError(f"--format is one of {', '.join(FORMATS)}, not {output_format!r}")
    if per_query and output_format in TABLE_FORMATS:
        raise RankhouseError(
            f"a {output_format} table has the `all` rows only: -q/--per-query needs --format text, json, jsonl or csv"
        )
    whole = isinstance(places, int) and not isinstance(places, bool)
    if places is not None and not (whole and 0 <= places <= MAX_PLACES):
        raise RankhouseError(f"--places must be a whole number from 0 to {MAX_PLACES}, not {places!r}")


def fixed(measure: Measure, value: float | str, places: int = PLACES, whole: bool = True) -> str:
    """A value with `places` digits after the point; counts (with `whole`) as whole numbers and strings as
    they are (measures.format_value, which is this at 4 places)."""
    if isinstance(value, str) or (whole and measure.family in COUNTS):
        return format_value(measure, value)
    return f"{value:.{places}f}"


def exact(measure: Measure, value: float | str, whole: bool = True) -> float | int | str:
    """A value with every digit: counts (with `whole`) as ints, strings as they are, others as the double."""
    if isinstance(value, str):
        return value
    return int(round(value)) if whole and measure.family in COUNTS else float(value)


def json_value(
    measure: Measure, value: float | str, places: int | None = None, whole: bool = True
) -> float | int | str:
    """A value for json and jsonl: exact, or rounded to `places` if given."""
    value = exact(measure, value, whole)
    return round(value, places) if places is not None and isinstance(value, float) else value


def run_tag(wh: Warehouse, run_id: str) -> str:
    """trec_eval's runid: the tag on the last line of the run file."""
    return wh.sql("SELECT tag FROM raw.runs WHERE run_id = ? ORDER BY line DESC LIMIT 1", [run_id])[0][0]


def compute_measures(
    wh: Warehouse,
    measures: list[Measure],
    options: EvalOptions = EvalOptions(),
    progress: Progress | None = None,
    engine: DuckDBEngine | None = None,
) -> list[ModelRun]:
    """Run the measure models over every run loaded in the warehouse (the gate must be open), on `engine`
    (DuckDB by default; a SparkEngine computes the portable ones on Spark)."""
    canonical = list(dict.fromkeys(m.canonical for m in measures if m.canonical != RUNID))
    if all(m.family in TEXT for m in measures if m.canonical != RUNID):
        canonical.append("NumQ")  # query_measures holds a row per query even when only strings are asked for
    params = {**options.parameters(), "measures": canonical}
    targets = [MEASURE_TARGETS.strip("+"), *text_models(measures)]  # a string per query (relstring) on its own
    project = Project.load(params=params, closure=targets)
    runner = Runner(wh, project, params, engine=engine)
    return runner.run(project.select(" ".join(f"+{t}" for t in targets)), progress=progress)


def read_results(
    wh: Warehouse, run_ids: list[str], measures: list[Measure], per_query: bool = True, zscores: bool = False
) -> EvalResult:
    """Read run_measures back for the given runs (the study's own rows, not its parts'), and query_measures
    too with `per_query` (a large run's per-query rows cost more to read than its summary: `rankhouse eval`
    reads them only with -q), or with `zscores` their z-scores (query_zscores)."""
    by_canonical: dict[str, list[Measure]] = {}
    for m in measures:
        by_canonical.setdefault(m.canonical, []).append(m)
    summary: dict[str, dict[str, float | str]] = {run: {} for run in run_ids}
    per_query_values: dict[str, dict[str, dict[str, float]]] = {run: {} for run in run_ids}
    for run, measure, value in wh.sql(
        "SELECT system, measure, value FROM models.run_measures "
        "WHERE study = ? AND subset = 'all' AND list_contains(?, system)",
        [STUDY, run_ids],
    ):
        for m in by_canonical.get(measure, []):
            summary[run][m.label] = value
    values = "query_zscores" if zscores else "query_measures"
    per_query_rows = wh.sql(
        f"SELECT system, query, measure, value FROM models.{values} WHERE study = ? AND list_contains(?, system)",
        [STUDY, run_ids],
    ) if per_query else []  # fmt: skip
    for model in text_models(measures) if per_query else []:
        per_query_rows += wh.sql(
            f"SELECT system, query, measure, value FROM models.{model} WHERE list_contains(?, system)", [run_ids]
        )
    for run, qid, measure, value in per_query_rows:
        for m in by_canonical.get(measure, []):
            if m.family not in SUMMARY_ONLY:
                per_query_values[run].setdefault(qid, {})[m.label] = value
    for run in run_ids:
        for m in by_canonical.get(RUNID, []):
            summary[run][m.label] = run_tag(wh, run)
        # the measures in the order asked for (DuckDB returns run_measures' rows in no fixed order)
        summary[run] = {m.label: summary[run][m.label] for m in measures if m.label in summary[run]}
    return EvalResult(measures, run_ids, summary, per_query_values if per_query else None, zscores)


def _require_judged_queries(wh: Warehouse, run_ids: list[str], labels: str = "qrels") -> None:
    """Without complete, a run none of whose queries has qrels has nothing to average: say so.

    A run's queries are read from raw.run_blocks (a row per query, whichever reader loaded the run: a
    query's row instead of a scan of its lines; docs/performance.md), or from its lines where no block was
    recorded (a run loaded by an older rankhouse)."""
    blocked = {
        r[0] for r in wh.sql("SELECT DISTINCT run_id FROM raw.run_blocks WHERE list_contains(?, run_id)", [run_ids])
    }
    unjudged = []
    for table, runs in (("raw.run_blocks", sorted(blocked)), ("raw.runs", sorted(set(run_ids) - blocked))):
        if runs:
            unjudged += wh.sql(
                f"SELECT run_id FROM {table} WHERE list_contains(?, run_id) GROUP BY run_id "
                f"HAVING count(*) FILTER (WHERE qid IN (SELECT qid FROM gate.{labels})) = 0",
                [runs],
            )
    if unjudged:
        names = ", ".join(sorted(r[0] for r in unjudged))
        raise RankhouseError(f"no query of run {names} has qrels: nothing to evaluate (wrong qrels file?)")


def check_grades(wh: Warehouse, qrels: str | Path, measures: list[Measure]) -> None:
    """Refuse qrels (gate.qrels, loaded from `qrels`) with a grade above what a requested measure takes
    (measures.GRADE_LIMITS), before any model is built: the message names the line, the grade, the
    measure and its limit."""
    for m in measures:
        if m.family not in GRADE_LIMITS:
            continue
        limit, why = GRADE_LIMITS[m.family]
        if isinstance(limit, str):  # a parameter of the family's model: its default
            model = FAMILIES[m.family].model
            limit = Project.load(closure=[model]).models[model].parameters[limit]
        above = wh.sql("SELECT line, rel FROM gate.qrels WHERE rel > ? ORDER BY rel DESC, line LIMIT 1", [limit])
        if above:
            line, grade = above[0]
            raise InputError(qrels, line, f"grade {grade} is above {limit}, the highest grade {m.label} takes", why)


# How a command loads its qrels and runs into a warehouse: (the loads, qrels first; the run names in order).
Loading = Callable[[Warehouse, object, list], tuple[list[LoadResult], list[str]]]


def load_inputs(
    wh: Warehouse, qrels: str | Path, runs: Iterable[str | Path | RunInput], options: EvalOptions = EvalOptions()
) -> tuple[list[LoadResult], list[str]]:
    """Load `qrels` (in the options' rel_format, trec_eval -R) and `runs` (PATH, NAME=PATH or RunInput:
    loaders.trec.RunInput.parse) into `wh`, and the options' z-score file: (the loads, the relevance file
    first and the z-score file last; the run names in order).

    Before anything is read or loaded: runs that would share a name, more than one `-` and inputs that
    are not readable files are refused, and so is a study's warehouse (its gate).
    """
    inputs = run_inputs(runs)
    extra = [options.zscores] if options.zscores is not None else []
    one_stdin([qrels, *(run.path for run in inputs), *extra])
    for path in [qrels, *(run.path for run in inputs), *extra]:
        check_readable(path)
    wh.check_gate()  # a study's warehouse refuses here, before anything is loaded into it
    loaded = [REL_FORMATS[options.rel_format][0](wh, qrels)]
    loaded += [load_run(wh, run.path, run.name) for run in inputs]
    loaded += [load_zscores(wh, path) for path in extra]
    return loaded, [run.name for run in inputs]


def evaluate(
    wh: Warehouse,
    qrels: str | Path,
    runs: list[str | Path | RunInput],
    measure_specs: list[str] | None = None,
    options: EvalOptions = EvalOptions(),
    on_load: Callable[[LoadResult], None] | None = None,
    progress: Progress | None = None,
    engine: DuckDBEngine | None = None,
    per_query: bool = True,
    load: Loading | None = None,
) -> EvalResult:
    """Load `qrels` and `runs` into `wh` (load_inputs, or `load`, which loads them in its own way: the
    Python API's DataFrames), compute the measures on `engine` (DuckDB by default; the caller closes it),
    and return them for these runs (their per-query values too with `per_query`).

    A run given as a string may be `NAME=PATH`; a Path is always a path.

    >>> with Warehouse(":memory:") as wh:  # doctest: +SKIP
    ...     result = evaluate(wh, "qrels.test", ["results.test"], ["map", "P.10"])
    ...     print(result.render("text"), end="")
    map                   	all	0.1785
    P_10                  	all	0.3000
    """
    measures = parse_measures(measure_specs or [REL_FORMATS[options.rel_format][3]])
    check_judgments(measures, options.rel_format)
    loaded, run_ids = load(wh, qrels, runs) if load is not None else load_inputs(wh, qrels, runs, options)
    if on_load:
        for result in loaded:
            on_load(result)
    wh.open_gate()
    check_grades(wh, qrels, measures)
    if not options.complete:
        _require_judged_queries(wh, run_ids, REL_FORMATS[options.rel_format][1])
    compute_measures(wh, measures, options, progress, engine)
    return read_results(wh, run_ids, measures, per_query, options.zscores is not None)
