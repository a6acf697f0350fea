"""The trace index: manifest.json plus an append-only journal, so a capture costs O(1).

Files under the store root:
- `manifest.json`: {trace_id: entry}, one entry per line, replaced atomically. A plain
  json.load gives a consistent snapshot; it may lag the journal until the next compaction.
- `manifest.journal.jsonl`: one `{"trace_id": ..., "entry": {...}}` line per capture,
  appended with O_APPEND under the store lock.
- `.lock`: the store lock (see lock).

A capture appends one journal line; when the journal outgrows half of manifest.json (so at
once while the store is empty), the capture compacts it into manifest.json under the lock.
Each compaction costs O(manifest) and happens after manifest/2 bytes of new entries, so a
capture's amortised cost stays O(1) however many traces are stored.
Every read through the API (iter_traces, status, list) folds the journal into manifest.json
first, so the manifest is current after any read. A manifest or journal line that does not
parse is reported as a warning and the index is rebuilt from the trace files; the unreadable
manifest is kept beside it as manifest.json.corrupt-<time>, never silently emptied.
Writing manifest.json also clears the temporary files killed writers left in the folder (a
capture killed mid-write leaves one; its writer is gone, so nothing else would).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prove_common.files import clear_stale_temps, write_text_atomic
from prove_common.jsonio import utc_iso
from proveai.store.layout import MANIFEST, trace_files
from proveai.store.traces.load import load_trace
from proveai.store.traces.lock import store_lock
from proveai.store.traces.outcomes import detection_status
from proveai.traces.trace import Trace

JOURNAL = "manifest.journal.jsonl"

@dataclass
class IndexRead:
    entries: dict[str, dict[str, Any]]
    warnings: list[str] = field(default_factory=list)


def _dump_manifest(entries: dict[str, dict[str, Any]]) -> str:
    if not entries:
        return "{}\n"
    compact = (",", ":")
    lines = [f"{json.dumps(k)}: {json.dumps(v, separators=compact)}" for k, v in entries.items()]
    return "{\n" + ",\n".join(lines) + "\n}\n"


def _write_manifest(root: Path, entries: dict[str, dict[str, Any]]) -> None:
    clear_stale_temps(root)  # under the store lock, at most once per compaction
    write_text_atomic(root / MANIFEST, _dump_manifest(entries))


def append_entry(root: Path, trace_id: str, entry: dict[str, Any]) -> None:
    """Index one captured trace: one journal line; compact when the journal has grown."""
    line = (json.dumps({"trace_id": trace_id, "entry": entry}, ensure_ascii=True) + "\n").encode()
    with store_lock(root):
        fd = os.open(root / JOURNAL, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)
            journal_size = os.fstat(fd).st_size
        finally:
            os.close(fd)
        try:
            manifest_size = os.stat(root / MANIFEST).st_size
        except FileNotFoundError:
            manifest_size = 0
        if journal_size > manifest_size // 2:
            _compact_locked(root)


def _load_manifest(root: Path, warnings: list[str]) -> dict[str, dict[str, Any]] | None:
    """The manifest's entries; None when it exists but cannot be read as one."""
    path = root / MANIFEST
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        warnings.append(f"{path} is corrupt ({exc}); rebuilding the index from the trace files")
        return None
    except RecursionError:
        warnings.append(f"{path} is corrupt (nested too deeply); rebuilding the index from the trace files")
        return None
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        warnings.append(f"{path} is not a trace index (expected trace_id -> entry); rebuilding it")
        return None
    for trace_id, entry in data.items():
        problem = entry_problem(entry)
        if problem is not None:
            warnings.append(f"{path} is not a trace index (trace {trace_id}: {problem}); rebuilding it")
            return None
    return data


# The fields of an index entry a reader uses, and the types each may hold (None: absent or null).
_ENTRY_TYPES: dict[str, tuple[type, ...]] = {
    "name": (str,),
    "version": (str, type(None)),
    "timestamp": (str, type(None)),
    "started_ns": (int, type(None)),
    "spans": (int, type(None)),
    "outcome": (str, type(None)),
    "detection": (str, type(None)),
}


def entry_problem(entry: dict[str, Any]) -> str | None:
    """What is wrong with an index entry's fields (a reader would fail on it), or None."""
    for name, kinds in _ENTRY_TYPES.items():
        value = entry.get(name)
        if value is not None and (not isinstance(value, kinds) or isinstance(value, bool)):
            return f"{name} is {type(value).__name__}"
    for name in ("versions", "agents"):
        value = entry.get(name)
        if value is not None and (not isinstance(value, list) or not all(isinstance(v, str) for v in value)):
            return f"{name} is not a list of names"
    return None


