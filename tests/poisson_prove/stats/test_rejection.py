"""Where the two-sided Fisher test starts rejecting a rise, against brute force: SciPy's Fisher
on every table, an independent hypergeometric search, the contract in exact integer arithmetic
and whole-row sums without the window."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import hypergeom

from poisson_prove.stats import power as P
from poisson_prove.stats.rejection import fisher_rejection_cutoffs
from tests.poisson_prove.stats.rejection_kit import DOCS_ALPHA, full_row_cutoffs, scipy_rejected


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 13, 21, 30])
@pytest.mark.parametrize("alpha", [0.05, 0.01, DOCS_ALPHA])
def test_cutoffs_match_scipy_fisher_on_every_table(n: int, alpha: float) -> None:
    cutoffs = fisher_rejection_cutoffs(n, alpha)
    assert cutoffs.shape == (n + 1,)
    for x1 in range(n + 1):
        rejected = [x2 for x2 in range(x1 + 1, n + 1) if scipy_rejected(x1, x2, n, alpha)]
        # The rejected x2 above x1 form an upper tail...
        if rejected:
            assert rejected == list(range(rejected[0], n + 1)), (x1, rejected)
        # ...that starts at the cut-off (n + 1 when nothing is rejected).
        assert cutoffs[x1] == (rejected[0] if rejected else n + 1), (x1, rejected)


def test_cutoffs_match_an_independent_hypergeometric_search_at_larger_n() -> None:
    n, alpha = 400, DOCS_ALPHA
    cutoffs = fisher_rejection_cutoffs(n, alpha)
    for x1 in range(0, n + 1, 7):
        x2 = np.arange(x1 + 1, n + 1)
        # Two-sided p of a table with x1 < x2 and equal arms: both tails of a symmetric pmf.
        p = np.minimum(1.0, hypergeom.cdf(x1, 2 * n, x1 + x2, n) + hypergeom.sf(x2 - 1, 2 * n, x1 + x2, n))
        hits = x2[p <= alpha]
        assert cutoffs[x1] == (hits[0] if hits.size else n + 1)


def test_cutoffs_are_cached_and_read_only() -> None:
    first = fisher_rejection_cutoffs(50, 0.01)
    assert fisher_rejection_cutoffs(50, 0.01) is first
    with pytest.raises(ValueError):
        first[0] = 3


def _contract_rejected(x1: int, x2: int, n: int, alpha: float) -> bool:
    """The contract's definition in exact integer arithmetic: sum the tables (same margins)
    whose probability is at most the observed one's times 1 + 1e-7."""
    s = x1 + x2
    weights = {j: math.comb(n, j) * math.comb(n, s - j) for j in range(max(0, s - n), min(s, n) + 1)}
    observed = weights[x1]
    tail = sum(w for w in weights.values() if w * 10**7 <= observed * (10**7 + 1))
    return tail <= alpha * math.comb(2 * n, s)


@pytest.mark.parametrize("n", [4, 9, 17, 26])
def test_cutoffs_follow_the_contract_in_exact_arithmetic(n: int) -> None:
    for alpha in (0.05, DOCS_ALPHA):
        cutoffs = fisher_rejection_cutoffs(n, alpha)
        for x1 in range(n + 1):
            rejected = [x2 for x2 in range(x1 + 1, n + 1) if _contract_rejected(x1, x2, n, alpha)]
            assert cutoffs[x1] == (rejected[0] if rejected else n + 1)


def test_cutoffs_stay_accurate_at_the_exact_limit() -> None:
    n = P.EXACT_LIMIT
    cutoffs = fisher_rejection_cutoffs(n, DOCS_ALPHA)
    for x1 in (0, 1, 50, 400, 999, 1000, 1500, 1900):
        x2 = np.arange(x1 + 1, n + 1)
        p = np.minimum(1.0, 2 * hypergeom.cdf(x1, 2 * n, x1 + x2, n))
        hits = x2[p <= DOCS_ALPHA]
        assert cutoffs[x1] == (hits[0] if hits.size else n + 1), x1


@pytest.mark.parametrize("alpha", [0.2, 0.05, DOCS_ALPHA, 0.05 / 54, 1e-6])
def test_windowed_cutoffs_equal_whole_row_sums(alpha: float) -> None:
    for n in [*range(0, 25), 97, 333, 1000]:
        assert np.array_equal(fisher_rejection_cutoffs(n, alpha), full_row_cutoffs(n, alpha)), n
