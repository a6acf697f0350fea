"""Turning read eval samples into one ordinary run of the store: a benchmark of cases.

Both importers produce `ImportedSample`s; this module lays them out as STATISTICS.md section 7
and the store's case design say: the condition is `{task, <scorer axis>, ..., sample}`, with
`sample` the spec's case axis (`cases = true`), so every imported task (per scorer) is one
pooled group whose case is the sample id (stored as `case_id`); `replicate` is the epoch - 1
(lm-eval: 0), and one salt per tool, so two imports of the same task share seeds on
(task, scorer, sample, epoch) and the paired test pairs exactly those.

An import is all or nothing and runs one at a time per store: it holds the store's import lock
(`.import.lock`, prove_common.files.lock) from its last look at the store to its run's last
write, so two imports of the same logs started together store one run. A run left unfinished
by a killed import (its manifest has no `finished`) is moved out of the store and removed
when the same logs are imported again, which then stores what an uninterrupted import stores.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import platform
import shutil
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from poisson_prove.design.conditions import condition_key, condition_label
from poisson_prove.design.seeding import episode_seed, new_salt
from poisson_prove.errors import ProveError
from poisson_prove.importers.logfiles import file_sha256
from poisson_prove.importers.outcomes import SUCCESS, OutcomeMapping
from poisson_prove.store.info import RunInfo
from poisson_prove.store.runs import RunStore
from poisson_prove.version import __version__
from prove_common.files import LockTimeout, lock
from prove_common.jsonio import utc_now

CASE_AXIS = "sample"
LAYOUT = 2  # the shape of an imported run; part of the fingerprint, so an older import is redone
IMPORT_LOCK = ".import.lock"
REMOVED = ".import-removed"  # where a killed import's run goes before it is deleted
LOCK_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class ImportedSample:
    """One scored (or errored) sample of one epoch by one scorer, as read from a log."""

    axes: Mapping[str, Any]  # the non-case axes: task, the scorer's axis, model, task args
    sample_id: str | int
    epoch: int  # 1-based, as Inspect counts
    outcome: str | None
    source: str
    scorer: str  # the scorer (lm-eval: the metric) whose declared outcomes this value counts in
    value: Any = None
    t: float | None = None
    error_kind: str | None = None
    error_message: str | None = None
    started_at: dt.datetime | None = None
    duration_s: float | None = None
    document_hash: str | None = None  # pairs only with an episode of the same document
    meta: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class LogSummary:
    """One log as a whole: whether its eval finished, and what ran it."""

    path: Path
    status: str  # `success`, or the tool's word for an eval that did not finish
    planned: int  # samples x epochs the eval planned
    present: int  # samples x epochs in the log, cancelled ones included
    cancelled: int  # samples the eval's stop cancelled: left out, not the agent's errors
    scorers: int = 1  # episodes per sample (one per scorer imported)
    message: str | None = None  # the eval's own error, when it stopped on one
    source: Mapping[str, Any] = field(default_factory=dict)  # model, task args, scorers, ...

    @property
    def finished(self) -> bool:
        return self.status == "success"


@dataclass(frozen=True)
class ReadLogs:
    samples: list[ImportedSample]
    logs: list[LogSummary]
    scorer_axis: str  # the axis naming the scorer: `scorer` (Inspect), `metric` (lm-eval)
    kept_axes: tuple[str, ...]  # axes of the condition even when the same in every log


@dataclass(frozen=True)
class ImportResult:
    run: RunInfo
    created: bool  # False: these logs were imported already (the run holding them)
    episodes: int
    errored: int
    conditions: int
    paired_with: str | None
    groups: int = 0  # pooled groups: the conditions without the sample
    cases: int = 0  # distinct samples
    cancelled: int = 0
    unfinished: tuple[LogSummary, ...] = ()
    replaced: str | None = None  # the killed import of these logs that was removed first

    @property
    def partial(self) -> bool:
        return self.run.status != "complete"


#: Called with the partner run and (condition key, sample) of every sample: raise to refuse.
PartnerCheck = Callable[[RunInfo, Sequence[tuple[str, ImportedSample]]], None]


def tool_salt(tool: str) -> str:
    """One salt per tool: every import of that tool shares seeds on (condition, epoch)."""
    return hashlib.blake2b(f"poisson-prove import {tool}".encode(), digest_size=16).hexdigest()


def import_logs(
    store: RunStore,
    *,
    tool: str,
    files: Sequence[Path],
    read: Callable[[], ReadLogs],
    mapping: OutcomeMapping,
    options: Mapping[str, Any],
    t_unit: str,
    name: str | None = None,
    unpaired: bool = False,
    check_partner: PartnerCheck | None = None,
) -> ImportResult:
    """Store what `read()` reads from `files` as one run, or return the run that already holds
    these logs (read() is then never called)."""
    store.check_usable()
    hashes = [{"path": str(p.resolve()), "sha256": file_sha256(p)} for p in files]
    fingerprint = _fingerprint(tool, hashes, options, mapping)
    done = _finished_import(store.runs(), fingerprint)
    if done is not None:
        return _already(done)
    logs = read()
    if not logs.samples:
        raise ProveError(_nothing(tool, files, logs.logs), suggestions=_nothing_next(tool, logs.logs))
    _refuse_twice(logs)
    store.root.mkdir(parents=True, exist_ok=True)
    try:
        held = lock(store.root / IMPORT_LOCK, timeout=LOCK_TIMEOUT_S)
    except LockTimeout as exc:
        raise ProveError(exc.message, suggestions=exc.suggestions) from None
    with held:
        _clear_removed(store)
        earlier = store.runs()
        done = _finished_import(earlier, fingerprint)
        if done is not None:
            return _already(done)
        replaced = _remove_killed(store, earlier, fingerprint)
        if replaced is not None:
            earlier = store.runs()
        import_record = {
            "tool": tool,
            "layout": LAYOUT,
            "fingerprint": fingerprint,
            "files": hashes,
            "options": dict(options),
            "mapping": dict(mapping.table),
            "mapped": sorted(mapping.explicit),
        }
        return _write(
            store,
            tool,
            logs,
            mapping,
            import_record,
            t_unit,
            name,
            earlier,
            unpaired,
            check_partner,
            replaced,
        )


def _refuse_twice(logs: ReadLogs) -> None:
    """Refuse logs holding one (sample, epoch) of a condition twice, before the store is touched
    (a refusal writes nothing, not even the store's import lock file)."""
    samples = logs.samples
    axes = _axes(samples, logs.kept_axes)
    axis_order = [*axes, CASE_AXIS]
    seen: dict[tuple[str, int], ImportedSample] = {}
    for sample in samples:
        key = condition_key({**{n: sample.axes.get(n) for n in axes}, CASE_AXIS: sample.sample_id})
        other = seen.setdefault((key, sample.epoch), sample)
        if other is not sample:
            raise ProveError(
                f"sample {sample.sample_id!r} epoch {sample.epoch} of "
                f"{condition_label(json.loads(key), axis_order)} is in two logs "
                f"({other.source} and {sample.source}); one import holds each (sample, epoch) once",
                suggestions=["import the two logs separately, then: poisson-prove diff BEFORE AFTER"],
            )


def _fingerprint(
    tool: str, hashes: Sequence[Mapping[str, str]], options: Mapping[str, Any], mapping: OutcomeMapping
) -> str:
    document = {
        "tool": tool,
        "layout": LAYOUT,
        "files": sorted(h["sha256"] for h in hashes),
        "options": options,
        "mapping": dict(mapping.table),
        "mapped": sorted(mapping.explicit),
    }
    return hashlib.sha256(json.dumps(document, sort_keys=True, default=str).encode()).hexdigest()


def _finished_import(runs: Iterable[RunInfo], fingerprint: str) -> RunInfo | None:
    """The run a finished import of these logs stored (a killed one's has no `finished`)."""
    for run in runs:
        record = run.manifest.get("import") or {}
        if record.get("fingerprint") == fingerprint and run.manifest.get("finished"):
            return run
    return None


def _already(run: RunInfo) -> ImportResult:
    return ImportResult(run, False, 0, 0, len(run.manifest.get("cells") or []), None)


def _nothing(tool: str, files: Sequence[Path], logs: Sequence[LogSummary]) -> str:
    unfinished = [log for log in logs if not log.finished]
    if unfinished and all(log.present == log.cancelled for log in logs):
        first = unfinished[0]
        held = "holds no sample" if not first.present else "holds only cancelled samples"
        stopped = f"an eval that did not finish (status {first.status})"
        return f"{first.path} is {stopped} and {held}; nothing to import"
    listed = ", ".join(str(p) for p in files)
    return f"the {tool} logs hold no samples ({listed}); nothing to import"


def _nothing_next(tool: str, logs: Sequence[LogSummary]) -> list[str]:
    unfinished = [log for log in logs if not log.finished]
    if tool == "inspect" and unfinished:
        return [f"inspect eval-retry {unfinished[0].path}, then import the log it writes"]
    return []


def _clear_removed(store: RunStore) -> None:
    """Finish removing what a killed import's clean-up left (under the import lock)."""
    shutil.rmtree(store.root / REMOVED, ignore_errors=True)


def _remove_killed(store: RunStore, earlier: Iterable[RunInfo], fingerprint: str) -> str | None:
    """Remove the runs of these logs a killed import left unfinished; the name of the last one.

    Under the import lock no import writes, and the run's own writer lock (taken without
    waiting) proves that no older writer does either. The folder is first renamed out of the
    store (atomic), then deleted: a kill in between leaves nothing `runs` lists.
    """
    removed = None
    for run in earlier:
        record = run.manifest.get("import") or {}
        if record.get("fingerprint") != fingerprint or run.manifest.get("finished"):
            continue
        try:
            writer = lock(run.path / ".writer.lock", timeout=0)
        except LockTimeout:
            raise ProveError(
                f'run "{run.name}" holds these logs and is being written by another import right now',
                suggestions=["wait for that import to end; it stores these logs"],
            ) from None
        with writer:
            trash = store.root / REMOVED
            trash.mkdir(exist_ok=True)
            run.path.rename(trash / run.path.name)
        shutil.rmtree(trash, ignore_errors=True)
        removed = run.name
    return removed


def _axes(samples: Sequence[ImportedSample], kept: Sequence[str]) -> list[str]:
    """The non-case axes: the kept ones always, any other only where it varies."""
    names = list(kept)
    for sample in samples:
        names.extend(k for k in sample.axes if k not in names)
    return [
        n
        for n in names
        if n in kept or len({json.dumps(s.axes.get(n), sort_keys=True, default=str) for s in samples}) > 1
    ]


def _write(
    store: RunStore,
    tool: str,
    logs: ReadLogs,
    mapping: OutcomeMapping,
    record: dict[str, Any],
    t_unit: str,
    name: str | None,
    earlier: Sequence[RunInfo],
    unpaired: bool,
    check_partner: PartnerCheck | None,
    replaced: str | None,
) -> ImportResult:
    samples = logs.samples
    axes = _axes(samples, logs.kept_axes)
    axis_order = [*axes, CASE_AXIS]
    cfgs = [{**{n: s.axes.get(n) for n in axes}, CASE_AXIS: s.sample_id} for s in samples]
    keys = [condition_key(cfg) for cfg in cfgs]
    replicates = [s.epoch - 1 for s in samples]
    conditions = list(dict.fromkeys(keys))
    salt = new_salt() if unpaired else tool_salt(tool)
    partner = None if unpaired else _partner(earlier, tool, salt, set(conditions))
    if partner is not None and check_partner is not None:
        check_partner(partner, list(zip(keys, samples, strict=True)))

    by_scorer: dict[str, list[Any]] = {}
    for sample in samples:
        values = by_scorer.setdefault(sample.scorer, [])
        if sample.outcome is not None:
            values.append(sample.value)
    declared = {scorer: mapping.declared(values) for scorer, values in by_scorer.items()}
    outcomes = list(dict.fromkeys(o for scorer in declared for o in declared[scorer]))
    outcomes = [SUCCESS, *(o for o in outcomes if o != SUCCESS)]
    has_t = [s.t for s in samples if s.t is not None]
    horizon = max(has_t) if has_t else 1.0
    unfinished = tuple(log for log in logs.logs if not log.finished)
    groups = {condition_key({n: s.axes.get(n) for n in axes}) for s in samples}
    cases = list(dict.fromkeys(s.sample_id for s in samples))
    planned = sum(log.planned * log.scorers for log in logs.logs)
    spec_axes: dict[str, Any] = {
        n: {"type": "categorical", "values": list(dict.fromkeys(s.axes.get(n) for s in samples))}
        for n in axes
    }
    spec_axes[CASE_AXIS] = {"type": "categorical", "values": cases, "cases": True}
    manifest = {
        "target": f"{tool} import",
        "target_id": tool,
        "t_unit": t_unit,
        "spec": {"axes": spec_axes},
        "spec_path": None,
        "salt": salt,
        "paired_with": partner.run_id if partner else None,
        "paired_with_name": partner.name if partner else None,
        "backend": "import",
        "concurrency": None,
        "replicates": max(replicates) + 1,
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
        "counts": {"planned": planned, "done": 0, "errored": 0},
        "resumed_at": [],
        "source": _source(tool, logs),
        "import": {
            **record,
            "constant": {k: v for k, v in samples[0].axes.items() if k not in axes},
            "outcomes_by": {"axis": logs.scorer_axis, "outcomes": declared},
            "unfinished": [
                {"file": log.path.name, "status": log.status, "planned": log.planned, "present": log.present}
                for log in unfinished
            ],
            "cancelled": sum(log.cancelled for log in logs.logs),
        },
        "versions": {"poisson_prove": __version__, "python": platform.python_version()},
    }
    writer = store.create_run(target_id=tool, name=name, manifest=manifest, hold=True)
    try:
        writer.write_batch(_columns(writer.manifest["run_id"], samples, keys, replicates, salt, horizon))
        errored = sum(1 for s in samples if s.outcome is None)
        writer.event(
            "done", reason="imported", ran=len(samples), done=len(samples), errored=errored, seconds=0
        )
        writer.update_manifest(
            status="partial" if unfinished else "complete",
            finished=utc_now().isoformat(timespec="seconds").replace("+00:00", "Z"),
            counts={"planned": max(planned, len(samples)), "done": len(samples), "errored": errored},
        )
    finally:
        writer.release()
    return ImportResult(
        RunInfo(writer.path, writer.manifest),
        True,
        len(samples),
        errored,
        len(conditions),
        partner.name if partner else None,
        groups=len(groups),
        cases=len(cases),
        cancelled=sum(log.cancelled for log in logs.logs),
        unfinished=unfinished,
        replaced=replaced,
    )


def _columns(
    run_id: str,
    samples: Sequence[ImportedSample],
    keys: Sequence[str],
    replicates: Sequence[int],
    salt: str,
    horizon: float,
) -> dict[str, list[Any]]:
    def seed(key: str, replicate: int, sample: ImportedSample) -> int:
        # A document's hash keys its seed: two runs pair on a doc_id only when it is one document.
        keyed = key if sample.document_hash is None else f"{key}\x1fdoc_hash={sample.document_hash}"
        return episode_seed(salt, keyed, replicate)

    return {
        "run_id": [run_id] * len(samples),
        "cell": list(keys),
        "cfg": list(keys),
        "replicate": list(replicates),
        "seed": [seed(k, r, s) for k, r, s in zip(keys, replicates, samples, strict=True)],
        "outcome": [s.outcome for s in samples],
        "t": [None if s.outcome is None else (s.t if s.t is not None else 1.0) for s in samples],
        "horizon": [None if s.outcome is None else horizon for s in samples],
        "case_id": [str(s.sample_id) for s in samples],
        "meta": [
            json.dumps(
                {"sample_id": s.sample_id, "epoch": s.epoch, "value": s.value, "source": s.source, **s.meta},
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
        "agent_calls": [None] * len(samples),  # imported runs have no agent calls
    }


def _source(tool: str, logs: ReadLogs) -> dict[str, Any]:
    """What ran the evals, for a comparison to say what differs between two imports: each
    field is its one value when every log agrees, else `{"various": [its distinct values]}`;
    `logs` holds each log's own."""
    merged: dict[str, list[Any]] = {}
    for log in logs.logs:
        for key, value in log.source.items():
            values = merged.setdefault(key, [])
            if value not in values:
                values.append(value)
    summary: dict[str, Any] = {"tool": tool}
    summary.update({k: v[0] if len(v) == 1 else {"various": v} for k, v in merged.items()})
    summary["logs"] = [
        {
            "file": log.path.name,
            "status": log.status,
            "planned": log.planned,
            "present": log.present,
            "cancelled": log.cancelled,
            **log.source,
        }
        for log in logs.logs
    ]
    return summary


def _partner(earlier: Iterable[RunInfo], tool: str, salt: str, conditions: set[str]) -> RunInfo | None:
    """The latest earlier finished import of the same tool and salt sharing a condition: what
    `diff` compares with when given no names, as a sweep's `--pair-with` run."""
    for run in reversed(list(earlier)):
        record = run.manifest.get("import") or {}
        if record.get("tool") != tool or run.manifest.get("salt") != salt or not run.manifest.get("finished"):
            continue
        if conditions & {c.get("key") for c in run.manifest.get("cells") or [] if isinstance(c, dict)}:
            return run
    return None
