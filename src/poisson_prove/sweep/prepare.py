"""Preparing a sweep: the request, and `prepare_sweep`, which reads the spec (or a resumed run's
manifest), resolves the salt and the paired run, checks the target and makes the plan. It writes
nothing; `poisson_prove.sweep.execute_sweep` runs what it prepared.

`prepare_sweep` runs named steps: check the request's flags (`_check_flags`), resolve the run
to resume (resume.py) or the new run's spec, target, salt and pairing (`_new_run`), then plan
(`_plan`, the salt goes into the plan) and check the target (`_check_target`). `replan` plans a
prepared sweep again at other replicates (what `--budget` bought) without doing any of the
rest twice."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from poisson_prove.backends._settings import MAX_CONCURRENCY
from poisson_prove.chaos.config import check_backend
from poisson_prove.design.plan import (
    DEFAULT_MAX_MDE,
    DEFAULT_Q,
    Plan,
    backend_settings,
    make_plan,
    underpowered_message,
    ways_out,
)
from poisson_prove.design.seeding import check_salt, new_salt
from poisson_prove.design.spec import Condition, SweepSpec, load_spec
from poisson_prove.design.spec_where import is_target_ref
from poisson_prove.episode.capture import probe_instrumentors
from poisson_prove.episode.isolation import check_target_isolated
from poisson_prove.episode.target import import_target
from poisson_prove.errors import ProveError, ProveExit
from poisson_prove.store.info import RunInfo
from poisson_prove.store.runs import RunStore, check_new_name
from poisson_prove.sweep.resume import resume_state

DEFAULT_BATCH_SIZE = 25_000  # rows; a batch is also written once its rows waited a second
DEFAULT_SPEC = "prove.toml"
__all__ = [
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_SPEC",
    "PreparedSweep",
    "SweepRequest",
    "UnderpoweredError",
    "prepare_sweep",
    "replan",
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
    """A checked request and its plan (which holds the salt); nothing has been written yet."""

    request: SweepRequest
    spec: SweepSpec
    plan: Plan
    store: RunStore
    salt_source: str  # where the plan's salt came from: "fresh", "given", "paired" or "resumed"
    paired_with: RunInfo | None
    resume_run: RunInfo | None
    stored: int  # episodes already stored (a resume), else 0
    capture_missing: Mapping[str, str] = field(default_factory=dict)

    @property
    def to_run(self) -> int:
        return self.plan.rollouts - self.stored


@dataclass(frozen=True)
class _NewRun:
    """What a new run brings to the plan: its spec, target, replicates, salt and pairing."""

    spec: SweepSpec
    target: str
    replicates: int
    salt: str
    salt_source: str  # "fresh", "given" or "paired"
    paired_with: RunInfo | None


def prepare_sweep(request: SweepRequest, *, import_check: str = "process") -> PreparedSweep:
    """Check everything and make the plan; writes nothing.

    `import_check` is "process" (import the target here: the run needs it anyway), "child"
    (--dry-run: a child process with the network blocked) or "none".
    """
    _check_flags(request)
    store = RunStore(request.store)
    store.check_usable()
    if request.resume is not None:
        _refuse_with_resume(request)
        resumed = resume_state(store, request.resume, request.spec_path, request.target)
        spec, target, replicates, salt = resumed.spec, resumed.target, resumed.replicates, resumed.salt
        source, paired_with, resume_run = "resumed", resumed.paired_with, resumed.run
        conditions: list[Condition] | None = resumed.conditions
        stored = resumed.stored
    else:
        new = _new_run(request, store)
        spec, target, replicates, salt = new.spec, new.target, new.replicates, new.salt
        source, paired_with, resume_run, conditions, stored = new.salt_source, new.paired_with, None, None, 0
    _refuse_settling_cases(request, spec)
    plan = _plan(request, spec, target, replicates, salt, conditions, resume_run)
    _check_target(import_check, target, spec)
    # Not installed, failing to load or to instrument: each is named, with the reason.
    capture_missing = probe_instrumentors(spec.capture.instrument) if spec.capture.instrument else {}
    return PreparedSweep(request, spec, plan, store, source, paired_with, resume_run, stored, capture_missing)


def replan(
    prepared: PreparedSweep, replicates: int, *, budget: Mapping[str, Any] | None = None
) -> PreparedSweep:
    """`prepared` planned again at `replicates` (with `budget`, the design --budget bought, kept
    in the request for the manifest): the same spec, store, target, salt and pairing, read,
    resolved and checked once. A resumed run keeps its own replicates, so it is refused as
    `--replicates` with `--resume` is."""
    request = dataclasses.replace(prepared.request, replicates=replicates, budget=budget)
    _check_flags(request)
    if prepared.resume_run is not None:
        _refuse_with_resume(request)
    plan = _plan(request, prepared.spec, prepared.plan.target, replicates, prepared.plan.salt, None, None)
    return dataclasses.replace(prepared, request=request, plan=plan)


def _check_flags(request: SweepRequest) -> None:
    """Refuse flags that contradict each other or are out of range (exit 2)."""
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
        raise ProveError(
            f"{' and '.join(chosen)} cannot be given together; choose one", exit_code=ProveExit.USAGE
        )
    if request.stop_when_settled and request.pair_with is None:
        raise ProveError(
            "--stop-when-settled needs --pair-with RUN: it stops a condition once its comparison "
            "with the paired run is settled",
            suggestions=["poisson-prove sweep --pair-with latest --stop-when-settled --yes"],
            exit_code=ProveExit.USAGE,
        )
    if request.batch_size < 1:
        raise ProveError("--batch-size must be at least 1", exit_code=ProveExit.USAGE)
    if request.max_rollouts is not None and request.max_rollouts < 1:
        raise ProveError("--max-rollouts must be at least 1", exit_code=ProveExit.USAGE)
    if request.episode_timeout is not None and not 0 < request.episode_timeout < math.inf:
        raise ProveError(
            "--episode-timeout must be a positive, finite number of seconds, "
            f"got {request.episode_timeout:g}",
            suggestions=["leave --episode-timeout out for no limit"],
            exit_code=ProveExit.USAGE,
        )
    if request.max_mde is not None and not 0 < request.max_mde <= 1:
        raise ProveError("--max-mde must be a fraction in (0, 1]", exit_code=ProveExit.USAGE)
    if request.replicates is not None and request.replicates < 1:
        raise ProveError("--replicates must be at least 1", exit_code=ProveExit.USAGE)
    concurrency = request.overrides.get("concurrency")
    if concurrency is not None and not (isinstance(concurrency, int) and 1 <= concurrency <= MAX_CONCURRENCY):
        raise ProveError(
            f"--concurrency must be a whole number from 1 to {MAX_CONCURRENCY:,} (episodes at once), "
            f"got {concurrency}",
            suggestions=["leave --concurrency out for the backend table's (1 on the local machine)"],
            exit_code=ProveExit.USAGE,
        )


def _refuse_settling_cases(request: SweepRequest, spec: SweepSpec) -> None:
    """`--stop-when-settled` stops each condition on its own McNemar test; a benchmark's verdict
    is over its cases, which no stopping rule here is designed for: refused (exit 2)."""
    if request.stop_when_settled and spec.case_axis is not None:
        raise ProveError(
            f"--stop-when-settled cannot stop a benchmark (axes.{spec.case_axis} has cases = true): "
            "its rule stops each condition on that condition's own test, and a benchmark's verdict "
            "is over its cases",
            suggestions=["poisson-prove sweep --pair-with latest --yes   (the whole plan, without stopping)"],
            exit_code=ProveExit.USAGE,
        )


def _refuse_with_resume(request: SweepRequest) -> None:
    """A resumed run keeps its own replicates and name: refuse either given (exit 2)."""
    for flag, value in (("--replicates", request.replicates), ("--name", request.name)):
        if value is not None:
            raise ProveError(
                f"{flag} cannot be given with --resume: the run keeps its own", exit_code=ProveExit.USAGE
            )


def _new_run(request: SweepRequest, store: RunStore) -> _NewRun:
    """The spec, target and replicates of a new run; its salt: given, a paired run's, or fresh."""
    spec = load_spec(request.spec_path or DEFAULT_SPEC)
    target = request.target or spec.target
    replicates = request.replicates or spec.replicates
    if request.target is not None and not is_target_ref(request.target):
        raise ProveError(
            f"--target must read module:function, got {request.target!r}", exit_code=ProveExit.USAGE
        )
    paired_with: RunInfo | None = None
    if request.salt is not None:
        try:
            salt, source = check_salt(request.salt), "given"
        except ValueError as err:
            raise ProveError(f"--salt: {err}", exit_code=ProveExit.USAGE) from None
    elif request.pair_with is not None:
        paired_with = store.resolve(request.pair_with)
        salt, source = str(paired_with.manifest["salt"]), "paired"
    else:
        salt, source = new_salt(), "fresh"
    if request.name is not None:
        if not request.name.strip():
            raise ProveError("--name must not be empty", exit_code=ProveExit.USAGE)
        check_new_name(request.name, store.runs(), store.root)
    return _NewRun(spec, target, replicates, salt, source, paired_with)


