"""grade_agents on hand-built pins: statuses, labels and the hash-only mode."""

from __future__ import annotations

from proveai.diff.verdict import Grade, Status, Tier
from proveai.snapshot.grading import (
    DIRECT_EDIT,
    DOWNSTREAM,
    FreshAgent,
    change_kind,
    grade_agents,
)
from proveai.snapshot.model import AgentDefinition, Capture, ExpectedIO, Snapshot

A = AgentDefinition("a", model="m", prompt="P", settings={"temperature": 0})
B = AgentDefinition("b", model="m", prompt="Q", parent_agent="a")
C = AgentDefinition("c", model="m", prompt="R", parent_agent="b")


def io(output, inputs=None, **kw) -> ExpectedIO:
    return ExpectedIO(inputs=inputs or {"x": 1}, output=output, **kw)


PIN = Snapshot(
    "s",
    1,
    {"a": A, "b": B, "c": C},
    (Capture("t" * 32, {"a": (io("A"),), "b": (io("B"),), "c": (io("C1"), io("C2"))}),),
)


def judge_says(status: str):
    calls = []

    def grader(pinned, fresh, definition):
        calls.append((pinned.output, fresh.output, definition.name))
        return Grade(Status(status), Tier.JUDGE, f"judge: {status}", judged=status != "inconclusive")

    return grader, calls


def test_labels_missing_new_and_loops() -> None:
    grader, calls = judge_says("regressed")
    edited_a = AgentDefinition("a", model="m", prompt="P2", settings={"temperature": 0})
    fresh = {
        "a": FreshAgent(edited_a, (io("A*"),)),
        "b": FreshAgent(B, (io("B", inputs={"x": 2}),)),
        "d": FreshAgent(AgentDefinition("d"), (io("D"),)),
    }
    rows = {v.agent: v for v in grade_agents(PIN, fresh, grader=grader).verdicts}
    assert (rows["a"].status, rows["a"].change, rows["a"].rationale) == (
        "regressed",
        DIRECT_EDIT,
        "judge: regressed",
    )
    # same output, other inputs: drifted without asking the judge
    assert (rows["b"].status, rows["b"].change) == ("drifted", DOWNSTREAM)
    assert rows["b"].rationale == "inputs changed, output identical"
    # c is gone and an agent above it changed: missing, downstream
    assert (rows["c"].status, rows["c"].change) == ("missing", DOWNSTREAM)
    assert rows["d"].status == "new" and not rows["d"].fails_gate
    assert calls == [("A", "A*", "a")]


def test_iterations_are_matched_one_by_one() -> None:
    grader, calls = judge_says("drifted")
    fresh = {
        "a": FreshAgent(A, (io("A"),)),
        "b": FreshAgent(B, (io("B"),)),
        "c": FreshAgent(C, (io("C1"), io("C2*"))),
    }
    rows = {v.agent: v for v in grade_agents(PIN, fresh, grader=grader).verdicts}
    assert rows["c"].iterations == ("unchanged", "drifted")
    assert rows["c"].rationale == "iteration 2/2: judge: drifted" and calls == [("C2", "C2*", "c")]
    fresh["c"] = FreshAgent(C, (io("C1"),))
    moved = {v.agent: v for v in grade_agents(PIN, fresh, grader=grader).verdicts}["c"]
    assert moved.status == "iteration_count_changed" and moved.fails_gate
    assert moved.rationale == "called 1 time(s), pinned 2"


def test_hash_only_and_raised_calls() -> None:
    fresh = {
        "a": FreshAgent(A, (io("A+"),)),
        "b": FreshAgent(B, (io(None, status="error", error="ValueError: boom"),)),
        "c": FreshAgent(C, (io("C1"), io("C2"))),
    }
    rows = {v.agent: v for v in grade_agents(PIN, fresh, grader=None).verdicts}
    assert rows["a"].status == "inconclusive" and "hash-only" in rows["a"].rationale
    assert rows["b"].status == "regressed" and rows["b"].rationale == "raised: ValueError: boom"
    assert rows["c"].status == "unchanged" and rows["c"].change is None


def test_settings_change_is_a_direct_edit_but_the_seed_is_not_a_setting() -> None:
    warmer = AgentDefinition("a", model="m", prompt="P", settings={"temperature": 0.7})
    assert change_kind(A, warmer) == DIRECT_EDIT
    assert (
        change_kind(A, AgentDefinition("a", model="m2", prompt="P", settings={"temperature": 0}))
        == DIRECT_EDIT
    )
    # a first agent is never collateral: nothing above it could have changed its output
    same_root = AgentDefinition("a", model="m", prompt="P", settings={"temperature": 0})
    assert change_kind(A, same_root) == DIRECT_EDIT
    assert change_kind(B, AgentDefinition("b", model="m", prompt="Q", parent_agent="a")) == DOWNSTREAM
    recoded = AgentDefinition("b", model="m", prompt="Q", parent_agent="a", code_hash="sha256:2")
    assert change_kind(AgentDefinition(**{**B.__dict__, "code_hash": "sha256:1"}), recoded) == DIRECT_EDIT

