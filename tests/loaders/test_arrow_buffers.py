"""Arrow arrays built from their buffers (rankhouse/arrays.py) where the demo's loaders, its resample plan
and its vector cache used pa.array and pa.table, whose first call imports pandas (0.2 s of every cold demo,
docs/performance.md); and a plan's rows made batch by batch as DuckDB reads them, the same rows as drawn."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest

from rankhouse import resample
from rankhouse.arrays import string_array
from rankhouse.warehouse import Warehouse


@pytest.mark.parametrize(
    "texts", [[], [""], ["a", "", "é", "ß\u20ac\U0001f600"], [str(i) * (i % 7) for i in range(1000)]]
)
def test_string_array_is_pa_array_of_the_same_strings(texts):
    built = string_array(texts)
    assert built.type == pa.string()
    assert built.to_pylist() == texts
    assert built.equals(pa.array(texts, pa.string()))


def test_a_plan_of_many_batches_stores_every_draw_in_its_place(monkeypatch):
    """With batches of 3 replicates, a 10 x 7 plan is 4 batches; its rows are the draws, replicate by
    replicate, each draw at its place (what one batch of the whole plan stored before)."""
    monkeypatch.setattr(resample, "PLAN_BATCH_ROWS", 21)
    rows = resample._plan_rows(10, 7, "draw", item=resample.bootstrap_draws(7, 10, 3))
    assert [batch.num_rows for batch in rows] == [21, 21, 21, 7]
    with Warehouse(":memory:") as wh:
        resample.store_plan(wh, "p", units=7, replicates=10, seed=3)
        stored = np.array(wh.sql("SELECT replicate, draw, item FROM raw.resample_plans WHERE plan = 'p' ORDER BY ALL"))
    draws = resample.bootstrap_draws(7, 10, 3)
    expected = np.array([(r, d, draws[r, d]) for r in range(10) for d in range(7)])
    np.testing.assert_array_equal(stored, expected)


def test_sign_flip_plan_keeps_its_signs_in_their_places(monkeypatch):
    monkeypatch.setattr(resample, "PLAN_BATCH_ROWS", 4)
    signs = resample.sign_flips(3, 5, 11)
    with Warehouse(":memory:") as wh:
        resample.store_permutation_plan(wh, "s", units=3, replicates=5, seed=11)
        stored = wh.sql("SELECT replicate, item, sign FROM raw.permutation_plans WHERE plan = 's' ORDER BY ALL")
    assert stored == [(r, i, int(signs[r, i])) for r in range(5) for i in range(3)]


def test_the_demo_s_loaders_plan_and_vector_cache_never_import_pandas(tmp_path):
    """Texts and classes loaded, a bootstrap plan stored, vectors cached and a loaded table digested in
    order (the freeze's check of its grain), in a fresh process: pandas is never imported."""
    csv = tmp_path / "texts.csv"
    csv.write_text("text,category\nhow do I top up,top_up\nmy card is lost,lost_card\n", encoding="utf-8")
    code = f"""
import sys
import numpy as np
from rankhouse import resample
from rankhouse.loaders.texts import load_documents, load_query_classes
from rankhouse.study.freeze import table_digest
from rankhouse.vectors import cached_vectors
from rankhouse.warehouse import Warehouse

class Encoder:
    dim, fingerprint = 384, "test-encoder"  # raw.vector_cache holds FLOAT[384]
    def encode(self, texts, progress=None):
        return np.arange(384 * len(texts), dtype=np.float32).reshape(len(texts), 384)

with Warehouse({str(tmp_path / "w.duckdb")!r}) as wh:
    load_documents(wh, {str(csv)!r}, "c")
    load_query_classes(wh, {str(csv)!r}, "c")
    resample.store_plan(wh, "p", units=2, replicates=5, seed=1)
    vectors, encoded = cached_vectors(wh, Encoder(), ["how do I top up", "my card is lost"])
    digest, rows = table_digest(wh, "raw.resample_plans", ("plan", "replicate", "draw"))  # stored in order
    print(encoded, rows, vectors.shape, wh.sql("SELECT text FROM raw.documents ORDER BY row_index"))
print("pandas imported:", "pandas" in sys.modules)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "2 10 (2, 384) [('how do I top up',), ('my card is lost',)]" in done.stdout, done.stdout
    assert done.stdout.rstrip().endswith("pandas imported: False"), done.stdout
