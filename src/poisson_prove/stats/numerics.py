"""What the design planner computes with, without SciPy: log-factorials, binomial tails, the
normal distribution and its quantile, and Brent's root finder.

Importing `scipy.special` (its array-API layer parses hundreds of docstrings) and
`scipy.optimize` cost a sweep several times what its plan computes, so the planner uses these
instead. Each is as accurate as the SciPy function it replaces, or more (checked against SciPy over
grids in the tests), and the planner's printed numbers, which are rounded to its 0.0001 grid,
are those the SciPy functions gave (checked design by design in the tests).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache

import numpy as np

_SQRT_HALF = math.sqrt(0.5)
_SQRT_2PI = math.sqrt(2.0 * math.pi)


@lru_cache(maxsize=8)
def _log_factorial_table(size: int) -> np.ndarray:
    table = np.array([math.lgamma(k + 1.0) for k in range(size)], dtype=float)
    table.flags.writeable = False
    return table


def log_factorials(n: int) -> np.ndarray:
    """log(k!) for k = 0..n (read-only; tables are shared between calls)."""
    # One table per power of two covers every smaller n: a planner asks for many n in a row.
    size = 1 << max(6, int(n).bit_length())
    return _log_factorial_table(size)[: n + 1]


def log_comb(n: int) -> np.ndarray:
    """log C(n, k) for k = 0..n."""
    lf = log_factorials(n)
    return lf[n] - lf - lf[::-1]


def binom_pmf_all(n: int, p: np.ndarray) -> np.ndarray:
    """P(Bin(n, p) = k) for every k = 0..n (columns) and every p in `p` (rows).

    From log C(n, k) + k log p + (n - k) log(1 - p): each term to about n * 1e-15 of its own
    size (the logs' rounding), the accuracy SciPy's binomial functions have at these n."""
    p = np.asarray(p, dtype=float).reshape(-1, 1)
    k = np.arange(n + 1, dtype=float)[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        # 0 * log(0) is 0: no event at rate 0, no non-event at rate 1.
        events = np.where(k == 0, 0.0, k * np.log(p))
        others = np.where(k == n, 0.0, (n - k) * np.log1p(-p))
    return np.exp(log_comb(n)[None, :] + events + others)


def binom_tails(n: int, p: np.ndarray) -> np.ndarray:
    """P(Bin(n, p) >= c) for c = 0..n + 1 (columns; the last is 0) and every p (rows).

    Each tail is summed from its small side, the smallest terms first: an upper tail below
    one half from the top down, one above as one minus the lower tail, so both are accurate
    to their own size, or to a few ulps of 1."""
    pmf = binom_pmf_all(n, p)
    rows = pmf.shape[0]
    upper = np.zeros((rows, n + 2))
    upper[:, : n + 1] = np.cumsum(pmf[:, ::-1], axis=1)[:, ::-1]
    lower = np.zeros((rows, n + 2))  # P(X <= c - 1)
    lower[:, 1:] = np.cumsum(pmf, axis=1)
    return np.where(upper <= 0.5, upper, 1.0 - lower)


def normal_cdf(z: float) -> float:
    """P(Z <= z) for a standard normal Z."""
    return 0.5 * math.erfc(-z * _SQRT_HALF)


def normal_isf(tail: float) -> float:
    """The z with P(Z > z) = tail, for 0 < tail < 1.

    A rational first guess (Abramowitz and Stegun 26.2.23, within 4.5e-4) refined by Halley's
    method on P(Z > z) - tail, computed from the complementary error function in the tail and
    from the error function near the centre, so it is accurate to its own size: two or three
    steps reach the closest doubles.
    """
    if not 0.0 < tail < 1.0:
        if tail == 0.0:
            return math.inf
        if tail == 1.0:
            return -math.inf
        raise ValueError(f"tail must be in [0, 1], got {tail}")
    if tail > 0.5:
        return -normal_isf(1.0 - tail)  # exact: 1 - tail loses nothing for tail in [0.5, 1]
    if tail == 0.5:
        return 0.0
    t = math.sqrt(-2.0 * math.log(tail))
    z = t - (2.515517 + t * (0.802853 + t * 0.010328)) / (
        1.0 + t * (1.432788 + t * (0.189269 + t * 0.001308))
    )
    for _ in range(8):
        density = math.exp(-0.5 * z * z) / _SQRT_2PI
        if density == 0.0:
            break
        if tail > 0.25:  # near the centre P(Z > z) - tail is (0.5 - tail) - erf / 2: exact terms
            residual = (0.5 - tail) - 0.5 * math.erf(z * _SQRT_HALF)
        else:
            residual = 0.5 * math.erfc(z * _SQRT_HALF) - tail
        ratio = residual / density
        step = ratio / (1.0 - 0.5 * z * ratio)
        z += step
        if abs(step) <= 1e-17 * max(1.0, abs(z)):
            break
    return z


def brent_root(
    f: Callable[[float], float],
    a: float,
    b: float,
    *,
    xtol: float = 1e-12,
    rtol: float = 1e-12,
    maxiter: int = 200,
) -> float:
    """A root of `f` in [a, b], where f(a) and f(b) have opposite signs (Brent, 1973).

    Inverse quadratic or secant steps while they make progress, bisection otherwise; stops
    when the bracket is within xtol + rtol * |x| (the convention SciPy's `brentq` uses).
    """
    fa, fb = f(a), f(b)
    if fa == 0.0:
        return a
    if fb == 0.0:
        return b
    if (fa > 0.0) == (fb > 0.0):
        raise ValueError("f(a) and f(b) must have opposite signs")
    # b is the best estimate, a the previous one, c the point that brackets the root with b.
    c, fc = a, fa
    step = previous = b - a
    for _ in range(maxiter):
        if (fb > 0.0) == (fc > 0.0):
            c, fc = a, fa
            step = previous = b - a
        if abs(fc) < abs(fb):  # keep b the end with the smaller residual
            a, b, c = b, c, b
            fa, fb, fc = fb, fc, fb
        tolerance = 0.5 * (xtol + rtol * abs(b))
        middle = 0.5 * (c - b)
        if fb == 0.0 or abs(middle) <= tolerance:
            return b
        if abs(previous) >= tolerance and abs(fa) > abs(fb):
            s = fb / fa
            if a == c:  # secant
                p, q = 2.0 * middle * s, 1.0 - s
            else:  # inverse quadratic interpolation through a, b and c
                q, r = fa / fc, fb / fc
                p = s * (2.0 * middle * q * (q - r) - (b - a) * (r - 1.0))
                q = (q - 1.0) * (r - 1.0) * (s - 1.0)
            if p > 0.0:
                q = -q
            else:
                p = -p
            # Accept the interpolation only inside the bracket and when it shrinks fast enough.
            if 2.0 * p < min(3.0 * middle * q - abs(tolerance * q), abs(previous * q)):
                previous, step = step, p / q
            else:
                previous = step = middle
        else:
            previous = step = middle
        a, fa = b, fb
        b += step if abs(step) > tolerance else math.copysign(tolerance, middle)
        fb = f(b)
    return b
