"""The sweep's lines as users read them: the plan, the resume line, the done/stopped line,
and the `poisson-prove.sweep/1` JSON document. Data in, text out; nothing printed here.

A benchmark's plan (a spec with a case axis) counts its cases in the `plan` sentence and the
`axes` line, and gives the design at within-case correlation 0 (`if independent`) and 1
(`smallest rise`, the figure checked), docs/sweep-spec.md "Benchmarks"."""

from __future__ import annotations

from typing import Any

from poisson_prove.chaos.config import chaos_summary, describe_fault
from poisson_prove.chaos.reach import reach_line
from poisson_prove.design.conditions import format_value
from poisson_prove.design.plan import Plan, own_cost_per_episode
from poisson_prove.design.pooled import PooledDesign
from poisson_prove.design.spec import Axis
from poisson_prove.episode.capture import installed_named, plan_reason
from poisson_prove.errors import ProveError
from poisson_prove.render.json import SWEEP_SCHEMA
from poisson_prove.sweep import PreparedSweep, SweepResult
from poisson_prove.sweep.budget import BudgetDesign
from poisson_prove.sweep.command import SweepEnding
from poisson_prove.sweep.stop_when_settled import planned_looks, settled_lines

JSON_SCHEMA = SWEEP_SCHEMA  # every document's schema id: render.json.SCHEMAS


def _count(n: int) -> str:
    return f"{n:,}"


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def _cost(plan: Plan) -> str:
    """`$0 (local)`, `$3.42 (modal)`: the estimate, then where it is paid; with the spec's own
    `cost_per_episode`, both parts: `$17.46 (local $0 + cost_per_episode $0.01 x 1,746)`."""
    if not plan.cost_usd:
        return f"$0 ({plan.backend})"
    own = own_cost_per_episode(plan.settings)
    if not own:
        return f"${plan.cost_usd:,.2f} ({plan.backend})"
    backend = max(0.0, plan.cost_usd - own * plan.rollouts)
    where = "$0" if backend < 0.005 else f"${backend:,.2f}"
    own_part = f"cost_per_episode ${own:g} x {_count(plan.rollouts)}"
    return f"${plan.cost_usd:,.2f} ({plan.backend} {where} + {own_part})"


def sentence(plan: Plan) -> str:
    """`1,746 rollouts of mock-agent: 9 cells x 194 replicates on local, $0 (local)`; a
    benchmark's `360 rollouts of mock-benchmark: 120 cases x 3 replicates on local, $0 (local)`
    (`240 cells (120 cases x 2 groups) x 3 replicates` with other axes)."""
    where = plan.backend if plan.concurrency == 1 else f"{plan.backend} (concurrency {plan.concurrency})"
    cells = _plural(len(plan.conditions), "cell")
    pooled = plan.pooled
    if pooled is not None:
        cases = _plural(pooled.cases, "case")
        cells = cases if pooled.groups == 1 else f"{cells} ({cases} x {_plural(pooled.groups, 'group')})"
    return (
        f"{_plural(plan.rollouts, 'rollout')} of {plan.target_id}: {cells} x "
        f"{_plural(plan.replicates, 'replicate')} on {where}, {_cost(plan)}"
    )


def smallest_rise(plan: Plan) -> str:
    d = plan.design
    how = "Fisher" + (", approximate" if d.approximate else "")
    return (
        f"one condition alone would be flagged for {d.mde:.3f} at its worst base rate, {d.base_rate:.3f} "
        f"({how}, q {d.q:g} over {d.tests} tests, 4 times in 5; you accept up to {plan.max_mde:.3f})"
    )


def _flagged(mde: float | None, base_rate: float) -> str:
    if mde is None:
        return f"could not be flagged for any change at its worst base rate, {base_rate:.3f}"
    return f"would be flagged for {mde:.3f} at its worst base rate, {base_rate:.3f}"


def independent_line(pooled: PooledDesign) -> str:
    """A benchmark's design at within-case correlation 0 (n = cases x replicates)."""
    d = pooled.independent
    how = ", approximate" if d.approximate else ""
    return (
        f"one pooled group alone {_flagged(d.mde, d.base_rate)}, when a case's repeats are independent "
        f"(within-case correlation 0, n = {_count(pooled.pairs)} = {_plural(pooled.cases, 'case')} x "
        f"{_plural(pooled.replicates, 'replicate')}{how}); more replicates move only this figure"
    )


def agreeing_line(plan: Plan, pooled: PooledDesign) -> str:
    """A benchmark's design at within-case correlation 1 (n = cases): the figure checked."""
    d = pooled.agreeing
    how = "Fisher" + (", approximate" if d.approximate else "")
    return (
        f"one pooled group alone {_flagged(d.mde, d.base_rate)}, when a case's repeats always agree "
        f"(within-case correlation 1, n = {_plural(pooled.cases, 'case')}; {how}, q {d.q:g} over "
        f"{_plural(d.tests, 'test')}, 4 times in 5; you accept up to {plan.max_mde:.3f})"
    )


