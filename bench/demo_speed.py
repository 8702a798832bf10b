"""The main job's speed and memory: `rankhouse demo` on a fresh warehouse (cold: encode the 13,083
BANKING77 messages, prepare, freeze, evaluate, write the outputs), the same again with nothing changed
(warm: vectors from the cache, models skipped, the freeze reused), and `rankhouse study status` on the
result. Each command runs in a fresh process through the `rankhouse` CLI, one after the other, on a
warehouse (`--db`), outputs (`--out`) and freezes in a temporary folder, so nothing of the checkout is
touched; the encoder's ONNX cache is the user's, as the demo's is.

Per command: its wall time, its peak memory (the process's own, from wait4, and the process tree's,
polled: bench/peers.py run_measured), the load average as it began and ended; for the cold demo the
slowest models (meta.model_runs) and where the time went between the demo's progress events (encoding,
generating the resample plan, the prepare models, the freeze, the evaluate models, the outputs).
`RANKHOUSE_MEMORY_LIMIT`, when set, is passed on (and reported).

    python bench/demo_speed.py                    # once: cold, warm, status
    python bench/demo_speed.py --repeat 3         # three fresh warehouses, one after the other
    python bench/demo_speed.py --vectors-from W   # each fresh warehouse given W's vectors: no encoding
    python bench/demo_speed.py --write-docs       # and its section of docs/performance.md
    python bench/demo_speed.py --from-results bench/out/demo_speed.json --write-docs
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from peers import PERFORMANCE, add_write_docs_option, machine, results_file, rewrite_section, run_measured

ROOT = Path(__file__).resolve().parent.parent
STUDY = "studies/banking77.toml"
SLOWEST = 5  # models listed per cold demo
# The cold demo's phases, in order: what the time between two of the demo's progress events was spent on.
PHASES = (
    "load the texts",  # until the queries are loaded
    "encode (MiniLM)",  # until the queries' vectors are stored
    "generate the resample plan",
    "prepare models",  # until the last model built before the freeze
    "freeze",  # hash what is frozen, write the freeze file
    "evaluate (labels, models)",  # until the results are kept
    "write the outputs",  # until the process ends
)
COMMANDS = {"cold demo": "rankhouse demo", "warm demo": "rankhouse demo (again)",
            "study status": f"rankhouse study status {STUDY}"}  # fmt: skip


def say(message: str) -> None:
    """A progress line on stderr."""
    print(message, file=sys.stderr, flush=True)


def rankhouse() -> list[str]:
    """The `rankhouse` CLI of this Python: the script beside it, else `python -m rankhouse`."""
    script = Path(sys.executable).parent / "rankhouse"
    return [str(script)] if script.exists() else [sys.executable, "-m", "rankhouse"]


def measure(command: list[str], cwd: Path) -> dict:
    """Run one CLI command of the checkout `cwd` (its package, studies/ and data/) and measure it; its --json
    progress events are kept with the second each was read at (half a second's resolution), and the process
    tree's memory every second."""
    events: list[tuple[float, dict]] = []
    memory: list[tuple[float, float]] = []  # (second, MB of the process tree), every second
    started = time.perf_counter()

    def heard(line: str) -> None:
        beat = re.fullmatch(r"\.\.\. [\d.]+ s, ([\d,]+) MB", line)
        if beat:
            memory.append((time.perf_counter() - started, float(beat.group(1).replace(",", ""))))
            return
        try:
            event = json.loads(line)
        except ValueError:
            return
        if isinstance(event, dict):
            events.append((time.perf_counter() - started, event))

    before = os.getloadavg()[0]
    # the checkout's package first, whatever the environment's rankhouse is installed from; Python caching
    # the modules' bytecode as it does by default (this machine's shell sets PYTHONDONTWRITEBYTECODE, which
    # compiles rankhouse's 50-odd modules again in every process: a share of `study status`, docs/performance.md)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(cwd), os.environ.get("PYTHONPATH")])))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    previous = os.getcwd()
    os.chdir(cwd)
    try:
        done = run_measured(command, env=env, echo=heard, heartbeat=1.0)
    finally:
        os.chdir(previous)
    if done["returncode"]:
        raise SystemExit(f"{' '.join(command)} failed ({done['returncode']}):\n{done['stderr'][-3000:]}")
    return {
        "command": " ".join(command[len(rankhouse()) :]),
        "wall_seconds": done["wall_seconds"],
        "cpu_seconds": done["cpu_seconds"],
        "peak_rss_mb": done["peak_rss_mb"],
        "peak_tree_rss_mb": done["peak_tree_rss_mb"],
        "load_average": [before, os.getloadavg()[0]],
        "events": events,
        "memory": memory,
    }


def phases(events: list[tuple[float, dict]], wall: float) -> list[tuple[str, float]]:
    """Seconds per phase of PHASES, from the times the demo's --json events were read: each phase ends
    at an event (the load of a table, the last model built before the freeze's note, a note), the last
    one with the process. A phase whose event never came is left out, its time going to the next.

    >>> events = [(1.0, {"event": "load", "table": "raw.queries"}), (9.0, {"event": "load", "table":
    ...           "raw.query_vectors"}), (9.5, {"event": "model", "model": "m"}), (9.9, {"event": "note",
    ...           "message": "froze s-1 in f"})]
    >>> [(name, round(seconds, 1)) for name, seconds in phases(events, 10.0)]  # doctest: +NORMALIZE_WHITESPACE
    [('load the texts', 1.0), ('encode (MiniLM)', 8.0), ('prepare models', 0.5), ('freeze', 0.4),
     ('write the outputs', 0.1)]
    """

    def loaded(table: str):  # a loader's event, or a generator's note (vectors, plans) saying where it loaded
        return lambda e: (
            (e.get("event") == "load" and e.get("table") == table)
            or (e.get("event") == "note" and f"into {table} " in str(e.get("message", "")))
        )

    def noted(pattern: str):
        return lambda e: e.get("event") == "note" and re.search(pattern, str(e.get("message", ""))) is not None

    froze = noted(r"^froze |^unchanged since freeze")
    frozen_at = next((i for i, (_, e) in enumerate(events) if froze(e)), len(events))
    built = [i for i, (_, e) in enumerate(events[:frozen_at]) if e.get("event") == "model"]
    ends = {
        "load the texts": loaded("raw.queries"),
        "encode (MiniLM)": loaded("raw.query_vectors"),
        "generate the resample plan": loaded("raw.resample_plans"),
        "prepare models": lambda e, last=built[-1] if built else None: last is not None and e is events[last][1],
        "freeze": froze,
        "evaluate (labels, models)": noted(r"^results of .* kept|was evaluated before"),
    }
    found, start, position = [], 0.0, 0
    for name in PHASES:
        if name not in ends:
            found.append((name, wall - start))
            break
        for index in range(position, len(events)):
            at, event = events[index]
            if ends[name](event):
                found.append((name, at - start))
                start, position = at, index + 1
                break
    return found


def phase_peaks(found: list[tuple[str, float]], memory: list[tuple[float, float]]) -> dict[str, float]:
    """The largest memory sample (MB) within each phase of `found` (seconds per phase, in order).

    >>> phase_peaks([("a", 2.0), ("b", 3.0)], [(0.5, 100.0), (1.5, 300.0), (2.5, 200.0), (4.0, 250.0)])
    {'a': 300.0, 'b': 250.0}
    """
    peaks, start = {}, 0.0
    for name, seconds in found:
        inside = [mb for at, mb in memory if start <= at < start + seconds]
        if inside:
            peaks[name] = max(inside)
        start += seconds
    return peaks


def study_file(db: Path) -> Path:
    """The file holding the demo study's meta.model_runs: its namespace file (`<db stem>.d/studies/`,
    rankhouse/warehouse/layout.py), or `db` itself for a checkout from before namespaces (a9a3359 and
    earlier)."""
    namespace = db.parent / f"{db.stem}.d" / "studies" / "banking77.duckdb"
    return namespace if namespace.exists() else db


def slowest(db: Path, limit: int = SLOWEST) -> list[tuple[str, float]]:
    """The models that took longest to build, from the demo study's meta.model_runs (read-only)."""
    import duckdb

    with duckdb.connect(str(study_file(db)), read_only=True) as con:
        rows = con.execute(
            "SELECT model, seconds FROM meta.model_runs WHERE status = 'built' ORDER BY seconds DESC LIMIT ?",
            [limit],
        ).fetchall()
    return [(model, float(seconds)) for model, seconds in rows]


def sizes(db: Path) -> dict[str, int]:
    """Bytes on disk of the warehouse's files by kind (rankhouse/warehouse/layout.py): the inputs file, the
    store, the namespaces, the labels (the checkout before namespaces: its main and labels files)."""
    home = db.parent / f"{db.stem}.d"
    kinds = {"inputs": [db], "store": [], "namespaces": [], "labels": [db.parent / f"{db.stem}.labels.duckdb"]}
    if home.is_dir():
        kinds["store"] = [p for p in (home / "store").glob("*.duckdb")]
        kinds["namespaces"] = [p for p in (home / "studies").glob("*.duckdb")]
        kinds["labels"] = [p for p in (home / "labels").glob("*.duckdb")]
    return {kind: sum(p.stat().st_size for p in paths if p.exists()) for kind, paths in kinds.items()}


def seed_vectors(db: Path, source: Path, checkout: Path) -> int:
    """Copy `source`'s vector cache (raw.vector_cache) into a new warehouse `db`, so that its cold demo
    encodes nothing: the rest of the cold demo, measured apart from the encoder. Returns the vectors
    copied. The warehouse is made by the checkout's own rankhouse (its layout is the checkout's)."""
    script = (
        "import sys, duckdb\n"
        "from rankhouse.warehouse import Warehouse\n"
        "rows = duckdb.connect(sys.argv[2], read_only=True).sql('FROM raw.vector_cache').to_arrow_table()\n"
        "with Warehouse(sys.argv[1]) as wh:\n"
        "    writing = getattr(wh, 'writing_inputs', None)\n"
        "    import contextlib\n"
        "    with (writing() if writing else contextlib.nullcontext()), wh.registered('seeded', rows):\n"
        "        wh.sql('INSERT INTO raw.vector_cache SELECT * FROM seeded')\n"
        "        print(wh.sql('SELECT count(*) FROM raw.vector_cache')[0][0])\n"
    )
    env = dict(os.environ, PYTHONPATH=str(checkout))
    done = subprocess.run([sys.executable, "-c", script, str(db), str(source)], capture_output=True, text=True,
                          env=env, cwd=checkout)  # fmt: skip
    if done.returncode:
        raise SystemExit(f"seeding {db} with {source}'s vectors failed:\n{done.stderr[-3000:]}")
    return int(done.stdout.strip())


def one_round(scratch: Path, checkout: Path = ROOT, vectors_from: Path | None = None) -> dict:
    """Cold demo, warm demo and study status of `checkout` on a fresh warehouse in `scratch` (its vector
    cache seeded from `vectors_from`, when given)."""
    db, out = scratch / "rankhouse.duckdb", scratch / "out"
    if vectors_from is not None:
        say(f"  {seed_vectors(db, vectors_from, checkout):,} vectors from {vectors_from}")
    demo = [*rankhouse(), "demo", "--db", str(db), "--out", str(out), "--json"]
    found = {}
    for name, command in (
        ("cold demo", demo),
        ("warm demo", demo),
        ("study status", [*rankhouse(), "study", "status", STUDY, "--db", str(db)]),
    ):
        say(f"  {name} ...")
        found[name] = measure(command, checkout)
        say(f"  {name}: {found[name]['wall_seconds']:.1f} s, {found[name]['peak_tree_rss_mb']:,.0f} MB")
    cold = found["cold demo"]
    cold["slowest"] = slowest(db)
    found["warehouse_bytes"] = sizes(db)
    cold["phases"] = phases(cold["events"], cold["wall_seconds"])
    cold["phase_peaks_mb"] = phase_peaks(cold["phases"], cold["memory"])
    for name in COMMANDS:
        del found[name]["events"], found[name]["memory"]
    return found


def section(results: dict) -> str:
    """The section of docs/performance.md for `results` (the rounds of one invocation)."""
    env = results["environment"]
    limit = results["memory_limit"]
    rounds = results["rounds"]
    lines = [
        f"Measured {env['date']} at {env['commit']} on {env['cores']} cores and {env['memory_gb']} GB, "
        f"{len(rounds)} round{'s' if len(rounds) > 1 else ''} (a fresh warehouse each), every command in a fresh "
        f"process, one after the other; RANKHOUSE_MEMORY_LIMIT "
        f"{limit or 'not set (so `rankhouse demo` gives DuckDB its DEMO_MEMORY_LIMIT, 1500MB since 1fcc8d2)'}"
        + ("; the vectors cached beforehand (nothing encoded)" if results.get("vectors_from") else "")
        + ":",
        "",
        "| command | wall (s) | CPU, user + system (s) | peak memory, process tree (MB) | load average (1 min), "
        "as it began -> ended |",
        "| --- | ---: | ---: | ---: | --- |",
    ]
    for name in ("cold demo", "warm demo", "study status"):
        runs = [r[name] for r in rounds]
        walls = ", ".join(f"{r['wall_seconds']:.1f}" for r in runs)
        cpus = ", ".join(f"{r['cpu_seconds']:.1f}" for r in runs)
        peaks = ", ".join(f"{r['peak_tree_rss_mb']:,.0f}" for r in runs)
        loads = ", ".join(f"{r['load_average'][0]:.1f} -> {r['load_average'][1]:.1f}" for r in runs)
        lines.append(f"| `{COMMANDS[name]}` | {walls} | {cpus} | {peaks} | {loads} |")
    lines += ["", "Where the cold demo's time went: seconds per phase (its peak memory, sampled every second):", ""]
    names = list(PHASES)
    lines += ["| phase | " + " | ".join(f"round {i + 1}" for i in range(len(rounds))) + " |",
              "| --- |" + " ---: |" * len(rounds)]  # fmt: skip
    for name in names:
        cells = [
            next((f"{s:.1f} ({r['cold demo']['phase_peaks_mb'].get(name, 0):,.0f} MB)"
                  for n, s in r["cold demo"]["phases"] if n == name), "")
            for r in rounds
        ]  # fmt: skip
        if any(cells):
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
    models = "; ".join(", ".join(f"`{m}` {s:.1f} s" for m, s in r["cold demo"]["slowest"]) for r in rounds)
    lines += ["", f"Slowest models of the cold demo (meta.model_runs): {models}.", ""]
    if all("warehouse_bytes" in r for r in rounds):

        def mb(n: int) -> str:
            return f"{n / 1e6:,.1f}"

        kinds = ("inputs", "store", "namespaces", "labels")
        cells = [" + ".join(mb(r["warehouse_bytes"][k]) for k in kinds) + f" = {mb(sum(r['warehouse_bytes'].values()))}"
                 for r in rounds]  # fmt: skip
        lines += [f"The warehouse on disk after the cold demo, MB (inputs + store + namespaces + labels): "
                  f"{'; '.join(cells)}.", ""]  # fmt: skip
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=1, help="rounds, each on a fresh warehouse (default 1)")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "out", help="folder of demo_speed.json")
    parser.add_argument(
        "--checkout",
        type=Path,
        default=ROOT,
        help="the checkout whose rankhouse runs (default this one; e.g. a worktree of an earlier commit, to compare)",
    )
    parser.add_argument(
        "--vectors-from",
        type=Path,
        metavar="DB",
        help="seed each fresh warehouse with this warehouse's vector cache: a cold demo that encodes nothing",
    )
    add_write_docs_option(parser)
    parser.add_argument("--from-results", type=Path, metavar="FILE", help="measure nothing: an earlier --out file")
    args = parser.parse_args()
    if args.from_results:
        results = json.loads(args.from_results.read_text())
    else:
        target = results_file(args.out, "demo_speed")  # refused here, before a five-minute run
        results = {"environment": machine(), "memory_limit": os.environ.get("RANKHOUSE_MEMORY_LIMIT"), "rounds": []}
        results["checkout"] = str(args.checkout.resolve())
        results["vectors_from"] = str(args.vectors_from) if args.vectors_from else None
        if args.checkout.resolve() != ROOT:  # the commit measured is the checkout's
            rev = ["git", "-C", str(args.checkout), "rev-parse", "--short", "HEAD"]
            results["environment"]["commit"] = subprocess.run(rev, capture_output=True, text=True).stdout.strip()
        for n in range(args.repeat):
            say(f"round {n + 1} of {args.repeat}")
            with tempfile.TemporaryDirectory(prefix="rankhouse-demo-") as scratch:
                results["rounds"].append(one_round(Path(scratch), args.checkout.resolve(), args.vectors_from))
        target.write_text(json.dumps(results, indent=2) + "\n")
    text = section(results)
    print(text, end="")
    if args.write_docs:
        rewrite_section(PERFORMANCE, "demo_speed.py", text)
        say(f"rewrote {PERFORMANCE}'s section of bench/demo_speed.py")


if __name__ == "__main__":
    main()
