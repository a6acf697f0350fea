"""Benchmark-level rows: runs whose spec declares a case axis, compared per pooled group.

A benchmark is K cases run a few times each. Its repeats of one case are not independent
evidence (a hard case is hard every time), so its verdict counts by case (STATISTICS.md
section 7; the statistics are poisson_prove.stats.clustered's):

- a *pooled group* is the conditions that share the values of every axis but the case axis
  (`pooled_groups`); each of its conditions is one case;
- its rate is the pooled Aalen-Johansen incidence over the group's episodes (of the cases that
  ran in both runs), its interval Wilson on the delete-one-case jackknife's effective n;
- its test is the exact sign-flip test over cases on each case's d_k. For runs paired at sweep
  time (unless `--method fisher`): d_k = c_k - b_k over the case's twins. For independent runs:
  d_k = events after - events before among the first n_k episodes (by replicate) of the case in
  each run, n_k the smaller of the two runs' episodes with a known fate: under no change two
  equal samples of one case from two runs of one agent are exchangeable, so d_k is symmetric
  about 0 whatever the repeats of a case share;
- Benjamini-Hochberg over the pooled rows (the headline family, which `check` gates on);
  a pooled "no change" could have shown section 1's MDE at the pooled before-rate with
  n = floor(n_eff), n_eff from the before run's within-case correlation, alpha = q / (pooled tests).

The per-case rows are the comparison's usual per-condition rows (comparison.stats) under their
own Benjamini-Hochberg, marked as detail, each with its d_k.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from poisson_prove.comparison.frame import Side
from poisson_prove.comparison.result import ConditionResult, OutcomeResult, Rate
from poisson_prove.comparison.stats import Tables, condition_mde_values, fate_by, twin_rows
from poisson_prove.comparison.verdicts import Verdicts, decide_verdicts
from poisson_prove.design.cases import case_text
from poisson_prove.design.conditions import ALL_CASES, cfg_of, condition_label, pooled_key
from poisson_prove.errors import ProveError
from poisson_prove.stats import tests as stats_tests
from poisson_prove.stats.clustered import (
    effective_pairs,
    pooled_incidence,
    sign_flip,
    within_case_correlation,
)
from poisson_prove.store.info import RunInfo

LISTED = 3  # one-run-only or untested cases named one by one up to this many, else counted


# Which axis holds the cases ------------------------------------------------------------------


def declared_case_axis(manifest: Mapping[str, Any]) -> str | None:
    """The axis whose table in the run's stored spec says `cases = true`, or None; more than
    one is a ProveError. The rule of design.spec.case_axis_of (a test holds the two equal),
    read here because importing design.spec brings the sweep's backend and chaos tables, about
    0.1 s that every comparison would pay."""
    spec = manifest.get("spec")
    axes = spec.get("axes") if isinstance(spec, Mapping) else None
    if not isinstance(axes, Mapping):
        return None
    named = [
        str(name) for name, table in axes.items() if isinstance(table, Mapping) and table.get("cases") is True
    ]
    if len(named) > 1:
        raise ProveError(
            f"the spec declares {len(named)} case axes ({', '.join(named)}); "
            "at most one axis has cases = true"
        )
    return named[0] if named else None


def case_axis(before: RunInfo, after: RunInfo) -> str | None:
    """The case axis of a comparison: the one either run's spec declares; refused when the two
    runs declare different ones."""
    declared_before, declared_after = declared_case_axis(before.manifest), declared_case_axis(after.manifest)
    if declared_before and declared_after and declared_before != declared_after:
        raise ProveError(
            f'runs "{before.name}" and "{after.name}" declare different case axes '
            f'("{declared_before}" and "{declared_after}"); a benchmark is compared case by case '
            "only when both runs take their cases from one axis",
            suggestions=["compare two runs of the same sweep spec (or two imports of one task)"],
        )
    return declared_after or declared_before


# Pooled groups -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Groups:
    keys: tuple[str, ...]  # the condition key without the case axis (ALL_CASES when nothing is left)
    labels: tuple[str, ...]
    of_condition: np.ndarray  # (C,) each condition's group
    case_values: tuple[str, ...]  # (C,) each condition's case-axis value as text


def pooled_groups(keys: Sequence[str], axis: str, axis_order: Sequence[str] | None) -> Groups:
    """The pooled groups of the conditions `keys` (design.conditions.pooled_key), in the order
    their first condition comes."""
    index: dict[str, int] = {}
    labels: list[str] = []
    of_condition = np.empty(len(keys), dtype=np.int64)
    cases = []
    for i, key in enumerate(keys):
        cfg = cfg_of(key)
        group = pooled_key(cfg, axis)
        value = cfg.pop(axis, None)
        cases.append("" if value is None else case_text(value))
        if group not in index:
            index[group] = len(index)
            labels.append(condition_label(cfg, axis_order) if cfg else ALL_CASES)
        of_condition[i] = index[group]
    return Groups(tuple(index), tuple(labels), of_condition, tuple(cases))


# What the sign-flip test counts, per case ------------------------------------------------------


@dataclass(frozen=True)
class CaseCounts:
    """Per case (condition) and tested event, what the pooled test takes."""

    paired: bool
    per_case: np.ndarray  # (C,) twins (paired), or episodes counted in each run (independent)
    b: np.ndarray  # (C, J) paired: the event before only; independent: events before
    c: np.ndarray  # (C, J) paired: the event after only; independent: events after
    before_case: np.ndarray  # (N,) the case of each counted before episode
    before_event: np.ndarray  # (N, J) whether it had event j by the horizon
    left_out: int  # independent runs: episodes with a known fate beyond their case's n_k

    @property
    def d(self) -> np.ndarray:
        return self.c - self.b


def _per_case(case: np.ndarray, mask: np.ndarray, cases: int) -> np.ndarray:
    """(cases, J) counts of the rows where mask[:, j] holds, by case."""
    events = mask.shape[1]
    index = case[:, None] * events + np.arange(events)[None, :]
    return np.bincount(index[mask], minlength=cases * events).reshape(cases, events)


def _known_rows(side: Side, cases: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(rows, their case, their rank within the case by replicate, episodes per case) of the
    side's episodes with a known fate by the horizon (an outcome, not censored before it)."""
    rows = np.flatnonzero((side.condition >= 0) & (side.cause > 0) & ~side.early)
    rows = rows[np.lexsort((side.frame.replicate[rows], side.condition[rows]))]
    case = side.condition[rows].astype(np.int64)
    sizes = np.bincount(case, minlength=cases)
    starts = np.cumsum(sizes) - sizes
    return rows, case, np.arange(rows.size) - starts[case], sizes


