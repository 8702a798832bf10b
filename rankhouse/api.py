"""rankhouse from Python: evaluate, compare and fuse runs, query a warehouse, run a study.

Every function runs what its command runs (`rankhouse eval`, `compare`, `fuse`, `query`, `study ...`):
the same loaders, the same SQL models, the same gate; nothing here computes a measure, an interval or a
test. Runs and qrels are files (a path, `NAME=PATH`), pandas or polars DataFrames and Arrow tables with
ir_measures' columns (query_id, doc_id, score / relevance), or the dict of dicts of pytrec_eval and ranx
(rankhouse/frames.py). Results are Arrow tables behind small objects with `.to_pandas()`,
`.to_polars()`, the command line's formats (`.to_markdown()`, `.to_latex()`, `.render(format)`) and an
HTML table for notebooks. Every error is a rankhouse.errors exception carrying the command line's
one-line message. The guide: docs/python.md.

    >>> import rankhouse
    >>> rankhouse.evaluate("qrels.test", ["results.test"], ["AP", "nDCG@10"]).to_dict()  # doctest: +SKIP
    {'results.test': {'AP': 0.1785..., 'nDCG@10': 0.3016...}}
"""

from __future__ import annotations

import functools
import html
import os
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pyarrow as pa

from rankhouse.errors import InputError, InternalError, QueryError, RankhouseError
from rankhouse.warehouse.layout import DEFAULT_DB

if TYPE_CHECKING:
    import duckdb
    import pandas
    import polars

    from rankhouse.comparison import CompareResult
    from rankhouse.evaluation import EvalResult
    from rankhouse.warehouse import Warehouse

MEMORY = ":memory:"
HTML_ROWS = 50  # rows an HTML table shows in a notebook
F = TypeVar("F", bound=Callable[..., Any])


def _reported(function: F) -> F:
    """Errors as the command line reports them: a RankhouseError as it is; an OSError as `path: reason`;
    anything else as InternalError with the CLI's `internal error: ...` line (the original exception as
    its cause), never DuckDB's or Arrow's own text alone."""

    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except RankhouseError:
            raise
        except OSError as exc:
            where = f"{exc.filename}: " if exc.filename is not None else ""
            raise RankhouseError(f"{where}{exc.strerror or exc}") from exc
        except Exception as exc:
            message = " ".join(str(exc).split())
            raise InternalError(
                f"internal error: {type(exc).__name__}: {message} (please report it, with the call that raised it)"
            ) from exc

    return call  # type: ignore[return-value]


# -- results --------------------------------------------------------------------------------------------


class Table:
    """An Arrow table with conversions (`to_arrow`, `to_pandas`, `to_polars`) and an HTML view for notebooks.

    >>> Table(pa.table({"a": [1, 2]})).to_pydict()
    {'a': [1, 2]}
    """

    def __init__(self, table: pa.Table) -> None:
        self.table = table

    def to_arrow(self) -> pa.Table:
        """The Arrow table.  Example: result.to_arrow().schema"""
        return self.table

    def to_pandas(self) -> pandas.DataFrame:
        """The table as a pandas DataFrame (needs pandas).  Example: result.to_pandas().set_index("run")"""
        try:
            import pandas  # noqa: F401
        except ImportError:
            raise ImportError("to_pandas() needs pandas, which is not installed: pip install pandas") from None
        return self.table.to_pandas()

    def to_polars(self) -> polars.DataFrame:
        """The table as a polars DataFrame (needs polars).  Example: result.to_polars().filter(pl.col("run") == "a")"""
        try:
            import polars
        except ImportError:
            raise ImportError("to_polars() needs polars, which is not installed: pip install polars") from None
        return polars.from_arrow(self.table)

    def to_pydict(self) -> dict[str, list]:
        """The columns as Python lists.  Example: result.to_pydict()["run"]"""
        return self.table.to_pydict()

    def __len__(self) -> int:
        return self.table.num_rows

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self.table.num_rows} rows x {self.table.num_columns} columns>\n{self.table}"

    def _repr_html_(self) -> str:
        return html_table(self.table.column_names, self.table.slice(0, HTML_ROWS).to_pylist(), self.table.num_rows)


def html_table(columns: list[str], rows: list[dict], total: int | None = None) -> str:
    """Rows as an HTML table (values escaped), with a note where only the first rows are shown."""
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in columns)
    body = "".join(
        "<tr>" + "".join(_td(html.escape(_cell(row[c])), isinstance(row[c], (int, float))) for c in columns) + "</tr>"
        for row in rows
    )
    more = f"<p>first {len(rows)} of {total:,} rows</p>" if total is not None and total > len(rows) else ""
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{more}"


