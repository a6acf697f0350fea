"""Trace <-> OTLP JSON, and delivery to an OpenTelemetry TracerProvider configured in-process.

Encoding goes through the OpenTelemetry SDK's ReadableSpan and the OTLP JSON encoder
(hex trace/span ids, as OTLP/JSON requires). Attribute names follow the GenAI semantic
conventions where one exists, `proveai.*` otherwise; trace-level facts (name, outcome,
check results, invocation) live in the resource attributes.
"""

from __future__ import annotations

import functools
import json
import sys
from typing import Any

from proveai.traces.trace import CheckResult, Span, Trace
from proveai.version import package_version

SCOPE_NAME = "proveai"
INVOCATION_PREFIX = "proveai.invocation."
_JSON_SPAN_KEYS = {
    "gen_ai.input.messages": "input_messages",
    "gen_ai.output.messages": "output_messages",
    "proveai.inputs": "inputs",
    "proveai.output": "output",
    "proveai.request": "request",
}


# one encoder for all spans: json.dumps with options would build a new one per call
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


@functools.lru_cache(maxsize=1024)  # an agent's imports are the same tuple at every one of its spans
def _paths_json(paths: tuple[str, ...]) -> str:
    return _dumps(list(paths))


def span_attributes(span: Span) -> dict[str, Any]:
    attrs: dict[str, Any] = {
        "gen_ai.operation.name": span.operation,
        "gen_ai.agent.name": span.name,
        "proveai.kind": span.kind,
        "proveai.inputs": _dumps(span.inputs),
        "proveai.output": _dumps(span.output),
    }
    optional = {
        "gen_ai.agent.description": span.description,
        "gen_ai.request.model": span.model,
        "proveai.version": span.version,
        "proveai.parent_agent": span.parent_agent,
        "proveai.source_file": span.source_file,
        "proveai.code_hash": span.code_hash,
        "proveai.function": span.function,
        "proveai.error": span.error,
    }
    attrs.update({k: v for k, v in optional.items() if v is not None})
    if span.input_messages is not None:
        attrs["gen_ai.input.messages"] = _dumps(span.input_messages)
    if span.output_messages is not None:
        attrs["gen_ai.output.messages"] = _dumps(span.output_messages)
    if span.request is not None:
        attrs["proveai.request"] = _dumps(span.request)
    if span.reads is not None:
        attrs["proveai.reads"] = _paths_json(span.reads)
    if span.imports is not None:
        attrs["proveai.imports"] = _paths_json(span.imports)
    for key in ("input_tokens", "output_tokens"):
        if span.usage and span.usage.get(key) is not None:
            attrs[f"gen_ai.usage.{key}"] = int(span.usage[key])
    return attrs


def resource_attributes(trace: Trace) -> dict[str, Any]:

    attrs: dict[str, Any] = {
        "service.name": trace.service_name,
        "telemetry.sdk.name": "proveai",
        "telemetry.sdk.version": package_version(),
        "proveai.trace.id": trace.trace_id,
        "proveai.trace.name": trace.name,
        "proveai.trace.started_ns": int(trace.started_ns),
        "proveai.trace.ended_ns": int(trace.ended_ns),
        "proveai.check_results": _dumps([_result_dict(r) for r in trace.check_results]),
    }
    if trace.outcome is not None:
        attrs["proveai.outcome"] = trace.outcome
    for key, value in (trace.invocation or {}).items():
        if value is None:
            continue
        attrs[INVOCATION_PREFIX + key] = tuple(value) if isinstance(value, list) else value
    return attrs


def _result_dict(result: CheckResult) -> dict[str, Any]:
    return {
        "name": result.name, "label": result.label, "score": result.score,
        "reason": result.reason, "agent": result.agent,
    }


# proveai's kinds as OpenInference's `openinference.span.kind`; UNKNOWN goes by the operation
OPENINFERENCE_KINDS = {
    "CHAIN": "CHAIN", "AGENT": "AGENT", "TOOL": "TOOL", "LLM": "LLM", "CHAT_MODEL": "LLM",
    "RETRIEVER": "RETRIEVER", "RERANKER": "RERANKER", "EMBEDDING": "EMBEDDING", "PARSER": "CHAIN",
    "MEMORY": "RETRIEVER",
}
OPENINFERENCE_BY_OPERATION = {"invoke_agent": "AGENT", "chat": "LLM", "execute_tool": "TOOL"}


def openinference_attributes(span: Span, attributes: dict[str, Any]) -> dict[str, Any]:
    """The OpenInference names (Phoenix's) of what a span's attributes already hold: its kind,
    and its inputs and output as the same JSON text as `proveai.inputs` / `proveai.output`."""
    kind = OPENINFERENCE_KINDS.get(span.kind) or OPENINFERENCE_BY_OPERATION.get(span.operation, "UNKNOWN")
    named: dict[str, Any] = {"openinference.span.kind": kind}
    for prefix, key in (("input", "proveai.inputs"), ("output", "proveai.output")):
        if key in attributes:
            named[f"{prefix}.value"] = attributes[key]
            named[f"{prefix}.mime_type"] = "application/json"
    return named


