"""Reading stored columns as codes and NumPy numbers, checked against pyarrow's own reading of
the same batch files (nulls, several batches with their own dictionaries)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from poisson_prove.store.codes import coded, column_numbers
from poisson_prove.store.columns import read_columns
from tests.poisson_prove.runs import from_outcomes, write_run


def test_columns_read_as_codes_and_numbers_equal_pyarrows_own_reading(tmp_path: Path) -> None:
    per_condition = {
        ("refund", 0.0): ["resolved", None, "unresolved", "resolved", None],
        ("password", 0.5): ["timeout", "resolved", None],
    }
    info = write_run(tmp_path / "prove-runs", from_outcomes(per_condition), batches=3)
    assert len(info.batch_files()) == 3
    expected = pq.ParquetDataset(info.batch_files()).read(columns=["cell", "outcome", "t", "replicate"])
    table = read_columns(info, ("cell", "outcome", "t", "replicate"))
    assert table.num_rows == expected.num_rows == 8
    for name in ("cell", "outcome"):
        column = coded(table.column(name))
        decoded = [None if code < 0 else column.values[code] for code in column.codes]
        assert decoded == expected.column(name).to_pylist()
    times = column_numbers(table.column("t"), np.float64, np.nan)
    want = [np.nan if value is None else value for value in expected.column("t").to_pylist()]
    np.testing.assert_array_equal(times, np.array(want, dtype=float))
    replicates = column_numbers(table.column("replicate"), np.int64, -1)
    assert replicates.tolist() == expected.column("replicate").to_pylist()
