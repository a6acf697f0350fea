"""Looking inside one run: errors by kind, episodes without an outcome, what its [chaos]
faults reached, one episode in full.

Library only: returns immutable results, raises ProveError; `poisson-prove inspect` draws them.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from poisson_prove.chaos.reach import chaos_after_run, reach_totals
from poisson_prove.design.conditions import cfg_of, condition_key, condition_label, format_value
from poisson_prove.errors import ProveError
from poisson_prove.inspection.trail import common_trails
from poisson_prove.store.codes import coded, column_numbers
from poisson_prove.store.columns import read_columns
from poisson_prove.store.info import RunInfo
from poisson_prove.store.runs import RunStore

FIRST_MESSAGES = 3
TRAIL_SAMPLE = 5000  # failed episodes read per outcome or error kind for `trails`


@dataclass(frozen=True)
class ErrorKind:
    kind: str
    count: int
    share: float  # of all stored episodes of the run
    messages: tuple[str, ...]  # the first distinct messages, in stored order
    conditions: tuple[str, ...]  # labels of the conditions it hit, in condition order


@dataclass(frozen=True)
class ConditionCoverage:
    key: str
    label: str
    episodes: int
    without_outcome: int


@dataclass(frozen=True)
class FailureTrails:
    """Where the failed episodes of one failure outcome or error kind went, from their spans."""

    label: str  # "outcome hit" or "error ValueError"
    episodes: int  # failed episodes with spans
    trails: tuple[tuple[str, int], ...]  # span_trail.failure_trail lines, most frequent first


@dataclass(frozen=True)
class Inspection:
    run_id: str
    name: str
    status: str
    episodes: int
    without_outcome: int
    planned: int | None
    outcomes: tuple[tuple[str, int], ...]  # outcome -> count, declared order
    errors: tuple[ErrorKind, ...]  # most frequent first
    coverage: tuple[ConditionCoverage, ...]  # conditions with episodes without an outcome
    trails: tuple[FailureTrails, ...] = ()  # failed episodes' spans, by failure outcome / error kind
    # the manifest's [chaos] block with what the faults reached, from every episode's spans ({}: none)
    chaos: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class EpisodeDetail:
    run_id: str
    run_name: str
    condition: str  # label
    key: str
    cfg: Mapping[str, Any]
    replicate: int
    seed: int
    outcome: str | None
    t: float | None
    horizon: float | None
    case_id: str | None
    meta: Any
    error_kind: str | None
    error_message: str | None
    started_at: str | None
    duration_s: float | None
    spans: Any


def _labels(info: RunInfo, keys: Sequence[str]) -> dict[str, str]:
    axis_order = info.manifest.get("axis_order")
    return {key: condition_label(cfg_of(key), axis_order) for key in keys}


def _condition_order(info: RunInfo, keys: Sequence[str]) -> list[str]:
    declared = [str(c.get("key")) for c in info.manifest.get("cells") or [] if isinstance(c, dict)]
    ordered = [k for k in declared if k in keys]
    return ordered + sorted(set(keys) - set(ordered))


def inspect_run(ref: str | RunInfo = "latest", *, store: str | os.PathLike[str] | None = None) -> Inspection:
    """Errors by kind and episodes without an outcome of one stored run."""
    info = ref if isinstance(ref, RunInfo) else RunStore(store).resolve(ref)
    table = read_columns(info, ("cell", "outcome", "error_kind", "error_message"))
    # Codes, not Python lists: a run can hold a million episodes.
    condition = coded(table.column("cell"))
    outcome = coded(table.column("outcome"))
    kind = coded(table.column("error_kind"))
    message = coded(table.column("error_message"))
    total = len(condition.codes)
    order = _condition_order(info, sorted(set(condition.values)))
    labels = _labels(info, order)
    rank = np.array([order.index(key) for key in condition.values] or [0])
    n_conditions = len(condition.values)

    missing = outcome.codes < 0
    kind_codes = np.where(kind.codes[missing] >= 0, kind.codes[missing], len(kind.values))
    kind_names = [*kind.values, "unknown"]
    missing_conditions = condition.codes[missing]
    missing_messages = message.codes[missing]
    errors = []
    for k in np.unique(kind_codes):
        rows = np.flatnonzero(kind_codes == k)
        codes, first_rows = np.unique(missing_messages[rows], return_index=True)
        first = [codes[i] for i in np.argsort(first_rows)[:FIRST_MESSAGES]]
        texts = tuple(message.values[c] if c >= 0 else "" for c in first)
        hit = sorted(np.unique(missing_conditions[rows]), key=lambda c: rank[c])
        hit_labels = tuple(labels[condition.values[c]] for c in hit)
        errors.append(ErrorKind(kind_names[k], len(rows), len(rows) / total, texts, hit_labels))
    errors.sort(key=lambda e: (-e.count, e.kind))

    per_condition_total = np.bincount(condition.codes, minlength=n_conditions)
    per_condition_missing = np.bincount(missing_conditions, minlength=n_conditions)
    position = {key: i for i, key in enumerate(condition.values)}
    coverage = tuple(
        ConditionCoverage(key, labels[key], int(per_condition_total[i]), int(per_condition_missing[i]))
        for key, i in ((key, position[key]) for key in order)
        if per_condition_missing[i]
    )
    declared = [str(o) for o in info.manifest.get("outcomes") or []]
    per_outcome = np.bincount(outcome.codes[~missing], minlength=len(outcome.values))
    counted = {name: 0 for name in declared}
    for i, name in enumerate(outcome.values):
        counted[name] = counted.get(name, 0) + int(per_outcome[i])
    counts = info.manifest.get("counts") or {}
    planned = counts.get("planned") if isinstance(counts, dict) else None
    return Inspection(
        run_id=info.run_id,
        name=info.name,
        status=info.status,
        episodes=total,
        without_outcome=int(missing.sum()),
        planned=planned if isinstance(planned, int) else None,
        outcomes=tuple(counted.items()),
        errors=tuple(errors),
        coverage=coverage,
        trails=_failure_trails(info, outcome, kind),
        chaos=chaos_reached(info),
    )


def _stored_spans(info: RunInfo) -> Iterator[str | None]:
    for path in info.batch_files():  # one batch at a time: a long run's spans are never all in memory
        yield from info.read_batch(path, ["spans"]).column("spans").to_pylist()


def chaos_reached(info: RunInfo) -> dict[str, Any]:
    """The run's [chaos] block with what its faults reached, totalled over every stored
    episode's spans (chaos.reach), as the sweep wrote it into the manifest and also for a run
    whose sweep was killed before it could; {} for a run without faults."""
    block = info.manifest.get("chaos")
    if not isinstance(block, Mapping) or not block.get("faults"):
        return {}
    return chaos_after_run(block, reach_totals(_stored_spans(info)))


def _failure_trails(info: RunInfo, outcome: Any, kind: Any) -> tuple[FailureTrails, ...]:
    """For each failure outcome and error kind, the most frequent trails of its episodes' spans."""
    failures = {str(f) for f in info.manifest.get("failures") or []}
    groups: list[tuple[str, np.ndarray]] = []
    for i, name in enumerate(outcome.values):
        if name in failures:
            groups.append((f"outcome {name}", np.flatnonzero(outcome.codes == i)))
    missing = outcome.codes < 0
    for i, name in enumerate(kind.values):
        groups.append((f"error {name}", np.flatnonzero(missing & (kind.codes == i))))
    groups = [(label, rows) for label, rows in groups if len(rows)]
    if not groups:
        return ()
    spans = read_columns(info, ("spans",)).column("spans")
    chunks = spans.chunks
    starts = np.cumsum([0] + [len(c) for c in chunks])
    out = []
    for label, rows in groups:
        # Element by element (a pyarrow take would import pandas); the first TRAIL_SAMPLE only.
        picked = rows[:TRAIL_SAMPLE]
        where = np.searchsorted(starts, picked, side="right") - 1
        texts = [chunks[k][int(r - starts[k])].as_py() for r, k in zip(picked, where, strict=True)]
        texts = [t for t in texts if t]
        if texts:
            out.append(FailureTrails(label, len(texts), common_trails(texts)))
    return tuple(out)


