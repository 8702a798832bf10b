"""Speed of the evidence study's two selections (seed 000) on pools of 10, 20 and 40 documents: the greedy
facet-coverage selection (the evidence_greedy model: SQL that builds each task's gain and penalty lists,
then the Python UDF) and the oracle (the evidence_oracle model: every 5-subset of each pool enumerated
in SQL, C(10, 5) = 252, C(20, 5) = 15,504, C(40, 5) = 658,008 per task).

Generated data (seeded, numpy PCG64): per pool size, `--tasks` tasks with a question and 4
requirements, each pool its own documents; random unit vectors (384 dimensions) in which each
document leans towards one facet, so gains and penalties are spread as in real pools; both judges
grade every pair (0-3) and list the requirement a document leans towards when its grade is 2 or 3, B
dropping it for one pair in seven. Everything is loaded through the bundle loaders into an in-memory
warehouse; the vectors go straight into raw.evidence_vectors and raw.evidence_facet_vectors (no
encoding). Each size is timed in its own warehouse:

- `greedy`: the evidence_greedy model alone, its parents already built (meta.model_runs seconds,
  audits included), and `greedy_python`: the same selections by rankhouse.studies.evidence.select.greedy_select
  called directly on lists fetched beforehand (the UDF's own share).
- `oracle`: the evidence_oracle model alone, its parents already built.

    python bench/evidence_speed.py [--tasks 8] [--sizes 10 20 40] [--seed 20261202] [--out bench/out]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import tempfile
import time
from pathlib import Path

import numpy as np
from peers import results_file

REQUIREMENTS = 4
DIMENSION = 384


def write_bundle(folder: Path, tasks: int, size: int, seed: int) -> dict:
    """Bundle files for `tasks` tasks with pools of `size` documents; returns the vectors to insert."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    task_lines, pools, documents, judgments, vectors = [], {}, [], [], {}
    for t in range(tasks):
        task_id = f"t{t:03d}"
        facets = rng.normal(size=(REQUIREMENTS + 1, DIMENSION))
        facets /= np.linalg.norm(facets, axis=1, keepdims=True)
        for f, vector in enumerate(facets):
            vectors[(task_id, f)] = vector
        task_lines.append({"task_id": task_id, "question": f"question {t}",
                           "requirements": [f"requirement {t} {k}" for k in range(REQUIREMENTS)],
                           "split": "development" if t % 4 == 3 else "final"})  # fmt: skip
        pools[task_id] = []
        for d in range(size):
            doc_id = f"{task_id}-d{d:03d}"
            lean = int(rng.integers(0, REQUIREMENTS + 1))
            vector = facets[lean] * rng.uniform(0.2, 0.8) + rng.normal(size=DIMENSION) / math.sqrt(DIMENSION)
            vectors[doc_id] = vector / np.linalg.norm(vector)
            documents.append({"doc_id": doc_id, "text": f"document {t} {d} about facet {lean}"})
            pools[task_id].append(doc_id)
            grade = int(rng.integers(0, 4))
            obligations = [lean - 1] if lean > 0 and grade >= 2 else []
            judgments.append({"task_id": task_id, "doc_id": doc_id, "judge": "A", "grade": grade,
                              "obligations": obligations})  # fmt: skip
            dropped = rng.random() < 1 / 7
            judgments.append({"task_id": task_id, "doc_id": doc_id, "judge": "B", "grade": grade,
                              "obligations": [] if dropped else obligations})  # fmt: skip
    for name, rows in (("tasks.jsonl", task_lines), ("documents.jsonl", documents), ("judgments.jsonl", judgments)):
        (folder / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / "pool-key.json").write_text(json.dumps(pools))
    return vectors


