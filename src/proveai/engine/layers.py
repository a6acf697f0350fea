"""The detection layers, in stream order. Each reads the trace (and the baseline, if any) and
returns the diagnoses it found plus one summary line; none of them raises on odd input.

checks  - the checks the trace ran at capture time that said bad
errors  - spans that raised; a caller that only re-raised is linked to the agent that raised
loops   - an agent called more often than it usually is (the baseline's most, else a limit)
path    - parent->agent edges no known-good run has, or that most of them have and this lacks
judge   - the judge compares a flagged agent's output with a known-good one (opt-in, bounded)
The last stage, propagation, lives in engine.propagation.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from proveai.diff.judge import llm_judge
from proveai.engine.baseline import BaselineProfile
from proveai.engine.model import Diagnosis, severity_rank
from proveai.engine.taxonomy import LAYER_MODES
from proveai.traces.topology import edge_multiplicity, graph_parents, parallel_groups
from proveai.traces.trace import Span, Trace

MISSING_EDGE_SHARE = 0.5  # an edge most known-good runs take counts as expected


@dataclass(frozen=True)
class EngineSettings:
    """What the engine was started with (`proveai engine serve` options)."""

    baseline: BaselineProfile | None = None
    judge_model: str | None = None
    judge_max: int = 3
    max_iterations: int = 3


@dataclass
class Analysis:
    """One trace under analysis: what the layers found so far."""

    trace: Trace
    settings: EngineSettings
    diagnoses: list[Diagnosis] = field(default_factory=list)
    loops: list[dict[str, Any]] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class LayerOutcome:
    status: str  # flagged | clean | skipped
    summary: str
    findings: tuple[Diagnosis, ...] = ()


def _outcome(findings: list[Diagnosis], clean: str) -> LayerOutcome:
    if not findings:
        return LayerOutcome("clean", clean)
    agents = ", ".join(dict.fromkeys(d.agent_name for d in findings))
    return LayerOutcome("flagged", f"{len(findings)} finding(s) at {agents}", tuple(findings))


def _last_agent(trace: Trace) -> str | None:
    return max(trace.spans, key=lambda s: s.end_ns).name if trace.spans else None


def checks_layer(analysis: Analysis) -> LayerOutcome:
    trace = analysis.trace
    if not trace.check_results:
        return LayerOutcome("skipped", "no checks ran on this trace at capture time")
    findings = []
    for result in trace.check_results:
        if result.label != "bad":
            continue
        agent = result.agent or _last_agent(trace) or trace.name
        where = "" if result.agent else " (the check names no agent: the last agent to finish)"
        reason = f": {result.reason}" if result.reason else ""
        span = trace.span(agent)
        findings.append(Diagnosis(
            agent_name=agent, layer="checks", verdict="check failed", severity="high", confidence=1.0,
            failure_modes=(LAYER_MODES["checks"],), evidence=f"check {result.name} failed{reason}{where}",
            span_id=span.span_id if span else None,
        ))
    skipped = sum(r.label not in ("good", "bad") for r in trace.check_results)
    clean = f"{len(trace.check_results)} check(s) ran, none failed"
    clean += f" ({skipped} skipped)" if skipped else ""
    return _outcome(findings, clean)


def errors_layer(analysis: Analysis) -> LayerOutcome:
    trace = analysis.trace
    failed = [s for s in trace.spans if s.status == "error"]
    findings = []
    for span in failed:
        # a caller whose span failed with its callee's exact error only passed the exception on
        source = next(
            (c for c in trace.children(span) if c.status == "error" and c.error == span.error), None
        )
        where = f" in {span.source_file}" if span.source_file else ""
        if source is not None:
            diagnosis = Diagnosis(
                agent_name=span.name, layer="errors", verdict="re-raised", severity="high",
                confidence=1.0, failure_modes=(LAYER_MODES["errors"],),
                evidence=f"re-raised {span.error} from {source.name}", span_id=span.span_id,
                caused_by=source.name,
            )
        else:
            diagnosis = Diagnosis(
                agent_name=span.name, layer="errors", verdict="raised", severity="critical",
                confidence=1.0, failure_modes=(LAYER_MODES["errors"],),
                evidence=f"raised {span.error or 'an error'}{where}", span_id=span.span_id,
            )
            analysis.flags.append(f"exception:{span.name}")
        findings.append(diagnosis)
    return _outcome(findings, f"no span raised ({len(trace.spans)} span(s))")


def _sequential_calls(trace: Trace) -> Counter[str]:
    """Calls per agent, counting a group of overlapping (parallel) sibling calls once."""
    counts = Counter(span.name for span in trace.spans)
    for group in parallel_groups(trace, graph_parents(trace)):
        counts[group[0].name] -= len(group) - 1
    return counts


def _repeated_inputs(spans: list[Span]) -> int:
    keys = Counter(json.dumps(s.inputs, sort_keys=True, default=str) for s in spans)
    return max(keys.values()) if keys else 0


def loops_layer(analysis: Analysis) -> LayerOutcome:
    trace, settings = analysis.trace, analysis.settings
    baseline = settings.baseline
    findings = []
    for agent, calls in _sequential_calls(trace).items():
        usual = baseline.usual_calls(agent) if baseline else None
        limit = usual if usual is not None else settings.max_iterations
        spans = trace.spans_named(agent)
        if calls > 1:
            analysis.loops.append({"agent_name": agent, "iterations": calls, "usual": limit,
                                   "flagged": calls > limit})
        if calls <= limit:
            continue
        if usual is not None and baseline is not None:
            evidence = f"ran {calls} times; known-good runs ({baseline.name}) make at most {usual}"
            severity, confidence = "high", baseline.share_below(agent, calls)
        else:
            evidence = f"ran {calls} times; the limit without a baseline for it is {limit} (--max-iterations)"
            severity, confidence = "medium", 1.0
        same = _repeated_inputs(spans)
        if same > 1:
            evidence += f"; {same} calls had identical inputs"
        findings.append(Diagnosis(
            agent_name=agent, layer="loops", verdict="looped", severity=severity, confidence=confidence,
            failure_modes=(LAYER_MODES["loops"],), evidence=evidence, span_id=spans[-1].span_id,
        ))
    return _outcome(findings, "every agent ran within its usual count")


def path_layer(analysis: Analysis) -> LayerOutcome:
    baseline, trace = analysis.settings.baseline, analysis.trace
    if baseline is None:
        return LayerOutcome("skipped", "no baseline: start the engine with --baseline NAME")
    edges = set(edge_multiplicity(trace))
    ran = set(trace.agents)
    found: dict[str, list[tuple[str, float]]] = {}
    for parent, child in sorted(edges, key=lambda e: (e[0] or "", e[1])):
        if baseline.edge_share.get((parent, child), 0.0) == 0.0:
            caller = parent or child
            what = f"{parent} called {child}" if parent else f"{child} ran as an entry point"
            text = f"{what}, which none of {baseline.traces} known-good run(s) do"
            found.setdefault(caller, []).append((text, 1.0))
    for (parent, child), share in sorted(baseline.edge_share.items(), key=lambda e: (e[0][0] or "", e[0][1])):
        expected = share >= MISSING_EDGE_SHARE and (parent is None or parent in ran)
        if not expected or (parent, child) in edges:
            continue
        caller = parent or child
        what = f"{parent} did not call {child}" if parent else f"{child} did not run"
        found.setdefault(caller, []).append((f"{what}, as {share:.0%} of known-good runs do", share))
    findings = [
        Diagnosis(
            agent_name=agent, layer="path", verdict="path changed", severity="medium",
            confidence=max(c for _, c in items), failure_modes=(LAYER_MODES["path"],),
            evidence="; ".join(text for text, _ in items),
            span_id=(first.span_id if (first := trace.span(agent)) else None),
        )
        for agent, items in found.items()
    ]
    return _outcome(findings, f"same agent graph as the baseline {baseline.name}")


def judge_layer(analysis: Analysis) -> LayerOutcome:
    settings, trace = analysis.settings, analysis.trace
    if not settings.judge_model:
        return LayerOutcome("skipped", "off: start the engine with --judge-model MODEL to enable it")
    if settings.baseline is None:
        return LayerOutcome("skipped", "needs a baseline to compare with: --baseline NAME")
    strongest: dict[str, Diagnosis] = {}
    for d in analysis.diagnoses:
        known = strongest.get(d.agent_name)
        if known is None or severity_rank(d.severity) > severity_rank(known.severity):
            strongest[d.agent_name] = d
    if not strongest:
        return LayerOutcome("skipped", "nothing flagged to examine")
    ranked = sorted(strongest.values(), key=lambda d: -severity_rank(d.severity))
    notes, findings = [], []
    for d in ranked[: settings.judge_max]:
        spans = trace.spans_named(d.agent_name)
        span = spans[-1] if spans else None
        reference = settings.baseline.reference_span(span) if span is not None else None
        if span is None or reference is None:
            notes.append(f"{d.agent_name}: no known-good output to compare")
            continue
        verdict = llm_judge(span.input_messages, reference.output, span.output, model=settings.judge_model)
        notes.append(f"{d.agent_name}: {verdict['verdict']} ({verdict['rationale']})")
        if verdict["verdict"] == "worse":
            findings.append(Diagnosis(
                agent_name=d.agent_name, layer="judge", verdict="judged worse", severity=d.severity,
                confidence=float(verdict["confidence"]), failure_modes=d.failure_modes,
                evidence=f"judge {settings.judge_model}: {verdict['rationale']}", span_id=span.span_id,
            ))
    if len(ranked) > settings.judge_max:
        notes.append(f"{len(ranked) - settings.judge_max} more flagged agent(s) not judged (--judge-max)")
    summary = "; ".join(notes)
    return LayerOutcome("flagged" if findings else "clean", summary, tuple(findings))
