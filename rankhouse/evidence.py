"""The evidence study (seed 000): its one piece of Python selection, and the tables its models read.

- The greedy facet-coverage selection, the only Python in the selection, registered on every
  connection as the scalar UDF `evidence_greedy(doc_ids, gains, penalties, budget, program)`: per
  task, the pool's doc_ids (ascending), the normalised facet gains (one list per facet, in doc_id
  order), the pair penalties (a doc x doc matrix in doc_id order) and the budget in; the selected
  doc_ids out, in selection order. Everything it reads is computed in SQL (models/evidence/).
- `record_program`: the SHA-256 of the selection's source in raw.evidence_programs. The model that
  calls the UDF passes that row's hash, which the UDF checks against its own source; so an edited
  program changes the model's fingerprint (through meta.sources) and the freeze, or refuses to run.
- `encode_bundle`: MiniLM vectors of a bundle's documents (unless the bundle brought its own, loaded
  by `evidence.vectors`: kept unchanged) into raw.evidence_vectors, and of every task's facets, the
  question (facet 0) and each requirement on its own (facet k + 1 for requirement k, no rewriting),
  into raw.evidence_facet_vectors; every text goes through raw.vector_cache.
- `store_subset_plans`: the paired bootstrap plans, one per subset (all tasks, each split), each over
  that subset's own tasks in tasks.jsonl order, from the same recorded seed.
- `export_bundle`: the bundle as used, in the documented format, with every vector and both
  comparator runs, so that anyone can recompute the selections.

The objective (seed 000): F(S) = [sum_f max_{d in S} g(f, d) - sum_{{d, e} in S} p(d, e)] / (m + 1),
with g the normalised positive cosine of facet f and document d, p(d, e) = max(0, d.e) / C(5, 2), and
max over the empty set 0. Greedy: start empty; for `budget` steps add the unselected member with the
largest F(S + d) - F(S); exact ties go to the smaller doc_id; the selection order is the ranking.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import math
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from rankhouse.errors import RankhouseError

if TYPE_CHECKING:
    import duckdb

    from rankhouse.loaders.sources import LoadResult
    from rankhouse.warehouse import Warehouse

UDF = "evidence_greedy"
PROGRAM = "evidence_greedy"  # its row in raw.evidence_programs
SUBSETS = ("all", "development", "final")  # bootstrap subsets: every task, and each split


# -- the greedy selection ---------------------------------------------------------------------------
def objective(gains: Sequence[Sequence[float]], penalties: Sequence[Sequence[float]], members: Sequence[int]) -> float:
    """F(S) of the members (indices into the pool) with `gains[f][i]` per facet f and `penalties[i][j]`.

    Both sums are exactly rounded (math.fsum), so F(S) does not depend on the order of S.

    >>> objective([[1.0, 0.5], [0.0, 1.0]], [[0.0, 0.1], [0.1, 0.0]], [0, 1])
    0.95
    """
    covered = [max((row[i] for i in members), default=0.0) for row in gains]
    pairs = [penalties[i][j] for k, i in enumerate(members) for j in members[k + 1 :]]
    return (math.fsum(covered) - math.fsum(pairs)) / len(gains)


def greedy_steps(
    doc_ids: Sequence[str], gains: Sequence[Sequence[float]], penalties: Sequence[Sequence[float]], budget: int
) -> list[tuple[str, float]]:
    """The greedy selection with each step's gain F(S + d) - F(S): [(doc_id, gain), ...] in selection order.

    `gains` has one row per facet and `penalties` one row per document, both in the order of `doc_ids`.
    Candidates are tried in ascending doc_id and only a strictly larger gain replaces the best, so an
    exact tie goes to the smaller doc_id. A pool smaller than the budget is selected whole.

    >>> greedy_steps(["b", "a"], [[1.0, 1.0]], [[0.0, 0.0], [0.0, 0.0]], 5)
    [('a', 1.0), ('b', 0.0)]
    """
    n = len(doc_ids)
    if not gains or any(len(row) != n for row in gains) or len(penalties) != n or any(len(r) != n for r in penalties):
        raise ValueError(f"evidence_greedy: {len(gains)} gain rows and {len(penalties)} penalty rows for {n} documents")
    if len(set(doc_ids)) != n:
        raise ValueError("evidence_greedy: a doc_id is listed twice")
    values = [v for row in (*gains, *penalties) for v in row]
    if not all(v is not None and math.isfinite(v) for v in values):
        raise ValueError("evidence_greedy: a gain or penalty is missing or not finite")
    order = sorted(range(n), key=lambda i: doc_ids[i])
    chosen: list[int] = []
    steps: list[tuple[str, float]] = []
    current = 0.0  # F of the empty set
    for _ in range(min(budget, n)):
        best, best_gain = -1, -math.inf
        for i in order:
            if i in chosen:
                continue
            gain = objective(gains, penalties, [*chosen, i]) - current
            if gain > best_gain:
                best, best_gain = i, gain
        chosen.append(best)
        current = objective(gains, penalties, chosen)
        steps.append((doc_ids[best], best_gain))
    return steps


def greedy_select(
    doc_ids: Sequence[str], gains: Sequence[Sequence[float]], penalties: Sequence[Sequence[float]], budget: int
) -> list[str]:
    """The selected doc_ids in selection order (see greedy_steps)."""
    return [doc_id for doc_id, _ in greedy_steps(doc_ids, gains, penalties, budget)]


@functools.cache
def program_sha256() -> str:
    """SHA-256 of the selection's source: objective, greedy_steps and greedy_select (read once, at import)."""
    source = "\n".join(inspect.getsource(f) for f in (objective, greedy_steps, greedy_select))
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


