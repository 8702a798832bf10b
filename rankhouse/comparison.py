"""`rankhouse compare`: runs against a baseline, measure by measure, with paired significance tests.

Every figure is a model: the per-query values are query_measures (loaded and computed by
rankhouse.evaluation, as `rankhouse eval` computes them), the paired differences paired_differences,
the interval paired_bootstrap, the p-values paired_t_tests, paired_randomization_tests or
paired_bootstrap_tests, their adjustment adjusted_p_values and the table comparisons. This module
checks the options, makes the seeded plans (rankhouse.resample), runs the models and prints the table.

The default test is the paired t-test: it is what ranx (`student`) and PyTerrier (scipy's ttest_rel)
compute by default, so figures can be checked against them; it needs no plan, so its p-values do not
depend on a seed or the number of replicates; and on IR evaluation data it agrees closely with the
randomization test, with type I error rates as good (Smucker, Allan and Carterette 2007; Urbano,
Lima and Hanjalic 2019), while the unstudentized bootstrap test rejects too often on few queries.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from rankhouse.errors import RankhouseError
from rankhouse.evaluation import EvalOptions, Loading, evaluate
from rankhouse.formats import COMPARE_FORMATS, DEFAULT_SEED
from rankhouse.loaders import LoadResult
from rankhouse.loaders.trec import RunInput
from rankhouse.measures import RUNID, Measure, parse_measures
from rankhouse.progress import Progress
from rankhouse.resample import store_permutation_plan, store_plan
from rankhouse.warehouse import Warehouse
from rankhouse.warehouse.dag import Project
from rankhouse.warehouse.runner import DuckDBEngine, Runner

TESTS = {
    "t": "paired t-test",
    "randomization": "paired randomization test (sign flips)",
    "bootstrap": "paired bootstrap test (shifted to mean 0)",
}
CORRECTIONS = {"holm": "Holm", "bonferroni": "Bonferroni", "none": "no correction"}
FORMATS = COMPARE_FORMATS
BOOTSTRAP_PLAN = "compare_bootstrap"
PERMUTATION_PLAN = "compare_permutation"
TARGETS = "+comparisons"


@dataclass(frozen=True)
class CompareOptions:
    """How runs are compared: the baseline (None: the first run), the test, the correction over the
    runs x measures compared with the baseline, alpha, and the plans' replicates and seed (the bootstrap
    plan is drawn with `seed`, the sign-flip plan with `seed + 1`, so that the two are independent)."""

    baseline: str | None = None
    test: str = "t"
    correction: str = "holm"
    alpha: float = 0.05
    replicates: int = 10000
    seed: int = DEFAULT_SEED

    def __post_init__(self) -> None:
        """Refuse an unknown test or correction, an alpha outside (0, 1), fewer than 1 replicate."""
        if self.test not in TESTS:
            raise RankhouseError(f"unknown test {self.test!r}: --test is one of {', '.join(TESTS)}")
        if self.correction not in CORRECTIONS:
            raise RankhouseError(
                f"unknown correction {self.correction!r}: --correction is one of {', '.join(CORRECTIONS)}"
            )
        if isinstance(self.alpha, bool) or not isinstance(self.alpha, (int, float)) or not 0 < self.alpha < 1:
            raise RankhouseError(f"--alpha must be between 0 and 1 (exclusive), not {self.alpha!r}")
        if isinstance(self.replicates, bool) or not isinstance(self.replicates, int) or self.replicates < 1:
            raise RankhouseError(f"--replicates must be a whole number of at least 1, not {self.replicates!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise RankhouseError(f"--seed must be a whole number of at least 0, not {self.seed!r}")

    @property
    def interval_level(self) -> float:
        """The level of the differences' intervals, 1 - alpha (per comparison, not simultaneous)."""
        return round(1 - self.alpha, 12)


@dataclass(frozen=True)
class Difference:
    """A run's comparison with the baseline on one measure (the comparisons model's row)."""

    difference: float
    ci_low: float
    ci_high: float
    p_value: float | None
    p_adjusted: float | None
    significant: bool


