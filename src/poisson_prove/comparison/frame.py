"""A run as a comparison reads it (poisson_prove.store.columns: only the needed columns, strings as
codes), one side of a comparison built from it, and episode twins paired.

The stored column is named `cell` (the store format, docs/store-format.md); in the code it is a
condition, like everywhere else.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from poisson_prove.store.codes import Coded, coded, column_numbers, pooled_empty
from poisson_prove.store.columns import read_columns
from poisson_prove.store.info import RunInfo

EPISODE_TIMEOUT = "episode_timeout"
COMPARE_COLUMNS = ("cell", "replicate", "seed", "outcome", "t", "horizon", "case_id", "error_kind")


@dataclass(frozen=True)
class RunFrame:
    """The columns of one run a comparison reads, as NumPy arrays of equal length."""

    info: RunInfo
    condition: Coded  # the stored `cell` column
    replicate: np.ndarray
    seed: np.ndarray
    outcome: Coded
    t: np.ndarray
    horizon: np.ndarray
    case_id: Coded
    error_kind: Coded

    @property
    def rows(self) -> int:
        return len(self.replicate)


# The frames read last, by run folder and batch files: `diff` reads both runs again to attribute.
_LAST: dict[tuple[object, ...], RunFrame] = {}


def read_frame(info: RunInfo) -> RunFrame:
    """The comparison's view of one run (the last two runs read are kept while their batch
    files are unchanged: same names, sizes and modification times)."""
    key = _frame_key(info)
    kept = _LAST.get(key)
    if kept is not None:
        return replace(kept, info=info)  # the columns kept, the run as it is now (its manifest)
    frame = _read_frame(info)
    if len(_LAST) >= 2:
        _LAST.pop(next(iter(_LAST)))
    _LAST[key] = frame
    return frame


def _frame_key(info: RunInfo) -> tuple[object, ...]:
    marks = []
    for path in info.batch_files():
        try:
            stat = path.stat()
        except OSError:
            return (object(),)  # unreadable now: never a hit
        marks.append((path.name, stat.st_size, stat.st_mtime_ns))
    return (str(info.path), tuple(marks))


def _read_frame(info: RunInfo) -> RunFrame:
    table = read_columns(info, COMPARE_COLUMNS)
    return RunFrame(
        info=info,
        condition=coded(table.column("cell")),
        replicate=column_numbers(table.column("replicate"), np.int64, 0),
        seed=column_numbers(table.column("seed"), np.int64, 0),
        outcome=coded(table.column("outcome")),
        t=column_numbers(table.column("t"), np.float64, np.nan),
        horizon=column_numbers(table.column("horizon"), np.float64, np.nan),
        case_id=coded(table.column("case_id")),
        error_kind=coded(table.column("error_kind")),
    )


def recode(coded: Coded, universe: Sequence[str], start: int = 0) -> np.ndarray:
    """Codes of `coded` re-expressed as indices into `universe` (-1 for null or absent), plus
    `start`: recode(c, u, 1) is recode(c, u) + 1 (cause numbers, 0 without an outcome) in one
    pass over the rows instead of two."""
    position = {value: i + start for i, value in enumerate(universe)}
    absent = start - 1
    lookup = np.array([position.get(v, absent) for v in coded.values] + [absent], dtype=np.int32)
    # Index -1 (null) wraps to the trailing entry of the lookup table; every other code is in
    # range (dictionary indices, which Arrow checks when it reads a file). mode="raise" would
    # buffer take's output in a fresh array; written into Arrow's pool instead (see
    # pooled_empty), diff's recode of two runs of a million episodes takes ~3 ms less.
    out = pooled_empty(len(coded.codes), np.int32)
    return np.take(lookup, coded.codes, out=out, mode="wrap")


@dataclass(frozen=True)
class Side:
    """One run of a comparison as arrays over its rows, coded against the comparison's lists."""

    info: RunInfo
    frame: RunFrame
    condition: np.ndarray  # index into the comparison's condition list, -1 outside it
    cause: np.ndarray  # 1..K into the outcome universe, 0 without an outcome
    t: np.ndarray
    horizon: float
    # Stopped by its own horizon, below the common one: censored there (see align_horizons).
    early: np.ndarray


def side_of(
    frame: RunFrame, conditions: Sequence[str], universe: Sequence[str], timeout_event: bool
) -> Side:
    cause = recode(frame.outcome, universe, start=1)
    if timeout_event:
        kind = recode(frame.error_kind, [EPISODE_TIMEOUT])
        cause = np.where(kind == 0, len(universe), cause)
    has = cause > 0
    # the largest finite horizon of a row with an outcome, without selecting the rows
    horizon = float(np.max(frame.horizon, where=has & np.isfinite(frame.horizon), initial=-np.inf))
    if horizon == -np.inf:
        horizon = float("nan")
    t = frame.t.copy()  # episode_timeout rows get a time below; the frame stays as read
    early = np.zeros(frame.rows, dtype=bool)
    codes = recode(frame.condition, conditions)
    return Side(frame.info, frame, codes, cause.astype(np.int64), t, horizon, early)


