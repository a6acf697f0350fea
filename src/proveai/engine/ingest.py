"""Reading what clients POST: OTLP JSON as proveai's exporters write it, one or many traces."""

from __future__ import annotations

import json

from proveai.errors import ProveAIError
from proveai.traces.otlp import decode_trace
from proveai.traces.trace import Trace

MAX_BODY_BYTES = 64 * 1024 * 1024


def split_traces(body: bytes) -> list[Trace]:
    """The closed Traces of an OTLP JSON document (ExportTraceServiceRequest shape).

    Each resourceSpans entry is decoded on its own (proveai writes one per trace, with the
    trace-level facts in its resource); entries of the same trace id are merged. ProveAIError
    names what is wrong with a body that is not such a document.
    """
    if not body.strip():
        raise ProveAIError("empty body: POST an OTLP JSON trace document")
    try:
        document = json.loads(body)
    except ValueError as exc:
        raise ProveAIError(f"the body is not JSON: {exc}") from None
    if not isinstance(document, dict) or not isinstance(document.get("resourceSpans"), list):
        raise ProveAIError("the body is not an OTLP JSON trace document (no resourceSpans list)")
    merged: dict[str, Trace] = {}
    for number, resource_spans in enumerate(document["resourceSpans"]):
        try:
            trace = decode_trace({"resourceSpans": [resource_spans]})
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ProveAIError(f"resourceSpans[{number}] is not a well-formed OTLP trace: {exc}") from None
        if not trace.spans and not trace.resource.get("proveai.trace.id"):
            continue
        if len(trace.trace_id) != 32 or any(c not in "0123456789abcdef" for c in trace.trace_id):
            raise ProveAIError(f"resourceSpans[{number}] has no usable trace id ({trace.trace_id!r})")
        known = merged.get(trace.trace_id)
        if known is None:
            merged[trace.trace_id] = trace
        else:
            merged[trace.trace_id] = Trace.closed(
                trace_id=known.trace_id, name=known.name, service_name=known.service_name,
                spans=[*known.spans, *trace.spans], invocation=known.invocation or trace.invocation,
                check_results=[*known.check_results, *trace.check_results],
                outcome=known.outcome or trace.outcome, resource={**trace.resource, **known.resource},
            )
    if not merged:
        raise ProveAIError("the document holds no spans")
    return list(merged.values())