@dataclass
class CompareResult:
    """Per run and measure label, the mean and (runs other than the baseline) the difference."""

    runs: list[str]
    baseline: str
    measures: list[Measure]
    options: CompareOptions
    queries: int
    family_size: int
    means: dict[str, dict[str, float]]
    differences: dict[str, dict[str, Difference]] = field(default_factory=dict)

    # -- the parts every format shows --------------------------------------------------------------

    def caption(self) -> list[str]:
        """What the table shows, in sentences a paper's caption could use."""
        o = self.options
        others = len(self.runs) - 1
        family = f"{others} run{'s' * (others != 1)} x {len(self.measures)} measure{'s' * (len(self.measures) != 1)}"
        corrected = (
            "p unadjusted"
            if o.correction == "none"
            else f"p adjusted by {CORRECTIONS[o.correction]} over the {self.family_size} comparison"
            f"{'s' * (self.family_size != 1)} ({family})"
        )
        test = TESTS[o.test]
        if o.test != "t":
            test += f", {o.replicates:,} replicates"
        return [
            f"{len(self.runs)} runs on {self.queries:,} queries; baseline {self.baseline}.",
            f"diff: run - baseline, mean of the per-query differences, with its {percent(o.interval_level)} "
            f"paired bootstrap percentile interval ({o.replicates:,} replicates, seed {o.seed}).",
            f"p: two-sided {test}; {corrected}; * marks adjusted p < {o.alpha:g}.",
        ]

    def cells(self, run: str, m: Measure) -> tuple[str, str, str]:
        """(mean with its mark, difference with its interval, p) as text; empty for the baseline."""
        mean = f"{self.means[run][m.label]:.4f}"
        d = self.differences.get(run, {}).get(m.label)
        if d is None:
            return mean, "", ""
        return (
            mean + ("*" if d.significant else ""),
            f"{d.difference:+.4f} [{d.ci_low:+.4f}, {d.ci_high:+.4f}]",
            format_p(d.p_adjusted),
        )

    # -- formats -----------------------------------------------------------------------------------

    def text(self) -> str:
        """A table as a paper prints it: per measure, mean, diff [interval], p; then the caption."""
        ci = f"diff [{percent(self.options.interval_level)} CI]"
        groups = [[m.label, "", ""] for m in self.measures]
        headers = ["run"] + [h for _ in self.measures for h in ("mean", ci, "p")]
        rows = [[run] + [c for m in self.measures for c in self.cells(run, m)] for run in self.runs]
        for row in rows:  # a mean without a mark keeps the mark's place, so that decimal points align
            row[1::3] = [cell if cell.endswith("*") else cell + " " for cell in row[1::3]]
        widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]
        for g, m in enumerate(self.measures):  # a measure's name may be wider than its mean column
            span = sum(widths[1 + 3 * g : 4 + 3 * g]) + 4
            if len(m.label) > span:
                widths[3 + 3 * g] += len(m.label) - span

        def line(cells: list[str], right: set[int]) -> str:
            out = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))]
            return "  ".join(out).rstrip()

        top = [" " * widths[0]]
        for g, (label, _, _) in enumerate(groups):
            span = sum(widths[1 + 3 * g : 4 + 3 * g]) + 4
            top.append(label.ljust(span))
        numeric = {i for i in range(1, len(headers)) if i % 3 != 2}
        lines = ["  ".join(top).rstrip(), line(headers, numeric), "  ".join("-" * w for w in widths)]
        lines += [line(row, numeric) for row in rows]
        return "\n".join([*lines, "", *self.caption()])

    def markdown(self) -> str:
        """A GitHub-flavoured Markdown table (the mark escaped, `\\*`), then the caption."""
        ci = f"diff [{percent(self.options.interval_level)} CI]"
        headers = ["run"] + [f"{m.label} {h}" for m in self.measures for h in ("mean", ci, "p")]
        align = ["---"] + ["---:" for _ in headers[1:]]
        rows = [[run] + [c for m in self.measures for c in self.cells(run, m)] for run in self.runs]
        table = [headers, align, *rows]
        cells = [[cell.replace("|", "\\|").replace("*", "\\*") for cell in row] for row in table]
        lines = ["| " + " | ".join(row) + " |" for row in cells]
        return "\n".join([*lines, "", *self.caption()])

    def latex(self) -> str:
        """A LaTeX tabular (booktabs), the caption as a comment above it; marks as superscripts."""
        columns = "l" + "rrr" * len(self.measures)
        ci = "$\\Delta$ [" + latex_text(percent(self.options.interval_level)) + " CI]"
        lines = [*(f"% {line}" for line in self.caption()), f"\\begin{{tabular}}{{{columns}}}", "\\toprule"]
        lines.append(
            " & ".join(["", *(f"\\multicolumn{{3}}{{c}}{{{latex_text(m.label)}}}" for m in self.measures)]) + " \\\\"
        )
        lines.append(" ".join(f"\\cmidrule(lr){{{2 + 3 * g}-{4 + 3 * g}}}" for g in range(len(self.measures))))
        lines.append(" & ".join(["run", *(h for _ in self.measures for h in ("mean", ci, "$p$"))]) + " \\\\")
        lines.append("\\midrule")
        for run in self.runs:
            cells = [latex_text(run)]
            for m in self.measures:
                mean, diff, p = self.cells(run, m)
                mean = mean.replace("*", "$^{*}$")
                cells += [mean, latex_text(diff).replace("-", "$-$"), latex_text(p).replace("<", "$<$")]
            lines.append(" & ".join(cells) + " \\\\")
        lines += ["\\bottomrule", "\\end{tabular}"]
        return "\n".join(lines)

    def as_dict(self) -> dict:
        """Everything, unrounded: the options, and per run and measure its mean and comparison."""
        o = self.options
        runs = {}
        for run in self.runs:
            runs[run] = {}
            for m in self.measures:
                entry: dict = {"mean": self.means[run][m.label]}
                d = self.differences.get(run, {}).get(m.label)
                if d is not None:
                    entry.update(
                        difference=d.difference, ci_low=d.ci_low, ci_high=d.ci_high, p_value=d.p_value,
                        p_adjusted=d.p_adjusted, significant=d.significant,
                    )  # fmt: skip
                runs[run][m.label] = entry
        return {
            "baseline": self.baseline,
            "test": o.test,
            "correction": o.correction,
            "alpha": o.alpha,
            "interval_level": o.interval_level,
            "replicates": o.replicates,
            "seed": o.seed,
            "queries": self.queries,
            "family_size": self.family_size,
            "measures": [m.label for m in self.measures],
            "runs": runs,
        }

    def csv(self) -> str:
        """One row per run and measure (long form), unrounded; the baseline's comparison cells empty."""
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(["run", "measure", "mean", "baseline", "difference", "ci_low", "ci_high", "p_value",
                         "p_adjusted", "significant"])  # fmt: skip
        for run in self.runs:
            for m in self.measures:
                d = self.differences.get(run, {}).get(m.label)
                tail = (
                    ["", "", "", "", "", ""]
                    if d is None
                    else [repr(d.difference), repr(d.ci_low), repr(d.ci_high), number(d.p_value), number(d.p_adjusted),
                          str(d.significant).lower()]
                )  # fmt: skip
                writer.writerow([run, m.label, repr(self.means[run][m.label]), self.baseline, *tail])
        return buffer.getvalue().rstrip("\n")

    def render(self, output_format: str) -> str:
        """The table in `output_format` (text, markdown, latex, json or csv)."""
        if output_format == "json":
            return json.dumps(self.as_dict(), indent=2)
        if output_format not in FORMATS:
            raise RankhouseError(f"--format is one of {', '.join(FORMATS)}, not {output_format!r}")
        return getattr(self, output_format)()


