"""The captured topology: graph parents from call nesting, then the declared edge."""

from __future__ import annotations

from proveai import attribute_edges
from proveai.traces.topology import bfs_order, graph_parents
from tests.proveai.trace_kit import closed, replay_with, span


def test_graph_parent_uses_call_nesting_then_the_declared_edge() -> None:
    trace = closed(
        span("1", "planner", "p", 0, 100),
        span("2", "search", "s", 10, 20, parent="1"),
        span("3", "writer", "w", 200, 210, parent_agent="planner"),
        span("4", "orphan", "o", 300, 310, parent_agent="ghost"),
    )
    parents = graph_parents(trace)
    assert {k[-1]: (v.name if v else None) for k, v in parents.items()} == {
        "1": None,
        "2": "planner",
        "3": "planner",
        "4": None,
    }
    assert [s.name for s in bfs_order(trace)] == ["planner", "orphan", "search", "writer"]
    verdicts = attribute_edges(trace, replay_with(trace, {}))
    assert [v.edge for v in verdicts] == ["root→planner", "root→orphan", "planner→search", "planner→writer"]