def _read_journal(root: Path, warnings: list[str]) -> tuple[list[tuple[str, dict[str, Any]]], bool]:
    path = root / JOURNAL
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return [], False
    rows: list[tuple[str, dict[str, Any]]] = []
    damaged = False
    for number, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            row = (str(item["trace_id"]), dict(item["entry"]))
            if entry_problem(row[1]) is not None:
                raise ValueError(entry_problem(row[1]))
            rows.append(row)
        except (ValueError, KeyError, TypeError, RecursionError):
            damaged = True
            warnings.append(f"{path} line {number} is corrupt; rebuilding the index from the trace files")
    return rows, damaged


def _compact_locked(root: Path, warnings: list[str] | None = None) -> dict[str, dict[str, Any]]:
    warnings = [] if warnings is None else warnings
    missing = not (root / MANIFEST).exists()
    entries = _load_manifest(root, warnings)
    rows, damaged = _read_journal(root, warnings)
    if missing:  # a new store, or a deleted manifest: index whatever trace files are there
        entries = rebuild_entries(root, {}, warnings)
        entries.update(dict(rows))
    elif entries is None or damaged:
        if entries is None:
            corrupt = root / MANIFEST
            with contextlib.suppress(OSError):
                os.replace(corrupt, root / f"{MANIFEST}.corrupt-{time.strftime('%Y%m%dT%H%M%S')}")
        entries = rebuild_entries(root, entries or {}, warnings)
        entries.update({tid: entry for tid, entry in rows if tid not in entries})
    else:
        for trace_id, entry in rows:
            entries[trace_id] = entry
    if rows or damaged or not (root / MANIFEST).exists():
        _write_manifest(root, entries)
        with open(root / JOURNAL, "wb"):
            pass  # truncate: every journal row is now in manifest.json
    return entries


def read_index(root: Path) -> IndexRead:
    """Every indexed trace, the journal folded in (and written back when the store is writable)."""
    warnings: list[str] = []
    if not root.is_dir():
        return IndexRead({}, warnings)
    if not (root / MANIFEST).exists() and not (root / JOURNAL).exists():
        if next(trace_files(root), None) is None:
            return IndexRead({}, warnings)  # not a store (yet): a read writes nothing here
        warnings.append(f"{root / MANIFEST} is missing; rebuilding the index from the trace files")
    try:
        with store_lock(root):
            entries = _compact_locked(root, warnings)
    except PermissionError:
        # a read-only store: merge in memory
        entries = _load_manifest(root, warnings) or rebuild_entries(root, {}, warnings)
        for trace_id, entry in _read_journal(root, warnings)[0]:
            entries[trace_id] = entry
    return IndexRead(entries, warnings)


def iso_from_ns(ns: int) -> str:
    return utc_iso(dt.datetime.fromtimestamp(ns / 1e9, tz=dt.UTC), "microseconds")


def manifest_entry(trace: Trace) -> dict[str, Any]:
    """The index entry of a trace (manifest.json value)."""
    entry: dict[str, Any] = {
        "name": trace.name,
        "version": trace.version,
        "versions": trace.versions,
        "agents": trace.agents,
        "timestamp": iso_from_ns(trace.started_ns),
        "started_ns": trace.started_ns,
        "spans": len(trace.spans),
        "outcome": trace.outcome,
        "detection": detection_status(trace.outcome),
    }
    if trace.invocation is not None:
        entry["invocation"] = trace.invocation
    return entry


def rebuild_entries(
    root: Path, known: dict[str, dict[str, Any]], warnings: list[str]
) -> dict[str, dict[str, Any]]:
    """Index entries rebuilt from the trace files themselves (slow path, after corruption)."""
    entries = dict(known)
    for path in sorted(trace_files(root), key=lambda p: p.stat().st_mtime_ns):
        trace_id = path.stem
        if trace_id in entries:
            continue
        try:
            entries[trace_id] = manifest_entry(load_trace(path))
        except Exception as exc:
            warnings.append(f"{path} cannot be read as a trace ({exc}); left out of the index")
    return entries


def rebuild_index(root: Path) -> IndexRead:
    """Rebuild manifest.json from the trace files (keeps entries it can still read)."""
    warnings: list[str] = []
    with store_lock(root):
        entries = _load_manifest(root, warnings) or {}
        rows, _ = _read_journal(root, warnings)
        entries.update(dict(rows))
        entries = rebuild_entries(root, entries, warnings)
        _write_manifest(root, entries)
        with open(root / JOURNAL, "wb"):
            pass
    return IndexRead(entries, warnings)
