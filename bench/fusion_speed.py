"""Speed of fusing two run files into fused runs: rankhouse's fusion models against ranx.fuse.

Generated data (seeded): per query, a pool of 2 x candidates documents; two arms score it on
different scales, a BM25-like arm (per-query location 6-14, spread 2) and a cosine-like arm (location
0.25-0.55, spread 0.06), correlated (0.5) through a shared latent part, with 20 relevant documents
per query shifted up in both. Each arm lists its own top `candidates`, so the lists overlap in part
and their union is larger than `candidates`. Scores are written at full precision (shortest
round-trip), so no two documents tie within an arm. Each arm also gets a null run, which rankhouse's
p-value rules need: the arm's scores of one fixed panel of 1,000 documents (outside every pool) for
each query, drawn from the same distribution as the arm's non-relevant scores.

- rankhouse: Warehouse(":memory:"), `fuse_runs` with depth L = candidates (every listed document
  enters; the union is scored by each arm where that arm has a score), which loads the four files
  and builds `+fused_rankings` (keys, candidates, p-values, mixture, Fisher, Stouffer, RRF, rsf =
  min-max CombSUM, a ranking per rule and per arm), then `write_fused_run` for rrf, rsf and mixture.
  The per-model seconds come from meta.model_runs (each includes the model's audits).
- ranx: Run.from_file for both arms, fuse(method="rrf", k = 60, no normalisation), fuse(method="wsum",
  norm="min-max", weights 1, 1: the same CombSUM as rsf), both saved as TREC runs. ranx compiles
  with numba: its first call (empty numba cache) is reported apart from its warm time (the same
  call again in the same process). ranx has no p-value or mixture rule, so rankhouse does more work.

Each system runs in a fresh process, one after the other, on this machine. A second table leaves out
writing the fused runs, a large share of either side's time. Afterwards the fused RRF and min-max runs
of the two are compared on the top 10 of a sample of queries.

    python bench/fusion_speed.py [--queries 1000] [--candidates 1000] [--seed 20261201] [--out bench/out]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from importlib.metadata import version
from pathlib import Path

import numpy as np
from peers import run_child

COLLECTION = 10_000_000  # document ids d0 .. d9999999
PANEL = 1_000  # null panel size, the same documents for both arms and every query
RELEVANT = 20  # relevant documents per query, in its pool
SHARED = 0.5  # correlation of the two arms' latent scores
# arm: (lowest and highest per-query location, spread, shift of a relevant document in spreads)
ARMS = {"bm25": (6.0, 14.0, 2.0, 2.5), "dense": (0.25, 0.55, 0.06, 2.0)}
RULES = ("rrf", "rsf", "mixture")  # the rules whose fused runs rankhouse writes
PAIRS = {"rrf": "rrf", "rsf": "wsum"}  # rankhouse rule -> the ranx run it is compared with


def files(data: Path) -> dict[str, Path]:
    """The four input runs: each arm's run and its null run."""
    return {name: data / f"{name}.run" for arm in ARMS for name in (arm, f"{arm}.null")}


