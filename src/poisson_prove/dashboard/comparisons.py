"""The comparisons the dashboard shows: the latest pair, then each one printed before.

Every one is a `compare()` result, the very object `diff --json` prints, so the page's
numbers are diff's numbers. A logged comparison that cannot be made again (a run deleted,
declarations changed) is shown as its refusal, not dropped silently.

A comparison of benchmark runs (a case axis) also gets a `BenchmarkView`: per pooled row the
cases that moved (d_k != 0), most-moved first, and the per-case detail that `diff` prints by
default (the cases that moved, most-moved first, each with the events that moved), each list
capped at CASES_SHOWN with a count of the rest; it only picks and orders the comparison's rows.
"""

from __future__ import annotations

import functools
import itertools
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from poisson_prove.comparison import Comparison, compare, default_runs
from poisson_prove.comparison.gate import GateResult, gate, planned_max_mde
from poisson_prove.comparison.result import ConditionResult, OutcomeResult
from poisson_prove.errors import ProveError
from poisson_prove.store.info import RunInfo
from poisson_prove.store.runs import RunStore

MAX_LOGGED = 8  # the most recent distinct comparisons from the log
MAX_NEIGHBOURS = 10  # runs compared with the run before them, newest first (the page's pair picker)
CASES_SHOWN = 10  # cases listed per pooled row and in the per-case detail, as diff's default

CompareRuns = Callable[..., Comparison]  # (before_id, after_id, *, method=, event=, q=) -> Comparison


@dataclass(frozen=True)
class MovedCase:
    """One case that moved on one pooled row: its row of that event (d_k, both rates)."""

    condition: ConditionResult
    row: OutcomeResult


@dataclass(frozen=True)
class PooledMoves:
    """The cases that moved on one pooled row (group x event), most-moved first."""

    group: str  # the pooled group's key
    outcome: str
    up: int  # cases with d_k > 0 (more events after)
    down: int
    shown: tuple[MovedCase, ...]
    more: int  # cases that moved beyond the shown ones


@dataclass(frozen=True)
class CaseDetail:
    """A case of the per-case detail and the rows shown: the events whose d_k is not 0."""

    condition: ConditionResult
    rows: tuple[OutcomeResult, ...]


@dataclass(frozen=True)
class BenchmarkView:
    moves: dict[tuple[str, str], PooledMoves]  # (group key, outcome) -> its moved cases
    detail: tuple[CaseDetail, ...]
    detail_more: int  # cases that moved beyond the detail's
    cases: int  # every case compared


def benchmark_view(comparison: Comparison) -> BenchmarkView | None:
    """The benchmark part of the page; None for runs without a case axis."""
    if comparison.case_axis is None:
        return None
    moves: dict[tuple[str, str], PooledMoves] = {}
    for group in comparison.conditions:
        members = [case for case in comparison.cases if case.group == group.label]
        for pooled in group.outcomes:
            moved = [
                MovedCase(case, row)
                for case in members for row in case.outcomes if row.outcome == pooled.outcome and row.d
            ]
            moved.sort(key=lambda m: -abs(m.row.d or 0))  # stable: ties keep the runs' order
            up = sum(1 for m in moved if (m.row.d or 0) > 0)
            moves[(group.key, pooled.outcome)] = PooledMoves(
                group.key, pooled.outcome, up, len(moved) - up, tuple(moved[:CASES_SHOWN]),
                max(0, len(moved) - CASES_SHOWN),
            )
    ranked = [c for c in comparison.cases_by_movement() if c.movement]
    detail = tuple(CaseDetail(c, tuple(row for row in c.outcomes if row.d)) for c in ranked[:CASES_SHOWN])
    return BenchmarkView(moves, detail, max(0, len(ranked) - CASES_SHOWN), len(comparison.cases))


@dataclass(frozen=True)
class ComparisonView:
    source: str  # "latest pair" or "diff at <UTC time>"
    before: str
    after: str
    comparison: Comparison | None
    refusal: str | None
    gate: GateResult | None = None  # what `check` would say, at the after run's planned --max-mde
    benchmark: BenchmarkView | None = None  # runs with a case axis: their moved cases
    before_id: str | None = None  # the runs' ids (the pair picker finds a comparison by them)
    after_id: str | None = None


