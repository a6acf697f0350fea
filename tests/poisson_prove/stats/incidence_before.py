"""A frozen copy of stats/incidence.py's estimator as it was before its count went block by block
(commit a45864c): the reference the faster code is checked against bit for bit
(test_incidence_blocks.py). Not to be changed: it is what the printed numbers were."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

Z95 = 1.959963984540054  # the two-sided 95% normal quantile


@dataclass(frozen=True, slots=True)
class AalenJohansen:
    """Cumulative incidence of every cause at the horizon, for one group of episodes.

    `incidence[k - 1]` and `variance[k - 1]` are cause k's F(h) and its delta-method
    variance; `counts[k - 1]` the events of cause k at or before h; `survival` the
    all-cause Kaplan-Meier S(h) (so the incidences sum to 1 - survival); `n` the episodes;
    `censored_before` how many were censored strictly before h (0 means F(h) = counts / n).
    """

    horizon: float
    n: int
    incidence: np.ndarray
    variance: np.ndarray
    counts: np.ndarray
    survival: float
    censored_before: int

    def __post_init__(self) -> None:
        for array in (self.incidence, self.variance, self.counts):
            array.flags.writeable = False  # the result is immutable, its arrays included

    @property
    def censored(self) -> bool:
        """True when some episode was censored before the horizon (the share is starred)."""
        return self.censored_before > 0


def wilson(k, n, z: float = Z95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval (no continuity correction) for k events in n; vectorized.

    n = 0 gives (0, 1). Scalars in, 0-d arrays out (use float() on them).
    """
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = np.where(n > 0, k / np.where(n > 0, n, 1.0), 0.0)
    return wilson_from_rate(rate, n, z)


