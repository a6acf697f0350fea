"""~/.cache/poisson-prove/compared.jsonl: one line per printed comparison.

It lets a later comparison notice that a run gained episodes (was resumed) after it was
compared, and say so in a note line. A missing, unreadable or torn log is never an error.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from poisson_prove.comparison.result import Comparison, RunSide
from poisson_prove.shared.cliapp import cache_dir

LOG_NAME = "compared.jsonl"


def log_path() -> Path:
    return cache_dir("poisson-prove") / LOG_NAME


def _entries() -> list[dict[str, Any]]:
    try:
        text = log_path().read_text(encoding="utf-8")
    except OSError:
        return []
    out = []
    for line in text.splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line torn by a crash
        if isinstance(entry, dict):
            out.append(entry)
    return out


def resumed_notes(comparison: Comparison) -> list[str]:
    """A note per run that has more episodes now than when it was last compared."""
    entries = _entries()
    notes = []
    for side in (comparison.before, comparison.after):
        last: dict[str, Any] | None = None
        for entry in entries:
            for recorded in (entry.get("before"), entry.get("after")):
                if isinstance(recorded, dict) and recorded.get("run_id") == side.run_id:
                    last = {"at": entry.get("at"), "done": recorded.get("done")}
        if last and isinstance(last["done"], int) and side.done > last["done"]:
            notes.append(
                f'run "{side.name}" was resumed after it was compared at {last["at"]} '
                f"({last['done']:,} episodes then, {side.done:,} now)"
            )
    return notes


def _side(side: RunSide) -> dict[str, Any]:
    return {"run_id": side.run_id, "name": side.name, "done": side.done, "status": side.status}


def record(comparison: Comparison, command: str) -> None:
    """Append this comparison's line; a log that cannot be written is skipped silently."""
    entry = {
        "at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "command": command,
        "before": _side(comparison.before),
        "after": _side(comparison.after),
        "method": comparison.method,
        "event": comparison.event,
        "q": comparison.q,
        "headline": comparison.headline.word,
        "counts": {c.outcome: {"safer": c.safer, "worse": c.worse} for c in comparison.headline.counts},
    }
    path = log_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry, ensure_ascii=False) + "\n")
    except OSError:
        pass
