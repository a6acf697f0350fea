"""`snapshot diff`: what changed between the pin and the last verify's fresh capture.

Per agent: the system prompt, the inputs, the output and the tool calls, as unified diffs
(or the two sides, for a side-by-side view). Data only; proveai.render.snapshot draws it.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prove_common.text import value_as_text
from proveai.snapshot.grading import fresh_agents_of_trace
from proveai.snapshot.model import ExpectedIO, load_snapshot, snapshot_path, unknown_agent_error
from proveai.snapshot.update import fresh_traces, last_verified
from proveai.store import check_name


@dataclass(frozen=True)
class FieldDiff:
    """One field of one agent call: both sides as text and their unified diff ('' if equal)."""

    field: str
    pinned: str
    fresh: str

    @property
    def changed(self) -> bool:
        return self.pinned != self.fresh

    @property
    def unified(self) -> str:
        if not self.changed:
            return ""
        lines = difflib.unified_diff(
            self.pinned.splitlines(),
            self.fresh.splitlines(),
            f"pinned/{self.field}",
            f"fresh/{self.field}",
            lineterm="",
        )
        return "\n".join(lines)


@dataclass(frozen=True)
class AgentDiff:
    agent: str
    iteration: int
    fields: tuple[FieldDiff, ...]
    note: str | None = None

    @property
    def changed(self) -> bool:
        return bool(self.note) or any(f.changed for f in self.fields)


def as_text(value: Any) -> str:
    """A field as the diff shows it: nothing for None, else one line per JSON line."""
    return "" if value is None else value_as_text(value, lines=True)


def _prompt(io: ExpectedIO | None) -> str:
    for message in (io.input_messages if io else None) or []:
        if isinstance(message, dict) and message.get("role") == "system":
            return as_text(message.get("content"))
    return ""


def _fields(pinned: ExpectedIO | None, fresh: ExpectedIO | None) -> tuple[FieldDiff, ...]:
    def side(io: ExpectedIO | None, attr: str) -> str:
        return as_text(getattr(io, attr)) if io is not None else ""

    return (
        FieldDiff("prompt", _prompt(pinned), _prompt(fresh)),
        FieldDiff("inputs", side(pinned, "inputs"), side(fresh, "inputs")),
        FieldDiff("output", side(pinned, "output"), side(fresh, "output")),
        FieldDiff(
            "tool_calls",
            as_text(list(pinned.tool_calls)) if pinned else "",
            as_text(list(fresh.tool_calls)) if fresh else "",
        ),
    )


@dataclass(frozen=True)
class DiffReport:
    snapshot: str
    version: int
    run_id: str
    agents: tuple[AgentDiff, ...]


def snapshot_diff(
    *, snapshots_dir: Path, runs_dir: Path, name: str = "latest", agents: Sequence[str] = ()
) -> DiffReport:
    check_name("snapshot", name)
    snapshot = load_snapshot(snapshot_path(snapshots_dir, name))
    run_dir, _ = last_verified(runs_dir, name)
    traces = fresh_traces(run_dir)
    fresh = fresh_agents_of_trace(traces[0]) if traces else {}
    known = list(dict.fromkeys([*snapshot.agents, *fresh]))
    for agent in agents:
        if agent not in known:
            raise unknown_agent_error(agent, known, f"snapshot {name!r} and its last verify")
    diffs = []
    for agent in [a for a in known if not agents or a in agents]:
        pinned_calls = list(snapshot.expected(agent))
        fresh_calls = list(fresh[agent].calls) if agent in fresh else []
        note = None
        if not fresh_calls:
            note = "missing: not called in the fresh run"
        elif not pinned_calls:
            note = "new: not in the snapshot"
        elif len(pinned_calls) != len(fresh_calls):
            note = f"iteration count changed: pinned {len(pinned_calls)}, fresh {len(fresh_calls)}"
        for index in range(max(len(pinned_calls), len(fresh_calls))):
            p = pinned_calls[index] if index < len(pinned_calls) else None
            f = fresh_calls[index] if index < len(fresh_calls) else None
            diffs.append(AgentDiff(agent, index, _fields(p, f), note if index == 0 else None))
    return DiffReport(snapshot.name, snapshot.version, run_dir.name, tuple(diffs))
