"""McNemar, Fisher, Benjamini-Hochberg and log-rank against statsmodels, SciPy, lifelines and
brute force."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import fisher_exact
from statsmodels.duration.survfunc import survdiff
from statsmodels.stats.contingency_tables import mcnemar as statsmodels_mcnemar
from statsmodels.stats.multitest import multipletests

from poisson_prove.stats.tests import benjamini_hochberg, fisher_two_sided, logrank, mcnemar, mcnemar_many


def _brute_mid_p(b: int, c: int) -> float:
    """Mid-p from the definition, with exact integer binomial coefficients."""
    total = b + c
    if total == 0:
        return 1.0
    low = min(b, c)
    below = sum(math.comb(total, x) for x in range(low)) / 2**total
    at = math.comb(total, low) / 2**total
    return min(1.0, 2 * (below + at / 2))


@pytest.mark.parametrize(
    ("b", "c"), [(0, 0), (0, 1), (1, 0), (3, 9), (9, 3), (5, 5), (0, 12), (40, 61), (7, 0)]
)
def test_mcnemar_mid_p_matches_brute_force_and_exact_matches_statsmodels(b: int, c: int) -> None:
    result = mcnemar(b, c)
    assert (result.b, result.c) == (b, c)
    assert result.p_mid == pytest.approx(_brute_mid_p(b, c), abs=1e-12)
    reference = statsmodels_mcnemar([[10, b], [c, 10]], exact=True).pvalue if b + c else 1.0
    assert result.p_exact == pytest.approx(min(1.0, reference), abs=1e-12)
    assert result.p_mid <= result.p_exact


def test_mcnemar_many_on_random_counts() -> None:
    rng = np.random.default_rng(2)
    b = rng.integers(0, 60, 300)
    c = rng.integers(0, 60, 300)
    p_mid, p_exact = mcnemar_many(b, c)
    for i in range(0, 300, 7):
        assert p_mid[i] == pytest.approx(_brute_mid_p(int(b[i]), int(c[i])), abs=1e-12)
        ref = statsmodels_mcnemar([[0, b[i]], [c[i], 0]], exact=True).pvalue if b[i] + c[i] else 1.0
        assert p_exact[i] == pytest.approx(ref, abs=1e-12)


def test_fisher_matches_scipy_on_random_tables() -> None:
    rng = np.random.default_rng(4)
    for _ in range(100):
        n_a, n_b = (int(x) for x in rng.integers(1, 300, 2))
        e_a, e_b = int(rng.integers(0, n_a + 1)), int(rng.integers(0, n_b + 1))
        expected = fisher_exact([[e_a, n_a - e_a], [e_b, n_b - e_b]]).pvalue
        assert fisher_two_sided(e_a, n_a, e_b, n_b) == pytest.approx(expected, abs=1e-12)
    with pytest.raises(ValueError):
        fisher_two_sided(5, 3, 1, 3)


@pytest.mark.parametrize("seed", range(8))
def test_benjamini_hochberg_matches_statsmodels(seed: int) -> None:
    rng = np.random.default_rng(seed)
    p = rng.random(int(rng.integers(1, 60))) ** 3
    if seed % 2:
        p = np.round(p, 2)  # ties
    ours = benjamini_hochberg(p)
    np.testing.assert_allclose(ours, multipletests(p, method="fdr_bh")[1], atol=1e-12)
    order = np.argsort(p)
    assert (np.diff(ours[order]) >= -1e-15).all() and (ours <= 1).all() and (ours >= p - 1e-15).all()


def test_benjamini_hochberg_leaves_nan_out_of_m() -> None:
    p = np.array([0.01, np.nan, 0.04, 0.03])
    ours = benjamini_hochberg(p)
    assert np.isnan(ours[1])
    np.testing.assert_allclose(ours[[0, 2, 3]], multipletests(p[[0, 2, 3]], method="fdr_bh")[1])
    assert np.isnan(benjamini_hochberg(np.array([np.nan]))).all()


def _cause_specific(time: np.ndarray, cause: np.ndarray, horizon: float, of_interest: int):
    """Reference inputs: other causes censored at their time, times beyond h censored at h."""
    event = (cause == of_interest) & (time <= horizon)
    return np.minimum(time, horizon), event


@pytest.mark.parametrize("seed", range(10))
def test_logrank_matches_statsmodels_survdiff_with_ties(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(40, 400))
    time = rng.integers(1, int(rng.integers(3, 15)), n).astype(float)
    cause = rng.integers(0, 4, n)
    group = rng.integers(0, 2, n)
    horizon = float(np.quantile(time, 0.7))
    result = logrank(time, cause == 2, group, horizon)
    ref_time, ref_event = _cause_specific(time, cause, horizon, 2)
    statistic, p_value = survdiff(ref_time, ref_event.astype(float), group)
    assert result.statistic == pytest.approx(statistic, rel=1e-9, abs=1e-12)
    assert result.p == pytest.approx(p_value, rel=1e-9, abs=1e-12)
    assert sum(result.observed) == pytest.approx(sum(result.expected))
    assert result.observed[1] == np.sum(ref_event & (group == 1))


def test_logrank_matches_lifelines_on_tied_data() -> None:
    from lifelines.statistics import logrank_test

    rng = np.random.default_rng(21)
    time = rng.integers(1, 9, 300).astype(float)
    cause = rng.integers(0, 3, 300)
    group = rng.integers(0, 2, 300)
    horizon = 6.0
    result = logrank(time, cause == 1, group, horizon)
    ref_time, ref_event = _cause_specific(time, cause, horizon, 1)
    reference = logrank_test(
        ref_time[group == 0], ref_time[group == 1], ref_event[group == 0], ref_event[group == 1]
    )
    assert result.statistic == pytest.approx(reference.test_statistic, rel=1e-9)
    assert result.p == pytest.approx(reference.p_value, rel=1e-9)


def test_logrank_without_events_is_p_one() -> None:
    result = logrank(np.array([1.0, 2.0, 3.0]), np.zeros(3, dtype=bool), np.array([0, 1, 1]), 5.0)
    assert (result.statistic, result.p, result.variance) == (0.0, 1.0, 0.0)
    with pytest.raises(ValueError):
        logrank(np.array([1.0, 2.0, 3.0]), np.ones(3, dtype=bool), np.array([0, 1, 2]), 5.0)


def test_fisher_one_sided_matches_scipy() -> None:
    from poisson_prove.stats.tests import fisher_one_sided

    for a, n, b, m in [(9, 20, 2, 20), (0, 5, 5, 5), (30, 100, 31, 90)]:
        for side in ("greater", "less"):
            expected = fisher_exact([[a, n - a], [b, m - b]], alternative=side).pvalue
            assert fisher_one_sided(a, n, b, m, alternative=side) == pytest.approx(expected, abs=1e-12)
    with pytest.raises(ValueError):
        fisher_one_sided(1, 2, 1, 2, alternative="two-sided")
