"""Writing one captured trace into a traces folder (what FileExporter writes).

Under the folder: <trace_id>.json (OTLP JSON, replaced atomically), the trace's rows in
outcomes.jsonl, <trace_id>.detection.json, and one index journal line (see index), in that
order, so the index never lists a trace whose file is not there yet. Nothing is written
outside the folder. A process's first trace into a folder also removes the temporary files
that writers killed mid-write left there (older than a live writer's could be): without that
they waited for the next index compaction, which a large store reaches rarely.
"""

from __future__ import annotations

import json
from pathlib import Path

from prove_common.files import clear_stale_temps, write_text_atomic
from proveai.store.traces.index import append_entry, manifest_entry
from proveai.store.traces.outcomes import Detection, append_rows, trace_rows, write_detection
from proveai.traces.otlp import encode_trace
from proveai.traces.trace import Trace

# the folders this process has written a trace into (each cleared of dead writers' temporary files once)
_WRITTEN_INTO: set[Path] = set()


def trace_path(root: Path, trace_id: str) -> Path:
    return root / f"{trace_id}.json"


def write_trace_file(root: Path, trace: Trace) -> Path:
    """<trace_id>.json alone, replaced atomically (not fsynced: a capture must stay cheap)."""
    path = trace_path(root, trace.trace_id)
    # ASCII escapes keep argv strings with surrogate-escaped bytes writable and exact
    text = json.dumps(encode_trace(trace), ensure_ascii=True, separators=(",", ":")) + "\n"
    write_text_atomic(path, text, durable=False)
    return path


def write_trace(root: Path, trace: Trace) -> Path:
    """Store one closed trace: its file, outcome rows, detection and index entry; its path."""
    root.mkdir(parents=True, exist_ok=True)
    if root not in _WRITTEN_INTO:
        _WRITTEN_INTO.add(root)
        clear_stale_temps(root)
    path = write_trace_file(root, trace)
    append_rows(root, trace_rows(trace))
    write_detection(root, Detection.of(trace))
    append_entry(root, trace.trace_id, manifest_entry(trace))
    return path