# One episode --------------------------------------------------------------------------------


def _matches(value: Any, text: str) -> bool:
    """Whether a cfg value reads as `text` (numbers compare as numbers: 0.5 == 0.50)."""
    if format_value(value) == text or str(value) == text:
        return True
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return math.isclose(float(text), float(value), rel_tol=0, abs_tol=1e-12)
        except ValueError:
            return False
    return False


def _find_condition(info: RunInfo, keys: Sequence[str], text: str) -> str | None:
    text = text.strip()
    if text in keys:
        return text
    try:
        as_key = condition_key(json.loads(text))
        if as_key in keys:
            return as_key
    except (ValueError, TypeError, AttributeError):
        pass
    labels = _labels(info, keys)
    for key, label in labels.items():
        if label == text:
            return key
    if "=" in text:
        wanted = {}
        for part in text.split(","):
            name, sep, value = part.partition("=")
            if not sep:
                return None
            wanted[name.strip()] = value.strip()
        found = [
            key
            for key in keys
            if all(name in cfg_of(key) and _matches(cfg_of(key)[name], v) for name, v in wanted.items())
        ]
        if len(found) == 1:
            return found[0]
    return None


def _json_or_text(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


def find_episode(
    ref: str | RunInfo, selector: str, *, store: str | os.PathLike[str] | None = None
) -> EpisodeDetail:
    """One stored episode by `CONDITION/REPLICATE`.

    CONDITION is the condition's label (`ticket refund · temperature 0.7`), its key
    (`{"temperature":0.7,"ticket":"refund"}`) or `name=value` pairs (`ticket=refund,temperature=0.7`,
    enough pairs to pick one condition); REPLICATE counts from 0.
    """
    info = ref if isinstance(ref, RunInfo) else RunStore(store).resolve(ref)
    condition, sep, replicate_text = selector.rpartition("/")
    example = "ticket=refund,temperature=0.7/0"
    # Per batch file, only the condition and replicate columns: the one matching row is read
    # in full afterwards, so a run of a million episodes answers quickly.
    index = []
    for path in info.batch_files():
        part = info.read_batch(path, ["cell", "replicate"], read_dictionary=["cell"])
        replicates = column_numbers(part.column("replicate"), np.int64, -1)
        index.append((path, coded(part.column("cell")), replicates))
    keys = sorted({key for _, conditions, _ in index for key in conditions.values})
    order = _condition_order(info, keys)
    if order:
        cfg = cfg_of(order[0])
        example = ",".join(f"{k}={format_value(v)}" for k, v in cfg.items()) + "/0"
    if not sep or not replicate_text.strip().isdigit():
        raise ProveError(
            f'--episode "{selector}" is not CONDITION/REPLICATE',
            suggestions=[f'poisson-prove inspect --episode "{example}"'],
            exit_code=2,
        )
    key = _find_condition(info, keys, condition)
    if key is None:
        labels = list(_labels(info, order).values())
        shown = "; ".join(labels[:6]) + ("; ..." if len(labels) > 6 else "")
        raise ProveError(
            f'no condition "{condition}" in run "{info.name}" (its conditions: {shown})',
            suggestions=[f'poisson-prove inspect "{info.name}" --episode "{example}"'],
        )
    replicate = int(replicate_text)
    rows: list[dict[str, Any]] = []
    stored_parts = []
    for path, conditions, replicates in index:
        if key not in conditions.values:
            continue
        in_condition = conditions.codes == conditions.values.index(key)
        stored_parts.append(replicates[in_condition])
        hit = np.flatnonzero(in_condition & (replicates == replicate))
        if hit.size:
            full = info.read_batch(path, _ALL_COLUMNS).slice(int(hit[0]), 1)
            started_at = _utc_text(full.column("started_at"))
            # pyarrow turns a zoned timestamp into Python through pandas (a second of start-up):
            # that column is converted on its own, above.
            rows = full.drop_columns(["started_at"]).to_pylist()
            rows[0]["started_at"] = started_at
            break
    if not rows:
        stored = np.concatenate(stored_parts) if stored_parts else np.empty(0, dtype=np.int64)
        span = f"{stored.min()}..{stored.max()}" if stored.size else "none"
        first = stored.min() if stored.size else 0
        raise ProveError(
            f'run "{info.name}" has no replicate {replicate} in condition {_labels(info, [key])[key]} '
            f"(stored replicates: {span})",
            suggestions=[f'poisson-prove inspect "{info.name}" --episode "{condition}/{first}"'],
        )
    row = rows[0]
    return EpisodeDetail(
        run_id=info.run_id,
        run_name=info.name,
        condition=_labels(info, [key])[key],
        key=key,
        cfg=cfg_of(key),
        replicate=replicate,
        seed=int(row["seed"]),
        outcome=row.get("outcome"),
        t=row.get("t"),
        horizon=row.get("horizon"),
        case_id=row.get("case_id"),
        meta=_json_or_text(row.get("meta")),
        error_kind=row.get("error_kind"),
        error_message=row.get("error_message"),
        started_at=row["started_at"],
        duration_s=row.get("duration_s"),
        spans=_json_or_text(row.get("spans")),
    )


def _utc_text(column: Any) -> str | None:
    """The one timestamp of a 1-row column as ISO 8601 UTC text (`...Z`), without pandas."""
    import pyarrow as pa  # pyarrow: ~160 ms, only when episodes are read or written

    if column.null_count:
        return None
    ticks = column.cast(pa.int64()).to_pylist()[0]
    per_second = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}[column.type.unit]
    seconds, rest = divmod(ticks, per_second)
    moment = dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(
        seconds=seconds, microseconds=rest * 1_000_000 // per_second
    )
    return moment.isoformat().replace("+00:00", "Z")


_ALL_COLUMNS = (
    "cell", "replicate", "seed", "outcome", "t", "horizon", "case_id", "meta",
    "error_kind", "error_message", "started_at", "duration_s", "spans",
)
