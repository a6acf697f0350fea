"""Snapshot files: proveai/snapshots/<name>.json, found, read and replaced here.

What a file holds (the Snapshot record, its byte-stable JSON text and its validation) is
proveai.snapshot.model's, which turns the documents read here into Snapshots and hands its
text back to be written. The folder's dot-files (the judge cache, the trusted invocations,
their locks and .gitignore, temporary files) are not snapshots.

A snapshot's invocation is the command `snapshot verify` runs, so two readings of it are here
too: the invocations this checkout trusts (`.trusted_invocations.json`, local and git-ignored:
what `init` wrote here or the user accepted with `verify --trust-invocation`), and a snapshot
file as a git revision committed it (what a reviewed branch runs).
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prove_common.files import (
    FileTooLarge,
    NotRegularFile,
    clear_stale_temps,
    read_regular_text,
    write_text_atomic,
)
from proveai.errors import ProveAIError
from proveai.store.judge_cache import ensure_gitignore
from proveai.store.layout import lock

TRUSTED_NAME = ".trusted_invocations.json"
_GIT_TIMEOUT_S = 60


def snapshot_path(snapshots_dir: Path, name: str) -> Path:
    return snapshots_dir / f"{name}.json"


def snapshot_files(snapshots_dir: Path) -> list[Path]:
    """The snapshot files of a folder, by name: every `*.json` but the dot-files."""
    if not snapshots_dir.is_dir():
        return []
    return [path for path in sorted(snapshots_dir.glob("*.json")) if not path.name.startswith(".")]


def read_snapshot_document(path: Path) -> Any:
    """The JSON document of one snapshot file; a missing, unreadable or non-JSON file raises a
    ProveAIError naming it."""
    try:
        text = read_regular_text(path)
    except FileNotFoundError as exc:
        raise ProveAIError(f"no snapshot at {path}", suggestions=["proveai snapshot list"]) from exc
    except NotRegularFile as exc:
        raise ProveAIError(f"{path} is {exc.kind}, not a snapshot file") from None
    except FileTooLarge as exc:
        again = f"re-create it: proveai snapshot init {path.stem}"
        raise ProveAIError(str(exc), suggestions=[again]) from None
    except OSError as exc:
        raise ProveAIError(f"cannot read {path}: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise ProveAIError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ProveAIError(
            f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})",
            suggestions=[f"re-create it: proveai snapshot init {path.stem}"],
        ) from exc
    except RecursionError:
        raise ProveAIError(
            f"{path}: not a snapshot (its JSON is nested too deeply to read)",
            suggestions=[f"re-create it: proveai snapshot init {path.stem}"],
        ) from None


def write_snapshot_text(path: Path, text: str) -> None:
    """Replace one snapshot file atomically with `text` (its exact bytes, as UTF-8), so a reader
    never sees a torn snapshot."""
    path.parent.mkdir(parents=True, exist_ok=True)
    clear_stale_temps(path.parent)  # what a killed writer of this folder left
    write_text_atomic(path, text)


# ---- the invocations this checkout trusts --------------------------------------------------------


def trusted_invocations(snapshots_dir: Path) -> dict[str, dict[str, str]]:
    """invocation hash -> {"snapshot", "command"} of every invocation trusted here; a missing or
    damaged record trusts nothing (verify then compares with git, or asks)."""
    try:
        data = json.loads(read_regular_text(snapshots_dir / TRUSTED_NAME))
    except (OSError, ValueError, RecursionError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, dict)}


def trust_invocation(snapshots_dir: Path, invocation_hash: str, *, snapshot: str, command: str) -> None:
    """Record `invocation_hash` as trusted here (merged under a lock with what others recorded),
    keeping the record out of git."""
    snapshots_dir.mkdir(parents=True, exist_ok=True)
    ensure_gitignore(snapshots_dir)
    path = snapshots_dir / TRUSTED_NAME
    with lock(path.with_name(path.name + ".lock")):
        current = trusted_invocations(snapshots_dir)
        current[invocation_hash] = {"snapshot": snapshot, "command": command}
        write_text_atomic(path, json.dumps(current, sort_keys=True, indent=1) + "\n")


# ---- a snapshot file as git committed it ----------------------------------------------------------


@dataclass(frozen=True)
class Committed:
    """A snapshot file at a git revision: `document` is its JSON (None when the revision has no
    such file, or holds one that is not JSON)."""

    revision: str
    exists: bool
    document: Any = None


def _git(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str] | None:
    try:
        return subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=_GIT_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None


def merge_base(folder: Path, revision: str) -> str | None:
    """The commit where HEAD left `revision` (a branch's start), when git can tell."""
    result = _git(["merge-base", revision, "HEAD"], folder) if folder.is_dir() else None
    return result.stdout.strip() if result is not None and result.returncode == 0 and result.stdout else None


def committed_snapshot(path: Path, revision: str) -> Committed | None:
    """The snapshot file `path` as `revision` committed it; None when git cannot read that
    revision here (not a repository, an unknown revision, git missing)."""
    folder = path.parent
    if not folder.is_dir():
        return None
    resolved = _git(["rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}"], folder)
    if resolved is None or resolved.returncode != 0:
        return None
    shown = _git(["show", f"{resolved.stdout.strip()}:./{path.name}"], folder)
    if shown is None:
        return None
    if shown.returncode != 0:
        return Committed(revision, exists=False)
    try:
        return Committed(revision, exists=True, document=json.loads(shown.stdout))
    except ValueError:
        return Committed(revision, exists=True)
