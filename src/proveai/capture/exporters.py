"""Exporters: FileExporter writes the on-disk store; add_exporter registers global ones.

FileExporter writes, under its root, what proveai.store.traces.writing writes: <trace_id>.json
(OTLP JSON, atomic), the trace's rows in outcomes.jsonl, <trace_id>.detection.json and one
index journal line. Nothing is written outside the root.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Protocol

from proveai.store import TRACES_ENV, traces_root
from proveai.store.traces.writing import write_trace
from proveai.traces.trace import Trace


class Exporter(Protocol):
    """Anything with `export(trace)`: called with each closed trace; what it returns is ignored."""

    def export(self, trace: Trace) -> object: ...


_global: list[Exporter] = []
_global_lock = threading.Lock()


def add_exporter(exporter: Exporter) -> None:
    """Register an exporter that fires for every trace (after the trace's own exporters)."""
    if not callable(getattr(exporter, "export", None)):
        raise TypeError("an exporter needs an export(trace) method")
    with _global_lock:
        _global.append(exporter)


def remove_exporter(exporter: Exporter) -> None:
    with _global_lock:
        if exporter in _global:
            _global.remove(exporter)


def global_exporters() -> list[Exporter]:
    with _global_lock:
        return list(_global)


class FileExporter:
    """Write traces to a folder (default ./proveai/traces, or $PROVEAI_TRACES_DIR)."""

    def __init__(self, root: str | os.PathLike[str] | None = None) -> None:
        self._root = None if root is None else Path(root)

    @property
    def root(self) -> Path:
        # Resolved at export time so $PROVEAI_TRACES_DIR set after construction still counts.
        # Under `proveai snapshot verify` (PROVEAI_VERIFY=1) the re-run's trace must land in
        # verify's temporary folder even when the pipeline names its own folder, so that
        # verify finds it and the user's store is left untouched.
        if os.environ.get("PROVEAI_VERIFY") == "1" and os.environ.get(TRACES_ENV):
            return Path(os.environ[TRACES_ENV])
        return traces_root(self._root)

    def export(self, trace: Trace) -> Path:
        return write_trace(self.root, trace)

    def __repr__(self) -> str:
        return f"FileExporter({str(self.root)!r})"
