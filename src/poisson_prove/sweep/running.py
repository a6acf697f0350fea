"""Running a prepared sweep: `execute_sweep` and, for a library caller, `run_sweep`.

`execute_sweep(prepared)` creates (or reopens) the run, streams the planned episodes not yet
stored through the backend's executor (`_run_planned`), writes them in batches (batches.py)
and returns a `SweepResult`. Two paths give the same rows: when the executor would run the
episodes in this thread one after another (`Executor.runs_in_caller`), the sweep runs them
itself, row tuples straight from `episode.run.run_into` without a Task and a dict per episode;
any other executor (a pool, a cluster, a remote backend) gets the plan's Tasks and streams row
dicts back in any order (each built by `run_episode`, which is `run_into` for one episode).
Ctrl-C (KeyboardInterrupt) reaches `execute_sweep` with every finished row still in the sink.

`run_sweep(...)` prepares and runs, refusing an underpowered design the way the command line
does.
"""

from __future__ import annotations

import dataclasses
import operator
import platform
import shutil
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from poisson_prove.backends import make_executor
from poisson_prove.backends.base import Executor
from poisson_prove.chaos.config import chaos_summary, job_chaos
from poisson_prove.chaos.reach import chaos_after_run, reach_totals
from poisson_prove.design.plan import Plan, cost_error
from poisson_prove.design.seeds_ahead import SeedReader
from poisson_prove.episode.run import Job, ProcessExit, os_exit_guard, run_into
from poisson_prove.episode.target import load_target
from poisson_prove.errors import ProveError, ProveExit
from poisson_prove.store.checks import stored_keys
from poisson_prove.store.info import RunInfo
from poisson_prove.store.runs import RunStore, RunWriter
from poisson_prove.store.table import ROW_FIELDS, prepare_conversion, row_tuple
from poisson_prove.sweep.batches import BatchSink, quick_handoffs
from poisson_prove.sweep.prepare import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_SPEC,
    PreparedSweep,
    SweepRequest,
    UnderpoweredError,
    prepare_sweep,
)
from poisson_prove.sweep.result import SweepResult
from poisson_prove.sweep.stop_when_settled import SettleWatcher, planned_record, watcher_for
from poisson_prove.version import __version__
from prove_common.jsonio import utc_now

#: progress(done this call, to run this call)
Progress = Callable[[int, int], None]

#: Episodes run between two progress reports on the fused path, at most.
_CHUNK = 256
#: Seconds between two progress reports (and flush checks) on the fused path, at most.
_REPORT_S = 0.25


def _manifest(prepared: PreparedSweep) -> dict[str, Any]:
    plan, spec = prepared.plan, prepared.spec
    return {
        "target": plan.target,
        "target_id": plan.target_id,
        "t_unit": plan.t_unit,
        "spec": spec.raw,
        "spec_path": str(spec.path.resolve()),
        "salt": plan.salt,
        "paired_with": prepared.paired_with.run_id if prepared.paired_with else None,
        "paired_with_name": prepared.paired_with.name if prepared.paired_with else None,
        "backend": plan.backend,
        "concurrency": plan.concurrency,
        "replicates": plan.replicates,
        "cells": [{"key": c.key, "label": c.label, "cfg": dict(c.cfg)} for c in plan.conditions],
        "axis_order": [a.name for a in plan.axes],
        "outcomes": list(plan.outcomes),
        "failures": list(plan.failures),
        "successes": list(plan.successes),
        "design": plan.design_dict(),
        "cost_usd": plan.cost_usd,
        "budget": dict(prepared.request.budget) if prepared.request.budget else None,
        "capture": {**spec.capture.as_dict(), "missing": dict(prepared.capture_missing)},
        "chaos": chaos_summary(spec.chaos),
        "episode_timeout": prepared.request.episode_timeout,
        "counts": {"planned": plan.rollouts, "done": 0, "errored": 0},
        "resumed_at": [],
        **_sequential_field(planned_record(prepared)),
        "versions": {"poisson_prove": __version__, "python": platform.python_version()},
    }