def _td(text: str, number: bool) -> str:
    """A table cell, numbers aligned right."""
    return f'<td style="text-align:right">{text}</td>' if number else f"<td>{text}</td>"


def _cell(value: object) -> str:
    if value is None:
        return ""
    return f"{value:.4f}" if isinstance(value, float) else str(value)


class EvaluationResult(Table):
    """`rankhouse.evaluate`'s result: a runs x measures table (`table`: run, then a column per measure,
    as `rankhouse eval --format markdown` shows it) and, when asked for, every query's values
    (`per_query`: run, query_id, measure, value; string measures such as relstring are in `render` only).

    >>> result.to_dict()["results.test"]["AP"]  # doctest: +SKIP
    0.1785...
    """

    def __init__(self, result: EvalResult, per_query: bool) -> None:
        from rankhouse.evaluation import TEXT, exact

        self._result = result
        self._per_query = per_query
        self.runs = list(result.runs)
        self.measures = [m.label for m in result.measures if m.family not in TEXT]
        shown = [m for m in result.measures if m.family not in TEXT]
        columns: dict[str, pa.Array] = {"run": pa.array(self.runs, pa.string())}
        for m in shown:
            columns[m.label] = pa.array([exact(m, result.summary[run][m.label]) for run in self.runs])
        super().__init__(pa.table(columns))
        self.per_query: pa.Table | None = None
        if per_query:
            rows = [
                (run, qid, m.label, float(value))
                for run, m, qid, value in result.rows(per_query=True)
                if qid != "all" and not isinstance(value, str)
            ]
            self.per_query = pa.table(
                {
                    "run": pa.array([r[0] for r in rows], pa.string()),
                    "query_id": pa.array([r[1] for r in rows], pa.string()),
                    "measure": pa.array([r[2] for r in rows], pa.string()),
                    "value": pa.array([r[3] for r in rows], pa.float64()),
                }
            )

    def to_pandas(self, per_query: bool = False) -> pandas.DataFrame:
        """The runs x measures table, or with `per_query` every query's values, as a pandas DataFrame.
        Example: rankhouse.evaluate(qrels, runs, ["AP"], per_query=True).to_pandas(per_query=True)"""
        return Table(self._chosen(per_query)).to_pandas()

    def to_polars(self, per_query: bool = False) -> polars.DataFrame:
        """As to_pandas, a polars DataFrame (needs polars).  Example: result.to_polars(per_query=True)"""
        return Table(self._chosen(per_query)).to_polars()

    def to_arrow(self, per_query: bool = False) -> pa.Table:
        """As to_pandas, the Arrow table.  Example: result.to_arrow(per_query=True).num_rows"""
        return self._chosen(per_query)

    def _chosen(self, per_query: bool) -> pa.Table:
        if not per_query:
            return self.table
        if self.per_query is None:
            raise RankhouseError("these results have no per-query values: evaluate with per_query=True")
        return self.per_query

    def to_dict(self, per_query: bool = False) -> dict:
        """`{run: {measure: value}}`, or with `per_query` `rankhouse eval --format json -q`'s
        `{run: {"all": {...}, "per_query": {query: {measure: value}}}}`.  Example: result.to_dict()["a"]["AP"]"""
        if per_query:
            self._chosen(True)
            return self._result.as_dict(per_query=True)
        return {run: values["all"] for run, values in self._result.as_dict().items()}

    def to_markdown(self, places: int = 4) -> str:
        """The runs x measures table as `rankhouse eval --format markdown` prints it.
        Example: print(result.to_markdown())"""
        return self._result.render("markdown", False, places)

    def to_latex(self, places: int = 4) -> str:
        """The table as `rankhouse eval --format latex` prints it (booktabs).  Example: print(result.to_latex())"""
        return self._result.render("latex", False, places)

    def render(self, output_format: str = "text", places: int | None = None) -> str:
        """The output of `rankhouse eval --format FORMAT` (text, json, jsonl, csv, markdown, latex), with
        every query's rows where the result has them (`-q`).  Example: print(result.render("text"))"""
        per_query = self._per_query and output_format not in ("markdown", "latex")
        return self._result.render(output_format, per_query, places)

    def __repr__(self) -> str:
        return self.to_markdown().rstrip("\n")

    def _repr_html_(self) -> str:
        from rankhouse.evaluation import TEXT, fixed

        shown = [m for m in self._result.measures if m.family not in TEXT]
        head = "".join(f"<th>{html.escape(label)}</th>" for label in ["run", *(m.label for m in shown)])
        body = "".join(
            f"<tr><td>{html.escape(run)}</td>"
            + "".join(_td(html.escape(fixed(m, self._result.summary[run][m.label])), True) for m in shown)
            + "</tr>"
            for run in self.runs
        )
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


