"""The incidence curves against statsmodels' CumIncidenceRight, and the tables' end point."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from poisson_prove.dashboard.collect import run_view
from poisson_prove.store.runs import RunStore
from tests.poisson_prove.runs import Episodes, write_run

OUTCOMES = ("resolved", "unresolved", "timeout")


def _store(tmp_path: Path):
    """Two conditions; in one, some episodes ran out of a shorter budget (censored early)."""
    rng = np.random.default_rng(7)
    episodes = Episodes()
    for ticket in ("refund", "lookup"):
        cfg = {"ticket": ticket, "temperature": 0.2}
        for r in range(300):
            u = rng.random()
            outcome = "resolved" if u < 0.5 else "unresolved" if u < 0.8 else "timeout"
            t = float(rng.integers(1, 21)) if outcome != "timeout" else 20.0
            horizon = 20.0
            if ticket == "lookup" and r % 5 == 0:
                horizon, t, outcome = 12.0, 12.0, "timeout"  # cut off by its own budget
            episodes.add(cfg, r, outcome, t, horizon, case_id=ticket)
    return write_run(tmp_path / "prove-runs", episodes)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # statsmodels divides by zero at the last time
def test_curves_equal_statsmodels_and_end_at_the_table_rate(tmp_path: Path) -> None:
    from statsmodels.duration.survfunc import CumIncidenceRight

    info = _store(tmp_path)
    view = run_view(RunStore(tmp_path / "prove-runs").resolve(info.run_id), plot=True)
    assert view.curves is not None and len(view.curves) == 2
    table = info.read_episodes(["cell", "outcome", "t", "horizon"]).to_pylist()
    codes = {name: i + 1 for i, name in enumerate(OUTCOMES)}
    for condition, panel in zip(view.conditions, view.curves, strict=True):
        rows = [r for r in table if r["cell"] == condition.key]
        time = np.array([r["t"] for r in rows])
        # an episode cut off by its own, shorter budget is censored at its t
        status = np.array([0 if r["horizon"] < 20 and r["t"] >= r["horizon"] else codes[r["outcome"]]
                           for r in rows])
        oracle = CumIncidenceRight(time, status)
        for curve in panel.curves:
            k = codes[curve.outcome] - 1
            for at, share in zip(curve.times, curve.share, strict=True):
                before = np.flatnonzero(oracle.times <= at)
                expected = oracle.cinc[k][before[-1]] if before.size else 0.0
                assert share == pytest.approx(expected, abs=1e-10)
            end = next(r for r in condition.rates if r.outcome == curve.outcome)
            assert curve.times[-1] == view.horizon == 20.0
            assert curve.share[-1] == pytest.approx(end.share, abs=1e-12)
            assert (curve.lo[-1], curve.hi[-1]) == pytest.approx((end.lo, end.hi), abs=1e-12)
            bands = zip(curve.lo, curve.share, curve.hi, strict=True)
            assert all(lo - 1e-12 <= s <= hi + 1e-12 for lo, s, hi in bands)
    lookup = next(c for c in view.conditions if "lookup" in c.label)
    assert all(r.starred for r in lookup.rates)  # censored before the horizon: starred, as diff