def align_horizons(sides: Sequence[Side]) -> float:
    """The common horizon of the sides, with each side's times and early flags set against it."""
    horizon = min(side.horizon for side in sides)
    for side in sides:
        # An episode stopped by --episode-timeout has no t of its own: it ran to the limit.
        side.t[np.isnan(side.t) & (side.cause > 0)] = horizon
        # An episode whose own horizon is below the common one and which ran to it was cut
        # off by that horizon, not ended in [0, h]: still running as far as h goes, so it is
        # censored at its t (before h: its condition's shares are starred).
        own = side.frame.horizon
        side.early[:] = (side.cause > 0) & (own < horizon) & (side.t >= own)
    return horizon


def condition_order(before: RunFrame, after: RunFrame) -> list[str]:
    """The conditions either run holds, in the order of their manifests, then the rest sorted."""
    # a dict keeps first-seen order with a constant-time membership test (a benchmark's
    # thousands of conditions made the list's `in` quadratic)
    order: dict[str, None] = {}
    for frame in (after, before):
        for entry in frame.info.manifest.get("cells") or []:
            key = entry.get("key") if isinstance(entry, dict) else None
            if key and isinstance(key, str):
                order.setdefault(key)
    present = set(before.condition.values) | set(after.condition.values)
    listed = [key for key in order if key in present]
    return listed + sorted(present - set(listed))


def distinct_cases_per_condition(frame: RunFrame) -> dict[str, tuple[str, ...]]:
    """Each condition's distinct case ids, only for conditions that ran more than one."""
    has_case = frame.case_id.codes >= 0
    if not has_case.any():
        return {}
    n_cases = len(frame.case_id.values)
    condition, case = frame.condition.codes, frame.case_id.codes
    if not has_case.all():
        condition, case = condition[has_case], case[has_case]
    combined = np.multiply(condition, n_cases, dtype=np.int64) + case
    if len(frame.condition.values) * n_cases <= max(4 * combined.size, 1_000_000) and combined.min() >= 0:
        # few (condition, case) combinations: counted, not sorted
        pairs = np.flatnonzero(np.bincount(combined, minlength=len(frame.condition.values) * n_cases))
    else:
        pairs = np.unique(combined)
    conditions, counts = np.unique(pairs // n_cases, return_counts=True)
    mixed: dict[str, tuple[str, ...]] = {}
    for condition_code in conditions[counts > 1]:
        cases = pairs[pairs // n_cases == condition_code] % n_cases
        names = sorted(frame.case_id.values[int(c)] for c in cases)
        mixed[frame.condition.values[int(condition_code)]] = tuple(names)
    return mixed


def pair_rows(
    before_keys: np.ndarray, before_seed: np.ndarray, after_keys: np.ndarray, after_seed: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Row indices (into each side) of episodes that share (condition, replicate) and seed.

    Keys must identify (condition, replicate) uniquely per side after dropping duplicates; a
    duplicated key keeps its first row (a store never holds one, but a copied batch could).
    """
    dense = _pair_rows_dense(before_keys, before_seed, after_keys, after_seed)
    if dense is not None:
        return dense
    _, first_before = np.unique(before_keys, return_index=True)
    _, first_after = np.unique(after_keys, return_index=True)
    _, in_before, in_after = np.intersect1d(
        before_keys[first_before], after_keys[first_after], assume_unique=True, return_indices=True
    )
    rows_before = first_before[in_before]
    rows_after = first_after[in_after]
    same_seed = before_seed[rows_before] == after_seed[rows_after]
    return rows_before[same_seed], rows_after[same_seed]


def _pair_rows_dense(
    before_keys: np.ndarray, before_seed: np.ndarray, after_keys: np.ndarray, after_seed: np.ndarray
) -> tuple[np.ndarray, np.ndarray] | None:
    """pair_rows without a sort, for small non-negative keys none of which repeats on a side
    (what a store holds: keys are condition x replicate); None otherwise."""
    if not before_keys.size or not after_keys.size:
        return None
    low = min(int(before_keys.min()), int(after_keys.min()))
    high = max(int(before_keys.max()), int(after_keys.max()))
    if low < 0 or high >= max(4 * (before_keys.size + after_keys.size), 1_000_000):
        return None
    index = np.int32 if max(before_keys.size, after_keys.size) < 2**31 else np.intp
    rows: list[np.ndarray] = []
    for keys in (before_keys, after_keys):
        row_of: np.ndarray = np.full(high + 1, -1, dtype=index)  # each key's row, -1 where absent
        row_of[keys] = np.arange(keys.size, dtype=index)
        if np.count_nonzero(row_of >= 0) != keys.size:
            return None  # a repeated key: the sorting path keeps its first row
        rows.append(row_of)
    shared = np.flatnonzero((rows[0] >= 0) & (rows[1] >= 0))  # ascending, as intersect1d's
    rows_before = rows[0][shared].astype(np.intp)
    rows_after = rows[1][shared].astype(np.intp)
    same_seed = before_seed[rows_before] == after_seed[rows_after]
    return rows_before[same_seed], rows_after[same_seed]