def write_trec(path: Path, qids: np.ndarray, docnos: np.ndarray, scores: np.ndarray, tag: str) -> None:
    """Write (queries x k) document ids and scores as a TREC run; each row sorted by score descending."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    queries, k = scores.shape
    table = pa.table({
        "qid": pa.array(np.repeat(qids, k)), "q0": pa.array(np.full(queries * k, "Q0")),
        "docno": pa.array(np.char.add("d", docnos.ravel().astype(str))),
        "rank": np.tile(np.arange(1, k + 1), queries), "score": scores.ravel(),
        "tag": pa.array(np.full(queries * k, tag)),
    })  # fmt: skip
    options = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    pacsv.write_csv(table, path, options)  # doubles as their shortest round-trip text


def generate(out: Path, queries: int, candidates: int, seed: int) -> Path:
    """Write the arms' runs and null runs into a directory (deterministic for a seed); reuse them."""
    data = out / f"fusion_{queries}x{candidates}_seed{seed}"
    paths = files(data)
    if all(p.exists() for p in paths.values()):
        return data
    data.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    pool = 2 * candidates
    panel = rng.choice(COLLECTION, PANEL, replace=False)
    others = np.setdiff1d(np.arange(COLLECTION), panel)  # no pool holds a panel document
    docnos = np.stack([others[rng.choice(len(others), pool, replace=False)] for _ in range(queries)])
    relevant = np.zeros((queries, pool), dtype=bool)
    relevant[:, :RELEVANT] = True  # the pool's order is random, so these are a random choice
    shared = rng.standard_normal((queries, pool))
    qids = np.char.add("q", np.arange(queries).astype(str))
    for arm, (low, high, spread, shift) in ARMS.items():
        location = rng.uniform(low, high, (queries, 1))
        latent = SHARED * shared + np.sqrt(1 - SHARED**2) * rng.standard_normal((queries, pool))
        scores = location + spread * (latent + shift * relevant)  # non-relevant: location + spread * N(0, 1)
        top = np.argsort(-scores, axis=1)[:, :candidates]
        listed = np.take_along_axis(scores, top, axis=1)
        assert (np.diff(listed, axis=1) < 0).all(), "tied scores within an arm"
        write_trec(paths[arm], qids, np.take_along_axis(docnos, top, axis=1), listed, arm)
        # The null run: the arm's scores of the panel for each query, drawn from the same
        # distribution as the arm's non-relevant scores above (location + spread * N(0, 1)).
        null = location + spread * rng.standard_normal((queries, PANEL))
        order = np.argsort(-null, axis=1)
        write_trec(paths[f"{arm}.null"], qids, panel[order], np.take_along_axis(null, order, axis=1), f"{arm}.null")
    return data


def run_rankhouse(data: Path, candidates: int, fused: Path) -> dict:
    from rankhouse.fusion import fuse_runs, write_fused_run
    from rankhouse.progress import Progress
    from rankhouse.warehouse import Warehouse

    class Marks(Progress):
        def model_finished(self, result) -> None:  # noqa: ANN001 - a ModelRun
            marks.append(time.perf_counter())

    paths = files(data)
    arms = {arm: paths[arm] for arm in ARMS}
    nulls = {arm: paths[f"{arm}.null"] for arm in ARMS}
    marks: list[float] = []  # when each model finished
    start = time.perf_counter()
    with Warehouse(":memory:") as wh:
        fuse_runs(wh, arms, nulls, depth=candidates, progress=Marks())
        built = time.perf_counter()
        writes = {}
        for rule in RULES:
            before = time.perf_counter()
            write_fused_run(wh, rule, fused / f"rankhouse.{rule}.run")
            writes[rule] = time.perf_counter() - before
        seconds = time.perf_counter() - start
        models = wh.sql("SELECT model, seconds FROM meta.model_runs ORDER BY started_at")
        union = wh.sql(
            "SELECT avg(n), min(n), max(n) FROM (SELECT count(*) AS n FROM models.fusion_rrf GROUP BY query_row)"
        )
    return {
        "seconds": seconds,
        "before_models": marks[0] - start - models[0][1],  # load the four files, read the project
        "models": dict(models),
        "build": built - start,
        "writes": writes,
        "union": [float(v) for v in union[0]],
    }