def wilson_from_rate(rate, n, z: float = Z95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson interval for an observed share `rate` out of a (possibly effective) `n`."""
    rate = np.asarray(rate, dtype=float)
    n = np.asarray(n, dtype=float)
    positive = n > 0
    safe_n = np.where(positive, n, 1.0)
    z2 = z * z
    denominator = 1.0 + z2 / safe_n
    center = (rate + z2 / (2.0 * safe_n)) / denominator
    half = z * np.sqrt(np.maximum(rate * (1.0 - rate), 0.0) / safe_n + z2 / (4.0 * safe_n**2)) / denominator
    # The bounds are exactly 0 at a rate of 0 and exactly 1 at a rate of 1 (center - half
    # is 0 there only up to rounding: JSON would carry 1.7e-18), and never outside [0, 1].
    low = np.where(positive & (rate > 0.0), np.clip(center - half, 0.0, 1.0), 0.0)
    high = np.where(positive & (rate < 1.0), np.clip(center + half, 0.0, 1.0), 1.0)
    return low, high


def effective_n(incidence, variance) -> np.ndarray:
    """F(1 - F) / Var(F): the binomial sample size with the same variance; NaN when Var = 0."""
    incidence = np.asarray(incidence, dtype=float)
    variance = np.asarray(variance, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(variance > 0, incidence * (1.0 - incidence) / variance, np.nan)


def starred_wilson(incidence, variance, n, z: float = Z95) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(low, high, n_eff): Wilson on F with the effective n of a censored run.

    Where the variance is 0 (no event of that cause, or every episode had one) the effective
    n falls back to `n`, the episodes of the group.
    """
    n_eff = effective_n(incidence, variance)
    n_eff = np.where(np.isfinite(n_eff), n_eff, np.asarray(n, dtype=float))
    low, high = wilson_from_rate(incidence, n_eff, z)
    return low, high, n_eff


def aalen_johansen(time, cause, horizon: float, causes: int | None = None) -> AalenJohansen:
    """Aalen-Johansen cumulative incidence at `horizon` (inclusive) for every cause.

    `time` is each episode's time, `cause` its outcome: 0 = censored, 1..K = competing causes.
    An episode with time > horizon is still running at the horizon: censored there. `causes`
    is K (default: the largest cause seen). The variance is the delta-method estimator of
    Marubini and Valsecchi (1995), the one statsmodels' CumIncidenceRight reports.
    """
    time = np.asarray(time, dtype=float)
    cause = np.asarray(cause, dtype=np.int64)
    if time.shape != cause.shape or time.ndim != 1:
        raise ValueError("time and cause must be one-dimensional arrays of the same length")
    if np.isnan(time).any():
        raise ValueError("time contains NaN")
    if cause.size and cause.min() < 0:
        raise ValueError("cause must be 0 (censored) or a positive cause number")
    n_causes = int(causes if causes is not None else (cause.max() if cause.size else 0))
    if cause.size and cause.max() > n_causes:
        raise ValueError(f"cause {int(cause.max())} exceeds causes={n_causes}")
    order = np.argsort(time, kind="stable")
    return _aalen_johansen_sorted(time[order], cause[order], float(horizon), n_causes)


def _aalen_johansen_sorted(
    time: np.ndarray, cause: np.ndarray, horizon: float, n_causes: int
) -> AalenJohansen:
    """The estimator on episodes already sorted by time (the grouped entry point sorts once)."""
    total = int(time.size)
    within = int(np.searchsorted(time, horizon, side="right"))  # episodes with t <= h
    t_in = time[:within]
    c_in = cause[:within]
    censored_before = int(np.count_nonzero((c_in == 0) & (t_in < horizon)))
    # Distinct times: boundaries where the sorted time changes.
    changes = np.r_[True, t_in[1:] != t_in[:-1]] if within else np.zeros(0, dtype=bool)
    starts = np.flatnonzero(changes)
    slot = np.cumsum(changes) - 1
    is_event = c_in > 0
    deaths = np.bincount(
        slot[is_event] * n_causes + (c_in[is_event] - 1), minlength=starts.size * n_causes
    ).reshape(starts.size, n_causes)
    return _from_table(horizon, total, starts, deaths, censored_before)


def _from_table(
    horizon: float, total: int, left_before: np.ndarray, deaths: np.ndarray, censored_before: int
) -> AalenJohansen:
    """The estimator from its sufficient table: per distinct time t_j <= h (ascending, each
    with at least one episode), how many episodes ended strictly before it and the deaths of
    every cause at it."""
    n_causes = deaths.shape[1]
    counts = deaths.sum(axis=0).astype(np.int64)
    if total == 0:
        nan = np.full(n_causes, np.nan)
        return AalenJohansen(horizon, 0, nan, nan.copy(), counts, float("nan"), 0)
    if left_before.size == 0:
        zero = np.zeros(n_causes)
        return AalenJohansen(horizon, total, zero, zero.copy(), counts, 1.0, censored_before)
    deaths = deaths.astype(float)
    at_risk = (total - left_before).astype(float)  # censorings at t_j are still at risk
    all_deaths = deaths.sum(axis=1)
    survival_after = np.cumprod(1.0 - all_deaths / at_risk)
    survival_before = np.r_[1.0, survival_after[:-1]]
    incidence_path = np.cumsum((survival_before / at_risk)[:, None] * deaths, axis=0)
    incidence = incidence_path[-1]
    variance = _delta_method_variance(incidence, incidence_path, survival_before, at_risk, deaths, all_deaths)
    return AalenJohansen(
        horizon, total, incidence, variance, counts, float(survival_after[-1]), censored_before
    )


def _delta_method_variance(
    incidence: np.ndarray,
    incidence_path: np.ndarray,
    survival_before: np.ndarray,
    at_risk: np.ndarray,
    deaths: np.ndarray,
    all_deaths: np.ndarray,
) -> np.ndarray:
    """Var F_k(h) = sum over distinct times t_j <= h of
        (F_k(h) - F_k(t_j))^2 d_j / (n_j (n_j - d_j))
      + S(t_j-)^2 d_kj (n_j - d_kj) / n_j^3
      - 2 (F_k(h) - F_k(t_j)) S(t_j-) d_kj / n_j^2.
    The first term is taken as 0 when n_j = d_j (then F_k(h) = F_k(t_j): nobody is left).
    """
    gap = incidence[None, :] - incidence_path
    remaining = at_risk - all_deaths
    with np.errstate(divide="ignore", invalid="ignore"):
        hazard_term = np.where(remaining > 0, all_deaths / (at_risk * remaining), 0.0)
    first = (gap**2 * hazard_term[:, None]).sum(axis=0)
    second = ((survival_before**2 / at_risk**3)[:, None] * deaths * (at_risk[:, None] - deaths)).sum(axis=0)
    third = (gap * (survival_before / at_risk**2)[:, None] * deaths).sum(axis=0)
    return np.maximum(first + second - 2.0 * third, 0.0)


def aalen_johansen_grouped(
    time, cause, group, horizon: float, causes: int | None = None
) -> dict[object, AalenJohansen]:
    """Aalen-Johansen at `horizon` for every group label in `group`, in one pass.

    Integer times in a modest range (step counts) are tabulated with one bincount and never
    sorted; other times are sorted once for all groups.
    """
    time = np.asarray(time, dtype=float)
    cause = np.asarray(cause)
    if cause.dtype.kind not in "iu" or cause.dtype == np.uint64:
        cause = cause.astype(np.int64)
    group = np.asarray(group)
    if not (time.shape == cause.shape == group.shape) or time.ndim != 1:
        raise ValueError("time, cause and group must be one-dimensional arrays of the same length")
    # min and max propagate NaN: one pass each checks for it and gives the range of times
    t_min, t_max = (float(time.min()), float(time.max())) if time.size else (0.0, 0.0)
    if np.isnan(t_min):
        raise ValueError("time contains NaN")
    c_min, c_max = (int(cause.min()), int(cause.max())) if cause.size else (0, 0)
    n_causes = int(causes if causes is not None else c_max)
    if cause.size and (c_min < 0 or c_max > n_causes):
        raise ValueError(f"cause must be in 0..{n_causes}")
    horizon = float(horizon)
    largest = _largest_small_label(group)
    if largest is not None:
        # Labels 0..L-1 index the table directly; a label with no row has no group.
        tabulated = _grouped_by_counting(time, cause, group, largest + 1, horizon, n_causes, t_min, t_max)
        if tabulated is not None:
            return {label: fit for label, fit in enumerate(tabulated) if fit is not None}
    labels, codes = _group_codes(group)
    keys = [label.item() if hasattr(label, "item") else label for label in labels]
    order = np.lexsort((time, codes))
    bounds = np.searchsorted(codes[order], np.arange(labels.size + 1))
    sorted_time, sorted_cause = time[order], cause[order].astype(np.int64, copy=False)
    return {
        key: _aalen_johansen_sorted(
            sorted_time[bounds[i] : bounds[i + 1]], sorted_cause[bounds[i] : bounds[i + 1]], horizon, n_causes
        )
        for i, key in enumerate(keys)
    }


def _grouped_by_counting(
    time: np.ndarray,
    cause: np.ndarray,
    codes: np.ndarray,
    n_groups: int,
    horizon: float,
    n_causes: int,
    t_min: float,
    t_max: float,
) -> list[AalenJohansen | None] | None:
    """The per-group tables by counting, when times are integers in a small range; else None.
    A group code without a row gets None in the list.

    One table of (group, time, cause) counts over every row: times past the horizon share
    one last column (still running at h), so totals, censorings before h and the events and
    exits at each time t <= h all come from it, without selecting rows first.
    """
    if not time.size or not t_min <= horizon or not np.isfinite(t_max) or t_min != np.floor(t_min):
        return None
    low = int(t_min)
    beyond = t_max > horizon
    top = float(np.floor(horizon)) + 1.0 if beyond else t_max  # the column past h, if any
    span = int(top) - low + 1
    width = n_causes + 1
    table_size = n_groups * span * width
    if table_size > max(4 * time.size, 1_000_000):
        return None
    # The narrowest integer that holds every count index and time, and every partial sum
    # below: less memory traffic.
    reach = table_size + abs(low) + abs(int(top)) + 1
    index = np.int16 if reach < 2**15 else np.int32 if reach < 2**31 else np.intp
    clipped = np.minimum(time, top) if beyond else time
    steps = clipped.astype(index)
    if not np.array_equal(steps, clipped):
        return None  # a time that is not an integer (at or before the horizon)
    flat = np.multiply(codes, span, dtype=index, casting="unsafe")  # codes < 1,000,000
    flat += steps
    if low:
        flat -= low
    flat *= width
    flat += cause
    table = np.bincount(flat, minlength=table_size).reshape(n_groups, span, width)
    within = span - 1 if beyond else span  # columns of times t <= h
    before = within - 1 if float(low + within - 1) == horizon else within  # times t < h
    totals = table.sum(axis=(1, 2))
    censored_before = table[:, :before, 0].sum(axis=1)
    results: list[AalenJohansen | None] = []
    for g in range(n_groups):
        if not totals[g]:
            results.append(None)
            continue
        per_time = table[g, :within]
        ended = per_time.sum(axis=1)
        present = np.flatnonzero(ended)
        left_before = (np.cumsum(ended) - ended)[present]
        results.append(
            _from_table(horizon, int(totals[g]), left_before, per_time[present, 1:], int(censored_before[g]))
        )
    return results


def _largest_small_label(group: np.ndarray) -> int | None:
    """The largest label when labels are integers in 0..999,999 (codes, condition indices),
    usable as table indices; else None."""
    if group.dtype.kind not in "iu" or not group.size or group.min() < 0:
        return None
    largest = int(group.max())
    return largest if largest < 1_000_000 else None


def _group_codes(group: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct labels, each row's index into them); small integer labels without a sort."""
    if _largest_small_label(group) is not None:
        present = np.bincount(group) > 0
        labels = np.flatnonzero(present)
        lookup = np.cumsum(present) - 1
        return labels.astype(group.dtype), lookup[group]
    labels, codes = np.unique(group, return_inverse=True)
    return labels, codes.reshape(-1)
