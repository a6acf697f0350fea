"""snapshot/overrides.py: `verify --override AGENT=PATH` without a re-run. Every AGENT=PATH is
checked before anything is sent; the overridden agent's pinned requests are re-sent with the new
system prompt, a later agent whose pinned request held a reply that changed is re-sent with the
new text (downstream), an agent without a captured request is re-invoked when its inputs changed
(or graded inconclusive saying why not), and the rest are held at their pinned output. Pinned
from tests/proveai/replay/pipeline.py run in this process against the fake model server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from proveai import FileExporter, monitor, register_provider, trace
from proveai.diff.verdict import Status, Tier
from proveai.errors import ProveAIError, ProveAIExit
from proveai.providers.base import ProviderError
from proveai.snapshot.grading import DIRECT_EDIT, DOWNSTREAM
from proveai.snapshot.model import Snapshot, load_snapshot
from proveai.snapshot.overrides import parse_overrides, read_overrides, what_if, with_system_prompt
from proveai.snapshot.verify import GateVerdict, VerifyOptions, verify_snapshot
from proveai.store import Store
from tests.proveai.model_server import ModelServer, Reply
from tests.proveai.replay import pipeline
from tests.proveai.snapshot.store_kit import capture, pin, route_models

HELD = "held at its pinned output (what-if --override)"
NEW_DRAFT_PROMPT = "Draft a reply in one line."


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path)


@pytest.fixture
def pinned(store: Store, model_server: ModelServer, monkeypatch: pytest.MonkeyPatch) -> Snapshot:
    """classify -> lookup (a TOOL, no model call) -> draft -> qa_check, captured once and pinned."""
    route_models(monkeypatch, model_server)
    pipeline.run_pipeline("My order arrived broken", root=store.traces_dir)
    return pin(store).snapshot


@pytest.fixture
def prompt_file(tmp_path: Path) -> Path:
    path = tmp_path / "draft_v2.md"
    path.write_text(NEW_DRAFT_PROMPT, encoding="utf-8")
    return path


def rows(grading: Any) -> dict[str, Any]:
    return {v.agent: v for v in grading.verdicts}


@pytest.mark.parametrize("value", ["draft", "=p.md", "draft=", " =p.md", "draft= "])
def test_an_override_without_both_parts_is_a_usage_error(value: str) -> None:
    with pytest.raises(ProveAIError) as caught:
        parse_overrides([value])
    assert caught.value.message == f"--override expects AGENT=PATH, got {value!r}"
    assert caught.value.exit_code == ProveAIExit.USAGE


def test_overrides_are_agent_to_path_the_last_one_winning() -> None:
    assert parse_overrides([" draft = prompts/a.md", "qa=b=c.md", "draft=prompts/b.md"]) == {
        "draft": Path("prompts/b.md"),
        "qa": Path("b=c.md"),
    }
    assert parse_overrides([]) == {}


def test_an_agent_whose_name_holds_an_equals_sign_is_split_where_the_path_is_a_file(tmp_path: Path) -> None:
    prompt = tmp_path / "p.md"
    prompt.write_text("new", encoding="utf-8")
    assert parse_overrides([f"tone=formal={prompt}"]) == {"tone=formal": prompt}
    missing = f"formal={tmp_path}/none.md"
    assert parse_overrides([f"tone={missing}"]) == {"tone": Path(missing)}  # no file: the first "="


def test_the_system_prompt_is_replaced_and_the_rest_kept_in_order() -> None:
    messages = [
        {"role": "system", "content": "old"},
        {"role": "user", "content": "hi"},
        {"role": "system", "content": "second"},
        {"role": "assistant", "content": "yes"},
    ]
    replaced = with_system_prompt(messages, "new")
    assert replaced == [
        {"role": "system", "content": "new"},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "yes"},
    ]
    replaced[1]["content"] = "changed"
    assert messages[1]["content"] == "hi"  # the pinned messages are never edited
    only_user = [{"role": "user", "content": "u"}]
    assert with_system_prompt(only_user, "p") == [{"role": "system", "content": "p"}, *only_user]


def test_every_override_is_checked_before_anything_is_sent(
    pinned: Snapshot, prompt_file: Path, model_server: ModelServer, store: Store
) -> None:
    sent = model_server.count()
    assert read_overrides(pinned, {"draft": prompt_file}) == {"draft": NEW_DRAFT_PROMPT}
    with pytest.raises(ProveAIError) as unknown:
        what_if(pinned, {"draft": prompt_file, "drafter": prompt_file}, None)
    assert unknown.value.message.startswith("unknown agent 'drafter' in snapshot 'latest'")
    with pytest.raises(ProveAIError) as no_request:
        what_if(pinned, {"draft": prompt_file, "lookup": prompt_file}, None)
    assert no_request.value.message == (
        "--override lookup: the pinned agent made no model call through proveai's providers, "
        "so there is no request to replay"
    )
    assert no_request.value.exit_code == ProveAIExit.USAGE
    missing = prompt_file.parent / "missing.md"
    with pytest.raises(ProveAIError) as unreadable:
        what_if(pinned, {"draft": prompt_file, "qa_check": missing}, None)
    assert unreadable.value.message == f"--override qa_check={missing}: no such file"
    for device in ("/dev/zero", str(prompt_file.parent)):  # refused unread: /dev/zero never ends
        with pytest.raises(ProveAIError) as refused:
            read_overrides(pinned, {"draft": Path(device)})
        kind = "a character device" if device == "/dev/zero" else "a folder"
        assert refused.value.message == f"--override draft={device}: it is {kind}, not a prompt file"
        assert refused.value.exit_code == ProveAIExit.USAGE
    assert model_server.count() == sent  # nothing was sent for any of them


def test_an_agent_whose_calls_went_around_proveai_cannot_be_overridden(
    store: Store, prompt_file: Path
) -> None:
    capture(store)
    snapshot = pin(store, name="plain").snapshot
    with pytest.raises(ProveAIError, match="--override draft: the pinned agent made no model call"):
        read_overrides(snapshot, {"draft": prompt_file})


def test_the_overridden_agent_is_a_direct_edit_and_what_reads_it_downstream(
    pinned: Snapshot, prompt_file: Path, model_server: ModelServer, store: Store
) -> None:
    before = model_server.count()
    grading = what_if(pinned, {"draft": prompt_file}, None)  # hash-only: a changed reply is not judged
    verdicts = rows(grading)
    assert list(verdicts) == ["classify", "lookup", "draft", "qa_check"]
    for held in ("classify", "lookup"):  # above the edit: nothing they read changed
        assert (verdicts[held].status, verdicts[held].tier, verdicts[held].rationale) == (
            Status.UNCHANGED, Tier.HELD, HELD
        )
        assert verdicts[held].change is None
    draft, qa_check = verdicts["draft"], verdicts["qa_check"]
    assert (draft.status, draft.change, draft.fresh_calls) == (Status.INCONCLUSIVE, DIRECT_EDIT, 1)
    assert (qa_check.status, qa_check.change, qa_check.fresh_calls) == (Status.INCONCLUSIVE, DOWNSTREAM, 1)
    assert grading.notes[0].startswith("what-if: replayed pinned requests")

    sent = model_server.chat_requests()[before:]
    assert [r.system for r in sent] == [NEW_DRAFT_PROMPT, pipeline.QA_PROMPT]
    new_reply = model_server.answer_text(sent[0], 0)  # deterministic: the same request, the same reply
    pinned_reply = pinned.expected("draft")[0].output
    assert new_reply != pinned_reply
    qa_user = sent[1].messages[-1]["content"]
    assert qa_user == f"QA the reply: {new_reply}"  # the new draft substituted for the pinned one
    assert sent[1].body["temperature"] == 0  # the pinned call's own settings


def test_a_judged_override_through_verify_decides_the_gate(
    pinned: Snapshot, prompt_file: Path, model_server: ModelServer, store: Store,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model_server.judge_verdict, model_server.judge_rationale = "worse", "lost the apology"
    monkeypatch.setenv("PROVEAI_JUDGE_MODEL", "gpt-4o-mini")
    pinned_file = (store.snapshots_dir / "latest.json").read_bytes()
    result = verify_snapshot(
        pinned, snapshots_dir=store.snapshots_dir, runs_dir=store.runs_dir, traces_dir=store.traces_dir,
        options=VerifyOptions(overrides={"draft": prompt_file}),
    )
    assert (result.mode, result.gate) == ("override", GateVerdict.FAIL)
    assert result.exit_code == ProveAIExit.REGRESSION
    draft = rows(result)["draft"]
    assert (draft.status, draft.change) == (Status.REGRESSED, DIRECT_EDIT)
    assert draft.rationale == "judge: lost the apology"
    assert rows(result)["qa_check"].change == DOWNSTREAM
    assert (store.snapshots_dir / "latest.json").read_bytes() == pinned_file  # the pin is never edited
    assert load_snapshot(store.snapshots_dir / "latest.json") == pinned
    manifest = (result.run_dir / "manifest.json").read_text(encoding="utf-8")
    assert f'"draft": "{prompt_file}"' in manifest and not (result.run_dir / "fresh").exists()


def test_an_agent_without_a_request_is_reinvoked_when_its_inputs_changed(
    pinned: Snapshot, tmp_path: Path, model_server: ModelServer
) -> None:
    (tmp_path / "classify_v2.md").write_text("Answer with one long word.", encoding="utf-8")
    grading = what_if(pinned, {"classify": tmp_path / "classify_v2.md"}, None)
    lookup = rows(grading)["lookup"]
    # lookup's function ran again on the new category: graded from what it returned, not held
    assert lookup.tier == Tier.HASH and lookup.fresh_calls == 1
    assert lookup.status in (Status.DRIFTED, Status.INCONCLUSIVE), lookup.rationale
    assert lookup.change == DOWNSTREAM
    assert rows(grading)["draft"].change == DOWNSTREAM and rows(grading)["draft"].fresh_calls == 1


def test_an_agent_that_cannot_be_reinvoked_is_inconclusive_saying_why(
    store: Store, tmp_path: Path, model_server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    route_models(monkeypatch, model_server)

    @monitor("shout", parent_agent="classify")
    def shout(category: str) -> str:  # defined in a function: it cannot be imported again
        return category.upper()

    with trace("local", exporters=[FileExporter(store.traces_dir)]):
        shout(pipeline.classify("My order arrived broken"))
    snapshot = pin(store).snapshot
    (tmp_path / "classify_v2.md").write_text("Answer with one long word.", encoding="utf-8")
    verdict = rows(what_if(snapshot, {"classify": tmp_path / "classify_v2.md"}, None))["shout"]
    assert (verdict.status, verdict.tier) == (Status.INCONCLUSIVE, Tier.REPLAY)
    assert verdict.rationale.startswith("inputs changed upstream but not re-executed: ")
    assert "is defined inside another function and cannot be imported" in verdict.rationale


def test_a_provider_that_fails_makes_the_call_inconclusive_and_a_model_error_stops(
    pinned: Snapshot, prompt_file: Path, model_server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Broken:
        def call(self, messages: Any, model: str, **kwargs: Any) -> str:
            raise RuntimeError("socket closed")

        def supports(self, model: str) -> bool:
            return True

    register_provider("gpt-*", Broken())
    verdicts = rows(what_if(pinned, {"draft": prompt_file}, None))
    assert (verdicts["draft"].status, verdicts["draft"].tier) == (Status.INCONCLUSIVE, Tier.REPLAY)
    assert verdicts["draft"].rationale == "replay failed: RuntimeError: socket closed"
    assert verdicts["qa_check"].rationale == HELD  # no new reply reached it

    monkeypatch.setenv("PROVEAI_PROVIDER_MAX_RETRIES", "0")
    route_models(monkeypatch, model_server)  # the fake server again (the registry re-read), answering 500
    model_server.enqueue(Reply(status=500, text="overloaded"))
    with pytest.raises(ProviderError) as outage:  # a model outage is an error about the model, not a verdict
        what_if(pinned, {"draft": prompt_file}, None)
    assert "gpt-4o-mini" in outage.value.message
