"""Episode twins read back from the store: which agent moved a compared row, and one pair.

Reads the store for poisson_prove.comparison.attribution (which is pure).

`attribute(comparison)` gives `diff` its attribution (poisson_prove.comparison.attribution):
for every row that moved, the twins whose outcome flipped and those that did not, each pair's
agent calls matched and the first divergence counted per agent, and each agent check compared
paired. Pairs are read in full up to a cap (an even sample beyond it, the counts saying so):
per moved condition `CHECK_READ` pairs for its agents' checks, and per row its flipped pairs up
to `FLIPPED_READ` and the unflipped ones among that check sample up to `UNFLIPPED_READ` (one
read serves both).

What is read is the `agent_calls` column (store.agent_calls: each episode's agent calls typed),
of only the batch files and row groups holding a wanted row, and of it only the fields the
attribution compares, their texts as dictionaries; a run without agent calls costs a look at
the first episodes of each file (`has_agent_spans`). A batch file written before that column
existed (poisson-prove.episodes/1) has its `spans` read instead and the same column derived
from them (`read_calls`), so a run of either layout, or of both after a --resume, reads the
same. The calls are NumPy codes of one vocabulary for both runs (`SideCalls`), and every
pair's first divergence is found at once (`first_divergences`): no pyarrow.compute, and no
Python object per call.

`pair_view(before, after, condition, replicate)` is one pair's two trees of agent calls side by
side (`inspect --pair`; the view model is poisson_prove.comparison.side_by_side);
`attribute_with_pairs` gives the attribution with one such pair per row (the dashboard).
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from poisson_prove.comparison.attribution import (
    CHANGE_HASHES,
    Attribution,
    RowAttribution,
    adjust_checks,
    attribute_firsts,
    compare_checks,
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
from poisson_prove.comparison.side_by_side import PairLine, PairView, pair_view_of, side_by_side
from poisson_prove.comparison.side_calls import (
    READ_FIELDS,
    SideCalls,
    Vocabulary,
    first_divergences,
    joined,
    side_calls_of,
)
from poisson_prove.comparison.stats import fate_by, twin_rows
from poisson_prove.design.conditions import cfg_of, condition_label
from poisson_prove.errors import ProveError
from poisson_prove.store.agent_calls import HASH_FIELDS, MONITOR_MARK, agent_calls_of
from poisson_prove.store.info import RunInfo
from poisson_prove.store.runs import RunStore

__all__ = [  # the view model is re-exported: the dashboard and `inspect` take it from here
    "PairLine", "PairView", "SideCalls", "attribute", "attribute_with_pairs", "episode_row",
    "has_agent_spans", "pair_view", "pair_view_of", "read_calls", "read_spans", "read_spans_array",
    "side_by_side", "side_calls_of",
]

FLIPPED_READ = 1_000  # flipped pairs read per row, at most
UNFLIPPED_READ = 1_000  # unflipped pairs read per row, at most
CHECK_READ = 2_000  # pairs read per moved condition for its agents' checks, at most
PROBE_ROWS = 256  # episodes looked at per batch file to tell whether a run has agent spans
MONITOR = re.compile(MONITOR_MARK)  # compact JSON, as stored, or spaced
MOVED = ("rose", "fell")
CALLS = "agent_calls"
#: The agent_calls fields read as dictionaries (their values repeat across calls).
DICTIONARY_LEAVES = (
    *(f"{CALLS}.list.element.{name}" for name in ("agent", "status", "output_hash", *HASH_FIELDS)),
    *(f"{CALLS}.list.element.checks.list.element.{name}" for name in ("name", "label")),
)
StoreArg = str | os.PathLike[str] | None


def has_agent_spans(info: RunInfo) -> bool:
    """Whether the run's episodes hold `@monitor` agent calls: the first PROBE_ROWS episodes
    of each batch file are looked at (their `agent_calls`, else a text search of `spans`)."""
    import pyarrow.parquet as pq  # pyarrow: ~160 ms, only when a run is read

    for path in info.batch_files():
        try:
            parquet = pq.ParquetFile(path)
            names = parquet.schema_arrow.names
            column = CALLS if CALLS in names else "spans" if "spans" in names else None
            if column is None:
                continue
            batch = next(parquet.iter_batches(batch_size=PROBE_ROWS, columns=[column]), None)
        except (OSError, ValueError):  # the comparison has read it already; an odd file says no
            continue
        if batch is None:
            continue
        if column == CALLS:
            if batch.column(0).null_count < batch.num_rows:
                return True
        elif any(text and MONITOR.search(text) for text in batch.column(0).to_pylist()):
            return True
    return False


def _indices(at: np.ndarray) -> Any:
    """Row positions as an Arrow int64 array over NumPy's buffer (pa.array of a NumPy array
    imports pandas: most of a second)."""
    import pyarrow as pa  # pyarrow: ~160 ms, only when a run is read

    values = np.ascontiguousarray(at, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(values)], null_count=0)


def _read_rows(
    info: RunInfo, rows: Iterable[int], read: Any, dictionary: Sequence[str] = ()
) -> tuple[np.ndarray, list[Any]]:
    """(the given rows, sorted and unique; per row group holding some, `read(parquet, group,
    at)`: its value at those rows). Rows are indices in the order the comparison reads the run
    (its batch files in write order, each file's row groups in order); only the row groups
    holding a wanted row are read; the `dictionary` leaves, in a file that has them, as
    dictionaries."""
    import pyarrow.parquet as pq  # pyarrow: ~160 ms, only when a run is read

    wanted = np.unique(np.fromiter(rows, dtype=np.int64))
    parts = []
    start = 0
    # One file after another, in this thread: on a sweep's many small files threads cost more
    # than they save (measured: 0.3 s against 0.4-0.8 s for 9,000 rows of 220 files).
    for path in info.batch_files():
        if not wanted.size or wanted[-1] < start:
            break
        parquet = pq.ParquetFile(path, pre_buffer=False)
        if dictionary and CALLS in parquet.schema_arrow.names:
            present = set(parquet.schema.names)  # the leaf fields' names
            leaves = [leaf for leaf in dictionary if leaf.rsplit(".", 1)[-1] in present]
            parquet = pq.ParquetFile(path, pre_buffer=False, read_dictionary=leaves)
        for group in range(parquet.metadata.num_row_groups):
            count = parquet.metadata.row_group(group).num_rows
            here = wanted[(wanted >= start) & (wanted < start + count)] - start
            if here.size:
                parts.append(read(parquet, group, here))
            start += count
    return wanted, parts


def _joined(parts: list[Any], kind: Any) -> Any:
    import pyarrow as pa  # pyarrow: ~160 ms, only when a run is read

    chunks = [chunk for part in parts for chunk in (part.chunks if hasattr(part, "chunks") else [part])]
    return pa.chunked_array(chunks, type=kind).combine_chunks() if chunks else pa.nulls(0, kind)


def read_spans_array(info: RunInfo, rows: Iterable[int]) -> tuple[np.ndarray, Any]:
    """(the given rows, sorted and unique; their `spans` as one Arrow string array in that
    order), only that column read."""
    import pyarrow as pa  # pyarrow: ~160 ms, only when a run is read

    def read(parquet: Any, group: int, at: np.ndarray) -> Any:
        table = parquet.read_row_group(group, columns=["spans"], use_threads=False)
        return table.column(0).take(_indices(at))

    wanted, parts = _read_rows(info, rows, read)
    return wanted, _joined(parts, pa.string())


def read_spans(info: RunInfo, rows: Iterable[int]) -> dict[int, str | None]:
    """The `spans` text of the given rows (indices as `read_spans_array` takes them)."""
    wanted, texts = read_spans_array(info, rows)
    return dict(zip(wanted.tolist(), texts.to_pylist(), strict=True))


def read_calls(
    info: RunInfo, rows: Iterable[int], vocabulary: Vocabulary | None = None
) -> tuple[np.ndarray, SideCalls]:
    """(the given rows, sorted and unique; their agent calls in that order, as codes of
    `vocabulary`): of the `agent_calls` column only the fields the attribution reads
    (READ_FIELDS), their texts as dictionaries, decoded for the rows wanted alone; in a batch
    file without it (poisson-prove.episodes/1), the rows' `spans` with the column derived from
    them as the writer derives it."""
    vocabulary = vocabulary if vocabulary is not None else Vocabulary()

    def read(parquet: Any, group: int, at: np.ndarray) -> SideCalls:
        if CALLS not in parquet.schema_arrow.names:
            table = parquet.read_row_group(group, columns=["spans"], use_threads=False)
            return side_calls_of(agent_calls_of(table.column(0).take(_indices(at))), None, vocabulary)
        present = parquet.schema_arrow.field(CALLS).type.value_type
        leaves = [f"{CALLS}.list.element.{n}" for n in READ_FIELDS if present.get_field_index(n) >= 0]
        table = parquet.read_row_group(group, columns=leaves, use_threads=False)
        return side_calls_of(table.column(0), at, vocabulary)

    wanted, parts = _read_rows(info, rows, read, DICTIONARY_LEAVES)
    return wanted, joined(parts, vocabulary)


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
    return attribute_with_pairs(comparison, store=store, views=False)[0]


def attribute_with_pairs(
    comparison: Comparison, *, store: StoreArg = None, views: bool = True
) -> tuple[Attribution, list[PairView | None]]:
    """The attribution and, per attributed row, one of its flipped pairs side by side (the first
    read whose first divergence is the named agent, else the first flipped pair read; None for
    a row none of whose pairs flipped), from the spans the attribution read (the dashboard)."""
    attribution, shown = _attribute(comparison, store, views)
    return attribution, shown


def _attribute(
    comparison: Comparison, store: StoreArg, views: bool
) -> tuple[Attribution, list[PairView | None]]:
    moved = _moved_rows(comparison)
    if not moved:
        return Attribution(False, "no row moved: there is nothing to attribute", code="nothing_moved"), []
    runs = RunStore(store)
    infos = (runs.resolve(comparison.before.run_id), runs.resolve(comparison.after.run_id))
    if not any(has_agent_spans(info) for info in infos):
        return Attribution(
            False,
            "neither run's episodes hold agent spans (@monitor agent calls), so no agent can be named",
            code="no_agent_spans",
        ), []
    if not comparison.paired:
        return Attribution(
            False,
            "the runs were not paired at sweep time (different salts): there are no twins whose "
            "agent calls could be compared, so no agent is named",
            code="unpaired",
        ), []
    if comparison.event == EPISODE_TIMEOUT:
        return Attribution(
            False, "episode_timeout rows are not attributed: a stopped episode's spans end early",
            code="episode_timeout",
        ), []
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
        if row.condition.key not in check_pairs:
            sample = _even(np.flatnonzero(np.isin(pair_condition, codes)), CHECK_READ)
            check_pairs[row.condition.key] = (sample, pair_condition[sample])
            needed.append(sample)
        flipped_all, unflipped_all = _flips(twins, codes, row.outcome, horizon)
        # the unflipped pairs read are those of the condition's check sample: one read serves both
        shared = np.intersect1d(unflipped_all, check_pairs[row.condition.key][0], assume_unique=True)
        flipped, unflipped = _even(flipped_all, FLIPPED_READ), _even(shared, UNFLIPPED_READ)
        plans.append((row, flipped, unflipped, flipped_all.size, unflipped_all.size))
        needed += [flipped, unflipped]
    pairs = np.unique(np.concatenate(needed)) if needed else np.zeros(0, dtype=np.int64)
    read: list[tuple[SideCalls, np.ndarray]] = []  # per side: its calls, each pair's episode there
    vocabulary = Vocabulary()  # one for both runs: a code is the same text on either side
    for info, side_rows in ((infos[0], rb[pairs]), (infos[1], ra[pairs])):
        wanted, calls = read_calls(info, side_rows, vocabulary)
        read.append((calls, np.searchsorted(wanted, side_rows)))
    (calls_b, at_b), (calls_a, at_a) = read

    def at(chosen: np.ndarray) -> np.ndarray:
        """Where pairs `chosen` are among those read."""
        return np.searchsorted(pairs, chosen)

    # the first divergence of every pair counted, at once (None: twins whose calls all agree)
    counted = np.unique(np.concatenate([np.zeros(0, np.int64), *(p for plan in plans for p in plan[1:3])]))
    where = at(counted)
    firsts_of = dict(zip(counted.tolist(), first_divergences(calls_b, at_b[where], calls_a, at_a[where]),
                         strict=True))

    def first(chosen: np.ndarray) -> list[str | None]:
        return [firsts_of[p] for p in chosen.tolist()]

    changed = _changed(calls_b.changed_values(), calls_a.changed_values())
    pooled = comparison.case_axis is not None
    checks_of = {}
    for key, (sample, case) in check_pairs.items():
        where = at(sample)
        labels = _labels(calls_b, at_b[where], calls_a, at_a[where])
        checks_of[key] = compare_checks(labels, case=_dense(case) if pooled else None)
    rows: list[RowAttribution] = []
    chosen_pairs: list[int | None] = []  # per row, the pair shown side by side (views)
    for row, flipped, unflipped, n_flipped, n_unflipped in plans:
        firsts = first(flipped)
        attributed = attribute_firsts(
            key=row.condition.key, label=row.condition.label, outcome=row.outcome, verdict=row.verdict,
            flipped=firsts, unflipped=first(unflipped),
            flipped_pairs=n_flipped, unflipped_pairs=n_unflipped, changed=changed,
        )
        rows.append(_with_checks(attributed, checks_of[row.condition.key]))
        if views:
            named = attributed.named
            chosen = next((int(p) for p, a in zip(flipped, firsts, strict=True) if a == named), None)
            if chosen is None and flipped.size:
                chosen = int(flipped[0])
            chosen_pairs.append(chosen)
    shown = _views(comparison, twins, chosen_pairs, infos) if views else []
    adjusted, family = adjust_checks(rows)
    return Attribution(True, None, adjusted, family), shown


def _views(
    comparison: Comparison, twins: _Twins, pairs: Sequence[int | None], infos: Sequence[RunInfo]
) -> list[PairView | None]:
    """The pairs side by side (None stays None), their episodes' spans read in one pass over
    each run's files (a compacted file's spans column is decompressed once, not per pair)."""
    chosen = [p for p in pairs if p is not None]
    texts = [
        read_spans(infos[0], [int(twins.rb[p]) for p in chosen]),
        read_spans(infos[1], [int(twins.ra[p]) for p in chosen]),
    ]
    return [None if p is None else _view_of(comparison, twins, p, texts) for p in pairs]


def _view_of(
    comparison: Comparison, twins: _Twins, pair: int, texts: Sequence[dict[int, str | None]]
) -> PairView:
    """Pair `pair` side by side, from its two episodes' spans (`texts`: per run, row -> text)."""
    at_b, at_a = int(twins.rb[pair]), int(twins.ra[pair])
    frame_b, frame_a = twins.sides[0].frame, twins.sides[1].frame
    key = twins.keys[int(twins.sides[0].condition[at_b])]
    labels = {c.key: c.label for c in (*comparison.conditions, *comparison.cases)}

    def outcome(frame: Any, row: int) -> str | None:
        code = int(frame.outcome.codes[row])
        return None if code < 0 else frame.outcome.values[code]

    return pair_view_of(
        labels.get(key) or condition_label(cfg_of(key), None), key, int(frame_b.replicate[at_b]),
        (texts[0][at_b], int(frame_b.seed[at_b]), outcome(frame_b, at_b)),
        (texts[1][at_a], int(frame_a.seed[at_a]), outcome(frame_a, at_a)),
        names=(comparison.before.name, comparison.after.name),
    )


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


