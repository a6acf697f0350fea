"""Writing runs straight into a store (RunStore + RunWriter), as a sweep would leave them.

Used by the comparison tests that need exact control over every episode; the end-to-end
tests use real sweeps instead.
"""

from __future__ import annotations

import functools
import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from poisson_prove.design.conditions import condition_key, condition_label
from poisson_prove.design.seeding import episode_seed, new_salt
from poisson_prove.store.info import RunInfo
from poisson_prove.store.runs import RunStore
from poisson_prove.store.table import columns_to_table

OUTCOMES = ("resolved", "unresolved", "timeout")
FAILURES = ("unresolved", "timeout")
SUCCESSES = ("resolved",)


_written = 0
_seed = functools.lru_cache(maxsize=200_000)(episode_seed)  # twins of a pair share their seeds


@dataclass
class Episodes:
    """Column lists of one run's episodes."""

    cfg: list[dict[str, Any]] = field(default_factory=list)
    replicate: list[int] = field(default_factory=list)
    outcome: list[str | None] = field(default_factory=list)
    t: list[float | None] = field(default_factory=list)
    horizon: list[float | None] = field(default_factory=list)
    case_id: list[str | None] = field(default_factory=list)
    error_kind: list[str | None] = field(default_factory=list)
    error_message: list[str | None] = field(default_factory=list)
    meta: list[dict[str, Any] | None] = field(default_factory=list)
    spans: list[Any] = field(default_factory=list)

    def add(
        self,
        cfg: Mapping[str, Any],
        replicate: int,
        outcome: str | None,
        t: float | None = 5.0,
        horizon: float | None = 20.0,
        *,
        case_id: str | None = None,
        error_kind: str | None = None,
        error_message: str | None = None,
        meta: dict[str, Any] | None = None,
        spans: Any = None,
    ) -> None:
        self.cfg.append(dict(cfg))
        self.replicate.append(replicate)
        self.outcome.append(outcome)
        self.t.append(t)
        self.horizon.append(horizon)
        self.case_id.append(case_id)
        self.error_kind.append(error_kind)
        self.error_message.append(error_message)
        self.meta.append(meta)
        self.spans.append(spans)


