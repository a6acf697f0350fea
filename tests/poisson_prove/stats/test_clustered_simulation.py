"""Section 7's promises, checked by simulation: benchmarks of heterogeneous cases (failure
probabilities drawn from a Beta, repeats alike within a case up to always), paired runs.

- No change: the share of comparisons whose pooled row says "worse" stays at or below q (plus
  three simulation standard errors), where counting (case, repeat) pairs as independent
  (McNemar over the pairs) calls far more.
- A true change equal to the plan's MDE at within-case correlation 1: flagged at least 4 times
  in 5 (less three simulation standard errors).
"""

from __future__ import annotations

import numpy as np
import pytest

from poisson_prove.stats.clustered import sign_flip
from poisson_prove.stats.power import design_mde
from poisson_prove.stats.tests import mcnemar_many

Q = 0.05
RUNS = 1500


def _benchmark_pair(rng: np.random.Generator, cases: int, repeats: int, alike: float, shift: float):
    """Per-case (b_k, c_k) of one paired comparison. Each case has its own failure probability
    (after the change, shifted by `shift`); with probability `alike` a case answers every repeat
    of a run alike, as a temperature-0 or cached model does, while the other run draws its own
    answer (the harshest case for counting repeats as evidence); otherwise each repeat draws anew."""
    p = rng.beta(0.4, 0.6, size=cases)
    after_p = np.clip(p + shift, 0.0, 1.0)
    alike_case = (rng.random(cases) < alike)[:, None]
    before = np.where(
        alike_case, rng.random((cases, 1)) < p[:, None], rng.random((cases, repeats)) < p[:, None]
    )
    after = np.where(
        alike_case, rng.random((cases, 1)) < after_p[:, None], rng.random((cases, repeats)) < after_p[:, None]
    )
    b = np.sum(before & ~after, axis=1)
    c = np.sum(~before & after, axis=1)
    return b, c


@pytest.mark.slow
@pytest.mark.parametrize(
    ("cases", "repeats", "alike"), [(40, 5, 1.0), (100, 3, 0.5), (60, 1, 0.0), (200, 2, 0.8)]
)
def test_no_change_keeps_false_worse_at_or_below_q(cases: int, repeats: int, alike: float) -> None:
    rng = np.random.default_rng(cases * 31 + repeats)
    worse = naive_worse = 0
    for _ in range(RUNS):
        b, c = _benchmark_pair(rng, cases, repeats, alike, 0.0)
        result = sign_flip(b, c)
        worse += result.p_mid <= Q and result.c > result.b
        naive = float(mcnemar_many(np.array([b.sum()]), np.array([c.sum()]))[0][0])
        naive_worse += naive <= Q and c.sum() > b.sum()
    bound = Q + 3 * np.sqrt(Q * (1 - Q) / RUNS)
    assert worse / RUNS <= bound, (worse / RUNS, bound)
    if alike == 1.0:
        assert naive_worse / RUNS > 2 * bound  # what counting the (case, repeat) pairs claimed


@pytest.mark.slow
@pytest.mark.parametrize(("cases", "repeats"), [(100, 3), (60, 5), (300, 1)])
def test_a_change_of_the_planned_mde_is_seen_four_times_in_five(cases: int, repeats: int) -> None:
    plan = design_mde(cases, 1, 1, q=Q, max_mde=0.2)  # the plan's MDE at within-case correlation 1
    assert plan.mde is not None
    rng = np.random.default_rng(cases + repeats)
    seen = 0
    for _ in range(RUNS):
        before = rng.random(cases) < plan.base_rate  # every repeat of a case alike (rho = 1)
        after = rng.random(cases) < plan.base_rate + plan.mde
        b = np.where(before & ~after, repeats, 0)
        c = np.where(~before & after, repeats, 0)
        result = sign_flip(b, c)
        seen += result.p_mid <= Q and result.c > result.b
    assert seen / RUNS >= 0.8 - 3 * np.sqrt(0.16 / RUNS), seen / RUNS
