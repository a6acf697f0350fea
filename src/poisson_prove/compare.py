"""Two runs -> per condition and per failure outcome: rates, tests, verdicts (no printing).

The definitions are STATISTICS.md's: rates are cumulative incidences by the common horizon
(Aalen-Johansen, competing outcomes), tests are McNemar on shared seeds for runs paired at
sweep time and Fisher otherwise (log-rank on request), Benjamini-Hochberg over every test,
and each "no change" carries the smallest change the condition could have shown.
Everything is vectorized over all conditions at once: conditions and outcomes are small
integer codes and counts are `np.bincount`s.
"""

from __future__ import annotations

import os
import sys
import types
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from poisson_prove.compare_frame import (
    RunFrame,
    distinct_cases_per_cell,
    read_frame,
    recode,
)
from poisson_prove.compare_result import (
    Comparison,
    ConditionResult,
    CoverageRow,
    Headline,
    HeadlineCount,
    OutcomeResult,
    RunSide,
)
from poisson_prove.conditions import cell_label, cfg_of
from poisson_prove.errors import ProveError
from poisson_prove.shared.suggest import did_you_mean
from poisson_prove.store import RunInfo, RunStore

METHODS = ("mcnemar", "fisher", "logrank_bh")
EPISODE_TIMEOUT = "episode_timeout"
StoreArg = str | os.PathLike[str] | None


# Choosing the runs ------------------------------------------------------------------------


def default_runs(
    before: str | None = None, after: str | None = None, *, store: StoreArg = None
) -> tuple[RunInfo, RunInfo]:
    """The two runs `diff` compares when not told: the latest and the run it was paired
    with, else the two latest. One name given is BEFORE, compared with the latest run."""
    runs = RunStore(store)
    if before is not None and after is not None:
        return runs.resolve(before), runs.resolve(after)
    stored = runs.runs()
    if len(stored) < 2:
        names = "".join(f' ("{r.name}")' for r in stored)
        raise ProveError(
            f"the store {runs.root} holds {len(stored)} run{'' if len(stored) == 1 else 's'}{names}; "
            "a comparison needs two",
            suggestions=["poisson-prove sweep SPEC --yes --pair-with latest"],
        )
    latest = stored[-1]
    if before is not None:
        return runs.resolve(before), latest
    partner = latest.manifest.get("paired_with")
    for run in stored[:-1]:
        if partner and run.run_id == partner:
            return run, latest
    return stored[-2], latest


def _resolve(runs: RunStore, ref: str | RunInfo) -> RunInfo:
    return ref if isinstance(ref, RunInfo) else runs.resolve(str(ref))


# Refusals ---------------------------------------------------------------------------------


def _declarations(before: RunInfo, after: RunInfo) -> tuple[tuple[str, ...], ...]:
    declared = []
    for key in ("outcomes", "failures", "successes"):
        b, a = before.manifest.get(key) or [], after.manifest.get(key) or []
        if set(b) != set(a):
            raise ProveError(
                f'runs "{before.name}" and "{after.name}" declare different {key} '
                f"({', '.join(sorted(b)) or 'none'} vs {', '.join(sorted(a)) or 'none'}); "
                "only runs of one agent's outcomes can be compared",
                suggestions=["poisson-prove runs", "poisson-prove diff BEFORE AFTER, two runs of one agent"],
            )
        declared.append(tuple(str(x) for x in a))
    if not declared[1] and not declared[0]:
        raise ProveError(f'run "{after.name}" declares no outcomes; nothing to compare')
    return declared[0], declared[1], declared[2]


def _refuse_mixed_cases(frame: RunFrame) -> None:
    mixed = distinct_cases_per_cell(frame)
    if not mixed:
        return
    axis_order = frame.info.manifest.get("axis_order")
    order = [c.get("key") for c in frame.info.manifest.get("cells") or [] if isinstance(c, dict)]
    first = min(mixed, key=lambda key: (order.index(key) if key in order else len(order), key))
    cases = mixed[first]
    raise ProveError(
        f"condition {cell_label(cfg_of(first), axis_order)} ran {len(cases)} cases "
        f"({', '.join(cases)}); each case must be its own sweep axis",
        suggestions=[
            "make each case its own sweep axis in the spec, an [axes.<name>] table whose values "
            "are the cases, then sweep again"
        ],
    )


