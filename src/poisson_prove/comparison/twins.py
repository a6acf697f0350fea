"""Episode twins read back: which agent moved a compared row, and one pair side by side.

Reads the store for poisson_prove.comparison.attribution (which is pure).

`attribute(comparison)` gives `diff` its attribution (poisson_prove.comparison.attribution):
for every row that moved, the twins whose outcome flipped and those that did not, each pair's
agent calls matched and the first divergence counted per agent, and each agent check compared
paired. It reads the `spans` column only when the runs hold agent spans, and then only the rows
it needs: a run without `@monitor` spans costs a look at the first episodes of each batch file
(`has_agent_spans`), never a JSON parse. Pairs are read in full up to a cap (an even sample
beyond it, the counts saying so): per moved condition `CHECK_READ` pairs for its agents'
checks, and per row its flipped pairs up to `FLIPPED_READ` and the unflipped ones among that
check sample up to `UNFLIPPED_READ` (one read serves both). Only the batch files holding a
wanted row are read, only the `spans` column, and the texts are parsed
together by Arrow's JSON reader with only the fields the attribution reads (`side_calls_of`);
a pair of twins whose calls all agree costs no Python object.

`pair_view(before, after, condition, replicate)` is one pair's two trees of agent calls side by
side, agent by agent, with the first divergence marked (`inspect --pair`);
`attribute_with_pairs` gives the attribution with one such pair per row, from the spans it read
(the dashboard).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from poisson_prove.comparison.attribution import (
    CHANGE_HASHES,
    CHECK_PREFIX,
    AgentCall,
    Attribution,
    RowAttribution,
    adjust_checks,
    agent_calls,
    attribute_firsts,
    compare_checks,
    first_divergence,
    first_divergence_of,
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
MONITOR_MARK = re.compile(r'"source"\s*:\s*"monitor"')  # compact JSON, as stored, or spaced
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
        if any(text and MONITOR_MARK.search(text) for text in batch.column(0).to_pylist()):
            return True
    return False


def read_spans_array(info: RunInfo, rows: Iterable[int]) -> tuple[np.ndarray, Any]:
    """(the given rows, sorted and unique; their `spans` as one Arrow string array in that
    order). Rows are indices in the order the comparison reads the run (its batch files in write
    order); only the files holding a wanted row are read, only that column."""
    import pyarrow as pa  # pyarrow: ~160 ms, only when a run is read
    import pyarrow.parquet as pq  # as above

    wanted = np.unique(np.fromiter(rows, dtype=np.int64))
    parts = []
    start = 0
    # One file after another, in this thread: on a sweep's many small files threads cost more
    # than they save (measured: 0.3 s against 0.4-0.8 s for 9,000 rows of 220 files).
    for path in info.batch_files():
        if not wanted.size or wanted[-1] < start:
            break
        parquet = pq.ParquetFile(path, pre_buffer=False)
        count = parquet.metadata.num_rows
        here = wanted[(wanted >= start) & (wanted < start + count)] - start
        if here.size:
            parts.append(parquet.read(columns=["spans"], use_threads=False).column(0).take(pa.array(here)))
        start += count
    chunks = [chunk for part in parts for chunk in part.chunks]
    return wanted, pa.chunked_array(chunks, type=pa.string()).combine_chunks() if chunks else pa.array(
        [], type=pa.string()
    )


def read_spans(info: RunInfo, rows: Iterable[int]) -> dict[int, str | None]:
    """The `spans` text of the given rows (indices as `read_spans_array` takes them)."""
    wanted, texts = read_spans_array(info, rows)
    return dict(zip(wanted.tolist(), texts.to_pylist(), strict=True))


_FIELDS = ("gen_ai.agent.name", "proveai.output_hash", *CHANGE_HASHES.values())
_CHECK_NAME = '"' + CHECK_PREFIX


@dataclass
class SideCalls:
    """The `@monitor` calls of some episodes of one run, column by column (one entry per call,
    episode by episode in call order): what the attribution reads, without a Python object per
    call. `trail(e)` is episode e's (agent, output hash, status) sequence joined in one string,
    equal in two twins exactly when no call diverges; `keys(e)` that sequence, for
    `first_divergence_of` (the hashes and checks are read column by column, `changed_values`
    and `labels`), built only for the episodes that need it."""

    offsets: np.ndarray  # episode e's calls are offsets[e]:offsets[e + 1]
    agent: list[str]
    output: list[str | None]
    status: list[str]  # ok | error
    hashes: dict[str, list[str | None]]  # code / prompt / model -> one per call
    checks: dict[str, list[str | None]]  # check name -> its label on each call (None: none)

    trails: list[str]  # per episode: its calls' agent, output hash and status, joined

    def __post_init__(self) -> None:
        self._keys: list[tuple[str, str | None, str]] | None = None

    def trail(self, episode: int) -> str:
        return self.trails[episode]

    def keys(self, episode: int) -> list[tuple[str, str | None, str]]:
        """The episode's calls as (agent, output hash, status), in call order."""
        if self._keys is None:
            self._keys = list(zip(self.agent, self.output, self.status, strict=True))
        return self._keys[int(self.offsets[episode]) : int(self.offsets[episode + 1])]

    def calls(self, episode: int) -> tuple[AgentCall, ...]:
        """The episode's AgentCalls (agent, occurrence, output hash, status)."""
        seen: dict[str, int] = {}
        out = []
        for name, output, status in self.keys(episode):
            out.append(AgentCall(name, seen.get(name, 0), output, status))
            seen[name] = seen.get(name, 0) + 1
        return tuple(out)

    def changed_values(self) -> dict[str, dict[str, set[str | None]]]:
        """Per agent, per hash (code / prompt / model), the values its calls carry."""
        out: dict[str, dict[str, set[str | None]]] = {}
        for what, values in self.hashes.items():
            for agent, value in set(zip(self.agent, values, strict=True)):
                out.setdefault(agent, {w: set() for w in self.hashes})[what].add(value)
        return out

    def labels(self, agent: str, check: str) -> np.ndarray:
        """Per episode: 1 when a call of `agent` is labelled bad by `check`, else 0 when one is
        labelled good, else -1 (skip, no label, or the agent not called)."""
        episodes = len(self.offsets) - 1
        values = self.checks.get(check)
        out = np.zeros(episodes, dtype=np.int8)
        if values is None or not episodes:
            return out - 1
        rank = {"bad": 2, "good": 1}
        code = np.array(
            [rank.get(v or "", 0) if a == agent else 0 for a, v in zip(self.agent, values, strict=True)],
            dtype=np.int8,
        )
        episode_of = np.repeat(np.arange(episodes), np.diff(self.offsets))
        np.maximum.at(out, episode_of, code)
        return out - 1  # 2 bad -> 1, 1 good -> 0, 0 none -> -1