def readable_spans(trace: Trace, openinference: bool = False) -> list[Any]:
    """The trace's spans as OpenTelemetry SDK ReadableSpans (ids kept exactly); with
    `openinference`, OpenInference's attribute names too (for a live provider, not the file)."""
    # opentelemetry: ~75 ms, only on export (so do the next three)
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import ReadableSpan  # opentelemetry
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope  # opentelemetry
    from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags  # opentelemetry

    resource = Resource(resource_attributes(trace))
    scope = InstrumentationScope(SCOPE_NAME, package_version())
    flags = TraceFlags(TraceFlags.SAMPLED)
    out = []
    for span in trace.spans:
        # a span's own trace id: the trace's, or the OpenTelemetry trace's it joined (capture.otel)
        trace_int = int(span.trace_id or trace.trace_id, 16)
        context = SpanContext(trace_int, int(span.span_id, 16), is_remote=False, trace_flags=flags)
        parent = (
            SpanContext(trace_int, int(span.parent_span_id, 16), is_remote=False, trace_flags=flags)
            if span.parent_span_id
            else None
        )
        status = Status(StatusCode.ERROR, span.error) if span.status == "error" else Status(StatusCode.OK)
        attributes = span_attributes(span)
        if openinference:
            attributes.update(openinference_attributes(span, attributes))
        out.append(
            ReadableSpan(
                name=f"{span.operation} {span.name}",  # GenAI convention: "{operation} {agent}"
                context=context,
                parent=parent,
                resource=resource,
                attributes=attributes,
                kind=SpanKind.CLIENT if span.operation == "chat" else SpanKind.INTERNAL,
                status=status,
                start_time=span.start_ns,
                end_time=span.end_ns,
                instrumentation_scope=scope,
            )
        )
    return out


def encode_trace(trace: Trace) -> dict[str, Any]:
    """The OTLP JSON document (ExportTraceServiceRequest shape) of a closed trace."""
    # opentelemetry: ~75 ms, only on export
    from opentelemetry.exporter.otlp.json.common.trace_encoder import encode_spans

    if trace.spans:
        return encode_spans(readable_spans(trace)).to_dict()
    # a trace with no spans still records its resource (name, invocation, outcome)
    from opentelemetry.exporter.otlp.json.common._internal import (
        _encode_instrumentation_scope,
        _encode_resource,
    )

    # opentelemetry: ~75 ms, only on export (so do the next three)
    from opentelemetry.proto_json.collector.trace.v1.trace_service import ExportTraceServiceRequest
    from opentelemetry.proto_json.trace.v1.trace import ResourceSpans, ScopeSpans  # opentelemetry
    from opentelemetry.sdk.resources import Resource  # opentelemetry
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope  # opentelemetry

    scope = InstrumentationScope(SCOPE_NAME, package_version())
    resource = _encode_resource(Resource(resource_attributes(trace)))
    # The call-arg ignores: opentelemetry's proto_json messages are dataclasses made through
    # functools.partial(dataclass), which mypy does not read as one (it sees no fields).
    request = ExportTraceServiceRequest(
        resource_spans=[  # type: ignore[call-arg]  # a partial-made dataclass, see above
            ResourceSpans(
                resource=resource,  # type: ignore[call-arg]  # see above
                scope_spans=[
                    ScopeSpans(
                        scope=_encode_instrumentation_scope(scope),  # type: ignore[call-arg]  # see above
                        spans=[],
                    )
                ],
            )
        ]
    )
    return request.to_dict()


def send_to_tracer_provider(trace: Trace) -> bool:
    """Hand the spans to the process's SDK TracerProvider, if one is configured.

    The spans go to the provider's span processors with their own ids, so a backend links
    them to the stored trace file, with OpenInference's names added (`openinference_attributes`).
    Returns whether a provider took them.
    """
    if "opentelemetry.sdk.trace" not in sys.modules or not trace.spans:
        return False  # no SDK imported: no provider can be configured; skip the import cost
    from opentelemetry import trace as otel_trace  # opentelemetry: ~75 ms, only on export
    from opentelemetry.sdk.trace import TracerProvider  # opentelemetry

    provider = otel_trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        return False
    processor = getattr(provider, "_active_span_processor", None)
    if processor is None:
        return False
    for readable in readable_spans(trace, openinference=True):
        processor.on_end(readable)
    return True


# ---- decoding ---------------------------------------------------------------------------------
def _value(any_value: dict[str, Any]) -> Any:
    if "stringValue" in any_value:
        return any_value["stringValue"]
    if "intValue" in any_value:
        return int(any_value["intValue"])
    if "boolValue" in any_value:
        return bool(any_value["boolValue"])
    if "doubleValue" in any_value:
        return float(any_value["doubleValue"])
    if "arrayValue" in any_value:
        return [_value(v) for v in any_value["arrayValue"].get("values", [])]
    if "kvlistValue" in any_value:
        return {kv["key"]: _value(kv.get("value", {})) for kv in any_value["kvlistValue"].get("values", [])}
    if "bytesValue" in any_value:
        return any_value["bytesValue"]
    return None


