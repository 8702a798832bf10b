"""Speed of evaluation, from files to numbers: rankhouse against pytrec_eval and ranx, at several sizes.

A generated run of Q queries x 1,000 documents (distinct scores, so no tie rule matters) with graded
qrels (50 judged documents per query, grades 0-3); measures AP, nDCG@10, P@10, R@100, RR. By default
10,000, 20,000 and 40,000 queries (10M, 20M and 40M run lines), to show how each system's time and
peak memory grow. Each system runs in a fresh process, one after the other, on this machine, and
reports the time from reading the files to having the mean of every measure; the process's peak
memory is its own (wait4). rankhouse runs as `rankhouse eval` does without -q (per-query values are
computed and stored, not read back). ranx compiles with numba: its first call (with an empty numba
cache) is reported apart from its warm time (the same call again). A peer that is not installed is
named and left out. A last row, "one DuckDB statement (floor)", computes the same means in one
DuckDB statement reading the two files (its own CSV reader, no checks, nothing stored): what the work
costs with no warehouse around it, the floor rankhouse is measured against.

Whole process to whole process: with TREC_EVAL set to a trec_eval executable (10.0, the C program; build
it outside the repository), `rankhouse eval` (python -m rankhouse eval, the same measures) and
`$TREC_EVAL -m map -m ndcg_cut.10 -m P.10 -m recall.100 -m recip_rank` run as commands on the same files,
each timed from its start to its exit (a table of their own per size). Without TREC_EVAL they are left
out, and the output says so.

Timings on a shared 2-core machine move by 10-30% from one run to the next: with --repeat N, rankhouse,
pytrec_eval and the floor (and the whole processes) run N times each, alternating, and the tables give the
median with every run beside it; ranx runs once (a run is two calls, and takes minutes at 40,000 queries).

    [TREC_EVAL=/path/to/trec_eval] python bench/eval_speed.py [--queries 10000 20000 40000] [--docs 1000]
        [--repeat 3] [--out bench/out] [--write-docs]
    python bench/eval_speed.py --from-results bench/out/eval_speed.json --write-docs   # an earlier run's section
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import peers
from peers import (
    add_write_docs_option,
    installed,
    machine,
    own_peak_mb,
    results_file,
    rewrite_section,
    run_child,
    run_measured,
)

MEASURES = {
    "rankhouse": ["AP", "nDCG@10", "P@10", "R@100", "RR"],
    "pytrec_eval": ["map", "ndcg_cut_10", "P_10", "recall_100", "recip_rank"],
    "ranx": ["map", "ndcg@10", "precision@10", "recall@100", "mrr"],
}
JUDGED = 50
FLOOR = "one DuckDB statement (floor)"
TREC_EVAL = "TREC_EVAL"  # the environment variable naming trec_eval's executable
TREC_EVAL_MEASURES = ["map", "ndcg_cut.10", "P.10", "recall.100", "recip_rank"]
TREC_EVAL_LABELS = ["map", "ndcg_cut_10", "P_10", "recall_100", "recip_rank"]  # as it prints them


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


# The floor: trec_eval's order (score descending, then docno descending), the measures over the judged
# documents of each query of the qrels that the run retrieved (pytrec_eval's and trec_eval's queries),
# gains the grades, relevant a grade of at least 1.
FLOOR_SQL = """
WITH run AS (
    SELECT * FROM read_csv(?, delim = ' ', header = false, quote = '', escape = '',
        columns = {'qid': 'VARCHAR', 'q0': 'VARCHAR', 'docno': 'VARCHAR', 'rank': 'BIGINT', 'score': 'DOUBLE',
                   'tag': 'VARCHAR'})
),
qrels AS (
    SELECT * FROM read_csv(?, delim = ' ', header = false, quote = '', escape = '',
        columns = {'qid': 'VARCHAR', 'iter': 'VARCHAR', 'docno': 'VARCHAR', 'rel': 'BIGINT'})
),
ranked AS (
    SELECT qid, docno, row_number() OVER (PARTITION BY qid ORDER BY score DESC, docno DESC) AS rank FROM run
),
judged AS (
    SELECT r.qid, r.rank, q.rel, row_number() OVER (PARTITION BY r.qid, q.rel >= 1 ORDER BY r.rank) AS nth
    FROM ranked AS r JOIN qrels AS q ON q.qid = r.qid AND q.docno = r.docno
),
ideal AS (
    SELECT qid, sum(rel / log2(i + 1)) FILTER (WHERE i <= 10) AS idcg, count(*) FILTER (WHERE rel >= 1) AS num_rel
    FROM (SELECT qid, rel, row_number() OVER (PARTITION BY qid ORDER BY rel DESC) AS i FROM qrels WHERE rel > 0)
    GROUP BY qid
),
per_query AS (
    SELECT
        i.qid,
        coalesce(sum(j.nth / j.rank) FILTER (WHERE j.rel >= 1), 0) / i.num_rel AS ap,
        coalesce(sum(j.rel / log2(j.rank + 1)) FILTER (WHERE j.rel > 0 AND j.rank <= 10), 0) / i.idcg AS ndcg,
        count(*) FILTER (WHERE j.rel >= 1 AND j.rank <= 10) / 10 AS p10,
        count(*) FILTER (WHERE j.rel >= 1 AND j.rank <= 100) / i.num_rel AS r100,
        coalesce(1 / min(j.rank) FILTER (WHERE j.rel >= 1), 0) AS rr
    FROM ideal AS i
    JOIN judged AS j ON j.qid = i.qid
    WHERE i.qid IN (SELECT qid FROM run)
    GROUP BY i.qid, i.num_rel, i.idcg
)
SELECT avg(ap), avg(ndcg), avg(p10), avg(r100), avg(rr) FROM per_query
"""


def run_floor(run: str, qrels: str) -> dict:
    """The measures' means in one DuckDB statement from the files (FLOOR_SQL). Every query of the bench's
    qrels has a relevant document, and every query of its run a judged one."""
    import duckdb

    start = time.perf_counter()
    values = duckdb.connect().execute(FLOOR_SQL, [run, qrels]).fetchone()
    return {"seconds": time.perf_counter() - start, "values": [float(v) for v in values]}


SYSTEMS = {"rankhouse": run_rankhouse, "pytrec_eval": run_pytrec_eval, "ranx": run_ranx, FLOOR: run_floor}
MODULES = {"rankhouse": "rankhouse", "pytrec_eval": "pytrec_eval", "ranx": "ranx", FLOOR: "duckdb"}  # needed installed
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
    alternating, but the ONCE systems), compare the means; then, with TREC_EVAL set, the whole processes."""
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
    size = {"queries": queries, "docs": docs, "run_mb": run.stat().st_size / 2**20, "systems": results}
    if os.environ.get(TREC_EVAL):
        size["processes"] = whole_processes(os.environ[TREC_EVAL], run, qrels, repeat)
    return size


