"""A damaged or tampered store through the installed script: damaged manifests, foreign
Parquet files and store paths that are files are one `error:` line with the documented exit
code; one broken run never hides the others."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.conftest import assert_clean_error
from tests.poisson_prove.helpers import SEEDED_TARGET, small_spec, write


def test_damaged_manifests_are_named_and_never_hide_the_other_runs(prove, two_runs) -> None:
    run_a, run_b = two_runs
    good = json.loads((run_a / "manifest.json").read_text())
    (run_a / "manifest.json").write_text("{garbage")
    for args in (["diff", run_a.name, "b"], ["sweep", "--resume", run_a.name, "--yes"]):
        assert_clean_error(
            prove(*args), 1, f"run folder {run_a.relative_to(run_a.parent.parent)}", "cannot be read"
        )
    (run_a / "manifest.json").write_text(json.dumps({"run_id": run_a.name}))
    runs = prove("runs")
    assert runs.returncode == 0, runs.stderr
    assert "warning:" in runs.stderr and "name is missing" in runs.stderr
    assert [line.split()[0] for line in runs.stdout.splitlines()[1:]] == ["b"]
    assert_clean_error(prove("diff", run_a.name, "b"), 1, "name is missing")
    for key, value, said in (
        ("replicates", "lots", "replicates is not a positive integer"),
        ("cells", {"x": 1}, "cells is not a list"),
        ("salt", 7, "salt is not text"),
    ):
        damaged = {**good, "status": "partial", key: value}
        (run_a / "manifest.json").write_text(json.dumps(damaged))
        result = prove("sweep", "--resume", "a", "--yes")
        assert_clean_error(result, 1, said)
    assert (run_b / "manifest.json").exists()


def test_a_foreign_parquet_file_is_named(prove, two_runs) -> None:
    run_a, _ = two_runs
    pq.write_table(pa.table({"x": [1, 2]}), run_a / "episodes" / "batch-999998-eeeeee.parquet")
    result = prove("diff", "a", "b")
    assert_clean_error(result, 1, "batch-999998-eeeeee.parquet", "not a batch of this store")
    assert "next: move batch-999998-eeeeee.parquet out of" in result.stderr


@pytest.mark.parametrize("under", [False, True])
def test_a_store_that_is_a_file_is_refused(prove, workdir, under) -> None:
    write(workdir, "agent.py", SEEDED_TARGET)
    small_spec(workdir, replicates=20)
    (workdir / "afile").write_text("not a folder")
    store = workdir / "afile" / "sub" if under else workdir / "afile"
    said = "lies under the file" if under else "is a file"
    for args in (["sweep", "--yes", "--max-mde", "1"], ["sweep", "--dry-run", "--max-mde", "1"], ["runs"]):
        assert_clean_error(prove("--store", str(store), *args), 1, said, "a store is a folder")
    assert (workdir / "afile").read_text() == "not a folder"


@pytest.mark.parametrize("value", ["inf", "nan", "0", "-1"])
def test_episode_timeout_must_be_finite_and_positive(prove, workdir, value) -> None:
    write(workdir, "agent.py", SEEDED_TARGET)
    small_spec(workdir, replicates=20)
    result = prove("sweep", "--yes", "--max-mde", "1", f"--episode-timeout={value}")
    assert_clean_error(result, 2, "--episode-timeout must be a positive, finite number of seconds")
    assert not (workdir / "prove-runs").exists()
