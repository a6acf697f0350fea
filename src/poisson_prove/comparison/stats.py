"""The numbers of a comparison, vectorized over conditions: rates, tests, q-values, MDEs.

The statistics themselves live in `poisson_prove.stats` (Wilson, Aalen-Johansen, McNemar,
Fisher, log-rank, Benjamini-Hochberg, the MDE); this module only arranges the counts they
take and reads back what they give, per (condition, event).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, cast

import numpy as np

from poisson_prove.comparison.frame import Side, pair_rows
from poisson_prove.comparison.result import ErrorCount, OutcomeResult, Rate, RateTest
from poisson_prove.stats import incidence, power
from poisson_prove.stats import tests as stats_tests


@dataclass(frozen=True)
class RateTable:
    """One run's rates by the horizon: arrays over conditions (C) and outcomes (K)."""

    rows_by_condition: np.ndarray  # (C,) every stored row, with or without an outcome
    n: np.ndarray  # (C,) rows with an outcome
    known: np.ndarray  # (C,) rows with an outcome not censored before the horizon
    k: np.ndarray  # (C, K) events by the horizon
    share: np.ndarray  # (C, K) cumulative incidence at the horizon
    variance: np.ndarray  # (C, K) Aalen-Johansen variance (nan where not computed)
    starred: np.ndarray  # (C, K) censored before the horizon
    effective_n: np.ndarray  # (C, K) nan unless starred
    lo: np.ndarray
    hi: np.ndarray


@dataclass(frozen=True)
class Tables:
    conditions: int
    universe: int
    before: RateTable
    after: RateTable


def _fisher_each(events_a: np.ndarray, n_a: np.ndarray, events_b: np.ndarray, n_b: np.ndarray) -> np.ndarray:
    """Two-sided Fisher p of every (events_a/n_a, events_b/n_b) pair of the arrays."""
    tables = zip(events_a, n_a, events_b, n_b, strict=True)
    fisher = stats_tests.fisher_two_sided
    return np.array([fisher(int(x), int(m), int(y), int(k)) for x, m, y, k in tables], dtype=float)


def rates_by_horizon(
    condition: np.ndarray,
    cause: np.ndarray,
    t: np.ndarray,
    conditions: int,
    universe: int,
    horizon: float,
    early: np.ndarray | None = None,
) -> RateTable:
    """Cumulative incidence of every outcome in every condition by the common horizon.

    `early` marks episodes censored at their t before the horizon (stopped by their own,
    shorter horizon): they count in n, their outcome does not.
    """
    if early is None:
        early = np.zeros(condition.shape, dtype=bool)
    # One count of every row by (condition + 1, outcome, early, t against h), the condition
    # -1 (outside the comparison) in slot 0 and t's three cases: neither (NaN), t <= h, t > h.
    width = universe + 1
    key = np.add(condition, 1, dtype=np.int32, casting="unsafe")
    key *= width
    key += cause
    key *= 2
    key += early
    key *= 3
    key += t <= horizon
    after = t > horizon
    key += after
    key += after
    table = np.bincount(key, minlength=(conditions + 1) * width * 6).reshape(conditions + 1, width, 2, 3)[1:]
    rows_by_condition = table.sum(axis=(1, 2, 3))
    with_outcome = table[:, 1:]
    n = with_outcome.sum(axis=(1, 2, 3))
    known = n - with_outcome[:, :, 1].sum(axis=(1, 2))
    k = np.ascontiguousarray(with_outcome[:, :, 0, 1])  # not early, t <= h
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(n[:, None] > 0, k / np.maximum(n, 1)[:, None], np.nan)
    variance = np.full((conditions, universe), np.nan)
    starred = np.zeros((conditions, universe), dtype=bool)
    # Still running at the horizon: censored there. Only those conditions need Aalen-Johansen;
    # with no censoring before the horizon it equals k/n, which the estimator confirms.
    running = with_outcome[:, :, 0, 2].sum(axis=1) + with_outcome[:, :, 1].sum(axis=(1, 2))
    censored_conditions = np.flatnonzero(running)
    if censored_conditions.size:
        observed = np.where(early, 0, cause) if early.any() else cause  # 0: censored at its t
        if n.sum() == condition.size and censored_conditions.size == np.count_nonzero(n):
            # every row has an outcome in a condition that needs the estimator: no selection
            fits = incidence.aalen_johansen_grouped(t, observed, condition, horizon, causes=universe)
        else:
            rows = (condition >= 0) & (cause > 0) & np.isin(condition, censored_conditions)
            fits = incidence.aalen_johansen_grouped(
                t[rows], observed[rows], condition[rows], horizon, causes=universe
            )
        for label, fit in fits.items():
            c = cast(int, label)  # the condition codes given as groups
            share[c] = fit.incidence
            variance[c] = fit.variance
            starred[c] = fit.censored
    effective_n = np.full((conditions, universe), np.nan)
    lo = np.full((conditions, universe), np.nan)
    hi = np.full((conditions, universe), np.nan)
    plain = np.broadcast_to((n[:, None] > 0), (conditions, universe)) & ~starred
    if plain.any():
        kk = k[plain].astype(float)
        nn = np.broadcast_to(n[:, None], (conditions, universe))[plain].astype(float)
        lo[plain], hi[plain] = incidence.wilson(kk, nn)
    if starred.any():
        nn = np.broadcast_to(n[:, None], (conditions, universe))[starred].astype(float)
        lo[starred], hi[starred], effective_n[starred] = incidence.starred_wilson(
            share[starred], variance[starred], nn
        )
    return RateTable(rows_by_condition, n, known, k, share, variance, starred, effective_n, lo, hi)