def run_ranx(data: Path, fused: Path) -> dict:
    from ranx import Run, fuse

    paths = files(data)

    def once() -> dict:
        start = time.perf_counter()
        runs = [Run.from_file(str(paths[arm]), kind="trec") for arm in ARMS]
        loaded = time.perf_counter()
        rrf = fuse(runs, norm=None, method="rrf", params={"k": 60})
        rrf_done = time.perf_counter()
        wsum = fuse(runs, norm="min-max", method="wsum", params={"weights": [1.0, 1.0]})
        wsum_done = time.perf_counter()
        rrf.save(str(fused / "ranx.rrf.run"), kind="trec")
        wsum.save(str(fused / "ranx.wsum.run"), kind="trec")
        saved = time.perf_counter()
        return {
            "seconds": saved - start, "load": loaded - start, "rrf": rrf_done - loaded,
            "wsum": wsum_done - rrf_done, "save": saved - wsum_done,
        }  # fmt: skip

    first = once()
    warm = once()
    return {"seconds": warm["seconds"], "warm": warm, "first_call": first}


SYSTEMS = {"rankhouse": run_rankhouse, "ranx": run_ranx}


def child(system: str, data: str, candidates: str, fused: str) -> None:
    if system == "rankhouse":
        result = run_rankhouse(Path(data), int(candidates), Path(fused))
    else:
        result = run_ranx(Path(data), Path(fused))
    print(json.dumps(result))


def top10(path: Path, sample: set[str]) -> dict[str, list[tuple[str, float]]]:
    """The first 10 (docno, score) of each sampled query, in rank order."""
    rows: dict[str, list[tuple[int, str, float]]] = {q: [] for q in sample}
    with open(path) as handle:
        for line in handle:
            qid, _, docno, rank, score, _ = line.split()
            if qid in rows and int(rank) <= 10:
                rows[qid].append((int(rank), docno, float(score)))
    return {q: [(d, s) for _, d, s in sorted(found)] for q, found in rows.items()}


def agreement(ours: Path, theirs: Path, sample: set[str]) -> dict:
    """How many sampled queries have the same top 10; the same up to the order of tied fused scores
    (equal scores position by position, and the same documents above the 10th score); the largest
    score difference on a document both put in the top 10."""
    a, b = top10(ours, sample), top10(theirs, sample)
    identical = up_to_ties = 0
    gap = 0.0
    for q in sorted(sample):
        identical += [d for d, _ in a[q]] == [d for d, _ in b[q]]
        scores_a, scores_b = np.array([s for _, s in a[q]]), np.array([s for _, s in b[q]])
        if len(scores_a) == len(scores_b) > 0 and np.allclose(scores_a, scores_b, rtol=0, atol=1e-12):
            cut = scores_a[-1] + 1e-12
            up_to_ties += {d for d, s in a[q] if s > cut} == {d for d, s in b[q] if s > cut}
        other = dict(b[q])
        gap = max([gap] + [abs(s - other[d]) for d, s in a[q] if d in other])
    return {"queries": len(sample), "identical": identical, "up_to_ties": up_to_ties, "max_score_gap": gap}