def side_calls_of(texts: Any) -> SideCalls:
    """The `@monitor` calls of each episode of an Arrow array of `spans` texts, parsed by
    Arrow's JSON reader with only the fields the attribution reads; when it refuses a row (a
    damaged row, an odd type) every row is decoded by itself (`agent_calls`)."""
    import pyarrow as pa  # pyarrow: ~160 ms, only when a run is read
    import pyarrow.compute as pc  # as above
    import pyarrow.json as pj  # as above

    if len(texts) == 0:
        return _side_calls_from([])
    filled = pc.fill_null(texts, "[]")
    filled = pc.if_else(pc.equal(pc.utf8_length(filled), 0), "[]", filled)
    names = _check_names(filled)
    attributes = pa.struct([(name, pa.string()) for name in (*_FIELDS, *(CHECK_PREFIX + n for n in names))])
    entry = pa.struct([("name", pa.string()), ("source", pa.string()), ("status", pa.string()),
                       ("attributes", attributes)])
    schema = pa.schema([("s", pa.list_(entry))])
    lines = pc.binary_join_element_wise('{"s":', filled, "}\n", "")
    offsets = np.frombuffer(lines.buffers()[1], dtype=np.int32)[lines.offset : lines.offset + len(lines) + 1]
    first, last = int(offsets[0]), int(offsets[-1])
    data = lines.buffers()[2][first:last]  # the lines, back to back (none is null)
    try:
        table = pj.read_json(
            pa.BufferReader(data),
            parse_options=pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore"),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # a row the reader refuses: every row by itself
        table = None
    if table is None or table.num_rows != len(texts):
        return _side_calls_from([agent_calls(_decoded(text)) for text in texts.to_pylist()])
    spans = table.column("s").combine_chunks()
    flat = spans.flatten()
    attrs = flat.field("attributes")
    agent = pc.coalesce(attrs.field("gen_ai.agent.name"), flat.field("name"))
    keep = pc.and_(pc.equal(pc.fill_null(flat.field("source"), ""), "monitor"), pc.is_valid(agent))
    episode_of = np.repeat(np.arange(len(spans)), np.diff(spans.offsets.to_numpy()))
    kept = keep.to_numpy(zero_copy_only=False)
    counts = np.bincount(episode_of[kept], minlength=len(spans))

    def column(values: Any) -> list[Any]:
        return values.filter(keep).to_pylist()

    status = pc.if_else(pc.equal(pc.fill_null(flat.field("status"), ""), "error"), "error", "ok").filter(keep)
    output = attrs.field("proveai.output_hash").filter(keep)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return SideCalls(
        offsets=offsets, agent=agent.filter(keep).to_pylist(), output=output.to_pylist(),
        status=status.to_pylist(),
        hashes={what: column(attrs.field(key)) for what, key in CHANGE_HASHES.items()},
        checks={name: column(attrs.field(CHECK_PREFIX + name)) for name in names},
        trails=_trails(offsets, agent.filter(keep), output, status),
    )


def _trails(offsets: np.ndarray, agent: Any, output: Any, status: Any) -> list[str]:
    """Per episode one string of its calls' agent, output hash (\\x00 for none) and status."""
    import pyarrow as pa  # pyarrow: ~160 ms, only when a run is read
    import pyarrow.compute as pc  # as above

    calls = pc.binary_join_element_wise(agent, pc.fill_null(output, "\x00"), status, "\x1f")
    episodes = pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), calls)
    return pc.binary_join(episodes, "\x1e").to_pylist()