def _event_names(
    event: str | None, outcomes: Sequence[str], failures: Sequence[str]
) -> tuple[tuple[str, ...], bool]:
    """(the events to test, whether `episode_timeout` errors become an event)."""
    if event is None:
        return tuple(failures), False
    if event in outcomes:
        return (event,), False
    if event == EPISODE_TIMEOUT or (event == "timeout" and "timeout" not in outcomes):
        return (EPISODE_TIMEOUT,), True
    choices = [*outcomes, EPISODE_TIMEOUT]
    raise ProveError(
        f'unknown event "{event}"{did_you_mean(event, choices)}: the runs declare '
        f"{', '.join(outcomes)}; episode_timeout counts episodes stopped by --episode-timeout",
        suggestions=[f"--event {failures[0] if failures else outcomes[0]}"],
    )


# Per-run arrays ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Side:
    info: RunInfo
    frame: RunFrame
    cell: np.ndarray  # index into the comparison's condition list, -1 outside it
    cause: np.ndarray  # 1..K into the outcome universe, 0 without an outcome
    t: np.ndarray
    horizon: float
    # Stopped by its own horizon, below the common one: censored there (filled in compare()).
    early: np.ndarray


def _side(frame: RunFrame, cells: Sequence[str], universe: Sequence[str], timeout_event: bool) -> _Side:
    cause = recode(frame.outcome, universe) + 1
    if timeout_event:
        kind = recode(frame.error_kind, [EPISODE_TIMEOUT])
        cause = np.where(kind == 0, len(universe), cause)
    has = cause > 0
    # the largest finite horizon of a row with an outcome, without selecting the rows
    horizon = float(np.max(frame.horizon, where=has & np.isfinite(frame.horizon), initial=-np.inf))
    if horizon == -np.inf:
        horizon = float("nan")
    t = frame.t.copy()  # episode_timeout rows get a time below; the frame stays as read
    early = np.zeros(frame.rows, dtype=bool)
    return _Side(frame.info, frame, recode(frame.cell, cells), cause.astype(np.int64), t, horizon, early)


def _run_side(side: _Side) -> RunSide:
    manifest = side.info.manifest
    counts = manifest.get("counts") or {}
    planned = counts.get("planned") if isinstance(counts, dict) else None
    return RunSide(
        run_id=side.info.run_id,
        name=side.info.name,
        target=manifest.get("target"),
        status=side.info.status,
        done=side.frame.rows,
        without_outcome=int((side.cause == 0).sum()),
        planned=int(planned) if isinstance(planned, int) else None,
        created=side.info.created,
        resumed_at=tuple(str(x) for x in manifest.get("resumed_at") or ()),
        horizon=side.horizon,
        salt=manifest.get("salt"),
        paired_with=manifest.get("paired_with"),
    )


def _condition_order(before: RunFrame, after: RunFrame) -> list[str]:
    order: list[str] = []
    for frame in (after, before):
        for cell in frame.info.manifest.get("cells") or []:
            key = cell.get("key") if isinstance(cell, dict) else None
            if key and key not in order:
                order.append(key)
    present = set(before.cell.values) | set(after.cell.values)
    order = [key for key in order if key in present]
    return order + sorted(present - set(order))


# The comparison ---------------------------------------------------------------------------