def _gated(view: ComparisonView, manifests: dict[str, Any]) -> ComparisonView:
    """The view with `check`'s gate at the after run's planned max MDE (cheap: no recount), and
    a benchmark's moved cases."""
    if view.comparison is None:
        return view
    before, after = view.comparison.before.run_id, view.comparison.after.run_id
    manifest = manifests.get(after) or {}
    return replace(
        view, gate=gate(view.comparison, planned_max_mde(manifest)),
        benchmark=benchmark_view(view.comparison), before_id=before, after_id=after,
    )


def _logged(log: Path | None, run_ids: set[str]) -> list[dict[str, Any]]:
    """Log lines about two runs of this store, newest first, one per distinct request."""
    if log is None:
        return []
    try:
        lines = log.read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    seen: set[tuple[Any, ...]] = set()
    out = []
    for line in reversed(lines):
        try:
            entry = json.loads(line)
            before, after = entry["before"]["run_id"], entry["after"]["run_id"]
        except (ValueError, TypeError, KeyError):
            continue  # a torn or foreign line
        if before not in run_ids or after not in run_ids:
            continue
        key = (before, after, entry.get("method"), entry.get("event"), entry.get("q"))
        if key in seen:
            continue
        seen.add(key)
        out.append(entry)
        if len(out) == MAX_LOGGED:
            break
    return out


def comparison_views(
    store: str | os.PathLike[str] | None,
    log: Path | None,
    *,
    neighbours: int = MAX_NEIGHBOURS,
    requested: tuple[str, str] | None = None,
    compare_runs: CompareRuns | None = None,
    infos: Sequence[RunInfo] | None = None,
) -> list[ComparisonView]:
    """The latest pair, the logged comparisons, then each of the `neighbours` newest runs with
    the run before it (the pairs the page's picker finds); `requested` (before, after run ids,
    what `--serve` was asked for) comes first. `compare_runs(before_id, after_id, method=,
    event=, q=)` makes each comparison (default: `compare()` on this store); `infos`: the store's
    runs, as the caller just listed them (default: listed here)."""
    runs = list(infos) if infos is not None else RunStore(store).runs()
    if compare_runs is None:
        compare_runs = functools.partial(compare, store=store)
    if len(runs) < 2:
        return []
    names = {r.run_id: r.name for r in runs}
    manifests = {r.run_id: r.manifest for r in runs}
    views: list[ComparisonView] = []
    done: set[tuple[Any, ...]] = set()
    if requested is not None:
        b, a = requested
        if b in names and a in names and b != a:
            try:
                result = compare_runs(b, a)
                views.append(ComparisonView("chosen pair", names[b], names[a], result, None))
                done.add((b, a, result.method, None, result.q))
            except ProveError as err:
                chosen = ComparisonView("chosen pair", names[b], names[a], None, err.message)
                views.append(replace(chosen, before_id=b, after_id=a))
        else:
            views.append(ComparisonView("chosen pair", b, a, None, "no such pair of runs in this store"))
    try:
        before, after = default_runs(None, None, store=store)
        result = compare_runs(before.run_id, after.run_id)
        views.append(ComparisonView("latest pair", result.before.name, result.after.name, result, None))
        done.add((result.before.run_id, result.after.run_id, result.method, None, result.q))
    except ProveError as err:
        views.append(ComparisonView("latest pair", "latest pair", "", None, err.message))
    for entry in _logged(log, set(names)):
        b, a = entry["before"]["run_id"], entry["after"]["run_id"]
        key = (b, a, entry.get("method"), entry.get("event"), entry.get("q"))
        if key in done:
            continue
        done.add(key)
        source = f"{entry.get('command') or 'diff'} at {entry.get('at') or '?'}"
        try:
            q = float(entry.get("q") or 0.05)
            result = compare_runs(b, a, method=entry.get("method"), event=entry.get("event"), q=q)
            views.append(ComparisonView(source, names[b], names[a], result, None))
        except (ProveError, ValueError) as err:
            message = str(getattr(err, "message", err))
            views.append(ComparisonView(source, names[b], names[a], None, message, None, None, b, a))
    newest = runs[len(runs) - min(neighbours, len(runs) - 1) - 1 :]
    for earlier, later in reversed(list(itertools.pairwise(newest))):
        b, a = earlier.run_id, later.run_id
        if any(key[:2] == (b, a) for key in done):
            continue
        done.add((b, a, None, None, None))
        try:
            result = compare_runs(b, a)
            views.append(ComparisonView("with the run before it", names[b], names[a], result, None))
        except ProveError as err:
            views.append(ComparisonView("with the run before it", names[b], names[a], None, err.message,
                                        None, None, b, a))
    return [_gated(view, manifests) for view in views]
