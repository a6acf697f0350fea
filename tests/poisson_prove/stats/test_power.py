"""Design power against brute force (SciPy's Fisher on every table) and the docs' numbers."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.stats import binom, norm

from poisson_prove.stats import power as P
from tests.poisson_prove.stats.rejection_kit import DOCS_ALPHA, full_row_cutoffs, scipy_rejected


@pytest.mark.parametrize(
    ("n", "p0", "d", "alpha"), [(12, 0.3, 0.4, 0.05), (15, 0.0, 0.5, 0.01), (10, 0.55, 0.45, 0.05)]
)
def test_power_equals_brute_force_enumeration(n: int, p0: float, d: float, alpha: float) -> None:
    brute = 0.0
    for x1 in range(n + 1):
        for x2 in range(x1 + 1, n + 1):
            if scipy_rejected(x1, x2, n, alpha):
                brute += binom.pmf(x1, n, p0) * binom.pmf(x2, n, p0 + d)
    assert P.power_of_rise(p0, d, n, alpha) == pytest.approx(brute, rel=1e-10, abs=1e-14)


def test_power_is_nondecreasing_in_the_change() -> None:
    powers = [P.power_of_rise(0.2, d, 60, 0.01) for d in np.linspace(0.0, 0.8, 81)]
    assert all(b >= a - 1e-15 for a, b in itertools.pairwise(powers))


@pytest.mark.parametrize(("p0", "n"), [(0.0, 50), (0.3, 120), (0.75, 80)])
def test_mde_is_the_first_grid_step_reaching_80_percent(p0: float, n: int) -> None:
    found = P.mde(p0, n, DOCS_ALPHA)
    assert found is not None and found.direction == "rise" and not found.approximate
    assert P.power_of_rise(p0, found.mde, n, DOCS_ALPHA) >= 0.8
    assert P.power_of_rise(p0, round(found.mde - 0.0001, 4), n, DOCS_ALPHA) < 0.8
    assert found.mde - 0.0001 < found.exact <= found.mde
    assert P.power_of_rise(p0, found.exact, n, DOCS_ALPHA) == pytest.approx(0.8, abs=1e-9)
    assert found.mde == math.ceil(round(found.exact * 1e4, 6)) / 1e4


def test_a_fall_equals_a_rise_at_the_mirror_base() -> None:
    fall = P.mde(0.7, 100, 0.01, direction="fall")
    rise = P.mde(0.3, 100, 0.01, direction="rise")
    assert fall is not None and rise is not None
    assert (fall.mde, fall.exact, fall.direction, fall.base_rate) == (rise.mde, rise.exact, "fall", 0.7)


def test_mde_is_none_when_even_the_largest_change_falls_short() -> None:
    assert P.mde(0.9, 20, DOCS_ALPHA) is None
    assert P.mde(1.0, 500, 0.05) is None
    assert P.mde(0.0, 500, 0.05, direction="fall") is None


def test_condition_mde_gives_rise_and_fall_at_the_observed_rate() -> None:
    rise, fall = P.condition_mde(0.25, 194, DOCS_ALPHA)
    full_rise = P.mde(0.25, 194, DOCS_ALPHA)
    full_fall = P.mde(0.25, 194, DOCS_ALPHA, direction="fall")
    assert rise is not None and full_rise is not None and fall is not None and full_fall is not None
    # Only the grid value is computed for a comparison: the same MDE, the grid as its root.
    assert (rise.mde, fall.mde) == (full_rise.mde, full_fall.mde)
    assert (rise.exact, fall.exact) == (rise.mde, fall.mde)
    assert full_fall.mde == P.mde(0.75, 194, DOCS_ALPHA).mde
    assert full_rise.exact <= rise.exact < full_rise.exact + 1e-4


def test_docs_vector_n194_passes_at_base_04() -> None:
    design = P.design_mde(194, 9, 2)
    assert design.passes and design.mde == 0.1991 and f"{design.mde:.3f}" == "0.199"
    assert (design.base_rate, design.direction, design.tests) == (0.4, "rise", 18)
    assert design.alpha == pytest.approx(DOCS_ALPHA) and not design.approximate


def test_docs_vector_n20_fails_reported_at_base_0() -> None:
    design = P.design_mde(20, 9, 2)
    assert not design.passes
    assert design.base_rate == 0.0 and f"{design.mde:.3f}" == "0.519"
    assert P.suggested_max_mde(design) == 0.625
    # Accepting the suggested change makes the same design pass.
    assert P.design_mde(20, 9, 2, max_mde=0.625).passes


def test_docs_vector_replicates_needed_is_193_and_stays_passing() -> None:
    assert P.replicates_needed(9, 2) == 193
    assert not P.design_mde(192, 9, 2).passes
    assert all(P.design_mde(n, 9, 2).passes for n in range(193, 193 + 40, 3))


def test_normal_regime_beyond_2000_is_marked_and_inverts_fleiss_tytun_ury() -> None:
    n, p0, alpha = 2600, 0.3, DOCS_ALPHA
    found = P.mde(p0, n, alpha)
    assert found is not None and found.approximate
    # Forward Fleiss-Tytun-Ury sample size at the root must give back n.
    d = found.exact
    p1, p_bar = p0 + d, p0 + d / 2
    plain = (
        norm.isf(alpha / 2) * math.sqrt(2 * p_bar * (1 - p_bar))
        + norm.isf(0.2) * math.sqrt(p0 * (1 - p0) + p1 * (1 - p1))
    ) ** 2 / d**2
    corrected = plain / 4 * (1 + math.sqrt(1 + 4 / (plain * d))) ** 2
    assert corrected == pytest.approx(n, rel=1e-6)
    # And the approximation is close to the exact planner at the boundary.
    exact_2000 = P.mde(p0, 2000, alpha)
    approx_2000 = P._normal_power(p0, np.array([exact_2000.exact]), 2000, alpha)[0]
    assert approx_2000 == pytest.approx(0.8, abs=0.01)
    assert P.design_mde(2600, 9, 2).approximate


def test_bad_arguments_raise_value_error() -> None:
    with pytest.raises(ValueError):
        P.mde(0.2, 10, 0.05, direction="up")
    with pytest.raises(ValueError):
        P.power_of_rise(0.9, 0.2, 10, 0.05)
    with pytest.raises(ValueError):
        P.fisher_rejection_cutoffs(10, 0.0)


def test_user_numbers_out_of_range_are_prove_errors_with_the_usage_exit_code() -> None:
    from poisson_prove.errors import ProveError, ProveExit

    for kwargs in ({"max_mde": 0.0}, {"max_mde": 1.5}, {"q": 0.0}, {"q": 1.0}):
        with pytest.raises(ProveError) as caught:
            P.design_mde(20, 9, 2, **kwargs)
        assert caught.value.exit_code == ProveExit.USAGE
        with pytest.raises(ProveError):
            P.replicates_needed(9, 2, **kwargs)


def test_replicates_needed_reaches_into_the_approximate_regime() -> None:
    needed = P.replicates_needed(9, 2, max_mde=0.03)
    assert needed > P.EXACT_LIMIT
    assert P.design_mde(needed, 9, 2, max_mde=0.03).passes
    assert not P.design_mde(needed - 1, 9, 2, max_mde=0.03).passes


def test_tiny_designs_fail_without_an_mde() -> None:
    design = P.design_mde(1, 9, 2)
    assert not design.passes and design.mde is None and design.base_rate == 0.0
    assert P.suggested_max_mde(design) is None
    assert P.power_of_rise(0.2, 0.3, 0, 0.05) == 0.0


def test_replicates_needed_near_the_exact_limit_is_fast_and_the_first_of_a_passing_run() -> None:
    # --max-mde 0.07 lands just below 2000: every N of the scan uses exact cut-offs.
    needed = P.replicates_needed(9, 2, max_mde=0.07)
    alpha = 0.05 / 18
    assert not P._passes_fast(needed - 1, alpha, 0.07)
    assert all(P._passes_fast(n, alpha, 0.07) for n in range(needed, needed + 30))
    for n in (needed - 1, needed, needed + 29):
        assert np.array_equal(P.fisher_rejection_cutoffs(n, alpha), full_row_cutoffs(n, alpha)), n
    assert P.design_mde(needed, 9, 2, max_mde=0.07).passes
