"""`sweep --pair-with RUN --stop-when-settled`: look at the planned information times, stop what settled.

The looks are planned with the run, whatever the batches: at replicate counts `planned_looks`
(LOOKS of them, evenly spaced in replicates, the last at the plan's end). A condition gets its
look at a planned count once it has stored that many replicates without a gap from replicate
0: the sweep cuts its batch there (the rows are written before the look reads them) and the
look pairs those replicates, and only those, with the run it was paired with (only pairs with
an outcome in both runs count) and applies the stopping rule of sweep.settle over every look so
far. A fast rollout and a slow one, or any --batch-size, so get the same looks and the same
stops for the same seeds. A condition whose failure outcomes are all settled stops: its
remaining replicates go into the sweep's `skip` set, which the planned episodes are drawn
against lazily, so they are never run. The looks and the stops are recorded in the run's
manifest (`sequential`) and events, and `diff` recomputes the sequential p-values from them
(comparison.sequential). See docs/sweep-spec.md and docs/statistics.md, section 6.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from poisson_prove.store.table import OUTCOME_AT, ROW_FIELDS
from poisson_prove.sweep.settle import settle_condition

if TYPE_CHECKING:
    from poisson_prove.design.plan import Plan
    from poisson_prove.store.info import RunInfo
    from poisson_prove.store.runs import RunWriter
    from poisson_prove.sweep.prepare import PreparedSweep

_CONDITION_AT = ROW_FIELDS.index("cell")  # the stored column of the condition
_REPLICATE_AT = ROW_FIELDS.index("replicate")
RULE = "group-sequential McNemar, O'Brien-Fleming-type alpha spending (docs/statistics.md, section 6)"
#: Looks planned per condition: at every tenth of its planned replicates.
LOOKS = 10


def planned_looks(replicates: int, looks: int = LOOKS) -> list[int]:
    """The replicate counts the looks are planned at: `looks` evenly spaced, rounded up, the last
    at `replicates` (fewer when there are fewer replicates than looks)."""
    return sorted({-(-k * replicates // looks) for k in range(1, looks + 1)} - {0})


def outcomes_by_replicate(info: RunInfo, replicates: int) -> dict[str, list[str | None]]:
    """A stored run's outcome per (condition, replicate); None where none is stored."""
    from poisson_prove.store.codes import coded, column_numbers  # pyarrow: ~160 ms, only when settling
    from poisson_prove.store.columns import read_columns  # pyarrow: ~160 ms, only when settling

    stored = read_columns(info, ("cell", "replicate", "outcome"))
    conditions, outcomes = coded(stored.column("cell")), coded(stored.column("outcome"))
    replicate = column_numbers(stored.column("replicate"), np.int64, 0)
    table: dict[str, list[str | None]] = {}
    for code, rep, out in zip(conditions.codes, replicate, outcomes.codes, strict=True):
        if code < 0 or not 0 <= rep < replicates:
            continue
        row = table.setdefault(str(conditions.values[code]), [None] * replicates)
        row[int(rep)] = None if out < 0 else str(outcomes.values[out])
    return table


