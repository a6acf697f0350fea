"""The "any failure" row: the union of the declared failure outcomes, tested as its own family.

When an agent declares two or more failure outcomes, failures can move from one outcome to
another: one outcome's fall is significant, the others' rises each are not, and the total rose.
Per outcome that reads "safer". So each condition (each pooled group, for runs with a case axis)
also gets one row for the union: an episode fails by the horizon when it ended in any declared
failure outcome by then. Its rate is the cumulative incidence of that union (the sum of the
failures' incidences; Aalen-Johansen with the other outcomes competing, when censored), its test
the comparison's own (McNemar on the twins' union fates, Fisher on the union counts, the
cause-specific log-rank test of the union, or the pooled sign-flip test over cases on each
case's union d_k), and its q-values come from a Benjamini-Hochberg of its own over the
conditions (groups): the per-outcome family, its m and its q-values are exactly as without it.

The row enters the verdicts as a guard (`guard_verdicts`): a union that rose is a move for the
worse (a "safer" condition becomes a "trade", a "no change" one "worse", and `check` exits 4);
a union that fell changes no verdict (the per-outcome rows say what got safer). The headline
counts it only when it changed a verdict somewhere; `rose` keeps naming outcomes only. A run
swept with --stop-when-settled recorded its looks per outcome, so the union row uses the fixed
test. Per-case detail rows carry no union row.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from poisson_prove.comparison.frame import Side
from poisson_prove.comparison.pooled import case_counts, compare_pooled
from poisson_prove.comparison.result import ConditionResult, Headline, HeadlineCount, OutcomeResult
from poisson_prove.comparison.stats import Tables, condition_tests, rates_by_horizon
from poisson_prove.comparison.verdicts import Verdicts

ANY_FAILURE = "any failure"
UNION = 1  # the union's cause code on the recoded sides; 2 is every other outcome


@dataclass(frozen=True)
class AnyFailure:
    """The union rows, by condition key (by pooled group key for runs with a case axis)."""

    rows: Mapping[str, OutcomeResult]
    tests: int  # the family's size: BH over these rows only


def union_side(side: Side, failure_codes: Sequence[int]) -> Side:
    """`side` with its causes recoded: 1 any declared failure, 2 any other outcome, 0 none."""
    failed = np.isin(side.cause, np.asarray(failure_codes, dtype=np.int64))
    cause = np.where(failed, UNION, np.where(side.cause > 0, 2, 0)).astype(np.int64)
    return dataclasses.replace(side, cause=cause)


def any_failure_rows(
    method: str,
    before: Side,
    after: Side,
    *,
    keys: Sequence[str],
    failure_codes: Sequence[int],
    horizon: float,
    q: float,
    pooled: Mapping[str, object] | None = None,
    rate_method: str | None = None,
) -> AnyFailure:
    """The union row of every compared condition (or pooled group, with `pooled`: the keyword
    arguments of `compare_pooled` besides the sides, tables, counts and events). `rate_method`:
    under log-rank, the rate test run beside it (comparison.stats.condition_tests)."""
    sides = union_side(before, failure_codes), union_side(after, failure_codes)
    conditions = len(keys)
    tables = Tables(
        conditions=conditions,
        universe=2,
        before=rates_by_horizon(
            sides[0].condition, sides[0].cause, sides[0].t, conditions, 2, horizon, sides[0].early
        ),
        after=rates_by_horizon(
            sides[1].condition, sides[1].cause, sides[1].t, conditions, 2, horizon, sides[1].early
        ),
    )
    counts = None
    if pooled is not None:
        paired = bool(pooled["paired"])
        counts = case_counts(sides[0], sides[1], conditions, np.array([UNION]), horizon, paired=paired)
    results, tests = condition_tests(
        method, sides[0], sides[1], tables, [0], horizon, q, names=[ANY_FAILURE], adverse=[True],
        paired=method == "mcnemar", case_d=None if counts is None else counts.d, rate_method=rate_method,
    )
    if pooled is None or counts is None:
        return AnyFailure({keys[i]: rows[0] for i, rows in results.items()}, tests)
    options = {k: v for k, v in pooled.items() if k != "paired"}
    benchmark = compare_pooled(
        sides[0], sides[1], tables, counts, results, keys=keys, events=[ANY_FAILURE], event_index=[0],
        adverse=[True], horizon=horizon, q=q, **options,  # type: ignore[arg-type]  # compare_pooled's own
    )
    return AnyFailure({c.key: c.outcomes[0] for c in benchmark.verdicts.conditions}, benchmark.tests)


def guard_verdicts(verdicts: Verdicts, union: AnyFailure) -> Verdicts:
    """Each condition with its union row; a union that rose is a move for the worse.

    Where that changed a verdict (a rise of the total where no single outcome rose) the
    headline gains an `any failure: N safer, M worse` count (over every condition with a union
    row) and its word is recomputed; elsewhere the headline reads as without the union rows."""
    conditions: list[ConditionResult] = []
    safer = worse = changed = 0
    for condition in verdicts.conditions:
        row = union.rows.get(condition.key)
        if row is None:
            conditions.append(condition)
            continue
        verdict = condition.verdict
        if row.verdict == "rose":
            worse += 1
            verdict = {"safer": "trade", "no change": "worse"}.get(verdict, verdict)
            changed += verdict != condition.verdict
        elif row.verdict == "fell":
            safer += 1
        conditions.append(dataclasses.replace(condition, verdict=verdict, any_failure=row))
    headline = verdicts.headline
    if changed:
        counts = (*headline.counts, HeadlineCount(ANY_FAILURE, safer, worse))
        got_safer = any(c.safer for c in headline.counts)
        headline = Headline("trade" if got_safer else "worse", counts)
    return Verdicts(tuple(conditions), headline, verdicts.warnings)
