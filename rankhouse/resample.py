"""Seeded resample plans: every random draw made once, from a recorded seed, and stored as a table.

A bootstrap plan over n units (e.g. the queries of a corpus, in row order) has `replicates` rows of
n draws with replacement, drawn by numpy's default_rng (PCG64) from the seed; a sign-flip plan (for
the paired randomization test) has, per replicate, a sign +1 or -1 for each of the n units. SQL only
joins them, so an interval or a p-value is identical at any thread count and on any engine. A plan's
SHA-256 (over its seed, shape and draws) is recorded in meta.sources, which makes it part of every
dependent fingerprint.

A seeded plan's draws are a function of its spec (kind, units, replicates, seed), numpy's generator and
this code: the SHA-256 they were seen to have is kept in the user's cache (user_cache.py, `plans/`, named by
the spec, numpy's version and rankhouse's code), so that a plan already stored with that SHA-256 is kept
without drawing its millions of values again (the warm demo's plan: a quarter of its time otherwise).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from functools import partial

import numpy as np
import pyarrow as pa

from rankhouse.arrays import numpy_array
from rankhouse.errors import RankhouseError
from rankhouse.loaders.sources import LoadResult, loaded_sha, record_source, writes_inputs
from rankhouse.user_cache import code_signature, key_of, read_entry, write_entry
from rankhouse.warehouse import Warehouse


def bootstrap_draws(units: int, replicates: int, seed: int) -> np.ndarray:
    """[replicates, units] int32 draws with replacement from range(units).

    >>> bootstrap_draws(3, 2, 7).shape
    (2, 3)
    """
    return np.random.default_rng(seed).integers(0, units, size=(replicates, units), dtype=np.int32)


PLAN_BATCH_ROWS = 1 << 20  # about how many rows of a plan each Arrow batch holds (whole replicates)


def _plan_rows(replicates: int, units: int, unit_column: str, **values: np.ndarray) -> pa.RecordBatchReader:
    """A plan's rows as a stream of Arrow batches, replicate by replicate: replicate, `unit_column`
    (0 .. units - 1 within each replicate), then `values` ([replicates, units] arrays, flattened). Each
    batch holds whole replicates, about PLAN_BATCH_ROWS rows, its columns made as DuckDB reads it: the
    whole plan's replicate and unit columns at once were 250 MB of fresh memory for the demo's plan, and
    0.5 s of its cold run (docs/performance.md). Built over numpy's buffers (numpy_array: pa.table would
    import pandas).

    >>> rows = _plan_rows(2, 3, "draw", item=np.arange(6, dtype=np.int32).reshape(2, 3)).read_all()
    >>> rows.column_names, rows["draw"].to_pylist(), rows["replicate"].to_pylist()
    (['replicate', 'draw', 'item'], [0, 1, 2, 0, 1, 2], [0, 0, 0, 1, 1, 1])
    """
    values = {name: np.ascontiguousarray(array) for name, array in values.items()}
    names = ["replicate", unit_column, *values]
    step = max(1, PLAN_BATCH_ROWS // max(units, 1))
    units_column = np.arange(units, dtype=np.int32)

    def batch(first: int) -> pa.RecordBatch:
        last = min(first + step, replicates)
        columns = [
            np.repeat(np.arange(first, last, dtype=np.int32), units),
            np.tile(units_column, last - first),
            *(array[first:last].ravel() for array in values.values()),
        ]
        return pa.RecordBatch.from_arrays([numpy_array(column) for column in columns], names=names)

    schema = batch(0).schema if replicates else pa.schema([(name, pa.int32()) for name in names])
    return pa.RecordBatchReader.from_batches(schema, (batch(first) for first in range(0, replicates, step)))


PLANS = "plans"  # the user's cache folder of the digests seeded plans were seen to have


def _drawn_before(wh: Warehouse, table: str, plan: str, spec: dict) -> LoadResult | None:
    """The plan `plan` kept as stored, if it was stored with the SHA-256 that the draws of `spec` were seen
    to have (the user's cache); None: draw it."""
    entry = read_entry(PLANS, key_of({"spec": spec, "code": code_signature("numpy")}))
    digest = entry.get("digest") if entry is not None else None
    if not isinstance(digest, str) or loaded_sha(wh, "meta.sources", table, plan) != digest:
        return None
    return LoadResult(table, plan, "generated: " + json.dumps(spec, sort_keys=True), digest, 0, "unchanged")


def _drawn(spec: dict, result: LoadResult) -> LoadResult:
    """Keep the SHA-256 of the draws of `spec` (the plan just stored or kept) in the user's cache."""
    write_entry(PLANS, key_of({"spec": spec, "code": code_signature("numpy")}), {"digest": result.sha256})
    return result


def _store(wh: Warehouse, table: str, plan: str, spec: dict, values: np.ndarray,
           columns: Callable[[], pa.RecordBatchReader], loader: str) -> LoadResult:  # fmt: skip
    """Make (or keep, if identical) the seeded plan `plan` in `table` (columns after `plan`: those `columns()`
    makes, only when the plan is not kept), in one transaction; its SHA-256 over the spec and the drawn
    values goes to meta.sources, so that every model reading the plan is fingerprinted with it."""
    digest = hashlib.sha256(json.dumps(spec, sort_keys=True).encode() + values.tobytes()).hexdigest()
    source = "generated: " + json.dumps(spec, sort_keys=True)
    if loaded_sha(wh, "meta.sources", table, plan) == digest:
        return LoadResult(table, plan, source, digest, 0, "unchanged")
    rows = columns()
    with wh.registered("rh_plan", rows):
        with wh.transaction():
            wh.sql(f"DELETE FROM {table} WHERE plan = ?", [plan])
            wh.sql(f"INSERT INTO {table} SELECT ?, {', '.join(rows.schema.names)} FROM rh_plan", [plan])
            record_source(wh, "meta.sources", table, plan, source, digest, values.size, loader)
    return LoadResult(table, plan, source, digest, values.size, "loaded")


@writes_inputs
def store_plan(wh: Warehouse, plan: str, units: int, replicates: int, seed: int) -> LoadResult:
    """Make (or keep, if identical) the plan `plan` in raw.resample_plans; one transaction."""
    spec = {"kind": "bootstrap", "units": units, "replicates": replicates, "seed": seed, "rng": "numpy PCG64"}
    kept = _drawn_before(wh, "raw.resample_plans", plan, spec)
    if kept is not None:
        return kept
    draws = bootstrap_draws(units, replicates, seed)
    columns = partial(_plan_rows, replicates, units, "draw", item=draws)  # made only if the plan is stored
    return _drawn(spec, _store(wh, "raw.resample_plans", plan, spec, draws, columns, "resample.bootstrap"))


def sign_flips(units: int, replicates: int, seed: int) -> np.ndarray:
    """[replicates, units] int8 signs, each +1 or -1 with probability 1/2, independently (numpy PCG64):
    replicate r of a paired randomization test multiplies unit i's difference by flips[r, i].

    >>> sorted(set(sign_flips(4, 3, 7).ravel().tolist())), sign_flips(4, 3, 7).shape
    ([-1, 1], (3, 4))
    """
    bits = np.random.default_rng(seed).integers(0, 2, size=(replicates, units), dtype=np.int8)
    return (1 - 2 * bits).astype(np.int8)


@writes_inputs
def store_permutation_plan(wh: Warehouse, plan: str, units: int, replicates: int, seed: int) -> LoadResult:
    """Make (or keep, if identical) the sign-flip plan `plan` in raw.permutation_plans; one transaction.

    Like a bootstrap plan, its SHA-256 (over seed, shape and signs) goes to meta.sources, so that every
    model reading the plan is fingerprinted with it.
    """
    spec = {"kind": "sign_flip", "units": units, "replicates": replicates, "seed": seed, "rng": "numpy PCG64"}
    kept = _drawn_before(wh, "raw.permutation_plans", plan, spec)
    if kept is not None:
        return kept
    return _drawn(spec, store_signs(wh, plan, sign_flips(units, replicates, seed), spec))


@writes_inputs
def store_signs(wh: Warehouse, plan: str, signs: np.ndarray, spec: dict) -> LoadResult:
    """Make (or keep, if identical) the sign-flip plan `plan` of the [replicates, units] signs (+1 or -1)
    `signs`, made as `spec` says (recorded with the plan's SHA-256), in raw.permutation_plans.

    >>> every = 1 - 2 * ((np.arange(8)[:, None] >> np.arange(3)) & 1)  # all 2^3 sign vectors  # doctest: +SKIP
    >>> store_signs(wh, "exact", every.astype(np.int8), {"kind": "every sign vector", "units": 3})  # doctest: +SKIP
    """
    signs = np.ascontiguousarray(signs, dtype=np.int8)
    if signs.ndim != 2 or not np.isin(signs, (-1, 1)).all():
        raise RankhouseError(f"a sign-flip plan is a [replicates, units] array of +1 and -1, not {signs.shape!r}")
    columns = partial(_plan_rows, signs.shape[0], signs.shape[1], "item", sign=signs)
    return _store(wh, "raw.permutation_plans", plan, spec, signs, columns, "resample.sign_flip")


def panel_draws(documents: int, size: int, seed: int) -> np.ndarray:
    """`size` distinct document rows drawn from range(documents) (numpy PCG64, without replacement).

    >>> panel_draws(10, 3, 7).tolist() == panel_draws(10, 3, 7).tolist()
    True
    """
    if size > documents:
        raise ValueError(f"a panel of {size} documents from a corpus of {documents}")
    return np.random.default_rng(seed).choice(documents, size=size, replace=False).astype(np.int64)


@writes_inputs
def store_panel(wh: Warehouse, panel: str, corpus: str, size: int | str, seed: int) -> LoadResult:
    """Draw (or keep, if identical) the null reference panel `panel` of `corpus`; one transaction. A
    `size` of "all" draws every document: a seeded random order of the whole corpus (the fusion study's
    held-out calibration sample is its first documents outside the reference panel)."""
    documents = wh.sql("SELECT count(*) FROM raw.documents WHERE corpus = ?", [corpus])[0][0]
    size = documents if size == "all" else int(size)
    rows = panel_draws(documents, size, seed)
    spec = {"kind": "null_panel", "corpus": corpus, "documents": documents, "size": size, "seed": seed,
            "rng": "numpy PCG64 choice without replacement"}  # fmt: skip
    digest = hashlib.sha256(json.dumps(spec, sort_keys=True).encode() + rows.tobytes()).hexdigest()
    source = "generated: " + json.dumps(spec, sort_keys=True)
    if loaded_sha(wh, "meta.sources", "raw.null_panels", panel) == digest:
        return LoadResult("raw.null_panels", panel, source, digest, 0, "unchanged")
    with wh.registered("rh_panel", pa.table({"position": np.arange(size, dtype=np.int32), "doc_row": rows})):
        with wh.transaction():
            wh.sql("DELETE FROM raw.null_panels WHERE panel = ?", [panel])
            wh.sql("INSERT INTO raw.null_panels SELECT ?, ?, position, doc_row, ? FROM rh_panel", [panel, corpus, seed])
            record_source(wh, "meta.sources", "raw.null_panels", panel, source, digest, size, "resample.null_panel")
    return LoadResult("raw.null_panels", panel, source, digest, size, "loaded")


def generate_plan(context, key: str, options: dict) -> None:  # noqa: ANN001 - generators.Context
    """The `resample_plan` generator: plan `key` over the queries of `options["corpus"]`, in row order."""
    units = context.wh.sql("SELECT count(*) FROM raw.queries WHERE corpus = ?", [options["corpus"]])[0][0]
    context.say(str(store_plan(context.wh, key, units, int(options["replicates"]), int(options["seed"]))))
    context.produced("raw.resample_plans", {"plan": key}, key)


def generate_cluster_plan(context, key: str, options: dict) -> None:  # noqa: ANN001 - generators.Context
    """The `cluster_plan` generator: a bootstrap plan `key` over the query groups of `options["corpus"]`
    (raw.group_paraphrases, in group_row order: item i is the group of row i), for a cluster bootstrap
    (models/stats/cluster_bootstrap.sql) of queries that are not independent."""
    rows = context.wh.sql(
        "SELECT count(DISTINCT group_id), count(DISTINCT group_row), coalesce(max(group_row) + 1, 0) "
        "FROM raw.group_paraphrases WHERE corpus = ?",
        [options["corpus"]],
    )[0]
    if rows[0] == 0 or len(set(rows)) != 1:
        raise RankhouseError(f"cluster plan {key}: corpus {options['corpus']!r} has no groups numbered 0..n-1 "
                             f"(groups, group rows, rows to the last: {rows})")  # fmt: skip
    plan = store_plan(context.wh, key, rows[0], int(options["replicates"]), int(options["seed"]))
    context.say(str(plan))
    context.produced("raw.resample_plans", {"plan": key}, key)


def generate_permutation_plan(context, key: str, options: dict) -> None:  # noqa: ANN001 - generators.Context
    """The `permutation_plan` generator: sign-flip plan `key` over the queries of `options["corpus"]`."""
    units = context.wh.sql("SELECT count(*) FROM raw.queries WHERE corpus = ?", [options["corpus"]])[0][0]
    plan = store_permutation_plan(context.wh, key, units, int(options["replicates"]), int(options["seed"]))
    context.say(str(plan))
    context.produced("raw.permutation_plans", {"plan": key}, key)


def generate_panel(context, key: str, options: dict) -> None:  # noqa: ANN001 - generators.Context
    """The `null_panel` generator: panel `key` of `options["size"]` documents of `options["corpus"]` (a
    whole number, or "all" for a seeded order of every document)."""
    size = options["size"]
    if size != "all" and (isinstance(size, bool) or not isinstance(size, int) or size < 1):
        raise RankhouseError(f'null panel {key}: size is a whole number of documents or "all", not {size!r}')
    context.say(str(store_panel(context.wh, key, str(options["corpus"]), size, int(options["seed"]))))
    context.produced("raw.null_panels", {"panel": key}, key)


def block_draws(units: int, blocks: int, seed: int) -> np.ndarray:
    """The block (0 .. blocks - 1) of each of `units` units: a seeded random permutation (numpy PCG64) dealt
    out in turn, so that block sizes differ by at most one.

    >>> block_draws(7, 3, 1).tolist() == block_draws(7, 3, 1).tolist(), sorted(block_draws(7, 3, 1).tolist())
    (True, [0, 0, 0, 1, 1, 2, 2])
    """
    if not 1 <= blocks <= units:
        raise ValueError(f"{blocks} blocks of {units} units")
    order = np.random.default_rng(seed).permutation(units)
    assigned = np.empty(units, dtype=np.int32)
    assigned[order] = np.arange(units, dtype=np.int32) % blocks
    return assigned


@writes_inputs
def store_block_plan(wh: Warehouse, plan: str, units: int, blocks: int, seed: int) -> LoadResult:
    """Make (or keep, if identical) the held-out block plan `plan` in raw.resample_plans, one transaction:
    a single replicate (0) whose draw d is unit d (a query's row) and whose item is that unit's block."""
    assigned = block_draws(units, blocks, seed)
    spec = {"kind": "query_blocks", "units": units, "blocks": blocks, "seed": seed,
            "rng": "numpy PCG64 permutation, dealt out in turn"}  # fmt: skip
    columns = partial(_plan_rows, 1, units, "draw", item=assigned[None, :])
    return _store(wh, "raw.resample_plans", plan, spec, assigned, columns, "resample.query_blocks")


def generate_blocks(context, key: str, options: dict) -> None:  # noqa: ANN001 - generators.Context
    """The `query_blocks` generator: plan `key` dealing the queries of `options["corpus"]` (in row order)
    into `options["blocks"]` held-out blocks at random (seed 003, section 9: calibration held out by query
    blocks, never by pairs)."""
    units = context.wh.sql("SELECT count(*) FROM raw.queries WHERE corpus = ?", [options["corpus"]])[0][0]
    blocks = options["blocks"]
    if isinstance(blocks, bool) or not isinstance(blocks, int) or not 2 <= blocks <= units:
        raise RankhouseError(f"query blocks {key}: blocks is a whole number from 2 to the {units} queries, "
                             f"not {blocks!r}")  # fmt: skip
    context.say(str(store_block_plan(context.wh, key, units, blocks, int(options["seed"]))))
    context.produced("raw.resample_plans", {"plan": key}, key)
