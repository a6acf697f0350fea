"""attribute_edges on topology changes: parallel siblings, sequential siblings, path and iteration changes."""

from __future__ import annotations

from proveai import attribute_edges
from proveai.traces.topology import graph_parents, parallel_groups
from tests.proveai.trace_kit import closed, replay_with, span


def test_parallel_siblings_are_an_unordered_set() -> None:
    trace = closed(
        span("1", "fanout", "f", 0, 100),
        span("2", "worker", "alpha result", 10, 50, parent="1"),
        span("3", "worker", "beta result", 12, 52, parent="1"),
        span("4", "worker", "gamma result", 14, 54, parent="1"),
    )
    assert len(parallel_groups(trace, graph_parents(trace))) == 1
    # the replay finished in another order: outputs are permuted across the siblings
    swapped = replay_with(
        trace, {"worker2": "gamma result", "worker3": "alpha result", "worker4": "beta result"}
    )
    verdicts = attribute_edges(trace, swapped)
    assert [v.status for v in verdicts if v.child == "worker"] == ["unchanged"] * 3
    assert "parallel siblings" in verdicts[1].rationale


def test_sequential_siblings_are_compared_one_to_one() -> None:
    trace = closed(
        span("1", "loop", "l", 0, 100),
        span("2", "step", "$1 first", 10, 20, parent="1"),
        span("3", "step", "$2 second", 30, 40, parent="1"),
    )
    swapped = replay_with(trace, {"step2": "$2 second", "step3": "$1 first"})
    statuses = [v.status for v in attribute_edges(trace, swapped) if v.child == "step"]
    assert statuses == ["regressed", "regressed"]


def test_path_change_is_one_verdict_not_a_cascade() -> None:
    old = closed(
        span("1", "router", "r", 0, 100),
        span("2", "billing", "b", 10, 20, parent="1"),
        span("3", "refund", "x", 12, 18, parent="2"),
    )
    new = closed(
        span("5", "router", "r", 0, 100),
        span("6", "shipping", "s", 10, 20, parent="5"),
        trace_id="ef" * 16,
    )
    verdicts = attribute_edges(old, None, new_trace=new)
    statuses = {(v.edge, v.status) for v in verdicts}
    assert ("router→billing", "path_changed") in statuses
    assert ("root→router", "unchanged") in statuses
    assert not any(v.status == "regressed" for v in verdicts)
    changed = next(v for v in verdicts if v.status == "path_changed")
    assert "+shipping" in changed.rationale and "-billing" in changed.rationale


def test_iteration_count_change_is_one_verdict() -> None:
    old = closed(
        span("1", "agent", "a", 0, 100),
        *(
            span(str(i), "tool_call", f"r{i}", 10 * i, 10 * i + 5, parent="1", kind="TOOL")
            for i in range(2, 5)
        ),
    )
    new = closed(
        span("1", "agent", "a", 0, 100),
        *(
            span(str(i), "tool_call", f"r{i}", 10 * i, 10 * i + 5, parent="1", kind="TOOL")
            for i in range(2, 7)
        ),
        trace_id="ef" * 16,
    )
    verdicts = attribute_edges(old, None, new_trace=new)
    loops = [v for v in verdicts if v.status == "iteration_count_changed"]
    assert len(loops) == 1 and loops[0].rationale == "agent→tool_call ran 5 time(s), was 3"
    assert [v.child for v in verdicts if v.status != "iteration_count_changed"] == ["agent"]
