"""The sweep: run every condition of a spec N replicates and store every episode as a run.

Two steps, so the command line can show the plan and ask before anything is written:

- `prepare_sweep(request)` reads the spec (or, for a resume, the run's manifest), resolves the
  salt and the run paired with, imports and checks the target, and makes the plan. It writes
  nothing.
- `execute_sweep(prepared)` creates (or reopens) the run, streams the planned episodes not yet
  stored through the backend's executor, writes them in batches and returns a `SweepResult`.

`run_sweep(...)` does both for a library caller, refusing an underpowered design the way the
command line does.
"""

from __future__ import annotations

import math
import platform
import shutil
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from poisson_prove.backends.base import Job
from poisson_prove.chaos.config import chaos_summary, check_backend, job_chaos
from poisson_prove.errors import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_REFUSED,
    EXIT_STOPPED,
    EXIT_USAGE,
    ProveError,
)
from poisson_prove.execute import ProcessExit, os_exit_guard
from poisson_prove.plan import (
    DEFAULT_MAX_MDE,
    DEFAULT_Q,
    Plan,
    backend_settings,
    make_plan,
)
from poisson_prove.run_checks import confirm_resume_target, resume_problem
from poisson_prove.seeding import check_salt, new_salt
from poisson_prove.spec import Cell, SweepSpec, is_target_ref, load_spec, spec_from_manifest
from poisson_prove.store import RunInfo, RunStore, RunWriter, utc_now
from poisson_prove.sweep_loop import BatchSink, Progress, run_planned

DEFAULT_BATCH_SIZE = 25_000  # rows; a batch is also written once its rows waited a second
DEFAULT_SPEC = "prove.toml"
__all__ = [
    "PreparedSweep",
    "Progress",
    "SweepRequest",
    "SweepResult",
    "execute_sweep",
    "prepare_sweep",
    "run_sweep",
]


@dataclass(frozen=True)
class SweepRequest:
    """What the user asked for (the command line's flags, or run_sweep's arguments)."""

    spec_path: str | Path | None = None
    store: str | Path | None = None
    target: str | None = None
    replicates: int | None = None
    salt: str | None = None
    pair_with: str | None = None
    resume: str | None = None  # "" = the latest partial run
    name: str | None = None
    episode_timeout: float | None = None
    max_rollouts: int | None = None
    batch_size: int = DEFAULT_BATCH_SIZE
    backend: str = "local"
    overrides: Mapping[str, Any] = field(default_factory=dict)
    max_mde: float | None = None  # None: 0.200, or a resumed run's own
    q: float = DEFAULT_Q
    stop_when_settled: bool = False  # needs pair_with; a resumed run keeps its own


@dataclass(frozen=True)
class PreparedSweep:
    """A checked request and its plan; nothing has been written yet."""

    request: SweepRequest
    spec: SweepSpec
    plan: Plan
    store: RunStore
    salt: str
    salt_source: str  # "fresh", "given", "paired" or "resumed"
    paired_with: RunInfo | None
    resume_run: RunInfo | None
    stored: int  # episodes already stored (a resume), else 0
    capture_missing: Mapping[str, str] = field(default_factory=dict)

    @property
    def to_run(self) -> int:
        return self.plan.rollouts - self.stored


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


def _latest_partial(store: RunStore) -> RunInfo:
    partial = [run for run in store.runs() if run.status == "partial"]
    if not partial:
        raise ProveError(
            f"no partial run to resume in the store {store.root}",
            suggestions=["poisson-prove runs", "poisson-prove sweep --yes"],
        )
    return partial[-1]


