"""One pair side by side: a damaged spans value reads as no agent calls, and calls only one twin
made are lines of their own, the first divergence marked on them."""

from __future__ import annotations

from poisson_prove.comparison.attribution import AgentCall
from poisson_prove.comparison.side_by_side import side_by_side
from poisson_prove.store.agent_calls import span_entries as _decoded


def test_damaged_spans_read_as_no_agent_calls() -> None:
    assert _decoded("not json") == [] and _decoded(None) == [] and _decoded('{"a": 1}') == []
    assert _decoded([{"name": "x"}]) == [{"name": "x"}]


def test_calls_only_one_twin_made_are_lines_of_their_own() -> None:
    before = (AgentCall("a", 0, "1", "ok"),)
    after = (AgentCall("a", 0, "1", "ok"), AgentCall("b", 0, "2", "ok"))
    lines = side_by_side(before, after, "b")
    assert [(x.agent, x.same, x.first, x.before is None) for x in lines] == [
        ("a", True, False, False), ("b", False, True, True),
    ]


