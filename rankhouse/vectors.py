"""Sentence vectors of a corpus's documents and queries, through a cache: nothing is encoded twice.

The cache, raw.vector_cache, is keyed by (SHA-256 of the text, encoder fingerprint). Vectors land in
raw.document_vectors and raw.query_vectors; their meta.sources rows carry a SHA-256 over the encoder
fingerprint and the vectors, so every model that reads them has the encoder in its fingerprint.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import numpy as np
import pyarrow as pa

from rankhouse.arrays import numpy_numbers, string_array, vector_array
from rankhouse.errors import RankhouseError
from rankhouse.loaders.sources import LoadResult, loaded_sha, record_source, writes_inputs
from rankhouse.warehouse import Warehouse

KINDS = {
    "documents": ("raw.documents", "doc_id", "raw.document_vectors"),
    "queries": ("raw.queries", "qid", "raw.query_vectors"),
}


@writes_inputs
def encode_into_cache(
    wh: Warehouse,
    encoder,  # rankhouse.encode.Encoder, or anything with encode(), dim and fingerprint
    shas: list[str],
    texts: list[str],
    progress: Callable[[int, int], None] | None = None,
) -> np.ndarray:
    """Encode `texts` (whose SHA-256 are `shas`) and add them to raw.vector_cache under the encoder's
    fingerprint, in one transaction; return the vectors, one row per text."""
    fresh = encoder.encode(texts, progress=progress)
    with wh.registered("rh_fresh", pa.Table.from_arrays([string_array(shas), vector_array(fresh)], ["sha", "vector"])):
        with wh.transaction():
            wh.sql(
                "INSERT OR IGNORE INTO raw.vector_cache "
                f"SELECT sha, ?, CAST(vector AS FLOAT[{encoder.dim}]) FROM rh_fresh",
                [encoder.fingerprint],
            )
    return fresh


def cached_vectors(
    wh: Warehouse,
    encoder,  # rankhouse.encode.Encoder, or anything with encode(), dim and fingerprint
    texts: list[str],
    progress: Callable[[int, int], None] | None = None,
) -> tuple[np.ndarray, int]:
    """Vectors of `texts` (float32, rows in order) through raw.vector_cache, encoding only the misses;
    and how many distinct texts were encoded. `progress` is told once at the end when nothing was."""
    shas = [hashlib.sha256(t.encode("utf-8")).hexdigest() for t in texts]
    with wh.registered("rh_wanted", pa.Table.from_arrays([string_array(sorted(set(shas)))], ["sha"])):
        cached = dict(
            wh.sql(
                "SELECT c.text_sha256, c.vector FROM raw.vector_cache AS c JOIN rh_wanted AS w "
                "ON w.sha = c.text_sha256 WHERE c.model_fingerprint = ?",
                [encoder.fingerprint],
            )
        )
    by_sha = dict(zip(shas, texts, strict=True))
    missing = [sha for sha in dict.fromkeys(shas) if sha not in cached]
    if missing:
        fresh = encode_into_cache(wh, encoder, missing, [by_sha[sha] for sha in missing], progress)
        cached.update(zip(missing, fresh.tolist(), strict=True))
    elif progress is not None:
        progress(len(texts), len(texts))
    matrix = np.asarray([cached[sha] for sha in shas], dtype=np.float32).reshape(len(texts), encoder.dim)
    return matrix, len(missing)


@writes_inputs
def encode_corpus(
    wh: Warehouse,
    corpus: str,
    encoder,
    kind: str,
    progress: Callable[[int, int], None] | None = None,  # noqa: ANN001
) -> LoadResult:
    """Vectors for every text of `kind` ("documents" or "queries") in `corpus`, encoding only cache misses."""
    source, key, target = KINDS[kind]
    rows = wh.sql(f"SELECT {key}, text, sha256(text) FROM {source} WHERE corpus = ? ORDER BY row_index", [corpus])
    if not rows:
        raise RankhouseError(f"no {kind} of corpus {corpus!r} to encode; load them first")
    fingerprint = encoder.fingerprint
    cached = {
        sha
        for (sha,) in wh.sql(
            "SELECT c.text_sha256 FROM raw.vector_cache AS c "
            f"JOIN {source} AS s ON sha256(s.text) = c.text_sha256 WHERE s.corpus = ? AND c.model_fingerprint = ?",
            [corpus, fingerprint],
        )
    }
    missing = list(dict.fromkeys(sha for _, _, sha in rows if sha not in cached))
    texts = {sha: text for _, text, sha in rows}
    if missing:
        encode_into_cache(wh, encoder, missing, [texts[sha] for sha in missing], progress)
    digest = hashlib.sha256(fingerprint.encode())
    ordered = wh.con.sql(
        f"SELECT c.vector FROM {source} AS s JOIN raw.vector_cache AS c "
        "ON c.text_sha256 = sha256(s.text) AND c.model_fingerprint = ? WHERE s.corpus = ? ORDER BY s.row_index",
        params=[fingerprint, corpus],
    ).to_arrow_table()
    matrix = vector_matrix(ordered.column("vector"))
    digest.update(matrix.tobytes())
    sha = digest.hexdigest()
    name = f"{corpus}/{kind}"
    if loaded_sha(wh, "meta.sources", target, name) == sha:
        return LoadResult(target, name, f"encoder {fingerprint[:16]}", sha, 0, "unchanged")
    with wh.transaction():
        wh.sql("DELETE FROM raw.vector_models WHERE corpus = ? AND kind = ?", [corpus, kind])
        wh.sql(
            "INSERT INTO raw.vector_models VALUES (?, ?, ?, ?, ?)",
            [corpus, kind, encoder.model_name, fingerprint, encoder.dim],
        )
        wh.sql(f"DELETE FROM {target} WHERE corpus = ?", [corpus])
        wh.sql(
            f"INSERT INTO {target} SELECT s.corpus, s.{key}, c.vector FROM {source} AS s JOIN raw.vector_cache AS c "
            "ON c.text_sha256 = sha256(s.text) AND c.model_fingerprint = ? WHERE s.corpus = ?",
            [fingerprint, corpus],
        )
        record_source(wh, "meta.sources", target, name, f"encoder {encoder.model_name} {fingerprint}", sha,
                      len(matrix), "encode.minilm")  # fmt: skip
    return LoadResult(target, name, f"{len(missing)} texts encoded, {len(rows) - len(missing)} from the cache", sha,
                      len(matrix), "loaded")  # fmt: skip


def vector_matrix(vectors: pa.ChunkedArray) -> np.ndarray:
    """[rows, dim] float32 of an Arrow column of FLOAT[dim] vectors (as DuckDB hands them), without a
    Python float per value.

    >>> vector_matrix(pa.chunked_array([pa.array([[1.0, 2.0]], pa.list_(pa.float32(), 2))])).tolist()
    [[1.0, 2.0]]
    """
    values = numpy_numbers(vectors.combine_chunks().flatten())  # not to_numpy: it imports pandas
    return np.ascontiguousarray(values, dtype=np.float32).reshape(len(vectors), -1)


def generate_vectors(context, key: str, options: dict) -> None:  # noqa: ANN001 - generators.Context
    """The `vectors` generator: MiniLM vectors of every document and query of `options["corpus"]`."""
    corpus = str(options["corpus"])
    for kind in ("documents", "queries"):
        bar = context.progress_bar(f"encoding {corpus} {kind}")
        result = encode_corpus(context.wh, corpus, context.encoder, kind, progress=bar)
        context.say(str(result))
        context.produced(result.table, {"corpus": corpus}, result.name)
    context.produced("raw.vector_models", {"corpus": corpus}, None)
