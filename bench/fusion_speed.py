"""Speed of fusing run files into fused run files: rankhouse's fusion models against ranx.fuse.

Generated data (seeded): per query, a pool of 2 x candidates documents; two arms score it on
different scales, a BM25-like arm (per-query location 6-14, spread 2) and a cosine-like arm (location
0.25-0.55, spread 0.06), correlated (0.5) through a shared latent part, with 20 relevant documents
per query shifted up in both. Each arm lists its own top `candidates`, so the lists overlap in part
and their union is larger than `candidates`. Scores are written at full precision (shortest
round-trip), so no two documents tie within an arm. Each arm also gets a null run, which rankhouse's
p-value rules need: the arm's scores of one fixed panel of 1,000 documents (outside every pool) for
each query, drawn from the same distribution as the arm's non-relevant scores.

Two jobs, each system in a fresh process (bench/peers.py run_child; its peak memory is the process's
own VmHWM), one after the other, `--repeat` times round-robin (the tables give medians):

(a) the two rules ranx computes, from the two run files to two fused run files:
- rankhouse: Warehouse(":memory:"), `plan_fusion` and `run_fusion` asking rrf and rsf (min-max
  CombSUM) only, depth L = candidates (every listed document enters): no null run is read, no p-value
  built, only rrf and rsf ranked; then `write_fused_run` for both.
- ranx: Run.from_file for both arms, fuse(method="rrf", k = 60, no normalisation), fuse(method="wsum",
  norm="min-max", weights 1, 1: the same CombSUM as rsf), both saved as TREC runs. ranx compiles with
  numba: its first call (empty numba cache) is reported apart from its warm time (the same call again
  in the same process).

(b) everything rankhouse computes: the two run files and their null runs, all five rules (rrf, rsf,
mixture, fisher, stouffer) and seven rankings (the rules and each arm alone), the five rules' fused
runs written; against ranx warm's two rules of (a).

(c) the floor: rrf and rsf of (a) in one DuckDB statement from the two files (FLOOR_SQL: DuckDB's CSV
reader, RRF summed in doubles, seed 003's tie order, no rule checked, only the rankings stored), then
written by DuckDB's COPY: the least work the job needs on this machine.

Each is reported from files to fused files and without writing (rankhouse: the fused rankings in the
warehouse; ranx: the fused Runs in memory), since writing is a large share of either side (ranx's
Run.save most of its time). rankhouse's time includes planning (reading the models), loading and
building; each model's seconds come from its build (audits included). Afterwards the fused RRF and
min-max runs of the two are compared on the top 10 of a sample of queries, and (b)'s rrf and rsf files
with (a)'s (the same bytes: building the other rules changes nothing). A peer that is not installed is
named and left out. `--write-docs` rewrites docs/performance.md's part between `<!-- bench/fusion_speed.py: begin -->`
and `<!-- bench/fusion_speed.py: end -->` (`--from-results FILE`: from an earlier run's JSON).

    python bench/fusion_speed.py [--queries 1000] [--candidates 1000] [--repeat 1] [--out bench/out] [--write-docs]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import time
from importlib.metadata import version
from pathlib import Path

import numpy as np
import peers
from peers import add_write_docs_option, installed, machine, own_peak_mb, results_file, rewrite_section, run_child

COLLECTION = 10_000_000  # document ids d0 .. d9999999
PANEL = 1_000  # null panel size, the same documents for both arms and every query
RELEVANT = 20  # relevant documents per query, in its pool
SHARED = 0.5  # correlation of the two arms' latent scores
# arm: (lowest and highest per-query location, spread, shift of a relevant document in spreads)
ARMS = {"bm25": (6.0, 14.0, 2.0, 2.5), "dense": (0.25, 0.55, 0.06, 2.0)}
PAIRS = {"rrf": "rrf", "rsf": "wsum"}  # rankhouse rule -> the ranx run it is compared with
FLOOR = "floor"


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


def run_rankhouse(data: Path, candidates: int, fused: Path, job: str) -> dict:
    """Job "two" (rrf and rsf, no null run) or "all" (every rule and arm, null runs; the rules written),
    from the files to the fused files in a fresh in-memory warehouse, with the time of each step."""
    from rankhouse.progress import Progress
    from rankhouse.studies.fusion.fuse import RULES, plan_fusion, run_fusion, write_fused_run
    from rankhouse.warehouse import Warehouse

    class Marks(Progress):
        def model_started(self, name: str) -> None:
            marks.setdefault("first_model", time.perf_counter())

    paths = files(data)
    arms = {arm: paths[arm] for arm in ARMS}
    nulls = {arm: paths[f"{arm}.null"] for arm in ARMS} if job == "all" else {}
    written = list(PAIRS) if job == "two" else list(RULES)
    marks: dict[str, float] = {}
    start = time.perf_counter()
    with Warehouse(":memory:") as wh:
        plan = plan_fusion(arms, nulls, list(PAIRS) if job == "two" else None, depth=candidates)
        planned = time.perf_counter()
        models = run_fusion(wh, plan, progress=Marks())
        built = time.perf_counter()
        writes = {}
        for rule in written:
            before = time.perf_counter()
            write_fused_run(wh, rule, fused / f"rankhouse.{job}.{rule}.run")
            writes[rule] = time.perf_counter() - before
        seconds = time.perf_counter() - start
        union = wh.sql(
            "SELECT avg(n), min(n), max(n) FROM (SELECT count(*) AS n FROM models.fused_rankings "
            "WHERE rule = 'rrf' GROUP BY query_row)"
        )
    return {
        "seconds": seconds,
        "build": built - start,
        "plan": planned - start,
        "load": marks["first_model"] - planned,
        "models": {run.model: run.seconds for run in models},
        "writes": writes,
        "union": [float(v) for v in union[0]],
    }


def run_ranx(data: Path, fused: Path) -> dict:
    """ranx's rrf and min-max wsum from the two run files to two saved runs: the first call (numba
    compiling), then the same again in the same process (warm)."""
    import warnings

    from ranx import Run, fuse

    paths = files(data)

    def once() -> dict:
        start = time.perf_counter()
        runs = [Run.from_file(str(paths[arm]), kind="trec") for arm in ARMS]
        loaded = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # numba's type-safety warnings from ranx's compiled code
            rrf = fuse(runs, norm=None, method="rrf", params={"k": 60})
            rrf_done = time.perf_counter()
            wsum = fuse(runs, norm="min-max", method="wsum", params={"weights": [1.0, 1.0]})
        wsum_done = time.perf_counter()
        rrf.save(str(fused / "ranx.rrf.run"), kind="trec")
        wsum.save(str(fused / "ranx.wsum.run"), kind="trec")
        saved = time.perf_counter()
        return {
            "seconds": saved - start, "build": wsum_done - start, "load": loaded - start,
            "rrf": rrf_done - loaded, "wsum": wsum_done - rrf_done, "save": saved - wsum_done,
        }  # fmt: skip

    first = once()
    warm = once()
    return {"seconds": warm["seconds"], "build": warm["build"], "warm": warm, "first_call": first}


# The floor: rrf and rsf (k = 60, min-max over each arm's list) of the two run files in one DuckDB statement
# with DuckDB's own CSV reader: each arm ranked in trec_eval's order (score descending, then docno
# descending), RRF summed in doubles (not rankhouse's exact fractions), each rule ranked in seed 003's order
# (score descending, the dense score descending, the document id), no rule checked, nothing but the
# rankings stored.
FLOOR_SQL = """
CREATE TABLE fused AS
WITH lines AS (
    SELECT * FROM read_csv([$bm25, $dense], delim = ' ', header = false, quote = '', escape = '', filename = true,
        columns = {'qid': 'VARCHAR', 'q0': 'VARCHAR', 'docno': 'VARCHAR', 'rank': 'BIGINT', 'score': 'DOUBLE',
                   'tag': 'VARCHAR'})
),
arms AS (
    SELECT filename = $dense AS dense, qid, docno, score,
        row_number() OVER (PARTITION BY filename, qid ORDER BY score DESC, docno DESC) AS rank
    FROM lines
),
ranges AS (
    SELECT dense, qid, min(score) AS low, max(score) AS high FROM arms GROUP BY dense, qid
),
documents AS (
    SELECT a.qid, a.docno, sum(1 / (60 + a.rank)) AS rrf,
        sum(CASE WHEN r.high = r.low THEN 1 ELSE (a.score - r.low) / (r.high - r.low) END) AS rsf,
        max(a.score) FILTER (WHERE a.dense) AS dense_score
    FROM arms AS a JOIN ranges AS r ON r.dense = a.dense AND r.qid = a.qid
    GROUP BY a.qid, a.docno
),
rules AS (
    SELECT 'rrf' AS rule, qid, docno, rrf AS score, dense_score FROM documents
    UNION ALL
    SELECT 'rsf' AS rule, qid, docno, rsf AS score, dense_score FROM documents
)
SELECT rule, qid, docno, score,
    row_number() OVER (PARTITION BY rule, qid ORDER BY score DESC, dense_score DESC NULLS LAST, docno) AS rank
