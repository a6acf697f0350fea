"""A batch file damaged after it was written: every reader names it, and resuming the run after
moving it aside runs exactly its episodes again, on the same seeds."""

from __future__ import annotations

from tests.conftest import assert_clean_error
from tests.poisson_prove.helpers import SEEDED_TARGET, episodes, manifests, small_spec, write


def test_damaged_batch_is_named_and_resume_runs_its_episodes_again(prove, workdir) -> None:
    write(workdir, "agent.py", SEEDED_TARGET)
    small_spec(workdir, replicates=30)
    # Stopped at 48 of 60: a partial run keeps its three batches (a complete one is compacted).
    sweep = ("sweep", "--yes", "--max-mde", "0.6", "--batch-size", "16")
    assert prove(*sweep, "--max-rollouts", "48").returncode == 3  # stopped, partial
    assert prove("sweep", "--yes", "--max-mde", "0.6", "--pair-with", "latest").returncode == 0
    first, paired = sorted(manifests(workdir / "prove-runs"), key=lambda m: m["created_ns"])
    store = workdir / "prove-runs"
    before = _rows(store, paired["run_id"])  # the planned set on the same seeds
    batch = sorted((store / first["run_id"] / "episodes").glob("*.parquet"))[1]
    batch.write_bytes(batch.read_bytes()[:100])  # truncated after it was renamed into place

    for verb in ("diff", "check"):
        result = prove(verb)
        assert_clean_error(result, 1, f"batch file {batch.relative_to(workdir)}", "cannot be read")
        assert result.stdout == ""
        assert f'next: move {batch.name} out of ' in result.stderr
        assert f'poisson-prove sweep --resume "{first["name"]}" --yes' in result.stderr

    batch.rename(workdir / batch.name)
    resumed = prove("sweep", "--resume", first["name"], "--yes")
    assert resumed.returncode == 0, resumed.stderr
    assert f'Resuming "{first["name"]}": 32 stored, 28 to run' in resumed.stdout
    assert _rows(store, first["run_id"]) == before  # the planned set again, same seeds and outcomes
    assert len(list((store / first["run_id"] / "episodes").glob("*.parquet"))) == 1  # compacted
    assert prove("diff").returncode == 0

    again = prove("sweep", "--resume", first["name"], "--yes")
    assert_clean_error(again, 1, "is complete; there is nothing to resume")


def _rows(store, run_id: str) -> dict:
    rows = episodes(store, run_id)
    keyed = {(r["cell"], r["replicate"]): (r["seed"], r["outcome"]) for r in rows}
    assert len(keyed) == len(rows)  # no duplicate (cell, replicate)
    return keyed


def test_runs_says_which_run_it_leaves_out_for_an_unreadable_manifest(prove, workdir) -> None:
    write(workdir, "agent.py", SEEDED_TARGET)
    small_spec(workdir, replicates=10)
    for _ in range(2):
        assert prove("sweep", "--yes", "--max-mde", "0.9").returncode == 0
    kept, broken = manifests(workdir / "prove-runs")
    path = workdir / "prove-runs" / broken["run_id"] / "manifest.json"
    path.write_text("{torn", encoding="utf-8")
    result = prove("runs")
    assert result.returncode == 0, result.stderr
    assert kept["name"] in result.stdout and broken["name"] not in result.stdout
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 1
    assert str(path.relative_to(workdir)) in warnings[0] and "that run is left out" in warnings[0]