def case_counts(
    before: Side, after: Side, cases: int, codes: np.ndarray, horizon: float, *, paired: bool
) -> CaseCounts:
    """The per-case counts of the pooled test; `codes` are the tested events' cause codes."""
    if paired:
        rb, ra = twin_rows(before, after)
        case = before.condition[rb].astype(np.int64)
        x = fate_by(before, rb, horizon)[:, None] == codes[None, :]
        y = fate_by(after, ra, horizon)[:, None] == codes[None, :]
        return CaseCounts(
            True, np.bincount(case, minlength=cases), _per_case(case, x & ~y, cases),
            _per_case(case, ~x & y, cases), case, x, 0,
        )
    rows_b, case_b, rank_b, sizes_b = _known_rows(before, cases)
    rows_a, case_a, rank_a, sizes_a = _known_rows(after, cases)
    n = np.minimum(sizes_b, sizes_a)
    keep_b, keep_a = rank_b < n[case_b], rank_a < n[case_a]
    rows_b, case_b, rows_a, case_a = rows_b[keep_b], case_b[keep_b], rows_a[keep_a], case_a[keep_a]
    x = fate_by(before, rows_b, horizon)[:, None] == codes[None, :]
    y = fate_by(after, rows_a, horizon)[:, None] == codes[None, :]
    left_out = int((sizes_b - n).sum() + (sizes_a - n).sum())
    return CaseCounts(False, n, _per_case(case_b, x, cases), _per_case(case_a, y, cases), case_b, x, left_out)


# Pooled rates ----------------------------------------------------------------------------------