def percent(level: float) -> str:
    """0.95 -> '95%', 0.975 -> '97.5%'."""
    return f"{100 * level:.10g}%"


def format_p(p: float | None) -> str:
    """A p-value to four decimals, `<0.0001` below that, `n/a` where the test is undefined."""
    if p is None:
        return "n/a"
    return "<0.0001" if p < 0.00005 else f"{p:.4f}"


def number(value: float | None) -> str:
    return "" if value is None else repr(value)


def latex_text(text: str) -> str:
    """Text with LaTeX's special characters escaped."""
    special = {"\\": "\\textbackslash{}", "&": "\\&", "%": "\\%", "$": "\\$", "#": "\\#", "_": "\\_",
               "{": "\\{", "}": "\\}", "~": "\\textasciitilde{}", "^": "\\textasciicircum{}"}  # fmt: skip
    return "".join(special.get(c, c) for c in text)


def compared_measures(specs: list[str] | None) -> list[Measure]:
    """The measures to compare: each averaged over queries (no runid, counts or GMAP), one per name
    the SQL models know (the first label of measures that are one and the same)."""
    if not specs:
        raise RankhouseError("name the measures to compare with -m, e.g. -m AP -m nDCG@10")
    measures = {}
    for m in parse_measures(specs):
        if m.canonical == RUNID or m.aggregate != "mean":
            kind = {RUNID: "a run's name", "text": "a string per query"}.get(
                m.canonical if m.canonical == RUNID else m.aggregate, f"aggregated over queries as a {m.aggregate}"
            )
            raise RankhouseError(
                f"measure {m.label} is {kind}: compare tests means of per-query values (e.g. AP, nDCG@10, P@10)"
            )
        measures.setdefault(m.canonical, m)
    return list(measures.values())


