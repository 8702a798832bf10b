"""Expected values from the oracles: pytrec_eval (trec_eval 9.0.8), ir_measures and trec_eval 10 outputs.

pytrec_eval, as trec_eval 9, compares scores as 32-bit floats: compare it with rankhouse evaluated with
`EvalOptions(score_precision="float")`. trec_eval 10.0 (rankhouse's default), ranx and ir_measures' own
Python providers compare doubles."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytrec_eval

from rankhouse.evaluation import EvalOptions, evaluate
from rankhouse.warehouse import Warehouse

# canonical family -> pytrec_eval's (request name, result name without the cutoff)
PYTREC = {
    "AP": ("map", "map"), "AP@": ("map_cut", "map_cut"), "nDCG": ("ndcg", "ndcg"),
    "nDCG@": ("ndcg_cut", "ndcg_cut"), "P@": ("P", "P"), "R@": ("recall", "recall"),
    "RR": ("recip_rank", "recip_rank"), "Rprec": ("Rprec", "Rprec"), "Success@": ("success", "success"),
    "Bpref": ("bpref", "bpref"), "NumRet": ("num_ret", "num_ret"), "NumRel": ("num_rel", "num_rel"),
    "NumRelRet": ("num_rel_ret", "num_rel_ret"),
}  # fmt: skip

EVERY_MEASURE = [
    "AP", "AP@10", "AP@100", "nDCG", "nDCG@5", "nDCG@10", "nDCG@100", "P@1", "P@5", "P@10", "P@100",
    "P@1000", "R@5", "R@10", "R@100", "R@1000", "RR", "Rprec", "Success@1", "Success@5", "Success@10",
    "Bpref", "NumRet", "NumRel", "NumRelRet",
]  # fmt: skip


def pytrec_key(canonical: str) -> tuple[str, str]:
    """(measure request for pytrec_eval, key of its result) for a canonical measure name."""
    family, _, cutoff = canonical.partition("@")
    if cutoff:
        request, result = PYTREC[family + "@"]
        return f"{request}.{cutoff}", f"{result}_{cutoff}"
    return PYTREC[family]


def pytrec_per_query(
    qrels: dict, run: dict, measures: list[str], level: int = 1, judged_only: bool = False
) -> dict[str, dict[str, float]]:
    """{qid: {canonical: value}} from pytrec_eval."""
    keys = {m: pytrec_key(m) for m in measures}
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels, {request for request, _ in keys.values()}, relevance_level=level, judged_docs_only_flag=judged_only
    )
    raw = evaluator.evaluate(run)
    return {qid: {m: values[key] for m, (_, key) in keys.items()} for qid, values in raw.items()}


def rankhouse_per_query(
    qrels_path: Path, run_path: Path, measures: list[str], options: EvalOptions = EvalOptions()
) -> dict[str, dict[str, float]]:
    """{qid: {canonical: value}} from rankhouse's measure models."""
    with Warehouse(":memory:") as wh:
        result = evaluate(wh, qrels_path, [run_path], measures, options)
    return result.per_query[result.runs[0]]


def trec_order_truncate(run: dict[str, dict[str, float]], depth: int) -> dict[str, dict[str, float]]:
    """The first `depth` documents per query in trec_eval's order (float32 score desc, docno desc)."""
    cut = {}
    for qid, docs in run.items():
        ranked = sorted(docs.items(), key=lambda d: (np.float32(d[1]), d[0].encode()), reverse=True)
        cut[qid] = dict(ranked[:depth])
    return cut


def float_only_ties(run_path: Path) -> int:
    """Pairs of a query's scores in a run file that are equal as 32-bit floats but not as doubles: where
    trec_eval 9's order (pytrec_eval's) and trec_eval 10's differ."""
    found = 0
    for line_docs in _run_scores(run_path).values():
        as_float = Counter(np.float32(s) for s in line_docs)
        as_double = Counter(line_docs)
        found += sum(n - 1 for n in as_float.values()) - sum(n - 1 for n in as_double.values())
    return found


def _run_scores(path: Path) -> dict[str, list[float]]:
    scores: dict[str, list[float]] = {}
    for line in Path(path).read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            fields = line.split()
            scores.setdefault(fields[0], []).append(float(fields[4]))
    return scores


def read_trec_eval_output(path: Path) -> dict[tuple[str, str], str]:
    """{(measure, qid): printed value} from a trec_eval output file."""
    values = {}
    for line in Path(path).read_text().splitlines():
        measure, qid, value = re.split(r"\s*\t", line.strip())
        values[(measure, qid)] = value
    return values
