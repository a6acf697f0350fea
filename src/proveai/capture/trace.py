"""The live trace: `with trace("svc", exporters=..., checks=...) as t:` around one pipeline run.

`LiveTrace` is the session users open (`proveai.trace()` returns one; `proveai.Trace(...)`
builds one too, as the SDK readme writes it). It subclasses the record `proveai.Trace`
(proveai.traces.trace), so the object a pipeline gets back and the one `load_trace` returns
are both a `proveai.Trace` and answer the same questions. On exit: checks run in order (a
failing or raising check is recorded, never raised), the composite outcome is computed, then
exporters fire (this trace's, then the global ones) and the spans go to an OpenTelemetry
TracerProvider if one is installed.
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

    _episode: EpisodeRecorder | None = None  # set while open inside a sweep episode

    def __init__(
        self,
        name: str = "proveai",
        exporters: Sequence[Exporter] | None = None,
        checks: Sequence[CheckLike] | None = None,
    ) -> None:
        super().__init__(name)
        self.trace_id = os.urandom(16).hex()
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
            self._episode = RECORDER
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
        if self._episode is not None:
            label_checks(builders, self.check_results)
            self._episode = None
        self._export()

    async def __aenter__(self) -> Self:
        return self.__enter__()

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        self.__exit__(exc_type, exc, tb)

    def _run_checks(self) -> None:
        self.check_results = []
        for check in self._checks:  # appended one by one: triggers read earlier results via passed()
            self.check_results.append(run_check(check, self))
        self.outcome = composite_outcome(self.check_results) if self._checks else None

    def _export(self) -> None:
        for exporter in [*self._exporters, *global_exporters()]:
            try:
                exporter.export(self)
            except Exception as exc:  # an exporter failing must not break the user's pipeline
                message = f"exporter {type(exporter).__name__} failed: {type(exc).__name__}: {exc}"
                self.export_errors.append(message)
                warnings.warn(f"proveai: {message}", RuntimeWarning, stacklevel=3)
        try:
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