def judged_queries(wh: Warehouse) -> int:
    """The queries the plans resample: every judged query, in the order the models index them."""
    return wh.sql("SELECT count(*) FROM models.query_subsets WHERE subset = 'all'")[0][0]


def compare(
    wh: Warehouse,
    qrels: str | Path,
    runs: list[str | Path | RunInput],
    measure_specs: list[str] | None,
    options: CompareOptions = CompareOptions(),
    on_load: Callable[[LoadResult], None] | None = None,
    progress: Progress | None = None,
    engine: DuckDBEngine | None = None,
    load: Loading | None = None,
) -> CompareResult:
    """Load `qrels` and `runs` into `wh`, compute the measures and the comparisons with the baseline on
    `engine` (DuckDB by default; a SparkEngine gives the same table: the plans are stored tables).
    A run given as a string may be `NAME=PATH`, as for evaluation.evaluate (and `load` loads the inputs
    instead of load_inputs, as there); the baseline is a run's name.

    >>> with Warehouse(":memory:") as wh:  # doctest: +SKIP
    ...     print(compare(wh, "qrels.test", ["a.run", "b.run"], ["AP"]).text())
    """
    measures = compared_measures(measure_specs)
    if len(runs) < 2:
        raise RankhouseError("compare needs at least two runs: a baseline and a run to compare with it")
    eval_options = EvalOptions()
    evaluated = evaluate(
        wh, qrels, list(runs), measure_specs, eval_options, on_load=on_load, progress=progress, engine=engine,
        load=load,
    )  # fmt: skip
    names = evaluated.runs
    baseline = options.baseline if options.baseline is not None else names[0]
    if baseline not in names:
        raise RankhouseError(f"the baseline {baseline!r} is not one of the runs: {', '.join(names)}")
    queries = judged_queries(wh)
    store_plan(wh, BOOTSTRAP_PLAN, queries, options.replicates, options.seed)
    if options.test == "randomization":
        store_permutation_plan(wh, PERMUTATION_PLAN, queries, options.replicates, options.seed + 1)
    canonical = [m.canonical for m in measures]
    params = {
        **eval_options.parameters(),
        "measures": canonical,  # as evaluation.compute_measures passes them, so its models are reused
        "bootstrap_plan": BOOTSTRAP_PLAN,
        **({"permutation_plan": PERMUTATION_PLAN} if options.test == "randomization" else {}),
        "resample": "drop",
        "contrasts": [[run, baseline] for run in names if run != baseline],
        "contrast_measures": canonical,
        "interval_level": options.interval_level,
        "significance_test": options.test,
        "p_value_correction": options.correction,
        "significance_level": float(options.alpha),
    }
    project = Project.load(params=params, closure=[TARGETS.strip("+")])  # parses only the models it reads
    Runner(wh, project, params, engine=engine).run(project.select(TARGETS), progress=progress)
    return read_comparisons(wh, names, baseline, measures, options, evaluated.summary, queries)


def read_comparisons(
    wh: Warehouse,
    runs: list[str],
    baseline: str,
    measures: list[Measure],
    options: CompareOptions,
    summary: dict[str, dict[str, float | str]],
    queries: int,
) -> CompareResult:
    """The comparisons model's rows for these runs, by run and measure label."""
    labels = {m.canonical: m.label for m in measures}
    means = {run: {m.label: float(summary[run][m.label]) for m in measures} for run in runs}
    result = CompareResult(runs, baseline, measures, options, queries, 0, means)
    rows = wh.sql(
        "SELECT system_a, measure, difference, ci_low, ci_high, p_value, p_adjusted, significant, family_size "
        "FROM models.comparisons WHERE subset = 'all' AND system_b = ? ORDER BY system_a, measure",
        [baseline],
    )
    for run, measure, difference, low, high, p, adjusted, significant, family in rows:
        if run in means and measure in labels:
            result.differences.setdefault(run, {})[labels[measure]] = Difference(
                difference, low, high, p, adjusted, bool(significant)
            )
            result.family_size = max(result.family_size, family)
    return result