def _changed(
    before: dict[str, dict[str, set[str | None]]], after: dict[str, dict[str, set[str | None]]]
) -> dict[str, tuple[str, ...]]:
    """Per agent, which of its code / prompt / model hashes differ between the two runs' calls
    read (as `changed_between`: the sets of values seen, both sides with some)."""
    out = {}
    for agent in {*before, *after}:
        b, a = before.get(agent, {}), after.get(agent, {})
        out[agent] = tuple(
            what for what in CHANGE_HASHES if b.get(what) and a.get(what) and b[what] != a[what]
        )
    return out


def _labels(
    before: SideCalls, at_b: np.ndarray, after: SideCalls, at_a: np.ndarray
) -> dict[tuple[str, str], tuple[np.ndarray, np.ndarray]]:
    """Per (agent, check) labelled in either run, each pair's label before and after: 1 bad
    (any call of the agent labelled bad), 0 good, -1 no label (skip, or not called)."""
    names = before.labelled() | after.labelled()
    return {
        (agent, check): (before.labels(agent, check)[at_b], after.labels(agent, check)[at_a])
        for agent, check in sorted(names)
    }


def episode_row(info: RunInfo, key: str, replicate: int) -> tuple[str | None, int | None, str | None]:
    """(spans text, seed, outcome) of one stored episode; a ProveError when the run has none.
    The spans are read from the one batch file that holds it."""
    import pyarrow.compute as pc  # pyarrow: ~160 ms, only when a run is read

    table = info.read_episodes(["cell", "replicate", "seed", "outcome"])
    found = pc.and_(pc.equal(table.column("cell"), key), pc.equal(table.column("replicate"), replicate))
    at = np.flatnonzero(found.to_numpy(zero_copy_only=False)) if table.num_rows else np.zeros(0, np.int64)
    if at.size:
        i = int(at[0])
        spans = read_spans(info, [i])[i]
        return spans, table.column("seed")[i].as_py(), table.column("outcome")[i].as_py()
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