def _axis_text(axis: Axis) -> str:
    """`task_id refund, lookup, schedule`; a case axis `question 120 cases from questions.jsonl`
    (inline: `ticket 3 cases: a, b, c`, at most 5 ids shown)."""
    if not axis.cases:
        return f"{axis.name} {', '.join(format_value(v) for v in axis.values)}"
    count = _plural(len(axis.values), "case")
    if axis.values_from is not None:
        return f"{axis.name} {count} from {axis.values_from}"
    shown = ", ".join(format_value(v) for v in axis.values[:5])
    return f"{axis.name} {count}: {shown}" + (", ..." if len(axis.values) > 5 else "")


def _seeds_line(prepared: PreparedSweep) -> str:
    short = prepared.plan.salt[:8]
    if prepared.salt_source == "paired" and prepared.paired_with is not None:
        return f'salt {short}, inherited from "{prepared.paired_with.name}": both runs share their seeds'
    if prepared.salt_source == "resumed" and prepared.resume_run is not None:
        return f'salt {short}, the run\'s own (resuming "{prepared.resume_run.name}")'
    if prepared.salt_source == "given":
        return f"salt {short}, given with --salt"
    return f"salt {short}, fresh (pair a later run with --pair-with latest)"


def capture_line(instrument: tuple[str, ...] | list[str], missing: dict[str, str] | Any) -> str:
    parts = []
    for name in instrument:
        parts.append(f"{name} ({plan_reason(missing[name])})" if name in missing else name)
    # a name that is not installed: once, what is (the names to write instead)
    installed = next((found for name in missing if (found := installed_named(missing[name]))), None)
    return ", ".join(parts) + (f"; installed: {installed}" if installed else "")


def _looks_text(looks: list[int]) -> str:
    """`30, 60, ..., 300` (every look when there are three or fewer: `1, 2, 3`)."""
    if len(looks) <= 3:
        return ", ".join(f"{n:,}" for n in looks)
    return f"{looks[0]:,}, {looks[1]:,}, ..., {looks[-1]:,}"


def plan_lines(prepared: PreparedSweep) -> list[str]:
    """Every line of the plan, each `label text`; the design line last."""
    plan = prepared.plan
    successes = f"; successes: {', '.join(sorted(plan.successes))}" if plan.successes else ""
    lines = [
        f"plan {sentence(plan)}",
        f"target {plan.target} (imports, takes cfg and seed)",
        f"outcomes failures: {', '.join(sorted(plan.failures))}{successes}",
    ]
    if plan.axes:
        lines.append(f"axes {' · '.join(_axis_text(axis) for axis in plan.axes)}")
    lines.append(f"seeds {_seeds_line(prepared)}")
    if prepared.request.stop_when_settled and prepared.paired_with is not None:
        lines.append(
            f"stop when settled: looks at {_looks_text(planned_looks(plan.replicates))} replicates of each "
            f'condition, whatever the batches; a condition stops once every failure outcome against '
            f'"{prepared.paired_with.name}" is settled (group-sequential McNemar, '
            f"alpha {prepared.plan.design.alpha:.3g})"
        )
    capture = prepared.spec.capture
    if capture.instrument:
        lines.append(
            f"capture {capture_line(capture.instrument, prepared.capture_missing)}; "
            f"content {'kept' if capture.content else 'left out'}, values up to "
            f"{_count(capture.max_observation_bytes or 0)} bytes"
        )
    faults = prepared.spec.chaos.get("faults") or []
    if faults:
        described = "; ".join(describe_fault(f) for f in faults)
        lines.append(
            f"chaos {described}: injected into httpx, httpx2, requests and aiohttp calls, "
            "the same calls faulted in runs paired with --pair-with"
        )
    if prepared.request.episode_timeout is not None:
        lines.append(
            f"timeout each episode in a child process, stopped after {prepared.request.episode_timeout:g} s"
        )
    lines.append(f"store {prepared.store.root}")
    if plan.pooled is not None:
        lines.append(f"if independent {independent_line(plan.pooled)}")
        if plan.passes:
            lines.append(f"smallest rise {agreeing_line(plan, plan.pooled)}")
        return lines
    if plan.passes:
        lines.append(f"smallest rise {smallest_rise(plan)}")
    return lines


def resume_line(prepared: PreparedSweep) -> str:
    run = prepared.resume_run
    assert run is not None
    return f'Resuming "{run.name}": {_count(prepared.stored)} stored, {_count(prepared.to_run)} to run'


def result_lines(result: SweepResult) -> list[str]:
    """The done / stopped line (and what follows it on stdout)."""
    seconds = f"{result.seconds:.1f} s"
    if result.status == "complete":
        line = f'done {_count(result.done)} rollouts in run "{result.name}" (complete) in {seconds}'
        if result.paired_with_name:
            line += f', paired with "{result.paired_with_name}"'
        if result.sequential is not None:
            line += f", {_settled_phrase(result)}"
    else:
        line = (
            f"stopped {_count(result.done)} of {_count(result.planned)} rollouts kept in run "
            f'"{result.name}" (partial) in {seconds}'
        )
    lines = [line]
    if result.sequential is not None:
        lines += settled_lines(result.sequential)
    if result.errored:
        lines.append(
            f"errors {_count(result.errored)} rollouts without an outcome (poisson-prove inspect shows them)"
        )
    if result.capture_missing:
        names = ", ".join(f"{n} ({why})" for n, why in result.capture_missing.items())
        lines.append(f"capture without spans from {names}")
    reach = reach_line(result.chaos)  # faults that reached no call are never called injected
    if reach is not None:
        lines.append(reach)
    return lines


