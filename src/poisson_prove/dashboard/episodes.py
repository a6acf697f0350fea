"""A run's episodes as the dashboard lists them: the first failed ones in full, and the episode
table (failed and flipped first, each against its twin in the partner run), read only for the
rows shown. The rates, curves and the run's summary are collect.py's.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

import numpy as np

from poisson_prove.comparison.frame import read_frame
from poisson_prove.errors import ProveError
from poisson_prove.store.codes import Coded
from poisson_prove.store.columns import read_columns
from poisson_prove.store.info import RunInfo

TEXT_LIMIT = 20_000  # characters of one episode's meta or spans put on the page
EPISODES_LISTED = 300  # rows of a plotted run's episode table (failed and flipped ones first)
SPANS_LISTED = 20  # of those, the episodes whose spans, meta and error ride on the page
SPANS_LIMIT = 4_000  # characters of one listed episode's spans (or meta) on the page


@dataclass(frozen=True)
class FailedEpisode:
    label: str
    replicate: int
    seed: int
    case_id: str | None
    outcome: str | None
    t: float | None
    error_kind: str | None
    error_message: str | None
    meta: str | None  # pretty JSON (or the stored text), cut to TEXT_LIMIT
    spans: str | None


@dataclass(frozen=True)
class EpisodeRow:
    """One episode of a run's episode table; `flipped` against its twin (same condition,
    replicate and seed) in the partner run, None when the partner has no twin of it."""

    row: int  # its place in the run's stored rows
    condition: str  # the cell key
    label: str
    case_id: str | None
    replicate: int
    seed: int
    outcome: str | None
    error_kind: str | None
    t: float | None
    failed: bool  # a failure outcome, or no outcome at all
    flipped: bool | None
    twin: str | None  # the twin's outcome (or error kind) in the partner run
    detail: bool = False  # its spans, meta and error are on the page
    error_message: str | None = None
    spans: str | None = None
    meta: str | None = None


@dataclass(frozen=True)
class EpisodeList:
    """A plotted run's episodes as the page lists them: at most EPISODES_LISTED, the failed
    and the flipped first (each in the run's order), then the rest."""

    partner: str | None  # the run "flipped" is measured against (its name)
    rows: tuple[EpisodeRow, ...]
    total: int  # episodes in the run
    twins: int  # episodes with a twin in the partner
    flipped: int  # of those, the ones whose twin ended otherwise


def _text(value: Any, limit: int = TEXT_LIMIT) -> str | None:
    """Stored JSON as indented text (any JSON at all: the page escapes it), else as stored."""
    if value is None:
        return None
    try:
        text = json.dumps(json.loads(value), indent=2, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = str(value)
    return text if len(text) <= limit else text[:limit] + f"\n... ({len(text):,} characters)"


def failed_episodes(info: RunInfo, rows: np.ndarray, labels: dict[str, str]) -> tuple[FailedEpisode, ...]:
    """The first failed episodes in full, read only for the chosen rows."""
    if not rows.size:
        return ()
    columns = (
        "cell", "replicate", "seed", "case_id", "outcome", "t",
        "error_kind", "error_message", "meta", "spans",
    )
    table = _rows(read_columns(info, columns), rows.tolist())
    return tuple(
        FailedEpisode(
            label=labels.get(r["cell"], r["cell"]), replicate=r["replicate"], seed=r["seed"],
            case_id=r["case_id"], outcome=r["outcome"], t=r["t"], error_kind=r["error_kind"],
            error_message=r["error_message"], meta=_text(r["meta"]), spans=_text(r["spans"]),
        )
        for r in table
    )


def _strings(column: Coded) -> list[str | None]:
    """A coded string column as one Python value per row (None where null)."""
    lookup = np.array([*column.values, None], dtype=object)
    return cast(list[str | None], lookup[column.codes].tolist())  # code -1 (null): the trailing None


def _rows(table: Any, rows: Sequence[int]) -> list[dict[str, Any]]:
    """The chosen rows of an Arrow table as dicts, by zero-copy slices (Table.take would import
    pyarrow.compute, a fixed cost of a refresh that draws one run)."""
    return [table.slice(i, 1).to_pylist()[0] for i in rows]


def _ending(outcome: str | None, error_kind: str | None) -> str:
    return outcome if outcome is not None else f"no outcome ({error_kind or 'unknown'})"


def episode_list(
    info: RunInfo, partner: RunInfo | None, labels: Mapping[str, str], failures: Sequence[str]
) -> EpisodeList:
    """The run's episode table, each episode flipped or not against its twin in `partner`."""
    frame = read_frame(info)  # the frame run_view and compare() read too (read_frame keeps the last two)
    cells = cast(list[str], _strings(frame.condition))  # a stored cell is never null
    cases = _strings(frame.case_id)
    outcomes, kinds = _strings(frame.outcome), _strings(frame.error_kind)
    replicates, seeds = frame.replicate.tolist(), frame.seed.tolist()
    times = [None if math.isnan(t) else t for t in frame.t.tolist()]  # a stored t is finite or null
    twins: dict[tuple[Any, Any, Any], str] = {}
    if partner is not None:
        try:
            theirs = read_frame(partner)
        except ProveError:  # a damaged partner: its own section says so; here no episode has a twin
            partner = None
        else:
            keys = zip(_strings(theirs.condition), theirs.replicate.tolist(), theirs.seed.tolist(),
                       strict=True)
            endings = map(_ending, _strings(theirs.outcome), _strings(theirs.error_kind))
            twins = dict(zip(keys, endings, strict=True))
    failing = set(failures)
    total = len(outcomes)
    # Per episode its twin's ending and whether it flipped; a row object only for the listed ones
    # (the failed and the flipped first, each in the run's order, then the rest).
    twin_of = [twins.get(key) for key in zip(cells, replicates, seeds, strict=True)]
    flip_of = [None if twin is None else twin != _ending(outcome, kind)
               for twin, outcome, kind in zip(twin_of, outcomes, kinds, strict=True)]
    failed_of = [outcome is None or outcome in failing for outcome in outcomes]
    found = total - twin_of.count(None)
    flipped = flip_of.count(True)
    first = [i for i in range(total) if failed_of[i] or flip_of[i]]
    if len(first) < EPISODES_LISTED:
        chosen_first = set(first)
        first += [i for i in range(total) if i not in chosen_first][: EPISODES_LISTED - len(first)]
    listed = [
        EpisodeRow(
            i, cells[i], labels.get(cells[i], cells[i]), cases[i], replicates[i], seeds[i],
            outcomes[i], kinds[i], times[i], failed_of[i], flip_of[i], twin_of[i],
        )
        for i in first[:EPISODES_LISTED]
    ]
    chosen = [e.row for e in listed[:SPANS_LISTED] if e.failed or e.flipped]
    if chosen:
        extra = _rows(read_columns(info, ("error_message", "spans", "meta")), chosen)
        details = dict(zip(chosen, extra, strict=True))
        listed = [_with_detail(e, details[e.row]) if e.row in details else e for e in listed]
    name = partner.name if partner is not None else None
    return EpisodeList(name, tuple(listed), total, found, flipped)


def _with_detail(episode: EpisodeRow, stored: Mapping[str, Any]) -> EpisodeRow:
    return replace(
        episode, detail=True, error_message=stored["error_message"],
        spans=_text(stored["spans"], SPANS_LIMIT), meta=_text(stored["meta"], SPANS_LIMIT),
    )
