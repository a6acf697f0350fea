"""The replicate gate's statistics: false-fail rate under noise, power, and an independent check.

The many-seeds part simulates grade outcomes (fast); the real pipeline runs are in
tests/e2e/test_snapshot_replicates.py. The simulation reproduces verify's design exactly:
M pinned captures, N fresh ones, fresh r graded against pinned r mod M, pinned j against
pinned j+1 mod M (leave_one_out_pairs / reference_for are the functions verify uses).
"""

from __future__ import annotations

import random

import pytest
from scipy.stats import fisher_exact
from statsmodels.stats.multitest import multipletests

from proveai.snapshot.replicates import (
    DEFAULT_ALPHA,
    leave_one_out_pairs,
    reference_for,
    replicate_gate,
)
from proveai.snapshot.rerun import replicate_seed

# Each agent's output is one of a few answers; two outputs grade "regressed" when they
# differ (the noise a judge sees between two samples of a temperature>0 model).
NOISY_AGENTS = {
    "classify": [0.9, 0.1],
    "draft": [0.5, 0.3, 0.2],
    "qa_check": [0.7, 0.2, 0.1],
}


def grade(a: int, b: int) -> str:
    return "unchanged" if a == b else "regressed"


def simulate(rng: random.Random, pinned_probs, fresh_probs, n: int, m: int):
    fresh_statuses, pinned_statuses = {}, {}
    for agent in pinned_probs:
        pinned = rng.choices(range(len(pinned_probs[agent])), pinned_probs[agent], k=m)
        fresh = rng.choices(range(len(fresh_probs[agent])), fresh_probs[agent], k=n)
        fresh_statuses[agent] = [grade(pinned[reference_for(r, m)], fresh[r]) for r in range(n)]
        pinned_statuses[agent] = [grade(pinned[k], pinned[j]) for j, k in leave_one_out_pairs(m)]
    return replicate_gate(fresh_statuses, pinned_statuses, alpha=DEFAULT_ALPHA)


@pytest.mark.parametrize(("n", "m"), [(8, 8), (12, 6)])
def test_unchanged_code_fails_the_gate_at_most_alpha_of_the_time(n: int, m: int) -> None:
    runs = 1000
    false_fails = 0
    for seed in range(runs):
        rows = simulate(random.Random(seed), NOISY_AGENTS, NOISY_AGENTS, n, m)
        false_fails += any(row.fails for row in rows)
    rate = false_fails / runs
    # alpha plus three Monte Carlo standard errors
    assert rate <= DEFAULT_ALPHA + 3 * (DEFAULT_ALPHA * (1 - DEFAULT_ALPHA) / runs) ** 0.5, rate


# A model whose samples mostly agree (a judge calls ~15-25% of sample pairs worse).
CALM_AGENTS = {"classify": [0.9, 0.1], "draft": [0.88, 0.08, 0.04], "qa_check": [0.9, 0.1]}


def test_a_real_regression_is_caught() -> None:
    regressed = dict(CALM_AGENTS)
    regressed["draft"] = [0.0, 0.0, 0.0, 1.0]  # a new, always-different answer
    caught = 0
    other_fails = 0
    for seed in range(300):
        rows = {row.agent: row for row in simulate(random.Random(seed), CALM_AGENTS, regressed, 10, 10)}
        caught += rows["draft"].fails
        other_fails += rows["classify"].fails or rows["qa_check"].fails
    assert caught / 300 >= 0.9
    assert other_fails / 300 <= DEFAULT_ALPHA


def test_matches_scipy_fisher_and_statsmodels_bh() -> None:
    fresh = {
        "a": ["regressed"] * 6 + ["unchanged"] * 2,
        "b": ["unchanged"] * 8,
        "c": ["missing"] * 3 + ["drifted"] * 5,
    }
    pinned = {
        "a": ["regressed"] + ["unchanged"] * 7,
        "b": ["regressed"] * 2 + ["unchanged"] * 6,
        "c": ["unchanged"] * 8,
    }
    rows = {row.agent: row for row in replicate_gate(fresh, pinned, alpha=0.05)}
    expected_p = {
        "a": fisher_exact([[6, 2], [1, 7]], alternative="greater").pvalue,
        "b": fisher_exact([[0, 8], [2, 6]], alternative="greater").pvalue,
        "c": fisher_exact([[3, 5], [0, 8]], alternative="greater").pvalue,
    }
    adjusted = multipletests([expected_p[k] for k in "abc"], method="fdr_bh")[1]
    for agent, adj in zip("abc", adjusted, strict=True):
        assert rows[agent].p_value == pytest.approx(expected_p[agent])
        assert rows[agent].p_adjusted == pytest.approx(adj)
        assert rows[agent].fails == (adj <= 0.05)
    assert rows["c"].fresh_counts == {"drifted": 5, "missing": 3}
    assert rows["a"].fresh_failing == 6 and rows["a"].n_pinned == 8


def test_design_helpers_and_seeds_are_deterministic() -> None:
    assert leave_one_out_pairs(1) == []
    assert leave_one_out_pairs(3) == [(0, 1), (1, 2), (2, 0)]
    assert [reference_for(r, 3) for r in range(5)] == [0, 1, 2, 0, 1]
    seeds = [replicate_seed(7, "verify", r) for r in range(5)]
    assert seeds == [replicate_seed(7, "verify", r) for r in range(5)]
    assert len(set(seeds)) == 5 and all(0 <= s < 2**31 for s in seeds)
    # pinning and verifying never share seeds
    assert not set(seeds) & {replicate_seed(7, "pin", r) for r in range(5)}


def test_smallest_detectable_rise_matches_scipy_fisher() -> None:
    from scipy.stats import fisher_exact

    from proveai.snapshot.replicates import smallest_detectable_rise

    for n, m, alpha in ((3, 3, 0.05), (6, 6, 0.05 / 3), (10, 10, 0.05), (30, 20, 0.01)):
        expected = next(
            (k / n for k in range(1, n + 1)
             if fisher_exact([[k, n - k], [0, m]], alternative="greater").pvalue <= alpha),
            None,
        )
        assert smallest_detectable_rise(n, m, alpha) == expected, (n, m, alpha)
    assert smallest_detectable_rise(3, 3, 0.05) is None  # 3 vs 3 cannot reject at all
