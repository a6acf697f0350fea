"""`--concurrency` is a flag: out of 1..4,096 it is the command line that is wrong (exit 2, one
error line, nothing written), on every backend, before the spec's tables are read."""

from __future__ import annotations

from pathlib import Path

import pytest

from poisson_prove.sweep.prepare import MAX_CONCURRENCY
from tests.conftest import assert_clean_error
from tests.poisson_prove.helpers import seeded_spec


@pytest.mark.parametrize(
    "args",
    [
        ["--concurrency", "0"],
        ["--concurrency", "100000"],
        ["--backend", "dask", "--concurrency", "-1"],
    ],
    ids=["zero", "beyond-the-cap", "dask-negative"],
)
def test_concurrency_out_of_range_is_a_usage_error(prove, workdir: Path, args: list[str]) -> None:
    seeded_spec(workdir, replicates=20)
    refused = prove("sweep", "--yes", "--max-mde", "1", *args)
    assert_clean_error(refused, 2, f"--concurrency must be a whole number from 1 to {MAX_CONCURRENCY:,}")
    assert f"got {args[-1]}" in refused.stderr
    assert refused.stdout == ""
    assert not (workdir / "prove-runs").exists()


def test_concurrency_at_the_cap_is_accepted(prove, workdir: Path) -> None:
    seeded_spec(workdir, replicates=20)
    planned = prove("sweep", "--dry-run", "--max-mde", "1", "--concurrency", str(MAX_CONCURRENCY))
    assert planned.returncode == 0, planned.stderr


@pytest.mark.parametrize("backend", ["local", "dask"])
def test_a_backend_tables_concurrency_beyond_the_cap_is_refused_before_anything_runs(
    prove, workdir: Path, backend: str
) -> None:
    """The spec's table is held to the flag's cap: `[local] concurrency = 100000` started threads
    until the machine refused one (an unexpected failure, exit 70)."""
    seeded_spec(workdir, replicates=20, extra=f"\n[{backend}]\nconcurrency = 100000\n")
    refused = prove("sweep", "--yes", "--max-mde", "1", "--backend", backend)
    expected = f"[{backend}] concurrency must be at most {MAX_CONCURRENCY:,} (episodes at once), got 100,000"
    assert_clean_error(refused, 1, expected)
    assert f"next: set [{backend}] concurrency to {MAX_CONCURRENCY:,} or fewer" in refused.stderr
    assert not (workdir / "prove-runs").exists()
