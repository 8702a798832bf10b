"""Fusing run files: load each arm's TREC run (and, for the p-value rules, its null run), build the
fusion models the asked rankings need, write each asked ranking as a TREC run.

The formulas are the SQL models under models/fusion/; this module only checks the request, loads and
writes. What is built follows from the DAG: `fused_rankings` reads the model `fusion_<rule>` of each rule
in its `fusion_rules` parameter, so asking rrf and rsf builds neither the p-values nor the null
references, and needs no null run.

    >>> with Warehouse(":memory:") as wh:  # doctest: +SKIP
    ...     fuse_runs(wh, {"bm25": "bm25.run", "dense": "dense.run"}, rules=["rrf", "rsf"])
    ...     write_fused_run(wh, "rrf", "rrf.run")
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rankhouse.errors import RankhouseError, did_you_mean
from rankhouse.paths import MODELS_DIR
from rankhouse.warehouse.catalog import parse_model

if TYPE_CHECKING:  # the rest is imported where it is used: `rankhouse fuse --help` reads RULES alone
    import pyarrow as pa

    from rankhouse.loaders.sources import LoadResult
    from rankhouse.progress import Progress
    from rankhouse.warehouse import Warehouse
    from rankhouse.warehouse.dag import Project
    from rankhouse.warehouse.runner import ModelRun

# The fusion rules: the one list, the fused_rankings model's `fusion_rules` (its header default).
RULES = tuple(parse_model(MODELS_DIR / "fusion" / "fused_rankings.sql", MODELS_DIR).parameters["fusion_rules"])
RUN_CORPUS = "runs"
NULL_MODEL = "null_references"  # the model that reads the null runs: a rule needs them if it reads this
SET_BY_THE_REQUEST = ("arm_runs", "corpus", "candidate_depth", "fusion_rules", "rank_arms")


def fusion_parameters(arms: Mapping[str, object], depth: int, extra: Mapping[str, object] | None = None) -> dict:
    """The model parameters that point the fusion models at run files named by arm."""
    return {"arm_runs": sorted(arms), "corpus": RUN_CORPUS, "candidate_depth": depth, **(extra or {})}


@dataclass(frozen=True)
class FusionPlan:
    """A checked fusion request: what to load and which models to build for the asked rankings.

    `rankings` are fusion rules (RULES) and arm names, in the order asked; `selection` the models to
    build (`+fused_rankings` for those rankings, in dependency order); `null_rules` the asked rules
    that read null runs (their models read null_references): the null runs are loaded only for them.

    >>> plan = plan_fusion({"bm25": "a.run", "dense": "b.run"}, {}, ["rrf", "rsf"])  # doctest: +SKIP
    >>> plan.null_rules, "arm_p_values" in plan.selection  # doctest: +SKIP
    ((), False)
    """

    arms: Mapping[str, str | Path]
    nulls: Mapping[str, str | Path]
    rankings: tuple[str, ...]
    params: dict
    project: Project
    selection: list[str]
    null_rules: tuple[str, ...]

    @property
    def unused_nulls(self) -> bool:
        """Whether null runs were given that no asked rule reads (they are then not loaded)."""
        return bool(self.nulls) and not self.null_rules


def plan_fusion(
    arms: Mapping[str, str | Path],
    nulls: Mapping[str, str | Path] | None = None,
    rankings: Sequence[str] | None = None,
    depth: int = 100,
    extra: Mapping[str, object] | None = None,
) -> FusionPlan:
    """Check a fusion request before anything is loaded and say what it builds; a request that cannot
    be fused is refused with one RankhouseError naming the problem.

    `rankings`: the fusion rules (RULES) and arm names wanted; None asks every rule and every arm (what a
    study ranks). Null runs (arm -> file) must be given for every arm when an asked rule reads them
    (the p-value rules: mixture, fisher, stouffer); otherwise they are not loaded (unused_nulls).
    `extra`: other model parameters (rrf_k, beta, ...), not those the request sets (arm_runs, corpus,
    candidate_depth, fusion_rules, rank_arms).

    >>> plan_fusion({"bm25": "a.run", "dense": "b.run"}, None, ["mixture"])  # doctest: +SKIP
    Traceback (most recent call last):
    RankhouseError: mixture reads every arm's null run; no null run for bm25, dense
    """
    nulls = dict(nulls or {})
    if len(arms) < 2:
        raise RankhouseError(f"fusion needs at least two arms, got {len(arms)}")
    for arm in arms:
        if not arm or arm.endswith(".null"):
            raise RankhouseError(f"arm name {arm!r}: must be non-empty and must not end in .null")
        if arm in RULES:
            raise RankhouseError(f"arm name {arm!r} is a fusion rule's name; name the arm otherwise")
    rankings = tuple(RULES) + tuple(sorted(arms)) if rankings is None else tuple(rankings)
    if not rankings:
        raise RankhouseError("no ranking asked: name a fusion rule or an arm")
    known = (*RULES, *sorted(arms))
    for position, name in enumerate(rankings):
        if name not in known:
            raise RankhouseError(
                f"unknown rule {name!r}{did_you_mean(name, known)} (the rules: {', '.join(RULES)}; "
                f"or an arm alone: {', '.join(sorted(arms))})"
            )
        if name in rankings[:position]:
            raise RankhouseError(f"rule {name} is asked twice")
    taken = sorted(set(extra or {}) & set(SET_BY_THE_REQUEST))
    if taken:
        raise RankhouseError(
            f"parameter {', '.join(taken)}: set by the fusion request (its arms, depth and rules), not as a parameter"
        )
    rules = [name for name in rankings if name in RULES]
    params = fusion_parameters(
        arms, depth, {**(extra or {}), "fusion_rules": rules, "rank_arms": len(rules) < len(rankings)}
    )
    from rankhouse.warehouse.dag import Project

    project = Project.load(params=params, closure=["fused_rankings"])  # parses only what it reads
    unread = sorted(set(extra or {}) - {key for model in project.models.values() for key in model.parameters})
    if unread:
        need = "needs" if len(rankings) == 1 else "need"
        raise RankhouseError(f"parameter {', '.join(unread)}: read by no model that {', '.join(rankings)} {need}")
    selection = project.select("+fused_rankings")
    null_rules = tuple(rule for rule in rules if NULL_MODEL in project.ancestors(f"fusion_{rule}"))
    missing, unknown = sorted(set(arms) - set(nulls)), sorted(set(nulls) - set(arms))
    if unknown:
        raise RankhouseError(f"null run for unknown arm {', '.join(unknown)} (the arms: {', '.join(sorted(arms))})")
    if null_rules and missing:
        verb = "reads" if len(null_rules) == 1 else "read"
        raise RankhouseError(
            f"{', '.join(null_rules)} {verb} every arm's null run; no null run for {', '.join(missing)}"
        )
    return FusionPlan(dict(arms), nulls, rankings, params, project, selection, null_rules)


def run_fusion(
    wh: Warehouse,
    plan: FusionPlan,
    progress: Progress | None = None,
    load: Callable[[Warehouse, object, str], LoadResult] | None = None,
) -> list[ModelRun]:
    """Load a plan's run files (or, with `load`, its runs in another form: the Python API's DataFrames),
    every arm's under its arm name (by default with the TREC run loader) and, when an asked rule reads
    them, its null run as `<arm>.null`; then build the plan's models.

    Example: run_fusion(wh, plan_fusion(arms, nulls, ["mixture"]), progress=TextProgress())
    """
    from rankhouse.loaders.trec import load_run
    from rankhouse.warehouse.runner import Runner

    load = load or load_run
    for arm, path in plan.arms.items():
        load(wh, path, arm)
        if plan.null_rules:
            load(wh, plan.nulls[arm], f"{arm}.null")
    return Runner(wh, plan.project, plan.params).run(plan.selection, progress=progress)


def fuse_runs(
    wh: Warehouse,
    arms: Mapping[str, str | Path],
    nulls: Mapping[str, str | Path] | None = None,
    depth: int = 100,
    extra: Mapping[str, object] | None = None,
    progress: Progress | None = None,
    rules: Sequence[str] | None = None,
) -> list[ModelRun]:
    """Fuse run files in a warehouse: plan_fusion (every check, before anything is loaded), then
    run_fusion. `rules`: the rules and arms to rank (None: every rule and arm; null runs then needed).

    >>> fuse_runs(wh, {"bm25": "a.run", "dense": "b.run"}, rules=["rrf", "rsf"])  # doctest: +SKIP
    """
    return run_fusion(wh, plan_fusion(arms, nulls, rules, depth, extra), progress)


def incomplete_candidates(wh: Warehouse) -> tuple[int, int]:
    """(incomplete, all) candidates of the fused run files: an incomplete one lacks a score from some
    arm's file, so the p-value rules leave it out (models/fusion/candidate_completeness.sql; built when
    a p-value rule is).

    >>> incomplete_candidates(wh)  # doctest: +SKIP
    (12, 3400)
    """
    incomplete, total = wh.sql(
        "SELECT count(*) FILTER (WHERE NOT complete), count(*) FROM models.candidate_completeness "
        "WHERE corpus = $corpus",
        {"corpus": RUN_CORPUS},
    )[0]
    return int(incomplete), int(total)


def write_fused_run(wh: Warehouse, rule: str, path: str | Path, tag: str | None = None) -> int:
    """Write one rule's fused ranking (or an arm's own, by arm name) as a six-field TREC run, queries
    in id order, scores at full precision (the shortest text that reads back as the same double);
    return the line count.

    >>> write_fused_run(wh, "rrf", "rrf.run")  # doctest: +SKIP
    1415478
    """
    tag = tag or f"rankhouse-{rule}"
    params = {"rule": rule, "corpus": RUN_CORPUS}
    lines = wh.sql(f"SELECT count(*) FROM models.fused_rankings AS f WHERE {FUSED_WHERE}", params)[0][0]
    if not lines:
        known = [r for (r,) in wh.sql("SELECT DISTINCT rule FROM models.fused_rankings ORDER BY rule")]
        raise RankhouseError(f"no fused ranking for rule {rule!r}; known: {', '.join(known) or 'none'}")
    lines_sql = f"""
        SELECT concat_ws(' ', qid, 'Q0', docno, rank, CAST(score AS VARCHAR), $tag) AS line
        FROM ({FUSED_ROWS}) ORDER BY query_row, rank
    """
    wh.export_lines(lines_sql, {**params, "tag": tag}, path)
    return lines


def fused_rows(wh: Warehouse, rules: Sequence[str]) -> pa.Table:
    """The fused rankings of `rules` (fusion rules or arm names) as an Arrow table: rule, query_id,
    doc_id, rank, score (the rows write_fused_run writes), by rule in the order given, query id, rank.

    >>> fused_rows(wh, ["rrf"]).column_names  # doctest: +SKIP
    ['rule', 'query_id', 'doc_id', 'rank', 'score']
    """
    import pyarrow as pa

    tables = [
        wh.con.sql(
            f"SELECT $rule AS rule, qid AS query_id, docno AS doc_id, rank, score FROM ({FUSED_ROWS}) "
            "ORDER BY query_row, rank",
            params={"rule": rule, "corpus": RUN_CORPUS},
        ).to_arrow_table()
        for rule in rules
    ]
    return pa.concat_tables(tables)


# One rule's fused ranking of run files by the files' ids ($rule, $corpus): what write_fused_run writes. Its
# rows go in query id order by query_row, which numbers the ids in that order (run_query_keys): a sort on
# integers, not on the ids' text.
FUSED_WHERE = "f.rule = $rule AND f.corpus = $corpus"
FUSED_ROWS = f"""
    SELECT q.qid, d.docno, f.rank, f.score, f.query_row
    FROM models.fused_rankings AS f
    JOIN models.run_query_keys AS q ON q.query_row = f.query_row
    JOIN models.run_document_keys AS d ON d.doc_row = f.doc_row
    WHERE {FUSED_WHERE}
"""
