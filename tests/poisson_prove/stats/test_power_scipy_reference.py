"""The planner on its own numerics gives every number the SciPy-based planner gave.

The reference is the planner as it was computed with SciPy (gammaln cut-offs, bdtrc tails,
xlogy weights, ndtri/ndtr in the normal regime, brentq roots), patched in for the comparison.
Every value a plan prints or stores (the grid MDE, its base rate, pass or fail, the suggested
--max-mde, the replicates needed) must be the same; the unrounded roots agree to 1e-11.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special
from scipy.optimize import brentq

from poisson_prove.stats import power as P
from poisson_prove.stats import rejection as R


def _scipy_log_comb(n: int) -> np.ndarray:
    k = np.arange(n + 1, dtype=float)
    return special.gammaln(n + 1.0) - special.gammaln(k + 1.0) - special.gammaln(n - k + 1.0)


def _scipy_exact_power(p0: float, d: np.ndarray, n: int, alpha: float) -> np.ndarray:
    cutoffs = R.fisher_rejection_cutoffs(n, alpha)
    x1 = np.arange(n + 1, dtype=float)
    weights = np.exp(_scipy_log_comb(n) + special.xlogy(x1, p0) + special.xlog1py(n - x1, -p0))
    p1 = np.clip(p0 + np.asarray(d, dtype=float), 0.0, 1.0)
    k = np.clip(cutoffs[None, :] - 1.0, 0.0, n)
    tails = special.bdtrc(k, n, p1[:, None])
    tails = np.where(cutoffs[None, :] - 1 >= n, 0.0, tails)
    return tails @ weights


def _scipy_normal_power(p0: float, d: np.ndarray, n: int, alpha: float) -> np.ndarray:
    d = np.asarray(d, dtype=float)
    p1 = p0 + d
    p_bar = (p0 + p1) / 2.0
    z_alpha = -special.ndtri(alpha / 2.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        n_plain = np.where(d > 0, (n - 1.0 / d) ** 2 / n, 0.0)
        n_plain = np.where(n - 1.0 / np.where(d > 0, d, 1.0) > 0, n_plain, 0.0)
        spread = np.sqrt(p0 * (1 - p0) + p1 * (1 - p1))
        z_beta = (np.sqrt(n_plain) * d - z_alpha * np.sqrt(2 * p_bar * (1 - p_bar))) / spread
    power = special.ndtr(z_beta)
    return np.where((d > 0) & (spread > 0), power, np.where(d > 0, 1.0, alpha))


def _scipy_brent(f, a: float, b: float, *, xtol: float, rtol: float) -> float:
    return float(brentq(f, a, b, xtol=xtol, rtol=rtol))


def _fresh() -> None:
    R._cutoffs_cached.cache_clear()


def _plan_numbers(designs: list[tuple[int, int, int, float]]) -> list[tuple]:
    out = []
    for n, conditions, failures, max_mde in designs:
        d = P.design_mde(n, conditions, failures, max_mde=max_mde)
        out.append((d.mde, d.base_rate, d.passes, P.suggested_max_mde(d), d.exact, d.worst_exact))
    return out


DESIGNS = [
    (n, c, f, m)
    for n, c, f, m in [
        (1, 1, 1, 0.2),
        (3, 2, 1, 0.5),
        (10, 10, 1, 0.2),
        (10, 10, 1, 1.0),
        (20, 9, 2, 0.2),
        (20, 9, 2, 0.625),
        (37, 4, 3, 0.3),
        (50, 1, 1, 0.1),
        (99, 6, 2, 0.25),
        (177, 10, 1, 0.2),
        (193, 9, 2, 0.2),
        (194, 9, 2, 0.2),
        (250, 3, 1, 0.05),
        (400, 12, 2, 0.15),
        (777, 2, 2, 0.08),
        (1200, 9, 2, 0.05),
        (2000, 9, 2, 0.2),
        (2001, 9, 2, 0.2),
        (2600, 9, 2, 0.2),
        (50_000, 30, 3, 0.01),
    ]
]


def test_every_printed_plan_number_is_the_scipy_planners(monkeypatch: pytest.MonkeyPatch) -> None:
    _fresh()
    ours = _plan_numbers(DESIGNS)
    ours_needed = [
        P.replicates_needed(c, f, max_mde=m) for c, f, m in [(9, 2, 0.2), (10, 1, 0.2), (3, 1, 0.05)]
    ]
    ours_cases = [
        (found.mde, found.exact) if found else None
        for found in (
            P.mde(p0, n, 0.01, direction=way, exact_root=False)
            for p0 in (0.0, 0.13, 0.5, 0.9)
            for n in (5, 80, 640)
            for way in ("rise", "fall")
        )
    ]
    monkeypatch.setattr(R, "log_comb", _scipy_log_comb)
    monkeypatch.setattr(P, "_exact_power", _scipy_exact_power)
    monkeypatch.setattr(P, "_normal_power", _scipy_normal_power)
    monkeypatch.setattr(P, "brent_root", _scipy_brent)
    _fresh()
    try:
        theirs = _plan_numbers(DESIGNS)
        theirs_needed = [
            P.replicates_needed(c, f, max_mde=m) for c, f, m in [(9, 2, 0.2), (10, 1, 0.2), (3, 1, 0.05)]
        ]
        theirs_cases = [
            (found.mde, found.exact) if found else None
            for found in (
                P.mde(p0, n, 0.01, direction=way, exact_root=False)
                for p0 in (0.0, 0.13, 0.5, 0.9)
                for n in (5, 80, 640)
                for way in ("rise", "fall")
            )
        ]
    finally:
        _fresh()
    assert ours_needed == theirs_needed == [193, 177, ours_needed[2]]
    assert ours_cases == theirs_cases
    for design, mine, ref in zip(DESIGNS, ours, theirs, strict=True):
        assert mine[:4] == ref[:4], design
        for a, b in zip(mine[4:], ref[4:], strict=True):
            assert (a is None and b is None) or abs(a - b) <= 1e-11, (design, a, b)