FROM rules
"""
FLOOR_NOTE = "DuckDB's CSV reader, RRF summed in doubles, no rule checked, only the rankings stored"
FLOOR_WRITE = """
COPY (
    SELECT concat_ws(' ', qid, 'Q0', docno, rank, CAST(score AS VARCHAR), 'floor-' || rule)
    FROM fused WHERE rule = $rule ORDER BY qid, rank
) TO '{path}' (FORMAT csv, HEADER false, QUOTE '', ESCAPE '')
"""


def run_floor(data: Path, fused: Path) -> dict:
    """rrf and rsf from the two run files to their rankings in one DuckDB statement (FLOOR_SQL), then each
    written by DuckDB's COPY: the least work the job needs here."""
    import duckdb

    paths = files(data)
    start = time.perf_counter()
    con = duckdb.connect()
    con.execute(FLOOR_SQL, {"bm25": str(paths["bm25"]), "dense": str(paths["dense"])})
    built = time.perf_counter()
    for rule in PAIRS:
        path = str(fused / f"{FLOOR}.{rule}.run").replace("'", "''")  # a literal: COPY takes no parameter there
        con.execute(FLOOR_WRITE.format(path=path), {"rule": rule})
    return {"seconds": time.perf_counter() - start, "build": built - start}


# system -> (what it needs installed, how it runs in its child process)
SYSTEMS = {
    "rankhouse_two": ("rankhouse", lambda data, candidates, fused: run_rankhouse(data, candidates, fused, "two")),
    "rankhouse_all": ("rankhouse", lambda data, candidates, fused: run_rankhouse(data, candidates, fused, "all")),
    "ranx": ("ranx", lambda data, candidates, fused: run_ranx(data, fused)),
    FLOOR: ("duckdb", lambda data, candidates, fused: run_floor(data, fused)),
}


