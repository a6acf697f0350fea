"""`snapshot init`: pin a captured trace (or N fresh replicates of it) as a snapshot."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from proveai.errors import EXIT_USAGE, ProveAIError
from proveai.snapshot.model import (
    AgentDefinition,
    Capture,
    ExpectedIO,
    Snapshot,
    check_name,
    next_version,
    snapshot_path,
    unknown_agent_error,
    write_snapshot,
)

if TYPE_CHECKING:
    from proveai.traces.trace import Span, Trace

TOOL_OPERATION = "execute_tool"


def _entry_time(entry: Mapping[str, Any], path: Path) -> float:
    """Seconds since the epoch a trace started, from its index entry (else the file's mtime)."""
    started_ns = entry.get("started_ns")
    if isinstance(started_ns, int) and not isinstance(started_ns, bool):
        return started_ns / 1e9
    stamp = entry.get("timestamp")
    if isinstance(stamp, str):
        try:
            return dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
        except ValueError:
            pass
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def trace_files(traces_dir: Path) -> list[tuple[str, Path, float]]:
    """(trace_id, path, time) of every stored trace, oldest first.

    Read through the capture index, which folds its journal in: manifest.json alone can lag
    the newest captures. A trace file the index does not list still counts (by its mtime).
    """
    from proveai.store import trace_files as stored_files
    from proveai.traces.index import read_index

    if not traces_dir.is_dir():
        return []
    entries = read_index(traces_dir).entries
    found = []
    for path in stored_files(traces_dir):
        trace_id = path.name[: -len(".json")]
        found.append((trace_id, path, _entry_time(entries.get(trace_id) or {}, path)))
    return sorted(found, key=lambda item: (item[2], item[0]))


def find_trace_path(traces_dir: Path, trace_id: str | None) -> Path:
    files = trace_files(traces_dir)
    if not files:
        raise ProveAIError(
            f"no traces in {traces_dir}",
            suggestions=[
                "capture one first: run your pipeline inside `with trace(..., exporters=[FileExporter()])`"
            ],
        )
    if trace_id is None:
        return files[-1][1]
    wanted = trace_id.rstrip("…").rstrip(".").lower()
    matches = [path for tid, path, _ in files if tid.lower().startswith(wanted)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise ProveAIError(
            f"no trace {trace_id!r} in {traces_dir}",
            suggestions=["proveai status  (lists stored traces)"],
        )
    raise ProveAIError(
        f"trace id prefix {trace_id!r} matches {len(matches)} traces in {traces_dir}",
        suggestions=["give more characters of the trace id"],
    )


def load_trace_file(path: Path) -> Trace:
    from proveai.traces.reading import load_trace

    try:
        return load_trace(str(path))
    except ProveAIError:
        raise
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ProveAIError(f"{path}: not a readable trace ({type(exc).__name__}: {exc})") from exc


def agent_spans(trace: Trace) -> dict[str, list[Span]]:
    """Each agent's spans in start order (several when the agent ran in a loop)."""
    calls: dict[str, list[Span]] = {}
    for span in trace.spans:
        calls.setdefault(span.name, []).append(span)
    return calls


def tool_calls_of(trace: Trace, span: Span) -> tuple[Any, ...]:
    """The tools this call used: monitored TOOL children, and tool calls in the model reply."""
    calls: list[Any] = []
    for child in trace.children(span):
        if child.kind == "TOOL" or child.operation == TOOL_OPERATION:
            calls.append({"name": child.name, "inputs": child.inputs})
    for message in span.output_messages or ():
        for call in message.get("tool_calls") or ():
            calls.append(call)
    return tuple(calls)


def expected_from_span(trace: Trace, span: Span) -> ExpectedIO:
    return ExpectedIO(
        inputs=span.inputs,
        output=span.output,
        input_messages=span.input_messages,
        output_messages=span.output_messages,
        request=span.request,
        tool_calls=tool_calls_of(trace, span),
        status=span.status,
        error=span.error,
    )


def definition_from_spans(name: str, spans: Sequence[Span]) -> AgentDefinition:
    first = spans[0]
    model = first.model or (first.request or {}).get("model")
    # the seed varies by design (PROVEAI_SEED): it is not part of the agent's definition
    settings = {k: v for k, v in (first.request or {}).items() if k not in ("model", "seed")}
    return AgentDefinition(
        name=name,
        kind=first.kind or "UNKNOWN",
        model=model,
        prompt=first.prompt,
        parent_agent=first.parent_agent,
        source_file=first.source_file,
        description=first.description,
        settings=settings or None,
        code_hash=first.code_hash,
        function=first.function,
    )


def capture_of(trace: Trace, agents: Iterable[str] | None = None) -> Capture:
    wanted = set(agents) if agents is not None else None
    io = {
        name: tuple(expected_from_span(trace, span) for span in spans)
        for name, spans in agent_spans(trace).items()
        if wanted is None or name in wanted
    }
    return Capture(trace_id=trace.trace_id, io=io)


def definitions_of(trace: Trace, agents: Iterable[str] | None = None) -> dict[str, AgentDefinition]:
    wanted = set(agents) if agents is not None else None
    return {
        name: definition_from_spans(name, spans)
        for name, spans in agent_spans(trace).items()
        if wanted is None or name in wanted
    }


def check_agents(trace: Trace, agents: Sequence[str]) -> None:
    known = trace.agents
    for agent in agents:
        if agent not in known:
            raise unknown_agent_error(agent, known, f"trace {trace.trace_id[:12]}…")


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
            definitions.setdefault(agent, definition)
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


def varying_agents(traces: Sequence[Trace]) -> tuple[str, ...]:
    """Agents that gave different outputs for the same input across `traces` (a sampled model):
    a single-run verify of them cannot tell noise from a regression."""
    seen: dict[tuple[str, str], set[str]] = {}
    for trace in traces:
        for name, spans in agent_spans(trace).items():
            for span in spans:
                io = expected_from_span(trace, span)
                seen.setdefault((name, io.inputs_hash), set()).add(io.output_hash)
    return tuple(sorted({name for (name, _), outputs in seen.items() if len(outputs) > 1}))


def _same_pipeline_traces(traces_dir: Path, trace: Trace, limit: int = 20) -> list[Trace]:
    """The most recent stored traces of the same pipeline (same trace name), for comparison."""
    found = []
    for tid, path, _ in reversed(trace_files(traces_dir)):
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
    progress: Any = None,
) -> InitResult:
    """Pin the most recent (or given) trace; with replicates > 1 re-run it N times and pin those."""
    from proveai.snapshot.model import load_snapshot
    from proveai.snapshot.rerun import why_not_rerunnable

    check_name(name)
    if replicates < 1:
        raise ProveAIError("--replicates must be at least 1", exit_code=EXIT_USAGE)
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
        from proveai.snapshot.verify import capture_replicates

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
    from proveai.snapshot.judge_cache import ensure_gitignore

    ensure_gitignore(snapshots_dir)
    compared = traces if len(traces) > 1 else [trace, *_same_pipeline_traces(traces_dir, trace)]
    return InitResult(snapshot=snapshot, path=path, unchanged=unchanged, varying=varying_agents(compared))
