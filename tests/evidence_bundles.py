"""Evidence bundles written by hand: a good bundle's files (GOOD), vectors files as Parquet bytes, and a
bundle written to a folder (tests/studies/evidence/: the bundle loaders' and the question vectors' tests)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

TASKS = (
    '{"task_id": "t1", "question": "Card late?", "requirements": ["delivery time", "what to do"], '
    '"split": "development"}\n'
    '{"task_id": "t2", "question": "Fee?", "requirements": ["which fee"], "split": "final"}\n'
)
DOCUMENTS = '{"doc_id": "d1", "text": "Where is my card?"}\n{"doc_id": "d2", "text": "Cards take a week."}\n' \
            '{"doc_id": "d3", "text": "A fee of 1%."}\n'  # fmt: skip
POOL = '{\n  "t1": ["d1", "d2"],\n  "t2": ["d2", "d3"]\n}\n'
JUDGMENTS = (
    '{"task_id": "t1", "doc_id": "d1", "judge": "A", "grade": 3, "obligations": [0, 1]}\n'
    '{"task_id": "t1", "doc_id": "d1", "judge": "B", "grade": 2, "obligations": [1]}\n'
    '{"task_id": "t2", "doc_id": "d3", "judge": "A", "grade": 0, "obligations": []}\n'
)
GOOD = {"tasks.jsonl": TASKS, "documents.jsonl": DOCUMENTS, "pool-key.json": POOL, "judgments.jsonl": JUDGMENTS}


def unit_vectors(count: int, seed: int = 0) -> np.ndarray:
    vectors = np.random.default_rng(seed).normal(size=(count, 384))
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


def parquet(ids: list, vectors: list | None, **columns) -> bytes:
    """A vectors Parquet file as bytes: doc_id and vector columns (list<float32>) unless `columns` says otherwise."""
    table = pa.table(columns or {"doc_id": ids, "vector": pa.array(vectors, type=pa.list_(pa.float32()))})
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return sink.getvalue().to_pybytes()


def write_bundle(folder: Path, files: dict[str, str | bytes]) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, content in files.items():
        paths[name] = folder / name
        paths[name].write_bytes(content.encode() if isinstance(content, str) else content)
    return paths
