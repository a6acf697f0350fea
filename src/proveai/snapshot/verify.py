"""`snapshot verify`: re-run the pipeline, grade every agent against the pin, decide the gate."""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from proveai.diff.judge import DEFAULT_JUDGE_MAX_TOKENS, JudgeStats
from proveai.diff.verdict import AgentVerdict, Grade, Status, Tier
from proveai.errors import ProveAIError, ProveAIExit
from proveai.snapshot.grading import Grading, fresh_agents_of_capture, fresh_agents_of_trace, grade_agents
from proveai.snapshot.model import Snapshot
from proveai.snapshot.overrides import what_if
from proveai.snapshot.replicates import (
    DEFAULT_ALPHA,
    Progress,
    ReplicateVerdict,
    capture_replicates,
    leave_one_out_pairs,
    power_note,
    reference_for,
    replicate_gate,
)
from proveai.snapshot.rerun import DEFAULT_TIMEOUT_S
from proveai.snapshot.stored_traces import dated_trace_files, load_trace_file
from proveai.snapshot.tiers import TierGrader
from proveai.store.judge_cache import JudgeCache
from proveai.store.runs import new_verify_run_id, pinned_start_time, write_verify_run

if TYPE_CHECKING:
    from proveai.traces.trace import Trace


@dataclass(frozen=True)
class VerifyOptions:
    quick: bool = False
    no_judge: bool = False
    strict_judge: bool = False
    timeout_s: float = DEFAULT_TIMEOUT_S
    overrides: Mapping[str, Path] = field(default_factory=dict)
    replicates: int = 0  # 0: as many as the snapshot pins (1 for a single capture)
    seed: int | None = None
    alpha: float = DEFAULT_ALPHA
    judge_model: str | None = None
    judge_max_tokens: int = DEFAULT_JUDGE_MAX_TOKENS  # of each judge request
    embedder: str | None = None
    progress: Progress | None = None


@dataclass(frozen=True)
class JudgeMetrics:
    """The live tier-3 judge calls of one verify (cache hits excluded), from its grader's
    `JudgeStats`."""

    calls: int
    malformed: int  # replies that were not the verdict JSON asked for
    seconds: float
    max_tokens: int

    @classmethod
    def of(cls, stats: JudgeStats, max_tokens: int) -> JudgeMetrics:
        return cls(stats.calls, stats.malformed, round(stats.seconds, 3), max_tokens)


@dataclass(frozen=True)
class VerifyMetrics:
    """What one verify counted; metrics.json of the run holds `to_dict()`."""

    mode: str
    agents: int
    counts: Mapping[str, int]  # verdict status -> agents
    judge_model: str | None  # None: hash-only (--no-judge)
    tier_grades: int  # pairs sent to the tier stack (judge cache misses)
    judge_cache_hits: int
    replicates: int
    exit_code: int
    judge_unfit: str | None  # why the judge failed its known-pair check, when it did
    judge_unreachable: bool  # ... because its endpoint could not be reached
    judge: JudgeMetrics

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["counts"] = dict(self.counts)
        del data["judge_unreachable"]  # metrics.json predates it; judge_unfit says it in words
        return data


@dataclass(frozen=True)
class VerifyResult:
    """One snapshot verified: verdict rows, the replicate test (if any), where it was written."""

    snapshot: Snapshot
    mode: str  # rerun | quick | override | replicates
    verdicts: tuple[AgentVerdict, ...]
    replicate_verdicts: tuple[ReplicateVerdict, ...]
    run_id: str
    run_dir: Path
    gate: GateVerdict
    notes: tuple[str, ...]
    metrics: VerifyMetrics

    @property
    def exit_code(self) -> int:
        return self.gate.exit_code

    @property
    def unjudged(self) -> list[AgentVerdict]:
        return [v for v in self.verdicts if v.status == Status.INCONCLUSIVE]


