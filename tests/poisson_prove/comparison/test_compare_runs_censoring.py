"""Episodes cut off by their own horizon, below the common one: censored there, starred.

An episode reports the horizon it was given; a run's horizon is the largest of them. An
episode whose own horizon is below the common horizon and which ran to it was stopped by
that horizon: it is censored at its t, the Aalen-Johansen share is starred, the Wilson
interval uses the effective n, Fisher counts only episodes whose fate by the horizon is
known, and McNemar leaves out pairs with a censored twin. Oracles: statsmodels
(CumIncidenceRight, proportion_confint, mcnemar), SciPy (fisher_exact), pandas joins.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import fisher_exact
from statsmodels.duration.survfunc import CumIncidenceRight
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.proportion import proportion_confint

import poisson_prove
from tests.poisson_prove.runs import OUTCOMES, Episodes, write_run

N = 240
CFG = {"ticket": "refund", "temperature": 0.0}
LABEL = "ticket refund · temperature 0.0"


def _run(rng: np.random.Generator, budgets: tuple[float, ...], unresolved: float = 0.3) -> Episodes:
    """Steps to the end 1..34; replicate r may take budgets[r % len(budgets)] steps, and one
    that needs more stops at its budget as `timeout`."""
    episodes = Episodes()
    for r in range(N):
        own = budgets[r % len(budgets)]
        steps = float(rng.integers(1, 35))
        if steps >= own:
            outcome, t = "timeout", own
        else:
            outcome, t = ("unresolved" if rng.random() < unresolved else "resolved"), steps
        episodes.add(CFG, r, outcome, t, own, case_id="refund")
    return episodes


def _rows(comparison) -> dict[str, poisson_prove.comparison.result.OutcomeResult]:
    (condition,) = comparison.conditions
    assert condition.label == LABEL
    return {row.outcome: row for row in condition.outcomes}


def _after_frame(info) -> pd.DataFrame:
    frame = pd.concat([pd.read_parquet(p) for p in sorted(info.batch_files())])
    return frame.sort_values("replicate").reset_index(drop=True)


@pytest.mark.parametrize("method", ["fisher", "mcnemar"])
def test_own_shorter_horizon_censors_stars_and_matches_cumincidence(tmp_path: Path, method: str) -> None:
    rng = np.random.default_rng(42)
    a = write_run(tmp_path, _run(rng, (20.0,)))
    # After: a third of the episodes may take 10 steps, a third 20 and a third 30 (its horizon).
    b = write_run(tmp_path, _run(rng, (10.0, 20.0, 30.0)), paired_with=a)
    comparison = poisson_prove.compare(a.name, b.name, store=tmp_path, method=method)
    assert comparison.horizon == 20.0  # the smaller of the runs' horizons (20 and 30)
    rows = _rows(comparison)

    after = _after_frame(b)
    early = ((after.horizon < 20) & (after.t >= after.horizon)).to_numpy()
    beyond = (after.t > 20).to_numpy()
    assert early.sum() > 20 and beyond.sum() > 5  # both kinds of censoring are exercised
    cause = after.outcome.map({name: i + 1 for i, name in enumerate(OUTCOMES)}).to_numpy()
    cause = np.where(early | beyond, 0, cause)
    fit = CumIncidenceRight(np.minimum(after.t.to_numpy(dtype=float), 20.0), cause)
    at = np.searchsorted(fit.times, 20.0, side="right") - 1
    for i, outcome in enumerate(OUTCOMES):
        if outcome == "resolved":
            continue
        row = rows[outcome]
        assert row.after.starred and not row.before.starred
        assert row.after.n == N and row.after.k == int((cause == i + 1).sum())
        assert row.after.share == pytest.approx(fit.cinc[i][at], abs=1e-9)
        assert row.after.variance == pytest.approx(fit.cinc_se[i][at] ** 2, abs=1e-9)
        share, n_eff = row.after.share, row.after.effective_n
        assert n_eff == pytest.approx(share * (1 - share) / row.after.variance, rel=1e-12)
        lo, hi = proportion_confint(share * n_eff, n_eff, alpha=0.05, method="wilson")
        assert (row.after.lo, row.after.hi) == (pytest.approx(lo, abs=1e-9), pytest.approx(hi, abs=1e-9))

    if method == "fisher":
        known = N - int(early.sum())  # past 20 is known: no event by the horizon
        for outcome in ("unresolved", "timeout"):
            row = rows[outcome]
            table = [[row.before.k, N - row.before.k], [row.after.k, known - row.after.k]]
            assert row.p == pytest.approx(fisher_exact(table).pvalue, abs=1e-9)
    else:
        before = _after_frame(a)
        kept = ~early
        assert rows["timeout"].pairs == int(kept.sum())
        for outcome in ("unresolved", "timeout"):
            row = rows[outcome]
            was = ((before.outcome == outcome) & (before.t <= 20)).to_numpy()[kept]
            now = ((after.outcome == outcome) & (after.t <= 20)).to_numpy()[kept]
            b, c = int((was & ~now).sum()), int((now & ~was).sum())
            assert (row.b, row.c) == (b, c)
            assert row.p_exact == pytest.approx(sm_mcnemar([[0, b], [c, 0]], exact=True).pvalue, abs=1e-9)
        assert any("censored before the horizon" in w for w in comparison.warnings)


def test_an_episode_ending_at_its_own_horizon_equal_to_the_common_one_counts(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    a = write_run(tmp_path, _run(rng, (20.0,)))
    b = write_run(tmp_path, _run(rng, (20.0,)), paired_with=a)
    rows = _rows(poisson_prove.compare(a.name, b.name, store=tmp_path))
    frame = _after_frame(b)
    assert (frame.t == 20).any()  # timeouts at the horizon itself: events, not censored
    assert rows["timeout"].after.k == int((frame.outcome == "timeout").sum())
    assert not rows["timeout"].after.starred
    assert rows["timeout"].after.share == pytest.approx(rows["timeout"].after.k / N, abs=1e-15)
