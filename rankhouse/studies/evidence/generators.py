"""The evidence study's generators (seed 000), registered in its __init__.py.

`evidence_vectors` encodes a bundle's documents (unless the bundle brought its own vectors, loaded by
`evidence.vectors`: kept unchanged) into raw.evidence_vectors, and every task's facets, the question (facet
0; unless the bundle brought its own question vectors, loaded by `evidence.question_vectors` under
`<bundle>:questions`: kept unchanged, seed 000's "keep ... all 48 question vectors unchanged") and each
requirement on its own (facet k + 1 for requirement k, no rewriting), into raw.evidence_facet_vectors, every
text through raw.vector_cache; and records the greedy selection's program hash (select.py). `evidence_plan`
stores the paired bootstrap plans, one per task subset (all tasks, each split), each over that subset's own
tasks in tasks.jsonl order, from the same recorded seed (the paired_bootstrap model resamples "within").
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from rankhouse.errors import RankhouseError
from rankhouse.loaders.sources import writes_inputs
from rankhouse.studies.evidence.loaders import QUESTIONS

if TYPE_CHECKING:
    from rankhouse.loaders.sources import LoadResult
    from rankhouse.warehouse import Warehouse

SUBSETS = ("all", "development", "final")  # bootstrap subsets: every task, and each split


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


@writes_inputs
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
    own_questions = wh.sql(
        "SELECT count(*) FROM meta.sources WHERE table_name = 'raw.evidence_facet_vectors' AND name = ?",
        [bundle + QUESTIONS],
    )[0][0]
    facets = [] if own_questions else [(task_id, 0, question) for task_id, question in tasks]
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


@writes_inputs
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


def generate_vectors(context, key: str, options: dict) -> None:  # noqa: ANN001 - generators.Context
    """The `evidence_vectors` generator: vectors of bundle `options["bundle"]`, and the program's hash."""
    from rankhouse.studies.evidence.select import record_program

    bundle = str(options["bundle"])
    for result in encode_bundle(context.wh, bundle, context.encoder, context.progress_bar):
        context.say(str(result))
    for table in ("raw.evidence_vectors", "raw.evidence_facet_vectors"):
        context.produced(table, {"bundle": bundle}, bundle)
    program = record_program(context.wh)
    context.say(str(program))
    context.produced(program.table, {"program": program.name}, program.name)


def generate_plans(context, key: str, options: dict) -> None:  # noqa: ANN001 - generators.Context
    """The `evidence_plan` generator: plans `<key>/<subset>` for every task subset of the bundle."""
    for result in store_subset_plans(context.wh, key, str(options["bundle"]), int(options["replicates"]),
                                     int(options["seed"])):  # fmt: skip
        context.say(str(result))
        context.produced(result.table, {"plan": result.name}, result.name)
