"""A damaged or tampered store through the installed script: a copied batch is refused, never
double-counted; damaged manifests, foreign Parquet files and store paths that are files are one
`error:` line with the documented exit code; one broken run never hides the others."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.conftest import assert_clean_error
from tests.poisson_prove.helpers import SEEDED_TARGET, manifests, small_spec, write

SALT = "00112233445566778899aabbccddeeff"


@pytest.fixture
def two_runs(prove, workdir) -> tuple[Path, Path]:
    """Runs "a" and "b" (paired), 40 episodes each in batches of 10; returns their folders."""
    write(workdir, "agent.py", SEEDED_TARGET)
    small_spec(workdir, replicates=20)
    for name, extra in (("a", ["--salt", SALT]), ("b", ["--pair-with", "a"])):
        result = prove("sweep", "--yes", "--max-mde", "1", "--batch-size", "10", "--name", name, *extra)
        assert result.returncode == 0, result.stderr
    store = workdir / "prove-runs"
    by_name = {m["name"]: store / m["run_id"] for m in manifests(store)}
    return by_name["a"], by_name["b"]


def test_a_copied_batch_is_refused_by_diff_check_runs_and_resume(prove, two_runs) -> None:
    run_a, _ = two_runs
    first = sorted((run_a / "episodes").glob("*.parquet"))[0]
    shutil.copy(first, first.with_name("batch-999999-dddddd.parquet"))
    named = ("stores 10 episodes more than once", first.name, "batch-999999-dddddd.parquet")
    for verb in (["diff", "a", "b"], ["diff", "a", "b", "--json"], ["check", "a", "b"], ["inspect", "a"]):
        assert_clean_error(prove(*verb), 1, *named)
    runs = prove("runs")
    assert_clean_error(runs, 1, *named)
    assert "next: move the copies out of" in runs.stderr
    listed = [line.split()[0] for line in runs.stdout.splitlines()[1:]]
    assert listed == ["b"]  # the other run is still listed
    # A complete run: nothing to resume; a partial one with a copy is refused before any work.
    manifest = json.loads((run_a / "manifest.json").read_text())
    (run_a / "manifest.json").write_text(json.dumps({**manifest, "status": "partial"}))
    before = sorted(p.name for p in (run_a / "episodes").iterdir())
    assert_clean_error(prove("sweep", "--resume", "a", "--yes"), 1, *named)
    assert sorted(p.name for p in (run_a / "episodes").iterdir()) == before


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


EVIL = """
import pathlib
pathlib.Path("PWNED").write_text("the manifest's target ran")
def rollout(cfg, seed):
    raise SystemExit("never")
"""


def test_resume_imports_only_a_target_the_user_confirms(prove, workdir) -> None:
    write(workdir, "agent.py", SEEDED_TARGET)
    write(workdir, "evilmod.py", EVIL)
    small_spec(workdir, replicates=20)
    stopped = prove("sweep", "--yes", "--max-mde", "1", "--name", "a", "--max-rollouts", "10")
    assert stopped.returncode == 3, stopped.stderr
    (run,) = (workdir / "prove-runs").glob("*/manifest.json")
    manifest = json.loads(run.read_text())
    run.write_text(json.dumps({**manifest, "target": "evilmod:rollout"}))
    result = prove("sweep", "--resume", "--yes")
    assert_clean_error(
        result, 1, "would import the target evilmod:rollout named in its manifest", "names agent:rollout"
    )
    assert 'next: poisson-prove sweep --resume "a" --target evilmod:rollout' in result.stderr
    assert_clean_error(prove("sweep", "--resume", "--yes", "--target", "agent:rollout"), 2, "does not match")
    assert not (workdir / "PWNED").exists()
    # The user's own --target confirms it (here: the real target, restored).
    run.write_text(json.dumps(manifest))
    (workdir / "prove.toml").unlink()  # nothing left to confirm the manifest's target with
    refused = prove("sweep", "--resume", "--yes")
    assert_clean_error(refused, 1, "cannot be read to confirm it")
    confirmed = prove("sweep", "--resume", "--yes", "--target", "agent:rollout")
    assert confirmed.returncode == 0, confirmed.stderr
    assert not (workdir / "PWNED").exists()
