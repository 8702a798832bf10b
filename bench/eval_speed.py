"""Speed of evaluation, from files to numbers: rankhouse against pytrec_eval and ranx, at several sizes.

A generated run of Q queries x 1,000 documents (distinct scores, so no tie rule matters) with graded
qrels (50 judged documents per query, grades 0-3); measures AP, nDCG@10, P@10, R@100, RR. By default
10,000, 20,000 and 40,000 queries (10M, 20M and 40M run lines), to show how each system's time and
peak memory grow. Each system runs in a fresh process, one after the other, on this machine, and
reports the time from reading the files to having the mean of every measure; the process's peak
memory is its own (wait4). rankhouse runs as `rankhouse eval` does without -q (per-query values are
computed and stored, not read back). ranx compiles with numba: its first call (with an empty numba
cache) is reported apart from its warm time (the same call again). A peer that is not installed is
named and left out.

Timings on a shared 2-core machine move by 10-30% from one run to the next: with --repeat N, rankhouse
and pytrec_eval (the pair the goal compares) run N times each, alternating, and the tables give the
median with every run beside it; ranx runs once (a run is two calls, and takes minutes at 40,000 queries).

    python bench/eval_speed.py [--queries 10000 20000 40000] [--docs 1000] [--repeat 3] [--out bench/out] [--write-docs]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import peers
from peers import add_write_docs_option, installed, machine, own_peak_mb, results_file, rewrite_section, run_child

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
        result = evaluate(wh, qrels, [run], MEASURES["rankhouse"], per_query=False)  # as `rankhouse eval` without -q
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
MODULES = {"rankhouse": "rankhouse", "pytrec_eval": "pytrec_eval", "ranx": "ranx"}  # what each needs installed
ONCE = {"ranx"}  # run once whatever --repeat says


def child(system: str, run: str, qrels: str) -> None:
    print(json.dumps({**SYSTEMS[system](run, qrels), "own_peak_mb": own_peak_mb()}))


def summary(runs: list[dict]) -> dict:
    """A system's runs as one result: the median seconds, every run's seconds (`runs`), the highest peak
    memory, the first run's values (and ranx's first-call time)."""
    return {
        **runs[0],
        "seconds": statistics.median(r["seconds"] for r in runs),
        "runs": [r["seconds"] for r in runs],
        "peak_rss_mb": max(r["peak_rss_mb"] for r in runs),
    }


def measure(out: Path, queries: int, docs: int, systems: list[str], repeat: int = 1) -> dict:
    """One size: generate (or reuse) its files, run each system in a fresh process (`repeat` times,
    alternating, but the ONCE systems), compare the means."""
    print(f"generating {queries:,} queries x {docs:,} documents ...", file=sys.stderr)
    run, qrels = generate(out, queries, docs)
    runs: dict[str, list[dict]] = {system: [] for system in systems}
    for turn in range(repeat):
        for system in systems:
            if turn and system in ONCE:
                continue
            print(f"running {system} on {queries:,} x {docs:,} (run {turn + 1}) ...", file=sys.stderr)
            runs[system].append(run_child(__file__, system, str(run), str(qrels)))
    results = {system: summary(done) for system, done in runs.items()}
    reference = results.get("pytrec_eval", results.get("rankhouse"))["values"]
    for result in results.values():
        result["max_difference_from_reference"] = max(abs(a - b) for a, b in zip(result["values"], reference))
    return {"queries": queries, "docs": docs, "run_mb": run.stat().st_size / 2**20, "systems": results}


def relative(seconds: float, base: float) -> str:
    """How `seconds` compares with `base`: `1.25x slower` or `2.00x faster`.

    >>> relative(2.5, 2.0), relative(1.0, 2.0)
    ('1.25x slower', '2.00x faster')
    """
    return f"{seconds / base:.2f}x slower" if seconds >= base else f"{base / seconds:.2f}x faster"


def seconds(result: dict) -> str:
    """A system's seconds: the median, and every run in parentheses if there were several.

    >>> seconds({"seconds": 5.0, "runs": [5.5, 5.0, 4.5]}), seconds({"seconds": 9.0, "runs": [9.0]})
    ('5.00 (5.50, 5.00, 4.50)', '9.00')
    """
    runs = result.get("runs", [result["seconds"]])
    return f"{result['seconds']:.2f}" + (f" ({', '.join(f'{r:.2f}' for r in runs)})" if len(runs) > 1 else "")


def section(results: dict) -> str:
    """The section of docs/performance.md: one table per size, then how time and memory grow."""
    env = results["machine"]
    versions = ", ".join(f"{name} {version}" for name, version in results["versions"].items())
    reference = "pytrec_eval" if "pytrec_eval" in results["sizes"][0]["systems"] else "rankhouse"
    lines = [
        f"Measured {env['date']} at {env['commit']} on {env['cores']} cores and {env['memory_gb']} GB (load average "
        f"{env['load_average']:.1f} at the start; {versions}), each system in a fresh process, one after the other"
        + (
            f"; rankhouse and pytrec_eval {results['repeat']} times each, alternating (the median, every run in "
            "parentheses), ranx once:"
            if results.get("repeat", 1) > 1
            else ":"
        ),
        "",
    ]
    for missing in results["missing"]:
        lines += [f"{missing}: not installed here, left out.", ""]
    for size in results["sizes"]:
        systems = size["systems"]
        rh = systems["rankhouse"]["seconds"]
        lines += [
            f"**{size['queries']:,} queries x {size['docs']:,} documents** ({size['queries'] * size['docs']:,} run "
            f"lines, {size['run_mb']:,.0f} MB):",
            "",
            "| system | seconds | relative to rankhouse | peak memory (MB) | "
            f"largest difference of a mean from {reference} |",
            "| --- | ---: | ---: | ---: | ---: |",
        ]
        for system, result in systems.items():
            label = f"{system}, warm (second call)" if "first_call_seconds" in result else system
            ratio = relative(result["seconds"], rh) if system != "rankhouse" else "1.00x"
            lines.append(
                f"| {label} | {seconds(result)} | {ratio} | {result['peak_rss_mb']:,.0f} | "
                f"{result['max_difference_from_reference']:.1e} |"
            )
            if "first_call_seconds" in result:
                first = result["first_call_seconds"]
                lines.append(f"| {system}, first call (numba compiling) | {first:.2f} | {first / rh:.2f}x slower | | |")
        lines.append("")
    if len(results["sizes"]) > 1:
        first, last = results["sizes"][0], results["sizes"][-1]
        growth = last["queries"] / first["queries"]
        parts = []
        for system in first["systems"]:
            a, b = first["systems"][system], last["systems"].get(system)
            if b:
                time, memory = b["seconds"] / a["seconds"], b["peak_rss_mb"] / a["peak_rss_mb"]
                parts.append(f"{system} {time:.1f}x the time and {memory:.1f}x the memory")
        lines += [
            f"From {first['queries']:,} to {last['queries']:,} queries ({growth:.0f}x the lines): {'; '.join(parts)}."
        ]
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, nargs="+", default=[10_000, 20_000, 40_000])
    parser.add_argument("--docs", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=1, help="runs of rankhouse and pytrec_eval per size (median)")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "out")
    add_write_docs_option(parser)
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    target = results_file(args.out, "eval_speed")  # refused here, before anything is measured
    systems = [s for s in SYSTEMS if installed(MODULES[s])]
    missing = [s for s in SYSTEMS if s not in systems]
    for system in missing:
        print(f"{system}: not installed (pip install -e '.[bench]'), left out", file=sys.stderr)
    from importlib.metadata import version

    results = {
        "machine": machine(),
        "versions": {s: version({"pytrec_eval": "pytrec-eval-terrier"}.get(s, s)) for s in systems},
        "missing": missing,
        "repeat": args.repeat,
        "sizes": [measure(args.out, queries, args.docs, systems, args.repeat) for queries in args.queries],
    }
    text = section(results)
    print(text)
    target.write_text(json.dumps(results, indent=2))
    if args.write_docs:
        rewrite_section(peers.PERFORMANCE, "eval_speed.py", text + "\n")
        print(f"rewrote {peers.PERFORMANCE}'s eval_speed.py section", file=sys.stderr)


if __name__ == "__main__":
    main()