program_sha256()  # the source as imported, not as a later edit of the file would read


def _udf(doc_ids: list, gains: list, penalties: list, budget: int, program: str | None) -> list[str]:
    """The SQL function: refuses to select with a program other than the one recorded."""
    if program is None:
        raise ValueError(
            "evidence_greedy: no program recorded in raw.evidence_programs (the study's evidence_vectors step "
            "records it; or call rankhouse.evidence.record_program)"
        )
    if program != program_sha256():
        raise ValueError(
            f"evidence_greedy: the selection program changed since it was recorded (recorded {program[:16]}..., "
            f"now {program_sha256()[:16]}...): prepare the study again"
        )
    if doc_ids is None or gains is None or penalties is None or budget is None:
        raise ValueError("evidence_greedy: a task without documents, gains or penalties")
    return greedy_select(doc_ids, gains, penalties, budget)


def register_functions(con: duckdb.DuckDBPyConnection) -> None:
    """Register evidence_greedy on a connection (once)."""
    try:
        con.create_function(
            UDF,
            _udf,
            ["VARCHAR[]", "DOUBLE[][]", "DOUBLE[][]", "INTEGER", "VARCHAR"],
            "VARCHAR[]",
            null_handling="special",
            side_effects=False,
        )
    except Exception as exc:  # noqa: BLE001 - duckdb raises NotImplementedException when it exists already
        if "already" not in str(exc).lower():
            raise


def record_program(wh: Warehouse) -> LoadResult:
    """The selection program's SHA-256 into raw.evidence_programs (a no-op when unchanged)."""
    from rankhouse.loaders.sources import LoadResult, loaded_sha, record_source

    sha = program_sha256()
    table = "raw.evidence_programs"
    if loaded_sha(wh, "meta.sources", table, PROGRAM) == sha:
        return LoadResult(table, PROGRAM, "rankhouse/evidence.py", sha, 0, "unchanged")
    with wh.transaction():
        wh.sql(f"DELETE FROM {table} WHERE program = ?", [PROGRAM])
        wh.sql(f"INSERT INTO {table} VALUES (?, ?)", [PROGRAM, sha])
        record_source(wh, "meta.sources", table, PROGRAM, "rankhouse/evidence.py", sha, 1, "evidence.program")
    return LoadResult(table, PROGRAM, "rankhouse/evidence.py", sha, 1, "loaded")


