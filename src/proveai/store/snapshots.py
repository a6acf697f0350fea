"""Snapshot files: proveai/snapshots/<name>.json, found, read and replaced here.

What a file holds (the Snapshot record, its byte-stable JSON text and its validation) is
proveai.snapshot.model's, which turns the documents read here into Snapshots and hands its
text back to be written. The folder's dot-files (the judge cache, its lock and .gitignore,
temporary files) are not snapshots.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from prove_common.files import clear_stale_temps, write_text_atomic
from proveai.errors import ProveAIError


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
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ProveAIError(f"no snapshot at {path}", suggestions=["proveai snapshot list"]) from exc
    except OSError as exc:
        raise ProveAIError(f"cannot read {path}: {exc.strerror}") from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ProveAIError(
            f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})",
            suggestions=[f"re-create it: proveai snapshot init {path.stem}"],
        ) from exc


def write_snapshot_text(path: Path, text: str) -> None:
    """Replace one snapshot file atomically with `text` (its exact bytes, as UTF-8), so a reader
    never sees a torn snapshot."""
    path.parent.mkdir(parents=True, exist_ok=True)
    clear_stale_temps(path.parent)  # what a killed writer of this folder left
    write_text_atomic(path, text)
