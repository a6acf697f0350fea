"""Running the layers on one trace, building the AnalyzeResponse, writing it to the store.

`stages(analysis)` yields one LayerResult per layer as it finishes (the server streams each
as an SSE event); `respond` builds the final response; `analyze` does all of it at once.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from proveai.capture.exporters import FileExporter
from proveai.engine.layers import (
    Analysis,
    EngineSettings,
    LayerOutcome,
    checks_layer,
    errors_layer,
    judge_layer,
    loops_layer,
    path_layer,
)
from proveai.engine.model import LAYERS, AnalyzeResponse, LayerResult, PropagationLink
from proveai.engine.propagation import propagate
from proveai.store.traces.index import append_entry, manifest_entry
from proveai.store.traces.outcomes import Detection, detection_status, write_detection
from proveai.traces.trace import Trace

FINDING_LAYERS = {
    "checks": checks_layer, "errors": errors_layer, "loops": loops_layer,
    "path": path_layer, "judge": judge_layer,
}


@dataclass(frozen=True)
class Identity:
    """Who sent the trace (the client's X-Prove-* headers)."""

    run_id: str | None = None
    customer_id: str | None = None
    mas_name: str | None = None


@dataclass
class Run:
    """One trace's analysis in progress."""

    analysis: Analysis
    layers: list[LayerResult] = field(default_factory=list)
    links: list[PropagationLink] = field(default_factory=list)


def stages(run: Run) -> Iterator[LayerResult]:
    """Run every layer in order, yielding each one's result as soon as it is known."""
    for index, name in enumerate(LAYERS, start=1):
        started = time.perf_counter()
        if name == "propagation":
            outcome, run.links = propagate(run.analysis)
        else:
            outcome = _guarded(name, run.analysis)
            run.analysis.diagnoses.extend(outcome.findings)
        result = LayerResult(
            layer=index, name=name, status=outcome.status, summary=outcome.summary,
            findings=len(outcome.findings), duration_ms=round((time.perf_counter() - started) * 1000, 3),
        )
        run.layers.append(result)
        yield result


def _guarded(name: str, analysis: Analysis) -> LayerOutcome:
    # one layer tripping over an odd trace must not cost the other layers' findings
    try:
        return FINDING_LAYERS[name](analysis)
    except Exception as exc:
        return LayerOutcome("skipped", f"layer failed on this trace: {type(exc).__name__}: {exc}")


def status_of(detected: bool, trace: Trace) -> str:
    """flagged when the engine found something; else the capture-time status (clean/suspect)."""
    return "flagged" if detected else detection_status(trace.outcome)


def respond(run: Run, identity: Identity, stored: str | None) -> AnalyzeResponse:
    analysis = run.analysis
    detected = bool(analysis.diagnoses)
    baseline = analysis.settings.baseline
    return AnalyzeResponse(
        trace_id=analysis.trace.trace_id, detected=detected, status=status_of(detected, analysis.trace),
        diagnoses=tuple(analysis.diagnoses), propagation=tuple(run.links), layers=tuple(run.layers),
        loops=tuple(analysis.loops), execution_flags=tuple(analysis.flags),
        run_id=identity.run_id, customer_id=identity.customer_id, mas_name=identity.mas_name,
        baseline=baseline.name if baseline else None, stored=stored,
    )


def analyze(
    trace: Trace, settings: EngineSettings, identity: Identity, store: Path | None
) -> AnalyzeResponse:
    """All layers on one trace, written to `store` when given."""
    run = Run(Analysis(trace, settings))
    for _ in stages(run):
        pass
    return respond(run, identity, store_safely(store, run))


def store_safely(store: Path | None, run: Run) -> str | None:
    """The detection file written, or None; a store that cannot be written costs the write,
    not the analysis: the response says so in execution_flags."""
    if store is None:
        return None
    try:
        return str(persist(store, run))
    except OSError as exc:
        run.analysis.flags.append(f"store: could not write to {store}: {exc.strerror or exc}")
        return None


def persist(store: Path, run: Run) -> Path:
    """Write the trace (if the store lacks it), its Detection JSON and its index entry.

    The Detection has the FileExporter's shape; `fired` holds one item per engine diagnosis
    (name = layer, plus the MAST mode, severity and confidence) and the capture-time checks
    that were skipped, so `proveai status --filter detection=flagged` lists flagged traces.
    """

    trace = run.analysis.trace
    store.mkdir(parents=True, exist_ok=True)
    if not (store / f"{trace.trace_id}.json").exists():
        FileExporter(store).export(trace)
    skipped_checks = [item for item in Detection.of(trace).fired if item.get("label") != "bad"]
    fired = [
        {
            "name": d.layer, "agent": d.agent_name, "label": "bad", "reason": d.evidence,
            "source": "engine", "verdict": d.verdict, "failure_modes": list(d.failure_modes),
            "severity": d.severity, "confidence": d.confidence, "root_cause_agent": d.root_cause_agent,
        }
        for d in run.analysis.diagnoses
    ]
    status = status_of(bool(fired), trace)
    detection = Detection(
        trace.trace_id, status, trace.outcome, tuple(fired + skipped_checks), len(trace.check_results)
    )
    path = write_detection(store, detection)
    entry = manifest_entry(trace)
    entry["detection"] = status
    append_entry(store, trace.trace_id, entry)
    return path
