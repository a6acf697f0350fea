"""One stored episode as OTLP JSON (`poisson-prove inspect RUN --episode C/R --otlp`).

The document is an `ExportTraceServiceRequest` in OTLP/JSON, encoded by the OpenTelemetry
SDK's OTLP JSON encoder (the one proveai's trace files use): what a collector's OTLP/HTTP
receiver takes (`POST /v1/traces`). One resource (`service.name` the run's target id, and the
episode's run, condition, replicate, seed, outcome and error kind as `poisson_prove.*`), one
scope (`poisson_prove`), and one trace: a root span `episode <condition>/<replicate>` over the
whole call (status error when the episode has no outcome), and under it every stored span in
call order (inspection.spans), each with its real parent, the episode's trace id and its own
span id. Attribute values that are maps are written as their JSON text (OTLP attributes hold
scalars and lists); an instrumentor or a model call is a CLIENT span, everything else INTERNAL.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from typing import Any

from poisson_prove.inspection.run import EpisodeDetail
from poisson_prove.inspection.spans import EpisodeSpan, episode_spans
from poisson_prove.version import __version__

SCOPE = "poisson_prove"


def _value(value: Any) -> Any:
    if isinstance(value, (str, bool, int, float)):
        return value
    scalars = isinstance(value, list) and value and isinstance(value[0], (str, bool, int, float))
    if scalars and len({type(v) for v in value}) == 1:  # an OTLP array holds one scalar type
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=repr)


def _attributes(attributes: Mapping[str, Any]) -> dict[str, Any]:
    return {str(k): _value(v) for k, v in attributes.items() if v is not None}


def _ns(seconds: float | None, default: int) -> int:
    return default if seconds is None else round(seconds * 1e9)


def _is_client(span: EpisodeSpan) -> bool:
    if span.source == "otel":
        return any(k.startswith(("http.", "gen_ai.")) for k in span.attributes)
    return span.source == "monitor" and span.attributes.get("gen_ai.operation.name") == "chat"


def episode_otlp(detail: EpisodeDetail, target_id: str | None = None) -> dict[str, Any]:
    """The OTLP JSON document (a dict) of one episode (see the module docstring)."""
    # opentelemetry: ~75 ms, only when an episode is exported (so do the next five)
    from opentelemetry.exporter.otlp.json.common.trace_encoder import encode_spans
    from opentelemetry.sdk.resources import Resource  # opentelemetry: as above
    from opentelemetry.sdk.trace import ReadableSpan  # opentelemetry: as above
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope  # opentelemetry: as above
    from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags  # opentelemetry

    key = f"{detail.run_id}/{detail.key}/{detail.replicate}"
    spans = episode_spans(detail.spans, key)
    trace_id = spans[0].trace_id if spans else episode_spans([{"name": ""}], key)[0].trace_id
    root_id = episode_spans([{"name": "episode"}], key + "/root")[0].span_id
    resource = Resource(
        _attributes(
            {
                "service.name": target_id or detail.run_name,
                "poisson_prove.run.id": detail.run_id,
                "poisson_prove.run.name": detail.run_name,
                "poisson_prove.condition": detail.condition,
                "poisson_prove.cell": detail.key,
                "poisson_prove.replicate": detail.replicate,
                "poisson_prove.seed": detail.seed,
                "poisson_prove.outcome": detail.outcome,
                "poisson_prove.error_kind": detail.error_kind,
                "poisson_prove.case_id": detail.case_id,
            }
        )
    )
    scope = InstrumentationScope(SCOPE, __version__)
    flags = TraceFlags(TraceFlags.SAMPLED)
    trace_int = int(trace_id, 16)
    starts = [s.start for s in spans if s.start is not None]
    ends = [s.end for s in spans if s.end is not None]
    begun = _episode_start(detail, starts)
    root_start = _ns(begun, 0)
    root_end = max(_ns(_episode_end(detail, begun, ends), root_start), root_start)

    def context(span_id: str) -> Any:
        return SpanContext(trace_int, int(span_id, 16), is_remote=False, trace_flags=flags)

    root_status = (
        Status(StatusCode.ERROR, f"{detail.error_kind}: {detail.error_message or ''}".strip())
        if detail.outcome is None
        else Status(StatusCode.OK)
    )
    readable = [
        ReadableSpan(
            name=f"episode {detail.condition}/{detail.replicate}",
            context=context(root_id),
            parent=None,
            resource=resource,
            attributes=_attributes({"poisson_prove.outcome": detail.outcome, "poisson_prove.t": detail.t}),
            kind=SpanKind.INTERNAL,
            status=root_status,
            start_time=root_start,
            end_time=root_end,
            instrumentation_scope=scope,
        )
    ]
    for span in spans:
        parent_id = spans[span.parent].span_id if span.parent is not None else root_id
        start = _ns(span.start, root_start)
        attributes = dict(span.attributes)
        attributes["poisson_prove.source"] = span.source
        if span.error is not None:
            attributes["poisson_prove.error"] = span.error
        readable.append(
            ReadableSpan(
                name=span.name,
                context=context(span.span_id),
                parent=context(parent_id),
                resource=resource,
                attributes=_attributes(attributes),
                kind=SpanKind.CLIENT if _is_client(span) else SpanKind.INTERNAL,
                status=Status(StatusCode.ERROR, span.error)
                if span.status == "error"
                else Status(StatusCode.OK),
                start_time=start,
                end_time=max(_ns(span.end, start), start),
                instrumentation_scope=scope,
            )
        )
    document: dict[str, Any] = encode_spans(readable).to_dict()
    return document


def _episode_start(detail: EpisodeDetail, starts: list[float]) -> float | None:
    if detail.started_at:
        return dt.datetime.fromisoformat(detail.started_at.replace("Z", "+00:00")).timestamp()
    return min(starts) if starts else None


def _episode_end(detail: EpisodeDetail, begun: float | None, ends: list[float]) -> float | None:
    candidates = list(ends)
    if begun is not None and detail.duration_s is not None:
        candidates.append(begun + detail.duration_s)
    return max(candidates) if candidates else begun
