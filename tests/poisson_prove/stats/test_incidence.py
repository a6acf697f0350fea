"""Aalen-Johansen and Wilson against statsmodels, and the estimator's properties (Hypothesis)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.duration.survfunc import CumIncidenceRight, SurvfuncRight
from statsmodels.stats.proportion import proportion_confint

from poisson_prove.stats.incidence import (
    aalen_johansen,
    aalen_johansen_grouped,
    effective_n,
    starred_wilson,
    wilson,
    wilson_from_rate,
)


def _statsmodels_at(time: np.ndarray, cause: np.ndarray, horizon: float, causes: int):
    """CumIncidenceRight's incidences and standard errors at the horizon (inclusive).

    Episodes beyond the horizon are censored there first, as the contract says; the reference
    then reads its step functions at the last distinct time <= h.
    """
    beyond = time > horizon
    t = np.where(beyond, horizon, time)
    c = np.where(beyond, 0, cause)
    fitted = CumIncidenceRight(t, c)
    j = np.searchsorted(fitted.times, horizon, side="right") - 1
    incidence = np.array(
        [fitted.cinc[k][j] if j >= 0 and k < len(fitted.cinc) else 0.0 for k in range(causes)]
    )
    se = np.array([fitted.cinc_se[k][j] if j >= 0 and k < len(fitted.cinc) else 0.0 for k in range(causes)])
    return incidence, se


@pytest.mark.parametrize("seed", range(12))
def test_aalen_johansen_matches_statsmodels_on_tied_integer_times(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(30, 400))
    time = rng.integers(0, int(rng.integers(3, 25)), n).astype(float)  # heavily tied
    cause = rng.integers(0, 4, n)
    horizon = float(np.quantile(time, 0.6))
    ours = aalen_johansen(time, cause, horizon, causes=3)
    reference, reference_se = _statsmodels_at(time, cause, horizon, 3)
    # Episodes beyond h keep someone at risk at every time, so the reference SE is finite.
    assert np.isfinite(reference_se).all()
    np.testing.assert_allclose(ours.incidence, reference, rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.sqrt(ours.variance), reference_se, rtol=0, atol=1e-9)


@pytest.mark.parametrize("seed", range(6))
def test_aalen_johansen_matches_statsmodels_on_continuous_times(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    n = 250
    time = np.round(rng.exponential(5.0, n), 1)
    cause = rng.choice([0, 1, 2], n, p=[0.3, 0.4, 0.3])
    horizon = 6.0
    ours = aalen_johansen(time, cause, horizon)
    reference, reference_se = _statsmodels_at(time, cause, horizon, 2)
    np.testing.assert_allclose(ours.incidence, reference, atol=1e-12)
    np.testing.assert_allclose(np.sqrt(ours.variance), reference_se, atol=1e-9)
    assert ours.censored == (ours.censored_before > 0) and ours.censored_before > 0


def test_without_censoring_before_h_it_is_k_over_n_with_binomial_variance() -> None:
    rng = np.random.default_rng(7)
    time = rng.integers(1, 8, 500).astype(float)
    cause = rng.integers(1, 4, 500)
    cause[time == 7] = 0  # censored at the horizon itself: still at risk there, not starred
    result = aalen_johansen(time, cause, 7.0, causes=3)
    k = np.array([np.sum(cause == c) for c in (1, 2, 3)])
    np.testing.assert_allclose(result.incidence, k / 500, atol=1e-14)
    np.testing.assert_allclose(result.variance, (k / 500) * (1 - k / 500) / 500, rtol=1e-10)
    np.testing.assert_allclose(effective_n(result.incidence, result.variance), 500, rtol=1e-9)
    assert result.censored_before == 0 and not result.censored
    assert result.counts.tolist() == k.tolist()


def test_everyone_failing_at_the_last_time_keeps_a_finite_variance() -> None:
    time = np.array([1.0, 1.0, 2.0, 2.0, 2.0])
    cause = np.array([1, 0, 1, 2, 2])
    result = aalen_johansen(time, cause, 2.0)
    assert np.isfinite(result.variance).all() and result.survival == 0.0
    np.testing.assert_allclose(result.incidence.sum(), 1.0)


def test_episodes_beyond_the_horizon_are_censored_there() -> None:
    time = np.array([1.0, 2.0, 3.0, 9.0, 10.0])
    cause = np.array([1, 2, 1, 1, 2])
    at_3 = aalen_johansen(time, cause, 3.0)
    np.testing.assert_allclose(at_3.incidence, [2 / 5, 1 / 5])
    assert at_3.censored_before == 0 and at_3.counts.tolist() == [2, 1]


def test_grouped_equals_one_group_at_a_time_for_both_code_paths() -> None:
    rng = np.random.default_rng(11)
    n = 20_000
    time = rng.integers(0, 40, n).astype(float)
    cause = rng.integers(0, 4, n)
    group = rng.integers(0, 9, n)
    for times, horizon in ((time, 30.0), (time + 0.25, 30.25), (time, 29.5)):
        grouped = aalen_johansen_grouped(times, cause, group, horizon, causes=3)
        named = aalen_johansen_grouped(times, cause, np.array([f"c{g}" for g in group]), horizon, causes=3)
        assert sorted(grouped) == list(range(9))
        for g in range(9):
            alone = aalen_johansen(times[group == g], cause[group == g], horizon, causes=3)
            for other in (grouped[g], named[f"c{g}"]):
                np.testing.assert_allclose(other.incidence, alone.incidence, atol=1e-13)
                np.testing.assert_allclose(other.variance, alone.variance, rtol=1e-10, atol=1e-18)
                assert other.censored_before == alone.censored_before and other.n == alone.n


@st.composite
def _episodes(draw):
    n = draw(st.integers(1, 60))
    time = np.array(draw(st.lists(st.integers(0, 12), min_size=n, max_size=n)), dtype=float)
    cause = np.array(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)))
    horizon = float(draw(st.integers(0, 13)))
    return time, cause, horizon


@settings(max_examples=150, deadline=None)
@given(_episodes())
def test_incidences_sum_to_one_minus_all_cause_kaplan_meier(data) -> None:
    time, cause, horizon = data
    result = aalen_johansen(time, cause, horizon, causes=3)
    assert ((result.incidence >= -1e-15) & (result.incidence <= 1 + 1e-15)).all()
    # Independent all-cause Kaplan-Meier (statsmodels) at h.
    beyond = time > horizon
    status = np.where(beyond, 0, cause > 0).astype(float)
    if status.sum() == 0:
        survival = 1.0
    else:
        km = SurvfuncRight(np.where(beyond, horizon, time), status)
        j = np.searchsorted(km.surv_times, horizon, side="right") - 1
        survival = 1.0 if j < 0 else km.surv_prob[j]
    assert result.incidence.sum() == pytest.approx(1.0 - survival, abs=1e-12)
    assert result.survival == pytest.approx(survival, abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(_episodes())
def test_without_censoring_equals_k_over_n_and_is_monotone_in_h(data) -> None:
    time, cause, _ = data
    uncensored = np.where(cause == 0, 1, cause)
    top = float(time.max())
    result = aalen_johansen(time, uncensored, top, causes=3)
    k = np.array([np.sum(uncensored == c) for c in (1, 2, 3)])
    np.testing.assert_allclose(result.incidence, k / time.size, atol=1e-12)
    previous = np.zeros(3)
    for horizon in range(0, 14):
        now = aalen_johansen(time, cause, float(horizon), causes=3).incidence
        assert (now >= previous - 1e-12).all()
        previous = now


@pytest.mark.parametrize("seed", range(5))
def test_wilson_matches_statsmodels(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = rng.integers(1, 3000, 200)
    k = rng.integers(0, n + 1)
    k[:5] = 0
    k[5:10] = n[5:10]
    low, high = wilson(k, n)
    ref_low, ref_high = proportion_confint(k, n, alpha=0.05, method="wilson")
    np.testing.assert_allclose(low, np.clip(ref_low, 0, 1), atol=1e-12)
    np.testing.assert_allclose(high, np.clip(ref_high, 0, 1), atol=1e-12)


def test_wilson_of_nothing_is_the_whole_unit_interval() -> None:
    low, high = wilson(0, 0)
    assert (float(low), float(high)) == (0.0, 1.0)


def test_starred_interval_uses_the_effective_n() -> None:
    rng = np.random.default_rng(5)
    time = rng.integers(0, 10, 800).astype(float)
    cause = rng.choice([0, 1, 2], 800, p=[0.4, 0.3, 0.3])
    result = aalen_johansen(time, cause, 8.0)
    low, high, n_eff = starred_wilson(result.incidence, result.variance, result.n)
    assert (n_eff < result.n).all()  # censoring loses information
    ref_low, ref_high = proportion_confint(result.incidence * n_eff, n_eff, method="wilson")
    np.testing.assert_allclose(low, ref_low, atol=1e-12)
    np.testing.assert_allclose(high, ref_high, atol=1e-12)
    # No event of a cause: zero variance, the interval falls back to the group's n.
    low0, high0, n0 = starred_wilson(np.array([0.0]), np.array([0.0]), 50)
    assert n0[0] == 50 and (low0[0], high0[0]) == pytest.approx(
        tuple(x[0] for x in wilson_from_rate([0.0], [50]))
    )


def test_bad_input_raises_value_error() -> None:
    with pytest.raises(ValueError):
        aalen_johansen([1.0, 2.0], [1], 2.0)
    with pytest.raises(ValueError):
        aalen_johansen([1.0, float("nan")], [1, 0], 2.0)
    with pytest.raises(ValueError):
        aalen_johansen([1.0, 2.0], [1, -1], 2.0)


def test_grouped_accepts_an_infinite_horizon() -> None:
    time = np.array([1.0, 2.0, 3.0, 4.0])
    cause = np.array([1, 0, 2, 0])
    group = np.array([0, 0, 1, 1])
    grouped = aalen_johansen_grouped(time, cause, group, float("inf"))
    alone = aalen_johansen(time[2:], cause[2:], float("inf"))
    np.testing.assert_allclose(grouped[1].incidence, alone.incidence)
    assert grouped[1].censored_before == alone.censored_before == 1


def test_results_are_immutable_arrays_included() -> None:
    result = aalen_johansen(np.array([1.0, 2.0]), np.array([1, 0]), 2.0)
    with pytest.raises(ValueError):
        result.incidence[0] = 0.5
    with pytest.raises(AttributeError):
        result.n = 3  # type: ignore[misc]


def test_wilson_is_exactly_0_and_1_at_the_edges_never_rounding_past_them() -> None:
    low, high = wilson_from_rate(np.array([0.0, 1.0, 0.0, 1.0]), np.array([7.0, 7.0, 1e6, 3.3]))
    assert low[0] == 0.0 and low[2] == 0.0  # not 1.7e-18
    assert high[1] == 1.0 and high[3] == 1.0
    assert 0.0 < low[1] < 1.0 and 0.0 < high[0] < 1.0