class SettleWatcher:
    """The per-condition looks of one sweep and the stops they led to."""

    def __init__(
        self,
        plan: Plan,
        paired: RunInfo,
        skip: set[tuple[str, int]],
        *,
        stored: dict[str, list[str | None]] | None = None,
        previous: dict[str, Any] | None = None,
    ) -> None:
        self.plan = plan
        self.skip = skip
        self.alpha = float(plan.design.alpha)
        self.replicates = plan.replicates
        self._paired = paired
        self._before: dict[str, list[str | None]] | None = None  # read at the first look
        self.paired_run = paired.run_id
        blank: list[str | None] = [None] * plan.replicates
        self.after = {c.key: list((stored or {}).get(c.key, blank)) for c in plan.conditions}
        # replicates stored per condition, with or without an outcome (on a resume: `skip`)
        self.seen: dict[str, set[int]] = {c.key: set() for c in plan.conditions}
        for key, rep in skip:
            if key in self.seen:
                self.seen[key].add(rep)
        self.schedule = planned_looks(plan.replicates)
        self._reach = dict.fromkeys(self.seen, 0)  # replicates seen without a gap from 0
        for key in self._reach:
            self._advance(key)
        old = (previous or {}).get("conditions") or {}
        self.looks: dict[str, list[int]] = {
            c.key: list((old.get(c.key) or {}).get("looks") or []) for c in plan.conditions
        }
        self.stops: dict[str, dict[str, Any]] = {
            key: dict(entry) for key, entry in old.items() if entry.get("reason") == "settled"
        }
        for key, entry in self.stops.items():  # a resumed run keeps its settled conditions stopped
            self._skip_rest(key, int(entry["stopped_at"]))

    @property
    def before(self) -> dict[str, list[str | None]]:
        """The paired run's outcome per (condition, replicate), read once, when first needed: the
        rule's record (`record()`) is written at the run's creation without reading it."""
        if self._before is None:
            self._before = outcomes_by_replicate(self._paired, self.replicates)
        return self._before

    def observe(self, rows: Sequence[tuple[Any, ...]]) -> bool:
        """Note finished rows (errored rows are seen but have no outcome); return whether a
        running condition has now reached its next planned look (the sweep then writes its
        rows and looks: `look` is only called once every observed row is stored)."""
        touched = set()
        for row in rows:
            key, rep = row[_CONDITION_AT], int(row[_REPLICATE_AT])
            if key in self.after and 0 <= rep < self.replicates:
                self.after[key][rep] = row[OUTCOME_AT]
                self.seen[key].add(rep)
                touched.add(key)
        due = False
        for key in touched:
            self._advance(key)
            due = due or (key not in self.stops and self._reach[key] >= self.next_look(key))
        return due

    def _advance(self, key: str) -> None:
        seen, n = self.seen[key], self._reach[key]
        while n in seen:
            n += 1
        self._reach[key] = n

    def _reached(self, key: str) -> int:
        return self._reach[key]

    def next_look(self, key: str) -> int:
        """The replicate count of the condition's next planned look (past the plan: never)."""
        looks = self.looks[key]
        last = looks[-1] if looks else 0
        for at in self.schedule:
            if at > last:
                return at
        return self.replicates + 1

    def pause_at(self) -> int:
        """The replicate the in-order episodes should pause before, for the next look to be
        taken on exactly its planned replicates: the earliest next look of a running condition."""
        running = [self.next_look(c.key) for c in self.plan.conditions if c.key not in self.stops]
        return min(running, default=self.replicates + 1)

    def _skip_rest(self, key: str, stopped_at: int) -> None:
        for rep in range(stopped_at, self.replicates):
            self.skip.add((key, rep))

    def look(self, writer: RunWriter | None = None) -> list[str]:
        """Every planned look a running condition has reached and not taken yet, in order, until
        one stops it; returns the keys that stopped."""
        stopped: list[str] = []
        looked = False
        for condition in self.plan.conditions:
            key = condition.key
            while key not in self.stops and self._reached(key) >= (at := self.next_look(key)):
                looked = True
                if self._look_at(condition, at, writer):
                    stopped.append(key)
        if writer is not None and looked:
            # The looks are what diff's p-values are computed from: kept in the manifest as they
            # happen (durably when a condition stopped), so a killed sweep resumes with them.
            writer.update_manifest(durable=bool(stopped), sequential=self.record())
        return stopped

    def _look_at(self, condition: Any, at: int, writer: RunWriter | None) -> bool:
        """The condition's look at `at` replicates; whether it stopped there."""
        key = condition.key
        looks = self.looks[key]
        looks.append(at)
        if at >= self.replicates:
            return False  # the plan's end: the fixed-size tail of the rule, nothing left to skip
        before = self.before.get(key, [None] * self.replicates)
        after = self.after[key][:at]  # the look reads its planned replicates, not those past them
        result = settle_condition(before, after, list(self.plan.failures), looks, self.replicates, self.alpha)
        if result.reason != "settled":
            return False
        entry = {
            "reason": "settled",
            "stopped_at": result.stopped_at,
            "look": result.look + 1,  # 1-based, as people count looks
            "looks": list(looks),
            "outcomes": result.to_dict()["outcomes"],
        }
        self.stops[key] = entry
        self._skip_rest(key, result.stopped_at)
        if writer is not None:
            writer.event(
                "settled",
                cell=key,
                label=condition.label,
                look=entry["look"],
                stopped_at=result.stopped_at,
                skipped=self.replicates - result.stopped_at,
                outcomes=entry["outcomes"],
            )
        return True

    @property
    def all_settled(self) -> bool:
        return len(self.stops) == len(self.plan.conditions)

    def not_run(self) -> int:
        """Planned rollouts not run because their condition settled: the rollouts saved."""
        return sum(
            sum(1 for rep in range(int(e["stopped_at"]), self.replicates) if rep not in self.seen[key])
            for key, e in self.stops.items()
        )

    def record(self) -> dict[str, Any]:
        """The manifest's `sequential` block: the rule, and per condition its looks and stop."""
        conditions: dict[str, Any] = {}
        for condition in self.plan.conditions:
            key = condition.key
            run = len(self.seen[key])
            if key in self.stops:
                entry = dict(self.stops[key])
            elif run >= self.replicates:
                entry = {"reason": "planned replicates reached", "stopped_at": self.replicates,
                         "look": len(self.looks[key]), "looks": list(self.looks[key])}
            else:
                entry = {"reason": "still running", "stopped_at": None,
                         "look": len(self.looks[key]), "looks": list(self.looks[key])}
            entry["label"] = condition.label
            entry["replicates_run"] = run
            conditions[key] = entry
        return {
            "stop_when_settled": True,
            "rule": RULE,
            "alpha": self.alpha,
            "paired_with": self.paired_run,
            "planned_replicates": self.replicates,
            "planned_looks": list(self.schedule),
            "settled": len(self.stops),
            "saved": self.not_run(),
            "conditions": conditions,
        }


