"""Run folders under proveai/runs/: a verify run's three documents read back with plain json
(the manifest's keys and its `created` text as every verify wrote them), the newest verify
that kept a capture, the start of a pin that came from a verify run, replay runs, and the
temporary files killed writers left in run folders cleared when a new run folder opens."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from proveai.errors import ProveAIError
from proveai.store import Store
from proveai.store.runs import (
    Run,
    last_verify,
    new_verify_run_id,
    overrides_summary,
    pinned_start_time,
    write_verify_run,
)
from tests.proveai.store.store_kit import capture, killed_writer_temp


def verify_run(runs_dir: Path, snapshot: str, *, fresh: list[str] = (), **fields: Any) -> Path:
    run_id = new_verify_run_id()
    run_dir = runs_dir / run_id
    for name in fresh:
        (run_dir / "fresh").mkdir(parents=True, exist_ok=True)
        (run_dir / "fresh" / name).write_text("{}")
    document = {
        "run_id": run_id, "snapshot": snapshot, "snapshot_version": 2, "mode": "rerun",
        "overrides": {}, "exit_code": 0, "notes": (), "verdicts": [], "replicates": [], "metrics": {},
    }
    write_verify_run(run_dir, **{**document, **fields})
    return run_dir


def test_a_verify_run_is_three_documents_in_the_form_verify_always_wrote(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    run_dir = verify_run(
        runs, "latest", fresh=["001-b.json", "000-a.json"], mode="quick", exit_code=1,
        overrides={"plan": Path("prompts/plan.txt")}, notes=("quick: graded the newest stored trace",),
        verdicts=[{"agent": "plan", "status": "regressed"}], replicates=[{"agent": "plan", "p_value": 0.01}],
        metrics={"mode": "quick", "agents": 1},
    )
    assert re.fullmatch(r"verify-\d{8}-\d{6}-[0-9a-f]{6}", run_dir.name)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert list(manifest) == [
        "kind", "run_id", "snapshot", "snapshot_version", "mode", "created", "fresh", "overrides",
        "exit_code", "notes",
    ]
    assert manifest["kind"] == "snapshot-verify" and manifest["run_id"] == run_dir.name
    assert manifest["fresh"] == ["000-a.json", "001-b.json"]
    assert manifest["overrides"] == {"plan": "prompts/plan.txt"} and manifest["exit_code"] == 1
    # isoformat(): microseconds and +00:00 (last_verify orders runs by this text)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00", manifest["created"])
    assert dt.datetime.fromisoformat(manifest["created"]).utcoffset() == dt.timedelta(0)
    assert json.loads((run_dir / "verdicts.json").read_text()) == {
        "verdicts": [{"agent": "plan", "status": "regressed"}],
        "replicates": [{"agent": "plan", "p_value": 0.01}],
    }
    assert json.loads((run_dir / "metrics.json").read_text()) == {"mode": "quick", "agents": 1}


def test_the_last_verify_is_the_newest_of_that_snapshot_that_kept_a_capture(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    assert last_verify(runs, "latest") is None
    older = verify_run(runs, "latest", fresh=["000-a.json"])
    newer = verify_run(runs, "latest", fresh=["000-b.json"])
    verify_run(runs, "latest")  # newest, but kept no capture
    verify_run(runs, "weekly", fresh=["000-c.json"])
    (runs / "verify-torn").mkdir()
    (runs / "verify-torn" / "manifest.json").write_text("{")
    assert older.name != newer.name
    assert last_verify(runs, "latest") == newer
    assert last_verify(runs, "nightly") is None


def test_a_pins_start_comes_from_the_verify_run_that_kept_it(tmp_path: Path) -> None:
    kept = capture(tmp_path / "traces")
    runs = tmp_path / "runs"
    fresh = runs / "verify-20260101-000000-abcdef" / "fresh"
    fresh.mkdir(parents=True)
    shutil.copy(tmp_path / "traces" / f"{kept.trace_id}.json", fresh / f"000-{kept.trace_id}.json")
    (fresh / f"001-{'f' * 32}.json").write_text("not a trace")
    assert pinned_start_time(runs, {kept.trace_id}) == kept.started_ns / 1e9
    assert pinned_start_time(runs, {"f" * 32}) is None  # unreadable: skipped, not raised
    assert pinned_start_time(runs, {"0" * 32}) is None


def test_a_replay_run_folder_is_made_listed_and_loaded(tmp_path: Path) -> None:
    store = Store(tmp_path)
    assert Run.list(store) == []
    run = Run.create(store)
    assert re.fullmatch(r"\d{8}T\d{6}Z-[0-9a-f]{6}", run.run_id) and run.path.is_dir()
    assert Run.list(store) == []  # no manifest yet
    run.write_json("verdicts.json", [{"edge": "plan->lookup", "status": "unchanged"}])
    assert run.write_json("manifest.json", {"run_id": run.run_id}) == run.path / "manifest.json"
    assert Run.list(store) == [run.run_id]
    loaded = Run.load(run.run_id, store)
    assert loaded.manifest == {"run_id": run.run_id} and loaded.report_path == run.path / "report.html"
    assert loaded.verdicts() == [{"edge": "plan->lookup", "status": "unchanged"}]
    with pytest.raises(ProveAIError, match="no run 'nope' in"):
        Run.load("nope", store)


def test_a_run_manifest_records_the_prompts_hash_never_its_text() -> None:
    summary = overrides_summary({"plan": {"prompt": "be terse", "model": "m", "messages": [{}, {}]}})
    assert summary == {
        "plan": {"model": "m", "prompt_sha256": hashlib.sha256(b"be terse").hexdigest(), "messages": 2}
    }


def test_a_new_run_folder_clears_what_killed_writers_left_in_the_others(tmp_path: Path, home: Path) -> None:
    store = Store(tmp_path)
    old_verify = store.runs_dir / "verify-20260101-000000-abcdef"
    killed_verify = killed_writer_temp(old_verify / "manifest.json", home)
    verify_run(store.runs_dir, "latest")
    assert not killed_verify.exists()
    killed_replay = killed_writer_temp(store.runs_dir / "20260101T000000Z-abcdef" / "metrics.json", home)
    Run.create(store)
    assert not killed_replay.exists()
    assert not list(store.runs_dir.glob("*/.*.tmp"))