def compare(
    before: str | RunInfo,
    after: str | RunInfo,
    *,
    method: str | None = None,
    event: str | None = None,
    q: float = 0.05,
    store: StoreArg = None,
) -> Comparison:
    """Compare two stored runs (names, ids, `latest`, or RunInfo); see STATISTICS.md."""
    from poisson_prove.compare_stats import Tables, condition_tests, coverage_tests, rates_by_horizon

    runs = RunStore(store)
    before_info, after_info = _resolve(runs, before), _resolve(runs, after)
    if before_info.run_id == after_info.run_id:
        raise ProveError(
            f'both sides are run "{after_info.name}"; a comparison needs two different runs',
            suggestions=["poisson-prove runs"],
        )
    if not 0 < q < 1:
        raise ProveError(f"--q must be between 0 and 1 (exclusive), got {q}", exit_code=2)
    if method is not None and method not in METHODS:
        raise ProveError(
            f'unknown method "{method}"{did_you_mean(method, METHODS)}',
            suggestions=[f"--method {' | '.join(METHODS)}"],
            exit_code=2,
        )
    outcomes, failures, successes = _declarations(before_info, after_info)
    salt_b, salt_a = before_info.manifest.get("salt"), after_info.manifest.get("salt")
    paired = bool(
        after_info.manifest.get("paired_with") == before_info.run_id
        or before_info.manifest.get("paired_with") == after_info.run_id
        or (salt_b and salt_b == salt_a)
    ) and (not salt_b or not salt_a or salt_b == salt_a)
    chosen = method or ("mcnemar" if paired else "fisher")
    if chosen == "mcnemar" and not paired:
        raise ProveError(
            f'runs "{before_info.name}" and "{after_info.name}" were not paired at sweep time '
            "(different salts, so no shared seeds); McNemar needs episode twins",
            suggestions=["--method fisher", "sweep again with --pair-with BEFORE to get shared seeds"],
        )
    events, timeout_event = _event_names(event, outcomes, failures)
    universe = list(outcomes) + ([EPISODE_TIMEOUT] if timeout_event else [])

    frames = []
    for info in (before_info, after_info):
        frame = read_frame(info)
        if frame.rows == 0:
            raise ProveError(
                f'run "{info.name}" has no episodes',
                suggestions=["resume or rerun its sweep, then compare again"],
            )
        frames.append(frame)
    for frame in frames:
        _refuse_mixed_cases(frame)

    cells = _condition_order(frames[0], frames[1])
    sides = [_side(frame, cells, universe, timeout_event) for frame in frames]
    for side in sides:
        if not (side.cause > 0).any():
            raise ProveError(
                f'run "{side.info.name}" has no episode with an outcome '
                f"({side.frame.rows:,} without one); there is nothing to compare",
                suggestions=[f'poisson-prove inspect "{side.info.name}"'],
            )
    horizon = min(sides[0].horizon, sides[1].horizon)
    for side in sides:
        # An episode stopped by --episode-timeout has no t of its own: it ran to the limit.
        side.t[np.isnan(side.t) & (side.cause > 0)] = horizon
        # An episode whose own horizon is below the common one and which ran to it was cut
        # off by that horizon, not ended in [0, h]: still running as far as h goes, so it is
        # censored at its t (before h: its condition's shares are starred).
        own = side.frame.horizon
        side.early[:] = (side.cause > 0) & (own < horizon) & (side.t >= own)

    axis_order = after_info.manifest.get("axis_order") or before_info.manifest.get("axis_order")
    labels = [cell_label(cfg_of(key), axis_order) for key in cells]
    event_index = [universe.index(name) for name in events]
    before_rates, after_rates = (
        rates_by_horizon(side.cell, side.cause, side.t, len(cells), len(universe), horizon, side.early)
        for side in sides
    )
    tables = Tables(cells=len(cells), universe=len(universe), before=before_rates, after=after_rates)
    adverse = [name not in successes for name in events]
    sequential, sequential_p = _sequential(
        chosen, before_info, after_info, sides, cells, len(universe), horizon
    )
    results, tests = condition_tests(
        chosen, sides[0], sides[1], tables, event_index, horizon, q,
        names=list(events), adverse=adverse, paired=chosen == "mcnemar", sequential_p=sequential_p,
    )
    present_b = tables.before.rows_by_cell > 0
    present_a = tables.after.rows_by_cell > 0
    coverage = coverage_tests(sides[0], sides[1], len(cells), q)

    conditions: list[ConditionResult] = []
    warnings: list[str] = []
    counts = {name: [0, 0] for name in events}
    for i, key in enumerate(cells):
        if not (present_b[i] and present_a[i]):
            continue
        rows = results[i]
        rose = tuple(r.outcome for r in rows if r.verdict == "rose")
        fell = tuple(r.outcome for r in rows if r.verdict == "fell")
        moves = list(zip(rows, adverse, strict=True))
        bad = [r.outcome for r, harm in moves if r.verdict == ("rose" if harm else "fell")]
        good = [r.outcome for r, harm in moves if r.verdict == ("fell" if harm else "rose")]
        for name in bad:
            counts[name][1] += 1
        for name in good:
            counts[name][0] += 1
        if bad and good:
            verdict = "trade"
        elif bad:
            verdict = "worse"
        elif good:
            verdict = "safer"
        elif all(r.verdict == "not tested" for r in rows):
            verdict = "not tested"
            warnings.append(
                f"condition {labels[i]} has no episode with an outcome in one run; it is not tested"
            )
        else:
            verdict = "no change"
        conditions.append(ConditionResult(key, labels[i], verdict, fell, rose, tuple(rows)))
        warnings.extend(f"condition {labels[i]}, {r.outcome}: {r.note}" for r in rows if r.note)

    any_bad = any(c[1] for c in counts.values())
    any_good = any(c[0] for c in counts.values())
    word = "trade" if any_bad and any_good else "worse" if any_bad else "safer" if any_good else "no change"
    headline = Headline(word, tuple(HeadlineCount(n, s, w) for n, (s, w) in counts.items()))

    coverage_rows = []
    for i, key in enumerate(cells):
        if not (present_b[i] and present_a[i]):
            continue
        row = coverage[i]
        coverage_rows.append(CoverageRow(key=key, label=labels[i], **row))
        if row["differs"]:
            warnings.append(
                f"condition {labels[i]}: {row['before_without']:,} of {row['before_rows']:,} episodes "
                f"without an outcome before, {row['after_without']:,} of {row['after_rows']:,} after "
                f"(q {row['q_value']:.3g}); its rates may differ for that reason"
            )
    only_before = tuple(labels[i] for i in range(len(cells)) if present_b[i] and not present_a[i])
    only_after = tuple(labels[i] for i in range(len(cells)) if present_a[i] and not present_b[i])
    for label in only_before:
        warnings.append(f'condition {label} ran only in "{before_info.name}"; it is not compared')
    for label in only_after:
        warnings.append(f'condition {label} ran only in "{after_info.name}"; it is not compared')
    if not conditions:
        raise ProveError(
            f'runs "{before_info.name}" and "{after_info.name}" share no condition; nothing to compare',
            suggestions=["compare two runs of the same sweep spec"],
        )
    run_sides = [_run_side(side) for side in sides]
    for side in run_sides:
        if side.status != "complete":
            planned = f" of {side.planned:,} planned" if side.planned else ""
            resumed = " (resumed, not finished)" if side.resumed_at else ""
            warnings.append(
                f'run "{side.name}" is partial: {side.done:,}{planned} episodes{resumed}; '
                "resume its sweep before trusting this comparison"
            )
    if chosen == "mcnemar":
        unpaired = _unpaired_share(results, tables)
        if unpaired and sequential is not None:
            owner = sequential["run"]
            unpaired += f', including the twins of the replicates run "{owner}" skipped once settled'
        if unpaired:
            warnings.append(unpaired)
    if sides[0].horizon != sides[1].horizon:
        warnings.append(
            f"the runs' horizons differ ({_num(sides[0].horizon)} and {_num(sides[1].horizon)}); "
            f"both are read by the common horizon {_num(horizon)}"
        )

    return Comparison(
        before=run_sides[0],
        after=run_sides[1],
        method=chosen,
        method_is_default=method is None,
        paired=paired,
        event=event,
        q=q,
        horizon=horizon,
        t_unit=str(after_info.manifest.get("t_unit") or before_info.manifest.get("t_unit") or ""),
        outcomes=tuple(events),
        successes=tuple(successes),
        tests=tests,
        conditions=tuple(conditions),
        headline=headline,
        coverage=tuple(coverage_rows),
        only_before=only_before,
        only_after=only_after,
        warnings=tuple(warnings),
        sequential=sequential,
    )


