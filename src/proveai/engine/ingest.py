"""Reading what clients POST: OTLP JSON as proveai's exporters write it, one or many traces.

What is refused says why, with the HTTP status the server answers (`Refused.status`): a body
past MAX_BODY_BYTES (413), one that does not say it is JSON (415), or a document nested deeper
than MAX_NESTING anywhere, the JSON inside its string values included (400).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from proveai.errors import ProveAIError
from proveai.traces.otlp import decode_trace
from proveai.traces.trace import Trace

MAX_BODY_BYTES = 64 * 1024 * 1024
# proveai's own traces nest at most 32 deep in any value (proveai.traces.jsonsafe) and about 12
# in the OTLP document: well past both, and far below Python's recursion limit
MAX_NESTING = 128
JSON_TYPE = "application/json"


class Refused(ProveAIError):
    """A request the engine does not analyze: `status` is the HTTP status it answers."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def check_content_type(content_type: str | None) -> None:
    """Only `application/json` (any parameters, e.g. charset): a form or text/plain body is
    what a web page can send without asking first, so it is never read."""
    media = (content_type or "").split(";", 1)[0].strip().lower()
    if media != JSON_TYPE:
        shown = repr(content_type) if content_type else "missing"
        raise Refused(f"Content-Type must be {JSON_TYPE} (it is {shown})", status=415)


def too_large(size: int | None) -> Refused:
    """The refusal of a body past the limit: `size` its declared length, None when counted."""
    if size is None:
        return Refused(f"the body is over the {MAX_BODY_BYTES}-byte limit", status=413)
    return Refused(f"body of {size} bytes is over the {MAX_BODY_BYTES}-byte limit", status=413)


def nesting_depth(value: Any, limit: int = MAX_NESTING) -> int:
    """How deep lists, tuples and dicts nest in `value` (a scalar is 0), counted without
    recursion and stopping once past `limit`."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        depth += 1
        deepest = max(deepest, depth)
        if deepest > limit:
            return deepest
        stack.extend((child, depth) for child in children)
    return deepest


def _too_deep() -> Refused:
    return Refused(f"the document nests deeper than {MAX_NESTING} levels")


def _check_trace_depth(trace: Trace) -> None:
    """The decoded values (the JSON inside the document's strings) nest no deeper than the limit."""
    for span in trace.spans:
        for item in dataclasses.fields(span):
            if nesting_depth(getattr(span, item.name)) > MAX_NESTING:
                raise _too_deep()
    if nesting_depth(trace.resource) > MAX_NESTING:
        raise _too_deep()


def split_traces(body: bytes) -> list[Trace]:
    """The closed Traces of an OTLP JSON document (ExportTraceServiceRequest shape).

    Each resourceSpans entry is decoded on its own (proveai writes one per trace, with the
    trace-level facts in its resource); entries of the same trace id are merged. Refused
    (a ProveAIError) names what is wrong with a body that is not such a document.
    """
    if not body.strip():
        raise Refused("empty body: POST an OTLP JSON trace document")
    try:
        document = json.loads(body)
    except ValueError as exc:
        raise Refused(f"the body is not JSON: {exc}") from None
    except RecursionError:  # nested past what the parser itself follows
        raise _too_deep() from None
    if nesting_depth(document) > MAX_NESTING:
        raise _too_deep()
    if not isinstance(document, dict) or not isinstance(document.get("resourceSpans"), list):
        raise Refused("the body is not an OTLP JSON trace document (no resourceSpans list)")
    merged: dict[str, Trace] = {}
    for number, resource_spans in enumerate(document["resourceSpans"]):
        try:
            trace = decode_trace({"resourceSpans": [resource_spans]})
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise Refused(f"resourceSpans[{number}] is not a well-formed OTLP trace: {exc}") from None
        except RecursionError:  # JSON inside a string value, nested past the parser
            raise _too_deep() from None
        _check_trace_depth(trace)
        if not trace.spans and not trace.resource.get("proveai.trace.id"):
            continue
        if len(trace.trace_id) != 32 or any(c not in "0123456789abcdef" for c in trace.trace_id):
            raise Refused(f"resourceSpans[{number}] has no usable trace id ({trace.trace_id!r})")
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
        raise Refused("the document holds no spans")
    return list(merged.values())
