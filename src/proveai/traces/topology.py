"""The captured topology: each span's graph parent, BFS order, parallel sibling groups.

A span's parent is the span named by its parent_span_id when that span is in the trace
(real call nesting); else, when the agent declared `parent_agent`, the latest span of that
agent that started before it (the declared edge, for pipelines that call agents one after
another); else none (a root).
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Mapping

from proveai.traces.trace import Span, Trace

Parents = Mapping[str, Span | None]
"""span_id -> the span's graph parent, or None for a root (what graph_parents returns)."""


def graph_parents(trace: Trace) -> dict[str, Span | None]:
    """span_id -> parent Span or None."""
    by_id = {s.span_id: s for s in trace.spans}
    parents: dict[str, Span | None] = {}
    for span in trace.spans:
        parent = by_id.get(span.parent_span_id) if span.parent_span_id else None
        if parent is None and span.parent_agent:
            earlier = [
                s for s in trace.spans
                if s.name == span.parent_agent and s.span_id != span.span_id and s.start_ns <= span.start_ns
            ]
            parent = earlier[-1] if earlier else None
        parents[span.span_id] = parent
    return parents


def bfs_order(trace: Trace, parents: Parents | None = None) -> list[Span]:
    """Spans parent-first (breadth first from the roots), ties in start order."""
    parents = parents if parents is not None else graph_parents(trace)
    children: dict[str | None, list[Span]] = defaultdict(list)
    for span in trace.spans:
        parent = parents.get(span.span_id)
        children[parent.span_id if parent is not None else None].append(span)
    order: list[Span] = []
    seen: set[str] = set()
    queue: deque[Span] = deque(children[None])
    while queue:
        span = queue.popleft()
        if span.span_id in seen:
            continue
        seen.add(span.span_id)
        order.append(span)
        queue.extend(children[span.span_id])
    order.extend(s for s in trace.spans if s.span_id not in seen)  # cycles cannot occur; defensive
    return order


def depth_of(span: Span, parents: Parents) -> int:
    depth, seen = 0, set()
    parent = parents.get(span.span_id)
    while parent is not None and parent.span_id not in seen:
        seen.add(parent.span_id)
        depth += 1
        parent = parents.get(parent.span_id)
    return depth


def parallel_groups(trace: Trace, parents: Parents) -> list[list[Span]]:
    """Groups (size >= 2) of same-agent siblings whose [start, end] intervals all overlap."""
    by_key: dict[tuple[str | None, str], list[Span]] = defaultdict(list)
    for span in trace.spans:
        parent = parents.get(span.span_id)
        by_key[(parent.span_id if parent is not None else None, span.name)].append(span)
    groups = []
    for spans in by_key.values():
        if len(spans) >= 2 and max(s.start_ns for s in spans) < min(s.end_ns for s in spans):
            groups.append(spans)
    return groups


def edge_multiplicity(trace: Trace) -> dict[tuple[str | None, str], int]:
    """(parent agent or None, child agent) -> number of spans on that edge."""
    parents = graph_parents(trace)
    counts: dict[tuple[str | None, str], int] = defaultdict(int)
    for span in trace.spans:
        parent = parents.get(span.span_id)
        counts[(parent.name if parent is not None else None, span.name)] += 1
    return dict(counts)
