"""The trace record as readers see it: spans sorted and frozen, roots and children, checks passed,
the trace's agents and version, and an agent's prompt read from the messages it sent."""

from __future__ import annotations

import dataclasses

import pytest

from proveai import CheckResult, trace
from tests.proveai.capture.monitor_kit import leaf
from tests.proveai.trace_kit import closed, span


def test_spans_are_frozen():
    with trace() as t:
        leaf("a")
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.spans[0].name = "other"  # type: ignore[misc]


def test_a_closed_record_sorts_its_spans_and_takes_its_times_from_them() -> None:
    late, early = span("2", "draft", "d", 30, 50, parent="1"), span("1", "plan", "p", 10, 60)
    t = closed(late, early)
    assert [s.name for s in t.spans] == ["plan", "draft"]
    assert (t.started_ns, t.ended_ns, t.duration_ms) == (10, 60, 50 / 1e6)
    assert t.is_closed and t.resource == {"service.name": "t"}
    assert repr(t) == f"Trace('t', trace_id={'cd' * 16!r}, spans=2, outcome=None)"


def test_roots_children_and_an_orphan_whose_parent_was_not_captured() -> None:
    plan = span("1", "plan", "p", 10, 60)
    draft = span("2", "draft", "d", 20, 30, parent="1")
    review = span("3", "review", "r", 31, 40, parent="1")
    orphan = span("4", "callback", "c", 41, 45, parent="99")  # its parent ran outside the trace
    t = closed(plan, draft, review, orphan)
    assert t.roots() == [plan, orphan]
    assert t.children(plan) == [draft, review] and t.children(draft) == []
    assert t.span("review") is review and t.span("nobody") is None


def test_passed_needs_every_result_of_that_check_good_and_at_least_one() -> None:
    t = closed(span("1", "plan", "p", 1, 2))
    t.check_results = [CheckResult("json", "good"), CheckResult("json", "bad"), CheckResult("len", "good")]
    assert not t.passed("json") and t.passed("len") and not t.passed("never-ran")
    assert CheckResult("len", "good").passed and not CheckResult("x", "skip").passed


def test_agents_in_first_call_order_and_the_first_declared_version() -> None:
    spans = [
        dataclasses.replace(span("1", "plan", "p", 1, 2), version=None),
        dataclasses.replace(span("2", "draft", "d", 3, 4), version="v2"),
        dataclasses.replace(span("3", "plan", "p", 5, 6), version="v1"),
    ]
    t = closed(*spans)
    assert t.agents == ["plan", "draft"] and t.versions == ["v2", "v1"] and t.version == "v2"
    assert closed().version is None and closed().roots() == []


@pytest.mark.parametrize(
    ("messages", "prompt"),
    [
        ([{"role": "system", "content": "Be terse."}, {"role": "user", "content": "hi"}], "Be terse."),
        ([{"role": "user", "content": "hi"}], None),
        ([{"role": "system", "content": [{"type": "text", "text": "parts"}]}], None),  # not plain text
        (None, None),
    ],
)
def test_the_prompt_is_the_system_message_the_agent_sent(messages, prompt) -> None:
    assert dataclasses.replace(span("1", "a", "x", 1, 2), input_messages=messages).prompt == prompt
