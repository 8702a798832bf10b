"""Fusing run files: load each arm's TREC run (and its null run), build the fusion models over them,
write one rule's fused ranking as a TREC run.

The formulas are the SQL models under models/fusion/; this module only loads and writes.

    >>> with Warehouse(":memory:") as wh:  # doctest: +SKIP
    ...     fuse_runs(wh, {"bm25": "bm25.run", "dense": "dense.run"},
    ...               {"bm25": "bm25.null.run", "dense": "dense.null.run"}, depth=100)
    ...     write_fused_run(wh, "mixture", "fused.run")
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from rankhouse.errors import RankhouseError
from rankhouse.loaders.trec import load_run
from rankhouse.paths import MODELS_DIR
from rankhouse.progress import Progress
from rankhouse.warehouse import Warehouse
from rankhouse.warehouse.catalog import parse_model
from rankhouse.warehouse.dag import Project
from rankhouse.warehouse.runner import ModelRun, Runner

# The fusion rules: the one list, the fused_rankings model's `fusion_rules` (its header default).
RULES = tuple(parse_model(MODELS_DIR / "fusion" / "fused_rankings.sql", MODELS_DIR).parameters["fusion_rules"])
RUN_CORPUS = "runs"


def fusion_parameters(arms: Mapping[str, object], depth: int, extra: Mapping[str, object] | None = None) -> dict:
    """The model parameters that point the fusion models at run files named by arm."""
    return {"arm_runs": sorted(arms), "corpus": RUN_CORPUS, "candidate_depth": depth, **(extra or {})}


def fuse_runs(
    wh: Warehouse,
    arms: Mapping[str, str | Path],
    nulls: Mapping[str, str | Path],
    depth: int = 100,
    extra: Mapping[str, object] | None = None,
    progress: Progress | None = None,
) -> list[ModelRun]:
    """Load every arm's run under its arm name and its null run as `<arm>.null`, then build
    `+fused_rankings`. Every arm needs a null run: the p-value rules read it."""
    if len(arms) < 2:
        raise RankhouseError(f"fusion needs at least two arms, got {len(arms)}")
    missing = sorted(set(arms) - set(nulls))
    unknown = sorted(set(nulls) - set(arms))
    if missing or unknown:
        raise RankhouseError(
            "every arm needs exactly one null run"
            + (f"; no null run for {', '.join(missing)}" if missing else "")
            + (f"; null run for unknown arm {', '.join(unknown)}" if unknown else "")
        )
    for arm, path in arms.items():
        if arm.endswith(".null") or not arm:
            raise RankhouseError(f"arm name {arm!r}: must be non-empty and must not end in .null")
        load_run(wh, path, arm)
        load_run(wh, nulls[arm], f"{arm}.null")
    params = fusion_parameters(arms, depth, extra)
    project = Project.load(params=params)
    return Runner(wh, project, params).run(project.select("+fused_rankings"), progress=progress)


def incomplete_candidates(wh: Warehouse) -> tuple[int, int]:
    """(incomplete, all) candidates of the fused run files: an incomplete one lacks a score from some
    arm's file, so the p-value rules leave it out (models/fusion/candidate_completeness.sql).

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
    return the line count."""
    tag = tag or f"rankhouse-{rule}"
    where = "f.rule = $rule AND f.corpus = $corpus"
    params = {"rule": rule, "corpus": RUN_CORPUS}
    lines = wh.sql(f"SELECT count(*) FROM models.fused_rankings AS f WHERE {where}", params)[0][0]
    if not lines:
        known = [r for (r,) in wh.sql("SELECT DISTINCT rule FROM models.fused_rankings ORDER BY rule")]
        raise RankhouseError(f"no fused ranking for rule {rule!r}; known: {', '.join(known) or 'none'}")
    lines_sql = f"""
        SELECT concat_ws(' ', q.qid, 'Q0', d.docno, f.rank, CAST(f.score AS VARCHAR), $tag) AS line
        FROM models.fused_rankings AS f
        JOIN models.run_query_keys AS q ON q.query_row = f.query_row
        JOIN models.run_document_keys AS d ON d.doc_row = f.doc_row
        WHERE {where}
        ORDER BY q.qid, f.rank
    """
    wh.export_lines(lines_sql, {**params, "tag": tag}, path)
    return lines
