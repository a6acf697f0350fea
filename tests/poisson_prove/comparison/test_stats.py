"""compare()'s numbers against independent computations, through the public function.

Oracles: statsmodels (Wilson, McNemar, BH, CumIncidenceRight, survdiff), SciPy (Fisher,
binomial) and brute force over the raw episodes written to the store.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom, fisher_exact
from statsmodels.duration.survfunc import CumIncidenceRight, survdiff
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

import poisson_prove
from poisson_prove.stats import power
from tests.poisson_prove.runs import FAILURES, OUTCOMES, Episodes, write_run

TICKETS = ("refund", "password", "shipping")
TEMPERATURES = (0.0, 0.7)


def _random_runs(
    store: Path, seed: int, *, shift: float = 0.6, horizon_after: float = 20.0, errors: float = 0.03
) -> tuple[Episodes, Episodes, object, object]:
    """Two paired runs with correlated outcomes per seed, integer (tied) times, some errors."""
    rng = np.random.default_rng(seed)
    before, after = Episodes(), Episodes()
    for ticket in TICKETS:
        for temperature in TEMPERATURES:
            cfg = {"ticket": ticket, "temperature": temperature}
            base = {"refund": 0.3, "password": 0.1, "shipping": 0.2}[ticket] * (1 + temperature)
            for r in range(120):
                latent = rng.random()
                for episodes, p_fail, horizon in ((before, base, 20.0), (after, base * shift, horizon_after)):
                    u = latent if rng.random() < 0.6 else rng.random()
                    if rng.random() < errors:
                        episodes.add(cfg, r, None, None, None, case_id=ticket, error_kind="RuntimeError",
                                     error_message="503")
                        continue
                    steps = float(rng.integers(2, 21))
                    outcome = "timeout" if steps == 20 else ("unresolved" if u < p_fail else "resolved")
                    episodes.add(cfg, r, outcome, min(steps, horizon) if outcome != "timeout" else horizon,
                                 horizon, case_id=ticket)
    a = write_run(store, before)
    b = write_run(store, after, paired_with=a)
    return before, after, a, b


def _frame(episodes: Episodes) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "ticket": [c["ticket"] for c in episodes.cfg],
            "temperature": [c["temperature"] for c in episodes.cfg],
            "replicate": episodes.replicate,
            "outcome": episodes.outcome,
            "t": episodes.t,
        }
    )


def _rows(comparison) -> dict[tuple[str, str], object]:
    return {(c.label, r.outcome): r for c in comparison.conditions for r in c.outcomes}


def test_paired_numbers_match_statsmodels_and_brute_force(tmp_path: Path) -> None:
    before, after, a, b = _random_runs(tmp_path, 7)
    comparison = poisson_prove.compare(a.name, b.name, store=tmp_path)
    assert comparison.method == "mcnemar" and comparison.method_is_default and comparison.paired
    fb, fa = _frame(before), _frame(after)
    rows = _rows(comparison)
    assert len(rows) == 6 * 2 and comparison.tests == 12
    p_values, keys = [], []
    for ticket in TICKETS:
        for temperature in TEMPERATURES:
            label = f"ticket {ticket} · temperature {temperature!r}"
            sb = fb[(fb.ticket == ticket) & (fb.temperature == temperature)]
            sa = fa[(fa.ticket == ticket) & (fa.temperature == temperature)]
            joined = sb.merge(sa, on="replicate", suffixes=("_b", "_a"))
            joined = joined.dropna(subset=["outcome_b", "outcome_a"])
            for outcome in FAILURES:
                row = rows[(label, outcome)]
                kb = int((sb.outcome == outcome).sum())
                nb = int(sb.outcome.notna().sum())
                assert (row.before.k, row.before.n) == (kb, nb)
                assert row.before.share == pytest.approx(kb / nb, abs=1e-12)
                lo, hi = proportion_confint(kb, nb, alpha=0.05, method="wilson")
                assert (row.before.lo, row.before.hi) == pytest.approx((lo, hi), abs=1e-9)
                assert not row.before.starred
                b_count = int(((joined.outcome_b == outcome) & (joined.outcome_a != outcome)).sum())
                c_count = int(((joined.outcome_b != outcome) & (joined.outcome_a == outcome)).sum())
                assert (row.b, row.c, row.pairs) == (b_count, c_count, len(joined))
                if b_count + c_count:
                    exact = sm_mcnemar([[0, b_count], [c_count, 0]], exact=True).pvalue
                    low = min(b_count, c_count)
                    mid = min(1.0, 2 * (binom.cdf(low, b_count + c_count, 0.5)
                                        - binom.pmf(low, b_count + c_count, 0.5) / 2))
                else:
                    exact = mid = 1.0
                assert row.p_exact == pytest.approx(exact, abs=1e-9)
                assert row.p == pytest.approx(mid, abs=1e-9)
                p_values.append(row.p)
                keys.append((label, outcome))
    expected_q = multipletests(p_values, method="fdr_bh")[1]
    for key, q_value in zip(keys, expected_q, strict=True):
        assert rows[key].q_value == pytest.approx(q_value, abs=1e-9)


def test_verdicts_headline_and_mde_follow_the_q_values(tmp_path: Path) -> None:
    _, _, a, b = _random_runs(tmp_path, 11, shift=0.3)
    comparison = poisson_prove.compare(a.run_id, b.run_id, store=tmp_path)
    alpha = comparison.q / comparison.tests
    safer = {name: 0 for name in FAILURES}
    for condition in comparison.conditions:
        for row in condition.outcomes:
            flagged = row.q_value <= comparison.q
            if flagged:
                assert row.verdict == ("rose" if row.c > row.b else "fell")
                assert row.mde_rise is None and row.mde_fall is None
            else:
                assert row.verdict == "no change"
                n = min(row.before.n, row.after.n, row.pairs)
                rise, fall = power.condition_mde(row.before.share, n, alpha)
                assert row.mde_rise == (rise.mde if rise else None)
                assert row.mde_fall == (fall.mde if fall else None)
            safer[row.outcome] += row.verdict == "fell"
        fell, rose = set(condition.fell), set(condition.rose)
        expected = "trade" if fell and rose else "worse" if rose else "safer" if fell else "no change"
        assert condition.verdict == expected
    assert {c.outcome: c.safer for c in comparison.headline.counts} == safer
    assert safer["unresolved"] >= 3, "a 70% cut in unresolved must show in most conditions"
    assert comparison.headline.word == "safer"
    assert not comparison.any_worse


def test_unpaired_runs_default_to_fisher_matching_scipy(tmp_path: Path) -> None:
    before, after, _, _ = _random_runs(tmp_path / "paired", 3)
    a = write_run(tmp_path, before)
    b = write_run(tmp_path, after)  # a new salt: not paired
    comparison = poisson_prove.compare(a.name, b.name, store=tmp_path)
    assert comparison.method == "fisher" and not comparison.paired
    fb, fa = _frame(before), _frame(after)
    for (label, outcome), row in _rows(comparison).items():
        ticket, temperature = label.split(" · ")[0].split()[1], float(label.split()[-1])
        sb = fb[(fb.ticket == ticket) & (fb.temperature == temperature)]
        sa = fa[(fa.ticket == ticket) & (fa.temperature == temperature)]
        kb, nb = int((sb.outcome == outcome).sum()), int(sb.outcome.notna().sum())
        ka, na = int((sa.outcome == outcome).sum()), int(sa.outcome.notna().sum())
        expected = fisher_exact([[kb, nb - kb], [ka, na - ka]], alternative="two-sided").pvalue
        assert row.p == pytest.approx(expected, abs=1e-9)
        assert row.b is None and row.c is None and row.p_exact is None
    with pytest.raises(poisson_prove.ProveError, match="not paired at sweep time"):
        poisson_prove.compare(a.name, b.name, store=tmp_path, method="mcnemar")


def test_common_horizon_censors_the_longer_run_and_matches_cumincidence(tmp_path: Path) -> None:
    # After runs to 15 steps, before to 20: before's episodes past 15 are censored at 15.
    before, _, a, b = _random_runs(tmp_path, 5, horizon_after=15.0)
    comparison = poisson_prove.compare(a.name, b.name, store=tmp_path, method="fisher")
    assert comparison.horizon == 15.0
    assert any("horizons differ" in w for w in comparison.warnings)
    fb = _frame(before)
    rows = _rows(comparison)
    cell = fb[(fb.ticket == "refund") & (fb.temperature == 0.7) & fb.outcome.notna()]
    cause = cell.outcome.map({name: i + 1 for i, name in enumerate(OUTCOMES)}).to_numpy()
    time = cell.t.to_numpy(dtype=float)
    censored = time > 15
    cause = np.where(censored, 0, cause)
    time = np.minimum(time, 15.0)
    for i, outcome in enumerate(OUTCOMES):
        if outcome not in FAILURES:
            continue
        row = rows[("ticket refund · temperature 0.7", outcome)]
        # Censored only at the horizon itself: the incidence is exactly k/n with k counted by 15.
        k = int(((cause == i + 1) & (time <= 15)).sum())
        assert row.before.share == pytest.approx(k / len(cause), abs=1e-12)
        fit = CumIncidenceRight(time, cause)
        at = np.searchsorted(fit.times, 15.0, side="right") - 1
        if i >= len(fit.cinc):  # every timeout of this run came after 15: none by the horizon
            assert row.before.share == 0.0 and k == 0
            continue
        assert row.before.share == pytest.approx(fit.cinc[i][at], abs=1e-9)
        assert row.before.variance == pytest.approx(fit.cinc_se[i][at] ** 2, abs=1e-9)
        assert not row.before.starred


def test_logrank_matches_statsmodels_survdiff(tmp_path: Path) -> None:
    before, after, a, b = _random_runs(tmp_path, 9, shift=0.4)
    comparison = poisson_prove.compare(a.name, b.name, store=tmp_path, method="logrank_bh")
    assert comparison.method == "logrank_bh" and not comparison.method_is_default
    fb, fa = _frame(before), _frame(after)
    rows = _rows(comparison)
    sb = fb[(fb.ticket == "shipping") & (fb.temperature == 0.7) & fb.outcome.notna()]
    sa = fa[(fa.ticket == "shipping") & (fa.temperature == 0.7) & fa.outcome.notna()]
    # (timeouts all end at t = 20 where everyone left times out: no variance, survdiff is singular)
    for outcome in ("unresolved",):
        time = np.r_[sb.t.to_numpy(float), sa.t.to_numpy(float)]
        status = np.r_[(sb.outcome == outcome).to_numpy(), (sa.outcome == outcome).to_numpy()].astype(int)
        group = np.r_[np.zeros(len(sb)), np.ones(len(sa))]
        statistic, p_value = survdiff(time, status, group)
        row = rows[("ticket shipping · temperature 0.7", outcome)]
        assert row.statistic == pytest.approx(statistic, rel=1e-9)
        assert row.p == pytest.approx(p_value, abs=1e-9)
