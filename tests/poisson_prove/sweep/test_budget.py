"""The budget-aware plan against the planner it is built on."""

from __future__ import annotations

import pytest

from poisson_prove.errors import ProveError
from poisson_prove.stats.power import design_mde, replicates_needed, suggested_max_mde
from poisson_prove.sweep.budget import (
    budget_design,
    case_budget_design,
    case_refusal,
    per_episode_cost,
    refusal,
)


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


def test_a_benchmarks_budget_buys_replicates_per_case() -> None:
    # 120 cases in one group at $0.01 an episode: $4 runs each case 3 times ($3.60).
    design = case_budget_design(4.0, 0.01, 120, 1, 1)
    assert (design.replicates, design.fits, design.cases, design.cases_covered) == (3, True, 120, 120)
    assert design.cost_usd == pytest.approx(3.6)
    assert design.detectable_rise == 0.191  # correlation 1: n = 120, whatever the replicates
    assert design.detectable_rise_independent == suggested_max_mde(design_mde(360, 1, 1)) == 0.108
    assert design.line() == (
        "with $4.00 you can run each of the 120 cases 3 times and detect a rise of 0.108 if a case's "
        "repeats are independent, a rise of 0.191 if they always agree (more money buys repeats, which "
        "move only the first)"
    )
    richer = case_budget_design(40.0, 0.01, 120, 1, 1)
    assert richer.replicates == 33 and richer.detectable_rise == design.detectable_rise
    assert richer.detectable_rise_independent < design.detectable_rise_independent
    assert case_budget_design(1.2, 0.01, 120, 1, 1).replicates == 1  # exactly once: the float guard
    assert budget_design(17.46, 0.01, 9, 2).to_dict().keys() == design.to_dict().keys() - {
        "cases",
        "cases_covered",
        "detectable_rise_independent",
    }


def test_a_benchmarks_budget_that_cannot_run_every_case_once_is_refused() -> None:
    design = case_budget_design(1.0, 0.01, 120, 1, 1)
    assert (design.replicates, design.fits, design.cases_covered) == (0, False, 100)
    error = case_refusal(design, "question")
    assert (
        error.message == "with $1.00 you can run 100 of the 120 cases once, not every case; nothing was run"
    )
    assert list(error.suggestions) == [
        "--budget 1.20 runs each of the 120 cases once",
        "use at most 100 cases in axes.question",
    ]
    two_groups = case_budget_design(1.0, 0.01, 120, 2, 1)
    assert two_groups.cases_covered == 50  # a case runs once in each group
    assert list(case_refusal(case_budget_design(0.001, 0.01, 120, 1, 1), "q").suggestions) == [
        "--budget 1.20 runs each of the 120 cases once"
    ]
