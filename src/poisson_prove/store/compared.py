"""~/.cache/poisson-prove/compared.jsonl: one line per printed comparison.

It lets a later comparison notice that a run gained episodes (was resumed) after it was
compared, and say so in a note line. A missing, unreadable or torn log is never an error.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol

from prove_common.cliapp import cache_dir
from prove_common.jsonio import utc_now_iso

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


class ComparedRun(Protocol):
    """What the log keeps of each side of a comparison (comparison.result.RunSide has these)."""

    @property
    def run_id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def done(self) -> int: ...
    @property
    def status(self) -> str: ...


def resumed_notes(sides: Iterable[ComparedRun]) -> list[str]:
    """A note per run that has more episodes now than when it was last compared."""
    entries = _entries()
    notes = []
    for side in sides:
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


def side_entry(side: ComparedRun) -> dict[str, Any]:
    """One side of a comparison as the log keeps it."""
    return {"run_id": side.run_id, "name": side.name, "done": side.done, "status": side.status}


def record(entry: Mapping[str, Any]) -> None:
    """Append one comparison's line (`comparison.result.Comparison.log_entry`), stamped with the
    time; a log that cannot be written is skipped silently."""
    line = {"at": utc_now_iso(), **entry}
    path = log_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")
    except OSError:
        pass
