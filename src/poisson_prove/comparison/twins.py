"""Episode twins read back: which agent moved a compared row, and one pair side by side.

Reads the store for poisson_prove.comparison.attribution (which is pure).

`attribute(comparison)` gives `diff` its attribution (poisson_prove.comparison.attribution):
for every row that moved, the twins whose outcome flipped and those that did not, each pair's
agent calls matched and the first divergence counted per agent, and each agent check compared
paired. It reads the `spans` column only when the runs hold agent spans, and then only the rows
it needs: a run without `@monitor` spans costs a look at the first episodes of each batch file
(`has_agent_spans`), never a JSON parse. Pairs are read in full up to a cap per row (an even
sample beyond it, the counts saying so): `FLIPPED_READ`, `UNFLIPPED_READ`, `CHECK_READ`.

`pair_view(before, after, condition, replicate)` is one pair's two trees of agent calls side by
side, agent by agent, with the first divergence marked (`inspect --pair`, the dashboard).
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from poisson_prove.comparison.attribution import (
    AgentCall,
    Attribution,
    RowAttribution,
    adjust_checks,
    agent_calls,
    attribute_row,
    changed_between,
    compare_checks,
    first_divergence,
)
from poisson_prove.comparison.frame import (
    EPISODE_TIMEOUT,
    Side,
    align_horizons,
    condition_order,
    read_frame,
    side_of,
)
from poisson_prove.comparison.result import Comparison, ConditionResult
from poisson_prove.comparison.stats import fate_by, twin_rows
from poisson_prove.design.conditions import cfg_of, condition_label
from poisson_prove.errors import ProveError
from poisson_prove.store.info import RunInfo
from poisson_prove.store.runs import RunStore

FLIPPED_READ = 1_000  # flipped pairs read per row, at most
UNFLIPPED_READ = 1_000  # unflipped pairs read per row, at most
CHECK_READ = 2_000  # pairs read per moved condition for its agents' checks, at most
PROBE_ROWS = 256  # episodes looked at per batch file to tell whether a run has agent spans
MONITOR_MARK = '"source":"monitor"'
MOVED = ("rose", "fell")
StoreArg = str | os.PathLike[str] | None


def has_agent_spans(info: RunInfo) -> bool:
    """Whether the run's episodes hold `@monitor` agent calls: the first PROBE_ROWS episodes
    of each batch file are looked at (text search, no JSON parse)."""
    import pyarrow.parquet as pq  # pyarrow: ~160 ms, only when a run is read

    for path in info.batch_files():
        try:
            parquet = pq.ParquetFile(path)
            if "spans" not in parquet.schema_arrow.names:
                continue
            batch = next(parquet.iter_batches(batch_size=PROBE_ROWS, columns=["spans"]), None)
        except (OSError, ValueError):  # the comparison has read it already; an odd file says no
            continue
        if batch is None:
            continue
        if any(text and MONITOR_MARK in text for text in batch.column(0).to_pylist()):
            return True
    return False


def read_spans(info: RunInfo, rows: Iterable[int]) -> dict[int, str | None]:
    """The `spans` text of the given rows (indices in the order the comparison reads the run:
    its batch files in write order), reading each file only as far as its last wanted row."""
    import pyarrow.parquet as pq  # pyarrow: ~160 ms, only when a run is read

    wanted = np.unique(np.fromiter(rows, dtype=np.int64))
    out: dict[int, str | None] = {}
    start = 0
    for path in info.batch_files():
        if not wanted.size:
            break
        parquet = pq.ParquetFile(path)
        count = parquet.metadata.num_rows
        here = wanted[(wanted >= start) & (wanted < start + count)] - start
        if here.size:
            last, offset = int(here[-1]), 0
            for batch in parquet.iter_batches(batch_size=8_192, columns=["spans"]):
                top = offset + batch.num_rows
                pick = here[(here >= offset) & (here < top)]
                if pick.size:
                    texts = batch.column(0).take(pick - offset).to_pylist()
                    for row, text in zip(pick.tolist(), texts, strict=True):
                        out[start + row] = text
                offset = top
                if offset > last:
                    break
        start += count
    return out


def _decoded(text: Any) -> list[Any]:
    """A row's spans as a list: its JSON text decoded (or the list find_episode decoded)."""
    if isinstance(text, list):
        return text
    if not isinstance(text, str) or not text:
        return []
    try:
        value = json.loads(text)
    except ValueError:  # a damaged row reads as one without agent calls
        return []
    return value if isinstance(value, list) else []


