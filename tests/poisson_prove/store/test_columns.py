"""Reading stored columns as codes and NumPy numbers, checked against pyarrow's own reading of
the same batch files (nulls, several batches with their own dictionaries)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from poisson_prove.store.codes import coded, column_numbers
from poisson_prove.store.columns import read_columns
from poisson_prove.store.runs import RunStore
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


SWEPT_AGENT = """
from poisson_prove import Episode


def rollout(cfg, seed):
    if seed % 17 == 0:
        raise RuntimeError("tool down")  # an errored episode: no outcome, no time
    outcome = ("done", "violated", "timeout")[seed % 3]
    return Episode(outcome, float(seed % 11), 20, {"case_id": f"case-{seed % 5}"})
"""

SWEPT_SPEC = """
target = "swept_agent:rollout"
target_id = "swept"
replicates = 70
axes = { task = { type = "categorical", values = ["refund", "lookup", "schedule"] } }
declare = { outcomes = ["done", "violated", "timeout"], failures = ["violated", "timeout"] }
"""


def test_a_sweep_written_run_of_many_batches_reads_as_its_files_read_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reader (files one at a time, or one per thread on a machine with more cores) gives
    every row of every batch in write order, as pyarrow reads each file on its own."""
    (tmp_path / "swept_agent.py").write_text(SWEPT_AGENT)
    (tmp_path / "prove.toml").write_text(SWEPT_SPEC)
    script = Path(sys.executable).with_name("poisson-prove")
    done = subprocess.run(
        [
            str(script),
            "--store",
            "st",
            "sweep",
            "prove.toml",
            "--yes",
            "--max-mde",
            "1",
            "--batch-size",
            "23",
            "--max-rollouts",  # a partial run keeps its batches (a complete one is compacted)
            "207",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 3, done.stderr  # stopped by --max-rollouts: partial
    (info,) = RunStore(tmp_path / "st").runs()
    files = info.batch_files()
    assert len(files) >= 9  # 207 of the 210 rows in batches of at most 23
    columns = ("cell", "outcome", "t", "replicate", "seed", "error_kind", "case_id", "horizon")
    one_by_one = [pq.ParquetFile(path).read(columns=list(columns)) for path in files]
    expected = {name: [v for part in one_by_one for v in part.column(name).to_pylist()] for name in columns}
    assert expected["outcome"].count(None) > 0 and len(expected["cell"]) == 207
    for cores in (1, 2, 16):  # one file at a time, or files in parallel
        monkeypatch.setattr(os, "cpu_count", lambda cores=cores: cores)
        table = read_columns(info, columns)
        for name in ("cell", "outcome", "error_kind", "case_id"):
            column = coded(table.column(name))
            assert [None if code < 0 else column.values[code] for code in column.codes] == expected[name], (
                name
            )
        for name, dtype, fill in (("t", np.float64, np.nan), ("horizon", np.float64, np.nan)):
            want = np.array([np.nan if v is None else v for v in expected[name]], dtype=float)
            np.testing.assert_array_equal(column_numbers(table.column(name), dtype, fill), want)
        for name in ("replicate", "seed"):
            assert column_numbers(table.column(name), np.int64, -1).tolist() == expected[name]