def write_run(
    store: Path | str,
    episodes: Episodes,
    *,
    salt: str | None = None,
    name: str | None = None,
    paired_with: RunInfo | None = None,
    axes: Sequence[str] = ("ticket", "temperature"),
    outcomes: Sequence[str] = OUTCOMES,
    failures: Sequence[str] = FAILURES,
    successes: Sequence[str] = SUCCESSES,
    status: str = "complete",
    planned: int | None = None,
    resumed_at: Sequence[str] = (),
    batches: int = 2,
    target_id: str = "support-bot",
) -> RunInfo:
    """Store `episodes` as one run; return its RunInfo (re-read from disk)."""
    runs = RunStore(store)
    salt = salt or (paired_with.manifest["salt"] if paired_with else new_salt())
    # Keys and cfg JSON once per distinct condition, not once per row (simulations write many).
    by_items: dict[tuple, tuple[str, str]] = {}
    keys: list[str] = []
    cfg_texts: list[str] = []
    cells: dict[str, dict[str, Any]] = {}
    for cfg in episodes.cfg:
        items = tuple(sorted(cfg.items()))
        if items not in by_items:
            by_items[items] = (condition_key(cfg), json.dumps(cfg, sort_keys=True))
            cells.setdefault(by_items[items][0], cfg)
        key, text = by_items[items]
        keys.append(key)
        cfg_texts.append(text)
    manifest = {
        "target": "my_rollout:rollout",
        "target_id": target_id,
        "t_unit": "steps",
        "salt": salt,
        "paired_with": paired_with.run_id if paired_with else None,
        "paired_with_name": paired_with.name if paired_with else None,
        "outcomes": list(outcomes),
        "failures": list(failures),
        "successes": list(successes),
        "axis_order": list(axes),
        "cells": [{"key": k, "label": condition_label(c, axes), "cfg": c} for k, c in cells.items()],
        "replicates": max(episodes.replicate, default=-1) + 1,
    }
    writer = runs.create_run(target_id=target_id, name=name, manifest=manifest)
    columns = {
        "run_id": [writer.info.run_id] * len(keys),
        "cell": keys,
        "cfg": cfg_texts,
        "replicate": episodes.replicate,
        "seed": [_seed(salt, key, r) for key, r in zip(keys, episodes.replicate, strict=True)],
        "outcome": episodes.outcome,
        "t": episodes.t,
        "horizon": episodes.horizon,
        "case_id": episodes.case_id,
        "meta": [None if m is None else json.dumps(m) for m in episodes.meta],
        "error_kind": episodes.error_kind,
        "error_message": episodes.error_message,
        "started_at": [None] * len(keys),
        "duration_s": [0.01] * len(keys),
        "spans": [None if s is None else json.dumps(s) for s in episodes.spans],
    }
    bounds = np.linspace(0, len(keys), batches + 1).astype(int)
    for lo, hi in itertools.pairwise(bounds):
        if hi > lo:
            # agent_calls derived from the spans, as the sweep's writer does
            writer.write_batch(columns_to_table({k: v[lo:hi] for k, v in columns.items()}))
    errored = sum(o is None for o in episodes.outcome)
    global _written
    _written += 1
    writer.update_manifest(
        # distinct, increasing creation times: the store orders runs (and picks `latest`) by them
        created=f"2026-10-26T{_written // 3600 % 24:02d}:{_written // 60 % 60:02d}:{_written % 60:02d}Z",
        status=status,
        counts={"planned": planned or len(keys), "done": len(keys), "errored": errored},
        resumed_at=list(resumed_at),
        finished="2026-10-26T12:00:00Z" if status == "complete" else None,
    )
    return runs.resolve(writer.info.run_id)


def from_outcomes(
    per_cell: Mapping[tuple[str, float], Sequence[str | None]],
    *,
    t: float = 5.0,
    horizon: float = 20.0,
    case_ids: bool = True,
) -> Episodes:
    """Episodes from a list of outcomes per (ticket, temperature) condition, replicate = index."""
    episodes = Episodes()
    for (ticket, temperature), outcomes in per_cell.items():
        cfg = {"ticket": ticket, "temperature": temperature}
        for r, outcome in enumerate(outcomes):
            episodes.add(
                cfg,
                r,
                outcome,
                t if outcome is not None else None,
                horizon if outcome is not None else None,
                case_id=ticket if case_ids else None,
                error_kind=None if outcome is not None else "RuntimeError",
                error_message=None if outcome is not None else "the tool API returned 503",
            )
    return episodes


#: Episodes per condition in `store_with_pair`'s runs.
PAIR_N = 120


def pair_outcomes(**counts: int) -> list[str | None]:
    """PAIR_N outcomes: `counts` of each named one (`error`: none, errored), the rest resolved."""
    out: list[str | None] = []
    for name, count in counts.items():
        out += [None if name == "error" else name] * count
    return out + ["resolved"] * (PAIR_N - len(out))


def store_with_pair(
    workdir: Path, after_unresolved: int = 5, error: int = 2
) -> tuple[Path, RunInfo, RunInfo]:
    """Two runs of two conditions in workdir/prove-runs, the second paired with the first."""
    store = workdir / "prove-runs"
    before = {
        ("refund", 0.0): pair_outcomes(unresolved=50, error=error),
        ("password", 0.0): pair_outcomes(unresolved=10, timeout=3),
    }
    after = {
        ("refund", 0.0): pair_outcomes(unresolved=after_unresolved, error=error),
        ("password", 0.0): pair_outcomes(unresolved=10, timeout=3),
    }
    a = write_run(store, from_outcomes(before))
    b = write_run(store, from_outcomes(after), paired_with=a)
    return store, a, b
