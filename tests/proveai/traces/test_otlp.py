"""OTLP JSON as written: its schema shape, an independent reader, a configured OpenTelemetry provider."""

from __future__ import annotations

import json

import jsonschema

from tests.proveai.script_kit import read_json
from tests.proveai.store.store_kit import capture

HEX32 = "^[0-9a-f]{32}$"
HEX16 = "^[0-9a-f]{16}$"
ANY_VALUE = {
    "type": "object",
    "minProperties": 1,
    "maxProperties": 1,
    "properties": {
        "stringValue": {"type": "string"},
        "boolValue": {"type": "boolean"},
        "intValue": {"type": "string", "pattern": "^-?[0-9]+$"},  # int64 as a JSON string
        "doubleValue": {"type": "number"},
        "arrayValue": {"type": "object"},
    },
    "additionalProperties": False,
}
KEY_VALUES = {
    "type": "array",
    "items": {
        "type": "object", "required": ["key", "value"],
        "properties": {"key": {"type": "string"}, "value": ANY_VALUE},
    },
}
OTLP_SCHEMA = {
    "type": "object",
    "required": ["resourceSpans"],
    "properties": {
        "resourceSpans": {
            "type": "array", "minItems": 1,
            "items": {
                "type": "object", "required": ["resource", "scopeSpans"],
                "properties": {
                    "resource": {
                        "type": "object", "required": ["attributes"], "properties": {"attributes": KEY_VALUES}
                    },
                    "scopeSpans": {
                        "type": "array",
                        "items": {
                            "type": "object", "required": ["scope", "spans"],
                            "properties": {
                                "scope": {"type": "object", "required": ["name"]},
                                "spans": {
                                    "type": "array",
                                    "items": {
                                        "type": "object",
                                        "required": [
                                            "traceId", "spanId", "name", "kind",
                                            "startTimeUnixNano", "endTimeUnixNano", "status", "attributes",
                                        ],
                                        "properties": {
                                            "traceId": {"type": "string", "pattern": HEX32},
                                            "spanId": {"type": "string", "pattern": HEX16},
                                            "parentSpanId": {"type": "string", "pattern": HEX16},
                                            "kind": {"type": "integer", "enum": [1, 2, 3, 4, 5]},
                                            "startTimeUnixNano": {"type": "string", "pattern": "^[0-9]+$"},
                                            "endTimeUnixNano": {"type": "string", "pattern": "^[0-9]+$"},
                                            "status": {
                                                "type": "object",
                                                "properties": {
                                                    "code": {"enum": [0, 1, 2]}, "message": {"type": "string"}
                                                },
                                            },
                                            "attributes": KEY_VALUES,
                                        },
                                    },
                                },
                            },
                        },
                    },
                },
            },
        }
    },
}


def test_otlp_json_matches_the_schema_shape_and_an_independent_reader(tmp_path):
    from opentelemetry.proto_json.trace.v1.trace import Status, TracesData

    t = capture(tmp_path)
    failed = capture(tmp_path, "fail")
    for captured in (t, failed):
        document = read_json(tmp_path / f"{captured.trace_id}.json")
        jsonschema.validate(document, OTLP_SCHEMA)
        data = TracesData.from_dict(document)  # opentelemetry-proto-json's OTLP/JSON mapping
        (resource_spans,) = data.resource_spans
        resource = {kv.key: kv.value for kv in resource_spans.resource.attributes}
        assert resource["service.name"].string_value == "store-test"
        spans = resource_spans.scope_spans[0].spans
        assert resource_spans.scope_spans[0].scope.name == "proveai"
        assert [s.trace_id.hex() for s in spans] == [captured.trace_id] * 2
        by_id = {s.span_id.hex(): s for s in spans}
        for ours in captured.spans:
            theirs = by_id[ours.span_id]
            assert (theirs.parent_span_id or b"").hex() == (ours.parent_span_id or "")
            assert (theirs.start_time_unix_nano, theirs.end_time_unix_nano) == (ours.start_ns, ours.end_ns)
            attrs = {kv.key: kv.value for kv in theirs.attributes}
            assert attrs["gen_ai.agent.name"].string_value == ours.name
            assert attrs["gen_ai.operation.name"].string_value == ours.operation
            assert json.loads(attrs["proveai.inputs"].string_value) == ours.inputs
            assert theirs.name == f"{ours.operation} {ours.name}"
            codes = Status.StatusCode
            expected = codes.STATUS_CODE_ERROR if ours.status == "error" else codes.STATUS_CODE_OK
            assert theirs.status.code == expected
    lookup_span = failed.span("lookup")
    assert lookup_span.status == "error" and lookup_span.error == "LookupError: no such record"
    assert failed.span("plan").status == "error"


def test_spans_reach_a_configured_opentelemetry_tracer_provider(tmp_path, py):
    py.write(
        "otel.py",
        """
        from opentelemetry import trace as otel
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        from proveai import monitor, trace

        memory = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(memory))
        otel.set_tracer_provider(provider)

        @monitor("inner", model="gpt-4o-mini")
        def inner(x):
            return x

        @monitor("outer")
        def outer(x):
            return inner(x)

        with trace("otel-svc") as t:
            outer("hi")
        got = memory.get_finished_spans()
        by = {s.attributes["gen_ai.agent.name"]: s for s in got}
        assert len(got) == 2, got
        assert format(by["outer"].context.trace_id, "032x") == t.trace_id
        assert format(by["inner"].parent.span_id, "016x") == t.span("outer").span_id
        assert by["inner"].attributes["gen_ai.request.model"] == "gpt-4o-mini"
        assert by["inner"].resource.attributes["service.name"] == "otel-svc"
        print("ok")
        """,
    )
    assert py.ok("otel.py").stdout.strip() == "ok"


def test_openinference_names_map_each_kind_and_fall_back_on_the_operation() -> None:
    from proveai.traces.otlp import openinference_attributes, span_attributes
    from proveai.traces.trace import KINDS, Span

    def span(kind: str, operation: str) -> Span:
        return Span(trace_id="ab" * 16, span_id="cd" * 8, parent_span_id=None, name="a", operation=operation,
                    kind=kind, model=None, version=None, parent_agent=None, description=None,
                    source_file=None, start_ns=1, end_ns=2, status="ok", error=None, inputs={"q": 1},
                    output=[1])

    def kind_of(kind: str, operation: str = "invoke_agent") -> str:
        one = span(kind, operation)
        return openinference_attributes(one, span_attributes(one))["openinference.span.kind"]

    known = {"CHAIN", "AGENT", "TOOL", "LLM", "RETRIEVER", "RERANKER", "EMBEDDING"}
    assert {kind: kind_of(kind) for kind in KINDS if kind in known} == {kind: kind for kind in known}
    assert (kind_of("CHAT_MODEL"), kind_of("PARSER"), kind_of("MEMORY")) == ("LLM", "CHAIN", "RETRIEVER")
    operations = ("invoke_agent", "chat", "execute_tool")
    assert [kind_of("UNKNOWN", op) for op in operations] == ["AGENT", "LLM", "TOOL"]
    one = span("TOOL", "execute_tool")
    named = openinference_attributes(one, span_attributes(one))
    assert (named["input.value"], named["output.value"]) == ('{"q":1}', "[1]")
