"""attribute_edges: one verdict per captured edge, walking Tier 1 -> Tier 2 -> Tier 3.

Every span is an edge from its graph parent (see traces.topology); a root span's edge is
written "root→agent" (parent None). Statuses: unchanged, drifted, regressed, path_changed,
iteration_count_changed, inconclusive (the texts differ and the judge could not decide).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from typing import Any

from prove_common.text import value_as_text
from proveai.cache import ResponseCache
from proveai.diff.grading import grade_outputs
from proveai.diff.tier1 import STRUCTURAL_KINDS, mask_volatile
from proveai.diff.tier2 import DEFAULT_REGRESSED, DEFAULT_UNCHANGED, CalibrationReport, load_calibration
from proveai.diff.verdict import ROOT, EdgeVerdict, Grade, Status, Tier
from proveai.providers.base import Provider
from proveai.providers.embedding import Embedder
from proveai.replay.engine import ReplayedSpan, ReplayedTrace
from proveai.traces.topology import Parents, bfs_order, graph_parents, parallel_groups
from proveai.traces.trace import Span, Trace

NewOutput = ReplayedSpan | Span
"""What a captured span is compared with: its replay, or the matching span of a fresh trace."""


def _held_reason(entry: NewOutput) -> str:
    """Why a span whose inputs changed upstream kept its recorded output."""
    note = str(getattr(entry, "note", "") or "")
    if note.startswith("not re-executed"):
        return f"inputs changed upstream; {note}"
    return "inputs changed upstream; no captured request to re-send, recorded output kept"


def _canonical(value: Any) -> str:
    return mask_volatile(" ".join(value_as_text(value).split()))


def _new_outputs(
    trace: Trace, replayed: ReplayedTrace | None, new_trace: Trace | None
) -> dict[str, NewOutput]:
    """span_id -> new output: from the ReplayedTrace, else matched by (agent, occurrence) in new_trace."""
    if replayed is not None:
        return {r.span_id: r for r in replayed.replayed_spans}
    out: dict[str, NewOutput] = {}
    if new_trace is None:
        return out
    fresh: dict[str, list[Span]] = defaultdict(list)
    for span in new_trace.spans:
        fresh[span.name].append(span)
    seen: Counter[str] = Counter()
    for span in trace.spans:
        index = seen[span.name]
        seen[span.name] += 1
        if index < len(fresh[span.name]):
            out[span.span_id] = fresh[span.name][index]
    return out


def attribute_edges(
    trace: Trace,
    replayed: ReplayedTrace | None,
    new_trace: Trace | None = None,
    embedder: Embedder | None = None,
    judge_provider: Provider | None = None,
    judge_model: str | None = None,
    cache: ResponseCache | None = None,
    calibration: CalibrationReport | None = None,
) -> list[EdgeVerdict]:
    """One EdgeVerdict per captured span (in BFS order), plus topology verdicts when `new_trace`
    shows a different path or loop count. Also assigned to `replayed.edge_verdicts`."""
    if calibration is None:
        calibration = load_calibration()
    embedder_model = getattr(embedder, "model", None)
    parents = graph_parents(trace)
    new_by_span = _new_outputs(trace, replayed, new_trace)
    overrides = set((getattr(replayed, "overrides", None) or {}).keys())
    verdicts: list[EdgeVerdict] = []
    skipped: set[str] = set()
    if new_trace is not None:
        verdicts.extend(_topology_verdicts(trace, new_trace, parents, skipped))
    settled = _parallel_matches(trace, parents, new_by_span)
    for span in bfs_order(trace, parents):
        if span.span_id in skipped:
            continue
        parent = parents.get(span.span_id)
        parent_name = parent.name if parent is not None else None
        entry = new_by_span.get(span.span_id)
        if entry is None:
            continue
        new_output = entry.new_output if hasattr(entry, "new_output") else entry.output
        inputs_changed = bool(getattr(entry, "inputs_changed", False))
        change = "direct edit" if span.name in overrides else ("downstream" if inputs_changed else None)
        if span.span_id in settled:
            grade = settled[span.span_id]
        elif getattr(entry, "held", None) == "selection":
            grade = Grade(Status.UNCHANGED, Tier.HELD, "held at the recorded output (not replayed live)")
        elif getattr(entry, "held", None) == "no_request" and inputs_changed:
            grade = Grade(Status.DRIFTED, Tier.HELD, _held_reason(entry), confidence=0.0)
        elif (
            getattr(entry, "held", None) == "no_request" and (span.kind or "").upper() not in STRUCTURAL_KINDS
        ):
            grade = Grade(
                Status.UNCHANGED,
                Tier.HELD,
                "not re-executed (no captured model request); inputs unchanged, recorded output kept",
            )
        else:
            thresholds = (
                calibration.thresholds_for(span.name, embedder_model)
                if calibration is not None
                else (DEFAULT_UNCHANGED, DEFAULT_REGRESSED)
            )
            grade = grade_outputs(
                span.output,
                new_output,
                span.kind,
                list(getattr(entry, "messages_sent", ()) or span.input_messages or []),
                embedder,
                judge_model,
                judge_provider,
                cache,
                thresholds=thresholds,
                name=span.name,
                old_inputs=span.inputs,
                new_inputs=getattr(entry, "inputs", None),
            )
        verdicts.append(
            EdgeVerdict(parent_name, span.name, span.span_id, grade, span.output, new_output, change)
        )
    if replayed is not None:
        replayed.edge_verdicts = verdicts
    return verdicts


def _parallel_matches(
    trace: Trace, parents: Parents, new_by_span: Mapping[str, NewOutput]
) -> dict[str, Grade]:
    """Parallel siblings are compared as an unordered set: a span whose new output equals some
    sibling's old output (each used once) is unchanged."""
    settled: dict[str, Grade] = {}
    for group in parallel_groups(trace, parents):
        unmatched_old = Counter(_canonical(s.output) for s in group)
        for span in group:
            entry = new_by_span.get(span.span_id)
            if entry is None:
                continue
            new_output = entry.new_output if hasattr(entry, "new_output") else entry.output
            key = _canonical(new_output)
            if unmatched_old[key] > 0:
                unmatched_old[key] -= 1
                settled[span.span_id] = Grade(
                    Status.UNCHANGED,
                    Tier.TIER1,
                    f"parallel siblings: output found in the set of {len(group)} (order ignored)",
                )
    return settled


