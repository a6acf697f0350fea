"""Group-sequential McNemar: exact alpha-spending boundaries on the discordant pairs.

Under no change each discordant pair is "after only" with probability 1/2, independently of
the others and of how many pairs turned out discordant, so the count c among d discordant pairs
is Binomial(d, 1/2) at every look. Boundaries are found by exact dynamic programming over the
paths that have not yet stopped, spending alpha by the O'Brien-Fleming-type Lan-DeMets
function of the replicate fraction. See docs/statistics.md, "Sequential stopping".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from poisson_prove.stats.distributions import binom_pmf, normal_cdf, normal_isf
from poisson_prove.stats.tests import mcnemar

_SLACK = 1e-12  # rounding allowance when comparing spent probability with the budget


@dataclass(frozen=True, slots=True)
class SequentialResult:
    """The sequential test after the looks it saw.

    `p` is the stage-wise ordering p-value (exact under no change); `crossed_look` is the
    0-based look at which a boundary was crossed (None if none); `direction` is "rose",
    "fell" or None; `radii[k]` is the rejection radius on |2c - d| at look k (d + 1 when that
    look rejects nothing); `spent` is the null probability of crossing at or before the last
    look evaluated.
    """

    p: float
    crossed_look: int | None
    direction: str | None
    radii: tuple[int, ...]
    spent: float


def spent_alpha(fraction: float, alpha: float) -> float:
    """O'Brien-Fleming-type spending: 2 - 2 Phi(z_{1-alpha/2} / sqrt(t)); all of alpha at t >= 1."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if fraction <= 0.0:
        return 0.0
    if fraction >= 1.0:
        return alpha
    z = float(normal_isf(alpha / 2.0))
    return float(min(alpha, 2.0 - 2.0 * float(normal_cdf(z / math.sqrt(fraction)))))


def _half_binomial(n: int) -> np.ndarray:
    return np.asarray(binom_pmf(np.arange(n + 1), n, 0.5), dtype=float)


def sequential_mcnemar(
    looks: Sequence[tuple[int, int]], fractions: Sequence[float], alpha: float
) -> SequentialResult:
    """Run the group-sequential McNemar test over cumulative (b, c) counts at each look.

    `fractions[k]` is the share of the planned replicates reached at look k (the last look of a
    run that reached its plan is 1). Looks after a crossing are ignored.
    """
    if len(looks) != len(fractions) or not looks:
        raise ValueError("need one replicate fraction per look, and at least one look")
    survivors = np.ones(1)  # null probability of each c among paths not yet stopped
    spent, d_prev, frac_prev = 0.0, 0, 0.0
    radii: list[int] = []
    for k, ((b, c), frac) in enumerate(zip(looks, fractions, strict=True)):
        d = int(b) + int(c)
        if b < 0 or c < 0 or d < d_prev or frac < frac_prev:
            raise ValueError("looks must be cumulative: counts and fractions never decrease")
        survivors = np.convolve(survivors, _half_binomial(d - d_prev))
        distance = np.abs(2 * np.arange(d + 1) - d)
        budget = spent_alpha(frac, alpha) - spent
        # Tail mass at each radius r = P(survive and |2c - d| >= r), r = 0..d + 1.
        by_radius = np.bincount(distance, weights=survivors, minlength=d + 2)
        tail = np.cumsum(by_radius[::-1])[::-1]
        allowed = np.nonzero(tail[1:] <= budget + _SLACK)[0]
        radius = int(allowed[0]) + 1 if allowed.size else d + 1
        radii.append(radius)
        observed = abs(2 * int(c) - d)
        p_here = spent + float(tail[observed])
        crossing = float(tail[radius]) if radius <= d else 0.0
        if observed >= radius:
            direction = "rose" if 2 * int(c) > d else "fell"
            return SequentialResult(min(1.0, p_here), k, direction, tuple(radii), spent + crossing)
        spent += crossing
        survivors = np.where(distance >= radius, 0.0, survivors)
        d_prev, frac_prev = d, frac
    return SequentialResult(min(1.0, p_here), None, None, tuple(radii), spent)


def fixed_mcnemar_exact_p(b: int, c: int) -> float:
    """The fixed design's exact two-sided McNemar p (for comparing the two designs)."""
    return mcnemar(b, c).p_exact
