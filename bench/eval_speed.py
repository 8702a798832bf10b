"""Speed of evaluation, from files to numbers: rankhouse against pytrec_eval and ranx.

A generated run of 10,000 queries x 1,000 documents (distinct scores, so no tie rule matters) with
graded qrels (50 judged documents per query, grades 0-3); measures AP, nDCG@10, P@10, R@100, RR.
Each system runs in a fresh process, one after the other, on this machine; each reports the time
from reading the files to having the mean of every measure. ranx compiles with numba: its first call
(with an empty numba cache) is reported apart from its warm time (the same call again).

    python bench/eval_speed.py [--queries 10000] [--docs 1000] [--out bench/out]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from peers import run_child

MEASURES = {
    "rankhouse": ["AP", "nDCG@10", "P@10", "R@100", "RR"],
    "pytrec_eval": ["map", "ndcg_cut_10", "P_10", "recall_100", "recip_rank"],
    "ranx": ["map", "ndcg@10", "precision@10", "recall@100", "mrr"],
}
JUDGED = 50


def generate(out: Path, queries: int, docs: int, seed: int = 20261130) -> tuple[Path, Path]:
    """Write run.txt and qrels.txt (deterministic for a seed); reuse them if present."""
    run_path, qrels_path = out / f"run_{queries}x{docs}.txt", out / f"qrels_{queries}x{docs}.txt"
    if run_path.exists() and qrels_path.exists():
        return run_path, qrels_path
    import pyarrow as pa
    import pyarrow.csv as pacsv

    rng = np.random.default_rng(seed)
    collection = 1_000_000
    qid = np.repeat(np.arange(queries), docs)
    docno = np.concatenate([rng.choice(collection, docs, replace=False) for _ in range(queries)])
    rank = np.tile(np.arange(1, docs + 1), queries)
    score = (docs - rank + 1) / docs  # distinct and exact in float32
    run = pa.table({
        "qid": pa.array(np.char.add("q", qid.astype(str))), "q0": pa.array(np.full(len(qid), "Q0")),
        "docno": pa.array(np.char.add("d", docno.astype(str))), "rank": rank, "score": score,
        "tag": pa.array(np.full(len(qid), "bench")),
    })  # fmt: skip
    options = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    pacsv.write_csv(run, run_path, options)
    # judged: 30 retrieved documents (biased to the top) and 20 others, grades 0-3
    judged_q, judged_d, grades = [], [], []
    for q in range(queries):
        top = docno[q * docs : (q + 1) * docs]
        picked = rng.choice(docs, 30, replace=False, p=np.linspace(2, 0.1, docs) / np.linspace(2, 0.1, docs).sum())
        others = rng.choice(collection, 20, replace=False)
        chosen = np.unique(np.concatenate([top[picked], others]))
        judged_q.append(np.full(len(chosen), q))
        judged_d.append(chosen)
        grades.append(rng.choice(4, len(chosen), p=[0.5, 0.25, 0.15, 0.1]))
    qrels = pa.table({
        "qid": pa.array(np.char.add("q", np.concatenate(judged_q).astype(str))),
        "iter": pa.array(np.full(sum(map(len, judged_q)), "0")),
        "docno": pa.array(np.char.add("d", np.concatenate(judged_d).astype(str))),
        "rel": np.concatenate(grades),
    })  # fmt: skip
    pacsv.write_csv(qrels, qrels_path, options)
    return run_path, qrels_path


def run_rankhouse(run: str, qrels: str) -> dict:
    from rankhouse.evaluation import evaluate
    from rankhouse.warehouse import Warehouse

    start = time.perf_counter()
    with Warehouse(":memory:") as wh:
        result = evaluate(wh, qrels, [run], MEASURES["rankhouse"])
    seconds = time.perf_counter() - start
    summary = result.summary[result.runs[0]]
    return {"seconds": seconds, "values": [summary[m] for m in MEASURES["rankhouse"]]}


def run_pytrec_eval(run: str, qrels: str) -> dict:
    import pytrec_eval

    start = time.perf_counter()
    with open(qrels) as f:
        judgments = pytrec_eval.parse_qrel(f)
    with open(run) as f:
        ranking = pytrec_eval.parse_run(f)
    requests = {"map", "ndcg_cut.10", "P.10", "recall.100", "recip_rank"}
    per_query = pytrec_eval.RelevanceEvaluator(judgments, requests).evaluate(ranking)
    means = [float(np.mean([v[m] for v in per_query.values()])) for m in MEASURES["pytrec_eval"]]
    return {"seconds": time.perf_counter() - start, "values": means}


def run_ranx(run: str, qrels: str) -> dict:
    from ranx import Qrels, Run, evaluate

    def once() -> tuple[float, list[float]]:
        start = time.perf_counter()
        scores = evaluate(Qrels.from_file(qrels, kind="trec"), Run.from_file(run, kind="trec"), MEASURES["ranx"])
        return time.perf_counter() - start, [float(scores[m]) for m in MEASURES["ranx"]]

    first, _ = once()
    warm, values = once()
    return {"seconds": warm, "first_call_seconds": first, "values": values}


SYSTEMS = {"rankhouse": run_rankhouse, "pytrec_eval": run_pytrec_eval, "ranx": run_ranx}


def child(system: str, run: str, qrels: str) -> None:
    print(json.dumps(SYSTEMS[system](run, qrels)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--docs", type=int, default=1_000)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "out")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    args.out.mkdir(parents=True, exist_ok=True)
    print(f"generating {args.queries:,} queries x {args.docs:,} documents ...", file=sys.stderr)
    run, qrels = generate(args.out, args.queries, args.docs)
    results = {}
    for system in SYSTEMS:
        print(f"running {system} ...", file=sys.stderr)
        results[system] = run_child(__file__, system, str(run), str(qrels))
    reference = results["pytrec_eval"]["values"]
    for system, result in results.items():
        gap = max(abs(a - b) for a, b in zip(result["values"], reference))
        result["max_difference_from_pytrec_eval"] = gap
    rh = results["rankhouse"]["seconds"]
    lines = [
        f"evaluation, files to numbers, {args.queries:,} queries x {args.docs:,} documents "
        f"({args.queries * args.docs:,} run lines), measures AP, nDCG@10, P@10, R@100, RR",
        "",
        "| system | seconds | rankhouse speed-up | peak memory (MB) | max difference of the means from pytrec_eval |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for system, result in results.items():
        label = f"{system} (warm: second call)" if "first_call_seconds" in result else system
        lines.append(
            f"| {label} | {result['seconds']:.2f} | {result['seconds'] / rh:.2f}x | {result['peak_rss_mb']:,.0f} | "
            f"{result['max_difference_from_pytrec_eval']:.1e} |"
        )
        if "first_call_seconds" in result:
            first = result["first_call_seconds"]
            lines.append(f"| {system} (first call, numba compiling) | {first:.2f} | {first / rh:.2f}x | | |")
    print("\n".join(lines))
    (args.out / "eval_speed.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
