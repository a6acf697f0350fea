"""`compare()`: two runs -> per condition and per failure outcome: rates, tests, verdicts.

The definitions are STATISTICS.md's: rates are cumulative incidences by the common horizon
(Aalen-Johansen, competing outcomes), tests are McNemar on shared seeds for runs paired at
sweep time and Fisher otherwise (log-rank on request), Benjamini-Hochberg over every test,
and each "no change" carries the smallest change the condition could have shown.

`compare()` runs named steps: check the arguments, choose the method (`_method`), read
both sides (`_read_sides`), compute every condition's numbers (comparison.stats), decide the
verdicts (comparison.verdicts), then gather the warnings (`_warnings`). Everything is
vectorized over all conditions at once: conditions and outcomes are small integer codes and
counts are `np.bincount`s.

Runs whose spec declares a case axis (benchmarks, imports) are judged per pooled group, counted
by case (STATISTICS.md section 7, comparison.pooled): the per-condition rows become the per-case
detail, with a family of their own, and the pooled rows make the verdicts and the headline. Both
runs carrying a `source` (imports) get the fields whose values differ (`source_differences`).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from poisson_prove.comparison.any_failure import any_failure_rows, guard_verdicts
from poisson_prove.comparison.frame import (
    EPISODE_TIMEOUT,
    RunFrame,
    Side,
    align_horizons,
    condition_order,
    distinct_cases_per_condition,
    read_frame,
    side_of,
)
from poisson_prove.comparison.pooled import case_axis, case_counts, compare_pooled, one_run_only_warnings
from poisson_prove.comparison.result import Comparison, CoverageRow, OutcomeResult, RunSide, SourceDifference
from poisson_prove.comparison.sequential import sequential_p_values, sequential_record
from poisson_prove.comparison.stats import Tables, condition_tests, coverage_tests, rates_by_horizon
from poisson_prove.comparison.verdicts import decide_verdicts
from poisson_prove.design.conditions import cfg_of, condition_label
from poisson_prove.errors import ProveError
from poisson_prove.store.info import RunInfo
from poisson_prove.store.runs import RunStore
from prove_common.suggest import did_you_mean

METHODS = ("mcnemar", "fisher", "logrank_bh")
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
        imported = bool(stored) and stored[0].manifest.get("backend") == "import"
        raise ProveError(
            f"the store {runs.root} holds {len(stored)} run{'' if len(stored) == 1 else 's'}{names}; "
            "a comparison needs two",
            suggestions=[
                # an imported run pairs with the next import of the same task, not with a sweep
                "poisson-prove import inspect|lm-eval LOGS (the other run's logs: imports of the "
                "same task pair by sample)"
                if imported
                else "poisson-prove sweep SPEC --yes --pair-with latest"
            ],
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
    mixed = distinct_cases_per_condition(frame)
    if not mixed:
        return
    axis_order = frame.info.manifest.get("axis_order")
    order = [c.get("key") for c in frame.info.manifest.get("cells") or [] if isinstance(c, dict)]
    first = min(mixed, key=lambda key: (order.index(key) if key in order else len(order), key))
    cases = mixed[first]
    raise ProveError(
        f"condition {condition_label(cfg_of(first), axis_order)} ran {len(cases)} cases "
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
    runs = RunStore(store)
    before_info, after_info = _resolve(runs, before), _resolve(runs, after)
    _check_arguments(before_info, after_info, method, q)
    outcomes, failures, successes = _declarations(before_info, after_info)
    axis = case_axis(before_info, after_info)
    chosen, paired = _method(before_info, after_info, method)
    events, timeout_event = _event_names(event, outcomes, failures)
    universe = list(outcomes) + ([EPISODE_TIMEOUT] if timeout_event else [])
    keys, sides = _read_sides(before_info, after_info, universe, timeout_event)
    horizon = align_horizons(sides)

    axis_order = after_info.manifest.get("axis_order") or before_info.manifest.get("axis_order")
    labels = [condition_label(cfg_of(key), axis_order) for key in keys]
    before_rates, after_rates = (
        rates_by_horizon(side.condition, side.cause, side.t, len(keys), len(universe), horizon, side.early)
        for side in sides
    )
    tables = Tables(conditions=len(keys), universe=len(universe), before=before_rates, after=after_rates)
    adverse = [name not in successes for name in events]
    # Log-rank tests hazards; the rates get the runs' default test beside it, and either gates
    rate_method = ("mcnemar" if paired else "fisher") if chosen == "logrank_bh" else None
    sequential, sequential_p = _sequential(
        rate_method or chosen, before_info, after_info, sides, keys, len(universe), horizon
    )
    event_index = [universe.index(name) for name in events]
    counts = None
    if axis is not None:  # the pooled test's per-case counts: each case row carries its d_k
        codes = np.asarray(event_index, dtype=np.int64) + 1
        twins = paired and chosen != "fisher"
        counts = case_counts(sides[0], sides[1], len(keys), codes, horizon, paired=twins)
    results, tests = condition_tests(
        chosen, sides[0], sides[1], tables, event_index, horizon, q, names=list(events), adverse=adverse,
        paired=chosen == "mcnemar", sequential_p=sequential_p, case_d=None if counts is None else counts.d,
        rate_method=rate_method,
    )
    in_before = tables.before.rows_by_condition > 0
    in_after = tables.after.rows_by_condition > 0
    compared = [bool(b and a) for b, a in zip(in_before, in_after, strict=True)]
    verdicts = decide_verdicts(results, keys, labels, compared, events, adverse)
    if not verdicts.conditions:
        raise ProveError(
            f'runs "{before_info.name}" and "{after_info.name}" share no condition; nothing to compare',
            suggestions=["compare two runs of the same sweep spec"],
        )
    union = None
    if event is None and len(failures) >= 2:  # the "any failure" rows, a family of their own
        union = any_failure_rows(
            chosen, sides[0], sides[1], keys=keys, failure_codes=[universe.index(f) + 1 for f in failures],
            horizon=horizon, q=q, rate_method=rate_method,
            pooled=None if axis is None else {
                "paired": paired and chosen != "fisher", "labels": labels, "axis": axis,
                "axis_order": axis_order,
            },
        )
        if axis is None:
            verdicts = guard_verdicts(verdicts, union)
    coverage = coverage_tests(sides[0], sides[1], len(keys), q)
    coverage_rows = tuple(
        CoverageRow(key=key, label=labels[i], **coverage[i]) for i, key in enumerate(keys) if compared[i]
    )
    only_before = tuple(labels[i] for i in range(len(keys)) if in_before[i] and not in_after[i])
    only_after = tuple(labels[i] for i in range(len(keys)) if in_after[i] and not in_before[i])
    run_sides = (_run_side(sides[0]), _run_side(sides[1]))
    benchmark = None
    if axis is None:
        first = [
            *verdicts.warnings,
            *(f'condition {c} ran only in "{before_info.name}"; it is not compared' for c in only_before),
            *(f'condition {c} ran only in "{after_info.name}"; it is not compared' for c in only_after),
        ]
    else:
        assert counts is not None  # computed above for runs with a case axis
        benchmark = compare_pooled(
            sides[0], sides[1], tables, counts, results, keys=keys, labels=labels, axis=axis,
            axis_order=axis_order, events=events, event_index=event_index, adverse=adverse,
            horizon=horizon, q=q,
        )
        if union is not None:
            benchmark = dataclasses.replace(benchmark, verdicts=guard_verdicts(benchmark.verdicts, union))
        first = [
            *benchmark.verdicts.warnings,
            *benchmark.warnings,
            *one_run_only_warnings(only_before, before_info.name),
            *one_run_only_warnings(only_after, after_info.name),
        ]
    warnings = [*first, *_coverage_warnings(coverage_rows), *_partial_warnings(run_sides)]
    if "mcnemar" in (chosen, rate_method):
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
        tests=tests if benchmark is None else benchmark.tests,
        conditions=verdicts.conditions if benchmark is None else benchmark.verdicts.conditions,
        headline=verdicts.headline if benchmark is None else benchmark.verdicts.headline,
        coverage=coverage_rows,
        only_before=only_before,
        only_after=only_after,
        warnings=tuple(warnings),
        sequential=sequential,
        case_axis=axis,
        pooled_test=None if benchmark is None else benchmark.test,
        cases=() if benchmark is None else benchmark.cases,
        case_tests=0 if benchmark is None else tests,
        source_differences=source_differences(before_info.manifest, after_info.manifest),
        any_failure_tests=0 if union is None else union.tests,
        rate_method=rate_method,
    )


def source_differences(
    before: Mapping[str, Any], after: Mapping[str, Any]
) -> tuple[SourceDifference, ...] | None:
    """The fields of the two runs' `source` (what ran an imported eval: model, task args,
    scorer, ...) whose values differ; None unless both runs carry one. Its `logs` (each log
    file's own record) are left out: two imports always differ there."""
    source_before, source_after = before.get("source"), after.get("source")
    if not isinstance(source_before, dict) or not isinstance(source_after, dict):
        return None
    names = [k for k in source_before if k != "logs"] + [
        k for k in source_after if k != "logs" and k not in source_before
    ]
    return tuple(
        SourceDifference(name, source_before.get(name), source_after.get(name))
        for name in names
        if source_before.get(name) != source_after.get(name)
    )


# The steps ------------------------------------------------------------------------------


def _check_arguments(before: RunInfo, after: RunInfo, method: str | None, q: float) -> None:
    if before.run_id == after.run_id:
        raise ProveError(
            f'both sides are run "{after.name}"; a comparison needs two different runs',
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


def _method(before: RunInfo, after: RunInfo, method: str | None) -> tuple[str, bool]:
    """(the test to run, whether the runs were paired at sweep time: shared seeds)."""
    salt_b, salt_a = before.manifest.get("salt"), after.manifest.get("salt")
    paired = bool(
        after.manifest.get("paired_with") == before.run_id
        or before.manifest.get("paired_with") == after.run_id
        or (salt_b and salt_b == salt_a)
    ) and (not salt_b or not salt_a or salt_b == salt_a)
    chosen = method or ("mcnemar" if paired else "fisher")
    if chosen == "mcnemar" and not paired:
        raise ProveError(
            f'runs "{before.name}" and "{after.name}" were not paired at sweep time '
            "(different salts, so no shared seeds); McNemar needs episode twins",
            suggestions=["--method fisher", "sweep again with --pair-with BEFORE to get shared seeds"],
        )
    return chosen, paired


def _read_sides(
    before: RunInfo, after: RunInfo, universe: Sequence[str], timeout_event: bool
) -> tuple[list[str], list[Side]]:
    """Both runs read and coded against one condition list; refused when either has nothing."""
    frames = []
    for info in (before, after):
        frame = read_frame(info)
        if frame.rows == 0:
            raise ProveError(
                f'run "{info.name}" has no episodes',
                suggestions=["resume or rerun its sweep, then compare again"],
            )
        frames.append(frame)
    for frame in frames:
        _refuse_mixed_cases(frame)
    keys = condition_order(frames[0], frames[1])
    sides = [side_of(frame, keys, universe, timeout_event) for frame in frames]
    for side in sides:
        if not (side.cause > 0).any():
            raise ProveError(
                f'run "{side.info.name}" has no episode with an outcome '
                f"({side.frame.rows:,} without one); there is nothing to compare",
                suggestions=[f'poisson-prove inspect "{side.info.name}"'],
            )
    return keys, sides


def _run_side(side: Side) -> RunSide:
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
        backend=manifest.get("backend"),
    )


def _sequential(
    method: str, before: RunInfo, after: RunInfo, sides: Sequence[Side], keys: Sequence[str],
    universe: int, horizon: float,
) -> tuple[dict[str, Any] | None, dict[tuple[int, int], float] | None]:
    """For McNemar on a run swept with --stop-when-settled: what the method line says, and
    the sequential p per (condition, outcome)."""
    record = sequential_record(before, after) if method == "mcnemar" else None
    if record is None:
        return None, None
    owner = after if after.manifest.get("sequential") is record else before
    recorded = record.get("conditions") or {}
    summary = {
        "run": owner.name,
        "rule": record.get("rule"),
        "alpha": record.get("alpha"),
        "planned_replicates": record.get("planned_replicates"),
        "looks": {key: list(entry.get("looks") or []) for key, entry in recorded.items()},
        "stopped": {
            key: {name: entry.get(name) for name in ("reason", "stopped_at", "look")}
            for key, entry in recorded.items()
        },
    }
    return summary, sequential_p_values(record, sides[0], sides[1], keys, universe, horizon)


# Warnings -------------------------------------------------------------------------------


def _coverage_warnings(rows: Sequence[CoverageRow]) -> list[str]:
    return [
        f"condition {row.label}: {row.before_without:,} of {row.before_rows:,} episodes "
        f"without an outcome before, {row.after_without:,} of {row.after_rows:,} after "
        f"(q {row.q_value:.3g}); its rates may differ for that reason"
        for row in rows
        if row.differs
    ]


def _partial_warnings(sides: Sequence[RunSide]) -> list[str]:
    warnings = []
    for side in sides:
        if side.status != "complete":
            planned = f" of {side.planned:,} planned" if side.planned else ""
            resumed = " (resumed, not finished)" if side.resumed_at else ""
            what_next = (
                "its logs did not finish: finish the eval (inspect eval-retry LOG) and import it "
                "again before trusting this comparison"
                if side.backend == "import"
                else "resume its sweep before trusting this comparison"
            )
            warnings.append(
                f'run "{side.name}" is partial: {side.done:,}{planned} episodes{resumed}; {what_next}'
            )
    return warnings


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _unpaired_share(results: dict[int, list[OutcomeResult]], tables: Tables) -> str | None:
    left = 0
    for i, rows in results.items():
        # McNemar's rows, or under log-rank the McNemar beside each row
        tested = rows[0].rate_test if rows and rows[0].rate_test is not None else rows[0] if rows else None
        if tested is not None and tested.pairs is not None:
            left += int(tables.before.n[i]) + int(tables.after.n[i]) - 2 * tested.pairs
    if left <= 0:
        return None
    return (
        f"{left:,} episodes with an outcome are left out of the paired test (no twin with an "
        "outcome in the other run, or censored before the horizon); the rates count them"
    )
