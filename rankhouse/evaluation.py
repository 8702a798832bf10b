"""`rankhouse eval`: load qrels and runs, run the measure models, read back trec_eval-style results."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from rankhouse.errors import RankhouseError
from rankhouse.loaders import LoadResult, load_qrels, load_run
from rankhouse.measures import RUNID, SUMMARY_ONLY, Measure, format_value, parse_measures
from rankhouse.warehouse import Warehouse
from rankhouse.warehouse.dag import Project
from rankhouse.warehouse.runner import ModelRun, Runner

MEASURE_TARGETS = "+run_measures"


@dataclass(frozen=True)
class EvalOptions:
    """trec_eval's options. `complete` (-c) is on by default: a qrels query a run missed scores 0.

    `depth` is -M, the documents evaluated per query; 0 (the default) evaluates every retrieved document.
    (trec_eval's own -M 0 evaluates none, so the command line takes -M 1 and up only: cli/evaluate.py.)
    `score_precision` is how scores compare when a run is ranked: "double" as trec_eval 10.0, "float"
    (32-bit) as trec_eval 9 and pytrec_eval (`--float-scores`).
    """

    relevance_level: int = 1  # -l
    complete: bool = True  # -c
    depth: int = 0  # -M; 0 = every retrieved document
    judged_only: bool = False  # -J
    score_precision: str = "double"  # --float-scores: "float"

    def __post_init__(self) -> None:
        """Refuse a depth that is not a whole number of at least 0, and an unknown score precision."""
        if not isinstance(self.depth, int) or isinstance(self.depth, bool) or self.depth < 0:
            raise RankhouseError(
                f"depth must be a whole number of at least 0 (0: every retrieved document), not {self.depth!r}"
            )
        if self.score_precision not in ("double", "float"):
            raise RankhouseError(
                'score_precision is "double" (trec_eval 10) or "float" (trec_eval 9 and pytrec_eval), '
                f"not {self.score_precision!r}"
            )

    def parameters(self) -> dict:
        return {
            "relevance_level": self.relevance_level,
            "complete": self.complete,
            "depth": self.depth,
            "judged_only": self.judged_only,
            "score_precision": self.score_precision,
        }


@dataclass
class EvalResult:
    """Per-run summaries (`all`) and per-query values, keyed by the measures' printed labels."""

    measures: list[Measure]
    runs: list[str]
    summary: dict[str, dict[str, float | str]]
    per_query: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)

    def lines(self, per_query: bool = False) -> list[str]:
        """trec_eval's output: `measure<TAB>query<TAB>value`, per query first with per_query, then `all`.

        With more than one run, each line starts with the run id and a tab.
        """
        out = []
        for run in self.runs:
            prefix = f"{run}\t" if len(self.runs) > 1 else ""
            if per_query:
                for qid, values in sorted(self.per_query[run].items()):
                    for m in self.measures:
                        if m.label in values:
                            out.append(f"{prefix}{m.label:<22}\t{qid}\t{format_value(m, values[m.label])}")
            for m in self.measures:
                out.append(f"{prefix}{m.label:<22}\tall\t{format_value(m, self.summary[run][m.label])}")
        return out

    def as_dict(self, per_query: bool = False) -> dict:
        """`{run: {"all": {measure: value}, "per_query": {qid: {measure: value}}}}` (per_query if asked)."""
        result = {}
        for run in self.runs:
            entry: dict = {"all": self.summary[run]}
            if per_query:
                entry["per_query"] = dict(sorted(self.per_query[run].items()))
            result[run] = entry
        return result


def run_tag(wh: Warehouse, run_id: str) -> str:
    """trec_eval's runid: the tag on the last line of the run file."""
    return wh.sql("SELECT tag FROM raw.runs WHERE run_id = ? ORDER BY line DESC LIMIT 1", [run_id])[0][0]


def compute_measures(
    wh: Warehouse,
    measures: list[Measure],
    options: EvalOptions = EvalOptions(),
    progress: Callable[[ModelRun], None] | None = None,
) -> list[ModelRun]:
    """Run the measure models over every run loaded in the warehouse (the gate must be open)."""
    canonical = list(dict.fromkeys(m.canonical for m in measures if m.canonical != RUNID))
    params = {**options.parameters(), "measures": canonical or ["NumQ"]}
    project = Project.load()
    runner = Runner(wh, project, params)
    return runner.run(project.select(MEASURE_TARGETS), progress=progress)


def read_results(wh: Warehouse, run_ids: list[str], measures: list[Measure]) -> EvalResult:
    """Read run_measures and query_measures back for the given runs."""
    by_canonical: dict[str, list[Measure]] = {}
    for m in measures:
        by_canonical.setdefault(m.canonical, []).append(m)
    summary: dict[str, dict[str, float | str]] = {run: {} for run in run_ids}
    per_query: dict[str, dict[str, dict[str, float]]] = {run: {} for run in run_ids}
    for run, measure, value in wh.sql(
        "SELECT system, measure, value FROM models.run_measures WHERE subset = 'all' AND list_contains(?, system)",
        [run_ids],
    ):
        for m in by_canonical.get(measure, []):
            summary[run][m.label] = value
    for run, qid, measure, value in wh.sql(
        "SELECT system, query, measure, value FROM models.query_measures WHERE list_contains(?, system)", [run_ids]
    ):
        for m in by_canonical.get(measure, []):
            if m.family not in SUMMARY_ONLY:
                per_query[run].setdefault(qid, {})[m.label] = value
    for run in run_ids:
        for m in by_canonical.get(RUNID, []):
            summary[run][m.label] = run_tag(wh, run)
    return EvalResult(measures, run_ids, summary, per_query)


def _require_judged_queries(wh: Warehouse, run_ids: list[str]) -> None:
    """Without complete, a run none of whose queries has qrels has nothing to average: say so."""
    unjudged = wh.sql(
        "SELECT run_id FROM raw.runs WHERE list_contains(?, run_id) GROUP BY run_id "
        "HAVING count(*) FILTER (WHERE qid IN (SELECT qid FROM gate.qrels)) = 0 ORDER BY run_id",
        [run_ids],
    )
    if unjudged:
        names = ", ".join(r[0] for r in unjudged)
        raise RankhouseError(f"no query of run {names} has qrels: nothing to evaluate (wrong qrels file?)")


def evaluate(
    wh: Warehouse,
    qrels: str | Path,
    runs: list[str | Path],
    measure_specs: list[str] | None = None,
    options: EvalOptions = EvalOptions(),
    on_load: Callable[[LoadResult], None] | None = None,
    progress: Callable[[ModelRun], None] | None = None,
) -> EvalResult:
    """Load `qrels` and `runs` into `wh`, compute the measures, and return them for these runs.

    >>> with Warehouse(":memory:") as wh:  # doctest: +SKIP
    ...     result = evaluate(wh, "qrels.test", ["results.test"], ["map", "P.10"])
    ...     print("\\n".join(result.lines()))
    map                   	all	0.1785
    P_10                  	all	0.3000
    """
    measures = parse_measures(measure_specs)
    wh.check_gate()  # a study's warehouse refuses here, before anything is loaded into it
    loaded = [load_qrels(wh, qrels)]
    run_ids = []
    for path in runs:
        result = load_run(wh, path)
        loaded.append(result)
        run_ids.append(result.name)
    if on_load:
        for result in loaded:
            on_load(result)
    wh.open_gate()
    if not options.complete:
        _require_judged_queries(wh, run_ids)
    compute_measures(wh, measures, options, progress)
    return read_results(wh, run_ids, measures)
