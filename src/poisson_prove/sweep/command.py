"""The workflow of `poisson-prove sweep` that is more than parsing and drawing: the plan sized by
`--budget`, the refusals before anything runs (each with the user's own command line as the way
out), and how a finished sweep ends (its error, its verdict, its `next:` commands).

The command line parses flags into a SweepRequest, calls `plan_command`, asks, calls
`execute_sweep`, then `sweep_ending`; it only draws what these return.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from poisson_prove.backends.pricing import per_episode_usd
from poisson_prove.design.plan import cost_error
from poisson_prove.errors import ProveError, ProveExit
from poisson_prove.sweep.budget import (
    BudgetDesign,
    budget_design,
    case_budget_design,
    case_refusal,
    per_episode_cost,
    refusal,
)
from poisson_prove.sweep.prepare import PreparedSweep, SweepRequest, UnderpoweredError, prepare_sweep, replan
from poisson_prove.sweep.result import SweepResult


@dataclass(frozen=True)
class PlannedCommand:
    """A prepared sweep and the design `--budget` bought for it (None without a budget)."""

    prepared: PreparedSweep
    budget: BudgetDesign | None


def plan_command(request: SweepRequest, *, dry_run: bool, budget: float | None) -> PlannedCommand:
    """Prepare the sweep once; with a budget (`--budget`, else the spec's), re-plan it at the
    replicates the budget buys, or refuse with the cheapest design that can reach --max-mde (a
    benchmark: the replicates per case it buys, or refused when it cannot run each case once)."""
    # Under --episode-timeout the episodes import the target in their own child process, so the
    # check runs in one too: the target's import-time output then happens once.
    import_check = "child" if dry_run or request.episode_timeout is not None else "process"
    prepared = prepare_sweep(request, import_check=import_check)
    if prepared.resume_run is not None:
        # a resumed run keeps the replicates its budget bought when it started
        if budget is not None:
            raise ProveError(
                "--budget cannot be given with --resume: the run keeps its own replicates",
                exit_code=ProveExit.USAGE,
            )
        return PlannedCommand(prepared, None)
    if budget is None:
        budget = prepared.spec.budget  # the spec's budget; --budget wins
    if budget is None:
        return PlannedCommand(prepared, None)
    plan = prepared.plan
    price = per_episode_cost(per_episode_usd(plan.backend, plan.settings), plan.settings)
    if plan.pooled is not None:
        pooled = plan.pooled
        design = case_budget_design(
            budget, price, pooled.cases, pooled.groups, len(plan.failures), q=plan.q, max_mde=plan.max_mde
        )
        if not design.fits:
            raise case_refusal(design, pooled.case_axis)
        return PlannedCommand(replan(prepared, design.replicates, budget=design.to_dict()), design)
    design = budget_design(
        budget, price, len(plan.conditions), len(plan.failures), q=plan.q, max_mde=plan.max_mde
    )
    if not design.fits:
        raise refusal(design)
    return PlannedCommand(replan(prepared, design.replicates, budget=design.to_dict()), design)


def plan_refusal(prepared: PreparedSweep, argv: Sequence[str]) -> ProveError | None:
    """Why the plan may not run (an underpowered design, a cost above --max-cost), or None.

    The ways out of an underpowered design are the user's own command line (`argv`, without
    the program name) with `--replicates` or `--max-mde` set."""
    if not prepared.plan.passes and prepared.plan.pooled is not None:
        return _underpowered_benchmark(prepared, argv)
    if not prepared.plan.passes:
        err = UnderpoweredError.of(prepared.plan)
        suggestions = [command_line(with_option(argv, "--replicates", str(err.needed_replicates)))]
        if err.accept_mde is not None:
            suggestions.append(command_line(with_option(argv, "--max-mde", f"{err.accept_mde:.3f}")))
        return UnderpoweredError(
            err.message,
            needed_replicates=err.needed_replicates,
            accept_mde=err.accept_mde,
            suggestions=suggestions,
        )
    return cost_error(prepared.plan)


def _underpowered_benchmark(prepared: PreparedSweep, argv: Sequence[str]) -> UnderpoweredError:
    """A benchmark's ways out: the cases that would pass (its replicates do not move the figure
    checked, only the correlation-0 one), or the --max-mde it passes with."""
    plan = prepared.plan
    pooled = plan.pooled
    assert pooled is not None
    err = UnderpoweredError.of(plan)
    independent = pooled.independent.mde
    now = "no change" if independent is None else f"{independent:.3f}"
    suggestions = [
        f"use {err.needed_cases:,} cases or more in axes.{pooled.case_axis} (it has {pooled.cases:,}); "
        f"more replicates move only the correlation-0 figure ({now} now), never this one"
    ]
    if err.accept_mde is not None:
        suggestions.append(command_line(with_option(argv, "--max-mde", f"{err.accept_mde:.3f}")))
    return UnderpoweredError(
        err.message,
        needed_replicates=None,
        needed_cases=err.needed_cases,
        accept_mde=err.accept_mde,
        suggestions=suggestions,
    )


@dataclass(frozen=True)
class SweepEnding:
    """How a finished sweep is reported beyond its done line."""

    error: ProveError | None  # raised after the report: the sweep did not end well
    verdict: str | None  # the JSON document's verdict when it differs from the result's
    next_line: str | None  # a `next:` line after the done line (only without an error)
    next_commands: tuple[str, ...]  # the JSON document's "next"


def sweep_ending(
    result: SweepResult,
    prefix: str,
    *,
    log_system_exits: Callable[[], str] | None = None,
    resume: str = "sweep --resume",
) -> SweepEnding:
    """`prefix` is `poisson-prove ` with the user's --store, so a `next:` line runs as printed;
    `resume` the command that resumes this run (`resume_command`: with the spec and --target
    the user gave, which a resume checks its target against).

    `log_system_exits` (--json only: the text lines already said it) writes the rollouts that
    called sys.exit to the errors log and returns where that log is, as shown to the user."""
    err: ProveError | None = None
    verdict: str | None = None
    if result.verdict == "interrupted":
        err = ProveError(
            f"interrupted: {result.done:,} of {result.planned:,} rollouts kept in run "
            f'"{result.name}" (partial)',
            suggestions=[prefix + resume],
            exit_code=result.exit_code,
        )
    elif result.verdict == "process_exit" and result.process_ended and result.done >= result.planned:
        # ended after its last episode was stored (compacting the batches, marking the run
        # complete): nothing is lost, and a resume runs nothing and completes it
        verdict = "failed"
        err = ProveError(
            f"{result.process_ended}: all {result.done:,} rollouts are kept in run \"{result.name}\", "
            "which is not marked complete yet",
            suggestions=[prefix + resume],
            exit_code=ProveExit.STOPPED,
        )
    elif result.verdict == "process_exit" and result.process_ended is not None:
        verdict = "failed"
        err = ProveError(
            f"{result.process_ended}, so the sweep stopped there: {result.done:,} of {result.planned:,} "
            f'rollouts kept in run "{result.name}" (partial), the episodes then running lost '
            "(--episode-timeout runs each episode in a process of its own, so one that ends its "
            "process does not stop the sweep)",
            suggestions=[f"{prefix}{resume} --episode-timeout 600"],
            exit_code=ProveExit.STOPPED,
        )
    elif result.verdict == "process_exit":
        verdict = "failed"
        err = ProveError(
            f"{result.process_exit}, which ends the sweep's own process, so the sweep stopped there: "
            f'{result.done:,} of {result.planned:,} rollouts kept in run "{result.name}" (partial), '
            "that episode stored as process_exit (--episode-timeout runs each episode in a process "
            "of its own, so one that ends it does not stop the sweep)",
            suggestions=[f"{prefix}{resume} --episode-timeout 600"],
            exit_code=ProveExit.STOPPED,
        )
    elif log_system_exits is not None and result.system_exits:
        where = log_system_exits()
        verdict = "failed"
        err = ProveError(
            f"the target called sys.exit in {result.system_exits:,} rollouts, stored as errors of kind "
            f"system_exit (details in {where})",
            suggestions=[f"{prefix}inspect {shlex.quote(result.name)}"],
            exit_code=ProveExit.STOPPED,
        )
    elif result.verdict == "failed":
        err = ProveError(
            f"every rollout errored ({result.first_error})",
            suggestions=[f"{prefix}inspect {shlex.quote(result.name)}"],
            exit_code=ProveExit.STOPPED,
        )
    next_line = next_commands = None
    if result.verdict == "stopped":
        next_commands = prefix + resume
        next_line = next_commands if err is None else None
    elif result.paired_with_name and err is None:
        next_line = next_commands = prefix + "diff"
    return SweepEnding(err, verdict, next_line, (next_commands,) if next_commands else ())


def resume_command(spec: str | None, target: str | None, run_name: str) -> str:
    """The command that resumes a run swept with the spec path and --target given (a resume
    confirms its manifest's target against them, so a bare `sweep --resume` would read
    ./prove.toml and be refused): then the run is named too, since the spec comes first. With
    neither, `sweep --resume` (the default spec names the run's target)."""
    if not spec and not target:
        return "sweep --resume"
    words = ["sweep", *([spec] if spec else []), "--resume", run_name]
    return shlex.join([*words, *(["--target", target] if target else [])])


def command_prefix(store: str | None) -> str:
    """`poisson-prove ` plus the --store the user named, so a `next:` line runs as printed."""
    return f"poisson-prove --store {shlex.quote(str(store))} " if store else "poisson-prove "


def command_line(argv: Sequence[str]) -> str:
    return shlex.join(["poisson-prove", *argv])


def with_option(argv: Sequence[str], flag: str, value: str) -> list[str]:
    """The user's own command line with `flag value` set (replaced in place, else appended)."""
    out, i, replaced = [], 0, False
    while i < len(argv):
        token = argv[i]
        if token == flag and i + 1 < len(argv):
            out += [flag, value]
            i += 2
            replaced = True
            continue
        if token.startswith(flag + "="):
            out.append(f"{flag}={value}")
            replaced = True
        else:
            out.append(token)
        i += 1
    return out if replaced else [*out, flag, value]
