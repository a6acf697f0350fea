"""Turning read eval samples into one ordinary run of the store.

Both importers produce `ImportedSample`s; this module lays them out the way `diff` pairs a
sweep with its `--pair-with` partner: one condition per task (plus model and task args when
they vary within the import), one episode per (sample id, epoch) whose `replicate` is a stable
number of that pair, and one salt per tool, so that two imports of the same task share seeds
on the same (sample id, epoch) and McNemar pairs exactly those.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import platform
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from poisson_prove.design.conditions import condition_key, condition_label
from poisson_prove.design.seeding import SEED_BOUND, episode_seed
from poisson_prove.errors import ProveError
from poisson_prove.store.info import RunInfo
from poisson_prove.store.runs import RunStore
from poisson_prove.version import __version__
from prove_common.jsonio import utc_now_iso

#: Replicate = sample id x EPOCH_STRIDE + epoch index, for integer ids that fit.
EPOCH_STRIDE = 1000
SUCCESS = "correct"


@dataclass(frozen=True)
class OutcomeMapping:
    """Score value -> outcome. Letters (Inspect's C/I/P/N) and exact numbers by table; any
    other number in (0, 1) is `partial`; booleans are 1/0. `correct` is the one success."""

    table: Mapping[str, str] = field(
        default_factory=lambda: {
            "C": "correct",
            "I": "incorrect",
            "P": "partial",
            "N": "incorrect",
            "1": "correct",
            "0": "incorrect",
            "true": "correct",
            "false": "incorrect",
        }
    )
    between: str = "partial"

    def with_overrides(self, pairs: Sequence[str]) -> OutcomeMapping:
        """`VALUE=OUTCOME` pairs (the CLI's --map) laid over this mapping."""
        table = dict(self.table)
        for pair in pairs:
            value, sep, outcome = pair.partition("=")
            if not sep or not value.strip() or not outcome.strip():
                raise ProveError(
                    f'--map "{pair}" is not VALUE=OUTCOME', suggestions=["--map P=incorrect"], exit_code=2
                )
            table[_value_key(value.strip())] = outcome.strip()
        return OutcomeMapping(table, self.between)

    @property
    def outcomes(self) -> list[str]:
        seen = [SUCCESS] + [o for o in [*self.table.values(), self.between] if o != SUCCESS]
        return list(dict.fromkeys(seen))

    def outcome(self, value: Any) -> str | None:
        """The outcome of one score value, or None when it is not a value the mapping reads."""
        key = _value_key(value)
        if key in self.table:
            return self.table[key]
        if isinstance(value, int | float) and not isinstance(value, bool) and 0 < float(value) < 1:
            return self.between
        return None


def _value_key(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        number = float(value)
        return str(int(number)) if number.is_integer() else repr(number)
    text = str(value)
    try:
        return _value_key(float(text)) if text.lower() not in {"nan", "inf", "-inf"} else text
    except ValueError:
        return text.lower() if text.lower() in {"true", "false"} else text


@dataclass(frozen=True)
class ImportedSample:
    """One scored (or errored) sample of one epoch, as read from a log."""

    axes: Mapping[str, Any]  # task, model, task args: the candidates for the condition
    sample_id: str | int
    epoch: int  # 1-based, as Inspect counts
    outcome: str | None
    source: str
    t: float | None = None
    error_kind: str | None = None
    error_message: str | None = None
    started_at: dt.datetime | None = None
    duration_s: float | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ImportResult:
    run: RunInfo
    created: bool  # False: these logs were imported already (the run holding them)
    episodes: int
    errored: int
    conditions: int
    paired_with: str | None


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def tool_salt(tool: str) -> str:
    """One salt per tool: every import of that tool shares seeds on (condition, sample, epoch)."""
    return hashlib.blake2b(f"poisson-prove import {tool}".encode(), digest_size=16).hexdigest()


def replicate_of(sample_id: str | int, epoch: int) -> int:
    """A stable int32 for (sample id, epoch): exact for integer ids, hashed otherwise."""
    text = str(sample_id)
    if text.isdigit() and int(text) < (2**31 - 1) // EPOCH_STRIDE and 1 <= epoch <= EPOCH_STRIDE:
        return int(text) * EPOCH_STRIDE + epoch - 1
    digest = hashlib.blake2b(f"{text}\x1f{epoch}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") % SEED_BOUND


def _conditions(samples: Sequence[ImportedSample]) -> tuple[list[str], list[dict[str, Any]]]:
    """The axes of the condition: `task` always, any other axis only where it varies."""
    names: list[str] = []
    for sample in samples:
        names.extend(k for k in sample.axes if k not in names)
    varying = [
        n
        for n in names
        if n == "task" or len({json.dumps(s.axes.get(n), sort_keys=True) for s in samples}) > 1
    ]
    return varying, [{n: s.axes.get(n) for n in varying} for s in samples]


def write_import(
    store: RunStore,
    *,
    tool: str,
    samples: Sequence[ImportedSample],
    sources: Sequence[Path],
    mapping: OutcomeMapping,
    options: Mapping[str, Any],
    t_unit: str,
    name: str | None = None,
) -> ImportResult:
    """Store `samples` as one complete run, or return the run that already holds these logs."""
    hashes = [{"path": str(p.resolve()), "sha256": file_sha256(p)} for p in sources]
    fingerprint = hashlib.sha256(
        json.dumps(
            {
                "tool": tool,
                "files": sorted(h["sha256"] for h in hashes),
                "options": options,
                "mapping": dict(mapping.table),
            },
            sort_keys=True,
        ).encode()
    ).hexdigest()
    earlier = store.runs()
    for run in earlier:
        if (run.manifest.get("import") or {}).get("fingerprint") == fingerprint:
            return ImportResult(run, False, 0, 0, len(run.manifest.get("cells") or []), None)
    if not samples:
        listed = ", ".join(str(p) for p in sources)
        raise ProveError(f"the {tool} logs hold no samples ({listed}); nothing to import")

    axis_order, cfgs = _conditions(samples)
    keys = [condition_key(cfg) for cfg in cfgs]
    salt = tool_salt(tool)
    replicates = [replicate_of(s.sample_id, s.epoch) for s in samples]
    seen: dict[tuple[str, int], ImportedSample] = {}
    for key, replicate, sample in zip(keys, replicates, samples, strict=True):
        other = seen.setdefault((key, replicate), sample)
        if other is not sample:
            raise ProveError(
                f"sample {sample.sample_id!r} epoch {sample.epoch} of "
                f"{condition_label(json.loads(key), axis_order)} "
                f"is in two logs ({other.source} and {sample.source}, or two ids share a hash); "
                "one import holds each (sample, epoch) once",
                suggestions=["import the two logs separately, then: poisson-prove diff BEFORE AFTER"],
            )
    conditions = list(dict.fromkeys(keys))
    has_t = [s.t for s in samples if s.t is not None]
    horizon = max(has_t) if has_t else 1.0
    partner = _partner(earlier, tool, set(conditions))
    outcomes = mapping.outcomes
    manifest = {
        "target": f"{tool} import",
        "target_id": tool,
        "t_unit": t_unit,
        "spec": None,
        "spec_path": None,
        "salt": salt,
        "paired_with": partner.run_id if partner else None,
        "paired_with_name": partner.name if partner else None,
        "backend": "import",
        "concurrency": None,
        "replicates": max(sum(1 for k in keys if k == c) for c in conditions),
        "cells": [
            {"key": c, "label": condition_label(json.loads(c), axis_order), "cfg": json.loads(c)}
            for c in conditions
        ],
        "axis_order": axis_order,
        "outcomes": outcomes,
        "failures": [o for o in outcomes if o != SUCCESS],
        "successes": [SUCCESS],
        "design": None,
        "capture": None,
        "chaos": {},
        "episode_timeout": None,
        "counts": {"planned": len(samples), "done": 0, "errored": 0},
        "resumed_at": [],
        "import": {
            "constant": {k: v for k, v in samples[0].axes.items() if k not in axis_order},
            "tool": tool,
            "fingerprint": fingerprint,
            "files": hashes,
            "options": dict(options),
            "mapping": dict(mapping.table),
        },
        "versions": {"poisson_prove": _version(), "python": platform.python_version()},
    }
    writer = store.create_run(target_id=tool, name=name, manifest=manifest)
    columns: dict[str, list[Any]] = {
        "run_id": [writer.manifest["run_id"]] * len(samples),
        "cell": keys,
        "cfg": keys,
        "replicate": replicates,
        "seed": [episode_seed(salt, k, r) for k, r in zip(keys, replicates, strict=True)],
        "outcome": [s.outcome for s in samples],
        "t": [None if s.outcome is None else (s.t if s.t is not None else 1.0) for s in samples],
        "horizon": [None if s.outcome is None else horizon for s in samples],
        "case_id": [None] * len(samples),  # the sample is the replicate: a condition pools its samples
        "meta": [
            json.dumps(
                {"sample_id": s.sample_id, "epoch": s.epoch, "source": s.source, **s.meta},
                ensure_ascii=False,
                default=str,
            )
            for s in samples
        ],
        "error_kind": [s.error_kind if s.outcome is None else None for s in samples],
        "error_message": [(s.error_message or "")[:2000] if s.outcome is None else None for s in samples],
        "started_at": [s.started_at for s in samples],
        "duration_s": [s.duration_s for s in samples],
        "spans": [None] * len(samples),
    }
    writer.write_batch(columns)
    errored = sum(1 for s in samples if s.outcome is None)
    writer.event("done", reason="imported", ran=len(samples), done=len(samples), errored=errored, seconds=0)
    writer.update_manifest(
        status="complete",
        finished=utc_now_iso(),
        counts={"planned": len(samples), "done": len(samples), "errored": errored},
    )
    info = RunInfo(writer.path, writer.manifest)
    return ImportResult(info, True, len(samples), errored, len(conditions), partner.name if partner else None)


def _partner(earlier: Iterable[RunInfo], tool: str, conditions: set[str]) -> RunInfo | None:
    """The latest earlier import of the same tool sharing a condition: what `diff` compares
    with when given no names, as a sweep's `--pair-with` run."""
    for run in reversed(list(earlier)):
        if (run.manifest.get("import") or {}).get("tool") != tool:
            continue
        if conditions & {c.get("key") for c in run.manifest.get("cells") or [] if isinstance(c, dict)}:
            return run
    return None


def _version() -> str:
    return __version__