class ComparisonResult(Table):
    """`rankhouse.compare`'s result, `rankhouse compare`'s table in long form (`table`: run, measure, mean,
    baseline, difference, ci_low, ci_high, p_value, p_adjusted, significant; the baseline's own rows
    without a comparison), its caption, and the table with its marks (`*`: adjusted p below alpha) in
    Markdown, LaTeX and HTML.

    >>> result.to_pandas().query("significant")  # doctest: +SKIP
    """

    def __init__(self, result: CompareResult) -> None:
        self._result = result
        self.runs = list(result.runs)
        self.baseline = result.baseline
        self.measures = [m.label for m in result.measures]
        self.caption = result.caption()
        rows = []
        for run in self.runs:
            for m in result.measures:
                d = result.differences.get(run, {}).get(m.label)
                rows.append({
                    "run": run, "measure": m.label, "mean": result.means[run][m.label], "baseline": self.baseline,
                    "difference": d and d.difference, "ci_low": d and d.ci_low, "ci_high": d and d.ci_high,
                    "p_value": d and d.p_value, "p_adjusted": d and d.p_adjusted, "significant": d and d.significant,
                })  # fmt: skip
        schema = pa.schema(
            [("run", pa.string()), ("measure", pa.string()), ("mean", pa.float64()), ("baseline", pa.string())]
            + [(c, pa.float64()) for c in ("difference", "ci_low", "ci_high", "p_value", "p_adjusted")]
            + [("significant", pa.bool_())]
        )
        super().__init__(pa.Table.from_pylist(rows, schema))

    def to_dict(self) -> dict:
        """Everything, unrounded, as `rankhouse compare --format json` prints it.  Example: result.to_dict()["runs"]"""
        return self._result.as_dict()

    def to_markdown(self) -> str:
        """The table and its caption as `rankhouse compare --format markdown` prints them.
        Example: print(result.to_markdown())"""
        return self._result.markdown()

    def to_latex(self) -> str:
        """The table as `rankhouse compare --format latex` prints it.  Example: print(result.to_latex())"""
        return self._result.latex()

    def render(self, output_format: str = "text") -> str:
        """The output of `rankhouse compare --format FORMAT` (text, markdown, latex, json, csv).
        Example: print(result.render())"""
        return self._result.render(output_format)

    def __repr__(self) -> str:
        return self._result.text()

    def _repr_html_(self) -> str:
        result = self._result
        ci = f"diff [{_percent(result.options.interval_level)} CI]"
        top = "<th></th>" + "".join(
            f'<th colspan="3" style="text-align:center">{html.escape(m.label)}</th>' for m in result.measures
        )
        sub = "<th>run</th>" + "".join(f"<th>mean</th><th>{html.escape(ci)}</th><th>p</th>" for _ in result.measures)
        body = []
        for run in self.runs:
            cells = [f"<td>{html.escape(run)}</td>"]
            for m in result.measures:
                mean, diff, p = result.cells(run, m)
                mark = mean.endswith("*")
                shown = f"<b>{html.escape(mean[:-1])}</b><sup>*</sup>" if mark else html.escape(mean)
                cells += [_td(shown, True), _td(html.escape(diff), True), _td(html.escape(p), True)]
            body.append("<tr>" + "".join(cells) + "</tr>")
        caption = "<br>".join(html.escape(line) for line in self.caption)
        return (
            f"<table><thead><tr>{top}</tr><tr>{sub}</tr></thead><tbody>{''.join(body)}</tbody></table>"
            f"<p><small>{caption}</small></p>"
        )


def _percent(level: float) -> str:
    from rankhouse.comparison import percent

    return percent(level)