def execute_sweep(
    prepared: PreparedSweep,
    *,
    progress: Progress | None = None,
    opened: Callable[[RunInfo], None] | None = None,
    seeds: SeedReader | None = None,
) -> SweepResult:
    """Run the planned episodes not yet stored; write them in batches; return how it ended.

    Ctrl-C (KeyboardInterrupt) is caught: the rows already finished are written, the run stays
    partial and the result's verdict is "interrupted". `opened(run)` is told the run once it
    is created (or reopened), before any episode runs. `seeds` reads the plan's seeds derived
    by another process (design.seeds_ahead; the supervisor's).
    """
    prepared = _absolute(prepared)  # a rollout that calls os.chdir must not move the store
    request, plan = prepared.request, prepared.plan
    executor = make_executor(plan.backend, plan.settings)  # before anything is written
    lacking = executor.capture_missing(prepared.spec.capture.instrument)  # a cluster's workers
    if lacking:
        prepared = dataclasses.replace(prepared, capture_missing={**lacking, **prepared.capture_missing})
    store = prepared.store
    store_existed = store.root.exists()
    writer, skip, errored_before = _open_run(prepared)
    if opened is not None:
        opened(writer.info)
    watcher = watcher_for(prepared, writer, skip)
    sink: BatchSink | None = None
    try:
        run_id = writer.manifest["run_id"]
        job = _job(prepared, run_id)
        to_run = plan.rollouts - len(skip)
        if request.max_rollouts is not None:
            to_run = min(to_run, request.max_rollouts)
        prepare_conversion(run_id, to_run)  # its imports before the clock: the done line times episodes
        started = time.perf_counter()
        stored_before = len(stored_keys(prepared.resume_run)) if prepared.resume_run is not None else 0
        sink = BatchSink(
            writer, request.batch_size, plan.rollouts, stored_before, errored_before, case_ids=plan.case_ids()
        )
        writer.compact_as_written()  # a new run's compacted file is written as its batches are
        if watcher is not None:
            sink.on_rows = watcher.observe  # a look at its planned replicates cuts the batch there

            def look(batch: list[Any], watcher: Any = watcher) -> None:
                watcher.look(writer)

            sink.on_write = look
        interrupted = False
        halted: ProcessExit | None = None
        failure: Exception | None = None
        try:
            with os_exit_guard():
                _run_planned(executor, job, plan, skip, request.max_rollouts, sink, progress, watcher, seeds)
        except KeyboardInterrupt:
            interrupted = True
        except ProcessExit as exc:
            halted = exc
        except Exception as exc:
            failure = exc
        sink.account()
        ran, errored_new, system_exits, first_error = (
            sink.ran,
            sink.errored,
            sink.system_exits,
            sink.first_error,
        )
        if failure is not None and ran == 0 and prepared.resume_run is None:
            _discard_empty_run(store, writer, store_existed, failure)
            raise failure
        sink.flush()
        done = stored_before + ran
        errored = errored_before + errored_new
        sequential, saved = None, 0
        if watcher is not None:
            saved = watcher.not_run()
            sequential = watcher.record()
        # A run that stopped because every remaining condition settled is complete for its
        # purpose: its skipped replicates are counted as `settled_skipped`, not as missing.
        complete = done + saved >= plan.rollouts
        status = "complete" if complete else "partial"
        if complete and failure is None:
            try:  # before the manifest says complete: a kill meanwhile leaves a run to --resume
                writer.compact()  # one file for every later reader (store.compaction)
            except KeyboardInterrupt:
                pass  # Ctrl-C stops only the compaction: every row is stored once either way
        seconds = time.perf_counter() - started  # the episodes, their batches and the compaction
        counts = {"planned": plan.rollouts, "done": done, "errored": errored}
        if watcher is not None:
            counts["settled_skipped"] = saved
        chaos = _chaos_reached(writer)
        writer.update_manifest(
            status=status,
            counts=counts,
            chaos=chaos,  # what the faults reached ({} without faults, as the run began)
            finished=utc_now().isoformat(timespec="seconds").replace("+00:00", "Z") if complete else None,
            **_sequential_field(sequential),
        )
        verdict = _verdict(interrupted, halted is not None, complete, all_errored=errored == done)
        writer.event(
            "done" if complete else "stop",
            reason=verdict if failure is None else "failed",
            ran=ran,
            done=done,
            errored=errored,
            seconds=round(seconds, 3),
            **({"settled": sequential["settled"], "saved": saved} if sequential is not None else {}),
        )
        if failure is not None:
            raise failure  # what ran is kept; the run stays partial, to resume
        manifest = writer.manifest
        return SweepResult(
            verdict=verdict,
            run_id=run_id,
            name=str(manifest["name"]),
            status=status,
            salt=plan.salt,
            paired_with=manifest.get("paired_with"),
            paired_with_name=manifest.get("paired_with_name"),
            planned=plan.rollouts,
            done=done,
            errored=errored,
            ran=ran,
            seconds=seconds,
            system_exits=system_exits,
            first_error=first_error,
            capture_missing=dict(prepared.capture_missing),
            process_exit=None if halted is None else _halt_text(halted, plan),
            sequential=sequential,
            saved=saved,
            chaos=chaos,
        )
    finally:
        if sink is not None:
            sink.close()
        writer.release()


