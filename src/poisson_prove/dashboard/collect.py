"""What the dashboard shows, read from the store through the library's own statistics.

Rates are `comparison.stats.rates_by_horizon` on the run's own horizon (Aalen-Johansen, Wilson
or starred Wilson, exactly as `diff` computes them); the incidence curves are
`stats.incidence.aalen_johansen_grouped` evaluated at each time of a grid (the estimator at
horizon s is the curve at s), with the same starred-Wilson band; comparisons are
`compare()` results. A benchmark run (its spec declares a case axis) is shown per pooled group:
its rates and curves are `comparison.pooled.pooled_rates` (the pooled Aalen-Johansen incidence,
Wilson on the delete-one-case jackknife's effective n, as `diff` pools a benchmark), and only
its cases with the most failure events are listed. Nothing here computes a statistic of its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from poisson_prove.comparison.frame import RunFrame, Side, align_horizons, read_frame, recode, side_of
from poisson_prove.comparison.pooled import Groups, declared_case_axis, pooled_groups, pooled_rates
from poisson_prove.comparison.result import Rate
from poisson_prove.comparison.stats import RateTable, rates_by_horizon
from poisson_prove.dashboard.episodes import EpisodeList, FailedEpisode, episode_list, failed_episodes
from poisson_prove.design.conditions import cfg_of, condition_label
from poisson_prove.errors import ProveError
from poisson_prove.stats.incidence import aalen_johansen_grouped, starred_wilson
from poisson_prove.store.info import RunInfo

CURVE_POINTS = 60  # at most this many times per curve: a summary, not every row
FAILED_SHOWN = 12  # failed episodes listed per plotted run
CASES_LISTED = 20  # a benchmark run's cases in its rates table: those with the most failure events


@dataclass(frozen=True)
class OutcomeRate:
    outcome: str
    k: int
    n: int
    share: float | None
    lo: float | None
    hi: float | None
    starred: bool


@dataclass(frozen=True)
class ConditionRates:
    key: str
    label: str
    rows: int
    rates: tuple[OutcomeRate, ...]


@dataclass(frozen=True)
class GroupRates:
    """A benchmark run's pooled group: every outcome's rate pooled over its cases."""

    key: str
    label: str
    cases: int
    rows: int  # episodes, with or without an outcome
    rates: tuple[OutcomeRate, ...]


@dataclass(frozen=True)
class Curve:
    """One outcome's cumulative incidence over t in one condition, with its 95% band."""

    outcome: str
    times: tuple[float, ...]
    share: tuple[float, ...]
    lo: tuple[float, ...]
    hi: tuple[float, ...]


@dataclass(frozen=True)
class ConditionCurves:
    label: str
    curves: tuple[Curve, ...]


@dataclass(frozen=True)
class RunView:
    run_id: str
    name: str
    target: str
    spec: str
    salt: str
    status: str
    planned: int | None
    done: int
    without_outcome: int
    errors: tuple[tuple[str, int], ...]  # error kind -> rows, most frequent first
    cost: str
    mde: float | None
    created: str
    t_unit: str
    horizon: float | None
    outcomes: tuple[str, ...]
    failures: tuple[str, ...]
    conditions: tuple[ConditionRates, ...]
    curves: tuple[ConditionCurves, ...] | None  # None: not plotted (older runs)
    failed: tuple[FailedEpisode, ...]
    failed_total: int
    problem: str | None = None  # why the run's episodes could not be read (the page goes on)
    # a --stop-when-settled run: where and why each condition stopped, one line each
    settled: tuple[str, ...] = ()
    saved: int | None = None  # planned rollouts not run because their condition settled
    # A benchmark run (its spec declares a case axis): the rates and curves are its pooled
    # groups'; `conditions` lists only its CASES_LISTED cases with the most failure events,
    # of `cases` cases in all
    case_axis: str | None = None
    groups: tuple[GroupRates, ...] = ()
    cases: int = 0
    episodes: EpisodeList | None = None  # plotted runs only


def _num(value: Any) -> float | None:
    value = float(value)
    return value if np.isfinite(value) else None


