"""pytest/snap.py: `SnapAgent`, one pinned agent of a snapshot, graded in this process against
the fake model server's judge. The pin it loads (captured and pinned for real), its grading of
new output, and the test failures `assert_no_regression` raises. The plugin's wiring (markers,
fixtures, options) is tests/proveai/pytest/test_plugin.py's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proveai.diff.verdict import Status
from proveai.errors import ProveAIError
from proveai.providers import reset_providers
from proveai.pytest.snap import SnapAgent
from tests.proveai.model_server import ModelServer
from tests.proveai.snapshot.kit import make_project, pinned_project, server_env

DRAFT_PROMPT = "Draft a short, polite reply for this category."  # the pipeline's (kit.PIPELINE)


@pytest.fixture
def pinned(tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, ModelServer]:
    """The support pipeline captured once and pinned as `latest`; this process's providers
    routed to the same fake model server, whose judge calls every change worse."""
    root = tmp_path / "proj"
    make_project(root)
    with ModelServer(judge_verdict="worse") as server:
        server.judge_rationale = "lost the polite tone"
        pinned_project(root, server, home)
        for key, value in server_env(server.openai_url).items():
            monkeypatch.setenv(key, value)
        monkeypatch.setenv("PROVEAI_CACHE_DIR", str(tmp_path / "cache"))
        reset_providers()
        yield root / "proveai" / "snapshots", server


def test_an_agent_is_loaded_with_its_pinned_calls(pinned: tuple[Path, ModelServer]) -> None:
    snapshots, _ = pinned
    document = json.loads((snapshots / "latest.json").read_text(encoding="utf-8"))
    draft = SnapAgent.load(snapshots, "latest", "draft")
    assert (draft.agent, draft.snapshot_name, draft.snapshots_dir) == ("draft", "latest", snapshots)
    assert len(draft.calls) == 1
    assert draft.output == draft.calls[0].output and isinstance(draft.output, str) and draft.output
    assert draft.inputs == draft.calls[0].inputs
    assert draft.prompt == DRAFT_PROMPT
    assert draft.output in json.dumps(document)  # the pin's own text, not a copy made elsewhere


def test_an_unknown_agent_or_snapshot_is_one_error(pinned: tuple[Path, ModelServer]) -> None:
    snapshots, _ = pinned
    with pytest.raises(ProveAIError) as unknown:
        SnapAgent.load(snapshots, "latest", "drafter")
    assert "drafter" in unknown.value.message and "draft" in unknown.value.message
    with pytest.raises(ProveAIError, match="no snapshot at"):
        SnapAgent.load(snapshots, "nightly", "draft")


def test_the_pinned_output_passes_and_costs_no_judge_call(pinned: tuple[Path, ModelServer]) -> None:
    snapshots, server = pinned
    draft = SnapAgent.load(snapshots, "latest", "draft")
    served = server.count()
    grade = draft.assert_no_regression(draft.output)
    assert grade.status == Status.UNCHANGED
    assert server.count() == served


def test_a_regression_fails_the_test_with_the_judges_reason(pinned: tuple[Path, ModelServer]) -> None:
    snapshots, server = pinned
    draft = SnapAgent.load(snapshots, "latest", "draft")
    with pytest.raises(pytest.fail.Exception) as failed:
        draft.assert_no_regression("Go away.")
    assert str(failed.value) == "agent 'draft' (snapshot 'latest') regressed — judge: lost the polite tone"
    assert draft.grade("Go away.").status == Status.REGRESSED
    served = server.count()
    assert draft.grade("Go away.").status == Status.REGRESSED  # the verdict is kept in the judge cache
    assert server.count() == served
    assert any(snapshots.rglob("*judge*")), sorted(p.name for p in snapshots.rglob("*"))


def test_a_change_nobody_can_judge_fails_saying_how_to_get_a_judge(
    pinned: tuple[Path, ModelServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    snapshots, _ = pinned
    monkeypatch.setenv("PROVEAI_PROVIDER_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens there
    monkeypatch.setenv("PROVEAI_PROVIDER_BACKOFF", "0.01")
    reset_providers()
    draft = SnapAgent.load(snapshots, "latest", "draft")
    with pytest.raises(pytest.fail.Exception) as failed:
        draft.assert_no_regression("A completely different reply about something else.")
    message = str(failed.value)
    assert message.startswith("agent 'draft' (snapshot 'latest') changed and could not be judged — ")
    assert message.endswith(
        "; set PROVEAI_JUDGE_MODEL and its provider (PROVEAI_PROVIDER_PATTERN / PROVEAI_PROVIDER_BASE_URL)"
    )