def whole_processes(trec_eval: str, run: Path, qrels: Path, repeat: int) -> dict:
    """`rankhouse eval` and trec_eval as commands on the same files, `repeat` times each, alternating: each
    one's wall seconds from start to exit (the median, every run), CPU seconds, peak memory (polled every
    half second: wait4's would count the memory of this process, whose child it is) and printed means (4
    places; they must agree)."""
    commands = {
        "rankhouse eval": [
            sys.executable,
            "-m",
            "rankhouse",
            "eval",
            *(a for m in MEASURES["rankhouse"] for a in ("-m", m)),
        ],
        "trec_eval": [trec_eval, *(a for m in TREC_EVAL_MEASURES for a in ("-m", m))],
    }
    labels = {"rankhouse eval": MEASURES["rankhouse"], "trec_eval": TREC_EVAL_LABELS}
    done: dict[str, list[dict]] = {name: [] for name in commands}
    for turn in range(repeat):
        for name, command in commands.items():
            print(f"running {name} as a command on {run.name} (run {turn + 1}) ...", file=sys.stderr)
            result = run_measured([*command, str(qrels), str(run)])
            if result["returncode"]:
                sys.exit(f"{' '.join(command)} failed:\n{result['stderr']}")
            printed = {line.split("\t")[0].strip(): line.split("\t")[2] for line in result["stdout"].splitlines()}
            done[name].append({
                "seconds": result["wall_seconds"], "cpu_seconds": result["cpu_seconds"],
                "peak_rss_mb": result["peak_tree_rss_mb"], "values": [printed[label] for label in labels[name]],
            })  # fmt: skip
    results = {name: {**summary(runs), "cpu": [r["cpu_seconds"] for r in runs]} for name, runs in done.items()}
    if results["rankhouse eval"]["values"] != results["trec_eval"]["values"]:
        sys.exit(f"rankhouse eval and trec_eval print different means: {results}")
    return results


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


