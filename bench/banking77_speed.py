"""BM25 on BANKING77: the full ranking of all 10,003 training messages for each of the 3,080 test
messages, from the CSV files to ranked documents, by rankhouse's SQL models against bm25s and
rank_bm25. Each system runs in a fresh process, one after the other, on this machine.

- rankhouse: load the two CSV files, build the BM25 models and models.bm25_ranking, a table (all
  30.8M ranked pairs, ties by row index) with the array aggregate that BM25's model asks for.
- bm25s (numba-free default backend): the same tokens, method "lucene", k1 = 1.2, b = 0.75; index,
  then retrieve with k = 10,003 (a full ranking).
- rank_bm25: BM25Okapi on the same tokens; get_scores per query, then a stable argsort.
Encoder throughput against sentence-transformers is in bench/encoder_speed.py (it needs a bench
venv with torch); `--encoder` runs it too when that venv exists.

Per system: wall time (from the files to the ranked documents, measured inside the process), CPU time
(user + system, of the whole process: less noisy than wall time on a shared machine) and peak memory
(wait4's). `--repeat N` runs the systems N times, alternating, so that a machine's slow spell does not
fall on one system only. RANKHOUSE_MEMORY_LIMIT, when set, is DuckDB's memory_limit in the rankhouse
process (reported).

    python bench/banking77_speed.py [--repeat 3] [--write-docs] [--encoder /tmp/benchenv/bin/python]
    python bench/banking77_speed.py --from-results bench/out/banking77_speed.json --write-docs
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import peers
from peers import add_write_docs_option, installed, machine, own_peak_mb, results_file, rewrite_section, run_child

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data" / "banking77"


def texts(name: str) -> list[str]:
    with (DATA / name).open(newline="") as handle:
        return [row["text"] for row in csv.DictReader(handle)]


def tokenize(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", text.lower())


def run_rankhouse() -> dict:
    sys.path.insert(0, str(ROOT))  # this checkout's rankhouse, whichever the environment has installed
    from rankhouse.loaders import load_documents, load_queries
    from rankhouse.warehouse import Warehouse
    from rankhouse.warehouse.dag import Project
    from rankhouse.warehouse.runner import Runner

    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp, Warehouse(Path(tmp) / "bench.duckdb") as wh:
        load_documents(wh, DATA / "train.csv", "banking77")
        load_queries(wh, DATA / "test.csv", "banking77")
        project = Project.load(closure=["bm25_ranking"])  # as `rankhouse run -s +bm25_ranking` loads it
        Runner(wh, project, {"corpus": "banking77"}).run(project.select("+bm25_ranking"))  # a table
        rows, top = wh.sql("SELECT count(*), sum(CASE WHEN rank = 1 THEN doc_row END) FROM models.bm25_ranking")[0]
    return {"seconds": time.perf_counter() - start, "pairs": rows, "check": int(top)}


def run_bm25s() -> dict:
    import bm25s

    start = time.perf_counter()
    documents = [tokenize(t) for t in texts("train.csv")]
    queries = [list(dict.fromkeys(tokenize(t))) for t in texts("test.csv")]
    retriever = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
    retriever.index(documents, show_progress=False)
    ranked, _ = retriever.retrieve(queries, k=len(documents), show_progress=False, n_threads=2)
    return {"seconds": time.perf_counter() - start, "pairs": int(ranked.size), "check": int(ranked[:, 0].sum())}


def run_rank_bm25() -> dict:
    import numpy as np
    from rank_bm25 import BM25Okapi

    start = time.perf_counter()
    documents = [tokenize(t) for t in texts("train.csv")]
    queries = [list(dict.fromkeys(tokenize(t))) for t in texts("test.csv")]
    model = BM25Okapi(documents, k1=1.2, b=0.75)
    ranked = np.stack([np.argsort(-model.get_scores(q), kind="stable") for q in queries])
    return {"seconds": time.perf_counter() - start, "pairs": int(ranked.size), "check": int(ranked[:, 0].sum())}


SYSTEMS = {"rankhouse": run_rankhouse, "bm25s": run_bm25s, "rank_bm25": run_rank_bm25}
MODULES = {"rankhouse": "rankhouse", "bm25s": "bm25s", "rank_bm25": "rank_bm25"}  # what each needs installed
NAMES = {  # how docs/performance.md names each system ({version}: the installed one)
    "rankhouse": "rankhouse SQL models (`+bm25_ranking`, materialised: 30.8M ranked pairs)",
    "bm25s": "bm25s {version} (lucene, k = 10,003, 2 threads)",
    "rank_bm25": "rank_bm25 {version} (BM25Okapi, get_scores + argsort)",
}


def version(module: str) -> str:
    """The installed version of a peer's distribution (or '?')."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed_version

    try:
        return installed_version(module.replace("_", "-"))
    except PackageNotFoundError:
        return "?"