def child(system: str, data: str, candidates: str, fused: str) -> None:
    result = SYSTEMS[system][1](Path(data), int(candidates), Path(fused))
    result["own_peak_mb"] = own_peak_mb()
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


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def median(runs: list[dict], *keys: str) -> float:
    """The median over repeated runs of one figure (`keys`: the path to it in each run's result)."""
    values = []
    for run in runs:
        for key in keys:
            run = run[key]
        values.append(run)
    return statistics.median(values)


def spread(runs: list[dict], *keys: str) -> str:
    """A figure's median, and its range when the runs were repeated: `12.30` or `12.30 (11.90-13.10)`."""
    values = [median([run], *keys) for run in runs]
    middle = f"{statistics.median(values):.2f}"
    return middle if len(values) == 1 else f"{middle} ({min(values):.2f}-{max(values):.2f})"


def times(ours: float, theirs: float) -> str:
    """How rankhouse's seconds compare with a peer's: `3.10x faster` or `1.20x slower`.

    >>> times(2.0, 6.2), times(6.0, 5.0)
    ('3.10x faster', '1.20x slower')
    """
    return f"{theirs / ours:.2f}x faster" if ours <= theirs else f"{ours / theirs:.2f}x slower"


def section(results: dict) -> str:
    """The section of docs/performance.md (also printed): the two jobs' tables, the goals met or not, where the
    time goes."""
    setup, env, runs = results["setup"], results["machine"], results["runs"]
    two, every = runs["rankhouse_two"], runs["rankhouse_all"]
    ranx = runs.get("ranx")
    mean, low, high = two[0]["union"]
    repeats = f"{setup['repeat']} runs round-robin, medians (range)" if setup["repeat"] > 1 else "one run each"
    versions = ", ".join(f"{name} {v}" for name, v in results["versions"].items())
    loads = [run.get("load_average", env["load_average"]) for system in runs.values() for run in system]
    lines = [
        f"Measured {env['date']} at {env['commit']} on {env['cores']} cores and {env['memory_gb']} GB (load average "
        f"{min(loads):.1f}-{max(loads):.1f} as the processes started; {versions}), each system in a fresh process, "
        f"{repeats}: "
        f"{setup['queries']:,} queries x {setup['candidates']:,} candidates x 2 arms (bm25-like, cosine-like), "
        f"null panel of {PANEL:,} per arm and query, seed {setup['seed']}; candidate union {mean:,.0f} per query on "
        f"average ({low:,.0f}-{high:,.0f}).",
        "",
    ]
    for missing in results["missing"]:
        lines += [f"{missing}: not installed here, left out.", ""]
    rows = [
        ("rankhouse, rrf + rsf (no null run; two rankings)", two, "seconds", "build"),
        ("rankhouse, all five rules + seven rankings (null runs; five rules written)", every, "seconds", "build"),
    ]
    if ranx:
        rows += [
            (f"ranx {results['versions']['ranx']}, warm (second call): rrf + wsum min-max", ranx, "seconds", "build"),
            (
                "ranx, first call (numba compiling, empty cache)",
                ranx,
                ("first_call", "seconds"),
                ("first_call", "build"),
            ),
        ]
    floor = runs.get(FLOOR)
    if floor:
        label = "one DuckDB statement (floor): rrf + rsf from the files, nothing checked, then COPY"
        rows.append((label, floor, "seconds", "build"))
    warm = median(ranx, "seconds") if ranx else None
    warm_build = median(ranx, "build") if ranx else None
    lines += [
        "| system | files to fused files (s) | vs ranx warm | without writing (s) | vs ranx warm | peak memory (MB) |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for label, result, total, build in rows:
        total_keys = total if isinstance(total, tuple) else (total,)
        build_keys = build if isinstance(build, tuple) else (build,)
        versus = versus_build = ""
        if ranx and result is not ranx:
            versus = times(median(result, *total_keys), warm)
            versus_build = times(median(result, *build_keys), warm_build)
        memory = f"{median(result, 'peak_rss_mb'):,.0f}" + (" (both calls)" if result is ranx else "")
        if total_keys[0] == "first_call":
            memory = ""
        lines.append(
            f"| {label} | {spread(result, *total_keys)} | {versus} | {spread(result, *build_keys)} | {versus_build} "
            f"| {memory} |"
        )
    lines.append("")
    a, a_build = median(two, "seconds"), median(two, "build")
    if ranx:
        b, b_build = median(every, "seconds"), median(every, "build")
        lines += [
            "Goals (issue 18), from these medians:",
            "",
            f"- rrf + rsf, files to fused files, at least 3x faster than ranx warm: {warm / a:.2f}x, "
            f"{'met' if warm >= 3 * a else 'NOT met'}; without writing {warm_build / a_build:.2f}x, "
            f"{'met' if warm_build >= 3 * a_build else 'not met'}.",
            f"- all five rules and seven rankings faster than ranx warm's two: files to fused files "
            f"{times(b, warm)}, {'met' if b < warm else 'NOT met'}; without writing {times(b_build, warm_build)}, "
            f"{'met' if b_build < warm_build else 'NOT met'}.",
            "",
        ]
    if floor:
        f, f_build = median(floor, "seconds"), median(floor, "build")
        lines += [
            f"The floor, rrf + rsf in one DuckDB statement from the two files ({FLOOR_NOTE}): rankhouse's rrf + rsf "
            f"takes {a / f:.2f}x its time files to fused files and {a_build / f_build:.2f}x without writing."
        ]
        if ranx:
            lines += [
                f"Issue 39's goals are {warm / 10:.2f} s files to fused files (10x ranx warm: {warm / 10 / f:.2f}x the "
                f"floor) and {warm_build / 3:.2f} s without writing (3x ranx warm: {warm_build / 3 / f_build:.2f}x the "
                "floor)."
            ]
        for rule, check in results.get("floor_agreement", {}).items():
            lines.append(
                f"Top-10 agreement, rankhouse {rule} vs the floor's, {check['queries']} sampled queries: "
                f"{check['identical']} identical, {check['up_to_ties']} identical up to the order of tied scores; "
                f"largest score difference {check['max_score_gap']:.1e}."
            )
        lines.append("")
    lines += ["rankhouse, where the time goes (seconds, medians; a model's build includes its audits):", ""]
    lines += ["| step | rrf + rsf | all rules |", "| --- | ---: | ---: |"]
    lines.append(f"| read the models (plan_fusion) | {median(two, 'plan'):.2f} | {median(every, 'plan'):.2f} |")
    lines.append(f"| load the run files (2 / 4) | {median(two, 'load'):.2f} | {median(every, 'load'):.2f} |")
    for model in every[0]["models"]:
        ours = f"{median(two, 'models', model):.2f}" if model in two[0]["models"] else ""
        lines.append(f"| model {model} | {ours} | {median(every, 'models', model):.2f} |")
    for rule in every[0]["writes"]:
        ours = f"{median(two, 'writes', rule):.2f}" if rule in two[0]["writes"] else ""
        lines.append(f"| write the {rule} run | {ours} | {median(every, 'writes', rule):.2f} |")
    lines.append("")
    if ranx:
        lines += ["ranx, where the time goes (seconds, medians):", ""]
        lines += ["| call | load | rrf | wsum min-max | save | total |", "| --- | ---: | ---: | ---: | ---: | ---: |"]
        for label, key in (("first", "first_call"), ("warm", "warm")):
            parts = [f"{median(ranx, key, part):.2f}" for part in ("load", "rrf", "wsum", "save", "seconds")]
            lines.append(f"| {label} | {' | '.join(parts)} |")
        lines.append("")
        for rule, check in results["agreement"].items():
            lines.append(
                f"Top-10 agreement, rankhouse {rule} vs ranx {PAIRS[rule]}, {check['queries']} sampled queries: "
                f"{check['identical']} identical, {check['up_to_ties']} identical up to the order of tied scores; "
                f"largest score difference {check['max_score_gap']:.1e}."
            )
    same = all(results["same_files"].values())
    lines += [
        "",
        f"The rrf and rsf files of the two rankhouse jobs are {'the same bytes' if same else 'NOT the same'}"
        f" ({', '.join(f'{rule}: {ok}' for rule, ok in results['same_files'].items())}).",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=1_000)
    parser.add_argument("--candidates", type=int, default=1_000, help="Each arm's list length, and depth L.")
    parser.add_argument("--seed", type=int, default=20261201)
    parser.add_argument("--sample", type=int, default=100, help="Queries whose top 10 are compared.")
    parser.add_argument("--repeat", type=int, default=1, help="Runs of each system, round-robin (medians).")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "out")
    add_write_docs_option(parser)
    parser.add_argument("--from-results", type=Path, help="a JSON an earlier run saved: its section, not a new run")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)  # system, data, candidates, fused
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    if args.from_results:
        results = json.loads(args.from_results.read_text())
    else:
        target = results_file(args.out, "fusion_speed")  # refused here, before anything is measured
        results = measure(args)
        target.write_text(json.dumps(results, indent=2))
    text = section(results)
    print(text)
    if args.write_docs:
        rewrite_section(peers.PERFORMANCE, "fusion_speed.py", text)
        print(f"rewrote {peers.PERFORMANCE}'s fusion_speed.py section", file=sys.stderr)


