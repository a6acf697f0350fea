"""Shared by the rejection and power tests: the docs' alpha, SciPy's Fisher on one table, and a
slow reference for the rejection cut-offs."""

from __future__ import annotations

import numpy as np
from scipy.stats import fisher_exact

from poisson_prove.stats.rejection import log_comb

DOCS_ALPHA = 0.05 / 18  # 9 conditions x 2 failure outcomes at q = 0.05


def scipy_rejected(x1: int, x2: int, n: int, alpha: float) -> bool:
    return fisher_exact([[x1, n - x1], [x2, n - x2]], alternative="two-sided").pvalue <= alpha


def full_row_cutoffs(n: int, alpha: float) -> np.ndarray:
    """The cut-offs from every row's whole lower-tail sum (no window): the slow reference."""
    cutoffs = np.full(n + 1, n + 1, dtype=np.int64)
    log_c_arm, log_c_total = log_comb(n), log_comb(2 * n)
    for s in range(1, 2 * n + 1):
        k = np.arange(max(0, s - n), min(n, (s - 1) // 2) + 1)
        if k.size == 0:
            continue
        cdf = np.cumsum(np.exp(log_c_arm[k] + log_c_arm[s - k] - log_c_total[s]))
        for x1 in k[cdf <= alpha / 2]:
            cutoffs[x1] = min(cutoffs[x1], s - x1)
    return cutoffs
