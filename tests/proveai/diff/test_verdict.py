"""diff/verdict.py: one Status, one Tier, one Grade; an edge's and an agent's verdict hold a Grade
and are stored with exactly the strings and numbers their files always had."""

from __future__ import annotations

import json

from proveai.diff.verdict import FAILING, AgentVerdict, EdgeVerdict, Grade, Status, Tier


def test_an_edge_verdict_is_stored_as_a_replay_stores_it() -> None:
    grade = Grade(Status.REGRESSED, Tier.JUDGE, "judge: lost a fact", "--- old\n+++ new", 0.8)
    verdict = EdgeVerdict("classify", "draft", "s1", grade, "a", {"b": [1]}, "downstream")
    stored = json.loads(json.dumps(verdict.to_dict()))
    assert stored == {
        "edge": "classify→draft",
        "parent": "classify",
        "child": "draft",
        "span_id": "s1",
        "status": "regressed",
        "tier": 3,  # a replay's verdicts.json holds the tier's level
        "rationale": "judge: lost a fact",
        "confidence": 0.8,
        "old_output": "a",
        "new_output": {"b": [1]},
        "unified": "--- old\n+++ new",
        "change": "downstream",
        "inconclusive": False,
    }
    assert list(stored) == list(verdict.to_dict())  # the key order the file always had
    assert (verdict.status, verdict.tier, verdict.rationale) == (grade.status, grade.tier, grade.rationale)
    unjudged = Grade(Status.INCONCLUSIVE, Tier.JUDGE, "judge skip: x", judged=False)
    root = EdgeVerdict(None, "plan", "s0", unjudged)
    assert root.edge == "root→plan" and root.inconclusive and root.to_dict()["inconclusive"] is True


def test_each_tier_has_its_level() -> None:
    levels = {tier: tier.level for tier in Tier}
    assert levels == {
        Tier.HASH: 0, Tier.TOPOLOGY: 0, Tier.HELD: 0, Tier.REPLAY: 0, Tier.REPLICATES: 0,
        Tier.TIER1: 1, Tier.TIER2: 2, Tier.JUDGE: 3, Tier.CACHE: 3,
    }


def test_an_agent_verdict_is_stored_as_a_verify_stores_it() -> None:
    noise = Grade(Status.INCONCLUSIVE, Tier.JUDGE, "outputs vary: ...", judged=False, sampling_noise=True)
    verdict = AgentVerdict(
        "draft", noise, None, pinned_calls=2, fresh_calls=2,
        iterations=(Status.UNCHANGED, Status.INCONCLUSIVE), decisive=1, source_file="p.py",
    )
    assert verdict.sampling_noise and not verdict.fails_gate  # a field, not read from the rationale
    assert json.loads(json.dumps(verdict.to_dict())) == {
        "agent": "draft",
        "status": "inconclusive",
        "change": None,
        "rationale": "outputs vary: ...",
        "tier": "judge",  # a verify's verdicts.json holds the tier's name
        "pinned_calls": 2,
        "fresh_calls": 2,
        "iterations": ["unchanged", "inconclusive"],
        "source_file": "p.py",
    }
    assert {Status.REGRESSED, Status.MISSING, Status.ITERATION_COUNT_CHANGED} == FAILING
    missing = AgentVerdict("qa", Grade(Status.MISSING, Tier.HASH, "not called any more"))
    assert missing.fails_gate and not missing.sampling_noise