def planned_record(prepared: PreparedSweep) -> dict[str, Any] | None:
    """The `sequential` block a new `--stop-when-settled` run is created with (every condition
    still running, no look yet), or None: the rule is in the manifest from its first write, so
    a sweep killed before its first batch resumes with it."""
    if not prepared.request.stop_when_settled or prepared.paired_with is None:
        return None
    return SettleWatcher(prepared.plan, prepared.paired_with, set()).record()


def watcher_for(
    prepared: PreparedSweep, writer: RunWriter, skip: set[tuple[str, int]]
) -> SettleWatcher | None:
    """The `--stop-when-settled` watcher, or None (a resumed run keeps what it was started with)."""
    previous = writer.manifest.get("sequential") if prepared.resume_run is not None else None
    wanted = prepared.request.stop_when_settled or bool((previous or {}).get("stop_when_settled"))
    if not wanted or prepared.paired_with is None:
        return None
    stored = None
    if prepared.resume_run is not None and skip:
        stored = outcomes_by_replicate(prepared.resume_run, prepared.plan.replicates)
    watcher = SettleWatcher(prepared.plan, prepared.paired_with, skip, stored=stored, previous=previous)
    writer.update_manifest(sequential=watcher.record())
    if stored is not None:
        watcher.look(writer)  # the planned looks the stored replicates reached before the stop
    return watcher


def settled_lines(sequential: Any) -> list[str]:
    """One line per condition of a `--stop-when-settled` run: where and why it stopped."""
    lines = []
    planned = sequential.get("planned_replicates")
    for entry in (sequential.get("conditions") or {}).values():
        reason = entry.get("reason")
        if reason == "settled":
            verdicts = ", ".join(
                f"{name} {o.get('direction')} (p {o.get('p'):.3g})"
                for name, o in (entry.get("outcomes") or {}).items()
            )
            where = (
                f"stopped after {entry['stopped_at']} of {planned} replicates, "
                f"look {entry['look']}: {verdicts}"
            )
        elif reason == "planned replicates reached":
            looks = entry.get("look")
            counted = f"{looks} look" if looks == 1 else f"{looks} looks"
            where = f"ran its {planned} planned replicates ({counted}): not settled earlier"
        else:
            where = f"still running after {entry.get('replicates_run', 0)} replicates"
        lines.append(f"condition {entry.get('label')}: {where}")
    return lines
