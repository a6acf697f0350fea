"""The trace record: Span (one monitored call), Trace (the spans of one pipeline run), CheckResult.

This is the data every reader codes against: `Trace` is `proveai.Trace`, the type `load_trace`
returns, and the live session `proveai.capture.LiveTrace` (what `proveai.trace()` returns) is
a subclass that fills one in while the pipeline runs. Nothing here runs checks or exporters,
so readers of stored traces never import the machinery that writes them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, Self

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
    reads: tuple[str, ...] | None = None  # project files the call opened for reading; None: not tracked
    imports: tuple[str, ...] | None = None  # project modules the agent's module imports; None: not tracked

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


@dataclass(frozen=True, slots=True)
class CheckResult:
    """One check's verdict on one trace."""

    name: str
    label: str  # good | bad | skip (warn is accepted and counts as skip in the composite)
    score: float | None = None
    reason: str | None = None
    agent: str | None = None

    @property
    def passed(self) -> bool:
        return self.label == "good"


class FailureLink(Protocol):
    """One agent on a failure's path, as the engine reports it (proveai.engine's PropagationLink)."""

    @property
    def agent_name(self) -> str: ...
    @property
    def role(self) -> str: ...  # root_cause | propagated
    @property
    def severity(self) -> str: ...
    @property
    def confidence(self) -> float: ...
    @property
    def remediation(self) -> Mapping[str, str]: ...  # MAST code -> hint


class EngineStage(Protocol):
    """One detection stage as it ran on the trace (proveai.engine's LayerResult)."""

    @property
    def name(self) -> str: ...
    @property
    def status(self) -> str: ...  # flagged | clean | skipped
    @property
    def summary(self) -> str: ...


class EngineResult(Protocol):
    """What `Trace.result` holds once the detection engine has analyzed the trace.

    proveai.engine's AnalyzeResponse is the one implementation; the engine sits above the
    trace record, so the record names what it reads of the response here.
    """

    @property
    def trace_id(self) -> str: ...
    @property
    def detected(self) -> bool: ...
    @property
    def status(self) -> str: ...  # flagged | suspect | clean
    @property
    def num_diagnoses(self) -> int: ...
    @property
    def propagation(self) -> Sequence[FailureLink]: ...
    @property
    def layers(self) -> Sequence[EngineStage]: ...
    @property
    def remediation(self) -> Mapping[str, str]: ...

    def to_dict(self) -> dict[str, Any]: ...


class Trace:
    """The spans of one pipeline run, with its check results and composite outcome.

    A closed record: built by `Trace.closed(...)` from stored data (what load_trace returns),
    or filled in by the live subclass proveai.capture.LiveTrace while the pipeline runs.

    Called to open a trace, as the SDK readme does (`with Trace(exporters=[...]) as t:`),
    `Trace(...)` builds that live subclass, as `pathlib.Path(...)` builds a `PosixPath`: the
    capture layer declares it (`class LiveTrace(Trace, live=True)`), since this layer may not
    import it. `proveai.Trace` loads the capture layer, so the public name always opens one.
    """

    result: EngineResult | None = None  # the engine's AnalyzeResponse once ProveAI.analyze has run on it
    _live: ClassVar[type[Trace] | None] = None  # what `Trace(...)` builds: the live session

    def __init_subclass__(cls, *, live: bool = False, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if live:
            Trace._live = cls

    def __new__(cls, *args: Any, **kwargs: Any) -> Trace:
        return _bare(Trace._live if cls is Trace and Trace._live is not None else cls)

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        # a record copies and pickles as itself: rebuilding it through Trace.__new__ would
        # make it a live trace
        return (_bare, (type(self),), self.__dict__)

    def __init__(
        self,
        name: str = "proveai",
        exporters: Sequence[Any] | None = None,
        checks: Sequence[Any] | None = None,
    ) -> None:
        if exporters or checks:  # only a live trace runs them; never silently dropped
            raise TypeError("exporters and checks run in a live trace: open one with proveai.trace(...)")
        self.trace_id: str = ""
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

    @property
    def is_closed(self) -> bool:
        """True once the record is complete (always, for a trace read back from the store)."""
        return True

    def __enter__(self) -> Trace:
        raise RuntimeError("this Trace is closed; open a new one with trace(...)")

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        return None

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
    ) -> Self:
        """A closed trace built from stored data (what load_trace returns)."""
        built = _bare(cls)  # not cls(name): Trace(...) opens a live trace
        built.__init__(name)
        built.trace_id = trace_id
        built.service_name = service_name
        built.spans = sorted(spans, key=lambda span: span.start_ns)
        built.invocation = invocation
        built.check_results = list(check_results)
        built.outcome = outcome
        built.started_ns = started_ns or min((s.start_ns for s in built.spans), default=0)
        built.ended_ns = ended_ns or max((s.end_ns for s in built.spans), default=0)
        built.resource = dict(resource or {"service.name": service_name})
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


def _bare(cls: type[Trace]) -> Any:
    """An instance of `cls` made without `Trace.__new__`'s choice of the live subclass."""
    return object.__new__(cls)


TraceFilter = Callable[[Trace], bool]
