"""The planner's SciPy-free numerics against SciPy over grids, and the plan importing no SciPy."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from scipy import special, stats
from scipy.optimize import brentq

from poisson_prove.stats import numerics as N


def test_normal_quantile_matches_scipy_ndtri_to_a_few_ulps() -> None:
    tails = np.r_[
        np.geomspace(1e-300, 1e-3, 400),
        np.linspace(1e-3, 1 - 1e-3, 999),
        0.05 / np.arange(1, 400),  # every alpha / 2 of a plan's Bonferroni-style split
        [0.5, 0.025, 0.05 / 18, 1e-9, 0.2, 0.8, 1 - 1e-12],
    ]
    ours = np.array([N.normal_isf(float(t)) for t in tails])
    theirs = -special.ndtri(tails)
    close = np.abs(ours - theirs) <= 4 * np.spacing(np.abs(theirs)) + 1e-300
    assert close.all(), (tails[~close], ours[~close], theirs[~close])
    assert N.normal_isf(0.0) == math.inf and N.normal_isf(1.0) == -math.inf
    with pytest.raises(ValueError):
        N.normal_isf(1.5)


def test_normal_cdf_matches_scipy_ndtr() -> None:
    z = np.r_[np.linspace(-37, 37, 3001), [0.0, -1e-300, 1e-8]]  # SciPy flushes below -37.5 to 0
    ours = np.array([N.normal_cdf(float(v)) for v in z])
    theirs = special.ndtr(z)
    # Rounding z / sqrt(2) alone moves the far tail by about z^2 ulps: both sides share that.
    tolerance = 4e-16 * (4.0 + z**2) * theirs
    assert (np.abs(ours - theirs) <= tolerance).all()


def test_log_factorials_and_binomial_coefficients_match_gammaln() -> None:
    for n in (0, 1, 15, 16, 63, 64, 65, 2000, 4000, 5000):
        k = np.arange(n + 1)
        assert np.allclose(N.log_factorials(n), special.gammaln(k + 1.0), rtol=1e-14, atol=1e-14)
        assert np.allclose(
            N.log_comb(n),
            special.gammaln(n + 1.0) - special.gammaln(k + 1.0) - special.gammaln(n - k + 1.0),
            rtol=1e-13,
            atol=1e-11,
        )


@pytest.mark.parametrize("n", [0, 1, 2, 10, 17, 60, 177, 500, 1999, 2000, 4000])
def test_binomial_probabilities_and_tails_match_scipy_stats(n: int) -> None:
    rates = np.r_[0.0, 1.0, 1e-9, 1e-4, np.linspace(0.01, 0.99, 25), 1 - 1e-9]
    pmf, tails = N.binom_pmf_all(n, rates), N.binom_tails(n, rates)
    for row, p in enumerate(rates):
        k = np.arange(n + 1)
        # The logs' rounding (log n! is ~3e4 at n = 4000, one ulp 4e-12) and n terms summed: about
        # what SciPy's own bdtrc reaches at these n (1.2e-11 relative at 4000).
        tolerance = 4 * np.spacing(math.lgamma(n + 1.0)) + 3e-15 * (n + 10)
        reference = stats.binom.pmf(k, n, p)
        # A term e^-x is as good as its log: x ulps more far out in the tails.
        with np.errstate(divide="ignore", invalid="ignore"):
            allowed = (tolerance + 1e-15 * np.abs(np.log(reference))) * reference
        assert (np.abs(pmf[row] - reference) <= np.nan_to_num(allowed) + 1e-300).all(), p
        expected = stats.binom.sf(np.arange(n + 2) - 1, n, p)  # P(X >= c) for c = 0..n + 1
        assert np.allclose(tails[row], expected, rtol=tolerance, atol=tolerance / 3), p
        assert tails[row, -1] == 0.0


def test_brent_root_agrees_with_scipy_brentq_within_the_tolerance() -> None:
    functions = [
        (lambda x: x**3 - 2 * x - 5, 2.0, 3.0),
        (lambda x: math.cos(x) - x, 0.0, 1.0),
        (lambda x: math.exp(x) - 1e4, 0.0, 20.0),
        (lambda x: math.tanh(50 * (x - 0.3)), 0.0, 1.0),  # flat away from the root: bisection steps
        (lambda x: x - 0.1234, 0.1234, 0.2),  # a root at an end
        (lambda x: float(stats.binom.sf(40, 200, x)) - 0.8, 0.05, 0.5),
    ]
    for f, a, b in functions:
        ours = N.brent_root(f, a, b, xtol=1e-12, rtol=1e-12)
        theirs = brentq(f, a, b, xtol=1e-12, rtol=1e-12)
        assert abs(ours - theirs) <= 4e-12 * max(1.0, abs(theirs)), (ours, theirs)
    with pytest.raises(ValueError):
        N.brent_root(lambda x: x * x + 1, -1.0, 1.0)


def test_planning_imports_no_scipy() -> None:
    """The plan (exact and normal regimes, the replicates suggestion, pooled cases) runs on
    NumPy alone: SciPy's import cost a sweep more than everything else it did."""
    code = (
        "import sys\n"
        "from poisson_prove.stats.power import design_mde, mde, replicates_needed, power_of_rise\n"
        "from poisson_prove.design.pooled import cases_needed\n"
        "design_mde(10, 10, 1); design_mde(194, 9, 2); design_mde(2600, 9, 2)\n"
        "replicates_needed(9, 2); mde(0.3, 50, 0.01, direction='fall'); power_of_rise(0.1, 0.2, 80, 0.05)\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('scipy', 'pandas'))\n"
        "print(loaded)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