def pooled_rates(
    side: Side, groups: Groups, compared: np.ndarray, codes: np.ndarray, universe: int, horizon: float
) -> list[list[Rate] | None]:
    """Per group, per tested event: the pooled rate over the episodes with an outcome of the
    group's compared cases (None for a group without one)."""
    inside = (side.condition >= 0) & (side.cause > 0)
    rows = np.flatnonzero(inside)
    rows = rows[compared[side.condition[rows]]]
    group = groups.of_condition[side.condition[rows]]
    order = np.argsort(group, kind="stable")
    rows, group = rows[order], group[order]
    bounds = np.searchsorted(group, np.arange(len(groups.keys) + 1))
    observed = np.where(side.early, 0, side.cause)  # censored at its t before the horizon
    out: list[list[Rate] | None] = []
    for g in range(len(groups.keys)):
        picked = rows[bounds[g] : bounds[g + 1]]
        if not picked.size:
            out.append(None)
            continue
        t, cause = side.t[picked], observed[picked]
        fit = pooled_incidence(t, cause, side.condition[picked], horizon, universe)
        rates = []
        for code in codes.tolist():
            e = code - 1
            rates.append(
                Rate(
                    n=fit.episodes,
                    k=int(np.count_nonzero((cause == code) & (t <= horizon))),
                    share=_finite(fit.incidence[e]),
                    lo=_finite(fit.low[e]),
                    hi=_finite(fit.high[e]),
                    starred=bool(fit.censored),
                    variance=_finite(fit.variance[e]),
                    effective_n=_finite(fit.n_eff[e]),
                )
            )
        out.append(rates)
    return out


def _finite(value: Any) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


# The comparison's benchmark part ---------------------------------------------------------------


@dataclass(frozen=True)
class Benchmark:
    """The pooled rows and their verdicts, and every case's rows as detail."""

    test: str  # sign_flip | sign_flip_unpaired
    verdicts: Verdicts  # over the pooled groups: the headline
    tests: int  # the pooled family's size
    cases: tuple[ConditionResult, ...]
    warnings: tuple[str, ...]


