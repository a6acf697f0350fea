"""`snapshot update`: accept what the last verify saw (like `jest -u`).

The last verify of a snapshot keeps its fresh capture under proveai/runs/<id>/fresh/; update
pins it (every agent, or only `--agent A`), bumping the version. The next verify of the same
code then passes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from proveai.errors import ProveAIError
from proveai.snapshot.init import build_snapshot
from proveai.snapshot.model import (
    Capture,
    Snapshot,
    load_snapshot,
    next_version,
    snapshot_path,
    unknown_agent_error,
    write_snapshot,
)
from proveai.snapshot.stored_traces import capture_of, definitions_of, load_trace_file
from proveai.store import check_name
from proveai.store.runs import last_verify

if TYPE_CHECKING:
    from proveai.traces.trace import Trace


@dataclass(frozen=True)
class UpdateResult:
    snapshot: Snapshot
    previous_version: int
    path: Path
    run_dir: Path
    agents: tuple[str, ...]


def fresh_traces(run_dir: Path) -> list[Trace]:
    return [load_trace_file(path) for path in sorted((run_dir / "fresh").glob("*.json"))]


def last_verified(runs_dir: Path, name: str) -> tuple[Path, dict]:
    run_dir = last_verify(runs_dir, name)
    if run_dir is None:
        raise ProveAIError(
            f"no verify of snapshot {name!r} with a fresh capture to accept",
            suggestions=[
                f"proveai snapshot verify {name}" if name != "latest" else "proveai snapshot verify"
            ],
        )
    return run_dir, json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))


def update_snapshot(
    *, snapshots_dir: Path, runs_dir: Path, name: str = "latest", agents: Sequence[str] = ()
) -> UpdateResult:
    check_name("snapshot", name)
    path = snapshot_path(snapshots_dir, name)
    current = load_snapshot(path)
    run_dir, info = last_verified(runs_dir, name)
    if info.get("snapshot_version") != current.version:
        raise ProveAIError(
            f"snapshot {name!r} is v{current.version} but the last verify ({run_dir.name}) saw "
            f"v{info.get('snapshot_version')}",
            suggestions=["verify again, then update: proveai snapshot verify && proveai snapshot update"],
        )
    traces = fresh_traces(run_dir)
    if not traces:
        raise ProveAIError(f"the last verify ({run_dir.name}) kept no fresh capture")
    if not agents:
        rebuilt = build_snapshot(name, traces, quick_only=current.quick_only, existing=current)
        updated = replace(rebuilt, invocation=current.invocation, trace_name=current.trace_name)
        chosen: tuple[str, ...] = tuple(updated.agents)
    else:
        fresh_names = set().union(*(t.agents for t in traces))
        for agent in agents:
            if agent not in current.agents and agent not in fresh_names:
                raise unknown_agent_error(agent, list(current.agents), f"snapshot {name!r}")
        if len(traces) != len(current.captures):
            raise ProveAIError(
                f"the last verify ran {len(traces)} replicate(s) but the snapshot pins "
                f"{len(current.captures)}: "
                "a partial update needs them to match",
                suggestions=[f"accept every agent: proveai snapshot update {name}"],
            )
        definitions = dict(current.agents)
        fresh_definitions = definitions_of(traces[0], agents)
        captures = []
        for capture, trace in zip(current.captures, traces, strict=True):
            io = dict(capture.io)
            fresh_io = capture_of(trace, agents).io
            for agent in agents:
                if agent in fresh_io:
                    io[agent] = fresh_io[agent]
                else:
                    io.pop(agent, None)  # accepted as gone
            captures.append(Capture(trace_id=trace.trace_id, io=io))
        for agent in agents:
            if agent in fresh_definitions:
                definitions[agent] = fresh_definitions[agent]
            else:
                definitions.pop(agent, None)
        candidate = replace(current, agents=definitions, captures=tuple(captures))
        updated = replace(candidate, version=next_version(current, candidate))
        chosen = tuple(agents)
    write_snapshot(path, updated)
    return UpdateResult(updated, current.version, path, run_dir, chosen)
