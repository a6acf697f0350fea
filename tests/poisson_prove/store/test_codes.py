"""store/codes.py: Arrow columns as NumPy without pandas. Every result is checked against
pyarrow's own `to_pylist` of the same column: nulls, sliced chunks (an offset into their
buffers), several chunks, a column with no dictionary, and columns with no rows or no values."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from poisson_prove.store.codes import Coded, coded, column_numbers, pooled_empty


def decoded(column: Coded) -> list[str | None]:
    return [None if code < 0 else column.values[code] for code in column.codes]


def dictionary_chunks() -> pa.ChunkedArray:
    """Two chunks with their own dictionaries, unified into one, the second sliced."""
    first = pa.array(["timeout", None, "resolved", "timeout"]).dictionary_encode()
    second = pa.array(["x", "resolved", None, "unresolved", "resolved"]).dictionary_encode().slice(1)
    table = pa.table({"outcome": pa.chunked_array([first, second])}).unify_dictionaries()
    return table.column("outcome")


def test_dictionary_chunks_become_codes_into_one_tuple_of_values() -> None:
    column = dictionary_chunks()
    result = coded(column)
    assert decoded(result) == column.to_pylist() == [
        "timeout", None, "resolved", "timeout", "resolved", None, "unresolved", "resolved",
    ]
    assert result.codes.dtype == np.int32
    assert sorted(result.values) == ["resolved", "timeout", "unresolved", "x"]
    assert result.codes.tolist().count(-1) == 2  # the nulls, and no other code below 0


def test_a_column_stored_without_a_dictionary_is_encoded_first() -> None:
    column = pa.chunked_array([pa.array(["b", None, "a"]), pa.array(["a", "c"])])
    result = coded(column)
    assert decoded(result) == ["b", None, "a", "a", "c"]
    assert len(set(result.values)) == len(result.values) == 3


def test_columns_without_rows_or_without_values() -> None:
    empty = coded(pa.chunked_array([], type=pa.dictionary(pa.int32(), pa.string())))
    assert empty.values == () and empty.codes.tolist() == [] and empty.codes.dtype == np.int32
    never_filled = pa.chunked_array([pa.array([None, None, None], type=pa.string()).dictionary_encode()])
    assert coded(never_filled).codes.tolist() == [-1, -1, -1]
    assert column_numbers(pa.chunked_array([], type=pa.float64()), np.float64, np.nan).tolist() == []


def test_numbers_fill_nulls_across_sliced_chunks_and_widen_into_one_array() -> None:
    floats = pa.array([9.0, 1.5, None, 2.0, None, 7.0]).slice(1, 4)  # offset 1: 1.5, None, 2.0, None
    no_nulls = pa.array([3.25, 4.0])
    all_null = pa.array([None, None], type=pa.float64())
    column = pa.chunked_array([floats, no_nulls, all_null])
    times = column_numbers(column, np.float64, np.nan)
    want = [np.nan if v is None else v for v in column.to_pylist()]
    np.testing.assert_array_equal(times, np.array(want))
    assert times.dtype == np.float64 and len(times) == 8

    small = pa.chunked_array([pa.array([1, None, 3], type=pa.int32()), pa.array([None], type=pa.int32())])
    wide = column_numbers(small, np.int64, -1)
    assert wide.dtype == np.int64 and wide.tolist() == [1, -1, 3, -1]


def test_a_long_column_with_nulls_past_the_first_bitmap_byte() -> None:
    values = [None if i % 7 == 3 else i for i in range(50)]
    column = pa.chunked_array([pa.array(values, type=pa.int64()).slice(5, 40)])
    assert column_numbers(column, np.int64, -1).tolist() == [-1 if v is None else v for v in values[5:45]]


def test_reading_stored_columns_never_imports_pandas(tmp_path: Path) -> None:
    path = tmp_path / "batch.parquet"
    pq.write_table(pa.table({"outcome": ["ok", None, "bad"], "t": [1.0, None, 3.0]}), path)
    probe = (
        "import sys\n"
        "import numpy as np\n"
        "import pyarrow.parquet as pq\n"
        "from poisson_prove.store.codes import coded, column_numbers\n"
        f"table = pq.ParquetFile({str(path)!r}, read_dictionary=['outcome']).read()\n"
        "column = coded(table.column('outcome'))\n"
        "times = column_numbers(table.column('t'), np.float64, -1.0)\n"
        "print(column.values, column.codes.tolist(), times.tolist())\n"
        "print('pandas' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "('ok', 'bad') [0, -1, 1] [1.0, -1.0, 3.0]\nFalse\n"


def test_one_chunk_of_the_type_asked_for_is_its_buffer_read_only_and_equal() -> None:
    times = pa.chunked_array([pa.array([1.0, 2.5, 3.0] * 1000)])
    numbers = column_numbers(times, np.float64, np.nan)
    assert numbers.dtype == np.float64 and numbers.tolist() == times.to_pylist()
    assert not numbers.flags.writeable  # Arrow's memory: copied by whoever writes
    sliced = pa.chunked_array([pa.array([9.0, 1.0, 2.0, 7.0]).slice(1, 2)])
    assert column_numbers(sliced, np.float64, np.nan).tolist() == [1.0, 2.0]
    with_nulls = pa.chunked_array([pa.array([1.0, None, 3.0])])
    filled = column_numbers(with_nulls, np.float64, -1.0)
    assert filled.tolist() == [1.0, -1.0, 3.0] and filled.flags.writeable
    widened = column_numbers(pa.chunked_array([pa.array([4, 5], type=pa.int32())]), np.int64, 0)
    assert widened.dtype == np.int64 and widened.tolist() == [4, 5] and widened.flags.writeable
    never = column_numbers(pa.chunked_array([pa.array([None, None], type=pa.int32())]), np.int64, -1)
    assert never.dtype == np.int64 and never.tolist() == [-1, -1]


def test_codes_and_copied_numbers_are_writable_arrays_of_their_own_in_arrows_pool() -> None:
    """coded and a widened column_numbers write into Arrow's pool (pooled_empty): each call an
    array of its own that may be written to without touching the column or another result."""
    column = dictionary_chunks()
    before = pa.total_allocated_bytes()
    first, second = coded(column), coded(column)
    assert pa.total_allocated_bytes() >= before + 2 * len(column) * 4
    assert first.codes.flags.writeable and not np.shares_memory(first.codes, second.codes)
    first.codes[:] = 0
    assert decoded(second) == column.to_pylist()  # the second result and the column unchanged
    assert decoded(coded(column)) == column.to_pylist()
    small = pa.chunked_array([pa.array([1, None], type=pa.int32()), pa.array([3], type=pa.int32())])
    wide = column_numbers(small, np.int64, -1)
    assert wide.flags.writeable and wide.tolist() == [1, -1, 3]
    assert pooled_empty(0, np.float64).tolist() == []
