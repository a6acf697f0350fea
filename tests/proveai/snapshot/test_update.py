"""snapshot/update.py: `snapshot update` pins what the last verify of the snapshot kept in its
fresh/ folder (every agent, or only the ones named), bumping the version, and refuses when there
is nothing to accept or the verify saw another version. Verified with --quick on traces captured
in this process; the snapshot file read back after each update."""

from __future__ import annotations

from pathlib import Path

import pytest

from proveai.errors import ProveAIError
from proveai.snapshot.init import build_snapshot
from proveai.snapshot.model import load_snapshot, write_snapshot
from proveai.snapshot.update import fresh_traces, last_verified, update_snapshot
from proveai.store import Store
from tests.proveai.snapshot.store_kit import capture, pin, quick_verify


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path)


def update(store: Store, name: str = "latest", agents: tuple[str, ...] = ()):
    return update_snapshot(
        snapshots_dir=store.snapshots_dir, runs_dir=store.runs_dir, name=name, agents=agents
    )


def outputs(snapshot, agent: str) -> list:
    return [io.output for io in snapshot.expected(agent)]


def test_update_accepts_every_agent_of_the_last_verify(store: Store) -> None:
    capture(store)
    pinned = pin(store)
    curt = capture(store, tone="curt")
    verified = quick_verify(store, pinned.snapshot)
    result = update(store)
    assert (result.previous_version, result.snapshot.version) == (1, 2)
    assert (result.path, result.run_dir) == (pinned.path, verified.run_dir)
    assert result.agents == ("classify", "draft", "policy", "qa_check")
    on_disk = load_snapshot(pinned.path)
    assert on_disk == result.snapshot and on_disk.trace_id == curt.trace_id
    assert outputs(on_disk, "draft") == ["A curt reply about refund, within 30 days."]
    # what the pin re-runs and which pipeline it is stay the pin's own
    assert (on_disk.invocation, on_disk.trace_name) == (pinned.snapshot.invocation, "support")
    assert on_disk.quick_only


def test_update_of_named_agents_keeps_the_others_pinned(store: Store) -> None:
    capture(store, qa_loops=2)
    pinned = pin(store)
    fresh = capture(store, tone="curt", qa=False)  # draft changed, qa_check is gone
    quick_verify(store, pinned.snapshot)
    result = update(store, agents=("draft",))
    assert result.agents == ("draft",) and result.snapshot.version == 2
    on_disk = load_snapshot(pinned.path)
    assert outputs(on_disk, "draft") == ["A curt reply about refund, within 30 days."]
    assert outputs(on_disk, "qa_check") == ["OK", "OK"]  # not accepted: still pinned
    assert on_disk.captures[0].trace_id == fresh.trace_id
    capture(store, tone="curt", qa=False)  # verified again: qa_check still gone
    quick_verify(store, on_disk)
    gone = update(store, agents=("qa_check",))  # accepted as gone
    assert gone.previous_version == 2 and gone.snapshot.version == 3
    assert "qa_check" not in load_snapshot(pinned.path).agents
    assert "qa_check" not in load_snapshot(pinned.path).captures[0].io


def test_an_agent_neither_pinned_nor_seen_is_refused(store: Store) -> None:
    capture(store)
    pinned = pin(store)
    capture(store, tone="curt")
    quick_verify(store, pinned.snapshot)
    before = pinned.path.read_bytes()
    with pytest.raises(ProveAIError) as caught:
        update(store, agents=("drafter",))
    assert caught.value.message == "unknown agent 'drafter' in snapshot 'latest' (did you mean \"draft\"?)"
    assert pinned.path.read_bytes() == before


def test_nothing_verified_is_nothing_to_accept(store: Store) -> None:
    capture(store)
    pin(store)
    pin(store, name="weekly")
    quick_verify(store, pin(store).snapshot)  # nothing newer: it kept no fresh capture
    with pytest.raises(ProveAIError) as latest:
        update(store)
    assert latest.value.message == "no verify of snapshot 'latest' with a fresh capture to accept"
    assert list(latest.value.suggestions) == ["proveai snapshot verify"]
    with pytest.raises(ProveAIError) as named:
        update(store, "weekly")
    assert list(named.value.suggestions) == ["proveai snapshot verify weekly"]
    with pytest.raises(ProveAIError, match="no snapshot at"):
        update(store, "never-pinned")
    with pytest.raises(ProveAIError, match="not usable as a file name"):
        update(store, "../evil")


def test_a_verify_of_another_version_is_not_accepted(store: Store) -> None:
    capture(store)
    pinned = pin(store)
    capture(store, tone="curt")
    verified = quick_verify(store, pinned.snapshot)
    capture(store, tone="brisk")
    assert pin(store).snapshot.version == 2  # re-pinned after the verify
    with pytest.raises(ProveAIError) as caught:
        update(store)
    assert caught.value.message == (
        f"snapshot 'latest' is v2 but the last verify ({verified.run_dir.name}) saw v1"
    )
    assert list(caught.value.suggestions) == [
        "verify again, then update: proveai snapshot verify && proveai snapshot update"
    ]


def test_a_partial_update_needs_as_many_fresh_runs_as_pinned_captures(store: Store) -> None:
    pinned_traces = [capture(store), capture(store)]
    snapshot = build_snapshot("pair", pinned_traces, quick_only=True)
    write_snapshot(store.snapshots_dir / "pair.json", snapshot)
    capture(store, tone="curt")
    verify = quick_verify(store, snapshot)
    assert len(fresh_traces(verify.run_dir)) == 1
    with pytest.raises(ProveAIError) as caught:
        update(store, "pair", agents=("draft",))
    assert caught.value.message == (
        "the last verify ran 1 replicate(s) but the snapshot pins 2: a partial update needs them to match"
    )
    assert list(caught.value.suggestions) == ["accept every agent: proveai snapshot update pair"]
    whole = update(store, "pair")  # every agent: the fresh run becomes the whole pin
    assert whole.snapshot.replicates == 1 and whole.snapshot.version == 2


def test_the_last_verify_is_read_from_its_run_folder(store: Store) -> None:
    capture(store)
    pinned = pin(store)
    first = capture(store, tone="curt")
    older = quick_verify(store, pinned.snapshot)
    second = capture(store, tone="brisk")
    newer = quick_verify(store, pinned.snapshot)
    run_dir, manifest = last_verified(store.runs_dir, "latest")
    assert run_dir == newer.run_dir != older.run_dir
    assert (manifest["run_id"], manifest["snapshot_version"]) == (newer.run_id, 1)
    assert [t.trace_id for t in fresh_traces(older.run_dir)] == [first.trace_id]
    assert [t.trace_id for t in fresh_traces(run_dir)] == [second.trace_id]