def plan_dict(prepared: PreparedSweep) -> dict[str, Any]:
    plan = prepared.plan
    d = plan.design
    return {
        "schema": JSON_SCHEMA,
        "verdict": "plan",
        "sentence": sentence(plan),
        "plan": {
            "rollouts": plan.rollouts,
            "cells": len(plan.conditions),
            "replicates": plan.replicates,
            "backend": plan.backend,
            "concurrency": plan.concurrency,
            "cost_usd": plan.cost_usd,
        },
        "design_mde": {"mde": d.mde, "base_rate": d.base_rate, "direction": d.direction},
        "design": plan.design_dict(),
        "stop_when_settled": bool(prepared.request.stop_when_settled),
        "target": plan.target,
        "target_id": plan.target_id,
        "outcomes": {
            "outcomes": list(plan.outcomes),
            "failures": sorted(plan.failures),
            "successes": sorted(plan.successes),
        },
        "axes": [_axis_dict(a) for a in plan.axes],
        "capture": {
            **prepared.spec.capture.as_dict(),
            "missing": dict(prepared.capture_missing),
        },
        "chaos": chaos_summary(prepared.spec.chaos),
        "run": {
            "id": prepared.resume_run.run_id if prepared.resume_run else None,
            "name": prepared.resume_run.name if prepared.resume_run else prepared.request.name,
            "status": "partial" if prepared.resume_run else None,
            "paired_with": prepared.paired_with.run_id if prepared.paired_with else None,
            "paired_with_name": prepared.paired_with.name if prepared.paired_with else None,
            "salt": prepared.plan.salt,
        },
        "counts": {"done": prepared.stored, "planned": plan.rollouts, "errored": 0},
        "store": str(prepared.store.root),
        **({"benchmark": plan.pooled.to_dict()} if plan.pooled is not None else {}),
    }


def _axis_dict(axis: Axis) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": axis.name, "type": axis.type, "values": list(axis.values)}
    if axis.cases:
        entry.update(cases=True, values_from=axis.values_from)
    return entry


def result_dict(document: dict[str, Any], result: SweepResult) -> dict[str, Any]:
    """The plan document completed with how the sweep ended."""
    verdict = {"done": "done", "failed": "failed"}.get(result.verdict, "stopped")
    out = dict(document)
    out["verdict"] = verdict
    out["sentence"] = result_lines(result)[0]
    out["run"] = {
        "id": result.run_id,
        "name": result.name,
        "status": result.status,
        "paired_with": result.paired_with,
        "paired_with_name": result.paired_with_name,
        "salt": result.salt,
    }
    out["counts"] = {
        "done": result.done,
        "planned": result.planned,
        "errored": result.errored,
        "ran": result.ran,
    }
    if result.sequential is not None:
        out["counts"]["saved"] = result.saved
        out["sequential"] = dict(result.sequential)
    out["seconds"] = round(result.seconds, 3)
    out["interrupted"] = result.verdict == "interrupted"
    if result.chaos:
        out["chaos"] = dict(result.chaos)  # what the faults reached, as the manifest now says
    return out


def planned_dict(prepared: PreparedSweep, budget: BudgetDesign | None) -> dict[str, Any]:
    """The plan document, with the design `--budget` bought when there is one."""
    document = plan_dict(prepared)
    if budget is not None:
        document["budget"] = budget.to_dict()
    return document


def refusal_dict(err: ProveError, verdict: str, base: dict[str, Any] | None = None) -> dict[str, Any]:
    """The document of a sweep refused (or failed) with `err`: the plan's, when there is one."""
    document = dict(base or {"schema": JSON_SCHEMA})
    document["verdict"] = verdict
    document["sentence"] = err.message
    document["error"] = {"message": err.message, "next": list(err.suggestions)}
    return document


def ending_dict(document: dict[str, Any], result: SweepResult, ending: SweepEnding) -> dict[str, Any]:
    """The plan document completed with how the sweep ended, its error and its next commands."""
    final = result_dict(document, result)
    if ending.verdict is not None:
        final["verdict"] = ending.verdict
    if ending.error is not None:
        final["error"] = {"message": ending.error.message, "next": list(ending.error.suggestions)}
    if ending.next_commands:
        final["next"] = list(ending.next_commands)
    return final


def _settled_phrase(result: SweepResult) -> str:
    sequential = result.sequential or {}
    settled, n_conditions = int(sequential.get("settled") or 0), len(sequential.get("conditions") or {})
    return (
        f"{settled} of {n_conditions} condition{'s' if n_conditions != 1 else ''} stopped when settled, "
        f"{_count(result.saved)} of {_count(result.planned)} planned rollouts saved"
    )

