"""BM25 on BANKING77: the full ranking of all 10,003 training messages for each of the 3,080 test
messages, from the CSV files to ranked documents, by rankhouse's SQL models against bm25s and
rank_bm25. Each system runs in a fresh process, one after the other, on this machine.

- rankhouse: load the two CSV files, build the BM25 models, materialise models.bm25_ranking (all
  30.8M ranked pairs, ties by row index) with the array aggregate that BM25's model asks for.
- bm25s (numba-free default backend): the same tokens, method "lucene", k1 = 1.2, b = 0.75; index,
  then retrieve with k = 10,003 (a full ranking).
- rank_bm25: BM25Okapi on the same tokens; get_scores per query, then a stable argsort.
Encoder throughput against sentence-transformers is in bench/encoder_speed.py (it needs a bench
venv with torch); `--encoder` runs it too when that venv exists.

    python bench/banking77_speed.py [--encoder /tmp/benchenv/bin/python]
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from peers import installed, run_child

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data" / "banking77"


def texts(name: str) -> list[str]:
    with (DATA / name).open(newline="") as handle:
        return [row["text"] for row in csv.DictReader(handle)]


def tokenize(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", text.lower())


def run_rankhouse() -> dict:
    from rankhouse.loaders import load_documents, load_queries
    from rankhouse.warehouse import Warehouse
    from rankhouse.warehouse.dag import Project
    from rankhouse.warehouse.runner import Runner

    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp, Warehouse(Path(tmp) / "bench.duckdb") as wh:
        load_documents(wh, DATA / "train.csv", "banking77")
        load_queries(wh, DATA / "test.csv", "banking77")
        project = Project.load()
        Runner(wh, project, {"corpus": "banking77"}).run(project.select("+bm25_ranking"))
        with wh.array_aggregates():  # as the Runner computes BM25 for the models that read it
            wh.sql("CREATE TABLE ranked AS SELECT query_row, doc_row, score, rank FROM models.bm25_ranking")
        rows, top = wh.sql("SELECT count(*), sum(CASE WHEN rank = 1 THEN doc_row END) FROM ranked")[0]
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--encoder", help="Python of the bench venv for bench/encoder_speed.py (optional).")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "out")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(SYSTEMS[args.child]()))
        return
    results, missing = {}, []
    for system in SYSTEMS:
        if not installed(MODULES[system]):
            missing.append(system)
            print(f"{system}: not installed (pip install -e '.[bench]'), left out", file=sys.stderr)
            continue
        print(f"running {system} ...", file=sys.stderr)
        results[system] = run_child(__file__, system)
    base = results["bm25s"]["seconds"] if "bm25s" in results else None
    print("BM25 full ranking, BANKING77 (3,080 queries x 10,003 documents), files to ranked documents\n")
    print("| system | seconds | relative to bm25s | peak memory (MB) |\n| --- | ---: | ---: | ---: |")
    for system, result in results.items():
        ratio = f"{result['seconds'] / base:.2f}x" if base else "n/a"
        print(f"| {system} | {result['seconds']:.2f} | {ratio} | {result['peak_rss_mb']:,.0f} |")
    for system in missing:
        print(f"| {system} | not installed | | |")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "banking77_speed.json").write_text(json.dumps(results, indent=2))
    if args.encoder:
        subprocess.run([args.encoder, str(ROOT / "bench" / "encoder_speed.py")], check=True)


if __name__ == "__main__":
    main()
