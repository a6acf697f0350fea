"""The judge cache on disk: a verdict saved by one run is served to the next, per judge model,
merged with what another run saved meanwhile, and kept out of git by its own .gitignore."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from proveai.store.judge_cache import CACHE_NAME, JudgeCache

REGRESSED = {"status": "regressed", "rationale": "the refund amount changed", "tier": "judge"}
UNCHANGED = {"status": "unchanged", "rationale": "same meaning", "tier": "embedding"}


def test_a_saved_verdict_is_served_to_the_next_run_for_the_same_judge_only(tmp_path: Path) -> None:
    first = JudgeCache(tmp_path)
    assert first.get("old1", "new1", "judge-a") is None
    first.put("old1", "new1", "judge-a", REGRESSED)
    first.put("old2", "new2", None, UNCHANGED)
    first.save()
    on_disk = json.loads((tmp_path / CACHE_NAME).read_text())
    assert on_disk == {"old1|new1|judge-a": REGRESSED, "old2|new2|-": UNCHANGED}

    second = JudgeCache(tmp_path)
    assert second.get("old1", "new1", "judge-a") == REGRESSED
    assert second.get("old1", "new1", "judge-b") is None  # another judge may decide otherwise
    assert second.get("new1", "old1", "judge-a") is None  # the order of the pair matters
    assert second.get("old2", "new2", None) == UNCHANGED
    assert (second.hits, second.misses) == (2, 2)


def test_a_run_saving_after_another_keeps_both_runs_verdicts(tmp_path: Path) -> None:
    one, other = JudgeCache(tmp_path), JudgeCache(tmp_path)
    assert one.get("a", "b", "m") is None and other.get("c", "d", "m") is None  # both read an empty cache
    one.put("a", "b", "m", REGRESSED)
    other.put("c", "d", "m", UNCHANGED)
    one.save()
    other.save()
    assert json.loads((tmp_path / CACHE_NAME).read_text()) == {"a|b|m": REGRESSED, "c|d|m": UNCHANGED}
    assert not list(tmp_path.glob("*.tmp")) and not list(tmp_path.glob(".*.tmp"))


def test_a_damaged_cache_is_only_a_slower_run_and_a_disabled_one_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / CACHE_NAME).write_text("{torn")
    cache = JudgeCache(tmp_path)
    assert cache.get("a", "b", "m") is None
    cache.put("a", "b", "m", REGRESSED)
    cache.save()
    assert json.loads((tmp_path / CACHE_NAME).read_text()) == {"a|b|m": REGRESSED}

    elsewhere = tmp_path / "off"
    disabled = JudgeCache(elsewhere, enabled=False)
    disabled.put("a", "b", "m", REGRESSED)
    disabled.save()
    assert disabled.get("a", "b", "m") is None and not elsewhere.exists()


def test_git_ignores_the_cache_and_keeps_the_users_own_ignore_lines(tmp_path: Path) -> None:
    snapshots = tmp_path / "proveai" / "snapshots"
    snapshots.mkdir(parents=True)
    (snapshots / ".gitignore").write_text("scratch/\n")
    cache = JudgeCache(snapshots)
    cache.put("a", "b", "m", REGRESSED)
    cache.save()
    cache.put("c", "d", "m", UNCHANGED)
    cache.save()  # a second save adds no line twice
    lines = (snapshots / ".gitignore").read_text().splitlines()
    assert lines[0] == "scratch/" and len(lines) == len(set(lines))
    (snapshots / "checkout.json").write_text("{}")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    ignored = subprocess.run(
        ["git", "check-ignore", CACHE_NAME, CACHE_NAME + ".lock", "scratch/x", "checkout.json"],
        cwd=snapshots, capture_output=True, text=True,
    )
    assert ignored.stdout.split() == [CACHE_NAME, CACHE_NAME + ".lock", "scratch/x"]  # the snapshot is not