def _side_calls_from(episodes: Sequence[Sequence[AgentCall]]) -> SideCalls:
    calls = [call for episode in episodes for call in episode]
    names = sorted({check for call in calls for check in call.checks})
    def joined(c: AgentCall) -> str:
        return f"{c.agent}\x1f{chr(0) if c.output_hash is None else c.output_hash}\x1f{c.status}"

    trails = ["\x1e".join(joined(c) for c in episode) for episode in episodes]
    return SideCalls(trails=trails,
        offsets=np.concatenate([[0], np.cumsum([len(e) for e in episodes])]).astype(np.int64),
        agent=[c.agent for c in calls], output=[c.output_hash for c in calls],
        status=[c.status for c in calls],
        hashes={what: [c.hashes.get(what) for c in calls] for what in CHANGE_HASHES},
        checks={name: [c.checks.get(name) for c in calls] for name in names},
    )


def _check_names(texts: Any) -> list[str]:
    """The check names labelled anywhere in `texts` (`"proveai.check.<name>":`)."""
    import pyarrow.compute as pc  # pyarrow: ~160 ms, only when a run is read

    marked = texts.filter(pc.match_substring(texts, _CHECK_NAME))
    if len(marked) == 0:
        return []
    pieces = pc.list_flatten(pc.split_pattern(marked, _CHECK_NAME))
    found = pc.extract_regex(pieces, r'^(?P<name>(?:[^"\\]|\\.)*)":')
    names = set()
    for raw in pc.unique(pc.struct_field(found.drop_null(), "name")).to_pylist():
        try:
            names.add(json.loads(f'"{raw}"'))  # the key as JSON wrote it, escapes and all
        except ValueError:
            continue
    return sorted(n for n in names if n)


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
    texts_of = []
    for info, side_rows in ((infos[0], rb[pairs]), (infos[1], ra[pairs])):
        wanted, texts = read_spans_array(info, side_rows)
        read.append((side_calls_of(texts), np.searchsorted(wanted, side_rows)))
        texts_of.append(texts)
    (calls_b, at_b), (calls_a, at_a) = read
    at = {int(p): n for n, p in enumerate(pairs.tolist())}

    def first(p: int) -> str | None:
        """The pair's first divergence; None at once for twins whose calls all agree."""
        eb, ea = int(at_b[at[p]]), int(at_a[at[p]])
        if calls_b.trail(eb) == calls_a.trail(ea):
            return None
        return first_divergence_of(calls_b.keys(eb), calls_a.keys(ea))

    changed = _changed(calls_b.changed_values(), calls_a.changed_values())
    pooled = comparison.case_axis is not None
    checks_of = {}
    for key, (sample, case) in check_pairs.items():
        where = np.array([at[int(p)] for p in sample], dtype=np.int64)
        labels = _labels(calls_b, at_b[where], calls_a, at_a[where])
        checks_of[key] = compare_checks(labels, case=_dense(case) if pooled else None)
    rows: list[RowAttribution] = []
    shown: list[PairView | None] = []
    for row, flipped, unflipped, n_flipped, n_unflipped in plans:
        firsts = [first(int(p)) for p in flipped]
        attributed = attribute_firsts(
            key=row.condition.key, label=row.condition.label, outcome=row.outcome, verdict=row.verdict,
            flipped=firsts, unflipped=[first(int(p)) for p in unflipped],
            flipped_pairs=n_flipped, unflipped_pairs=n_unflipped, changed=changed,
        )
        rows.append(_with_checks(attributed, checks_of[row.condition.key]))
        if views:
            named = attributed.named
            chosen = next((int(p) for p, a in zip(flipped, firsts, strict=True) if a == named), None)
            if chosen is None and flipped.size:
                chosen = int(flipped[0])
            view = None
            if chosen is not None:
                place = (int(at_b[at[chosen]]), int(at_a[at[chosen]]))
                view = _view_of(comparison, twins, chosen, place, texts_of)
            shown.append(view)
    adjusted, family = adjust_checks(rows)
    return Attribution(True, None, adjusted, family), shown