class FusionResult(Table):
    """`rankhouse.fuse`'s result: every asked ranking (`table`: rule, query_id, doc_id, rank, score, the
    rows `rankhouse fuse` writes), each also as a run (`runs`: rule -> query_id, doc_id, score) that
    `rankhouse.evaluate` takes as it is; the candidates the p-value rules left out (`incomplete` of
    `candidates`) and the files written (`files`).

    >>> rankhouse.evaluate(qrels, fused.runs, ["nDCG@10"])  # doctest: +SKIP
    """

    def __init__(
        self, table: pa.Table, rules: list[str], incomplete: int, candidates: int, files: dict[str, Path]
    ) -> None:
        super().__init__(table)
        self.rules = rules
        self.incomplete = incomplete
        self.candidates = candidates
        self.files = files
        self.runs: dict[str, pa.Table] = {}
        import pyarrow.compute as pc

        for rule in rules:
            chosen = table.filter(pc.equal(table["rule"], rule))
            self.runs[rule] = chosen.select(["query_id", "doc_id", "score"])

    def run(self, rule: str) -> pa.Table:
        """One rule's fused run (query_id, doc_id, score).  Example: fused.run("rrf").to_pandas()"""
        if rule not in self.runs:
            raise RankhouseError(f"no fused ranking for rule {rule!r}; known: {', '.join(self.rules)}")
        return self.runs[rule]

    def _repr_html_(self) -> str:
        rows = [
            {"rule": rule, "queries": len(set(run["query_id"].to_pylist())), "rows": run.num_rows}
            for rule, run in self.runs.items()
        ]
        note = (
            f"<p>{self.incomplete:,} of {self.candidates:,} candidates lack a score in some arm: the p-value "
            "rules leave them out</p>"
            if self.incomplete
            else ""
        )
        return html_table(["rule", "queries", "rows"], rows) + note


# -- evaluate, compare, fuse ----------------------------------------------------------------------------


def _measure_specs(measures: object) -> list[str] | None:
    """Measure names as `-m` takes them: a name or a list of names (ir_measures' objects by their text)."""
    if measures is None:
        return None
    if isinstance(measures, str):
        return [measures]
    if isinstance(measures, Sequence) or hasattr(measures, "__iter__"):
        return [m if isinstance(m, str) else str(m) for m in measures]
    return [str(measures)]


def _eval_options(relevance_level: int, complete: bool, depth: int | None, judged_only: bool, float_scores: bool):
    from rankhouse.evaluation import EvalOptions

    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 1):
        raise RankhouseError(
            f"depth must be a whole number of at least 1, not {depth!r} (leave it None to evaluate every "
            "retrieved document)"
        )
    if isinstance(relevance_level, bool) or not isinstance(relevance_level, int):
        raise RankhouseError(f"relevance_level must be a whole number, not {relevance_level!r}")
    return EvalOptions(
        relevance_level=relevance_level, complete=bool(complete), depth=depth or 0, judged_only=bool(judged_only),
        score_precision="float" if float_scores else "double",
    )  # fmt: skip


def _inputs(qrels: object, runs: object) -> tuple[object, list]:
    from rankhouse.frames import qrels_source, run_sources

    return qrels_source(qrels), run_sources(runs)


def _with_frames(function: Callable[[], Any], sources: list) -> Any:
    """Run `function`; an InputError a model check raised about a frame's line names its row instead."""
    from rankhouse.frames import frame_input_error

    try:
        return function()
    except InputError as exc:
        translated = frame_input_error(exc, sources)
        if translated is exc:
            raise
        raise translated from None


@_reported
def evaluate(
    qrels: object,
    runs: object,
    measures: str | Sequence[object] | None = None,
    per_query: bool = False,
    *,
    relevance_level: int = 1,
    complete: bool = True,
    depth: int | None = None,
    judged_only: bool = False,
    float_scores: bool = False,
    db: str | os.PathLike = MEMORY,
) -> EvaluationResult:
    """Evaluate runs against qrels with the warehouse's SQL measure models, as `rankhouse eval` does.

    `qrels`: a file, a DataFrame or Arrow table (query_id, doc_id, relevance) or {query_id: {doc_id: grade}}.
    `runs`: a file, a list of files (each PATH or NAME=PATH), a dict {name: file or frame}, or one frame
    (query_id, doc_id, score; named `run`). `measures`: ir_measures or trec_eval names (default:
    trec_eval's set); the options are trec_eval's (-l, -c, -M, -J) and `float_scores` (trec_eval 9's and
    pytrec_eval's order). `db`: the warehouse (a throw-away in-memory one by default).

    Example:
        >>> result = rankhouse.evaluate("qrels.test", {"bm25": run_df}, ["nDCG@10", "AP"])  # doctest: +SKIP
        >>> result.to_pandas()  # doctest: +SKIP
    """
    from rankhouse.evaluation import evaluate as evaluate_runs
    from rankhouse.frames import load_sources
    from rankhouse.measures import parse_measures
    from rankhouse.warehouse import Warehouse

    specs = _measure_specs(measures)
    parse_measures(specs)  # an unknown measure is refused before anything is read
    options = _eval_options(relevance_level, complete, depth, judged_only, float_scores)
    qrels_in, runs_in = _inputs(qrels, runs)

    def run() -> EvaluationResult:
        with Warehouse(str(db)) as wh:
            result = evaluate_runs(
                wh, qrels_in, runs_in, specs, options, per_query=bool(per_query), load=load_sources
            )  # fmt: skip
        return EvaluationResult(result, bool(per_query))

    return _with_frames(run, [qrels_in, *runs_in])