def _sequential(
    method: str, before: RunInfo, after: RunInfo, sides: Sequence[_Side], cells: Sequence[str],
    universe: int, horizon: float,
) -> tuple[dict[str, Any] | None, dict[tuple[int, int], float] | None]:
    """For McNemar on a run swept with --stop-when-settled: what the method line says, and
    the sequential p per (condition, outcome)."""
    from poisson_prove.compare_sequential import sequential_p_values, sequential_record

    record = sequential_record(before, after) if method == "mcnemar" else None
    if record is None:
        return None, None
    owner = after if after.manifest.get("sequential") is record else before
    conditions = record.get("conditions") or {}
    summary = {
        "run": owner.name,
        "rule": record.get("rule"),
        "alpha": record.get("alpha"),
        "planned_replicates": record.get("planned_replicates"),
        "looks": {key: list(entry.get("looks") or []) for key, entry in conditions.items()},
        "stopped": {
            key: {name: entry.get(name) for name in ("reason", "stopped_at", "look")}
            for key, entry in conditions.items()
        },
    }
    return summary, sequential_p_values(record, sides[0], sides[1], cells, universe, horizon)


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _unpaired_share(results: dict[int, list[OutcomeResult]], tables: Any) -> str | None:
    left = 0
    for i, rows in results.items():
        if rows and rows[0].pairs is not None:
            left += int(tables.before.n[i]) + int(tables.after.n[i]) - 2 * rows[0].pairs
    if left <= 0:
        return None
    return (
        f"{left:,} episodes with an outcome are left out of the paired test (no twin with an "
        "outcome in the other run, or censored before the horizon); the rates count them"
    )


class _CallableModule(types.ModuleType):
    """`poisson_prove.compare` names both this module and its function: importing the module
    (`from poisson_prove.compare import ...`) makes Python bind the package attribute to the
    module, so the module itself must be callable as the function."""

    def __call__(self, *args: Any, **kwargs: Any) -> Comparison:
        return compare(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
