"""The trace model: Span (one monitored call) and Trace (the spans of one pipeline run).

`Trace` is both the live context manager (`with trace("svc", exporters=..., checks=...)`) and
the closed object `load_trace` returns, so every reader codes against one class.
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from proveai.capture._context import FRAME

if TYPE_CHECKING:
    from proveai.capture.checks import CheckResult

KINDS = (
    "CHAIN", "AGENT", "TOOL", "LLM", "CHAT_MODEL", "RETRIEVER", "RERANKER",
    "EMBEDDING", "PARSER", "MEMORY", "UNKNOWN",
)
OPERATIONS = ("invoke_agent", "chat", "execute_tool")
LABELS = ("good", "bad", "skip")


@dataclass(frozen=True, slots=True)
class Span:
    """One finished monitored call, as captured and as read back from OTLP JSON."""

    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    operation: str
    kind: str
    model: str | None
    version: str | None
    parent_agent: str | None
    description: str | None
    source_file: str | None
    start_ns: int
    end_ns: int
    status: str
    error: str | None
    inputs: dict[str, Any]
    output: Any
    input_messages: list[dict[str, Any]] | None = None
    output_messages: list[dict[str, Any]] | None = None
    usage: dict[str, int] | None = None
    request: dict[str, Any] | None = None
    attributes: dict[str, Any] = field(default_factory=dict)
    code_hash: str | None = None  # sha256 of the monitored function's source (code identity)
    function: str | None = None  # "module:qualname" of the monitored function (replay re-invokes it)

    @property
    def duration_ms(self) -> float:
        return (self.end_ns - self.start_ns) / 1e6

    @property
    def prompt(self) -> str | None:
        """The system message the agent sent to its model, if it called one through proveai."""
        for message in self.input_messages or ():
            if message.get("role") == "system":
                content = message.get("content")
                return content if isinstance(content, str) else None
        return None


class Trace:
    """The spans of one pipeline run; a context manager while live, a plain record once closed.

    On exit: checks run in order (a failing or raising check is recorded, never raised), the
    composite outcome is computed, then exporters fire (this trace's, then the global ones).
    """

    result: Any = None  # the engine's AnalyzeResponse once ProveAI.analyze has run on this trace

    def __init__(
        self,
        name: str = "proveai",
        exporters: Sequence[Any] | None = None,
        checks: Sequence[Any] | None = None,
    ) -> None:
        self.trace_id: str = os.urandom(16).hex()
        self.name = name
        self.service_name = name
        self.spans: list[Span] = []
        self.invocation: dict[str, Any] | None = None
        self.check_results: list[CheckResult] = []
        self.outcome: str | None = None
        self.started_ns: int = 0
        self.ended_ns: int = 0
        self.resource: dict[str, Any] = {"service.name": name}
        self.export_errors: list[str] = []
        self._exporters = list(exporters or ())
        self._checks = list(checks or ())
        self._builders: list[Any] = []  # live span builders, in start order
        self._token: Any = None
        self._closed = False
        # frame protocol shared with span builders (see capture.monitor)
        self._owner = self
        self._span_id: str | None = None

    # ---- live use -------------------------------------------------------------------------
    def __enter__(self) -> Trace:
        from proveai.capture.invocation import capture_invocation

        if self._closed:
            raise RuntimeError("this Trace is closed; open a new one with trace(...)")
        self.invocation = capture_invocation()
        self.started_ns = time.time_ns()
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
        self.spans = sorted(
            (builder.freeze(self.ended_ns) for builder in list(self._builders)),
            key=lambda span: span.start_ns,
        )
        self._builders = []
        self._run_checks()
        self._export()

    async def __aenter__(self) -> Trace:
        return self.__enter__()

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        self.__exit__(exc_type, exc, tb)

    def _run_checks(self) -> None:
        from proveai.capture.checks import composite_outcome, run_check

        self.check_results = []
        for check in self._checks:  # appended one by one: triggers read earlier results via passed()
            self.check_results.append(run_check(check, self))
        self.outcome = composite_outcome(self.check_results) if self._checks else None

    def _export(self) -> None:
        from proveai.capture.exporters import global_exporters
        from proveai.capture.otlp import send_to_tracer_provider

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

    # ---- reading --------------------------------------------------------------------------
    @classmethod
    def closed(
        cls,
        *,
        trace_id: str,
        name: str,
        service_name: str,
        spans: Iterable[Span],
        invocation: dict[str, Any] | None,
        check_results: Iterable[CheckResult] = (),
        outcome: str | None = None,
        started_ns: int = 0,
        ended_ns: int = 0,
        resource: dict[str, Any] | None = None,
    ) -> Trace:
        """A closed trace built from stored data (what load_trace returns)."""
        built = cls(name)
        built.trace_id = trace_id
        built.service_name = service_name
        built.spans = sorted(spans, key=lambda span: span.start_ns)
        built.invocation = invocation
        built.check_results = list(check_results)
        built.outcome = outcome
        built.started_ns = started_ns or min((s.start_ns for s in built.spans), default=0)
        built.ended_ns = ended_ns or max((s.end_ns for s in built.spans), default=0)
        built.resource = dict(resource or {"service.name": service_name})
        built._closed = True
        return built

    def span(self, name: str) -> Span | None:
        """The first span of agent `name`, or None."""
        return next((s for s in self.spans if s.name == name), None)

    def spans_named(self, name: str) -> list[Span]:
        return [s for s in self.spans if s.name == name]

    def children(self, span: Span) -> list[Span]:
        return [s for s in self.spans if s.parent_span_id == span.span_id]

    def roots(self) -> list[Span]:
        ids = {s.span_id for s in self.spans}
        return [s for s in self.spans if s.parent_span_id is None or s.parent_span_id not in ids]

    def passed(self, check_name: str) -> bool:
        """True when check `check_name` ran and every result of that name is good."""
        results = [r for r in self.check_results if r.name == check_name]
        return bool(results) and all(r.label == "good" for r in results)

    @property
    def agents(self) -> list[str]:
        return list(dict.fromkeys(s.name for s in self.spans))

    @property
    def versions(self) -> list[str]:
        return list(dict.fromkeys(s.version for s in self.spans if s.version))

    @property
    def version(self) -> str | None:
        """The trace's version: the first version any of its agents declared."""
        versions = self.versions
        return versions[0] if versions else None

    @property
    def duration_ms(self) -> float:
        return (self.ended_ns - self.started_ns) / 1e6

    def __repr__(self) -> str:
        return (
            f"Trace({self.name!r}, trace_id={self.trace_id!r}, spans={len(self.spans)}, "
            f"outcome={self.outcome!r})"
        )


def trace(
    name: str = "proveai",
    exporters: Sequence[Any] | None = None,
    checks: Sequence[Any] | None = None,
) -> Trace:
    """Open a trace: `with trace("svc", exporters=[FileExporter()], checks=[...]) as t:`."""
    return Trace(name, exporters=exporters, checks=checks)


def current_trace() -> Trace | None:
    """The trace open in this context, or None."""
    frame = FRAME.get()
    return None if frame is None else frame._owner


TraceFilter = Callable[[Trace], bool]