def compare_pooled(
    before: Side,
    after: Side,
    tables: Tables,
    counts: CaseCounts,
    case_results: Mapping[int, Sequence[OutcomeResult]],
    *,
    keys: Sequence[str],
    labels: Sequence[str],
    axis: str,
    axis_order: Sequence[str] | None,
    events: Sequence[str],
    event_index: Sequence[int],
    adverse: Sequence[bool],
    horizon: float,
    q: float,
) -> Benchmark:
    """The benchmark-level comparison of two runs with a case axis (see the module's doc).

    `counts` are `case_counts` of the two sides; `case_results` the per-condition rows (one
    condition is one case) of comparison.stats, built with their d_k (its `case_d`).
    """
    groups = pooled_groups(keys, axis, axis_order)
    codes = np.asarray(event_index, dtype=np.int64) + 1
    compared = (tables.before.rows_by_condition > 0) & (tables.after.rows_by_condition > 0)
    tested = compared & (tables.before.n > 0) & (tables.after.n > 0)
    paired = counts.paired
    rates_b = pooled_rates(before, groups, compared, codes, tables.universe, horizon)
    rates_a = pooled_rates(after, groups, compared, codes, tables.universe, horizon)

    members = [np.flatnonzero(tested & (groups.of_condition == g)) for g in range(len(groups.keys))]
    rows_of = [np.flatnonzero(tested[counts.before_case] & (groups.of_condition[counts.before_case] == g))
               for g in range(len(groups.keys))]
    pending = [(g, j) for g in range(len(groups.keys)) if members[g].size for j in range(len(events))]
    m = len(pending)
    flips = [sign_flip(counts.b[members[g], j], counts.c[members[g], j]) for g, j in pending]
    q_values: np.ndarray = np.zeros(0)
    if m:
        q_values = np.asarray(stats_tests.benjamini_hochberg([f.p_mid for f in flips]), dtype=float)
    results: dict[int, list[OutcomeResult]] = {}
    for (g, j), flip, q_value in zip(pending, flips, q_values, strict=True):
        cases = members[g][counts.per_case[members[g]] > 0]
        rows = rows_of[g]
        rho = within_case_correlation(counts.before_event[rows, j], counts.before_case[rows])
        n_eff = effective_pairs(counts.per_case[cases], rho)
        moved = q_value <= q and flip.t != 0
        verdict = ("rose" if flip.t > 0 else "fell") if moved else "no change"
        before_rates, after_rates = rates_b[g], rates_a[g]
        assert before_rates is not None and after_rates is not None  # a tested group has episodes
        rise = fall = None
        share = before_rates[j].share
        if verdict == "no change" and share is not None and math.floor(n_eff) > 0:
            rise, fall = condition_mde_values(round(share, 12), math.floor(n_eff), q / m)
        results.setdefault(g, []).append(
            OutcomeResult(
                outcome=events[j], before=before_rates[j], after=after_rates[j],
                pairs=int(counts.per_case[cases].sum()) if paired else None,
                b=flip.b if paired else None, c=flip.c if paired else None, statistic=None,
                p=flip.p_mid, p_exact=flip.p_exact, q_value=float(q_value), verdict=verdict,
                mde_rise=rise, mde_fall=fall, note=None, family="pooled", cases=int(cases.size),
                cases_up=flip.cases_up, cases_down=flip.cases_down, effective_pairs=n_eff,
                within_case_correlation=rho,
            )
        )
    group_compared = [bool(members[g].size or compared[groups.of_condition == g].any())
                      for g in range(len(groups.keys))]
    for g in range(len(groups.keys)):
        if group_compared[g] and g not in results:  # in both runs, no episode with an outcome in one
            results[g] = [_untested(name) for name in events]
    pooled = decide_verdicts(results, groups.keys, groups.labels, group_compared, events, adverse)
    pooled = dataclasses.replace(
        pooled, conditions=tuple(dataclasses.replace(c, family="pooled") for c in pooled.conditions)
    )
    case_rows, warnings = _case_rows(case_results, groups, keys, labels, compared, events, adverse)
    if counts.left_out:
        warnings.append(
            f"{counts.left_out:,} episodes with an outcome are left out of the pooled test (a case's "
            "episodes beyond the other run's count of that case); the rates count them"
        )
    test = "sign_flip" if paired else "sign_flip_unpaired"
    return Benchmark(test, pooled, m, case_rows, tuple(warnings))


def _untested(name: str) -> OutcomeResult:
    empty = Rate(0, 0, None, None, None, False, None, None)
    return OutcomeResult(name, empty, empty, None, None, None, None, None, None, None, "not tested",
                         None, None, None, family="pooled")


def _case_rows(
    case_results: Mapping[int, Sequence[OutcomeResult]],
    groups: Groups,
    keys: Sequence[str],
    labels: Sequence[str],
    compared: np.ndarray,
    events: Sequence[str],
    adverse: Sequence[bool],
) -> tuple[tuple[ConditionResult, ...], list[str]]:
    """Every case's verdict (its own family), and the warnings about cases."""
    verdicts = decide_verdicts(case_results, keys, labels, list(compared), events, adverse)
    cases = tuple(
        dataclasses.replace(
            condition, family="case", group=groups.labels[groups.of_condition[c]], case=groups.case_values[c]
        )
        for c, condition in zip(np.flatnonzero(compared).tolist(), verdicts.conditions, strict=True)
    )
    untested = [c.label for c in cases if c.verdict == "not tested"]
    others = [w for w in verdicts.warnings if not w.endswith("it is not tested")]
    return cases, [*_counted(untested, "has no episode with an outcome in one run; it is not tested",
                             "have no episode with an outcome in one run; they are not tested"), *others]


def _counted(labels: Sequence[str], one: str, many: str) -> list[str]:
    """One warning per case up to LISTED of them, else one that counts them."""
    if len(labels) <= LISTED:
        return [f"condition {label} {one}" for label in labels]
    return [f"{len(labels):,} cases {many} ({'; '.join(labels[:LISTED])}; ...)"]


def one_run_only_warnings(labels: Sequence[str], run: str) -> list[str]:
    """The cases that ran in one run only, by name up to LISTED of them, else counted."""
    return _counted(labels, f'ran only in "{run}"; it is not compared',
                    f'ran only in "{run}"; they are not compared')
