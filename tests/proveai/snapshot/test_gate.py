"""snapshot/gate.py: verify options checked for meaning (typed errors naming the option),
the snapshots a verify plans, and one exit code folded from many snapshots by precedence."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from proveai.errors import ProveAIError, ProveAIExit
from proveai.providers.registry import reset_providers, restore_registry, snapshot_registry
from proveai.render.verify_page import write_verify_page
from proveai.snapshot.gate import (
    EXIT_PRECEDENCE,
    SnapshotNotVerified,
    VerifyBatch,
    VerifyOptionError,
    plan_verify,
    verify_many,
    verify_options,
)
from proveai.snapshot.rerun import InvocationRefused
from tests.conftest import isolated_env
from tests.proveai.model_server import JUDGE_MARKER
from tests.proveai.snapshot.kit import edit, make_project, pinned_project, strict_judge_server


@pytest.mark.parametrize(
    ("kwargs", "option", "message"),
    [
        ({"replicates": 0}, "--replicates", "--replicates must be >= 1, --timeout > 0 and --alpha in (0, 1)"),
        ({"timeout_s": 0}, "--timeout", "--replicates must be >= 1, --timeout > 0 and --alpha in (0, 1)"),
        ({"alpha": 1.0}, "--alpha", "--replicates must be >= 1, --timeout > 0 and --alpha in (0, 1)"),
        ({"judge_max_tokens": 0}, "--judge-max-tokens", "--judge-max-tokens must be >= 1"),
        ({"overrides": ["draft=p.txt"], "quick": True}, "--override", "--override replays pinned requests"),
        ({"overrides": ["draft=p.txt"], "replicates": 3}, "--override", "cannot be combined"),
    ],
)
def test_options_that_mean_nothing_are_typed_errors(kwargs: dict, option: str, message: str) -> None:
    with pytest.raises(VerifyOptionError) as caught:
        verify_options(env={}, **kwargs)
    assert caught.value.option == option
    assert message in caught.value.message
    assert caught.value.exit_code == ProveAIExit.USAGE


def test_environment_switches_count_as_the_flags() -> None:
    options = verify_options(env={"PROVEAI_NO_JUDGE": "1", "PROVEAI_STRICT_JUDGE": "no"})
    assert options.no_judge and not options.strict_judge
    assert verify_options(env={}, replicates=None).replicates == 0  # as many as pinned


def test_the_judge_max_tokens_is_an_option_with_the_environment_as_its_default() -> None:
    assert verify_options(judge_max_tokens=50, env={}).judge_max_tokens == 50
    assert verify_options(env={}).judge_max_tokens == 200
    assert verify_options(env={"PROVEAI_JUDGE_MAX_TOKENS": "64"}).judge_max_tokens == 64
    assert verify_options(judge_max_tokens=50, env={"PROVEAI_JUDGE_MAX_TOKENS": "64"}).judge_max_tokens == 50


def _failed(*codes: int) -> VerifyBatch:
    failures = tuple(
        SnapshotNotVerified(f"s{i}", ProveAIError("x", exit_code=code)) for i, code in enumerate(codes)
    )
    return VerifyBatch(results=(), failures=failures, reason=None)


def test_a_failure_names_its_snapshot_and_keeps_its_cause() -> None:
    cause = ProveAIError("the pipeline exited 1 and wrote no trace", suggestions=["run it yourself"])
    failure = SnapshotNotVerified("weekly", cause)
    assert failure.message == "snapshot 'weekly': the pipeline exited 1 and wrote no trace"
    assert failure.snapshot == "weekly" and failure.cause is cause
    assert list(failure.suggestions) == ["run it yourself"] and failure.exit_code == ProveAIExit.USAGE


def test_a_refused_invocation_names_its_snapshot_once() -> None:
    cause = InvocationRefused("/bin/sh -c x", "/bin/sh is not a Python interpreter", snapshot="weekly")
    failure = SnapshotNotVerified("weekly", cause)
    assert failure.message == (
        "snapshot 'weekly' asks to run /bin/sh -c x: /bin/sh is not a Python interpreter"
    )
    assert failure.cause is cause and failure.exit_code == ProveAIExit.USAGE


def test_exit_code_follows_the_documented_precedence() -> None:
    assert EXIT_PRECEDENCE == (ProveAIExit.REGRESSION, ProveAIExit.USAGE, ProveAIExit.INCONCLUSIVE)
    assert _failed().exit_code == ProveAIExit.OK
    assert _failed(ProveAIExit.INCONCLUSIVE).exit_code == ProveAIExit.INCONCLUSIVE
    assert _failed(ProveAIExit.INCONCLUSIVE, ProveAIExit.USAGE).exit_code == ProveAIExit.USAGE
    all_three = _failed(ProveAIExit.USAGE, ProveAIExit.REGRESSION, ProveAIExit.INCONCLUSIVE)
    assert all_three.exit_code == ProveAIExit.REGRESSION


def test_plan_refuses_an_empty_or_malformed_store(tmp_path: Path) -> None:
    with pytest.raises(ProveAIError, match="no snapshots in") as empty:
        plan_verify(tmp_path)
    assert list(empty.value.suggestions) == ["proveai snapshot init"]
    (tmp_path / "broken.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ProveAIError) as broken:
        plan_verify(tmp_path)
    assert list(broken.value.suggestions) == ["proveai snapshot list"]


def test_the_library_flow_a_script_can_run(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/proveai-snapshot.md 'From Python': plan, verify, write the page, read the exit code."""
    project = make_project(tmp_path / "proj").parent
    with strict_judge_server() as server:
        _, env = pinned_project(project, server, home)
        edit(project / "pipeline.py", "Draft a short, polite reply", "Draft a curt reply")
        for name, value in isolated_env(home, env).items():
            monkeypatch.setenv(name, value)
        for name in ("CI", "GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.chdir(project)
        user_providers = snapshot_registry()
        reset_providers()  # the judge's provider comes from the environment just set
        try:
            snapshots, runs, traces = (project / "proveai" / part for part in ("snapshots", "runs", "traces"))
            plan = plan_verify(snapshots)
            seen: list[object] = []
            batch = verify_many(
                plan, verify_options(judge_max_tokens=50), snapshots_dir=snapshots, runs_dir=runs,
                traces_dir=traces, on_done=seen.append,
            )
            assert "PROVEAI_JUDGE_MAX_TOKENS" not in os.environ  # the value went through the options
        finally:
            monkeypatch.undo()
            reset_providers()
            restore_registry(user_providers)
    assert plan.names == ("latest",) and plan.reason is None
    assert batch.exit_code == ProveAIExit.REGRESSION and batch.failures == (), (
        batch.results[0].metrics.judge_unfit
    )
    (result,) = batch.results
    assert seen == [result]
    assert result.metrics.counts.get("regressed", 0) >= 1 and result.metrics.judge_model == "gpt-4o-mini"
    # every judge request (the known pairs, then the changed outputs) went with the bound passed,
    # and the verify's own counter saw each of them
    judged = [r for r in server.chat_requests() if r.system.startswith(JUDGE_MARKER)]
    assert len(judged) > 3 and {r.body["max_tokens"] for r in judged} == {50}
    assert (result.metrics.judge.calls, result.metrics.judge.max_tokens) == (len(judged), 50)
    written = json.loads((result.run_dir / "metrics.json").read_text(encoding="utf-8"))
    assert written == result.metrics.to_dict() and written["exit_code"] == ProveAIExit.REGRESSION
    assert not (result.run_dir / "report.html").exists()  # the report layer draws it, on request
    page = write_verify_page(result).read_text(encoding="utf-8")
    assert "Snapshot 'latest' v1" in page and "regressed" in page