@_reported
def compare(
    qrels: object,
    runs: object,
    measures: str | Sequence[object],
    *,
    baseline: str | None = None,
    test: str = "t",
    correction: str = "holm",
    alpha: float = 0.05,
    replicates: int = 10000,
    seed: int | None = None,
    db: str | os.PathLike = MEMORY,
) -> ComparisonResult:
    """Compare runs with a baseline, as `rankhouse compare` does: per measure the mean, the paired
    difference with its bootstrap interval, and the p-value of `test` (t: paired t-test, as ranx's
    `student` and scipy's ttest_rel; randomization; bootstrap) adjusted by `correction` (holm,
    bonferroni, none); a mark where the adjusted p is below `alpha`. Inputs as for evaluate; the
    baseline is a run's name (default: the first run).

    Example:
        >>> table = rankhouse.compare("qrels.test", {"a": a_df, "b": b_df}, ["AP"], baseline="a")  # doctest: +SKIP
        >>> table  # in a notebook: the table with its marks  # doctest: +SKIP
    """
    from rankhouse.comparison import DEFAULT_SEED, CompareOptions, compared_measures
    from rankhouse.comparison import compare as compare_runs
    from rankhouse.frames import load_sources
    from rankhouse.warehouse import Warehouse

    specs = _measure_specs(measures)
    compared_measures(specs)  # refused before anything is read
    options = CompareOptions(baseline, test, correction, alpha, replicates, DEFAULT_SEED if seed is None else seed)
    qrels_in, runs_in = _inputs(qrels, runs)
    if len(runs_in) < 2:
        raise RankhouseError("compare needs at least two runs: a baseline and a run to compare with it")

    def run() -> ComparisonResult:
        with Warehouse(str(db)) as wh:
            return ComparisonResult(compare_runs(wh, qrels_in, runs_in, specs, options, load=load_sources))

    return _with_frames(run, [qrels_in, *runs_in])


@_reported
def fuse(
    arms: Mapping[str, object],
    rules: str | Sequence[str],
    *,
    nulls: Mapping[str, object] | None = None,
    depth: int = 100,
    params: Mapping[str, object] | None = None,
    output: str | os.PathLike | None = None,
    db: str | os.PathLike = MEMORY,
) -> FusionResult:
    """Fuse runs with the fusion models, as `rankhouse fuse` does: each asked rule's ranking of the union
    of the arms' top `depth` (rules: mixture, fisher, stouffer, rrf, rsf, or an arm's name).

    `arms` and `nulls` (each arm's scores of a random panel; the p-value rules need one per arm): dicts
    {arm: file or frame}. `params`: model parameters (e.g. {"rrf_k": 60}). `output`: also write the
    rankings as TREC runs (one rule: that file; several: <rule>.run in that folder).

    Example:
        >>> fused = rankhouse.fuse({"bm25": "bm25.run", "dense": dense_df}, ["rrf", "rsf"])  # doctest: +SKIP
        >>> rankhouse.evaluate("qrels.test", fused.runs, ["nDCG@10"])  # doctest: +SKIP
    """
    from rankhouse.frames import is_file, load_run_input, read_frame
    from rankhouse.loaders.sources import check_readable
    from rankhouse.loaders.trec import one_stdin
    from rankhouse.studies.fusion.fuse import (
        fused_rows,
        incomplete_candidates,
        plan_fusion,
        run_fusion,
        write_fused_run,
    )
    from rankhouse.warehouse import Warehouse

    if not isinstance(arms, Mapping):
        raise RankhouseError("arms is a dict {arm name: run file or frame}")
    if nulls is not None and not isinstance(nulls, Mapping):
        raise RankhouseError("nulls is a dict {arm name: null run file or frame}")
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise RankhouseError(f"depth must be a whole number of at least 1, not {depth!r}")
    asked = [rules] if isinstance(rules, str) else list(rules)

    def source(value: object, name: str) -> object:
        return str(value) if is_file(value) else read_frame(value, "run", name)

    arm_sources = {str(arm): source(value, str(arm)) for arm, value in arms.items()}
    null_sources = {str(arm): source(value, f"{arm}.null") for arm, value in (nulls or {}).items()}
    plan = plan_fusion(arm_sources, null_sources, asked, depth, dict(params or {}))
    files_in = [path for path in [*plan.arms.values(), *plan.nulls.values()] if isinstance(path, str)]
    one_stdin(files_in)
    for path in files_in:
        check_readable(path)
    files: dict[str, Path] = {}
    if output is not None:
        from rankhouse.studies.fusion.cli import output_files

        files = output_files(Path(output), plan.rankings, files_in)
    with Warehouse(str(db)) as wh:
        run_fusion(wh, plan, load=load_run_input)
        table = fused_rows(wh, plan.rankings)
        if len(files) > 1:
            Path(output).mkdir(exist_ok=True)
        for name, path in files.items():
            write_fused_run(wh, name, path)
        incomplete, candidates = incomplete_candidates(wh) if plan.null_rules else (0, 0)
    return FusionResult(table, list(plan.rankings), incomplete, candidates, files)


