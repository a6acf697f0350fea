"""The scipy.special-only distribution functions against scipy.stats, on random and edge inputs."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from poisson_prove.stats import distributions as D


@pytest.mark.parametrize("p", [0.0, 1.0, 0.5, 1e-3, 0.37, 0.999])
def test_binomial_pmf_cdf_sf_match_scipy_stats(p: float) -> None:
    rng = np.random.default_rng(int(p * 1000))
    for n in [0, 1, 2, 7, 194, 1523, 2000, *rng.integers(3, 2500, 20)]:
        k = np.arange(-2, n + 3)
        assert np.allclose(D.binom_pmf(k, n, p), stats.binom.pmf(k, n, p), rtol=1e-9, atol=1e-12)
        assert np.allclose(D.binom_cdf(k, n, p), stats.binom.cdf(k, n, p), rtol=1e-9, atol=1e-12)
        assert np.allclose(D.binom_sf(k, n, p), stats.binom.sf(k, n, p), rtol=1e-9, atol=1e-12)


def test_fisher_two_sided_matches_scipy_on_random_and_mirror_tables() -> None:
    rng = np.random.default_rng(3)
    tables = [(0, 1, 0, 1), (1, 1, 0, 1), (0, 5, 5, 5), (3, 10, 3, 10), (0, 194, 0, 194), (194, 194, 0, 194)]
    for _ in range(800):
        n_a, n_b = (int(x) for x in rng.integers(1, 300, 2))
        if rng.random() < 0.4:
            n_b = n_a  # equal arms: the mirror table ties the observed one
        tables.append((int(rng.integers(0, n_a + 1)), n_a, int(rng.integers(0, n_b + 1)), n_b))
    for a, n_a, b, n_b in tables:
        expected = stats.fisher_exact([[a, n_a - a], [b, n_b - b]]).pvalue
        assert D.fisher_two_sided_p(a, n_a, b, n_b) == pytest.approx(expected, abs=1e-9), (a, n_a, b, n_b)


def test_chi_square_and_normal_tails_match_scipy() -> None:
    x = np.r_[0.0, np.random.default_rng(5).random(50) * 40]
    assert np.allclose(D.chi2_1_sf(x), stats.chi2.sf(x, 1), rtol=1e-12, atol=0)
    tails = np.array([0.5, 0.025, 0.05 / 18, 1e-9])
    assert np.allclose(D.normal_isf(tails), stats.norm.isf(tails), rtol=1e-12)
    assert np.allclose(D.normal_cdf(x - 20), stats.norm.cdf(x - 20), rtol=1e-12, atol=1e-300)
