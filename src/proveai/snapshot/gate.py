"""`snapshot verify` over a project's snapshots: which to verify (the one named, every one, or
what CI auto-targets), the options checked for meaning, each snapshot verified in turn (one
that cannot be verified does not hide the others' verdicts) and one exit code for the lot."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from proveai.ci.targeting import target_snapshots
from proveai.diff.judge import judge_max_tokens as default_max_tokens
from proveai.errors import ProveAIError, ProveAIExit
from proveai.snapshot.model import Snapshot, list_snapshots, load_snapshot, snapshot_path
from proveai.snapshot.overrides import parse_overrides
from proveai.snapshot.replicates import Progress
from proveai.snapshot.rerun import checked_command
from proveai.snapshot.trust import InvocationTrust, TrustPolicy, check_invocation_trust
from proveai.snapshot.verify import VerifyOptions, VerifyResult, verify_snapshot
from proveai.store import check_name, project_root

# the batch's exit code is the first of these any snapshot gave: a regression outranks a usage
# error (another snapshot could not be verified), which outranks an unjudged change
EXIT_PRECEDENCE = (ProveAIExit.REGRESSION, ProveAIExit.USAGE, ProveAIExit.INCONCLUSIVE)


class VerifyOptionError(ProveAIError):
    """A verify option that parses but means nothing (a count below 1, a level outside (0, 1),
    two options that cannot go together); `option` names the first one at fault."""

    def __init__(self, message: str, *, option: str, suggestions: Sequence[str] = ()) -> None:
        super().__init__(message, suggestions=suggestions, exit_code=ProveAIExit.USAGE)
        self.option = option


class SnapshotNotVerified(ProveAIError):
    """One snapshot of several that could not be verified: `snapshot` names it, `cause` is
    the error it gave (its exit code counts in the batch's)."""

    def __init__(self, snapshot: str, cause: ProveAIError) -> None:
        named = cause.message.startswith(f"snapshot {snapshot!r} ")  # a refused invocation says whose
        message = cause.message if named else f"snapshot {snapshot!r}: {cause.message}"
        super().__init__(message, suggestions=cause.suggestions, exit_code=cause.exit_code)
        self.snapshot = snapshot
        self.cause = cause


def _truthy(env: Mapping[str, str], name: str) -> bool:
    return env.get(name, "").strip().lower() not in ("", "0", "false", "no")


def verify_options(
    *,
    quick: bool = False,
    no_judge: bool = False,
    strict_judge: bool = False,
    timeout_s: float = 600.0,
    overrides: Sequence[str] = (),
    replicates: int | None = None,
    seed: int | None = None,
    alpha: float = 0.05,
    judge_model: str | None = None,
    embedder: str | None = None,
    judge_max_tokens: int | None = None,
    env: Mapping[str, str] | None = None,
) -> VerifyOptions:
    """The options of a verify, checked; PROVEAI_NO_JUDGE / PROVEAI_STRICT_JUDGE count as the
    flags, and PROVEAI_JUDGE_MAX_TOKENS is the default of `judge_max_tokens` (else 200), all
    read from `env` (the process environment by default) here, once. `replicates` None: as
    many as each snapshot pins."""
    env = os.environ if env is None else env
    options = VerifyOptions(
        quick=quick,
        no_judge=no_judge or _truthy(env, "PROVEAI_NO_JUDGE"),
        strict_judge=strict_judge or _truthy(env, "PROVEAI_STRICT_JUDGE"),
        timeout_s=timeout_s,
        overrides=parse_overrides(overrides),
        replicates=replicates or 0,
        seed=seed,
        alpha=alpha,
        judge_model=judge_model,
        judge_max_tokens=default_max_tokens(env) if judge_max_tokens is None else judge_max_tokens,
        embedder=embedder,
    )
    bad = [
        option
        for option, wrong in (
            ("--replicates", replicates is not None and replicates < 1),
            ("--timeout", timeout_s <= 0),
            ("--alpha", not 0 < alpha < 1),
        )
        if wrong
    ]
    if bad:
        raise VerifyOptionError(
            "--replicates must be >= 1, --timeout > 0 and --alpha in (0, 1)", option=bad[0]
        )
    if options.judge_max_tokens < 1:
        raise VerifyOptionError("--judge-max-tokens must be >= 1", option="--judge-max-tokens")
    if overrides and ((replicates or 1) > 1 or quick):
        raise VerifyOptionError(
            "--override replays pinned requests: it cannot be combined with --replicates or --quick",
            option="--override",
        )
    return options


@dataclass(frozen=True)
class VerifyPlan:
    """The snapshots one `snapshot verify` will verify, and the sentence saying why these."""

    snapshots: Mapping[str, Snapshot]
    names: tuple[str, ...]
    reason: str | None  # None: the one named, or every snapshot outside CI


def plan_verify(
    snapshots_dir: Path,
    name: str | None = None,
    *,
    full: bool = False,
    changed: bool = False,
    base: str | None = None,
) -> VerifyPlan:
    """The named snapshot, else every snapshot (auto-targeted in CI or with `changed`).
    A malformed snapshot file stops the plan: verifying around it would pass it silently."""
    if name:
        snapshot = load_snapshot(snapshot_path(snapshots_dir, check_name("snapshot", name)))
        return VerifyPlan({name: snapshot}, (name,), None)
    entries = list_snapshots(snapshots_dir)
    broken = [e for e in entries if e.snapshot is None]
    if broken:
        raise ProveAIError(
            f"{broken[0].problem}", suggestions=["proveai snapshot list"], exit_code=ProveAIExit.USAGE
        )
    if not entries:
        raise ProveAIError(
            f"no snapshots in {snapshots_dir}",
            suggestions=["proveai snapshot init"],
            exit_code=ProveAIExit.USAGE,
        )
    snapshots = {e.name: e.snapshot for e in entries if e.snapshot is not None}
    names, reason = target_snapshots(
        snapshots, snapshots_dir=snapshots_dir, full=full, changed=changed, base=base
    )
    return VerifyPlan(snapshots, names, reason)


@dataclass(frozen=True)
class VerifyBatch:
    """Every snapshot of a plan verified: the results, the ones that could not be verified."""

    results: tuple[VerifyResult, ...]
    failures: tuple[SnapshotNotVerified, ...]
    reason: str | None

    @property
    def exit_code(self) -> int:
        codes = {r.exit_code for r in self.results} | {f.exit_code for f in self.failures}
        return next((code for code in EXIT_PRECEDENCE if code in codes), ProveAIExit.OK)


def verify_many(
    plan: VerifyPlan,
    options: VerifyOptions,
    *,
    snapshots_dir: Path,
    runs_dir: Path,
    traces_dir: Path,
    progress_for: Callable[[str], Progress] | None = None,
    on_done: Callable[[VerifyResult | SnapshotNotVerified], None] | None = None,
    trust: TrustPolicy | None = None,
    on_untrusted: Callable[[InvocationTrust], None] | None = None,
) -> VerifyBatch:
    """Verify each snapshot of `plan` in order; `on_done` sees each result (or failure) as it
    comes, `progress_for(name)` gives each its re-run progress. A lone snapshot that cannot be
    verified raises its error; among several it becomes a failure and the rest still run.

    Before a snapshot's invocation re-runs, it is checked (proveai.snapshot.trust): one that
    asks for more than a project script under this interpreter is refused, and one this
    checkout has not seen is refused in CI unless `trust` accepts it; one that runs anyway is
    shown to `on_untrusted` first. `trust` None: TrustPolicy.from_env()."""
    policy = TrustPolicy.from_env() if trust is None else trust
    results: list[VerifyResult] = []
    failures: list[SnapshotNotVerified] = []
    for name in plan.names:
        progress = progress_for(name) if progress_for is not None else None
        outcome: VerifyResult | SnapshotNotVerified
        try:
            if _reruns(plan.snapshots[name], options):
                _check_invocation(plan.snapshots[name], snapshots_dir, policy, on_untrusted)
            outcome = verify_snapshot(
                plan.snapshots[name],
                snapshots_dir=snapshots_dir,
                runs_dir=runs_dir,
                traces_dir=traces_dir,
                options=replace(options, progress=progress),
            )
            results.append(outcome)
        except ProveAIError as err:
            if len(plan.names) == 1:
                raise
            outcome = SnapshotNotVerified(name, err)
            failures.append(outcome)
        if on_done is not None:
            on_done(outcome)
    return VerifyBatch(tuple(results), tuple(failures), plan.reason)


def _reruns(snapshot: Snapshot, options: VerifyOptions) -> bool:
    """True when verify_snapshot will run the snapshot's invocation (its re-run and replicate
    modes; --override, --quick and a quick-only snapshot run none)."""
    return not options.overrides and not (options.quick or snapshot.quick_only or not snapshot.invocation)


def _check_invocation(
    snapshot: Snapshot,
    snapshots_dir: Path,
    policy: TrustPolicy,
    on_untrusted: Callable[[InvocationTrust], None] | None,
) -> None:
    checked_command(snapshot.invocation or {}, project_root(), snapshot=snapshot.name)
    trust = check_invocation_trust(snapshot, snapshots_dir=snapshots_dir, policy=policy)
    if not trust.trusted and on_untrusted is not None:
        on_untrusted(trust)