# -- the warehouse ---------------------------------------------------------------------------------------


class Connection:
    """A read-only connection to a warehouse for analysts, as `rankhouse query` and `rankhouse shell` open
    it (DuckDB's file access off, settings locked, every study attached as `<study>.models.x`,
    `<study>.results.x`; a study's labels, `gate.*`, only through a study whose latest freeze verifies).
    Close it (or use `with`) to remove its copy of the labels.

    >>> with rankhouse.connect("sample.duckdb") as con:  # doctest: +SKIP
    ...     con.sql("FROM trec_sample.results.run_measures").to_pandas()
    """

    def __init__(self, wh: Warehouse) -> None:
        self._wh = wh
        self._closer = weakref.finalize(self, wh.close)

    @property
    def duckdb(self) -> duckdb.DuckDBPyConnection:
        """The DuckDB connection itself (read-only and locked down; its errors are DuckDB's own).
        Example: con.duckdb.sql("FROM trec_sample.results.run_measures").pl()"""
        self._check_open()
        return self._wh.con

    @_reported
    def sql(self, query: str, params: list | dict | None = None) -> Table:
        """Run one read-only query; its rows as a Table (`to_pandas`, `to_polars`, `to_arrow`).
        A failed query raises QueryError with `rankhouse query`'s message.

        Example: con.sql("SELECT system, value FROM trec_sample.results.run_measures WHERE measure = ?", ["AP"])
        """
        import duckdb

        self._check_open()
        try:
            relation = self._wh.con.sql(query, params=params)
            result = relation.to_arrow_table() if relation is not None else None
        except duckdb.Error as exc:
            raise QueryError(f"query failed: {exc}") from None
        if result is None:
            raise QueryError("the statement gives no result to print (a query has a SELECT, FROM or VALUES)")
        return Table(result)

    def tables(self) -> Table:
        """Every table and view the connection reads (database, schema, name, kind).
        Example: con.tables().to_pandas()"""
        return self.sql(
            "SELECT database_name AS database, schema_name AS schema, table_name AS name, 'table' AS kind "
            "FROM duckdb_tables() WHERE NOT internal UNION ALL "
            "SELECT database_name, schema_name, view_name, 'view' FROM duckdb_views() WHERE NOT internal "
            "ORDER BY ALL"
        )

    def _check_open(self) -> None:
        if not self._closer.alive:
            raise RankhouseError("the connection is closed")

    def close(self) -> None:
        """Close the connection and remove its scratch files (its copy of the labels).  Example: con.close()"""
        self._closer()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "open" if self._closer.alive else "closed"
        gate = "labels open" if self._closer.alive and "gate" in self._wh.attached() else "labels closed"
        return f"<rankhouse.Connection {self._wh.path} ({state}, {gate})>"