def _rate(table: RateTable, c: int, e: int) -> Rate:
    def num(value: float) -> float | None:
        return float(value) if math.isfinite(value) else None

    return Rate(
        n=int(table.n[c]),
        k=int(table.k[c, e]),
        share=num(table.share[c, e]),
        lo=num(table.lo[c, e]),
        hi=num(table.hi[c, e]),
        starred=bool(table.starred[c, e]),
        variance=num(table.variance[c, e]),
        effective_n=num(table.effective_n[c, e]),
    )


def twin_rows(before: Side, after: Side) -> tuple[np.ndarray, np.ndarray]:
    """Row indices (into each side) of the twins McNemar pairs: the same (condition,
    replicate) and seed, both with an outcome, neither censored before the horizon."""
    # A twin censored before the horizon has no known fate by it: the pair is left out.
    valid_b = _rows_where((before.condition >= 0) & (before.cause > 0) & ~before.early)
    valid_a = _rows_where((after.condition >= 0) & (after.cause > 0) & ~after.early)
    stride = int(max(before.frame.replicate.max(initial=0), after.frame.replicate.max(initial=0))) + 1
    key_b = _pick(before.condition, valid_b).astype(np.int64) * stride
    key_b += _pick(before.frame.replicate, valid_b)
    key_a = _pick(after.condition, valid_a).astype(np.int64) * stride
    key_a += _pick(after.frame.replicate, valid_a)
    rb, ra = pair_rows(key_b, _pick(before.frame.seed, valid_b), key_a, _pick(after.frame.seed, valid_a))
    if valid_b is not None:
        rb = valid_b[rb]
    if valid_a is not None:
        ra = valid_a[ra]
    return rb, ra


def fate_by(side: Side, rows: np.ndarray, horizon: float) -> np.ndarray:
    """Each row's outcome code by the horizon (0: none by then)."""
    return np.where(side.t[rows] <= horizon, side.cause[rows], 0)


