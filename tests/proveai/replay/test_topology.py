"""Cross-cutting attribution: root edges, parallel siblings, path and loop changes, calibration."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proveai import Span, Trace, attribute_edges
from proveai.diff.tier2 import (
    CalibrationReport,
    calibrate,
    load_calibration,
    thresholds_from_similarities,
)
from proveai.narrative.verdicts import render as render_verdict
from proveai.replay.engine import ReplayedSpan, ReplayedTrace
from proveai.traces.topology import bfs_order, graph_parents, parallel_groups


def span(
    span_id: str,
    name: str,
    output,
    start: int,
    end: int,
    *,
    parent: str | None = None,
    parent_agent: str | None = None,
    kind: str = "CHAT_MODEL",
) -> Span:
    return Span(
        trace_id="cd" * 16,
        span_id=span_id.rjust(16, "0"),
        parent_span_id=parent.rjust(16, "0") if parent else None,
        name=name,
        operation="invoke_agent",
        kind=kind,
        model=None,
        version=None,
        parent_agent=parent_agent,
        description=None,
        source_file=None,
        start_ns=start,
        end_ns=end,
        status="ok",
        error=None,
        inputs={},
        output=output,
    )


def closed(*spans: Span, trace_id: str = "cd" * 16) -> Trace:
    return Trace.closed(trace_id=trace_id, name="t", service_name="t", spans=spans, invocation=None)


def replay_with(trace: Trace, outputs: dict[str, object]) -> ReplayedTrace:
    return ReplayedTrace(
        trace.trace_id,
        [
            ReplayedSpan(
                s.span_id,
                s.name,
                outputs.get(s.name + s.span_id[-1:], s.output),
                None,
                0.0,
                old_output=s.output,
            )
            for s in trace.spans
        ],
    )


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


def test_calibration_rule_and_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    t = thresholds_from_similarities([0.30, 0.50, 0.70, 0.90], 4)
    assert t.regressed_threshold == pytest.approx(0.30 + 0.2 * 0.15 - 0.05)
    assert t.unchanged_threshold == 0.99
    tight = thresholds_from_similarities([0.996, 0.998], 2)
    q95 = 0.996 + 0.95 * 0.002
    assert tight.unchanged_threshold == pytest.approx(q95 + (1 - q95) / 2)

    class Embedder:
        model, version = "toy", "1"

        def embed_many(self, texts):
            from proveai.providers.embedding import EmbeddingResult

            return [EmbeddingResult((1.0, float(len(t))), "toy", "1") for t in texts]

    traces = [closed(span("1", "writer", "x" * n, 0, 1), trace_id=f"{n:032x}") for n in (1, 2, 3)]
    report = calibrate(traces, Embedder())
    assert set(report.agents) == {"writer"} and report.agents["writer"].n_pairs == 3
    monkeypatch.chdir(tmp_path)
    report.write("proveai.calibration.json")
    loaded = load_calibration()
    assert loaded is not None
    assert loaded.thresholds_for("writer", "toy") == pytest.approx(report.thresholds_for("writer"), abs=1e-4)
    assert loaded.thresholds_for("writer", "other-model") == (0.99, 0.40)
    Path("proveai.calibration.json").write_text(json.dumps({"agents": []}))
    from proveai.errors import ProveAIError

    with pytest.raises(ProveAIError, match="not a calibration file"):
        load_calibration()
    assert isinstance(CalibrationReport("m", "v", "c").thresholds_for("x"), tuple)


def test_verdict_narratives() -> None:
    trace = closed(span("1", "draft", "Refund $1,200", 0, 1))
    verdicts = attribute_edges(trace, replay_with(trace, {"draft1": "Refund $12,000"}))
    text = render_verdict(verdicts[0])
    assert text.startswith("draft (a root agent) got worse, decided by a structural comparison.")
    assert "numbers changed" in text
    assert render_verdict(verdicts).startswith("1 of 1 edge(s) regressed.")
    worded = closed(span("1", "draft", "A refund is due", 0, 1))
    unjudged = attribute_edges(worded, replay_with(worded, {"draft1": "The refund is owed."}))[0]
    assert unjudged.inconclusive  # no judge provider is registered in these tests
    assert "could not decide, so this is inconclusive" in render_verdict(unjudged)
    assert "could not decide" in render_verdict(unjudged.to_dict())
