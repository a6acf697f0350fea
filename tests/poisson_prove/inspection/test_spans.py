"""episode_spans: a row's spans as typed objects in call order, with parent links; rows stored
before spans carried ids read the same every time."""

from __future__ import annotations

import json

from poisson_prove.inspection.spans import episode_spans, episode_trace_id

# As an older run stored them: no ids on steps, an otel span with its own trace, appended after
# its child (an instrumentor span ends after the spans inside it).
OLD = [
    {"name": "turn", "start": 1.0, "end": 5.0, "attributes": {}, "status": "ok", "source": "step",
     "parent": None},
    {"name": "POST", "start": 2.5, "end": 3.0, "attributes": {}, "status": "error", "source": "otel",
     "parent": 2, "span_id": "00000000000000aa", "trace_id": "1" * 32, "error": "boom"},
    {"name": "chat", "start": 2.0, "end": 4.0, "attributes": {"gen_ai.agent.name": "x"}, "status": "ok",
     "source": "otel", "parent": 0, "span_id": "00000000000000bb", "trace_id": "2" * 32},
    {"name": "chaos reach", "start": None, "end": None, "attributes": {}, "status": "ok", "source": "prove",
     "parent": None},
]


def test_call_order_parents_and_depths() -> None:
    spans = episode_spans(json.dumps(OLD), key="run/cell/0")
    assert [(s.name, s.parent, s.depth) for s in spans] == [
        ("turn", None, 0), ("chat", 0, 1), ("POST", 1, 2), ("chaos reach", None, 0),
    ]
    assert spans[2].status == "error" and spans[2].error == "boom" and spans[2].duration_s == 0.5
    assert spans[1].agent is None  # only a @monitor span names an agent
    assert len({s.trace_id for s in spans}) == 1
    assert spans[1].span_id == "00000000000000bb"  # a stored id is kept
    again = episode_spans(OLD, key="run/cell/0")
    assert [s.span_id for s in again] == [s.span_id for s in spans]  # derived ids are stable
    assert len({s.span_id for s in spans}) == 4


def test_the_episode_trace_id_prefers_its_own_spans() -> None:
    own = [
        {"name": "s", "source": "step", "trace_id": "a" * 32},
        {"name": "o", "source": "otel", "trace_id": "b" * 32},
    ]
    assert episode_trace_id(own) == "a" * 32
    assert episode_trace_id(None, "k") == episode_trace_id([], "k") != episode_trace_id([], "other")


def test_checks_and_damaged_rows() -> None:
    monitor = {"name": "draft", "source": "monitor", "start": 1, "end": 2, "parent": 0,
               "attributes": {"gen_ai.agent.name": "draft", "proveai.check.json_valid": "bad"}}
    (span,) = episode_spans([monitor])  # a parent pointing at itself is no parent
    assert span.agent == "draft" and span.checks == {"json_valid": "bad"} and span.parent is None
    assert episode_spans("not json") == [] and episode_spans(None) == []
