"""The comparison's tests: McNemar (paired), Fisher (unpaired), log-rank, Benjamini-Hochberg.

Follows the statistics contract, section 3 (see docs/statistics.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from poisson_prove.stats.distributions import binom_cdf, binom_pmf, chi2_1_sf, fisher_two_sided_p


@dataclass(frozen=True, slots=True)
class McNemarResult:
    """McNemar on the discordant pairs: b = event before only, c = event after only."""

    b: int
    c: int
    p_mid: float
    p_exact: float


@dataclass(frozen=True, slots=True)
class LogRankResult:
    """Two-group log-rank on [0, h]: chi-square `statistic` (1 df) and its `p`.

    `observed` and `expected` are (group 0, group 1) event counts; `variance` is the
    hypergeometric variance of group 1's observed count (with the ties term).
    """

    statistic: float
    p: float
    observed: tuple[float, float]
    expected: tuple[float, float]
    variance: float


def mcnemar_many(b, c) -> tuple[np.ndarray, np.ndarray]:
    """(mid-p, exact p) of McNemar for arrays of discordant counts; b + c = 0 gives 1."""
    b = np.asarray(b, dtype=np.int64)
    c = np.asarray(c, dtype=np.int64)
    if (b < 0).any() or (c < 0).any():
        raise ValueError("discordant counts must be >= 0")
    total = b + c
    low = np.minimum(b, c)
    cdf = binom_cdf(low, total, 0.5)
    pmf = binom_pmf(low, total, 0.5)
    p_mid = np.where(total > 0, np.minimum(1.0, 2.0 * (cdf - pmf / 2.0)), 1.0)
    p_exact = np.where(total > 0, np.minimum(1.0, 2.0 * cdf), 1.0)
    return p_mid, p_exact


def mcnemar(b: int, c: int) -> McNemarResult:
    """McNemar mid-p: min(1, 2[P(X <= min(b,c)) - P(X = min(b,c))/2]), X ~ Bin(b + c, 1/2),
    and the exact two-sided binomial p beside it."""
    p_mid, p_exact = mcnemar_many(np.array([b]), np.array([c]))
    return McNemarResult(int(b), int(c), float(p_mid[0]), float(p_exact[0]))


def fisher_two_sided(events_a: int, n_a: int, events_b: int, n_b: int) -> float:
    """Two-sided Fisher exact p on (events, non-events) of two arms (SciPy's convention:
    tables as likely as the observed one within a relative 1e-7, or less)."""
    if not (0 <= events_a <= n_a and 0 <= events_b <= n_b):
        raise ValueError(f"need 0 <= events <= n, got {events_a}/{n_a} and {events_b}/{n_b}")
    return fisher_two_sided_p(int(events_a), int(n_a), int(events_b), int(n_b))


def benjamini_hochberg(p) -> np.ndarray:
    """Benjamini-Hochberg step-up adjusted p-values (q-values): monotone, capped at 1.

    NaN entries (tests that could not be run) stay NaN and do not count among the m tests.
    """
    p = np.asarray(p, dtype=float)
    adjusted = np.full(p.shape, np.nan)
    flat = p.reshape(-1)
    present = np.flatnonzero(~np.isnan(flat))
    if present.size == 0:
        return adjusted
    values = flat[present]
    if (values < 0).any() or (values > 1).any():
        raise ValueError("p-values must be in [0, 1]")
    m = values.size
    order = np.argsort(values, kind="stable")
    scaled = values[order] * m / np.arange(1, m + 1)
    # Step-up: each q is the smallest scaled p at or above its rank.
    stepped = np.minimum.accumulate(scaled[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(stepped, 1.0)
    result = adjusted.reshape(-1)
    result[present] = out
    return result.reshape(p.shape)


def logrank(time, event, group, horizon: float) -> LogRankResult:
    """Cause-specific log-rank test of two groups on [0, horizon].

    `event` is True only for the cause of interest (other outcomes are censored at their
    time); times beyond the horizon are censored at it. `group` holds two labels (0/1 or
    False/True; the larger is group 1). Variance: hypergeometric with the ties term
    d (n1/n)(1 - n1/n)(n - d)/(n - 1).
    """
    time = np.asarray(time, dtype=float)
    event = np.asarray(event, dtype=bool)
    group = np.asarray(group)
    if not (time.shape == event.shape == group.shape) or time.ndim != 1:
        raise ValueError("time, event and group must be one-dimensional arrays of the same length")
    labels, codes = np.unique(group, return_inverse=True)
    if labels.size > 2:
        raise ValueError(f"log-rank compares two groups, got {labels.size}")
    in_one = codes.reshape(-1) == (1 if labels.size == 2 else -1)
    counted = event & (time <= horizon)
    order = np.argsort(time, kind="stable")
    t_sorted, d_sorted, g_sorted = time[order], counted[order], in_one[order]
    total, total_one = t_sorted.size, int(g_sorted.sum())
    changes = np.r_[True, t_sorted[1:] != t_sorted[:-1]] if total else np.zeros(0, dtype=bool)
    starts = np.flatnonzero(changes)
    slot = np.cumsum(changes) - 1
    at_risk = (total - starts).astype(float)
    ended_one = np.bincount(slot, weights=g_sorted.astype(float), minlength=starts.size)
    at_risk_one = total_one - (np.cumsum(ended_one) - ended_one)
    deaths = np.bincount(slot, weights=d_sorted.astype(float), minlength=starts.size)
    deaths_one = np.bincount(slot, weights=(d_sorted & g_sorted).astype(float), minlength=starts.size)
    has_death = deaths > 0
    n, n1, d, d1 = at_risk[has_death], at_risk_one[has_death], deaths[has_death], deaths_one[has_death]
    expected_one = float(np.sum(d * n1 / n))
    observed_one = float(d1.sum())
    with np.errstate(divide="ignore", invalid="ignore"):
        ties = np.where(n > 1, (n - d) / (n - 1), 0.0)
    variance = float(np.sum(d * (n1 / n) * (1 - n1 / n) * ties))
    observed_all = float(d.sum())
    if variance > 0:
        statistic = (observed_one - expected_one) ** 2 / variance
        p_value = float(chi2_1_sf(statistic))
    else:
        statistic, p_value = 0.0, 1.0
    return LogRankResult(
        statistic=float(statistic),
        p=p_value,
        observed=(observed_all - observed_one, observed_one),
        expected=(observed_all - expected_one, expected_one),
        variance=variance,
    )


def fisher_one_sided(
    events_a: int, n_a: int, events_b: int, n_b: int, *, alternative: str = "greater"
) -> float:
    """One-sided Fisher exact p that arm a's share is greater (or "less") than arm b's."""
    from scipy.stats import fisher_exact  # scipy: ~0.7 s, only when a test or the planner runs

    if alternative not in ("greater", "less"):
        raise ValueError(f"alternative must be 'greater' or 'less', got {alternative!r}")
    if not (0 <= events_a <= n_a and 0 <= events_b <= n_b):
        raise ValueError(f"need 0 <= events <= n, got {events_a}/{n_a} and {events_b}/{n_b}")
    table = [[int(events_a), int(n_a - events_a)], [int(events_b), int(n_b - events_b)]]
    return float(fisher_exact(table, alternative=alternative).pvalue)
