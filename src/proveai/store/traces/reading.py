"""Reading the trace store: iter_traces and the filtered listing the CLI shows (one file: load)."""

from __future__ import annotations

import datetime as dt
import os
import re
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prove_common.jsonio import utc_now
from proveai.errors import ProveAIError
from proveai.store.layout import TRACES_ENV, traces_root
from proveai.store.traces.index import read_index
from proveai.store.traces.load import load_trace
from proveai.store.traces.outcomes import detection_status, read_outcomes
from proveai.traces.trace import Trace

FILTER_KEYS = ("outcome", "version", "agent", "detection", "since")
OUTCOME_VALUES = ("good", "bad", "skip", "none")
DETECTION_VALUES = ("flagged", "suspect", "clean")
_SINCE = re.compile(r"^(\d+)\s*([smhdw])$")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_since(value: str) -> dt.timedelta:
    """'30m', '1h', '2d', '1w' -> a timedelta; ValueError otherwise."""
    match = _SINCE.match(value.strip().lower())
    if not match or int(match.group(1)) == 0:
        raise ValueError(
            f"since must look like 30m, 1h, 2d or 1w (a positive count and s/m/h/d/w), not {value!r}"
        )
    return dt.timedelta(seconds=int(match.group(1)) * _UNIT_SECONDS[match.group(2)])


class FilterError(ValueError):
    """A filter key or value that is not valid; `key` is the filter it is about."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


def validate_filter(filters: Mapping[str, Any]) -> dict[str, Any]:
    """Check keys and values of a dict filter; FilterError (a ValueError) names what is valid."""
    clean: dict[str, Any] = {}
    for key, value in filters.items():
        if key not in FILTER_KEYS:
            raise FilterError(key, f"unknown filter key {key!r}; valid keys: {', '.join(FILTER_KEYS)}")
        if key == "outcome" and value is not None and str(value) not in OUTCOME_VALUES:
            raise FilterError(key, f"outcome must be one of {', '.join(OUTCOME_VALUES)}, not {value!r}")
        if key == "detection" and str(value) not in DETECTION_VALUES:
            raise FilterError(key, f"detection must be one of {', '.join(DETECTION_VALUES)}, not {value!r}")
        if key == "since":
            value = value if isinstance(value, dt.timedelta) else parse_since(str(value))
        elif key in ("version", "agent") and (not isinstance(value, str) or not value):
            raise FilterError(key, f"{key} must be a non-empty string, not {value!r}")
        clean[key] = value
    return clean


@dataclass(frozen=True)
class TraceRow:
    """One indexed trace as listings show it."""

    trace_id: str
    name: str
    version: str | None
    versions: tuple[str, ...]
    agents: tuple[str, ...]
    outcome: str | None
    detection: str
    timestamp: dt.datetime | None
    path: Path


@dataclass(frozen=True)
class Listing:
    rows: tuple[TraceRow, ...]
    warnings: tuple[str, ...]


def _parse_time(text: Any) -> dt.datetime | None:
    if not isinstance(text, str):
        return None
    try:
        return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def list_traces(
    root: str | os.PathLike[str] | None = None, filters: Mapping[str, Any] | None = None
) -> Listing:
    """The indexed traces (oldest first) matching the dict filter, with index warnings."""
    wanted = validate_filter(filters or {})
    store = traces_root(root)
    if store.exists() and not store.is_dir():
        configured = os.environ.get(TRACES_ENV)
        via = f" (${TRACES_ENV})" if configured and Path(configured) == store else ""
        flag = f"${TRACES_ENV}" if via else "--traces"
        raise ProveAIError(
            f"no trace store at {store}{via}: it is a file, not a folder",
            suggestions=[f"point {flag} at the folder FileExporter writes to"],
        )
    index = read_index(store)
    log = read_outcomes(store)
    now = utc_now()
    rows: list[TraceRow] = []
    for trace_id, entry in index.entries.items():
        outcome = log.outcomes.get(trace_id, entry.get("outcome"))
        detection = str(entry.get("detection") or detection_status(entry.get("outcome")))
        versions = tuple(entry.get("versions") or ([entry["version"]] if entry.get("version") else []))
        row = TraceRow(
            trace_id=trace_id, name=str(entry.get("name", "")), version=entry.get("version"),
            versions=versions, agents=tuple(entry.get("agents") or ()), outcome=outcome,
            detection=detection, timestamp=_parse_time(entry.get("timestamp")),
            path=store / f"{trace_id}.json",
        )
        if _matches(row, wanted, now):
            rows.append(row)
    epoch = dt.datetime.min.replace(tzinfo=dt.UTC)
    rows.sort(key=lambda r: (r.timestamp or epoch, r.trace_id))
    return Listing(tuple(rows), tuple(index.warnings + log.warnings))


def _matches(row: TraceRow, wanted: Mapping[str, Any], now: dt.datetime) -> bool:
    for key, value in wanted.items():
        if key == "outcome" and (row.outcome or "none") != (value or "none"):
            return False
        if key == "version" and value not in row.versions:
            return False
        if key == "agent" and value not in row.agents:
            return False
        if key == "detection" and row.detection != value:
            return False
        if key == "since" and (row.timestamp is None or row.timestamp < now - value):
            return False
    return True


def iter_traces(
    root: str | os.PathLike[str] | None = None,
    filter: Mapping[str, Any] | Callable[[Trace], bool] | None = None,
) -> Iterator[Trace]:
    """Stored traces, oldest first, filtered by a dict (keys AND-ed) or a callable.

    Dict keys: outcome, version, agent, detection, since. The outcome is the resolved one
    (latest manual row of outcomes.jsonl, else the composite) and is set on each trace.
    Index warnings are issued with warnings.warn; an indexed trace whose file is gone is skipped.
    """
    if filter is not None and not callable(filter) and not isinstance(filter, Mapping):
        raise ValueError(
            "filter must be a dict (keys: outcome, version, agent, ...) or a callable(trace) -> bool"
        )
    listing = list_traces(root, filter if isinstance(filter, Mapping) else None)
    for message in listing.warnings:
        warnings.warn(f"proveai: {message}", RuntimeWarning, stacklevel=2)
    predicate = filter if callable(filter) else None
    return _load_rows(listing.rows, predicate)


def _load_rows(rows: tuple[TraceRow, ...], predicate: Callable[[Trace], bool] | None) -> Iterator[Trace]:
    for row in rows:
        try:
            trace = load_trace(row.path)
        except ProveAIError as exc:
            warnings.warn(f"proveai: {exc.message}; skipped", RuntimeWarning, stacklevel=3)
            continue
        trace.outcome = row.outcome
        if predicate is None or predicate(trace):
            yield trace
