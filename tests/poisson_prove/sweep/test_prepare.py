"""The refusal of an underpowered design is a typed error whose fields are the two ways out,
each checked against the planner itself: the replicates it names pass, one fewer does not, and
the --max-mde it names passes at the replicates asked for."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import poisson_prove
from poisson_prove.sweep import SweepRequest, UnderpoweredError, prepare_sweep
from tests.poisson_prove.helpers import SEEDED_TARGET, small_spec, write


def _passes(request: SweepRequest, **changes: object) -> bool:
    return prepare_sweep(dataclasses.replace(request, **changes), import_check="none").plan.passes


def test_an_underpowered_design_raises_its_ways_out_as_fields(tmp_path: Path) -> None:
    write(tmp_path, "agent.py", SEEDED_TARGET)
    spec = small_spec(tmp_path, replicates=20)
    with pytest.raises(UnderpoweredError) as caught:
        poisson_prove.run_sweep(spec, store=tmp_path / "runs")
    err = caught.value
    assert isinstance(err, poisson_prove.ProveError) and err.exit_code == 1
    assert err.message.startswith("underpowered design")
    assert err.accept_mde is not None
    assert err.suggestions == (
        f"poisson-prove sweep --replicates {err.needed_replicates}",
        f"poisson-prove sweep --max-mde {err.accept_mde:.3f}",
    )
    request = SweepRequest(spec_path=spec, store=tmp_path / "runs")
    assert not _passes(request)
    assert _passes(request, replicates=err.needed_replicates)
    assert not _passes(request, replicates=err.needed_replicates - 1)
    assert _passes(request, max_mde=float(f"{err.accept_mde:.3f}"))
    assert not (tmp_path / "runs").exists()  # refused before anything was written


def test_replan_changes_the_replicates_and_keeps_everything_prepared(tmp_path: Path) -> None:
    from poisson_prove.errors import ProveError
    from poisson_prove.sweep.prepare import replan

    write(tmp_path, "agent.py", SEEDED_TARGET)
    spec = small_spec(tmp_path, replicates=20)
    prepared = prepare_sweep(SweepRequest(spec_path=spec, store=tmp_path / "runs"), import_check="none")
    budget = {"budget_usd": 8.0, "replicates": 300}
    again = replan(prepared, 300, budget=budget)
    assert again.plan.replicates == 300 and again.plan.rollouts == 600
    assert again.request.replicates == 300 and again.request.budget == budget
    assert again.plan.salt == prepared.plan.salt and again.salt_source == "fresh"
    assert again.plan.conditions == prepared.plan.conditions and again.spec is prepared.spec
    assert prepared.plan.replicates == 20  # the first plan is left as it was

    poisson_prove.run_sweep(spec, store=tmp_path / "runs", max_mde=1.0, max_rollouts=4)
    resumed = prepare_sweep(SweepRequest(store=tmp_path / "runs", resume=""), import_check="none")
    with pytest.raises(ProveError, match="--replicates cannot be given with --resume") as caught:
        replan(resumed, 300)
    assert caught.value.exit_code == 2