@_reported
def connect(
    db: str | os.PathLike = DEFAULT_DB,
    study: str | os.PathLike | Study | None = None,
    *,
    with_labels: bool = False,
    freezes: str | os.PathLike | None = None,
) -> Connection:
    """Open a warehouse read-only for SQL, as `rankhouse query` does; with `study` (a protocol or a
    Study), its names resolve unqualified and its labels open if its latest freeze verifies (else
    GateError); `with_labels` opens the labels loaded outside any study.

    Example:
        >>> con = rankhouse.connect("sample.duckdb", study="studies/trec_sample.toml")  # doctest: +SKIP
        >>> con.sql("SELECT count(*) AS judgments FROM gate.qrels").to_pydict()  # doctest: +SKIP
        {'judgments': [3681]}
    """
    from rankhouse.cli.query import open_for_analysts

    protocol = study.protocol.path if isinstance(study, Study) else study
    wh = open_for_analysts(
        str(db),
        None if protocol is None else Path(protocol),
        bool(with_labels),
        None if freezes is None else Path(freezes),
        namespace=None,
    )
    return Connection(wh)


# -- studies ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Frozen:
    """What `Study.freeze` made or found: the freeze's id, its file, that file's SHA-256 (publish it before
    evaluating), and whether it is new (an identical latest freeze is reused)."""

    freeze_id: str
    path: Path
    sha256: str
    new: bool


@dataclass(frozen=True)
class StudyEvaluation:
    """What `Study.evaluate` did: the freeze it ran under, whether its results were new, where the outputs
    went, and the summary table `rankhouse study evaluate` prints."""

    study: Study
    freeze_id: str
    new_results: bool
    out: Path | None
    summary: str

    def results(self, table: str | None = None) -> Table:
        """A results table of this freeze (default: the study's main one).
        Example: evaluation.results("run_measures").to_pandas()"""
        return self.study.results(table, freeze=self.freeze_id)

    def __str__(self) -> str:
        return self.summary

    def _repr_html_(self) -> str:
        return f"<p>evaluated under freeze {html.escape(self.freeze_id)}</p><pre>{html.escape(self.summary)}</pre>"


@dataclass(frozen=True)
class StudyStatus:
    """`rankhouse study status`'s lines, and the stage (new, prepared, frozen, evaluated, with
    ` (changed since the freeze)` where the latest freeze no longer verifies)."""

    lines: tuple[str, ...]

    @property
    def stage(self) -> str:
        return next(line.split(None, 1)[1] for line in self.lines if line.startswith("stage "))

    def __str__(self) -> str:
        return "\n".join(self.lines)

    def _repr_html_(self) -> str:
        return f"<pre>{html.escape(str(self))}</pre>"