def measure(args: argparse.Namespace) -> dict:
    """Generate (or reuse) the files, run every installed system `args.repeat` times round-robin in fresh
    processes, compare the fused files."""
    systems = [name for name, (module, _) in SYSTEMS.items() if installed(module)]
    missing = sorted({module for name, (module, _) in SYSTEMS.items() if name not in systems})
    for module in missing:
        print(f"{module}: not installed (pip install -e '.[bench]'), left out", file=sys.stderr)
    if "rankhouse_two" not in systems:
        sys.exit("rankhouse is not importable here")
    print(f"generating {args.queries:,} queries x {args.candidates:,} candidates x 2 arms ...", file=sys.stderr)
    data = generate(args.out, args.queries, args.candidates, args.seed)
    fused = data / "fused"
    fused.mkdir(exist_ok=True)
    started = machine()
    runs: dict[str, list[dict]] = {system: [] for system in systems}
    for turn in range(args.repeat):
        for system in systems:
            print(f"running {system} ({turn + 1} of {args.repeat}) ...", file=sys.stderr)
            load = os.getloadavg()[0]  # the machine's load as the process starts (other work slows DuckDB's threads)
            runs[system].append(
                {**run_child(__file__, system, str(data), str(args.candidates), str(fused)), "load_average": load}
            )
    rng = np.random.default_rng(args.seed + 1)
    sample = {f"q{q}" for q in rng.choice(args.queries, min(args.sample, args.queries), replace=False)}
    checks, checks_floor = {}, {}
    if "ranx" in systems:
        checks = {
            rule: agreement(fused / f"rankhouse.two.{rule}.run", fused / f"ranx.{peer}.run", sample)
            for rule, peer in PAIRS.items()
        }
    if FLOOR in systems:
        checks_floor = {
            rule: agreement(fused / f"rankhouse.two.{rule}.run", fused / f"{FLOOR}.{rule}.run", sample)
            for rule in PAIRS
        }
    same = {
        rule: sha256(fused / f"rankhouse.two.{rule}.run") == sha256(fused / f"rankhouse.all.{rule}.run")
        for rule in PAIRS
    }
    return {
        "machine": started,
        "setup": {"queries": args.queries, "candidates": args.candidates, "seed": args.seed, "repeat": args.repeat},
        "versions": {module: version(module) for module in ("rankhouse", "duckdb", "ranx") if installed(module)},
        "missing": missing,
        "runs": runs,
        "agreement": checks,
        "floor_agreement": checks_floor,
        "same_files": same,
    }


if __name__ == "__main__":
    main()
