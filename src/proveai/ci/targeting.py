"""CI auto-targeting: verify only the snapshots whose agents' source files a pull request touched.

The changed files come from `git diff --name-only <base>...HEAD` with <base> taken from
$GITHUB_BASE_REF (tried as given, then as origin/<base>). When no diff can be computed the
answer is "all snapshots", and the reason is said, never silently narrowed.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from proveai.store import project_root


class _Agent(Protocol):
    @property
    def source_file(self) -> str | None: ...


class Targetable(Protocol):
    """What targeting reads of a snapshot (proveai.snapshot.model.Snapshot): its agents'
    recorded source files."""

    @property
    def agents(self) -> Mapping[str, _Agent]: ...

    @property
    def source_files(self) -> set[str]: ...


def in_ci(env: Mapping[str, str] | None = None) -> bool:
    env = os.environ if env is None else env
    return any(
        env.get(name, "").strip().lower() not in ("", "0", "false") for name in ("CI", "GITHUB_ACTIONS")
    )


@dataclass(frozen=True)
class Targeting:
    """Which snapshots to verify and the sentence that says why."""

    selected: tuple[str, ...]
    skipped: tuple[str, ...]
    mode: str  # "all" | "changed" | "fallback"
    reason: str
    changed_files: tuple[str, ...] = ()


def _git(args: Sequence[str], cwd: Path) -> subprocess.CompletedProcess[str] | None:
    try:
        return subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired):
        return None


def changed_files(root: Path, base_ref: str | None) -> tuple[list[str] | None, str]:
    """(changed paths relative to root, how they were found) or (None, why not)."""
    if not base_ref:
        return None, "GITHUB_BASE_REF is not set"
    top = _git(["rev-parse", "--show-toplevel"], root)
    if top is None or top.returncode != 0:
        return None, "not a git repository"
    git_top = Path(top.stdout.strip()).resolve()
    attempts = [base_ref] if base_ref.startswith("origin/") else [base_ref, f"origin/{base_ref}"]
    for ref in attempts:
        result = _git(["diff", "--name-only", f"{ref}...HEAD"], root)
        if result is not None and result.returncode == 0:
            paths = []
            for line in result.stdout.splitlines():
                if not line.strip():
                    continue
                absolute = (git_top / line.strip()).resolve()
                try:
                    paths.append(absolute.relative_to(root.resolve()).as_posix())
                except ValueError:
                    continue  # outside the project: cannot belong to one of its agents
            return paths, f"git diff {ref}...HEAD"
    return None, f"git diff against {' or '.join(attempts)} failed (shallow clone? fetch the base branch)"


def select_snapshots(
    snapshots: Mapping[str, Targetable],
    *,
    root: Path,
    snapshots_dir_rel: str,
    base_ref: str | None,
) -> Targeting:
    """Auto-target: a snapshot is selected when a changed file is one of its agents' sources
    or the snapshot file itself, or when one of its agents has no recorded source file."""
    names = tuple(sorted(snapshots))
    files, how = changed_files(root, base_ref)
    if files is None:
        return Targeting(names, (), "fallback", f"verifying all {len(names)} snapshot(s): {how}")
    changed = set(files)
    selected = []
    for name in names:
        snapshot = snapshots[name]
        own_file = f"{snapshots_dir_rel}/{name}.json"
        unknown_source = any(not agent.source_file for agent in snapshot.agents.values())
        # An agent whose source file was not recorded cannot be shown untouched: verify it.
        if own_file in changed or snapshot.source_files & changed or unknown_source:
            selected.append(name)
    skipped = tuple(n for n in names if n not in selected)
    reason = (
        f"auto-targeted {len(selected)} of {len(names)} snapshot(s) by {how} ({len(changed)} changed file(s))"
    )
    return Targeting(tuple(selected), skipped, "changed", reason, tuple(sorted(changed)))


def target_snapshots(
    snapshots: Mapping[str, Targetable],
    *,
    snapshots_dir: Path,
    full: bool = False,
    changed: bool = False,
    base: str | None = None,
    env: Mapping[str, str] | None = None,
) -> tuple[tuple[str, ...], str | None]:
    """(names to verify, the sentence saying why) for `snapshot verify` without a name.

    Every snapshot unless in CI (or `changed`), where only those a pull request touched are:
    the base is `base`, else $GITHUB_BASE_REF, else main for an explicit `changed`. `full`
    verifies all and says so. The reason is None when nothing was narrowed or forced.
    """
    env = os.environ if env is None else env
    names = tuple(sorted(snapshots))
    if full:
        return names, f"verifying all {len(names)} snapshot(s) (--full)"
    if not (changed or in_ci(env)):
        return names, None
    base_ref = base or env.get("GITHUB_BASE_REF") or ("main" if changed else None)
    root = project_root()
    try:
        snapshots_rel = snapshots_dir.resolve().relative_to(root).as_posix()
    except ValueError:
        snapshots_rel = "proveai/snapshots"
    targeting = select_snapshots(snapshots, root=root, snapshots_dir_rel=snapshots_rel, base_ref=base_ref)
    reason = targeting.reason
    if targeting.skipped:
        reason += f"; skipped: {', '.join(targeting.skipped)}"
    return targeting.selected, reason
