"""snapshot/diffview.py: `snapshot diff` as data: per agent call, the system prompt, inputs, output
and tool calls of the pin beside the last verify's fresh capture, as unified diffs, with a note
for a missing or new agent or a changed loop count. Verified with --quick on traces captured in
this process (one pipeline calls the fake model, so its calls carry a system prompt)."""

from __future__ import annotations

from pathlib import Path

import pytest

from proveai.errors import ProveAIError
from proveai.snapshot.diffview import AgentDiff, FieldDiff, as_text, snapshot_diff
from proveai.store import Store
from tests.proveai.model_server import ModelServer
from tests.proveai.replay import pipeline
from tests.proveai.snapshot.store_kit import capture, pin, quick_verify, route_models

FIELDS = ["prompt", "inputs", "output", "tool_calls"]


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path)


def diff(store: Store, name: str = "latest", agents: tuple[str, ...] = ()):
    return snapshot_diff(snapshots_dir=store.snapshots_dir, runs_dir=store.runs_dir, name=name, agents=agents)


def fields(agent_diff: AgentDiff) -> dict[str, FieldDiff]:
    assert [f.field for f in agent_diff.fields] == FIELDS
    return {f.field: f for f in agent_diff.fields}


def test_a_field_is_both_sides_as_text_and_their_unified_diff() -> None:
    same = FieldDiff("output", "a\nb", "a\nb")
    assert (same.changed, same.unified) == (False, "")
    changed = FieldDiff("output", "a\nb", "a\nc")
    assert changed.changed
    assert changed.unified.splitlines() == [
        "--- pinned/output", "+++ fresh/output", "@@ -1,2 +1,2 @@", " a", "-b", "+c",
    ]
    assert as_text(None) == "" and as_text("two\nlines") == "two\nlines"
    assert as_text({"b": 1, "a": [1]}) == '{\n  "a": [\n    1\n  ],\n  "b": 1\n}'  # one JSON line a line
    assert not AgentDiff("a", 0, (same,)).changed
    assert AgentDiff("a", 0, (same,), note="missing: not called in the fresh run").changed


def test_each_changed_field_of_each_call_is_a_diff(store: Store) -> None:
    capture(store, "I want a refund")
    pinned = pin(store)
    capture(store, "Where is my parcel?")  # classify answers "other": everything below follows
    verified = quick_verify(store, pinned.snapshot)
    report = diff(store)
    assert (report.snapshot, report.version, report.run_id) == ("latest", 1, verified.run_id)
    assert [(d.agent, d.iteration, d.note) for d in report.agents] == [
        ("classify", 0, None), ("draft", 0, None), ("policy", 0, None), ("qa_check", 0, None),
    ]
    classify, draft, policy, qa_check = (fields(d) for d in report.agents)
    assert classify["inputs"].unified.splitlines()[2:] == [
        "@@ -1,3 +1,3 @@", " {", '-  "ticket": "I want a refund"', '+  "ticket": "Where is my parcel?"', " }",
    ]
    assert (classify["output"].pinned, classify["output"].fresh) == ("refund", "other")
    assert [name for name, f in draft.items() if f.changed] == ["inputs", "output", "tool_calls"]
    assert '-      "category": "refund"' in draft["tool_calls"].unified.splitlines()
    assert (draft["prompt"].pinned, draft["prompt"].fresh) == ("", "")  # draft calls no model
    assert policy["output"].changed and not policy["tool_calls"].changed
    assert [name for name, f in qa_check.items() if f.changed] == ["inputs"]  # still "OK"


def test_a_missing_agent_a_new_one_and_a_changed_loop_are_noted(store: Store) -> None:
    capture(store, qa_loops=2)
    pinned = pin(store, agents=["classify", "draft", "qa_check"])  # policy not pinned
    capture(store, qa_loops=1)
    quick_verify(store, pinned.snapshot)
    report = diff(store)
    notes = [(d.agent, d.iteration, d.note) for d in report.agents]
    assert notes == [
        ("classify", 0, None),
        ("draft", 0, None),
        ("qa_check", 0, "iteration count changed: pinned 2, fresh 1"),
        ("qa_check", 1, None),
        ("policy", 0, "new: not in the snapshot"),
    ]
    second = fields(report.agents[3])
    assert second["output"].pinned == "OK" and second["output"].fresh == ""  # no fresh second call
    assert not report.agents[0].changed and report.agents[4].changed

    capture(store, qa=False)
    quick_verify(store, pinned.snapshot)
    gone = diff(store, agents=("qa_check",))
    assert [(d.agent, d.iteration, d.note) for d in gone.agents] == [
        ("qa_check", 0, "missing: not called in the fresh run"), ("qa_check", 1, None),
    ]
    assert fields(gone.agents[0])["output"].unified.splitlines()[-1] == "-OK"


def test_a_changed_system_prompt_is_its_own_diff(
    store: Store, model_server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    route_models(monkeypatch, model_server)
    pipeline.run_pipeline("Refund please", root=store.traces_dir)
    pinned = pin(store)
    monkeypatch.setattr(pipeline, "DRAFT_PROMPT", "Draft a curt reply.")  # the prompt edited
    pipeline.run_pipeline("Refund please", root=store.traces_dir)
    quick_verify(store, pinned.snapshot)
    (draft,) = diff(store, agents=("draft",)).agents
    prompt = fields(draft)["prompt"]
    assert (prompt.pinned, prompt.fresh) == ("Draft a short, polite reply.", "Draft a curt reply.")
    assert prompt.unified.splitlines()[-2:] == ["-Draft a short, polite reply.", "+Draft a curt reply."]
    (classify,) = diff(store, agents=("classify",)).agents
    assert fields(classify)["prompt"].pinned == "Classify the ticket into one word."
    assert not classify.changed


def test_an_unknown_agent_or_no_verify_is_refused(store: Store) -> None:
    capture(store)
    pinned = pin(store)
    with pytest.raises(ProveAIError, match="no verify of snapshot 'latest' with a fresh capture to accept"):
        diff(store)
    capture(store, tone="curt")
    quick_verify(store, pinned.snapshot)
    with pytest.raises(ProveAIError) as caught:
        diff(store, agents=("drafter",))
    assert caught.value.message == (
        "unknown agent 'drafter' in snapshot 'latest' and its last verify (did you mean \"draft\"?)"
    )
    assert list(caught.value.suggestions) == ["known agents: classify, draft, policy, qa_check"]
    with pytest.raises(ProveAIError, match="not usable as a file name"):
        diff(store, "../evil")
