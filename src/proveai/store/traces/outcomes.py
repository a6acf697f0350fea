"""outcomes.jsonl (check, composite and manual labels) and the per-trace detection JSON.

outcomes.jsonl is append-only; each row: {trace_id, check_name, label, score, source,
reason?, agent?, timestamp} with source check | composite | manual. A trace's outcome is its
latest manual row if any, else its latest composite row. Detection status: composite bad ->
flagged, good -> clean, skip / warn / absent -> suspect.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prove_common.jsonio import utc_now_iso, write_json_atomic
from proveai.store.layout import traces_root
from proveai.store.traces.lock import store_lock
from proveai.traces.trace import Trace

OUTCOMES = "outcomes.jsonl"
DETECTION_SUFFIX = ".detection.json"
DETECTION_STATUSES = ("flagged", "suspect", "clean")
OUTCOME_LABELS = ("good", "bad", "skip")
_TRACE_ID = re.compile(r"^[0-9a-f]{32}$")


def _stamp() -> str:
    return utc_now_iso("microseconds")  # microseconds: rows written within a second keep their order


def detection_status(outcome: str | None) -> str:
    return {"bad": "flagged", "good": "clean"}.get(outcome or "", "suspect")


@dataclass(frozen=True)
class Detection:
    """The thin regression verdict written beside each trace at capture time."""

    trace_id: str
    status: str  # flagged | suspect | clean
    outcome: str | None
    fired: tuple[dict[str, Any], ...] = ()
    checks_run: int = 0
    written_at: str = field(default_factory=_stamp)

    def to_dict(self) -> dict[str, Any]:
        return {
            "trace_id": self.trace_id, "status": self.status, "outcome": self.outcome,
            "fired": list(self.fired), "checks_run": self.checks_run, "written_at": self.written_at,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Detection:
        return cls(
            trace_id=str(data["trace_id"]), status=str(data["status"]), outcome=data.get("outcome"),
            fired=tuple(data.get("fired") or ()), checks_run=int(data.get("checks_run", 0)),
            written_at=str(data.get("written_at", "")),
        )

    @classmethod
    def of(cls, trace: Trace) -> Detection:
        fired = tuple(
            {"name": r.name, "agent": r.agent, "label": r.label, "reason": r.reason}
            for r in trace.check_results
            if r.label != "good"
        )
        status = detection_status(trace.outcome)
        return cls(trace.trace_id, status, trace.outcome, fired, len(trace.check_results))


def append_rows(root: Path, rows: list[dict[str, Any]]) -> None:
    """Append rows to outcomes.jsonl in one O_APPEND write (concurrent writers never interleave).

    With no rows the file is still created, so every store has its three documented files.
    """
    data = "".join(json.dumps(row, ensure_ascii=True) + "\n" for row in rows).encode()
    with store_lock(root):
        fd = os.open(root / OUTCOMES, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)


def trace_rows(trace: Trace) -> list[dict[str, Any]]:
    """One row per check result, plus the composite row when the trace has an outcome."""
    stamp = _stamp()
    rows = [
        {
            "trace_id": trace.trace_id, "check_name": r.name, "label": r.label, "score": r.score,
            "source": "check", "reason": r.reason, "agent": r.agent, "timestamp": stamp,
        }
        for r in trace.check_results
    ]
    if trace.outcome is not None:
        goods = sum(r.label == "good" for r in trace.check_results)
        rows.append({
            "trace_id": trace.trace_id, "check_name": "composite", "label": trace.outcome,
            "score": goods / len(trace.check_results) if trace.check_results else None,
            "source": "composite", "timestamp": stamp,
        })
    return rows


def record_outcome(
    trace_id: str,
    label: str,
    score: float | None = None,
    reason: str | None = None,
    root: str | os.PathLike[str] | None = None,
    check_name: str = "manual",
) -> dict[str, Any]:
    """Append a manual outcome row for a stored trace; it overrides the composite outcome."""
    if label not in OUTCOME_LABELS:
        raise ValueError(f"label must be one of {', '.join(OUTCOME_LABELS)}, not {label!r}")
    if score is not None and not isinstance(score, int | float):
        raise ValueError(f"score must be a number or None, not {type(score).__name__}")
    trace_id = str(trace_id).lower()
    if not _TRACE_ID.match(trace_id):
        raise ValueError(f"{trace_id!r} is not a trace id (32 hex characters)")
    store = traces_root(root)
    if not (store / f"{trace_id}.json").exists():
        raise ValueError(f"no trace {trace_id} in {store}; pass root= the folder FileExporter wrote to")
    row: dict[str, Any] = {
        "trace_id": trace_id, "check_name": check_name, "label": label,
        "score": float(score) if score is not None else None, "source": "manual", "timestamp": _stamp(),
    }
    if reason is not None:
        row["reason"] = str(reason)
    append_rows(store, [row])
    return row


@dataclass
class OutcomeLog:
    outcomes: dict[str, str]  # trace_id -> resolved outcome
    warnings: list[str]


def read_outcomes(root: Path) -> OutcomeLog:
    """Each trace's resolved outcome: latest manual row, else latest composite row."""
    manual: dict[str, str] = {}
    composite: dict[str, str] = {}
    warnings: list[str] = []
    path = root / OUTCOMES
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return OutcomeLog({}, warnings)
    for number, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            source, trace_id, label = row["source"], row["trace_id"], row["label"]
        except (ValueError, KeyError, TypeError):
            warnings.append(f"{path} line {number} is not an outcome row; ignored")
            continue
        if source == "manual":
            manual[trace_id] = label
        elif source == "composite":
            composite[trace_id] = label
    composite.update(manual)
    return OutcomeLog(composite, warnings)


def detection_path(root: Path, trace_id: str) -> Path:
    return root / f"{trace_id}{DETECTION_SUFFIX}"


def write_detection(root: Path, detection: Detection) -> Path:
    """<trace_id>.detection.json, replaced atomically; returns its path."""
    path = detection_path(root, detection.trace_id)
    write_json_atomic(path, detection.to_dict())
    return path


def read_detection(root: Path, trace_id: str) -> Detection | None:
    try:
        return Detection.from_dict(json.loads(detection_path(root, trace_id).read_text("utf-8")))
    except (OSError, ValueError, KeyError, TypeError):
        return None
