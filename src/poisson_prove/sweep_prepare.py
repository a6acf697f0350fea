"""Preparing a sweep: the request, and `prepare_sweep`, which reads the spec (or a resumed run's
manifest), resolves the salt and the paired run, checks the target and makes the plan. It writes
nothing; `poisson_prove.sweep.execute_sweep` runs what it prepared."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from poisson_prove.chaos.config import check_backend
from poisson_prove.errors import (
    EXIT_USAGE,
    ProveError,
)
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
from poisson_prove.store import RunInfo, RunStore

DEFAULT_BATCH_SIZE = 25_000  # rows; a batch is also written once its rows waited a second
DEFAULT_SPEC = "prove.toml"
__all__ = [
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_SPEC",
    "PreparedSweep",
    "SweepRequest",
    "prepare_sweep",
    "underpowered_error",
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
    budget: Mapping[str, Any] | None = None  # the design --budget bought (BudgetDesign.to_dict())


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


def underpowered_error(prepared: PreparedSweep, command: str = "poisson-prove sweep") -> ProveError:
    """The refusal of an underpowered design, with both ways out as `next:` lines."""
    from poisson_prove.plan import underpowered_message, ways_out

    needed, accept = ways_out(prepared.plan)
    suggestions = [f"{command} --replicates {needed}"]
    if accept is not None:
        suggestions.append(f"{command} --max-mde {accept:.3f}")
    return ProveError(underpowered_message(prepared.plan), suggestions=suggestions)
