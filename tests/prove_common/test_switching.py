"""switch_interval: moved only the way asked, put back after, a block's own setting kept."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from prove_common.switching import switch_interval


@pytest.fixture(autouse=True)
def _interval_back() -> Iterator[None]:
    before = sys.getswitchinterval()
    yield
    sys.setswitchinterval(before)


def test_a_shorter_interval_is_set_for_the_block_and_put_back_even_after_an_error() -> None:
    sys.setswitchinterval(0.005)
    with pytest.raises(KeyError), switch_interval(0.0005, only="shorter"):
        assert sys.getswitchinterval() == pytest.approx(0.0005)
        raise KeyError("the block failed")
    assert sys.getswitchinterval() == pytest.approx(0.005)


def test_it_never_moves_the_interval_against_the_way_asked() -> None:
    sys.setswitchinterval(0.0001)
    with switch_interval(0.0005, only="shorter"):
        assert sys.getswitchinterval() == pytest.approx(0.0001, abs=1e-6)
    with switch_interval(0.05, only="longer"):
        assert sys.getswitchinterval() == pytest.approx(0.05)
    assert sys.getswitchinterval() == pytest.approx(0.0001, abs=1e-6)
    sys.setswitchinterval(0.1)
    with switch_interval(0.05, only="longer"):
        assert sys.getswitchinterval() == pytest.approx(0.1)


def test_the_interval_put_back_is_the_one_read_before_to_the_microsecond() -> None:
    sys.setswitchinterval(0.0001)  # kept as 99 us: whole microseconds, truncated
    before = sys.getswitchinterval()
    for _ in range(3):
        with switch_interval(0.05, only="longer"):
            pass
    assert sys.getswitchinterval() == before


def test_an_interval_the_block_sets_itself_is_kept() -> None:
    sys.setswitchinterval(0.005)
    with switch_interval(0.0005, only="shorter"):
        sys.setswitchinterval(0.002)
    assert sys.getswitchinterval() == pytest.approx(0.002)