def report(results: dict) -> str:
    """The tables, from the results (also saved as bench/out/fusion_speed.json)."""
    setup, rh, ranx = results["setup"], results["rankhouse"], results["ranx"]
    ours, warm, cold = rh["seconds"], ranx["warm"]["seconds"], ranx["first_call"]["seconds"]
    built = rh["build"]  # files to fused rankings in the warehouse
    warm_fused = warm - ranx["warm"]["save"]
    cold_fused = cold - ranx["first_call"]["save"]
    mean, low, high = rh["union"]
    name = f"ranx {setup['ranx']}"
    lines = [
        f"fusion, run files to fused run files: {setup['queries']:,} queries x {setup['candidates']:,} candidates x "
        f"2 arms (bm25-like, cosine-like), null panel of {PANEL:,} per arm and query, seed {setup['seed']}; "
        f"candidate union {mean:,.0f} per query on average ({low:,.0f}-{high:,.0f})",
        "",
        "| system | seconds | rankhouse / system | peak memory of the process (MB) |",
        "| --- | ---: | ---: | ---: |",
        f"| rankhouse (load 4 files, all fusion models, write rrf, rsf, mixture) | {ours:.2f} | 1.00x | "
        f"{rh['peak_rss_mb']:,.0f} |",
        f"| {name}, warm (second call: load 2 files, rrf, wsum min-max, save 2) | {warm:.2f} | {ours / warm:.2f}x | "
        f"{ranx['peak_rss_mb']:,.0f} (both calls) |",
        f"| {name}, first call (numba compiling, empty cache) | {cold:.2f} | {ours / cold:.2f}x | |",
        "",
        f"goal, rankhouse within 2x of ranx warm: {'met' if ours <= 2 * warm else 'NOT met'}; "
        f"faster than ranx first call: {'met' if ours < cold else 'NOT met'}",
        "",
        "the same without writing the fused runs (rankhouse: fused rankings in the warehouse; ranx: fused Runs):",
        "",
        "| system | seconds | rankhouse / system |",
        "| --- | ---: | ---: |",
        f"| rankhouse (load 4 files, all fusion models) | {built:.2f} | 1.00x |",
        f"| {name}, warm (load 2 files, rrf, wsum min-max) | {warm_fused:.2f} | {built / warm_fused:.2f}x |",
        f"| {name}, first call | {cold_fused:.2f} | {built / cold_fused:.2f}x |",
        "",
        "rankhouse, where the time goes (model seconds from meta.model_runs, audits included):",
        "",
        "| step | seconds |",
        "| --- | ---: |",
        f"| before the first model (load the four files, read the project) | {rh['before_models']:.2f} |",
    ]
    lines += [f"| model {model} | {seconds:.2f} |" for model, seconds in rh["models"].items()]
    lines += [f"| write the {rule} run | {seconds:.2f} |" for rule, seconds in rh["writes"].items()]
    lines += ["", "ranx, where the time goes:", "", "| call | load | rrf | wsum min-max | save | total |"]
    lines.append("| --- | ---: | ---: | ---: | ---: | ---: |")
    for label, key in (("first", "first_call"), ("warm", "warm")):
        t = ranx[key]
        lines.append(
            f"| {label} | {t['load']:.2f} | {t['rrf']:.2f} | {t['wsum']:.2f} | {t['save']:.2f} | {t['seconds']:.2f} |"
        )
    lines.append("")
    for rule, check in results["agreement"].items():
        lines.append(
            f"top-10 agreement, rankhouse {rule} vs ranx {PAIRS[rule]}, {check['queries']} sampled queries: "
            f"{check['identical']} identical, {check['up_to_ties']} identical up to the order of tied scores; "
            f"largest score difference {check['max_score_gap']:.1e}"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=1_000)
    parser.add_argument("--candidates", type=int, default=1_000, help="Each arm's list length, and depth L.")
    parser.add_argument("--seed", type=int, default=20261201)
    parser.add_argument("--sample", type=int, default=100, help="Queries whose top 10 are compared.")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "out")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)  # system, data, candidates, fused
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    args.out.mkdir(parents=True, exist_ok=True)
    print(f"generating {args.queries:,} queries x {args.candidates:,} candidates x 2 arms ...", file=sys.stderr)
    data = generate(args.out, args.queries, args.candidates, args.seed)
    fused = data / "fused"
    fused.mkdir(exist_ok=True)
    results = {}
    for system in SYSTEMS:
        print(f"running {system} ...", file=sys.stderr)
        results[system] = run_child(__file__, system, str(data), str(args.candidates), str(fused))

    rng = np.random.default_rng(args.seed + 1)
    sample = {f"q{q}" for q in rng.choice(args.queries, min(args.sample, args.queries), replace=False)}
    checks = {
        rule: agreement(fused / f"rankhouse.{rule}.run", fused / f"ranx.{peer}.run", sample)
        for rule, peer in PAIRS.items()
    }
    results["agreement"] = checks
    results["setup"] = {
        "queries": args.queries,
        "candidates": args.candidates,
        "seed": args.seed,
        "ranx": version("ranx"),
    }
    print(report(results))
    (args.out / "fusion_speed.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
