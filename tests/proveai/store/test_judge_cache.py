"""The judge cache on disk: a verdict saved by one run is served to the next, per judge model,
merged with what another run saved meanwhile, and kept out of git by its own .gitignore; an
entry edited or moved by hand cannot make a verdict say what the judge did not (the report's
poisoning, through the installed `proveai snapshot verify` too)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from proveai.store.judge_cache import CACHE_NAME, JudgeCache
from tests.proveai.snapshot.kit import edit, make_project, pinned_project, strict_judge_server, table_rows

REGRESSED = {"status": "regressed", "rationale": "the refund amount changed", "tier": "judge"}
DRIFTED = {"status": "drifted", "rationale": "same meaning, other words", "tier": "judge"}
UNCHANGED = {"status": "unchanged", "rationale": "same meaning", "tier": "embedding"}


def stored(verdict: dict, pinned: str, fresh: str, judge: str) -> dict:
    """An entry as the cache writes it: the verdict and the pair and judge it was decided for."""
    return {**verdict, "pinned": pinned, "fresh": fresh, "judge_model": judge}


def test_a_saved_verdict_is_served_to_the_next_run_for_the_same_judge_only(tmp_path: Path) -> None:
    first = JudgeCache(tmp_path)
    assert first.get("old1", "new1", "judge-a") is None
    first.put("old1", "new1", "judge-a", REGRESSED)
    first.put("old2", "new2", None, DRIFTED)
    first.save()
    on_disk = json.loads((tmp_path / CACHE_NAME).read_text())
    assert on_disk == {
        "old1|new1|judge-a": stored(REGRESSED, "old1", "new1", "judge-a"),
        "old2|new2|-": stored(DRIFTED, "old2", "new2", "-"),
    }

    second = JudgeCache(tmp_path)
    assert second.get("old1", "new1", "judge-a") == REGRESSED
    assert second.get("old1", "new1", "judge-b") is None  # another judge may decide otherwise
    assert second.get("new1", "old1", "judge-a") is None  # the order of the pair matters
    assert second.get("old2", "new2", None) == DRIFTED
    assert (second.hits, second.misses) == (2, 2)


def test_a_run_saving_after_another_keeps_both_runs_verdicts(tmp_path: Path) -> None:
    one, other = JudgeCache(tmp_path), JudgeCache(tmp_path)
    assert one.get("a", "b", "m") is None and other.get("c", "d", "m") is None  # both read an empty cache
    one.put("a", "b", "m", REGRESSED)
    other.put("c", "d", "m", DRIFTED)
    one.save()
    other.save()
    assert json.loads((tmp_path / CACHE_NAME).read_text()) == {
        "a|b|m": stored(REGRESSED, "a", "b", "m"), "c|d|m": stored(DRIFTED, "c", "d", "m"),
    }
    assert not list(tmp_path.glob("*.tmp")) and not list(tmp_path.glob(".*.tmp"))


@pytest.mark.parametrize("damage", ["{torn", "[" * 200_000 + "]" * 200_000, '{"a|b|m": "a string"}'])
def test_a_damaged_cache_is_only_a_slower_run_and_a_disabled_one_writes_nothing(
    tmp_path: Path, damage: str
) -> None:
    (tmp_path / CACHE_NAME).write_text(damage)
    cache = JudgeCache(tmp_path)
    assert cache.get("a", "b", "m") is None
    cache.put("a", "b", "m", REGRESSED)
    cache.save()
    assert json.loads((tmp_path / CACHE_NAME).read_text()) == {"a|b|m": stored(REGRESSED, "a", "b", "m")}

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
    cache.put("c", "d", "m", DRIFTED)
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


def test_unchanged_for_two_different_hashes_is_neither_cached_nor_served(tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path)
    cache.put("old", "new", "m", UNCHANGED)  # what tier 2 said: asked again next time, never stored
    cache.put("same", "same", "m", UNCHANGED)  # one output: unchanged is the truth
    cache.save()
    assert json.loads((tmp_path / CACHE_NAME).read_text()) == {
        "same|same|m": stored(UNCHANGED, "same", "same", "m")
    }
    (tmp_path / CACHE_NAME).write_text(json.dumps({"old|new|m": stored(UNCHANGED, "old", "new", "m")}))
    assert JudgeCache(tmp_path).get("old", "new", "m") is None


@pytest.mark.parametrize(
    "entry",
    [
        stored(DRIFTED, "other", "new", "m"),  # decided for another pinned output, moved under this key
        stored(DRIFTED, "old", "other", "m"),  # ... for another fresh output
        stored(DRIFTED, "old", "new", "another-judge"),  # ... by another judge
        DRIFTED,  # no pair recorded (an edit, or a cache older than the check)
        "drifted",  # not an entry at all
    ],
)
def test_an_entry_is_served_only_for_the_pair_and_judge_it_records(tmp_path: Path, entry: object) -> None:
    (tmp_path / CACHE_NAME).write_text(json.dumps({"old|new|m": entry}))
    cache = JudgeCache(tmp_path)
    assert cache.get("old", "new", "m") is None
    assert (cache.hits, cache.misses) == (0, 1)
    cache.put("old", "new", "m", REGRESSED)  # graded again, the entry is replaced
    cache.save()
    assert JudgeCache(tmp_path).get("old", "new", "m") == REGRESSED


def test_a_poisoned_cache_cannot_turn_a_regression_into_unchanged(tmp_path: Path, home: Path) -> None:
    """The report's test: every entry's status set to unchanged, where the hashes differ."""
    project = make_project(tmp_path / "proj").parent
    with strict_judge_server() as server:
        cli, env = pinned_project(project, server, home)
        edit(project / "pipeline.py", "Draft a short, polite reply", "Draft a curt reply")
        first = cli("snapshot", "verify", env=env)
        assert first.returncode == 1, first.stderr
        assert "regressed" in table_rows(first.stdout)["draft"]
        path = project / "proveai" / "snapshots" / CACHE_NAME
        entries = json.loads(path.read_text(encoding="utf-8"))
        pairs = [key.split("|")[:2] for key in entries]
        assert pairs and all(pinned != fresh for pinned, fresh in pairs)
        path.write_text(json.dumps({k: {**e, "status": "unchanged"} for k, e in entries.items()}))
        again = cli("snapshot", "verify", env=env)
    assert again.returncode == 1, (again.stdout, again.stderr)
    rows = table_rows(again.stdout)
    assert "regressed" in rows["draft"] and "unchanged" not in rows["draft"]
    assert "unchanged" not in rows["qa_check"]
