"""recode: a column's codes re-expressed against a comparison's list, as indexing gives them."""

from __future__ import annotations

import numpy as np
import pytest

from poisson_prove.comparison.frame import recode
from poisson_prove.store.codes import Coded


def by_indexing(coded: Coded, universe: list[str]) -> np.ndarray:
    """recode as it was written before (NumPy indexing into the lookup table)."""
    position = {value: i for i, value in enumerate(universe)}
    lookup = np.array([position.get(v, -1) for v in coded.values] + [-1], dtype=np.int32)
    return lookup[coded.codes]


@pytest.mark.parametrize("rows", [0, 1, 1_000, 1_000_003])
def test_codes_nulls_and_values_outside_the_universe_as_indexing_gives_them(rows: int) -> None:
    rng = np.random.default_rng(rows)
    values = ("violated", "timeout", "done", "other")
    codes = rng.integers(-1, len(values), rows).astype(np.int32)  # -1: null
    coded = Coded(values, codes)
    for universe in (["done", "violated", "timeout"], ["timeout"], [], list(values)):
        got = recode(coded, universe)
        want = by_indexing(coded, universe)
        assert got.dtype == want.dtype == np.int32
        assert got.tolist() == want.tolist()
        assert set(got.tolist()) <= set(range(-1, len(universe)))
        causes = recode(coded, universe, start=1)  # cause numbers: 0 without an outcome
        assert causes.dtype == np.int32 and causes.tolist() == (want + 1).tolist()
        # an array of its own (in Arrow's pool), which the caller may write to
        assert causes.flags.writeable and not np.shares_memory(causes, got)
        causes[:] = 9
        assert recode(coded, universe).tolist() == want.tolist() and coded.codes.tolist() == codes.tolist()


def test_without_values_every_row_is_absent() -> None:
    assert recode(Coded((), np.full(4, -1, dtype=np.int32)), ["done"]).tolist() == [-1] * 4
