"""`snapshot init`: pin a captured trace (or N fresh replicates of it) as a snapshot."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from proveai.errors import ProveAIError, ProveAIExit
from proveai.snapshot.model import (
    AgentDefinition,
    Snapshot,
    load_snapshot,
    next_version,
    snapshot_path,
    write_snapshot,
)
from proveai.snapshot.replicates import Progress, capture_replicates
from proveai.snapshot.rerun import why_not_rerunnable
from proveai.snapshot.stored_traces import (
    capture_of,
    check_agents,
    dated_trace_files,
    definitions_of,
    find_trace_path,
    load_trace_file,
    merged_paths,
    varying_agents,
)
from proveai.store import check_name
from proveai.store.judge_cache import ensure_gitignore

if TYPE_CHECKING:
    from proveai.traces.trace import Trace


def build_snapshot(
    name: str,
    traces: Sequence[Trace],
    *,
    agents: Sequence[str] | None = None,
    quick_only: bool = False,
    existing: Snapshot | None = None,
) -> Snapshot:
    """A snapshot of `traces` (the first defines prompts and models; all are captures)."""
    first = traces[0]
    selected = list(agents) if agents else None
    definitions: dict[str, AgentDefinition] = {}
    for trace in traces:  # an agent seen only in a later replicate still gets its definition
        for agent, definition in definitions_of(trace, selected).items():
            known = definitions.setdefault(agent, definition)
            if known is not definition:  # what any replicate read or imported counts (CI targeting)
                definitions[agent] = replace(
                    known,
                    reads=merged_paths((known.reads, definition.reads)),
                    imports=merged_paths((known.imports, definition.imports)),
                )
    candidate = Snapshot(
        name=name,
        version=1,
        agents=definitions,
        captures=tuple(capture_of(t, selected) for t in traces),
        invocation=_portable_invocation(first.invocation),
        trace_name=first.name,
        quick_only=quick_only,
    )
    return Snapshot(**{**candidate.__dict__, "version": next_version(existing, candidate)})


def _portable_invocation(invocation: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The invocation as pinned, free of this machine's layout: the absolute project root is
    dropped (verify resolves the relative cwd against the current project root) and absolute
    arguments inside the project become relative to the recorded cwd, so a CI checkout in
    another folder re-runs the same command."""
    if not invocation:
        return None
    pinned = {k: v for k, v in invocation.items() if k != "project_root"}
    root = invocation.get("project_root")
    if root and isinstance(invocation.get("argv"), list):
        cwd = os.path.join(str(root), str(invocation.get("cwd") or "."))
        pinned["argv"] = [_relative_inside(arg, str(root), cwd) for arg in invocation["argv"]]
    return pinned


def _relative_inside(arg: Any, root: str, cwd: str) -> Any:
    if not isinstance(arg, str) or not os.path.isabs(arg):
        return arg
    try:
        inside = os.path.commonpath([os.path.realpath(arg), os.path.realpath(root)]) == os.path.realpath(root)
    except ValueError:
        return arg
    return os.path.relpath(arg, cwd) if inside else arg


@dataclass(frozen=True)
class InitResult:
    snapshot: Snapshot
    path: Path
    unchanged: bool  # the file already held exactly this pin
    varying: tuple[str, ...] = ()  # agents seen giving different outputs for the same input


def _same_pipeline_traces(traces_dir: Path, trace: Trace, limit: int = 20) -> list[Trace]:
    """The most recent stored traces of the same pipeline (same trace name), for comparison."""
    found: list[Trace] = []
    for tid, path, _ in reversed(dated_trace_files(traces_dir)):
        if len(found) >= limit:
            break
        if tid == trace.trace_id:
            continue
        try:
            other = load_trace_file(path)
        except ProveAIError:
            continue
        if other.name == trace.name:
            found.append(other)
    return found


def init_snapshot(
    *,
    snapshots_dir: Path,
    traces_dir: Path,
    name: str = "latest",
    trace_id: str | None = None,
    agents: Sequence[str] = (),
    replicates: int = 1,
    seed: int = 0,
    quick_only: bool = False,
    timeout_s: float = 600.0,
    root: Path | None = None,
    progress: Progress | None = None,
) -> InitResult:
    """Pin the most recent (or given) trace; with replicates > 1 re-run it N times and pin those."""
    check_name("snapshot", name)
    if replicates < 1:
        raise ProveAIError("--replicates must be at least 1", exit_code=ProveAIExit.USAGE)
    trace = load_trace_file(find_trace_path(traces_dir, trace_id))
    if agents:
        check_agents(trace, agents)
    if not trace.spans:
        raise ProveAIError(f"trace {trace.trace_id[:12]}… has no agent spans: nothing to pin")
    reason = why_not_rerunnable(trace.invocation)
    if reason and (not quick_only or replicates > 1):
        raise ProveAIError(
            f"trace {trace.trace_id[:12]}… cannot be re-run by verify: {reason}",
            suggestions=[
                "capture it from a script or module: python pipeline.py / python -m pkg.pipeline",
                "or pin it for fixture checks only: proveai snapshot init --quick-only",
            ],
        )
    traces: list[Trace] = [trace]
    if replicates > 1:
        traces = capture_replicates(
            trace.invocation or {},
            count=replicates,
            seed=seed,
            stream="pin",
            timeout_s=timeout_s,
            trace_name=trace.name,
            root=root,
            progress=progress,
        )
    path = snapshot_path(snapshots_dir, name)
    existing = None
    if path.exists():
        try:
            existing = load_snapshot(path)
        except ProveAIError:
            existing = None  # a malformed file is replaced by a fresh v1
    snapshot = build_snapshot(name, traces, agents=agents or None, quick_only=quick_only, existing=existing)
    unchanged = existing is not None and path.read_text(encoding="utf-8") == snapshot.to_json()
    if not unchanged:
        write_snapshot(path, snapshot)
    ensure_gitignore(snapshots_dir)
    compared = traces if len(traces) > 1 else [trace, *_same_pipeline_traces(traces_dir, trace)]
    return InitResult(snapshot=snapshot, path=path, unchanged=unchanged, varying=varying_agents(compared))
