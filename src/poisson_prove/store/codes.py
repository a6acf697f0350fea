"""Arrow columns as NumPy, never through pandas: a string column as integer codes into its
values (`coded`), a fixed-width column as one array with nulls filled (`column_numbers`).

Numbers are read from the Arrow buffers: pyarrow's own conversions import pandas, a second of
start-up for every command. The arrays a column becomes are allocated in Arrow's memory pool
(`pooled_empty`), where the memory of the last read is still mapped for the next.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa


@dataclass(frozen=True)
class Coded:
    """A string column as codes into `values` (-1 where the row holds null)."""

    values: tuple[str, ...]
    codes: np.ndarray


def coded(column: pa.ChunkedArray) -> Coded:
    """Dictionary-encoded chunks (with one shared dictionary after unification) -> Coded."""
    if not pa.types.is_dictionary(column.type):
        import pyarrow.compute as pc  # 50 ms to import: only for a column stored without a dictionary

        column = pc.dictionary_encode(column)
    chunks = column.chunks
    if not chunks:
        return Coded((), np.empty(0, dtype=np.int32))
    values = tuple(chunks[0].dictionary.to_pylist())
    codes = pooled_empty(len(column), np.int32)
    at = 0
    for chunk in chunks:  # each chunk's indices copied (and narrowed) once, into place
        codes[at : at + len(chunk)] = _codes(chunk.indices)
        at += len(chunk)
    return Coded(values, codes)


def pooled_empty(size: int, dtype: type | np.dtype[Any]) -> np.ndarray:
    """An uninitialised, writable NumPy array in Arrow's memory pool.

    Why: a column of a million rows that NumPy allocates is new memory for the system on every
    read (glibc unmaps large blocks when they are freed), so each of its pages is faulted in
    again. Arrow's pool keeps freed memory mapped: a process that reads runs again (the
    dashboard's refresh, `diff` reading both sides, a notebook) writes into pages it already has.
    Reading two sweep-written runs of a million episodes takes ~25% less (benchmarks/bench_diff.py).
    """
    kind = np.dtype(dtype)
    buffer = pa.allocate_buffer(size * kind.itemsize)
    return np.frombuffer(buffer, dtype=kind, count=size)


def _plain_values(array: pa.Array, fill: float | int) -> np.ndarray:
    """A fixed-width Arrow array as NumPy with nulls replaced by `fill`.

    Read from the buffers: pyarrow's own conversion of an array with nulls (and
    pc.fill_null's scalar) imports pandas, a second of start-up for every command.
    """
    dtype = _NUMPY_TYPES[array.type.id]
    if array.null_count == len(array) > 0:  # a column never filled (error_kind of a clean run)
        return np.full(len(array), fill, dtype=np.result_type(dtype, np.min_scalar_type(fill)))
    data = np.frombuffer(array.buffers()[1], dtype=dtype, count=len(array) + array.offset)[array.offset:]
    if array.null_count == 0:
        return data
    bitmap = np.frombuffer(array.buffers()[0], dtype=np.uint8)
    valid = np.unpackbits(bitmap, bitorder="little")[array.offset : array.offset + len(array)].astype(bool)
    return np.where(valid, data, fill)


_NUMPY_TYPES: dict[int, np.dtype[Any]] = {
    pa.int8().id: np.dtype(np.int8),
    pa.int16().id: np.dtype(np.int16),
    pa.int32().id: np.dtype(np.int32),
    pa.int64().id: np.dtype(np.int64),
    pa.float64().id: np.dtype(np.float64),
}


def _codes(indices: pa.Array) -> np.ndarray:
    return _plain_values(indices, -1).astype(np.int32, copy=False)


def column_numbers(column: pa.ChunkedArray, dtype: type, fill: float | int) -> np.ndarray:
    """A fixed-width column as one NumPy array, nulls as `fill` (never through pandas:
    ChunkedArray.to_numpy imports it). A column of one chunk of type `dtype` without nulls is
    its Arrow buffer itself, read-only: copy it to write to it."""
    if column.num_chunks == 0:
        return np.empty(0, dtype=dtype)
    if column.num_chunks == 1:
        # One chunk (what a file's float column reads as) of the type asked for, without nulls:
        # its buffer as it is, read-only, not a copy (8 MB fewer written a million times).
        array = _plain_values(column.chunk(0), fill)
        if array.dtype == dtype:
            if not array.flags.owndata:
                array.flags.writeable = False  # Arrow's memory, which the table shares
            return array
    out = pooled_empty(len(column), dtype)  # each chunk copied (and widened) once, into place
    at = 0
    for chunk in column.chunks:
        out[at : at + len(chunk)] = _plain_values(chunk, fill)
        at += len(chunk)
    return out
