"""proveai's spans in the process's OpenTelemetry trace: a trace joins the span active as it opens.

When a trace opens and OpenTelemetry is in use (`opentelemetry.trace` already imported, and a
span active or an SDK `TracerProvider` set as the global provider), the trace is joined
(`join` returns an `OtelJoin`; the trace's monitored calls go through it):

- its spans take the active span's trace id (`LiveTrace.span_trace_id`; with no span active,
  the trace's own id), and its top-level agents' parent is the span active when each is called
  (the span active as the trace opened, or a user span opened inside the trace around the call);
- while a monitored agent runs (a generator agent: while its body runs), its span is
  OpenTelemetry's current span, so the user's spans and instrumentor spans (httpx, requests,
  openai via opentelemetry-instrumentation) opened inside it are its children.

The trace's own id (`trace_id`: the stored file's name and the store's key) stays proveai's
own, so two traces opened under one user span are two stored traces of one OpenTelemetry trace.
Ids keep proveai's format: 32 and 16 lowercase hex digits, as OpenTelemetry's are.

Nothing here imports OpenTelemetry that is not loaded already: without it a trace is not joined
and a monitored call costs what it always has.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

from proveai.traces.context import FRAME
from proveai.traces.jsonsafe import to_jsonable

_time_ns = time.time_ns


class OtelJoin:
    """A trace's link to OpenTelemetry: the trace id its spans carry, the parent of its
    top-level agents, and the making-current of each agent's span while it runs."""

    __slots__ = ("_attach", "_current", "_detach", "_flags", "_in_context", "_make", "parent", "sampled",
                 "trace_id")

    def __init__(self, trace_id: int, parent: int | None, flags: Any) -> None:
        # opentelemetry: loaded already (join checked sys.modules), so this import costs nothing
        from opentelemetry import context, trace
        from opentelemetry.trace import NonRecordingSpan, SpanContext  # opentelemetry: loaded, as above

        self.trace_id = trace_id
        self.parent = parent  # the span active as the trace opened, or None
        self.sampled = bool(flags.sampled)
        self._flags = flags
        self._attach, self._detach = context.attach, context.detach
        self._in_context, self._current = trace.set_span_in_context, trace.get_current_span

        class AgentSpan(NonRecordingSpan):
            """An agent's span as OpenTelemetry's current span: its SpanContext (whose checks
            cost more than the rest of the join) is built when something asks for it, which a
            call that starts no span inside it never does."""

            def __init__(self, span_id: int) -> None:  # its SpanContext, NonRecordingSpan's only state, later
                self._span_id = span_id
                self._built: SpanContext | None = None

            def get_span_context(self) -> SpanContext:  # NonRecordingSpan reads _context here only
                if self._built is None:
                    self._built = SpanContext(trace_id, self._span_id, False, flags)
                return self._built

            def __repr__(self) -> str:  # and here
                return f"NonRecordingSpan({self.get_span_context()!r})"

        self._make = AgentSpan

    def adopt_parent(self, builder: Any) -> None:
        """A top-level agent's parent: the span OpenTelemetry has current as it is called, when
        that is a span of this trace other than the one active as the trace opened."""
        if builder._parent is not builder._owner:
            return  # nested in another agent: that agent is its parent
        current = self._current().get_span_context()
        if current.is_valid and current.trace_id == self.trace_id and current.span_id != self.parent:
            builder.otel_parent = f"{current.span_id:016x}"

    def enter(self, builder: Any) -> Any:
        """Make the agent's span OpenTelemetry's current span; `leave(token)` undoes it."""
        return self._attach(self._in_context(self._make(builder._id)))

    def leave(self, token: Any) -> None:
        self._detach(token)

    def call(self, fn: Callable[..., Any], meta: Any, frame: Any, args: tuple[Any, ...],
             kwargs: dict[str, Any], builder_of: Callable[..., Any]) -> Any:
        builder = builder_of(frame, meta, meta.bind(args, kwargs))
        self.adopt_parent(builder)
        token = FRAME.set(builder)
        current = self.enter(builder)
        try:
            result = fn(*args, **kwargs)
        except BaseException as exc:
            builder._finish_error(exc)
            raise
        finally:
            self._detach(current)
            FRAME.reset(token)
        builder.end_ns = _time_ns()
        builder.output = to_jsonable(result)
        return result

    async def acall(self, fn: Callable[..., Any], meta: Any, frame: Any, args: tuple[Any, ...],
                    kwargs: dict[str, Any], builder_of: Callable[..., Any]) -> Any:
        builder = builder_of(frame, meta, meta.bind(args, kwargs))
        self.adopt_parent(builder)
        token = FRAME.set(builder)
        current = self.enter(builder)
        try:
            result = await fn(*args, **kwargs)
        except BaseException as exc:
            builder._finish_error(exc)
            raise
        finally:
            self._detach(current)
            FRAME.reset(token)
        builder._finish_ok(result)
        return result


def join(own_trace_id: str) -> OtelJoin | None:
    """The join of a trace opening now (its own id `own_trace_id`), or None when OpenTelemetry
    is not in use: not imported, or no span active and no SDK TracerProvider installed."""
    if "opentelemetry.trace" not in sys.modules:
        return None  # never imported: no span can be active, and importing it would cost ~75 ms
    # opentelemetry: loaded already (checked above), so this import costs nothing
    from opentelemetry import trace
    from opentelemetry.trace import TraceFlags  # opentelemetry: loaded, as above

    active = trace.get_current_span().get_span_context()
    if active.is_valid:
        return OtelJoin(active.trace_id, active.span_id, active.trace_flags)
    sdk = sys.modules.get("opentelemetry.sdk.trace")
    if sdk is None or not isinstance(trace.get_tracer_provider(), sdk.TracerProvider):
        return None  # no provider records anyone's spans: nothing to nest under an agent
    return OtelJoin(int(own_trace_id, 16), None, TraceFlags(TraceFlags.SAMPLED))