def joined(values: list[float], form: str) -> str:
    """Values in one cell, comma-separated.

    >>> joined([1.234, 2.0], ".2f")
    '1.23, 2.00'
    """
    return ", ".join(format(v, form) for v in values)


def section(results: dict) -> str:
    """The section of docs/performance.md: one row per system, its runs' seconds (and their ratio to bm25s' in the same
    round), CPU seconds and peak memory."""
    env, runs = results["environment"], results["runs"]
    lines = [
        f"Measured {env['date']} at {env['commit']} on {env['cores']} cores and {env['memory_gb']} GB, "
        f"{len(runs)} run{'s' if len(runs) > 1 else ''} of each system (alternating), each in a fresh process; "
        f"RANKHOUSE_MEMORY_LIMIT {results.get('memory_limit') or 'not set'}; load average (1 min) "
        f"{results['load_average'][0]:.1f} as it began, {results['load_average'][1]:.1f} as it ended:",
        "",
        "| system | seconds | relative to bm25s (same round) | CPU seconds | peak memory (MB) |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for system in SYSTEMS:
        rounds = [r for r in runs if system in r]
        if not rounds:
            lines.append(f"| {system} | not installed, left out | | | |")
            continue
        ratios = [f"{r[system]['seconds'] / r['bm25s']['seconds']:.2f}x" if "bm25s" in r else "n/a" for r in rounds]
        name = NAMES.get(system, system).format(version=results["versions"].get(system, "?"))
        measured = [r[system] for r in rounds]
        seconds = joined([m["seconds"] for m in measured], ".2f")
        cpu = joined([m["cpu_seconds"] for m in measured], ".1f")
        peaks = joined([m["peak_rss_mb"] for m in measured], ",.0f")
        lines.append(f"| {name} | {seconds} | {', '.join(ratios)} | {cpu} | {peaks} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--encoder", help="Python of the bench venv for bench/encoder_speed.py (optional).")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "out")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each system, alternating (default 1)")
    add_write_docs_option(parser)
    parser.add_argument("--from-results", type=Path, metavar="FILE", help="measure nothing: an earlier results file")
    args = parser.parse_args()
    if args.child:
        print(json.dumps({**SYSTEMS[args.child](), "own_peak_mb": own_peak_mb()}))
        return
    if args.from_results:
        results = json.loads(args.from_results.read_text())
    else:
        target = results_file(args.out, "banking77_speed")  # refused here, before anything is measured
        present = []
        for system in SYSTEMS:
            if installed(MODULES[system]):
                present.append(system)
            else:
                print(f"{system}: not installed (pip install -e '.[bench]'), left out", file=sys.stderr)
        results = {
            "environment": machine(),
            "memory_limit": os.environ.get("RANKHOUSE_MEMORY_LIMIT"),
            "versions": {s: version(MODULES[s]) for s in present if s != "rankhouse"},
            "runs": [],
        }
        before = os.getloadavg()[0]
        for n in range(args.repeat):
            run = {}
            for system in present:
                print(f"run {n + 1}: {system} ...", file=sys.stderr)
                run[system] = run_child(__file__, system)
            results["runs"].append(run)
        results["load_average"] = [before, os.getloadavg()[0]]
        target.write_text(json.dumps(results, indent=2))
    text = section(results)
    print("BM25 full ranking, BANKING77 (3,080 queries x 10,003 documents), files to ranked documents\n")
    print(text, end="")
    if args.write_docs:
        rewrite_section(peers.PERFORMANCE, "banking77_speed.py", text)
        print(f"rewrote {peers.PERFORMANCE}'s section of bench/banking77_speed.py", file=sys.stderr)
    if args.encoder:
        subprocess.run([args.encoder, str(ROOT / "bench" / "encoder_speed.py")], check=True)


if __name__ == "__main__":
    main()