def make_grader(options: VerifyOptions, snapshots_dir: Path) -> TierGrader | None:
    if options.no_judge:
        return None
    return TierGrader.from_env(
        options.judge_model, JudgeCache(snapshots_dir), options.embedder, options.judge_max_tokens
    )


class GateVerdict(StrEnum):
    """The gate's verdict on one snapshot, decided from its agent verdicts; the exit code is
    the verdict's."""

    PASS = "pass"  # nothing failed (a drift warns; a change nobody could judge is said)
    FAIL = "fail"  # an agent regressed, went missing or changed its loop count (or its replicate test)
    NOT_GRADED = "not graded"  # hash-only mode (--no-judge) met a change it cannot grade
    INCONCLUSIVE = "inconclusive"  # a change could not be judged, under the strict judge

    @property
    def exit_code(self) -> int:
        return _GATE_EXITS[self]


_GATE_EXITS = {
    GateVerdict.PASS: ProveAIExit.OK,
    GateVerdict.FAIL: ProveAIExit.REGRESSION,
    GateVerdict.NOT_GRADED: ProveAIExit.USAGE,
    GateVerdict.INCONCLUSIVE: ProveAIExit.INCONCLUSIVE,
}


def gate_verdict(verdicts: Sequence[AgentVerdict], options: VerifyOptions, fails: bool) -> GateVerdict:
    """The verdict on one snapshot: `fails` (an agent failing the gate, or the replicate test),
    else a change nobody judged under --no-judge or --strict-judge, else a pass."""
    if fails:
        return GateVerdict.FAIL
    if any(v.status == Status.INCONCLUSIVE for v in verdicts):
        if options.no_judge:
            return GateVerdict.NOT_GRADED
        if options.strict_judge:
            return GateVerdict.INCONCLUSIVE
    return GateVerdict.PASS


def verify_snapshot(
    snapshot: Snapshot,
    *,
    snapshots_dir: Path,
    runs_dir: Path,
    traces_dir: Path,
    options: VerifyOptions,
) -> VerifyResult:
    """Verify one snapshot; writes proveai/runs/<id>/ and returns the result (never prints)."""
    if options.replicates == 0:
        options = replace(options, replicates=snapshot.replicates)
    run_id = new_verify_run_id()
    run_dir = runs_dir / run_id
    notes: list[str] = environment_notes(snapshot)
    if snapshot.replicates > 1 and options.replicates == 1 and not options.quick and not options.overrides:
        notes.append(
            f"this snapshot pins {snapshot.replicates} replicates but --replicates 1 compared one fresh "
            "run with the first pinned capture, without the noise-aware test"
        )
    grader = make_grader(options, snapshots_dir)
    replicate_rows: tuple[ReplicateVerdict, ...] = ()
    fresh_dir = run_dir / "fresh"
    if options.overrides:
        mode = "override"
        grading = what_if(snapshot, options.overrides, grader)
    elif options.quick or snapshot.quick_only or not snapshot.invocation:
        mode = "quick"
        if not options.quick:
            notes.append(
                "this snapshot cannot be re-run (pinned --quick-only or without an invocation): fixture check"
            )
        grading = quick_check(snapshot, traces_dir, grader, fresh_dir, notes, runs_dir)
    elif options.replicates > 1:
        mode = "replicates"
        grading, replicate_rows = replicate_check(snapshot, options, grader, fresh_dir, notes)
    else:
        mode = "rerun"
        trace = fresh_runs(snapshot, options, 1, options.seed, fresh_dir, notes)[0]
        grading = grade_agents(snapshot, fresh_agents_of_trace(trace), grader=grader)
    if grader is not None and grader.cache is not None:
        grader.cache.save()
    fails = any(r.fails for r in replicate_rows) if replicate_rows else bool(grading.regressed)
    gate = gate_verdict(grading.verdicts, options, fails)
    metrics = VerifyMetrics(
        mode=mode,
        agents=len(grading.verdicts),
        counts=_status_counts(grading.verdicts),
        judge_model=grader.judge_model if grader is not None else None,
        tier_grades=grader.tier_grades if grader is not None else 0,
        judge_cache_hits=grader.cache.hits if grader is not None and grader.cache else 0,
        replicates=options.replicates if mode == "replicates" else 1,
        exit_code=gate.exit_code,
        judge_unfit=grader.unfit if grader is not None else None,
        judge_unreachable=bool(grader is not None and grader.unreachable),
        judge=JudgeMetrics.of(
            grader.judge_stats if grader is not None else JudgeStats(), options.judge_max_tokens
        ),
    )
    result = VerifyResult(
        snapshot=snapshot,
        mode=mode,
        verdicts=grading.verdicts,
        replicate_verdicts=replicate_rows,
        run_id=run_id,
        run_dir=run_dir,
        gate=gate,
        notes=(*grading.notes, *notes),
        metrics=metrics,
    )
    write_verify_run(
        run_dir,
        run_id=run_id,
        snapshot=snapshot.name,
        snapshot_version=snapshot.version,
        mode=mode,
        overrides=options.overrides,
        exit_code=result.exit_code,
        notes=result.notes,
        verdicts=[v.to_dict() for v in result.verdicts],
        replicates=[r.to_dict() for r in result.replicate_verdicts],
        metrics=result.metrics.to_dict(),
    )
    return result


