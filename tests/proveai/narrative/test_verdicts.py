"""Verdict narratives: what each edge verdict says in words."""

from __future__ import annotations

from proveai import attribute_edges
from proveai.narrative.verdicts import render as render_verdict
from tests.proveai.trace_kit import closed, replay_with, span


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
