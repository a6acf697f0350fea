"""Resuming a run: which run, whether its manifest can be trusted, and what it already holds.

A resume imports the target its manifest names, and a manifest is only a file in the store:
the target is imported only when the user's own spec names the same one, or the user confirms
it with `--target` (a store shared, copied from CI or edited must not run code nobody asked
for).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from poisson_prove.design.spec import Condition, SweepSpec, load_spec, spec_from_manifest
from poisson_prove.errors import ProveError
from poisson_prove.store.checks import resume_problem, stored_keys
from poisson_prove.store.info import RunInfo
from poisson_prove.store.runs import RunStore


@dataclass(frozen=True)
class ResumeState:
    """What a resumed run brings to the plan: its own spec, target, replicates and salt."""

    run: RunInfo
    spec: SweepSpec
    target: str
    replicates: int
    salt: str
    conditions: list[Condition]  # the run's own, in its order
    stored: int  # episodes already stored
    paired_with: RunInfo | None


def latest_partial(store: RunStore) -> RunInfo:
    partial = [run for run in store.runs() if run.status == "partial"]
    if not partial:
        raise ProveError(
            f"no partial run to resume in the store {store.root}",
            suggestions=["poisson-prove runs", "poisson-prove sweep --yes"],
        )
    return partial[-1]


def resume_state(
    store: RunStore, ref: str, spec_arg: str | Path | None, target_arg: str | None
) -> ResumeState:
    """The run `ref` names ("" = the latest partial one), checked to be resumable."""
    run = store.resolve(ref) if ref else latest_partial(store)
    manifest = run.manifest
    problem = resume_problem(manifest)
    if problem is not None:
        raise ProveError(
            f'run "{run.name}" cannot be resumed: its manifest '
            f'{run.path / "manifest.json"} is damaged ({problem})',
            suggestions=["restore manifest.json from a copy, or start a new run: poisson-prove sweep"],
        )
    confirm_resume_target(manifest, run.name, spec_arg, target_arg)
    # The batch files, not the status, say what ran: a complete run missing a batch (one
    # moved out because it was damaged) resumes to its planned set again.
    planned = int((manifest.get("counts") or {}).get("planned") or 0)
    settled = int((manifest.get("counts") or {}).get("settled_skipped") or 0)
    if run.status == "complete" and settled and len(stored_keys(run)) + settled >= planned:
        raise ProveError(
            f'run "{run.name}" is complete: it stopped when settled, {settled:,} planned '
            "rollouts were not needed; there is nothing to resume",
            suggestions=["poisson-prove sweep --yes (a new run to the full plan)"],
        )
    if run.status == "complete" and len(stored_keys(run)) >= planned:
        raise ProveError(
            f'run "{run.name}" is complete; there is nothing to resume',
            suggestions=["poisson-prove sweep --yes"],
        )
    paired_with = None
    if manifest.get("paired_with"):
        try:
            paired_with = store.resolve(manifest["paired_with"])
        except ProveError:
            paired_with = None
    return ResumeState(
        run=run,
        spec=spec_from_manifest(manifest["spec"], manifest["spec_path"]),
        target=manifest["target"],
        replicates=int(manifest["replicates"]),
        salt=manifest["salt"],
        conditions=[Condition(c["key"], c["label"], c["cfg"]) for c in manifest["cells"]],
        stored=len(stored_keys(run)),
        paired_with=paired_with,
    )


def confirm_resume_target(
    manifest: Mapping[str, Any], run_name: str, spec_arg: str | Path | None, target_arg: str | None
) -> None:
    """A resume imports the target its manifest names, and a manifest is only a file in the
    store: import it only when the user's own spec names the same target, or the user
    confirms it with `--target` (a store shared, copied from CI or edited must not run code
    nobody asked for). Raises ProveError otherwise."""
    target = str(manifest["target"])
    resume = f'poisson-prove sweep --resume "{run_name}" --target {target}'
    if target_arg is not None:
        if target_arg != target:
            raise ProveError(
                f'--target {target_arg} does not match run "{run_name}", which ran {target}; '
                "a resumed run keeps its own target",
                suggestions=[resume],
                exit_code=2,
            )
        return  # confirmed by the user
    spec_path = Path(spec_arg) if spec_arg else Path(str(manifest["spec_path"]))
    unread = ""
    try:
        named: str | None = load_spec(spec_path).target
    except ProveError as err:
        named, unread = None, err.message  # e.g. a case axis's values_from file gone
    if named == target:
        return
    why = (
        f"its spec {spec_path} names {named}"
        if named is not None
        else f"its spec {spec_path} cannot be read to confirm it ({unread})"
    )
    raise ProveError(
        f'run "{run_name}" would import the target {target} named in its manifest, but {why}; '
        "a resume imports only a target you confirm",
        suggestions=[f"{resume}   (if you trust {target})"],
    )