def _cost(manifest: Mapping[str, Any]) -> str:
    """The plan's estimated cost, and the design a `--budget` bought, where the manifest has them."""
    cost = manifest.get("cost_usd")
    text = f"${cost:,.2f}" if isinstance(cost, (int, float)) else "-"
    budget = manifest.get("budget")
    if isinstance(budget, dict) and isinstance(budget.get("budget_usd"), (int, float)):
        rise = budget.get("detectable_rise")
        detects = f", detects a rise of {rise:.3f}" if isinstance(rise, (int, float)) else ""
        text += f" (budget ${budget['budget_usd']:,.2f}{detects})"
    return text


def _condition_order(info: RunInfo, present: tuple[str, ...]) -> list[str]:
    order = [c["key"] for c in info.manifest.get("cells") or [] if isinstance(c, dict) and c.get("key")]
    here = set(present)
    order = [key for key in order if key in here]
    return order + sorted(here - set(order))


def _grid(t: np.ndarray, horizon: float) -> np.ndarray:
    times = np.unique(t[np.isfinite(t) & (t <= horizon)])
    times = np.union1d(times, [0.0, horizon]) if times.size else np.array([0.0, horizon])
    if times.size > CURVE_POINTS:
        picks = np.linspace(0, times.size - 1, CURVE_POINTS).round().astype(int)
        times = times[np.unique(picks)]
    return times


def _curves(
    condition_codes: np.ndarray, observed: np.ndarray, t: np.ndarray, n_conditions: int, universe: list[str],
    failures: list[str], horizon: float, labels: list[str], n: np.ndarray,
) -> tuple[ConditionCurves, ...]:
    rows = (condition_codes >= 0) & np.isfinite(t)
    times = _grid(t[rows], horizon)
    wanted = [universe.index(f) for f in failures if f in universe]
    share = np.full((n_conditions, len(wanted), times.size), np.nan)
    lo, hi = share.copy(), share.copy()
    for j, at in enumerate(times):
        fits = aalen_johansen_grouped(
            t[rows], observed[rows], condition_codes[rows], float(at), causes=len(universe)
        )
        for label, fit in fits.items():
            c = cast(int, label)  # the condition codes given as groups
            low, high, _ = starred_wilson(fit.incidence[wanted], fit.variance[wanted], n[c])
            share[c, :, j], lo[c, :, j], hi[c, :, j] = fit.incidence[wanted], low, high
    out = []
    for c in range(n_conditions):
        curves = tuple(
            Curve(universe[e], tuple(times.tolist()), tuple(share[c, i].tolist()),
                  tuple(lo[c, i].tolist()), tuple(hi[c, i].tolist()))
            for i, e in enumerate(wanted)
        )
        out.append(ConditionCurves(labels[c], curves))
    return tuple(out)


def _case_axis(manifest: Mapping[str, Any]) -> str | None:
    try:
        return declared_case_axis(manifest)
    except ProveError:  # two axes say cases = true (no sweep stores that): shown as conditions
        return None


def _outcome_rate(outcome: str, rate: Rate | None) -> OutcomeRate:
    if rate is None:  # a group without an episode with an outcome
        return OutcomeRate(outcome, 0, 0, None, None, None, False)
    return OutcomeRate(outcome, rate.k, rate.n, rate.share, rate.lo, rate.hi, rate.starred)


def _pooled_curves(
    side: Side, groups: Groups, codes: np.ndarray, universe: list[str], horizon: float
) -> tuple[ConditionCurves, ...]:
    """Per pooled group, each failure outcome's pooled incidence over t: the pooled rate of
    `comparison.pooled.pooled_rates` at each time of the grid, with its jackknife band."""
    times = _grid(side.t[(side.condition >= 0) & np.isfinite(side.t)], horizon)
    everything = np.ones(groups.of_condition.size, dtype=bool)
    values = np.full((3, len(groups.keys), codes.size, times.size), np.nan)  # share, lo, hi
    for j, at in enumerate(times):
        for g, rates in enumerate(pooled_rates(side, groups, everything, codes, len(universe), float(at))):
            for i, rate in enumerate(rates or ()):
                for v, value in enumerate((rate.share, rate.lo, rate.hi)):
                    values[v, g, i, j] = np.nan if value is None else value
    grid = tuple(times.tolist())
    return tuple(
        ConditionCurves(label, tuple(
            Curve(universe[code - 1], grid, *(tuple(values[v, g, i].tolist()) for v in range(3)))
            for i, code in enumerate(codes.tolist())
        ))
        for g, label in enumerate(groups.labels)
    )


