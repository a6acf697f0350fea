"""Where the two-sided Fisher exact test with equal arms starts rejecting a rise.

For `n` replicates per arm and the table (x1, n - x1; x2, n - x2), the x2 > x1 that are
rejected at `alpha` form an upper tail; `fisher_rejection_cutoffs(n, alpha)` gives, for each x1,
where it starts. The design power (`poisson_prove.stats.power`) sums over these cut-offs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache

import numpy as np

from poisson_prove.stats.numerics import log_comb

# Cells of the (column total x first-arm count) table computed at a time: bounds memory.
_BLOCK_CELLS = 1 << 20
# Terms below threshold * e^-45 are left out of a tail sum: even n of them change it by
# under 1e-16 of the threshold.
_NEGLIGIBLE_LOG = 45.0


@lru_cache(maxsize=64)
def _cutoffs_cached(n: int, alpha: float) -> np.ndarray:
    """The cut-offs (see fisher_rejection_cutoffs), one row of tables s = x1 + x2 at a time.

    With equal arms the null distribution of x1 given s is hypergeometric and symmetric
    about s/2, so for x1 < x2 the two-sided p is exactly 2 * P(K <= x1). (The "as likely"
    tolerance, relative 1e-7, admits exactly the mirror table: any other table's
    probability differs from the observed one's by a ratio of integers below (n + 1)^2,
    i.e. by more than 1e-7 relative up to n = 3161.) In each row only a window of x1 is
    summed: below it every term is under threshold * e^-45 (together far below one ulp of
    the threshold), and from its end on a single term already exceeds the threshold.
    """
    cutoffs = np.full(n + 1, n + 1, dtype=np.int64)
    if n == 0:
        cutoffs.flags.writeable = False
        return cutoffs
    log_c_arm = log_comb(n)
    log_c_total = log_comb(2 * n)
    threshold = alpha / 2.0

    def log_pmf(x1: np.ndarray, s: np.ndarray) -> np.ndarray:
        return log_c_arm[x1] + log_c_arm[s - x1] - log_c_total[s]

    s = np.arange(1, 2 * n + 1)
    first = np.maximum(0, s - n)  # the smallest x1 a row holds
    last = np.minimum(n, (s - 1) // 2)  # x1 < x2 = s - x1: only rises
    rows = last >= first
    s, first, last = s[rows], first[rows], last[rows]
    # Terms rise with x1 up to the mode (s/2, beyond `last`): both window ends by bisection.
    start = _first_reaching(log_pmf, s, first, last, math.log(threshold) - _NEGLIGIBLE_LOG)
    # The first term above the threshold is the last one summed: its sum exceeds it too.
    stop = np.minimum(last, _first_reaching(log_pmf, s, start, last, math.log(threshold), strictly=True))
    rows = start <= stop
    s, start, stop = s[rows], start[rows], stop[rows]
    width = stop - start + 1
    order = np.argsort(width, kind="stable")  # rows of like width share a padded block
    done = 0
    while done < order.size:
        widths = width[order[done:]]
        take = max(1, int(np.searchsorted(np.arange(1, widths.size + 1) * widths, _BLOCK_CELLS, "right")))
        pick = order[done : done + take]
        done += take
        x1 = start[pick][:, None] + np.arange(int(width[pick].max()))[None, :]
        inside = x1 <= stop[pick][:, None]
        x1 = np.minimum(x1, stop[pick][:, None])
        row_s = s[pick][:, None]
        terms = np.where(inside, np.exp(log_pmf(x1, row_s)), 0.0)
        # Lower-tail sums accumulate from the smallest terms: accurate in the far tail.
        rejected = inside & (np.cumsum(terms, axis=1) <= threshold)
        np.minimum.at(cutoffs, x1[rejected], (row_s - x1)[rejected])
    cutoffs.flags.writeable = False
    return cutoffs


def _first_reaching(
    log_pmf: Callable[[np.ndarray, np.ndarray], np.ndarray],
    s: np.ndarray,
    low: np.ndarray,
    high: np.ndarray,
    level: float,
    *,
    strictly: bool = False,
) -> np.ndarray:
    """Per row, the smallest x1 in [low, high] whose log term reaches `level` (above it when
    `strictly`), or high + 1; the terms must be nondecreasing on [low, high]."""

    def reaches(x1: np.ndarray) -> np.ndarray:
        value = log_pmf(np.minimum(x1, high), s)
        return (value > level if strictly else value >= level) & (x1 <= high)

    found = np.where(reaches(low), low, high + 1)  # the answer lies in (below, found]
    below = low.copy()
    while True:
        open_rows = found - below > 1
        if not open_rows.any():
            return found
        middle = (below + found) // 2
        hit = reaches(middle)
        found = np.where(open_rows & hit, middle, found)
        below = np.where(open_rows & ~hit, middle, below)


def fisher_rejection_cutoffs(n: int, alpha: float) -> np.ndarray:
    """For each x1 in 0..n, the smallest x2 > x1 whose Fisher table is rejected at `alpha`.

    The table is (x1, n - x1; x2, n - x2); the test is two-sided Fisher (tables as or less
    likely than the observed one, relative tolerance 1e-7). `n + 1` means no x2 is rejected.
    For a fixed x1 the rejected x2 above x1 form an upper tail, so this one number per x1
    describes the whole rejection region of rises. The array is read-only and cached.
    """
    check_n_alpha(n, alpha)
    return _cutoffs_cached(int(n), float(alpha))


def check_n_alpha(n: int, alpha: float) -> None:
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
