"""Reading a run for a comparison: only the needed columns, strings as dictionary codes.

A comparison of two runs of a million episodes each must stay fast and small, so the
episodes are read column by column from Parquet with the string columns kept
dictionary-encoded: a condition, an outcome or an error kind becomes a small integer code
and every later step is NumPy over those codes.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from poisson_prove.store import EPISODE_SCHEMA, RunInfo

COMPARE_COLUMNS = ("cell", "replicate", "seed", "outcome", "t", "horizon", "case_id", "error_kind")
_DICTIONARY_COLUMNS = ("cell", "outcome", "case_id", "error_kind", "error_message")


@dataclass(frozen=True)
class Coded:
    """A string column as codes into `values` (-1 where the row holds null)."""

    values: tuple[str, ...]
    codes: np.ndarray


@dataclass(frozen=True)
class RunFrame:
    """The columns of one run a comparison reads, as NumPy arrays of equal length."""

    info: RunInfo
    cell: Coded
    replicate: np.ndarray
    seed: np.ndarray
    outcome: Coded
    t: np.ndarray
    horizon: np.ndarray
    case_id: Coded
    error_kind: Coded

    @property
    def rows(self) -> int:
        return len(self.replicate)


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
    schema = pa.schema([EPISODE_SCHEMA.field(name) for name in columns])
    if not files:
        return schema.empty_table()
    wanted_dict = [name for name in columns if name in _DICTIONARY_COLUMNS]

    def read(path: Path) -> pa.Table:
        return info.read_batch(path, columns, read_dictionary=wanted_dict)

    workers = min(len(files), os.cpu_count() or 1, 8)
    if workers > 1:
        # One file per thread (Parquet decoding releases the GIL): faster than one file at a
        # time with its columns decoded in parallel; map keeps the write order.
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(workers) as pool:
            tables = list(pool.map(read, files))
    else:
        tables = [read(f) for f in files]
    table = pa.concat_tables(tables) if len(tables) > 1 else tables[0]
    if "cell" in columns and "replicate" in columns:
        info.check_unique(table)  # a copied batch file would be counted twice
    return table.unify_dictionaries()


def read_frame(info: RunInfo) -> RunFrame:
    """The comparison's view of one run."""
    table = read_columns(info, COMPARE_COLUMNS)
    return RunFrame(
        info=info,
        cell=coded(table.column("cell")),
        replicate=column_numbers(table.column("replicate"), np.int64, 0),
        seed=column_numbers(table.column("seed"), np.int64, 0),
        outcome=coded(table.column("outcome")),
        t=column_numbers(table.column("t"), np.float64, np.nan),
        horizon=column_numbers(table.column("horizon"), np.float64, np.nan),
        case_id=coded(table.column("case_id")),
        error_kind=coded(table.column("error_kind")),
    )


def recode(coded: Coded, universe: Sequence[str]) -> np.ndarray:
    """Codes of `coded` re-expressed as indices into `universe` (-1 for null or absent)."""
    position = {value: i for i, value in enumerate(universe)}
    lookup = np.array([position.get(v, -1) for v in coded.values] + [-1], dtype=np.int32)
    # index -1 (null) wraps to the trailing -1 of the lookup table (take: half the time of [])
    return np.take(lookup, coded.codes, mode="wrap")


def distinct_cases_per_cell(frame: RunFrame) -> dict[str, tuple[str, ...]]:
    """Each condition's distinct case ids, only for conditions that ran more than one."""
    has_case = frame.case_id.codes >= 0
    if not has_case.any():
        return {}
    n_cases = len(frame.case_id.values)
    cell, case = frame.cell.codes, frame.case_id.codes
    if not has_case.all():
        cell, case = cell[has_case], case[has_case]
    combined = np.multiply(cell, n_cases, dtype=np.int64) + case
    if len(frame.cell.values) * n_cases <= max(4 * combined.size, 1_000_000) and combined.min() >= 0:
        # few (condition, case) combinations: counted, not sorted
        pairs = np.flatnonzero(np.bincount(combined, minlength=len(frame.cell.values) * n_cases))
    else:
        pairs = np.unique(combined)
    cells, counts = np.unique(pairs // n_cases, return_counts=True)
    mixed: dict[str, tuple[str, ...]] = {}
    for cell_code in cells[counts > 1]:
        cases = pairs[pairs // n_cases == cell_code] % n_cases
        mixed[frame.cell.values[int(cell_code)]] = tuple(sorted(frame.case_id.values[int(c)] for c in cases))
    return mixed


def pair_rows(
    before_keys: np.ndarray, before_seed: np.ndarray, after_keys: np.ndarray, after_seed: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Row indices (into each side) of episodes that share (condition, replicate) and seed.

    Keys must identify (condition, replicate) uniquely per side after dropping duplicates; a
    duplicated key keeps its first row (a store never holds one, but a copied batch could).
    """
    dense = _pair_rows_dense(before_keys, before_seed, after_keys, after_seed)
    if dense is not None:
        return dense
    _, first_before = np.unique(before_keys, return_index=True)
    _, first_after = np.unique(after_keys, return_index=True)
    _, in_before, in_after = np.intersect1d(
        before_keys[first_before], after_keys[first_after], assume_unique=True, return_indices=True
    )
    rows_before = first_before[in_before]
    rows_after = first_after[in_after]
    same_seed = before_seed[rows_before] == after_seed[rows_after]
    return rows_before[same_seed], rows_after[same_seed]


def _pair_rows_dense(
    before_keys: np.ndarray, before_seed: np.ndarray, after_keys: np.ndarray, after_seed: np.ndarray
) -> tuple[np.ndarray, np.ndarray] | None:
    """pair_rows without a sort, for small non-negative keys none of which repeats on a side
    (what a store holds: keys are condition x replicate); None otherwise."""
    if not before_keys.size or not after_keys.size:
        return None
    low = min(int(before_keys.min()), int(after_keys.min()))
    high = max(int(before_keys.max()), int(after_keys.max()))
    if low < 0 or high >= max(4 * (before_keys.size + after_keys.size), 1_000_000):
        return None
    index = np.int32 if max(before_keys.size, after_keys.size) < 2**31 else np.intp
    rows = []
    for keys in (before_keys, after_keys):
        row_of = np.full(high + 1, -1, dtype=index)  # each key's row, -1 where absent
        row_of[keys] = np.arange(keys.size, dtype=index)
        if np.count_nonzero(row_of >= 0) != keys.size:
            return None  # a repeated key: the sorting path keeps its first row
        rows.append(row_of)
    shared = np.flatnonzero((rows[0] >= 0) & (rows[1] >= 0))  # ascending, as intersect1d's
    rows_before = rows[0][shared].astype(np.intp)
    rows_after = rows[1][shared].astype(np.intp)
    same_seed = before_seed[rows_before] == after_seed[rows_after]
    return rows_before[same_seed], rows_after[same_seed]