def processes_table(size: dict) -> list[str]:
    """The whole-process table of a size (with TREC_EVAL): `rankhouse eval` and trec_eval as commands."""
    if "processes" not in size:
        return []
    processes = size["processes"]
    base = processes["rankhouse eval"]["seconds"]
    lines = [
        "Whole process to whole process (each a command, from its start to its exit; the same means printed):",
        "",
        "| command | seconds | relative to rankhouse eval | CPU seconds | peak memory (MB, polled) |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for name, result in processes.items():
        ratio = relative(result["seconds"], base) if name != "rankhouse eval" else "1.00x"
        cpu = ", ".join(f"{c:.2f}" for c in result["cpu"])
        lines.append(f"| {name} | {seconds(result)} | {ratio} | {cpu} | {result['peak_rss_mb']:,.0f} |")
    return [*lines, ""]


def section(results: dict) -> str:
    """The section of docs/performance.md: one table per size, then how time and memory grow."""
    env = results["machine"]
    versions = ", ".join(f"{name} {version}" for name, version in results["versions"].items())
    reference = "pytrec_eval" if "pytrec_eval" in results["sizes"][0]["systems"] else "rankhouse"
    lines = [
        f"Measured {env['date']} at {env['commit']} on {env['cores']} cores and {env['memory_gb']} GB (load average "
        f"{env['load_average']:.1f} at the start; {versions}), each system in a fresh process, one after the other"
        + (
            f"; rankhouse, pytrec_eval and the floor {results['repeat']} times each, alternating (the median, every "
            "run in parentheses), ranx once:"
            if results.get("repeat", 1) > 1
            else ":"
        ),
        "",
    ]
    for missing in results["missing"]:
        lines += [f"{missing}: not installed here, left out.", ""]
    if not results.get("trec_eval"):
        lines += [f"trec_eval (the C program): {TREC_EVAL} not set, whole processes left out.", ""]
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
            label = f"{label}, the same measures read from the files" if system == FLOOR else label
            ratio = relative(result["seconds"], rh) if system != "rankhouse" else "1.00x"
            lines.append(
                f"| {label} | {seconds(result)} | {ratio} | {result['peak_rss_mb']:,.0f} | "
                f"{result['max_difference_from_reference']:.1e} |"
            )
            if "first_call_seconds" in result:
                first = result["first_call_seconds"]
                lines.append(f"| {system}, first call (numba compiling) | {first:.2f} | {first / rh:.2f}x slower | | |")
        lines.append("")
        lines += processes_table(size)
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
    parser.add_argument("--from-results", type=Path, metavar="FILE", help="measure nothing: an earlier --out file")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    if args.from_results:
        text = section(json.loads(args.from_results.read_text()))
        print(text)
        if args.write_docs:
            rewrite_section(peers.PERFORMANCE, "eval_speed.py", text + "\n")
            print(f"rewrote {peers.PERFORMANCE}'s eval_speed.py section", file=sys.stderr)
        return
    target = results_file(args.out, "eval_speed")  # refused here, before anything is measured
    systems = [s for s in SYSTEMS if installed(MODULES[s])]
    missing = [s for s in SYSTEMS if s not in systems]
    for system in missing:
        print(f"{system}: not installed (pip install -e '.[bench]'), left out", file=sys.stderr)
    if not os.environ.get(TREC_EVAL):
        print(f"trec_eval: {TREC_EVAL} not set (the path of trec_eval's executable), left out", file=sys.stderr)
    from importlib.metadata import version

    results = {
        "machine": machine(),
        "versions": {MODULES[s]: version({"pytrec_eval": "pytrec-eval-terrier"}.get(s, MODULES[s])) for s in systems},
        "missing": missing,
        "repeat": args.repeat,
        "trec_eval": os.environ.get(TREC_EVAL),
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