@dataclass(frozen=True)
class _Benchmark:
    groups: tuple[GroupRates, ...]
    listed: list[int]  # the conditions (cases) listed: the most failure events first
    curves: tuple[ConditionCurves, ...] | None


def _benchmark(
    info: RunInfo, frame: RunFrame, order: list[str], universe: list[str], failures: list[str], axis: str,
    table: RateTable, plot: bool,
) -> _Benchmark:
    """A benchmark run's pooled groups (rates and, when plotted, curves) and its listed cases;
    `table` is the run's per-condition rates_by_horizon."""
    groups = pooled_groups(order, axis, info.manifest.get("axis_order"))
    side = side_of(frame, order, universe, False)
    horizon = align_horizons([side])  # the run's own horizon, times and early flags set as compare()'s
    everything = np.ones(len(order), dtype=bool)
    pooled = pooled_rates(side, groups, everything, np.arange(1, len(universe) + 1), len(universe), horizon)
    rows = table.rows_by_condition
    summary = []
    for g, key in enumerate(groups.keys):
        members = groups.of_condition == g
        rates: Sequence[Rate | None] = pooled[g] or [None] * len(universe)
        summary.append(GroupRates(
            key, groups.labels[g], int(members.sum()), int(rows[members].sum()),
            tuple(_outcome_rate(name, rate) for name, rate in zip(universe, rates, strict=True)),
        ))
    failing = sorted({universe.index(f) for f in failures if f in universe})
    events = table.k[:, failing].sum(axis=1)
    listed = np.argsort(-events, kind="stable")[:CASES_LISTED].tolist()  # ties in the run's order
    codes = np.array(failing, dtype=np.int64) + 1
    curves = _pooled_curves(side, groups, codes, universe, horizon) if plot else None
    return _Benchmark(tuple(summary), listed, curves)