def _even(indices: np.ndarray, cap: int) -> np.ndarray:
    """All of `indices` up to `cap`, else `cap` of them evenly spaced (the same every time)."""
    if indices.size <= cap:
        return indices
    return indices[np.unique(np.linspace(0, indices.size - 1, cap).round().astype(np.int64))]


@dataclass(frozen=True)
class _MovedRow:
    condition: ConditionResult
    outcome: str
    verdict: str
    keys: tuple[str, ...]  # the compared conditions it covers (a pooled group: its cases)


def _moved_rows(comparison: Comparison) -> list[_MovedRow]:
    rows = []
    for condition in comparison.conditions:
        keys: tuple[str, ...] = (condition.key,)
        if condition.family == "pooled":
            keys = tuple(case.key for case in comparison.cases if case.group == condition.label)
        for row in condition.outcomes:
            if row.verdict in MOVED:
                rows.append(_MovedRow(condition, row.outcome, row.verdict, keys))
    return rows


def attribute(comparison: Comparison, *, store: StoreArg = None) -> Attribution:
    """The attribution of a finished comparison (see the module docstring)."""
    moved = _moved_rows(comparison)
    if not moved:
        return Attribution(False, "no row moved: there is nothing to attribute", code="nothing_moved")
    runs = RunStore(store)
    infos = (runs.resolve(comparison.before.run_id), runs.resolve(comparison.after.run_id))
    if not any(has_agent_spans(info) for info in infos):
        return Attribution(
            False,
            "neither run's episodes hold agent spans (@monitor agent calls), so no agent can be named",
            code="no_agent_spans",
        )
    if not comparison.paired:
        return Attribution(
            False,
            "the runs were not paired at sweep time (different salts): there are no twins whose "
            "agent calls could be compared, so no agent is named",
            code="unpaired",
        )
    if comparison.event == EPISODE_TIMEOUT:
        return Attribution(
            False, "episode_timeout rows are not attributed: a stopped episode's spans end early",
            code="episode_timeout",
        )
    twins = _twins(infos)
    keys, sides, rb, ra = twins.keys, twins.sides, twins.rb, twins.ra
    horizon = comparison.horizon
    pair_condition = sides[0].condition[rb]
    position = {key: i for i, key in enumerate(keys)}

    plans: list[tuple[_MovedRow, np.ndarray, np.ndarray, int, int]] = []
    check_pairs: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # condition key -> (pairs, their case)
    needed: list[np.ndarray] = []
    for row in moved:
        codes = np.array([position[k] for k in row.keys if k in position], dtype=np.int64)
        flipped_all, unflipped_all = _flips(twins, codes, row.outcome, horizon)
        inside = np.isin(pair_condition, codes)
        flipped, unflipped = _even(flipped_all, FLIPPED_READ), _even(unflipped_all, UNFLIPPED_READ)
        plans.append((row, flipped, unflipped, flipped_all.size, unflipped_all.size))
        needed += [flipped, unflipped]
        if row.condition.key not in check_pairs:
            sample = _even(np.flatnonzero(inside), CHECK_READ)
            check_pairs[row.condition.key] = (sample, pair_condition[sample])
            needed.append(sample)
    pairs = np.unique(np.concatenate(needed)) if needed else np.zeros(0, dtype=np.int64)
    texts = (read_spans(infos[0], rb[pairs].tolist()), read_spans(infos[1], ra[pairs].tolist()))
    calls: dict[int, tuple[tuple[AgentCall, ...], tuple[AgentCall, ...]]] = {
        int(p): (
            agent_calls(_decoded(texts[0].get(int(rb[p])))),
            agent_calls(_decoded(texts[1].get(int(ra[p])))),
        )
        for p in pairs
    }
    changed = changed_between([c[0] for c in calls.values()], [c[1] for c in calls.values()])
    pooled = comparison.case_axis is not None
    checks_of = {
        key: compare_checks(_labels([calls[int(p)] for p in sample]), case=_dense(case) if pooled else None)
        for key, (sample, case) in check_pairs.items()
    }
    rows: list[RowAttribution] = []
    for row, flipped, unflipped, n_flipped, n_unflipped in plans:
        attributed = attribute_row(
            key=row.condition.key, label=row.condition.label, outcome=row.outcome, verdict=row.verdict,
            flipped=[calls[int(p)] for p in flipped], unflipped=[calls[int(p)] for p in unflipped],
            flipped_pairs=n_flipped, unflipped_pairs=n_unflipped, changed=changed,
        )
        rows.append(_with_checks(attributed, checks_of[row.condition.key]))
    adjusted, family = adjust_checks(rows)
    return Attribution(True, None, adjusted, family)


