"""The sweep: run every condition of a spec N replicates and store every episode as a run.

Two steps, so the command line can show the plan and ask before anything is written:

- `prepare_sweep(request)` (sweep_prepare.py) reads the spec (or, for a resume, the run's
  manifest), resolves the salt and the run paired with, imports and checks the target, and
  makes the plan. It writes nothing.
- `execute_sweep(prepared)` creates (or reopens) the run, streams the planned episodes not yet
  stored through the backend's executor, writes them in batches and returns a `SweepResult`.

`run_sweep(...)` does both for a library caller, refusing an underpowered design the way the
command line does.
"""

from __future__ import annotations

import platform
import shutil
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from poisson_prove.backends.base import Job
from poisson_prove.chaos.config import chaos_summary, job_chaos
from poisson_prove.errors import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_REFUSED,
    EXIT_STOPPED,
    ProveError,
)
from poisson_prove.execute import ProcessExit, os_exit_guard
from poisson_prove.plan import (
    Plan,
)
from poisson_prove.shared.jsonio import utc_now
from poisson_prove.store import RunWriter
from poisson_prove.sweep_loop import BatchSink, Progress, run_planned
from poisson_prove.sweep_prepare import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_SPEC,
    PreparedSweep,
    SweepRequest,
    prepare_sweep,
    underpowered_error,
)

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_SPEC",
    "PreparedSweep",
    "Progress",
    "SweepRequest",
    "SweepResult",
    "execute_sweep",
    "prepare_sweep",
    "run_sweep",
    "underpowered_error",
]


@dataclass(frozen=True)
class SweepResult:
    """How a sweep ended."""

    # "done", "stopped" (--max-rollouts), "interrupted", "failed" (all errored) or
    # "process_exit" (a rollout called os._exit in this process: the sweep stopped there)
    verdict: str
    run_id: str
    name: str
    status: str  # "partial" or "complete"
    salt: str
    paired_with: str | None
    paired_with_name: str | None
    planned: int
    done: int  # stored in the run, this session and before
    errored: int  # stored rows without an outcome
    ran: int  # rollouts run by this call
    seconds: float
    system_exits: int = 0  # rollouts of this call that called sys.exit
    first_error: str | None = None
    capture_missing: Mapping[str, str] = field(default_factory=dict)
    process_exit: str | None = None  # the episode that called os._exit, with its code
    # --stop-when-settled: the manifest's `sequential` block, and the planned rollouts not run
    # because their condition settled (the rollouts saved)
    sequential: Mapping[str, Any] | None = None
    saved: int = 0

    @property
    def exit_code(self) -> int:
        if self.verdict == "interrupted":
            return EXIT_INTERRUPTED
        if self.verdict in ("stopped", "failed", "process_exit"):
            return EXIT_STOPPED
        return EXIT_OK


def _manifest(prepared: PreparedSweep) -> dict[str, Any]:
    from poisson_prove import __version__

    plan, spec = prepared.plan, prepared.spec
    return {
        "target": plan.target,
        "target_id": plan.target_id,
        "t_unit": plan.t_unit,
        "spec": spec.raw,
        "spec_path": str(spec.path.resolve()),
        "salt": prepared.salt,
        "paired_with": prepared.paired_with.run_id if prepared.paired_with else None,
        "paired_with_name": prepared.paired_with.name if prepared.paired_with else None,
        "backend": plan.backend,
        "concurrency": plan.concurrency,
        "replicates": plan.replicates,
        "cells": [{"key": c.key, "label": c.label, "cfg": dict(c.cfg)} for c in plan.cells],
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
        "versions": {"poisson_prove": __version__, "python": platform.python_version()},
    }


