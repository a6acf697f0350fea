"""The grouped Aalen-Johansen, counted block by block, gives bit for bit what the estimator gave
before (a frozen copy of it: incidence_before.py), on every code path: integer times counted,
times past the horizon clipped as integers or as floats, other times sorted."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from poisson_prove.stats import incidence
from tests.poisson_prove.stats import incidence_before


def assert_identical(new: dict, old: dict) -> None:
    assert list(new) == list(old)
    for key in old:
        a, b = new[key], old[key]
        assert (a.horizon, a.n, a.censored_before) == (b.horizon, b.n, b.censored_before)
        assert np.float64(a.survival).tobytes() == np.float64(b.survival).tobytes()
        for field in ("incidence", "variance", "counts"):
            x, y = getattr(a, field), getattr(b, field)
            assert x.dtype == y.dtype and x.shape == y.shape
            assert x.tobytes() == y.tobytes(), (key, field)  # bit for bit, NaN included


def both(time, cause, group, horizon, causes=None) -> None:
    new = incidence.aalen_johansen_grouped(time, cause, group, horizon, causes=causes)
    old = incidence_before.aalen_johansen_grouped(time, cause, group, horizon, causes=causes)
    assert_identical(new, old)


def sweep_like(rows: int, seed: int, top: int = 20) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows as a sweep stores them: integer times 1..top, causes 0..3, 9 conditions."""
    rng = np.random.default_rng(seed)
    time = rng.integers(1, top + 1, rows).astype(float)
    cause = rng.integers(0, 4, rows).astype(np.int32)
    group = rng.integers(0, 9, rows).astype(np.int32)
    return time, cause, group


@pytest.mark.parametrize("rows", [1, 2, 65_535, 65_536, 65_537, 300_001])
@pytest.mark.parametrize("horizon", [18.0, 17.5, 20.0, 25.0, 1.0])
def test_sweep_like_rows_across_block_boundaries(rows: int, horizon: float) -> None:
    time, cause, group = sweep_like(rows, seed=rows)
    both(time, cause, group, horizon, causes=3)


def test_a_million_rows_as_diff_reads_them() -> None:
    time, cause, group = sweep_like(999_999, seed=5)
    both(time, cause, group, 18.0, causes=3)
    both(time, cause + 0, group, 18.0)  # the number of causes from the data


@pytest.mark.parametrize(
    "beyond",
    [
        18.5,  # a fraction before the column past h: the sorting path, as before
        19.0,  # the column past h itself
        25.5,  # a fraction past that column: clipped to it
        40_000.0,  # past what an int16 holds: clipped as a float
        1e12,  # past what an int32 holds
        2.0**63,  # past what an int64 holds
    ],
)
def test_times_past_the_horizon_of_every_kind(beyond: float) -> None:
    time, cause, group = sweep_like(200_000, seed=3)
    time[::997] = beyond
    both(time, cause, group, 18.0, causes=3)
    both(time, cause, group, 17.25, causes=3)


def test_times_that_are_not_integers_before_the_horizon_are_sorted_as_before() -> None:
    time, cause, group = sweep_like(150_000, seed=4)
    time[70_000] = 3.5  # in the second block
    both(time, cause, group, 18.0, causes=3)


def test_negative_and_zero_times_and_a_horizon_below_every_time() -> None:
    time, cause, group = sweep_like(140_000, seed=6)
    both(time - 5.0, cause, group, 10.0, causes=3)
    both(time - 1.0, cause, group, 0.0, causes=3)
    both(time, cause, group, 0.5, causes=3)  # every time past h: not counted, as before


def test_many_groups_absent_labels_and_narrow_or_wide_dtypes() -> None:
    rng = np.random.default_rng(7)
    rows = 200_000
    time = rng.integers(0, 30, rows).astype(float)
    cause = rng.integers(0, 3, rows)
    many = rng.integers(0, 3_000, rows)  # an index past what int16 holds: int32
    both(time, cause, many, 20.0, causes=2)
    gaps = rng.choice(np.array([0, 2, 5, 11]), rows)
    for group_type in (np.uint8, np.int16, np.int64, np.uint32):
        for cause_type in (np.int8, np.uint16, np.int64, np.uint64):
            both(time, cause.astype(cause_type), gaps.astype(group_type), 20.0, causes=2)
    both(time, cause.astype(bool), gaps, 20.0)
    both(time, cause, np.array([f"c{g}" for g in gaps]), 20.0, causes=2)  # labels sorted


def test_bad_input_is_refused_as_before() -> None:
    time, cause, group = sweep_like(100_000, seed=8)
    for bad_time, bad_cause, message in (
        (np.where(np.arange(time.size) == 90_000, np.nan, time), cause, "NaN"),
        (time, np.where(np.arange(cause.size) == 80_000, 7, cause), "cause must be in 0..3"),
        (time, np.where(np.arange(cause.size) == 80_000, -1, cause), "cause must be in 0..3"),
    ):
        for module in (incidence, incidence_before):
            with pytest.raises(ValueError, match=message):
                module.aalen_johansen_grouped(bad_time, bad_cause, group, 18.0, causes=3)


def test_no_rows() -> None:
    empty = np.zeros(0)
    both(empty, empty.astype(int), empty.astype(int), 5.0, causes=2)


@st.composite
def _small_runs(draw):
    n = draw(st.integers(1, 80))
    ints = st.lists(st.integers(-3, 15), min_size=n, max_size=n)
    time = np.array(draw(ints), dtype=float)
    if draw(st.booleans()):
        time[draw(st.integers(0, n - 1))] += draw(st.sampled_from([0.5, 100.25, 1e6]))
    cause = np.array(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)))
    group = np.array(draw(st.lists(st.integers(0, 4), min_size=n, max_size=n)))
    horizon = draw(st.sampled_from([-1.0, 0.0, 4.0, 6.5, 12.0, 15.0, 30.0, np.inf]))
    block = draw(st.sampled_from([1, 3, 7, 64]))
    return time, cause, group, horizon, block


@settings(max_examples=300, deadline=None)
@given(_small_runs())
def test_any_block_size_gives_the_same_numbers(data) -> None:
    time, cause, group, horizon, block = data
    saved = incidence._BLOCK
    incidence._BLOCK = block  # many blocks of a few rows: every boundary case
    try:
        both(time, cause, group, horizon, causes=3)
    finally:
        incidence._BLOCK = saved
