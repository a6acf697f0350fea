"""The last stage: walk the agent graph from each failure back to the agent it started at.

A flagged agent's failure is attributed to a flagged agent upstream of it in the agent graph
(the caller that fed it), or, for a re-raised exception, to the callee that raised. Agents
whose failure has no flagged source are root causes; the others are listed after their root
cause as `propagated`. Root causes come most severe first, so propagation[0] is the one to fix.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict

from proveai.engine.layers import Analysis, LayerOutcome
from proveai.engine.model import Diagnosis, PropagationLink, severity_rank
from proveai.engine.taxonomy import label, remediation
from proveai.traces.topology import graph_parents
from proveai.traces.trace import Trace


def agent_graph(trace: Trace) -> dict[str, set[str]]:
    """agent -> the agents that called it (its graph parents, over all its spans)."""
    parents: dict[str, set[str]] = defaultdict(set)
    by_id = {s.span_id: s for s in trace.spans}
    for span_id, parent in graph_parents(trace).items():
        span = by_id[span_id]
        if parent is not None and parent.name != span.name:
            parents[span.name].add(parent.name)
    return parents


def _ancestors(agent: str, parents: dict[str, set[str]]) -> set[str]:
    seen: set[str] = set()
    stack = list(parents.get(agent, ()))
    while stack:
        current = stack.pop()
        if current not in seen:
            seen.add(current)
            stack.extend(parents.get(current, ()))
    return seen


def _sources(analysis: Analysis) -> dict[str, str | None]:
    """Each flagged agent -> the flagged agent its failure came from (None: a root cause)."""
    by_agent: dict[str, list[Diagnosis]] = defaultdict(list)
    for d in analysis.diagnoses:
        by_agent[d.agent_name].append(d)
    # an agent whose every finding is a re-raise only carried someone else's exception
    carriers = {a for a, ds in by_agent.items() if all(d.caused_by for d in ds)}
    parents = agent_graph(analysis.trace)
    first_start = {s.name: s.start_ns for s in reversed(analysis.trace.spans)}
    sources: dict[str, str | None] = {}
    for agent, ds in by_agent.items():
        if agent in carriers:
            sources[agent] = next(d.caused_by for d in ds if d.caused_by in by_agent)
            continue
        upstream = (_ancestors(agent, parents) & set(by_agent)) - carriers - {agent}
        # the nearest flagged ancestor: the latest one to start before this agent
        sources[agent] = max(upstream, key=lambda a: first_start.get(a, 0)) if upstream else None
    return sources


def _root_of(agent: str, sources: dict[str, str | None]) -> str:
    seen = {agent}
    while (source := sources.get(agent)) is not None and source not in seen:
        seen.add(source)
        agent = source
    return agent


def propagate(analysis: Analysis) -> tuple[LayerOutcome, list[PropagationLink]]:
    """The propagation stage: links (root causes first) and the diagnoses with their root cause."""
    if not analysis.diagnoses:
        return LayerOutcome("clean", "nothing to trace back"), []
    sources = _sources(analysis)
    roots = {agent: _root_of(agent, sources) for agent in sources}
    by_agent: dict[str, list[Diagnosis]] = defaultdict(list)
    for d in analysis.diagnoses:
        by_agent[d.agent_name].append(d)

    def worst(agent: str) -> Diagnosis:
        return max(by_agent[agent], key=lambda d: (severity_rank(d.severity), d.confidence))

    def link(agent: str) -> PropagationLink:
        ds, top = by_agent[agent], worst(agent)
        modes = tuple(dict.fromkeys(m for d in ds for m in d.failure_modes))
        root = roots[agent]
        if root == agent:
            hints = {m: remediation(m, agent, top.evidence) for m in modes}
            role, parent = "root_cause", None
        else:
            hints = {m: f"fix {root} first: this failure follows from it" for m in modes}
            role, parent = "propagated", sources[agent]
        return PropagationLink(
            agent_name=agent, role=role, parent_agent=parent, root_cause_agent=root,
            severity=top.severity, confidence=top.confidence, failure_modes=modes,
            evidence=tuple(f"{d.layer}: {d.evidence}" for d in ds), remediation=hints,
        )

    order = {s.name: i for i, s in reversed(list(enumerate(analysis.trace.spans)))}
    root_agents = sorted(
        {r for r in roots.values()},
        key=lambda a: (-severity_rank(worst(a).severity), -worst(a).confidence, order.get(a, 1 << 30)),
    )
    links: list[PropagationLink] = []
    for root in root_agents:
        links.append(link(root))
        affected = [a for a, r in roots.items() if r == root and a != root]
        affected.sort(key=lambda a: order.get(a, 1 << 30))
        links.extend(link(a) for a in affected)
    explained = {}
    for root in root_agents:
        top = worst(root)
        explained[root] = f"{root}: {top.evidence} ({label(top.failure_modes[0])})"
    analysis.diagnoses = [
        dataclasses.replace(d, root_cause_agent=(root := roots[d.agent_name]), root_cause=explained[root])
        for d in analysis.diagnoses
    ]
    named = ", ".join(root_agents)
    affected_count = len(links) - len(root_agents)
    summary = f"root cause: {named}"
    summary += f"; {affected_count} agent(s) affected downstream" if affected_count else ""
    return LayerOutcome("flagged", summary), links