def execute_sweep(prepared: PreparedSweep, *, progress: Progress | None = None) -> SweepResult:
    """Run the planned episodes not yet stored; write them in batches; return how it ended.

    Ctrl-C (KeyboardInterrupt) is caught: the rows already finished are written, the run stays
    partial and the result's verdict is "interrupted".
    """
    from poisson_prove.backends import make_executor

    request, plan = prepared.request, prepared.plan
    executor = make_executor(plan.backend, plan.settings)  # before anything is written
    store = prepared.store
    store_existed = store.root.exists()
    if prepared.resume_run is not None:
        writer: RunWriter = store.open_run(prepared.resume_run, hold=True)
        skip = prepared.resume_run.stored_keys()
        errored_before = prepared.resume_run.errored_count()
        resumed = [*writer.manifest.get("resumed_at", []), utc_now().isoformat(timespec="seconds")]
        writer.update_manifest(resumed_at=resumed)
        writer.event("resume", stored=len(skip), to_run=plan.rollouts - len(skip))
    else:
        writer = store.create_run(
            target_id=plan.target_id, name=request.name, manifest=_manifest(prepared), hold=True
        )
        skip, errored_before = set(), 0
    from poisson_prove.sweep_settle import watcher_for

    watcher = watcher_for(prepared, writer, skip)
    try:
        run_id = writer.manifest["run_id"]
        settings = plan.settings
        job = Job(
            run_id=run_id,
            target=plan.target,
            spec_dir=str(prepared.spec.spec_dir),
            outcomes=tuple(plan.outcomes),
            episode_timeout=request.episode_timeout,
            infra_errors=tuple(settings.get("infra_errors", ())),
            infra_retries=int(settings.get("infra_retries", 0) or 0),
            capture=prepared.spec.capture.as_dict(),
            chaos=job_chaos(prepared.spec.chaos, prepared.salt),
            options=dict(settings),
        )
        # What writing a batch imports (pyarrow's compute, Parquet and pandas shims, ~0.3 s),
        # loaded before the clock starts: the done line times the episodes, not start-up.
        import pyarrow.parquet  # noqa: F401

        from poisson_prove.episode_table import tuples_to_table

        tuples_to_table(run_id, [])
        started = time.perf_counter()
        stored_before = len(prepared.resume_run.stored_keys()) if prepared.resume_run is not None else 0
        sink = BatchSink(writer, request.batch_size, plan.rollouts, stored_before, errored_before)
        if watcher is not None:

            def look(batch: list[Any], watcher: Any = watcher) -> None:
                watcher.observe(batch)
                watcher.look(writer)

            sink.on_write = look
        interrupted = False
        halted: ProcessExit | None = None
        failure: Exception | None = None
        try:
            with os_exit_guard():
                run_planned(executor, job, plan, prepared.salt, skip, request.max_rollouts, sink, progress)
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
            # The backend failed before a single episode came back: leave no empty run behind.
            shutil.rmtree(writer.path, ignore_errors=True)
            if not store_existed and {p.name for p in store.root.iterdir()} <= {".store.lock"}:
                shutil.rmtree(store.root, ignore_errors=True)
            if isinstance(failure, ProveError) and failure.exit_code == EXIT_STOPPED:
                # Nothing ran and nothing is kept: refused before work, exit 1, not "resume it".
                failure.exit_code = EXIT_REFUSED
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
        seconds = time.perf_counter() - started
        counts = {"planned": plan.rollouts, "done": done, "errored": errored}
        if watcher is not None:
            counts["settled_skipped"] = saved
        writer.update_manifest(
            status=status,
            counts=counts,
            finished=utc_now().isoformat(timespec="seconds").replace("+00:00", "Z") if complete else None,
            **({"sequential": sequential} if sequential is not None else {}),
        )
        if interrupted:
            verdict = "interrupted"
        elif halted is not None:
            verdict = "process_exit"
        elif not complete:
            verdict = "stopped"
        elif errored == done:
            verdict = "failed"
        else:
            verdict = "done"
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
            salt=prepared.salt,
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
        )
    finally:
        writer.release()


def _halt_text(halted: ProcessExit, plan: Plan) -> str:
    """Which episode ended the sweep's process, and how, for the error line."""
    row = halted.row or {}
    labels = {cell.key: cell.label for cell in plan.cells}
    where = f"{labels.get(row.get('cell'), row.get('cell'))}/{row.get('replicate')}"
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
    from poisson_prove.plan import cost_error

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
        raise underpowered_error(prepared)
    refusal = cost_error(prepared.plan)
    if refusal is not None:
        raise refusal
    return execute_sweep(prepared, progress=progress)
