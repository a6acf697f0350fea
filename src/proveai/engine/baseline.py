"""What known-good runs look like: per-agent call counts, edges and outputs of a named baseline.

A baseline is the named trace set `proveai baseline create NAME --filter outcome=good` writes;
the engine reads its traces once at start-up and compares every analyzed trace against them.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from proveai.errors import ProveAIError
from proveai.store import Store
from proveai.store.artifacts import Baseline
from proveai.store.traces.load import load_trace
from proveai.traces.topology import edge_multiplicity
from proveai.traces.trace import Span, Trace

Edge = tuple[str | None, str]


@dataclass(frozen=True)
class BaselineProfile:
    """Statistics of known-good traces that the loop, path and judge layers compare against."""

    name: str
    traces: int
    calls: dict[str, tuple[int, ...]]  # agent -> calls per baseline trace (0 where it did not run)
    edge_share: dict[Edge, float]  # (parent agent, agent) -> share of baseline traces with that edge
    outputs: dict[str, tuple[Span, ...]] = field(default_factory=dict)  # agent -> recorded spans

    @classmethod
    def of(cls, name: str, traces: Sequence[Trace]) -> BaselineProfile:
        if not traces:
            raise ProveAIError(f"baseline {name!r} holds no readable traces")
        per_trace = [Counter(span.name for span in t.spans) for t in traces]
        agents = sorted({agent for counts in per_trace for agent in counts})
        calls = {agent: tuple(counts.get(agent, 0) for counts in per_trace) for agent in agents}
        edge_counts: Counter[Edge] = Counter()
        outputs: dict[str, list[Span]] = defaultdict(list)
        for t in traces:
            edge_counts.update(set(edge_multiplicity(t)))
            for span in t.spans:
                outputs[span.name].append(span)
        share = {edge: count / len(traces) for edge, count in edge_counts.items()}
        return cls(name, len(traces), calls, share, {k: tuple(v) for k, v in outputs.items()})

    @classmethod
    def load(cls, ref: str, project: str | Path = ".") -> BaselineProfile:
        """The baseline NAME[@VERSION] of the project at `project` (its ./proveai/baselines)."""
        baseline = Baseline.load(ref, Store(project))
        root = Path(baseline.traces_dir)
        if not root.is_absolute():
            root = Path(project) / root
        traces = []
        for trace_id in baseline.trace_ids:
            try:
                traces.append(load_trace(root / f"{trace_id}.json"))
            except ProveAIError:
                continue  # a deleted trace leaves the others usable; counted below
        if not traces:
            raise ProveAIError(
                f"baseline {baseline.name!r} lists {len(baseline.trace_ids)} trace(s) but none is "
                f"readable in {root}",
                suggestions=(f"proveai baseline refresh {baseline.name}",),
            )
        return cls.of(f"{baseline.name}@{baseline.version}", traces)

    def usual_calls(self, agent: str) -> int | None:
        """The most calls `agent` made in one known-good trace; None if it never ran in them."""
        counts = self.calls.get(agent)
        return max(counts) if counts and max(counts) > 0 else None

    def share_below(self, agent: str, calls: int) -> float:
        """Share of baseline traces in which `agent` made fewer than `calls` calls."""
        counts = self.calls.get(agent, (0,) * self.traces)
        return sum(c < calls for c in counts) / max(1, len(counts))

    def reference_span(self, span: Span) -> Span | None:
        """A known-good span of the same agent: one with identical inputs if any, else the latest."""
        spans = self.outputs.get(span.name) or ()
        same = [s for s in spans if s.inputs == span.inputs]
        pool = same or list(spans)
        return max(pool, key=lambda s: s.start_ns) if pool else None

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "traces": self.traces, "agents": sorted(self.calls)}
