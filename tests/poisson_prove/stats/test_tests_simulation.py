"""Section 5 of the statistics contract, by simulation: under no change the share of
comparisons calling anything worse stays at or below q; a change of the planned MDE is
flagged at least 4 times in 5 (both within simulation error)."""

from __future__ import annotations

import functools
import math

import numpy as np

from poisson_prove.stats.power import design_mde
from poisson_prove.stats.tests import benjamini_hochberg, fisher_two_sided, mcnemar_many

CONDITIONS, OUTCOMES, Q, REPLICATES = 9, 2, 0.05, 194
# Per condition: probabilities of (no failure, failure A, failure B).
# Condition 0 has failure A at the worst base rate of the plan, 0.4: the hardest to move.
BASES = np.array(
    [[0.6, 0.4, 0.0]] + [[0.6 - 0.05 * i, 0.3 + 0.02 * i, 0.1 + 0.03 * i] for i in range(1, CONDITIONS)]
)


def _paired_outcomes(rng: np.random.Generator, runs: int, probs: np.ndarray, keep: float):
    """Before and after outcomes of paired episodes: the same seed gives the same outcome with
    probability `keep` (an agent's own randomness does the rest), else an independent draw."""
    shape = (runs, REPLICATES)
    before = (rng.random(shape)[..., None] > np.cumsum(probs)).sum(axis=-1)
    redraw = (rng.random(shape)[..., None] > np.cumsum(probs)).sum(axis=-1)
    after = np.where(rng.random(shape) < keep, before, redraw)
    return before, after


def _paired_worse(
    rng: np.random.Generator,
    runs: int,
    shifted_condition: int | None,
    shift: float,
    keep: float,
    adjust: bool = True,
) -> np.ndarray:
    """For each simulated comparison, which (condition, outcome) McNemar + BH calls worse."""
    b = np.zeros((runs, CONDITIONS, OUTCOMES), dtype=np.int64)
    c = np.zeros_like(b)
    for cond in range(CONDITIONS):
        before, after = _paired_outcomes(rng, runs, BASES[cond], keep)
        if cond == shifted_condition:
            # Move `shift` of the probability mass from "no failure" to failure A, after only.
            promote = (after == 0) & (rng.random(after.shape) < shift / BASES[cond][0])
            after = np.where(promote, 1, after)
        for k in range(OUTCOMES):
            b[:, cond, k] = np.sum((before == k + 1) & (after != k + 1), axis=1)
            c[:, cond, k] = np.sum((after == k + 1) & (before != k + 1), axis=1)
    p_mid, _ = mcnemar_many(b.reshape(-1), c.reshape(-1))
    rows = p_mid.reshape(runs, -1)
    q_values = np.vstack([benjamini_hochberg(row) for row in rows]) if adjust else rows
    worse = (q_values <= Q) & (c.reshape(runs, -1) > b.reshape(runs, -1))
    return worse.reshape(runs, CONDITIONS, OUTCOMES)


def test_unchanged_paired_agent_is_called_worse_at_most_q_of_the_time() -> None:
    runs = 2000
    worse = _paired_worse(np.random.default_rng(20261129), runs, None, 0.0, keep=0.5)
    share = worse.any(axis=(1, 2)).mean()
    assert share <= Q + 3 * math.sqrt(Q * (1 - Q) / runs), share


def test_the_error_rate_check_fails_for_a_procedure_without_bh() -> None:
    # The bound above can fail: the same simulation with raw p <= q (18 tests, no
    # adjustment) calls an unchanged agent worse far more often than q.
    runs = 2000
    worse = _paired_worse(np.random.default_rng(20261129), runs, None, 0.0, keep=0.5, adjust=False)
    assert worse.any(axis=(1, 2)).mean() > Q + 3 * math.sqrt(Q * (1 - Q) / runs)


def test_the_power_check_fails_for_half_the_planned_mde() -> None:
    # The power bound can fail too: half the planned MDE is flagged well under 4 times in 5.
    design = design_mde(REPLICATES, CONDITIONS, OUTCOMES)
    runs = 1000
    worse = _paired_worse(np.random.default_rng(7), runs, 0, design.mde / 2, keep=0.0)
    assert worse[:, 0, 0].mean() < 0.8 - 3 * math.sqrt(0.16 / runs)


def test_a_paired_change_of_the_planned_mde_is_flagged_four_times_in_five() -> None:
    design = design_mde(REPLICATES, CONDITIONS, OUTCOMES)
    assert design.passes
    runs = 1000
    # Independent pairs (keep = 0) are the hardest case for McNemar: no help from pairing.
    worse = _paired_worse(np.random.default_rng(7), runs, 0, design.mde, keep=0.0)
    flagged = worse[:, 0, 0].mean()
    assert flagged >= 0.8 - 3 * math.sqrt(0.16 / runs), flagged


@functools.cache
def _fisher(before: int, after: int) -> float:
    return fisher_two_sided(before, REPLICATES, after, REPLICATES)


def test_an_unpaired_change_of_the_planned_mde_at_the_worst_base_is_flagged_four_times_in_five() -> None:
    design = design_mde(REPLICATES, CONDITIONS, OUTCOMES)
    rng = np.random.default_rng(11)
    runs = 500
    rates = np.full((CONDITIONS, OUTCOMES), design.base_rate)
    flagged = 0
    for _ in range(runs):
        before = rng.binomial(REPLICATES, rates)
        after_rates = rates.copy()
        after_rates[0, 0] += design.mde
        after = rng.binomial(REPLICATES, after_rates)
        p = np.array(
            [_fisher(int(x), int(y)) for x, y in zip(before.reshape(-1), after.reshape(-1), strict=True)]
        )
        q_values = benjamini_hochberg(p)
        flagged += bool(q_values[0] <= Q and after[0, 0] > before[0, 0])
    share = flagged / runs
    assert share >= 0.8 - 3 * math.sqrt(0.16 / runs), share