def _plan(
    request: SweepRequest,
    spec: SweepSpec,
    target: str,
    replicates: int,
    salt: str,
    conditions: list[Condition] | None,
    resume_run: RunInfo | None,
) -> Plan:
    max_mde = request.max_mde
    if max_mde is None:  # a resumed run keeps the design it was accepted with
        design = resume_run.manifest.get("design") or {} if resume_run is not None else {}
        max_mde = float(design.get("max_mde") or DEFAULT_MAX_MDE)
    check_backend(spec.chaos, request.backend)
    settings = backend_settings(spec, request.backend, request.overrides)
    return make_plan(
        spec,
        salt=salt,
        target=target,
        replicates=replicates,
        backend=request.backend,
        settings=settings,
        max_mde=max_mde,
        q=request.q,
        conditions=conditions,
    )


def _check_target(import_check: str, target: str, spec: SweepSpec) -> None:
    if import_check == "child":
        check_target_isolated(target, spec.spec_dir)
    elif import_check == "process":
        import_target(target, str(spec.spec_dir))


class UnderpoweredError(ProveError):
    """The refusal of a design whose worst condition could not catch a change of --max-mde 4
    times in 5, with both ways out as fields and as `next:` lines.

    For a benchmark (a spec with a case axis) the first way out is more cases: `needed_cases`
    is set and `needed_replicates` is None (more replicates do not move the figure checked)."""

    def __init__(
        self,
        message: str,
        *,
        needed_replicates: int | None,
        accept_mde: float | None,
        suggestions: Sequence[str] | None = None,
        needed_cases: int | None = None,
    ) -> None:
        if suggestions is None:  # the ways out as commands
            suggestions = []
            if needed_replicates is not None:
                suggestions.append(f"poisson-prove sweep --replicates {needed_replicates}")
            if needed_cases is not None:
                suggestions.append(f"use {needed_cases:,} cases or more")
            if accept_mde is not None:
                suggestions.append(f"poisson-prove sweep --max-mde {accept_mde:.3f}")
        super().__init__(message, suggestions=suggestions)
        self.needed_replicates = needed_replicates  # replicates that reach --max-mde
        self.needed_cases = needed_cases  # a benchmark's cases that reach --max-mde
        self.accept_mde = accept_mde  # the --max-mde this design passes with, if any

    @classmethod
    def of(cls, plan: Plan) -> UnderpoweredError:
        needed, accept = ways_out(plan)
        if plan.pooled is not None:
            message = underpowered_message(plan)
            return cls(message, needed_replicates=None, needed_cases=needed, accept_mde=accept)
        return cls(underpowered_message(plan), needed_replicates=needed, accept_mde=accept)
