"""A benchmark run's view: per pooled group the pooled share with the delete-one-case
jackknife's Wilson interval (recounted here in plain Python from the episodes as written, the
interval by statsmodels), its curves ending at that rate, and its cases with the most failure
events listed first."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from poisson_prove.dashboard.collect import CASES_LISTED, run_view
from poisson_prove.store.runs import RunStore
from tests.poisson_prove.comparison.cases_kit import write_benchmark
from tests.poisson_prove.dashboard.stores import pooled_groups
from tests.poisson_prove.runs import Episodes

OUTCOMES = ("resolved", "unresolved", "timeout")
CASES, REPEATS = 30, 4


def _episodes() -> tuple[Episodes, dict[tuple[float, int], list[str]]]:
    rng = np.random.default_rng(3)
    per_group = {}
    for temperature in (0.0, 0.7):
        hard = rng.beta(1.0, 2.0, CASES) * (1.0 if temperature else 0.5)
        per_group[temperature] = [
            ["unresolved" if x < hard[k] else "timeout" if x > 0.95 else "resolved"
             for x in rng.random(REPEATS)]
            for k in range(CASES)
        ]
    written = {(t, k): row for t, rows in per_group.items() for k, row in enumerate(rows)}
    return pooled_groups(per_group, t=np.arange(1.0, REPEATS + 1)), written


def _jackknife(per_case: list[list[str]], outcome: str) -> tuple[float, float, float]:
    """(share, low, high): the pooled share and Wilson on the jackknife's effective n."""
    from statsmodels.stats.proportion import proportion_confint

    k = [sum(o == outcome for o in row) for row in per_case]
    n = [len(row) for row in per_case]
    share = sum(k) / sum(n)
    dropped = [(sum(k) - k[i]) / (sum(n) - n[i]) for i in range(len(k))]
    mean = sum(dropped) / len(dropped)
    variance = (len(k) - 1) / len(k) * sum((d - mean) ** 2 for d in dropped)
    if share in (0.0, 1.0):  # STATISTICS.md section 7: the interval with n = the number of cases
        n_eff = float(len(k))
    else:
        assert variance > 0  # cases that differ (the draws above make sure of it)
        n_eff = min(share * (1 - share) / variance, float(sum(n)))
    low, high = proportion_confint(share * n_eff, n_eff, alpha=0.05, method="wilson")
    return share, max(0.0, float(low)), min(1.0, float(high))


def test_a_benchmark_run_is_shown_per_pooled_group(tmp_path: Path) -> None:
    episodes, written = _episodes()
    info = write_benchmark(tmp_path / "prove-runs", episodes, outcomes=OUTCOMES)
    view = run_view(RunStore(tmp_path / "prove-runs").resolve(info.run_id), plot=True)
    assert view.case_axis == "ticket" and view.cases == 2 * CASES
    assert [g.label for g in view.groups] == ["temperature 0.0", "temperature 0.7"]
    for group, temperature in zip(view.groups, (0.0, 0.7), strict=True):
        per_case = [written[(temperature, k)] for k in range(CASES)]
        assert (group.cases, group.rows) == (CASES, CASES * REPEATS)
        for rate in group.rates:
            share, low, high = _jackknife(per_case, rate.outcome)
            assert rate.n == CASES * REPEATS and rate.k == round(share * rate.n)
            assert rate.share == pytest.approx(share, abs=1e-12)
            assert (rate.lo, rate.hi) == pytest.approx((low, high), abs=1e-9)
    # the cases with the most failure events first, at most CASES_LISTED
    failures = {(t, k): sum(o != "resolved" for o in row) for (t, k), row in written.items()}
    counted = [sum(r.k for r in c.rates if r.outcome != "resolved") for c in view.conditions]
    assert len(view.conditions) == CASES_LISTED
    assert counted == sorted(failures.values(), reverse=True)[:CASES_LISTED]
    # one panel per pooled group, ending at the group's rate, the band around the curve
    assert view.curves is not None and [p.label for p in view.curves] == [g.label for g in view.groups]
    for panel, group in zip(view.curves, view.groups, strict=True):
        assert [c.outcome for c in panel.curves] == ["unresolved", "timeout"]
        for curve in panel.curves:
            end = next(r for r in group.rates if r.outcome == curve.outcome)
            assert curve.times[-1] == view.horizon
            assert (curve.share[-1], curve.lo[-1], curve.hi[-1]) == pytest.approx((end.share, end.lo, end.hi))
            assert all(0.0 <= lo <= s <= hi <= 1.0 for lo, s, hi in zip(curve.lo, curve.share, curve.hi,
                                                                         strict=True) if not math.isnan(s))
            assert list(curve.share) == sorted(curve.share)  # a cumulative incidence never falls
