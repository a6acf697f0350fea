"""STATISTICS.md section 5, through compare(): error rate under no change, power at the MDE.

Episodes are simulated straight into a store (no sweeps, so it is fast): 9 conditions x 2
failure outcomes x 194 replicates, the example's design, whose planned worst-case MDE is
0.1991 at base 0.4. Outcomes of twins share a per-seed latent draw part of the time, as a
seeded agent's would. Fixed numpy seed; the bounds allow 3 standard errors of simulation.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

import poisson_prove
from poisson_prove.design.conditions import condition_key
from tests.poisson_prove.runs import Episodes, write_run

TASKS = ("refund", "password", "shipping")
RATES = (0.1, 0.3, 0.55)
REPLICATES = 194
PLANNED_MDE = 0.1991  # STATISTICS.md section 6: n = 194, m = 18
SHIFTED = ("refund", 0.55)


def _episodes(unresolved: np.ndarray, timeout: np.ndarray, latent: np.ndarray, rng) -> Episodes:
    """One run: per condition the rates of unresolved and timeout; twins share `latent`."""
    cells = [(task, rate) for task in TASKS for rate in RATES]
    shared = rng.random(latent.shape[:2]) < 0.6
    draws = np.where(shared[..., None], latent, rng.random(latent.shape))
    outcome = np.where(
        draws[..., 0] < unresolved[:, None],
        "unresolved",
        np.where(draws[..., 1] < timeout[:, None], "timeout", "resolved"),
    )
    episodes = Episodes()
    size = len(cells) * REPLICATES
    episodes.cfg = [{"ticket": task, "temperature": rate} for task, rate in cells for _ in range(REPLICATES)]
    episodes.replicate = list(range(REPLICATES)) * len(cells)
    episodes.outcome = outcome.reshape(-1).tolist()
    episodes.t = rng.integers(1, 20, size).astype(float).tolist()
    episodes.horizon = [20.0] * size
    episodes.case_id = [task for task, _ in cells for _ in range(REPLICATES)]
    episodes.error_kind = episodes.error_message = episodes.meta = episodes.spans = [None] * size
    return episodes


def _simulate(store: Path, rng, shift: float) -> poisson_prove.comparison.result.Comparison:
    cells = [(task, rate) for task in TASKS for rate in RATES]
    unresolved = np.array([0.4 if cell == SHIFTED else 0.05 + 0.3 * cell[1] for cell in cells])
    timeout = np.full(len(cells), 0.1)
    latent = rng.random((len(cells), REPLICATES, 2))
    before = write_run(store, _episodes(unresolved, timeout, latent, rng), batches=1)
    raised = unresolved + np.array([shift if cell == SHIFTED else 0.0 for cell in cells])
    after = write_run(store, _episodes(raised, timeout, latent, rng), paired_with=before, batches=1)
    return poisson_prove.compare(before.run_id, after.run_id, store=store)


def test_no_change_is_called_worse_at_most_q_and_the_planned_mde_is_caught(tmp_path: Path) -> None:
    rng = np.random.default_rng(20261026)
    null_runs = 100
    called_worse = 0
    for i in range(null_runs):
        comparison = _simulate(tmp_path / f"null{i}", rng, 0.0)
        assert comparison.tests == 18 and comparison.method == "mcnemar"
        called_worse += comparison.any_worse
    share = called_worse / null_runs
    q = 0.05
    print(f"no change called worse in {share:.3f} of {null_runs} comparisons")
    assert share <= q + 3 * math.sqrt(q * (1 - q) / null_runs), share

    power_runs = 50
    flagged = 0
    key = condition_key({"ticket": SHIFTED[0], "temperature": SHIFTED[1]})
    for i in range(power_runs):
        comparison = _simulate(tmp_path / f"power{i}", rng, PLANNED_MDE)
        condition = next(c for c in comparison.conditions if c.key == key)
        flagged += "unresolved" in condition.rose
    power = flagged / power_runs
    print(f"a change of the planned MDE flagged in {power:.3f} of {power_runs} comparisons")
    assert power >= 0.8 - 3 * math.sqrt(0.8 * 0.2 / power_runs), power
