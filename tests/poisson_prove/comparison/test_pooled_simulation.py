"""STATISTICS.md section 7, through compare() on generated runs: benchmarks whose cases differ
(Beta-distributed failure probabilities) and whose repeats of one case agree up to always, with
no change between the runs, paired. The pooled row must say worse in at most q of the
comparisons (+3 standard errors of simulation); the same data counted by (case, repeat) pair,
McNemar over the summed b and c, says worse far more often (so this simulation can tell a test
that counts by case from one that does not).

Each run is written into a real store (RunStore + RunWriter) with a stored spec declaring the
case axis. A run's episode draws: with probability `twin` the twins of a pair share their draw
(a seeded agent answers its seed alike), otherwise the run draws its own, sharing its case's draw
with probability `agree` (a hard case is hard every time; 1: a temperature-0 or cached model).
Both runs are generated the same way, so under no change they are exchangeable.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import poisson_prove
from poisson_prove.stats import tests as stats_tests
from tests.poisson_prove.comparison.cases_kit import benchmark_episodes, write_benchmark

CASES, REPEATS = 40, 4
SETTINGS = ((0.0, 1.0), (0.3, 0.9), (0.0, 0.6), (0.5, 1.0))  # (twin, agree) cycled over the runs


def _draws(rng: np.random.Generator, shared: np.ndarray, twin: float, agree: float) -> np.ndarray:
    own_case = rng.random((CASES, 1))
    own = np.where(rng.random((CASES, REPEATS)) < agree, own_case, rng.random((CASES, REPEATS)))
    return np.where(rng.random((CASES, REPEATS)) < twin, shared, own)


def _outcomes(u: np.ndarray, unresolved: np.ndarray, timeout: np.ndarray) -> list[list[str]]:
    names = np.where(
        u < unresolved[:, None], "unresolved", np.where(u > 1 - timeout[:, None], "timeout", "resolved")
    )
    return names.tolist()


@pytest.mark.slow
def test_no_change_says_worse_in_at_most_q_of_comparisons_counted_by_case(tmp_path: Path) -> None:
    rng = np.random.default_rng(20261201)
    runs = 240
    worse = naive_worse = 0
    for i in range(runs):
        twin, agree = SETTINGS[i % len(SETTINGS)]
        unresolved = 0.7 * rng.beta(0.6, 1.2, CASES)
        timeout = 0.25 * rng.beta(0.5, 2.0, CASES)
        shared = rng.random((CASES, REPEATS))
        store = tmp_path / f"s{i}"
        runs_of = [
            benchmark_episodes(_outcomes(_draws(rng, shared, twin, agree), unresolved, timeout))
            for _ in range(2)
        ]
        before = write_benchmark(store, runs_of[0], batches=1)
        after = write_benchmark(store, runs_of[1], paired_with=before, batches=1)
        comparison = poisson_prove.compare(before.run_id, after.run_id, store=store)
        assert comparison.pooled_test == "sign_flip" and comparison.tests == 2
        worse += comparison.any_worse
        # the same pairs counted as if each (case, repeat) were independent evidence
        rows = comparison.conditions[0].outcomes
        p = [stats_tests.mcnemar(row.b, row.c).p_mid for row in rows]
        q = stats_tests.benjamini_hochberg(p)
        naive_worse += any(qv <= 0.05 and row.c > row.b for qv, row in zip(q, rows, strict=True))
    bound = 0.05 + 3 * math.sqrt(0.05 * 0.95 / runs)
    share, naive = worse / runs, naive_worse / runs
    print(f"no change: pooled row worse in {share:.3f}, pairs counted as independent {naive:.3f}")
    assert share <= bound, share
    assert naive > bound, naive  # the simulation is one where counting pairs goes wrong