def _attributes(items: list[dict[str, Any]] | None) -> dict[str, Any]:
    return {item["key"]: _value(item.get("value", {})) for item in items or ()}


def _json_or_raw(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def _status(status: dict[str, Any] | None) -> tuple[str, str | None]:
    code = (status or {}).get("code", 0)
    if code in (2, "STATUS_CODE_ERROR"):
        return "error", (status or {}).get("message") or None
    return "ok", None


def decode_span(raw: dict[str, Any], trace_id: str) -> Span:
    attrs = _attributes(raw.get("attributes"))
    parsed = {field: _json_or_raw(attrs.get(key)) for key, field in _JSON_SPAN_KEYS.items()}
    usage = {
        key: attrs[f"gen_ai.usage.{key}"]
        for key in ("input_tokens", "output_tokens")
        if f"gen_ai.usage.{key}" in attrs
    }
    status, message = _status(raw.get("status"))
    name = attrs.get("gen_ai.agent.name") or raw.get("name", "")
    return Span(
        trace_id=(raw.get("traceId") or trace_id).lower(),
        span_id=str(raw.get("spanId", "")).lower(),
        parent_span_id=str(raw["parentSpanId"]).lower() if raw.get("parentSpanId") else None,
        name=name,
        operation=attrs.get("gen_ai.operation.name", "invoke_agent"),
        kind=attrs.get("proveai.kind", "UNKNOWN"),
        model=attrs.get("gen_ai.request.model"),
        version=attrs.get("proveai.version"),
        parent_agent=attrs.get("proveai.parent_agent"),
        description=attrs.get("gen_ai.agent.description"),
        source_file=attrs.get("proveai.source_file"),
        start_ns=int(raw.get("startTimeUnixNano", 0)),
        end_ns=int(raw.get("endTimeUnixNano", 0)),
        status=status,
        error=attrs.get("proveai.error") or message,
        inputs=parsed["inputs"] if isinstance(parsed["inputs"], dict) else {},
        output=parsed["output"],
        input_messages=parsed["input_messages"],
        output_messages=parsed["output_messages"],
        usage=usage or None,
        request=parsed["request"],
        attributes=attrs,
        code_hash=attrs.get("proveai.code_hash"),
        function=attrs.get("proveai.function"),
        reads=_paths(attrs.get("proveai.reads")),
        imports=_paths(attrs.get("proveai.imports")),
    )


def _paths(text: Any) -> tuple[str, ...] | None:
    """A JSON list of paths as a tuple; None (not recorded) for anything else."""
    value = _json_or_raw(text)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(value)
    return None


def decode_trace(document: dict[str, Any], fallback_trace_id: str = "") -> Trace:
    """A closed Trace from an OTLP JSON document written by encode_trace (or any OTLP JSON)."""
    resource: dict[str, Any] = {}
    spans: list[Span] = []
    for resource_spans in document.get("resourceSpans", []):
        resource.update(_attributes((resource_spans.get("resource") or {}).get("attributes")))
        for scope_spans in resource_spans.get("scopeSpans", []):
            for raw in scope_spans.get("spans", []):
                spans.append(decode_span(raw, fallback_trace_id))
    trace_id = str(resource.get("proveai.trace.id") or (spans[0].trace_id if spans else fallback_trace_id))
    invocation: dict[str, Any] | None = None
    invocation_keys = {
        k[len(INVOCATION_PREFIX) :]: v for k, v in resource.items() if k.startswith(INVOCATION_PREFIX)
    }
    if invocation_keys:
        invocation = {
            "python": None, "argv": [], "module": None, "script": None, "cwd": ".",
            "project_root": None, "env_names": [], "rerunnable": False, "why_not": None,
        }
        invocation.update(invocation_keys)
    results_raw = _json_or_raw(resource.get("proveai.check_results")) or []
    results = [
        CheckResult(
            name=r.get("name", ""), label=r.get("label", "skip"), score=r.get("score"),
            reason=r.get("reason"), agent=r.get("agent"),
        )
        for r in results_raw
        if isinstance(r, dict)
    ]
    service = str(resource.get("service.name", "proveai"))
    return Trace.closed(
        trace_id=trace_id,
        name=str(resource.get("proveai.trace.name", service)),
        service_name=service,
        spans=spans,
        invocation=invocation,
        check_results=results,
        outcome=resource.get("proveai.outcome"),
        started_ns=int(resource.get("proveai.trace.started_ns", 0) or 0),
        ended_ns=int(resource.get("proveai.trace.ended_ns", 0) or 0),
        resource=resource,
    )
