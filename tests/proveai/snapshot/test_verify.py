"""snapshot/verify.py: one snapshot verified, its run folder written (and read back here), and the
gate's verdict decided from the agent verdicts with the exit code that verdict has. Quick mode on
traces captured in this process; the re-run mode once, on a real project and the fake model."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from proveai.diff.verdict import AgentVerdict, Grade, Status, Tier
from proveai.errors import ProveAIError, ProveAIExit
from proveai.snapshot.model import load_snapshot
from proveai.snapshot.verify import (
    GateVerdict,
    JudgeMetrics,
    VerifyMetrics,
    VerifyOptions,
    environment_notes,
    gate_verdict,
    verify_snapshot,
)
from proveai.store import Store
from tests.conftest import isolated_env
from tests.proveai.model_server import ModelServer
from tests.proveai.snapshot.kit import make_project, pinned_project
from tests.proveai.snapshot.store_kit import capture, pin, quick_verify

INTEGRITY_NOTE = "quick: no trace newer than the pin; checked the pinned fixture's integrity only"


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path)


def statuses(result) -> dict[str, str]:
    return {v.agent: v.status.value for v in result.verdicts}


def read_run(run_dir: Path) -> list[dict]:
    """manifest.json, verdicts.json and metrics.json of a verify run, as json reads them."""
    return [
        json.loads((run_dir / f"{name}.json").read_text(encoding="utf-8"))
        for name in ("manifest", "verdicts", "metrics")
    ]


def row(status: Status) -> AgentVerdict:
    return AgentVerdict("a", Grade(status, Tier.HASH, "why", judged=status != Status.INCONCLUSIVE))


@pytest.mark.parametrize(
    ("statuses_", "options", "fails", "gate"),
    [
        ((Status.UNCHANGED, Status.DRIFTED), VerifyOptions(), False, GateVerdict.PASS),
        ((Status.INCONCLUSIVE,), VerifyOptions(), False, GateVerdict.PASS),  # said, not failed
        ((Status.INCONCLUSIVE,), VerifyOptions(no_judge=True), False, GateVerdict.NOT_GRADED),
        ((Status.INCONCLUSIVE,), VerifyOptions(strict_judge=True), False, GateVerdict.INCONCLUSIVE),
        ((Status.INCONCLUSIVE,), VerifyOptions(no_judge=True, strict_judge=True), False,
         GateVerdict.NOT_GRADED),
        ((Status.INCONCLUSIVE,), VerifyOptions(strict_judge=True), True, GateVerdict.FAIL),
        ((Status.UNCHANGED,), VerifyOptions(), True, GateVerdict.FAIL),  # the replicate test failed
    ],
)
def test_the_gate_is_decided_from_the_verdicts(
    statuses_: tuple[Status, ...], options: VerifyOptions, fails: bool, gate: GateVerdict
) -> None:
    assert gate_verdict([row(s) for s in statuses_], options, fails) == gate


def test_each_gate_verdict_has_its_exit_code() -> None:
    assert {verdict: verdict.exit_code for verdict in GateVerdict} == {
        GateVerdict.PASS: ProveAIExit.OK,
        GateVerdict.FAIL: ProveAIExit.REGRESSION,
        GateVerdict.NOT_GRADED: ProveAIExit.USAGE,
        GateVerdict.INCONCLUSIVE: ProveAIExit.INCONCLUSIVE,
    }
    assert [int(v.exit_code) for v in GateVerdict] == [0, 1, 2, 3]


def test_metrics_json_is_the_metrics_without_the_unreachable_flag() -> None:
    metrics = VerifyMetrics(
        mode="quick", agents=2, counts={"unchanged": 2}, judge_model=None, tier_grades=0,
        judge_cache_hits=0, replicates=1, exit_code=0, judge_unfit=None, judge_unreachable=True,
        judge=JudgeMetrics(calls=1, malformed=0, seconds=0.25, max_tokens=200),
    )
    assert metrics.to_dict() == {
        "mode": "quick", "agents": 2, "counts": {"unchanged": 2}, "judge_model": None, "tier_grades": 0,
        "judge_cache_hits": 0, "replicates": 1, "exit_code": 0, "judge_unfit": None,
        "judge": {"calls": 1, "malformed": 0, "seconds": 0.25, "max_tokens": 200},
    }


def test_a_provider_variable_set_at_capture_and_missing_now_is_noted(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    capture(store)
    snap = pin(store).snapshot
    names = ["OPENAI_API_KEY", "PROVEAI_SEED", "PROVEAI_VERIFY", "PROVEAI_NO_CACHE", "ANTHROPIC_API_KEY"]
    snap = replace(snap, invocation={**(snap.invocation or {}), "env_names": names})
    monkeypatch.setenv("ANTHROPIC_API_KEY", "set")
    for name in ("OPENAI_API_KEY", "PROVEAI_SEED", "PROVEAI_VERIFY", "PROVEAI_NO_CACHE"):
        monkeypatch.delenv(name, raising=False)
    # what verify sets in the child itself is never missing
    assert environment_notes(snap) == [
        "set when the snapshot was captured, not set now: OPENAI_API_KEY, PROVEAI_NO_CACHE"
    ]
    # init --replicates set PROVEAI_NO_CACHE itself for a pinned distribution
    replicated = replace(snap, captures=snap.captures * 2)
    assert environment_notes(replicated) == [
        "set when the snapshot was captured, not set now: OPENAI_API_KEY"
    ]
    monkeypatch.setenv("OPENAI_API_KEY", "set")
    assert environment_notes(replicated) == []
    assert environment_notes(replace(snap, invocation=None)) == []


def test_quick_with_nothing_newer_checks_the_pinned_fixture_and_writes_its_run(store: Store) -> None:
    capture(store)
    pinned = pin(store)
    result = quick_verify(store, pinned.snapshot)
    assert (result.mode, result.gate, result.exit_code) == ("quick", GateVerdict.PASS, ProveAIExit.OK)
    assert set(statuses(result).values()) == {"unchanged"}
    assert result.notes == (INTEGRITY_NOTE,)
    assert result.run_dir == store.runs_dir / result.run_id and result.run_id.startswith("verify-")
    manifest, verdicts, metrics = read_run(result.run_dir)
    keys = ("kind", "run_id", "snapshot", "snapshot_version", "mode", "exit_code")
    assert {k: manifest[k] for k in keys} == {
        "kind": "snapshot-verify", "run_id": result.run_id, "snapshot": "latest", "snapshot_version": 1,
        "mode": "quick", "exit_code": 0,
    }
    assert (manifest["fresh"], manifest["overrides"], manifest["notes"]) == ([], {}, [INTEGRITY_NOTE])
    assert verdicts == {"verdicts": [v.to_dict() for v in result.verdicts], "replicates": []}
    assert metrics == result.metrics.to_dict()
    assert (metrics["agents"], metrics["counts"], metrics["judge_model"]) == (4, {"unchanged": 4}, None)
    assert not (result.run_dir / "fresh").exists() and not (result.run_dir / "report.html").exists()


def test_quick_grades_the_newest_trace_of_the_pipeline_and_keeps_it(store: Store) -> None:
    capture(store)
    pinned = pin(store)
    curt = capture(store, tone="curt")
    capture(store, name="other-pipeline", qa=False)  # newer, but not this pipeline's
    result = quick_verify(store, pinned.snapshot)
    assert statuses(result) == {
        "classify": "unchanged", "draft": "inconclusive", "policy": "unchanged", "qa_check": "drifted",
    }
    # hash-only mode met a change it cannot grade
    assert (result.gate, result.exit_code) == (GateVerdict.NOT_GRADED, ProveAIExit.USAGE)
    assert [v.agent for v in result.unjudged] == ["draft"]
    assert result.notes == (f"quick: graded the newest stored trace {curt.trace_id[:12]}… (no re-run)",)
    kept = result.run_dir / "fresh" / f"000-{curt.trace_id}.json"
    assert kept.read_bytes() == (store.traces_dir / f"{curt.trace_id}.json").read_bytes()
    manifest, _, metrics = read_run(result.run_dir)
    assert manifest["fresh"] == [kept.name] and manifest["exit_code"] == ProveAIExit.USAGE
    assert metrics["counts"] == {"unchanged": 2, "inconclusive": 1, "drifted": 1}


def test_an_agent_gone_from_the_newest_trace_fails_the_gate(store: Store) -> None:
    capture(store)
    pinned = pin(store)
    capture(store, qa=False)
    result = quick_verify(store, pinned.snapshot)
    assert statuses(result)["qa_check"] == "missing"
    assert (result.gate, result.exit_code) == (GateVerdict.FAIL, ProveAIExit.REGRESSION)
    assert read_run(result.run_dir)[0]["exit_code"] == ProveAIExit.REGRESSION


def test_an_unjudged_change_passes_unless_the_judge_is_strict(store: Store) -> None:
    # no judge model is reachable here (no key): the change is inconclusive, not graded
    capture(store)
    pinned = pin(store)
    capture(store, tone="curt")
    options = VerifyOptions(quick=True)
    lenient = verify_snapshot(
        pinned.snapshot, snapshots_dir=store.snapshots_dir, runs_dir=store.runs_dir,
        traces_dir=store.traces_dir, options=options,
    )
    assert (lenient.gate, lenient.exit_code) == (GateVerdict.PASS, ProveAIExit.OK)
    assert lenient.unjudged[0].rationale.startswith("judge unavailable: ")
    assert lenient.metrics.judge_unreachable and lenient.metrics.judge_unfit
    strict = verify_snapshot(
        pinned.snapshot, snapshots_dir=store.snapshots_dir, runs_dir=store.runs_dir,
        traces_dir=store.traces_dir, options=replace(options, strict_judge=True),
    )
    assert (strict.gate, strict.exit_code) == (GateVerdict.INCONCLUSIVE, ProveAIExit.INCONCLUSIVE)
    assert strict.run_id != lenient.run_id and read_run(strict.run_dir)[2]["exit_code"] == 3


def test_a_pin_whose_trace_left_the_store_says_nothing_is_known_newer(store: Store) -> None:
    first = capture(store)
    pinned = pin(store)
    (store.traces_dir / f"{first.trace_id}.json").unlink()
    capture(store, tone="curt")
    result = quick_verify(store, pinned.snapshot)
    assert result.notes == (
        "quick: the pinned trace is not in the store, so no stored trace is known to be newer",
        INTEGRITY_NOTE,
    )
    assert set(statuses(result).values()) == {"unchanged"}


def test_a_quick_only_pin_is_checked_as_a_fixture_even_without_quick(store: Store) -> None:
    capture(store)
    pinned = pin(store)
    result = verify_snapshot(
        pinned.snapshot, snapshots_dir=store.snapshots_dir, runs_dir=store.runs_dir,
        traces_dir=store.traces_dir, options=VerifyOptions(no_judge=True),
    )
    assert result.mode == "quick"
    assert result.notes == (
        "this snapshot cannot be re-run (pinned --quick-only or without an invocation): fixture check",
        INTEGRITY_NOTE,
    )


def test_the_replicate_gate_needs_a_pinned_distribution(store: Store, tmp_path: Path) -> None:
    capture(store)
    # a command that is never run: the refusal comes first
    never = {"argv": [str(tmp_path / "never.py")], "script": "never.py", "cwd": "."}
    snap = replace(pin(store).snapshot, quick_only=False, invocation=never)
    with pytest.raises(ProveAIError) as caught:
        verify_snapshot(
            snap, snapshots_dir=store.snapshots_dir, runs_dir=store.runs_dir, traces_dir=store.traces_dir,
            options=VerifyOptions(replicates=3, no_judge=True),
        )
    assert caught.value.message == (
        "snapshot 'latest' pins 1 capture: the replicate gate needs the pinned noise to compare against"
    )
    assert list(caught.value.suggestions) == [
        "pin a distribution first: proveai snapshot init latest --replicates 3"
    ]
    assert caught.value.exit_code == ProveAIExit.USAGE
    assert not store.runs_dir.exists()


def test_the_rerun_of_unchanged_code_passes_and_keeps_its_fresh_trace(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = make_project(tmp_path / "proj").parent
    with ModelServer() as server:
        _, env = pinned_project(project, server, home)
        for name, value in isolated_env(home, env).items():
            monkeypatch.setenv(name, value)  # the re-run child inherits this environment
        monkeypatch.chdir(project)
        store = Store(project)
        snap = load_snapshot(store.snapshots_dir / "latest.json")
        result = verify_snapshot(
            snap, snapshots_dir=store.snapshots_dir, runs_dir=store.runs_dir, traces_dir=store.traces_dir,
            options=VerifyOptions(no_judge=True),
        )
    assert (result.mode, result.gate, result.exit_code) == ("rerun", GateVerdict.PASS, ProveAIExit.OK)
    assert statuses(result) == {"classify": "unchanged", "draft": "unchanged", "qa_check": "unchanged"}
    (kept,) = (result.run_dir / "fresh").glob("*.json")
    assert kept.name.startswith("000-") and kept.stem[4:] != snap.trace_id  # a new capture
    manifest, _, metrics = read_run(result.run_dir)
    assert (manifest["mode"], manifest["fresh"], metrics["replicates"]) == ("rerun", [kept.name], 1)
    # the fresh trace was captured beside the run, never into the user's store
    assert kept.stem[4:] not in {p.stem for p in store.traces_dir.glob("*.json")}