# variables verify itself sets in the child: never reported as missing
_SET_BY_VERIFY = frozenset({"PROVEAI_VERIFY", "PROVEAI_TRACES_DIR", "PROVEAI_REPLICATE", "PROVEAI_SEED"})


def environment_notes(snapshot: Snapshot) -> list[str]:
    """Provider variables that were set when the pin was captured but are not set now."""
    names = (snapshot.invocation or {}).get("env_names") or []
    # init --replicates re-ran the pipeline with PROVEAI_NO_CACHE set by proveai itself
    ignored = _SET_BY_VERIFY | ({"PROVEAI_NO_CACHE"} if snapshot.replicates > 1 else set())
    missing = [n for n in names if isinstance(n, str) and n not in ignored and n not in os.environ]
    if not missing:
        return []
    return [f"set when the snapshot was captured, not set now: {', '.join(sorted(missing))}"]


def _status_counts(verdicts: Sequence[AgentVerdict]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for verdict in verdicts:
        counts[verdict.status.value] = counts.get(verdict.status.value, 0) + 1
    return counts


def quick_check(
    snapshot: Snapshot,
    traces_dir: Path,
    grader: TierGrader | None,
    keep_dir: Path,
    notes: list[str],
    runs_dir: Path | None = None,
) -> Grading:
    """No re-run: grade the newest stored trace of this pipeline against the pin.

    When nothing newer than the pin was captured, the pinned capture is checked against
    itself (hash integrity of the fixture), and the note says so.
    """
    pinned_ids = {c.trace_id for c in snapshot.captures}
    # a pin accepted by `update` comes from a verify run's fresh trace, not from the store:
    # only stored traces that started after it are newer than the pin
    cutoff = pinned_start_time(runs_dir, pinned_ids) if runs_dir is not None else None
    stored = dated_trace_files(traces_dir) if traces_dir.is_dir() else []
    in_store = any(tid in pinned_ids for tid, _, _ in stored)
    candidates = []
    if in_store or cutoff is not None:
        for tid, path, started in reversed(stored):
            if tid in pinned_ids or (cutoff is not None and started <= cutoff):
                break  # only traces captured after the pin
            candidates.append(path)
    elif stored:
        notes.append("quick: the pinned trace is not in the store, so no stored trace is known to be newer")
    for path in candidates:
        trace = load_trace_file(path)
        if snapshot.trace_name is None or trace.name == snapshot.trace_name:
            notes.append(f"quick: graded the newest stored trace {trace.trace_id[:12]}… (no re-run)")
            keep_dir.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, keep_dir / f"000-{trace.trace_id}.json")
            return grade_agents(snapshot, fresh_agents_of_trace(trace), grader=grader)
    notes.append("quick: no trace newer than the pin; checked the pinned fixture's integrity only")
    return grade_agents(snapshot, fresh_agents_of_capture(snapshot, 0), grader=grader)


