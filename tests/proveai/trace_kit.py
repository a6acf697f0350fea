"""Closed traces built by hand for the topology, attribution, calibration and narrative tests."""

from __future__ import annotations

from proveai import Span, Trace
from proveai.replay.engine import ReplayedSpan, ReplayedTrace


def span(
    span_id: str,
    name: str,
    output,
    start: int,
    end: int,
    *,
    parent: str | None = None,
    parent_agent: str | None = None,
    kind: str = "CHAT_MODEL",
) -> Span:
    return Span(
        trace_id="cd" * 16,
        span_id=span_id.rjust(16, "0"),
        parent_span_id=parent.rjust(16, "0") if parent else None,
        name=name,
        operation="invoke_agent",
        kind=kind,
        model=None,
        version=None,
        parent_agent=parent_agent,
        description=None,
        source_file=None,
        start_ns=start,
        end_ns=end,
        status="ok",
        error=None,
        inputs={},
        output=output,
    )


def closed(*spans: Span, trace_id: str = "cd" * 16) -> Trace:
    return Trace.closed(trace_id=trace_id, name="t", service_name="t", spans=spans, invocation=None)


def replay_with(trace: Trace, outputs: dict[str, object]) -> ReplayedTrace:
    return ReplayedTrace(
        trace.trace_id,
        [
            ReplayedSpan(
                s.span_id,
                s.name,
                outputs.get(s.name + s.span_id[-1:], s.output),
                None,
                0.0,
                old_output=s.output,
            )
            for s in trace.spans
        ],
    )