def prepare_sweep(request: SweepRequest, *, import_check: str = "process") -> PreparedSweep:
    """Check everything and make the plan; writes nothing.

    `import_check` is "process" (import the target here: the run needs it anyway), "child"
    (--dry-run: a child process with the network blocked) or "none".
    """
    chosen = [
        flag
        for flag, value in (
            ("--salt", request.salt),
            ("--pair-with", request.pair_with),
            ("--resume", request.resume),
        )
        if value is not None
    ]
    if len(chosen) > 1:
        raise ProveError(f"{' and '.join(chosen)} cannot be given together; choose one", exit_code=EXIT_USAGE)
    if request.stop_when_settled and request.pair_with is None:
        raise ProveError(
            "--stop-when-settled needs --pair-with RUN: it stops a condition once its comparison "
            "with the paired run is settled",
            suggestions=["poisson-prove sweep --pair-with latest --stop-when-settled --yes"],
            exit_code=EXIT_USAGE,
        )
    if request.batch_size < 1:
        raise ProveError("--batch-size must be at least 1", exit_code=EXIT_USAGE)
    if request.max_rollouts is not None and request.max_rollouts < 1:
        raise ProveError("--max-rollouts must be at least 1", exit_code=EXIT_USAGE)
    if request.episode_timeout is not None and not 0 < request.episode_timeout < math.inf:
        raise ProveError(
            "--episode-timeout must be a positive, finite number of seconds, "
            f"got {request.episode_timeout:g}",
            suggestions=["leave --episode-timeout out for no limit"],
            exit_code=EXIT_USAGE,
        )
    if request.max_mde is not None and not 0 < request.max_mde <= 1:
        raise ProveError("--max-mde must be a fraction in (0, 1]", exit_code=EXIT_USAGE)
    if request.replicates is not None and request.replicates < 1:
        raise ProveError("--replicates must be at least 1", exit_code=EXIT_USAGE)
    store = RunStore(request.store)
    store.check_usable()
    paired_with: RunInfo | None = None
    resume_run: RunInfo | None = None
    cells: list[Cell] | None = None
    stored = 0
    if request.resume is not None:
        for flag, value in (
            ("--replicates", request.replicates),
            ("--name", request.name),
        ):
            if value is not None:
                raise ProveError(
                    f"{flag} cannot be given with --resume: the run keeps its own", exit_code=EXIT_USAGE
                )
        resume_run = store.resolve(request.resume) if request.resume else _latest_partial(store)
        manifest = resume_run.manifest
        problem = resume_problem(manifest)
        if problem is not None:
            raise ProveError(
                f'run "{resume_run.name}" cannot be resumed: its manifest '
                f'{resume_run.path / "manifest.json"} is damaged ({problem})',
                suggestions=["restore manifest.json from a copy, or start a new run: poisson-prove sweep"],
            )
        confirm_resume_target(manifest, resume_run.name, request.spec_path, request.target)
        # The batch files, not the status, say what ran: a complete run missing a batch (one
        # moved out because it was damaged) resumes to its planned set again.
        planned = int((manifest.get("counts") or {}).get("planned") or 0)
        settled = int((manifest.get("counts") or {}).get("settled_skipped") or 0)
        if resume_run.status == "complete" and settled and len(resume_run.stored_keys()) + settled >= planned:
            raise ProveError(
                f'run "{resume_run.name}" is complete: it stopped when settled, {settled:,} planned '
                "rollouts were not needed; there is nothing to resume",
                suggestions=["poisson-prove sweep --yes (a new run to the full plan)"],
            )
        if resume_run.status == "complete" and len(resume_run.stored_keys()) >= planned:
            raise ProveError(
                f'run "{resume_run.name}" is complete; there is nothing to resume',
                suggestions=["poisson-prove sweep --yes"],
            )
        spec = spec_from_manifest(manifest["spec"], manifest["spec_path"])
        target, replicates, salt, source = (
            manifest["target"],
            int(manifest["replicates"]),
            manifest["salt"],
            "resumed",
        )
        cells = [Cell(c["key"], c["label"], c["cfg"]) for c in manifest["cells"]]
        stored = len(resume_run.stored_keys())
        if manifest.get("paired_with"):
            try:
                paired_with = store.resolve(manifest["paired_with"])
            except ProveError:
                paired_with = None
    else:
        spec = load_spec(request.spec_path or DEFAULT_SPEC)
        target = request.target or spec.target
        replicates = request.replicates or spec.replicates
        if request.target is not None and not is_target_ref(request.target):
            raise ProveError(
                f"--target must read module:function, got {request.target!r}", exit_code=EXIT_USAGE
            )
        if request.salt is not None:
            try:
                salt, source = check_salt(request.salt), "given"
            except ValueError as err:
                raise ProveError(f"--salt: {err}", exit_code=EXIT_USAGE) from None
        elif request.pair_with is not None:
            paired_with = store.resolve(request.pair_with)
            salt, source = str(paired_with.manifest["salt"]), "paired"
        else:
            salt, source = new_salt(), "fresh"
        if request.name is not None:
            if not request.name.strip():
                raise ProveError("--name must not be empty", exit_code=EXIT_USAGE)
            if any(run.name == request.name for run in store.runs()):
                raise ProveError(
                    f'a run named "{request.name}" already exists in the store {store.root}',
                    suggestions=["choose another --name, or leave it out to have one computed"],
                )
    max_mde = request.max_mde
    if max_mde is None:  # a resumed run keeps the design it was accepted with
        design = resume_run.manifest.get("design") or {} if resume_run is not None else {}
        max_mde = float(design.get("max_mde") or DEFAULT_MAX_MDE)
    check_backend(spec.chaos, request.backend)
    settings = backend_settings(spec, request.backend, request.overrides)
    plan = make_plan(
        spec,
        target=target,
        replicates=replicates,
        backend=request.backend,
        settings=settings,
        max_mde=max_mde,
        q=request.q,
        cells=cells,
    )
    capture_missing: dict[str, str] = {}
    if import_check == "child":
        from poisson_prove.isolation import check_target_isolated

        check_target_isolated(target, spec.spec_dir)
    elif import_check == "process":
        from poisson_prove.execute import import_target

        import_target(target, str(spec.spec_dir))
    if spec.capture.instrument:
        from poisson_prove.capture import probe_instrumentors

        # Not installed, failing to load or to instrument: each is named, with the reason.
        capture_missing = probe_instrumentors(spec.capture.instrument)
    return PreparedSweep(
        request, spec, plan, store, salt, source, paired_with, resume_run, stored, capture_missing
    )


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


def underpowered_error(prepared: PreparedSweep, command: str = "poisson-prove sweep") -> ProveError:
    """The refusal of an underpowered design, with both ways out as `next:` lines."""
    from poisson_prove.plan import underpowered_message, ways_out

    needed, accept = ways_out(prepared.plan)
    suggestions = [f"{command} --replicates {needed}"]
    if accept is not None:
        suggestions.append(f"{command} --max-mde {accept:.3f}")
    return ProveError(underpowered_message(prepared.plan), suggestions=suggestions)


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