def _view_of(
    comparison: Comparison, twins: _Twins, pair: int, where: tuple[int, int], texts: Sequence[Any]
) -> PairView:
    """Pair `pair` side by side, from the spans texts read (`where`: its place in each)."""
    at_b, at_a = int(twins.rb[pair]), int(twins.ra[pair])
    frame_b, frame_a = twins.sides[0].frame, twins.sides[1].frame
    key = twins.keys[int(twins.sides[0].condition[at_b])]
    labels = {c.key: c.label for c in (*comparison.conditions, *comparison.cases)}

    def outcome(frame: Any, row: int) -> str | None:
        code = int(frame.outcome.codes[row])
        return None if code < 0 else frame.outcome.values[code]

    return pair_view_of(
        labels.get(key) or condition_label(cfg_of(key), None), key, int(frame_b.replicate[at_b]),
        (texts[0][where[0]].as_py(), int(frame_b.seed[at_b]), outcome(frame_b, at_b)),
        (texts[1][where[1]].as_py(), int(frame_a.seed[at_a]), outcome(frame_a, at_a)),
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
    names: set[tuple[str, str]] = set()
    for side in (before, after):
        for check, values in side.checks.items():
            names.update((agent, check) for agent, v in zip(side.agent, values, strict=True) if v is not None)
    return {
        (agent, check): (before.labels(agent, check)[at_b], after.labels(agent, check)[at_a])
        for agent, check in sorted(names)
    }


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
