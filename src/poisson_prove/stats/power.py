"""Design power: exact power of the two-sided Fisher test and the minimum detectable effect.

Definitions follow the statistics contract, section 1 (see docs/statistics.md):
two independent arms of `n` replicates, a two-sided Fisher exact test at level `alpha`,
power to flag a rise p0 -> p0 + d, and the smallest grid change (0.0001 steps) flagged at
least 4 times in 5.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import numpy as np

from poisson_prove.errors import ProveError, ProveExit
from poisson_prove.stats.numerics import binom_pmf_all, binom_tails, brent_root, normal_cdf, normal_isf
from poisson_prove.stats.rejection import check_n_alpha, fisher_rejection_cutoffs

# Beyond this many replicates per arm the exact planner becomes quadratic in memory and time:
# the continuity-corrected normal formula (Fleiss, Tytun and Ury) takes over.
EXACT_LIMIT = 2000
GRID = 10_000  # MDE grid: steps of 0.0001
TARGET_POWER = 0.8
BASE_RATES = tuple(round(0.1 * i, 1) for i in range(11))
# The normal approximation makes huge designs cheap to check; beyond this, give up.
_MAX_REPLICATES = 2**31
_TIE = 1e-9  # relative tolerance under which two powers or roots count as tied


@dataclass(frozen=True, slots=True)
class MDE:
    """Minimum detectable effect at one base rate.

    `mde` is the smallest grid change (0.0001 steps) whose power reaches the target, i.e.
    the root rounded up to 4 decimals; `exact` is the unrounded root.
    """

    mde: float
    exact: float
    base_rate: float
    direction: str
    approximate: bool


@dataclass(frozen=True, slots=True)
class DesignMDE:
    """Whether a design (conditions x failure outcomes, n replicates) can catch `max_mde`."""

    mde: float | None
    exact: float | None
    base_rate: float
    direction: str
    passes: bool
    max_mde: float
    tests: int
    alpha: float
    q: float
    replicates: int
    approximate: bool
    worst_exact: float | None  # worst case over every base (the reported base may differ)


def _exact_power(p0: float, d: np.ndarray, n: int, alpha: float) -> np.ndarray:
    """Exact power for every change in `d` (vectorized over d)."""
    cutoffs = fisher_rejection_cutoffs(n, alpha)
    weights = binom_pmf_all(n, np.array([p0]))[0]
    p1 = np.clip(p0 + np.asarray(d, dtype=float), 0.0, 1.0)
    # P(Bin(n, p1) >= cutoff) for every x1 (a cutoff of n + 1 contributes nothing).
    return binom_tails(n, p1)[:, cutoffs] @ weights


def _normal_power(p0: float, d: np.ndarray, n: int, alpha: float) -> np.ndarray:
    """Continuity-corrected normal power (Fleiss, Tytun and Ury 1980), vectorized over d."""
    d = np.asarray(d, dtype=float)
    p1 = p0 + d
    p_bar = (p0 + p1) / 2.0
    z_alpha = normal_isf(alpha / 2.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        # Invert n_cc = n'/4 (1 + sqrt(1 + 4/(n' d)))^2 for the uncorrected n'.
        n_plain = np.where(d > 0, (n - 1.0 / d) ** 2 / n, 0.0)
        n_plain = np.where(n - 1.0 / np.where(d > 0, d, 1.0) > 0, n_plain, 0.0)
        spread = np.sqrt(p0 * (1 - p0) + p1 * (1 - p1))
        z_beta = (np.sqrt(n_plain) * d - z_alpha * np.sqrt(2 * p_bar * (1 - p_bar))) / spread
    power = np.array([normal_cdf(z) for z in np.ravel(z_beta)]).reshape(np.shape(z_beta))
    return np.where((d > 0) & (spread > 0), power, np.where(d > 0, 1.0, alpha))


def _power_vector(p0: float, d: np.ndarray, n: int, alpha: float) -> np.ndarray:
    if n > EXACT_LIMIT:
        return _normal_power(p0, d, n, alpha)
    return _exact_power(p0, d, n, alpha)


def power_of_rise(p0: float, d: float, n: int, alpha: float) -> float:
    """Power of the two-sided Fisher test at `alpha` to flag a rise p0 -> p0 + d (n per arm).

    Exact up to 2000 replicates per arm (a sum over x1 of Bin(n, p0) times a binomial tail);
    beyond, the continuity-corrected normal approximation.
    """
    check_n_alpha(n, alpha)
    if not 0.0 <= p0 <= 1.0 or d < 0.0 or p0 + d > 1.0 + 1e-12:
        raise ValueError(f"need 0 <= p0 <= p0 + d <= 1, got p0={p0}, d={d}")
    if n == 0:
        return 0.0
    return float(_power_vector(p0, np.array([d]), n, alpha)[0])


def _rise_mde(
    p0: float, n: int, alpha: float, target: float, *, root: bool = True
) -> tuple[int, float] | None:
    """(grid step, unrounded root) of the smallest rise from p0 with power >= target.

    With `root=False` the root is not solved for and the grid value stands in for it.
    """
    top = round((1.0 - p0) * GRID)
    if n == 0 or top <= 0:
        return None

    def power_at(step: int) -> float:
        return float(_power_vector(p0, np.array([step / GRID]), n, alpha)[0])

    if power_at(top) < target:
        return None
    # Exact power is nondecreasing in d (each binomial tail grows with its rate), so
    # bisection on [0, top] finds the first grid step reaching the target.
    low, high = 0, top  # power(low) < target <= power(high)
    while high - low > 1:
        mid = (low + high) // 2
        if power_at(mid) >= target:
            high = mid
        else:
            low = mid
    # Local scan below the bracket: guards against a non-monotone step in the approximate
    # regime or rounding at the boundary.
    window = np.arange(max(1, high - 20), high)
    if window.size:
        below = _power_vector(p0, window / GRID, n, alpha)
        reached = np.nonzero(below >= target)[0]
        if reached.size:
            high = int(window[reached[0]])
            low = high - 1
    lo_d, hi_d = low / GRID, high / GRID
    if not root:
        return high, hi_d
    f_lo = float(_power_vector(p0, np.array([lo_d]), n, alpha)[0]) - target
    f_hi = float(_power_vector(p0, np.array([hi_d]), n, alpha)[0]) - target
    if f_hi <= 0.0 or f_lo >= 0.0:
        found = hi_d
    else:
        found = brent_root(
            lambda d: float(_power_vector(p0, np.array([d]), n, alpha)[0]) - target,
            lo_d,
            hi_d,
            xtol=1e-12,
            rtol=1e-12,
        )
    return high, float(found)


def mde(
    p0: float,
    n: int,
    alpha: float,
    *,
    direction: str = "rise",
    power: float = TARGET_POWER,
    exact_root: bool = True,
) -> MDE | None:
    """The smallest change from base rate `p0` flagged with at least `power` (n per arm).

    `direction` is "rise" or "fall"; a fall at p0 is a rise at 1 - p0. None when even the
    largest change possible (to 1, or to 0 for a fall) falls short. With
    `exact_root=False`, `exact` is the grid value (the unrounded root is not solved for).
    """
    check_n_alpha(n, alpha)
    if direction not in ("rise", "fall"):
        raise ValueError(f"direction must be 'rise' or 'fall', got {direction!r}")
    if not 0.0 <= p0 <= 1.0:
        raise ValueError(f"p0 must be in [0, 1], got {p0}")
    # Rounded so that a fall at 0.7 is the rise at exactly 0.3, not 0.30000000000000004.
    rise_base = p0 if direction == "rise" else round(1.0 - p0, 12)
    found = _rise_mde(rise_base, n, alpha, power, root=exact_root)
    if found is None:
        return None
    step, root = found
    return MDE(
        mde=round(step / GRID, 4),
        exact=root,
        base_rate=p0,
        direction=direction,
        approximate=n > EXACT_LIMIT,
    )


def condition_mde(before_rate: float, n: int, alpha: float) -> tuple[MDE | None, MDE | None]:
    """(rise, fall) MDE at a condition's observed before-rate and its n: the smallest change
    that condition could have shown. Only the grid values are computed: `exact` equals `mde`."""
    rate = min(1.0, max(0.0, float(before_rate)))
    return (
        mde(rate, n, alpha, direction="rise", exact_root=False),
        mde(rate, n, alpha, direction="fall", exact_root=False),
    )


def design_mde(
    n: int,
    conditions: int,
    failure_outcomes: int,
    *,
    q: float = 0.05,
    max_mde: float = 0.2,
) -> DesignMDE:
    """Plan check: can one condition alone changing by `max_mde` be caught 4 times in 5?

    m = conditions x failure_outcomes tests at alpha = q / m; rises from the base rates
    0.0, 0.1, ..., 1.0 (a fall at p0 is a rise at 1 - p0, so rises cover both directions).
    The worst case is the largest unrounded root (ties to the lowest base); a base where not
    even a rise to 1 is caught counts as worse than any root.
    """
    tests = _check_design(conditions, failure_outcomes, q, max_mde)
    alpha = q / tests
    approximate = n > EXACT_LIMIT
    per_base = [(base, mde(base, n, alpha)) for base in BASE_RATES]
    defined = [(base, found) for base, found in per_base if found is not None]
    worst: tuple[float, MDE] | None = None
    for base, found in defined:
        if worst is None or found.exact > worst[1].exact * (1 + _TIE):
            worst = (base, found)
    # A base whose MDE is undefined only fails the design when the largest possible change
    # there is within what the user accepts.
    undefined_within = any(found is None and base + max_mde <= 1.0 + 1e-12 for base, found in per_base)
    passes = worst is not None and not undefined_within and worst[1].mde <= max_mde + 1e-9
    worst_exact = worst[1].exact if worst is not None else None

    def reported(base: float, found: MDE | None, passed: bool) -> DesignMDE:
        return DesignMDE(
            mde=found.mde if found else None,
            exact=found.exact if found else None,
            base_rate=base,
            direction="rise",
            passes=passed,
            max_mde=max_mde,
            tests=tests,
            alpha=alpha,
            q=q,
            replicates=n,
            approximate=approximate,
            worst_exact=worst_exact,
        )

    if passes and worst is not None:
        return reported(worst[0], worst[1], True)
    # Failing: report the base where a change of exactly max_mde has the least power.
    candidates = [base for base in BASE_RATES if base + max_mde <= 1.0 + 1e-12]
    if not candidates:
        candidates = [BASE_RATES[0]]
    powers = [
        power_of_rise(base, min(max_mde, 1.0 - base), n, alpha) if n > 0 else 0.0 for base in candidates
    ]
    # Mirror-image bases (rise from 0.0 by d, rise from 1 - d to 1) have equal power up to
    # rounding: compare with a relative tolerance so that ties go to the lowest base.
    least = min(powers)
    weakest = next(b for b, pw in zip(candidates, powers, strict=True) if pw <= least * (1 + _TIE) + 1e-300)
    return reported(weakest, dict(per_base)[weakest], False)


def suggested_max_mde(design: DesignMDE) -> float | None:
    """The worst-case MDE over every base rounded UP to 3 decimals (the `--max-mde` to accept
    this design as it is); None when some base cannot be caught at all."""
    if design.worst_exact is None:
        return None
    # Round up on the grid value first so that 0.1991 -> 0.2, never 0.199 from float noise.
    grid_value = math.ceil(round(design.worst_exact * GRID, 6)) / GRID
    return math.ceil(round(grid_value * 1000, 6)) / 1000


def replicates_needed(
    conditions: int,
    failure_outcomes: int,
    *,
    q: float = 0.05,
    max_mde: float = 0.2,
    start: int = 1,
    run_length: int = 30,
) -> int:
    """The smallest N such that the design passes at N and at every larger N.

    Power is a saw-tooth in N, so the first passing N is not enough: scan upward until
    `run_length` consecutive N pass and return the first of that run.
    """
    tests = _check_design(conditions, failure_outcomes, q, max_mde)
    alpha = q / tests

    @cache
    def passes(n: int) -> bool:  # the search asks about some N twice
        return _passes_fast(n, alpha, max_mde)

    # Jump to near the first pass by doubling then bisection (assumes rough monotonicity);
    # the upward scan below then settles the saw-tooth exactly.
    low, high = max(1, start), max(1, start)
    while not passes(high):
        low, high = high, high * 2
        if high > _MAX_REPLICATES:
            raise ProveError(
                f"no number of replicates up to {_MAX_REPLICATES:,} catches a change of {max_mde}",
                suggestions=["accept a larger change with --max-mde"],
            )
    while high - low > 1:
        mid = (low + high) // 2
        if passes(mid):
            high = mid
        else:
            low = mid
    # Step back to the first N of a passing run that contains `high`, then scan upward.
    first = high
    while first - 1 >= max(1, start) and passes(first - 1):
        first -= 1
    candidate, streak, n = first, 0, first
    while streak < run_length:
        if passes(n):
            streak += 1
        else:
            candidate, streak = n + 1, 0
        n += 1
    return candidate


def _check_design(conditions: int, failure_outcomes: int, q: float, max_mde: float) -> int:
    """m = conditions x failure outcomes, after checking the design's numbers are usable."""
    tests = int(conditions) * int(failure_outcomes)
    if tests < 1:
        raise ValueError("a design needs at least one condition and one failure outcome")
    # q and max-mde come from the command line: wrong values are the user's to fix.
    if not 0.0 < q < 1.0:
        raise ProveError(f"q must be a fraction between 0 and 1, got {q}", exit_code=ProveExit.USAGE)
    if not 1.0 / GRID <= max_mde <= 1.0:
        raise ProveError(
            f"max-mde must be a fraction between 0.0001 and 1, got {max_mde}", exit_code=ProveExit.USAGE
        )
    return tests


def _passes_fast(n: int, alpha: float, max_mde: float) -> bool:
    """Does the design pass at n? Power at exactly max_mde from every base reaches the target.

    Equivalent to "worst MDE <= max_mde" because power is nondecreasing in the change, and
    far cheaper than computing every root.
    """
    # The MDE is a grid value, so "MDE <= max_mde" is "power at max_mde floored to the grid".
    grid_max = math.floor(round(max_mde * GRID, 6)) / GRID
    for base in BASE_RATES:
        # A base with less room than max_mde is caught there or not at all: never a failure.
        if base + max_mde > 1.0 + 1e-12:
            continue
        if float(_power_vector(base, np.array([grid_max]), n, alpha)[0]) < TARGET_POWER:
            return False
    return True