# -- vectors ---------------------------------------------------------------------------------------
def _store_vectors(wh: Warehouse, table: str, bundle: str, keys: dict[str, list], matrix: np.ndarray,
                   source: str, loader: str) -> LoadResult:  # fmt: skip
    """Replace the bundle's rows of `table` by keys + vectors; a no-op when the digest is unchanged."""
    import pyarrow as pa

    from rankhouse.loaders.sources import LoadResult, loaded_sha, replace_named_rows

    digest = hashlib.sha256(json.dumps({"source": source, **keys}, sort_keys=True).encode())
    digest.update(matrix.astype(np.float32).tobytes())
    sha = digest.hexdigest()
    if loaded_sha(wh, "meta.sources", table, bundle) == sha:
        return LoadResult(table, bundle, source, sha, 0, "unchanged")
    vectors = pa.FixedSizeListArray.from_arrays(pa.array(matrix.astype(np.float32).ravel()), matrix.shape[1])
    rows = pa.table({"bundle": [bundle] * len(matrix), **keys, "vector": vectors})
    replace_named_rows(wh, table, "bundle", bundle, rows, "meta.sources", table, source, sha, loader)
    return LoadResult(table, bundle, source, sha, len(matrix), "loaded")


def encode_bundle(wh: Warehouse, bundle: str, encoder, progress_bar: Callable[[str], Callable] | None = None) -> list:  # noqa: ANN001
    """Vectors of a loaded bundle's documents (unless it brought its own) and of every task's facets."""
    from rankhouse.vectors import cached_vectors

    bar = progress_bar or (lambda label: None)
    documents = wh.sql("SELECT doc_id, text FROM raw.evidence_documents WHERE bundle = ? ORDER BY row_index", [bundle])
    tasks = wh.sql("SELECT task_id, question FROM raw.evidence_tasks WHERE bundle = ? ORDER BY row_index", [bundle])
    if not documents or not tasks:
        raise RankhouseError(f"evidence bundle {bundle!r} has no tasks or documents to encode: load them first")
    source = f"encoder {encoder.model_name} {encoder.fingerprint}"
    results = []
    own = wh.sql("SELECT loader FROM meta.sources WHERE table_name = 'raw.evidence_vectors' AND name = ?", [bundle])
    if not own or own[0][0] == "encode.minilm":
        matrix, _ = cached_vectors(wh, encoder, [text for _, text in documents], bar(f"encoding {bundle} documents"))
        keys = {"doc_id": [doc_id for doc_id, _ in documents]}
        results.append(_store_vectors(wh, "raw.evidence_vectors", bundle, keys, matrix, source, "encode.minilm"))
    requirements = wh.sql("SELECT task_id, requirement, text FROM raw.evidence_requirements WHERE bundle = ?", [bundle])
    by_task: dict[str, list[tuple[int, str]]] = {}
    for task_id, requirement, text in requirements:
        by_task.setdefault(task_id, []).append((requirement + 1, text))
    facets = [(task_id, 0, question) for task_id, question in tasks]
    facets += [(task_id, facet, text) for task_id, _ in tasks for facet, text in sorted(by_task.get(task_id, []))]
    matrix, _ = cached_vectors(wh, encoder, [text for *_, text in facets], bar(f"encoding {bundle} facets"))
    keys = {"task_id": [f[0] for f in facets], "facet": [f[1] for f in facets]}
    results.append(_store_vectors(wh, "raw.evidence_facet_vectors", bundle, keys, matrix, source, "encode.minilm"))
    return results


# -- bootstrap plans -------------------------------------------------------------------------------
def subset_sizes(wh: Warehouse, bundle: str) -> dict[str, int]:
    """Tasks per bootstrap subset: 'all', and each split that has tasks."""
    sizes = dict(wh.sql("SELECT split, count(*) FROM raw.evidence_tasks WHERE bundle = ? GROUP BY split", [bundle]))
    return {subset: n for subset in SUBSETS if (n := sum(sizes.values()) if subset == "all" else sizes.get(subset, 0))}


def store_subset_plans(wh: Warehouse, plan: str, bundle: str, replicates: int, seed: int) -> list:
    """One paired bootstrap plan per subset, `<plan>/<subset>`, over the subset's own tasks.

    Each subset is resampled on its own: the plan of a subset of n tasks draws n task positions (0 ..
    n - 1, the subset's tasks in tasks.jsonl order) per replicate, from numpy PCG64 seeded with `seed`.
    """
    from rankhouse.resample import store_plan

    sizes = subset_sizes(wh, bundle)
    if not sizes:
        raise RankhouseError(f"evidence bundle {bundle!r} has no tasks: load its tasks.jsonl first")
    return [store_plan(wh, f"{plan}/{subset}", units, replicates, seed) for subset, units in sizes.items()]