def mcnemar_counts(
    before: Side, after: Side, conditions: int, universe: int, horizon: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pairs per condition, and b / c per (condition, outcome) from the joined twins."""
    rb, ra = twin_rows(before, after)
    # One count of the pairs by (condition, fate before, fate after), fate 0 = none by h.
    width = universe + 1
    key = before.condition[rb].astype(np.int64) * width
    key += fate_by(before, rb, horizon)
    key *= width
    key += fate_by(after, ra, horizon)
    table = np.bincount(key, minlength=conditions * width * width).reshape(conditions, width, width)
    pairs = table.sum(axis=(1, 2))
    same = np.diagonal(table, axis1=1, axis2=2)[:, 1:]
    # b: the event before and another fate after; c: the reverse
    return pairs, table[:, 1:, :].sum(axis=2) - same, table[:, :, 1:].sum(axis=1) - same


def _rows_where(mask: np.ndarray) -> np.ndarray | None:
    """The indices where `mask` holds; None when it holds everywhere (no selection needed)."""
    return None if mask.all() else np.flatnonzero(mask)


def _pick(values: np.ndarray, rows: np.ndarray | None) -> np.ndarray:
    return values if rows is None else values[rows]


@dataclass(frozen=True)
class _RateP:
    """A rate test's numbers over the tested (condition, event)s, and McNemar's counts."""

    p: np.ndarray
    p_exact: np.ndarray
    direction: np.ndarray
    pairs: np.ndarray | None = None  # McNemar: (C,) pairs, (C, K) b and c
    b: np.ndarray | None = None
    c: np.ndarray | None = None


def _rate_p(
    method: str, before: Side, after: Side, tables: Tables, cs: np.ndarray, es: np.ndarray, horizon: float,
    sequential_p: Mapping[tuple[int, int], float] | None,
) -> _RateP:
    """McNemar (mid-p and exact p) or Fisher on each tested (condition `cs`, event `es`)."""
    p_exact = np.full(cs.size, np.nan)
    if method == "mcnemar":
        pairs, b, c = mcnemar_counts(before, after, tables.conditions, tables.universe, horizon)
        bb, cc = b[cs, es], c[cs, es]
        p, p_exact = stats_tests.mcnemar_many(bb.astype(np.int64), cc.astype(np.int64))
        p = np.array(p, dtype=float)
        if sequential_p:  # a --stop-when-settled run: the p of the looks it took
            for i, key in enumerate(zip(cs.tolist(), es.tolist(), strict=True)):
                if key in sequential_p:
                    p[i] = sequential_p[key]
        return _RateP(p, np.asarray(p_exact, dtype=float), np.sign(cc - bb).astype(float), pairs, b, c)
    # Episodes censored before the horizon have no known fate by it: not in n here.
    kb, nb = tables.before.k[cs, es].astype(float), tables.before.known[cs].astype(float)
    ka, na = tables.after.k[cs, es].astype(float), tables.after.known[cs].astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):  # every episode censored: no direction
        direction = np.nan_to_num(np.sign(ka / na - kb / nb))
    return _RateP(_fisher_each(kb, nb, ka, na), p_exact, direction)


def _verdicts(p: np.ndarray, direction: np.ndarray, q: float) -> tuple[np.ndarray, np.ndarray]:
    """(Benjamini-Hochberg q-values over `p`, each test's rose | fell | no change)."""
    q_values = np.asarray(stats_tests.benjamini_hochberg(p), dtype=float) if p.size else np.empty(0)
    flagged = q_values <= q
    verdicts = np.where(
        flagged & (direction > 0), "rose", np.where(flagged & (direction < 0), "fell", "no change")
    )
    return q_values, verdicts


def either_verdict(hazard: str, rate: str, adverse: bool) -> str:
    """A log-rank row's verdict from its two tests: the move for the worse when either test
    found it (a rise of a failure, a fall of a success), else the move for the better when
    either found it, else "no change"."""
    bad, good = ("rose", "fell") if adverse else ("fell", "rose")
    if bad in (hazard, rate):
        return bad
    if good in (hazard, rate):
        return good
    return "no change"


def condition_tests(
    method: str,
    before: Side,
    after: Side,
    tables: Tables,
    event_index: Sequence[int],
    horizon: float,
    q: float,
    *,
    names: Sequence[str],
    adverse: Sequence[bool],
    paired: bool,
    sequential_p: Mapping[tuple[int, int], float] | None = None,
    case_d: np.ndarray | None = None,
    rate_method: str | None = None,
) -> tuple[dict[int, list[OutcomeResult]], int]:
    """Every (condition, event) test, BH-adjusted together; per condition its rows.

    `case_d` (runs with a case axis, comparison.pooled): each (condition, event)'s d_k, and
    the rows are then the per-case family's. `rate_method` (with `logrank_bh` only: the runs'
    default rate test, mcnemar or fisher) is run on the same rows as a family of its own, and
    each row's verdict is the worse of the two tests' (`either_verdict`); `sequential_p` then
    applies to that McNemar.
    """
    C = tables.conditions
    both = (tables.before.n > 0) & (tables.after.n > 0)
    present = (tables.before.rows_by_condition > 0) & (tables.after.rows_by_condition > 0)
    tested = [(c, j) for c in range(C) if both[c] for j in range(len(event_index))]
    m = len(tested)
    cs = np.array([c for c, _ in tested], dtype=np.int64)
    es = np.array([event_index[j] for _, j in tested], dtype=np.int64)
    statistic = np.full(m, np.nan)
    rate: _RateP | None = None  # McNemar or Fisher: the method's own, or log-rank's companion
    if method in ("mcnemar", "fisher"):
        rate = _rate_p(method, before, after, tables, cs, es, horizon, sequential_p if m else None)
        p, p_exact, direction = rate.p, rate.p_exact, rate.direction
    else:
        p, p_exact = np.full(m, np.nan), np.full(m, np.nan)
        for i, (condition, e) in enumerate(zip(cs, es, strict=True)):
            rows_b = (before.condition == condition) & (before.cause > 0)
            rows_a = (after.condition == condition) & (after.cause > 0)
            time = np.concatenate([before.t[rows_b], after.t[rows_a]])
            cause = np.concatenate([before.cause[rows_b] * ~before.early[rows_b],
                                    after.cause[rows_a] * ~after.early[rows_a]])
            event = cause == e + 1  # censored before the horizon: no event, at risk until t
            group = np.concatenate([np.zeros(rows_b.sum(), int), np.ones(rows_a.sum(), int)])
            fit = stats_tests.logrank(time, event, group, horizon)
            statistic[i], p[i] = fit.statistic, fit.p
        direction = np.sign(tables.after.share[cs, es] - tables.before.share[cs, es]) if m else np.zeros(0)
        if rate_method is not None:
            rate = _rate_p(rate_method, before, after, tables, cs, es, horizon, sequential_p if m else None)
    q_values, verdicts = _verdicts(p, direction, q)
    own = verdicts  # the method's own verdicts (log-rank's, beside its companion's)
    companion = rate is not None and method == "logrank_bh"
    if companion:
        assert rate is not None  # the companion's numbers, computed above
        rate_q, rate_verdicts = _verdicts(rate.p, rate.direction, q)
        verdicts = np.array(
            [either_verdict(str(h), str(r), adverse[j])
             for h, r, (_, j) in zip(own, rate_verdicts, tested, strict=True)],
            dtype=object,
        )
    # Only a "no change" shows the smallest change it could have seen: only those are computed.
    # Under log-rank it is the rate test's (the section 1 MDE is a rate test's), at its pairs.
    unchanged = [key for key, verdict in zip(tested, verdicts, strict=True) if verdict == "no change"]
    pairs = None if rate is None else rate.pairs
    mde = _mde_lookup(tables, unchanged, event_index, q / m if m else q, pairs)

    results: dict[int, list[OutcomeResult]] = {}
    position = {key: i for i, key in enumerate(tested)}
    # McNemar's own rows carry its counts; a log-rank row's are in its rate_test
    b = rate.b if rate is not None and not companion else None
    c_ = rate.c if rate is not None and not companion else None
    for condition in range(C):
        if not present[condition]:
            continue
        rows = []
        for j, e in enumerate(event_index):
            at = position.get((condition, j))
            verdict = "not tested" if at is None else str(verdicts[at])
            rise, fall = mde.get((condition, j), (None, None)) if verdict == "no change" else (None, None)
            beside: dict[str, Any] = {}
            if companion and at is not None:
                assert rate is not None  # the companion's numbers, computed above
                beside = {
                    "logrank_verdict": str(own[at]),
                    "rate_test": RateTest(
                        method=str(rate_method),
                        pairs=None if rate.pairs is None else int(rate.pairs[condition]),
                        b=None if rate.b is None else int(rate.b[condition, e]),
                        c=None if rate.c is None else int(rate.c[condition, e]),
                        p=float(rate.p[at]),
                        p_exact=float(rate.p_exact[at]) if np.isfinite(rate.p_exact[at]) else None,
                        q_value=float(rate_q[at]),
                        verdict=str(rate_verdicts[at]),
                    ),
                }
            elif companion:
                beside = {"logrank_verdict": "not tested"}
            if case_d is not None:
                beside.update(family="case", d=int(case_d[condition, j]))
            rows.append(
                OutcomeResult(
                    outcome=names[j],
                    before=_rate(tables.before, condition, e),
                    after=_rate(tables.after, condition, e),
                    pairs=None if companion or pairs is None else int(pairs[condition]),
                    b=None if b is None else int(b[condition, e]),
                    c=None if c_ is None else int(c_[condition, e]),
                    statistic=None if at is None or not np.isfinite(statistic[at]) else float(statistic[at]),
                    p=None if at is None else float(p[at]),
                    p_exact=None if at is None or not np.isfinite(p_exact[at]) else float(p_exact[at]),
                    q_value=None if at is None else float(q_values[at]),
                    verdict=verdict,
                    mde_rise=rise,
                    mde_fall=fall,
                    note=None,
                    **beside,
                )
            )
        if method == "logrank_bh":
            rows = _logrank_notes(rows)
        results[condition] = rows
    return results, m


def _logrank_notes(rows: list[OutcomeResult]) -> list[OutcomeResult]:
    """A hazard test's row says so when a competing outcome moved in the same condition."""
    moved = [r.outcome for r in rows if r.verdict in ("rose", "fell")]
    out = []
    for row in rows:
        others = [name for name in moved if name != row.outcome]
        # an ending that no episode of either run reached has no hazard to misread
        if others and (row.before.k or row.after.k):
            note = (
                f"{' and '.join(others)} also moved here; the log-rank test compares hazards, and a "
                "change in one ending's hazard can come from a change in a competing ending"
            )
            row = OutcomeResult(**{**row.__dict__, "note": note})
        out.append(row)
    return out


def _mde_lookup(
    tables: Tables, tested: Sequence[tuple[int, int]], event_index: Sequence[int], alpha: float, pairs: Any
) -> dict[tuple[int, int], tuple[float | None, float | None]]:
    """The smallest rise and fall each test could have shown (STATISTICS.md section 1)."""
    out: dict[tuple[int, int], tuple[float | None, float | None]] = {}
    for condition, j in tested:
        e = event_index[j]
        rate = float(tables.before.share[condition, e])
        n = int(min(tables.before.n[condition], tables.after.n[condition]))
        if pairs is not None:
            n = min(n, int(pairs[condition]))
        if n <= 0 or not math.isfinite(rate):
            out[(condition, j)] = (None, None)
            continue
        out[(condition, j)] = condition_mde_values(round(rate, 12), n, alpha)
    return out


# A pure function of its arguments, and exact power is costly: remembered per process.
@lru_cache(maxsize=4096)
def condition_mde_values(rate: float, n: int, alpha: float) -> tuple[float | None, float | None]:
    rise, fall = power.condition_mde(rate, n, alpha)
    return _mde_value(rise), _mde_value(fall)


def _mde_value(value: Any) -> float | None:
    if value is None:
        return None
    value = getattr(value, "mde", value)
    return None if value is None else float(value)


def coverage_tests(before: Side, after: Side, conditions: int, q: float) -> dict[int, dict[str, Any]]:
    """Rows without an outcome per condition and run; Fisher + BH on their share."""
    def per_run(side: Side) -> tuple[np.ndarray, np.ndarray, list[list[ErrorPair]]]:
        inside = side.condition >= 0
        rows = np.bincount(side.condition[inside], minlength=conditions)
        missing = inside & (side.cause == 0)
        without = np.bincount(side.condition[missing], minlength=conditions)
        kinds = side.frame.error_kind
        width = len(kinds.values) + 1
        code = np.where(kinds.codes[missing] >= 0, kinds.codes[missing], width - 1)
        table = np.bincount(side.condition[missing] * width + code, minlength=conditions * width)
        table = table.reshape(conditions, width)
        names = [*kinds.values, "unknown"]
        errors = [
            sorted(
                ((names[k], int(table[c, k])) for k in range(width) if table[c, k]),
                key=lambda pair: (-pair[1], pair[0]),
            )
            for c in range(conditions)
        ]
        return rows, without, errors

    rows_b, without_b, errors_b = per_run(before)
    rows_a, without_a, errors_a = per_run(after)
    tested = [c for c in range(conditions) if rows_b[c] and rows_a[c] and (without_b[c] or without_a[c])]
    p = np.full(conditions, np.nan)
    q_values = np.full(conditions, np.nan)
    if tested:
        idx = np.array(tested)
        p_t = _fisher_each(without_b[idx], rows_b[idx], without_a[idx], rows_a[idx])
        p[idx] = p_t
        q_values[idx] = np.asarray(stats_tests.benjamini_hochberg(p_t), dtype=float)
    out = {}
    for c in range(conditions):
        out[c] = {
            "before_rows": int(rows_b[c]),
            "before_without": int(without_b[c]),
            "after_rows": int(rows_a[c]),
            "after_without": int(without_a[c]),
            "before_errors": tuple(ErrorCount(k, n) for k, n in errors_b[c]),
            "after_errors": tuple(ErrorCount(k, n) for k, n in errors_a[c]),
            "p": None if not np.isfinite(p[c]) else float(p[c]),
            "q_value": None if not np.isfinite(q_values[c]) else float(q_values[c]),
            "differs": bool(np.isfinite(q_values[c]) and q_values[c] <= q),
        }
    return out


ErrorPair = tuple[str, int]