class Study:
    """A study's protocol on a warehouse, with the stages of `rankhouse study`: prepare (no labels),
    freeze, evaluate (labels behind the gate), run (all three), status, and its results. Each stage
    opens the warehouse as the command does and closes it; errors are rankhouse.errors' (GateError:
    the labels stay closed; FreezeError: a freeze refused) with the command's message.

    Example:
        >>> study = rankhouse.Study("studies/trec_sample.toml", "sample.duckdb")  # doctest: +SKIP
        >>> study.prepare(); study.freeze(); study.evaluate()  # doctest: +SKIP
        >>> study.results().to_pandas()  # doctest: +SKIP
    """

    @_reported
    def __init__(
        self,
        protocol: str | os.PathLike,
        db: str | os.PathLike = DEFAULT_DB,
        *,
        freezes: str | os.PathLike | None = None,
        progress: bool = False,
    ) -> None:
        from rankhouse.studies import check_protocol
        from rankhouse.study import Protocol

        self.protocol = Protocol.load(protocol)
        check_protocol(self.protocol)
        self.db = str(db)
        self.freezes = None if freezes is None else Path(freezes)
        self.progress = progress

    @property
    def name(self) -> str:
        """The study's name (its namespace in the warehouse)."""
        return self.protocol.name

    def _session(self, read_only: bool = False) -> tuple[Warehouse, Any]:
        from rankhouse.progress import Progress, TextProgress
        from rankhouse.warehouse import Warehouse

        sink = TextProgress() if self.progress else Progress()
        return Warehouse(self.db, read_only=read_only, namespace=self.name, say=sink.say), sink

    def _staged(self, work: Callable[[Any], Any], read_only: bool = False) -> Any:
        from rankhouse.cli.study import _study

        wh, sink = self._session(read_only)
        with wh:
            return work(_study(self.protocol, wh, self.freezes, sink))

    @_reported
    def prepare(self, reload: bool = False, no_smoke: str | None = None) -> list:
        """Load the label-free inputs and build the prepare models (`rankhouse study prepare`); the model
        runs (model, fingerprint, status, rows, seconds).  Example: study.prepare()"""
        return self._staged(lambda studied: studied.prepare(reload, no_smoke))

    @_reported
    def freeze(self, supersedes: str | None = None, reason: str | None = None, full: bool = False) -> Frozen:
        """Freeze the prepared study (`rankhouse study freeze`); a study that changed since its latest
        freeze needs `supersedes` (that freeze's id) and a `reason`.  Example: study.freeze().freeze_id"""

        def freeze(studied: Any) -> Frozen:
            frozen, new = studied.freeze(supersedes, reason, full)
            return Frozen(frozen.freeze_id, frozen.path, frozen.file_sha256, new)

        return self._staged(freeze)

    @_reported
    def evaluate(
        self, out: str | os.PathLike | None = None, reload: bool = False, full: bool = False
    ) -> StudyEvaluation:
        """Verify the latest freeze, open the labels, evaluate, write the outputs (`out`, default
        <db>.d/out/<study>/) as `rankhouse study evaluate` does.  Example: print(study.evaluate())"""
        return self._evaluated(out, lambda studied: None, reload, full)

    @_reported
    def run(self, out: str | os.PathLike | None = None) -> StudyEvaluation:
        """prepare, freeze (reusing an identical freeze) and evaluate, as `rankhouse study run`.
        Example: rankhouse.Study("studies/trec_sample.toml", "sample.duckdb").run()"""

        def before(studied: Any) -> None:
            studied.prepare()
            studied.freeze()

        return self._evaluated(out, before)

    def _evaluated(
        self, out: str | os.PathLike | None, before: Callable[[Any], None], reload: bool = False, full: bool = False
    ) -> StudyEvaluation:
        from rankhouse.cli.study import _evaluate, _output_dir

        folder = _output_dir(self.protocol, None if out is None else Path(out), self.db)
        shown: list[str] = []

        def evaluate(studied: Any) -> StudyEvaluation:
            before(studied)
            evaluation = _evaluate(studied, folder, reload, full, show=shown.append)
            return StudyEvaluation(self, evaluation.freeze.freeze_id, evaluation.new_results, folder, shown[-1])

        return self._staged(evaluate)

    @_reported
    def status(self, full: bool = False) -> StudyStatus:
        """Where the study stands (`rankhouse study status`): stage, inputs, models, freezes and whether
        the latest is intact; read-only.  Example: study.status().stage"""
        return self._staged(lambda studied: StudyStatus(tuple(studied.status(full))), read_only=True)

    @_reported
    def results(self, table: str | None = None, freeze: str | None = None) -> Table:
        """A table of the study's results (`<study>.results.<table>`, label-free: no gate needed) for a freeze
        (default: the latest evaluated one), without its freeze_id column. Default table: the one `rankhouse
        demo` points to (retrieval_metrics for a retrieval study, else run_measures).
        Example: study.results("run_measures").to_pandas()"""
        table = table or ("retrieval_metrics" if self.protocol.outputs.get("writer") == "retrieval" else "run_measures")
        with connect(self.db) as con:
            attached = con.sql("SELECT database_name FROM duckdb_databases()").to_pydict()["database_name"]
            known: list[str] = []
            if self.name in attached:  # the study's namespace, once something of it was published
                query = f'SELECT freeze_id FROM "{self.name}".meta.evaluations ORDER BY evaluated_at DESC'
                known = list(dict.fromkeys(con.sql(query).to_pydict()["freeze_id"]))
            if not known:
                raise RankhouseError(f"study {self.name} has no evaluated freeze yet: evaluate it first")
            freeze = freeze or known[0]
            if freeze not in known:
                raise RankhouseError(
                    f"freeze {freeze} of study {self.name} was not evaluated; evaluated: {', '.join(known)}"
                )
            names = con.sql(
                "SELECT table_name FROM duckdb_tables() WHERE database_name = ? AND schema_name = 'results'",
                [self.name],
            ).to_pydict()["table_name"]
            if table not in names:
                from rankhouse.errors import did_you_mean

                raise RankhouseError(
                    f"study {self.name} has no results table {table!r}{did_you_mean(table, names)} "
                    f"(its results: {', '.join(sorted(names))})"
                )
            return con.sql(
                f'SELECT * EXCLUDE (freeze_id) FROM "{self.name}".results."{table}" WHERE freeze_id = ? ORDER BY ALL',
                [freeze],
            )

    def __repr__(self) -> str:
        return f"<rankhouse.Study {self.name} ({self.protocol.path}) on {self.db}>"
