"""The benchmark statistics of section 7 against independent computations: the sign-flip test
against brute force over every sign pattern and against McNemar when each case ran once; the
jackknife against leaving each case out by hand; the within-case correlation against the ANOVA
sums of squares written out."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from poisson_prove.stats.clustered import (
    effective_pairs,
    pooled_incidence,
    sign_flip,
    within_case_correlation,
)
from poisson_prove.stats.incidence import aalen_johansen, wilson_from_rate
from poisson_prove.stats.tests import mcnemar_many


def _brute_force(d: np.ndarray) -> tuple[float, float]:
    """Two-sided mid-p and exact p by enumerating all 2^K sign patterns, with integer counts."""
    t = abs(int(d.sum()))
    greater = equal = 0
    for signs in itertools.product((1, -1), repeat=d.size):
        # T* is symmetric: P(T* >= t) counts one tail only
        total = int(np.dot(signs, d))
        greater += total >= t
        equal += total == t
    patterns = 2**d.size
    return min(1.0, 2 * (greater - equal / 2) / patterns), min(1.0, 2 * greater / patterns)


@pytest.mark.parametrize("seed", range(40))
def test_sign_flip_is_the_exact_randomization_distribution(seed: int) -> None:
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 13))
    m = int(rng.integers(1, 6))
    b = rng.integers(0, m + 1, size=k)
    c = np.array([int(rng.integers(0, m - x + 1)) for x in b])
    got = sign_flip(b, c)
    mid, exact = _brute_force(c - b)
    assert got.p_mid == pytest.approx(mid, abs=1e-12)
    assert got.p_exact == pytest.approx(exact, abs=1e-12)
    assert (got.b, got.c, got.t) == (int(b.sum()), int(c.sum()), int((c - b).sum()))
    assert got.cases_up == int(np.sum(c > b)) and got.cases_down == int(np.sum(c < b))


@pytest.mark.parametrize(("b", "c"), [(0, 0), (3, 0), (0, 7), (5, 5), (12, 30), (140, 96), (1, 2)])
def test_cases_run_once_give_mcnemar_over_the_cases(b: int, c: int) -> None:
    before = np.array([1] * b + [0] * c + [0] * 9)
    after = np.array([0] * b + [1] * c + [0] * 9)
    got = sign_flip(before, after)
    mid, exact = mcnemar_many(np.array([b]), np.array([c]))
    assert abs(got.p_mid - float(mid[0])) <= 1e-12
    assert abs(got.p_exact - float(exact[0])) <= 1e-12


def test_three_of_ten_cases_fixed_five_times_each_is_weak_evidence() -> None:
    # The example: a model answering every epoch of a sample alike; 3 samples of 10
    # fixed, x 5 epochs. Pairs counted as independent give McNemar p 3e-5; the cases give 0.25.
    b = np.array([5, 5, 5, 0, 0, 0, 0, 0, 0, 0])
    c = np.zeros(10, dtype=int)
    got = sign_flip(b, c)
    assert got.p_exact == pytest.approx(0.25)
    assert got.p_mid == pytest.approx(0.125)
    assert float(mcnemar_many(np.array([15]), np.array([0]))[1][0]) < 1e-4


def test_a_large_benchmark_is_computed_exactly_and_symmetric() -> None:
    rng = np.random.default_rng(7)
    b = rng.integers(0, 3, size=800)
    c = rng.integers(0, 3, size=800)
    forward, mirrored = sign_flip(b, c), sign_flip(c, b)
    assert forward.p_mid == pytest.approx(mirrored.p_mid, rel=1e-12)
    assert 0.0 < forward.p_mid <= 1.0 and forward.p_mid <= forward.p_exact


def _jackknife_by_hand(time, cause, case, horizon, causes):
    labels = np.unique(case)
    dropped = np.array(
        [aalen_johansen(time[case != k], cause[case != k], horizon, causes).incidence for k in labels]
    )
    k = labels.size
    return (k - 1) / k * ((dropped - dropped.mean(axis=0)) ** 2).sum(axis=0)


@pytest.mark.parametrize("censored", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_the_jackknife_leaves_out_each_case(seed: int, censored: bool) -> None:
    rng = np.random.default_rng(seed)
    cases, repeats = int(rng.integers(3, 25)), int(rng.integers(1, 5))
    case = np.repeat(np.arange(cases), repeats)
    time = rng.integers(1, 8, size=case.size).astype(float)
    cause = rng.integers(0 if censored else 1, 3, size=case.size)
    horizon = 6.0 if censored else 8.0
    got = pooled_incidence(time, cause, case, horizon, 2)
    want = aalen_johansen(time, cause, horizon, 2)
    assert np.allclose(got.incidence, want.incidence, atol=1e-12)
    assert np.allclose(got.variance, _jackknife_by_hand(time, cause, case, horizon, 2), atol=1e-12)
    assert got.cases == cases and got.episodes == case.size
    assert (got.n_eff <= case.size + 1e-9).all()
    inside = (got.incidence > 0) & (got.incidence < 1) & (got.variance > 0)
    n_eff = got.incidence * (1 - got.incidence) / np.where(got.variance > 0, got.variance, 1)
    expect_n = np.where(inside, np.minimum(n_eff, case.size), cases)
    assert np.allclose(got.n_eff, expect_n)
    low, high = wilson_from_rate(got.incidence, expect_n)
    assert np.allclose(got.low, low) and np.allclose(got.high, high)
    assert ((got.low >= 0) & (got.high <= 1)).all()


def test_a_rate_of_zero_or_one_has_the_interval_of_its_cases() -> None:
    case = np.repeat(np.arange(20), 3)
    time = np.ones(case.size)
    cause = np.ones(case.size, dtype=int)  # every episode the event: F = 1, no other cause
    got = pooled_incidence(time, cause, case, 1.0, 2)
    assert got.incidence.tolist() == [1.0, 0.0]
    assert got.n_eff.tolist() == [20.0, 20.0]
    assert got.low[1] == 0.0 and got.high[0] == 1.0 and got.low[0] < 1.0


def _icc_by_hand(y: np.ndarray, case: np.ndarray) -> float:
    labels = np.unique(case)
    groups = [y[case == k] for k in labels]
    k, n = len(groups), y.size
    grand = y.mean()
    ssb = sum(g.size * (g.mean() - grand) ** 2 for g in groups)
    ssw = sum(((g - g.mean()) ** 2).sum() for g in groups)
    msb, msw = ssb / (k - 1), ssw / (n - k)
    m0 = (n - sum(g.size**2 for g in groups) / n) / (k - 1)
    return (msb - msw) / (msb + (m0 - 1) * msw)


@pytest.mark.parametrize("seed", range(8))
def test_the_within_case_correlation_is_the_anova_estimate(seed: int) -> None:
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 6, size=30)
    case = np.repeat(np.arange(30), sizes)
    p = rng.beta(0.5, 0.5, size=30)[case]
    y = (rng.random(case.size) < p).astype(float)
    assert within_case_correlation(y, case) == pytest.approx(min(1.0, max(0.0, _icc_by_hand(y, case))))


def test_the_correlation_at_its_extremes() -> None:
    case = np.repeat(np.arange(10), 4)
    alike = np.repeat(np.array([1, 0] * 5), 4)
    assert within_case_correlation(alike, case) == 1.0
    assert within_case_correlation(np.zeros(40), case) == 1.0  # nothing to estimate: worst case
    assert within_case_correlation(np.array([1, 0] * 5), np.arange(10)) == 0.0  # each case once
    assert effective_pairs([4] * 10, 1.0) == 10.0
    assert effective_pairs([4] * 10, 0.0) == 40.0
