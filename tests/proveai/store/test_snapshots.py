"""Snapshot files: written byte for byte and read back, the folder's dot-files never listed as
snapshots, a missing or torn file one clear error naming it, and a killed writer's temporary
file cleared by the next write; the invocations trusted here, and a snapshot file as a real git
revision committed it."""

from __future__ import annotations

import json
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from proveai.errors import ProveAIError
from proveai.snapshot.model import (
    Capture,
    ExpectedIO,
    Snapshot,
    content_hash,
    load_snapshot,
    write_snapshot,
)
from proveai.store.judge_cache import JudgeCache
from proveai.store.snapshots import (
    TRUSTED_NAME,
    Committed,
    committed_snapshot,
    merge_base,
    read_snapshot_document,
    snapshot_files,
    snapshot_path,
    trust_invocation,
    trusted_invocations,
    write_snapshot_text,
)
from tests.proveai.snapshot.kit import git
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
    cache.put("a", "b", None, {"status": "drifted"})
    cache.save()  # .judge_cache.json, its lock and .gitignore
    trust_invocation(tmp_path, "sha256:ab", snapshot="latest", command="python pipeline.py")
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
    (tmp_path / "deep.json").write_text("[" * 200_000 + "]" * 200_000)  # past the parser's recursion
    with pytest.raises(ProveAIError) as deep:
        read_snapshot_document(tmp_path / "deep.json")
    too_deep = "not a snapshot (its JSON is nested too deeply to read)"
    assert deep.value.message == f"{tmp_path / 'deep.json'}: {too_deep}"
    (tmp_path / "zero.json").symlink_to("/dev/zero")  # never ends: refused unread
    with pytest.raises(ProveAIError) as device:
        read_snapshot_document(tmp_path / "zero.json")
    assert device.value.message == f"{tmp_path / 'zero.json'} is a character device, not a snapshot file"


def test_a_killed_writers_temporary_file_is_cleared_by_the_next_write(tmp_path: Path, home: Path) -> None:
    folder = tmp_path / "snapshots"
    left = killed_writer_temp(folder / "latest.json", home)
    assert snapshot_files(folder) == []  # never listed as a snapshot
    write_snapshot(snapshot_path(folder, "weekly"), pinned("weekly"))
    assert not left.exists()
    assert [p.name for p in folder.iterdir()] == ["weekly.json"]


INVOCATION = {"python": "/venv/bin/python", "argv": ["pipeline.py"], "script": "pipeline.py", "cwd": "."}


def test_trusted_invocations_are_merged_local_state_git_ignores(tmp_path: Path) -> None:
    folder = tmp_path / "proveai" / "snapshots"
    assert trusted_invocations(folder) == {}
    trust_invocation(folder, "sha256:one", snapshot="latest", command="python pipeline.py")
    trust_invocation(folder, "sha256:two", snapshot="weekly", command="python -m pkg.run")
    assert trusted_invocations(folder) == {
        "sha256:one": {"snapshot": "latest", "command": "python pipeline.py"},
        "sha256:two": {"snapshot": "weekly", "command": "python -m pkg.run"},
    }
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    ignored = subprocess.run(
        ["git", "check-ignore", TRUSTED_NAME, TRUSTED_NAME + ".lock"],
        cwd=folder, capture_output=True, text=True,
    )
    assert ignored.stdout.split() == [TRUSTED_NAME, TRUSTED_NAME + ".lock"]
    (folder / TRUSTED_NAME).write_text("[torn")
    assert trusted_invocations(folder) == {}  # a damaged record trusts nothing


def test_writing_a_new_invocation_trusts_it_and_rewriting_the_held_one_does_not(tmp_path: Path) -> None:
    path = snapshot_path(tmp_path, "latest")
    write_snapshot(path, replace(pinned("latest"), invocation=INVOCATION))  # init, from a run captured here
    assert set(trusted_invocations(tmp_path)) == {content_hash(INVOCATION)}
    held = {**INVOCATION, "argv": ["evil.py"]}  # an edit the file arrived with
    data = json.loads(path.read_text())
    data["invocation"], data["invocation_hash"] = held, content_hash(held)
    path.write_text(json.dumps(data))
    write_snapshot(path, replace(pinned("latest"), version=2, invocation=held))  # update keeps the invocation
    assert set(trusted_invocations(tmp_path)) == {content_hash(INVOCATION)}


def test_a_snapshot_file_as_a_revision_committed_it(tmp_path: Path) -> None:
    folder = tmp_path / "proveai" / "snapshots"
    path = snapshot_path(folder, "latest")
    assert committed_snapshot(path, "HEAD") is None  # no folder
    write_snapshot_text(path, json.dumps({"invocation": INVOCATION}))
    assert committed_snapshot(path, "HEAD") is None  # not a repository
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "pin")
    git(tmp_path, "checkout", "-q", "-b", "feature")
    write_snapshot_text(path, json.dumps({"invocation": {**INVOCATION, "argv": ["other.py"]}}))
    git(tmp_path, "commit", "-q", "-am", "changed")
    assert committed_snapshot(path, "main") == Committed("main", True, {"invocation": INVOCATION})
    assert committed_snapshot(path, "HEAD").document["invocation"]["argv"] == ["other.py"]
    assert committed_snapshot(snapshot_path(folder, "weekly"), "main") == Committed("main", False)
    assert committed_snapshot(path, "no-such-branch") is None
    start = merge_base(folder, "main")
    assert start is not None and committed_snapshot(path, start).document == {"invocation": INVOCATION}
    assert merge_base(folder, "no-such-branch") is None