def _absolute(prepared: PreparedSweep) -> PreparedSweep:
    """`prepared` with its store and runs at absolute paths, resolved once, before any rollout
    runs: a relative `--store` read after a rollout's os.chdir would name another folder."""
    root = prepared.store.root.absolute()
    if root == prepared.store.root:
        return prepared

    def moved(info: RunInfo | None) -> RunInfo | None:
        return None if info is None else RunInfo(info.path.absolute(), info.manifest)

    return dataclasses.replace(
        prepared,
        store=RunStore(root),
        resume_run=moved(prepared.resume_run),
        paired_with=moved(prepared.paired_with),
    )


def _open_run(prepared: PreparedSweep) -> tuple[RunWriter, set[tuple[str, int]], int]:
    """The run to write into, held: a resumed run reopened (with the (condition, replicate)
    pairs it stores and its errored count), else a new run with its manifest."""
    plan, store = prepared.plan, prepared.store
    if prepared.resume_run is None:
        writer = store.create_run(
            target_id=plan.target_id, name=prepared.request.name, manifest=_manifest(prepared), hold=True
        )
        return writer, set(), 0
    writer = store.open_run(prepared.resume_run, hold=True)
    skip = stored_keys(prepared.resume_run)
    errored_before = prepared.resume_run.errored_count()
    resumed = [*writer.manifest.get("resumed_at", []), utc_now().isoformat(timespec="seconds")]
    writer.update_manifest(resumed_at=resumed)
    writer.event("resume", stored=len(skip), to_run=plan.rollouts - len(skip))
    return writer, skip, errored_before


def _job(prepared: PreparedSweep, run_id: str) -> Job:
    """What every episode of the run shares, as the backend's executor receives it."""
    plan, settings = prepared.plan, prepared.plan.settings
    return Job(
        run_id=run_id,
        target=plan.target,
        spec_dir=str(prepared.spec.spec_dir),
        outcomes=tuple(plan.outcomes),
        episode_timeout=prepared.request.episode_timeout,
        infra_errors=tuple(settings.get("infra_errors", ())),
        infra_retries=int(settings.get("infra_retries", 0) or 0),
        capture=prepared.spec.capture.as_dict(),
        scope=job_chaos(prepared.spec.chaos, plan.salt),
        # what only the submitting process holds stays there: a cluster handed over from Python
        # ([dask] client) is live sockets and tasks, and the Job is pickled to every worker
        options={key: value for key, value in settings.items() if key != "client"},
    )


