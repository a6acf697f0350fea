"""CI auto-targeting: verify only the snapshots a pull request can have changed.

A snapshot is targeted when a changed file is its own snapshot file, the script its
invocation re-runs, one of its agents' source files, a project file an agent's calls read
(a prompt file), or a project module an agent imports (a helper, transitively): the last two
are recorded at capture (proveai.capture.reads). The changed files come from
`git diff --name-only --no-renames <base>...HEAD` with <base> taken from $GITHUB_BASE_REF
(tried as given, then as origin/<base>). In doubt the snapshot is verified and the reason
says why: an agent without a recorded source file, a snapshot pinned before reads and imports
were recorded, and when no diff can be computed, every snapshot. Each targeted snapshot is
named with the files that made it a target; each skipped one with why it was skipped.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Protocol

from proveai.store import project_root


class _Agent(Protocol):
    @property
    def source_file(self) -> str | None: ...

    @property
    def reads(self) -> tuple[str, ...] | None: ...

    @property
    def imports(self) -> tuple[str, ...] | None: ...


class Targetable(Protocol):
    """What targeting reads of a snapshot (proveai.snapshot.model.Snapshot): its agents'
    recorded source files, files read and modules imported, and the command it re-runs."""

    @property
    def agents(self) -> Mapping[str, _Agent]: ...

    @property
    def invocation(self) -> Mapping[str, Any] | None: ...


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
    # each selected snapshot: what made it a target ("prompts/qa.md read by qa_check", "in doubt: ...")
    why: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


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
        # --no-renames: a renamed prompt file is listed under its old name too (the name agents read)
        result = _git(["diff", "--name-only", "--no-renames", f"{ref}...HEAD"], root)
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


def _script_of(invocation: Mapping[str, Any] | None) -> str | None:
    """The script a snapshot's invocation re-runs, relative to the project root, if it runs one."""
    script = (invocation or {}).get("script")
    if not isinstance(script, str) or not script or os.path.isabs(script):
        return None
    cwd = str((invocation or {}).get("cwd") or ".")
    return PurePosixPath(os.path.normpath(os.path.join(cwd, script))).as_posix()


def _listed(names: Sequence[str]) -> str:
    return ", ".join(names)


def why_targeted(
    name: str, snapshot: Targetable, changed: set[str], snapshots_dir_rel: str
) -> tuple[str, ...]:
    """What makes `snapshot` a target of a change to `changed` (empty: nothing, skip it)."""
    found: list[str] = []
    own_file = f"{snapshots_dir_rel}/{name}.json"
    if own_file in changed:
        found.append(f"{own_file}, the snapshot itself")
    script = _script_of(snapshot.invocation)
    if script in changed:
        found.append(f"{script}, the script verify re-runs")
    by_file: dict[tuple[str, str], list[str]] = {}
    for agent_name, agent in sorted(snapshot.agents.items()):
        relations = [(agent.source_file, ", source of")] if agent.source_file else []
        relations += [(path, " read by") for path in agent.reads or ()]
        relations += [(path, " imported by") for path in agent.imports or ()]
        for path, how in relations:
            if path in changed:
                by_file.setdefault((path, how), []).append(agent_name)
    for (path, how), agents in sorted(by_file.items()):
        found.append(f"{path}{how} {_listed(agents)}")
    if found:
        return tuple(found)
    # in doubt: what cannot be shown untouched is verified
    no_source = sorted(n for n, a in snapshot.agents.items() if not a.source_file)
    if no_source:
        return (f"in doubt: no source file recorded for {_listed(no_source)}",)
    unrecorded = sorted(n for n, a in snapshot.agents.items() if a.reads is None or a.imports is None)
    if unrecorded:
        return (
            f"in doubt: pinned before proveai recorded the files {_listed(unrecorded)} read and import "
            f"(re-pin: proveai snapshot init {name})",
        )
    return ()


def _shown(reasons: Sequence[str], limit: int = 3) -> str:
    more = len(reasons) - limit
    return "; ".join(reasons[:limit]) + (f"; +{more} more" if more > 0 else "")


def select_snapshots(
    snapshots: Mapping[str, Targetable],
    *,
    root: Path,
    snapshots_dir_rel: str,
    base_ref: str | None,
) -> Targeting:
    """Auto-target: a snapshot is selected when a changed file is one it depends on (its file,
    its script, an agent's source, a file an agent read, a module it imports) or when it is in
    doubt (see the module's docstring); `why` says which, per selected snapshot."""
    names = tuple(sorted(snapshots))
    files, how = changed_files(root, base_ref)
    if files is None:
        return Targeting(names, (), "fallback", f"verifying all {len(names)} snapshot(s): {how}")
    changed = set(files)
    why = {
        name: reasons
        for name in names
        if (reasons := why_targeted(name, snapshots[name], changed, snapshots_dir_rel))
    }
    selected = tuple(name for name in names if name in why)
    skipped = tuple(n for n in names if n not in why)
    reason = (
        f"auto-targeted {len(selected)} of {len(names)} snapshot(s) by {how} ({len(changed)} changed file(s))"
    )
    if selected:
        reason += "; targeted: " + ", ".join(f"{name} ({_shown(why[name])})" for name in selected)
    if skipped:
        reason += (
            f"; skipped: {_listed(skipped)} (no changed file is the snapshot, its script, or a source, "
            "read file or imported module of its agents)"
        )
    return Targeting(selected, skipped, "changed", reason, tuple(sorted(changed)), why)


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
    return targeting.selected, targeting.reason
