"""DuckDB against Spark at scale: rankhouse's measure models on one engine and the other (issue 17).

A generated run of Q queries x D documents (default 1,000,000 x 100: 100M lines) with graded qrels,
measures AP, nDCG@10, P@10, R@100, RR, computed by rankhouse's own models (the Runner, as `rankhouse
eval` runs them: load the files into an in-memory warehouse, build `+run_measures`) on DuckDB and on
Spark local[2] (`SparkEngine`: the portable models transpiled to Spark SQL). Each engine runs in a
fresh process, one after the other; for each: the time from files to numbers (load, then measures),
the process's wall time, its peak memory (the process tree's resident memory summed, polled: the JVM
that pyspark starts included), the peak disk of its scratch folders (DuckDB's spill, Spark's local
dir, the Parquet handed between the engines) and its per-query values, which must be equal on both
engines within 1e-12 relative (`compare`).

Then the scale-up (`--scale-up N`): the same at N x the queries, on Spark and on DuckDB given the same
memory limit as Spark's driver (`--spark-memory`, DuckDB's `memory_limit`, in both processes: the
Spark one loads its inputs in DuckDB too), to show where one machine stops (out of memory, or
spilling) and Spark goes on. A process that fails is reported with its last line, not raised.

The data (`generate`) is deterministic: each block of 10,000 queries comes from its own numpy
Generator seeded with (seed, block), so a larger run starts with the queries of a smaller one. Per
query: D distinct documents (rank r scored (D - r + 1) / D: no ties), each judged with a probability
falling from 0.6 at rank 1 to 0.1 at rank D, grades 0-3, and 5 judged documents the run does not
retrieve (the first one relevant, so every query has one). The files are written once to
`--cache/<Q>x<D>-<key>/` (key: a digest of the recipe) and reused when present.

    python bench/spark_scale.py                                  # 1,000,000 x 100 on both engines
    python bench/spark_scale.py --queries 100000 --write-docs    # 10M lines; its docs/performance.md section
    python bench/spark_scale.py --scale-up 4 --spark-memory 4g   # then 4,000,000 x 100
    python bench/spark_scale.py --queries 10000 --only duckdb --out /tmp/scale
    python bench/spark_scale.py --from-results /tmp/scale.json --write-docs  # the section of an earlier run
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from peers import PERFORMANCE, add_write_docs_option, markers, own_peak_mb, results_file, rewrite_section, run_measured

ROOT = Path(__file__).resolve().parent.parent
MEASURES = ["AP", "nDCG@10", "P@10", "R@100", "RR"]
ENGINES = ("duckdb", "spark")
MASTER = "local[2]"
SEED = 17  # issue 17
BLOCK = 10_000  # queries per block, each from its own Generator: (seed, block)
STRIDE = 10_000  # documents per slot: a query's D documents come from D slots of the collection
UNRETRIEVED = 5  # judged documents per query that the run does not retrieve
JUDGED = (0.6, 0.1)  # chance that a retrieved document is judged, at rank 1 and at rank D
GRADES = (0.45, 0.3, 0.15, 0.1)  # grades 0-3 of a judged retrieved document
UNRETRIEVED_GRADES = (0.2, 0.4, 0.25, 0.15)  # and of an unretrieved one
FIRST_GRADES = (0.5, 0.3, 0.2)  # grades 1-3 of each query's first unretrieved judged document
RELATIVE = 1e-12  # per-query values equal within this, relative
BEGIN, END = markers("spark_scale.py")
FULL = (1_000_000, 100, 4)  # the size and scale-up


def say(message: str) -> None:
    """A progress line on stderr."""
    print(message, file=sys.stderr, flush=True)


# -- the data ---------------------------------------------------------------------------------------
def recipe(queries: int, docs: int, seed: int = SEED) -> dict:
    """What the generated files depend on (JSON's types: it is compared with its recipe.json); its digest
    names their cache folder.

    >>> recipe(200, 20)["lines"]
    4000
    """
    if queries < 1 or docs < 1:
        raise SystemExit("--queries and --docs-per-query must be at least 1")
    return {
        "generator": 1, "seed": seed, "queries": queries, "docs_per_query": docs, "lines": queries * docs,
        "block": BLOCK, "stride": STRIDE, "unretrieved": min(UNRETRIEVED, docs), "judged": list(JUDGED),
        "grades": list(GRADES), "unretrieved_grades": list(UNRETRIEVED_GRADES), "first_grades": list(FIRST_GRADES),
    }  # fmt: skip


def cache_folder(cache: Path, spec: dict) -> Path:
    """`cache/<Q>x<D>-<key>`, the key a digest of the recipe."""
    key = hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:12]
    return cache / f"{spec['queries']}x{spec['docs_per_query']}-{key}"


def block(spec: dict, index: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Block `index` of the recipe's queries (always BLOCK of them drawn, so that a block does not
    depend on how many queries follow it): the documents retrieved, (BLOCK, D) in rank order, which of
    them are judged and their grades, and the judged documents not retrieved with their grades."""
    docs, unretrieved = spec["docs_per_query"], spec["unretrieved"]
    rng = np.random.default_rng([spec["seed"], index])
    slots = rng.permuted(np.tile(np.arange(docs), (BLOCK, 1)), axis=1)  # each rank's slot: distinct documents
    offsets = rng.integers(0, STRIDE, (BLOCK, docs))
    retrieved = slots * STRIDE + offsets
    judged = rng.random((BLOCK, docs)) < np.linspace(*JUDGED, docs)
    grades = rng.choice(4, (BLOCK, docs), p=GRADES)
    # unretrieved: another document of a slot the run took one from (offset moved by 1 .. STRIDE - 1)
    chosen = rng.random((BLOCK, docs)).argsort(axis=1)[:, :unretrieved]
    rank_of_slot = slots.argsort(axis=1)
    taken = np.take_along_axis(offsets, np.take_along_axis(rank_of_slot, chosen, axis=1), axis=1)
    others = chosen * STRIDE + (taken + rng.integers(1, STRIDE, (BLOCK, unretrieved))) % STRIDE
    other_grades = rng.choice(4, (BLOCK, unretrieved), p=UNRETRIEVED_GRADES)
    other_grades[:, 0] = 1 + rng.choice(3, BLOCK, p=FIRST_GRADES)
    return retrieved, judged, grades, others, other_grades


def _ids(prefix: str, numbers: np.ndarray):
    import pyarrow as pa
    import pyarrow.compute as pc

    return pc.binary_join_element_wise(prefix, pa.array(numbers).cast(pa.string()), "")


def _block_tables(spec: dict, index: int):
    """Block `index` as the run's and the qrels' Arrow tables (only the recipe's queries of it)."""
    import pyarrow as pa

    docs = spec["docs_per_query"]
    retrieved, judged, grades, others, other_grades = block(spec, index)
    count = min(BLOCK, spec["queries"] - index * BLOCK)
    retrieved, judged, grades = retrieved[:count], judged[:count], grades[:count]
    others, other_grades = others[:count], other_grades[:count]
    qid = np.repeat(np.arange(index * BLOCK, index * BLOCK + count), docs).reshape(count, docs)
    rank = np.tile(np.arange(1, docs + 1), count)
    run = pa.table({
        "qid": _ids("q", qid.ravel()), "q0": pa.repeat("Q0", count * docs),
        "docno": _ids("d", retrieved.ravel()), "rank": rank, "score": (docs - rank + 1) / docs,
        "tag": pa.repeat("scale", count * docs),
    })  # fmt: skip
    # a query's judged retrieved documents (in rank order), then its unretrieved ones
    q = np.concatenate([qid[judged], np.repeat(qid[:, 0], others.shape[1])])
    order = np.argsort(q, kind="stable")
    qrels = pa.table({
        "qid": _ids("q", q[order]), "iter": pa.repeat("0", len(q)),
        "docno": _ids("d", np.concatenate([retrieved[judged], others.ravel()])[order]),
        "rel": np.concatenate([grades[judged], other_grades.ravel()])[order],
    })  # fmt: skip
    return run, qrels


def generate(cache: Path, queries: int, docs: int, seed: int = SEED) -> tuple[Path, Path]:
    """The run and qrels files of the recipe (queries x docs, seed), written once under `cache` (a
    folder per recipe, complete when its recipe.json and both files are there) and reused when present.

    Example: run, qrels = generate(Path("bench/out/spark_scale"), 10_000, 100)
    """
    import pyarrow.csv as pacsv

    spec = recipe(queries, docs, seed)
    folder = cache_folder(cache, spec)
    run_path, qrels_path, done = folder / "run.txt", folder / "qrels.txt", folder / "recipe.json"
    complete = done.exists() and run_path.exists() and qrels_path.exists()
    if complete and json.loads(done.read_text()) == spec:
        say(f"reusing {queries:,} x {docs:,} (seed {seed}) from {folder}")
        return run_path, qrels_path
    say(f"generating {queries:,} queries x {docs:,} documents (seed {seed}) into {folder}")
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    options = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    blocks = -(-queries // BLOCK)
    started, writers = time.perf_counter(), None
    for index in range(blocks):
        run, qrels = _block_tables(spec, index)
        if writers is None:
            writers = (
                pacsv.CSVWriter(str(run_path), run.schema, write_options=options),
                pacsv.CSVWriter(str(qrels_path), qrels.schema, write_options=options),
            )
        writers[0].write_table(run)
        writers[1].write_table(qrels)
        if blocks >= 10 and (index + 1) % (blocks // 10) == 0:
            say(f"  block {index + 1:,} of {blocks:,} ({time.perf_counter() - started:.0f} s)")
    for writer in writers:
        writer.close()
    done.write_text(json.dumps(spec, indent=2, sort_keys=True) + "\n")
    return run_path, qrels_path


# -- one engine, in its own process -----------------------------------------------------------------
def memory_bytes(text: str) -> int:
    """Spark's memory size (`4g`, `512m`, `2048k`; a bare number is bytes) in bytes.

    >>> memory_bytes("4g"), memory_bytes("512m")
    (4294967296, 536870912)
    """
    match = re.fullmatch(r"([0-9]+)([kmgt]?)b?", text.strip().lower())
    if not match:
        raise SystemExit(f"--spark-memory is a size such as 4g or 512m, not {text!r}")
    return int(match[1]) * 1024 ** " kmgt".index(match[2] or " ")


def measure(
    engine: str,
    run: str | Path,
    qrels: str | Path,
    values: str | Path,
    duckdb_memory: str | None = None,
    spark_memory: str | None = None,
    workdir: str | Path | None = None,
    warehouse: str | Path = ":memory:",
) -> dict:
    """Evaluate `run` against `qrels` on `engine` (duckdb or spark) with rankhouse's models, as `rankhouse
    eval --db WAREHOUSE` does, and write every per-query value to the Parquet file `values` (query, measure, value).
    Returns the seconds (startup: Spark's JVM; load; measures: the models; write), the means and this
    process's peak memory by the end of the load (the JVM's not included).

    `duckdb_memory` is DuckDB's memory_limit (a Spark size: 4g), `spark_memory` the driver's memory
    (which local mode computes in), `workdir` the folder of the Parquet the engines hand each other,
    `warehouse` the warehouse: in memory (`rankhouse eval`'s default) or a new file (its tables stored
    compressed on disk rather than spilled; its spill beside it, `<file>.tmp`).

    Example: measure("duckdb", "run.txt", "qrels.txt", "/tmp/values.parquet")["means"]["AP"]
    """
    import pyarrow.parquet as pq

    from rankhouse.evaluation import compute_measures, load_inputs
    from rankhouse.measures import parse_measures
    from rankhouse.progress import TextProgress
    from rankhouse.warehouse import Warehouse
    from rankhouse.warehouse.runner import DuckDBEngine

    progress = TextProgress(tty=False)
    started = time.perf_counter()
    if engine == "spark":
        if spark_memory:  # read when pyspark starts the JVM: before the session
            os.environ["PYSPARK_SUBMIT_ARGS"] = f"--driver-memory {spark_memory} pyspark-shell"
        from rankhouse.warehouse.spark import SparkEngine

        builder = SparkEngine(MASTER, workdir)
        builder.start()
        driver_memory = builder.session.sparkContext.getConf().get("spark.driver.memory", "1g (Spark's default)")
    else:
        builder, driver_memory = DuckDBEngine(), None
    try:
        startup = time.perf_counter()
        # the warehouse's own limit (RANKHOUSE_MEMORY_LIMIT wins): every connection of it gets it, the one
        # that loads the labels too, and array_aggregates restores it
        limit = f"{memory_bytes(duckdb_memory) // 2**20}MiB" if duckdb_memory else None
        with Warehouse(warehouse, default_memory_limit=limit) as wh:
            memory_limit = wh.sql("SELECT current_setting('memory_limit')")[0][0]  # as DuckDB took it
            _, (name,) = load_inputs(wh, qrels, [f"scale={run}"])
            wh.open_gate()
            loaded = time.perf_counter()
            load_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # this process's, MB
            models = compute_measures(wh, parse_measures(MEASURES), progress=progress, engine=builder)
            computed = time.perf_counter()
            means = dict(
                wh.sql("SELECT measure, value FROM models.run_measures WHERE system = ? AND subset = 'all'", [name])
            )
            table = wh.con.sql(
                f"SELECT query, measure, value FROM models.query_measures WHERE system = '{name}'"
            ).to_arrow_table()
            pq.write_table(table, str(values))
            written = time.perf_counter()
    finally:
        builder.close()
    slowest = sorted(models, key=lambda m: -m.seconds)[:5]
    return {
        "engine": engine,
        "seconds": computed - startup,
        "startup_seconds": startup - started,
        "load_seconds": loaded - startup,
        "load_peak_rss_mb": load_peak,
        "measure_seconds": computed - loaded,
        "write_seconds": written - computed,
        "queries": table.num_rows // len(MEASURES),
        "means": {m: means[m] for m in MEASURES},
        "slowest_models": [[m.model, round(m.seconds, 2)] for m in slowest],
        "duckdb_memory_limit": duckdb_memory,
        "duckdb_memory_limit_in_force": memory_limit,
        "spark_driver_memory_in_force": driver_memory,
        "warehouse": "memory" if str(warehouse) == ":memory:" else "file",
    }


def compare(a: str | Path, b: str | Path, relative: float = RELATIVE) -> dict:
    """Whether two per-query value files (measure's Parquet) hold the same (query, measure) rows with
    values equal within `relative` (|a - b| <= relative x max(|a|, |b|); both NULL counts as equal):
    the rows, how many differ or are on one side only, the largest relative difference and a few of
    the rows that differ.

    Example: compare("duckdb.parquet", "spark.parquet")["equal"]
    """
    import duckdb

    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    con.execute(
        """
        CREATE TEMP TABLE pairs AS
        SELECT coalesce(a.query, b.query) AS query, coalesce(a.measure, b.measure) AS measure,
               a.value AS a, b.value AS b, a.query IS NULL OR b.query IS NULL AS one_side,
               CASE WHEN a.value = b.value OR (a.value IS NULL AND b.value IS NULL) THEN 0
                    ELSE abs(a.value - b.value) / greatest(abs(a.value), abs(b.value)) END AS relative
        FROM read_parquet(?) AS a FULL JOIN read_parquet(?) AS b ON a.query = b.query AND a.measure = b.measure
        """,
        [str(a), str(b)],
    )
    rows, one_side, worst = con.execute(
        "SELECT count(*), count(*) FILTER (WHERE one_side), coalesce(max(relative), 0) FROM pairs"
    ).fetchall()[0]
    differ = "one_side OR relative IS NULL OR relative > ?"  # NULL: a value on one side only
    different = con.execute(f"SELECT count(*) FROM pairs WHERE {differ}", [relative]).fetchall()[0][0]
    examples = con.execute(
        f"SELECT query, measure, a, b FROM pairs WHERE {differ} ORDER BY query, measure LIMIT 5", [relative]
    ).fetchall()
    con.close()
    return {
        "equal": different == 0 and rows > 0, "rows": rows, "different": different, "one_side": one_side,
        "max_relative_difference": worst if worst == worst else None,  # NaN: no pair of values
        "examples": [list(row) for row in examples],
    }  # fmt: skip


def child(args: argparse.Namespace) -> None:
    """The child process: `measure` one engine, its result and its own peak memory (own_peak_mb: not
    the parent's, which wait4 would include) as JSON on the last line of output."""
    result = measure(
        args.child, args.run, args.qrels, args.values, args.duckdb_memory, args.spark_memory, args.workdir,
        args.warehouse_file or ":memory:",
    )  # fmt: skip
    print(json.dumps({**result, "own_peak_mb": own_peak_mb()}))


# -- the parent: both engines, one after the other --------------------------------------------------
def duckdb_folders(tmp: Path, file: Path | None) -> dict[str, list[Path]]:
    """The globs of the DuckDB process's files the bench watches, from the warehouse's layout: its spill
    (every session's scratch folder's spill folders, the labels' connection's included) and, for a warehouse
    in a file, that file with its store, namespace and labels files. An in-memory warehouse's home is a
    `rankhouse-*` folder in the process's temporary folder `tmp`.

    >>> sorted(duckdb_folders(Path("/s/tmp"), None))
    ['duckdb_spill']
    """
    from rankhouse.warehouse.layout import MEMORY, Layout

    layout = Layout.of(file) if file else Layout(MEMORY, tmp / "rankhouse-*")
    folders = {"duckdb_spill": [layout.home / "work" / "*" / "spill*"]}
    if file:
        folders["duckdb_file"] = [file, layout.store, layout.studies, layout.labels]
    return folders


def run_engine(
    engine: str,
    run: Path,
    qrels: Path,
    values: Path,
    label: str,
    duckdb_memory: str | None,
    spark_memory: str,
    warehouse: str = "memory",
) -> dict:
    """`measure` on `engine` in a fresh process, with its scratch folders in a temporary folder (spill,
    Spark's local dir, the handed-over Parquet, the warehouse file if `warehouse` is "file") and their peak
    sizes; a failure is returned, not raised."""
    with tempfile.TemporaryDirectory(prefix="spark-scale-") as scratch:
        tmp, local, handover = (Path(scratch, name) for name in ("tmp", "spark-local", "handover"))
        for folder in (tmp, local, handover):
            folder.mkdir()
        file = Path(scratch, "scale.duckdb") if warehouse == "file" else None
        folders = {**duckdb_folders(tmp, file), "spark_local": local, "handover": handover}
        env = {**os.environ, "TMPDIR": str(tmp), "SPARK_LOCAL_DIRS": str(local)}
        options = {"--run": run, "--qrels": qrels, "--values": values, "--workdir": handover,
                   "--spark-memory": spark_memory, "--duckdb-memory": duckdb_memory,
                   "--warehouse-file": file}  # fmt: skip
        command = [sys.executable, __file__, "--child", engine]
        command += [str(part) for option, value in options.items() if value for part in (option, value)]
        say(f"running {label} on {engine} (fresh process) ...")

        def echo(line: str) -> None:
            if line.strip():
                say(f"  [{engine}] {line}")

        load_before = os.getloadavg()[0]
        done = run_measured(command, env=env, folders=folders, echo=echo, every=0.25, heartbeat=60)
    # Peak memory: the larger of the process tree polled every 0.25 s (the JVM included) and the child's
    # own peak (VmHWM) as it reported it; polling can miss a short peak. Not wait4's maxrss (kept as
    # peak_rss_mb of a child that failed), which includes the parent's: the parent generated the data.
    result = {
        "wall_seconds": done["wall_seconds"], "peak_tree_rss_mb": done["peak_tree_rss_mb"],
        "peak_rss_mb": done["peak_rss_mb"], "peak_memory_mb": done["peak_tree_rss_mb"],
        "peak_disk_mb": done["peak_disk_mb"], "load_average": [load_before, os.getloadavg()[0]],
    }  # fmt: skip
    if done["returncode"]:
        lines = [line for line in done["stderr"].splitlines() if line.strip()]
        why = f"killed by signal {-done['returncode']}" if done["returncode"] < 0 else f"exit {done['returncode']}"
        result |= {"failed": True, "error": f"{why}: {lines[-1] if lines else 'no message'}", "engine": engine}
        say(f"  {engine} failed ({result['error']})")
        return result
    result |= json.loads(done["stdout"].strip().splitlines()[-1])
    result["peak_rss_mb"] = result["own_peak_mb"]
    result["peak_memory_mb"] = max(done["peak_tree_rss_mb"], result["own_peak_mb"])
    say(f"  {engine}: {result['seconds']:.1f} s files to numbers, peak {result['peak_memory_mb']:,.0f} MB")
    return result


def environment() -> dict:
    """Where the figures were measured: the date, rankhouse's commit, versions, cores and memory."""
    import duckdb

    def output(*command: str) -> str:
        try:
            done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            return "unknown"
        return (done.stdout or done.stderr).strip().splitlines()[0] if (done.stdout or done.stderr) else "unknown"

    try:
        from pyspark import __version__ as pyspark
    except ImportError:
        pyspark = None
    with open("/proc/meminfo") as f:
        memory = int(f.readline().split()[1]) * 1024
    return {
        "date": datetime.date.today().isoformat(), "commit": output("git", "rev-parse", "--short", "HEAD"),
        "duckdb": duckdb.__version__, "pyspark": pyspark, "java": output("java", "-version"),
        "cores": os.cpu_count(), "memory_gb": round(memory / 2**30, 1),
    }  # fmt: skip


def stage(
    cache: Path,
    queries: int,
    docs: int,
    seed: int,
    engines: list[str],
    duckdb_memory: str | None,
    spark_memory: str,
    values: Path,
    warehouse: str = "memory",
) -> dict:
    """Generate (or reuse) one size and measure it on `engines` with a `warehouse` in memory or in a file,
    then compare their per-query values."""
    run, qrels = generate(cache, queries, docs, seed)
    label = f"{queries:,} x {docs:,}"
    results: dict = {
        "queries": queries,
        "docs_per_query": docs,
        "seed": seed,
        "lines": queries * docs,
        "run_mb": run.stat().st_size / 2**20,
        "duckdb_memory_limit": duckdb_memory,
        "spark_memory": spark_memory,
        "warehouse": warehouse,
        "engines": {},
    }
    for engine in engines:
        out = values / f"{queries}x{docs}-{engine}.parquet"
        out.unlink(missing_ok=True)
        results["engines"][engine] = run_engine(engine, run, qrels, out, label, duckdb_memory, spark_memory, warehouse)
    ok = [e for e in engines if not results["engines"][e].get("failed")]
    if len(ok) == 2:
        results["equality"] = compare(*(values / f"{queries}x{docs}-{e}.parquet" for e in ok))
        a, b = (results["engines"][e]["means"] for e in ok)
        results["equality"]["max_mean_difference"] = max(abs(a[m] - b[m]) for m in MEASURES)
        say(f"  per-query values equal within {RELATIVE:g} relative: {results['equality']['equal']}")
    return results


# -- its section of docs/performance.md -----------------------------------------------------------------
def _mb(value: float) -> str:
    return f"{value:,.0f}"


def section(results: dict) -> str:
    """The section of docs/performance.md (between BEGIN and END) for the stages in `results`."""
    env = results["environment"]
    lines = [
        f"Measured {env['date']} at {env['commit']} on {env['cores']} cores and {env['memory_gb']} GB "
        f"(duckdb {env['duckdb']}, pyspark {env['pyspark']}, {env['java']}), each engine in a fresh process, "
        "one after the other:",
        "",
    ]
    for stage_result in results["stages"]:
        size = f"{stage_result['queries']:,} queries x {stage_result['docs_per_query']:,} documents"
        limit = stage_result["duckdb_memory_limit"]
        file = stage_result.get("warehouse") == "file"
        lines += [
            f"**{size}** ({stage_result['lines']:,} run lines, {stage_result['run_mb']:,.0f} MB; seed "
            f"{stage_result['seed']}; Spark {MASTER}, driver memory {stage_result['spark_memory']}"
            + (f"; DuckDB memory_limit {limit} in both processes" if limit else "; DuckDB's default memory_limit")
            + ("; warehouse in a file" if file else "; warehouse in memory")
            + (
                f"; measured {stage_result['measured']['date']} at {stage_result['measured']['commit']}"
                if "measured" in stage_result
                else ""
            )
            + "):",
            "",
            "| engine | files to numbers (s) | load (s) | measures (s) | process wall (s) | peak memory (MB) | "
            "peak DuckDB spill (MB) | peak Spark local dir (MB) | Parquet handed over (MB) |"
            + (" peak warehouse files (MB) |" if file else ""),
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |" + (" ---: |" if file else ""),
        ]
        for engine, r in stage_result["engines"].items():
            disk = r["peak_disk_mb"]
            measured = (
                [f"failed: {r['error']}", "", ""]
                if r.get("failed")
                else [f"{r['seconds']:.1f}", f"{r['load_seconds']:.1f}", f"{r['measure_seconds']:.1f}"]
            )
            cells = [engine, *measured, f"{r['wall_seconds']:.1f}", _mb(r["peak_memory_mb"])]
            cells += [_mb(disk[name]) for name in ("duckdb_spill", "spark_local", "handover")]
            cells += [_mb(disk["duckdb_file"])] if file else []
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
        done = {e: r for e, r in stage_result["engines"].items() if not r.get("failed")}
        if len(done) == 2:
            faster, slower = sorted(done, key=lambda e: done[e]["seconds"])
            ratio = done[slower]["seconds"] / done[faster]["seconds"]
            memory = done["spark"]["peak_memory_mb"] / done["duckdb"]["peak_memory_mb"]
            lines.append(
                f"{faster} is {ratio:.1f}x faster from files to numbers; Spark's process tree peaks at "
                f"{memory:.1f}x DuckDB's memory."
            )
        absent = [e for e in ENGINES if e not in stage_result["engines"]]
        if absent:
            lines.append(f"Not measured at this size: {', '.join(absent)} (--only).")
        loads = [f"{e} {r['load_average'][0]:.1f} -> {r['load_average'][1]:.1f}"
                 for e, r in stage_result["engines"].items() if "load_average" in r]  # fmt: skip
        if loads:
            lines.append(f"Load average (1 min) on the machine as each began and ended: {', '.join(loads)}.")
        equality = stage_result.get("equality")
        if equality:
            verdict = "equal" if equality["equal"] else f"NOT equal ({equality['different']:,} differ)"
            lines.append(
                f"Per-query values ({equality['rows']:,}: 5 measures x every query): {verdict} within "
                f"{RELATIVE:g} relative; largest relative difference {equality['max_relative_difference']:.1e}."
            )
            lines.append("")
    full, docs, scale = FULL
    measured = {(s["queries"], s["docs_per_query"]) for s in results["stages"]}
    pending = [f"{q:,} x {docs}" for q in (full, full * scale) if (q, docs) not in measured]
    if pending:
        lines.append(f"Not measured yet: {' and '.join(pending)} (the issue's size and its {scale}x scale-up).")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def rewrite_docs(page: Path, text: str) -> None:
    """Replace what is between the page's BEGIN and END markers (docs/performance.md's) by `text`."""
    rewrite_section(page, "spark_scale.py", text)


def base_stage(path: Path, queries: int, docs: int, seed: int) -> dict:
    """The stage of `queries` x `docs` (seed `seed`) in an earlier --out file, with the environment it was
    measured in; refused (SystemExit) when the file has no such stage."""
    try:
        earlier = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise SystemExit(f"--base-results {path}: cannot be read as an earlier --out file ({error})") from None
    for found in earlier.get("stages", []):
        if (found.get("queries"), found.get("docs_per_query"), found.get("seed")) == (queries, docs, seed):
            return {**found, "measured": earlier["environment"]}
    raise SystemExit(f"--base-results {path}: no stage of {queries:,} x {docs:,} with seed {seed}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=FULL[0], help="queries in the run (default 1,000,000)")
    parser.add_argument("--docs-per-query", type=int, default=FULL[1], help="documents per query (default 100)")
    parser.add_argument("--seed", type=int, default=SEED, help=f"the generator's seed (default {SEED})")
    parser.add_argument(
        "--scale-up",
        type=int,
        default=1,
        metavar="N",
        help="then N x the queries, DuckDB given Spark's driver memory as memory_limit",
    )
    parser.add_argument("--spark-memory", default="4g", help="Spark's driver memory, local mode's (default 4g)")
    parser.add_argument("--only", choices=ENGINES, help="measure one engine only")
    parser.add_argument(
        "--warehouse",
        choices=("memory", "file"),
        default="memory",
        help="the warehouse of the sizes measured: in memory (`rankhouse eval`'s default), or a file in the "
        "scratch folder, tables stored compressed instead of spilled (`rankhouse eval --db FILE`)",
    )
    parser.add_argument(
        "--cache",
        type=Path,
        default=ROOT / "bench" / "out" / "spark_scale",
        help="folder of the generated files, one subfolder per recipe (reused when present)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=ROOT / "bench" / "out",
        help="folder of the results (spark_scale.json) and the per-query values (spark_scale-values/)",
    )
    add_write_docs_option(parser)
    parser.add_argument(
        "--from-results", type=Path, metavar="FILE", help="measure nothing: the section of an earlier --out file"
    )
    parser.add_argument(
        "--base-results",
        type=Path,
        metavar="FILE",
        help="with --scale-up: the base size's stage from an earlier --out file of the same size and seed "
        "(measured then, not again); only the scaled-up size is measured",
    )
    for hidden in ("--child", "--run", "--qrels", "--values", "--workdir", "--duckdb-memory", "--warehouse-file"):
        parser.add_argument(hidden, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    if args.from_results:
        finish(json.loads(args.from_results.read_text()), args.write_docs)
        return
    memory_bytes(args.spark_memory)  # refused here, before anything runs
    if args.base_results:
        if args.scale_up < 2:
            raise SystemExit("--base-results goes with --scale-up N (N >= 2): it stands for the base size")
        base_stage(args.base_results, args.queries, args.docs_per_query, args.seed)  # refused before anything runs
    if args.scale_up < 1:
        raise SystemExit("--scale-up is a whole number of at least 1")
    engines = [args.only] if args.only else list(ENGINES)
    target = results_file(args.out, "spark_scale")
    values = args.out / "spark_scale-values"
    values.mkdir(parents=True, exist_ok=True)
    say(f"seed {args.seed}; engines {', '.join(engines)}; Spark {MASTER}, driver memory {args.spark_memory}")
    results = {"environment": environment(), "stages": []}
    if args.base_results:
        results["stages"].append(base_stage(args.base_results, args.queries, args.docs_per_query, args.seed))
    else:
        results["stages"].append(
            stage(
                args.cache,
                args.queries,
                args.docs_per_query,
                args.seed,
                engines,
                None,
                args.spark_memory,
                values,
                args.warehouse,
            )  # fmt: skip
        )
    if args.scale_up > 1:
        results["stages"].append(
            stage(
                args.cache,
                args.queries * args.scale_up,
                args.docs_per_query,
                args.seed,
                engines,
                args.spark_memory,
                args.spark_memory,
                values,
                args.warehouse,
            )
        )
    target.write_text(json.dumps(results, indent=2) + "\n")
    finish(results, args.write_docs)


def finish(results: dict, write_docs: bool) -> None:
    """Print the section of `results`; with `write_docs`, write it between docs/performance.md's markers."""
    text = section(results)
    print(text, end="")
    if write_docs:
        rewrite_docs(PERFORMANCE, text)
        say(f"rewrote {PERFORMANCE} between {BEGIN} and {END}")


if __name__ == "__main__":
    main()