def _topology_verdicts(
    trace: Trace, new_trace: Trace, parents: Parents, skipped: set[str]
) -> list[EdgeVerdict]:
    """path_changed per parent whose child set differs; iteration_count_changed per (parent, child)
    whose multiplicity differs. Spans under a diverged edge are added to `skipped`."""
    new_parents = graph_parents(new_trace)

    def edges(t: Trace, p: Parents) -> Counter[tuple[str | None, str]]:
        return Counter(
            ((above.name if (above := p.get(s.span_id)) is not None else None), s.name) for s in t.spans
        )

    old_edges, new_edges = edges(trace, parents), edges(new_trace, new_parents)
    children_old: dict[str | None, set[str]] = defaultdict(set)
    children_new: dict[str | None, set[str]] = defaultdict(set)
    for parent, child in old_edges:
        children_old[parent].add(child)
    for parent, child in new_edges:
        children_new[parent].add(child)
    verdicts: list[EdgeVerdict] = []
    diverged: set[tuple[str | None, str]] = set()
    old_agents = {s.name for s in trace.spans}
    new_agents = {s.name for s in new_trace.spans}
    for parent in sorted(set(children_old) | set(children_new), key=lambda p: p or ""):
        if parent is not None and not (parent in old_agents and parent in new_agents):
            continue  # inside a diverged subtree: its own parent's verdict already says so
        before, after = children_old.get(parent, set()), children_new.get(parent, set())
        if before != after:
            added, removed = sorted(after - before), sorted(before - after)
            what = " ".join([*(f"+{a}" for a in added), *(f"-{r}" for r in removed)])
            verdicts.append(
                EdgeVerdict(
                    parent,
                    (removed or added)[0],
                    "",
                    Grade(
                        Status.PATH_CHANGED, Tier.TOPOLOGY, f"children of {parent or ROOT} changed: {what}"
                    ),
                    sorted(before),
                    sorted(after),
                )
            )
            diverged.update((parent, child) for child in removed)
    for (parent, child), count in sorted(old_edges.items(), key=lambda kv: (kv[0][0] or "", kv[0][1])):
        new_count = new_edges.get((parent, child), 0)
        if new_count and new_count != count:
            verdicts.append(
                EdgeVerdict(
                    parent,
                    child,
                    "",
                    Grade(
                        Status.ITERATION_COUNT_CHANGED,
                        Tier.TOPOLOGY,
                        f"{parent or ROOT}→{child} ran {new_count} time(s), was {count}",
                    ),
                    count,
                    new_count,
                )
            )
            diverged.add((parent, child))
    if diverged:
        for span in bfs_order(trace, parents):
            above = parents.get(span.span_id)  # a Span; `parent` above holds an agent's name
            above_name = above.name if above is not None else None
            if (above_name, span.name) in diverged or (above is not None and above.span_id in skipped):
                skipped.add(span.span_id)
    return verdicts
