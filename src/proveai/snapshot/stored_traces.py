"""A stored trace in the snapshot's terms: finding and reading trace files, and turning an
agent's spans into pinned definitions and expected I/O.

Pinning, verifying, grading and updating all read traces this way; it sits below them so none
of them has to import another to read a trace.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from proveai.errors import ProveAIError
from proveai.snapshot.model import AgentDefinition, Capture, ExpectedIO, unknown_agent_error
from proveai.store import trace_files as stored_files
from proveai.store.traces.index import read_index
from proveai.store.traces.load import load_trace

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


def dated_trace_files(traces_dir: Path) -> list[tuple[str, Path, float]]:
    """(trace_id, path, time) of every stored trace, oldest first.

    Read through the capture index, which folds its journal in: manifest.json alone can lag
    the newest captures. A trace file the index does not list still counts (by its mtime).
    """
    if not traces_dir.is_dir():
        return []
    entries = read_index(traces_dir).entries
    found = []
    for path in stored_files(traces_dir):
        trace_id = path.name[: -len(".json")]
        found.append((trace_id, path, _entry_time(entries.get(trace_id) or {}, path)))
    return sorted(found, key=lambda item: (item[2], item[0]))


def find_trace_path(traces_dir: Path, trace_id: str | None) -> Path:
    files = dated_trace_files(traces_dir)
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
        reads=merged_paths(span.reads for span in spans),
        imports=merged_paths(span.imports for span in spans),
    )


def merged_paths(values: Iterable[tuple[str, ...] | None]) -> tuple[str, ...] | None:
    """The union of several calls' recorded paths; None (not recorded) when any call's is."""
    union: set[str] = set()
    for value in values:
        if value is None:
            return None
        union.update(value)
    return tuple(sorted(union))


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
