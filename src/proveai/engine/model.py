"""What the engine returns: AnalyzeResponse, its diagnoses, propagation links and layer results.

Plain dataclasses with to_dict / from_dict, so the same objects travel as JSON over HTTP and
come back typed in the client.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

SEVERITIES = ("critical", "high", "medium", "low")
LAYERS = ("checks", "errors", "loops", "path", "judge", "propagation")


def severity_rank(severity: str) -> int:
    """critical 4 ... low 1; unknown 0 (so `at least` comparisons are plain integers)."""
    return len(SEVERITIES) - SEVERITIES.index(severity) if severity in SEVERITIES else 0


@dataclass(frozen=True)
class Diagnosis:
    """One failure the engine found at one agent, by one layer."""

    agent_name: str
    layer: str
    verdict: str  # short: "check failed", "raised", "re-raised", "looped", "path changed", "judged worse"
    severity: str
    confidence: float
    failure_modes: tuple[str, ...]
    evidence: str
    root_cause: str = ""  # sentence: the root-cause agent of this failure and why
    root_cause_agent: str = ""
    span_id: str | None = None
    caused_by: str | None = None  # an agent this failure is known to come from (a re-raise)

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["failure_modes"] = list(self.failure_modes)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Diagnosis:
        known = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        values["failure_modes"] = tuple(values.get("failure_modes") or ())
        return cls(**values)


@dataclass(frozen=True)
class PropagationLink:
    """One agent on a failure's path: the root cause (first) or an agent it affected."""

    agent_name: str
    role: str  # root_cause | propagated
    parent_agent: str | None  # the agent this link's failure came from (None for a root cause)
    root_cause_agent: str
    severity: str
    confidence: float
    failure_modes: tuple[str, ...]
    evidence: tuple[str, ...]
    remediation: dict[str, str] = field(default_factory=dict)  # MAST code -> hint

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["failure_modes"] = list(self.failure_modes)
        data["evidence"] = list(self.evidence)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PropagationLink:
        known = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        values["failure_modes"] = tuple(values.get("failure_modes") or ())
        values["evidence"] = tuple(values.get("evidence") or ())
        values["remediation"] = dict(values.get("remediation") or {})
        return cls(**values)


@dataclass(frozen=True)
class LayerResult:
    """One detection stage as it ran on one trace."""

    layer: int
    name: str
    status: str  # flagged | clean | skipped
    summary: str
    findings: int = 0
    duration_ms: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LayerResult:
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


@dataclass(frozen=True)
class AnalyzeResponse:
    """The engine's verdict on one trace (also set as `trace.result` by the client)."""

    trace_id: str
    detected: bool
    status: str  # flagged | suspect | clean: the status written to the store
    diagnoses: tuple[Diagnosis, ...] = ()
    propagation: tuple[PropagationLink, ...] = ()
    layers: tuple[LayerResult, ...] = ()
    loops: tuple[dict[str, Any], ...] = ()  # {agent_name, iterations, usual}
    execution_flags: tuple[str, ...] = ()
    run_id: str | None = None
    customer_id: str | None = None
    mas_name: str | None = None
    baseline: str | None = None
    stored: str | None = None  # the detection file the engine wrote, if any
    events: tuple[dict[str, Any], ...] = ()  # the stream's stage events, in arrival order

    @property
    def num_diagnoses(self) -> int:
        return len(self.diagnoses)

    @property
    def root_causes(self) -> list[PropagationLink]:
        return [link for link in self.propagation if link.role == "root_cause"]

    @property
    def remediation(self) -> dict[str, str]:
        """The first root cause's hints (MAST code -> hint); {} when nothing was detected."""
        roots = self.root_causes
        return dict(roots[0].remediation) if roots else {}

    def to_dict(self) -> dict[str, Any]:
        return {
            "trace_id": self.trace_id, "detected": self.detected, "status": self.status,
            "num_diagnoses": self.num_diagnoses,
            "diagnoses": [d.to_dict() for d in self.diagnoses],
            "propagation": [p.to_dict() for p in self.propagation],
            "layers": [layer.to_dict() for layer in self.layers],
            "loops": [dict(loop) for loop in self.loops],
            "execution_flags": list(self.execution_flags),
            "run_id": self.run_id, "customer_id": self.customer_id, "mas_name": self.mas_name,
            "baseline": self.baseline, "stored": self.stored,
            "remediation": self.remediation,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], events: tuple[dict[str, Any], ...] = ()) -> AnalyzeResponse:
        return cls(
            trace_id=str(data["trace_id"]), detected=bool(data["detected"]),
            status=str(data.get("status", "flagged" if data["detected"] else "suspect")),
            diagnoses=tuple(Diagnosis.from_dict(d) for d in data.get("diagnoses") or ()),
            propagation=tuple(PropagationLink.from_dict(p) for p in data.get("propagation") or ()),
            layers=tuple(LayerResult.from_dict(x) for x in data.get("layers") or ()),
            loops=tuple(dict(x) for x in data.get("loops") or ()),
            execution_flags=tuple(data.get("execution_flags") or ()),
            run_id=data.get("run_id"), customer_id=data.get("customer_id"),
            mas_name=data.get("mas_name"), baseline=data.get("baseline"), stored=data.get("stored"),
            events=events,
        )

    def filtered(self, severity: str | None, min_confidence: float) -> AnalyzeResponse:
        """This response keeping only diagnoses and links at least `severity` and `min_confidence`."""
        floor = severity_rank(severity) if severity else 0

        def keep(item: Diagnosis | PropagationLink) -> bool:
            return severity_rank(item.severity) >= floor and item.confidence >= min_confidence

        return dataclasses.replace(
            self,
            diagnoses=tuple(d for d in self.diagnoses if keep(d)),
            propagation=tuple(p for p in self.propagation if keep(p)),
        )