def fresh_runs(
    snapshot: Snapshot, options: VerifyOptions, count: int, seed: int | None, keep_dir: Path, notes: list[str]
) -> list[Trace]:
    """Re-run the snapshot's recorded command `count` times on the verify seed stream."""
    return capture_replicates(
        snapshot.invocation or {},
        count=count,
        seed=seed,
        stream="verify",
        timeout_s=options.timeout_s,
        trace_name=snapshot.trace_name,
        keep_dir=keep_dir,
        notes=notes,
        progress=options.progress,
    )


def replicate_check(
    snapshot: Snapshot, options: VerifyOptions, grader: TierGrader | None, keep_dir: Path, notes: list[str]
) -> tuple[Grading, tuple[ReplicateVerdict, ...]]:
    pinned_count = snapshot.replicates
    if pinned_count < 2:
        raise ProveAIError(
            f"snapshot {snapshot.name!r} pins 1 capture: the replicate gate needs the pinned noise "
            "to compare against",
            suggestions=[
                f"pin a distribution first: proveai snapshot init {snapshot.name} "
                f"--replicates {options.replicates}"
            ],
            exit_code=ProveAIExit.USAGE,
        )
    seed = 0 if options.seed is None else options.seed
    traces = fresh_runs(snapshot, options, options.replicates, seed, keep_dir, notes)
    fresh_rows: dict[str, list[AgentVerdict]] = {}
    for index, trace in enumerate(traces):
        grading = grade_agents(
            snapshot,
            fresh_agents_of_trace(trace),
            grader=grader,
            replicate=reference_for(index, pinned_count),
            single_sample=False,
        )
        for verdict in grading.verdicts:
            fresh_rows.setdefault(verdict.agent, []).append(verdict)
    pinned_statuses: dict[str, list[Status]] = {}
    for graded, reference in leave_one_out_pairs(pinned_count):
        grading = grade_agents(
            snapshot,
            fresh_agents_of_capture(snapshot, graded),
            grader=grader,
            replicate=reference,
            single_sample=False,
        )
        for verdict in grading.verdicts:
            pinned_statuses.setdefault(verdict.agent, []).append(verdict.status)
    rows = replicate_gate(
        {agent: [v.status for v in verdicts] for agent, verdicts in fresh_rows.items()},
        pinned_statuses,
        alpha=options.alpha,
    )
    notes.append(power_note(options.replicates, pinned_count, options.alpha, len(rows)))
    return Grading(tuple(_summary_row(row, fresh_rows.get(row.agent, [])) for row in rows)), tuple(rows)


def _summary_row(row: ReplicateVerdict, fresh: Sequence[AgentVerdict]) -> AgentVerdict:
    """One table row for an agent's replicate test."""
    changed = [v for v in fresh if v.status != Status.UNCHANGED]
    if row.fails:
        status = Status.REGRESSED
    elif row.inconclusive:
        status = Status.INCONCLUSIVE
    elif changed:
        status = Status.DRIFTED
    else:
        status = Status.UNCHANGED
    labels = [v.change for v in changed if v.change]
    change = max(set(labels), key=labels.count) if labels and status != Status.UNCHANGED else None
    rationale = (
        f"{row.fresh_failing}/{row.n_fresh} fresh failing vs {row.pinned_failing}/{row.n_pinned} pinned "
        f"(Fisher one-sided p={row.p_value:.3g}, BH p={row.p_adjusted:.3g}, alpha {row.alpha:g})"
    )
    return AgentVerdict(
        row.agent,
        Grade(status, Tier.REPLICATES, rationale, judged=status != Status.INCONCLUSIVE),
        change,
        pinned_calls=row.n_pinned,
        fresh_calls=row.n_fresh,
        iterations=tuple(v.status for v in fresh),
        source_file=fresh[0].source_file if fresh else None,
    )
