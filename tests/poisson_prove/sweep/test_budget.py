"""The budget-aware plan against the planner it is built on."""

from __future__ import annotations

import pytest

from poisson_prove.errors import ProveError
from poisson_prove.stats.power import design_mde, replicates_needed
from poisson_prove.sweep.budget import budget_design, per_episode_cost, refusal


def test_docs_design_9_conditions_2_outcomes() -> None:
    # The statistics contract's vector: n = 194 passes at 0.200 with a worst MDE of 0.1991.
    per_episode = 0.01
    design = budget_design(9 * 194 * per_episode, per_episode, 9, 2)
    assert design.replicates == 194
    assert design.detectable_rise == 0.2  # 0.1991 rounded up to 3 decimals
    assert design.cost_usd == pytest.approx(17.46)
    assert design.fits == (replicates_needed(9, 2) <= 194)
    assert design.line() == "with $17.46 you can detect a rise of 0.200 at the worst base rate"


def test_a_small_budget_is_refused_with_the_cheapest_design() -> None:
    design = budget_design(1.8, 0.01, 9, 2)  # 20 replicates
    assert design.replicates == 20 and not design.fits
    assert design.cheapest_replicates == 193
    assert design.cheapest_usd == pytest.approx(193 * 9 * 0.01)
    error = refusal(design)
    assert "you accept 0.200" in error.message
    assert error.suggestions[0].startswith("--budget 17.37 (--replicates 193)")
    assert error.suggestions[1] == "--max-mde 0.625"  # the contract's vector at n = 20


def test_more_money_never_detects_less() -> None:
    rises = [budget_design(b, 0.05, 3, 1).detectable_rise for b in (5, 10, 20, 40, 80)]
    assert all(r is not None for r in rises)
    assert rises == sorted(rises, reverse=True)
    largest = budget_design(40, 0.05, 3, 1)
    assert largest.replicates == 266
    assert design_mde(267, 3, 1).replicates * 3 * 0.05 > 40


def test_bad_money_is_refused() -> None:
    with pytest.raises(ProveError) as error:
        budget_design(0, 0.01, 1, 1)
    assert error.value.exit_code == 2
    with pytest.raises(ProveError) as free:
        budget_design(10, 0.0, 1, 1)
    assert "cost_per_episode" in free.value.suggestions[0]
    with pytest.raises(ProveError, match="cost_per_episode"):
        per_episode_cost(0.0, {"cost_per_episode": -1})
    assert per_episode_cost(0.001, {"cost_per_episode": 0.004}) == pytest.approx(0.005)
