"""Run folders under proveai/runs/: verify runs (`verify-<stamp>-<hex>/`) and replay runs
(`<stamp>-<hex>/`, `Run`).

A verify run holds manifest.json (what was verified, kind `snapshot-verify`), verdicts.json,
metrics.json and fresh/ (the traces its re-run captured: `snapshot update` and `snapshot diff`
read them, and quick mode dates a pin by them). A replay run holds manifest.json,
verdicts.json and metrics.json. report.html is the report layer's page, which the caller
writes into the folder. Opening a new run folder clears the temporary files killed writers left
in the others (a killed run's folder is never opened for writing again).
"""

from __future__ import annotations

import builtins
import hashlib
import json
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prove_common.files import clear_stale_temps
from prove_common.jsonio import utc_now, write_json_atomic
from proveai.errors import ProveAIError
from proveai.store.layout import Store
from proveai.store.traces.load import load_trace

VERIFY_PREFIX = "verify-"


def _clear_killed_writers(runs_dir: Path) -> None:
    """Temporary files that killed writers left in run folders (live writers' are kept)."""
    if runs_dir.is_dir():
        for folder in runs_dir.iterdir():
            if folder.is_dir():
                clear_stale_temps(folder)


# ---- verify runs -------------------------------------------------------------------------------


def new_verify_run_id() -> str:
    return f"{VERIFY_PREFIX}{utc_now().strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"


def write_verify_run(
    run_dir: Path,
    *,
    run_id: str,
    snapshot: str,
    snapshot_version: int,
    mode: str,
    overrides: Mapping[str, Any],
    exit_code: int,
    notes: Sequence[str],
    verdicts: Sequence[Mapping[str, Any]],
    replicates: Sequence[Mapping[str, Any]],
    metrics: Mapping[str, Any],
) -> None:
    """Write a verify run's manifest.json, verdicts.json and metrics.json into `run_dir` (made
    if missing; fresh/ is already there when the run kept traces, and the manifest lists them)."""
    _clear_killed_writers(run_dir.parent)
    run_dir.mkdir(parents=True, exist_ok=True)
    fresh = run_dir / "fresh"
    write_json_atomic(
        run_dir / "manifest.json",
        {
            "kind": "snapshot-verify",
            "run_id": run_id,
            "snapshot": snapshot,
            "snapshot_version": snapshot_version,
            "mode": mode,
            # isoformat() as stored since the first verify (microseconds, +00:00), not utc_iso:
            # last_verify orders runs by this text, so one store must keep one form
            "created": utc_now().isoformat(),
            "fresh": sorted(p.name for p in fresh.glob("*.json")) if fresh.is_dir() else [],
            "overrides": {k: str(v) for k, v in overrides.items()},
            "exit_code": exit_code,
            "notes": list(notes),
        },
    )
    write_json_atomic(run_dir / "verdicts.json", {"verdicts": list(verdicts), "replicates": list(replicates)})
    write_json_atomic(run_dir / "metrics.json", dict(metrics))


def last_verify(runs_dir: Path, snapshot_name: str) -> Path | None:
    """The newest verify run folder of `snapshot_name` that kept a fresh capture."""
    best: tuple[str, Path] | None = None
    if not runs_dir.is_dir():
        return None
    for path in runs_dir.glob(f"{VERIFY_PREFIX}*/manifest.json"):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if data.get("snapshot") != snapshot_name or not data.get("fresh"):
            continue
        key = (str(data.get("created", "")), path.parent.name)
        if best is None or key > (best[0], best[1].name):
            best = (key[0], path.parent)
    return best[1] if best else None


def pinned_start_time(runs_dir: Path, pinned_ids: set[str]) -> float | None:
    """When the pinned trace started (seconds), from the verify run that kept it, if any: a pin
    `snapshot update` accepted comes from a verify run's fresh/ trace, not from the store."""
    for trace_id in pinned_ids:
        for path in runs_dir.glob(f"{VERIFY_PREFIX}*/fresh/*-{trace_id}.json"):
            try:
                started = load_trace(path).started_ns
            except ProveAIError:
                continue
            if started:
                return started / 1e9
    return None


# ---- replay runs -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    """One replay execution: proveai/runs/<run_id>/ with manifest.json, verdicts.json,
    metrics.json and report.html."""

    run_id: str
    path: Path
    manifest: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def create(cls, store: Store) -> Run:
        _clear_killed_writers(store.runs_dir)
        stamp = utc_now().strftime("%Y%m%dT%H%M%SZ")
        run_id = f"{stamp}-{secrets.token_hex(3)}"
        path = store.runs_dir / run_id
        path.mkdir(parents=True, exist_ok=False)
        return cls(run_id, path)

    @classmethod
    def load(cls, run_id: str, store: Store) -> Run:
        path = store.runs_dir / run_id
        try:
            manifest = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ProveAIError(f"no run {run_id!r} in {store.runs_dir}") from None
        except (OSError, ValueError) as exc:
            raise ProveAIError(f"{path / 'manifest.json'}: unreadable ({exc})") from None
        return cls(run_id, path, manifest)

    @classmethod
    def list(cls, store: Store) -> list[str]:
        if not store.runs_dir.is_dir():
            return []
        return sorted(p.name for p in store.runs_dir.iterdir() if (p / "manifest.json").exists())

    def write_json(self, name: str, document: Any) -> Path:
        target = self.path / name
        write_json_atomic(target, document)
        return target

    @property
    def report_path(self) -> Path:
        return self.path / "report.html"

    def verdicts(self) -> builtins.list[dict[str, Any]]:  # `list` is the classmethod above
        return list(json.loads((self.path / "verdicts.json").read_text(encoding="utf-8")))


def overrides_summary(overrides: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """What a run manifest records of its overrides: never the prompt text, its hash instead."""
    summary: dict[str, dict[str, Any]] = {}
    for agent, settings in overrides.items():
        entry = {k: v for k, v in settings.items() if k not in ("prompt", "messages")}
        if "prompt" in settings:
            entry.setdefault("prompt_sha256", hashlib.sha256(str(settings["prompt"]).encode()).hexdigest())
        if "messages" in settings:
            entry["messages"] = len(settings["messages"])
        summary[agent] = entry
    return summary