def generate(wh: Warehouse, kind: str, key: str, options: dict, say: Callable[[str], None],
             progress_bar: Callable[[str], Callable]) -> None:  # fmt: skip
    """A protocol's [generate.<key>] of kind evidence_vectors or evidence_plan (rankhouse/study.py)."""
    bundle = str(options["bundle"])
    if kind == "evidence_vectors":
        from rankhouse.encode import Encoder

        for result in encode_bundle(wh, bundle, Encoder(), progress_bar):
            say(str(result))
        say(str(record_program(wh)))
    elif kind == "evidence_plan":
        for result in store_subset_plans(wh, key, bundle, int(options["replicates"]), int(options["seed"])):
            say(str(result))
    else:
        raise RankhouseError(f"unknown evidence generation kind {kind!r}")


# -- the bundle as used ----------------------------------------------------------------------------
BUNDLE_FILES = {"evidence.tasks": "tasks.jsonl", "evidence.documents": "documents.jsonl",
                "evidence.pool": "pool-key.json", "evidence.judgments": "judgments.jsonl",
                "evidence.vectors": "vectors.parquet"}  # fmt: skip


def export_bundle(wh: Warehouse, bundle: str, inputs: Sequence, out: Path) -> dict[str, str]:
    """Write the bundle as used into `out`; return {file: SHA-256}.

    The input files (the protocol's evidence.* inputs of this bundle) are copied byte for byte after
    their SHA-256 is checked against what was loaded. Added: vectors.parquet (doc_id, vector; unless
    the bundle brought its own, which is copied), facet_vectors.parquet (task_id, facet, vector; facet 0
    is the question, facet k + 1 requirement k) and the comparator runs dense.run and typed.run (TREC,
    every pool member, `task_id Q0 doc_id rank score method`).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from rankhouse.loaders.sources import sha256_file

    out.mkdir(parents=True, exist_ok=True)
    written: dict[str, str] = {}
    for item in inputs:
        name = BUNDLE_FILES.get(item.loader)
        if name is None or (item.name or Path(item.path).resolve().parent.name) != bundle:
            continue
        if sha256_file(item.path) != item.sha256:
            raise RankhouseError(f"{item.path} changed since the study loaded it; not exported")
        shutil.copyfile(item.path, out / name)
    queries = {
        "vectors.parquet": (("doc_id",), "SELECT v.doc_id, v.vector FROM raw.evidence_vectors AS v "
                            "JOIN raw.evidence_documents AS d ON d.bundle = v.bundle AND d.doc_id = v.doc_id "
                            "WHERE v.bundle = ? ORDER BY d.row_index"),
        "facet_vectors.parquet": (("task_id", "facet"), "SELECT v.task_id, v.facet, v.vector "
                                  "FROM raw.evidence_facet_vectors AS v JOIN raw.evidence_tasks AS t "
                                  "ON t.bundle = v.bundle AND t.task_id = v.task_id WHERE v.bundle = ? "
                                  "ORDER BY t.row_index, v.facet"),
    }  # fmt: skip
    for name, (keys, sql) in queries.items():
        if (out / name).exists():
            continue  # the bundle's own vectors, copied above
        rows = wh.sql(sql, [bundle])
        if not rows:
            raise RankhouseError(f"no vectors of bundle {bundle!r} for {name}")
        data = {key: [row[i] for row in rows] for i, key in enumerate(keys)}
        if "facet" in data:
            data["facet"] = pa.array(data["facet"], type=pa.int32())
        matrix = np.asarray([row[-1] for row in rows], dtype=np.float32)
        vector = pa.FixedSizeListArray.from_arrays(pa.array(matrix.ravel()), matrix.shape[1])
        pq.write_table(pa.table({**data, "vector": vector}), out / name)
    for method in ("dense", "typed"):
        rows = wh.sql(
            "SELECT r.task_id, r.doc_id, r.rank, r.score FROM models.evidence_runs AS r JOIN raw.evidence_tasks AS t "
            "ON t.bundle = r.bundle AND t.task_id = r.task_id WHERE r.bundle = ? AND r.method = ? "
            "ORDER BY t.row_index, r.rank",
            [bundle, method],
        )
        with (out / f"{method}.run").open("w") as handle:
            handle.writelines(f"{task} Q0 {doc} {rank} {score!r} {method}\n" for task, doc, rank, score in rows)
    for path in sorted(out.iterdir()):
        written[path.name] = sha256_file(path)
    return written
