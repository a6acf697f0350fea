"""The group-sequential McNemar test: brute force over every path, and simulated validity/power."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.stats import binomtest

from poisson_prove.stats.power import power_of_rise
from poisson_prove.stats.sequential import sequential_mcnemar, spent_alpha


def test_one_final_look_is_the_fixed_exact_mcnemar() -> None:
    for b, c in [(0, 0), (3, 9), (10, 25), (20, 20), (31, 12)]:
        result = sequential_mcnemar([(b, c)], [1.0], 0.05)
        expected = binomtest(c, b + c, 0.5).pvalue if b + c else 1.0
        assert result.p == pytest.approx(expected, abs=1e-9)


def test_spending_reaches_alpha_at_the_plan_and_grows() -> None:
    values = [spent_alpha(t, 0.05) for t in (0.1, 0.25, 0.5, 0.75, 1.0)]
    assert values == sorted(values)
    assert values[-1] == 0.05 and values[0] < 1e-6


@pytest.mark.parametrize("schedule", [(4, 9, 14), (6, 6, 12), (2, 5, 8, 13)])
def test_brute_force_every_sign_path(schedule: tuple[int, ...]) -> None:
    """Enumerate every sign sequence of the discordant pairs: the chance of any crossing is at
    most alpha, equals what the recursion says it spent, and the p-value is super-uniform.

    A sequence is seen only through its counts at the looks, so the 2**total sequences are
    enumerated as their count paths, each path standing for the comb(...) sequences that give
    it (the same sums, a few hundred calls instead of 2**total)."""
    alpha = 0.1
    total = schedule[-1]
    fractions = [d / total for d in schedule]
    steps = [later - earlier for earlier, later in zip((0, *schedule[:-1]), schedule, strict=True)]
    ps: list[float] = []
    sequences: list[int] = []  # how many sign sequences give each path
    crossed = 0
    for adds in itertools.product(*(range(step + 1) for step in steps)):
        many = math.prod(math.comb(step, add) for step, add in zip(steps, adds, strict=True))
        cumulative = list(itertools.accumulate(adds))
        looks = [(d - c, c) for d, c in zip(schedule, cumulative, strict=True)]
        result = sequential_mcnemar(looks, fractions, alpha)
        ps.append(result.p)
        sequences.append(many)
        crossed += many * (result.crossed_look is not None)
    assert sum(sequences) == 2**total  # every sequence, each once
    weight = 0.5**total
    assert crossed * weight <= alpha + 1e-12
    # What the recursion spent along a never-crossing path equals the brute-force crossing mass.
    quiet = sequential_mcnemar([(d // 2, d - d // 2) for d in schedule], fractions, alpha)
    assert quiet.crossed_look is None
    assert quiet.spent == pytest.approx(crossed * weight, abs=1e-12)
    p = np.array(ps)
    mass = np.array(sequences, dtype=float) * weight
    for u in np.unique(p):
        assert mass[p <= u].sum() <= u + 1e-9


def _simulate(
    p0: float, d: float, n: int, looks: int, alpha: float, runs: int, seed: int
) -> tuple[float, float]:
    """(sequential, fixed McNemar) rejection shares for paired runs with independent twins."""
    rng = np.random.default_rng(seed)
    before = rng.random((runs, n)) < p0
    after = rng.random((runs, n)) < p0 + d
    b = np.cumsum(before & ~after, axis=1)
    c = np.cumsum(after & ~before, axis=1)
    cut = [round(n * (k + 1) / looks) for k in range(looks)]
    seq = fixed = 0
    for r in range(runs):
        steps = [(int(b[r, i - 1]), int(c[r, i - 1])) for i in cut]
        seq += sequential_mcnemar(steps, [i / n for i in cut], alpha).crossed_look is not None
        fixed += sequential_mcnemar(steps[-1:], [1.0], alpha).p <= alpha
    return seq / runs, fixed / runs


def test_no_change_stays_within_alpha_despite_repeated_looks() -> None:
    runs, alpha = 4000, 0.05
    rate, _ = _simulate(0.4, 0.0, 60, 6, alpha, runs, seed=1)
    assert rate <= alpha + 3 * np.sqrt(alpha * (1 - alpha) / runs)


def test_power_at_the_planned_mde_is_at_least_the_fixed_design() -> None:
    """The plan's fixed design (Fisher, two independent arms) has power >= 0.8 at its MDE;
    the sequential paired test at the same replicates keeps at least that."""
    n, alpha, mde = 194, 0.05 / 18, 0.1991
    planned = power_of_rise(0.4, mde, n, alpha)
    runs = 1500
    rate, _ = _simulate(0.4, mde, n, 5, alpha, runs, seed=2)
    assert rate >= planned - 3 * np.sqrt(planned * (1 - planned) / runs)