@dataclass(frozen=True)
class _Twins:
    keys: list[str]
    universe: list[str]
    sides: list[Side]
    rb: np.ndarray  # the twins' rows in the before run
    ra: np.ndarray  # and in the after run


def _twins(infos: Sequence[RunInfo]) -> _Twins:
    """Both runs read as the comparison reads them, and their twins paired as McNemar pairs
    them (same condition, replicate and seed, both with an outcome by the horizon)."""
    frames = [read_frame(info) for info in infos]
    keys = condition_order(frames[0], frames[1])
    universe = [str(x) for x in infos[1].manifest.get("outcomes") or []]
    sides = [side_of(frame, keys, universe, False) for frame in frames]
    align_horizons(sides)
    rb, ra = twin_rows(sides[0], sides[1])
    return _Twins(keys, universe, sides, rb, ra)


def _flips(twins: _Twins, codes: np.ndarray, outcome: str, horizon: float) -> tuple[np.ndarray, np.ndarray]:
    """(pairs whose `outcome` flipped, pairs whose did not) among the twins of the conditions
    `codes`, as indices into the pairs."""
    inside = np.isin(twins.sides[0].condition[twins.rb], codes)
    code = twins.universe.index(outcome) + 1 if outcome in twins.universe else -1
    before_event = fate_by(twins.sides[0], twins.rb, horizon) == code
    after_event = fate_by(twins.sides[1], twins.ra, horizon) == code
    flipped = inside & (before_event != after_event)
    return np.flatnonzero(flipped), np.flatnonzero(inside & ~flipped)


def _with_checks(row: RowAttribution, checks: Sequence[Any]) -> RowAttribution:
    return dataclasses.replace(row, checks=tuple(checks))


def _dense(values: np.ndarray) -> np.ndarray:
    return np.unique(values, return_inverse=True)[1].reshape(-1)


def _labels(
    pairs: Sequence[tuple[Sequence[AgentCall], Sequence[AgentCall]]],
) -> dict[tuple[str, str], tuple[np.ndarray, np.ndarray]]:
    """Per (agent, check), each pair's label before and after: 1 bad (any call of the agent
    labelled bad), 0 good, -1 no label (skip, or not called)."""
    names = sorted({(c.agent, check) for pair in pairs for side in pair for c in side for check in c.checks})
    out = {}
    for agent, check in names:
        arrays = []
        for side in (0, 1):
            values = np.full(len(pairs), -1, dtype=np.int8)
            for n, pair in enumerate(pairs):
                seen = [c.checks.get(check) for c in pair[side] if c.agent == agent]
                if "bad" in seen:
                    values[n] = 1
                elif "good" in seen:
                    values[n] = 0
            arrays.append(values)
        out[(agent, check)] = (arrays[0], arrays[1])
    return out


# One pair side by side ------------------------------------------------------------------------


@dataclass(frozen=True)
class PairLine:
    """One line of the side-by-side view: an agent call in both twins (or in one)."""

    agent: str
    occurrence: int
    depth: int
    before: AgentCall | None
    after: AgentCall | None
    same: bool  # output hash and status equal in both twins
    first: bool  # the first divergence


@dataclass(frozen=True)
class PairView:
    """Two twins' agent calls side by side, in call order, the first divergence marked."""

    condition: str  # the condition's label
    key: str
    replicate: int
    seed: int | None
    before_outcome: str | None
    after_outcome: str | None
    lines: tuple[PairLine, ...]
    first_divergence: str | None


def episode_row(info: RunInfo, key: str, replicate: int) -> tuple[str | None, int | None, str | None]:
    """(spans text, seed, outcome) of one stored episode; a ProveError when the run has none."""
    table = info.read_episodes(["cell", "replicate", "seed", "outcome", "spans"])
    cells = table.column("cell").to_pylist()
    replicates = table.column("replicate").to_pylist()
    for i, (cell, rep) in enumerate(zip(cells, replicates, strict=True)):
        if cell == key and rep == replicate:
            return (
                table.column("spans")[i].as_py(), table.column("seed")[i].as_py(),
                table.column("outcome")[i].as_py(),
            )
    raise ProveError(
        f'run "{info.name}" has no episode {replicate} of that condition',
        suggestions=[f'poisson-prove inspect "{info.name}"'],
    )