def run_view(info: RunInfo, *, plot: bool, partner: RunInfo | None = None) -> RunView:
    """Everything the dashboard shows about one run (`partner`: the run its episode table's
    "flipped" is measured against)."""
    manifest = info.manifest
    frame = read_frame(info)
    universe = [str(o) for o in manifest.get("outcomes") or []]
    failures = [str(o) for o in manifest.get("failures") or []]
    order = _condition_order(info, frame.condition.values)
    labels = [condition_label(cfg_of(key), manifest.get("axis_order")) for key in order]
    condition_codes = recode(frame.condition, order)
    cause = (recode(frame.outcome, universe) + 1).astype(np.int64)
    has = cause > 0
    horizon = float(np.max(frame.horizon, where=has & np.isfinite(frame.horizon), initial=-np.inf))
    t = frame.t.copy()
    conditions: list[ConditionRates] = []
    curves = None
    case_fields: dict[str, Any] = {}
    if np.isfinite(horizon) and has.any():
        t[np.isnan(t) & has] = horizon
        # as compare(): an episode cut off by its own, shorter horizon is censored at its t
        early = has & (frame.horizon < horizon) & (t >= frame.horizon)
        table = rates_by_horizon(condition_codes, cause, t, len(order), len(universe), horizon, early)
        axis = _case_axis(manifest)
        shown: Sequence[int] = range(len(order))
        if axis is not None:
            benchmark = _benchmark(info, frame, order, universe, failures, axis, table, plot)
            case_fields = {"case_axis": axis, "groups": benchmark.groups, "cases": len(order)}
            shown, curves = benchmark.listed, benchmark.curves
        for c in shown:
            rates = tuple(
                OutcomeRate(name, int(table.k[c, e]), int(table.n[c]), _num(table.share[c, e]),
                            _num(table.lo[c, e]), _num(table.hi[c, e]), bool(table.starred[c, e]))
                for e, name in enumerate(universe)
            )
            conditions.append(ConditionRates(order[c], labels[c], int(table.rows_by_condition[c]), rates))
        if axis is None and plot:
            observed = np.where(early, 0, cause)
            curves = _curves(
                condition_codes, observed, t, len(order), universe, failures, horizon, labels, table.n
            )
    else:
        horizon = float("nan")
    missing = ~has
    kinds = recode(frame.error_kind, frame.error_kind.values)[missing]
    names = [*frame.error_kind.values, "unknown"]
    counts = np.bincount(np.where(kinds >= 0, kinds, len(names) - 1), minlength=len(names))
    found = ((names[i], int(v)) for i, v in enumerate(counts) if v)
    errors = tuple(sorted(found, key=lambda e: (-e[1], e[0])))
    failure_codes = np.array([universe.index(f) + 1 for f in failures if f in universe] or [-1])
    failed_rows = np.flatnonzero(~has | np.isin(cause, failure_codes))
    by_key = dict(zip(order, labels, strict=True))
    failed = failed_episodes(info, failed_rows[:FAILED_SHOWN], by_key) if plot else ()
    episodes = episode_list(info, partner, by_key, failures) if plot else None
    counts_m = manifest.get("counts") or {}
    planned = counts_m.get("planned") if isinstance(counts_m, dict) else None
    design = manifest.get("design") or {}
    mde = design.get("mde") if isinstance(design, dict) else None
    return RunView(
        run_id=info.run_id, name=info.name, target=str(manifest.get("target") or "-"),
        spec=str(manifest.get("spec_path") or "-"), salt=str(manifest.get("salt") or "-"),
        status=info.status, planned=planned if isinstance(planned, int) else None, done=frame.rows,
        without_outcome=int(missing.sum()), errors=errors, cost=_cost(manifest),
        mde=float(mde) if isinstance(mde, (int, float)) else None, created=info.created,
        t_unit=str(manifest.get("t_unit") or "t"), horizon=_num(horizon),
        outcomes=tuple(universe), failures=tuple(failures), conditions=tuple(conditions),
        curves=curves, failed=failed, failed_total=int(failed_rows.size), **_settled(manifest), **case_fields,
        episodes=episodes,
    )


def _settled(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """The `settled` and `saved` fields of a --stop-when-settled run's view, else nothing."""
    block = manifest.get("sequential")
    if not isinstance(block, dict) or not block.get("stop_when_settled"):
        return {}
    from poisson_prove.sweep.stop_when_settled import settled_lines  # the sweep package: ~0.5 s, rarely

    counts = manifest.get("counts") or {}
    saved = counts.get("settled_skipped") if isinstance(counts, dict) else None
    return {"settled": tuple(settled_lines(block)), "saved": saved if isinstance(saved, int) else None}


def unreadable_view(info: RunInfo, problem: str) -> RunView:
    """A run whose episodes cannot be read (a damaged batch): its manifest and the reason."""
    manifest = info.manifest
    counts = manifest.get("counts") or {}
    planned = counts.get("planned") if isinstance(counts, dict) else None
    done = counts.get("done") if isinstance(counts, dict) else None
    return RunView(
        run_id=info.run_id, name=info.name, target=str(manifest.get("target") or "-"),
        spec=str(manifest.get("spec_path") or "-"), salt=str(manifest.get("salt") or "-"),
        status=info.status, planned=planned if isinstance(planned, int) else None,
        done=done if isinstance(done, int) else 0, without_outcome=0, errors=(), cost=_cost(manifest),
        mde=None, created=info.created, t_unit=str(manifest.get("t_unit") or "t"), horizon=None,
        outcomes=(), failures=(), conditions=(), curves=None, failed=(), failed_total=0, problem=problem,
    )


def partner_episodes(info: RunInfo, partner: RunInfo | None, view: RunView) -> EpisodeList:
    """A plotted run's episode table against another partner than its cached view's (a newer
    run paired with this baseline): the rest of the view stands."""
    cells = read_frame(info).condition.values
    axis_order = info.manifest.get("axis_order")
    labels = {key: condition_label(cfg_of(key), axis_order) for key in cells if key is not None}
    return episode_list(info, partner, labels, view.failures)