def measure(tasks: int, size: int, seed: int) -> dict:
    import pyarrow as pa

    from rankhouse.studies.evidence.loaders import (
        load_evidence_documents,
        load_evidence_judgments,
        load_evidence_pool,
        load_evidence_tasks,
    )
    from rankhouse.studies.evidence.select import greedy_select, record_program
    from rankhouse.warehouse import Warehouse
    from rankhouse.warehouse.dag import Project
    from rankhouse.warehouse.runner import Runner

    with tempfile.TemporaryDirectory() as tmp, Warehouse(":memory:") as wh:
        folder = Path(tmp) / "bench"
        vectors = write_bundle(folder, tasks, size, seed)
        loads = {"tasks.jsonl": load_evidence_tasks, "documents.jsonl": load_evidence_documents,
                 "pool-key.json": load_evidence_pool, "judgments.jsonl": load_evidence_judgments}  # fmt: skip
        for name, load in loads.items():
            load(wh, folder / name)
        documents = [(k, v) for k, v in vectors.items() if isinstance(k, str)]
        facets = [(k, v) for k, v in vectors.items() if isinstance(k, tuple)]

        def array(rows: list) -> pa.Array:
            matrix = np.asarray([v for _, v in rows], dtype=np.float32)
            return pa.FixedSizeListArray.from_arrays(pa.array(matrix.ravel()), DIMENSION)

        wh.con.register("rh_docs", pa.table({"doc_id": [k for k, _ in documents], "vector": array(documents)}))
        keys = {"task_id": [k[0] for k, _ in facets], "facet": [k[1] for k, _ in facets]}
        wh.con.register("rh_facets", pa.table({**keys, "vector": array(facets)}))
        wh.sql("INSERT INTO raw.evidence_vectors SELECT 'bench', doc_id, vector FROM rh_docs")
        wh.sql("INSERT INTO raw.evidence_facet_vectors SELECT 'bench', task_id, facet, vector FROM rh_facets")
        record_program(wh)
        wh.open_gate()
        params = {"bundle": "bench"}
        project = Project.load(params=params)
        runner = Runner(wh, project, params)
        timings: dict = {"tasks": tasks, "pool": size, "subsets_per_task": math.comb(size, 5)}
        for target in ("evidence_greedy", "evidence_oracle"):
            runner.run(sorted(project.ancestors(target), key=project.order.index))
            start = time.perf_counter()
            (run,) = runner.run([target])
            timings[target.removeprefix("evidence_")] = {"model_seconds": run.seconds,
                                                         "wall_seconds": time.perf_counter() - start}  # fmt: skip
        inputs = wh.sql(
            "SELECT p.doc_ids, g.gains, p.penalties FROM (SELECT task_id, list(doc_a ORDER BY doc_a) AS doc_ids, "
            "list(penalties ORDER BY doc_a) AS penalties FROM (SELECT a.task_id, a.doc_id AS doc_a, "
            "list(coalesce(p.penalty, 0.0) ORDER BY b.doc_id) AS penalties FROM raw.evidence_pools AS a "
            "JOIN raw.evidence_pools AS b ON b.task_id = a.task_id LEFT JOIN models.evidence_pair_penalties AS p "
            "ON p.task_id = a.task_id AND p.doc_a = least(a.doc_id, b.doc_id) AND p.doc_b = greatest(a.doc_id, "
            "b.doc_id) GROUP BY a.task_id, a.doc_id) GROUP BY task_id) AS p JOIN (SELECT task_id, "
            "list(gains ORDER BY facet) AS gains FROM (SELECT task_id, facet, list(gain ORDER BY doc_id) AS gains "
            "FROM models.evidence_facet_gains GROUP BY task_id, facet) GROUP BY task_id) AS g USING (task_id)"
        )
        start = time.perf_counter()
        selections = [greedy_select(ids, gains, penalties, 5) for ids, gains, penalties in inputs]
        timings["greedy_python_seconds"] = time.perf_counter() - start
        stored = wh.sql(
            "SELECT list(doc_id ORDER BY rank) FROM models.evidence_greedy GROUP BY task_id ORDER BY task_id"
        )
        timings["greedy_python_agrees"] = sorted(map(tuple, selections)) == sorted(tuple(s) for (s,) in stored)
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=8)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 20, 40])
    parser.add_argument("--seed", type=int, default=20261202)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "out")
    args = parser.parse_args()
    target = results_file(args.out, "evidence_speed")  # refused here, before anything is measured
    results = {"machine": {"cpus": os.cpu_count()}, "sizes": []}
    for size in args.sizes:
        timing = measure(args.tasks, size, args.seed + size)
        results["sizes"].append(timing)
        print(
            f"pool {size:>3}: {args.tasks} tasks, {timing['subsets_per_task']:>7,} subsets per task; greedy model "
            f"{timing['greedy']['model_seconds']:.3f} s (UDF alone {timing['greedy_python_seconds']:.4f} s), "
            f"oracle model {timing['oracle']['model_seconds']:.2f} s",
            flush=True,
        )
    from importlib.metadata import version

    results["versions"] = {"duckdb": version("duckdb"), "rankhouse": version("rankhouse")}
    target.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