def _chaos_reached(writer: RunWriter) -> dict[str, Any]:
    """The manifest's chaos block with what the faults reached, totalled over every stored
    episode's spans, one batch at a time ({} without faults)."""
    block = writer.manifest.get("chaos") or {}
    if not block.get("faults"):
        return {}
    info = writer.info
    batches = (info.read_batch(path, ["spans"]).column("spans") for path in info.batch_files())
    return chaos_after_run(block, reach_totals(text for spans in batches for text in spans.to_pylist()))


def _discard_empty_run(store: RunStore, writer: RunWriter, store_existed: bool, failure: Exception) -> None:
    """The backend failed before a single episode came back: leave no empty run behind."""
    shutil.rmtree(writer.path, ignore_errors=True)
    if not store_existed and {p.name for p in store.root.iterdir()} <= {".store.lock"}:
        shutil.rmtree(store.root, ignore_errors=True)
    if isinstance(failure, ProveError) and failure.exit_code == ProveExit.STOPPED:
        # Nothing ran and nothing is kept: refused before work, exit 1, not "resume it".
        failure.exit_code = ProveExit.REFUSED


def _verdict(interrupted: bool, halted: bool, complete: bool, *, all_errored: bool) -> str:
    if interrupted:
        return "interrupted"
    if halted:
        return "process_exit"
    if not complete:
        return "stopped"
    return "failed" if all_errored else "done"


