"""The live trace: `with trace("svc", exporters=..., checks=...) as t:` around one pipeline run.

`LiveTrace` is the session users open (`proveai.trace()` returns one; `proveai.Trace(...)`
builds one too, as the SDK readme writes it). It subclasses the record `proveai.Trace`
(proveai.traces.trace), so the object a pipeline gets back and the one `load_trace` returns
are both a `proveai.Trace` and answer the same questions. On exit: checks run in order (a
failing or raising check is recorded, never raised), the composite outcome is computed, then
exporters fire (this trace's, then the global ones) and the spans go to an OpenTelemetry
TracerProvider if one is installed. Opened while OpenTelemetry is in use, the trace joins the
active OpenTelemetry trace (capture.otel): its spans carry that trace's id (`span_trace_id`)
and nest under the span active where each top-level agent is called.
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Self

from proveai.capture.checking import CheckLike, composite_outcome, run_check
from proveai.capture.episode import RECORDER, EpisodeRecorder, label_checks, recording_here
from proveai.capture.exporters import Exporter, global_exporters
from proveai.capture.invocation import capture_invocation
from proveai.capture.otel import OtelJoin, join
from proveai.capture.reads import install as install_read_tracking
from proveai.traces.context import FRAME
from proveai.traces.otlp import send_to_tracer_provider
from proveai.traces.trace import Trace

if TYPE_CHECKING:
    from proveai.capture.monitor import SpanBuilder

__all__ = ["LiveTrace", "Trace", "current_trace", "trace"]


class LiveTrace(Trace, live=True):
    """The spans of one pipeline run; a context manager while live, a plain record once closed.

    Opened inside a sweep episode, its calls are recorded into the episode too, and its checks'
    labels are set on those spans when it closes (capture.episode)."""

    # set while open: where its monitored calls also go (a sweep episode's recorder), or what
    # makes them OpenTelemetry's current spans (capture.otel); None: the wrappers' own path
    _recorder: EpisodeRecorder | OtelJoin | None = None

    def __init__(
        self,
        name: str = "proveai",
        exporters: Sequence[Exporter] | None = None,
        checks: Sequence[CheckLike] | None = None,
    ) -> None:
        super().__init__(name)
        self.trace_id = os.urandom(16).hex()
        self.span_trace_id = self.trace_id  # the id its spans carry: the OpenTelemetry trace's once joined
        self._exporters = list(exporters or ())
        self._checks = list(checks or ())
        self._builders: list[SpanBuilder] = []  # live span builders, in start order
        self._token: Any = None
        self._closed = False
        # frame protocol shared with span builders (see capture.monitor)
        self._owner = self
        self._span_id: str | None = None

    @property
    def is_closed(self) -> bool:
        return self._closed

    @classmethod
    def closed(cls, **fields: Any) -> Self:
        built = super().closed(**fields)
        built._closed = True
        return built

    def __enter__(self) -> Self:
        if self._closed:
            raise RuntimeError("this Trace is closed; open a new one with trace(...)")
        self.invocation = capture_invocation()
        install_read_tracking()  # once per process: the files agent calls open (capture.reads)
        self.started_ns = time.time_ns()
        if recording_here():  # inside a sweep episode: its calls are recorded there too
            self._recorder = RECORDER
        else:
            joined = join(self.trace_id)  # None unless OpenTelemetry is in use (never imports it)
            if joined is not None:
                self._recorder = joined
                self.span_trace_id = f"{joined.trace_id:032x}"
                self._span_id = None if joined.parent is None else f"{joined.parent:016x}"
        self._token = FRAME.set(self)
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        self.ended_ns = time.time_ns()
        try:
            FRAME.reset(self._token)
        except ValueError:  # exited in another context than entered (e.g. another task)
            FRAME.set(None)
        self._token = None
        self._closed = True
        builders = list(self._builders)
        self.spans = sorted(
            (builder.freeze(self.ended_ns) for builder in builders), key=lambda span: span.start_ns
        )
        self._builders = []
        self._run_checks()
        recorder, self._recorder = self._recorder, None
        if isinstance(recorder, EpisodeRecorder):
            label_checks(builders, self.check_results)
        self._export(sampled=not isinstance(recorder, OtelJoin) or recorder.sampled)

    async def __aenter__(self) -> Self:
        return self.__enter__()

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        self.__exit__(exc_type, exc, tb)

    def _run_checks(self) -> None:
        self.check_results = []
        for check in self._checks:  # appended one by one: triggers read earlier results via passed()
            self.check_results.append(run_check(check, self))
        self.outcome = composite_outcome(self.check_results) if self._checks else None

    def _export(self, sampled: bool = True) -> None:
        for exporter in [*self._exporters, *global_exporters()]:
            try:
                exporter.export(self)
            except Exception as exc:  # an exporter failing must not break the user's pipeline
                message = f"exporter {type(exporter).__name__} failed: {type(exc).__name__}: {exc}"
                self.export_errors.append(message)
                warnings.warn(f"proveai: {message}", RuntimeWarning, stacklevel=3)
        try:
            if sampled:  # joined to a trace the provider's sampler dropped: so are these spans
                send_to_tracer_provider(self)
        except Exception as exc:
            message = f"OpenTelemetry TracerProvider export failed: {type(exc).__name__}: {exc}"
            self.export_errors.append(message)
            warnings.warn(f"proveai: {message}", RuntimeWarning, stacklevel=3)


def trace(
    name: str = "proveai",
    exporters: Sequence[Exporter] | None = None,
    checks: Sequence[CheckLike] | None = None,
) -> LiveTrace:
    """Open a trace: `with trace("svc", exporters=[FileExporter()], checks=[...]) as t:`."""
    return LiveTrace(name, exporters=exporters, checks=checks)


def current_trace() -> LiveTrace | None:
    """The trace open in this context, or None."""
    frame = FRAME.get()
    owner = None if frame is None else frame._owner
    return owner if isinstance(owner, LiveTrace) else None  # not the frame of a sweep episode
