"""SweepResult (sweep/result.py): how a sweep ended, and the exit code each ending is."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import poisson_prove
from poisson_prove.sweep import SweepResult
from tests.poisson_prove.helpers import episodes, seeded_spec

DONE = SweepResult(
    verdict="done", run_id="r1", name="agent 2026-12-01 a", status="complete", salt="ab" * 8,
    paired_with=None, paired_with_name=None, planned=40, done=40, errored=0, ran=40, seconds=1.0,
)


@pytest.mark.parametrize(
    ("verdict", "code"),
    [("done", 0), ("stopped", 3), ("failed", 3), ("process_exit", 3), ("interrupted", 130)],
)
def test_each_ending_is_its_documented_exit_code(verdict: str, code: int) -> None:
    assert dataclasses.replace(DONE, verdict=verdict).exit_code == code


def test_a_result_is_frozen_and_its_optional_fields_start_empty() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        DONE.verdict = "stopped"  # type: ignore[misc]
    assert (DONE.system_exits, DONE.first_error, DONE.process_exit, DONE.sequential, DONE.saved) == (
        0, None, None, None, 0,
    )
    assert dict(DONE.capture_missing) == {}


def test_run_sweep_returns_what_it_stored_and_a_cut_sweep_exits_3(tmp_path: Path) -> None:
    spec = seeded_spec(tmp_path, replicates=40)
    store = tmp_path / "runs"
    cut = poisson_prove.run_sweep(spec, store=store, max_mde=1, max_rollouts=30, batch_size=10, name="cut")
    assert (cut.verdict, cut.status, cut.exit_code) == ("stopped", "partial", 3)
    assert (cut.planned, cut.done, cut.ran, cut.errored, cut.name) == (80, 30, 30, 0, "cut")
    assert len(episodes(store, cut.run_id)) == 30
    rest = poisson_prove.run_sweep(spec, store=store, max_mde=1, resume="cut")
    assert (rest.verdict, rest.status, rest.exit_code) == ("done", "complete", 0)
    assert (rest.run_id, rest.planned, rest.done, rest.ran) == (cut.run_id, 80, 80, 50)
    assert len(episodes(store, rest.run_id)) == 80
