"""NumPy arrays as Arrow arrays and back, through their buffers: not pa.array, pa.table or to_numpy, whose
first call imports pandas (a noticeable share of a `rankhouse eval`, and 0.25 s of a command that does
nothing else with it: docs/performance.md). No rankhouse module is imported here, so the SQL functions that
use it (rankhouse/ranking.py, rankhouse/bm25.py) are fingerprinted by this file alone beside their own.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa


def int64_array(numbers: np.ndarray) -> pa.Array:
    """An int64 Arrow array over a numpy int64 array's buffer (numpy_array)."""
    return numpy_array(numbers.astype(np.int64, copy=False))


def numpy_array(numbers: np.ndarray) -> pa.Array:
    """An Arrow array over a one-dimensional numpy array's buffer, of its number type: not pa.array or
    pa.table, whose first call imports pandas (a noticeable share of a `rankhouse eval`:
    docs/performance.md).

    >>> numpy_array(np.array([3, 1], dtype=np.int32)).to_pylist()
    [3, 1]
    """
    numbers = np.ascontiguousarray(numbers)
    return pa.Array.from_buffers(pa.from_numpy_dtype(numbers.dtype), len(numbers), [None, pa.py_buffer(numbers)])


def vector_array(matrix: np.ndarray) -> pa.Array:
    """The rows of a [rows, dim] matrix as fixed-size float32 lists, over its buffer (numpy_array).

    >>> vector_array(np.array([[1, 2], [3, 4]])).to_pylist()
    [[1.0, 2.0], [3.0, 4.0]]
    """
    return pa.FixedSizeListArray.from_arrays(numpy_array(matrix.astype(np.float32).ravel()), matrix.shape[1])


def string_array(texts: list[str]) -> pa.Array:
    """A string Arrow array of Python strings, built from their UTF-8 bytes and offsets (numpy_array's way
    for text: pa.array would import pandas).

    >>> string_array(["a", "", "é"]).to_pylist(), string_array(["a"]).type
    (['a', '', 'é'], DataType(string))
    """
    encoded = [text.encode() for text in texts]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)), out=offsets[1:])
    small = offsets[-1] < 2**31  # a string array's offsets are 32-bit; a large_string's 64-bit
    kind, offsets = (pa.string(), offsets.astype(np.int32)) if small else (pa.large_string(), offsets)
    return pa.Array.from_buffers(kind, len(encoded), [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))])


NUMPY_TYPES = {pa.float32(): np.float32, pa.float64(): np.float64, pa.int32(): np.int32, pa.int64(): np.int64}


def numpy_numbers(array: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A float32, float64, int32, int64 or boolean array without nulls as a numpy array, read from its buffers
    (numpy_array's way back): not to_numpy, whose first call imports pandas (on the way of every run's first
    chunk, and of the vectors' digest).

    >>> numpy_numbers(pa.chunked_array([[1.5], [2.5]])), numpy_numbers(pa.array([True, False, True]).slice(1))
    (array([1.5, 2.5]), array([False,  True]))
    """
    array = array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array
    assert array.null_count == 0, "an array with nulls"
    if array.type == pa.bool_():
        bits = np.unpackbits(np.frombuffer(array.buffers()[1], np.uint8), bitorder="little")
        return bits[array.offset : array.offset + len(array)].astype(bool)
    offset = array.offset * array.type.byte_width
    return np.frombuffer(array.buffers()[1], NUMPY_TYPES[array.type], count=len(array), offset=offset)
