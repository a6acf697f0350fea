"""Snapshot files: written byte for byte and read back, the folder's dot-files never listed as
snapshots, a missing or torn file one clear error naming it, and a killed writer's temporary
file cleared by the next write."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proveai.errors import ProveAIError
from proveai.snapshot.model import Capture, ExpectedIO, Snapshot, load_snapshot, write_snapshot
from proveai.store.judge_cache import JudgeCache
from proveai.store.snapshots import (
    read_snapshot_document,
    snapshot_files,
    snapshot_path,
    write_snapshot_text,
)
from tests.proveai.store.store_kit import killed_writer_temp


def pinned(name: str) -> Snapshot:
    io = {"plan": (ExpectedIO(inputs={"goal": "refund"}, output={"steps": ["answer"]}),)}
    return Snapshot(name=name, version=1, agents={}, captures=(Capture("ab" * 16, io),))


def test_a_snapshot_is_written_byte_for_byte_and_read_back(tmp_path: Path) -> None:
    folder = tmp_path / "proveai" / "snapshots"
    path = snapshot_path(folder, "latest")
    assert path == folder / "latest.json"
    write_snapshot(path, pinned("latest"))  # the folder is made
    assert path.read_bytes() == pinned("latest").to_json().encode("utf-8")
    assert json.loads(path.read_text()) == read_snapshot_document(path)
    assert load_snapshot(path) == pinned("latest")
    write_snapshot_text(path, "{}\n")
    assert path.read_bytes() == b"{}\n" and [p.name for p in folder.iterdir()] == ["latest.json"]


def test_the_folders_dot_files_are_not_snapshots(tmp_path: Path) -> None:
    for name in ("weekly", "latest"):
        write_snapshot(snapshot_path(tmp_path, name), pinned(name))
    cache = JudgeCache(tmp_path)
    cache.put("a", "b", None, {"status": "unchanged"})
    cache.save()  # .judge_cache.json, its lock and .gitignore
    (tmp_path / "notes.txt").write_text("not JSON")
    assert [p.name for p in snapshot_files(tmp_path)] == ["latest.json", "weekly.json"]
    assert snapshot_files(tmp_path / "missing") == []


def test_a_missing_or_torn_snapshot_is_one_error_naming_the_file(tmp_path: Path) -> None:
    with pytest.raises(ProveAIError) as missing:
        read_snapshot_document(tmp_path / "latest.json")
    assert missing.value.message == f"no snapshot at {tmp_path / 'latest.json'}"
    assert missing.value.suggestions == ("proveai snapshot list",)
    (tmp_path / "torn.json").write_text('{"format": ')
    with pytest.raises(ProveAIError) as torn:
        read_snapshot_document(tmp_path / "torn.json")
    assert torn.value.message.startswith(f"{tmp_path / 'torn.json'}: not valid JSON (line 1, column 12")
    assert torn.value.suggestions == ("re-create it: proveai snapshot init torn",)


def test_a_killed_writers_temporary_file_is_cleared_by_the_next_write(tmp_path: Path, home: Path) -> None:
    folder = tmp_path / "snapshots"
    left = killed_writer_temp(folder / "latest.json", home)
    assert snapshot_files(folder) == []  # never listed as a snapshot
    write_snapshot(snapshot_path(folder, "weekly"), pinned("weekly"))
    assert not left.exists()
    assert [p.name for p in folder.iterdir()] == ["weekly.json"]
