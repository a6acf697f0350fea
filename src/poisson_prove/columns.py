"""Reading a stored run's episode columns fast: only the columns asked for, strings as codes.

A comparison or an inspection of runs of a million episodes each must stay fast and small, so
the episodes are read column by column from Parquet with the string columns kept
dictionary-encoded: a condition, an outcome or an error kind becomes a small integer code and
every later step is NumPy over those codes. Numbers are read from the Arrow buffers: pyarrow's
own conversions import pandas, a second of start-up for every command.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from poisson_prove.episode_table import episode_schema

if TYPE_CHECKING:
    from poisson_prove.store import RunInfo

_DICTIONARY_COLUMNS = ("cell", "outcome", "case_id", "error_kind", "error_message")


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
    return Coded(values, np.concatenate([_codes(chunk.indices) for chunk in chunks]))


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


_NUMPY_TYPES = {
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
    ChunkedArray.to_numpy imports it)."""
    if column.num_chunks == 0:
        return np.empty(0, dtype=dtype)
    out = np.empty(len(column), dtype=dtype)  # each chunk copied (and widened) once, into place
    at = 0
    for chunk in column.chunks:
        out[at : at + len(chunk)] = _plain_values(chunk, fill)
        at += len(chunk)
    return out


def read_columns(info: RunInfo, columns: Sequence[str]) -> pa.Table:
    """The named columns of every stored batch, strings dictionary-encoded and unified."""
    files = info.batch_files()
    schema = pa.schema([episode_schema().field(name) for name in columns])
    if not files:
        return schema.empty_table()
    wanted_dict = [name for name in columns if name in _DICTIONARY_COLUMNS]

    def read(path: Path) -> pa.Table:
        return info.read_batch(path, columns, read_dictionary=wanted_dict)

    workers = min(len(files), os.cpu_count() or 1, 8)
    if workers > 1:
        # One file per thread (Parquet decoding releases the GIL): faster than one file at a
        # time with its columns decoded in parallel; map keeps the write order.
        with ThreadPoolExecutor(workers) as pool:
            tables = list(pool.map(read, files))
    else:
        tables = [read(f) for f in files]
    table = pa.concat_tables(tables) if len(tables) > 1 else tables[0]
    if "cell" in columns and "replicate" in columns:
        info.check_unique(table)  # a copied batch file would be counted twice
    return table.unify_dictionaries()
