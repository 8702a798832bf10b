"""Fusion in a throw-away warehouse, read back by the original ids: the fusion study's fuse_runs on runs given
as {arm: {qid: {docno: score}}} (tests/studies/fusion/test_fusion.py, tests/measures/test_exact_ties.py)."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from rankhouse.studies.fusion.fuse import fuse_runs
from rankhouse.warehouse import Warehouse


def write_run(path: Path, run: dict[str, dict[str, float]]) -> Path:
    """A six-field TREC run; ranks are line positions (fusion ranks by score, as trec_eval does)."""
    lines = [
        f"{qid} Q0 {docno} {rank} {float(score)!r} test\n"
        for qid, docs in run.items()
        for rank, (docno, score) in enumerate(docs.items(), start=1)
    ]
    path.write_text("".join(lines))
    return path


@dataclass
class Fused:
    """What one fusion build produced, keyed by the original ids."""

    p: dict[tuple[str, str, str], tuple[float, float, int]]  # (arm, qid, docno) -> (score, p, m)
    rules: dict[str, dict[tuple[str, str], tuple[float, int]]]  # rule -> (qid, docno) -> (score, rank)


def fuse(runs: dict, nulls: dict, depth: int, extra: dict | None = None) -> Fused:
    """Fuse the runs in a throw-away warehouse with rankhouse.studies.fusion.fuse.fuse_runs."""
    with tempfile.TemporaryDirectory() as tmp, Warehouse(":memory:") as wh:
        arms = {arm: write_run(Path(tmp) / f"{arm}.run", run) for arm, run in runs.items()}
        null_runs = {arm: write_run(Path(tmp) / f"{arm}.null.run", run) for arm, run in nulls.items()}
        fuse_runs(wh, arms, null_runs, depth=depth, extra=extra)
        keys = """
            JOIN models.run_query_keys AS q ON q.query_row = t.query_row
            JOIN models.run_document_keys AS d ON d.doc_row = t.doc_row
        """
        p_rows = wh.sql(
            f"SELECT t.arm, q.qid, d.docno, t.score, t.p, t.reference_size FROM models.arm_p_values AS t {keys}"
        )
        rule_rows = wh.sql(f"SELECT t.rule, q.qid, d.docno, t.score, t.rank FROM models.fused_rankings AS t {keys}")
    rules: dict = {}
    for rule, qid, docno, score, rank in rule_rows:
        rules.setdefault(rule, {})[(qid, docno)] = (score, rank)
    return Fused({(arm, q, d): (s, p, m) for arm, q, d, s, p, m in p_rows}, rules)
