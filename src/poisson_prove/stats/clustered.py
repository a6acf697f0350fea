"""Benchmarks: many cases, few repeats, where the case is the unit of evidence.

Follows the statistics contract, section 7 (see docs/statistics.md). A benchmark's repeats of
one case are not independent evidence (a hard case is hard every time), so:

- the pooled row's test is the exact paired sign-flip test over cases (`sign_flip`): each case's
  d_k = c_k - b_k keeps or flips its sign with probability 1/2 under no change; the distribution
  of T = sum d_k is computed exactly by convolution, never sampled. With every case run once it
  is McNemar's test over the cases;
- the pooled rate's interval uses the delete-one-case jackknife variance of the pooled
  Aalen-Johansen incidence (`pooled_incidence`);
- "could have shown" uses the effective number of pairs n_eff = (sum m_k) / (1 + (m_bar - 1) rho),
  rho the one-way ANOVA estimate of the within-case correlation (`within_case_correlation`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from poisson_prove.stats.distributions import binom_cdf, binom_pmf
from poisson_prove.stats.incidence import aalen_johansen, wilson_from_rate


@dataclass(frozen=True, slots=True)
class SignFlipResult:
    """The paired sign-flip test over cases for one failure outcome.

    `b` and `c` are the sums over cases of b_k (event before only) and c_k (event after only);
    `t` = c - b; `cases_up` / `cases_down` how many cases had d_k > 0 (more events after) or
    d_k < 0; `p_mid` the two-sided mid-p, `p_exact` the two-sided p without the half.
    """

    b: int
    c: int
    t: int
    cases_up: int
    cases_down: int
    p_mid: float
    p_exact: float


def _distribution_of_signed_sum(magnitudes: np.ndarray) -> tuple[np.ndarray, int]:
    """P(T = v) for v = -S..S (index v + S), T = sum of s_k a_k with independent fair signs.

    Cases with the same |d_k| = a form one binomial: r of them sum to a (2X - r), X ~ Bin(r, 1/2),
    so the convolution runs over the distinct magnitudes only (a handful when repeats are few).
    """
    total = int(magnitudes.sum())
    distribution = np.zeros(1)
    distribution[0] = 1.0
    span = 0  # the current distribution covers -span..span
    values, counts = np.unique(magnitudes, return_counts=True)
    for a, r in zip(values.tolist(), counts.tolist(), strict=True):
        a, r = int(a), int(r)
        part = np.zeros(2 * a * r + 1)
        part[:: 2 * a] = binom_pmf(np.arange(r + 1), r, 0.5)  # at a(2x - r) + a r = 2 a x
        distribution = np.convolve(distribution, part)
        span += a * r
    assert span == total
    return distribution, total


def sign_flip(b: np.ndarray, c: np.ndarray) -> SignFlipResult:
    """The exact paired sign-flip test on per-case discordant counts `b` and `c` (section 7).

    mid-p = min(1, 2[P(T* >= |t|) - P(T* = |t|)/2]), exact p = min(1, 2 P(T* >= |t|)); no
    discordant pair at all gives p = 1.
    """
    b = np.asarray(b, dtype=np.int64)
    c = np.asarray(c, dtype=np.int64)
    if b.shape != c.shape or b.ndim != 1:
        raise ValueError("b and c must be one-dimensional arrays of the same length")
    if (b < 0).any() or (c < 0).any():
        raise ValueError("discordant counts must be >= 0")
    d = c - b
    t = int(d.sum())
    up, down = int(np.count_nonzero(d > 0)), int(np.count_nonzero(d < 0))
    b_sum, c_sum = int(b.sum()), int(c.sum())
    magnitudes = np.abs(d[d != 0])
    if magnitudes.size == 0:
        return SignFlipResult(b_sum, c_sum, t, up, down, 1.0, 1.0)
    if int(magnitudes.max()) == 1:
        # Every moving case moved by one: T = 2X - r with X ~ Bin(r, 1/2), as McNemar's test
        # over the cases (the same SciPy functions, so the two agree to the last digit).
        r = int(magnitudes.size)
        low = (r - abs(t)) // 2
        tail, at = float(binom_cdf(low, r, 0.5)), float(binom_pmf(low, r, 0.5))
    else:
        distribution, total = _distribution_of_signed_sum(magnitudes)
        upper = distribution[total + abs(t) :]
        tail, at = float(upper.sum()), float(upper[0])
    return SignFlipResult(
        b_sum, c_sum, t, up, down, min(1.0, 2.0 * (tail - at / 2.0)), min(1.0, 2.0 * tail)
    )


@dataclass(frozen=True, slots=True)
class PooledIncidence:
    """A pooled group's incidence of every cause at the horizon, with case-level uncertainty.

    `incidence[k - 1]` is cause k's Aalen-Johansen F(h) over every episode of the group;
    `variance[k - 1]` its delete-one-case jackknife variance; `n_eff[k - 1]` the effective n of
    its Wilson interval (F(1 - F) / V, capped at the episodes, so V = 0 with 0 < F < 1 gives the
    episodes; the number of cases where F is 0 or 1); `low`/`high` the 95% Wilson interval on it.
    """

    cases: int
    episodes: int
    incidence: np.ndarray
    variance: np.ndarray
    n_eff: np.ndarray
    low: np.ndarray
    high: np.ndarray
    censored: bool


def _leave_one_case_out(
    time: np.ndarray,
    cause: np.ndarray,
    codes: np.ndarray,
    cases: int,
    horizon: float,
    causes: int,
    censored: bool,
) -> np.ndarray:
    """F(-k) for every case k (rows) and cause (columns)."""
    if not censored:
        # No episode censored before h: F is the share k / n, and so is every F(-k).
        by_case = np.zeros((cases, causes))
        counted = (cause > 0) & (time <= horizon)
        np.add.at(by_case, (codes[counted], cause[counted] - 1), 1.0)
        sizes = np.bincount(codes, minlength=cases).astype(float)
        remaining = time.size - sizes
        with np.errstate(divide="ignore", invalid="ignore"):
            out = (by_case.sum(axis=0)[None, :] - by_case) / remaining[:, None]
        return np.where(remaining[:, None] > 0, out, np.nan)
    out = np.empty((cases, causes))
    for k in range(cases):
        keep = codes != k
        out[k] = aalen_johansen(time[keep], cause[keep], horizon, causes).incidence if keep.any() else np.nan
    return out


def pooled_incidence(time, cause, case, horizon: float, causes: int) -> PooledIncidence:
    """The pooled Aalen-Johansen incidence at `horizon` of a group whose episodes belong to cases
    (`case`: any labels), with the delete-one-case jackknife variance
    V = (K - 1)/K * sum_k (F(-k) - mean F(-.))^2 and the Wilson interval on F(1 - F)/V."""
    time = np.asarray(time, dtype=float)
    cause = np.asarray(cause, dtype=np.int64)
    _, codes = np.unique(np.asarray(case), return_inverse=True)
    codes = codes.reshape(-1)
    cases = int(codes.max()) + 1 if codes.size else 0
    fit = aalen_johansen(time, cause, horizon, causes)
    incidence = np.asarray(fit.incidence, dtype=float)
    if cases > 1:
        dropped = _leave_one_case_out(time, cause, codes, cases, float(horizon), causes, fit.censored)
        centred = dropped - np.nanmean(dropped, axis=0)
        variance = (cases - 1) / cases * np.nansum(centred**2, axis=0)
    else:
        variance = np.zeros(causes)
    episodes = int(time.size)
    with np.errstate(divide="ignore", invalid="ignore"):
        n_eff = np.where(variance > 0, incidence * (1.0 - incidence) / variance, np.inf)
    n_eff = np.minimum(n_eff, float(episodes))
    degenerate = (incidence <= 0.0) | (incidence >= 1.0)
    n_eff = np.where(degenerate, float(cases), n_eff)
    low, high = wilson_from_rate(incidence, n_eff)
    return PooledIncidence(cases, episodes, incidence, variance, n_eff, low, high, fit.censored)


def within_case_correlation(indicator, case) -> float:
    """The one-way ANOVA estimate of the intraclass correlation of a 0/1 `indicator` within
    cases, clipped to [0, 1]. Cases run once carry no information on it: 0 when every case has
    one episode; 1 (the honest worst case) when there is no variation at all to estimate from."""
    y = np.asarray(indicator, dtype=float)
    _, codes = np.unique(np.asarray(case), return_inverse=True)
    codes = codes.reshape(-1)
    cases = int(codes.max()) + 1 if codes.size else 0
    n = float(y.size)
    sizes = np.bincount(codes, minlength=cases).astype(float)
    if cases < 2 or n <= cases:
        return 0.0
    means = np.bincount(codes, weights=y, minlength=cases) / sizes
    grand = y.mean()
    between = float((sizes * (means - grand) ** 2).sum()) / (cases - 1)
    within = float(((y - means[codes]) ** 2).sum()) / (n - cases)
    m0 = (n - float((sizes**2).sum()) / n) / (cases - 1)
    denominator = between + (m0 - 1.0) * within
    if denominator <= 0.0:
        return 1.0
    return float(min(1.0, max(0.0, (between - within) / denominator)))


def effective_pairs(pairs_per_case, rho: float) -> float:
    """n_eff = (sum m_k) / (1 + (m_bar - 1) rho): the independent pairs the cases are worth."""
    m = np.asarray(pairs_per_case, dtype=float)
    if m.size == 0:
        return 0.0
    m_bar = float(m.mean())
    return float(m.sum()) / (1.0 + (m_bar - 1.0) * min(1.0, max(0.0, float(rho))))
