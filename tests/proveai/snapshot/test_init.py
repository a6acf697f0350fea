"""snapshot/init.py: `snapshot init` pins the newest (or given) stored trace as a snapshot file
an independent reader can check, keeps the version when nothing changed, makes the recorded
command portable, and refuses what verify could not use. The library on traces captured in this
process (pinned quick-only: they must never be re-run); the command line on a real project."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from proveai import FileExporter, Trace, trace
from proveai.errors import ProveAIError, ProveAIExit
from proveai.snapshot.init import build_snapshot, init_snapshot
from proveai.snapshot.model import load_snapshot
from proveai.store import Store
from tests.conftest import assert_clean_error
from tests.proveai.snapshot.kit import (
    stored_trace_ids,
    stored_trace_ids_in,
    two_runs_project,  # noqa: F401  (the `two_runs` fixture)
)
from tests.proveai.snapshot.store_kit import capture, pin


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path)


def exported(store: Store, captured: Trace, **fields: object) -> Trace:
    """`captured` with other fields (an invocation, no spans), written to the store as a capture."""
    built = Trace.closed(
        trace_id=fields.get("trace_id", captured.trace_id),
        name=captured.name,
        service_name=captured.name,
        spans=fields.get("spans", captured.spans),
        invocation=fields.get("invocation", captured.invocation),
    )
    FileExporter(store.traces_dir).export(built)
    return built


def test_the_newest_trace_is_pinned_as_version_1_with_a_gitignore(store: Store) -> None:
    capture(store, "older ticket")
    newest = capture(store, qa_loops=2)
    result = pin(store)
    path = store.snapshots_dir / "latest.json"
    assert (result.path, result.unchanged, result.varying) == (path, False, ())
    snap = load_snapshot(path)  # read back from the file, as verify will
    assert snap == result.snapshot
    assert (snap.name, snap.version, snap.trace_name) == ("latest", 1, "support")
    assert snap.trace_id == newest.trace_id
    assert (snap.quick_only, snap.replicates) == (True, 1)
    assert list(snap.agents) == ["classify", "draft", "policy", "qa_check"]
    assert [io.inputs for io in snap.expected("classify")] == [{"ticket": "I want a refund"}]
    assert len(snap.expected("qa_check")) == 2
    assert "project_root" not in (snap.invocation or {})
    # the judge cache beside the snapshots is local state, kept out of git
    ignored = (store.snapshots_dir / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert "/.judge_cache.json" in ignored


def test_pinning_the_same_trace_again_keeps_the_file_and_its_version(store: Store) -> None:
    first = capture(store)
    pinned = pin(store)
    before = pinned.path.read_bytes()
    again = pin(store)
    assert (again.unchanged, again.snapshot.version) == (True, 1)
    assert again.path.read_bytes() == before
    capture(store, tone="curt")  # new content under the same name: the next version
    bumped = pin(store)
    assert (bumped.unchanged, bumped.snapshot.version) == (False, 2)
    assert load_snapshot(bumped.path).version == 2
    back = pin(store, trace_id=first.trace_id)  # the first content again is new content again
    assert (back.unchanged, back.snapshot.version) == (False, 3)


def test_a_malformed_snapshot_file_is_replaced_by_a_fresh_version_1(store: Store) -> None:
    capture(store)
    store.snapshots_dir.mkdir(parents=True)
    (store.snapshots_dir / "latest.json").write_text("{not json", encoding="utf-8")
    result = pin(store)
    assert (result.unchanged, result.snapshot.version) == (False, 1)
    assert load_snapshot(result.path) == result.snapshot


def test_only_the_chosen_agents_are_pinned_and_an_unknown_one_is_refused(store: Store) -> None:
    captured = capture(store)
    result = pin(store, name="drafts", agents=["draft", "qa_check"])
    assert list(result.snapshot.agents) == ["draft", "qa_check"]
    assert list(result.snapshot.captures[0].io) == ["draft", "qa_check"]
    with pytest.raises(ProveAIError) as caught:
        pin(store, name="other", agents=["drafter"])
    assert caught.value.message == (
        f"unknown agent 'drafter' in trace {captured.trace_id[:12]}… (did you mean \"draft\"?)"
    )
    assert not (store.snapshots_dir / "other.json").exists()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"name": "../evil"}, "invalid snapshot name '../evil': not usable as a file name"),
        ({"replicates": 0}, "--replicates must be at least 1"),
    ],
)
def test_a_bad_name_or_count_is_refused_before_anything_is_read(
    store: Store, kwargs: dict, message: str
) -> None:
    with pytest.raises(ProveAIError) as caught:  # the store is empty: nothing was read
        init_snapshot(snapshots_dir=store.snapshots_dir, traces_dir=store.traces_dir, **kwargs)
    assert (caught.value.message, caught.value.exit_code) == (message, ProveAIExit.USAGE)
    assert not store.base.exists()


def test_a_trace_without_agent_spans_has_nothing_to_pin(store: Store) -> None:
    with trace("empty", exporters=[FileExporter(store.traces_dir)]) as empty:
        pass
    with pytest.raises(ProveAIError) as caught:
        pin(store)
    assert caught.value.message == f"trace {empty.trace_id[:12]}… has no agent spans: nothing to pin"
    assert not store.snapshots_dir.exists()


def test_a_trace_verify_cannot_rerun_is_pinned_only_for_quick_checks(store: Store) -> None:
    captured = exported(store, capture(store), trace_id="e" * 32, invocation=None)
    with pytest.raises(ProveAIError) as caught:
        init_snapshot(snapshots_dir=store.snapshots_dir, traces_dir=store.traces_dir, trace_id="eeee")
    assert caught.value.message == (
        f"trace {captured.trace_id[:12]}… cannot be re-run by verify: the trace carries no recorded "
        "invocation (captured by an older version?)"
    )
    assert caught.value.suggestions[-1] == (
        "or pin it for fixture checks only: proveai snapshot init --quick-only"
    )
    assert not store.snapshots_dir.exists()
    with pytest.raises(ProveAIError, match="cannot be re-run by verify"):  # N re-runs need a command too
        pin(store, trace_id="eeee", replicates=3)
    quick = pin(store, trace_id="eeee")
    assert (quick.snapshot.quick_only, quick.snapshot.invocation) == (True, None)


def test_an_agent_that_answered_one_input_two_ways_is_named(store: Store) -> None:
    capture(store, name="other-pipeline", tone="curt")  # another pipeline: never compared
    capture(store)
    assert pin(store).varying == ()
    capture(store, tone="curt")  # a run of the same pipeline wrote another draft for the same input
    capture(store)
    assert pin(store).varying == ("draft",)


def test_every_replicate_is_a_capture_and_defines_agents_the_first_missed(store: Store) -> None:
    short, full = capture(store, qa=False), capture(store, tone="curt")
    snap = build_snapshot("two", [short, full])
    assert (snap.version, snap.replicates, snap.trace_id) == (1, 2, short.trace_id)
    assert list(snap.agents) == ["classify", "draft", "policy", "qa_check"]  # qa_check from the second
    assert "qa_check" not in snap.captures[0].io and len(snap.expected("qa_check", 1)) == 1
    assert snap.expected("draft", 1)[0].output == "A curt reply about refund, within 30 days."
    assert build_snapshot("two", [short, full], existing=snap).version == 1
    assert build_snapshot("two", [full], existing=snap).version == 2


def test_the_pinned_command_holds_no_path_of_this_machine(store: Store, tmp_path: Path) -> None:
    root = tmp_path / "project"
    inside, outside = root / "data" / "tickets.txt", tmp_path / "elsewhere" / "x.txt"
    invocation = {
        "python": "/usr/bin/python3",
        "argv": [str(root / "sub" / "pipeline.py"), "--input", str(inside), str(outside), "plain"],
        "script": "pipeline.py",
        "cwd": "sub",
        "project_root": str(root),
        "env_names": ["OPENAI_API_KEY"],
    }
    moved = exported(store, capture(store), invocation=invocation)
    pinned = build_snapshot("portable", [moved]).invocation
    assert pinned == {
        "python": "/usr/bin/python3",
        "argv": ["pipeline.py", "--input", os.path.join("..", "data", "tickets.txt"), str(outside), "plain"],
        "script": "pipeline.py",
        "cwd": "sub",
        "env_names": ["OPENAI_API_KEY"],
    }


# ---- the command line, on a project whose pipeline was run twice --------------------------------


def test_init_pins_hashes_that_an_independent_reader_recomputes(two_runs) -> None:
    project, cli, env = two_runs
    result = cli("snapshot", "init", env=env)
    assert result.returncode == 0, result.stderr
    newest = stored_trace_ids(project)[-1]
    assert result.stdout == f"Wrote snapshot 'latest' v1 — 3 agent(s) · trace {newest[:12]}…\n"
    raw = (project / "proveai" / "snapshots" / "latest.json").read_text(encoding="utf-8")
    data = json.loads(raw)
    # byte-stable layout: sorted keys, two-space indent, trailing newline
    assert raw == json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    assert "timestamp" not in raw and "project_root" not in raw
    io = data["captures"][0]["io"]["draft"][0]
    canonical = json.dumps(io["output"], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert io["output_hash"] == "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()
    prompt = data["agents"]["draft"]["prompt"]
    assert prompt == "Draft a short, polite reply for this category."
    assert (
        data["agents"]["draft"]["prompt_hash"]
        == "sha256:" + hashlib.sha256(json.dumps(prompt).encode()).hexdigest()
    )
    assert data["agents"]["draft"]["parent_agent"] == "classify"
    assert data["captures"][0]["io"]["classify"][0]["inputs"] == {"ticket": "Second ticket"}


def test_trace_id_prefix_agents_and_names(two_runs) -> None:
    project, cli, env = two_runs
    older = stored_trace_ids(project)[0]
    result = cli("snapshot", "init", "weekly-goods", "--trace-id", older[:10], "--agent", "draft", env=env)
    assert result.returncode == 0, result.stderr
    assert "'weekly-goods' v1 — 1 agent(s)" in result.stdout
    data = json.loads((project / "proveai" / "snapshots" / "weekly-goods.json").read_text(encoding="utf-8"))
    assert list(data["agents"]) == ["draft"] and data["captures"][0]["trace_id"] == older

    shutil.copytree(project / "proveai" / "traces", project / "elsewhere")
    shutil.rmtree(project / "proveai" / "traces")
    other = cli("snapshot", "init", "other", "--traces", "elsewhere", env=env)
    assert other.returncode == 0, other.stderr
    assert f"trace {stored_trace_ids_in(project / 'elsewhere')[-1][:12]}…" in other.stdout
    shutil.copytree(project / "elsewhere", project / "proveai" / "traces")

    unknown_agent = cli("snapshot", "init", "x", "--agent", "drafter", env=env)
    assert_clean_error(unknown_agent, 2, "unknown agent 'drafter'", 'did you mean "draft"', "known agents:")
    unknown_trace = cli("snapshot", "init", "x", "--trace-id", "ffffffff", env=env)
    assert_clean_error(unknown_trace, 2, "no trace 'ffffffff'")
    bad_name = cli("snapshot", "init", "../evil", env=env)
    assert_clean_error(bad_name, 2, "not usable as a file name")
    assert not (project / "proveai" / "snapshots" / "x.json").exists()


def test_init_pins_a_trace_still_only_in_the_index_journal(two_runs) -> None:
    # The capture index compacts its journal lazily: the newest trace may be listed only in
    # manifest.journal.jsonl, and its file may look older (a copy, a checkout).
    project, cli, env = two_runs
    store = project / "proveai" / "traces"
    older, newest = stored_trace_ids(project)
    manifest = json.loads((store / "manifest.json").read_text(encoding="utf-8"))
    entry = manifest.pop(newest)
    (store / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    line = json.dumps({"trace_id": newest, "entry": entry}) + "\n"
    (store / "manifest.journal.jsonl").write_text(line, encoding="utf-8")
    old_mtime = (store / f"{older}.json").stat().st_mtime
    os.utime(store / f"{newest}.json", (old_mtime - 60, old_mtime - 60))
    result = cli("snapshot", "init", env=env)
    assert result.returncode == 0, result.stderr
    data = json.loads((project / "proveai" / "snapshots" / "latest.json").read_text(encoding="utf-8"))
    assert data["captures"][0]["trace_id"] == newest