def _run_planned(
    executor: Executor,
    job: Job,
    plan: Plan,
    skip: set[tuple[str, int]],
    limit: int | None,
    sink: BatchSink,
    progress: Progress | None,
    watcher: SettleWatcher | None = None,
    seeds: SeedReader | None = None,
) -> None:
    """Run the planned episodes not in `skip` (at most `limit`) into `sink`.

    A rollout that calls os._exit in this process ends the loop with ProcessExit, its
    `process_exit` row already in the sink (episode.run.os_exit_guard is the caller's).
    With `--stop-when-settled` (`watcher`) the episodes run here pause at each planned look, so
    the look is taken before a replicate past it runs, as for the slowest rollout.
    """
    to_run = plan.rollouts - len(skip)
    if limit is not None:
        to_run = min(to_run, limit)
    if executor.runs_in_caller(job):
        rollout = load_target(job)
        items: Iterable[tuple[str, Mapping[str, Any], int, int]] = plan.episodes(skip, limit, seeds)
        pauses = None
        if watcher is not None:  # a settled condition's replicates join `skip` as the sweep goes
            pauses = _LookPauses(plan.episodes(skip, limit, seeds, skip_grows=True), watcher, skip)
        if pauses is not None:
            items = pauses
        clock = time.perf_counter
        step = max(1, min(_CHUNK, to_run // 20))  # progress at least every twentieth of the work
        # Back to this loop every `step` episodes, every quarter second, as soon as a batch is
        # full, and at a planned look: the progress line moves, a batch is written when full or
        # after a second, and a look is taken on exactly its planned replicates.
        with quick_handoffs():  # the batch writer's thread gets the GIL back without stalling them
            while True:
                ran = run_into(
                    rollout,
                    job,
                    items,
                    sink.pending,
                    until=clock() + _REPORT_S,
                    full=min(sink.size, len(sink.pending) + step),
                )
                if not ran and (pauses is None or pauses.held is None):
                    return
                sink.account()
                sink.maybe_flush()
                if progress is not None:
                    progress(sink.ran, to_run)
    in_rounds = getattr(executor, "execute_rounds", None)  # the local pool: row tuples, a round at once
    tasks = plan.tasks(skip, limit, seeds, skip_grows=watcher is not None)
    rows = (in_rounds or executor.execute)(job, tasks)
    try:
        for row in rows:
            if type(row) is list:
                sink.pending.extend([r if type(r) is tuple else _as_tuple(r) for r in row])
            else:
                sink.pending.append(_as_tuple(row))
            sink.account()
            sink.maybe_flush()
            if progress is not None:
                progress(sink.ran, to_run)
    except ProcessExit as exc:  # raised in a pool thread: its row comes with it
        if exc.row is not None:
            sink.pending.append(row_tuple(exc.row))
        raise
    finally:
        close = getattr(rows, "close", None)
        if close is not None:
            close()  # the executor's `finally` cancels what is still in flight


_FIELDS_GET = operator.itemgetter(*ROW_FIELDS)
_STARTED_AT = ROW_FIELDS.index("started_at")


def _as_tuple(row: dict[str, Any]) -> tuple[Any, ...]:
    """A backend's row dict as a row tuple: store.table.row_tuple, read in one step when the row
    has every field and its start is epoch seconds already (every backend's own rows)."""
    try:
        values: tuple[Any, ...] = _FIELDS_GET(row)
    except KeyError:
        return row_tuple(row)
    started = values[_STARTED_AT]
    return values if started is None or type(started) is float else row_tuple(row)


class _LookPauses:
    """The planned episodes (in replicate order), ending each pass before the first episode of
    a replicate at or past the next planned look, so that look is taken first; the episode held
    there is given to the next pass unless its condition has stopped meanwhile."""

    def __init__(
        self,
        items: Iterator[tuple[str, Mapping[str, Any], int, int]],
        watcher: SettleWatcher,
        skip: set[tuple[str, int]],
    ) -> None:
        self._items = items
        self._watcher = watcher
        self._skip = skip
        self.held: tuple[str, Mapping[str, Any], int, int] | None = None
        self._paused_at = -1  # one pause per look: a look not taken there (a gap) pauses no more

    def __iter__(self) -> Iterator[tuple[str, Mapping[str, Any], int, int]]:
        pause = self._watcher.pause_at()
        while True:
            item, self.held = self.held, None
            if item is None:
                item = next(self._items, None)
                if item is None:
                    return
            elif (item[0], item[2]) in self._skip:
                continue  # its condition stopped at the look it waited for
            if item[2] >= pause and pause != self._paused_at:
                self.held, self._paused_at = item, pause
                return
            yield item


def _sequential_field(sequential: Mapping[str, Any] | None) -> dict[str, Any]:
    """The manifest's `sequential` field, only for a sweep that stopped when settled."""
    return {} if sequential is None else {"sequential": sequential}


def _halt_text(halted: ProcessExit, plan: Plan) -> str:
    """Which episode ended the sweep's process, and how, for the error line."""
    row = halted.row or {}
    labels = {condition.key: condition.label for condition in plan.conditions}
    cell = row.get("cell")
    where = f"{labels.get(str(cell), cell)}/{row.get('replicate')}"
    return f"the target called os._exit({halted.code!r}) in episode {where}"


def run_sweep(
    spec: str | Path = DEFAULT_SPEC,
    *,
    store: str | Path | None = None,
    target: str | None = None,
    replicates: int | None = None,
    salt: str | None = None,
    pair_with: str | None = None,
    resume: str | None = None,
    name: str | None = None,
    episode_timeout: float | None = None,
    max_rollouts: int | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    backend: str = "local",
    overrides: Mapping[str, Any] | None = None,
    max_mde: float | None = None,
    progress: Progress | None = None,
    stop_when_settled: bool = False,
) -> SweepResult:
    """Plan and run a sweep in this process; the library form of `poisson-prove sweep --yes`.

    Raises ProveError for what the command refuses (a bad spec or target, an underpowered
    design, a cost above `overrides["max_cost"]`); returns a SweepResult otherwise.
    """
    request = SweepRequest(
        spec_path=spec,
        store=store,
        target=target,
        replicates=replicates,
        salt=salt,
        pair_with=pair_with,
        resume=resume,
        name=name,
        episode_timeout=episode_timeout,
        max_rollouts=max_rollouts,
        batch_size=batch_size,
        backend=backend,
        overrides=dict(overrides or {}),
        max_mde=max_mde,
        stop_when_settled=stop_when_settled,
    )
    prepared = prepare_sweep(request, import_check="child" if episode_timeout is not None else "process")
    if not prepared.plan.passes:
        raise UnderpoweredError.of(prepared.plan)
    refusal = cost_error(prepared.plan)
    if refusal is not None:
        raise refusal
    return execute_sweep(prepared, progress=progress)
