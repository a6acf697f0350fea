"""The few distribution functions the statistics need, from `scipy.special` alone.

`scipy.stats` costs 0.7-2 s to import, more than everything else a comparison does; these
are the same quantities from the special functions it is built on (checked against
`scipy.stats` in the tests): binomial pmf / cdf / sf, the two-sided Fisher exact p, the
chi-square (1 df) and normal tails.
"""

from __future__ import annotations

import numpy as np

# Tables whose probability is within this relative margin of the observed one count as
# "as likely" in the two-sided Fisher test (the margin SciPy and R use).
FISHER_TIE = 1e-7


def _log_binomial_coefficient(n, k) -> np.ndarray:
    from scipy.special import gammaln  # scipy: ~0.7 s, only when a test or the planner runs

    n = np.asarray(n, dtype=float)
    k = np.asarray(k, dtype=float)
    return gammaln(n + 1.0) - gammaln(k + 1.0) - gammaln(n - k + 1.0)


def binom_pmf(k, n, p) -> np.ndarray:
    """P(X = k) for X ~ Bin(n, p), vectorized; 0 outside 0..n."""
    from scipy.special import xlog1py, xlogy  # scipy: ~0.7 s, only when a test or the planner runs

    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    p = np.asarray(p, dtype=float)
    inside = (k >= 0) & (k <= n)
    safe_k = np.clip(k, 0.0, n)
    log_pmf = _log_binomial_coefficient(n, safe_k) + xlogy(safe_k, p) + xlog1py(n - safe_k, -p)
    return np.where(inside, np.exp(log_pmf), 0.0)


def binom_cdf(k, n, p) -> np.ndarray:
    """P(X <= k) for X ~ Bin(n, p), vectorized; 0 for k < 0, 1 for k >= n."""
    from scipy.special import bdtr  # scipy: ~0.7 s, only when a test or the planner runs

    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    # Integer n: SciPy deprecates a float one.
    inside = bdtr(np.clip(k, 0.0, n), n.astype(np.int64), p)
    return np.where(k < 0, 0.0, np.where(k >= n, 1.0, inside))


def binom_sf(k, n, p) -> np.ndarray:
    """P(X > k) for X ~ Bin(n, p), vectorized; 1 for k < 0, 0 for k >= n."""
    from scipy.special import bdtrc  # scipy: ~0.7 s, only when a test or the planner runs

    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    inside = bdtrc(np.clip(k, 0.0, n), n.astype(np.int64), p)
    return np.where(k < 0, 1.0, np.where(k >= n, 0.0, inside))


def fisher_two_sided_p(events_a: int, n_a: int, events_b: int, n_b: int) -> float:
    """Two-sided Fisher exact p of (events, non-events) in two arms: the probability, given
    the margins, of every table as likely as the observed one or less."""
    events = events_a + events_b
    total = n_a + n_b
    low, high = max(0, events - n_b), min(events, n_a)
    if high <= low:
        return 1.0
    x = np.arange(low, high + 1, dtype=float)
    log_pmf = (
        _log_binomial_coefficient(n_a, x)
        + _log_binomial_coefficient(n_b, events - x)
        - _log_binomial_coefficient(total, events)
    )
    pmf = np.exp(log_pmf)
    observed = pmf[events_a - low]
    return float(min(1.0, pmf[pmf <= observed * (1.0 + FISHER_TIE)].sum()))


def chi2_1_sf(statistic) -> np.ndarray:
    """P(chi-square with 1 degree of freedom > statistic)."""
    from scipy.special import chdtrc  # scipy: ~0.7 s, only when a test or the planner runs

    return chdtrc(1.0, np.asarray(statistic, dtype=float))


def normal_cdf(z) -> np.ndarray:
    from scipy.special import ndtr  # scipy: ~0.7 s, only when a test or the planner runs

    return ndtr(np.asarray(z, dtype=float))


def normal_isf(tail) -> np.ndarray:
    """The z with P(Z > z) = tail."""
    from scipy.special import ndtri  # scipy: ~0.7 s, only when a test or the planner runs

    return -ndtri(np.asarray(tail, dtype=float))
