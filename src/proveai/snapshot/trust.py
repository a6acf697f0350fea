"""Whether `snapshot verify` may run a snapshot's invocation as it stands.

A snapshot file is code: its invocation is a command verify runs, and its integrity hash is
no signature (anyone who edits the command can recompute it). Two guards hold before a re-run:

- what the invocation may ask for at all (proveai.snapshot.rerun.checked_command: this
  interpreter, a script or module inside the project, a folder inside it), whatever else;
- whether this checkout has seen it before: an invocation is *trusted* when the local record
  has it (what `snapshot init` wrote here, or what the user accepted with
  `verify --trust-invocation`) or a reviewed git revision committed the same one (the base
  branch, `--base` or $GITHUB_BASE_REF, its tip or where HEAD left it; without a base, HEAD).
  In CI the local record does not count (a cache step can restore it) and an invocation not
  trusted is refused unless accepted; elsewhere it is shown and runs.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from proveai.ci.targeting import in_ci
from proveai.errors import ProveAIError, ProveAIExit
from proveai.snapshot.model import Snapshot, content_hash, describe_command, snapshot_path
from proveai.store.snapshots import committed_snapshot, merge_base, trust_invocation, trusted_invocations


@dataclass(frozen=True)
class TrustPolicy:
    """How verify treats an invocation this checkout has not seen: `accept` (the
    --trust-invocation flag) runs it and records it as trusted; in CI (`ci`) one not accepted
    is refused. `base`: the reviewed git revision to compare with (None: HEAD)."""

    accept: bool = False
    ci: bool = False
    base: str | None = None

    @classmethod
    def from_env(
        cls, *, accept: bool = False, base: str | None = None, env: Mapping[str, str] | None = None
    ) -> TrustPolicy:
        """CI from $CI / $GITHUB_ACTIONS, the base `base`, else $GITHUB_BASE_REF, read once."""
        env = os.environ if env is None else env
        return cls(accept=accept, ci=in_ci(env), base=base or env.get("GITHUB_BASE_REF") or None)


@dataclass(frozen=True)
class InvocationTrust:
    """What a snapshot asks to run and whether this checkout trusts it: `reference` is what it
    was compared with (a revision, or the local record), `before` the command that reference
    holds when it holds another one."""

    snapshot: str
    command: str
    trusted: bool
    reference: str
    before: str | None = None
    absent: bool = False  # the reference has no such snapshot

    @property
    def change(self) -> str:
        """The change in words: `changed since main (where it ran …)`, `new since HEAD`, ..."""
        if self.absent:
            return f"not committed at {self.reference}"
        if self.before is not None:
            return f"changed since {self.reference}, where it ran {self.before}"
        return f"not trusted here ({self.reference})"


class InvocationNotTrusted(ProveAIError):
    """In CI, a snapshot's invocation no reviewed revision holds, not accepted with
    --trust-invocation: nothing ran."""

    def __init__(self, trust: InvocationTrust) -> None:
        super().__init__(
            f"snapshot {trust.snapshot!r} asks to run {trust.command}, {trust.change}: in CI a "
            "changed invocation runs only when trusted",
            suggestions=[
                "a snapshot file is code: review what the invocation runs, then "
                "proveai snapshot verify --trust-invocation",
            ],
            exit_code=ProveAIExit.USAGE,
        )
        self.trust = trust


def _hash_of(invocation: Any) -> str | None:
    return content_hash(dict(invocation)) if isinstance(invocation, Mapping) else None


def invocation_trust(snapshot: Snapshot, *, snapshots_dir: Path, policy: TrustPolicy) -> InvocationTrust:
    """Whether this checkout trusts `snapshot`'s invocation (see the module's docstring)."""
    invocation = snapshot.invocation or {}
    command = describe_command(invocation)
    wanted = _hash_of(invocation)
    if not policy.ci and wanted in trusted_invocations(snapshots_dir):
        return InvocationTrust(snapshot.name, command, True, "the local trust record")
    path = snapshot_path(snapshots_dir, snapshot.name)
    revisions: list[str] = []
    if policy.base:
        tips = [policy.base] if policy.base.startswith("origin/") else [policy.base, f"origin/{policy.base}"]
        revisions += tips
        revisions += [start for tip in tips if (start := merge_base(path.parent, tip)) is not None]
    first: InvocationTrust | None = None
    for revision in revisions:
        found = _compared(snapshot.name, command, wanted, path, revision)
        if found is not None and found.trusted:
            return found
        first = first or found
    if first is None:  # no base, or one this clone cannot read: the committed file
        first = _compared(snapshot.name, command, wanted, path, "HEAD")
    return first or InvocationTrust(snapshot.name, command, False, "no git history to compare with")


def _compared(
    name: str, command: str, wanted: str | None, path: Path, revision: str
) -> InvocationTrust | None:
    """The invocation compared with the snapshot file `revision` committed; None when git
    cannot read that revision here."""
    committed = committed_snapshot(path, revision)
    if committed is None:
        return None
    document = committed.document if isinstance(committed.document, Mapping) else {}
    before = document.get("invocation")
    if committed.exists and _hash_of(before) == wanted:
        return InvocationTrust(name, command, True, revision)
    shown = describe_command(before) if isinstance(before, Mapping) else None
    return InvocationTrust(name, command, False, revision, shown, absent=not committed.exists)


def check_invocation_trust(
    snapshot: Snapshot, *, snapshots_dir: Path, policy: TrustPolicy
) -> InvocationTrust:
    """The trust of `snapshot`'s invocation, refused (InvocationNotTrusted) when not trusted
    in CI unless the policy accepts it; an accepted one is recorded as trusted here."""
    trust = invocation_trust(snapshot, snapshots_dir=snapshots_dir, policy=policy)
    if trust.trusted:
        return trust
    if policy.ci and not policy.accept:
        raise InvocationNotTrusted(trust)
    if policy.accept:
        wanted = _hash_of(snapshot.invocation or {})
        if wanted is not None:
            trust_invocation(snapshots_dir, wanted, snapshot=snapshot.name, command=trust.command)
    return trust