def pair_view(before: RunInfo, after: RunInfo, key: str, replicate: int) -> PairView:
    """The twins (`key`, `replicate`) of two runs side by side, agent call by agent call."""
    axis_order = after.manifest.get("axis_order") or before.manifest.get("axis_order")
    return pair_view_of(
        condition_label(cfg_of(key), axis_order), key, replicate,
        episode_row(before, key, replicate), episode_row(after, key, replicate),
        names=(before.name, after.name),
    )


def pair_view_of(
    label: str, key: str, replicate: int,
    before: tuple[Any, int | None, str | None], after: tuple[Any, int | None, str | None],
    *, names: tuple[str, str],
) -> PairView:
    """The view of two episodes given as (spans, seed, outcome); a ProveError unless they are
    twins (the same seed)."""
    (spans_b, seed_b, outcome_b), (spans_a, seed_a, outcome_a) = before, after
    if seed_b != seed_a:
        raise ProveError(
            f'runs "{names[0]}" and "{names[1]}" gave this episode different seeds ({seed_b} and '
            f"{seed_a}): they are not twins (the runs were not paired at sweep time)",
            suggestions=[f'poisson-prove sweep SPEC --yes --pair-with "{names[0]}"'],
        )
    calls_b, calls_a = agent_calls(_decoded(spans_b)), agent_calls(_decoded(spans_a))
    first = first_divergence(calls_b, calls_a)
    return PairView(
        condition=label, key=key, replicate=replicate, seed=seed_a, before_outcome=outcome_b,
        after_outcome=outcome_a, lines=tuple(side_by_side(calls_b, calls_a, first)),
        first_divergence=first,
    )


def side_by_side(
    before: Sequence[AgentCall], after: Sequence[AgentCall], first: str | None
) -> list[PairLine]:
    """The calls of both twins matched by agent and occurrence, in the before twin's call order
    then the after twin's calls it lacks; the first divergence (`first_divergence`) marked."""
    call_b = {c.key: c for c in before}
    call_a = {c.key: c for c in after}
    order = [c.key for c in before] + [c.key for c in after if c.key not in call_b]
    base = min((c.depth for c in [*before, *after]), default=0)
    lines, marked = [], False
    for key in order:
        b, a = call_b.get(key), call_a.get(key)
        same = b is not None and a is not None and b.output_hash == a.output_hash and b.status == a.status
        is_first = not same and not marked and first == key[0]
        marked = marked or is_first
        shown = b if b is not None else a
        assert shown is not None  # every key comes from one side or the other
        lines.append(PairLine(key[0], key[1], shown.depth - base, b, a, same, is_first))
    return lines


def flipped_pair(
    comparison: Comparison, row: RowAttribution, *, store: StoreArg = None
) -> tuple[str, int] | None:
    """(condition key, replicate) of one flipped pair of `row` whose first divergence is the
    named agent (else any flipped pair), for the side-by-side view; None when there is none."""
    runs = RunStore(store)
    infos = (runs.resolve(comparison.before.run_id), runs.resolve(comparison.after.run_id))
    twins = _twins(infos)
    keys, rb, ra = twins.keys, twins.rb, twins.ra
    condition = next((c for c in comparison.conditions if c.key == row.key), None)
    wanted = [row.key] if condition is None or condition.family != "pooled" else [
        case.key for case in comparison.cases if case.group == condition.label
    ]
    codes = np.array([keys.index(k) for k in wanted if k in keys], dtype=np.int64)
    flips, _ = _flips(twins, codes, row.outcome, comparison.horizon)
    if not flips.size:
        return None
    candidates = _even(flips, 64)
    texts = (read_spans(infos[0], rb[candidates].tolist()), read_spans(infos[1], ra[candidates].tolist()))
    chosen = int(candidates[0])
    for p in candidates.tolist():
        first = first_divergence(
            agent_calls(_decoded(texts[0].get(int(rb[p])))), agent_calls(_decoded(texts[1].get(int(ra[p]))))
        )
        if row.named is not None and first == row.named:
            chosen = p
            break
    at = int(rb[chosen])
    return keys[int(twins.sides[0].condition[at])], int(twins.sides[0].frame.replicate[at])


def pair_views_for(
    comparison: Comparison, attribution: Attribution, *, store: StoreArg = None
) -> list[tuple[RowAttribution, PairView]]:
    """One flipped pair per attributed row, side by side (the dashboard's section)."""
    if not attribution.available:
        return []
    runs = RunStore(store)
    before, after = runs.resolve(comparison.before.run_id), runs.resolve(comparison.after.run_id)
    out = []
    for row in attribution.rows:
        found = flipped_pair(comparison, row, store=store)
        if found is not None:
            out.append((row, pair_view(before, after, *found)))
    return out
